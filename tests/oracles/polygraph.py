"""Slow, obviously-correct references for the Detour queries (pure Python + numpy, float64).

- :func:`portal_graph_cost`: Dijkstra over portal midpoints. Nodes are the
  portals (shared edges) of the polygon graph; inside a polygon one may move
  from its entry point (the start position or a portal midpoint) to any of
  its portal midpoints or, in the end polygon, to the end position, paying
  the 3D distance. Every corridor's "midpoint polyline" is one walk of this
  graph, so its cost is a lower bound for the cost Detour's A* pays along the
  corridor it returns (A* fixes each polygon's node at the first portal it
  used and scales its heuristic, so it may pay more, never less).
- :func:`reachable`: breadth-first reachability over links.
- :func:`first_wall_hit`: brute-force 2D segment-vs-wall-edge intersection
  over every wall edge of the mesh (valid on single-level meshes).
"""

from __future__ import annotations

import heapq

import numpy as np


def _links(view, p):
    k = int(view.poly_link[p])
    while k != -1:
        yield int(view.link_ref[k]), int(view.link_edge[k])
        k = int(view.link_next[k])


def _ref_to_poly(view):
    return {int(r): i for i, r in enumerate(view.poly_ref)}


def _mid(view, p, edge):
    n = int(view.poly_nverts[p])
    a = view.verts[int(view.poly_verts[p, edge])].astype(np.float64)
    b = view.verts[int(view.poly_verts[p, (edge + 1) % n])].astype(np.float64)
    return (a + b) * 0.5


def reachable(view, start_ref, end_ref):
    """True when end_ref can be reached from start_ref over links."""
    r2p = _ref_to_poly(view)
    seen = {int(start_ref)}
    todo = [int(start_ref)]
    while todo:
        r = todo.pop()
        if r == int(end_ref):
            return True
        for nr, _ in _links(view, r2p[r]):
            if nr and nr not in seen:
                seen.add(nr)
                todo.append(nr)
    return False


def portal_graph_cost(view, start_ref, end_ref, spos, epos):
    """Cheapest midpoint-polyline cost from spos (in start_ref) to epos (in end_ref)."""
    r2p = _ref_to_poly(view)
    s = np.asarray(spos, np.float64)
    e = np.asarray(epos, np.float64)
    if int(start_ref) == int(end_ref):
        return float(np.linalg.norm(e - s))
    # state: (poly ref, entry point) ; entry keyed by (poly, portal key)
    best = {}
    heap = [(0.0, 0, int(start_ref), tuple(s))]
    tick = 1
    while heap:
        c, _, r, pt = heapq.heappop(heap)
        key = (r, pt)
        if key in best:
            continue
        best[key] = c
        p = r2p[r]
        here = np.array(pt)
        if r == int(end_ref):
            return c + float(np.linalg.norm(e - here))
        for nr, edge in _links(view, p):
            if not nr:
                continue
            m = _mid(view, p, edge)
            nk = (nr, tuple(m))
            if nk in best:
                continue
            heapq.heappush(heap, (c + float(np.linalg.norm(m - here)), tick, nr, tuple(m)))
            tick += 1
    return None


def corridor_midpoint_cost(view, corridor, spos, epos):
    """Cost of start -> portal midpoints along the corridor -> end (float64)."""
    r2p = _ref_to_poly(view)
    pts = [np.asarray(spos, np.float64)]
    for a, b in zip(corridor[:-1], corridor[1:]):
        p = r2p[int(a)]
        edge = next(e for r, e in _links(view, p) if r == int(b))
        pts.append(_mid(view, p, edge))
    pts.append(np.asarray(epos, np.float64))
    return float(sum(np.linalg.norm(q - p) for p, q in zip(pts[:-1], pts[1:])))


def wall_edges(view):
    """(m, 2, 3) float64 endpoints of every polygon edge without a neighbour."""
    out = []
    for p in range(view.poly_ref.shape[0]):
        n = int(view.poly_nverts[p])
        for j in range(n):
            if int(view.poly_neis[p, j]) == 0:
                a = view.verts[int(view.poly_verts[p, j])]
                b = view.verts[int(view.poly_verts[p, (j + 1) % n])]
                out.append((a, b))
    return np.array(out, np.float64).reshape(-1, 2, 3)


def first_wall_hit(walls, s, e):
    """Smallest ray parameter t in [0, 1] where s->e (xz) crosses a wall edge, or None."""
    s = np.asarray(s, np.float64)
    e = np.asarray(e, np.float64)
    d = e - s
    a = walls[:, 0]
    b = walls[:, 1]
    u = b - a
    den = d[0] * u[:, 2] - d[2] * u[:, 0]
    w = a - s
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[:, 0] * u[:, 2] - w[:, 2] * u[:, 0]) / den
        v = (w[:, 0] * d[2] - w[:, 2] * d[0]) / den
    ok = (np.abs(den) > 1e-12) & (t >= 0) & (t <= 1) & (v >= 0) & (v <= 1)
    if not ok.any():
        return None
    return float(t[ok].min())
