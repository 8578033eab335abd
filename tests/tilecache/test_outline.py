"""Obstacle outlines (for drawing) match what the rasterization marks; handle and tile listings."""

from __future__ import annotations

import numpy as np
import pytest
from _tc_cases import peer_tilecache
from hypothesis import given, settings
from hypothesis import strategies as st

from navkit.tilecache import TileCache
from navkit.tilecache.obstacles import (
    BOX,
    CYLINDER,
    ORIENTED_BOX,
    PRISM,
    Obstacle,
    mark_obstacle,
    obstacle_outline,
    rot_aux,
)

CS = 0.25


def _signed_distance(p: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """Signed distance of points (n, 2) to a convex polygon (> 0 inside), either winding."""
    area = np.sum(poly[:, 0] * np.roll(poly[:, 1], -1) - np.roll(poly[:, 0], -1) * poly[:, 1])
    if area < 0:
        poly = poly[::-1]
    d = np.full(len(p), np.inf)
    for a, b in zip(poly, np.roll(poly, -1, axis=0)):
        e = b - a
        n = np.array([-e[1], e[0]]) / np.hypot(*e)  # inward normal of a CCW polygon
        d = np.minimum(d, (p - a) @ n)
    return d


def _marked(ob: Obstacle) -> tuple[np.ndarray, np.ndarray]:
    """Cell points (x, z) * cs of a flat 80 x 80 layer at the origin, and which got marked."""
    heights = np.full((80, 80), 4, np.uint8)
    areas = np.full((80, 80), 63, np.uint8)
    mark_obstacle(heights, areas, np.zeros(3, np.float32), CS, 0.2, ob)
    z, x = np.mgrid[0:80, 0:80]
    pts = np.stack([x.ravel(), z.ravel()], axis=1) * CS
    return pts, areas.ravel() == 0


def _shape(kind: int, a, b, rot=(0.0, 0.0), pts=((0.0, 0.0),)[:0]) -> Obstacle:
    return Obstacle(kind, np.array(a, np.float32), np.array(b, np.float32),
                    np.array(rot, np.float32), np.array(pts, np.float32).reshape(-1, 2), 0)  # fmt: skip


@settings(deadline=None, max_examples=60)
@given(
    st.floats(6.0, 14.0), st.floats(6.0, 14.0), st.floats(0.5, 4.0), st.floats(0.5, 4.0),
    st.floats(-3.2, 3.2),
)  # fmt: skip
def test_oriented_box_outline_bounds_the_marked_cells(cx, cz, hx, hz, angle):
    """Detour marks cell points within half + 0.5 cell of the centre in the box's frame:
    every marked point lies inside the outline grown by a cell, every point a cell
    inside the outline is marked (a wrong rotation sense fails this)."""
    ob = _shape(ORIENTED_BOX, (cx, 0.0, cz), (hx, 5.0, hz), rot_aux(angle))
    pts, marked = _marked(ob)
    d = _signed_distance(pts, obstacle_outline(ob))
    assert marked.any()
    assert (d[marked] > -CS * 0.75).all()
    assert marked[d > CS * 0.75].all()


@pytest.mark.parametrize(
    "ob",
    [
        _shape(CYLINDER, (10.0, 0.0, 9.0), (3.0, 5.0, 0.0)),
        _shape(BOX, (4.0, 0.0, 6.0), (12.0, 5.0, 9.5)),
        _shape(PRISM, (0.0, 0.0, 0.0), (0.0, 5.0, 0.0), pts=[(3, 3), (15, 5), (7, 14)]),
    ],
)
def test_other_outlines_bound_the_marked_cells(ob):
    pts, marked = _marked(ob)
    d = _signed_distance(pts, obstacle_outline(ob, segments=256))
    assert marked.any()
    assert (d[marked] > -CS * 1.5).all()
    assert marked[d > CS * 1.5].all()


def test_handles_and_touched_tiles_follow_adds_and_removals():
    tc = TileCache.from_recast(peer_tilecache("dungeon"))
    assert tc.obstacle_handles() == [] and tc.touched_tiles() == []
    h1 = tc.add_cylinder((-7.1, -0.3, -3.76), 1.0, 2.0)
    h2 = tc.add_cylinder((18.13, 9.7, -4.01), 1.0, 2.0)
    assert tc.obstacle_handles() == [h1, h2]
    pending = tc.touched_tiles(h1)  # before the update: from the shape's bounds
    changes = tc.update()
    assert tc.touched_tiles(h1) == pending
    assert set(changes.rebuilt) == set(tc.touched_tiles())
    tc.remove(h1)
    assert tc.obstacle_handles() == [h2]
    assert tc.touched_tiles() == tc.touched_tiles(h2)
