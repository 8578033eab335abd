"""The ``ecm-corridor`` mode: the synthetic scenarios run by corridor agents
(:class:`navkit.ecm.CorridorAgents`) on the Explicit Corridor Map of each level's
floor plan, instead of a navmesh crowd.

The floor plans are the synthetic levels' free space in the x-z plane (the same
boxes :mod:`navkit.scenarios.geometry` bakes), so the agents' radius is kept
from the walls by the corridor map itself rather than by the navmesh's erosion.
"""

from __future__ import annotations

import time

import numpy as np

from navkit.crowd.agents import AgentParams
from navkit.errors import InputError

__all__ = ["FLOOR_PLANS", "SENSE", "run_corridor_agents"]

#: how far [m] the suite's corridor agents see their neighbours (AgentSettings.sense)
SENSE = 8.0

#: level name -> boundary ring (x, z) [m] of its walkable floor
FLOOR_PLANS: dict[str, list[tuple[float, float]]] = {
    # the plus of two 5 m corridors, 30 m long
    "crossing": [(-15, -2.5), (-2.5, -2.5), (-2.5, -15), (2.5, -15), (2.5, -2.5), (15, -2.5),
                 (15, 2.5), (2.5, 2.5), (2.5, 15), (-2.5, 15), (-2.5, 2.5), (-15, 2.5)],
    # two 10 x 10 rooms, a 0.2 m wall with a 1 m door at z = 0
    "bottleneck": [(-10, -5), (-0.1, -5), (-0.1, -0.5), (0.1, -0.5), (0.1, -5), (10, -5),
                   (10, 5), (0.1, 5), (0.1, 0.5), (-0.1, 0.5), (-0.1, 5), (-10, 5)],
    "corridor": [(-20, -2), (20, -2), (20, 2), (-20, 2)],
    "circle": [(-12, -12), (12, -12), (12, 12), (-12, 12)],
}  # fmt: skip


def run_corridor_agents(st, dt: float, steps: int):
    """Run scenario setup ``st`` with corridor agents for ``steps`` updates of
    ``dt`` seconds; returns (trajectory (steps + 1, N, 3) float32, velocities
    (steps + 1, N, 3) float32, update_ms (steps,), the agent's AgentParams)."""
    from navkit.ecm import AgentSettings, CorridorAgents, CorridorMap

    plan = FLOOR_PLANS.get(st.name)
    if plan is None:
        raise InputError(f"the ecm-corridor mode has no floor plan for scenario {st.name!r}")
    cm = CorridorMap.from_polygons(plan)
    n = st.starts.shape[0]
    a: AgentParams = st.agent
    # people see oncoming people further than AgentSettings' default 4 m: at 8 m the
    # flows of the 50 + 50 corridor form their lanes before they meet (seed 1 of the
    # suite's jittered starts, 4 m: an agent on the wrong side for its lane, crossing
    # the oncoming flow where it met it, was swept 5 m back and arrived after 43 s;
    # 8 m: everybody by 25-26 s on seeds 0-2; crossing, bottleneck and circle as good
    # or better). The neighbour grid's cells grow with it (more pairs in dense crowds).
    settings = AgentSettings(arrive_distance=min(0.1, st.reach), sense=SENSE)
    ag = CorridorAgents(cm, max_agents=n, settings=settings)
    hs = [
        ag.add_agent(st.starts[i, [0, 2]].astype(np.float64), st.targets[i, [0, 2]].astype(np.float64),
                     radius=a.radius, max_speed=a.max_speed, max_acceleration=a.max_acceleration)
        for i in range(n)
    ]  # fmt: skip
    slots = np.array([ag._slot(h) for h in hs], np.int64)
    traj = np.zeros((steps + 1, n, 3), np.float32)
    vel = np.zeros((steps + 1, n, 3), np.float32)
    y = st.starts[:, 1]
    traj[0, :, 0] = ag.positions[slots, 0]
    traj[0, :, 1] = y
    traj[0, :, 2] = ag.positions[slots, 1]
    ms = np.zeros(steps)
    for k in range(steps):
        t0 = time.perf_counter()
        ag.update(dt)
        ms[k] = (time.perf_counter() - t0) * 1e3
        traj[k + 1, :, 0] = ag.positions[slots, 0]
        traj[k + 1, :, 1] = y
        traj[k + 1, :, 2] = ag.positions[slots, 1]
        vel[k + 1, :, 0] = ag.velocities[slots, 0]
        vel[k + 1, :, 2] = ag.velocities[slots, 1]
    ag.close()
    return traj, vel, ms, a
