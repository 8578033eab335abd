"""Hand-built heightfields for the heightfield-stage tests (rasterize/filter/compact/area)."""

from __future__ import annotations

import numpy as np

from navkit.recast.types import Heightfield


def make_hf(
    width: int,
    height: int,
    columns: dict[tuple[int, int], list[tuple[int, int, int]]],
    cs: float = 1.0,
    ch: float = 1.0,
) -> Heightfield:
    """A CSR heightfield from ``{(x, z): [(smin, smax, area), ...]}`` (bottom to top)."""
    col_start = np.zeros(width * height + 1, np.int32)
    smin, smax, area = [], [], []
    for c in range(width * height):
        spans = columns.get((c % width, c // width), [])
        for s0, s1, a in spans:
            smin.append(s0)
            smax.append(s1)
            area.append(a)
        col_start[c + 1] = len(smin)
    return Heightfield(
        width, height, np.zeros(3, np.float32), np.array([width * cs, 100.0, height * cs], np.float32),
        float(np.float32(cs)), float(np.float32(ch)), col_start,
        np.array(smin, np.uint16), np.array(smax, np.uint16), np.array(area, np.uint8),
    )  # fmt: skip


def flat(width: int, height: int, top: int = 10, area: int = 63, **kw) -> Heightfield:
    """Every column one span ``(0, top, area)``."""
    cols = {(x, z): [(0, top, area)] for x in range(width) for z in range(height)}
    return make_hf(width, height, cols, **kw)


def column_areas(hf: Heightfield) -> dict[tuple[int, int], list[int]]:
    """{(x, z): [area, ...]} for every non-empty column."""
    out = {}
    for c in range(hf.width * hf.height):
        a, b = hf.col_start[c], hf.col_start[c + 1]
        if b > a:
            out[(c % hf.width, c // hf.width)] = [int(v) for v in hf.area[a:b]]
    return out
