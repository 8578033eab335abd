"""The ECM's array index (navkit.ecm._diagram / _index): consistency of the
linked lists and free stacks, growth of every array, and the read views."""

import numpy as np
import pytest
from scenes import random_obstacle, random_scene

from navkit.ecm import CorridorMap, map_difference
from navkit.ecm.corridor_map import _Outside
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
        except (InputError, _Outside):
            continue
        m.remove(rep.handle)
        assert m.diagram.check_index() == []
    assert moved > 20
    assert m.sites.n <= n0 + 8  # one square's block, reused every time
    assert map_difference(m, m.rebuilt()) == []


@pytest.mark.parametrize("seed", range(4))
def test_local_search_finds_what_a_full_scan_finds(seed):
    """An insertion looks for its conflicting vertices and cut edges by walking
    cells outward from the new points (navkit.ecm._update_kernels.near_elements);
    a scan over every vertex and edge of the diagram must find nothing more."""
    from navkit.ecm import _update_kernels as U

    b, obs, _ = random_scene(seed, 25, 50, 35)
    m = CorridorMap.from_polygons(b, obs)
    d, S = m.diagram, m.sites
    rng = np.random.default_rng(seed)
    compared = 0
    for _ in range(30):
        kind = rng.choice(["poly", "seg", "point"])
        pts = random_obstacle(rng, *rng.uniform([3, 3], [47, 32]), 1.5, kind=kind)
        try:
            h, new, corners = m._write_obstacle(m._validated_ring(pts))
        except (InputError, _Outside):
            continue
        nw = np.asarray(new, np.int64)
        xs = np.r_[S.ax[nw], S.bx[nw][S.kind[nw] == 1]]
        ys = np.r_[S.ay[nw], S.by[nw][S.kind[nw] == 1]]
        box = (xs.min(), xs.max(), ys.min(), ys.max())
        grid = d._grid()
        S.alive[nw] = False
        seeds = np.array(
            [U.grid_nearest(S.ax[p], S.ay[p], *grid, S.kind, S.ax, S.ay, S.bx, S.by, S.alive)[0]
             if S.kind[p] == 0 else -1 for p in new], np.int64,
        )  # fmt: skip
        S.alive[nw] = True
        nv, ne = d.nv, d.next_e
        vnear, enear = U.near_elements(
            seeds, *box, d.tol, d.vx, d.vy, d.vr, d.valive, d.vdeg, d.vsite, d.veh, d.enx,
            d.ev, d.es, d.ealive, d.shead, d.rv, d.rnext, S.kind.shape[0], nv, ne,
        )  # fmt: skip
        sk = (S.kind, S.ax, S.ay, S.bx, S.by)
        kv = U.conflict_vertices(nw, *box, vnear, d.vx, d.vy, d.vr, d.valive, d.tol, *sk)
        kv_all = U.conflict_vertices(
            nw, *box, np.arange(nv, dtype=np.int64), d.vx, d.vy, d.vr, d.valive, d.tol, *sk
        )
        assert np.array_equal(kv, kv_all)
        vkill = np.zeros(max(nv, 1), np.bool_)
        vkill[kv] = True
        args = (d.ev, d.es, d.ealive, vkill, d.vx, d.vy, d.vr, d.tol, *sk)
        cut, rest = U.cut_edge_candidates(nw, *box, enear, *args)
        cut_all, rest_all = U.cut_edge_candidates(nw, *box, np.arange(ne, dtype=np.int64), *args)
        assert np.array_equal(cut, cut_all)
        hit = U.cut_edges_exact(
            rest, nw, d.ev, d.es, d.vx, d.vy, d.vr, d.tol, *sk, S.e0, S.e1, S.side
        )
        hit_all = U.cut_edges_exact(
            rest_all, nw, d.ev, d.es, d.vx, d.vy, d.vr, d.tol, *sk, S.e0, S.e1, S.side
        )
        assert set(rest[hit].tolist()) == set(rest_all[hit_all].tolist())
        d.insert_sites(new, corners)
        compared += 1
    assert compared > 10
    assert map_difference(m, m.rebuilt()) == []
