"""Walls near each agent (Detour's dtLocalBoundary), as arrays over agent slots.

For agent ``s``: ``center[s]`` (FLT_MAX when reset), the nearest
``nsegs[s] <= 8`` wall segments ``segs[s, :nsegs]`` (x0 y0 z0 x1 y1 z1) sorted by
squared xz distance, and the polygons they came from ``polys[s, :npolys]``.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit
from navkit.detour._geom import dist_pt_seg_sqr_2d
from navkit.detour._portal import passes
from navkit.detour._view import open_view, poly_index

__all__ = ["Boundaries", "boundaries_stale", "MAX_LOCAL_SEGS", "MAX_LOCAL_POLYS"]

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
