"""navkit.Crowd against Detour's dtCrowd (the Recast peer's ``--crowd-trace``), and its API.

Replays: Recast bakes each sample mesh and runs dtCrowd (RecastDemo CrowdTool
agent settings, seeded random starts and targets); navkit loads Recast's
exported navmesh, adds the same agents with the same targets and must give the
same positions, velocities and states after every step -- float32-identical.

Configurations replayed:
- ``solo``: updateFlags 0 and a collision query range of 0.0006 wu, so agents
  never see each other: path requests, path queue, corridor, corners, straight
  steering, integration, move along surface.
- ``social``: ANTICIPATE_TURNS | SEPARATION | OPTIMIZE_VIS | OPTIMIZE_TOPO with
  RecastDemo's collision range (12 r): adds the proximity grid, neighbours,
  separation, collision resolution, visibility and topology optimisation.
- ``recastdemo``: RecastDemo CrowdTool's defaults (ANTICIPATE_TURNS |
  OBSTACLE_AVOIDANCE | OPTIMIZE_VIS | OPTIMIZE_TOPO, avoidance preset 1 of its
  four; 900 steps, with replans of partial paths): adds the local boundaries
  (walls) and sampled adaptive avoidance.
  dungeon also with 200 agents.
- ``links``: dungeon with eight 6-12 m off-mesh links (``data/dungeon_links.json``,
  bidirectional, radius 0.6) and RecastDemo's defaults, 200 agents, 600 steps:
  adds off-mesh triggers and the off-mesh animation (agents in STATE_OFFMESH).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from peer_support import SCRATCH, mesh_path, run_peer
from replay import build, load_trace, replay

import navkit
from navkit.crowd import PRESETS, AgentParams, ObstacleAvoidanceParams
from navkit.crowd.agents import STATE_OFFMESH, STATE_WALKING, TARGET_REQUESTING
from navkit.errors import ConfigError, InputError, StaleHandleError

CONFIGS = {
    "solo": ({"crowdAgent": {"updateFlags": 0, "collisionQueryRangeFactor": 0.001}}, 50),
    "social": ({"crowdAgent": {"updateFlags": 1 | 4 | 8 | 16}}, 100),
    "recastdemo": ({}, 100),
    "recastdemo200": ({}, 200),
    "links": ({}, 200),
}
LINKS = Path(__file__).parent / "data" / "dungeon_links.json"
EXTRA = {"links": ("--offmesh", str(LINKS))}
STEPS_OF = {"links": 600, "recastdemo": 900}
CASES = [(m, c) for m in ("dungeon", "nav_test", "undulating") for c in CONFIGS]
CASES.remove(("nav_test", "recastdemo200"))
CASES.remove(("undulating", "recastdemo200"))
CASES.remove(("nav_test", "links"))
CASES.remove(("undulating", "links"))
STEPS = 300


def _trace(mesh: str, config: str):
    """(navmesh, trace) of one peer run, cached in .scratch/crowd."""
    cfg, agents = CONFIGS[config]
    steps = STEPS_OF.get(config, STEPS)
    out = SCRATCH / "crowd"
    tr = out / f"{mesh}.{config}.{agents}.{steps}.json"
    nm = out / f"{mesh}.{config}.navmesh.bin"
    if not (tr.exists() and nm.exists()):
        out.mkdir(parents=True, exist_ok=True)
        run_peer(
            mesh_path(mesh), cfg, "--sections", "solo,crowd", "--agents", str(agents),
            "--steps", str(steps), "--runs", "1", "--crowd-trace", str(tr),
            "--export-solo", str(nm), "--quiet", *EXTRA.get(config, ()),
        )  # fmt: skip
        if not (tr.exists() and nm.exists()):
            pytest.skip("the peer wrote no crowd trace")
    return navkit.NavMesh.from_recast(nm), load_trace(tr)


@pytest.mark.parametrize(("mesh", "config"), CASES)
def test_replay_matches_dtcrowd(mesh, config):
    navmesh, trace = _trace(mesh, config)
    r = replay(navmesh, trace)
    assert r.first_divergence is None, (
        f"first divergence (step, agent, what, navkit, Detour): {r.first_divergence}"
    )
    steps = len(trace["steps"])
    assert steps == STEPS_OF.get(config, STEPS)
    assert r.matched_steps == steps
    assert r.max_dev <= 1e-4
    assert r.bit_identical_steps == steps, "within 1e-4 but not float32-identical"
    if config == "links":  # the trace must exercise the off-mesh phases
        assert any(a[6] == STATE_OFFMESH for st in trace["steps"] for a in st)


@pytest.mark.parametrize(("mesh", "config"), [("dungeon", "links"), ("nav_test", "recastdemo")])
def test_parallel_replay_matches_dtcrowd(mesh, config, monkeypatch):
    """Crowd(parallel=True) runs the per-agent phases as prange kernels over chunks of
    agents (200 and 100 agents: several chunks, with the step's threshold lowered):
    still float32-identical to dtCrowd."""
    from navkit.crowd import step

    monkeypatch.setattr(step, "PAR_MIN", 16)
    monkeypatch.setattr(step, "PAR_ALL_MIN", 0)  # every per-agent phase on the threads
    monkeypatch.setattr(step, "AUTO_SERIAL", False)  # the parallel step on every update
    navmesh, trace = _trace(mesh, config)
    r = replay(navmesh, trace, parallel=True)
    assert r.first_divergence is None, (
        f"first divergence (step, agent, what, navkit, Detour): {r.first_divergence}"
    )
    assert r.bit_identical_steps == len(trace["steps"])


# -- API and bad input --------------------------------------------------------------------
@pytest.fixture(scope="module")
def navmesh():
    return navkit.bake(navkit.sample_level(), navkit.BakeConfig())


def _on_mesh(navmesh, seed=0):
    q = navkit.NavMeshQuery(navmesh)
    rp = q.find_random_point(rng=seed)
    return rp.ref, rp.point


def test_handles_are_generational(navmesh):
    crowd = navkit.Crowd(navmesh, 2, 0.6)
    _, p = _on_mesh(navmesh)
    h0 = crowd.add_agent(p, AgentParams())
    s0 = crowd.slot(h0)
    assert crowd.states[s0] == STATE_WALKING
    assert crowd.active[s0]
    crowd.remove_agent(h0)
    with pytest.raises(StaleHandleError):
        crowd.remove_agent(h0)
    h1 = crowd.add_agent(p, AgentParams())
    assert crowd.slot(h1) == s0 and h1 != h0  # slot reused, old handle stale
    with pytest.raises(StaleHandleError):
        crowd.update_agent_params(h0, AgentParams())
    crowd.update_agent_params(h1, AgentParams(radius=0.5))
    assert crowd.agent_params(h1).radius == 0.5


def test_arrays_are_views(navmesh):
    crowd = navkit.Crowd(navmesh, 3, 0.6)
    ref, p = _on_mesh(navmesh, 1)
    tref, t = _on_mesh(navmesh, 2)
    h = crowd.add_agent(p, AgentParams(update_flags=0))
    crowd.request_move_target(h, tref, t)
    pos = crowd.positions
    assert crowd.target_states[crowd.slot(h)] == TARGET_REQUESTING
    before = pos[crowd.slot(h)].copy()
    for _ in range(10):
        crowd.update(1 / 60)
    assert crowd.positions is pos
    assert not np.array_equal(pos[crowd.slot(h)], before)
    assert set(crowd.timings) == set(navkit.Crowd.PHASES)


def test_bad_input(navmesh):
    ref, p = _on_mesh(navmesh)
    with pytest.raises(InputError):
        navkit.Crowd(navmesh, 0, 0.6)
    with pytest.raises(InputError):
        navkit.Crowd(navmesh, 4, math.nan)
    with pytest.raises(InputError):
        navkit.Crowd("not a navmesh", 4, 0.6)
    crowd = navkit.Crowd(navmesh, 1, 0.6)
    with pytest.raises(InputError, match="position"):
        crowd.add_agent([math.nan, 0, 0], AgentParams())
    with pytest.raises(InputError, match="not on the navmesh"):
        crowd.add_agent(p + np.float32(1000.0), AgentParams())
    h = crowd.add_agent(p, AgentParams())
    with pytest.raises(InputError, match="full"):
        crowd.add_agent(p, AgentParams())
    with pytest.raises(InputError, match="position"):
        crowd.request_move_target(h, ref, [0, math.inf, 0])
    with pytest.raises(InputError, match="ref"):
        crowd.request_move_target(h, 0, p)
    for dt in (0, -1 / 60, math.nan, math.inf, 1e-50, True):
        with pytest.raises(InputError, match="dt"):
            crowd.update(dt)
    with pytest.raises(InputError):
        crowd.slot(-1)
    with pytest.raises(StaleHandleError):
        crowd.slot(12345)
    with pytest.raises(ConfigError, match="radius"):
        AgentParams(radius=math.nan)
    with pytest.raises(ConfigError, match="max_speed"):
        AgentParams(max_speed=10**400)  # an int float() cannot convert
    with pytest.raises(InputError, match="dt"):
        crowd.update(10**400)
    with pytest.raises(ConfigError, match="update_flags"):
        AgentParams(update_flags=64)


def test_build_uses_trace_agents(navmesh):
    # the replay helper itself: agents and targets land in the crowd as given
    q = navkit.NavMeshQuery(navmesh)
    pts = [q.find_random_point(rng=i) for i in range(4)]
    trace = {
        "agents": 2, "max_agent_radius": 0.6,
        "agent_params": {"radius": 0.6, "height": 2, "maxAcceleration": 8, "maxSpeed": 3.5,
                         "collisionQueryRange": 7.2, "pathOptimizationRange": 18,
                         "updateFlags": 0, "obstacleAvoidanceType": 1, "separationWeight": 2},
        "starts": [pts[0].point.tolist(), pts[1].point.tolist()],
        "targets": [pts[2].point.tolist(), pts[3].point.tolist()],
        "target_refs": [pts[2].ref, pts[3].ref],
    }  # fmt: skip
    crowd, hs = build(navmesh, trace)
    assert [int(crowd.agents.target_ref[crowd.slot(h)]) for h in hs] == [pts[2].ref, pts[3].ref]


def test_avoidance_params(navmesh):
    crowd = navkit.Crowd(navmesh, 1, 0.6)
    assert crowd.get_obstacle_avoidance_params(0) == ObstacleAvoidanceParams()
    crowd.use_recastdemo_presets()
    assert [crowd.get_obstacle_avoidance_params(i) for i in range(4)] == list(PRESETS)
    assert [(p.adaptive_divs, p.adaptive_rings, p.adaptive_depth) for p in PRESETS] == [
        (5, 2, 1), (5, 2, 2), (7, 2, 3), (7, 3, 3)
    ]  # fmt: skip
    custom = ObstacleAvoidanceParams(vel_bias=0.3, adaptive_depth=4)
    crowd.set_obstacle_avoidance_params(7, custom)
    assert crowd.get_obstacle_avoidance_params(7) is custom
    with pytest.raises(InputError):
        crowd.set_obstacle_avoidance_params(8, custom)
    with pytest.raises(InputError):
        crowd.set_obstacle_avoidance_params(0, {"vel_bias": 0.5})
    with pytest.raises(ConfigError, match="adaptive_divs"):
        ObstacleAvoidanceParams(adaptive_divs=6)
    with pytest.raises(ConfigError, match="horiz_time"):
        ObstacleAvoidanceParams(horiz_time=math.nan)


def test_agent_on_filtered_out_polygon_becomes_invalid(navmesh):
    # dtCrowd::checkPathValidity: the agent's polygon no longer passes its filter and
    # no polygon near it does -> STATE_INVALID, corridor reset to ref 0 (no Detour trace
    # covers this: the replays run on static navmeshes)
    crowd = navkit.Crowd(navmesh, 2, 0.6)
    ref, p = _on_mesh(navmesh, 3)
    tref, t = _on_mesh(navmesh, 4)
    h = crowd.add_agent(p, AgentParams())
    crowd.request_move_target(h, tref, t)
    for _ in range(5):
        crowd.update(1 / 60)
    s = crowd.slot(h)
    assert crowd.states[s] == STATE_WALKING
    crowd.filter(0).include_flags = 0
    crowd.update(1 / 60)
    assert crowd.states[s] == 0  # STATE_INVALID
    assert crowd.agents.c_path[s, 0] == 0
    before = crowd.positions[s].copy()
    crowd.update(1 / 60)  # invalid agents are left alone
    assert np.array_equal(crowd.positions[s], before)


def test_move_velocity_and_reset(navmesh):
    crowd = navkit.Crowd(navmesh, 1, 0.6)
    _, p = _on_mesh(navmesh, 5)
    h = crowd.add_agent(p, AgentParams(update_flags=0))
    s = crowd.slot(h)
    crowd.request_move_velocity(h, [1.0, 0.0, 0.0])
    assert crowd.target_states[s] == 6  # TARGET_VELOCITY
    crowd.update(1 / 60)
    # one step of acceleration toward (1, 0, 0): |dv| = max_acceleration * dt = 8/60
    np.testing.assert_allclose(crowd.velocities[s], [8 / 60, 0, 0], rtol=1e-6)
    assert crowd.agents.c_npath[s] == 1  # corridor cut to the agent's polygon
    crowd.reset_move_target(h)
    assert crowd.target_states[s] == 0
    with pytest.raises(InputError, match="velocity"):
        crowd.request_move_velocity(h, [math.nan, 0, 0])


def test_agent_added_between_updates_takes_part_in_every_phase(navmesh):
    crowd = navkit.Crowd(navmesh, 2, 0.6)
    _, p = _on_mesh(navmesh, 6)
    crowd.add_agent(p, AgentParams())
    crowd.update(1 / 60)
    h = crowd.add_agent(p, AgentParams())
    crowd.update(1 / 60)
    # checkPathValidity (the first phase) adds dt to every walking agent's replan timer
    assert crowd.agents.target_replan_time[crowd.slot(h)] == np.float32(1 / 60)
