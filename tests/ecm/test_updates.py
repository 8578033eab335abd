"""Local updates against the rebuild oracle, bad input and rollback."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scenes import random_obstacle, random_scene

from navkit.ecm import CorridorMap, map_difference
from navkit.ecm import _index as X
from navkit.errors import BuildError, InputError, StaleHandleError

RECT = [[0, 0], [10, 0], [10, 6], [0, 6]]


def _random_ops(m, rng, steps, oracle_every=1):
    for step in range(steps):
        hs = [h for h in m.obstacles if h]
        op = rng.choice(["ins", "rem", "mov"])
        try:
            if op == "rem" and hs:
                m.remove(int(rng.choice(hs)))
            elif op == "mov" and hs:
                m.move(int(rng.choice(hs)), offset=rng.uniform(-1, 1, 2) * 0.8)
            else:
                kind = rng.choice(["poly", "seg", "point"])
                m.insert_polygon(
                    random_obstacle(rng, *rng.uniform([2, 2], [38, 28]), 1.2, kind=kind)
                )
        except InputError:
            continue  # overlapping placement: rejected, map unchanged
        m.check()
        if step % oracle_every == 0:
            diff = map_difference(m, m.rebuilt())
            assert diff == [], (step, op, diff[:5])


@pytest.mark.parametrize("seed", range(8))
def test_random_updates_equal_rebuild(seed):
    b, obs, _ = random_scene(seed, 12, 40, 30)
    m = CorridorMap.from_polygons(b, obs)
    _random_ops(m, np.random.default_rng(seed + 100), 10)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.floats(1, 9), st.floats(1, 5)), min_size=1, max_size=6, unique=True))
def test_point_insert_then_delete_all(points):
    m = CorridorMap.from_polygons(RECT)
    empty = CorridorMap.from_polygons(RECT)
    hs = []
    for p in points:
        try:
            hs.append(m.insert_point(p).handle)
        except InputError:
            continue
        assert map_difference(m, m.rebuilt()) == []
    for h in hs:
        m.remove(h)
        assert map_difference(m, m.rebuilt()) == []
    assert map_difference(m, empty) == []


def test_update_reports_local_changes():
    b, obs, _ = random_scene(3, 40, 100, 60)
    m = CorridorMap.from_polygons(b, obs)
    v, r, _, _ = m.medial_axis()
    nv = len(v)
    c = v[np.argmax(np.where(r > 1.5, -np.hypot(*(v - [50, 30]).T), -np.inf))]
    rep = m.insert_polygon(c + [[-0.5, -0.5], [0.5, -0.5], [0, 0.4]])
    assert rep.touched_vertices and rep.touched_edges
    assert len(rep.touched_vertices) < nv / 4  # only the neighbourhood changed
    rep2 = m.remove(rep.handle)
    assert rep2.handle == rep.handle
    assert map_difference(m, CorridorMap.from_polygons(b, obs)) == []


def test_bad_input():
    m = CorridorMap.from_polygons(RECT, [[[4, 2], [5, 2], [5, 3]]])
    with pytest.raises(InputError):  # self-intersecting (bow tie)
        m.insert_polygon([[1, 1], [2, 2], [2, 1], [1, 2]])
    with pytest.raises(InputError):  # overlaps an obstacle
        m.insert_polygon([[4.6, 1.5], [6, 1.5], [6, 2.5], [4.6, 2.5]])
    with pytest.raises(InputError):  # crosses the boundary
        m.insert_segment([9, 3], [11, 3])
    with pytest.raises(InputError):  # outside the boundary
        m.insert_point([20, 20])
    with pytest.raises(InputError):
        m.insert_point([np.nan, 1])
    with pytest.raises(InputError):  # zero-area polygon
        m.insert_polygon([[1, 1], [2, 1], [3, 1]])
    with pytest.raises(StaleHandleError):
        m.remove(999)
    with pytest.raises(StaleHandleError):
        m.remove(0)  # the boundary is not removable
    before = m.rebuilt()
    assert map_difference(m, before) == []


def test_cleaning():
    m = CorridorMap.from_polygons(RECT)
    # repeated and collinear corners are dropped; a 2-corner polygon is a segment
    h = m.insert_polygon([[2, 2], [2, 2], [3, 2], [4, 2], [4, 3]]).handle
    assert m.obstacles[h]["ring"].shape[0] == 3
    h2 = m.insert_polygon([[6, 2], [7, 3], [7, 3]]).handle
    assert m.obstacles[h2]["kind"] == "segment"
    # obstacles fully outside the boundary are dropped at build time and listed
    m2 = CorridorMap.from_polygons(RECT, [[[20, 20], [21, 20], [21, 21]], [[5, 3]]])
    assert len(m2.dropped) == 1 and len(m2.obstacles) == 2
    assert map_difference(m, m.rebuilt()) == []


def test_huge_coordinates_are_relative_to_the_boundary():
    off = np.array([1e12, -3e11])
    m = CorridorMap.from_polygons(np.asarray(RECT) + off, [np.array([[5, 3]]) + off])
    v, r, _, _ = m.medial_axis()
    assert np.all(np.abs(v - off) < 20)
    p = m.find_path(off + [1, 1], off + [9, 5], clearance=0.5)
    assert p is not None and p.length > 8


def test_failed_update_rolls_back(monkeypatch):
    b, obs, _ = random_scene(5, 10, 40, 30)
    m = CorridorMap.from_polygons(b, obs)
    ref = m.rebuilt()

    real = X.insert_prepare

    def boom(*a, **k):
        real(*a, **k)  # the index is half changed...
        raise RuntimeError("injected")  # ...when the update fails

    monkeypatch.setattr(X, "insert_prepare", boom)
    with pytest.raises(BuildError):
        m.insert_point([1.0, 1.0])
    m.check()
    assert map_difference(m, ref) == []
    h = [h for h in m.obstacles if h][0]
    m.remove(h)  # the map still works after the rollback
    assert map_difference(m, m.rebuilt()) == []


@pytest.mark.parametrize("seed", range(3))
def test_degenerate_lattice_scenes(seed):
    """Axis-aligned squares, segments and points on an integer lattice: many
    co-circular sites (vertices of degree 4 and more)."""
    rng = np.random.default_rng(seed)
    cells = rng.permutation([(x, y) for x in range(2, 19, 3) for y in range(2, 11, 3)])[:8]
    obs = []
    for x, y in cells:
        k = rng.integers(3)
        if k == 0:
            obs.append(np.array([[x, y], [x + 1, y], [x + 1, y + 1], [x, y + 1]], float))
        elif k == 1:
            obs.append(np.array([[x, y]], float))
        else:
            obs.append(np.array([[x, y], [x + 1, y]], float))
    bnd = [[0, 0], [20, 0], [20, 12], [0, 12]]
    m = CorridorMap.from_polygons(bnd, obs)
    assert map_difference(m, CorridorMap.from_polygons(bnd, obs, use_library=False)) == []
    for h in [h for h in m.obstacles if h][:4]:
        if rng.random() < 0.5:
            m.move(h, offset=[1, 0])
        else:
            m.remove(h)
        assert map_difference(m, m.rebuilt()) == []


def test_obstacle_containing_or_inside_another_is_rejected():
    m = CorridorMap.from_polygons(RECT, [[[4, 2], [5, 2], [5, 3]], [[7.0, 3.0]]])
    ref = m.rebuilt()
    with pytest.raises(InputError):  # a square around the point obstacle
        m.insert_polygon([[6.5, 2.5], [7.5, 2.5], [7.5, 3.5], [6.5, 3.5]])
    with pytest.raises(InputError):  # a square around the triangle
        m.insert_polygon([[3.5, 1.5], [5.5, 1.5], [5.5, 3.5], [3.5, 3.5]])
    with pytest.raises(InputError):  # a point inside the triangle
        m.insert_point([4.7, 2.3])
    m.check()
    assert map_difference(m, ref) == []


@pytest.mark.parametrize("seed", range(3))
def test_grid_nearest_equals_brute_force(seed):
    from navkit.ecm import _kernels as K
    from navkit.ecm import _update_kernels as U

    b, obs, _ = random_scene(seed, 20, 40, 30)
    m = CorridorMap.from_polygons(b, obs)
    hs = [h for h in m.obstacles if h]
    for h in hs[:5]:
        m.remove(h)  # dead sites leave the grid
    S = m.sites
    rng = np.random.default_rng(seed)
    for x, y in m._to_local(rng.uniform([-5, -5], [45, 35], (200, 2))):
        s1, d1 = U.grid_nearest(x, y, *S.grid_args(), S.kind, S.ax, S.ay, S.bx, S.by, S.alive)
        s2, d2 = K.nearest_site(x, y, *S.kernel_args())
        assert d1 == d2
        assert s1 == s2


def test_report_says_which_paths_to_replan():
    """An obstacle dropped onto a path's route affects it; one far from the route
    does not, and then every edge of the route is still in the diagram."""
    b, obs, _ = random_scene(6, 30, 60, 40)
    m = CorridorMap.from_polygons(b, obs)
    v, r, _, _ = m.medial_axis()
    wide = v[r > 1.2]
    lo, hi = wide.min(axis=0), wide.max(axis=0)
    p = m.find_path(lo, hi, clearance=0.2)
    assert p is not None
    mid = p.route[len(p.route) // 2]
    on = m.insert_polygon(mid + [[-0.3, -0.3], [0.3, -0.3], [0.0, 0.3]])
    assert on.affects(p)
    m.remove(on.handle)
    p = m.find_path(lo, hi, clearance=0.2)
    dist = np.hypot(*(wide[:, None, :] - p.route[None, :, :]).transpose(2, 0, 1)).min(axis=1)
    far = wide[np.argmax(dist)]
    off = m.insert_point(far)
    assert not off.affects(p)
    assert all(e in m.diagram.edges for e in p.edges)


@pytest.mark.parametrize("op", ["move", "remove"])
def test_failed_move_or_remove_rolls_back(monkeypatch, op):
    """A move or removal that fails midway restores every obstacle as it was,
    the moved or removed one included, under its own handle."""
    b, obs, _ = random_scene(7, 10, 40, 30)
    m = CorridorMap.from_polygons(b, obs)
    ref = m.rebuilt()
    h = [h for h in m.obstacles if h][3]
    ring = m.obstacles[h]["ring"].copy()
    real = X.insert_prepare if op == "move" else X.delete_prepare

    def boom(*a, **k):
        real(*a, **k)
        raise RuntimeError("injected")

    monkeypatch.setattr(X, "insert_prepare" if op == "move" else "delete_prepare", boom)
    with pytest.raises(BuildError):
        if op == "move":
            m.move(h, offset=[0.05, 0.0])
        else:
            m.remove(h)
    monkeypatch.undo()
    m.check()
    assert map_difference(m, ref) == []
    assert np.array_equal(m.obstacles[h]["ring"], ring)
    m.move(h, offset=[0.05, 0.0])  # the handle still works
    assert map_difference(m, m.rebuilt()) == []
