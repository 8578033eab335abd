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
  that were removed), in a grid of their own (:func:`build_cells`: a counting
  sort of the agents' centres into cells of the largest query range, 3 x 3 cells
  a query, every candidate considered; dtProximityGrid's hash of 3 r cells
  visits 9 x 9 buckets for dtCrowd's 12 r range and keeps only the first 32 ids);
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
from numba import prange

from navkit._jit import F32, njit

from ._par import twins

__all__ = [
    "select", "stamp", "hold", "LodState", "build_cells", "cell_neighbours",
    "cell_neighbours_par",
]  # fmt: skip

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


# -- neighbour grid of the staggered crowd ---------------------------------------------------
@njit(cache=True)
def build_cells(act, npos, qrange):
    """Agents bucketed by the cell of their centre (xz), cells of the largest query range
    (a counting sort): returns (origin x, origin z, inverse cell size, width, height,
    cell start offsets (w * h + 1), slots sorted by cell, their (x, y, z))."""
    n = act.shape[0]
    cs = F32(0.0)
    minx = F32(np.inf)
    minz = F32(np.inf)
    maxx = F32(-np.inf)
    maxz = F32(-np.inf)
    for i in range(n):
        s = act[i]
        cs = max(cs, qrange[s])
        minx = min(minx, npos[s, 0])
        maxx = max(maxx, npos[s, 0])
        minz = min(minz, npos[s, 2])
        maxz = max(maxz, npos[s, 2])
    if n == 0:
        minx = minz = maxx = maxz = F32(0.0)
    cs = max(cs, F32(1e-3))
    # at most ~4 cells per agent (a sparse crowd over a large world gets larger cells)
    while ((maxx - minx) / cs + F32(1.0)) * ((maxz - minz) / cs + F32(1.0)) > 4 * n + 1024:
        cs = cs * F32(2.0)
    inv = F32(1.0) / cs
    w = np.int64((maxx - minx) * inv) + 1
    h = np.int64((maxz - minz) * inv) + 1
    start = np.zeros(w * h + 1, np.int64)
    cell = np.empty(n, np.int64)
    for i in range(n):
        s = act[i]
        cx = min(np.int64((npos[s, 0] - minx) * inv), w - 1)
        cz = min(np.int64((npos[s, 2] - minz) * inv), h - 1)
        c = cz * w + cx
        cell[i] = c
        start[c + 1] += 1
    for c in range(w * h):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    slots = np.empty(n, np.int64)
    xyz = np.empty((n, 3), np.float32)
    for i in range(n):
        k = fill[cell[i]]
        fill[cell[i]] += 1
        s = act[i]
        slots[k] = s
        xyz[k, 0] = npos[s, 0]
        xyz[k, 1] = npos[s, 1]
        xyz[k, 2] = npos[s, 2]
    return minx, minz, inv, w, h, start, slots, xyz


def _cell_neighbours_impl(sel, walking, npos, height, qrange, minx, minz, inv, w, h, start,
                          slots, xyz, neis, nei_dist, nneis):  # fmt: skip
    """Every walking agent of ``sel``: the nearest (xz) agents within its collision query
    range whose vertical extents overlap (dtCrowd's neighbour test), sorted by
    distance, at most ``neis.shape[1]``; all candidates of the covering cells are
    considered (no cap on the ids visited, unlike dtProximityGrid's 32)."""
    maxn = neis.shape[1]
    for i in prange(sel.shape[0]):
        s = sel[i]
        if not walking[s]:
            continue
        px, py, pz = npos[s, 0], npos[s, 1], npos[s, 2]
        rng = qrange[s]
        r2 = rng * rng
        hs = height[s]
        x0 = max(np.int64(np.floor((px - rng - minx) * inv)), 0)
        x1 = min(np.int64(np.floor((px + rng - minx) * inv)), w - 1)
        z0 = max(np.int64(np.floor((pz - rng - minz) * inv)), 0)
        z1 = min(np.int64(np.floor((pz + rng - minz) * inv)), h - 1)
        n = 0
        for cz in range(z0, z1 + 1):
            for cx in range(x0, x1 + 1):
                c = cz * w + cx
                for k in range(start[c], start[c + 1]):
                    o = slots[k]
                    if o == s:
                        continue
                    dx = px - xyz[k, 0]
                    dz = pz - xyz[k, 2]
                    d2 = dx * dx + dz * dz
                    if d2 > r2:
                        continue
                    if abs(py - xyz[k, 1]) >= (hs + height[o]) / F32(2.0):
                        continue
                    if n == maxn and d2 >= nei_dist[s, n - 1]:
                        continue
                    at = n if n < maxn else maxn - 1
                    while at > 0 and nei_dist[s, at - 1] > d2:
                        if at < maxn:
                            neis[s, at] = neis[s, at - 1]
                            nei_dist[s, at] = nei_dist[s, at - 1]
                        at -= 1
                    neis[s, at] = o
                    nei_dist[s, at] = d2
                    if n < maxn:
                        n += 1
        nneis[s] = n


cell_neighbours, cell_neighbours_par = twins(_cell_neighbours_impl)
