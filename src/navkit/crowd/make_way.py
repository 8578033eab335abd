"""Agents settled at their goal make way for the ones walking through: a navkit
extension of the TTC and ORCA models.

An agent that has arrived stands at its goal; the agents still walking to theirs
among them (the far end of the suite's 50 + 50 corridor, where each group ends in
a block of goals 0.8 m apart, 0.2 m between two bodies) see it as a wall: the
avoidance stops them in front of it, and it has no reason to move. People who
stand where others need to pass step aside and come back. :func:`make_way`: a
*settled* agent (its desired speed under half its maximum: dtCrowd's arrival
slow-down scales the desired speed with the distance to the goal over two radii,
so settled is within a radius of the goal) that a walking agent (desired speed
over half its maximum) comes toward -- the settled agent in front of it, within
the summed radii plus ``ahead`` along its desired direction, and laterally within
the summed radii of its line -- adds a sideways step away from that line to its
preferred velocity (half its maximum speed times how much of it is in the way).
Once the walker passed, its desired velocity (dtCrowd's steering to the goal)
brings it back. The corridor agents of the ECM do the same (``navkit.ecm.agents``:
arrived agents make way).

Measured on the scenario suite (docs/scenarios.md; seeds: the suite's starts and
two jitters of them by up to 0.1 m): ORCA's last bottleneck agent, held 1.8 m
from its goal by an agent standing at its own goal against the far wall, arrives
(95% -> 100% on every seed); the TTC corridor's end block no longer keeps agents
out (seed 0: 98% -> 100%, last arrival 41.7 -> 33.8 s; seed 1: 97% -> 100%).
The corridor's jam where the flows meet (seed 2: 90%) is another matter.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

__all__ = ["make_way"]


@njit(cache=True)
def make_way(s, px, pz, dvel, max_speed, near, n, rad, ahead):
    """Step (unit-free, length <= 1; times half the maximum speed it is added to the
    preferred velocity) by which agent ``s`` at (px, pz), settled at its goal, gets
    out of the way of walking neighbours (module docstring); (0, 0) when it is not
    settled, when nobody comes, or with ``ahead`` <= 0.

    ``near[:n]`` rows ``x z vx vz radius kind slot``
    (:func:`~navkit.crowd.obstacles.gather_circles`), ``dvel`` and ``max_speed``
    every agent's desired velocity and maximum speed, ``rad`` the agent's radius,
    ``ahead`` [wu] how far in front of a walker (beyond the summed radii) the agent
    starts to step aside."""
    dl = np.sqrt(dvel[s, 0] * dvel[s, 0] + dvel[s, 2] * dvel[s, 2])
    if dl >= F32(0.5) * max_speed[s] or ahead <= F32(0.0):
        return F32(0.0), F32(0.0)
    mx, mz = F32(0.0), F32(0.0)
    for j in range(n):
        if near[j, 5] != F32(0.0) or near[j, 6] < F32(0.0):
            continue  # temporary obstacles do not walk through
        o = int(near[j, 6])
        ex, ez = dvel[o, 0], dvel[o, 2]
        el = np.sqrt(ex * ex + ez * ez)
        if el < F32(0.5) * max_speed[o] or el < F32(1e-6):
            continue  # settled too: nobody has to pass
        ex, ez = ex / el, ez / el
        rx, rz = px - near[j, 0], pz - near[j, 1]
        along = rx * ex + rz * ez
        rr = rad + near[j, 4]
        if along <= F32(0.0) or along > rr + ahead:
            continue  # behind the walker, or not yet close
        qx, qz = -ez, ex
        side = rx * qx + rz * qz
        if abs(side) >= rr:
            continue  # it passes by
        sg = F32(1.0) if side >= F32(0.0) else F32(-1.0)
        w = (rr - abs(side)) / rr
        mx += sg * qx * w
        mz += sg * qz * w
    ml = np.sqrt(mx * mx + mz * mz)
    if ml > F32(1.0):
        mx, mz = mx / ml, mz / ml
    return mx, mz
