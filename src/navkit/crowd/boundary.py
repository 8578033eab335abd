"""Walls near each agent (Detour's dtLocalBoundary), as arrays over agent slots.

For agent ``s``: ``center[s]`` (FLT_MAX when reset), the nearest
``nsegs[s] <= 8`` wall segments ``segs[s, :nsegs]`` (x0 y0 z0 x1 y1 z1) sorted by
squared xz distance, and the polygons they came from ``polys[s, :npolys]``.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from navkit._jit import F32, borrow, njit
from navkit.detour._geom import dist_pt_seg_sqr_2d
from navkit.detour._local import local_neighbourhood_kernel, wall_segments_kernel
from navkit.detour._nodes import open_pool
from navkit.detour._portal import passes
from navkit.detour._view import open_view, poly_index

from ._par import keep, twins

__all__ = [
    "Boundaries", "boundaries_stale", "update_boundaries", "update_boundaries_par",
    "MAX_LOCAL_SEGS", "MAX_LOCAL_POLYS",
]  # fmt: skip

MAX_LOCAL_SEGS = 8
MAX_LOCAL_POLYS = 16
_MAX_SEGS_PER_POLY = 6 * 3  # DT_VERTS_PER_POLYGON * 3
_FLT_MAX = np.finfo(np.float32).max


class Boundaries:
    """dtLocalBoundary of every agent slot: ``reset``, ``update``, ``is_valid``."""

    def __init__(self, n: int) -> None:
        self.center = np.full((n, 3), _FLT_MAX, np.float32)
        self.segs = np.zeros((n, MAX_LOCAL_SEGS, 6), np.float32)
        self.seg_d = np.zeros((n, MAX_LOCAL_SEGS), np.float32)
        self.nsegs = np.zeros(n, np.int32)
        self.polys = np.zeros((n, MAX_LOCAL_POLYS), np.int64)
        self.npolys = np.zeros(n, np.int32)

    def reset(self, s: int) -> None:
        self.center[s] = _FLT_MAX
        self.npolys[s] = 0
        self.nsegs[s] = 0

    def _add_segment(self, s: int, dist, seg) -> None:
        n = int(self.nsegs[s])
        d = self.seg_d[s]
        if n == 0:
            i = 0
        elif dist >= d[n - 1]:
            if n >= MAX_LOCAL_SEGS:
                return
            i = n
        else:
            i = 0
            while i < n and not dist <= d[i]:
                i += 1
            m = min(n - i, MAX_LOCAL_SEGS - (i + 1))
            if m > 0:
                self.segs[s, i + 1 : i + 1 + m] = self.segs[s, i : i + m].copy()
                d[i + 1 : i + 1 + m] = d[i : i + m].copy()
        d[i] = dist
        self.segs[s, i] = seg
        if n < MAX_LOCAL_SEGS:
            self.nsegs[s] = n + 1

    def update(self, s: int, ref: int, pos: np.ndarray, query_range, q, flt) -> None:
        """dtLocalBoundary::update around pos on polygon ref."""
        if not ref:
            self.reset(s)
            return
        self.center[s] = pos
        polys = q.find_local_neighbourhood(ref, pos, query_range, flt, MAX_LOCAL_POLYS).refs
        self.npolys[s] = polys.shape[0]
        self.polys[s, : polys.shape[0]] = polys
        self.nsegs[s] = 0
        r2 = query_range * query_range
        for ref_j in polys:
            segs = q.get_poly_wall_segments(int(ref_j), flt, False, _MAX_SEGS_PER_POLY).segments
            for k in range(segs.shape[0]):
                sg = segs[k]
                d2, _ = dist_pt_seg_sqr_2d(pos[0], pos[2], sg[0], sg[2], sg[3], sg[5])
                if d2 > r2:
                    continue
                self._add_segment(s, np.float32(d2), sg)

    def is_valid(self, s: int, q, flt) -> bool:
        n = int(self.npolys[s])
        if n == 0:
            return False
        return all(q.is_valid_poly_ref(int(self.polys[s, i]), flt) for i in range(n))


@njit(cache=True)
def boundaries_stale(d, act, walking, npos, qrange, qfilter, filter_flags, center, polys, npolys):
    """Which walking agents need dtLocalBoundary::update this step: moved more than a
    quarter of the query range (xz) from the boundary's centre, or the boundary is
    not valid (no polygons, or one no longer valid / passing the agent's filter)."""
    nav = open_view(d)
    out = np.zeros(npos.shape[0], np.bool_)
    for i in range(act.shape[0]):
        s = act[i]
        if not walking[s]:
            continue
        thr = qrange[s] * F32(0.25)
        dx = center[s, 0] - npos[s, 0]
        dz = center[s, 2] - npos[s, 2]
        if dx * dx + dz * dz > thr * thr:  # (inf after a reset)
            out[s] = True
            continue
        n = npolys[s]
        if n == 0:
            out[s] = True
            continue
        flt = filter_flags[qfilter[s]]
        for j in range(n):
            p = poly_index(nav, polys[s, j])
            if p < 0 or not passes(flt, p, nav):
                out[s] = True
                break
    return out


def _update_impl(d, tiny_ds, flags_table, act, nchunk, walking, c_path, npos, qrange, qfilter,
                 center, segs, seg_d, nsegs, polys, npolys):  # fmt: skip
    """dtCrowd's boundary step for every walking agent: when the agent moved more than
    a quarter of its query range (xz) from the boundary's centre, or the boundary is
    not valid (no polygons, or one no longer valid / passing the agent's filter),
    dtLocalBoundary::update around npos on the corridor's first polygon
    (findLocalNeighbourhood, then each polygon's wall segments within the range,
    the nearest MAX_LOCAL_SEGS kept sorted by squared xz distance). Returns the
    number of boundaries rebuilt."""
    center, segs, seg_d, nsegs, polys, npolys = borrow((center, segs, seg_d, nsegs, polys, npolys))
    # (a row view of an owned array counts a reference on it, atomically: threads
    # working on the same table would contend for its counter)
    flags_table = borrow(flags_table)
    n_act = act.shape[0]
    counts = np.zeros(nchunk, np.int64)
    for c in prange(nchunk):
        nav = open_view(d)  # (inside: a parfor cannot capture the NamedTuple)
        tiny = open_pool(tiny_ds[c])
        par_o = np.zeros(MAX_LOCAL_POLYS, np.int64)
        wsegs_o = np.zeros((_MAX_SEGS_PER_POLY, 6), np.float32)
        wrefs_o = np.zeros(_MAX_SEGS_PER_POLY, np.int64)
        pos_o = np.empty(3, np.float32)
        par, wsegs, wrefs, pos = borrow((par_o, wsegs_o, wrefs_o, pos_o))
        for i in range((n_act * c) // nchunk, (n_act * (c + 1)) // nchunk):
            s = act[i]
            if not walking[s]:
                continue
            rng = qrange[s]
            thr = rng * F32(0.25)
            dx = center[s, 0] - npos[s, 0]
            dz = center[s, 2] - npos[s, 2]
            stale = dx * dx + dz * dz > thr * thr  # (inf after a reset)
            flt = flags_table[qfilter[s]]
            if not stale:
                n = npolys[s]
                if n == 0:
                    stale = True
                for j in range(n):
                    p = poly_index(nav, polys[s, j])
                    if p < 0 or not passes(flt, p, nav):
                        stale = True
                        break
            if not stale:
                continue
            counts[c] += 1
            ref = c_path[s, 0]
            if ref == 0:
                center[s, 0] = _FLT_MAX
                center[s, 1] = _FLT_MAX
                center[s, 2] = _FLT_MAX
                npolys[s] = 0
                nsegs[s] = 0
                continue
            pos[0] = npos[s, 0]
            pos[1] = npos[s, 1]
            pos[2] = npos[s, 2]
            center[s, 0] = pos[0]
            center[s, 1] = pos[1]
            center[s, 2] = pos[2]
            np_ = 0
            p0 = poly_index(nav, ref)
            if p0 >= 0:
                _, np_ = local_neighbourhood_kernel(nav, tiny, flt, p0, pos, rng, polys[s], par)
            npolys[s] = np_
            nsegs[s] = 0
            r2 = rng * rng
            for j in range(np_):
                pj = poly_index(nav, polys[s, j])
                _, nw = wall_segments_kernel(nav, flt, pj, False, wsegs, wrefs)
                for k in range(nw):
                    d2, _t = dist_pt_seg_sqr_2d(
                        pos[0], pos[2], wsegs[k, 0], wsegs[k, 2], wsegs[k, 3], wsegs[k, 5]
                    )
                    if d2 > r2:
                        continue
                    _add_segment(segs[s], seg_d[s], nsegs, s, F32(d2), wsegs, k)
        keep((par_o, wsegs_o, wrefs_o, pos_o))
    return counts.sum()


@njit(inline="always")
def _add_segment(segs, d, nsegs, s, dist, src, k):
    """dtLocalBoundary::addSegment: insert src[k] into the agent's sorted segments."""
    n = nsegs[s]
    if n == 0:
        i = 0
    elif dist >= d[n - 1]:
        if n >= MAX_LOCAL_SEGS:
            return
        i = n
    else:
        i = 0
        while i < n and not dist <= d[i]:
            i += 1
        m = min(n - i, MAX_LOCAL_SEGS - (i + 1))
        for j in range(m - 1, -1, -1):
            d[i + 1 + j] = d[i + j]
            for q in range(6):
                segs[i + 1 + j, q] = segs[i + j, q]
    d[i] = dist
    for q in range(6):
        segs[i, q] = src[k, q]
    if n < MAX_LOCAL_SEGS:
        nsegs[s] = n + 1


update_boundaries, update_boundaries_par = twins(_update_impl, returns=True)
