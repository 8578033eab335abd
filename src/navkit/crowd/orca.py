"""Optimal reciprocal collision avoidance (ORCA), as RVO2 publishes it.

van den Berg, Guy, Lin and Manocha, "Reciprocal n-body collision avoidance"
(ISRR 2009), and the behaviour of their RVO2 library. Each neighbour j gives
agent i a half-plane of permitted velocities: the smallest change ``u`` that
takes the relative velocity out of the velocity obstacle truncated at the time
horizon ``tau`` (a cone with a cut-off disc of radius ``r / tau``) is shared,
i taking half (``v_i + u/2`` on the boundary, normal ``u``). Discs already
overlapping use the time step as the horizon so the pair separates within one
step. A temporary obstacle does not reciprocate: i takes all of ``u``. Each wall
segment of the agent's local boundary, oriented with the agent on its right,
gives a half-plane with its own horizon ``tau_obst`` (collision with a vertex,
with the segment, or projection on the cut-off segment or a leg), skipped when
the half-planes already there cover it; RVO2's segment rules, every vertex
taken as convex.

The new velocity is the one closest to the preferred velocity (dtCrowd's
steering velocity) inside all half-planes and the max-speed disc: a 2D linear
program solved incrementally (randomisation aside, Seidel's algorithm as RVO2
does it). When the half-planes leave nothing, a 3D linear program minimises the
largest violation of the agent half-planes while the wall half-planes stay hard.
dtCrowd's integration then limits the acceleration as for every agent.

Parameters (:class:`ORCAParams`): ``time_horizon`` 2.5 s, ``time_horizon_obst``
1 s, ``pref_turn`` 0.25 rad (0.05 left the 50 + 50 corridor of the scenario suite
jammed: 0.25 makes the two flows form lanes, each keeping to its right),
``wall_radius`` 0.1. Neighbours: the nearest :data:`~navkit.crowd.obstacles.MAX_NEAR` agents and
temporary obstacles within the collision query range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from navkit._jit import F32, njit

from .agents import _finite
from .boundary import MAX_LOCAL_SEGS
from .door import door_queue
from .make_way import make_way
from .obstacles import GATHER_IDS, MAX_NEAR, gather_circles
from .ttc import _hold_ground, _right_of_way, _squeeze

__all__ = ["ORCAParams", "plan_orca", "solve_orca"]

_EPS = 1e-5
_MAX_LINES = MAX_NEAR + MAX_LOCAL_SEGS


@dataclass(frozen=True)
class ORCAParams:
    """Parameters of the ORCA model.

    Attributes
    ----------
    time_horizon : float
        Horizon of the agent and temporary-obstacle half-planes [s] (> 0).
    time_horizon_obst : float
        Horizon of the wall half-planes [s] (> 0).
    pref_turn : float
        Rotation of the preferred velocity [rad], in [-0.5, 0.5]: the same small turn
        for every agent breaks the deadlock of perfectly symmetric encounters (a
        head-on pair, the circle swap), where the optimum of every agent's linear
        program is to stand still (RVO2's examples perturb the preferred velocity
        at random for the same reason).
    wall_radius : float
        Radius the agent keeps from the wall segments [fraction of its radius], in
        [0, 1]. The local boundary is the navmesh edge, already eroded by the agent
        radius at bake time: the full radius would count it twice (a 1 m door eroded
        to 0.4 m of navmesh would be closed to agents of radius 0.3).
    make_way : float
        An agent settled at its goal steps aside for an agent walking toward it that
        is closer than the summed radii plus ``make_way`` [wu] (:mod:`navkit.crowd.make_way`;
        0: off). Default 1.
    right_of_way : float
        Standoffs [fraction of the maximum speed], in [0, 1]: as
        ``TTCParams.right_of_way``, the neighbours over which the agent has the right
        of way build no half-plane unless touching it (0: off). Default 0: measured
        on the scenario suite (seeds 0-7) at 0.5, the bottleneck's last arrival
        improved (33.6 -> 30.6 s on average, stuck 11.1 -> 9.5) but the 50 + 50
        corridor's arrival fell (99.2% -> 96.1%); without the touching exception the
        door overlapped by 0.16 of a radius.
    door_queue : float
        As ``TTCParams.door_queue`` (:mod:`navkit.crowd.door`; 0: off). Default 3:
        measured on the scenario suite's bottleneck (seeds 0-7, against 0), last
        arrival 33.6 -> 29.1 s on average (worst 39.8 -> 35.5 s), agents standing 5 s
        11.1 -> 8.5.
    door_pace, door_creep, door_straight : float, float, bool
        As ``TTCParams``' (:mod:`navkit.crowd.door`): timed approach to the door (0.8 s
        per agent passing, at least 0.15 wu/s), no ``pref_turn`` for agents bound for it.
    hold_ground : float
        As ``TTCParams.hold_ground`` (default 1): within it of its target, the agent
        builds no half-plane for walking neighbours that are not arriving, unless
        touching them.
    squeeze : bool
        As ``TTCParams.squeeze`` (default True): a walking agent builds no half-plane
        for the agents settled at their goals, nor (when not within ``hold_ground``
        of its own) for those within ``hold_ground`` of theirs, unless touching them;
        they make way. Measured on the scenario suite (seeds 0-7, against False): the
        50 + 50 corridor's agents standing 5 s 35 -> 1, arriving 99.0% -> 100% (the
        last within 35 s on 5 -> 8 of 8 seeds); the bottleneck 21 -> 22 standing, last
        arrival 20.4 -> 19.4 s on average.
    """

    time_horizon: float = 2.5
    time_horizon_obst: float = 1.0
    pref_turn: float = 0.25
    wall_radius: float = 0.1
    make_way: float = 1.0
    right_of_way: float = 0.0
    door_queue: float = 3.0
    door_pace: float = 0.8
    door_creep: float = 0.15
    door_straight: bool = True
    hold_ground: float = 1.0
    squeeze: bool = True

    def __post_init__(self) -> None:
        for f in ("time_horizon", "time_horizon_obst"):
            object.__setattr__(self, f, _finite(getattr(self, f), f, 1e-3, 1e30))
        object.__setattr__(self, "pref_turn", _finite(self.pref_turn, "pref_turn", -0.5, 0.5))
        object.__setattr__(self, "wall_radius", _finite(self.wall_radius, "wall_radius", 0.0, 1.0))
        object.__setattr__(self, "make_way", _finite(self.make_way, "make_way", 0.0, 100.0))
        object.__setattr__(
            self, "right_of_way", _finite(self.right_of_way, "right_of_way", 0.0, 1.0)
        )
        object.__setattr__(self, "door_queue", _finite(self.door_queue, "door_queue", 0.0, 100.0))
        object.__setattr__(self, "door_pace", _finite(self.door_pace, "door_pace", 0.0, 100.0))
        object.__setattr__(self, "door_creep", _finite(self.door_creep, "door_creep", 0.0, 100.0))
        object.__setattr__(self, "door_straight", bool(self.door_straight))
        object.__setattr__(self, "hold_ground", _finite(self.hold_ground, "hold_ground", 0.0, 100.0))
        object.__setattr__(self, "squeeze", bool(self.squeeze))

    def array(self) -> np.ndarray:
        """float64 [time_horizon, time_horizon_obst, cos(pref_turn), sin(pref_turn),
        wall_radius, make_way, right_of_way, door_queue, door_pace, door_creep,
        door_straight, hold_ground, squeeze]."""
        return np.array(
            [self.time_horizon, self.time_horizon_obst, np.cos(self.pref_turn),
             np.sin(self.pref_turn), self.wall_radius, self.make_way, self.right_of_way,
             self.door_queue, self.door_pace, self.door_creep, float(self.door_straight),
             self.hold_ground, float(self.squeeze)],
            np.float64,
        )  # fmt: skip


@njit(inline="always")
def _det(ax, ay, bx, by):
    return ax * by - ay * bx


@njit(cache=True)
def _lp1(lines, line_no, radius, ox, oy, dir_opt, res):
    """Optimum on line ``line_no`` within the disc and lines[:line_no]; False if empty."""
    px, py, dx, dy = lines[line_no, 0], lines[line_no, 1], lines[line_no, 2], lines[line_no, 3]
    dot = px * dx + py * dy
    disc = dot * dot + radius * radius - (px * px + py * py)
    if disc < 0.0:
        return False
    sq = np.sqrt(disc)
    t_left = -dot - sq
    t_right = -dot + sq
    for i in range(line_no):
        den = _det(dx, dy, lines[i, 2], lines[i, 3])
        num = _det(lines[i, 2], lines[i, 3], px - lines[i, 0], py - lines[i, 1])
        if abs(den) <= _EPS:
            if num < 0.0:
                return False
            continue
        t = num / den
        if den >= 0.0:
            t_right = min(t_right, t)
        else:
            t_left = max(t_left, t)
        if t_left > t_right:
            return False
    if dir_opt:
        if ox * dx + oy * dy > 0.0:
            res[0], res[1] = px + t_right * dx, py + t_right * dy
        else:
            res[0], res[1] = px + t_left * dx, py + t_left * dy
    else:
        t = dx * (ox - px) + dy * (oy - py)
        t = min(max(t, t_left), t_right)
        res[0], res[1] = px + t * dx, py + t * dy
    return True


@njit(cache=True)
def _lp2(lines, n, radius, ox, oy, dir_opt, res):
    """Closest point to (ox, oy) in the disc and the n half-planes; returns the index of
    the first line that fails (n on success)."""
    if dir_opt:
        res[0], res[1] = ox * radius, oy * radius
    elif ox * ox + oy * oy > radius * radius:
        ln = np.sqrt(ox * ox + oy * oy)
        res[0], res[1] = ox / ln * radius, oy / ln * radius
    else:
        res[0], res[1] = ox, oy
    tmp = np.zeros(2)
    for i in range(n):
        if _det(lines[i, 2], lines[i, 3], lines[i, 0] - res[0], lines[i, 1] - res[1]) > 0.0:
            tmp[0], tmp[1] = res[0], res[1]
            if not _lp1(lines, i, radius, ox, oy, dir_opt, res):
                res[0], res[1] = tmp[0], tmp[1]
                return i
    return n


@njit(cache=True)
def _lp3(lines, n, n_obst, begin, radius, res, proj):
    """Minimise the largest violation of lines[n_obst:n], lines[:n_obst] hard."""
    dist = 0.0
    tmp = np.zeros(2)
    for i in range(begin, n):
        if _det(lines[i, 2], lines[i, 3], lines[i, 0] - res[0], lines[i, 1] - res[1]) <= dist:
            continue
        m = 0
        for j in range(n_obst):
            proj[m, :] = lines[j, :]
            m += 1
        for j in range(n_obst, i):
            d = _det(lines[i, 2], lines[i, 3], lines[j, 2], lines[j, 3])
            if abs(d) <= _EPS:
                if lines[i, 2] * lines[j, 2] + lines[i, 3] * lines[j, 3] > 0.0:
                    continue  # same direction
                proj[m, 0] = 0.5 * (lines[i, 0] + lines[j, 0])
                proj[m, 1] = 0.5 * (lines[i, 1] + lines[j, 1])
            else:
                t = _det(lines[j, 2], lines[j, 3], lines[i, 0] - lines[j, 0],
                         lines[i, 1] - lines[j, 1]) / d  # fmt: skip
                proj[m, 0] = lines[i, 0] + t * lines[i, 2]
                proj[m, 1] = lines[i, 1] + t * lines[i, 3]
            ex = lines[j, 2] - lines[i, 2]
            ey = lines[j, 3] - lines[i, 3]
            el = np.sqrt(ex * ex + ey * ey)
            proj[m, 2] = ex / el
            proj[m, 3] = ey / el
            m += 1
        tmp[0], tmp[1] = res[0], res[1]
        if _lp2(proj, m, radius, -lines[i, 3], lines[i, 2], True, res) < m:
            # cannot happen in exact arithmetic; keep the previous result
            res[0], res[1] = tmp[0], tmp[1]
        dist = _det(lines[i, 2], lines[i, 3], lines[i, 0] - res[0], lines[i, 1] - res[1])


@njit(inline="always")
def _add(lines, n, px, py, dx, dy):
    lines[n, 0] = px
    lines[n, 1] = py
    lines[n, 2] = dx
    lines[n, 3] = dy
    return n + 1


@njit(cache=True)
def _wall_lines(lines, n, px, py, vx, vy, r, segs, nseg, inv_tau):
    """Append the half-planes of the wall segments; returns the new line count."""
    n0 = n
    rsq = r * r
    for k in range(nseg):
        ax, ay, bx, by = segs[k, 0], segs[k, 2], segs[k, 3], segs[k, 5]
        # orient the segment with the agent on its right; skip the edge-on case
        side = _det(bx - ax, by - ay, px - ax, py - ay)
        if side > 0.0:
            ax, ay, bx, by = bx, by, ax, ay
        elif side == 0.0:
            continue
        r1x, r1y = ax - px, ay - py
        r2x, r2y = bx - px, by - py
        covered = False
        for j in range(n0, n):
            if (_det(inv_tau * r1x - lines[j, 0], inv_tau * r1y - lines[j, 1], lines[j, 2],
                     lines[j, 3]) - inv_tau * r >= -_EPS
                    and _det(inv_tau * r2x - lines[j, 0], inv_tau * r2y - lines[j, 1], lines[j, 2],
                             lines[j, 3]) - inv_tau * r >= -_EPS):  # fmt: skip
                covered = True
                break
        if covered:
            continue
        d1 = r1x * r1x + r1y * r1y
        d2 = r2x * r2x + r2y * r2y
        ovx, ovy = bx - ax, by - ay
        ol = np.sqrt(ovx * ovx + ovy * ovy)
        if ol < 1e-9:
            continue
        ux, uy = ovx / ol, ovy / ol
        s = (-r1x * ovx - r1y * ovy) / (ol * ol)
        lx, ly = -r1x - s * ovx, -r1y - s * ovy
        dline = lx * lx + ly * ly
        if s < 0.0 and d1 <= rsq:  # touching the first vertex
            ll = np.sqrt(d1)
            n = _add(lines, n, 0.0, 0.0, -r1y / ll, r1x / ll)
            continue
        if s > 1.0 and d2 <= rsq:  # touching the second vertex
            ll = np.sqrt(d2)
            n = _add(lines, n, 0.0, 0.0, -r2y / ll, r2x / ll)
            continue
        if 0.0 <= s < 1.0 and dline <= rsq:  # touching the segment
            n = _add(lines, n, 0.0, 0.0, -ux, -uy)
            continue
        same = False
        if s < 0.0 and dline <= rsq:  # seen obliquely: both legs from the first vertex
            same = True
            leg = np.sqrt(d1 - rsq)
            llx = (r1x * leg - r1y * r) / d1
            lly = (r1x * r + r1y * leg) / d1
            rlx = (r1x * leg + r1y * r) / d1
            rly = (-r1x * r + r1y * leg) / d1
        elif s > 1.0 and dline <= rsq:  # both legs from the second vertex
            same = True
            leg = np.sqrt(d2 - rsq)
            llx = (r2x * leg - r2y * r) / d2
            lly = (r2x * r + r2y * leg) / d2
            rlx = (r2x * leg + r2y * r) / d2
            rly = (-r2x * r + r2y * leg) / d2
        else:
            leg = np.sqrt(d1 - rsq)
            llx = (r1x * leg - r1y * r) / d1
            lly = (r1x * r + r1y * leg) / d1
            leg = np.sqrt(d2 - rsq)
            rlx = (r2x * leg + r2y * r) / d2
            rly = (-r2x * r + r2y * leg) / d2
        if same:
            lcx, lcy = inv_tau * r1x, inv_tau * r1y
            if s > 1.0:
                lcx, lcy = inv_tau * r2x, inv_tau * r2y
            rcx, rcy = lcx, lcy
        else:
            lcx, lcy = inv_tau * r1x, inv_tau * r1y
            rcx, rcy = inv_tau * r2x, inv_tau * r2y
        cvx, cvy = rcx - lcx, rcy - lcy
        if same:
            t = 0.5
        else:
            t = ((vx - lcx) * cvx + (vy - lcy) * cvy) / (cvx * cvx + cvy * cvy)
        tl = (vx - lcx) * llx + (vy - lcy) * lly
        tr = (vx - rcx) * rlx + (vy - rcy) * rly
        if (t < 0.0 and tl < 0.0) or (same and tl < 0.0 and tr < 0.0):
            wx, wy = vx - lcx, vy - lcy
            wl = np.sqrt(wx * wx + wy * wy)
            if wl < 1e-9:
                continue
            wx, wy = wx / wl, wy / wl
            n = _add(lines, n, lcx + r * inv_tau * wx, lcy + r * inv_tau * wy, wy, -wx)
            continue
        if t > 1.0 and tr < 0.0:
            wx, wy = vx - rcx, vy - rcy
            wl = np.sqrt(wx * wx + wy * wy)
            if wl < 1e-9:
                continue
            wx, wy = wx / wl, wy / wl
            n = _add(lines, n, rcx + r * inv_tau * wx, rcy + r * inv_tau * wy, wy, -wx)
            continue
        inf = np.inf
        dc = inf
        if not (t < 0.0 or t > 1.0 or same):
            ex, ey = vx - (lcx + t * cvx), vy - (lcy + t * cvy)
            dc = ex * ex + ey * ey
        dl = inf
        if tl >= 0.0:
            ex, ey = vx - (lcx + tl * llx), vy - (lcy + tl * lly)
            dl = ex * ex + ey * ey
        dr = inf
        if tr >= 0.0:
            ex, ey = vx - (rcx + tr * rlx), vy - (rcy + tr * rly)
            dr = ex * ex + ey * ey
        if dc <= dl and dc <= dr:
            dx, dy = -ux, -uy
            n = _add(lines, n, lcx + r * inv_tau * (-dy), lcy + r * inv_tau * dx, dx, dy)
        elif dl <= dr:
            n = _add(lines, n, lcx + r * inv_tau * (-lly), lcy + r * inv_tau * llx, llx, lly)
        else:
            dx, dy = -rlx, -rly
            n = _add(lines, n, rcx + r * inv_tau * (-dy), rcy + r * inv_tau * dx, dx, dy)
    return n


@njit(cache=True)
def solve_orca(px, py, vx, vy, r, vmax, prefx, prefy, near, nnear, segs, nseg, tau, tau_obst,
               dt, lines, proj, res, wall_r=-1.0, slot=-1.0):  # fmt: skip
    """New velocity of one agent into ``res`` (2,) float64; returns the line count.

    ``wall_r`` is the radius kept from the walls (negative: ``r``); ``slot`` the agent's
    slot, compared with ``near``'s 7th column (when given) to separate coincident agents.
    ``near`` rows ``x y vx vy radius kind`` (kind 1: does not reciprocate),
    ``segs`` (n, 6) wall segments (x0 y0 z0 x1 y1 z1).
    """
    n = _wall_lines(lines, 0, px, py, vx, vy, r if wall_r < 0.0 else wall_r, segs, nseg,
                    1.0 / tau_obst)
    n_obst = n
    inv_tau = 1.0 / tau
    for j in range(nnear):
        rpx = near[j, 0] - px
        rpy = near[j, 1] - py
        rvx = vx - near[j, 2]
        rvy = vy - near[j, 3]
        d2 = rpx * rpx + rpy * rpy
        cr = r + near[j, 4]
        crsq = cr * cr
        if d2 > crsq:
            wx = rvx - inv_tau * rpx
            wy = rvy - inv_tau * rpy
            wlsq = wx * wx + wy * wy
            dot1 = wx * rpx + wy * rpy
            if dot1 < 0.0 and dot1 * dot1 > crsq * wlsq:
                # project on the cut-off circle
                wl = np.sqrt(wlsq)
                uwx, uwy = wx / wl, wy / wl
                dx, dy = uwy, -uwx
                ux, uy = (cr * inv_tau - wl) * uwx, (cr * inv_tau - wl) * uwy
            else:
                leg = np.sqrt(d2 - crsq)
                if _det(rpx, rpy, wx, wy) > 0.0:  # left leg
                    dx = (rpx * leg - rpy * cr) / d2
                    dy = (rpx * cr + rpy * leg) / d2
                else:  # right leg
                    dx = -(rpx * leg + rpy * cr) / d2
                    dy = -(-rpx * cr + rpy * leg) / d2
                dot2 = rvx * dx + rvy * dy
                ux, uy = dot2 * dx - rvx, dot2 * dy - rvy
        else:
            # already colliding: separate within one time step
            inv_dt = 1.0 / dt
            wx = rvx - inv_dt * rpx
            wy = rvy - inv_dt * rpy
            wl = np.sqrt(wx * wx + wy * wy)
            if wl < 1e-9:
                wx, wy, wl = -rpx, -rpy, np.sqrt(d2)
                if wl < 1e-9:
                    # coincident: the slots (near's 7th column, when given) pick the sides
                    sg = 1.0
                    if near.shape[1] > 6 and near[j, 6] > 0.0 and near[j, 6] < slot:
                        sg = -1.0
                    wx, wy, wl = sg, 0.0, 1.0
            uwx, uwy = wx / wl, wy / wl
            dx, dy = uwy, -uwx
            ux, uy = (cr * inv_dt - wl) * uwx, (cr * inv_dt - wl) * uwy
        share = 1.0 if near[j, 5] > 0.5 else 0.5
        n = _add(lines, n, vx + share * ux, vy + share * uy, dx, dy)
    fail = _lp2(lines, n, vmax, prefx, prefy, False, res)
    if fail < n:
        _lp3(lines, n, n_obst, fail, vmax, res, proj)
    return n


@njit(cache=True)
def plan_orca(act, mask, npos, vel, dvel, radius, height, max_speed, max_acc, qrange, inv,
              buckets, items, obs, segs, nsegs, gap, fin, prm, dt, nvel):  # fmt: skip
    """Planned velocity ``nvel`` of every agent ``s`` in ``act`` with ``mask[s]``; returns
    the number of half-planes built. Arguments as :func:`navkit.crowd.ttc.plan_ttc`,
    ``prm`` :meth:`ORCAParams.array`."""
    ids = np.empty(GATHER_IDS, np.int64)
    near32 = np.zeros((MAX_NEAR, 7), np.float32)
    near = np.zeros((MAX_NEAR, 7))
    skip = np.zeros(MAX_NEAR, np.bool_)
    lines = np.zeros((_MAX_LINES, 4))
    proj = np.zeros((_MAX_LINES, 4))
    sg = np.zeros((MAX_LOCAL_SEGS, 6))
    res = np.zeros(2)
    total = 0
    for i in range(act.shape[0]):
        s = act[i]
        if not mask[s]:
            continue
        nn = gather_circles(s, act, npos, vel, radius, height, qrange, inv, buckets, items, obs,
                            ids, near32)  # fmt: skip
        # in a standoff, the neighbours over which the agent has the right of way
        # build no half-plane (ttc._right_of_way)
        _right_of_way(s, npos[s, 0], npos[s, 2], vel, dvel, max_speed, near32, nn,
                      F32(prm[6]), skip)  # fmt: skip
        if prm[11] > 0.0:
            _hold_ground(s, dvel, max_speed, fin, near32, nn, F32(prm[11]), skip)
        if prm[12] > 0.5:
            # walkers go up to the agents settled at their goals, who make way
            _squeeze(s, dvel, max_speed, near32, nn, skip, fin, F32(prm[11]))
        dx, dz = np.float64(dvel[s, 0]), np.float64(dvel[s, 2])
        prefx = dx * prm[2] - dz * prm[3]
        prefz = dx * prm[3] + dz * prm[2]
        if prm[7] > 0.0 and prm[10] > 0.5 and gap[s, 2] > F32(0.5):
            # bound for a narrow door: everybody queues for it, nobody to pass on a hand
            prefx, prefz = dx, dz
        if prm[5] > 0.0:
            # settled at its goal: step aside for the walkers coming through (make_way.py)
            mwx, mwz = make_way(s, npos[s, 0], npos[s, 2], dvel, max_speed, near32, nn,
                                radius[s], F32(prm[5]))  # fmt: skip
            prefx += np.float64(mwx) * 0.5 * np.float64(max_speed[s])
            prefz += np.float64(mwz) * 0.5 * np.float64(max_speed[s])
        if prm[7] > 0.0 and gap[s, 2] > F32(0.5):
            # queue at a door narrower than a body (door.py)
            qx, qz, _ = door_queue(s, npos[s, 0], npos[s, 2], F32(prefx), F32(prefz), gap, near32,
                                nn, radius[s], F32(prm[7]) * radius[s], max_speed[s], skip,
                                F32(prm[8]), F32(prm[9]))  # fmt: skip
            prefx, prefz = np.float64(qx), np.float64(qz)
        m = 0
        for j in range(nn):
            if skip[j]:
                gx = near32[j, 0] - npos[s, 0]
                gz = near32[j, 1] - npos[s, 2]
                rr = (radius[s] + near32[j, 4]) * F32(1.1)
                if gx * gx + gz * gz > rr * rr:
                    continue  # (a touching neighbour keeps its half-plane: no overlap)
            for c in range(7):
                near[m, c] = near32[j, c]
            m += 1
        ns = 0
        px, pz = np.float64(npos[s, 0]), np.float64(npos[s, 2])
        for j in range(nsegs[s]):
            w = segs[s, j]
            if (w[3] - npos[s, 0]) * (w[2] - npos[s, 2]) - (w[0] - npos[s, 0]) * (
                w[5] - npos[s, 2]
            ) < F32(0.0):
                continue  # faces away (dtCrowd's test)
            for c in range(6):
                sg[ns, c] = w[c]
            ns += 1
        total += solve_orca(px, pz, np.float64(vel[s, 0]), np.float64(vel[s, 2]),
                            np.float64(radius[s]), np.float64(max_speed[s]),
                            prefx, prefz, near, m, sg, ns,
                            prm[0], prm[1], np.float64(dt), lines, proj, res,
                            np.float64(radius[s]) * prm[4], np.float64(s))  # fmt: skip
        nvel[s, 0] = res[0]
        nvel[s, 1] = F32(0.0)
        nvel[s, 2] = res[1]
    return total
