"""The add path's float32 emulation in Python floats equals numpy's float32 arithmetic:
obstacle bounds (``bounds_lists`` vs ``obstacle_bounds``) and the tile coordinate of a
bound (``_tile_floor`` vs ``floor(float32(a - o) / float32 t)``, Detour's queryTiles)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from navkit.tilecache.obstacles import (
    BOX,
    CYLINDER,
    ORIENTED_BOX,
    Obstacle,
    bounds_lists,
    obstacle_bounds,
    rot_aux,
)
from navkit.tilecache.update import _tile_floor

f32 = np.float32
_coord = st.floats(-2000, 2000, allow_nan=False, width=32)
_size = st.floats(0.0009765625, 100, allow_nan=False, width=32)
_Z2 = np.zeros(2, np.float32)
_NOPTS = np.zeros((0, 2), np.float32)


@settings(max_examples=400, deadline=None)
@given(x=_coord, y=_coord, z=_coord, r=_size, h=_size, kind=st.sampled_from([0, 1, 2]))
def test_bounds_lists_equal_obstacle_bounds(x, y, z, r, h, kind):
    a = np.array([x, y, z], np.float32)
    if kind == CYLINDER:
        ob = Obstacle(CYLINDER, a, np.array([r, h, 0], np.float32), _Z2, _NOPTS, 0)
    elif kind == BOX:
        ob = Obstacle(BOX, a, a + np.array([r, h, r], np.float32), _Z2, _NOPTS, 0)
    else:
        ob = Obstacle(ORIENTED_BOX, a, np.array([r, h, r], np.float32), rot_aux(0.3), _NOPTS, 0)
    b0, b1 = obstacle_bounds(ob)
    l0, l1 = bounds_lists(ob)
    assert l0 == b0.tolist() and l1 == b1.tolist()


@settings(max_examples=600, deadline=None)
@given(
    o=_coord,
    t=st.floats(0.0625, 100, allow_nan=False, width=32),
    k=st.integers(-200, 200),
    off=st.sampled_from([0.0, 1e-7, -1e-7, 1e-4, -1e-4, 0.5]),
    ulps=st.integers(-3, 3),
)
def test_tile_floor_equals_float32(o, t, k, off, ulps):
    # a bound at (or a few float32 ulps around) a tile border, where rounding matters
    a = f32(f32(o) + f32(k) * f32(t) + f32(off))
    for _ in range(abs(ulps)):
        a = np.nextafter(a, f32(math.copysign(1e30, ulps)), dtype=np.float32)
    want = math.floor((f32(a) - f32(o)) / f32(t))
    assert _tile_floor(float(a) - float(f32(o)), float(f32(t))) == want
