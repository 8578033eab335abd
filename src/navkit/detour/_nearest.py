"""Box queries over tiles: ``queryPolygons`` and ``findNearestPoly``.

The query box (center +- half extents) selects tiles by grid cell (rows of
tile y, then x; tiles sharing a cell in lookup order). Inside a tile with a BV
tree the box is clamped to the tile bounds, quantised (min rounded down to
even, max up to odd) and the tree is walked in pre-order, skipping a subtree
by its escape index when its bounds miss the box; tiles without a tree test
every ground polygon's vertex bounds. Candidates failing the filter are
dropped. ``findNearestPoly`` then keeps the first candidate with the smallest
distance, where a point straight above/below a polygon scores
``max(0, |dy| - walkable_climb)^2`` and any other point the squared 3D
distance to the polygon's closest point (Detour 1.6 semantics).
"""

from __future__ import annotations

import math

import numpy as np

from navkit._jit import F32, njit

from ._geom import FLT_MAX, ZERO
from ._poly import closest_point_core
from ._view import POLYTYPE_OFFMESH


@njit
def _clampf(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@njit(inline="always")
def _tile_loc(nav, x, z):
    tx = math.floor((x - nav.grid[0]) / nav.grid[3])
    ty = math.floor((z - nav.grid[2]) / nav.grid[4])
    return int(tx), int(ty)


@njit(inline="always")
def _tile_candidates(nav, t, qmin, qmax, flt, out, n0):
    """Append the polygons of tile t overlapping the box (and passing flt) to out from n0."""
    return _tile_candidates_core(
        nav.tile_pbase[t], nav.tile_pcount[t], nav.tile_bvbase[t], nav.tile_bvcount[t],
        nav.tile_bmin[t], nav.tile_bmax[t], nav.tile_qfac[t], nav.bv_min, nav.bv_max, nav.bv_i,
        nav.poly_flags, nav.poly_type, nav.poly_verts, nav.poly_nverts, nav.verts,
        qmin, qmax, flt, out, n0,
    )  # fmt: skip


@njit
def _tile_candidates_core(
    base, pcount, bvbase, nbv, bmin, bmax, q, bv_min, bv_max, bv_i,
    poly_flags, poly_type, poly_verts, poly_nverts, verts, qmin, qmax, flt, out, n0,
):  # fmt: skip
    """_tile_candidates over plain arrays (the tile's scalars and the global pools)."""
    n = n0
    cap = out.shape[0]
    inc = flt[0]
    exc = flt[1]
    if nbv > 0:
        lo0 = lo1 = lo2 = hi0 = hi1 = hi2 = np.int64(0)
        for c in range(3):
            a = _clampf(qmin[c], bmin[c], bmax[c]) - bmin[c]
            b = _clampf(qmax[c], bmin[c], bmax[c]) - bmin[c]
            lo = (np.int64(q * a) & 0xFFFF) & 0xFFFE
            hi = (np.int64(q * b + F32(1.0)) & 0xFFFF) | 1
            if c == 0:
                lo0, hi0 = lo, hi
            elif c == 1:
                lo1, hi1 = lo, hi
            else:
                lo2, hi2 = lo, hi
        i = bvbase
        end = i + nbv
        while i < end:
            overlap = not (
                lo0 > bv_max[i, 0] or hi0 < bv_min[i, 0]
                or lo1 > bv_max[i, 1] or hi1 < bv_min[i, 1]
                or lo2 > bv_max[i, 2] or hi2 < bv_min[i, 2]
            )  # fmt: skip
            bi = bv_i[i]
            leaf = bi >= 0
            if leaf and overlap:
                p = base + bi
                f = poly_flags[p]
                if (f & inc) != 0 and (f & exc) == 0 and n < cap:
                    out[n] = p
                    n += 1
            if overlap or leaf:
                i += 1
            else:
                i -= bi
    else:
        for p in range(base, base + pcount):
            if poly_type[p] == POLYTYPE_OFFMESH:
                continue
            f = poly_flags[p]
            if not ((f & inc) != 0 and (f & exc) == 0):
                continue
            v = poly_verts[p, 0]
            mn0 = mx0 = verts[v, 0]
            mn1 = mx1 = verts[v, 1]
            mn2 = mx2 = verts[v, 2]
            for k in range(1, poly_nverts[p]):
                w = poly_verts[p, k]
                mn0 = min(mn0, verts[w, 0])
                mx0 = max(mx0, verts[w, 0])
                mn1 = min(mn1, verts[w, 1])
                mx1 = max(mx1, verts[w, 1])
                mn2 = min(mn2, verts[w, 2])
                mx2 = max(mx2, verts[w, 2])
            ov = not (
                qmin[0] > mx0 or qmax[0] < mn0 or qmin[1] > mx1 or qmax[1] < mn1
                or qmin[2] > mx2 or qmax[2] < mn2
            )  # fmt: skip
            if ov and n < cap:
                out[n] = p
                n += 1
    return n


@njit(inline="always")
def _cell(h, nlut):
    """Detour's position hash bucket of tile cell (x, y), from the raw hash h."""
    return (h & 0xFFFFFFFF) & (nlut - 1)


@njit
def query_polygons_kernel(nav, center, half, flt, out):
    """Polygons whose bounds overlap the box; returns (count, overflowed)."""
    # every pool is read out of the view before anything is allocated: numba then
    # handles plain arrays instead of reference-counting the whole view per access
    grid = nav.grid
    lut = nav.lut
    tile_next = nav.tile_next
    tile_used = nav.tile_used
    tile_x = nav.tile_x
    tile_y = nav.tile_y
    tile_pbase = nav.tile_pbase
    tile_pcount = nav.tile_pcount
    tile_bvbase = nav.tile_bvbase
    tile_bvcount = nav.tile_bvcount
    tile_bmin = nav.tile_bmin
    tile_bmax = nav.tile_bmax
    tile_qfac = nav.tile_qfac
    bv_min = nav.bv_min
    bv_max = nav.bv_max
    bv_i = nav.bv_i
    poly_flags = nav.poly_flags
    poly_type = nav.poly_type
    poly_verts = nav.poly_verts
    poly_nverts = nav.poly_nverts
    verts = nav.verts
    qmin = np.empty(3, np.float32)
    qmax = np.empty(3, np.float32)
    for c in range(3):
        qmin[c] = center[c] - half[c]
        qmax[c] = center[c] + half[c]
    minx = int(math.floor((qmin[0] - grid[0]) / grid[3]))
    miny = int(math.floor((qmin[2] - grid[2]) / grid[4]))
    maxx = int(math.floor((qmax[0] - grid[0]) / grid[3]))
    maxy = int(math.floor((qmax[2] - grid[2]) / grid[4]))
    nlut = lut.shape[0]
    n = 0
    over = False
    big = np.empty(out.shape[0] + 1, np.int64)
    for y in range(miny, maxy + 1):
        for x in range(minx, maxx + 1):
            t = -1
            if nlut > 0:
                t = lut[_cell(np.int64(0x8DA6B343) * x + np.int64(0xD8163841) * y, nlut)]
            while t != -1:
                tt = t
                t = tile_next[t]
                if tile_used[tt] == 0 or tile_x[tt] != x or tile_y[tt] != y:
                    continue
                m = _tile_candidates_core(
                    tile_pbase[tt], tile_pcount[tt], tile_bvbase[tt], tile_bvcount[tt],
                    tile_bmin[tt], tile_bmax[tt], tile_qfac[tt], bv_min, bv_max, bv_i,
                    poly_flags, poly_type, poly_verts, poly_nverts, verts, qmin, qmax, flt,
                    big, n,
                )  # fmt: skip
                if m > out.shape[0]:
                    over = True
                    m = out.shape[0]
                for j in range(n, m):
                    out[j] = big[j]
                n = m
    return n, over


@njit
def find_nearest_kernel(nav, center, half, flt, nearest_pt):
    """Detour's findNearestPoly. Returns (global poly index or -1, over_poly)."""
    grid = nav.grid
    lut = nav.lut
    tile_next = nav.tile_next
    tile_used = nav.tile_used
    tile_x = nav.tile_x
    tile_y = nav.tile_y
    tile_pbase = nav.tile_pbase
    tile_pcount = nav.tile_pcount
    tile_bvbase = nav.tile_bvbase
    tile_bvcount = nav.tile_bvcount
    tile_bmin = nav.tile_bmin
    tile_bmax = nav.tile_bmax
    tile_qfac = nav.tile_qfac
    tile_climb = nav.tile_climb
    bv_min = nav.bv_min
    bv_max = nav.bv_max
    bv_i = nav.bv_i
    poly_flags = nav.poly_flags
    verts = nav.verts
    poly_verts = nav.poly_verts
    poly_nverts = nav.poly_nverts
    poly_type = nav.poly_type
    dm_vbase = nav.dm_vbase
    dm_tbase = nav.dm_tbase
    dm_ntris = nav.dm_ntris
    dverts = nav.dverts
    dtris = nav.dtris
    npoly = nav.poly_ref.shape[0]
    qmin = np.empty(3, np.float32)
    qmax = np.empty(3, np.float32)
    for c in range(3):
        qmin[c] = center[c] - half[c]
        qmax[c] = center[c] + half[c]
    minx = int(math.floor((qmin[0] - grid[0]) / grid[3]))
    miny = int(math.floor((qmin[2] - grid[2]) / grid[4]))
    maxx = int(math.floor((qmax[0] - grid[0]) / grid[3]))
    maxy = int(math.floor((qmax[2] - grid[2]) / grid[4]))
    nlut = lut.shape[0]
    best = -1
    best_d = FLT_MAX
    best_over = False
    cand = np.empty(npoly + 1, np.int64)
    pt = np.empty(3, np.float32)
    pv = np.empty((6, 3), np.float32)
    tri = np.zeros((5, 3), np.float32)
    for y in range(miny, maxy + 1):
        for x in range(minx, maxx + 1):
            t = -1
            if nlut > 0:
                t = lut[_cell(np.int64(0x8DA6B343) * x + np.int64(0xD8163841) * y, nlut)]
            while t != -1:
                tt = t
                t = tile_next[t]
                if tile_used[tt] == 0 or tile_x[tt] != x or tile_y[tt] != y:
                    continue
                m = _tile_candidates_core(
                    tile_pbase[tt], tile_pcount[tt], tile_bvbase[tt], tile_bvcount[tt],
                    tile_bmin[tt], tile_bmax[tt], tile_qfac[tt], bv_min, bv_max, bv_i,
                    poly_flags, poly_type, poly_verts, poly_nverts, verts, qmin, qmax, flt,
                    cand, 0,
                )  # fmt: skip
                climb = tile_climb[tt]
                for j in range(m):
                    p = cand[j]
                    over = closest_point_core(
                        verts, poly_verts, poly_nverts, poly_type, dm_vbase, dm_tbase, dm_ntris,
                        dverts, dtris, p, center, pt, pv, tri,
                    )  # fmt: skip
                    dx = center[0] - pt[0]
                    dy = center[1] - pt[1]
                    dz = center[2] - pt[2]
                    if over:
                        d = abs(dy) - climb
                        d = d * d if d > ZERO else ZERO
                    else:
                        d = dx * dx + dy * dy + dz * dz
                    if d < best_d:
                        nearest_pt[0] = pt[0]
                        nearest_pt[1] = pt[1]
                        nearest_pt[2] = pt[2]
                        best_d = d
                        best = p
                        best_over = over
    return best, best_over
