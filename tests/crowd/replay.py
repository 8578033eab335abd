"""Replay a dtCrowd trace of the Recast peer (``--crowd-trace``) on navkit's Crowd.

:func:`replay` builds the crowd on Recast's own navmesh with the trace's agents,
params and targets, steps it, and compares every agent's
``[px, py, pz, vx, vy, vz, state, target_state]`` after every step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import navkit
from navkit.crowd import AgentParams


@dataclass
class ReplayResult:
    steps: int  # steps compared
    matched_steps: int  # leading steps whose states all agree and positions are within tol
    first_divergence: tuple | None  # (step, agent, what, navkit value, Detour value)
    max_dev: float  # max |position/velocity difference| over the matched steps [wu, wu/s]
    bit_identical_steps: int  # leading steps with float32-identical values


def agent_params(ap: dict) -> AgentParams:
    return AgentParams(
        radius=ap["radius"], height=ap["height"], max_speed=ap["maxSpeed"],
        max_acceleration=ap["maxAcceleration"], collision_query_range=ap["collisionQueryRange"],
        path_optimization_range=ap["pathOptimizationRange"],
        separation_weight=ap["separationWeight"], update_flags=ap["updateFlags"],
        avoidance_type=ap["obstacleAvoidanceType"],
    )  # fmt: skip


def build(navmesh, trace: dict, parallel: bool = False):
    crowd = navkit.Crowd(navmesh, trace["agents"], trace["max_agent_radius"], parallel=parallel)
    crowd.use_recastdemo_presets()
    ap = agent_params(trace["agent_params"])
    handles = []
    for start, tgt, ref in zip(trace["starts"], trace["targets"], trace["target_refs"]):
        h = crowd.add_agent(start, ap)
        crowd.request_move_target(h, ref, tgt)
        handles.append(h)
    return crowd, handles


def replay(
    navmesh, trace: dict, tol: float = 1e-4, max_steps: int | None = None, parallel: bool = False
) -> ReplayResult:
    crowd, handles = build(navmesh, trace, parallel)
    slots = np.array([crowd.slot(h) for h in handles])
    placed = np.asarray(trace["placed"], np.float32)
    assert np.array_equal(crowd.positions[slots], placed), "placement differs"
    steps = trace["steps"][:max_steps] if max_steps else trace["steps"]
    dt = trace["dt"]
    matched = bit = 0
    first = None
    max_dev = 0.0
    bit_ok = True
    for k, ref in enumerate(steps):
        crowd.update(dt)
        ref = np.asarray(ref, np.float64)
        pos = crowd.positions[slots].astype(np.float64)
        vel = crowd.velocities[slots].astype(np.float64)
        st = crowd.states[slots]
        ts = crowd.target_states[slots]
        got = np.concatenate([pos, vel], axis=1)
        dev = np.abs(got - ref[:, :6])
        bad_state = np.flatnonzero((st != ref[:, 6]) | (ts != ref[:, 7]))
        bad_pos = np.flatnonzero(dev.max(axis=1) > tol)
        if bad_state.size or bad_pos.size:
            if bad_state.size:
                i = int(bad_state[0])
                first = (k, i, "state", (int(st[i]), int(ts[i])), tuple(ref[i, 6:8]))
            else:
                i = int(bad_pos[0])
                first = (k, i, "position/velocity", got[i].tolist(), ref[i, :6].tolist())
            break
        max_dev = max(max_dev, float(dev.max()))
        matched += 1
        if bit_ok and np.array_equal(got.astype(np.float32), ref[:, :6].astype(np.float32)):
            bit += 1
        else:
            bit_ok = False
    return ReplayResult(len(steps), matched, first, max_dev, bit)


def load_trace(path: Path) -> dict:
    return json.loads(Path(path).read_text())
