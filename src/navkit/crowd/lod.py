"""Level of detail of navkit mode's crowd: staggered per-agent work for big crowds.

``Crowd(..., mode="navkit", level_of_detail=k)`` with ``k > 1`` spreads each
agent's expensive work over ``k`` updates, round robin by slot: in update ``f``
the agents with ``(slot + f) % k == 0`` are *due*. Every update, every walking
agent still steers toward its corners, separates, integrates (speed and
acceleration limits), resolves collisions with its neighbours' current positions
and is moved along the navmesh surface (so it never leaves the mesh). Only due
agents:

* check their corridor's validity (look ahead), with ``k * dt`` on their replan
  clocks; agents marked by a navmesh change are checked at once;
* rebuild their local boundary when they moved a quarter of their query range
  (or it became invalid);
* query their neighbours (the others keep their neighbour list, minus agents
  that were removed);
* plan their velocity (sampled, TTC or ORCA avoidance); the others keep their
  last planned velocity, shortened to their current desired speed (and, without
  OBSTACLE_AVOIDANCE, take their desired velocity).

Corners (straight path and the visibility optimisation) are refreshed for due
agents and, every update, for any agent whose corridor changed since its
corners were computed (first polygon, length, last polygon or end point), that
has none, or that is within ``radius + k * max_speed * dt`` of its first corner.

:func:`select` computes those sets in one pass; :func:`stamp` records the
corridor behind each agent's corners; :func:`hold` carries non-due agents'
velocities and neighbour lists over.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

__all__ = ["select", "stamp", "hold", "LodState"]

_TARGET_NONE = 0
_TARGET_VELOCITY = 6
_OBSTACLE_AVOIDANCE = 2


class LodState:
    """Per-slot bookkeeping of the staggered updates (``k`` = level of detail)."""

    def __init__(self, n: int, k: int) -> None:
        self.k = k
        self.frame = 0
        self.due = np.zeros(n, np.bool_)
        self.stamp_ref = np.zeros((n, 3), np.int64)  # c_path[0], c_npath, c_path[-1]
        self.stamp_target = np.zeros((n, 3), np.float32)
        self.corners_refreshed = 0  # agents whose corners were refreshed in the last update


@njit(cache=True)
def select(act, frame, k, walking, target_state, c_path, c_npath, c_target, ncorners,
           corner_verts, npos, radius, max_speed, dt, stamp_ref, stamp_target, due,
           due_out, corners_out):  # fmt: skip
    """Fill ``due`` (per slot), ``due_out`` (due active slots, in act order) and
    ``corners_out`` (slots whose corners are refreshed); returns their counts."""
    nd = 0
    nc = 0
    for i in range(act.shape[0]):
        s = act[i]
        d = (s + frame) % k == 0
        due[s] = d
        if d:
            due_out[nd] = s
            nd += 1
        if not walking[s]:
            continue
        ts = target_state[s]
        if ts == _TARGET_NONE or ts == _TARGET_VELOCITY:
            continue
        refresh = d or ncorners[s] == 0
        if not refresh:
            n = c_npath[s]
            refresh = (
                stamp_ref[s, 0] != c_path[s, 0] or stamp_ref[s, 1] != n
                or stamp_ref[s, 2] != c_path[s, n - 1]
                or stamp_target[s, 0] != c_target[s, 0] or stamp_target[s, 1] != c_target[s, 1]
                or stamp_target[s, 2] != c_target[s, 2]
            )  # fmt: skip
        if not refresh:
            near = radius[s] + F32(k) * max_speed[s] * dt
            dx = corner_verts[s, 0, 0] - npos[s, 0]
            dz = corner_verts[s, 0, 2] - npos[s, 2]
            refresh = dx * dx + dz * dz < near * near
        if refresh:
            corners_out[nc] = s
            nc += 1
    return nd, nc


@njit(cache=True)
def stamp(sel, c_path, c_npath, c_target, stamp_ref, stamp_target):
    """Record the corridor the corners of ``sel`` were computed from."""
    for i in range(sel.shape[0]):
        s = sel[i]
        n = c_npath[s]
        stamp_ref[s, 0] = c_path[s, 0]
        stamp_ref[s, 1] = n
        stamp_ref[s, 2] = c_path[s, n - 1]
        for q in range(3):
            stamp_target[s, q] = c_target[s, q]


@njit(cache=True)
def hold(act, due, walking, active, update_flags, dvel, nvel, neis, nneis, nei_dist):
    """Non-due walking agents: drop removed neighbours; keep the last planned velocity,
    no longer than the desired speed (the desired velocity without avoidance)."""
    for i in range(act.shape[0]):
        s = act[i]
        if due[s] or not walking[s]:
            continue
        n = nneis[s]
        m = 0
        for j in range(n):
            o = neis[s, j]
            if active[o]:
                neis[s, m] = o
                nei_dist[s, m] = nei_dist[s, j]
                m += 1
        nneis[s] = m
        if not update_flags[s] & _OBSTACLE_AVOIDANCE:
            nvel[s, 0] = dvel[s, 0]
            nvel[s, 1] = dvel[s, 1]
            nvel[s, 2] = dvel[s, 2]
            continue
        ds = np.sqrt(dvel[s, 0] * dvel[s, 0] + dvel[s, 1] * dvel[s, 1] + dvel[s, 2] * dvel[s, 2])
        sp = np.sqrt(nvel[s, 0] * nvel[s, 0] + nvel[s, 1] * nvel[s, 1] + nvel[s, 2] * nvel[s, 2])
        if sp > ds:
            f = ds / sp if sp > F32(0.0) else F32(0.0)
            nvel[s, 0] = nvel[s, 0] * f
            nvel[s, 1] = nvel[s, 1] * f
            nvel[s, 2] = nvel[s, 2] * f
