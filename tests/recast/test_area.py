"""navkit.recast.area: erosion, median filter, volume marking, polygon offset;
and the whole heightfield chain (input -> compact_eroded) against Recast."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest
from _hf_cases import flat
from peer_support import MESHES, chf_from_dump, stage_dump

from navkit.errors import InputError
from navkit.recast.area import (
    erode_walkable_area,
    mark_box_area,
    mark_convex_poly_area,
    mark_cylinder_area,
    median_filter_walkable_area,
    offset_poly,
)
from navkit.recast.compact import build_compact_heightfield
from navkit.recast.filter import (
    filter_ledge_spans,
    filter_low_hanging_walkable_obstacles,
    filter_walkable_low_height_spans,
)
from navkit.recast.rasterize import calc_grid_size, mark_walkable_triangles, rasterize_triangles


def _chf(n=9, areas=None):
    """n x n flat floor (cells 1 x 1 wu, floor y = 10 vx), all linked; then {(x, z): area}."""
    chf = build_compact_heightfield(flat(n, n), 10, 4)
    a = chf.areas.copy()
    for (x, z), v in (areas or {}).items():
        a[chf.cells_index[z, x]] = v
    return chf._replace(areas=a)


def _grid(chf):
    """areas as an (height, width) array (one span per cell)."""
    assert np.all(chf.cells_count == 1)
    return chf.areas[chf.cells_index.astype(np.int64)]


# -- erosion ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("radius", [0, 1, 2, 3, 4, 5])
def test_erode_square(radius):
    # Ring k (k cells from the edge) has chamfer distance 2k: it survives iff 2k >= 2r.
    chf = _chf(9)
    out = erode_walkable_area(chf, radius)
    g = _grid(out)
    k = min(radius, 5)
    want = np.zeros((9, 9), np.uint8)
    want[k : 9 - k, k : 9 - k] = 63
    if radius == 0:
        want[:] = 63
    np.testing.assert_array_equal(g, want)
    assert np.all(chf.areas == 63)  # input untouched


def test_erode_around_a_hole():
    # A null span in the middle of a 9 x 9 floor: with radius 1 its 4 straight
    # neighbours are boundaries (dist 0) and its diagonal ones get dist 2 (kept).
    out = _grid(erode_walkable_area(_chf(9, {(4, 4): 0}), 1))
    assert out[4, 4] == 0
    for x, z in [(3, 4), (5, 4), (4, 3), (4, 5)]:
        assert out[z, x] == 0
    for x, z in [(3, 3), (5, 5), (3, 5), (5, 3)]:
        assert out[z, x] == 63
    assert np.count_nonzero(out == 0) == 32 + 5  # the grid edge ring plus the cross


# -- median filter -------------------------------------------------------------------------------
def test_median_filter():
    block = {(x, z): 5 for x in range(2, 5) for z in range(2, 5)}
    block[(0, 0)] = 0
    chf = _chf(7, {**block, (6, 3): 9})
    g = _grid(median_filter_walkable_area(chf))
    # the block's corners see 4 fives and 5 sixty-threes; its edges 6 fives
    for x in range(2, 5):
        for z in range(2, 5):
            corner = x in (2, 4) and z in (2, 4)
            assert g[z, x] == (63 if corner else 5), (x, z)
    assert g[3, 6] == 63  # a lone id is smoothed away
    assert g[0, 0] == 0  # null stays null
    assert g[6, 6] == 63


# -- marking -------------------------------------------------------------------------------------
def test_mark_box():
    chf = _chf(5, {(2, 1): 0})
    g = _grid(mark_box_area(chf, (1.5, 9, 1.5), (3.2, 11, 2.9), 7))
    want = np.full((5, 5), 63, np.uint8)
    want[1:3, 1:4] = 7
    want[1, 2] = 0  # null spans are not marked
    np.testing.assert_array_equal(g, want)
    # Floor y = 10 outside the box's y range: nothing.
    assert np.all(_grid(mark_box_area(chf, (0, 11, 0), (5, 12, 5), 7)) != 7)
    # Entirely off the grid: unchanged copy.
    out = mark_box_area(chf, (10, 0, 10), (12, 20, 12), 7)
    assert np.array_equal(out.areas, chf.areas) and out.areas is not chf.areas


def test_mark_cylinder():
    g = _grid(mark_cylinder_area(_chf(5), (2.5, 9, 2.5), 1.1, 3, 3))
    marked = {(x, z) for z in range(5) for x in range(5) if g[z, x] == 3}
    assert marked == {(2, 2), (1, 2), (3, 2), (2, 1), (2, 3)}
    # too low: floor at y=10 vx (10 wu here) above 9 + 0.5
    assert not np.any(_grid(mark_cylinder_area(_chf(5), (2.5, 9, 2.5), 1.1, 0.5, 3)) == 3)


def test_mark_convex_poly():
    tri = np.array([(0, 0, 0), (5.2, 0, 0), (0, 0, 5.2)], np.float32)
    g = _grid(mark_convex_poly_area(_chf(5), tri, 9.0, 11.0, 4))
    marked = {(x, z) for z in range(5) for x in range(5) if g[z, x] == 4}
    assert marked == {(x, z) for x in range(5) for z in range(5) if x + z <= 4}
    g = _grid(mark_convex_poly_area(_chf(5), tri[::-1], 9.0, 11.0, 4))  # winding irrelevant
    assert np.count_nonzero(g == 4) == 15
    assert not np.any(_grid(mark_convex_poly_area(_chf(5), tri, 11.0, 12.0, 4)) == 4)


def test_offset_poly():
    ang = np.arange(6) * (np.pi / 3)
    hexagon = np.stack([np.cos(ang), np.zeros(6), np.sin(ang)], axis=1).astype(np.float32)
    grown = offset_poly(hexagon, 0.5)
    # 120-degree corners are mitred: circumradius 1 + 0.5 / cos(30 deg), same directions
    assert grown.shape == (6, 3) and grown.dtype == np.float32
    r = np.hypot(grown[:, 0], grown[:, 2])
    np.testing.assert_allclose(r, 1 + 0.5 / np.cos(np.pi / 6), rtol=1e-5)
    np.testing.assert_allclose(np.arctan2(grown[:, 2], grown[:, 0]) % (2 * np.pi), ang, atol=1e-5)
    shrunk = offset_poly(hexagon[::-1], 0.5)  # the other winding goes inward
    np.testing.assert_allclose(
        np.hypot(shrunk[:, 0], shrunk[:, 2]), 1 - 0.5 / np.cos(np.pi / 6), rtol=1e-5
    )
    # 90-degree corners are acute enough to be bevelled: two vertices each
    square = np.array([(0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1)], np.float32)
    out = offset_poly(square, 0.25)
    assert out.shape == (8, 3)
    assert np.all((out[:, 0] < 0) | (out[:, 0] > 1) | (out[:, 2] < 0) | (out[:, 2] > 1))


def test_bad_input():
    chf = _chf(3)
    with pytest.raises(InputError):
        erode_walkable_area(chf, -1)
    with pytest.raises(InputError):
        erode_walkable_area(chf._replace(con=chf.con.astype(np.int64)), 1)
    with pytest.raises(InputError):
        mark_box_area(chf, (0, 0, 0), (1, 1, 1), 64)
    with pytest.raises(InputError):
        mark_box_area(chf, (0, np.nan, 0), (1, 1, 1), 3)
    with pytest.raises(InputError):
        mark_convex_poly_area(chf, np.zeros((2, 3)), 0, 1, 3)
    with pytest.raises(InputError):
        mark_cylinder_area(chf, (0, 0, 0), float("inf"), 1, 3)
    with pytest.raises(InputError):
        offset_poly(np.zeros((4, 2)), 1.0)
    with pytest.raises(InputError):
        median_filter_walkable_area(flat(3, 3))  # type: ignore[arg-type]
    bad = chf.cells_index.copy()
    bad[2, 2] = 100
    with pytest.raises(InputError):
        erode_walkable_area(chf._replace(cells_index=bad), 1)


# -- Recast's own output -------------------------------------------------------------------------
def _assert_chf_equal(chf, want):
    for name in want._fields:
        a, b = getattr(chf, name), getattr(want, name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype, name
            np.testing.assert_array_equal(a, b, err_msg=name)
        else:
            assert a == b, name


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_erode_matches_recast(mesh):
    man, stages = stage_dump(mesh, "watershed")
    chf = chf_from_dump(man, stages, "compact_initial")
    out = erode_walkable_area(chf, man["rcConfig"]["walkableRadius"])
    _assert_chf_equal(out, chf_from_dump(man, stages, "compact_eroded"))
    assert np.count_nonzero(out.areas != chf.areas) > 100


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_whole_chain_matches_recast(mesh):
    """input -> walkable triangles -> rasterize -> filters -> compact -> erode."""
    man, stages = stage_dump(mesh, "watershed")
    cfg = man["rcConfig"]
    verts, tris = stages["input"]["verts"], stages["input"]["tris"]
    bmin, bmax = verts.min(axis=0), verts.max(axis=0)
    w, h = calc_grid_size(bmin, bmax, cfg["cs"])
    areas = mark_walkable_triangles(verts, tris, cfg["walkableSlopeAngle"])
    hf = rasterize_triangles(
        verts, tris, areas, width=w, height=h, bmin=bmin, bmax=bmax, cs=cfg["cs"], ch=cfg["ch"],
        flag_merge_threshold=cfg["walkableClimb"],
    )  # fmt: skip
    hf = filter_low_hanging_walkable_obstacles(hf, cfg["walkableClimb"])
    hf = filter_ledge_spans(hf, cfg["walkableHeight"], cfg["walkableClimb"])
    hf = filter_walkable_low_height_spans(hf, cfg["walkableHeight"])
    chf = build_compact_heightfield(hf, cfg["walkableHeight"], cfg["walkableClimb"])
    _assert_chf_equal(chf, chf_from_dump(man, stages, "compact_initial"))
    chf = erode_walkable_area(chf, cfg["walkableRadius"])
    _assert_chf_equal(chf, chf_from_dump(man, stages, "compact_eroded"))


# -- Recast's marking functions (tests/oracles/make_recast_area_marks.mjs) ----------------------
_MARKS = Path(__file__).resolve().parents[1] / "oracles" / "recast_area_marks.json"


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_marking_matches_recast(mesh):
    """Box, cylinder, convex prism, one-cell boxes, then the median filter, on the
    eroded compact heightfield, step by step against Recast's areas."""
    ref = json.loads(_MARKS.read_text())["meshes"][mesh]
    man, stages = stage_dump(mesh, "watershed")
    chf = chf_from_dump(man, stages, "compact_eroded")
    assert chf.span_count == ref["spanCount"]
    box, cyl, poly = ref["box"], ref["cylinder"], ref["convex"]
    ops = {
        "box": lambda c: mark_box_area(c, box["bmin"], box["bmax"], box["area"]),
        "cylinder": lambda c: mark_cylinder_area(
            c, cyl["pos"], cyl["radius"], cyl["height"], cyl["area"]
        ),
        "convex": lambda c: mark_convex_poly_area(
            c, np.array(poly["verts"], np.float32), poly["hmin"], poly["hmax"], poly["area"]
        ),
        "speckles": lambda c: functools.reduce(
            lambda acc, b: mark_box_area(acc, b["bmin"], b["bmax"], b["area"]), ref["speckles"], c
        ),
        "median": median_filter_walkable_area,
    }
    want = chf.areas.copy()
    for step in ref["steps"]:
        chf = ops[step["step"]](chf)
        for first, count, area in step["runs"]:
            want[first : first + count] = area
        np.testing.assert_array_equal(chf.areas, want, err_msg=step["step"])
        assert step["runs"], step["step"]  # every step changed something
