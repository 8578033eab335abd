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
    keep = np.full(len(verts), -1, np.int64)
    corner_pts = {c[1] for c in corners}
    for i, v in enumerate(verts):
        x, y = v.X, v.Y
        ss = sorted(vsites[i])
        if len(ss) < 3:
            continue
        rho, _, _, _ = site_dist(S, ss[0], x, y)
        if rho <= diag.tol:
            if not any(s in corner_pts for s in ss):
                continue
            p = next(s for s in ss if s in corner_pts)
            x, y, rho = float(S.ax[p]), float(S.ay[p]), 0.0
        elif not all(diag.side_ok(s, x, y, rho) for s in ss):
            continue
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        keep[i] = diag.add_vertex(x, y, rho, ss)
    for c in corners:
        diag.add_corner(*c)
    for k, e in enumerate(edges):
        if e.twin < k or not e.is_primary or e.start < 0 or e.end < 0:
            continue
        v0, v1 = keep[e.start], keep[e.end]
        if v0 < 0 or v1 < 0 or v0 == v1:
            continue
        a, b = int(cell_site[e.cell]), int(cell_site[edges[e.twin].cell])
        if diag.is_secondary(a, b):
            continue
        key = (min(a, b), max(a, b))
        dup = False
        for e2 in diag.pair_edges.get(key, ()):
            w0, w1, _, _ = diag.edges[e2]
            if {w0, w1} == {int(v0), int(v1)}:
                dup = True
        if not dup:
            diag.add_edge(int(v0), int(v1), a, b)
