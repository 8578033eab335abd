"""NavMeshQuery: oracles, invariants, local queries and bad input (on Detour's exported navmeshes)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import polygraph
from peer_support import peer_file

from navkit.detour.filter import QueryFilter
from navkit.detour.navmesh import NavMesh
from navkit.detour.query import (
    FAILURE,
    INVALID_PARAM,
    OUT_OF_NODES,
    PARTIAL_RESULT,
    STRAIGHTPATH_ALL_CROSSINGS,
    STRAIGHTPATH_END,
    STRAIGHTPATH_START,
    SUCCESS,
    NavMeshQuery,
)
from navkit.errors import InputError, QueryError, StaleHandleError


@pytest.fixture(scope="module")
def dungeon():
    nm = NavMesh.from_recast(peer_file("dungeon.solo.navmesh.bin"))
    pairs = json.loads(peer_file("dungeon.pairs.json").read_text())["pairs"]
    return nm, NavMeshQuery(nm), pairs


@pytest.fixture(scope="module")
def undulating():
    nm = NavMesh.from_recast(peer_file("undulating.solo.navmesh.bin"))
    pairs = json.loads(peer_file("undulating.pairs.json").read_text())["pairs"]
    return nm, NavMeshQuery(nm), pairs


def _on_corridor(q, corridor, pt, tol=1e-3):
    """xz-distance from pt to the nearest corridor polygon's outline/interior."""
    best = np.inf
    for r in corridor:
        c = q.closest_point_on_poly_boundary(int(r), pt)
        best = min(best, float(np.hypot(c[0] - pt[0], c[2] - pt[2])))
    return best <= tol


# -- oracles ----------------------------------------------------------------------------


def test_astar_cost_never_below_portal_dijkstra(dungeon):
    nm, q, pairs = dungeon
    v = q.view
    checked = 0
    for p in pairs[:120]:
        s, e = np.float32(p["start"]), np.float32(p["end"])
        fp = q.find_path(p["startRef"], p["endRef"], s, e)
        reach = polygraph.reachable(v, p["startRef"], p["endRef"])
        assert reach == (not fp.partial), p["i"]
        if fp.partial:
            continue
        a_cost = polygraph.corridor_midpoint_cost(v, fp.polys, s, e)
        d_cost = polygraph.portal_graph_cost(v, p["startRef"], p["endRef"], s, e)
        assert a_cost >= d_cost - 1e-3
        checked += 1
    assert checked > 50


def test_corridor_is_linked_chain(dungeon):
    nm, q, pairs = dungeon
    for p in pairs[:200]:
        fp = q.find_path(p["startRef"], p["endRef"], p["start"], p["end"])
        assert fp.polys[0] == p["startRef"]
        for a, b in zip(fp.polys[:-1], fp.polys[1:]):
            assert int(b) in [r for r, *_ in nm.links_of(int(a))]


def test_raycast_matches_brute_force_walls(undulating):
    """undulating is single-level: the first wall crossed in xz is the one Detour hits."""
    nm, q, pairs = undulating
    walls = polygraph.wall_edges(q.view)
    n = 0
    for p in pairs[:300]:
        s, e = np.float32(p["start"]), np.float32(p["end"])
        rc = q.raycast(p["startRef"], s, e)
        t = polygraph.first_wall_hit(walls, s, e)
        if t is None:
            assert rc.t == np.inf
        else:
            assert rc.t == pytest.approx(t, abs=1e-4)
            n += 1
        if rc.t == np.inf:
            assert rc.path[-1] == q.find_nearest_poly(e).ref or len(rc.path) > 0
    assert n > 50


def test_random_points_uniform_by_area(dungeon):
    nm, q, _ = dungeon
    v = q.view
    rng = np.random.default_rng(7)
    n = 12000
    counts = np.zeros(v.poly_ref.shape[0])
    r2i = {int(r): i for i, r in enumerate(v.poly_ref)}
    for _ in range(n):
        rp = q.find_random_point(rng=rng)
        counts[r2i[rp.ref]] += 1
        assert q.get_poly_height(rp.ref, rp.point) == pytest.approx(float(rp.point[1]), abs=1e-4)
    area = np.zeros_like(counts)
    for p in range(len(area)):
        pv = v.verts[v.poly_verts[p, : v.poly_nverts[p]]].astype(np.float64)
        x, z = pv[:, 0], pv[:, 2]
        area[p] = 0.5 * abs(np.dot(x, np.roll(z, -1)) - np.dot(z, np.roll(x, -1)))
    expected = n * area / area.sum()
    keep = expected >= 5
    chi2 = float((((counts - expected) ** 2) / expected)[keep].sum())
    df = int(keep.sum()) - 1
    assert chi2 < df + 5 * np.sqrt(2 * df), (chi2, df)


def test_random_points_seedable(dungeon):
    _, q, _ = dungeon
    a = q.find_random_point(rng=123)
    b = q.find_random_point(rng=np.random.default_rng(123))
    assert a.ref == b.ref and np.array_equal(a.point, b.point)


# -- invariants -------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_straight_path_points_lie_on_corridor(seed):
    nm = NavMesh.from_recast(peer_file("dungeon.solo.navmesh.bin"))
    q = _QCACHE.setdefault("dungeon", NavMeshQuery(nm))
    rng = np.random.default_rng(seed)
    a = q.find_random_point(rng=rng)
    b = q.find_random_point(rng=rng)
    path = q.path(a.point, b.point)
    assert path.length >= float(np.linalg.norm(b.point - a.point)) * (1 - 1e-5) or not path.complete
    for pt in path.points:
        assert _on_corridor(q, path.polys, pt)
    assert np.allclose(path.points[0], a.point, atol=1e-4)


_QCACHE: dict = {}


def test_straight_path_options_and_limits(dungeon):
    nm, q, pairs = dungeon
    p = next(p for p in pairs if p["complete"] and p["pathPolys"] > 8)
    fp = q.find_path(p["startRef"], p["endRef"], p["start"], p["end"])
    base = q.find_straight_path(p["start"], p["end"], fp.polys)
    allc = q.find_straight_path(p["start"], p["end"], fp.polys, options=STRAIGHTPATH_ALL_CROSSINGS)
    assert len(allc.points) >= len(base.points)
    for pt in base.points:  # every corner is still on the crossing path
        assert np.min(np.abs(allc.points - pt).max(axis=1)) < 1e-4
    assert base.flags[0] == STRAIGHTPATH_START and base.flags[-1] == STRAIGHTPATH_END
    short = q.find_straight_path(p["start"], p["end"], fp.polys, max_points=2)
    assert len(short.points) == 2 and short.status & (1 << 4)
    assert np.array_equal(short.points, base.points[:2])


# -- local queries ----------------------------------------------------------------------


def test_polys_around_circle_sorted_and_touching(dungeon):
    nm, q, pairs = dungeon
    p = pairs[0]
    res = q.find_polys_around_circle(p["startRef"], p["start"], 6.0)
    assert res.refs[0] == p["startRef"] and res.parents[0] == 0
    assert np.all(np.diff(res.costs) >= 0)
    assert set(res.parents[1:].tolist()) <= set(res.refs.tolist())
    small = q.find_polys_around_circle(p["startRef"], p["start"], 6.0, max_result=2)
    assert small.refs.tolist() == res.refs[:2].tolist() and small.status & (1 << 4)
    shape = np.array(p["start"]) + np.array([[-3, 0, -3], [3, 0, -3], [3, 0, 3], [-3, 0, 3]])
    sh = q.find_polys_around_shape(p["startRef"], shape[::-1])
    assert sh.refs[0] == p["startRef"] and len(sh.refs) >= 1


def test_local_neighbourhood_and_walls(dungeon):
    nm, q, pairs = dungeon
    p = pairs[3]
    nb = q.find_local_neighbourhood(p["startRef"], p["start"], 3.0)
    assert nb.refs[0] == p["startRef"] and len(set(nb.refs.tolist())) == len(nb.refs)
    v = q.view
    pi = q._poly(p["startRef"])
    walls = q.get_poly_wall_segments(p["startRef"])
    n_wall = sum(int(v.poly_neis[pi, j]) == 0 for j in range(int(v.poly_nverts[pi])))
    assert len(walls.segments) == n_wall and not walls.refs.any()
    allseg = q.get_poly_wall_segments(p["startRef"], store_portals=True)
    assert len(allseg.segments) == int(v.poly_nverts[pi])


def test_distance_to_wall_and_move(dungeon):
    nm, q, pairs = dungeon
    for p in pairs[:30]:
        s = np.float32(p["start"])
        w = q.find_distance_to_wall(p["startRef"], s, 5.0)
        assert 0 <= w.distance <= 5.0 + 1e-6
        if w.distance < 5.0:
            assert np.hypot(*(w.position - s)[[0, 2]]) == pytest.approx(w.distance, abs=1e-4)
            assert np.linalg.norm(w.normal) == pytest.approx(1.0, abs=1e-5)
        m = q.move_along_surface(p["startRef"], s, s + np.float32([0.05, 0, 0.05]))
        assert m.visited[0] == p["startRef"]
        mv = q.move_along_surface(p["startRef"], s, np.float32(p["end"]), max_visited=256)
        assert _on_corridor(q, mv.visited, mv.position)


def test_point_queries(dungeon):
    nm, q, pairs = dungeon
    p = pairs[5]
    s = np.float32(p["start"])
    cp, over = q.closest_point_on_poly(p["startRef"], s + np.float32([0, 1.5, 0]))
    assert over and cp[1] == pytest.approx(s[1], abs=1e-3)
    assert q.get_poly_height(p["startRef"], s) == pytest.approx(float(s[1]), abs=1e-4)
    assert q.get_poly_height(p["startRef"], s + np.float32([1000, 0, 0])) is None
    refs, status = q.query_polygons(s, (2, 4, 2))
    assert p["startRef"] in refs.tolist() and status == SUCCESS
    refs1, status1 = q.query_polygons(s, (50, 50, 50), max_polys=3)
    assert len(refs1) == 3 and status1 & (1 << 4)


# -- bad input --------------------------------------------------------------------------


def test_bad_input(dungeon):
    nm, q, pairs = dungeon
    p = pairs[0]
    with pytest.raises(InputError):
        q.find_nearest_poly([np.nan, 0, 0])
    with pytest.raises(InputError):
        q.find_nearest_poly([0, 0])
    with pytest.raises(InputError):
        q.path([0, np.inf, 0], p["end"])
    with pytest.raises(InputError):
        q.paths(np.zeros((2, 3)), np.zeros((3, 3)))
    far = q.find_nearest_poly([1e4, 0, 1e4])
    assert far.ref == 0 and not far.found
    with pytest.raises(QueryError):
        q.path([1e4, 0, 1e4], p["end"])
    b = q.paths(np.float32([[1e4, 0, 1e4], p["start"]]), np.float32([p["end"], p["end"]]))
    assert b.ok.tolist() == [False, True]
    # stale / invalid refs
    salt, tile, poly = nm.decode_ref(p["startRef"])
    stale = nm.encode_ref(salt + 1, tile, poly)
    assert not q.is_valid_poly_ref(stale)
    assert q.find_path(stale, p["endRef"], p["start"], p["end"]).status == FAILURE | INVALID_PARAM
    assert q.raycast(stale, p["start"], p["end"]).status & FAILURE
    assert q.find_polys_around_circle(stale, p["start"], 3).status & FAILURE
    with pytest.raises(StaleHandleError):
        q.closest_point_on_poly(stale, p["start"])
    assert q.find_straight_path(p["start"], p["end"], [0]).status & FAILURE
    with pytest.raises(InputError):
        QueryFilter(include_flags=0x10000)


def test_float32_fast_paths_check_finiteness_and_strides(dungeon):
    """float32 (3,) arrays skip the Python conversion: non-finite ones must still raise,
    and strided views (which the kernels would misread) must be copied, not passed."""
    nm, q, pairs = dungeon
    p = pairs[3]
    s, e = np.float32(p["start"]), np.float32(p["end"])
    ref = q.raycast(p["startRef"], s, e)
    for bad in ([np.nan, 0, 0], [0, np.inf, 0], [0, 0, -np.inf]):
        with pytest.raises(InputError, match="start_pos"):
            q.raycast(p["startRef"], np.float32(bad), e)
        with pytest.raises(InputError, match="end_pos"):
            q.raycast(p["startRef"], s, np.float32(bad))
        with pytest.raises(InputError):
            q.find_nearest_poly(np.float32(bad))
    cols = np.zeros((3, 4), np.float32)
    cols[:, 1], cols[:, 3] = s, e
    hit = q.raycast(p["startRef"], cols[:, 1], cols[:, 3])
    assert hit.t == ref.t and hit.hit_edge_index == ref.hit_edge_index
    assert q.find_nearest_poly(cols[:, 1]).ref == q.find_nearest_poly(s).ref
    assert np.array_equal(q.path(cols[:, 1], cols[:, 3]).points, q.path(s, e).points)


def test_filter_excluding_everything(dungeon):
    nm, q, pairs = dungeon
    p = pairs[0]
    none = QueryFilter(include_flags=0)
    assert q.find_nearest_poly(p["start"], filter=none).ref == 0
    assert q.find_random_point(filter=none, rng=1).ref == 0
    with pytest.raises(QueryError):
        q.path(p["start"], p["end"], filter=none)
    ex = QueryFilter(exclude_flags=1)  # every poly has flag 1
    fp = q.find_path(p["startRef"], p["endRef"], p["start"], p["end"], filter=ex)
    assert fp.polys.tolist() == [p["startRef"]] and fp.partial


def test_area_costs_change_paths_consistently(dungeon):
    nm, q, pairs = dungeon
    p = next(p for p in pairs if p["complete"] and p["pathPolys"] > 5)
    f = QueryFilter()
    f.set_area_cost(0, 2.0)  # every polygon is area 0: costs double, corridor unchanged
    a = q.find_path(p["startRef"], p["endRef"], p["start"], p["end"])
    b = q.find_path(p["startRef"], p["endRef"], p["start"], p["end"], filter=f)
    assert b.ok and b.polys[0] == a.polys[0] and b.polys[-1] == a.polys[-1]
    assert f.get_cost([0, 0, 0], [3, 4, 0], 0) == pytest.approx(10.0)


def test_node_pool_exhaustion_gives_partial(dungeon):
    nm, _, pairs = dungeon
    q = NavMeshQuery(nm, max_nodes=4)
    p = next(p for p in pairs if p["complete"] and p["pathPolys"] > 10)
    fp = q.find_path(p["startRef"], p["endRef"], p["start"], p["end"])
    assert fp.status & OUT_OF_NODES and fp.status & PARTIAL_RESULT and fp.ok
    assert 1 <= len(fp.polys) <= 4


def test_max_path_truncates(dungeon):
    nm, q, pairs = dungeon
    p = next(p for p in pairs if p["complete"] and p["pathPolys"] > 10)
    full = q.find_path(p["startRef"], p["endRef"], p["start"], p["end"])
    cut = q.find_path(p["startRef"], p["endRef"], p["start"], p["end"], max_path=5)
    assert cut.polys.tolist() == full.polys[:5].tolist() and cut.status & (1 << 4)


def test_sliced_partial_finalize(dungeon):
    nm, q, pairs = dungeon
    p = next(p for p in pairs if p["complete"] and p["pathPolys"] > 10)
    q.init_sliced_find_path(p["startRef"], p["endRef"], p["start"], p["end"])
    q.update_sliced_find_path(3)
    existing = q.find_path(p["startRef"], p["endRef"], p["start"], p["end"]).polys
    q.init_sliced_find_path(p["startRef"], p["endRef"], p["start"], p["end"])
    q.update_sliced_find_path(3)
    part = q.finalize_sliced_find_path_partial(existing[:3])
    assert part.polys[0] == p["startRef"] and part.ok
    assert int(part.polys[-1]) in existing[:3].tolist()


def test_any_angle_sliced_search_gives_linked_corridor(dungeon):
    from navkit.detour.query import FINDPATH_ANY_ANGLE, IN_PROGRESS

    nm, q, pairs = dungeon
    done = 0
    for p in pairs[:60]:
        if not p["complete"]:
            continue
        st = q.init_sliced_find_path(
            p["startRef"], p["endRef"], p["start"], p["end"], options=FINDPATH_ANY_ANGLE
        )
        while st & IN_PROGRESS:
            st, _ = q.update_sliced_find_path(16)
        res = q.finalize_sliced_find_path(256)
        assert res.ok and not res.partial
        assert res.polys[0] == p["startRef"] and res.polys[-1] == p["endRef"]
        for a, b in zip(res.polys[:-1], res.polys[1:]):
            assert int(b) in [r for r, *_ in nm.links_of(int(a))]
        done += 1
    assert done > 20
