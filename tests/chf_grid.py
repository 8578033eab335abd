"""Hand-made compact heightfields for small oracles and property tests.

:func:`grid_chf` builds a :class:`navkit.recast.types.CompactHeightfield` from
per-cell span floors: ``floors[z][x]`` is a list of ``(y, area)`` pairs, bottom
to top. Two spans in 4-adjacent cells are linked when their floors differ by at
most ``climb`` (callers keep the spans of a column far enough apart that at most
one neighbour span qualifies, so the links are symmetric, as Recast's are).
:func:`mask_chf` is the single-layer case: a 2D array of area ids, 0 = no span.
"""

from __future__ import annotations

import numpy as np

from navkit.recast.types import NOT_CONNECTED, CompactHeightfield

DX = (-1, 0, 1, 0)
DZ = (0, 1, 0, -1)


def grid_chf(floors, *, climb: int = 1) -> CompactHeightfield:
    h = len(floors)
    w = len(floors[0])
    cells_index = np.zeros((h, w), np.uint32)
    cells_count = np.zeros((h, w), np.uint8)
    ys, areas = [], []
    for z in range(h):
        for x in range(w):
            cells_index[z, x] = len(ys)
            cells_count[z, x] = len(floors[z][x])
            for y, a in floors[z][x]:
                ys.append(y)
                areas.append(a)
    n = len(ys)
    con = np.zeros(n, np.uint32)
    for z in range(h):
        for x in range(w):
            for k, (y, _a) in enumerate(floors[z][x]):
                i = int(cells_index[z, x]) + k
                word = 0
                for d in range(4):
                    ax, az = x + DX[d], z + DZ[d]
                    link = NOT_CONNECTED
                    if 0 <= ax < w and 0 <= az < h:
                        for kk, (yy, _aa) in enumerate(floors[az][ax]):
                            if abs(yy - y) <= climb:
                                link = kk
                                break
                    word |= link << (6 * d)
                con[i] = word
    return CompactHeightfield(
        width=w,
        height=h,
        walkable_height=2,
        walkable_climb=climb,
        border_size=0,
        max_distance=0,
        max_regions=0,
        bmin=np.zeros(3, np.float32),
        bmax=np.array([w, 10, h], np.float32),
        cs=float(np.float32(1.0)),
        ch=float(np.float32(1.0)),
        cells_index=cells_index,
        cells_count=cells_count,
        y=np.array(ys, np.uint16),
        h=np.full(n, 10, np.uint8),
        con=con,
        reg=np.zeros(n, np.uint16),
        areas=np.array(areas, np.uint8),
        dist=np.zeros(n, np.uint16),
    )


def mask_chf(mask) -> CompactHeightfield:
    """One span (y = 0) per cell where ``mask[z, x]`` (its area id) is non-zero."""
    m = np.asarray(mask)
    floors = [
        [[(0, int(m[z, x]))] if m[z, x] else [] for x in range(m.shape[1])]
        for z in range(m.shape[0])
    ]
    return grid_chf(floors)


def span_cells(chf: CompactHeightfield) -> tuple[np.ndarray, np.ndarray]:
    """(x, z) of every span."""
    n = chf.span_count
    xs = np.empty(n, np.int64)
    zs = np.empty(n, np.int64)
    for z in range(chf.height):
        for x in range(chf.width):
            s = int(chf.cells_index[z, x])
            c = int(chf.cells_count[z, x])
            xs[s : s + c] = x
            zs[s : s + c] = z
    return xs, zs


def neighbours(chf: CompactHeightfield, i: int, x: int, z: int):
    """Yield the linked neighbour span indices of span i."""
    for d in range(4):
        lay = (int(chf.con[i]) >> (6 * d)) & 0x3F
        if lay != NOT_CONNECTED:
            yield int(chf.cells_index[z + DZ[d], x + DX[d]]) + lay
