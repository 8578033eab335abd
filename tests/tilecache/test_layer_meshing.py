"""The tile cache's layer meshing and obstacle marking on hand-made layers, with slow oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from navkit.errors import BuildError
from navkit.tilecache import obstacles as O
from navkit.tilecache.format import (
    TileCacheLayerHeader,
    TileCacheParams,
    build_tile_cache_layer,
)
from navkit.tilecache.regions import build_tile_cache_regions
from navkit.tilecache.tilemesh import build_layer_tile

f32 = np.float32
PARAMS = TileCacheParams(
    orig=(0.0, 0.0, 0.0), cs=0.3, ch=0.2, width=16, height=16, walkable_height=2.0,
    walkable_radius=0.6, walkable_climb=0.8, max_simplification_error=1.3, max_tiles=4,
    max_obstacles=8,
)  # fmt: skip


def _layer(areas: np.ndarray, heights: np.ndarray | None = None, cons: np.ndarray | None = None):
    h, w = areas.shape
    if heights is None:
        heights = np.zeros((h, w), np.uint8)
    if cons is None:  # connect every walkable neighbour inside the layer
        cons = np.zeros((h, w), np.uint8)
        for z in range(h):
            for x in range(w):
                for d, (dx, dz) in enumerate(((-1, 0), (0, 1), (1, 0), (0, -1))):
                    nx, nz = x + dx, z + dz
                    if 0 <= nx < w and 0 <= nz < h and areas[z, x] and areas[nz, nx]:
                        cons[z, x] |= 1 << d
    hd = TileCacheLayerHeader(
        tx=0, ty=0, tlayer=0, bmin=(0.0, 0.0, 0.0), bmax=(w * 0.3, 2.0, h * 0.3),
        hmin=0, hmax=10, width=w, height=h, minx=0, maxx=w - 1, miny=0, maxy=h - 1,
    )  # fmt: skip
    return build_tile_cache_layer(hd, heights.astype(np.uint8), areas.astype(np.uint8), cons)


def test_open_square_is_one_quad():
    td = build_layer_tile(_layer(np.full((16, 16), 63, np.uint8)), PARAMS)
    assert td is not None and td.poly_count == 1 and td.vert_count == 4
    xs = sorted({round(float(v), 4) for v in td.verts[:, 0]})
    assert xs == [0.0, round(16 * 0.3, 4)]
    assert td.poly_flags.tolist() == [1] and td.poly_area.tolist() == [0]
    assert td.detail_tris.shape[0] == 2 and td.bv_node_count == 0


def test_hole_in_the_middle_and_empty_layer():
    a = np.full((16, 16), 63, np.uint8)
    a[6:10, 6:10] = 0
    td = build_layer_tile(_layer(a), PARAMS)
    assert td is not None
    # the polygons' xz area is the square minus the hole
    area = 0.0
    for i in range(td.poly_count):
        v = td.verts[td.poly_verts[i, : td.poly_vert_count[i]]].astype(np.float64)
        area += 0.5 * abs(
            np.dot(v[:, 0], np.roll(v[:, 2], -1)) - np.dot(v[:, 2], np.roll(v[:, 0], -1))
        )
    assert math.isclose(area, (16 * 16 - 16) * 0.09, rel_tol=1e-5)
    assert build_layer_tile(_layer(np.zeros((16, 16), np.uint8)), PARAMS) is None


def test_too_many_regions_is_a_build_error():
    a = np.zeros((32, 32), np.uint8)
    a[::2, ::2] = 63  # 256 isolated cells: one region each
    regs, n = build_tile_cache_regions(np.zeros_like(a), a, 4)
    assert n == -1
    with pytest.raises(BuildError, match="255 regions"):
        build_layer_tile(_layer(a), PARAMS._replace(width=32, height=32))


def test_regions_split_on_height_steps_and_areas():
    a = np.full((8, 8), 63, np.uint8)
    h = np.zeros((8, 8), np.uint8)
    h[:, 4:] = 10  # a 10-cell step: higher than the climb of 4
    regs, n = build_tile_cache_regions(h, a, 4)
    assert n == 2 and len(set(regs[:, :4].ravel())) == 1 and regs[0, 0] != regs[0, 7]
    a[:, 4:] = 5
    regs, n = build_tile_cache_regions(np.zeros_like(h), a, 4)
    assert n == 2
    regs, n = build_tile_cache_regions(np.zeros_like(h), np.full((8, 8), 63, np.uint8), 4)
    assert n == 1 and (regs == 0).all()


# -- marking, against slow transcriptions of Detour's rules --------------------------------


def _slow_box(heights, orig, cs, ch, bmin, bmax):
    h, w = heights.shape
    ics, ich = f32(1) / f32(cs), f32(1) / f32(ch)
    lo = [math.floor(f32(bmin[i] - orig[i]) * (ich if i == 1 else ics)) for i in range(3)]
    hi = [math.floor(f32(bmax[i] - orig[i]) * (ich if i == 1 else ics)) for i in range(3)]
    out = np.zeros((h, w), bool)
    for z in range(h):
        for x in range(w):
            if lo[0] <= x <= hi[0] and lo[2] <= z <= hi[2] and lo[1] <= heights[z, x] <= hi[1]:
                out[z, x] = True
    return out


def _slow_prism(heights, orig, cs, ch, pts, ymin, ymax):
    h, w = heights.shape
    lo = math.floor(f32(ymin - orig[1]) * (f32(1) / f32(ch)))
    hi = math.floor(f32(ymax - orig[1]) * (f32(1) / f32(ch)))
    out = np.zeros((h, w), bool)
    n = len(pts)
    for z in range(h):
        for x in range(w):
            px = orig[0] + (x + 0.5) * float(f32(cs))
            pz = orig[2] + (z + 0.5) * float(f32(cs))
            s = [
                (pts[(i + 1) % n][0] - pts[i][0]) * (pz - pts[i][1])
                - (pts[(i + 1) % n][1] - pts[i][1]) * (px - pts[i][0])
                for i in range(n)
            ]
            inside = all(v >= 0 for v in s) or all(v <= 0 for v in s)
            if inside and lo <= heights[z, x] <= hi:
                out[z, x] = True
    return out


coord = st.floats(-1.0, 6.0)


@settings(max_examples=60, deadline=None)
@given(
    a=st.tuples(coord, st.floats(-0.5, 1.5), coord),
    d=st.tuples(st.floats(0.05, 4), st.floats(0.05, 2), st.floats(0.05, 4)),
    seed=st.integers(0, 1000),
)
def test_box_marking_equals_slow_rule(a, d, seed):
    rng = np.random.default_rng(seed)
    heights = rng.integers(0, 12, (16, 16)).astype(np.uint8)
    orig = np.array([0.1, 0.2, -0.3], np.float32)
    b0 = np.array(a, np.float32)
    b1 = (b0 + np.array(d, np.float32)).astype(np.float32)
    areas = np.full((16, 16), 63, np.uint8)
    ob = O.Obstacle(O.BOX, b0, b1, np.zeros(2, np.float32), np.zeros((0, 2), np.float32), 0)
    O.mark_obstacle(heights, areas, orig, 0.3, 0.2, ob)
    assert np.array_equal(areas == 0, _slow_box(heights, orig, 0.3, 0.2, b0, b1))


@settings(max_examples=60, deadline=None)
@given(
    c=st.tuples(st.floats(0, 5), st.floats(0, 5)),
    r=st.floats(0.3, 3),
    n=st.integers(3, 8),
    rot=st.floats(0, 6.3),
    seed=st.integers(0, 1000),
)
def test_prism_marking_equals_slow_rule(c, r, n, rot, seed):
    rng = np.random.default_rng(seed)
    heights = rng.integers(0, 12, (16, 16)).astype(np.uint8)
    orig = np.array([0.1, 0.2, -0.3], np.float32)
    ang = rot + 2 * math.pi * np.arange(n) / n
    pts = np.array([(c[0] + r * math.cos(t), c[1] + r * math.sin(t)) for t in ang], np.float32)
    areas = np.full((16, 16), 63, np.uint8)
    ob = O.Obstacle(
        O.PRISM, np.array([0, 0.3, 0], np.float32), np.array([0, 1.5, 0], np.float32),
        np.zeros(2, np.float32), pts, 7,
    )  # fmt: skip
    O.mark_obstacle(heights, areas, orig, 0.3, 0.2, ob)
    want = _slow_prism(heights, orig, 0.3, 0.2, pts.astype(np.float64).tolist(), 0.3, 1.5)
    assert np.array_equal(areas == 7, want)
    assert set(np.unique(areas)) <= {7, 63}


def test_rot_aux_is_half_angle_form():
    for a in (0.0, 0.7, -2.1, 3.0):
        r = O.rot_aux(a)
        assert math.isclose(r[0], -math.sin(a) / 2, abs_tol=1e-6)
        assert math.isclose(r[1], math.cos(a) / 2, abs_tol=1e-6)
