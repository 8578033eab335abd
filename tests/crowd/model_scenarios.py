"""Circle swap and four-way crossing on a flat baked plaza, and their quality figures.

Shared by tests/crowd/test_models.py and bench/crowd_models.py (slow to bake once: the
plaza navmesh is cached in memory per process).
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

import numpy as np

import navkit
from navkit.crowd import AgentParams
from navkit.crowd.metrics import crowd_metrics
from navkit.crowd.ttc import TTCParams

PLAZA = 24.0  # side of the square plaza [m]
CENTRE = np.array([PLAZA / 2, 0.0, PLAZA / 2])
RADIUS = 0.4  # agent radius [m]
SPEED = 1.5  # max speed [m/s]
ACCEL = 8.0  # max acceleration [m/s^2]
DT = 0.05
REACH = 0.5  # arrived when within this of the target [m]


@functools.cache
def plaza():
    """Flat navmesh: a PLAZA x PLAZA square at y = 0."""
    return navkit.bake_grid(np.zeros((int(PLAZA), int(PLAZA)), bool), cell_size=1.0)


def circle(n: int = 16, r: float = 8.0):
    """Agents on a circle of radius r, each heading to its antipode."""
    a = 2 * np.pi * np.arange(n) / n
    start = CENTRE + r * np.stack([np.cos(a), np.zeros(n), np.sin(a)], 1)
    return start, 2 * CENTRE - start


def crossing(per_side: int = 6, dist: float = 9.0):
    """Four groups (2 rows of per_side/2) at the plaza's sides crossing to the opposite side."""
    starts, targets = [], []
    cols = per_side // 2
    for k in range(4):
        ang = k * np.pi / 2
        fwd = np.array([np.cos(ang), 0.0, np.sin(ang)])
        side = np.array([-fwd[2], 0.0, fwd[0]])
        for row in range(2):
            for c in range(cols):
                off = (c - (cols - 1) / 2) * 1.2 * side - row * 1.2 * fwd
                p = CENTRE - dist * fwd + off
                starts.append(p)
                targets.append(CENTRE + dist * fwd + off)
    return np.array(starts), np.array(targets)


def params(model: str, preset: int = 1, flags: int | None = None) -> AgentParams:
    kw = {} if flags is None else {"update_flags": flags}
    return AgentParams(
        radius=RADIUS, height=2.0, max_speed=SPEED, max_acceleration=ACCEL,
        collision_query_range=12 * RADIUS, path_optimization_range=30 * RADIUS,
        avoidance_model=model, avoidance_type=preset, **kw,
    )  # fmt: skip


@dataclass
class Result:
    model: str
    agents: int
    arrived: int
    arrival_time: float  # [s] time at which the last agent first got within REACH (inf if not)
    mean_arrival_time: float  # [s] over arrived agents
    worst_overlap: float  # fraction of a radius
    mean_overlap: float
    overlap_frames: float  # fraction of frames with any overlap
    mean_accel: float  # [m/s^2] from positions
    mean_jerk: float  # [m/s^3] from positions
    max_speed: float  # [m/s] of the velocity arrays
    max_accel: float  # [m/s^2] of the velocity arrays
    off_mesh: int  # agent-frames off the navmesh
    stuck: int
    ms_per_update: float

    def row(self) -> dict:
        return asdict(self)


def run(model: str, scenario: str, *, preset: int = 1, steps: int = 900, crowd_hook=None,
        trajectory: bool = False):  # fmt: skip
    import time

    nm = plaza()
    start, target = circle() if scenario == "circle" else crossing()
    n = start.shape[0]
    crowd = navkit.Crowd(nm, n + 4, RADIUS)
    if preset >= 0:
        crowd.use_recastdemo_presets()
    if model == "ttc-explicit":  # the paper's force integrated explicitly
        crowd.ttc_params = TTCParams(implicit=False)
        model = "ttc"
    hs = [crowd.add_agent(p, params(model, preset)) for p in start]
    for h, t in zip(hs, target, strict=True):
        crowd.request_move_target(h, t)
    slots = np.array([crowd.slot(h) for h in hs])
    pos = np.zeros((steps, n, 3), np.float32)
    vel = np.zeros((steps, n, 3), np.float32)
    t0 = time.perf_counter()
    for k in range(steps):
        if crowd_hook is not None:
            crowd_hook(crowd, k)
        crowd.update(DT)
        pos[k] = crowd.positions[slots]
        vel[k] = crowd.velocities[slots]
    ms = (time.perf_counter() - t0) * 1000 / steps
    return summarize(model, crowd, pos, vel, target, ms, trajectory)


def summarize(model, crowd, pos, vel, target, ms, trajectory=False):
    steps, n = pos.shape[:2]
    d = np.linalg.norm((pos - target[None].astype(np.float32))[:, :, [0, 2]], axis=2)
    within = d < REACH
    first = np.where(within.any(0), within.argmax(0), -1)
    arrived = int((first >= 0).sum())
    times = (first[first >= 0] + 1) * DT
    m = crowd_metrics(pos, target, np.full(n, RADIUS), np.full(n, 2.0), DT, reach=REACH)
    # overlapping frames
    diff = pos[:, :, None, [0, 2]] - pos[:, None, :, [0, 2]]
    dist = np.linalg.norm(diff, axis=3) + np.eye(n)[None] * 1e9
    over = (dist < 2 * RADIUS).any((1, 2))
    # smoothness over agents still travelling (before arrival)
    v = np.diff(pos.astype(np.float64), axis=0) / DT
    acc = np.diff(v, axis=0) / DT
    jerk = np.diff(acc, axis=0) / DT
    moving = np.ones((steps, n), bool)
    for i in range(n):
        if first[i] >= 0:
            moving[first[i] :, i] = False
    am = np.linalg.norm(acc[:, :, [0, 2]], axis=2)[moving[2:]]
    jm = np.linalg.norm(jerk[:, :, [0, 2]], axis=2)[moving[3:]]
    vel_acc = np.linalg.norm(np.diff(vel.astype(np.float64), axis=0), axis=2) / DT
    q = crowd.query
    off = 0
    for k in range(0, steps, 10):
        for i in range(n):
            p = pos[k, i]
            near = q.find_nearest_poly(p, np.array([0.05, 1.0, 0.05], np.float32))
            if near.ref == 0 or np.hypot(*(near.point - p)[[0, 2]]) > 1e-3:
                off += 1
    res = Result(
        model=model, agents=n, arrived=arrived,
        arrival_time=float(times.max()) if arrived == n else float("inf"),
        mean_arrival_time=float(times.mean()) if arrived else float("inf"),
        worst_overlap=m.worst_overlap, mean_overlap=m.mean_overlap,
        overlap_frames=float(over.mean()),
        mean_accel=float(am.mean()) if am.size else 0.0,
        mean_jerk=float(jm.mean()) if jm.size else 0.0,
        max_speed=float(np.linalg.norm(vel, axis=2).max()),
        max_accel=float(vel_acc.max()), off_mesh=off, stuck=m.stuck, ms_per_update=ms,
    )  # fmt: skip
    return (res, pos) if trajectory else res
