"""Kernels of the corridor agents (:mod:`navkit.ecm.agents`).

Agents live in world units [wu]; the corridor map's sites live in its private
frame (``local = (world - origin) * unit``), so every site query converts on the
way in and divides distances by ``unit`` on the way out.

Per update, over all agents (``prange``):

1. :func:`plan_velocities` -- the attraction point on the agent's indicative path
   (the furthest path point inside the agent's clearance disk, Karamouzas,
   Geraerts and Overmars' indicative route method), a goal force towards it, a
   time-to-collision force from every neighbour (Karamouzas, Skinner and Guy's
   power law), a wall force from the nearest obstacle point and an optional
   group-coherence force; the sum clamped to the acceleration limit, the
   velocity to the speed limit.
2. :func:`integrate` -- move, push overlapping agents apart, then keep every
   agent inside its corridor (disks along its medial route, shrunk by its
   radius) and at least its radius from every obstacle.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from navkit._jit import njit, pnjit
from navkit.crowd.door import SAME_GAP, door_queue
from navkit.crowd.obstacles import MAX_NEAR

from ._update_kernels import grid_nearest

MOVING = 1
ARRIVED = 2
BLOCKED = 3
#: the agent whose turn it is at a door relaxes to its preferred velocity in this time
#: [s] (at most the settings' relax): it steps into the door promptly
FIRST_RELAX = 0.1


@njit(inline="always")
def _foot(k, ax, ay, bx, by, x, y):
    """Closest point of site (kind ``k``, ends a, b) to (x, y)."""
    if k == 0:
        return ax, ay
    dx = bx - ax
    dy = by - ay
    t = ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)
    t = min(1.0, max(0.0, t))
    return ax + t * dx, ay + t * dy


@njit
def nearest_obstacle(
    x, y, ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive
):
    """Distance [wu] from world point (x, y) to the nearest obstacle and that
    obstacle point (world); (inf, x, y) when the map has no site."""
    lx = (x - ox) * unit
    ly = (y - oy) * unit
    s, d = grid_nearest(lx, ly, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive)
    if s < 0:
        return np.inf, x, y
    fx, fy = _foot(kind[s], ax[s], ay[s], bx[s], by[s], lx, ly)
    return d / unit, fx / unit + ox, fy / unit + oy


@njit
def densify(
    route, step, ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive
):
    """Corridor disks along ``route`` ((m, 2) world, the medial route): points no
    farther than ``step`` [wu] apart, each with its clearance [wu].
    Returns (centers (k, 2), radii (k,))."""
    m = route.shape[0]
    total = 1
    for i in range(m - 1):
        seg = math.hypot(route[i + 1, 0] - route[i, 0], route[i + 1, 1] - route[i, 1])
        total += max(1, int(math.ceil(seg / step)))
    cen = np.empty((total, 2))
    rad = np.empty(total)
    k = 0
    for i in range(m - 1):
        seg = math.hypot(route[i + 1, 0] - route[i, 0], route[i + 1, 1] - route[i, 1])
        n = max(1, int(math.ceil(seg / step)))
        for j in range(n):
            t = j / n
            cen[k, 0] = route[i, 0] + t * (route[i + 1, 0] - route[i, 0])
            cen[k, 1] = route[i, 1] + t * (route[i + 1, 1] - route[i, 1])
            k += 1
    cen[k, 0] = route[m - 1, 0]
    cen[k, 1] = route[m - 1, 1]
    k += 1
    for i in range(k):
        d, _, _ = nearest_obstacle(
            cen[i, 0], cen[i, 1], ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny,
            kind, ax, ay, bx, by, alive,
        )  # fmt: skip
        rad[i] = d
    return cen[:k], rad[:k]


@njit
def build_grid(pos, state, cell):
    """Bucket the agents (state != 0) in square cells of side ``cell`` [wu] over
    their bounding box (the side grows when the box would need more than about
    4 cells per agent). Returns (x0, y0, side, nx, ny, start (nx*ny+1,) int64,
    items (n,) int64): the agents of cell ``cx * ny + cy`` are
    ``items[start[c]:start[c+1]]``."""
    n = pos.shape[0]
    x0 = np.inf
    y0 = np.inf
    x1 = -np.inf
    y1 = -np.inf
    m = 0
    for i in range(n):
        if state[i] != 0:
            x0 = min(x0, pos[i, 0])
            y0 = min(y0, pos[i, 1])
            x1 = max(x1, pos[i, 0])
            y1 = max(y1, pos[i, 1])
            m += 1
    if m == 0:
        x0 = y0 = x1 = y1 = 0.0
    side = cell
    while True:
        nx = int((x1 - x0) / side) + 1
        ny = int((y1 - y0) / side) + 1
        if nx * ny <= 4 * m + 16:
            break
        side *= 2.0
    start = np.zeros(nx * ny + 1, np.int64)
    for i in range(n):
        if state[i] != 0:
            c = int((pos[i, 0] - x0) / side) * ny + int((pos[i, 1] - y0) / side)
            start[c + 1] += 1
    for c in range(nx * ny):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    items = np.empty(max(m, 1), np.int64)
    for i in range(n):
        if state[i] != 0:
            c = int((pos[i, 0] - x0) / side) * ny + int((pos[i, 1] - y0) / side)
            items[fill[c]] = i
            fill[c] += 1
    return x0, y0, side, nx, ny, start, items


@njit(inline="always")
def _seg_disk(px, py, qx, qy, cx, cy, r, t_from):
    """Parameter interval of segment p->q inside disk (c, r), clipped to
    [t_from, 1]; (1.0, 0.0) -- empty -- when it misses."""
    dx = qx - px
    dy = qy - py
    fx = px - cx
    fy = py - cy
    a = dx * dx + dy * dy
    b = fx * dx + fy * dy
    c = fx * fx + fy * fy - r * r
    if a <= 0.0:
        if c <= 0.0:
            return t_from, 1.0
        return 1.0, 0.0
    disc = b * b - a * c
    if disc < 0.0:
        return 1.0, 0.0
    sq = math.sqrt(disc)
    t0 = max(t_from, (-b - sq) / a)
    t1 = min(1.0, (-b + sq) / a)
    if t0 > t1:
        return 1.0, 0.0
    return t0, t1


@pnjit
def plan_velocities(
    dt, pos, vel, rad, vmax, amax, goal, state, group, pseg, pt, attract,
    PX, PY, pptr, pcnt,
    ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive,
    tau0, k_ttc, horizon, sense, relax, slow, arrive, wall_range, coherence, keep_side, max_force,
    gx0_, gy0_, gside, gnx, gny, gstart, gitems, out_vel,
    gap, door_wait, door_pace, door_creep,
):  # fmt: skip
    """New velocity of every moving agent into ``out_vel`` ((n, 2) [wu/s]); moves
    each agent's path progress (``pseg``, ``pt``) to its attraction point
    (written to ``attract``) and marks agents that reached their goal ARRIVED.
    ``gap`` the agents' doors (:func:`find_doors`, ranked): an agent bound for one
    queues (:func:`navkit.crowd.door.door_queue`, waiting ``door_wait`` times its
    radius out; 0: off)."""
    n = pos.shape[0]
    for i in numba.prange(n):
        out_vel[i, 0] = 0.0
        out_vel[i, 1] = 0.0
        if state[i] == ARRIVED:  # pushed off its goal while making way: walk back
            if math.hypot(goal[i, 0] - pos[i, 0], goal[i, 1] - pos[i, 1]) > max(3.0 * arrive, rad[i]):
                state[i] = MOVING
        if state[i] != MOVING:
            continue
        x = pos[i, 0]
        y = pos[i, 1]
        ri = rad[i]
        clr, wx, wy = nearest_obstacle(
            x, y, ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive
        )
        # attraction point: furthest path point inside the clearance disk
        base = pptr[i]
        last = pcnt[i] - 1
        s = pseg[i]
        t = pt[i]
        found = False
        bs = s
        bt = t
        scanned = 0
        while s < last and scanned < 64:
            t0, t1 = _seg_disk(
                PX[base + s], PY[base + s], PX[base + s + 1], PY[base + s + 1], x, y, clr, t
            )
            if t0 <= t1:
                found = True
                bs = s
                bt = t1
                if t1 < 1.0:
                    break
            elif found:
                break
            s += 1
            t = 0.0
            scanned += 1
        if not found:  # pushed off the path: aim at the nearest path point ahead
            best = np.inf
            s = pseg[i]
            t = pt[i]
            while s < last and s < pseg[i] + 8:
                px = PX[base + s]
                py = PY[base + s]
                dx = PX[base + s + 1] - px
                dy = PY[base + s + 1] - py
                aa = dx * dx + dy * dy
                tt = 1.0 if aa <= 0.0 else ((x - px) * dx + (y - py) * dy) / aa
                tt = min(1.0, max(t, tt))
                d = math.hypot(px + tt * dx - x, py + tt * dy - y)
                if d < best:
                    best = d
                    bs = s
                    bt = tt
                s += 1
                t = 0.0
        if bt >= 1.0 and bs + 1 < last:
            bs += 1
            bt = 0.0
        pseg[i] = bs
        pt[i] = bt
        qx = PX[base + bs] + bt * (PX[base + bs + 1] - PX[base + bs])
        qy = PY[base + bs] + bt * (PY[base + bs + 1] - PY[base + bs])
        attract[i, 0] = qx
        attract[i, 1] = qy
        at_end = bs == last - 1 and bt >= 1.0
        gdx = goal[i, 0] - x
        gdy = goal[i, 1] - y
        gdist = math.hypot(gdx, gdy)
        if at_end and gdist <= arrive:
            state[i] = ARRIVED
            continue
        dx = qx - x
        dy = qy - y
        dl = math.hypot(dx, dy)
        speed = vmax[i]
        if at_end and gdist < slow:
            speed = vmax[i] * gdist / slow
        fx = 0.0
        fy = 0.0
        # the desired velocity: toward the attraction point at the desired speed
        prefx = 0.0
        prefy = 0.0
        if dl > 1e-9:
            prefx = dx / dl * speed
            prefy = dy / dl * speed
        first = False
        if door_wait > 0.0 and gap[i, 2] > np.float32(0.5):
            # queue at a door narrower than two bodies (navkit.crowd.door): the
            # neighbours bound for the same door as circle rows
            near = np.zeros((MAX_NEAR, 7), np.float32)
            skip = np.zeros(MAX_NEAR, np.bool_)
            nn = 0
            cxi = int((x - gx0_) / gside)
            cyi = int((y - gy0_) / gside)
            for ux in range(max(0, cxi - 1), min(gnx, cxi + 2)):
                for uy in range(max(0, cyi - 1), min(gny, cyi + 2)):
                    c0 = ux * gny + uy
                    for q in range(gstart[c0], gstart[c0 + 1]):
                        j = gitems[q]
                        if j == i or state[j] != MOVING or gap[j, 2] < np.float32(0.5):
                            continue
                        if abs(gap[j, 0] - gap[i, 0]) > SAME_GAP or abs(gap[j, 1] - gap[i, 1]) > SAME_GAP:
                            continue
                        if nn < MAX_NEAR:
                            near[nn, 0] = pos[j, 0]
                            near[nn, 1] = pos[j, 1]
                            near[nn, 2] = vel[j, 0]
                            near[nn, 3] = vel[j, 1]
                            near[nn, 4] = rad[j]
                            near[nn, 6] = j
                            nn += 1
            px32, py32, first = door_queue(
                i, np.float32(x), np.float32(y), np.float32(prefx), np.float32(prefy), gap, near,
                nn, np.float32(ri), np.float32(door_wait * ri), np.float32(vmax[i]), skip,
                np.float32(door_pace), np.float32(door_creep),
            )  # fmt: skip
            prefx = float(px32)
            prefy = float(py32)
        # neighbours: time-to-collision power law, contact push when overlapping
        gxs = 0.0
        gys = 0.0
        gn = 0
        cxi = int((x - gx0_) / gside)
        cyi = int((y - gy0_) / gside)
        for ux in range(max(0, cxi - 1), min(gnx, cxi + 2)):
            for uy in range(max(0, cyi - 1), min(gny, cyi + 2)):
                c0 = ux * gny + uy
                for q in range(gstart[c0], gstart[c0 + 1]):
                    j = gitems[q]
                    if j == i or state[j] == 0:
                        continue
                    wx_ = x - pos[j, 0]
                    wy_ = y - pos[j, 1]
                    dist2 = wx_ * wx_ + wy_ * wy_
                    if dist2 > sense * sense:
                        continue
                    if (
                        coherence > 0.0
                        and group[i] >= 0
                        and group[j] == group[i]
                        and state[j] == MOVING
                    ):
                        gxs += pos[j, 0]
                        gys += pos[j, 1]
                        gn += 1
                    rr = ri + rad[j]
                    c = dist2 - rr * rr
                    if c < 0.0:  # overlapping: push apart along the centre line
                        dist = math.sqrt(dist2)
                        if dist > 1e-9 and state[j] != ARRIVED:
                            push = max_force * (rr - dist) / rr
                            fx += wx_ / dist * push
                            fy += wy_ / dist * push
                        continue
                    if state[j] == ARRIVED:
                        continue  # an agent walks into those that arrived: they make way
                    vx = vel[i, 0] - vel[j, 0]
                    vy = vel[i, 1] - vel[j, 1]
                    a = vx * vx + vy * vy
                    b = wx_ * vx + wy_ * vy
                    disc = b * b - a * c
                    if b >= 0.0 or disc <= 0.0 or a < 1e-12:
                        continue
                    sq = math.sqrt(disc)
                    tau = c / (-b + sq)  # = (-b - sq) / a, without cancellation
                    if tau <= 0.0 or tau > horizon:
                        continue
                    if _has_way(i, j, pos, vel, vmax, goal, gdist):
                        continue  # a standoff: the agent with the right of way goes first
                    if (
                        first
                        and gap[j, 2] > np.float32(0.5)
                        and abs(gap[j, 0] - gap[i, 0]) <= SAME_GAP
                        and abs(gap[j, 1] - gap[i, 1]) <= SAME_GAP
                    ):
                        continue  # its turn at the door: the others bound for it wait
                    mag = (
                        k_ttc * math.exp(-tau / tau0) / (tau * tau) * (2.0 / tau + 1.0 / tau0) / sq
                    )
                    fx += mag * (wx_ + vx * tau)
                    fy += mag * (wy_ + vy * tau)
                    # oncoming: also step aside to the right (a convention that
                    # breaks the symmetric standoffs of counterflow)
                    if keep_side > 0.0 and dl > 1e-9 and vel[j, 0] * dx + vel[j, 1] * dy < 0.0:
                        side = keep_side * mag * math.hypot(wx_ + vx * tau, wy_ + vy * tau) / dl
                        fx += side * dy
                        fy -= side * dx
        if gn > 0 and dl > 1e-9:  # ahead of the group's centre: wait for it
            ahead = ((x - gxs / gn) * dx + (y - gys / gn) * dy) / dl
            if ahead > 0.0:
                prefx /= 1.0 + coherence * ahead
                prefy /= 1.0 + coherence * ahead
        rl = min(relax, FIRST_RELAX) if first else relax
        fx += (prefx - vel[i, 0]) / rl
        fy += (prefy - vel[i, 1]) / rl
        # walls: the same power law, against the nearest obstacle point (standing)
        wx_ = x - wx
        wy_ = y - wy
        c = wx_ * wx_ + wy_ * wy_ - ri * ri
        if c > 0.0 and clr < ri + wall_range:
            vx = vel[i, 0]
            vy = vel[i, 1]
            a = vx * vx + vy * vy
            b = wx_ * vx + wy_ * vy
            disc = b * b - a * c
            if b < 0.0 and disc > 0.0 and a > 1e-12:
                sq = math.sqrt(disc)
                tau = c / (-b + sq)
                if tau > 0.0 and tau <= horizon:
                    mag = (
                        k_ttc * math.exp(-tau / tau0) / (tau * tau) * (2.0 / tau + 1.0 / tau0) / sq
                    )
                    fx += mag * (wx_ + vx * tau)
                    fy += mag * (wy_ + vy * tau)
        fl = math.hypot(fx, fy)
        if fl > amax[i]:
            fx *= amax[i] / fl
            fy *= amax[i] / fl
        nvx = vel[i, 0] + fx * dt
        nvy = vel[i, 1] + fy * dt
        sp = math.hypot(nvx, nvy)
        if sp > vmax[i]:
            nvx *= vmax[i] / sp
            nvy *= vmax[i] / sp
        out_vel[i, 0] = nvx
        out_vel[i, 1] = nvy


@njit
def _constrain(
    x, y, ri, kc, CX, CY, CR, cbase, ccnt,
    ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive,
):  # fmt: skip
    """(x, y) moved into the agent's corridor (the hull of consecutive disks of
    radius clearance - ri, near corridor index ``kc``) and at least ``ri`` from
    every obstacle. Returns (x, y, new kc)."""
    margin = 1e-9 * (1.0 + ri)
    # the window near the last index first; the whole corridor if the agent is
    # in none of those disks (pushed along faster than the window moved)
    for lo, hi in ((max(0, kc - 4), min(ccnt, kc + 32)), (0, ccnt)):
        best = np.inf
        bpx = x
        bpy = y
        brad = 0.0
        bj = kc
        inside = -1
        for j in range(lo, hi):
            j1 = min(j + 1, ccnt - 1)
            px = CX[cbase + j]
            py = CY[cbase + j]
            dx = CX[cbase + j1] - px
            dy = CY[cbase + j1] - py
            aa = dx * dx + dy * dy
            t = 0.0 if aa <= 0.0 else min(1.0, max(0.0, ((x - px) * dx + (y - py) * dy) / aa))
            r0 = CR[cbase + j] - ri
            r1 = CR[cbase + j1] - ri
            rr = max(0.0, r0 + t * (r1 - r0) - margin)
            cx = px + t * dx
            cy = py + t * dy
            d = math.hypot(x - cx, y - cy)
            if d <= rr:
                # the inside piece nearest the last index (ahead on ties)
                if (
                    inside < 0
                    or abs(j - kc) < abs(inside - kc)
                    or (abs(j - kc) == abs(inside - kc) and j > inside)
                ):
                    inside = j
            elif d - rr < best:
                best = d - rr
                bpx = cx
                bpy = cy
                brad = rr
                bj = j
        if inside >= 0:
            break
    if inside >= 0:
        kc = inside
    else:
        d = math.hypot(x - bpx, y - bpy)
        if d > 0.0:
            x = bpx + (x - bpx) / d * brad
            y = bpy + (y - bpy) / d * brad
        kc = bj
    for _ in range(3):  # the obstacles themselves, exactly
        clr, fx, fy = nearest_obstacle(
            x, y, ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive
        )
        if clr >= ri + margin:
            break
        d = math.hypot(x - fx, y - fy)
        if d <= 0.0:
            break
        x = fx + (x - fx) / d * (ri + 2.0 * margin)
        y = fy + (y - fy) / d * (ri + 2.0 * margin)
    return x, y, kc


@njit(cache=True)
def _has_way(i, j, pos, vel, vmax, goal, gdist):
    """Whether agent ``i`` (``gdist`` from its goal) has the right of way over
    agent ``j`` in a standoff: both walk under half their maximum speed, and
    ``i`` is nearer its goal (ties to the lower index). Two agents that meet at a
    door, each at one jamb, each predict a collision with the other and wait; the
    one with the right of way ignores the other's time-to-collision push and goes,
    and the other still avoids it."""
    s_i = 0.5 * vmax[i]
    s_j = 0.5 * vmax[j]
    if vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1] > s_i * s_i:
        return False
    if vel[j, 0] * vel[j, 0] + vel[j, 1] * vel[j, 1] > s_j * s_j:
        return False
    gj = math.hypot(goal[j, 0] - pos[j, 0], goal[j, 1] - pos[j, 1])
    return gdist < gj or (gdist == gj and i < j)


@njit(cache=True)
def _aside(wx, wy, d, vx, vy):
    """Unit direction in which an arrived agent at offset (wx, wy) (length ``d``)
    from a walker moving at (vx, vy) gets out of its way: away from the walker's
    line, on the side it already is (the walker's right when on the line), with a
    little of the push along the centre line so that the overlap still shrinks."""
    vl = math.hypot(vx, vy)
    if vl < 1e-6:
        return wx / d, wy / d
    hx = vx / vl
    hy = vy / vl
    side = wx * -hy + wy * hx  # offset along the walker's left normal (-hy, hx)
    sg = 1.0 if side > 0.0 else -1.0
    if abs(side) < 0.05 * d:
        sg = -1.0  # on the line: to the walker's right
    lx = -hy * sg
    ly = hx * sg
    ax_ = lx + 0.5 * wx / d
    ay_ = ly + 0.5 * wy / d
    al = math.hypot(ax_, ay_)
    return ax_ / al, ay_ / al


@pnjit
def integrate(
    dt, pos, vel, new_vel, rad, vmax, state, kc, CX, CY, CR, cptr, ccnt, separate, rounds,
    ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive,
    gx0_, gy0_, gside, gnx, gny, gstart, gitems, tmp, out_pos,
):  # fmt: skip
    """Move every moving agent by its new velocity, push overlapping agents
    apart (``separate`` of each overlap per round, ``rounds`` rounds, shared between the two), keep
    each inside its corridor and clear of obstacles; ``out_pos`` the result,
    ``vel`` the velocity actually travelled."""
    n = pos.shape[0]
    for i in numba.prange(n):
        tmp[i, 0] = pos[i, 0]
        tmp[i, 1] = pos[i, 1]
        if state[i] == MOVING:
            tmp[i, 0] += new_vel[i, 0] * dt
            tmp[i, 1] += new_vel[i, 1] * dt
    for rnd in range(rounds):  # separation and constraints (Jacobi)
        for i in numba.prange(n):
            x = tmp[i, 0]
            y = tmp[i, 1]
            if state[i] != MOVING and state[i] != ARRIVED:
                out_pos[i, 0] = x
                out_pos[i, 1] = y
                continue
            sx = 0.0
            sy = 0.0
            cxi = int((pos[i, 0] - gx0_) / gside)
            cyi = int((pos[i, 1] - gy0_) / gside)
            for ux in range(max(0, cxi - 1), min(gnx, cxi + 2)):
                for uy in range(max(0, cyi - 1), min(gny, cyi + 2)):
                    c0 = ux * gny + uy
                    for q in range(gstart[c0], gstart[c0 + 1]):
                        j = gitems[q]
                        if j == i or state[j] == 0:
                            continue
                        if state[i] == ARRIVED and state[j] == BLOCKED:
                            continue
                        wx = x - tmp[j, 0]
                        wy = y - tmp[j, 1]
                        rr = rad[i] + rad[j]
                        d2 = wx * wx + wy * wy
                        if d2 >= rr * rr or d2 <= 1e-18:
                            continue
                        d = math.sqrt(d2)
                        # an arrived agent makes way for a moving one (takes most of
                        # their push); a blocked one (no corridor to stay in) does not
                        share = 0.5
                        pux = wx / d
                        puy = wy / d
                        if state[j] == BLOCKED:
                            share = 1.0
                        elif state[i] == ARRIVED and state[j] == MOVING:
                            share = 0.8
                            # ... and steps aside, off the walker's line, rather than
                            # ahead of it along that line (pushed ahead, it would walk
                            # back into the walker: a head-on standoff)
                            pux, puy = _aside(wx, wy, d, new_vel[j, 0], new_vel[j, 1])
                        elif state[i] == MOVING and state[j] == ARRIVED:
                            share = 0.2
                        sx += pux * (rr - d) * share * separate
                        sy += puy * (rr - d) * share * separate
            x += sx
            y += sy
            x, y, k = _constrain(
                x, y, rad[i], kc[i], CX, CY, CR, cptr[i], ccnt[i],
                ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive,
            )  # fmt: skip
            # never faster than the speed limit, pushes included (the constraint may
            # lengthen a shortened step by a hair: a few rounds)
            for _ in range(4):
                mx = x - pos[i, 0]
                my = y - pos[i, 1]
                ml = math.hypot(mx, my)
                if ml <= vmax[i] * dt:
                    break
                x = pos[i, 0] + mx * (vmax[i] * dt / ml)
                y = pos[i, 1] + my * (vmax[i] * dt / ml)
                x, y, k = _constrain(
                    x, y, rad[i], k, CX, CY, CR, cptr[i], ccnt[i],
                    ox, oy, unit, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive,
                )  # fmt: skip
            kc[i] = k
            out_pos[i, 0] = x
            out_pos[i, 1] = y
            vel[i, 0] = (x - pos[i, 0]) / dt
            vel[i, 1] = (y - pos[i, 1]) / dt
        if rnd < rounds - 1:
            for i in numba.prange(n):
                tmp[i, 0] = out_pos[i, 0]
                tmp[i, 1] = out_pos[i, 1]

    for i in numba.prange(n):
        if state[i] != MOVING and state[i] != ARRIVED:
            vel[i, 0] = 0.0
            vel[i, 1] = 0.0


@njit(cache=True)
def find_doors(pos, rad, state, kc, CX, CY, CR, cptr, ccnt, look, dt, gap):
    """The corridor agents' doors (navkit's door queue, :mod:`navkit.crowd.door`):
    ``gap[i]`` (float32, 9 wide, :func:`navkit.crowd.door.find_gaps`' rows) of every
    moving agent ``i`` whose corridor ahead, within ``look[i]`` [wu] of its corridor
    index ``kc[i]``, narrows below two bodies (clearance under ``2 rad[i]``: one agent
    at a time) and widens again before the corridor's end: the door's mouth ``M``
    (where the clearance falls below ``2 rad[i]``, interpolated between two disks),
    the corridor's direction there, one body's width;
    zeros otherwise, and for an agent already in the narrow part (it is passing).
    ``gap[:, 8]`` counts the time [s] bound for a door (``dt`` per call); the ranks
    (``gap[:, 6:8]``) are left to :func:`navkit.crowd.door._rank`. Returns how many
    agents are bound for a door."""
    n = pos.shape[0]
    m = 0
    for i in range(n):
        for c in range(6):
            gap[i, c] = np.float32(0.0)
        if state[i] != MOVING:
            gap[i, 8] = np.float32(0.0)
            continue
        base = cptr[i]
        cnt = ccnt[i]
        w = 2.0 * rad[i]
        k = kc[i]
        if cnt < 2 or k >= cnt - 1 or CR[base + k] < w:
            gap[i, 8] = np.float32(0.0)
            continue
        walked = 0.0
        j = k + 1
        while j < cnt:
            sx = CX[base + j] - CX[base + j - 1]
            sy = CY[base + j] - CY[base + j - 1]
            sl = math.hypot(sx, sy)
            if CR[base + j] < w:
                # a door has room beyond it: the corridor widens again before its end
                # (a goal in a nook narrower than two bodies is no door)
                e = j + 1
                while e < cnt and CR[base + e] < w:
                    e += 1
                r0 = CR[base + j - 1]
                r1 = CR[base + j]
                t = (r0 - w) / (r0 - r1) if r0 > r1 else 1.0
                if sl > 1e-9 and e < cnt:
                    gap[i, 0] = np.float32(CX[base + j - 1] + t * sx)
                    gap[i, 1] = np.float32(CY[base + j - 1] + t * sy)
                    gap[i, 2] = np.float32(1.0)
                    gap[i, 3] = np.float32(sx / sl)
                    gap[i, 4] = np.float32(sy / sl)
                    gap[i, 5] = np.float32(w)
                break
            walked += sl
            if walked > look[i]:
                break
            j += 1
        if gap[i, 2] > np.float32(0.5):
            gap[i, 8] = gap[i, 8] + np.float32(dt)
            m += 1
        else:
            gap[i, 8] = np.float32(0.0)
    return m
