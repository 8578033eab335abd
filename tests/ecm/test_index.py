"""The ECM's array index (navkit.ecm._diagram / _index): consistency of the
linked lists and free stacks, growth of every array, and the read views."""

import numpy as np
import pytest
from scenes import random_obstacle, random_scene

from navkit.ecm import CorridorMap, map_difference
from navkit.errors import InputError


def _ring(n, r=10.0, c=(20.0, 20.0)):
    a = np.arange(n) * 2 * np.pi / n
    return np.stack([c[0] + r * np.cos(a), c[1] + r * np.sin(a)], axis=1)


def test_index_consistent_after_updates():
    b, obs, _ = random_scene(11, 15, 40, 30)
    m = CorridorMap.from_polygons(b, obs)
    assert m.diagram.check_index() == []
    rng = np.random.default_rng(5)
    for _ in range(25):
        hs = [h for h in m.obstacles if h]
        try:
            if rng.random() < 0.4 and hs:
                m.move(int(rng.choice(hs)), offset=rng.uniform(-1, 1, 2))
            elif rng.random() < 0.5 and hs:
                m.remove(int(rng.choice(hs)))
            else:
                m.insert_polygon(random_obstacle(rng, *rng.uniform([3, 3], [37, 27]), 1.0))
        except InputError:
            pass
        assert m.diagram.check_index() == []
    assert map_difference(m, m.rebuilt()) == []


def test_arrays_grow_from_tiny_capacity(monkeypatch):
    """Built by local insertion (no Boost) from an index of 4 vertex slots and
    rows of 2 sites: every array grows, and the 40-gon boundary's update makes
    more vertices than the reserved room, so they are added after growing."""
    from navkit.ecm import _diagram as D

    monkeypatch.setattr(D.Diagram.__init__, "__defaults__", (4, 2))
    inner = [_ring(5, 1.0, (20 + 6 * np.cos(t), 20 + 6 * np.sin(t))) for t in np.arange(6)]
    bnd = _ring(40, 15.0)
    m = CorridorMap.from_polygons(bnd, inner, use_library=False)
    d = m.diagram
    assert d.valive.shape[0] >= 64 and d.vsite.shape[1] >= 4 and d.check_index() == []
    monkeypatch.undo()
    assert map_difference(m, CorridorMap.from_polygons(bnd, inner)) == []
    h = [h for h in m.obstacles if h][0]
    m.remove(h)
    assert d.check_index() == []
    assert map_difference(m, m.rebuilt()) == []


def test_near_regular_polygon_boundary():
    """A 24-gon boundary (corners snapped to the input grid, so its centre is
    nearly equidistant from all 24 edges: many close candidate circles that
    merge) built by local insertion equals the Boost build."""
    m = CorridorMap.from_polygons(_ring(24, 10.0), use_library=False)
    ref = CorridorMap.from_polygons(_ring(24, 10.0))
    assert map_difference(m, ref) == []
    assert m.diagram.check_index() == []


def test_read_views_match_arrays():
    b, obs, _ = random_scene(2, 8, 40, 30)
    m = CorridorMap.from_polygons(b, obs)
    d = m.diagram
    v, r, ids, ed = d.arrays()
    assert len(d.edges) == ed.shape[0]
    for e, (v0, v1, a, bb) in d.edges.items():
        assert a < bb
        assert e in d.vert_edges[v0] and e in d.vert_edges[v1]
        assert e in d.pair_edges.get((bb, a), set())
        assert v0 in d.site_verts[a] and v1 in d.site_verts[bb]
        assert {a, bb} <= set(d.vs[v0])
    with pytest.raises(KeyError):
        d.edges[d.next_e + 5]
    rep = m.insert_point([1.0, 1.0])
    assert rep.touched_vertices and rep.touched_edges
    assert rep.touched_vertices == d.touched_v


def test_site_ids_are_reused():
    """A moved obstacle keeps its site ids, and a removed one's ids go to the next
    insertion of the same size: a map whose obstacles keep moving, or coming and
    going, does not grow, and still equals the rebuild."""
    b, obs, _ = random_scene(4, 15, 40, 30)
    m = CorridorMap.from_polygons(b, obs)
    n0 = m.sites.n
    rng = np.random.default_rng(9)
    square = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])
    moved = 0
    for _ in range(40):
        hs = [h for h in m.obstacles if h]
        h = int(rng.choice(hs))
        sites = list(m.obstacles[h]["sites"])
        try:
            m.move(h, offset=rng.uniform(-0.3, 0.3, 2))
            moved += 1
        except InputError:
            pass
        if len(m.obstacles[h]["ring"]) * 2 == len(sites):
            assert m.obstacles[h]["sites"] == sites
        try:
            rep = m.insert_polygon(square + rng.uniform([3, 3], [37, 27]))
        except InputError:
            continue
        m.remove(rep.handle)
        assert m.diagram.check_index() == []
    assert moved > 20
    assert m.sites.n <= n0 + 8  # one square's block, reused every time
    assert map_difference(m, m.rebuilt()) == []
