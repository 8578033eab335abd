"""navkit.recast.compact: rcBuildCompactHeightfield."""

from __future__ import annotations

import numpy as np
import pytest
from _hf_cases import flat, make_hf
from peer_support import MESHES, chf_from_dump, heightfield_from_dump, stage_dump

from navkit.errors import BuildError, InputError
from navkit.recast.compact import build_compact_heightfield
from navkit.recast.types import NOT_CONNECTED

NC = NOT_CONNECTED


def _links(con: int) -> list[int]:
    return [(int(con) >> (6 * d)) & 0x3F for d in range(4)]


def test_cell_layout_conventions():
    # col 0 walkable, col 1 empty, col 2 only unwalkable, col 3 two walkable spans
    hf = make_hf(
        4, 1, {(0, 0): [(0, 5, 63)], (2, 0): [(0, 3, 0)], (3, 0): [(0, 5, 9), (300, 310, 63)]}
    )
    chf = build_compact_heightfield(hf, 10, 4)
    assert chf.cells_index.tolist() == [[0, 0, 1, 1]]
    assert chf.cells_count.tolist() == [[1, 0, 0, 2]]
    assert chf.y.tolist() == [5, 5, 310]
    assert chf.h.tolist() == [255, 255, 255]  # open top and a gap of 295, both capped
    assert chf.areas.tolist() == [63, 9, 63]
    assert chf.reg.tolist() == [0, 0, 0] and chf.dist.tolist() == [0, 0, 0]
    assert [chf.y.dtype, chf.h.dtype, chf.con.dtype, chf.areas.dtype] == [
        np.uint16, np.uint8, np.uint32, np.uint8,
    ]  # fmt: skip
    assert chf.bmax[1] == np.float32(100.0) + np.float32(10) * np.float32(1.0)
    assert chf.bmax.dtype == np.float32 and np.array_equal(chf.bmin, hf.bmin)
    assert (chf.walkable_height, chf.walkable_climb, chf.border_size) == (10, 4, 0)


def test_neighbour_links():
    # 3 x 1: middle column has a floor at 5 and one at 30 under a ceiling; the
    # left neighbour's floor is at 7 (climbable), the right one's at 10 (too high)
    # and 31 (climbable, enough headroom).
    hf = make_hf(
        3, 1,
        {(0, 0): [(0, 7, 63)], (1, 0): [(0, 5, 63), (20, 30, 63)], (2, 0): [(0, 10, 63), (25, 31, 63)]},
    )  # fmt: skip
    chf = build_compact_heightfield(hf, 10, 4)
    # middle spans are 1 (y=5, h=15) and 2 (y=30, h=255)
    assert chf.y.tolist() == [7, 5, 30, 10, 31]
    assert chf.h.tolist() == [255, 15, 255, 15, 255]
    assert _links(chf.con[1]) == [0, NC, NC, NC]  # west: layer 0; east floors 10 (+5), 31 (no)
    assert _links(chf.con[2]) == [NC, NC, 1, NC]  # east layer 1 (y=31)
    assert _links(chf.con[0]) == [NC, NC, 0, NC]
    assert _links(chf.con[4]) == [1, NC, NC, NC]
    assert _links(chf.con[3]) == [NC, NC, NC, NC]  # y=10 vs 5: climb 5 > 4
    # Headroom: shared gap min(top) - max(bottom) must reach walkable_height.
    chf = build_compact_heightfield(hf, 16, 4)
    assert _links(chf.con[1])[0] == NC  # gap 20 - 7 = 13 < 16


def test_flat_grid_connects_everything_inside():
    chf = build_compact_heightfield(flat(3, 3), 10, 4)
    links = np.array([_links(c) for c in chf.con])
    assert links[4].tolist() == [0, 0, 0, 0]  # centre
    assert links[0].tolist() == [NC, 0, 0, NC]  # (0, 0): no west, no south


def test_too_many_layers():
    # 70 stacked 1-voxel spans with 1-voxel gaps; walkable_height 1, climb 0:
    # span k links to layer k of the neighbour, beyond 62 Recast cannot store it.
    col = [(2 * k, 2 * k + 1, 63) for k in range(70)]
    hf = make_hf(2, 1, {(0, 0): col, (1, 0): col})
    with pytest.raises(BuildError, match="too many layers"):
        build_compact_heightfield(hf, 1, 0)
    ok = make_hf(2, 1, {(0, 0): col[:63], (1, 0): col[:63]})
    chf = build_compact_heightfield(ok, 1, 0)
    assert _links(chf.con[62])[2] == 62


def test_bad_input():
    hf = flat(2, 2)
    with pytest.raises(InputError):
        build_compact_heightfield(hf, -1, 4)
    with pytest.raises(InputError):
        build_compact_heightfield(hf, 10, 1.5)
    with pytest.raises(InputError):
        build_compact_heightfield(hf._replace(smax=hf.smax.astype(np.float32)), 10, 4)
    with pytest.raises(InputError):
        build_compact_heightfield(hf._replace(width=0), 10, 4)


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_matches_recast(mesh):
    man, stages = stage_dump(mesh, "watershed")
    cfg = man["rcConfig"]
    hf = heightfield_from_dump(man, stages, "heightfield_filtered")
    chf = build_compact_heightfield(hf, cfg["walkableHeight"], cfg["walkableClimb"])
    want = chf_from_dump(man, stages, "compact_initial")
    for name in want._fields:
        a, b = getattr(chf, name), getattr(want, name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype, name
            np.testing.assert_array_equal(a, b, err_msg=name)
        else:
            assert a == b, name
