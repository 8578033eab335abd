"""Static ECM: hand-made cases and the Boost sweep against navkit's own incremental build."""

import numpy as np
import pytest
from scenes import random_scene

from navkit.ecm import CorridorMap, map_difference

RECT = [[0, 0], [10, 0], [10, 6], [0, 6]]


def test_empty_rectangle_medial_axis():
    m = CorridorMap.from_polygons(RECT)
    v, r, e, _ = m.medial_axis()
    # spine y=3 from x=3 to x=7 plus four diagonals to the corners
    key = {tuple(np.round(p, 9)) for p in v}
    assert key == {(0, 0), (10, 0), (10, 6), (0, 6), (3, 3), (7, 3)}
    assert len(e) == 5
    assert r[np.argmin(np.hypot(*(v - [3, 3]).T))] == pytest.approx(3.0)
    assert m.clearance_at([5, 1]) == pytest.approx(1.0)


def test_point_obstacle_bisectors_and_clearance():
    m = CorridorMap.from_polygons([[-10, -10], [10, -10], [10, 10], [-10, 10]], [[[0, 0]]])
    v, r, e, _ = m.medial_axis()
    # every vertex is as far from the point as from the boundary
    for p, c in zip(v, r):
        dwall = min(p[0] + 10, 10 - p[0], p[1] + 10, 10 - p[1])
        assert c == pytest.approx(min(dwall, np.hypot(*p)), abs=1e-9)
        assert np.hypot(*p) >= c - 1e-9
    # parabola vertices: the bisector of the point and the wall x=10 crosses y=0 at x=5
    q, c = m.nearest_medial_point([5.2, 0.0])
    assert q == pytest.approx([5.0, 0.0], abs=1e-3)
    assert c == pytest.approx(5.0, abs=1e-3)


def test_vertices_store_left_right_closest_points():
    m = CorridorMap.from_polygons(RECT, [[[4, 2], [6, 2], [6, 4], [4, 4]]])
    v, r, _, _ = m.medial_axis()
    for i in range(len(v)):
        if r[i] > 0:
            cps = m.closest_points(i)
            assert len(cps) >= 2
            assert np.allclose(np.hypot(*(cps - v[i]).T), r[i], atol=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_boost_equals_incremental(seed):
    b, obs, _ = random_scene(seed, 15, 40, 30)
    m1 = CorridorMap.from_polygons(b, obs)
    m2 = CorridorMap.from_polygons(b, obs, use_library=False)
    assert map_difference(m1, m2) == []
    m1.check()
    m2.check()


def test_medial_axis_vertices_are_empty_circles():
    b, obs, _ = random_scene(42, 20, 40, 30)
    m = CorridorMap.from_polygons(b, obs)
    v, r, _, _ = m.medial_axis()
    segs = [np.asarray(o, float) for o in obs] + [np.asarray(b, float)]
    for p, c in zip(v, r):
        d = min(_dist_to_ring(p, s) for s in segs)
        # inputs are snapped to a grid of step extent * 2**-28 (see module docs)
        assert d == pytest.approx(c, abs=40 * 2.0**-27)


def _dist_to_ring(p, ring):
    if len(ring) == 1:
        return float(np.hypot(*(p - ring[0])))
    a = ring
    b = np.roll(ring, -1, axis=0) if len(ring) > 2 else ring[::-1]
    d = b - a
    t = np.clip(((p - a) * d).sum(1) / (d * d).sum(1), 0, 1)
    return float(np.min(np.hypot(*(a + t[:, None] * d - p).T)))
