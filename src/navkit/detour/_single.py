"""Entry kernels of the single-call queries (``NavMeshQuery.raycast()``, ...).

What one Python call of a cheap query costs beyond its kernel is mostly numba's
wrapper: each array argument is unboxed into a memory-manager handle, released again
under the GIL after the call (~0.1-0.15 us an array), and each new output array is a
numpy allocation. These kernels take one array, the query's *block*: a descriptor
whose first words describe the navmesh view (as ``_view.pack_view``) followed by the
words of the query's own arrays (:data:`ARGS_SPEC`: the filter, the raycast path
buffer, scratch and one output vector), and the coordinates as float64 scalars
(checked here to be finite as float32, as the query layer's own check). Results come
back as scalars; a vector result is left in ``out`` for the caller to copy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from navkit._jit import F32, njit, ref_opener

from ._nearest import find_nearest_core
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
    path: np.ndarray  # (cap,) int64 raycast's visited polygons
    v: np.ndarray  # (4, 3) float32 input vectors and scratch
    out: np.ndarray  # (3,) float32 the vector result
    pv: np.ndarray  # (6, 3) float32 scratch
    tri: np.ndarray  # (5, 3) float32 scratch


ARGS_SPEC = (
    ("flags", np.int32, 1),
    ("costs", np.float32, 1),
    ("path", np.int64, 1),
    ("v", np.float32, 2),
    ("out", np.float32, 1),
    ("pv", np.float32, 2),
    ("tri", np.float32, 2),
)
open_args = ref_opener(SingleArgs, ARGS_SPEC)


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


@njit
def raycast_single(qd, sa, ea, scalars, sx, sy, sz, ex, ey, ez, start_ref, options, prev_ref,
                   max_path):  # fmt: skip
    """raycast from the start toward the end point, each given as a float32 (3,) array
    (any strides) or, with bit 0 / bit 1 of ``scalars``, as three floats: (status, t,
    hit edge, path count, cost); the normal in ``out``, the visited polygons in
    ``path``. A point that is not finite as float32 gives FAILURE | INVALID_PARAM and
    path count -1."""
    a = open_args(qd[VIEW_WORDS:])
    v = a.v
    if not (_put(v[0], sa, scalars & 1, sx, sy, sz) and _put(v[1], ea, scalars & 2, ex, ey, ez)):
        return FAILURE | INVALID_PARAM, _Z, -1, -1, _Z
    return raycast_core(
        open_view(qd), a.flags, a.costs, start_ref, v[0], v[1], options, prev_ref, a.path,
        max_path, a.out, a.pv, v[2],
    )  # fmt: skip


@njit
def nearest_single(qd, ca, scalars, cx, cy, cz, hx, hy, hz):
    """findNearestPoly at the center (a float32 (3,) array, or with ``scalars`` three
    floats) within the half extents (hx, hy, hz) (checked by the caller): (ref as
    int64, 0 when nothing was found; over_poly; False when the center is not finite as
    float32, nothing done). The point is left in ``out`` (the center when nothing was
    found)."""
    a = open_args(qd[VIEW_WORDS:])
    v = a.v
    if not _put(v[0], ca, scalars, cx, cy, cz):
        return np.int64(0), False, False
    v[1, 0] = F32(hx)
    v[1, 1] = F32(hy)
    v[1, 2] = F32(hz)
    out = a.out
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
    point in ``out``."""
    a = open_args(qd[VIEW_WORDS:])
    nav = open_view(qd)
    p = poly_index(nav, ref)
    if p < 0:
        return 1, False
    v = a.v
    if not _put(v[0], pa, scalars, x, y, z):
        return 2, False
    return 0, closest_point_on_poly(nav, p, v[0], a.out)


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
        nearest_single: (qd, pt, i, f, f, f, f, f, f),
        closest_single: (qd, i, pt, i, f, f, f),
        height_single: (qd, i, pt, i, f, f, f),
    }
