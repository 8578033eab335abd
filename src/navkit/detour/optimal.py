"""Optimal (any-angle, Euclidean shortest) paths on a navmesh: Polyanya.

Detour's A* over polygon centres plus the funnel gives a path that is taut within
its corridor, but the corridor itself may not be the best one. This module finds
the true Euclidean shortest path through the walkable polygons with Polyanya
(Cui, Harabor & Grastien, "Compromise-free Pathfinding on a Navigation Mesh",
IJCAI 2017): an A* over *search nodes* = (an interval on a polygon edge, a root
point that sees the whole interval). Expanding a node projects the interval from
its root across the next polygon: the edges the projection covers become
observable successors (same root); where the interval ends at a corner vertex
(a vertex touching a wall), the rest of the polygon becomes non-observable
successors rooted at that corner. The h-value is the length of the shortest
root -> interval -> goal path (the goal mirrored across the interval's line when
it lies on the root's side), so it never overestimates and the first goal node
popped is optimal. A root vertex reached again with a larger g is pruned
("root-level pruning"); the open list is a binary heap on arrays.

Geometry is the xz projection but the polygon graph is the navmesh's link graph,
so multi-storey meshes work (adjacency, not geometry, decides where you can go;
tile portals are links whose exact overlap with the neighbour's edge is used).
Polygons that fail the filter's include/exclude flags are walls. The metric is
Euclidean xz distance: **area costs do not apply**. **Off-mesh connections are
not traversed** (they are walls to this search). The 3D points take their
heights from the detail surface of the polygon that holds them
(``closestPointOnPoly``).

Kernels: :mod:`navkit.detour._polyanya`.
"""

from __future__ import annotations

import warnings

import numpy as np

from navkit.errors import InputError, QueryError

from . import _polyanya as K
from ._poly import closest_point_on_poly
from .filter import QueryFilter
from .query import NavMeshQuery, Path

__all__ = ["find_optimal_path", "OptimalPlanner"]


class OptimalPlanner:
    """The prepared mesh of one navmesh state and filter, plus reusable buffers.

    Built (and cached on the query) by :func:`find_optimal_path`; rebuilt when the
    navmesh's tiles or polygon flags change, or another filter is used.
    """

    def __init__(self, query: NavMeshQuery, flags: np.ndarray) -> None:
        v = query.view
        self.view = v
        self.arrays = query.navmesh.arrays()
        self.flags_key = (int(flags[0]), int(flags[1]))
        ok = (
            (v.poly_tile >= 0)
            & (v.poly_type == 0)
            & ((v.poly_flags.astype(np.int64) & int(flags[0])) != 0)
            & ((v.poly_flags.astype(np.int64) & int(flags[1])) == 0)
        )
        self.ok = ok
        self.poly_flags = v.poly_flags.copy()
        xy, start, nb, twin, vid, corner, comp, max_ring = K.prepare_kernel(v, ok)
        self.xy, self.start, self.nb, self.twin = xy, start, nb, twin
        self.vid, self.corner, self.comp = vid, corner, comp
        ext = float(np.abs(xy).max()) if xy.size else 1.0
        self.eps = 1e-9 * max(1.0, ext)
        self.sc_r = np.zeros(max_ring + 2, np.float64)
        self.sc_l = np.zeros(max_ring + 2, np.float64)
        self.root_g = np.zeros(vid.max() + 1 if vid.size else 1, np.float64)
        self.stamp = np.zeros(self.root_g.shape[0], np.int64)
        self.cur = 0
        self._alloc(4096)

    def _alloc(self, cap: int) -> None:
        self.nf = np.zeros((cap, 8), np.float64)
        self.ni = np.zeros((cap, 6), np.int64)
        self.heap = np.zeros(cap, np.int64)
        self.cnt = np.zeros(3, np.int64)

    def search(self, sp: int, s2: tuple, gp: int, g2: tuple) -> int:
        """Run the kernel (growing the node arrays until they suffice); goal node or -1."""
        while True:
            self.cur += 1
            k = K.search_kernel(
                self.xy, self.start, self.nb, self.twin, self.vid, self.corner, sp, s2[0],
                s2[1], gp, g2[0], g2[1], self.eps, self.nf, self.ni, self.heap, self.cnt,
                self.root_g, self.stamp, self.cur, self.sc_r, self.sc_l,
            )  # fmt: skip
            if k != K.FULL:
                return int(k)
            self._alloc(self.nf.shape[0] * 2)


def _planner(query: NavMeshQuery, flags: np.ndarray) -> OptimalPlanner:
    pl = getattr(query, "_navkit_optimal", None)
    a = query.navmesh.arrays()
    key = (int(flags[0]), int(flags[1]))
    if (
        pl is None
        or pl.arrays is not a
        or pl.flags_key != key
        or not np.array_equal(pl.poly_flags, query.view.poly_flags)  # flags are live
    ):
        pl = OptimalPlanner(query, flags)
        query._navkit_optimal = pl  # type: ignore[attr-defined]
    return pl


def find_optimal_path(
    query: NavMeshQuery, start, end, *, half_extents=(2.0, 4.0, 2.0),
    filter: QueryFilter | None = None,
) -> Path:  # fmt: skip
    """Euclidean shortest path from start to end through the navmesh polygons (Polyanya).

    Parameters
    ----------
    query : NavMeshQuery
        Query over the navmesh (its prepared mesh is cached on it).
    start, end : (3,) array_like of float
        World points [wu]; each is snapped to the nearest polygon within
        ``half_extents`` (``find_nearest_poly``), as :meth:`NavMeshQuery.path` does.
    half_extents : (3,) array_like of float
        Search box half size for the snapping [wu].
    filter : QueryFilter, optional
        Include/exclude flags (excluded polygons are walls). Area costs are ignored:
        the length is Euclidean.

    Returns
    -------
    Path
        ``points`` (k, 3) float32 [wu]: the snapped start, the corner vertices the path
        turns at, the end; ``polys`` (n,) int64 the refs of the polygons crossed;
        ``complete`` False when the end is unreachable (the path then ends at the
        reachable point nearest the end, like Detour's partial paths); ``length`` the
        3D polyline length [wu]. The xz length is the exact shortest (up to float64
        rounding) among paths inside the walkable polygons.

    Raises
    ------
    InputError
        Non-finite or mis-shaped points.
    QueryError
        No polygon within half_extents of start or end.
    """
    if not isinstance(query, NavMeshQuery):
        raise InputError("query must be a navkit NavMeshQuery")
    flags, _ = NavMeshQuery._filter(filter)
    s_near = query.find_nearest_poly(start, half_extents, filter)
    if not s_near.found:
        raise QueryError(f"no polygon within {list(half_extents)} of start {list(start)}")
    e_near = query.find_nearest_poly(end, half_extents, filter)
    if not e_near.found:
        raise QueryError(f"no polygon within {list(half_extents)} of end {list(end)}")
    pl = _planner(query, flags)
    v = pl.view
    sp = query._poly(s_near.ref)
    gp = query._poly(e_near.ref)
    s3 = s_near.point.astype(np.float32)
    g3 = e_near.point.astype(np.float32)
    complete = True
    if pl.comp[sp] != pl.comp[gp]:
        complete = False
        gp, g3 = K.closest_reachable_kernel(v, pl.comp, pl.comp[sp], g3)
        gp = int(gp)
    s2 = (float(s3[0]), -float(s3[2]))
    g2 = (float(g3[0]), -float(g3[2]))
    k = pl.search(sp, s2, gp, g2)
    if k < 0:
        warnings.warn(
            "optimal path search found no path inside a connected component; "
            "returning Detour's A*+funnel path",
            RuntimeWarning,
            stacklevel=2,
        )
        p = query.path(start, end, half_extents=half_extents, filter=filter, max_path=65535)
        return p
    cap = pl.cnt[0] + 2
    out_xy = np.zeros((cap, 2), np.float64)
    out_poly = np.zeros(cap, np.int64)
    corridor = np.zeros(cap, np.int64)
    m, nc = K.trace_kernel(pl.nf, pl.ni, k, sp, out_xy, out_poly, corridor)
    pts = np.empty((m, 3), np.float32)
    tmp = np.empty(3, np.float32)
    for i in range(m):
        j = m - 1 - i
        if i == 0:
            pts[i] = s3
        elif i == m - 1:
            pts[i] = g3
        else:
            q = np.array([out_xy[j, 0], 0.0, -out_xy[j, 1]], np.float32)
            closest_point_on_poly(v, int(out_poly[j]), q, tmp)
            pts[i] = (q[0], tmp[1], q[2])
    if m == 1:
        pts = np.stack([s3, g3]).astype(np.float32)
    polys = v.poly_ref[corridor[:nc][::-1]].copy()
    d = np.diff(pts.astype(np.float64), axis=0)
    length = float(np.sqrt((d**2).sum(axis=1)).sum())
    return Path(pts, polys, complete, length)
