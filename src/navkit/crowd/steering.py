"""dtCrowd's per-agent arithmetic phases as numba kernels over all agents.

steering (straight or anticipated-turn direction, slow-down near the goal, or a
requested velocity), separation, integration (acceleration-limited velocity,
explicit Euler), collision resolution (4 Jacobi iterations of pairwise
push-apart). float32 in Detour's operation order; ``act`` is the active slots
in dtCrowd's order, ``walking`` the per-slot STATE_WALKING mask.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from navkit._jit import F32, njit

from ._par import twins

__all__ = [
    "steer", "separate", "integrate", "resolve_collisions", "steer_par", "separate_par",
    "integrate_par", "resolve_collisions_par",
]  # fmt: skip

_TARGET_NONE = 0
_TARGET_VELOCITY = 6
_ANTICIPATE_TURNS = 1
_SEPARATION = 4
_STRAIGHTPATH_END = 2
_COLLISION_RESOLVE_FACTOR = F32(0.7)


@njit(inline="always")
def _len3(x, y, z):
    return np.sqrt(x * x + y * y + z * z)


def _steer_impl(act, walking, target_state, target_pos, update_flags, ncorners, corner_verts,
          corner_flags, npos, radius, max_speed, desired_speed, dvel):  # fmt: skip
    """Desired velocity ``dvel`` and ``desired_speed`` of every walking agent with a target."""
    for i in prange(act.shape[0]):
        s = act[i]
        if not walking[s] or target_state[s] == _TARGET_NONE:
            continue
        if target_state[s] == _TARGET_VELOCITY:
            dvel[s, 0] = target_pos[s, 0]
            dvel[s, 1] = target_pos[s, 1]
            dvel[s, 2] = target_pos[s, 2]
            desired_speed[s] = _len3(target_pos[s, 0], target_pos[s, 1], target_pos[s, 2])
            continue
        nc = ncorners[s]
        px, pz = npos[s, 0], npos[s, 2]
        dx = F32(0.0)
        dy = F32(0.0)
        dz = F32(0.0)
        if nc > 0:
            c0x, c0z = corner_verts[s, 0, 0], corner_verts[s, 0, 2]
            if update_flags[s] & _ANTICIPATE_TURNS:
                k = min(1, nc - 1)
                d0x, d0z = c0x - px, c0z - pz
                d1x, d1z = corner_verts[s, k, 0] - px, corner_verts[s, k, 2] - pz
                len0 = _len3(d0x, F32(0.0), d0z)
                len1 = _len3(d1x, F32(0.0), d1z)
                if len1 > F32(0.001):
                    inv = F32(1.0) / len1
                    d1x = d1x * inv
                    d1z = d1z * inv
                dx = d0x - d1x * len0 * F32(0.5)
                dz = d0z - d1z * len0 * F32(0.5)
            else:
                dx = c0x - px
                dz = c0z - pz
            inv = F32(1.0) / _len3(dx, dy, dz)
            dx = dx * inv
            dy = dy * inv
            dz = dz * inv
        slow = radius[s] * F32(2.0)
        dist = slow
        if nc > 0 and corner_flags[s, nc - 1] & _STRAIGHTPATH_END:
            ex = corner_verts[s, nc - 1, 0] - px
            ez = corner_verts[s, nc - 1, 2] - pz
            dist = min(np.sqrt(ex * ex + ez * ez), slow)
        scale = dist / slow
        desired_speed[s] = max_speed[s]
        k2 = desired_speed[s] * scale
        dvel[s, 0] = dx * k2
        dvel[s, 1] = dy * k2
        dvel[s, 2] = dz * k2


def _separate_impl(act, walking, target_state, update_flags, npos, neis, nneis, qrange, weight,
             desired_speed, dvel):  # fmt: skip
    """Add the separation steering to ``dvel`` (agents with the SEPARATION flag)."""
    for i in prange(act.shape[0]):
        s = act[i]
        if not walking[s] or target_state[s] == _TARGET_NONE:
            continue
        if not update_flags[s] & _SEPARATION:
            continue
        sep = qrange[s]
        inv_sep = F32(1.0) / sep
        wgt = weight[s]
        w = F32(0.0)
        sx = F32(0.0)
        sy = F32(0.0)
        sz = F32(0.0)
        for j in range(nneis[s]):
            o = neis[s, j]
            dx = npos[s, 0] - npos[o, 0]
            dz = npos[s, 2] - npos[o, 2]
            d2 = dx * dx + F32(0.0) * F32(0.0) + dz * dz
            if d2 < F32(0.00001) or d2 > sep * sep:
                continue
            dist = np.sqrt(d2)
            dd = dist * inv_sep
            k = (wgt * (F32(1.0) - dd * dd)) / dist
            sx = sx + dx * k
            sy = sy + F32(0.0) * k
            sz = sz + dz * k
            w += F32(1.0)
        if w > F32(0.0001):
            iw = F32(1.0) / w
            vx = dvel[s, 0] + sx * iw
            vy = dvel[s, 1] + sy * iw
            vz = dvel[s, 2] + sz * iw
            sp2 = vx * vx + vy * vy + vz * vz
            ds2 = desired_speed[s] * desired_speed[s]
            if sp2 > ds2:
                k = ds2 / sp2
                vx = vx * k
                vy = vy * k
                vz = vz * k
            dvel[s, 0] = vx
            dvel[s, 1] = vy
            dvel[s, 2] = vz


def _integrate_impl(act, walking, max_acceleration, dt, nvel, vel, npos):
    """dtCrowd's integrate(): velocity toward ``nvel`` limited by max_acceleration*dt, then move."""
    for i in prange(act.shape[0]):
        s = act[i]
        if not walking[s]:
            continue
        max_delta = max_acceleration[s] * dt
        dvx = nvel[s, 0] - vel[s, 0]
        dvy = nvel[s, 1] - vel[s, 1]
        dvz = nvel[s, 2] - vel[s, 2]
        ds = _len3(dvx, dvy, dvz)
        if ds > max_delta:
            k = max_delta / ds
            dvx = dvx * k
            dvy = dvy * k
            dvz = dvz * k
        vel[s, 0] = vel[s, 0] + dvx
        vel[s, 1] = vel[s, 1] + dvy
        vel[s, 2] = vel[s, 2] + dvz
        if _len3(vel[s, 0], vel[s, 1], vel[s, 2]) > F32(0.0001):
            npos[s, 0] = npos[s, 0] + vel[s, 0] * dt
            npos[s, 1] = npos[s, 1] + vel[s, 1] * dt
            npos[s, 2] = npos[s, 2] + vel[s, 2] * dt
        else:
            vel[s, 0] = F32(0.0)
            vel[s, 1] = F32(0.0)
            vel[s, 2] = F32(0.0)


def _resolve_collisions_impl(act, walking, npos, radius, dvel, neis, nneis, disp):
    """Four iterations: each walking agent's push-out from overlapping neighbours
    (averaged, 0.7 of half the penetration), then all displacements applied."""
    for _ in range(4):
        for i in prange(act.shape[0]):
            s = act[i]
            if not walking[s]:
                continue
            ox = F32(0.0)
            oy = F32(0.0)
            oz = F32(0.0)
            w = F32(0.0)
            for j in range(nneis[s]):
                o = neis[s, j]
                dx = npos[s, 0] - npos[o, 0]
                dy = F32(0.0)
                dz = npos[s, 2] - npos[o, 2]
                d2 = dx * dx + dy * dy + dz * dz
                rr = radius[s] + radius[o]
                if d2 > rr * rr:
                    continue
                dist = np.sqrt(d2)
                pen = rr - dist
                if dist < F32(0.0001):
                    if s > o:
                        dx = -dvel[s, 2]
                        dz = dvel[s, 0]
                    else:
                        dx = dvel[s, 2]
                        dz = -dvel[s, 0]
                    dy = F32(0.0)
                    pen = F32(0.01)
                else:
                    pen = (F32(1.0) / dist) * (pen * F32(0.5)) * _COLLISION_RESOLVE_FACTOR
                ox = ox + dx * pen
                oy = oy + dy * pen
                oz = oz + dz * pen
                w += F32(1.0)
            if w > F32(0.0001):
                iw = F32(1.0) / w
                ox = ox * iw
                oy = oy * iw
                oz = oz * iw
            disp[s, 0] = ox
            disp[s, 1] = oy
            disp[s, 2] = oz
        for i in prange(act.shape[0]):
            s = act[i]
            if walking[s]:
                npos[s, 0] = npos[s, 0] + disp[s, 0]
                npos[s, 1] = npos[s, 1] + disp[s, 1]
                npos[s, 2] = npos[s, 2] + disp[s, 2]


steer, steer_par = twins(_steer_impl)
separate, separate_par = twins(_separate_impl)
integrate, integrate_par = twins(_integrate_impl)
# (four passes over all agents, each reading the others' positions: not chunked)
resolve_collisions, resolve_collisions_par = twins(_resolve_collisions_impl, driver=False)
