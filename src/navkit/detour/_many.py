"""Batch kernels: one Detour query over many inputs, in parallel over cores.

Each kernel runs ``prange`` workers that take chunks of the items from a shared
counter (:func:`navkit._atomic.claim` on the schedule array ``work`` =
``[workers, chunks, next]``), so a worker that finishes early, or a thread the
system preempts, does not hold back the call. A worker opens the navmesh view
(borrowed arrays: no reference counting shared between threads), a chunk
allocates its scratch once, and calls for every item of the chunk the very
kernel core the single-call query uses, so item ``i`` of a batch is the single
call's answer for input ``i``, bit for bit. Outputs are written into arrays the
caller allocated (row ``i`` belongs to item ``i``).
"""

from __future__ import annotations

import numba
import numpy as np

from navkit._atomic import CHUNKS, WORKERS, claim
from navkit._jit import borrow, njit, pnjit

from ._geom import ZERO, random_point_in_convex_poly, tri_area_2d
from ._local import move_along_surface_kernel
from ._nearest import find_nearest_core
from ._nodes import open_pool
from ._poly import closest_point_nav, poly_height_core
from ._portal import FAILURE, INVALID_PARAM, SUCCESS, passes
from ._raycast import raycast_core
from ._view import POLYTYPE_GROUND, load_poly, open_view, poly_index

_INF32 = np.float32(np.inf)
_FLT_MAX32 = np.float32(np.finfo(np.float32).max)


@njit(inline="always")
def _span(n, nchunks, c):
    per = (n + nchunks - 1) // nchunks
    return c * per, min(n, (c + 1) * per)


@njit
def _keep(arrays):
    """A use of ``arrays`` (does nothing): keeps the owners of borrowed scratch alive to here."""
    return arrays[0].shape[0]


@njit
def _raycasts_chunk(
    nav, flt, acost, refs, starts, ends, options, prev_refs, max_path, i0, i1,
    out_status, out_t, out_edge, out_n, out_cost, out_normal, out_path,
):  # fmt: skip
    pv = np.empty((6, 3), np.float32)
    cur = np.empty(3, np.float32)
    for i in range(i0, i1):
        st, t, edge, k, cost = raycast_core(
            nav, flt, acost, refs[i], starts[i], ends[i], options, prev_refs[i],
            out_path[i], max_path, out_normal[i], pv, cur,
        )  # fmt: skip
        out_status[i] = st
        out_t[i] = _INF32 if t >= _FLT_MAX32 else t  # FLT_MAX: the end was reached
        out_edge[i] = edge
        out_n[i] = k
        out_cost[i] = cost
        row = out_path[i]
        for j in range(k, max_path):
            row[j] = 0


@pnjit
def raycasts_kernel(
    d, work, flt, acost, refs, starts, ends, options, prev_refs, max_path,
    out_status, out_t, out_edge, out_n, out_cost, out_normal, out_path,
):  # fmt: skip
    """:func:`_raycast.raycast_core` for every (refs[i], starts[i], ends[i], prev_refs[i])."""
    n = refs.shape[0]
    nchunks = work[CHUNKS]
    for _w in numba.prange(work[WORKERS]):
        nav = open_view(d)
        c = claim(work)
        while c >= 0:
            # The loop runs in a plain (sequential) kernel: the same loop in the prange
            # body itself ran at half speed.
            i0, i1 = _span(n, nchunks, c)
            _raycasts_chunk(
                nav, borrow(flt), borrow(acost), borrow(refs), borrow(starts),
                borrow(ends), options, borrow(prev_refs), max_path, i0, i1, borrow(out_status),
                borrow(out_t), borrow(out_edge), borrow(out_n), borrow(out_cost),
                borrow(out_normal), borrow(out_path),
            )  # fmt: skip
            c = claim(work)


@njit
def _nearest_chunk(nav, flt, centers, half, i0, i1, out_ref, out_over, out_pt):
    # scratch used through borrowed views: passing an owned array to a helper costs two
    # atomic reference-count updates per call (the owners live until the loop ends)
    own = (np.empty(3, np.float32), np.empty((6, 3), np.float32), np.zeros((5, 3), np.float32))
    pt, pv, tri = borrow(own)
    for i in range(i0, i1):
        ci = centers[i]
        oi = out_pt[i]
        oi[0] = ci[0]
        oi[1] = ci[1]
        oi[2] = ci[2]
        p, over = find_nearest_core(nav, ci, half, flt, oi, pt, pv, tri)
        out_ref[i] = nav.poly_ref[p] if p >= 0 else np.int64(0)
        out_over[i] = over
    _keep(own)


@pnjit
def nearest_kernel(d, work, flt, centers, half, out_ref, out_over, out_pt):
    """:func:`_nearest.find_nearest_core` for every center: the polygon's ref (0: none)
    and point (the center when nothing was found). The refs are written in the
    parallel loop (a serial numpy pass after it held back the threads)."""
    n = centers.shape[0]
    nchunks = work[CHUNKS]
    for _w in numba.prange(work[WORKERS]):
        nav = open_view(d)
        c = claim(work)
        while c >= 0:
            i0, i1 = _span(n, nchunks, c)
            _nearest_chunk(
                nav, borrow(flt), borrow(centers), borrow(half), i0, i1, borrow(out_ref),
                borrow(out_over), borrow(out_pt),
            )  # fmt: skip
            c = claim(work)


@njit
def _closest_chunk(nav, refs, points, i0, i1, out_pt, out_over, out_status):
    pv = np.empty((6, 3), np.float32)
    tri = np.zeros((5, 3), np.float32)
    for i in range(i0, i1):
        q = points[i]
        o = out_pt[i]
        p = poly_index(nav, refs[i])
        if p < 0:
            o[0] = q[0]
            o[1] = q[1]
            o[2] = q[2]
            out_over[i] = False
            out_status[i] = FAILURE | INVALID_PARAM
            continue
        tri[:] = ZERO  # as the fresh scratch of the single call
        out_over[i] = closest_point_nav(nav, p, q, o, pv, tri)
        out_status[i] = SUCCESS


@pnjit
def closest_kernel(d, work, refs, points, out_pt, out_over, out_status):
    """closestPointOnPoly of points[i] on the polygon refs[i] (a ref naming no polygon:
    the point itself, FAILURE | INVALID_PARAM). The refs are resolved in the parallel
    loop: a serial pass over them first held back the threads."""
    n = refs.shape[0]
    nchunks = work[CHUNKS]
    for _w in numba.prange(work[WORKERS]):
        nav = open_view(d)
        c = claim(work)
        while c >= 0:
            i0, i1 = _span(n, nchunks, c)
            _closest_chunk(
                nav, borrow(refs), borrow(points), i0, i1, borrow(out_pt), borrow(out_over),
                borrow(out_status),
            )  # fmt: skip
            c = claim(work)


@njit
def _heights_chunk(nav, refs, points, i0, i1, out_h, out_ok, out_status):
    out = np.empty(3, np.float32)
    pv = np.empty((6, 3), np.float32)
    tri = np.zeros((5, 3), np.float32)
    for i in range(i0, i1):
        p = poly_index(nav, refs[i])
        ok = False
        h = ZERO
        if p >= 0:
            ok, h = poly_height_core(nav, p, points[i], out, pv, tri)
        out_ok[i] = ok
        out_h[i] = h if ok else np.float32(np.nan)
        out_status[i] = SUCCESS if ok else FAILURE | INVALID_PARAM


@pnjit
def heights_kernel(d, work, refs, points, out_h, out_ok, out_status):
    """getPolyHeight of points[i] in the polygon refs[i] (nan, not ok and FAILURE |
    INVALID_PARAM when the point is outside it or the ref names no polygon)."""
    n = refs.shape[0]
    nchunks = work[CHUNKS]
    for _w in numba.prange(work[WORKERS]):
        nav = open_view(d)
        c = claim(work)
        while c >= 0:
            i0, i1 = _span(n, nchunks, c)
            _heights_chunk(
                nav, borrow(refs), borrow(points), i0, i1, borrow(out_h), borrow(out_ok),
                borrow(out_status),
            )  # fmt: skip
            c = claim(work)


@njit
def random_areas_kernel(d, flt, polys, areas, prefix):
    """The polygons findRandomPoint draws from (live ground polygons passing flt, in index
    order), their xz areas and the running area sums, as the single call accumulates them
    (float32). Returns how many."""
    nav = open_view(d)
    pv = np.empty((6, 3), np.float32)
    area_sum = ZERO
    m = 0
    for p in range(nav.poly_ref.shape[0]):
        t = nav.poly_tile[p]
        if nav.tile_used[t] == 0:
            continue
        loc = p - nav.tile_pbase[t]
        if loc < 0 or loc >= nav.tile_pcount[t]:
            continue
        if nav.poly_type[p] != POLYTYPE_GROUND:
            continue
        if not passes(flt, p, nav):
            continue
        nv = load_poly(nav, p, pv)
        area = ZERO
        for j in range(2, nv):
            area += tri_area_2d(pv[0], pv[j - 1], pv[j])
        area_sum += area
        polys[m] = p
        areas[m] = area
        prefix[m] = area_sum
        m += 1
    return m


@njit
def _random_chunk(nav, m, polys, areas, prefix, rnd, i0, i1, out_p, out_pt):
    pv = np.empty((6, 3), np.float32)
    tri = np.zeros((5, 3), np.float32)
    pt = np.empty(3, np.float32)
    for i in range(i0, i1):
        ri = rnd[i]
        chosen = -1
        k = m - 1
        while k >= 0:
            if ri[k] * prefix[k] <= areas[k]:
                chosen = polys[k]
                break
            k -= 1
        out_p[i] = chosen
        o = out_pt[i]
        if chosen == -1:
            o[0] = ZERO
            o[1] = ZERO
            o[2] = ZERO
            continue
        nv = load_poly(nav, chosen, pv)
        random_point_in_convex_poly(pv, nv, ri[m], ri[m + 1], pt)
        tri[:] = ZERO
        closest_point_nav(nav, chosen, pt, o, pv, tri)


@pnjit
def random_points_kernel(d, work, m, polys, areas, prefix, rnd, out_p, out_pt):
    """Point i from uniforms rnd[i] as :func:`_local.random_point_kernel` draws it: polygon
    k is kept when ``rnd[i, k] * prefix[k] <= areas[k]`` and the last kept one wins (so
    the scan runs backwards and stops at the first kept); the point inside it comes from
    rnd[i, m], rnd[i, m + 1]."""
    n = rnd.shape[0]
    nchunks = work[CHUNKS]
    for _w in numba.prange(work[WORKERS]):
        nav = open_view(d)
        c = claim(work)
        while c >= 0:
            i0, i1 = _span(n, nchunks, c)
            _random_chunk(
                nav, m, borrow(polys), borrow(areas), borrow(prefix), borrow(rnd), i0, i1,
                borrow(out_p), borrow(out_pt),
            )  # fmt: skip
            c = claim(work)


@njit
def _move_chunk(nav, tiny, flt, refs, starts, ends, i0, i1, out_pos, out_vis, out_n, out_status):
    for i in range(i0, i1):
        p = poly_index(nav, refs[i])
        if p < 0:
            o = out_pos[i]
            s = starts[i]
            o[0] = s[0]
            o[1] = s[1]
            o[2] = s[2]
            out_n[i] = 0
            out_status[i] = FAILURE | INVALID_PARAM
            continue
        vi = out_vis[i]
        st, k = move_along_surface_kernel(nav, tiny, flt, p, starts[i], ends[i], out_pos[i], vi)
        out_n[i] = k
        out_status[i] = st
        for j in range(k, vi.shape[0]):
            vi[j] = 0


@pnjit
def move_kernel(
    d, work, pools, flt, refs, starts, ends, out_pos, out_vis, out_n, out_status
):  # fmt: skip
    """moveAlongSurface from (refs[i], starts[i]) toward ends[i]; worker w uses tiny pool
    pools[w]. A ref naming no polygon: the start itself with FAILURE | INVALID_PARAM.
    Visited entries past each move's count are zeroed. (Refs resolved and rows zeroed
    in the parallel loop: serial passes around it held back the threads.)"""
    n = refs.shape[0]
    nchunks = work[CHUNKS]
    for w in numba.prange(work[WORKERS]):
        nav = open_view(d)
        tiny = open_pool(pools[w])
        c = claim(work)
        while c >= 0:
            i0, i1 = _span(n, nchunks, c)
            _move_chunk(
                nav, tiny, borrow(flt), borrow(refs), borrow(starts), borrow(ends), i0, i1,
                borrow(out_pos), borrow(out_vis), borrow(out_n), borrow(out_status),
            )  # fmt: skip
            c = claim(work)


__all__ = [
    "SUCCESS", "raycasts_kernel", "nearest_kernel", "closest_kernel",
    "heights_kernel", "random_areas_kernel", "random_points_kernel", "move_kernel",
]  # fmt: skip
