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
Euclidean xz distance: the path is the shortest *in the ground plane*, not in 3D
(on sloped or uneven ground its 3D length can exceed that of Detour's path), and
**area costs do not apply**. **Off-mesh connections are
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
from ._nearest import find_nearest_entry
from .filter import QueryFilter
from .query import PARTIAL_RESULT, SUCCESS, NavMeshQuery, Path, _vec3

__all__ = ["find_optimal_path", "OptimalPlanner", "MAX_SEARCH_NODES"]

#: Default bound on the search nodes of one optimal path search (about 240 MiB of node
#: arrays at the limit; the arrays start at 4096 nodes and double as needed).
MAX_SEARCH_NODES = 1 << 21
NODE_BYTES = 8 * 8 + 6 * 8 + 8  # one row of nf, ni and the heap


class OptimalPlanner:
    """The prepared mesh of one navmesh state and filter, plus reusable buffers.

    Built (and cached on the query) by :func:`find_optimal_path`; rebuilt when the
    navmesh's tiles or polygon flags change, or another filter is used.
    """

    def __init__(self, query: NavMeshQuery, flags: np.ndarray) -> None:
        self.handle = query._vh()  # owns the arrays the descriptor points into
        v = self.view = self.handle.view
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
        xy, start, nb, twin, vid, corner, comp, max_ring = K.prepare_entry(self.handle.desc, ok)
        self.xy, self.start, self.nb, self.twin = xy, start, nb, twin
        self.vid, self.corner, self.comp = vid, corner, comp
        ext = float(np.abs(xy).max()) if xy.size else 1.0
        self.eps = 1e-9 * max(1.0, ext)
        self.sc_r = np.zeros(max_ring + 2, np.float64)
        self.sc_l = np.zeros(max_ring + 2, np.float64)
        self.root_g = np.zeros(vid.max() + 1 if vid.size else 1, np.float64)
        self.stamp = np.zeros(self.root_g.shape[0], np.int64)
        self.cl_g = np.zeros(xy.shape[0], np.float64)
        self.cl_stamp = np.zeros(xy.shape[0], np.int64)
        self.cur = 0
        self._alloc(4096)

    def _alloc(self, cap: int) -> None:
        self.nf = np.zeros((cap, 8), np.float64)
        self.ni = np.zeros((cap, 6), np.int64)
        self.heap = np.zeros(cap, np.int64)
        self.cnt = np.zeros(3, np.int64)

    def search(self, sp: int, s2: tuple, gp: int, g2: tuple, max_nodes: int) -> int:
        """Run the kernel (growing the node arrays until they suffice); goal node or -1.

        Raises QueryError when the search needs more than ``max_nodes`` nodes.
        """
        while True:
            self.cur += 1
            lim = min(self.nf.shape[0], max_nodes)
            k = K.search_kernel(
                self.xy, self.start, self.nb, self.twin, self.vid, self.corner, sp, s2[0],
                s2[1], gp, g2[0], g2[1], self.eps, self.nf[:lim], self.ni[:lim],
                self.heap[:lim], self.cnt,
                self.root_g, self.stamp, self.cur, self.sc_r, self.sc_l, self.cl_stamp, self.cl_g,
            )  # fmt: skip
            if k != K.FULL:
                return int(k)
            cap = self.nf.shape[0]
            if lim >= max_nodes:
                raise QueryError(
                    f"the optimal path search needs more than max_nodes={max_nodes} search "
                    f"nodes (~{max_nodes * NODE_BYTES / 2**20:.0f} MiB); pass a larger "
                    "max_nodes to find_optimal_path, or use Detour's path (optimal=False)"
                )
            self._alloc(min(cap * 2, max_nodes))


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
    filter: QueryFilter | None = None, max_nodes: int = MAX_SEARCH_NODES,
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
        the length is Euclidean in the xz plane.
    max_nodes : int
        Bound on the search nodes (memory: about 120 bytes each); default
        :data:`MAX_SEARCH_NODES`.

    Returns
    -------
    Path
        ``points`` (k, 3) float32 [wu]: the snapped start, the corner vertices the path
        turns at, the end; ``polys`` (n,) int64 the refs of the polygons crossed;
        ``complete`` False when the end is unreachable (the path then ends at the
        reachable point nearest the end, like Detour's partial paths; ``status`` then
        has ``PARTIAL_RESULT`` and ``partial_reason`` is ``"unreachable"``);
        ``length`` the 3D polyline length [wu]. The *xz* length (the path projected
        on the ground plane) is the exact shortest (up to float64 rounding) among
        paths inside the walkable polygons, so it is never longer than the xz length
        of Detour's path. The 3D length is not minimised: the heights come from the
        detail surface, and on sloped or uneven ground the 3D length can exceed that
        of Detour's path.

    Raises
    ------
    InputError
        Non-finite or mis-shaped points, max_nodes < 1.
    QueryError
        No polygon within half_extents of start or end, or the search needs more
        than ``max_nodes`` nodes.
    """
    if not isinstance(query, NavMeshQuery):
        raise InputError("query must be a navkit NavMeshQuery")
    flags, _ = NavMeshQuery._filter(filter)
    s = _vec3(start, "start")
    e = _vec3(end, "end")
    h = _vec3(half_extents, "half_extents")
    if np.any(h < 0):
        raise InputError("half_extents must be >= 0")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, (int, np.integer)) or max_nodes < 1:
        raise InputError(f"max_nodes must be an integer >= 1, got {max_nodes!r}")
    pl = _planner(query, flags)
    v = pl.view
    d = pl.handle.desc
    s3 = np.empty(3, np.float32)
    g3 = np.empty(3, np.float32)
    sp, _ = find_nearest_entry(d, s, h, flags, s3)
    if sp < 0:
        raise QueryError(f"no polygon within {h.tolist()} of start {s.tolist()}")
    gp, _ = find_nearest_entry(d, e, h, flags, g3)
    if gp < 0:
        raise QueryError(f"no polygon within {h.tolist()} of end {e.tolist()}")
    sp = int(sp)
    gp = int(gp)
    complete = True
    if pl.comp[sp] != pl.comp[gp]:
        complete = False
        gp, g3 = K.closest_reachable_entry(d, pl.comp, pl.comp[sp], g3)
        gp = int(gp)
    k = pl.search(
        sp, (float(s3[0]), -float(s3[2])), gp, (float(g3[0]), -float(g3[2])), int(max_nodes)
    )
    if k < 0:
        warnings.warn(
            "optimal path search found no path inside a connected component; "
            "returning Detour's A*+funnel path",
            RuntimeWarning,
            stacklevel=2,
        )
        return query.path(start, end, half_extents=half_extents, filter=filter, max_path=65535)
    cap = int(pl.cnt[0]) + 2
    pts = np.empty((cap, 3), np.float32)
    corridor = np.empty(cap, np.int64)
    m, nc, length = K.finish_entry(d, pl.nf, pl.ni, k, sp, s3, g3, pts, corridor)
    status = SUCCESS if complete else SUCCESS | PARTIAL_RESULT
    return Path(pts[:m].copy(), v.poly_ref[corridor[:nc]].copy(), complete, float(length), status)
