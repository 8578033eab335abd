"""Brute-force Euclidean shortest path inside a union of convex polygons (single storey).

Dijkstra over the start, the goal and every boundary vertex (the end of an
edge no other polygon shares, which includes the reflex ones); an edge a-b exists
when the segment stays inside the walkable region: it is cut at every crossing
with a polygon edge and the midpoint of every piece must lie in (or on) some
polygon. Pieces are straight, each lies within one polygon's closure between two
cuts, so this is exact for regions whose polygons meet along edges (no two free
areas touching at a single point only -- the tests exclude such "double corners").
"""

from __future__ import annotations

import heapq

import numpy as np


def _pack(polys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Edge starts and unit edge directions, (P, K, 2) each; short rings repeat edge 0."""
    k = max(len(P) for P in polys)
    a = np.zeros((len(polys), k, 2))
    u = np.zeros((len(polys), k, 2))
    for i, P in enumerate(polys):
        e = np.roll(P, -1, axis=0) - P
        e = e / np.hypot(e[:, 0], e[:, 1])[:, None]
        a[i, : len(P)], u[i, : len(P)] = P, e
        a[i, len(P) :], u[i, len(P) :] = P[0], e[0]
    return a, u


def _inside_any(pts: np.ndarray, packed, eps: float) -> np.ndarray:
    a, u = packed
    d = pts[:, None, None, :] - a[None]
    cr = u[None, :, :, 0] * d[..., 1] - u[None, :, :, 1] * d[..., 0]
    return (np.all(cr >= -eps, axis=2) | np.all(cr <= eps, axis=2)).any(axis=1)


def segment_inside(a, b, packed, edges, eps=1e-7) -> bool:
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
    ok = (t > 0) & (t < 1) & (u >= -1e-6) & (u <= 1 + 1e-6)  # float32 vertices
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
    return bool(_inside_any(pts, packed, eps).all())


def shortest_path_length(polys: list[np.ndarray], start, goal) -> float:
    """Length of the Euclidean shortest path from start to goal inside the polygons (inf if none)."""
    polys = [np.asarray(P, float) for P in polys]
    packed = _pack(polys)
    edges = np.concatenate([np.stack([P, np.roll(P, -1, axis=0)], 1) for P in polys])
    # only boundary vertices can be turning points: ends of edges no other polygon shares
    count: dict[tuple, int] = {}
    for a, b in np.round(edges, 9):
        key = tuple(sorted((tuple(a), tuple(b))))
        count[key] = count.get(key, 0) + 1
    wall = [np.array(k) for k, c in count.items() if c == 1]
    verts = np.unique(np.concatenate(wall).reshape(-1, 2), axis=0) if wall else np.zeros((0, 2))
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
                cache[key] = segment_inside(nodes[v], nodes[w], packed, edges)
            if cache[key]:
                dist[w] = nd
                heapq.heappush(heap, (nd, w))
    return float("inf")
