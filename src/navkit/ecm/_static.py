"""Static construction of the free-space segment Voronoi diagram.

The full build uses Boost.Polygon's Voronoi (Fortune's sweep extended to
segments, O(n log n), exact predicates on integer input) through PyPI
``pyvoronoi``.  Why a library here: an exact sweep with parabolic beach-line
arcs and robust predicates is a large, well-studied piece of numerics that Boost
has kept correct for a decade, and the static build doubles as the independent
oracle for navkit's own local updates (:mod:`navkit.ecm._diagram`), which share
no code with it.  Input coordinates are snapped to a power-of-two grid
(``scale``) by :class:`~navkit.ecm.CorridorMap` first, so Boost's integer
rounding is exact.

When ``pyvoronoi`` is not installed, the diagram is built by inserting the
obstacles one by one with the local-update code (slower, O(n k)).
"""

from __future__ import annotations

import math

import numpy as np

from navkit.errors import BuildError

from .geom import site_dist

try:  # optional dependency: pip install navkit[ecm]
    import pyvoronoi as _pv
except ImportError:  # pragma: no cover - exercised only without the extra
    _pv = None

HAVE_PYVORONOI = _pv is not None


def build_with_boost(diag, corners, scale: float) -> None:
    """Fill the empty :class:`Diagram` ``diag`` from Boost's Voronoi diagram of its
    alive sites. ``corners``: (s_in, p, s_out) corner vertices of polygons."""
    if _pv is None:
        raise BuildError("pyvoronoi is not installed (pip install navkit[ecm])")
    S = diag.S
    pv = _pv.Pyvoronoi(scale)
    pt_ids = []
    seg_ids = []
    by_xy = {}
    used_as_end = set()
    for s in range(S.n):
        if S.alive[s] and S.kind[s] == 1:
            used_as_end.add(int(S.e0[s]))
            used_as_end.add(int(S.e1[s]))
    for s in range(S.n):
        if not S.alive[s]:
            continue
        if S.kind[s] == 0:
            by_xy[(S.ax[s], S.ay[s])] = s
            if s not in used_as_end:
                pv.AddPoint([S.ax[s], S.ay[s]])
                pt_ids.append(s)
    for s in range(S.n):
        if S.alive[s] and S.kind[s] == 1:
            pv.AddSegment([[S.ax[s], S.ay[s]], [S.bx[s], S.by[s]]])
            seg_ids.append(s)
    pv.Construct()
    npt = len(pt_ids)
    cells = pv.GetCells()
    cell_site = np.empty(len(cells), np.int64)
    for i, c in enumerate(cells):
        cat = c.source_category
        if cat == 0:
            cell_site[i] = pt_ids[c.site]
        else:
            sid = seg_ids[c.site - npt]
            if cat == 1:
                cell_site[i] = by_xy[(S.ax[sid], S.ay[sid])]
            elif cat == 2:
                cell_site[i] = by_xy[(S.bx[sid], S.by[sid])]
            else:
                cell_site[i] = sid
    verts = pv.GetVertices()
    edges = pv.GetEdges()
    vsites: list[set] = [set() for _ in verts]
    for e in edges:
        if e.start >= 0:
            vsites[e.start].add(int(cell_site[e.cell]))
        if e.end >= 0:
            vsites[e.end].add(int(cell_site[e.cell]))
    # vertices, merged where they coincide (within 10 tol per coordinate), then
    # added to the index in one kernel call
    keep = np.full(len(verts), -1, np.int64)
    corner_pts = {c[1] for c in corners}
    tol = diag.tol
    cell = max(tol * 1e3, 1e-300)
    grid: dict = {}
    pos: list = []  # merged vertices: [x, y, rho, site set]

    def find(x, y):
        t = tol * 10
        gx, gy = math.floor(x / cell), math.floor(y / cell)
        for i in (gx - 1, gx, gx + 1):
            for j in (gy - 1, gy, gy + 1):
                for k in grid.get((i, j), ()):
                    if abs(pos[k][0] - x) <= t and abs(pos[k][1] - y) <= t:
                        return k
        return -1

    def add(x, y, rho, ss):
        k = find(x, y)
        if k >= 0:
            pos[k][3].update(ss)
            return k
        pos.append([x, y, rho, set(ss)])
        grid.setdefault((math.floor(x / cell), math.floor(y / cell)), []).append(len(pos) - 1)
        return len(pos) - 1

    for i, v in enumerate(verts):
        x, y = v.X, v.Y
        ss = sorted(vsites[i])
        if len(ss) < 3:
            continue
        rho, _, _, _ = site_dist(S, ss[0], x, y)
        if rho <= tol:
            if not any(s in corner_pts for s in ss):
                continue
            p = next(s for s in ss if s in corner_pts)
            x, y, rho = float(S.ax[p]), float(S.ay[p]), 0.0
        elif not all(diag.side_ok(s, x, y, rho) for s in ss):
            continue
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        keep[i] = add(x, y, rho, ss)
    for c in corners:
        add(float(S.ax[c[1]]), float(S.ay[c[1]]), 0.0, c)
    sets = [sorted(q[3]) for q in pos]
    ptr = np.zeros(len(pos) + 1, np.int64)
    ptr[1:] = np.cumsum([len(q) for q in sets])
    ids = np.asarray([s for q in sets for s in q], np.int64)
    xyr = np.asarray([q[:3] for q in pos], np.float64).reshape(-1, 3)
    vid, _ = diag.add_vertices(xyr, ptr, ids, merge=False)
    keep = np.where(keep >= 0, vid[np.maximum(keep, 0)], -1)
    seen = set()
    ev, es = [], []
    for k, e in enumerate(edges):
        if e.twin < k or not e.is_primary or e.start < 0 or e.end < 0:
            continue
        v0, v1 = int(keep[e.start]), int(keep[e.end])
        if v0 < 0 or v1 < 0 or v0 == v1:
            continue
        a, b = int(cell_site[e.cell]), int(cell_site[edges[e.twin].cell])
        if diag.is_secondary(a, b):
            continue
        key = (min(a, b), max(a, b), min(v0, v1), max(v0, v1))
        if key not in seen:
            seen.add(key)
            ev.append((v0, v1))
            es.append((a, b))
    diag.add_edges(ev, es)
