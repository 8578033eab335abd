"""The walkable area of a navmesh as 2D rings, for :meth:`CorridorMap.from_navmesh`.

A polygon edge used by exactly one polygon (no neighbour) is a boundary edge;
boundary edges are chained into closed rings in the x-z plane.  The ring of
largest area is the outer boundary and the others are holes (obstacles).

Multi-layer levels: the ECM here is a single 2D layer.  Polygons are first
filtered by ``y_range`` (world height interval, default: all); if what remains
still overlaps itself in the x-z plane (bridges over floors), the rings cross
and :class:`~navkit.errors.InputError` says so -- pick one layer with
``y_range``.  Several disconnected islands are not supported either (the
largest one is used and the others are reported in ``dropped`` as holes would
lie outside it).
"""

from __future__ import annotations

import numpy as np

from navkit.errors import InputError

__all__ = ["navmesh_rings"]

RC_MESH_NULL_IDX = 0xFFFF


def _polygons(navmesh):
    """(verts (n, 3) float64 world, list of vertex-index lists)."""
    if hasattr(navmesh, "triangles") and hasattr(navmesh, "vertices"):
        v = np.asarray(navmesh.vertices, np.float64)
        t = np.asarray(navmesh.triangles, np.int64)
        keep = np.ones(len(t), bool)
        areas = getattr(navmesh, "areas", None)
        if areas is not None:
            keep &= np.asarray(areas) > 0
        # upward-facing triangles only (walkable)
        e1 = v[t[:, 1]] - v[t[:, 0]]
        e2 = v[t[:, 2]] - v[t[:, 0]]
        ny = e1[:, 2] * e2[:, 0] - e1[:, 0] * e2[:, 2]
        keep &= ny > 0
        return v, [list(r) for r in t[keep]]
    if hasattr(navmesh, "polys") and hasattr(navmesh, "nvp"):
        cs, ch = float(navmesh.cs), float(navmesh.ch)
        bmin = np.asarray(navmesh.bmin, np.float64)
        v = np.asarray(navmesh.verts, np.float64) * [cs, ch, cs] + bmin
        polys = []
        for row in np.asarray(navmesh.polys):
            idx = [int(i) for i in row[: navmesh.nvp] if i != RC_MESH_NULL_IDX]
            if len(idx) >= 3:
                polys.append(idx)
        return v, polys
    raise InputError(
        "from_navmesh needs a PolyMesh (verts/polys/nvp) or a TriMesh (vertices/triangles)"
    )


def navmesh_rings(navmesh, y_range=None):
    """Outer ring and holes ((k, 2) float64 x-z [wu]) of a navmesh's walkable area."""
    v, polys = _polygons(navmesh)
    if y_range is not None:
        lo, hi = y_range
        polys = [p for p in polys if lo <= v[p, 1].mean() <= hi]
    if not polys:
        raise InputError("navmesh has no walkable polygons")
    # merge coincident vertices (triangle soups)
    key = np.round(v[:, [0, 2]] * 1e6).astype(np.int64)
    _, canon = np.unique(key, axis=0, return_inverse=True)
    canon = canon.reshape(-1)
    count: dict = {}
    directed = {}
    for p in polys:
        q = [int(canon[i]) for i in p]
        for a, b in zip(q, q[1:] + q[:1]):
            if a == b:
                continue
            k = (min(a, b), max(a, b))
            count[k] = count.get(k, 0) + 1
            directed[k] = (a, b)
    nxt: dict = {}
    for k, c in count.items():
        if c == 1:
            a, b = directed[k]
            if a in nxt:
                raise InputError(
                    "navmesh boundary is not a set of simple rings (touching corners or several layers)"
                )
            nxt[a] = b
    xz = np.zeros((int(canon.max()) + 1, 2))
    xz[canon] = v[:, [0, 2]]
    rings = []
    seen = set()
    for start in list(nxt):
        if start in seen:
            continue
        ring = []
        a = start
        while a not in seen:
            seen.add(a)
            ring.append(a)
            a = nxt.get(a)
            if a is None:
                raise InputError("open navmesh boundary")
        rings.append(xz[ring])
    if not rings:
        raise InputError("navmesh has no boundary")

    def area(r):
        return 0.5 * float(np.sum(r[:, 0] * np.roll(r[:, 1], -1) - np.roll(r[:, 0], -1) * r[:, 1]))

    rings.sort(key=lambda r: -abs(area(r)))
    return rings[0], rings[1:]
