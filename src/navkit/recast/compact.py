"""Compact heightfield: the open space above walkable spans (Recast's ``rcBuildCompactHeightfield``).

Every walkable solid span becomes a compact span whose floor ``y`` is the solid
span's top and whose height ``h`` is the gap to the next solid span above (capped
at 255; the top span sees an open ceiling at 0xFFFF). Cells are laid out as
Recast lays them out: a column with no solid spans keeps index 0 and count 0, a
column with only unwalkable spans gets count 0 and the running index. Then each
span is linked to the first span (lowest layer) of each of its four neighbour
columns that leaves at least ``walkable_height`` of shared headroom and lies
within ``walkable_climb`` of its floor; the link stores the neighbour's layer
index in 6 bits per direction (63 = not connected). A link to layer 63 or above
cannot be stored; Recast logs "too many layers" and leaves it unconnected --
navkit raises :class:`BuildError` instead.
"""

from __future__ import annotations

import numpy as np

from .._jit import F32, njit
from ..errors import BuildError, InputError
from .filter import check_heightfield
from .types import DIR_OFFSET_X, DIR_OFFSET_Z, NOT_CONNECTED, CompactHeightfield, Heightfield

__all__ = ["build_compact_heightfield"]

_MAX_LAYERS = NOT_CONNECTED - 1  # the largest storable layer index (62)
_MAX_SPANS = 1 << 24  # rcCompactCell.index is 24 bits


@njit(link=False)
def _compact_kernel(col_start, smin, smax, area, width, height, walkable_height, walkable_climb):
    ncols = width * height
    n = 0
    for i in range(area.shape[0]):
        if area[i] != 0:
            n += 1
    cells_index = np.zeros((height, width), np.uint32)
    cells_count = np.zeros((height, width), np.uint8)
    count = np.zeros(ncols, np.int32)
    y = np.empty(n, np.uint16)
    h = np.empty(n, np.uint8)
    con = np.empty(n, np.uint32)
    areas = np.empty(n, np.uint8)
    max_count = 0
    idx = 0
    for c in range(ncols):
        start = col_start[c]
        end = col_start[c + 1]
        if start == end:
            continue
        cz = c // width
        cx = c - cz * width
        cells_index[cz, cx] = idx
        k = 0
        for i in range(start, end):
            if area[i] == 0:
                continue
            bot = np.int32(smax[i])
            top = np.int32(smin[i + 1]) if i + 1 < end else 0xFFFF
            y[idx] = bot
            h[idx] = min(max(top - bot, 0), 255)
            areas[idx] = area[i]
            idx += 1
            k += 1
        count[c] = k
        cells_count[cz, cx] = k & 0xFF
        if k > max_count:
            max_count = k

    too_high = 0
    for z in range(height):
        for x in range(width):
            c = x + z * width
            first = np.int32(cells_index[z, x])
            for i in range(first, first + count[c]):
                packed = np.uint32(0)
                sy = np.int32(y[i])
                stop = sy + np.int32(h[i])
                for d in range(4):
                    link = NOT_CONNECTED
                    nx = x + DIR_OFFSET_X[d]
                    nz = z + DIR_OFFSET_Z[d]
                    if nx >= 0 and nz >= 0 and nx < width and nz < height:
                        nfirst = np.int32(cells_index[nz, nx])
                        for k in range(nfirst, nfirst + count[nx + nz * width]):
                            ny = np.int32(y[k])
                            bot = max(sy, ny)
                            top = min(stop, ny + np.int32(h[k]))
                            if top - bot >= walkable_height and abs(ny - sy) <= walkable_climb:
                                layer = k - nfirst
                                if layer > _MAX_LAYERS:
                                    too_high = max(too_high, layer)
                                    continue
                                link = layer
                                break
                    packed |= np.uint32(link) << np.uint32(6 * d)
                con[i] = packed
    return cells_index, cells_count, y, h, con, areas, max_count, too_high


def build_compact_heightfield(
    hf: Heightfield, walkable_height: int, walkable_climb: int
) -> CompactHeightfield:
    """Build the compact heightfield of a filtered heightfield (``rcBuildCompactHeightfield``).

    Parameters
    ----------
    hf : Heightfield
        Solid spans (after the filters).
    walkable_height : int
        Min headroom for a neighbour link [vx].
    walkable_climb : int
        Max floor difference for a neighbour link [vx].

    Returns
    -------
    CompactHeightfield
        ``reg`` and ``dist`` zero, ``border_size``/``max_distance``/``max_regions`` 0,
        ``bmax[1]`` raised by ``walkable_height * ch`` (float32).

    Raises
    ------
    InputError
        Inconsistent heightfield or negative settings.
    BuildError
        More spans than Recast's 24-bit cell index holds, a column with more than
        255 walkable spans, or a neighbour link to a layer above 62 (Recast's
        "too many layers").
    """
    check_heightfield(hf)
    for name, v in (("walkable_height", walkable_height), ("walkable_climb", walkable_climb)):
        if int(v) != v or int(v) < 0:
            raise InputError(f"{name} must be an integer >= 0 [vx], got {v!r}")
    return _compact_run(hf, int(walkable_height), int(walkable_climb))


def _compact_run(hf: Heightfield, walkable_height: int, walkable_climb: int) -> CompactHeightfield:
    """:func:`build_compact_heightfield` on a checked heightfield and settings."""
    nwalk = int(np.count_nonzero(hf.area))
    if nwalk >= _MAX_SPANS:
        raise BuildError(
            f"{nwalk} walkable spans exceed Recast's compact heightfield limit of {_MAX_SPANS}; "
            "bake with tiles (set tile_size)"
        )
    w, h = int(hf.width), int(hf.height)
    cells_index, cells_count, y, hh, con, areas, max_count, too_high = _compact_kernel(
        np.ascontiguousarray(hf.col_start, dtype=np.int32),
        hf.smin,
        hf.smax,
        hf.area,
        w,
        h,
        walkable_height,
        walkable_climb,
    )
    if max_count > 255:
        raise BuildError(
            f"a column holds {max_count} walkable spans, more than the 255 a compact cell "
            "counts; raise cell_height or simplify the geometry"
        )
    if too_high > _MAX_LAYERS:
        raise BuildError(
            f"heightfield has too many layers: a neighbour link needs layer {too_high} "
            f"(max {_MAX_LAYERS}); raise cell_height or simplify the geometry"
        )
    bmin = np.asarray(hf.bmin, dtype=np.float32).copy()
    bmax = np.asarray(hf.bmax, dtype=np.float32).copy()
    bmax[1] = np.float32(bmax[1] + np.float32(F32(walkable_height) * np.float32(hf.ch)))
    n = y.shape[0]
    return CompactHeightfield(
        width=w,
        height=h,
        walkable_height=walkable_height,
        walkable_climb=walkable_climb,
        border_size=0,
        max_distance=0,
        max_regions=0,
        bmin=bmin,
        bmax=bmax,
        cs=float(np.float32(hf.cs)),
        ch=float(np.float32(hf.ch)),
        cells_index=cells_index,
        cells_count=cells_count,
        y=y,
        h=hh,
        con=con,
        reg=np.zeros(n, np.uint16),
        areas=areas,
        dist=np.zeros(n, np.uint16),
    )
