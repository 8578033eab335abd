"""Visibility-graph shortest path among convex obstacles inflated by a radius.

A lower bound for paths with clearance ``r``: every obstacle (convex polygon,
segment or point) is grown by a polygon *inscribed* in the disk of radius ``r``
(so the grown shape lies inside the true r-neighbourhood), the rectangle
boundary is shrunk by ``r`` exactly, and the shortest path among the grown
shapes is found on their visibility graph.  Any path that keeps clearance ``r``
avoids the true neighbourhoods, hence the grown shapes, so it is never shorter.
"""

from __future__ import annotations

import heapq

import numpy as np


def convex_hull(p: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull (monotone chain)."""
    pts = sorted(map(tuple, np.asarray(p, float)))
    if len(pts) <= 2:
        return np.array(pts)

    def half(seq):
        h = []
        for q in seq:
            while (
                len(h) >= 2
                and (
                    (h[-1][0] - h[-2][0]) * (q[1] - h[-2][1])
                    - (h[-1][1] - h[-2][1]) * (q[0] - h[-2][0])
                )
                <= 0
            ):
                h.pop()
            h.append(q)
        return h

    lo, up = half(pts), half(pts[::-1])
    return np.array(lo[:-1] + up[:-1])


def grown(obstacle: np.ndarray, r: float, k: int = 24) -> np.ndarray:
    ang = np.arange(k) * 2 * np.pi / k
    disk = r * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    pts = (np.asarray(obstacle, float)[:, None, :] + disk[None]).reshape(-1, 2)
    return convex_hull(pts)


def _blocked(a, b, hull, eps=1e-9) -> bool:
    """Whether segment ab passes through the interior of a CCW convex hull."""
    t0, t1 = 0.0, 1.0
    d = b - a
    n = hull.shape[0]
    for i in range(n):
        p, q = hull[i], hull[(i + 1) % n]
        e = q - p
        # inside: cross(e, x - p) > 0
        num = e[0] * (a[1] - p[1]) - e[1] * (a[0] - p[0])
        den = e[0] * d[1] - e[1] * d[0]
        if abs(den) < 1e-15:
            if num <= eps:
                return False
            continue
        t = -num / den
        if den > 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t1 - t0 <= eps:
            return False
    return t1 - t0 > eps


class _Hulls:
    """All hull edges in flat arrays, for a vectorised blocking test."""

    def __init__(self, hulls):
        self.p = np.vstack([h for h in hulls])
        self.e = np.vstack([np.roll(h, -1, axis=0) - h for h in hulls])
        self.starts = np.cumsum([0] + [len(h) for h in hulls[:-1]])
        self.n = len(hulls)

    def blocked(self, a, b, eps=1e-9) -> bool:
        d = b - a
        num = self.e[:, 0] * (a[1] - self.p[:, 1]) - self.e[:, 1] * (a[0] - self.p[:, 0])
        den = self.e[:, 0] * d[1] - self.e[:, 1] * d[0]
        par = np.abs(den) < 1e-15
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(par, 0.0, -num / den)
        lo = np.where(~par & (den > 0), t, -np.inf)
        hi = np.where(~par & (den < 0), t, np.inf)
        outside = par & (num <= eps)
        t0 = np.maximum(np.maximum.reduceat(lo, self.starts), 0.0)
        t1 = np.minimum(np.minimum.reduceat(hi, self.starts), 1.0)
        out = np.maximum.reduceat(outside.astype(np.int8), self.starts) > 0
        return bool(np.any(~out & (t1 - t0 > eps)))


def shortest_path_length(box, obstacles, start, goal, r) -> float:
    """Length of the shortest start-goal path keeping clearance ``r`` from the
    inscribed-grown obstacles inside ``box = (x0, y0, x1, y1)`` shrunk by ``r``
    (inf if none)."""
    x0, y0, x1, y1 = box[0] + r, box[1] + r, box[2] - r, box[3] - r
    hulls = [grown(o, r) for o in obstacles]
    H = _Hulls(hulls)
    nodes = [np.asarray(start, float), np.asarray(goal, float)]
    for h in hulls:
        for q in h:
            if x0 <= q[0] <= x1 and y0 <= q[1] <= y1:
                nodes.append(q)
    n = len(nodes)
    dist = [np.inf] * n
    dist[0] = 0.0
    heap = [(0.0, 0)]
    while heap:
        dd, u = heapq.heappop(heap)
        if dd > dist[u]:
            continue
        if u == 1:
            return dd
        for v in range(n):
            if v == u:
                continue
            nd = dd + float(np.hypot(*(nodes[v] - nodes[u])))
            if nd >= dist[v]:
                continue
            if H.blocked(nodes[u], nodes[v]):
                continue
            dist[v] = nd
            heapq.heappush(heap, (nd, v))
    return float("inf")
