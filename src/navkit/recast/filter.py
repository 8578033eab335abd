"""Heightfield filters that clear or restore span walkability (Recast's ``RecastFilter.cpp``).

Three passes, run in this order by RecastDemo, each changing only span areas:

- :func:`filter_low_hanging_walkable_obstacles` (``rcFilterLowHangingWalkableObstacles``):
  an unwalkable span whose top is at most ``walkable_climb`` above a walkable
  span right below it (in the same column) takes that span's area, so curbs and
  stair steps become walkable. The test uses the lower span's *original*
  walkability, so a stack of obstacles is not promoted one after another.
- :func:`filter_ledge_spans` (``rcFilterLedgeSpans``, recastnavigation 1.6
  semantics): a walkable span becomes unwalkable when some neighbour column
  offers a drop of more than ``walkable_climb`` with enough headroom (including
  the open space below the neighbour's lowest span, and the grid's edge), or when
  the floors of its traversable neighbours (those within ``walkable_climb``)
  differ by more than ``walkable_climb`` (a steep slope).
- :func:`filter_walkable_low_height_spans` (``rcFilterWalkableLowHeightSpans``):
  spans with less than ``walkable_height`` free space above become unwalkable.

Each returns a new :class:`Heightfield` sharing the span geometry with its input.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..errors import InputError
from .types import DIR_OFFSET_X, DIR_OFFSET_Z, Heightfield

__all__ = [
    "filter_low_hanging_walkable_obstacles",
    "filter_ledge_spans",
    "filter_walkable_low_height_spans",
    "check_heightfield",
]

#: Ceiling above a column's top span (Recast's MAX_HEIGHTFIELD_HEIGHT in the filters).
_OPEN_TOP = 0xFFFF


def check_heightfield(hf: Heightfield) -> None:
    """Raise :class:`InputError` unless ``hf`` is a consistent CSR heightfield."""
    if not isinstance(hf, Heightfield):
        raise InputError(f"expected a Heightfield, got {type(hf).__name__}")
    w, h = int(hf.width), int(hf.height)
    if w <= 0 or h <= 0:
        raise InputError(f"heightfield size must be positive, got {w} x {h}")
    cs = np.asarray(hf.col_start)
    if cs.shape != (w * h + 1,) or not np.issubdtype(cs.dtype, np.integer):
        raise InputError(f"col_start must be an integer array of shape ({w * h + 1},)")
    n = hf.smin.shape[0]
    for name, arr, dt in (("smin", hf.smin, np.uint16), ("smax", hf.smax, np.uint16),
                          ("area", hf.area, np.uint8)):  # fmt: skip
        if not isinstance(arr, np.ndarray) or arr.shape != (n,) or arr.dtype != dt:
            raise InputError(f"{name} must be a ({n},) {np.dtype(dt).name} array")
    if cs[0] != 0 or cs[-1] != n or np.any(np.diff(cs) < 0):
        raise InputError("col_start must rise from 0 to the span count")


def _arrays(hf: Heightfield) -> Heightfield:
    """Check ``hf`` and return it with the layout the kernels take (int32 ``col_start``,
    contiguous span arrays)."""
    check_heightfield(hf)
    return hf._replace(
        col_start=np.ascontiguousarray(hf.col_start, dtype=np.int32),
        smin=np.ascontiguousarray(hf.smin),
        smax=np.ascontiguousarray(hf.smax),
        area=np.ascontiguousarray(hf.area),
    )


def _nonneg(v, name: str) -> int:
    i = int(v)
    if i != v or i < 0:
        raise InputError(f"{name} must be an integer >= 0 [vx], got {v!r}")
    return i


@njit(link=False)
def _low_hanging_kernel(col_start, smax, area, walkable_climb):
    out = area.copy()
    for c in range(col_start.shape[0] - 1):
        prev_walkable = False
        prev_area = np.uint8(0)
        prev_top = 0
        for i in range(col_start[c], col_start[c + 1]):
            walkable = area[i] != 0
            top = np.int32(smax[i])
            if not walkable and prev_walkable and top - prev_top <= walkable_climb:
                out[i] = prev_area
            prev_walkable = walkable
            prev_area = out[i]
            prev_top = top
    return out


@njit(link=False)
def _ledge_kernel(col_start, smin, smax, area, width, height, walkable_height, walkable_climb):
    out = area.copy()
    dxs = DIR_OFFSET_X
    dzs = DIR_OFFSET_Z
    for z in range(height):
        for x in range(width):
            c = x + z * width
            end = col_start[c + 1]
            for i in range(col_start[c], end):
                if area[i] == 0:
                    continue
                floor = np.int32(smax[i])
                ceiling = np.int32(smin[i + 1]) if i + 1 < end else _OPEN_TOP
                lowest_drop = _OPEN_TOP  # smallest (most negative) neighbour floor - floor
                lo_floor = floor  # range of floors reachable within walkable_climb
                hi_floor = floor
                for d in range(4):
                    nx = x + dxs[d]
                    nz = z + dzs[d]
                    if nx < 0 or nz < 0 or nx >= width or nz >= height:
                        lowest_drop = -walkable_climb - 1
                        break
                    nc = nx + nz * width
                    j = col_start[nc]
                    nend = col_start[nc + 1]
                    # Open space below the neighbour's lowest span: a drop to "minus infinity".
                    n_ceiling = np.int32(smin[j]) if j < nend else _OPEN_TOP
                    if min(ceiling, n_ceiling) - floor >= walkable_height:
                        lowest_drop = -walkable_climb - 1
                        break
                    while j < nend:
                        n_floor = np.int32(smax[j])
                        n_ceiling = np.int32(smin[j + 1]) if j + 1 < nend else _OPEN_TOP
                        j += 1
                        if min(ceiling, n_ceiling) - max(floor, n_floor) < walkable_height:
                            continue
                        diff = n_floor - floor
                        if diff < lowest_drop:
                            lowest_drop = diff
                        if abs(diff) <= walkable_climb:
                            if n_floor < lo_floor:
                                lo_floor = n_floor
                            if n_floor > hi_floor:
                                hi_floor = n_floor
                        elif diff < -walkable_climb:
                            break
                if lowest_drop < -walkable_climb:
                    out[i] = 0
                elif hi_floor - lo_floor > walkable_climb:
                    out[i] = 0
    return out


@njit(link=False)
def _low_height_kernel(col_start, smin, smax, area, walkable_height):
    out = area.copy()
    for c in range(col_start.shape[0] - 1):
        end = col_start[c + 1]
        for i in range(col_start[c], end):
            ceiling = np.int32(smin[i + 1]) if i + 1 < end else _OPEN_TOP
            if ceiling - np.int32(smax[i]) < walkable_height:
                out[i] = 0
    return out


def filter_low_hanging_walkable_obstacles(hf: Heightfield, walkable_climb: int) -> Heightfield:
    """Make low obstacles on walkable floor walkable (``rcFilterLowHangingWalkableObstacles``).

    Parameters
    ----------
    hf : Heightfield
    walkable_climb : int
        Max step height [vx].

    Returns
    -------
    Heightfield
        ``hf`` with a new ``area`` (uint8) array.
    """
    hk = _arrays(hf)
    climb = _nonneg(walkable_climb, "walkable_climb")
    return hf._replace(area=_low_hanging_run(hk, climb).area)


def _low_hanging_run(hf: Heightfield, climb: int) -> Heightfield:
    """:func:`filter_low_hanging_walkable_obstacles` on a checked heightfield
    (``col_start`` int32, contiguous arrays, as the rasterizer makes them)."""
    return hf._replace(area=_low_hanging_kernel(hf.col_start, hf.smax, hf.area, climb))


def filter_ledge_spans(hf: Heightfield, walkable_height: int, walkable_climb: int) -> Heightfield:
    """Clear spans at ledges and on steep steps (``rcFilterLedgeSpans``).

    Parameters
    ----------
    hf : Heightfield
    walkable_height : int
        Min headroom [vx].
    walkable_climb : int
        Max step height [vx].

    Returns
    -------
    Heightfield
        ``hf`` with a new ``area`` (uint8) array.
    """
    hk = _arrays(hf)
    height = _nonneg(walkable_height, "walkable_height")
    climb = _nonneg(walkable_climb, "walkable_climb")
    return hf._replace(area=_ledge_run(hk, height, climb).area)


def _ledge_run(hf: Heightfield, height: int, climb: int) -> Heightfield:
    """:func:`filter_ledge_spans` on a checked heightfield."""
    area = _ledge_kernel(
        hf.col_start, hf.smin, hf.smax, hf.area, int(hf.width), int(hf.height), height, climb
    )
    return hf._replace(area=area)


def filter_walkable_low_height_spans(hf: Heightfield, walkable_height: int) -> Heightfield:
    """Clear spans with too little headroom (``rcFilterWalkableLowHeightSpans``).

    Parameters
    ----------
    hf : Heightfield
    walkable_height : int
        Min free space above a span's top [vx].

    Returns
    -------
    Heightfield
        ``hf`` with a new ``area`` (uint8) array.
    """
    hk = _arrays(hf)
    height = _nonneg(walkable_height, "walkable_height")
    return hf._replace(area=_low_height_run(hk, height).area)


def _low_height_run(hf: Heightfield, height: int) -> Heightfield:
    """:func:`filter_walkable_low_height_spans` on a checked heightfield."""
    return hf._replace(area=_low_height_kernel(hf.col_start, hf.smin, hf.smax, hf.area, height))
