"""Optimal (Polyanya) paths: visibility-graph oracle, Detour comparison, Moving AI bounds."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import movingai_file

import navkit
from navkit.detour.optimal import find_optimal_path
from navkit.detour.query import PARTIAL_RESULT, SUCCESS
from navkit.errors import InputError, QueryError
from navkit.geometry import bake_grid, load_movingai_map, load_movingai_scenarios

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracles.visibility_graph import shortest_path_length  # noqa: E402
from peer_support import shared_dir  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
DUNGEON = navkit.data.path("dungeon.obj")
MAI = shared_dir() / "data" / "movingai"
#: NAVKIT_WHOLE_SCENARIOS=1 runs every scenario of every Moving AI map (minutes);
#: by default a seeded sample of each of four maps.
WHOLE = os.environ.get("NAVKIT_WHOLE_SCENARIOS") == "1"


def _map(name: str) -> Path:
    """A Moving AI map: arena ships with navkit, the others need ../shared."""
    return navkit.data.path("arena.map") if name == "arena" else movingai_file(f"{name}.map")


def _need(p: Path) -> Path:
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


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
            nm = navkit.bake(navkit.load_obj(_need(DUNGEON)), navkit.BakeConfig())
        else:
            nm = bake_grid(load_movingai_map(_map(name)), cell_size=1)
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
    assert p.status & PARTIAL_RESULT and p.partial_reason == "unreachable"
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


# -- roots on vertices inside the mesh ---------------------------------------------------------
def _inner_vertices(polys: list[np.ndarray]) -> np.ndarray:
    """Polygon vertices no wall touches (every polygon edge at them is shared)."""
    count: dict[tuple, int] = {}
    for P in polys:
        for a, b in zip(P, np.roll(P, -1, axis=0), strict=True):
            key = tuple(sorted((tuple(np.round(a, 6)), tuple(np.round(b, 6)))))
            count[key] = count.get(key, 0) + 1
    wall = {v for k, c in count.items() if c == 1 for v in k}
    verts = {tuple(np.round(v, 6)) for P in polys for v in P}
    return np.array(sorted(verts - wall), float).reshape(-1, 2)


@pytest.mark.parametrize("seed", range(2))
def test_start_and_goal_on_inner_vertices(seed):
    # A root on a vertex inside the mesh (here: where four tiles meet) is surrounded by a
    # closed fan of polygons; the search used to walk round that fan forever (issue 9).
    rng = np.random.default_rng(seed)
    g = np.zeros((200, 200), bool)  # > 192 cells: baked in 64-cell tiles
    for _ in range(12):
        r, c = rng.integers(0, 190, 2)
        h, w = rng.integers(2, 12, 2)
        g[r : r + h, c : c + w] = True
    g = no_double_corners(g)
    nm = bake_grid(g, 1.0)
    assert nm.stats()["tiles"] > 1
    q = navkit.NavMeshQuery(nm)
    polys = polygons_xz(nm)
    inner = _inner_vertices(polys)
    assert len(inner) >= 4
    free = np.argwhere(~g)
    he = (0.01, 1.0, 0.01)
    for k in range(6):
        a = inner[rng.integers(len(inner))]
        b = (
            inner[rng.integers(len(inner))]
            if k % 3 == 0
            else free[rng.integers(len(free))][::-1] + 0.5
        )
        if k % 3 == 2:
            a, b = b, a  # the goal on the inner vertex
        s, e = (a[0], 0.0, a[1]), (b[0], 0.0, b[1])
        p = find_optimal_path(q, s, e, half_extents=he, max_nodes=20000)
        assert p.complete
        ref = shortest_path_length(polys, a, b)
        assert xz_len(p.points) == pytest.approx(ref, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize(
    "name, r0, c0, size", [("maze512-2-5", 100, 100, 24), ("32room_000", 20, 20, 40)]
)
def test_movingai_crops_match_visibility_graph(name, r0, c0, size):
    # Moving AI grids: corners exactly collinear, start and goal on cell corners
    full = load_movingai_map(_need(MAI / f"{name}.map"))
    g = no_double_corners(full[r0 : r0 + size, c0 : c0 + size])
    nm = bake_grid(g, cell_size=1)
    q = navkit.NavMeshQuery(nm)
    polys = polygons_xz(nm)
    rng = np.random.default_rng(5)
    free = np.argwhere(~g)
    he = (0.01, 1.0, 0.01)
    checked = 0
    for _ in range(80):  # the crop cuts the map in pieces: draw pairs until 8 connect
        if checked == 8:
            break
        a = free[rng.integers(len(free))][::-1] + rng.integers(0, 2, 2)  # a corner of the cell
        b = free[rng.integers(len(free))][::-1] + rng.integers(0, 2, 2)
        s, e = (a[0], 0.0, a[1]), (b[0], 0.0, b[1])
        p = find_optimal_path(q, s, e, half_extents=he)
        d = q.path(s, e, half_extents=he, max_path=4096)
        assert p.complete == d.complete
        if not p.complete:
            continue
        ref = shortest_path_length(polys, a.astype(float), b.astype(float))
        assert xz_len(p.points) == pytest.approx(ref, rel=1e-6, abs=1e-6)
        checked += 1
    assert checked == 8


# -- Moving AI scenarios ---------------------------------------------------------------------
# Start and goal are the scenario cells' top-left corners (exact grid points: collinear,
# degenerate cases). The .scen optimum is the 8-connected (octile, no corner cutting)
# length between cell centres; shifted to the corners that path stays inside the free
# cells, so it bounds the any-angle optimum from above, as does Detour's path inside the
# same polygons; the straight line bounds it from below. A corner where two free cells
# touch only diagonally belongs to both sides of that pinch, and the polygon it snaps to
# may be on the other side from the scenario's cell: such corners are moved 0.001 into
# the scenario's cell (adding at most 0.003 to the bound).
_SAMPLED = {"arena": 40, "den520d": 60, "32room_000": 150, "maze512-2-5": 60,
            "AcrosstheCape": 150, "orz900d": 150}  # fmt: skip
_WHOLE = ["arena", "den520d", "brc202d", "32room_000", "maze512-2-5", "AcrosstheCape",
          "Aurora", "orz900d"]  # fmt: skip


def _cell_points(blocked: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """(n, 3) world points of cells xy (n, 2): their top-left corners, off any pinch."""
    b = np.pad(blocked, 1, constant_values=True)
    x, y = xy[:, 0] + 1, xy[:, 1] + 1  # padded indices of the cells
    nw, ne, sw, se = b[y - 1, x - 1], b[y - 1, x], b[y, x - 1], b[y, x]
    pinch = (nw == se) & (ne == sw) & (nw != ne)
    pts = np.zeros((len(xy), 3))
    pts[:, 0] = xy[:, 0] + 1e-3 * pinch
    pts[:, 2] = xy[:, 1] + 1e-3 * pinch
    return pts


@pytest.mark.slow
@pytest.mark.parametrize("name", _WHOLE if WHOLE else list(_SAMPLED))
def test_movingai_scenarios(name):
    sc = load_movingai_scenarios(_need(MAI / f"{name}.map.scen"))
    grid = load_movingai_map(MAI / f"{name}.map")
    q = navkit.NavMeshQuery(bake_grid(grid, cell_size=1))
    n = len(sc.bucket)
    idx = (
        np.arange(n)
        if WHOLE
        else np.random.default_rng(3).choice(n, min(n, _SAMPLED[name]), replace=False)
    )
    s = _cell_points(grid, sc.start[idx])
    e = _cell_points(grid, sc.goal[idx])
    he = (0.1, 2.0, 0.1)
    det_len = np.zeros(len(idx))
    for c in range(0, len(idx), 128):  # Detour's paths, in chunks (the buffers are max_path wide)
        det = q.paths(s[c : c + 128], e[c : c + 128], half_extents=he, max_path=65535,
                      max_points=4096)  # fmt: skip
        assert det.complete.all() and (det.n_points < 4096).all()
        for k in range(det.n_points.shape[0]):
            det_len[c + k] = xz_len(det.points[k, : det.n_points[k]])
    for k, i in enumerate(idx):
        p = find_optimal_path(q, s[k], e[k], half_extents=he)
        assert p.complete and p.partial_reason is None
        assert np.allclose(p.points[[0, -1]][:, [0, 2]], [s[k, [0, 2]], e[k, [0, 2]]], atol=1e-4)
        lo = xz_len(p.points)
        assert lo <= sc.optimal_length[i] + 4e-3
        assert lo >= np.hypot(*(e[k] - s[k])[[0, 2]]) - 1e-6
        assert lo <= det_len[k] + 1e-4


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
    for bad in (0, -5, 2.5, True, "9"):
        with pytest.raises(InputError, match="max_nodes"):
            find_optimal_path(q, (0.5, 0, 0.5), (2.5, 0, 2.5), max_nodes=bad)


def test_search_nodes_are_bounded():
    g = np.zeros((21, 30), bool)
    for r in range(1, 21, 2):  # a corridor winding through the grid
        g[r, :] = True
        g[r, 29 if (r // 2) % 2 == 0 else 0] = False
    q = navkit.NavMeshQuery(bake_grid(g))
    s, e = (0.5, 0, 0.5), (0.5, 0, 20.5)
    with pytest.raises(QueryError, match="max_nodes=20"):
        find_optimal_path(q, s, e, max_nodes=20)
    p = find_optimal_path(q, s, e)  # the same planner, now with the default bound
    assert p.complete and p.status == SUCCESS
    assert find_optimal_path(q, s, e, max_nodes=int(q._navkit_optimal.cnt[0])).complete
