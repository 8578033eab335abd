"""Very temporary obstacles: moving circles not worth a tile rebuild (a rolling barrel).

A temporary obstacle is an upright cylinder (centre, radius) with a velocity
[wu/s] used to predict it: every avoidance model sees it as one more moving
neighbour (dtObstacleAvoidanceQuery takes circles with velocities; the
time-to-collision and ORCA models take it as a neighbour that does not
reciprocate), agents are pushed out of it in the collision phase, and the local
grid planner (:mod:`navkit.crowd.local_grid`) rasterizes it. The crowd does not
move obstacles: the caller moves them (``Crowd.move_temporary_obstacle``), and the
velocity only says where they are heading.

:class:`TemporaryObstacles` holds them as struct-of-arrays with generational
handles (``generation << 32 | slot``, as agents). :func:`gather_circles` is the
per-agent neighbour gathering shared by the navkit avoidance models: the nearest
agents (from dtCrowd's proximity grid, more than dtCrowd's six) and temporary
obstacles within the agent's collision query range.
"""

from __future__ import annotations

import numpy as np

from navkit import _check
from navkit._jit import F32, njit
from navkit.errors import InputError, StaleHandleError

from .avoidance import MAX_CIRCLES, MAX_SEGMENTS, sample_velocity_adaptive
from .proximity import _query_items

__all__ = [
    "TemporaryObstacles", "gather_circles", "push_out_of_obstacles",
    "plan_sampled_with_obstacles", "MAX_NEAR", "MAX_OBSTACLE_CIRCLES", "GATHER_IDS",
]  # fmt: skip

MAX_NEAR = 16  # circles (agents + obstacles) one agent considers in the navkit models
#: grid ids the navkit models read per agent: dtCrowd's getNeighbours reads 32
#: (MAX_QUERY_IDS) in grid order, which in a dense crowd (the 50 + 50 corridor) drops
#: agents at random, the one on top of the agent included
GATHER_IDS = 128
MAX_OBSTACLE_CIRCLES = 4  # temporary obstacles added to dtCrowd's 6 neighbour circles
_SLOT_BITS = 32
_SLOT_MASK = (1 << _SLOT_BITS) - 1


class TemporaryObstacles:
    """Moving circles with generational handles.

    Attributes (slot-indexed, capacity grows by doubling)
    ------------------------------------------------------
    pos : (cap, 3) float32
        Centre at the base [wu].
    radius : (cap,) float32
        [wu], > 0.
    vel : (cap, 3) float32
        Velocity [wu/s] (prediction only).
    active : (cap,) bool
    """

    def __init__(self, capacity: int = 8) -> None:
        self.pos = np.zeros((capacity, 3), np.float32)
        self.radius = np.zeros(capacity, np.float32)
        self.vel = np.zeros((capacity, 3), np.float32)
        self.active = np.zeros(capacity, np.bool_)
        self.generation = np.zeros(capacity, np.int64)
        self._packed: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.active.sum())

    def _grow(self) -> None:
        n = self.active.shape[0]
        self.pos = np.concatenate([self.pos, np.zeros((n, 3), np.float32)])
        self.radius = np.concatenate([self.radius, np.zeros(n, np.float32)])
        self.vel = np.concatenate([self.vel, np.zeros((n, 3), np.float32)])
        self.active = np.concatenate([self.active, np.zeros(n, np.bool_)])
        self.generation = np.concatenate([self.generation, np.zeros(n, np.int64)])

    def slot(self, handle: object) -> int:
        if isinstance(handle, bool) or not isinstance(handle, (int, np.integer)) or handle < 0:
            raise InputError(f"obstacle handle must be a non-negative int, got {handle!r}")
        h = int(handle)
        s = h & _SLOT_MASK
        if s >= self.active.shape[0] or not self.active[s] or self.generation[s] != h >> 32:
            raise StaleHandleError(f"temporary obstacle handle {h:#x} names no live obstacle")
        return s

    def add(self, position, radius: float, velocity=(0.0, 0.0, 0.0)) -> int:
        """Add a circle; returns its handle."""
        p = _check.point(position, "position")
        r = _check.real(radius, "radius", 0.0, 1e6, lo_open=True, unit="wu")
        v = _check.point(velocity, "velocity")
        free = np.flatnonzero(~self.active)
        if free.size == 0:
            self._grow()
            free = np.flatnonzero(~self.active)
        s = int(free[0])
        self.pos[s] = p
        self.radius[s] = r
        self.vel[s] = v
        self.active[s] = True
        self._packed = None
        return (int(self.generation[s]) << _SLOT_BITS) | s

    def move(self, handle: int, position, velocity=None) -> None:
        """New centre (and velocity, when given) of a live obstacle."""
        s = self.slot(handle)
        self.pos[s] = _check.point(position, "position")
        if velocity is not None:
            self.vel[s] = _check.point(velocity, "velocity")
        self._packed = None

    def remove(self, handle: int) -> None:
        s = self.slot(handle)
        self.active[s] = False
        self.generation[s] += 1
        self._packed = None

    def packed(self) -> np.ndarray:
        """(k, 7) float32 rows ``x y z radius vx vy vz`` of the live obstacles."""
        if self._packed is None:
            idx = np.flatnonzero(self.active)
            self._packed = np.ascontiguousarray(
                np.concatenate([self.pos[idx], self.radius[idx, None], self.vel[idx]], axis=1),
                np.float32,
            )
        return self._packed


@njit(cache=True)
def gather_circles(s, act, npos, vel, radius, height, qrange, inv, buckets, items, obs, ids, out):
    """Nearest moving circles around agent ``s``; returns their count (<= out.shape[0]).

    Agents come from the proximity grid (``ids`` scratch, :data:`GATHER_IDS`), within
    ``qrange[s]`` (xz) and overlapping in height; obstacles (``obs`` rows of
    :meth:`TemporaryObstacles.packed`) when their edge is within range and their
    base within the agent's height. ``out`` rows: ``x z vx vz radius kind`` (kind 0
    agent, 1 obstacle), and when ``out`` has a 7th column the agent's slot (-1 for an
    obstacle: a tie-break for coincident agents), sorted by distance, the nearest kept.
    """
    px, py, pz = npos[s, 0], npos[s, 1], npos[s, 2]
    rng = qrange[s]
    cap = out.shape[0]
    dist = np.empty(cap, np.float32)
    n = 0
    nid = _query_items(px - rng, pz - rng, px + rng, pz + rng, inv, buckets, items, ids)
    total = nid + obs.shape[0]
    for k in range(total):
        if k < nid:
            o = act[ids[k]]
            if o == s:
                continue
            if abs(py - npos[o, 1]) >= (height[s] + height[o]) / F32(2.0):
                continue
            slot = F32(o)
            ox, oz, ovx, ovz, orad, kind = (
                npos[o, 0],
                npos[o, 2],
                vel[o, 0],
                vel[o, 2],
                radius[o],
                F32(0.0),
            )
            lim = rng
        else:
            b = obs[k - nid]
            if b[1] - py >= height[s] or py - b[1] >= height[s]:
                continue
            slot = F32(-1.0)
            ox, oz, ovx, ovz, orad, kind = b[0], b[2], b[4], b[6], b[3], F32(1.0)
            lim = rng + orad
        dx = ox - px
        dz = oz - pz
        d2 = dx * dx + dz * dz
        if d2 > lim * lim:
            continue
        # insertion by distance
        if n == cap and d2 >= dist[n - 1]:
            continue
        at = min(n, cap - 1)
        while at > 0 and dist[at - 1] > d2:
            if at < cap:
                dist[at] = dist[at - 1]
                out[at, :] = out[at - 1, :]
            at -= 1
        dist[at] = d2
        out[at, 0] = ox
        out[at, 1] = oz
        out[at, 2] = ovx
        out[at, 3] = ovz
        out[at, 4] = orad
        out[at, 5] = kind
        if out.shape[1] > 6:
            out[at, 6] = slot
        if n < cap:
            n += 1
    return n


@njit(cache=True)
def push_out_of_obstacles(act, walking, npos, radius, height, obs):
    """Move every walking agent out of the temporary obstacles it overlaps (xz)."""
    for i in range(act.shape[0]):
        s = act[i]
        if not walking[s]:
            continue
        for k in range(obs.shape[0]):
            b = obs[k]
            if b[1] - npos[s, 1] >= height[s] or npos[s, 1] - b[1] >= height[s]:
                continue
            dx = npos[s, 0] - b[0]
            dz = npos[s, 2] - b[2]
            rr = radius[s] + b[3]
            d2 = dx * dx + dz * dz
            if d2 >= rr * rr:
                continue
            d = np.sqrt(d2)
            if d < F32(1e-4):
                dx, dz, d = F32(1.0), F32(0.0), F32(1.0)
            k2 = (rr - d) / d
            npos[s, 0] += dx * k2
            npos[s, 2] += dz * k2


@njit(cache=True)
def plan_sampled_with_obstacles(act, walking, update_flags, npos, radius, height, vel, dvel,
                                desired_speed, neis, nneis, segs, nsegs, avoid_type, fp_table,
                                ip_table, obs, nvel):  # fmt: skip
    """dtCrowd's velocity planning (:func:`navkit.crowd.avoidance.plan_velocities`) with
    the temporary obstacles near each agent (its collision query range is not known
    here: obstacles within 12 radii, the nearest MAX_OBSTACLE_CIRCLES) added to its
    neighbour circles, as dtObstacleAvoidanceQuery takes moving circles."""
    cir = np.zeros((MAX_CIRCLES + MAX_OBSTACLE_CIRCLES, 16), np.float32)
    sg = np.zeros((MAX_SEGMENTS, 6), np.float32)
    od = np.zeros(MAX_OBSTACLE_CIRCLES, np.float32)
    oi = np.zeros(MAX_OBSTACLE_CIRCLES, np.int64)
    total = 0
    for i in range(act.shape[0]):
        s = act[i]
        if not walking[s]:
            continue
        if not update_flags[s] & 2:  # OBSTACLE_AVOIDANCE
            nvel[s, 0] = dvel[s, 0]
            nvel[s, 1] = dvel[s, 1]
            nvel[s, 2] = dvel[s, 2]
            continue
        nc = 0
        for j in range(min(nneis[s], MAX_CIRCLES)):
            o = neis[s, j]
            cir[nc, 0:3] = npos[o]
            cir[nc, 3] = radius[o]
            cir[nc, 4:7] = vel[o]
            cir[nc, 7:10] = dvel[o]
            nc += 1
        # nearest obstacles (insertion)
        no = 0
        rng = radius[s] * F32(12.0)
        for k in range(obs.shape[0]):
            b = obs[k]
            if b[1] - npos[s, 1] >= height[s] or npos[s, 1] - b[1] >= height[s]:
                continue
            dx = b[0] - npos[s, 0]
            dz = b[2] - npos[s, 2]
            d2 = dx * dx + dz * dz
            lim = rng + b[3]
            if d2 > lim * lim:
                continue
            if no == MAX_OBSTACLE_CIRCLES and d2 >= od[no - 1]:
                continue
            at = min(no, MAX_OBSTACLE_CIRCLES - 1)
            while at > 0 and od[at - 1] > d2:
                od[at] = od[at - 1]
                oi[at] = oi[at - 1]
                at -= 1
            od[at] = d2
            oi[at] = k
            if no < MAX_OBSTACLE_CIRCLES:
                no += 1
        for j in range(no):
            b = obs[oi[j]]
            cir[nc, 0:3] = b[0:3]
            cir[nc, 3] = b[3]
            cir[nc, 4:7] = b[4:7]
            cir[nc, 7:10] = b[4:7]
            nc += 1
        ns = 0
        px, pz = npos[s, 0], npos[s, 2]
        for j in range(nsegs[s]):
            w = segs[s, j]
            if (w[3] - px) * (w[2] - pz) - (w[0] - px) * (w[5] - pz) < F32(0.0):
                continue
            if ns < MAX_SEGMENTS:
                sg[ns, :] = w
                ns += 1
        t = avoid_type[s]
        total += sample_velocity_adaptive(
            npos[s], radius[s], desired_speed[s], vel[s], dvel[s], cir, nc, sg, ns,
            fp_table[t], ip_table[t], nvel[s],
        )  # fmt: skip
    return total
