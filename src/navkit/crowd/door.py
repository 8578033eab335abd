"""Queueing at a narrow passage: a navkit extension of the TTC and ORCA models.

A door whose navmesh (eroded by the agent radius) is narrower than one body
(``2 r``) lets one agent through at a time. Without a rule the agents that want
through all press toward its mouth; two of them against the wall on either side,
each within a body of the door's axis, block it for each other and for everybody
behind (measured on the scenario suite's 1 m door: 8-18 of 20 agents stood 5 s
there, whatever the avoidance model). People queue instead: the one nearest the
door goes, the next follows it, and the others wait a little way back, off the
door's mouth, which leaves the way in clear.

:func:`find_gaps`: an agent's *gap* is a pair of its local boundary's segment end
points (two jambs) closer than ``2 r`` with free space between them (no wall
segment near their midpoint) that its path crosses: the polyline from the agent
through its steering corners passes between the two points or through one of
them. The gap is stored as its midpoint ``M`` (agents bound for the same door
compute the same point: the jambs are navmesh vertices).

:func:`door_queue`: among the neighbours bound for the same gap, an agent's rank
is how many are nearer ``M`` (ties to the lower slot). The nearest goes freely;
the second may come to ``min(d0 + 2.2 r, wait)`` of ``M`` (``d0``: the nearest's
distance); every other agent holds ``wait`` [wu] from ``M``.
The hold limits the component of the preferred velocity toward ``M`` to the free
distance over :data:`HEADWAY` (backing off at up to half the maximum speed when
closer); the part across it is kept, so the waiting agents spread along an arc
around the door.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

__all__ = ["find_gaps", "door_queue", "HEADWAY", "SAME_GAP"]

#: time [s] in which a held agent closes the distance to where it may stand
HEADWAY = 0.5
#: the first agent heads for the door's axis this many times its lateral offset in
#: front of the mouth
SWING = 0.0
#: the second agent, and an agent behind another on its way to the door, keeps this
#: many radii farther from the door's middle than the one ahead
FOLLOW = 2.2
#: the agents behind the first two stand this many radii out from the door's wall
STAND = 2.0
#: a gap up to a body's width and this fraction more is one body wide (the bake's
#: vertices are float32: a 1 m door's 0.6 m eroded mouth for 0.3 m agents)
WIDTH_SLACK = 0.01
#: an agent closer than this many summed radii to the agent whose turn it is steps away
#: from it (0: off)
YIELD = 1.15
#: two agents' gap midpoints closer than this [wu] are the same door
SAME_GAP = 0.05


@njit(cache=True)
def _crosses(ax, az, bx, bz, px, pz, qx, qz):
    """True when segment a-b meets segment p-q (touching counts)."""
    d1 = (bx - ax) * (pz - az) - (bz - az) * (px - ax)
    d2 = (bx - ax) * (qz - az) - (bz - az) * (qx - ax)
    d3 = (qx - px) * (az - pz) - (qz - pz) * (ax - px)
    d4 = (qx - px) * (bz - pz) - (qz - pz) * (bx - px)
    return d1 * d2 <= F32(0.0) and d3 * d4 <= F32(0.0)


@njit(cache=True)
def _seg_dist2(x, z, w):
    sx, sz = w[3] - w[0], w[5] - w[2]
    l2 = sx * sx + sz * sz
    t = F32(0.0)
    if l2 > F32(0.0):
        t = min(max(((x - w[0]) * sx + (z - w[2]) * sz) / l2, F32(0.0)), F32(1.0))
    dx, dz = x - (w[0] + t * sx), z - (w[2] + t * sz)
    return dx * dx + dz * dz


@njit(cache=True)
def find_gaps(act, mask, npos, radius, segs, nsegs, ncorners, corner_verts, gap):
    """``gap[s] = (Mx, Mz, 1)`` for every agent ``s`` of ``act`` with ``mask[s]`` whose
    path crosses a gap narrower than ``2 * radius[s]`` (module docstring; the
    nearest such gap along the path), else ``(0, 0, 0)``."""
    for i in range(act.shape[0]):
        s = act[i]
        gap[s, 0] = F32(0.0)
        gap[s, 1] = F32(0.0)
        gap[s, 2] = F32(0.0)
        gap[s, 3] = F32(0.0)
        gap[s, 4] = F32(0.0)
        gap[s, 5] = F32(0.0)
        if not mask[s]:
            continue
        ns = nsegs[s]
        wmax = F32(2.0 * (1.0 + WIDTH_SLACK)) * radius[s]
        px, pz = npos[s, 0], npos[s, 2]
        best = F32(np.inf)
        for a in range(ns):
            for ea in range(2):
                ax, az = segs[s, a, 3 * ea], segs[s, a, 3 * ea + 2]
                for b in range(a + 1, ns):
                    for eb in range(2):
                        bx, bz = segs[s, b, 3 * eb], segs[s, b, 3 * eb + 2]
                        dx, dz = bx - ax, bz - az
                        w2 = dx * dx + dz * dz
                        if w2 >= wmax * wmax or w2 < F32(1e-6):
                            continue
                        mx, mz = (ax + bx) * F32(0.5), (az + bz) * F32(0.5)
                        # free space between the two points: no wall near the midpoint
                        free = True
                        lim = F32(0.16) * w2  # (0.4 w)^2
                        for c in range(ns):
                            if _seg_dist2(mx, mz, segs[s, c]) < lim:
                                free = False
                                break
                        if not free:
                            continue
                        # the path (agent -> corners) passes between the points
                        x0, z0 = px, pz
                        walked = F32(0.0)
                        hit = False
                        sgn = F32(0.0)
                        for c in range(ncorners[s]):
                            x1, z1 = corner_verts[s, c, 0], corner_verts[s, c, 2]
                            if _crosses(x0, z0, x1, z1, ax, az, bx, bz):
                                hit = True
                                walked += np.sqrt((mx - x0) ** 2 + (mz - z0) ** 2)
                                # which way the path goes through: along (dz, -dx)?
                                sgn = (x1 - x0) * dz - (z1 - z0) * dx
                                break
                            walked += np.sqrt((x1 - x0) ** 2 + (z1 - z0) ** 2)
                            x0, z0 = x1, z1
                        if hit and walked < best and sgn != F32(0.0):
                            best = walked
                            wl = np.sqrt(w2)
                            f = F32(1.0) if sgn > F32(0.0) else F32(-1.0)
                            gap[s, 0] = mx
                            gap[s, 1] = mz
                            gap[s, 2] = F32(1.0)
                            gap[s, 3] = f * dz / wl
                            gap[s, 4] = -f * dx / wl
                            gap[s, 5] = wl


@njit(cache=True)
def door_queue(s, px, pz, prefx, prefz, gap, near, n, rad, wait, vmax, skip):
    """Agent ``s``'s preferred velocity (prefx, prefz) held back from its gap's
    midpoint by its rank in the queue (module docstring); unchanged without a gap
    or with ``wait`` <= 0. ``near[:n]`` rows ``x z vx vz radius kind slot``
    (:func:`~navkit.crowd.obstacles.gather_circles`), ``gap`` every agent's
    :func:`find_gaps` row, ``wait`` [wu] where the agents behind the first two
    stand, ``vmax`` the agent's maximum speed."""
    if wait <= F32(0.0) or gap[s, 2] < F32(0.5):
        return prefx, prefz
    mx, mz = gap[s, 0], gap[s, 1]
    rx, rz = mx - px, mz - pz
    d = np.sqrt(rx * rx + rz * rz)
    if d < F32(1e-4):
        return prefx, prefz
    rank = 0
    d0 = F32(np.inf)
    j0 = -1
    ux, uz = rx / d, rz / d
    follow = F32(0.0)  # how far from M the agent must stay behind those in its way
    for j in range(n):
        if near[j, 5] != F32(0.0) or near[j, 6] < F32(0.0):
            continue
        o = int(near[j, 6])
        if gap[o, 2] < F32(0.5):
            continue
        if abs(gap[o, 0] - mx) > SAME_GAP or abs(gap[o, 1] - mz) > SAME_GAP:
            continue
        dj = np.sqrt((near[j, 0] - mx) ** 2 + (near[j, 1] - mz) ** 2)
        if dj < d or (dj == d and o < s):
            rank += 1
            if dj < d0:
                d0 = dj
                j0 = j
            qx, qz = near[j, 0] - px, near[j, 1] - pz
            if qx * ux + qz * uz > F32(0.0) and abs(qx * uz - qz * ux) < rad + near[j, 4]:
                follow = max(follow, dj + F32(FOLLOW) * rad)
    if rank == 0:
        # the first has the way: it ignores the avoidance of the others bound for the
        # door (their penetration terms still keep them apart)
        for j in range(n):
            if near[j, 5] != F32(0.0) or near[j, 6] < F32(0.0):
                continue
            o = int(near[j, 6])
            if gap[o, 2] > F32(0.5) and abs(gap[o, 0] - mx) <= SAME_GAP and abs(
                gap[o, 1] - mz
            ) <= SAME_GAP:
                skip[j] = True
        # the first swings in: it heads for a point on the door's axis in front of the
        # mouth, as far out as it is off the axis (along the wall, dtCrowd's corners
        # graze the jamb, where the wall's energy stops it)
        nx, nz = gap[s, 3], gap[s, 4]
        lat = -rx * nz + rz * nx
        off = max(abs(lat) - F32(0.25) * gap[s, 5], F32(0.0)) * F32(SWING)
        off -= F32(0.5) * gap[s, 5]  # (a point inside the door: no overshoot across it)
        tx, tz = rx - nx * off, rz - nz * off
        tl = np.sqrt(tx * tx + tz * tz)
        sp = np.sqrt(prefx * prefx + prefz * prefz)
        if tl > F32(0.05):
            return tx / tl * sp, tz / tl * sp
        return prefx, prefz
    if j0 >= 0 and YIELD > 0.0:
        # touching the one whose turn it is: step out of its way
        qx, qz = px - near[j0, 0], pz - near[j0, 1]
        ql = np.sqrt(qx * qx + qz * qz)
        if F32(1e-6) < ql < (rad + near[j0, 4]) * F32(YIELD):
            prefx += qx / ql * F32(0.5) * vmax
            prefz += qz / ql * F32(0.5) * vmax
    allow = wait
    if rank == 1:
        allow = min(d0 + F32(FOLLOW) * rad, wait)
    allow = max(allow, follow * F32(0.0))
    if rank >= 1 and STAND > 0.0:
        # off the wall on either side of the door: stand STAND radii out from it
        nx, nz = gap[s, 3], gap[s, 4]
        back = rx * nx + rz * nz  # how far in front of the door's wall
        lim = max((back - F32(STAND) * rad) / F32(HEADWAY), F32(-0.5) * vmax)
        ax = prefx * nx + prefz * nz
        if ax > lim:
            prefx += (lim - ax) * nx
            prefz += (lim - ax) * nz
    lim = max((d - allow) / F32(HEADWAY), F32(-0.5) * vmax)
    inward = prefx * ux + prefz * uz
    if inward > lim:
        prefx += (lim - inward) * ux
        prefz += (lim - inward) * uz
    return prefx, prefz
