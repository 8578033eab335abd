"""Optimal (Polyanya) paths: visibility-graph oracle, Detour comparison, Moving AI bounds."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import movingai_file

import navkit
from navkit.detour.optimal import find_optimal_path
from navkit.errors import InputError, QueryError
from navkit.geometry import bake_grid, load_movingai_map, load_movingai_scenarios

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracles.visibility_graph import shortest_path_length  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
DUNGEON = navkit.data.path("dungeon.obj")


def _map(name: str) -> Path:
    """A Moving AI map: arena ships with navkit, the others need ../shared."""
    return navkit.data.path("arena.map") if name == "arena" else movingai_file(f"{name}.map")


def xz_len(p: np.ndarray) -> float:
    d = np.diff(np.asarray(p, np.float64)[:, [0, 2]], axis=0)
    return float(np.hypot(d[:, 0], d[:, 1]).sum())


def no_double_corners(g: np.ndarray) -> np.ndarray:
    """Block cells until no two free cells touch only diagonally (the oracle's premise)."""
    g = g.copy()
    changed = True
    while changed:
        changed = False
        a, b, c, d = g[:-1, :-1], g[:-1, 1:], g[1:, :-1], g[1:, 1:]
        bad = (a & d & ~b & ~c) | (b & c & ~a & ~d)
        for r, col in np.argwhere(bad):
            g[r, col] = g[r, col + 1] = True
            changed = True
    return g


def polygons_xz(nm) -> list[np.ndarray]:
    a = nm.arrays()
    v = a.verts.astype(np.float64)
    return [
        v[a.poly_verts[p, : a.poly_vert_count[p]]][:, [0, 2]]
        for p in range(a.poly_tile.shape[0])
        if a.poly_tile[p] >= 0
    ]


# -- exact optimum against the visibility graph ------------------------------------------
def test_hand_made_u_turn():
    g = np.array([[0, 0, 0, 0, 0], [0, 1, 1, 1, 0], [0, 1, 1, 1, 0]], bool)
    q = navkit.NavMeshQuery(bake_grid(g))
    p = find_optimal_path(q, (0.5, 0, 2.5), (4.5, 0, 2.5))
    expect = 2 * np.hypot(0.5, 1.5) + 3.0  # around the corners (1, 1) and (4, 1)
    assert p.complete
    assert xz_len(p.points) == pytest.approx(expect, rel=1e-6)
    assert np.allclose(p.points[1:-1][:, [0, 2]], [[1, 1], [4, 1]], atol=1e-5)
    assert shortest_path_length(polygons_xz(q.navmesh), (0.5, 2.5), (4.5, 2.5)) == pytest.approx(
        expect, rel=1e-9
    )


def _diamond_room() -> navkit.TriMesh:
    """A 10 x 10 floor with a diamond-shaped hole (hand-made, not axis aligned)."""
    o = [(0, 0), (10, 0), (10, 10), (0, 10)]
    dm = [(5, 2.6), (7.4, 5), (5, 7.4), (2.6, 5)]
    v = np.array([(x, 0.0, z) for x, z in o + dm])
    tris = []
    for i in range(4):
        tris.append((i, (i + 1) % 4, 4 + i))
        tris.append(((i + 1) % 4, 4 + (i + 1) % 4, 4 + i))
    tris = np.array(tris)
    a, b, c = v[tris[:, 0]], v[tris[:, 1]], v[tris[:, 2]]
    up = np.cross(b - a, c - a)[:, 1] > 0
    tris[~up] = tris[~up][:, ::-1]
    return navkit.TriMesh.from_arrays(v, tris)


def test_hand_made_mesh_matches_visibility_graph():
    cfg = navkit.BakeConfig(cell_size=0.1, agent_radius=0.0, filter_ledge_spans=False)
    nm = navkit.bake(_diamond_room(), cfg)
    q = navkit.NavMeshQuery(nm)
    polys = polygons_xz(nm)
    for s, e in [((5, 0, 1), (5, 0, 9)), ((1, 0, 5), (9, 0, 5.2)), ((2, 0, 2), (8, 0, 8.5))]:
        p = find_optimal_path(q, s, e)
        ref = shortest_path_length(polys, (s[0], s[2]), (e[0], e[2]))
        assert p.complete
        assert xz_len(p.points) == pytest.approx(ref, rel=1e-4)
        assert xz_len(p.points) > np.hypot(e[0] - s[0], e[2] - s[2]) + 0.5  # goes around


def test_same_polygon_is_straight():
    q = navkit.NavMeshQuery(bake_grid(np.zeros((3, 3), bool)))
    p = find_optimal_path(q, (0.2, 0, 0.2), (0.3, 0, 0.4))
    assert len(p.points) == 2 and p.complete
    assert xz_len(p.points) == pytest.approx(np.hypot(0.1, 0.2), rel=1e-6)


@pytest.mark.parametrize("seed", range(8))
def test_random_grids_match_visibility_graph(seed):
    rng = np.random.default_rng(seed)
    g = no_double_corners(rng.random((8, 10)) < 0.3)
    nm = bake_grid(g, 0.7, partition=("watershed", "monotone", "layers")[seed % 3])
    q = navkit.NavMeshQuery(nm, max_nodes=65535)
    polys = polygons_xz(nm)
    free = np.argwhere(~g)
    checked = 0
    for _ in range(6):
        i, j = rng.choice(len(free), 2)
        if rng.random() < 0.4:  # cell corners: degenerate (collinear) cases
            s = (free[i][1] * 0.7, 0.0, free[i][0] * 0.7)
            e = ((free[j][1] + 1) * 0.7, 0.0, (free[j][0] + 1) * 0.7)
        else:
            s = ((free[i][1] + rng.random()) * 0.7, 0.0, (free[i][0] + rng.random()) * 0.7)
            e = ((free[j][1] + rng.random()) * 0.7, 0.0, (free[j][0] + rng.random()) * 0.7)
        he = (0.05, 1.0, 0.05)
        p = find_optimal_path(q, s, e, half_extents=he)
        d = q.path(s, e, max_path=4096, half_extents=he)
        assert p.complete == d.complete
        if not p.complete:
            continue
        a, b = p.points[0][[0, 2]], p.points[-1][[0, 2]]
        ref = shortest_path_length(polys, a, b)
        assert xz_len(p.points) == pytest.approx(ref, rel=1e-4, abs=1e-6)
        checked += 1
    assert checked > 0


# -- properties against Detour's A*+funnel ------------------------------------------------
_CACHE: dict[str, navkit.NavMeshQuery] = {}


def _query(name: str) -> navkit.NavMeshQuery:
    if name not in _CACHE:
        if name == "sample":
            nm = navkit.bake(navkit.sample_level(), navkit.BakeConfig())
        elif name == "dungeon":
            nm = navkit.bake(navkit.load_obj(DUNGEON), navkit.BakeConfig())
        else:
            nm = bake_grid(load_movingai_map(_map(name)))
        _CACHE[name] = navkit.NavMeshQuery(nm, max_nodes=65535)
    return _CACHE[name]


def _inside_corridor(q, polys: np.ndarray, pt: np.ndarray, tol: float = 1e-3) -> bool:
    v = q.view
    for ref in polys:
        p = q._poly(int(ref))
        poly = v.verts[v.poly_verts[p, : v.poly_nverts[p]]][:, [0, 2]].astype(np.float64)
        e = np.roll(poly, -1, axis=0) - poly
        d = pt[None, :] - poly
        cr = (e[:, 0] * d[:, 1] - e[:, 1] * d[:, 0]) / np.hypot(e[:, 0], e[:, 1])
        if np.all(cr <= tol) or np.all(cr >= -tol):
            return True
    return False


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(["sample", "dungeon", "arena"]), seed=st.integers(0, 2**31))
def test_never_longer_than_detour(name, seed):
    q = _query(name)
    rng = np.random.default_rng(seed)
    s = q.find_random_point(rng=rng).point
    e = q.find_random_point(rng=rng).point
    d = q.path(s, e, max_path=65535, max_points=65535)
    p = find_optimal_path(q, s, e)
    assert p.complete == d.complete
    lo = xz_len(p.points)
    assert lo >= np.hypot(*(p.points[-1] - p.points[0])[[0, 2]]) - 1e-5
    if p.complete:
        assert lo <= xz_len(d.points) + 1e-4
        assert np.allclose(p.points[-1][[0, 2]], np.asarray(e)[[0, 2]], atol=1e-4)
    for a, b in zip(p.points[:-1], p.points[1:], strict=True):
        for t in np.linspace(0, 1, 9):
            pt = (a + t * (b - a))[[0, 2]].astype(np.float64)
            assert _inside_corridor(q, p.polys, pt)


def test_partial_path_reaches_nearest_point():
    g = np.zeros((5, 9), bool)
    g[:, 4] = True  # a wall splits the map
    q = navkit.NavMeshQuery(bake_grid(g))
    p = find_optimal_path(q, (0.5, 0, 2.5), (8.5, 0, 2.5))
    d = q.path((0.5, 0, 2.5), (8.5, 0, 2.5))
    assert not p.complete and not d.complete
    assert p.points[-1][0] == pytest.approx(4.0, abs=1e-4)
    assert xz_len(p.points) == pytest.approx(3.5, abs=1e-4)


def test_excluded_polygons_are_walls():
    g = np.zeros((3, 7), bool)
    g[1:, 3] = True  # a wall with a gap in row 0
    nm = bake_grid(g)
    q = navkit.NavMeshQuery(nm)
    s, e = (0.5, 0, 2.5), (6.5, 0, 2.5)
    around = find_optimal_path(q, s, e)
    assert around.complete
    assert xz_len(around.points) == pytest.approx(2 * np.hypot(2.5, 1.5) + 1.0, rel=1e-6)
    gap = q.find_nearest_poly((3.5, 0, 0.5)).ref
    nm.arrays().poly_flags[q._poly(gap)] = 2
    flt = navkit.QueryFilter(exclude_flags=2)
    p = find_optimal_path(q, s, e, filter=flt)
    d = q.path(s, e, filter=flt)
    assert not p.complete and not d.complete
    assert gap not in p.polys.tolist()
    assert p.points[-1][0] <= 3.0 + 1e-5


# -- Moving AI scenarios ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["arena", "den520d"])
def test_movingai_scenarios_within_octile(name):
    q = _query(name)
    sc = load_movingai_scenarios(movingai_file(f"{name}.map.scen"))
    idx = np.linspace(0, len(sc.bucket) - 1, 30).astype(int)
    for i in idx:
        sx, sy = sc.start[i]
        gx, gy = sc.goal[i]
        p = find_optimal_path(q, (sx, 0.0, sy), (gx, 0.0, gy), half_extents=(0.1, 2, 0.1))
        assert p.complete
        n = xz_len(p.points)
        assert n <= sc.optimal_length[i] + 1e-3
        assert n >= np.hypot(gx - sx, gy - sy) - 1e-6


# -- bad input -----------------------------------------------------------------------------------
def test_bad_input():
    q = navkit.NavMeshQuery(bake_grid(np.zeros((3, 3), bool)))
    with pytest.raises(InputError):
        find_optimal_path(q, (np.nan, 0, 0), (1, 0, 1))
    with pytest.raises(InputError):
        find_optimal_path(q, (0, 0), (1, 0, 1))
    with pytest.raises(QueryError):
        find_optimal_path(q, (100, 0, 100), (1, 0, 1))
    with pytest.raises(QueryError):
        find_optimal_path(q, (1, 0, 1), (1, 50, 1))
    with pytest.raises(InputError):
        find_optimal_path("not a query", (1, 0, 1), (1, 0, 1))
