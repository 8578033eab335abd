"""navkit.recast.rasterize: walkable triangles, grid size and rcRasterizeTriangles."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from peer_support import MESHES, PARTITIONS, heightfield_from_dump, stage_dump

from navkit.errors import BuildError, InputError
from navkit.recast.rasterize import (
    calc_grid_size,
    clear_unwalkable_triangles,
    create_heightfield_grid,
    mark_walkable_triangles,
    rasterize_triangles,
)
from navkit.recast.types import SPAN_MAX_HEIGHT, WALKABLE_AREA, Heightfield

GRID = dict(width=4, height=4, bmin=(0, 0, 0), bmax=(4, 10, 4), cs=1.0, ch=1.0)


def _spans(hf: Heightfield) -> dict[tuple[int, int], list[tuple[int, int, int]]]:
    """{(x, z): [(smin, smax, area), ...]} for the non-empty columns."""
    out = {}
    for c in range(hf.width * hf.height):
        a, b = hf.col_start[c], hf.col_start[c + 1]
        if b > a:
            out[(c % hf.width, c // hf.width)] = [
                (int(hf.smin[i]), int(hf.smax[i]), int(hf.area[i])) for i in range(a, b)
            ]
    return out


def _raster(verts, tris, areas, thr=1, **grid):
    g = {**GRID, **grid}
    return rasterize_triangles(
        np.asarray(verts, np.float32),
        np.asarray(tris),
        np.asarray(areas),
        flag_merge_threshold=thr,
        **g,
    )


# -- hand-made oracles --------------------------------------------------------------------------
def test_flat_triangle_covers_expected_columns():
    # Triangle x >= 0.5, z >= 0.5, x + z <= 3.7 at y = 2.5: it overlaps the unit
    # cells with x + z <= 3 (10 of them), each with a span floor(2.5)=2 .. ceil(2.5)=3.
    hf = _raster([(0.5, 2.5, 0.5), (3.2, 2.5, 0.5), (0.5, 2.5, 3.2)], [(0, 1, 2)], [63])
    cols = {(x, z) for x in range(4) for z in range(4) if x + z <= 3}
    assert _spans(hf) == {c: [(2, 3, 63)] for c in cols}
    assert hf.col_start.shape == (17,) and hf.col_start.dtype == np.int32
    assert hf.smin.dtype == np.uint16 and hf.area.dtype == np.uint8


def test_span_height_is_at_least_one_voxel_and_sloped_range():
    # y = 4.0 exactly on a voxel boundary still gives a one-voxel span [4, 5].
    hf = _raster([(0, 4, 0), (4, 4, 0), (0, 4, 4)], [(0, 1, 2)], [63])
    assert all(s == [(4, 5, 63)] for s in _spans(hf).values())
    # A ramp rising 1 per cell along x: column x spans floor(x)..ceil(x+1).
    hf = _raster(
        [(0, 0.2, 0), (0, 0.2, 4), (4, 4.2, 0), (4, 4.2, 4)], [(0, 1, 2), (1, 3, 2)], [5, 5]
    )
    for (x, _z), s in _spans(hf).items():
        assert s == [(x, x + 2, 5)]


def test_merging_two_overlapping_triangles():
    big = [(-1, 0, -1), (9, 0, -1), (-1, 0, 9)]  # covers the whole 4 x 4 grid
    verts = [(x, y, z) for y in (2.5, 3.5, 6.5) for (x, _, z) in big]
    tris = [(0, 1, 2), (3, 4, 5), (6, 7, 8)]
    # [2,3] area 63 then [3,4] area 0: merged to [2,4]; tops differ by 1 <= thr keeps max area.
    hf = _raster(verts[:6], tris[:2], [63, 0], thr=1)
    assert set(map(tuple, _spans(hf).values())) == {((2, 4, 63),)}
    assert len(_spans(hf)) == 16
    # With threshold 0 the new (upper) span's area wins.
    hf = _raster(verts[:6], tris[:2], [63, 0], thr=0)
    assert set(map(tuple, _spans(hf).values())) == {((2, 4, 0),)}
    # A separate higher span stays separate, sorted bottom to top.
    hf = _raster(verts, tris, [63, 0, 7], thr=1)
    assert set(map(tuple, _spans(hf).values())) == {((2, 4, 63), (6, 7, 7))}
    # Inserting the high span first gives the same columns.
    hf2 = _raster(verts, [tris[2], tris[0], tris[1]], [7, 63, 0], thr=1)
    assert _spans(hf2) == _spans(hf)


def test_triangles_outside_or_crossing_the_grid():
    # Entirely outside in x: nothing.
    hf = _raster([(10, 1, 0), (12, 1, 0), (10, 1, 2)], [(0, 1, 2)], [63])
    assert hf.span_count == 0 and np.all(hf.col_start == 0)
    # Below the floor / above the top: nothing.
    hf = _raster([(0, -3, 0), (4, -3, 0), (0, -2, 4)], [(0, 1, 2)], [63])
    assert hf.span_count == 0
    hf = _raster([(0, 11, 0), (4, 11, 0), (0, 12, 4)], [(0, 1, 2)], [63])
    assert hf.span_count == 0
    # Crossing the grid's sides: clipped, only in-grid columns; y clamped at 0.
    hf = _raster([(-5, -1, 1.2), (9, -1, 1.2), (-5, 1.5, 1.8)], [(0, 1, 2)], [63], ch=0.5)
    s = _spans(hf)
    assert set(s) == {(x, 1) for x in range(4)}
    assert all(v[0][0] == 0 for v in s.values())


def test_huge_triangle_over_the_grid():
    # Cell indices of far-away corners would overflow an int; they are clamped first.
    hf = _raster([(-1e30, 2.5, -1e30), (3e30, 2.5, -1e30), (-1e30, 2.5, 3e30)], [(0, 1, 2)], [63])
    assert _spans(hf) == {(x, z): [(2, 3, 63)] for x in range(4) for z in range(4)}


def test_calc_grid_size():
    assert calc_grid_size((0, 0, 0), (4, 1, 3), 1.0) == (4, 3)
    assert calc_grid_size((0, 0, 0), (4.4, 1, 3.6), 1.0) == (4, 4)  # rounds half up
    assert create_heightfield_grid((0, 0, 0), (1.0, 0, 1.0), 0.3) == (3, 3)


def test_mark_and_clear_walkable_triangles():
    verts = np.array(
        [(0, 0, 0), (0, 0, 1), (1, 0, 0), (0, 0, 0), (0, 1, 0), (1, 0, 0), (0, 0, 0), (0, 0.9, 1),
         (1, 0, 0)], np.float32)  # fmt: skip
    # flat (up-facing with this winding), vertical wall, slope ~42 degrees; and a flipped flat one
    tris = np.array([(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 2, 1)], np.int32)
    a = mark_walkable_triangles(verts, tris, 45.0)
    assert a.tolist() == [63, 0, 63, 0]
    assert mark_walkable_triangles(verts, tris, 30.0).tolist() == [63, 0, 0, 0]
    given_areas = np.array([1, 2, 3, 4], np.uint8)
    assert mark_walkable_triangles(verts, tris, 45.0, given_areas).tolist() == [63, 2, 63, 4]
    assert given_areas.tolist() == [1, 2, 3, 4]  # not mutated
    assert clear_unwalkable_triangles(verts, tris, 45.0, given_areas).tolist() == [1, 0, 3, 0]
    # A degenerate triangle (NaN normal) is neither marked nor cleared.
    deg = np.array([(0, 1, 1)], np.int32)
    assert mark_walkable_triangles(verts, deg, 45.0).tolist() == [0]
    assert clear_unwalkable_triangles(verts, deg, 45.0, np.array([9], np.uint8)).tolist() == [9]


# -- property -----------------------------------------------------------------------------------
coord = st.floats(0.0, 8.0, allow_nan=False, width=32)
height = st.floats(0.0, 6.0, allow_nan=False, width=32)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(coord, height, coord), min_size=3, max_size=3))
def test_single_triangle_spans_within_its_y_range(tri):
    v = np.array(tri, np.float32)
    hf = _raster(v, [(0, 1, 2)], [63], width=8, height=8, bmax=(8, 6, 8), ch=0.25)
    ymin, ymax = float(v[:, 1].min()), float(v[:, 1].max())
    lo = math.floor(ymin / 0.25 - 1e-3)
    hi = math.ceil(ymax / 0.25 + 1e-3)
    for (x, z), spans in _spans(hf).items():
        assert len(spans) == 1
        smin, smax, area = spans[0]
        assert area == 63 and lo <= smin < smax <= max(hi, smin + 1)
        # the column overlaps the triangle's xz bounds
        assert x + 1 >= v[:, 0].min() and x <= v[:, 0].max()
        assert z + 1 >= v[:, 2].min() and z <= v[:, 2].max()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(coord, height, coord), min_size=3, max_size=30), st.integers(0, 3))
def test_columns_sorted_and_disjoint(points, thr):
    v = np.array(points, np.float32)
    m = len(points) // 3
    tris = np.arange(3 * m, dtype=np.int32).reshape(m, 3)
    areas = (np.arange(m) * 17 % 64).astype(np.uint8)
    hf = _raster(v, tris, areas, thr, width=8, height=8, bmax=(8, 6, 8), ch=0.25)
    assert hf.col_start[0] == 0 and hf.col_start[-1] == hf.span_count
    assert np.all(np.diff(hf.col_start) >= 0)
    for spans in _spans(hf).values():
        for (_a0, a1, _), (b0, _b1, _) in zip(spans, spans[1:]):
            assert a1 < b0
        assert all(s0 < s1 <= max(24, s0 + 1) and s0 <= 24 for s0, s1, _ in spans)


half = st.integers(0, 16).map(lambda k: np.float32(k * 0.5))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(half, half, half), min_size=3, max_size=12))
def test_vertices_on_cell_lines(points):
    # Vertices exactly on cell boundaries make the polygon splitter emit duplicate
    # points; columns must still come out sorted and disjoint, spans within range.
    v = np.array(points, np.float32)
    m = len(points) // 3
    tris = np.arange(3 * m, dtype=np.int32).reshape(m, 3)
    hf = _raster(v, tris, np.full(m, 63), 1, width=8, height=8, bmax=(8, 8, 8), ch=0.5)
    for spans in _spans(hf).values():
        for (_a0, a1, _), (b0, _b1, _) in zip(spans, spans[1:]):
            assert a1 < b0
        # within the 16 cells of the bounds, except that a span keeps Recast's
        # one-cell minimum height: a triangle lying exactly on the top plane
        # gives the span [16, 17] (rcClamp(ceil(smax / ch), smin + 1, ...))
        assert all(0 <= s0 < s1 <= max(16, s0 + 1) and s0 <= 16 for s0, s1, _ in spans)


# -- bad input ----------------------------------------------------------------------------------
def test_bad_input():
    v = np.zeros((3, 3), np.float32)
    t = np.array([(0, 1, 2)], np.int32)
    a = np.array([63], np.uint8)
    with pytest.raises(InputError):
        _raster(np.zeros((3, 2)), t, a)
    with pytest.raises(InputError):
        _raster(v, np.array([(0, 1, 3)]), a)  # index out of range
    with pytest.raises(InputError):
        _raster(v, np.array([(0.0, 1.0, 2.0)]), a)  # float indices
    with pytest.raises(InputError):
        _raster(v, t, np.array([63, 63]))  # wrong areas length
    with pytest.raises(InputError):
        _raster(v, t, np.array([64]))  # area id beyond 63
    with pytest.raises(InputError):
        _raster(np.array([(0, np.nan, 0), (1, 0, 0), (0, 0, 1)]), t, a)
    with pytest.raises(InputError):
        _raster(v, t, a, cs=0.0)
    with pytest.raises(InputError):
        _raster(v, t, a, width=3.5)
    with pytest.raises(InputError):
        _raster(v, t, a, thr=-1)
    with pytest.raises(InputError):
        _raster(v, t, a, bmin=(0, np.nan, 0))
    with pytest.raises(InputError):
        mark_walkable_triangles(v, t, float("nan"))
    with pytest.raises(InputError):
        mark_walkable_triangles(v, np.array([[0, 1]]), 45.0)
    with pytest.raises(BuildError, match="tile_size"):
        _raster(v, t, a, width=100_000, height=100_000)
    with pytest.raises(BuildError, match="tile_size"):
        _raster(v, t, a, bmax=(4, SPAN_MAX_HEIGHT + 10, 4))
    with pytest.raises(BuildError):
        _raster(v, t, a, width=0)


# -- Recast's own output ------------------------------------------------------------------------
@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_matches_recast(mesh):
    man, stages = stage_dump(mesh, "watershed")
    cfg = man["rcConfig"]
    verts, tris = stages["input"]["verts"], stages["input"]["tris"]
    ref = stages["heightfield_rasterized"]

    bmin, bmax = verts.min(axis=0), verts.max(axis=0)
    assert np.array_equal(bmin, np.float32(man["bmin"])) and np.array_equal(
        bmax, np.float32(man["bmax"])
    )
    w, h = calc_grid_size(bmin, bmax, cfg["cs"])
    assert (w, h) == (man["grid"]["width"], man["grid"]["height"])

    areas = mark_walkable_triangles(verts, tris, cfg["walkableSlopeAngle"])
    np.testing.assert_array_equal(areas, ref["tri_areas"])

    hf = rasterize_triangles(
        verts, tris, areas, width=w, height=h, bmin=bmin, bmax=bmax, cs=cfg["cs"], ch=cfg["ch"],
        flag_merge_threshold=cfg["walkableClimb"],
    )  # fmt: skip
    want = heightfield_from_dump(man, stages, "heightfield_rasterized")
    for name in ("col_start", "smin", "smax", "area"):
        np.testing.assert_array_equal(getattr(hf, name), getattr(want, name), err_msg=name)
        assert getattr(hf, name).dtype == getattr(want, name).dtype
    assert (
        hf.walkable_span_count
        == man["stages"]["heightfield_rasterized"]["counts"]["walkable_spans"]
    )
    assert np.array_equal(hf.bmin, want.bmin) and np.array_equal(hf.bmax, want.bmax)
    assert (hf.cs, hf.ch) == (want.cs, want.ch)


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_heightfield_stage_is_the_same_for_every_partition(mesh):
    _, ws = stage_dump(mesh, "watershed")
    for part in PARTITIONS[1:]:
        _, other = stage_dump(mesh, part)
        for name, arr in ws["heightfield_rasterized"].items():
            np.testing.assert_array_equal(arr, other["heightfield_rasterized"][name])


def test_walkable_area_constant():
    assert WALKABLE_AREA == 63


_MARKS = Path(__file__).resolve().parents[1] / "oracles" / "recast_area_marks.json"


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_slope_marking_matches_recast_at_several_angles(mesh):
    """rcMarkWalkableTriangles (from zeros) / rcClearUnwalkableTriangles (from 7s),
    digests made by tests/oracles/make_recast_area_marks.mjs with Recast itself."""
    ref = json.loads(_MARKS.read_text())["meshes"][mesh]["triangles"]
    _, stages = stage_dump(mesh, "watershed")
    verts, tris = stages["input"]["verts"], stages["input"]["tris"]
    sevens = np.full(tris.shape[0], 7, np.uint8)
    for case in ref:
        marked = mark_walkable_triangles(verts, tris, case["angle"])
        cleared = clear_unwalkable_triangles(verts, tris, case["angle"], sevens)
        for got, want in ((marked, case["mark"]), (cleared, case["clear"])):
            assert np.count_nonzero(got) == want["nonzero"], case["angle"]
            assert hashlib.sha1(got.tobytes()).hexdigest() == want["sha1"], case["angle"]


_TILES = Path(__file__).resolve().parents[1] / "oracles" / "recast_tile_raster.json"


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_tile_grids_match_recast(mesh):
    """Tile + border grids with the whole mesh's triangles: triangles outside are
    skipped and those crossing the grid's sides clipped exactly as Recast does
    (digests from tests/oracles/make_recast_tile_raster.mjs, run on Recast itself)."""
    ref = json.loads(_TILES.read_text())["meshes"][mesh]
    man, stages = stage_dump(mesh, "watershed")
    verts, tris = stages["input"]["verts"], stages["input"]["tris"]
    areas = stages["heightfield_rasterized"]["tri_areas"]
    for tile in ref["tiles"]:
        hf = rasterize_triangles(
            verts, tris, areas, width=tile["width"], height=tile["height"],
            bmin=tile["bmin"], bmax=tile["bmax"], cs=ref["cs"], ch=ref["ch"],
            flag_merge_threshold=ref["walkableClimb"],
        )  # fmt: skip
        assert hf.span_count == tile["spans"], tile["tile"]
        got = {
            "col_start": hf.col_start.astype("<u4"),
            "smin": hf.smin.astype("<u2"),
            "smax": hf.smax.astype("<u2"),
            "area": hf.area,
        }
        for name, arr in got.items():
            assert hashlib.sha1(arr.tobytes()).hexdigest() == tile["sha1"][name], (
                tile["tile"],
                name,
            )


def test_triangle_on_the_top_plane_keeps_one_cell():
    # Recast clamps the span to the bounds' height, then keeps it at least one
    # cell high: a flat triangle exactly on the top plane becomes [top, top + 1]
    v = np.array([(0, 8, 0), (1, 8, 0), (0, 8, 1)], np.float32)
    hf = _raster(v, [(0, 1, 2)], [63], width=8, height=8, bmax=(8, 8, 8), ch=0.5)
    assert _spans(hf) == {(0, 0): [(16, 17, 63)]}
