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

:func:`door_queue`, on the preferred velocity of the TTC / ORCA agents: an agent's
rank is how many agents bound for the same gap are nearer ``M``. With the crowd's
8-wide gap rows :func:`find_gaps` ranks every agent bound for the door (``gap[s, 6]``,
:func:`_rank`); otherwise the rank counts the neighbours in ``near`` only (ties to the
lower slot), which misses the ones in front of an agent a few metres out.

- The nearest has the way: it ignores the avoidance of the others bound for the
  door (``skip``: their TTC energies, their ORCA half-planes unless touching; the
  contact terms still keep bodies apart) and heads straight for a point on the
  door's axis half the gap's width inside it (dtCrowd's corners make an agent that
  comes along the wall graze the jamb, where the wall's energy stops it; aimed at
  ``M`` itself it overshoots the door).
- Every other agent touching it (closer than :data:`YIELD` summed radii) steps away
  from it at half its maximum speed: two ORCA agents touching it from either side
  wedged it (their half-planes left it no velocity) for 6 s.
- The second may come to ``min(d0 + FOLLOW r, wait)`` of ``M`` (``d0``: the
  nearest's distance) and keeps that following distance: the speed at which the
  first closes on ``M`` is added to its hold (without it the second lagged half a
  second of walking behind the first, and the door passed about 1.3 agents/s).
- The k-th agent after the second waits ``sqrt(wait^2 + (k - 1) QUEUE_AREA r^2 /
  (pi / 2))`` from ``M`` (a half disc of QUEUE_AREA r^2 per agent): every pass
  brings every waiting agent a little closer, instead of a crowd pressing on an arc
  at ``wait`` where only the front can move.
- The second and the others stand :data:`STAND` radii out from the door's wall,
  off the jambs: an agent that reaches its turn against the wall has to turn a
  corner in the door's mouth.

- Timed approach (``pace`` > 0, ``TTCParams/ORCAParams.door_pace``): the k-th agent
  after the second comes no faster toward ``M`` than it needs to reach the waiting
  distance when its turn comes, ``(d - wait) / ((k - 1) pace)`` (at least ``creep``):
  people who see a crowd at a door slow down early instead of rushing to it and
  standing in it. A dense half disc passing about 1.3 agents/s advances its back
  rows about 0.4 m in 5 s.
- Order (9-wide gap rows): the queue is ranked by the distance to ``M`` less
  :data:`QUEUE_CREDIT` times the time the agent has been bound for the door. By
  distance alone, an agent waiting on the funnel's side, near the wall, lost its
  place to every agent who came in along the door's axis and stood closer.

- Seen from afar (:func:`_join`, ``sight``): an agent finds a door among its own
  walls (the local boundary: 8 segments within its collision query range, 2.7-3 m
  out for the scenario suite's people); an agent whose path crosses, within
  :data:`SIGHT` collision query ranges along it, a door another agent found is bound
  for it too, so its approach is timed from there (without it, a block of people
  walked at full speed into the door's crowd, stood inside its place on the funnel
  and backed off). The credit counts only the time an agent has seen the door among
  its own walls.

The TTC and ORCA agents bound for such a door also walk without the models'
``pref_turn`` (``door_straight``): turned, the part of the preferred velocity
across the direction to ``M`` that a hold keeps carried the whole waiting crowd
along the wall to one side of the door (up to 3 m off its axis).

A hold limits the component of the preferred velocity toward ``M``  (or away from the
wall) to the free distance over :data:`HEADWAY`, backing off at up to half the
maximum speed when closer; the part across it is kept, so the waiting agents spread
along an arc around the door.

Measured on the scenario suite's bottleneck (20 agents, a 1 m door: 0.6 m of
navmesh at its mouth, 0.3 m in its middle; seeds 0-7, docs/crowd_models.md): with
the first door queue (ranks among the neighbours, everybody behind the second at
``wait``) ORCA last arrival 33.6 -> 29.1 s on average, agents standing 5 s 11.1 ->
8.5; TTC 45.0 -> 29.7 s, 15.0 -> 8.6 (its first agent also relaxes to its preferred
velocity in ``ttc.XI_FIRST``, not the model's 0.54 s). With the door's ranks, the
following distance and the funnel: TTC 29.7 -> 23.3 s (every seed within 30 s),
8.6 -> 5.3 standing; ORCA 29.1 -> 24.4 s, 8.5 -> 4.6 (on seed 5 one ORCA agent
of 20, pushed 1.6 m off its goal into a corner of the block of goals, never returns). The issue's "nobody stuck"
needs more: agents on the funnel's sides gain under 0.5 m in 5 s, and beyond the
door agents knocked off their goals stand in the block of goals. With the timed
approach, the straight walk, the queue's credit and arriving agents holding their
ground (``ttc._hold_ground``; seeds 0-7, docs/crowd_models.md): TTC agents
standing 5 s 5.3 -> 2.4 per run, ORCA 4.6 -> 2.6; what is left is the first
seconds, when the whole block reaches the door's crowd together. Seen from afar
(:func:`_join`; seeds 0-15): nobody stands 5 s, TTC or ORCA.

The corridor agents of :mod:`navkit.ecm` queue with the same :func:`door_queue` on
their desired velocity; their doors come from their own corridors
(``navkit.ecm._agent_kernels.find_doors``) and are ranked by :func:`_rank`.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

__all__ = [
    "find_gaps", "door_queue", "HEADWAY", "FOLLOW", "STAND", "YIELD", "SAME_GAP", "QUEUE_AREA",
    "QUEUE_CREDIT", "SIGHT",
]  # fmt: skip

#: time [s] in which a held agent closes the distance to where it may stand
HEADWAY = 0.5
#: the second agent keeps this many radii farther from the door's middle than the first
FOLLOW = 2.2
#: the agents behind the first stand this many radii out from the door's wall
STAND = 2.0
#: a gap up to a body's width and this fraction more is one body wide (the bake's
#: vertices are float32: a 1 m door's 0.6 m eroded mouth for 0.3 m agents)
WIDTH_SLACK = 0.01
#: an agent closer than this many summed radii to the agent whose turn it is steps away
#: from it (0: off)
YIELD = 1.15
#: two agents' gap midpoints closer than this [wu] are the same door
SAME_GAP = 0.05
#: floor area [r^2] each agent waiting behind the second takes in the queue's half
#: disc: the k-th of them waits at ``sqrt(wait^2 + (k - 1) QUEUE_AREA r^2 / (pi / 2))``
#: from the door's middle (0: all at ``wait``)
QUEUE_AREA = 9.0
#: the queue's order: distance to the door's middle less this speed [wu/s] times the
#: time the agent has been bound for the door (9-wide gap rows; 0: distance only)
QUEUE_CREDIT = 0.1
#: an agent whose path crosses, within this many of its collision query ranges along
#: it, a door that another agent found is bound for that door too (0: off)
SIGHT = 3.0


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
def _bind(gap, s, mx, mz, dx, dz, w, sgn):
    """Agent ``s`` bound for the door of midpoint (mx, mz) and width ``w`` between
    jambs ``d = (dx, dz)`` apart, passed on the side of ``sgn``: ``gap[s, :6]``."""
    f = F32(1.0) if sgn > F32(0.0) else F32(-1.0)
    gap[s, 0] = mx
    gap[s, 1] = mz
    gap[s, 2] = F32(1.0)
    gap[s, 3] = f * dz / w
    gap[s, 4] = -f * dx / w
    gap[s, 5] = w


@njit(cache=True)
def find_gaps(act, mask, npos, radius, segs, nsegs, ncorners, corner_verts, gap, dt=0.0,
              sight=None):
    """``gap[s] = (Mx, Mz, 1)`` for every agent ``s`` of ``act`` with ``mask[s]`` whose
    path crosses a gap narrower than ``2 * radius[s]`` (module docstring; the
    nearest such gap along the path), else ``(0, 0, 0)``. With 8-wide rows also the
    ranks (:func:`_rank`); with 9-wide rows ``gap[s, 8]`` counts the time [s] the
    agent has been bound for a door (``dt`` per call) and credits it in the ranks."""
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
                            _bind(gap, s, mx, mz, dx, dz, np.sqrt(w2), sgn)
    if gap.shape[1] >= 9:
        # time [s] the agent has been bound for its door (found among its own walls)
        for i in range(act.shape[0]):
            s = act[i]
            gap[s, 8] = gap[s, 8] + F32(dt) if gap[s, 2] > F32(0.5) else F32(0.0)
    if sight is not None:
        _join(act, mask, npos, ncorners, corner_verts, gap, sight)
    if gap.shape[1] >= 8:
        _rank(act, npos, gap)


@njit(cache=True)
def _join(act, mask, npos, ncorners, corner_verts, gap, sight):
    """Agents of ``act`` with ``mask`` and no gap of their own whose path (agent ->
    corners) crosses, within ``sight[s]`` [wu] along it, a door another agent found
    (:func:`find_gaps`) are bound for it too: people see the door and the crowd at it
    before its jambs are among their nearest walls (dtLocalBoundary keeps 8 segments
    within the collision query range), and time their approach to it from there."""
    m = 0
    for i in range(act.shape[0]):
        if gap[act[i], 2] > F32(0.5):
            m += 1
    if m == 0:
        return
    # the distinct doors: midpoint, jamb direction, width
    dm = np.empty((m, 5), np.float32)
    nd = 0
    for i in range(act.shape[0]):
        s = act[i]
        if gap[s, 2] < F32(0.5):
            continue
        seen = False
        for h in range(nd):
            if abs(dm[h, 0] - gap[s, 0]) <= SAME_GAP and abs(dm[h, 1] - gap[s, 1]) <= SAME_GAP:
                seen = True
                break
        if not seen:
            dm[nd, 0] = gap[s, 0]
            dm[nd, 1] = gap[s, 1]
            dm[nd, 2] = -gap[s, 4]  # along the jambs (the normal turned a quarter)
            dm[nd, 3] = gap[s, 3]
            dm[nd, 4] = gap[s, 5]
            nd += 1
    for i in range(act.shape[0]):
        s = act[i]
        if not mask[s] or gap[s, 2] > F32(0.5):
            continue
        best = F32(sight[s])
        for h in range(nd):
            mx, mz, w = dm[h, 0], dm[h, 1], dm[h, 4]
            ax, az = mx - dm[h, 2] * F32(0.5) * w, mz - dm[h, 3] * F32(0.5) * w
            bx, bz = mx + dm[h, 2] * F32(0.5) * w, mz + dm[h, 3] * F32(0.5) * w
            dx, dz = bx - ax, bz - az
            x0, z0 = npos[s, 0], npos[s, 2]
            walked = F32(0.0)
            for c in range(ncorners[s]):
                x1, z1 = corner_verts[s, c, 0], corner_verts[s, c, 2]
                if _crosses(x0, z0, x1, z1, ax, az, bx, bz):
                    walked += np.sqrt((mx - x0) ** 2 + (mz - z0) ** 2)
                    sgn = (x1 - x0) * dz - (z1 - z0) * dx
                    if walked < best and sgn != F32(0.0):
                        best = walked
                        _bind(gap, s, mx, mz, dx, dz, w, sgn)
                    break
                walked += np.sqrt((x1 - x0) ** 2 + (z1 - z0) ** 2)
                if walked >= best:
                    break
                x0, z0 = x1, z1


@njit(cache=True)
def _rank(act, npos, gap):
    """``gap[s, 6]``: agent ``s``'s place in the queue of its door (0: the nearest to
    the door's middle; -1 without a gap), over every agent bound for the same door,
    not only those within its collision query range (an agent 3 m out does not see
    everybody in front of it); ``gap[s, 7]``: the slot of the agent just ahead of it
    (-1 for the first)."""
    m = 0
    idx = np.empty(act.shape[0], np.int64)
    dist = np.empty(act.shape[0], np.float64)
    for i in range(act.shape[0]):
        s = act[i]
        gap[s, 6] = F32(-1.0)
        gap[s, 7] = F32(-1.0)
        if gap[s, 2] > F32(0.5):
            idx[m] = s
            dist[m] = np.sqrt((npos[s, 0] - gap[s, 0]) ** 2 + (npos[s, 2] - gap[s, 1]) ** 2)
            if gap.shape[1] >= 9:
                dist[m] -= QUEUE_CREDIT * gap[s, 8]
            m += 1
    if m == 0:
        return
    order = np.argsort(dist[:m], kind="mergesort")
    gx = np.empty(m, np.float32)
    gz = np.empty(m, np.float32)
    cnt = np.zeros(m, np.int64)
    last = np.full(m, -1, np.int64)
    ng = 0
    for k in range(m):
        s = idx[order[k]]
        g = -1
        for h in range(ng):
            if abs(gx[h] - gap[s, 0]) <= SAME_GAP and abs(gz[h] - gap[s, 1]) <= SAME_GAP:
                g = h
                break
        if g < 0:
            g = ng
            gx[g] = gap[s, 0]
            gz[g] = gap[s, 1]
            ng += 1
        gap[s, 6] = F32(cnt[g])
        gap[s, 7] = F32(last[g])
        cnt[g] += 1
        last[g] = s


@njit(cache=True)
def door_queue(s, px, pz, prefx, prefz, gap, near, n, rad, wait, vmax, skip, pace=0.0,
               creep=0.0):
    """Agent ``s``'s preferred velocity (prefx, prefz) held back from its gap's
    midpoint by its rank in the queue (module docstring); unchanged without a gap
    or with ``wait`` <= 0. ``pace`` [s per pass] > 0 times the approach of the agents
    behind the second, no slower than ``creep`` [wu/s]. ``near[:n]`` rows ``x z vx vz radius kind slot``
    (:func:`~navkit.crowd.obstacles.gather_circles`), ``gap`` every agent's
    :func:`find_gaps` row, ``wait`` [wu] where the agents behind the first two
    stand, ``vmax`` the agent's maximum speed."""
    if wait <= F32(0.0) or gap[s, 2] < F32(0.5):
        return prefx, prefz, False
    mx, mz = gap[s, 0], gap[s, 1]
    rx, rz = mx - px, mz - pz
    d = np.sqrt(rx * rx + rz * rz)
    if d < F32(1e-4):
        return prefx, prefz, True
    rank = 0
    d0 = F32(np.inf)
    j0 = -1
    ux, uz = rx / d, rz / d
    ranked = gap.shape[1] >= 8 and gap[s, 6] >= F32(0.0)
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
    if ranked:
        # the door's queue over all its agents (find_gaps)
        rank = int(gap[s, 6])
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
        # it heads straight for a point on the door's axis half the door's width
        # inside it (dtCrowd's corners graze the jamb; the midpoint itself is
        # overshot by an agent coming along the wall)
        nx, nz = gap[s, 3], gap[s, 4]
        tx, tz = rx + nx * F32(0.5) * gap[s, 5], rz + nz * F32(0.5) * gap[s, 5]
        tl = np.sqrt(tx * tx + tz * tz)
        sp = np.sqrt(prefx * prefx + prefz * prefz)
        if tl > F32(0.05):
            return tx / tl * sp, tz / tl * sp, True
        return prefx, prefz, True
    if j0 >= 0 and YIELD > 0.0:
        # touching the one whose turn it is: step out of its way
        qx, qz = px - near[j0, 0], pz - near[j0, 1]
        ql = np.sqrt(qx * qx + qz * qz)
        if F32(1e-6) < ql < (rad + near[j0, 4]) * F32(YIELD):
            prefx += qx / ql * F32(0.5) * vmax
            prefz += qz / ql * F32(0.5) * vmax
    allow = wait
    lead = F32(0.0)
    if rank == 1:
        allow = min(d0 + F32(FOLLOW) * rad, wait)
        if j0 >= 0 and allow < wait and d0 > F32(1e-4):
            # keep the following distance: the free distance's closing term plus the
            # speed at which the first closes on the door's middle
            lead = max((near[j0, 2] * (mx - near[j0, 0]) + near[j0, 3] * (mz - near[j0, 1])) / d0,
                       F32(0.0))  # fmt: skip
    elif rank >= 2 and QUEUE_AREA > 0.0:
        allow = np.sqrt(wait * wait + F32((rank - 1) * QUEUE_AREA / (0.5 * np.pi)) * rad * rad)
    if rank >= 1 and STAND > 0.0:
        # off the wall on either side of the door: stand STAND radii out from it
        nx, nz = gap[s, 3], gap[s, 4]
        back = rx * nx + rz * nz  # how far in front of the door's wall
        lim = max((back - F32(STAND) * rad) / F32(HEADWAY), F32(-0.5) * vmax)
        ax = prefx * nx + prefz * nz
        if ax > lim:
            prefx += (lim - ax) * nx
            prefz += (lim - ax) * nz
    lim = max(lead + (d - allow) / F32(HEADWAY), F32(-0.5) * vmax)
    if rank >= 2 and pace > 0.0:
        # timed approach: reach the waiting distance when its turn comes, (rank - 1)
        # passes of ``pace`` seconds from now, no faster (at least ``creep``)
        tim = max((d - wait) / (F32(rank - 1) * F32(pace)), F32(creep))
        lim = min(lim, tim)
    inward = prefx * ux + prefz * uz
    if inward > lim:
        prefx += (lim - inward) * ux
        prefz += (lim - inward) * uz
    return prefx, prefz, False
