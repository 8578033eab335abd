"""Entry kernels of the single-call queries (``NavMeshQuery.raycast()``, ...).

What one Python call of a cheap query costs beyond its kernel is mostly numba's
wrapper: each array argument is unboxed into a memory-manager handle, released again
under the GIL after the call (~0.1-0.15 us an array), and each new output array is a
numpy allocation. These kernels take one array, the query's *block*: a descriptor
whose first words describe the navmesh view (as ``_view.pack_view``) followed by the
words of the query's own arrays (:data:`ARGS_SPEC`: the filter, the raycast path
buffer, scratch and the vector results' rows), and the coordinates as float64 scalars
(checked here to be finite as float32, as the query layer's own check). Results come
back as scalars; a vector result is written to the next row of ``out`` (see
:func:`_out_row`), which the query layer hands out as the result array itself.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from navkit._jit import F32, lend, njit, ref_opener

from ._batch import pair_core
from ._local import move_along_surface_core
from ._nearest import find_nearest_core
from ._nodes import open_pool
from ._poly import closest_point_on_poly, poly_height
from ._portal import FAILURE, INVALID_PARAM
from ._raycast import raycast_core
from ._view import VIEW_SPEC, open_view, poly_index

#: words of the view at the start of a block
VIEW_WORDS = 3 * len(VIEW_SPEC)
_BIG = float(np.finfo(np.float32).max)  # |x| <= this: finite as float32 (nan fails)
_Z = F32(0.0)


class SingleArgs(NamedTuple):
    """The query's arrays described after the view in its block."""

    flags: np.ndarray  # (2,) int32 the filter's include/exclude flags
    costs: np.ndarray  # (64,) float32 the filter's area costs
    path: np.ndarray  # (L,) int64 visited polygons of raycast / move_along_surface, one
    # call's after the other from ``ocnt[1]`` (handed out as slices; see NO_ROOM_N)
    v: np.ndarray  # (4, 3) float32 input vectors and scratch
    out: np.ndarray  # (R, 3) float32 rows of the vector results (see _out_row)
    pv: np.ndarray  # (6, 3) float32 scratch
    tri: np.ndarray  # (5, 3) float32 scratch
    tiny: np.ndarray  # (D,) int64 the descriptor of the query's tiny node pool
    si: np.ndarray  # (MAX_STACK + 8,) int64 move_along_surface's stack scratch
    fs: np.ndarray  # (8, 3) float32 move_along_surface's vector scratch
    ocnt: np.ndarray  # (2,) int64 rows of ``out`` taken (see _out_row), offset in ``path``


ARGS_SPEC = (
    ("flags", np.int32, 1),
    ("costs", np.float32, 1),
    ("path", np.int64, 1),
    ("v", np.float32, 2),
    ("out", np.float32, 2),
    ("pv", np.float32, 2),
    ("tri", np.float32, 2),
    ("tiny", np.int64, 1),
    ("si", np.int64, 1),
    ("fs", np.float32, 2),
    ("ocnt", np.int64, 1),
)
open_args = ref_opener(SingleArgs, ARGS_SPEC)


class PathArgs(NamedTuple):
    """``path()``'s node pool, result buffers and scratch (its second block: the
    buffers' sizes follow ``max_path`` / ``max_points``, the filter is in the first).

    The results go to ``polys`` and ``pts`` one call after the other, from the offsets
    in ``rcnt``; the query layer returns those slices as the result arrays (no copy)
    and gives the block fresh buffers when a call finds less room than ``max_path``
    / ``max_points`` (:data:`NO_ROOM`)."""

    pool: np.ndarray  # (D,) int64 the node pool's descriptor
    polys: np.ndarray  # (>= 2 mp,) int64 the corridors, one after the other
    pts: np.ndarray  # (>= 2 mk, 3) float32 the straight paths, one after the other
    fl: np.ndarray  # (mk,) uint8 its point flags
    rf: np.ndarray  # (mk,) int64 its point refs
    small: np.ndarray  # (6, 3) float32 scratch
    pv: np.ndarray  # (6, 3) float32 scratch
    tri: np.ndarray  # (5, 3) float32 scratch
    types: np.ndarray  # (mp,) int64 straight path scratch
    valid: np.ndarray  # (mp,) bool straight path scratch
    fs: np.ndarray  # (16, 3) float32 straight path scratch
    fe: np.ndarray  # (2, 6) float32 straight path scratch
    cnt: np.ndarray  # (1,) int64 straight path scratch
    ports: np.ndarray  # (2 * mp, 3) float32 straight path scratch (the portals)
    rcnt: np.ndarray  # (2,) int64 offsets of the next straight path / corridor


PATH_SPEC = (
    ("pool", np.int64, 1),
    ("polys", np.int64, 1),
    ("pts", np.float32, 2),
    ("fl", np.uint8, 1),
    ("rf", np.int64, 1),
    ("small", np.float32, 2),
    ("pv", np.float32, 2),
    ("tri", np.float32, 2),
    ("types", np.int64, 1),
    ("valid", np.bool_, 1),
    ("fs", np.float32, 2),
    ("fe", np.float32, 2),
    ("cnt", np.int64, 1),
    ("ports", np.float32, 2),
    ("rcnt", np.int64, 1),
)
open_path = ref_opener(PathArgs, PATH_SPEC)


#: path_single's code when its result buffers have less room than a call may need
NO_ROOM = 9
#: rows of path()'s result buffers: at least this many, and two calls' worth
PATH_ROWS = 2048


def path_args(pool: np.ndarray, max_path: int, max_points: int) -> PathArgs:
    """:class:`PathArgs` for corridors of ``max_path`` and paths of ``max_points``."""
    mp = max(1, max_path)
    mk = max(2, max_points)
    return PathArgs(
        pool, np.zeros(max(PATH_ROWS, 2 * mp), np.int64),
        np.zeros((max(PATH_ROWS, 2 * mk), 3), np.float32), np.zeros(mk, np.uint8),
        np.zeros(mk, np.int64), np.zeros((6, 3), np.float32), np.zeros((6, 3), np.float32),
        np.zeros((5, 3), np.float32), np.zeros(mp, np.int64), np.zeros(mp, np.bool_),
        np.zeros((16, 3), np.float32), np.zeros((2, 6), np.float32), np.zeros(1, np.int64),
        np.zeros((2 * mp, 3), np.float32), np.zeros(2, np.int64),
    )  # fmt: skip


#: the path count raycast_single / move_single return when ``path`` has less room from
#: its offset than the call may fill (nothing done: the query layer gives the block a
#: fresh path buffer and calls again)
NO_ROOM_N = -2


@njit(inline="always")
def _out_row(a):
    """The row of ``a.out`` for this call's vector result: the next one (``a.ocnt``
    counts the rows taken). Every call of a kernel that returns a vector takes one row,
    first thing, whatever it returns; the query layer takes the same row from its
    iterator over ``out`` before the call (a new block with fresh rows when they are
    used up), so the result array it returns is the row, not a copy of a scratch
    vector. A count past the rows (the two out of step) stays on the last row: wrong
    values, never a write outside ``out``."""
    k = a.ocnt[0]
    last = a.out.shape[0] - 1
    if k > last:
        k = last
    a.ocnt[0] = k + 1
    return lend(a.out[k])  # the type a.out had as (3,): the callees' specializations


@njit(inline="always")
def _put(v, a, scalars, x, y, z):
    """v = the point: (x, y, z) with ``scalars``, else the (3,) array a. False when a
    coordinate is not finite as float32 (or a is not 3 long)."""
    if scalars:
        if not (abs(x) <= _BIG and abs(y) <= _BIG and abs(z) <= _BIG):
            return False
        v[0] = F32(x)
        v[1] = F32(y)
        v[2] = F32(z)
        return True
    if a.shape[0] != 3:
        return False
    for c in range(3):
        if not np.isfinite(a[c]):
            return False
        v[c] = a[c]
    return True


@njit(inline="always")
def _put2(v, sa, ea, scalars, sx, sy, sz, ex, ey, ez):
    """v[0] = the start, v[1] = the end point (:func:`_put`, bit 0 / bit 1 of
    ``scalars``): False when one is not finite as float32."""
    return _put(v[0], sa, scalars & 1, sx, sy, sz) and _put(v[1], ea, scalars & 2, ex, ey, ez)


@njit
def raycast_single(qd, sa, ea, scalars, sx, sy, sz, ex, ey, ez, start_ref, options, prev_ref,
                   max_path):  # fmt: skip
    """raycast from the start toward the end point, each given as a float32 (3,) array
    (any strides) or, with bit 0 / bit 1 of ``scalars``, as three floats: (status, t,
    hit edge, path count, cost); the normal in ``out``, the visited polygons in
    ``path``. A point that is not finite as float32 gives FAILURE | INVALID_PARAM and
    path count -1. t is a float64, inf when the ray reached the end (Detour's FLT_MAX).
    The visited polygons go to ``path`` from offset ``ocnt[1]`` (returned last, then
    advanced past them); count :data:`NO_ROOM_N` when max_path refs do not fit there."""
    a = open_args(qd[VIEW_WORDS:])
    po = a.ocnt[1]
    if po + max_path > a.path.shape[0]:
        return FAILURE, 0.0, -1, NO_ROOM_N, _Z, po
    out = _out_row(a)
    v = a.v
    if not _put2(v, sa, ea, scalars, sx, sy, sz, ex, ey, ez):
        return FAILURE | INVALID_PARAM, 0.0, -1, -1, _Z, po
    st, t, edge, n, cost = raycast_core(
        open_view(qd), a.flags, a.costs, start_ref, v[0], v[1], options, prev_ref,
        lend(a.path[po : po + max_path]), max_path, out, a.pv, v[2],
    )  # fmt: skip
    a.ocnt[1] = po + n
    return st, np.inf if t >= _BIG else np.float64(t), edge, n, cost, po


@njit
def move_single(qd, sa, ea, scalars, sx, sy, sz, ex, ey, ez, start_ref, max_visited):
    """moveAlongSurface from the start toward the end point (each a float32 (3,) array or,
    with bit 0 / bit 1 of ``scalars``, three floats), recording at most
    ``max(1, max_visited)`` polygons: (status, visited count); the position in ``out``,
    the visited polygons in ``path``. A start ref naming no polygon: FAILURE |
    INVALID_PARAM with the start point; a point that is not finite as float32:
    FAILURE | INVALID_PARAM and count -1. The visited polygons go to ``path`` from
    offset ``ocnt[1]`` (returned last, then advanced past them); count
    :data:`NO_ROOM_N` when max(1, max_visited) refs do not fit there."""
    a = open_args(qd[VIEW_WORDS:])
    po = a.ocnt[1]
    m = max(1, max_visited)
    if po + m > a.path.shape[0]:
        return FAILURE, NO_ROOM_N, po
    out = _out_row(a)
    v = a.v
    if not _put2(v, sa, ea, scalars, sx, sy, sz, ex, ey, ez):
        return FAILURE | INVALID_PARAM, -1, po
    nav = open_view(qd)
    p = poly_index(nav, start_ref)
    if p < 0:
        out[0] = v[0, 0]
        out[1] = v[0, 1]
        out[2] = v[0, 2]
        return FAILURE | INVALID_PARAM, 0, po
    st, n = move_along_surface_core(
        nav, open_pool(a.tiny), a.flags, p, v[0], v[1], out, a.path[po : po + m], a.si, a.fs,
    )  # fmt: skip
    a.ocnt[1] = po + n
    return st, n, po


@njit
def path_single(qd, pd, sa, ea, scalars, sx, sy, sz, ex, ey, ez, hx, hy, hz, max_path, max_pts):
    """RecastDemo's pair flow (nearest polygons within the half extents (hx, hy, hz),
    A* corridor, straight path) from the start to the end point (each a float32 (3,)
    array or, with bit 0 / bit 1 of ``scalars``, three floats), with the pool and
    buffers of the path block ``pd`` (:class:`PathArgs`): ``_batch.pair_core``'s
    (code, corridor length, point count, start ref, end ref, status, length), whether
    the corridor ends at the end ref, and the offsets of the straight path in ``pts``
    and of the corridor in ``polys`` (advanced past them when code is 0); code -1 when
    a point is not finite as float32, :data:`NO_ROOM` when the buffers are too full
    for this call (nothing done)."""
    a = open_args(qd[VIEW_WORDS:])
    v = a.v
    if not _put2(v, sa, ea, scalars, sx, sy, sz, ex, ey, ez):
        return -1, 0, 0, np.int64(0), np.int64(0), FAILURE | INVALID_PARAM, np.nan, False, 0, 0
    v[2, 0] = F32(hx)
    v[2, 1] = F32(hy)
    v[2, 2] = F32(hz)
    b = open_path(pd)
    o1 = b.rcnt[0]
    o2 = b.rcnt[1]
    mk = max(max_pts, 2)
    mp = max(max_path, 1)
    if o1 + mk > b.pts.shape[0] or o2 + mp > b.polys.shape[0]:
        return NO_ROOM, 0, 0, np.int64(0), np.int64(0), FAILURE, np.nan, False, o1, o2
    # the results written in place at the offsets (lent slices: the buffers' own type)
    polys = lend(b.polys[o2 : o2 + mp])
    pts = lend(b.pts[o1 : o1 + mk])
    ports = b.ports  # kept in the block (was allocated per call): (2, mp, 3) as 2 * mp rows
    code, n, m, sref, eref, st, length = pair_core(
        open_view(qd), open_pool(b.pool), a.flags, a.costs, v[0], v[1], v[2], max_path, max_pts,
        polys, pts, b.fl, b.rf, b.small, b.pv, b.tri,
        ports.reshape((2, ports.shape[0] // 2, 3)), b.types, b.valid, b.fs, b.fe, b.cnt,
    )  # fmt: skip
    if code == 0:
        b.rcnt[0] = o1 + m
        b.rcnt[1] = o2 + n
    return code, n, m, sref, eref, st, length, n > 0 and polys[n - 1] == eref, o1, o2


@njit
def nearest_single(qd, ca, scalars, cx, cy, cz, hx, hy, hz):
    """findNearestPoly at the center (a float32 (3,) array, or with ``scalars`` three
    floats) within the half extents (hx, hy, hz) (checked by the caller): (ref as
    int64, 0 when nothing was found; over_poly; False when the center is not finite as
    float32, nothing done). The point is left in the next row of ``out`` (the center
    when nothing was found)."""
    a = open_args(qd[VIEW_WORDS:])
    out = _out_row(a)
    v = a.v
    if not _put(v[0], ca, scalars, cx, cy, cz):
        return np.int64(0), False, False
    v[1, 0] = F32(hx)
    v[1, 1] = F32(hy)
    v[1, 2] = F32(hz)
    c = v[0]
    out[0] = c[0]
    out[1] = c[1]
    out[2] = c[2]
    nav = open_view(qd)
    p, over = find_nearest_core(nav, c, v[1], a.flags, out, v[2], a.pv, a.tri)
    if p < 0:
        return np.int64(0), False, True
    return nav.poly_ref[p], over, True


@njit
def closest_single(qd, ref, pa, scalars, x, y, z):
    """closestPointOnPoly: (0 done / 1 stale ref / 2 point not finite, over_poly); the
    point in the next row of ``out``."""
    a = open_args(qd[VIEW_WORDS:])
    out = _out_row(a)
    nav = open_view(qd)
    p = poly_index(nav, ref)
    if p < 0:
        return 1, False
    v = a.v
    if not _put(v[0], pa, scalars, x, y, z):
        return 2, False
    return 0, closest_point_on_poly(nav, p, v[0], out)


@njit
def height_single(qd, ref, pa, scalars, x, y, z):
    """getPolyHeight: (0 done / 1 stale ref / 2 point not finite, ok, height)."""
    a = open_args(qd[VIEW_WORDS:])
    nav = open_view(qd)
    p = poly_index(nav, ref)
    if p < 0:
        return 1, False, _Z
    v = a.v
    if not _put(v[0], pa, scalars, x, y, z):
        return 2, False, _Z
    ok, h = poly_height(nav, p, v[0])
    return 0, ok, h


def signatures():
    """kernel -> the one signature it is compiled for: the block, points as float32
    1-D arrays of any layout, ints as int64, floats as float64."""
    from numba.core import types as t

    qd = t.Array(t.int64, 1, "C")
    pt = t.Array(t.float32, 1, "A")
    i, f = t.int64, t.float64
    return {
        raycast_single: (qd, pt, pt, i, f, f, f, f, f, f, i, i, i, i),
        move_single: (qd, pt, pt, i, f, f, f, f, f, f, i, i),
        path_single: (qd, qd, pt, pt, i, f, f, f, f, f, f, f, f, f, i, i),
        nearest_single: (qd, pt, i, f, f, f, f, f, f),
        closest_single: (qd, i, pt, i, f, f, f),
        height_single: (qd, i, pt, i, f, f, f),
    }
