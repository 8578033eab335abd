"""Brute-force Euclidean shortest path inside a union of convex polygons (single storey).

Dijkstra over the start, the goal and every polygon vertex; an edge a-b exists
when the segment stays inside the walkable region: it is cut at every crossing
with a polygon edge and the midpoint of every piece must lie in (or on) some
polygon. Pieces are straight, each lies within one polygon's closure between two
cuts, so this is exact for regions whose polygons meet along edges (no two free
areas touching at a single point only -- the tests exclude such "double corners").
"""

from __future__ import annotations

import heapq

import numpy as np


def _inside_any(pts: np.ndarray, polys: list[np.ndarray], eps: float) -> np.ndarray:
    res = np.zeros(len(pts), bool)
    for P in polys:
        a = P
        b = np.roll(P, -1, axis=0)
        e = b - a  # (k, 2)
        d = pts[:, None, :] - a[None, :, :]
        cr = e[None, :, 0] * d[:, :, 1] - e[None, :, 1] * d[:, :, 0]
        ln = np.hypot(e[:, 0], e[:, 1])[None, :]
        cr = cr / ln
        res |= np.all(cr >= -eps, axis=1) | np.all(cr <= eps, axis=1)
    return res


def segment_inside(a, b, polys, edges, eps=1e-7) -> bool:
    """Whether segment a-b lies in the union of the convex polygons."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    d = b - a
    p, q = edges[:, 0], edges[:, 1]
    e = q - p
    den = d[0] * e[:, 1] - d[1] * e[:, 0]
    ap = p - a
    ts = [0.0, 1.0]
    nz = np.abs(den) > 1e-12
    t = (ap[nz, 0] * e[nz, 1] - ap[nz, 1] * e[nz, 0]) / den[nz]
    u = (ap[nz, 0] * d[1] - ap[nz, 1] * d[0]) / den[nz]
    ok = (t > 0) & (t < 1) & (u >= -1e-9) & (u <= 1 + 1e-9)
    ts.extend(t[ok].tolist())
    # collinear edges: their endpoints projected on a-b cut it too
    dd = d @ d
    if dd > 0:
        for pt in (p[~nz], q[~nz]):
            tt = (pt - a) @ d / dd
            ts.extend(tt[(tt > 0) & (tt < 1)].tolist())
    ts = np.unique(np.array(ts))
    mids = (ts[:-1] + ts[1:]) / 2
    pts = a[None, :] + mids[:, None] * d[None, :]
    return bool(_inside_any(pts, polys, eps).all())


def shortest_path_length(polys: list[np.ndarray], start, goal) -> float:
    """Length of the Euclidean shortest path from start to goal inside the polygons (inf if none)."""
    polys = [np.asarray(P, float) for P in polys]
    edges = np.concatenate([np.stack([P, np.roll(P, -1, axis=0)], 1) for P in polys])
    verts = np.unique(np.round(np.concatenate(polys), 9), axis=0)
    nodes = np.concatenate([[start], [goal], verts]).astype(float)
    n = len(nodes)
    dist = np.full(n, np.inf)
    dist[0] = 0.0
    done = np.zeros(n, bool)
    heap = [(0.0, 0)]
    cache: dict[tuple[int, int], bool] = {}
    while heap:
        dv, v = heapq.heappop(heap)
        if done[v]:
            continue
        done[v] = True
        if v == 1:
            return dv
        for w in range(n):
            if done[w]:
                continue
            nd = dv + float(np.hypot(*(nodes[w] - nodes[v])))
            if nd >= dist[w]:
                continue
            key = (min(v, w), max(v, w))
            if key not in cache:
                cache[key] = segment_inside(nodes[v], nodes[w], polys, edges)
            if cache[key]:
                dist[w] = nd
                heapq.heappush(heap, (nd, w))
    return float("inf")
