"""Level of detail of navkit mode's crowd (navkit.crowd.lod): staggered updates still
keep agents on the mesh, within their speed and acceleration limits, and arriving;
the neighbour grid of the staggered crowd finds what a brute-force search finds."""

from __future__ import annotations

import numpy as np
import pytest

import navkit
import navkit.data
from navkit.crowd import AgentParams
from navkit.crowd.lod import build_cells, cell_neighbours
from navkit.errors import ConfigError, InputError

DT = 1 / 30


@pytest.fixture(scope="module")
def navmesh():
    return navkit.bake(navkit.load_obj(navkit.data.path("dungeon.obj")), navkit.BakeConfig())


def _pairs(navmesh, n, seed):
    """n (start, target) pairs of random points with a complete path between them."""
    q = navkit.NavMeshQuery(navmesh)
    out = []
    i = 0
    while len(out) < n:
        a = q.find_random_point(rng=seed + 2 * i)
        b = q.find_random_point(rng=seed + 2 * i + 1)
        i += 1
        pc = q.find_path(a.ref, b.ref, a.point, b.point)
        if not pc.partial and np.hypot(*(b.point - a.point)[[0, 2]]) > 5.0:
            out.append((a.point, b.point))
    return out


def _on_mesh(crowd, q):
    """Largest xz distance of an agent from the navmesh surface under it."""
    worst = 0.0
    for s in np.flatnonzero(crowd.active).tolist():
        p = crowd.positions[s]
        near = q.find_nearest_poly(p, [0.5, 2.0, 0.5])
        assert near.ref, f"agent {s} at {p.tolist()}: no polygon near"
        c, _ = q.closest_point_on_poly(int(near.ref), p)
        assert abs(float(c[1] - p[1])) <= 0.5
        worst = max(worst, float(np.hypot(c[0] - p[0], c[2] - p[2])))
    return worst


def _run(navmesh, pairs, lod, seconds):
    crowd = navkit.Crowd(navmesh, len(pairs), 0.6, mode="navkit", level_of_detail=lod)
    crowd.use_recastdemo_presets()
    ap = AgentParams(radius=0.6, max_speed=3.5, max_acceleration=8.0, avoidance_type=3)
    slots = []
    for a, b in pairs:
        h = crowd.add_agent(a, ap)
        crowd.request_move_target(h, b)
        slots.append(crowd.slot(h))
    sl = np.array(slots)
    q = navkit.NavMeshQuery(navmesh)
    vel = crowd.velocities[sl].copy()
    worst_speed = worst_dv = worst_off = 0.0
    for k in range(int(seconds / DT)):
        crowd.update(DT)
        v = crowd.velocities[sl]
        worst_speed = max(worst_speed, float(np.linalg.norm(v, axis=1).max()))
        worst_dv = max(worst_dv, float(np.linalg.norm(v - vel, axis=1).max()))
        vel = v.copy()
        if k % 15 == 0:
            worst_off = max(worst_off, _on_mesh(crowd, q))
    targets = np.array([b for _, b in pairs], np.float32)
    left = np.linalg.norm((crowd.positions[sl] - targets)[:, [0, 2]], axis=1)
    return float((left < 1.0).mean()), worst_speed, worst_dv, worst_off


@pytest.mark.parametrize("lod", [4, 8])
def test_staggered_crowd_stays_on_mesh_within_limits_and_arrives(navmesh, lod):
    pairs = _pairs(navmesh, 60, seed=11)
    arrived, speed, dv, off = _run(navmesh, pairs, lod, seconds=60.0)
    full, *_ = _run(navmesh, pairs, 1, seconds=60.0)
    assert off <= 1e-3, f"an agent left the navmesh by {off} wu"
    # dtCrowd's adaptive sampling refines around the best sample on rings that can
    # reach a little past max_speed (0.03 % here, the full-quality crowd as well)
    assert speed <= 3.5 * 1.001
    assert dv <= 8.0 * DT * (1 + 1e-4)  # integration's acceleration limit
    assert full >= 0.9  # the scenario is one where the full-quality crowd arrives
    assert arrived >= full - 0.05, (arrived, full)


def test_level_of_detail_needs_navkit_mode(navmesh):
    with pytest.raises(ConfigError):
        navkit.Crowd(navmesh, 4, 0.6, level_of_detail=4)
    with pytest.raises(InputError):
        navkit.Crowd(navmesh, 4, 0.6, mode="navkit", level_of_detail=0)


def test_removed_agents_leave_neighbour_lists(navmesh):
    pairs = _pairs(navmesh, 30, seed=5)
    crowd = navkit.Crowd(navmesh, 30, 0.6, mode="navkit", level_of_detail=4)
    ap = AgentParams(radius=0.6, collision_query_range=30.0)
    hs = [crowd.add_agent(a, ap) for a, _ in pairs]
    for h, (_, b) in zip(hs, pairs):
        crowd.request_move_target(h, b)
    for _ in range(8):
        crowd.update(DT)
    a = crowd.agents
    has = [s for s in range(30) if a.nneis[s] > 0]
    assert has, "no agent has neighbours: the test sees nothing"
    gone = int(a.neis[has[0], 0])
    crowd.remove_agent(hs[gone])
    crowd.update(DT)
    for s in np.flatnonzero(crowd.active).tolist():
        assert gone not in a.neis[s, : a.nneis[s]].tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cell_neighbours_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 400
    npos = np.zeros((n, 3), np.float32)
    npos[:, 0] = rng.uniform(-30, 30, n)
    npos[:, 2] = rng.uniform(-20, 40, n)
    npos[:, 1] = rng.choice([0.0, 0.5, 3.0], n)
    height = rng.uniform(1.0, 2.5, n).astype(np.float32)
    qrange = rng.uniform(1.0, 6.0, n).astype(np.float32)
    act = np.arange(0, n, 1, dtype=np.int64)[rng.random(n) < 0.9]
    walking = np.ones(n, bool)
    neis = np.zeros((n, 6), np.int32)
    dist = np.zeros((n, 6), np.float32)
    nneis = np.zeros(n, np.int32)
    cells = build_cells(act, npos, qrange)
    cell_neighbours(act, walking, npos, height, qrange, *cells, neis, dist, nneis)
    for s in act.tolist():
        d = npos[act] - npos[s]
        d2 = d[:, 0] * d[:, 0] + d[:, 2] * d[:, 2]
        ok = (act != s) & (d2 <= qrange[s] ** 2)
        ok &= np.abs(d[:, 1]) < (height[s] + height[act]) / np.float32(2.0)
        want = np.sort(d2[ok])[:6]
        got = dist[s, : nneis[s]]
        np.testing.assert_array_equal(got, want)
        for j in range(nneis[s]):
            o = neis[s, j]
            e = npos[o] - npos[s]
            assert e[0] * e[0] + e[2] * e[2] == got[j]


def test_parallel_staggered_crowd_equals_serial(navmesh):
    """prange twins of the staggered phases (the own neighbour grid included) give the
    same float32 trajectories as the serial kernels."""
    pairs = _pairs(navmesh, 80, seed=23)
    runs = []
    for par in (False, True):
        crowd = navkit.Crowd(navmesh, 80, 0.6, mode="navkit", level_of_detail=4, parallel=par)
        crowd.use_recastdemo_presets()
        ap = AgentParams(radius=0.6, avoidance_type=1)
        for a, b in pairs:
            crowd.request_move_target(crowd.add_agent(a, ap), b)
        for _ in range(240):
            crowd.update(DT)
        runs.append(crowd.positions.copy())
    np.testing.assert_array_equal(runs[0], runs[1])
