"""Detour's navmesh queries (``dtNavMeshQuery``) over a :class:`NavMesh`.

:class:`NavMeshQuery` validates inputs, converts them to float32/int64 arrays
and calls the numba kernels of this package (``_nearest``, ``_search``,
``_funnel``, ``_raycast``, ``_local``, ``_batch``); results come back as small
NamedTuples carrying Detour's status word where Detour has partial results.
Semantics, float32 rounding and tie-breaking follow Detour 1.6 (the version
the reference peer runs), so on Detour's own navmeshes the results are the
same refs, the same corridors and the same points.

Conventions: positions are (3,) float32 [wu]; refs are Python ints; a result
whose ``status`` has ``FAILURE`` set carries empty data. Bad arguments raise
:class:`~navkit.errors.InputError` naming the argument, before any work:
coordinates that are NaN/inf (also as float32) or mis-shaped, refs that are not
integers in [0, 2**64), result capacities (``max_path``, ``max_polys``, ...)
outside 0..2**20, ``max_tries`` outside 1..2**20, filters that are not a
:class:`QueryFilter`, ``rng`` that is not None/a Generator/a seed >= 0, and bools
where numbers are expected (see :mod:`navkit._check`); stale or
invalid refs give a failure status (``INVALID_PARAM``) -- or
:class:`~navkit.errors.StaleHandleError` from the ref-subject helpers
(``closest_point_on_poly``, ``closest_point_on_poly_boundary``,
``get_poly_height``, ``get_poly_wall_segments``); a point far from every
polygon gives ``ref == 0`` from ``find_nearest_poly``. Only the one-call
conveniences ``path``/``paths`` raise :class:`~navkit.errors.QueryError`.

A query object is not thread-safe (it owns one node pool); use one per thread.

The arrays in the results of the single calls (``raycast``, ``find_nearest_poly``,
``closest_point_on_poly``, ``move_along_surface``, ``path``) are not copies: the
kernels write them in place into buffers the query allocates in blocks (rows of a
(1024, 3) block for a point or normal, slices of a block of refs or of points), and
hand out each part once. They are ordinary writeable arrays that nothing writes to
again; as views, each keeps its block (a few to some tens of KB) alive.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numba
import numpy as np

from navkit import _check
from navkit._check import MAX_RESULT
from navkit._jit import ENTRY_POINTS, entry_call, get_threads, set_threads
from navkit.errors import InputError, QueryError, StaleHandleError

from . import _batch, _funnel, _local, _many, _nearest, _poly, _portal, _search, _single
from ._nodes import PoolHandle
from ._view import (
    Descriptor,
    NavView,
    ViewHandle,
    pack_arrays,
    poly_index_entry,
    view_from_navmesh,
)  # fmt: skip
from .filter import DEFAULT_FILTER, QueryFilter

__all__ = [
    "NavMeshQuery", "NearestPoly", "PathCorridor", "StraightPath", "RaycastHit", "Path",
    "PathBatch", "MoveResult", "WallHit", "WallSegments", "PolySearch", "RandomPoint",
    "NearestPolyBatch", "RaycastBatch", "ClosestPointBatch", "PolyHeightBatch",
    "RandomPointBatch", "MoveBatch",
    "SUCCESS", "FAILURE", "IN_PROGRESS", "INVALID_PARAM", "BUFFER_TOO_SMALL", "OUT_OF_NODES",
    "PARTIAL_RESULT", "STRAIGHTPATH_START", "STRAIGHTPATH_END", "STRAIGHTPATH_OFFMESH_CONNECTION",
    "STRAIGHTPATH_AREA_CROSSINGS", "STRAIGHTPATH_ALL_CROSSINGS", "RAYCAST_USE_COSTS",
    "FINDPATH_ANY_ANGLE",
]  # fmt: skip

STRAIGHTPATH_START = _funnel.START
STRAIGHTPATH_END = _funnel.END
STRAIGHTPATH_OFFMESH_CONNECTION = _funnel.OFFMESH
STRAIGHTPATH_AREA_CROSSINGS = _funnel.AREA_CROSSINGS
STRAIGHTPATH_ALL_CROSSINGS = _funnel.ALL_CROSSINGS
RAYCAST_USE_COSTS = _search.RAYCAST_USE_COSTS
FINDPATH_ANY_ANGLE = _search.FINDPATH_ANY_ANGLE
#: Detour's status bits (dtStatus), as Python ints.
SUCCESS: int = int(_portal.SUCCESS)
FAILURE: int = int(_portal.FAILURE)
IN_PROGRESS: int = int(_portal.IN_PROGRESS)
INVALID_PARAM: int = int(_portal.INVALID_PARAM)
BUFFER_TOO_SMALL: int = int(_portal.BUFFER_TOO_SMALL)
OUT_OF_NODES: int = int(_portal.OUT_OF_NODES)
PARTIAL_RESULT: int = int(_portal.PARTIAL_RESULT)
_FLT_MAX = float(np.finfo(np.float32).max)
_RAN_OUT = PARTIAL_RESULT | OUT_OF_NODES  # a search that ran out of nodes short of the goal


class NearestPoly(NamedTuple):
    """``find_nearest_poly``: ``ref`` 0 (and ``found`` False) when no polygon is in the box."""

    ref: int
    point: np.ndarray  # (3,) float32 nearest point [wu] (the query center when not found)
    over_poly: bool
    status: int

    @property
    def found(self) -> bool:
        return self.ref != 0


class PathCorridor(NamedTuple):
    """``find_path``: polygon refs from start to end (or to the polygon nearest the end)."""

    polys: np.ndarray  # (n,) int64 refs
    status: int

    @property
    def partial(self) -> bool:
        return bool(self.status & PARTIAL_RESULT)

    @property
    def ok(self) -> bool:
        return not self.status & FAILURE


class StraightPath(NamedTuple):
    """``find_straight_path``: corners, their STRAIGHTPATH_* flags and entered polygon refs."""

    points: np.ndarray  # (k, 3) float32 [wu]
    flags: np.ndarray  # (k,) uint8
    refs: np.ndarray  # (k,) int64
    status: int


class RaycastHit(NamedTuple):
    """``raycast``: t = inf (FLT_MAX) when the end was reached; else the wall hit fraction."""

    t: float
    hit_normal: np.ndarray  # (3,) float32
    hit_edge_index: int
    path: np.ndarray  # (n,) int64 visited refs
    path_cost: float
    status: int

    @property
    def hit(self) -> bool:
        return self.t < 1.0


class Path(NamedTuple):
    """``path``: a straight path between two world points.

    ``status`` is Detour's status word of the corridor search: ``PARTIAL_RESULT``
    when the goal polygon was not reached, with ``OUT_OF_NODES`` when the node pool
    ran out during the search, ``BUFFER_TOO_SMALL`` when the corridor was cut at
    ``max_path``. :attr:`partial_reason` says the same in words.
    """

    points: np.ndarray  # (k, 3) float32 [wu]
    polys: np.ndarray  # (n,) int64 corridor refs
    complete: bool  # the corridor reaches the end point's polygon
    length: float  # 3D polyline length [wu]
    status: int = SUCCESS  # Detour status bits (see above)

    @property
    def partial_reason(self) -> str | None:
        """Why the path is partial: None when complete, else ``"out_of_nodes"`` (the
        search ran out of nodes before reaching the goal, which may be reachable),
        ``"unreachable"`` (every polygon reachable from the start was searched: the goal
        is not among them), or ``"max_path"`` (the goal was found but the corridor was
        longer than ``max_path``)."""
        if self.complete:
            return None
        if self.status & PARTIAL_RESULT:
            return "out_of_nodes" if self.status & OUT_OF_NODES else "unreachable"
        if self.status & BUFFER_TOO_SMALL:
            return "max_path"
        return "unreachable"


class PathBatch(NamedTuple):
    """``paths``: many pairs; row i of each array belongs to pair i."""

    ok: np.ndarray  # (N,) bool a straight path was found
    complete: np.ndarray  # (N,) bool the corridor reaches the end polygon
    start_refs: np.ndarray  # (N,) int64 (0 = no polygon near the start)
    end_refs: np.ndarray  # (N,) int64
    n_polys: np.ndarray  # (N,) int32
    polys: np.ndarray  # (N, P) int64, P = max(n_polys); zero past each count
    n_points: np.ndarray  # (N,) int32
    points: np.ndarray  # (N, K, 3) float32, K = max(n_points); zero past each count
    flags: np.ndarray  # (N, K) uint8
    lengths: np.ndarray  # (N,) float64 (nan when not ok)
    status: np.ndarray  # (N,) int64 find_path status


class MoveResult(NamedTuple):
    """``move_along_surface``: reached position and visited polygons."""

    position: np.ndarray  # (3,) float32
    visited: np.ndarray  # (n,) int64
    status: int


class WallHit(NamedTuple):
    """``find_distance_to_wall``: distance (== max radius when no wall), hit point and normal."""

    distance: float
    position: np.ndarray  # (3,) float32
    normal: np.ndarray  # (3,) float32
    status: int


class WallSegments(NamedTuple):
    """``get_poly_wall_segments``: (n, 6) segments and the neighbour ref of each (0 = wall)."""

    segments: np.ndarray  # (n, 6) float32 start xyz, end xyz
    refs: np.ndarray  # (n,) int64
    status: int


class PolySearch(NamedTuple):
    """Result of the Dijkstra/BFS searches: polygons, their parents and costs."""

    refs: np.ndarray  # (n,) int64
    parents: np.ndarray  # (n,) int64 (0 = start)
    costs: np.ndarray  # (n,) float32 (zeros for find_local_neighbourhood)
    status: int


class RandomPoint(NamedTuple):
    """A random point on the navmesh and its polygon (ref 0 when none could be chosen)."""

    ref: int
    point: np.ndarray  # (3,) float32


class NearestPolyBatch(NamedTuple):
    """``find_nearest_polys``: row i answers center i (as :class:`NearestPoly`)."""

    refs: np.ndarray  # (N,) int64 nearest polygon ref, 0 when none is in the box
    points: np.ndarray  # (N, 3) float32 nearest point [wu] (the center when not found)
    over_poly: np.ndarray  # (N,) bool the center lies over the polygon (xz)
    status: np.ndarray  # (N,) int64 Detour status (SUCCESS: "nothing found" is ref 0)

    @property
    def found(self) -> np.ndarray:
        """(N,) bool: a polygon was found."""
        return self.refs != 0  # type: ignore[no-any-return]


class RaycastBatch(NamedTuple):
    """``raycasts``: row i answers ray i (as :class:`RaycastHit`)."""

    t: np.ndarray  # (N,) float32 hit fraction; inf when the end was reached
    hit_normal: np.ndarray  # (N, 3) float32 wall normal (zero without a hit)
    hit_edge_index: np.ndarray  # (N,) int32 edge left through last, -1 = none
    path: np.ndarray  # (N, max(1, max_path)) int64 visited refs; zero past path_count
    path_count: np.ndarray  # (N,) int32
    path_cost: np.ndarray  # (N,) float32 (RAYCAST_USE_COSTS)
    status: np.ndarray  # (N,) int64 Detour status bits

    @property
    def hit(self) -> np.ndarray:
        """(N,) bool: the ray hit a wall before its end."""
        return self.t < 1.0  # type: ignore[no-any-return]


class ClosestPointBatch(NamedTuple):
    """``closest_points_on_polys``: row i answers (refs[i], points[i])."""

    points: np.ndarray  # (N, 3) float32 closest point [wu] (the input point on failure)
    over_poly: np.ndarray  # (N,) bool
    status: np.ndarray  # (N,) int64 SUCCESS, or FAILURE | INVALID_PARAM for a stale ref


class PolyHeightBatch(NamedTuple):
    """``poly_heights``: row i answers (refs[i], points[i])."""

    heights: np.ndarray  # (N,) float32 surface height [wu]; nan when not ok
    ok: np.ndarray  # (N,) bool
    status: np.ndarray  # (N,) int64 SUCCESS, or FAILURE | INVALID_PARAM (stale ref, or
    # the point is outside the polygon in xz, as Detour's getPolyHeight)


class RandomPointBatch(NamedTuple):
    """``find_random_points``: n points as n calls of ``find_random_point`` would draw them."""

    refs: np.ndarray  # (n,) int64 polygon ref, 0 when no polygon passes the filter
    points: np.ndarray  # (n, 3) float32 [wu] (zero when ref is 0)


class MoveBatch(NamedTuple):
    """``move_along_surfaces``: row i answers move i (as :class:`MoveResult`)."""

    positions: np.ndarray  # (N, 3) float32 reached position [wu]
    visited: np.ndarray  # (N, max(1, max_visited)) int64 visited refs; zero past n_visited
    n_visited: np.ndarray  # (N,) int32
    status: np.ndarray  # (N,) int64 Detour status bits


_EP = ENTRY_POINTS  # kernel -> compiled entry point (navkit._jit.entry_call)
_call = entry_call
_DEFAULT_EXTENTS_ARG = (2.0, 4.0, 2.0)
_REF_SIGN = 1 << 63
_INF = float("inf")
_DEFAULT_EXTENTS = np.array(_DEFAULT_EXTENTS_ARG, np.float32)
# (kept writeable: a read-only array is another numba type and would compile the kernels twice)
_DEFAULT_ARRAYS = DEFAULT_FILTER.arrays
_BATCH_BLOCK = 1024  # pairs per paths() kernel call
#: Work [us] a batch call gives each of its threads at least: a batch estimated to be
#: shorter runs on fewer threads (waking numba's worker threads costs tens of us; with
#: two threads a 0.1-0.5 ms batch ran 5-20% slower than on one).
MIN_THREAD_WORK_US = 200.0
#: Estimated work [us] of one chunk of a batch on more than one thread: the threads take
#: chunks from a shared counter as they finish them (``navkit._atomic.claim``), so the
#: last chunks even out what the threads were given unequally (slower items, a thread
#: preempted); each chunk costs its scratch and a counter step (~1 us).
CHUNK_US = 50.0
#: Rough one-thread cost of one item per batch query [us], on the low side (RecastDemo's
#: levels, this project's benchmark machine), for :data:`MIN_THREAD_WORK_US`.
_ITEM_US = {
    "pair": 3.0, "nearest": 0.3, "raycast": 0.1, "closest": 0.05, "height": 0.05,
    "move": 1.0, "random": 0.3,
}  # fmt: skip
_AUTO_NODES = 2048  # the pool of NavMeshQuery(max_nodes=None) before path()/paths() grow it
_NO_REFS = np.zeros(0, np.int64)  # shared empty result (read-only; never passed to a kernel)
_NO_REFS.flags.writeable = False
_EXTENTS_CACHE: dict[tuple, np.ndarray] = {}  # half-extent tuples seen (kernels never write them)


_F32 = np.dtype(np.float32)
_S4 = (4,)  # strides of a contiguous (3,) float32 array (with nbytes 12: the shape too)
_ND = np.ndarray
_empty = np.empty
_new_tuple = tuple.__new__
_SH3 = (3,)
_RAY1 = _single.raycast_single
_NEAR1 = _single.nearest_single
_CLOSEST1 = _single.closest_single
_HEIGHT1 = _single.height_single
_MOVE1 = _single.move_single
_PATH1 = _single.path_single
_DEFAULT_H: tuple[float, float, float] = (
    float(_DEFAULT_EXTENTS_ARG[0]), float(_DEFAULT_EXTENTS_ARG[1]), float(_DEFAULT_EXTENTS_ARG[2])
)
_H_CACHE: dict[tuple, tuple[float, float, float]] = {}  # validated half-extent tuples
_BAD_ARG = (TypeError, ValueError, OverflowError)  # a coordinate the kernel wrapper refused


_SEP: dict = {}  # single-call kernel -> its compiled entry point
# the entry points of the cheapest calls, once compiled (a global load, not a dict lookup)
_RAY_EP: Any = None
_NEAR_EP: Any = None
_CLOSEST_EP: Any = None
_MOVE_EP: Any = None
_PATH_EP: Any = None
#: rows of a query's vector-result buffer (``_single._out_row``): the result arrays of
#: raycast / find_nearest_poly / closest_point_on_poly / move_along_surface are its rows,
#: handed out in turn; a new buffer (and blocks pointing to it) when they are used up.
_OUT_ROWS = 1024
#: refs of a query's buffer of visited polygons (raycast, move_along_surface): their
#: results are slices of it, one call's after the other; at least twice the call's max
_PATH_BUF = 4096
_NO_ROOM_N = _single.NO_ROOM_N
_NOPT = np.zeros(3, np.float32)  # the array argument of a point given as three floats


def _point_args(s: Any, e: Any, sname: str, ename: str) -> tuple:
    """Two points as the single-call kernels take them (see :meth:`NavMeshQuery.raycast`,
    which inlines this for the cheapest call): (s, e, scalars, sx, sy, sz, ex, ey, ez),
    a float32 1-D array passed as it is, anything else as three floats (bit 0 / bit 1
    of ``scalars``; a tuple's as they are, other inputs validated here)."""
    sx = sy = sz = ex = ey = ez = 0.0
    sc = 0
    ts = type(s)
    if not (ts is _ND and s.dtype is _F32 and s.ndim == 1):
        if (ts is tuple or ts is list) and len(s) == 3:
            sx, sy, sz = s
        else:
            sx, sy, sz = _xyz(s, sname)
        s, sc = _NOPT, 1
    te = type(e)
    if not (te is _ND and e.dtype is _F32 and e.ndim == 1):
        if (te is tuple or te is list) and len(e) == 3:
            ex, ey, ez = e
        else:
            ex, ey, ez = _xyz(e, ename)
        e = _NOPT
        sc |= 2
    return s, e, sc, sx, sy, sz, ex, ey, ez


def _single_ep(kernel):
    """The compiled entry point of a single-call kernel (``_single``), compiled (or
    loaded from numba's cache) for its one signature on first use. Called directly it
    skips numba's type dispatch; the query layer passes exactly those types (a float32
    1-D array's dtype and rank are checked before it is passed)."""
    global _RAY_EP, _NEAR_EP, _CLOSEST_EP, _MOVE_EP, _PATH_EP
    ep = _SEP.get(kernel)
    if ep is None:
        ep = _SEP[kernel] = kernel.compile(_single.signatures()[kernel])
        if kernel is _RAY1:
            _RAY_EP = ep
        elif kernel is _NEAR1:
            _NEAR_EP = ep
        elif kernel is _CLOSEST1:
            _CLOSEST_EP = ep
        elif kernel is _MOVE1:
            _MOVE_EP = ep
        elif kernel is _PATH1:
            _PATH_EP = ep
    return ep


def _xyz(v: Any, name: str) -> tuple[float, float, float]:
    """A validated point as three Python floats (float32 values)."""
    return _vec3(v, name).tolist()  # type: ignore[no-any-return]


def _half(v: Any) -> tuple[float, float, float]:
    """Half extents as three floats, each finite as float32 and >= 0."""
    if v is _DEFAULT_EXTENTS_ARG:
        return _DEFAULT_H
    if type(v) is tuple:
        hit = _H_CACHE.get(v)
        if hit is not None:
            return hit
    h = tuple(_extents(v).tolist())
    if type(v) is tuple and len(_H_CACHE) < 64:
        _H_CACHE[v] = h
    return h  # type: ignore[return-value]


def _vec3(v: Any, name: str) -> np.ndarray:
    tv = type(v)
    if tv is np.ndarray and v.dtype is _F32 and v.shape == (3,) and v.strides == (4,):
        x, y, z = v.tolist()
        if x - x == 0.0 and y - y == 0.0 and z - z == 0.0:  # finite (inf - inf and nan are nan)
            return v  # type: ignore[no-any-return]
        raise InputError(f"{name} must be finite, got {[x, y, z]}")
    if (tv is tuple or tv is list) and len(v) == 3:  # type: ignore[arg-type]
        try:
            x, y, z = float(v[0]), float(v[1]), float(v[2])  # type: ignore[index]
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"{name} must be 3 numbers") from exc
        if not (abs(x) <= _FLT_MAX and abs(y) <= _FLT_MAX and abs(z) <= _FLT_MAX):
            raise InputError(f"{name} must be finite (as float32), got {[x, y, z]}")
        return np.array((x, y, z), np.float32)
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{name} must be 3 numbers") from exc
    if a.shape != (3,):
        raise InputError(f"{name} must have shape (3,), got {a.shape}")
    if not np.all(np.abs(a) <= _FLT_MAX):
        raise InputError(f"{name} must be finite (as float32), got {a.tolist()}")
    return a.astype(np.float32)


def _extents(v: Any) -> np.ndarray:
    """Half extents as float32 (3,), each finite and >= 0 (the default is cached)."""
    if v is _DEFAULT_EXTENTS_ARG:
        return _DEFAULT_EXTENTS
    if type(v) is tuple:
        hit = _EXTENTS_CACHE.get(v)
        if hit is not None:
            return hit
    h = _vec3(v, "half_extents")
    if h[0] < 0 or h[1] < 0 or h[2] < 0:
        raise InputError(f"half_extents must be >= 0, got {h.tolist()}")
    if type(v) is tuple and len(_EXTENTS_CACHE) < 64:
        _EXTENTS_CACHE[v] = h = h.copy()
    return h


def _scalar(v: object, name: str, *, positive: bool = False) -> np.float32:
    """A finite float32 >= 0 (> 0 with ``positive``)."""
    return np.float32(_check.real(v, name, 0.0, _FLT_MAX, lo_open=positive, unit="wu"))


def _to_ref(ref: object, name: str = "ref") -> int:
    """A poly ref (0..2**64-1) as the int64 the kernels use (two's complement)."""
    return _check.kernel_ref(ref, name)


def _count(v: object, name: str, lo: int = 0) -> int:
    """A result capacity (``max_path``, ``max_polys``, ...) in lo..MAX_RESULT."""
    if type(v) is int and lo <= v <= MAX_RESULT:
        return v
    return _check.integer(v, name, lo, MAX_RESULT)


def _options(v: object) -> int:
    if type(v) is int and 0 <= v <= 0x7FFFFFFF:
        return v
    return _check.integer(v, "options", 0, 0x7FFFFFFF)


def _refs(v: object, name: str) -> np.ndarray:
    """A 1-D sequence of refs as a contiguous int64 array (two's complement)."""
    if type(v) is np.ndarray and v.dtype == np.int64 and v.ndim == 1:
        return np.ascontiguousarray(v)
    try:
        a = np.asarray(v)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{name} must be a 1-D sequence of refs") from exc
    if a.ndim != 1:
        raise InputError(f"{name} must be a 1-D sequence of refs, got shape {a.shape}")
    if a.dtype == np.int64:
        return np.ascontiguousarray(a)
    return np.array([_to_ref(r, name) for r in a.tolist()], np.int64)


def _from_ref(r: int) -> int:
    r = int(r)
    return r + (1 << 64) if r < 0 else r


class NavMeshQuery:
    """Queries on a navmesh (Detour's dtNavMeshQuery).

    Parameters
    ----------
    navmesh : NavMesh
        The navmesh (tiles may be added/removed later; the query notices).
    max_nodes : int or None
        Node pool size for A* and the Dijkstra searches (Detour's ``maxNodes``, 1..65535).
        An explicit value gives Detour's behaviour everywhere: a search that runs out of
        nodes returns a partial result flagged ``OUT_OF_NODES``. None (the default)
        uses 2048 nodes, and the one-call :meth:`path` / :meth:`paths` then retry a
        search that ran out of nodes short of the goal with a pool holding every node
        of the navmesh, so a reachable goal always gets a complete path.
    """

    def __init__(self, navmesh, max_nodes: int | None = None) -> None:
        if not hasattr(navmesh, "arrays"):
            raise InputError("navmesh must be a navkit NavMesh")
        self.auto_nodes = max_nodes is None
        if max_nodes is None:
            max_nodes = _AUTO_NODES
        self.navmesh = navmesh
        self.max_nodes = _check.integer(max_nodes, "max_nodes", 1, 65535)
        self._pool = PoolHandle(self.max_nodes).desc  # node pool descriptor (owns the arrays)
        self._tiny = PoolHandle(64).desc
        self._arrays_obj = None
        self._handle: ViewHandle | None = None
        self._qi = np.zeros(5, np.int64)
        self._qf = np.zeros(8, np.float32)
        self._qfilter = DEFAULT_FILTER
        self._pblock: tuple | None = None  # path()'s block (see _path_block)
        # the visited polygons of raycast / move_along_surface, one call's after the
        # other (handed out as slices; a fresh buffer when one call's max does not fit)
        self._rbuf = np.zeros(_PATH_BUF, np.int64)
        self._rcap = _PATH_BUF // 2  # the largest max_path / max_visited it takes
        # the single-call kernels' arrays (see _single): input vectors and scratch, the
        # vector results' rows (handed out in turn: _oit, _new_outs), and their blocks
        # (view + filter + these), the default filter's in _qd, others by filter in
        # _qds; rebuilt with the view
        self._sv = np.zeros((4, 3), np.float32)
        self._souts = np.zeros((_OUT_ROWS, 3), np.float32)
        self._socnt = np.zeros(2, np.int64)  # rows of _souts taken, offset in _rbuf
        self._oit = iter(self._souts)
        self._spv = np.zeros((6, 3), np.float32)
        self._stri = np.zeros((5, 3), np.float32)
        self._ssi = np.zeros(_local.MAX_STACK + 8, np.int64)
        self._sfs = np.zeros((8, 3), np.float32)
        self._qd: Descriptor | None = None
        self._cbuf = np.zeros(256, np.int64)  # find_path's corridor scratch
        self._sbuf = (np.zeros((256, 3), np.float32), np.zeros(256, np.uint8),
                      np.zeros(256, np.int64))  # find_straight_path's corners scratch  # fmt: skip
        self._qds: dict[QueryFilter, Descriptor] = {}

    # -- plumbing --------------------------------------------------------------------------
    @property
    def view(self) -> NavView:
        """The kernels' view of the navmesh (rebuilt when tiles changed)."""
        return self._vh().view

    def _vh(self) -> ViewHandle:
        """The view with its descriptor (rebuilt when the navmesh's pools changed)."""
        a = self.navmesh._arrays  # None once tiles were added or removed
        if a is None or a is not self._arrays_obj or self._handle is None:
            a = self.navmesh.arrays()
            self._handle = ViewHandle(view_from_navmesh(self.navmesh))
            self._arrays_obj = a
            self._qd = None
            self._qds.clear()
        return self._handle

    def _block(self, flt: QueryFilter | None) -> Descriptor:
        """The single-call kernels' block for a filter (None: the default filter): the
        view's descriptor words followed by those of the filter's and the query's arrays
        (``_single.ARGS_SPEC``); it owns what it points into."""
        vh = self._vh()  # (a rebuilt view drops the old blocks)
        if flt is None or flt is DEFAULT_FILTER:
            if self._qd is not None:
                return self._qd
        else:
            if not isinstance(flt, QueryFilter):
                raise InputError("filter must be a navkit QueryFilter")
            qd = self._qds.get(flt)
            if qd is not None:
                return qd
        f = DEFAULT_FILTER if flt is None else flt
        flags, costs = f.arrays
        sa = _single.SingleArgs(flags, costs, self._rbuf, self._sv, self._souts, self._spv,
                                self._stri, self._tiny, self._ssi, self._sfs,
                                self._socnt)  # fmt: skip
        qd = np.concatenate([vh.desc, pack_arrays(sa, _single.ARGS_SPEC)]).view(Descriptor)
        qd.owner = (vh, f, sa)
        if f is DEFAULT_FILTER:
            self._qd = qd
        else:
            if len(self._qds) >= 16:  # a bound: callers making a filter per call
                self._qds.clear()
            self._qds[f] = qd
        return qd

    def _qblock(self, flt: QueryFilter | None, cap: int = 0) -> Descriptor:
        """:meth:`_block` for a filter, the default filter's from its slot, with a path
        buffer of at least ``cap`` refs (raycast and find_nearest_poly inline this)."""
        if cap > self._rcap:
            self._grow_rbuf(cap)
        if flt is None:
            qd = self._qd
            if qd is not None and self.navmesh._arrays is self._arrays_obj:
                return qd
        return self._block(flt)

    def _new_outs(self) -> np.ndarray:
        """Fresh rows for the vector results (the rows handed out stay the caller's),
        the blocks dropped (they point to the rows); returns the first row."""
        self._souts = np.zeros((_OUT_ROWS, 3), np.float32)
        self._socnt[0] = 0
        self._qd = None
        self._qds.clear()
        it = self._oit = iter(self._souts)
        return next(it)  # type: ignore[no-any-return]

    def _unstep(self) -> None:
        """Put the row iterator back in step with the kernels' count of rows taken: a
        row taken for a kernel call that did not run (an argument numba's wrapper
        refused, an exception in between) leaves them apart. The checked roads call
        this before anything that can raise."""
        k = int(self._socnt[0])
        self._oit = iter(self._souts[min(k, _OUT_ROWS) :])

    def _take_row(self) -> np.ndarray:
        """The row the next kernel call writes its vector result to (after it, fetch
        the block: new rows mean new blocks)."""
        try:
            return next(self._oit)  # type: ignore[no-any-return]
        except StopIteration:
            return self._new_outs()

    def _grow_rbuf(self, n: int) -> None:
        """A fresh buffer of visited polygons taking calls of up to n refs, from offset 0
        (the blocks point to the new one; the slices handed out keep the old one)."""
        self._rbuf = np.zeros(max(_PATH_BUF, 2 * n), np.int64)
        self._rcap = self._rbuf.shape[0] // 2
        self._socnt[1] = 0
        self._qd = None
        self._qds.clear()

    @staticmethod
    def _filter(flt: QueryFilter | None) -> tuple[np.ndarray, np.ndarray]:
        if flt is None:
            return DEFAULT_FILTER.arrays
        if not isinstance(flt, QueryFilter):
            raise InputError("filter must be a navkit QueryFilter")
        return flt.arrays

    def _poly(self, ref: object, name: str = "ref") -> int:
        """Global poly index of a ref, or -1."""
        r = _to_ref(ref, name)
        h = self._vh()
        return int(_call(poly_index_entry, h.desc, r))

    def _poly_or_raise(self, ref: object) -> int:
        p = self._poly(ref)
        if p < 0:
            raise StaleHandleError(f"poly ref {int(ref):#x} names no polygon")  # type: ignore[call-overload]
        return p

    def is_valid_poly_ref(self, ref: int, filter: QueryFilter | None = None) -> bool:
        """Whether ref names a live polygon that passes the filter."""
        p = self._poly(ref)
        if p < 0:
            return False
        flags, _ = self._filter(filter)
        f = int(self.view.poly_flags[p])
        return (f & int(flags[0])) != 0 and (f & int(flags[1])) == 0

    # -- point queries ---------------------------------------------------------------------
    def find_nearest_poly(
        self, center, half_extents=_DEFAULT_EXTENTS_ARG, filter: QueryFilter | None = None
    ) -> NearestPoly:
        """Nearest polygon to ``center`` within the box ``center +- half_extents``."""
        # The common call takes the shortest road: one test per argument, the kernel's
        # compiled entry point called with one array besides the point (the query's
        # block: view, filter, scratch; see _single); a tuple's coordinates go as they
        # are (numba's wrapper checks they are numbers, the kernel that they are finite
        # as float32); the nearest point is copied out of the block.
        c = center
        tc = type(c)
        x = y = z = 0.0
        if tc is _ND and c.dtype is _F32 and c.ndim == 1:
            sc = 0
        elif (tc is tuple or tc is list) and len(c) == 3:
            x, y, z = c
            c, sc = _NOPT, 1
        else:
            x, y, z = _xyz(c, "center")
            c, sc = _NOPT, 1
        hx, hy, hz = _DEFAULT_H if half_extents is _DEFAULT_EXTENTS_ARG else _half(half_extents)
        if filter is None:
            qd = self._qd
            if qd is None or self.navmesh._arrays is not self._arrays_obj:
                qd = self._block(None)
        else:
            qd = self._block(filter)
        ep = _NEAR_EP
        if ep is None:
            ep = _single_ep(_NEAR1)
        try:  # the row the kernel writes the point to (_single._out_row)
            o = next(self._oit)
        except StopIteration:
            o = self._new_outs()
            qd = self._block(filter)
        try:
            ref, over, finite = ep(qd, c, sc, x, y, z, hx, hy, hz)
        except _BAD_ARG:  # a coordinate that is not a number (the kernel did not run)
            self._unstep()
            x, y, z = _xyz(center, "center")
            o = self._take_row()
            ref, over, finite = ep(self._block(filter), _NOPT, 1, x, y, z, hx, hy, hz)
        if not finite:
            _vec3(center, "center")  # raises, naming the bad coordinate
        return _new_tuple(NearestPoly, (ref + (1 << 64) if ref < 0 else ref, o, over, SUCCESS))

    def query_polygons(
        self, center, half_extents, filter: QueryFilter | None = None, max_polys: int = 256
    ) -> tuple[np.ndarray, int]:
        """Refs of polygons whose bounds overlap the box, and the status."""
        c = _vec3(center, "center")
        h = _extents(half_extents)
        flags, _ = self._filter(filter)
        m = _count(max_polys, "max_polys")
        vh = self._vh()
        out = np.empty(m, np.int64)
        n, over = _call(_nearest.query_polygons_entry, vh.desc, c, h, flags, out)
        st = SUCCESS | (BUFFER_TOO_SMALL if over else 0)
        return vh.view.poly_ref[out[:n]].copy(), st

    def closest_point_on_poly(self, ref: int, pos) -> tuple[np.ndarray, bool]:
        """Closest point on the polygon's detail surface, and whether pos is over it."""
        ep = _CLOSEST_EP
        if ep is None:
            ep = _single_ep(_CLOSEST1)
        if type(ref) is int and 0 <= ref < _REF_SIGN:
            try:  # the row the kernel writes the point to (_single._out_row)
                o = next(self._oit)
            except StopIteration:
                o = self._new_outs()
            qd = self._qd
            if qd is None or self.navmesh._arrays is not self._arrays_obj:
                qd = self._block(None)
            tp = type(pos)
            code = 3
            if tp is _ND and pos.dtype is _F32 and pos.ndim == 1:
                code, over = ep(qd, ref, pos, 0, 0.0, 0.0, 0.0)
            elif (tp is tuple or tp is list) and len(pos) == 3:
                x, y, z = pos
                try:
                    code, over = ep(qd, ref, _NOPT, 1, x, y, z)
                except _BAD_ARG:
                    code = 3
            if code == 0:
                return o, over
        # the checked road (any ref or point; errors in the order: ref, then point)
        self._unstep()
        self._poly_or_raise(ref)
        x, y, z = _xyz(pos, "pos")
        o = self._take_row()
        code, over = ep(self._block(None), _to_ref(ref), _NOPT, 1, x, y, z)
        return o, over

    def closest_point_on_poly_boundary(self, ref: int, pos) -> np.ndarray:
        """pos if inside the polygon (xz), else the nearest point on its outline."""
        p = self._poly_or_raise(ref)
        q = _vec3(pos, "pos")
        out = np.empty(3, np.float32)
        vh = self._vh()
        _call(_poly.closest_point_on_boundary_entry, vh.desc, p, q, out)
        return out

    def get_poly_height(self, ref: int, pos) -> float | None:
        """Detail-surface height under pos, or None when pos is outside the polygon (xz)."""
        ep = _SEP.get(_HEIGHT1)
        if ep is None:
            ep = _single_ep(_HEIGHT1)
        if type(ref) is int and 0 <= ref < _REF_SIGN:
            qd = self._qd
            if qd is None or self.navmesh._arrays is not self._arrays_obj:
                qd = self._block(None)
            tp = type(pos)
            code = 3
            if tp is _ND and pos.dtype is _F32 and pos.ndim == 1:
                code, ok, h = ep(qd, ref, pos, 0, 0.0, 0.0, 0.0)
            elif (tp is tuple or tp is list) and len(pos) == 3:
                x, y, z = pos
                try:
                    code, ok, h = ep(qd, ref, _NOPT, 1, x, y, z)
                except _BAD_ARG:
                    code = 3
            if code == 0:
                return h if ok else None
        # the checked road (any ref or point; errors in the order: ref, then point)
        self._poly_or_raise(ref)
        x, y, z = _xyz(pos, "pos")
        code, ok, h = ep(self._block(None), _to_ref(ref), _NOPT, 1, x, y, z)
        return h if ok else None

    # -- path finding ----------------------------------------------------------------------
    def find_path(
        self, start_ref: int, end_ref: int, start_pos, end_pos,
        filter: QueryFilter | None = None, max_path: int = 256,
    ) -> PathCorridor:  # fmt: skip
        """A* corridor from start_ref to end_ref (partial to the nearest polygon if unreachable)."""
        s = _vec3(start_pos, "start_pos")
        e = _vec3(end_pos, "end_pos")
        sr, er = _to_ref(start_ref, "start_ref"), _to_ref(end_ref, "end_ref")
        flags, costs = _DEFAULT_ARRAYS if filter is None else self._filter(filter)
        mp = _count(max_path, "max_path")
        out = self._cbuf  # the corridor's scratch (the kernel writes at most mp refs)
        if mp > out.shape[0]:
            out = self._cbuf = np.zeros(mp, np.int64)
        vh = self._handle
        if vh is None or self.navmesh._arrays is not self._arrays_obj:
            vh = self._vh()
        st, n = _call(
            _search.find_path_entry,
            vh.desc, self._pool, flags, costs, sr, er, s, e, mp, out,
        )  # fmt: skip
        return _new_tuple(PathCorridor, (out[:n].copy(), st))

    def find_straight_path(
        self, start_pos, end_pos, path, options: int = 0, max_points: int = 256
    ) -> StraightPath:
        """Funnel the corridor ``path`` into corners (see STRAIGHTPATH_* options)."""
        s = _vec3(start_pos, "start_pos")
        e = _vec3(end_pos, "end_pos")
        refs_in = _refs(path, "path")
        opts = _options(options)
        mk = _count(max_points, "max_points")
        buf = self._sbuf  # the corners' scratch (the kernel writes at most mk corners)
        if mk > buf[1].shape[0]:
            m = max(1, mk)
            buf = self._sbuf = (np.zeros((m, 3), np.float32), np.zeros(m, np.uint8),
                                np.zeros(m, np.int64))  # fmt: skip
        pts, fl, rf = buf
        vh = self._handle
        if vh is None or self.navmesh._arrays is not self._arrays_obj:
            vh = self._vh()
        st, k = _call(
            _funnel.straight_path_entry,
            vh.desc,
            refs_in,
            refs_in.shape[0],
            s,
            e,
            opts,
            mk,
            pts,
            fl,
            rf,
        )
        return _new_tuple(StraightPath, (pts[:k].copy(), fl[:k].copy(), rf[:k].copy(), st))

    def init_sliced_find_path(
        self, start_ref: int, end_ref: int, start_pos, end_pos,
        filter: QueryFilter | None = None, options: int = 0,
    ) -> int:  # fmt: skip
        """Start a sliced A* search (``options``: FINDPATH_ANY_ANGLE); returns the status."""
        s = _vec3(start_pos, "start_pos")
        e = _vec3(end_pos, "end_pos")
        sr, er = _to_ref(start_ref, "start_ref"), _to_ref(end_ref, "end_ref")
        opts = _options(options)
        flags, _ = self._filter(filter)
        self._qfilter = filter if filter is not None else DEFAULT_FILTER
        vh = self._vh()
        return int(
            _call(
                _search.sliced_init_entry, vh.desc, self._pool, flags, self._qi, self._qf, sr,
                er, s, e, opts,
            )
        )  # fmt: skip

    def update_sliced_find_path(self, max_iter: int) -> tuple[int, int]:
        """Run up to max_iter iterations (0..2**31-1); returns (status, iterations done)."""
        it_max = _check.integer(max_iter, "max_iter", 0, 0x7FFFFFFF)
        flags, costs = self._filter(self._qfilter)
        vh = self._vh()
        st, it = _call(
            _search.sliced_update_entry,
            vh.desc,
            self._pool,
            flags,
            costs,
            self._qi,
            self._qf,
            it_max,
        )
        return int(st), int(it)

    def finalize_sliced_find_path(self, max_path: int = 256) -> PathCorridor:
        """The corridor of the sliced search (partial if the goal was not reached)."""
        flags, costs = self._filter(self._qfilter)
        mp = _count(max_path, "max_path")
        out = np.zeros(max(1, mp), np.int64)
        vh = self._vh()
        st, n = _call(
            _search.sliced_finalize_entry,
            vh.desc,
            self._pool,
            flags,
            costs,
            self._qi,
            out,
            mp,
        )
        return PathCorridor(out[:n].copy(), int(st))

    def finalize_sliced_find_path_partial(self, existing, max_path: int = 256) -> PathCorridor:
        """Corridor toward the furthest polygon of ``existing`` visited by the sliced search."""
        flags, costs = self._filter(self._qfilter)
        ex = _refs(existing, "existing")
        mp = _count(max_path, "max_path")
        out = np.zeros(max(1, mp), np.int64)
        vh = self._vh()
        st, n = _call(
            _search.sliced_finalize_partial_entry,
            vh.desc,
            self._pool,
            flags,
            costs,
            self._qi,
            ex,
            out,
            mp,
        )
        return PathCorridor(out[:n].copy(), int(st))

    def raycast(
        self, start_ref: int, start_pos, end_pos, filter: QueryFilter | None = None,
        options: int = 0, prev_ref: int = 0, max_path: int = 256,
    ) -> RaycastHit:  # fmt: skip
        """Walkability ray in xz from start_pos toward end_pos (RAYCAST_USE_COSTS for path_cost)."""
        # The common call takes the shortest road: one test per argument, the kernel's
        # compiled entry point called with one array besides the points (the query's
        # block: view, filter, path buffer, scratch; see _single); a tuple's coordinates
        # go as they are (numba's wrapper checks they are numbers, the kernel that they
        # are finite as float32).
        s = start_pos
        e = end_pos
        ts = type(s)
        te = type(e)
        sx = sy = sz = ex = ey = ez = 0.0
        sc = 0
        if not (ts is _ND and s.dtype is _F32 and s.ndim == 1):
            if (ts is tuple or ts is list) and len(s) == 3:
                sx, sy, sz = s
            else:
                sx, sy, sz = _xyz(s, "start_pos")
            s, sc = _NOPT, 1
        if not (te is _ND and e.dtype is _F32 and e.ndim == 1):
            if (te is tuple or te is list) and len(e) == 3:
                ex, ey, ez = e
            else:
                ex, ey, ez = _xyz(e, "end_pos")
            e = _NOPT
            sc |= 2
        if filter is None:
            qd = self._qd
            if qd is None or self.navmesh._arrays is not self._arrays_obj:
                qd = self._block(None)
        else:
            qd = self._block(filter)
        if not (
            type(max_path) is int and type(start_ref) is int and type(prev_ref) is int
            and type(options) is int and 0 <= max_path <= MAX_RESULT
            and 0 < start_ref < _REF_SIGN and 0 <= prev_ref < _REF_SIGN
            and 0 <= options <= 0x7FFFFFFF
        ):  # fmt: skip
            max_path = _count(max_path, "max_path")
            start_ref = _to_ref(start_ref, "start_ref")
            prev_ref = _to_ref(prev_ref, "prev_ref")
            options = _options(options)
        if max_path > self._rcap:
            self._grow_rbuf(max_path)
            qd = self._block(filter)
        ep = _RAY_EP
        if ep is None:
            ep = _single_ep(_RAY1)
        try:  # the row the kernel writes the normal to (_single._out_row)
            o = next(self._oit)
        except StopIteration:
            o = self._new_outs()
            qd = self._block(filter)
        while True:
            try:
                st, t, edge, n, cost, po = ep(qd, s, e, sc, sx, sy, sz, ex, ey, ez, start_ref,
                                              options, prev_ref, max_path)  # fmt: skip
            except _BAD_ARG:  # a coordinate that is not a number (the kernel did not run)
                self._unstep()
                sx, sy, sz = _xyz(start_pos, "start_pos")
                ex, ey, ez = _xyz(end_pos, "end_pos")
                s, e, sc = _NOPT, _NOPT, 3
                o = self._take_row()
                qd = self._block(filter)
                continue
            if n != _NO_ROOM_N:
                break
            self._grow_rbuf(self._rcap)  # the path buffer is full (nothing done): a fresh one
            qd = self._block(filter)
        if n < 0:  # non-finite point: say which
            _vec3(start_pos, "start_pos")
            _vec3(end_pos, "end_pos")
        return _new_tuple(
            RaycastHit, (t, o, edge, self._rbuf[po : po + n] if n else _NO_REFS, cost, st)
        )

    # -- local queries ---------------------------------------------------------------------
    def move_along_surface(
        self, start_ref: int, start_pos, end_pos, filter: QueryFilter | None = None,
        max_visited: int = 16,
    ) -> MoveResult:  # fmt: skip
        """Slide from start_pos toward end_pos along the surface, stopping at walls."""
        # One entry kernel on the query's block (_single), as raycast; a ref or count
        # that is not a plain int in range is checked first (errors in argument order).
        s = start_pos
        e = end_pos
        ts = type(s)
        te = type(e)
        if (
            ts is _ND and te is _ND and s.dtype is _F32 and e.dtype is _F32
            and s.ndim == 1 and e.ndim == 1
        ):  # fmt: skip
            sc = 0
            sx = sy = sz = ex = ey = ez = 0.0
        else:
            s, e, sc, sx, sy, sz, ex, ey, ez = _point_args(s, e, "start_pos", "end_pos")
        if not (
            type(start_ref) is int and type(max_visited) is int
            and 0 < start_ref < _REF_SIGN and 0 <= max_visited <= MAX_RESULT
        ):  # fmt: skip
            _vec3(start_pos, "start_pos")
            _vec3(end_pos, "end_pos")
            max_visited = _count(max_visited, "max_visited")
            self._filter(filter)
            start_ref = _to_ref(start_ref, "start_ref")
        if filter is None and max_visited <= self._rcap:
            qd = self._qd
            if qd is None or self.navmesh._arrays is not self._arrays_obj:
                qd = self._block(None)
        else:
            qd = self._qblock(filter, max_visited)
        ep = _MOVE_EP
        if ep is None:
            ep = _single_ep(_MOVE1)
        try:  # the row the kernel writes the position to (_single._out_row)
            o = next(self._oit)
        except StopIteration:
            o = self._new_outs()
            qd = self._qblock(filter, max_visited)
        while True:
            try:
                st, n, po = ep(qd, s, e, sc, sx, sy, sz, ex, ey, ez, start_ref, max_visited)
            except _BAD_ARG:  # a coordinate that is not a number (the kernel did not run)
                self._unstep()
                sx, sy, sz = _xyz(start_pos, "start_pos")
                ex, ey, ez = _xyz(end_pos, "end_pos")
                s, e, sc = _NOPT, _NOPT, 3
                o = self._take_row()
                qd = self._qblock(filter, max_visited)
                continue
            if n != _NO_ROOM_N:
                break
            self._grow_rbuf(self._rcap)  # the path buffer is full (nothing done): a fresh one
            qd = self._qblock(filter, max_visited)
        if n < 0:  # non-finite point: say which
            _vec3(start_pos, "start_pos")
            _vec3(end_pos, "end_pos")
        return _new_tuple(
            MoveResult, (o, self._rbuf[po : po + n] if n else _NO_REFS.copy(), st)
        )

    def find_distance_to_wall(
        self, start_ref: int, center, max_radius: float, filter: QueryFilter | None = None
    ) -> WallHit:
        """Distance from center to the nearest wall within max_radius."""
        c = _vec3(center, "center")
        r = _scalar(max_radius, "max_radius")
        flags, _ = self._filter(filter)
        p = self._poly(start_ref, "start_ref")
        zero = np.zeros(3, np.float32)
        if p < 0:
            return WallHit(float(r), zero, zero.copy(), FAILURE | INVALID_PARAM)
        hp = np.zeros(3, np.float32)
        hn = np.zeros(3, np.float32)
        vh = self._vh()
        st, d = _call(_local.distance_to_wall_entry, vh.desc, self._pool, flags, p, c, r, hp, hn)
        return WallHit(float(d), hp, hn, int(st))

    def get_poly_wall_segments(
        self, ref: int, filter: QueryFilter | None = None, store_portals: bool = False,
        max_segments: int = 64,
    ) -> WallSegments:  # fmt: skip
        """Wall segments of a polygon (and portal segments with store_portals)."""
        portals = _check.flag(store_portals, "store_portals")
        ms = _count(max_segments, "max_segments")
        flags, _ = self._filter(filter)
        p = self._poly_or_raise(ref)
        segs = np.zeros((max(1, ms), 6), np.float32)
        refs = np.zeros(segs.shape[0], np.int64)
        vh = self._vh()
        st, n = _call(_local.wall_segments_entry, vh.desc, flags, p, portals, segs, refs)
        return WallSegments(segs[:n].copy(), refs[:n].copy(), int(st))

    def find_polys_around_circle(
        self, start_ref: int, center, radius: float, filter: QueryFilter | None = None,
        max_result: int = 256,
    ) -> PolySearch:  # fmt: skip
        """Dijkstra from start_ref through portals touching the circle (by cost)."""
        c = _vec3(center, "center")
        r = _scalar(radius, "radius")
        return self._around(start_ref, c, r, np.zeros((1, 3), np.float32), 0, filter, max_result)

    def find_polys_around_shape(
        self, start_ref: int, verts, filter: QueryFilter | None = None, max_result: int = 256
    ) -> PolySearch:
        """Dijkstra from start_ref through portals crossing the convex xz-polygon ``verts``."""
        try:
            v = np.asarray(verts, dtype=np.float64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError("verts must be an (n, 3) array") from exc
        if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 3:
            raise InputError(f"verts must be (n>=3, 3), got {v.shape}")
        if not np.all(np.abs(v) <= _FLT_MAX):
            raise InputError("verts must be finite (as float32)")
        v32 = v.astype(np.float32)
        center = np.zeros(3, np.float32)
        for row in v32:
            center = (center + row).astype(np.float32)
        center = (center * np.float32(np.float32(1.0) / np.float32(v32.shape[0]))).astype(
            np.float32
        )
        return self._around(start_ref, center, np.float32(0), v32, v32.shape[0], filter, max_result)

    def _around(self, start_ref, center, radius, shape, nshape, filt, max_result) -> PolySearch:
        m = _count(max_result, "max_result")
        flags, costs = self._filter(filt)
        p = self._poly(start_ref, "start_ref")
        if p < 0:
            z = np.zeros(0, np.int64)
            return PolySearch(z, z.copy(), np.zeros(0, np.float32), FAILURE | INVALID_PARAM)
        refs = np.zeros(m, np.int64)
        par = np.zeros(m, np.int64)
        cost = np.zeros(m, np.float32)
        vh = self._vh()
        st, n = _call(
            _local.polys_around_entry,
            vh.desc,
            self._pool,
            flags,
            costs,
            p,
            center,
            radius,
            shape,
            nshape,
            refs,
            par,
            cost,
        )
        return PolySearch(refs[:n].copy(), par[:n].copy(), cost[:n].copy(), int(st))

    def find_local_neighbourhood(
        self, start_ref: int, center, radius: float, filter: QueryFilter | None = None,
        max_result: int = 32,
    ) -> PolySearch:  # fmt: skip
        """Non-overlapping polygons around center (breadth first, Detour's tiny pool)."""
        c = _vec3(center, "center")
        r = _scalar(radius, "radius")
        m = _count(max_result, "max_result")
        flags, _ = self._filter(filter)
        p = self._poly(start_ref, "start_ref")
        if p < 0:
            z = np.zeros(0, np.int64)
            return PolySearch(z, z.copy(), np.zeros(0, np.float32), FAILURE | INVALID_PARAM)
        refs = np.zeros(m, np.int64)
        par = np.zeros(m, np.int64)
        vh = self._vh()
        st, n = _call(
            _local.local_neighbourhood_entry, vh.desc, self._tiny, flags, p, c, r, refs, par
        )
        return PolySearch(refs[:n].copy(), par[:n].copy(), np.zeros(n, np.float32), int(st))

    # -- random points ---------------------------------------------------------------------
    @staticmethod
    def _rng(rng) -> np.random.Generator:
        return _check.rng(rng)

    def find_random_point(self, filter: QueryFilter | None = None, rng=None) -> RandomPoint:
        """Random point, uniform by area over all polygons passing the filter.

        ``rng``: a numpy Generator or a seed. Returns ref 0 when no polygon passes.

        A deliberate difference from Detour: ``dtNavMeshQuery::findRandomPoint``
        first picks a tile uniformly, then a polygon by area within it, so on a tiled
        navmesh its points are not uniform by area (small tiles are oversampled).
        navkit draws over the whole mesh by area; on a single-tile navmesh the two
        agree draw for draw (tests/detour/test_detour_local_identity.py).
        """
        flags, _ = self._filter(filter)
        g = self._rng(rng)
        vh = self._vh()
        rnd = g.random(vh.view.poly_ref.shape[0] + 2, dtype=np.float32)
        out = np.zeros(3, np.float32)
        p = _call(_local.random_point_entry, vh.desc, flags, rnd, out)
        if p < 0:
            return RandomPoint(0, out)
        return RandomPoint(_from_ref(vh.view.poly_ref[p]), out)

    def find_random_point_around_circle(
        self, start_ref: int, center, radius: float, filter: QueryFilter | None = None,
        rng=None, strict: bool = False, max_tries: int = 64,
    ) -> RandomPoint:  # fmt: skip
        """Random point on polygons reachable from start_ref whose portals touch the circle.

        As Detour, the point may lie outside the circle (the chosen polygon only
        touches it); with ``strict=True`` points are redrawn until one lies within
        ``radius`` of center in xz (ref 0 after ``max_tries`` failures, 1..2**20).
        """
        c = _vec3(center, "center")
        r = _scalar(radius, "radius")
        tries = _check.integer(max_tries, "max_tries", 1, MAX_RESULT)
        strict = _check.flag(strict, "strict")
        flags, _ = self._filter(filter)
        g = self._rng(rng)
        p = self._poly(start_ref, "start_ref")
        if p < 0:
            return RandomPoint(0, c)
        out = np.zeros(3, np.float32)
        vh = self._vh()
        for _ in range(tries if strict else 1):
            rnd = g.random(self.max_nodes + 2, dtype=np.float32)
            q = _call(_local.random_around_entry, vh.desc, self._pool, flags, p, c, r, rnd, out)
            if q < 0:
                return RandomPoint(0, c)
            d = (out[0] - c[0]) ** 2 + (out[2] - c[2]) ** 2
            if not strict or d <= r * r:
                return RandomPoint(_from_ref(vh.view.poly_ref[q]), out.copy())
        return RandomPoint(0, c)

    def _batch_pools(self, n: int) -> np.ndarray:
        """(n, 36) descriptors of n node pools (kept for the next batch; they own the pools)."""
        bp = getattr(self, "_bpools", None)
        if bp is None or bp.shape[0] < n:
            hs = [PoolHandle(self.max_nodes) for _ in range(n)]
            bp = self._bpools = np.stack([h.desc for h in hs]).view(Descriptor)
            bp.owner = hs
        return bp[:n]

    # -- one-call conveniences -------------------------------------------------------------
    def path(
        self, start, end, *, half_extents=_DEFAULT_EXTENTS_ARG, filter: QueryFilter | None = None,
        max_path: int = 256, max_points: int = 256, optimal: bool = False,
    ) -> Path:  # fmt: skip
        """Path from world point ``start`` to ``end`` in one call.

        By default this is Detour's flow (RecastDemo's NavMeshTester): nearest
        polygons, A* corridor, funnel. When the query was made without ``max_nodes``
        and the A* runs out of nodes short of the goal, it is run again with a pool
        that holds every node of the navmesh (Detour's result with a larger
        ``maxNodes``), so a reachable goal gets a complete path; with an explicit
        ``max_nodes`` the partial result is returned as Detour returns it.

        With ``optimal=True`` it is the Euclidean shortest path *in the xz plane*
        through the polygons (Polyanya, see
        :func:`navkit.detour.optimal.find_optimal_path`): its xz length is never
        longer than Detour's path's, but its 3D length (heights from the detail
        surface) can be, on sloped or uneven ground; area costs and off-mesh
        connections are not used.

        Parameters
        ----------
        start, end : (3,) array_like of float
            World points [wu].
        half_extents : (3,) float
            Search box for the nearest polygons [wu].
        filter : QueryFilter, optional
        max_path, max_points : int
            Corridor and corner capacity (Detour's limits; a longer path is partial).
        optimal : bool
            Any-angle optimal path instead of A* + funnel.

        Returns
        -------
        Path
            ``points`` (k, 3) float32, ``polys`` refs, ``complete`` (False when the
            goal was not reached: the path ends at the closest point reached),
            ``length`` [wu], ``status`` (Detour's status bits) and
            ``partial_reason`` (None, ``"out_of_nodes"``, ``"unreachable"`` or
            ``"max_path"``).

        Raises
        ------
        InputError
            Non-finite or mis-shaped points.
        QueryError
            No polygon within half_extents of start or end, or no path.
        """
        if optimal is not False and _check.flag(optimal, "optimal"):
            from .optimal import find_optimal_path

            return find_optimal_path(self, start, end, half_extents=half_extents, filter=filter)
        # One entry kernel on the query's block (view, filter, scratch; see _single)
        # and a path block (node pool, result buffers, scratch; per max_path /
        # max_points); points as for raycast: float32 arrays or 3-tuples as they are.
        sp = start
        ep_ = end
        ts = type(sp)
        te = type(ep_)
        if (
            ts is _ND and te is _ND and sp.dtype is _F32 and ep_.dtype is _F32
            and sp.ndim == 1 and ep_.ndim == 1
        ):  # fmt: skip
            sc = 0
            sx = sy = sz = ex = ey = ez = 0.0
        else:
            sp, ep_, sc, sx, sy, sz, ex, ey, ez = _point_args(start, end, "start", "end")
        hx, hy, hz = _DEFAULT_H if half_extents is _DEFAULT_EXTENTS_ARG else _half(half_extents)
        if filter is None:
            qd = self._qd
            if qd is None or self.navmesh._arrays is not self._arrays_obj:
                qd = self._block(None)
        else:
            qd = self._block(filter)
        pb = self._pblock
        if (
            pb is None or type(max_path) is not int or type(max_points) is not int
            or pb[1] != max_path or pb[2] != max_points
        ):  # fmt: skip
            max_path = _count(max_path, "max_path")
            max_points = _count(max_points, "max_points")
            if pb is None or pb[1] != max_path or pb[2] != max_points:
                pb = self._pblock = self._path_block(self._pool, max_path, max_points)
        ep = _PATH_EP
        if ep is None:
            ep = _single_ep(_PATH1)
        pd = pb[0]
        while True:
            try:
                code, n, m, sref, eref, st, length, done, o1, o2 = ep(
                    qd, pd, sp, ep_, sc, sx, sy, sz, ex, ey, ez, hx, hy, hz, max_path, max_points
                )
            except _BAD_ARG:  # a coordinate that is not a number
                sx, sy, sz = _xyz(start, "start")
                ex, ey, ez = _xyz(end, "end")
                sp, ep_, sc = _NOPT, _NOPT, 3
                continue
            if code == _PATH_NO_ROOM:  # the result buffers are full: fresh ones
                _fresh_path_rows(pd)
                continue
            if code or (st & _RAN_OUT) != _RAN_OUT or pd is not pb[0] or not self.auto_nodes:
                break
            # ran out of nodes short of the goal: again with a pool that holds every node
            pd = self._path_block(self._full_pool(), max_path, max_points)[0]
        if code:
            if code < 0:  # a point that is not finite: say which
                _vec3(start, "start")
                _vec3(end, "end")
            h = [hx, hy, hz]
            if code == _batch.NO_START:
                raise QueryError(f"no polygon within {h} of start {_vec3(start, 'start').tolist()}")
            if code == _batch.NO_END:
                raise QueryError(f"no polygon within {h} of end {_vec3(end, 'end').tolist()}")
            raise QueryError(f"no path found (status {int(st):#x})")
        out = pd.owner  # the results in place in its buffers (see _single.PathArgs)
        return _new_tuple(Path, (out.pts[o1 : o1 + m], out.polys[o2 : o2 + n], done, length, st))

    @staticmethod
    def _path_block(pool: np.ndarray, max_path: int, max_points: int) -> tuple:
        """(descriptor of :class:`_single.PathArgs` over ``pool``, max_path, max_points)."""
        pa = _single.path_args(pool, max_path, max_points)
        return pack_arrays(pa, _single.PATH_SPEC), max_path, max_points

    def _node_bound(self) -> int:
        """How many A* nodes the navmesh can ever need: one per polygon, plus one per
        tile-border link (a polygon entered across a tile side is a node of its own)."""
        v = self.view
        alive = int(np.count_nonzero(v.poly_tile >= 0))
        border = int(np.count_nonzero((v.link_side != 0xFF) & (v.link_ref != 0)))
        return alive + border + 1

    def _full_pool(self, n: int = 1, block: bool = False) -> np.ndarray:
        """Descriptor(s) of node pools that hold every node of the current navmesh
        (kept on the query until the navmesh changes). n = 1 and not ``block``: one
        descriptor; else (n, D) (a batch kernel's pools, even for one)."""
        cap = self._node_bound()
        fp = getattr(self, "_fpools", None)
        if fp is None or fp[0] != cap or len(fp[1]) < n:
            hs = [PoolHandle(cap) for _ in range(n)]
            d = np.stack([hh.desc for hh in hs]).view(Descriptor)
            d.owner = hs
            fp = self._fpools = (cap, hs, d)
        if n == 1 and not block:
            return fp[1][0].desc
        return fp[2][:n]

    def paths(
        self, starts, ends, *, half_extents=_DEFAULT_EXTENTS_ARG, filter: QueryFilter | None = None,
        max_path: int = 256, max_points: int = 256, threads: int | None = None,
    ) -> PathBatch:  # fmt: skip
        """Many start/end pairs in parallel kernel calls (one node pool per chunk of pairs).

        Pairs that fail (no nearby polygon, no path) have ``ok`` False; nothing raises
        for them. Bad coordinates raise InputError. ``threads`` caps numba's threads
        for this call (default: all of them; a short batch uses fewer, see
        :data:`MIN_THREAD_WORK_US`). As in :meth:`path`, a query made without
        ``max_nodes`` runs the pairs whose search ran out of nodes short of the goal
        again with pools that hold every node of the navmesh; ``status`` carries
        Detour's bits of the search kept (``PARTIAL_RESULT``, ``OUT_OF_NODES``).

        The per-pair arrays are as wide as the longest result (``polys`` (N, P) with
        P = max(n_polys), ``points`` (N, K, 3) with K = max(n_points)); entries past a
        pair's count are zero. Pairs run in blocks of 1024 through scratch buffers the
        query keeps, so the kernels never touch freshly allocated pages (first-touch
        page faults serialise threads).
        """
        s = _points(starts, "starts")
        e = _points(ends, "ends")
        if s.shape != e.shape:
            raise InputError(f"starts {s.shape} and ends {e.shape} differ in shape")
        h = _extents(half_extents)
        flags, costs = _DEFAULT_ARRAYS if filter is None else self._filter(filter)
        mp = max(1, _count(max_path, "max_path"))
        mk = max(2, _count(max_points, "max_points"))
        if threads is not None:
            threads = _check.integer(threads, "threads", 0, 1 << 16)
        b = self._run_pairs(s, e, h, flags, costs, mp, mk, threads, False)
        if self.auto_nodes:
            redo = np.flatnonzero(b.ok & ~b.complete & _ran_out(b.status))
            if redo.size:
                r = self._run_pairs(s[redo], e[redo], h, flags, costs, mp, mk, threads, True)
                b = _merge_rows(b, redo, r)
        return b

    def _run_pairs(
        self, s, e, h, flags, costs, mp: int, mk: int, threads: int | None, full: bool
    ) -> PathBatch:
        """The kernel calls of :meth:`paths` (``full``: pools holding every node)."""
        npairs = s.shape[0]
        code = np.zeros(npairs, np.int32)
        n_polys = np.zeros(npairs, np.int32)
        n_pts = np.zeros(npairs, np.int32)
        srefs = np.zeros(npairs, np.int64)
        erefs = np.zeros(npairs, np.int64)
        status = np.zeros(npairs, np.int64)
        lengths = np.zeros(npairs, np.float64)
        last = np.zeros(npairs, np.int64)
        blocks = []
        if npairs:
            vh = self._vh()
            nth = self._nchunks(npairs, threads, _ITEM_US["pair"])[0]
            nb_max = min(npairs, _BATCH_BLOCK)
            sp, spts, sfl, soff = self._batch_scratch(nb_max, mp, mk)
            if full:  # one pool per thread (its worker's)
                pools = self._full_pool(nth, block=True)
            else:
                pools = self._batch_pools(nth)
            with _CappedThreads(nth):
                for b0 in range(0, npairs, nb_max):
                    b1 = min(npairs, b0 + nb_max)
                    nb = b1 - b0
                    sched = _sched(*self._nchunks(nb, nth, _ITEM_US["pair"]))
                    pw = pools[: sched[0]]
                    _call(  # the compiled entry point: no typing of 20 arguments per call
                        _batch.batch_kernel, vh.desc, sched, pw, flags, costs, s[b0:b1],
                        e[b0:b1], h, mp, mk,
                        code[b0:b1], n_polys[b0:b1], n_pts[b0:b1], srefs[b0:b1],
                        erefs[b0:b1], status[b0:b1], sp[:nb], spts[:nb], sfl[:nb], soff[:nb],
                        lengths[b0:b1],
                    )  # fmt: skip
                    wp = int(n_polys[b0:b1].max())
                    wk = int(n_pts[b0:b1].max())
                    bp = np.empty((nb, wp), np.int64)
                    bpts = np.empty((nb, wk, 3), np.float32)
                    bfl = np.empty((nb, wk), np.uint8)
                    # each pair's results from the flat scratch, zero past its counts
                    _call(
                        _batch.compact_block, sp[:nb], spts[:nb], sfl[:nb], soff[:nb],
                        n_polys[b0:b1], n_pts[b0:b1], bp, bpts, bfl, last[b0:b1],
                    )  # fmt: skip
                    blocks.append((b0, b1, bp, bpts, bfl))
        wp = max((b[2].shape[1] for b in blocks), default=0)
        wk = max((b[3].shape[1] for b in blocks), default=0)
        if len(blocks) == 1:
            polys, pts, fl = blocks[0][2], blocks[0][3], blocks[0][4]
        else:
            polys = np.zeros((npairs, wp), np.int64)
            pts = np.zeros((npairs, wk, 3), np.float32)
            fl = np.zeros((npairs, wk), np.uint8)
            for b0, b1, bp, bpts, bfl in blocks:
                polys[b0:b1, : bp.shape[1]] = bp
                pts[b0:b1, : bpts.shape[1]] = bpts
                fl[b0:b1, : bfl.shape[1]] = bfl
        ok = code == 0
        complete = ok & (n_polys > 0) & (last == erefs)
        return PathBatch(
            ok, complete, srefs, erefs, n_polys, polys, n_pts, pts, fl, lengths, status
        )

    def _batch_scratch(self, n: int, mp: int, mk: int) -> tuple[np.ndarray, ...]:
        """Output scratch for ``paths`` blocks, kept between calls (pages stay mapped): flat
        buffers of corridor polygons, corners and corner flags (a row's room per pair) and
        each pair's offsets into them (see ``_batch._pairs_chunk``)."""
        sc = getattr(self, "_bscratch", None)
        if sc is None or sc[0].shape[0] < n or sc[0].shape[1] != mp or sc[1].shape[1] != mk:
            sc = self._bscratch = (
                np.zeros((n, mp), np.int64), np.zeros((n, mk, 3), np.float32),
                np.zeros((n, mk), np.uint8), np.zeros((n, 2), np.int64),
            )  # fmt: skip
        return sc

    # -- batch queries ---------------------------------------------------------------------
    # Each runs one numba kernel over all items, parallel over chunks of items (see
    # navkit.detour._many); item i is bit for bit the single call's answer for input i.
    def _nchunks(self, n: int, threads: int | None, item_us: float = 0.0) -> tuple[int, int]:
        """(thread count, chunk count) for a batch of n items of about ``item_us`` each.

        Each thread gets at least :data:`MIN_THREAD_WORK_US` of estimated work: waking a
        worker costs tens of microseconds, so a short batch is faster on fewer threads.
        """
        if threads is not None:
            threads = _check.integer(threads, "threads", 0, 1 << 16)
        nth = get_threads()
        if threads:
            nth = max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
        if item_us > 0.0:
            nth = max(1, min(nth, int(n * item_us / MIN_THREAD_WORK_US)))
        if nth == 1:
            return 1, 1
        return nth, max(1, min(n, max(nth * 4, int(n * item_us / CHUNK_US))))

    def _run(self, kernel, n: int, threads: int | None, item_us: float, *args) -> None:
        """kernel(desc, sched, *args) with numba's threads capped for the call."""
        nth, nchunks = self._nchunks(n, threads, item_us)
        with _CappedThreads(nth):
            kernel(self._vh().desc, _sched(nth, nchunks), *args)

    @staticmethod
    def _batch_refs(refs: Any, name: str, n: int, what: str) -> np.ndarray:
        """(n,) int64 refs (two's complement) for a batch of n ``what``."""
        r = _ref_array(refs, name)
        if r.shape[0] != n:
            raise InputError(f"{name} has {r.shape[0]} refs for {n} {what}")
        return r

    def find_nearest_polys(
        self, centers, half_extents=_DEFAULT_EXTENTS_ARG, filter: QueryFilter | None = None,
        *, threads: int | None = None,
    ) -> NearestPolyBatch:  # fmt: skip
        """:meth:`find_nearest_poly` for many centers in one parallel kernel call.

        Parameters
        ----------
        centers : (N, 3) array_like of float
            Query points [wu] (converted to float32; must be finite).
        half_extents : (3,) array_like of float
            Search box half size [wu], shared by every center (each >= 0).
        filter : QueryFilter, optional
        threads : int, optional
            Cap on numba's threads for this call (default: all of them; a short batch
            uses fewer, see :data:`MIN_THREAD_WORK_US`).

        Returns
        -------
        NearestPolyBatch
            ``refs`` (N,) int64 (0: no polygon in the box), ``points`` (N, 3) float32,
            ``over_poly`` (N,) bool, ``status`` (N,) int64; row i equals
            ``find_nearest_poly(centers[i], half_extents, filter)``.

        Raises
        ------
        InputError
            Mis-shaped or non-finite centers or half extents.
        """
        c = _points(centers, "centers")
        h = _extents(half_extents)
        flags = _DEFAULT_ARRAYS[0] if filter is None else self._filter(filter)[0]
        n = c.shape[0]
        refs = np.zeros(n, np.int64)
        over = np.zeros(n, np.bool_)
        pts = np.zeros((n, 3), np.float32)
        if n:
            self._run(_many.nearest_kernel, n, threads, _ITEM_US["nearest"], flags, c, h, refs,
                      over, pts)  # fmt: skip
        return NearestPolyBatch(refs, pts, over, np.full(n, SUCCESS, np.int64))

    def raycasts(
        self, start_refs, starts, ends, filter: QueryFilter | None = None, options: int = 0,
        prev_refs=None, max_path: int = 0, *, threads: int | None = None,
    ) -> RaycastBatch:  # fmt: skip
        """:meth:`raycast` for many rays in one parallel kernel call.

        Parameters
        ----------
        start_refs : (N,) array_like of int
            Polygon each ray starts in (refs; int64 two's complement or Python ints).
        starts, ends : (N, 3) array_like of float
            Ray ends [wu] (float32, finite; the test is in xz).
        filter : QueryFilter, optional
        options : int
            ``RAYCAST_USE_COSTS`` to accumulate ``path_cost``.
        prev_refs : (N,) array_like of int, optional
            Detour's ``prevRef`` per ray (default 0).
        max_path : int
            Visited polygons recorded per ray (0..2**20). Unlike :meth:`raycast`
            (256), the default 0 records none: Detour's ``raycast`` without a path
            buffer, the cheapest call.
        threads : int, optional
            Cap on numba's threads for this call (a short batch uses fewer, see
            :data:`MIN_THREAD_WORK_US`).

        Returns
        -------
        RaycastBatch
            (N,) arrays: ``t`` float32 (inf when unobstructed), ``hit_normal`` (N, 3)
            float32, ``hit_edge_index`` int32, ``path`` (N, max(1, max_path)) int64 and
            ``path_count`` int32, ``path_cost`` float32, ``status`` int64. Row i equals
            ``raycast(start_refs[i], starts[i], ends[i], filter, options, prev_refs[i],
            max_path)``; a stale start ref gives ``FAILURE | INVALID_PARAM``.
        """
        s = _points(starts, "starts")
        e = _points(ends, "ends")
        n = s.shape[0]
        if e.shape != s.shape:
            raise InputError(f"starts {s.shape} and ends {e.shape} differ in shape")
        r = _ref_array(start_refs, "start_refs")
        if r.shape[0] != n:
            raise InputError(f"start_refs has {r.shape[0]} refs for {n} rays")
        pr = np.zeros(n, np.int64) if prev_refs is None else _ref_array(prev_refs, "prev_refs")
        if pr.shape[0] != n:
            raise InputError(f"prev_refs has {pr.shape[0]} refs for {n} rays")
        flags, costs = _DEFAULT_ARRAYS if filter is None else self._filter(filter)
        opts = _options(options)
        mp = _count(max_path, "max_path")
        st = np.zeros(n, np.int64)
        t = np.zeros(n, np.float32)
        edge = np.zeros(n, np.int32)
        cnt = np.zeros(n, np.int32)
        cost = np.zeros(n, np.float32)
        normal = np.zeros((n, 3), np.float32)
        path = np.zeros((n, max(1, mp)), np.int64)
        if n:
            # (t = inf where the end was reached and the paths' tails zeroed in the kernel)
            self._run(_many.raycasts_kernel, n, threads, _ITEM_US["raycast"], flags, costs, r,
                      s, e, opts, pr, mp, st, t, edge, cnt, cost, normal, path)  # fmt: skip
        return RaycastBatch(t, normal, edge, path, cnt, cost, st)

    def closest_points_on_polys(
        self, refs, points, *, threads: int | None = None
    ) -> ClosestPointBatch:
        """:meth:`closest_point_on_poly` for many (ref, point) pairs in one kernel call.

        Parameters
        ----------
        refs : (N,) array_like of int
            Polygon refs.
        points : (N, 3) array_like of float
            Points [wu] (float32, finite).
        threads : int, optional
            Cap on numba's threads for this call (a short batch uses fewer, see
            :data:`MIN_THREAD_WORK_US`).

        Returns
        -------
        ClosestPointBatch
            ``points`` (N, 3) float32, ``over_poly`` (N,) bool, ``status`` (N,) int64.
            Where the single call raises :class:`~navkit.errors.StaleHandleError` (a
            ref naming no polygon) the row has ``FAILURE | INVALID_PARAM`` and the
            input point; elsewhere it equals the single call.
        """
        q = _points(points, "points")
        r = self._batch_refs(refs, "refs", q.shape[0], "points")
        n = q.shape[0]
        out = np.zeros((n, 3), np.float32)
        over = np.zeros(n, np.bool_)
        st = np.zeros(n, np.int64)
        if n:
            self._run(_many.closest_kernel, n, threads, _ITEM_US["closest"], r, q, out, over, st)
        return ClosestPointBatch(out, over, st)

    def poly_heights(self, refs, points, *, threads: int | None = None) -> PolyHeightBatch:
        """:meth:`get_poly_height` for many (ref, point) pairs in one kernel call.

        Parameters
        ----------
        refs : (N,) array_like of int
            Polygon refs.
        points : (N, 3) array_like of float
            Points [wu] (float32, finite; only x and z are used).
        threads : int, optional
            Cap on numba's threads for this call (a short batch uses fewer, see
            :data:`MIN_THREAD_WORK_US`).

        Returns
        -------
        PolyHeightBatch
            ``heights`` (N,) float32 [wu] (nan when not ok), ``ok`` (N,) bool,
            ``status`` (N,) int64. ``ok`` is False where the single call returns None
            (point outside the polygon) or raises StaleHandleError (stale ref); both
            have ``FAILURE | INVALID_PARAM``, as Detour's ``getPolyHeight``.
        """
        q = _points(points, "points")
        r = self._batch_refs(refs, "refs", q.shape[0], "points")
        n = q.shape[0]
        h = np.zeros(n, np.float32)
        ok = np.zeros(n, np.bool_)
        st = np.zeros(n, np.int64)
        if n:
            self._run(_many.heights_kernel, n, threads, _ITEM_US["height"], r, q, h, ok, st)
        return PolyHeightBatch(h, ok, st)

    def find_random_points(
        self, n: int, filter: QueryFilter | None = None, rng=None, *, threads: int | None = None
    ) -> RandomPointBatch:
        """``n`` random points, uniform by area, as ``n`` calls of :meth:`find_random_point`.

        Parameters
        ----------
        n : int
            How many points (0..2**20).
        filter : QueryFilter, optional
        rng : numpy Generator or int seed, optional
            Drawn from exactly as ``n`` successive :meth:`find_random_point` calls with
            this generator would draw (so the points are theirs, in order).
        threads : int, optional
            Cap on numba's threads for this call (a short batch uses fewer, see
            :data:`MIN_THREAD_WORK_US`).

        Returns
        -------
        RandomPointBatch
            ``refs`` (n,) int64 (0 when no polygon passes the filter) and ``points``
            (n, 3) float32 [wu].
        """
        count = _count(n, "n")
        flags, _ = self._filter(filter)
        g = self._rng(rng)
        vh = self._vh()
        npoly = vh.view.poly_ref.shape[0]
        polys = np.zeros(npoly, np.int64)
        areas = np.zeros(npoly, np.float32)
        prefix = np.zeros(npoly, np.float32)
        m = int(_many.random_areas_kernel(vh.desc, flags, polys, areas, prefix))
        ps = np.full(count, -1, np.int64)
        pts = np.zeros((count, 3), np.float32)
        width = npoly + 2  # uniforms per point, as the single call draws them
        block = max(1, (1 << 22) // width)  # rows per draw: bounded memory
        nth = self._nchunks(count, threads, _ITEM_US["random"])[0]
        for b0 in range(0, count, block):
            b1 = min(count, b0 + block)
            # one draw for the block: numpy's float32 draws keep the bit generator's
            # spare 32 bits between calls, so this is the stream of one draw per point
            # (the single call's), without a Python loop (tests/detour/test_query_batch.py)
            rnd = np.empty((b1 - b0, width), np.float32)
            _draw_uniforms(g, rnd, nth)
            self._run(_many.random_points_kernel, b1 - b0, threads, _ITEM_US["random"], m,
                      polys, areas, prefix, rnd, ps[b0:b1], pts[b0:b1])  # fmt: skip
        refs = np.where(ps >= 0, vh.view.poly_ref[np.maximum(ps, 0)], 0)
        return RandomPointBatch(refs, pts)

    def move_along_surfaces(
        self, start_refs, starts, ends, filter: QueryFilter | None = None,
        max_visited: int = 16, *, threads: int | None = None,
    ) -> MoveBatch:  # fmt: skip
        """:meth:`move_along_surface` for many moves in one parallel kernel call.

        Parameters
        ----------
        start_refs : (N,) array_like of int
            Polygon each move starts in.
        starts, ends : (N, 3) array_like of float
            Start and wanted end positions [wu] (float32, finite).
        filter : QueryFilter, optional
        max_visited : int
            Visited-polygon capacity per move (0..2**20; 0 behaves as 1, as the single call).
        threads : int, optional
            Cap on numba's threads for this call (a short batch uses fewer, see
            :data:`MIN_THREAD_WORK_US`).

        Returns
        -------
        MoveBatch
            ``positions`` (N, 3) float32, ``visited`` (N, max(1, max_visited)) int64
            with ``n_visited`` (N,) int32, ``status`` (N,) int64; row i equals
            ``move_along_surface(start_refs[i], starts[i], ends[i], filter,
            max_visited)`` (a stale ref: the start, no visited polygon,
            ``FAILURE | INVALID_PARAM``).
        """
        s = _points(starts, "starts")
        e = _points(ends, "ends")
        n = s.shape[0]
        if e.shape != s.shape:
            raise InputError(f"starts {s.shape} and ends {e.shape} differ in shape")
        r = self._batch_refs(start_refs, "start_refs", n, "moves")
        mv = _count(max_visited, "max_visited")
        flags, _ = self._filter(filter)
        pos = np.zeros((n, 3), np.float32)
        vis = np.zeros((n, max(1, mv)), np.int64)
        cnt = np.zeros(n, np.int32)
        st = np.zeros(n, np.int64)
        if n:
            nth, nchunks = self._nchunks(n, threads, _ITEM_US["move"])
            pools = self._tiny_pools(nth)
            with _CappedThreads(nth):
                _many.move_kernel(
                    self._vh().desc, _sched(nth, nchunks), pools, flags, r, s, e, pos, vis, cnt,
                    st,
                )  # fmt: skip
        return MoveBatch(pos, vis, cnt, st)

    def _tiny_pools(self, n: int) -> np.ndarray:
        """(n, D) descriptors of n 64-node pools (Detour's tiny pool; kept on the query)."""
        tp = getattr(self, "_tpools", None)
        if tp is None or tp.shape[0] < n:
            hs = [PoolHandle(64) for _ in range(n)]
            tp = self._tpools = np.stack([h.desc for h in hs]).view(Descriptor)
            tp.owner = hs
        return tp[:n]


def _sched(workers: int, chunks: int) -> np.ndarray:
    """A batch kernel's schedule ``[workers, chunks, next chunk]`` (``navkit._atomic``)."""
    return np.array((workers, chunks, 0), np.int64)


class _CappedThreads:
    """numba's thread count of the calling thread set to ``n`` within the block and
    restored after (nothing done when it is ``n`` already)."""

    __slots__ = ("n", "prev")

    def __init__(self, n: int) -> None:
        self.n = n
        self.prev = n

    def __enter__(self) -> None:
        self.prev = get_threads()
        if self.prev != self.n:
            set_threads(self.n)

    def __exit__(self, *exc: object) -> None:
        if self.prev != self.n:
            set_threads(self.prev)


#: uniforms below which _draw_uniforms draws on the calling thread alone
PARALLEL_DRAW_MIN = 1 << 19


def _draw_uniforms(
    g: np.random.Generator, out: np.ndarray, nthreads: int, min_size: int | None = None
) -> None:
    """``g.random(dtype=np.float32, out=out)`` for a C-contiguous (R, W) ``out``: the
    same numbers, and ``g`` ends in the same state, but with ``nthreads`` > 1 and a
    PCG64 / PCG64DXSM bit generator (``default_rng``'s) the rows are drawn in
    ``nthreads`` parts at once (numpy's fill releases the GIL).

    Part k's generator is a copy of ``g``'s state advanced past the draws before it:
    a float32 takes the low 32 bits of a 64-bit output and keeps the high 32 for the
    next float32 (``has_uint32``), so float draw j (counted after a kept spare) is
    the low (j even) or high (j odd) half of output j // 2 after the state. Fewer than
    ``min_size`` (default :data:`PARALLEL_DRAW_MIN`) uniforms: one draw, here."""
    rows = out.shape[0]
    bg = g.bit_generator
    if (
        nthreads < 2 or rows < nthreads
        or out.size < (PARALLEL_DRAW_MIN if min_size is None else min_size)
        or type(bg) not in (np.random.PCG64, np.random.PCG64DXSM)
    ):  # fmt: skip
        g.random(dtype=np.float32, out=out)
        return
    import threading

    st = bg.state
    spare = int(st["has_uint32"])
    cut = [rows * k // nthreads for k in range(nthreads + 1)]
    parts = []
    for k in range(1, nthreads):
        b: Any = type(bg)()  # PCG64 / PCG64DXSM (BitGenerator has no advance)
        b.state = {**st, "has_uint32": 0, "uinteger": 0}
        j = cut[k] * out.shape[1] - spare  # float draws before part k, after the spare
        b.advance(j // 2)
        gk = np.random.Generator(b)
        if j % 2:  # part k starts at a high half: draw the low half and drop it
            gk.random(dtype=np.float32)
        parts.append(gk)
    workers = [
        threading.Thread(target=gk.random, kwargs={"dtype": np.float32, "out": out[cut[k]:cut[k + 1]]})
        for k, gk in enumerate(parts, 1)
    ]  # fmt: skip
    for w in workers:
        w.start()
    g.random(dtype=np.float32, out=out[: cut[1]])
    for w in workers:
        w.join()
    bg.state = parts[-1].bit_generator.state  # where the last part's draws ended


_PATH_NO_ROOM = _single.NO_ROOM
_PATH_FIELDS = [name for name, _, _ in _single.PATH_SPEC]
_I_PTS = 3 * _PATH_FIELDS.index("pts")  # the word of its address in a path block
_I_POLYS = 3 * _PATH_FIELDS.index("polys")


def _fresh_path_rows(pd: np.ndarray) -> None:
    """Point the path block ``pd`` to new result buffers (same sizes), from offset 0:
    the results handed out keep the old ones (they are slices of them)."""
    pa = pd.owner  # type: ignore[attr-defined]
    pts = np.zeros_like(pa.pts)
    polys = np.zeros_like(pa.polys)
    pd[_I_PTS] = pts.ctypes.data
    pd[_I_POLYS] = polys.ctypes.data
    pa.rcnt[:] = 0
    pd.owner = pa._replace(pts=pts, polys=polys)  # type: ignore[attr-defined]


def _ran_out(status):
    """Whether a find_path status (int or int64 array) is partial because the pool ran out."""
    return ((status & PARTIAL_RESULT) != 0) & ((status & OUT_OF_NODES) != 0)


def _merge_rows(b: PathBatch, rows: np.ndarray, r: PathBatch) -> PathBatch:
    """``b`` with its pairs ``rows`` replaced by the pairs of ``r`` (arrays widened as needed)."""
    wp = max(b.polys.shape[1], r.polys.shape[1])
    wk = max(b.points.shape[1], r.points.shape[1])
    n = b.ok.shape[0]
    polys = np.zeros((n, wp), np.int64)
    pts = np.zeros((n, wk, 3), np.float32)
    fl = np.zeros((n, wk), np.uint8)
    polys[:, : b.polys.shape[1]] = b.polys
    pts[:, : b.points.shape[1]] = b.points
    fl[:, : b.flags.shape[1]] = b.flags
    polys[rows] = 0
    pts[rows] = 0
    fl[rows] = 0
    polys[rows, : r.polys.shape[1]] = r.polys
    pts[rows, : r.points.shape[1]] = r.points
    fl[rows, : r.flags.shape[1]] = r.flags
    out = [np.array(a, copy=True) for a in b]
    for i, name in enumerate(PathBatch._fields):
        if name not in ("polys", "points", "flags"):
            out[i][rows] = getattr(r, name)
    out[PathBatch._fields.index("polys")] = polys
    out[PathBatch._fields.index("points")] = pts
    out[PathBatch._fields.index("flags")] = fl
    return PathBatch(*out)


def _points(v: object, name: str) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{name} must be an (n, 3) array") from exc
    if a.ndim != 2 or a.shape[1] != 3:
        raise InputError(f"{name} must have shape (n, 3), got {a.shape}")
    if not np.all(np.abs(a) <= _FLT_MAX):
        raise InputError(f"{name} must be finite (as float32)")
    return np.ascontiguousarray(a, dtype=np.float32)


def _ref_array(v: object, name: str) -> np.ndarray:
    """A 1-D sequence of refs as a contiguous int64 array (uint64 viewed as int64)."""
    if type(v) is np.ndarray and v.ndim == 1 and v.dtype == np.uint64:
        return np.ascontiguousarray(v).view(np.int64)
    return _refs(v, name)
