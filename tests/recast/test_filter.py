"""navkit.recast.filter: Recast's three heightfield filters."""

from __future__ import annotations

import numpy as np
import pytest
from _hf_cases import column_areas, flat, make_hf
from peer_support import MESHES, heightfield_from_dump, stage_dump

from navkit.errors import InputError
from navkit.recast.filter import (
    filter_ledge_spans,
    filter_low_hanging_walkable_obstacles,
    filter_walkable_low_height_spans,
)

CLIMB, HEIGHT = 4, 10


# -- low hanging obstacles ----------------------------------------------------------------------
def test_low_hanging_obstacles():
    hf = make_hf(
        4, 1,
        {
            (0, 0): [(0, 5, 63), (7, 8, 0)],  # step 3 <= 4: promoted
            (1, 0): [(0, 5, 63), (7, 10, 0)],  # step 5 > 4: stays
            (2, 0): [(0, 5, 63), (6, 7, 0), (8, 9, 0)],  # only the first of a stack
            (3, 0): [(0, 5, 12), (6, 9, 0), (12, 13, 63)],  # takes the area below
        },
    )  # fmt: skip
    out = filter_low_hanging_walkable_obstacles(hf, CLIMB)
    assert column_areas(out) == {
        (0, 0): [63, 63],
        (1, 0): [63, 0],
        (2, 0): [63, 63, 0],
        (3, 0): [12, 12, 63],
    }
    assert hf.area.tolist() == [63, 0, 63, 0, 63, 0, 0, 12, 0, 63]  # input untouched
    assert out.smin is hf.smin and out.smax is hf.smax


# -- ledges ---------------------------------------------------------------------------------------
def _center(hf):
    return column_areas(filter_ledge_spans(hf, HEIGHT, CLIMB))


def test_ledge_flat_floor_clears_only_the_grid_edge():
    areas = _center(flat(5, 5))
    for (x, z), a in areas.items():
        on_edge = x in (0, 4) or z in (0, 4)
        assert a == [0 if on_edge else 63], (x, z)


def test_ledge_drop_and_empty_neighbour():
    hf = flat(5, 5)
    cols = {(x, z): [(0, 10, 63)] for x in range(5) for z in range(5)}
    cols[(3, 2)] = [(0, 2, 63)]  # an 8-voxel drop east of the centre
    areas = _center(make_hf(5, 5, cols))
    assert areas[(2, 2)] == [0]
    assert areas[(3, 2)] == [63]  # looking up at the others is no ledge
    assert areas[(1, 1)] == [63]
    del cols[(3, 2)]  # a hole: open space to minus infinity
    areas = _center(make_hf(5, 5, cols))
    assert areas[(2, 2)] == [0] and areas[(2, 1)] == [63]
    # A drop within the climb is fine.
    cols[(3, 2)] = [(0, 7, 63)]
    assert _center(make_hf(5, 5, cols))[(2, 2)] == [63]
    assert hf.area.tolist() == [63] * 25


def test_ledge_steep_slope_and_covered_drop():
    cols = {(x, z): [(0, 10, 63)] for x in range(5) for z in range(5)}
    cols[(1, 2)] = [(0, 13, 63)]
    cols[(3, 2)] = [(0, 7, 63)]  # neighbours +3 and -3: each climbable, range 6 > 4
    assert _center(make_hf(5, 5, cols))[(2, 2)] == [0]
    # A deep drop under a low ceiling (gap < walkable height) is not traversable: no ledge.
    cols = {(x, z): [(0, 10, 63)] for x in range(5) for z in range(5)}
    cols[(3, 2)] = [(0, 2, 63), (12, 40, 0)]
    assert _center(make_hf(5, 5, cols))[(2, 2)] == [63]


def test_ledge_skips_unwalkable_spans():
    assert _center(flat(5, 5, area=0))[(2, 2)] == [0]
    cols = {(x, z): [(0, 10, 63)] for x in range(5) for z in range(5)}
    cols[(2, 2)] = [(0, 10, 7)]
    assert _center(make_hf(5, 5, cols))[(2, 2)] == [7]


# -- low height -------------------------------------------------------------------------------
def test_low_height_spans():
    hf = make_hf(
        3, 1,
        {(0, 0): [(0, 10, 63), (15, 20, 63)], (1, 0): [(0, 10, 63), (20, 22, 63)], (2, 0): [(0, 3, 5)]},
    )  # fmt: skip
    out = filter_walkable_low_height_spans(hf, HEIGHT)
    assert column_areas(out) == {(0, 0): [0, 63], (1, 0): [63, 63], (2, 0): [5]}


def test_bad_input():
    hf = flat(3, 3)
    with pytest.raises(InputError):
        filter_ledge_spans(hf, -1, 4)
    with pytest.raises(InputError):
        filter_walkable_low_height_spans(hf, 2.5)
    with pytest.raises(InputError):
        filter_low_hanging_walkable_obstacles(hf._replace(area=hf.area.astype(np.int32)), 4)
    with pytest.raises(InputError):
        filter_ledge_spans(hf._replace(col_start=hf.col_start[:-1]), 10, 4)
    with pytest.raises(InputError):
        filter_ledge_spans("not a heightfield", 10, 4)  # type: ignore[arg-type]
    bad = hf.col_start.copy()
    bad[-1] = 99
    with pytest.raises(InputError):
        filter_walkable_low_height_spans(hf._replace(col_start=bad), 10)


# -- Recast's own output --------------------------------------------------------------------------
def _demo_order(hf, cfg):
    hf = filter_low_hanging_walkable_obstacles(hf, cfg["walkableClimb"])
    hf = filter_ledge_spans(hf, cfg["walkableHeight"], cfg["walkableClimb"])
    return filter_walkable_low_height_spans(hf, cfg["walkableHeight"])


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_matches_recast(mesh):
    man, stages = stage_dump(mesh, "watershed")
    raw = heightfield_from_dump(man, stages, "heightfield_rasterized")
    out = _demo_order(raw, man["rcConfig"])
    want = heightfield_from_dump(man, stages, "heightfield_filtered")
    np.testing.assert_array_equal(out.area, want.area)
    for name in ("col_start", "smin", "smax"):
        np.testing.assert_array_equal(getattr(out, name), getattr(want, name))
    assert out.area.dtype == np.uint8
    # The filters really do something on these meshes.
    assert np.count_nonzero(out.area != raw.area) > 100
