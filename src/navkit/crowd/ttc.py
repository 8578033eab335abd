"""Time-to-collision avoidance: the power law of Karamouzas, Skinner and Guy.

Karamouzas, Skinner and Guy ("Universal power law governing pedestrian
interactions", Phys. Rev. Lett. 113, 238701, 2014) measured that the
interaction energy of two pedestrians depends on their predicted time to
collision ``tau`` only::

    E(tau) = k / tau**2 * exp(-tau / tau0)

``tau`` is the first time at which the two discs (radii summed) touch if both
keep their current velocities (none when they never do). The avoidance force on
agent i is ``-grad_v E``, the gradient taken with respect to i's velocity.
With ``x = x_i - x_j``, ``v = v_i - v_j``, ``r = r_i + r_j``, ``a = v.v``,
``b = x.v``, ``c = x.x - r**2``, ``D = b**2 - a c``, ``tau = (-b - sqrt(D)) / a``
and ``grad_v tau = tau (x + tau v) / sqrt(D)``, so::

    F_ij = k exp(-tau/tau0) (2/tau + 1/tau0) (x + tau v) / (tau sqrt(D))

which points from j's position at the predicted contact to i's: the force turns
and slows i exactly as much as the predicted contact is imminent. Discs
already overlapping use the overlap depth as their radius (the paper's
implementation), so the force keeps pushing them apart. A temporary obstacle is a
neighbour that does not reciprocate; a wall segment of the agent's local boundary
(its side facing the agent) is a static neighbour at its closest point, radius 0.

The agent's own goal is the goal force ``(v_pref - v) / xi`` toward the desired
velocity ``v_pref`` of dtCrowd's steering (corners, anticipated turns, slow-down
at the target). The forces are summed, clamped to ``max_force``, integrated over
the time step, and the result clamped to the agent's max speed becomes the
planned velocity ``nvel``; dtCrowd's integration then limits the acceleration
to ``max_acceleration`` as for every agent.

Defaults are the paper's fitted values, ``k = 1.5`` [m^2/s^2 ... as an energy
scale], ``tau0 = 3 s``, and its simulation's relaxation time ``xi = 0.54 s``;
``max_force`` 20 wu/s^2 bounds the force of a nearly grazing pair (D -> 0)
and ``horizon`` (3 tau0) drops interactions whose energy is below e^-9 of their
scale. Neighbours: the nearest :data:`~navkit.crowd.obstacles.MAX_NEAR` agents
and temporary obstacles within the collision query range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from navkit._jit import F32, njit

from .agents import _finite
from .obstacles import MAX_NEAR, gather_circles
from .proximity import MAX_QUERY_IDS

__all__ = ["TTCParams", "plan_ttc", "ttc_force"]


@dataclass(frozen=True)
class TTCParams:
    """Parameters of the time-to-collision model (all > 0).

    Attributes
    ----------
    k : float
        Energy scale of the power law [wu^2/s^2].
    tau0 : float
        Interaction time scale [s]: the exponential cut-off of E(tau).
    xi : float
        Relaxation time of the goal force [s].
    max_force : float
        Bound on the summed force [wu/s^2].
    horizon : float
        Interactions with a predicted collision later than this are ignored [s].
    wall_weight : float
        Scale of the wall forces relative to agent forces (>= 0).
    force_turn : float
        Rotation of each neighbour's avoidance force [rad], in [-1, 1]: every agent
        steps aside to the same hand (people keep to one side), which resolves the
        head-on and crossing encounters that a symmetric force leaves in a standoff.
    pref_turn : float
        Rotation of the preferred velocity [rad], in [-0.5, 0.5]: the same small turn
        for every agent makes a jam of several groups flow as a roundabout.
    """

    k: float = 1.5
    tau0: float = 3.0
    xi: float = 0.54
    max_force: float = 20.0
    horizon: float = 9.0
    wall_weight: float = 1.0
    force_turn: float = 0.3
    pref_turn: float = 0.05

    def __post_init__(self) -> None:
        for f in ("k", "tau0", "xi", "max_force", "horizon"):
            object.__setattr__(self, f, _finite(getattr(self, f), f, 1e-6, 1e30))
        object.__setattr__(self, "wall_weight", _finite(self.wall_weight, "wall_weight", 0.0, 1e30))
        object.__setattr__(self, "force_turn", _finite(self.force_turn, "force_turn", -1.0, 1.0))
        object.__setattr__(self, "pref_turn", _finite(self.pref_turn, "pref_turn", -0.5, 0.5))

    def array(self) -> np.ndarray:
        """float32 [k, tau0, xi, max_force, horizon, wall_weight, cos, sin(force_turn),
        cos, sin(pref_turn)]."""
        return np.array(
            [self.k, self.tau0, self.xi, self.max_force, self.horizon, self.wall_weight,
             np.cos(self.force_turn), np.sin(self.force_turn), np.cos(self.pref_turn),
             np.sin(self.pref_turn)], np.float32,
        )  # fmt: skip


@njit(cache=True)
def ttc_force(xx, xz, vx, vz, r, k, tau0, horizon):
    """Power-law force (fx, fz) on a disc at relative position (xx, xz) = x_i - x_j with
    relative velocity (vx, vz) = v_i - v_j and summed radius r; (0, 0) when no
    collision is predicted within ``horizon``."""
    d2 = xx * xx + xz * xz
    rr = r
    if d2 < r * r:  # overlapping: the overlap depth as the radius
        d = np.sqrt(d2)
        rr = min(r - d, F32(0.5) * d)
        if rr <= F32(1e-4):
            # at the same point: no direction to push along from the velocities
            return F32(0.0), F32(0.0)
    a = vx * vx + vz * vz
    if a < F32(1e-8):
        return F32(0.0), F32(0.0)
    b = xx * vx + xz * vz
    c = d2 - rr * rr
    disc = b * b - a * c
    if disc <= F32(1e-12):
        return F32(0.0), F32(0.0)
    sd = np.sqrt(disc)
    tau = (-b - sd) / a
    if tau <= F32(0.0) or tau > horizon:
        return F32(0.0), F32(0.0)
    tau = max(tau, F32(1e-3))
    mag = k * np.exp(-tau / tau0) * (F32(2.0) / tau + F32(1.0) / tau0) / (tau * sd)
    return (xx + tau * vx) * mag, (xz + tau * vz) * mag


@njit(cache=True)
def plan_ttc(act, mask, npos, vel, dvel, radius, height, max_speed, qrange, inv, buckets, items,
             obs, segs, nsegs, prm, dt, nvel):  # fmt: skip
    """Planned velocity ``nvel`` of every agent ``s`` in ``act`` with ``mask[s]``.

    Neighbours from the proximity grid (``inv``, ``buckets``, ``items``) and the
    temporary obstacles ``obs`` ((k, 7) float32); walls ``segs[s, :nsegs[s]]``
    ((n, 8, 6) float32, dtLocalBoundary's); ``prm`` :meth:`TTCParams.array`;
    ``dt`` [s]. Returns the number of interactions evaluated.
    """
    k, tau0, xi, fmax, horizon, wwall = prm[0], prm[1], prm[2], prm[3], prm[4], prm[5]
    fc, fs, pc, ps = prm[6], prm[7], prm[8], prm[9]
    ids = np.empty(MAX_QUERY_IDS, np.int64)
    near = np.zeros((MAX_NEAR, 6), np.float32)
    count = 0
    for i in range(act.shape[0]):
        s = act[i]
        if not mask[s]:
            continue
        px, pz = npos[s, 0], npos[s, 2]
        vx, vz = vel[s, 0], vel[s, 2]
        prefx = dvel[s, 0] * pc - dvel[s, 2] * ps
        prefz = dvel[s, 0] * ps + dvel[s, 2] * pc
        fx = (prefx - vx) / xi
        fz = (prefz - vz) / xi
        n = gather_circles(s, act, npos, vel, radius, height, qrange, inv, buckets, items, obs,
                           ids, near)  # fmt: skip
        for j in range(n):
            gx, gz = ttc_force(px - near[j, 0], pz - near[j, 1], vx - near[j, 2],
                               vz - near[j, 3], radius[s] + near[j, 4], k, tau0, horizon)  # fmt: skip
            fx += gx * fc - gz * fs
            fz += gx * fs + gz * fc
        count += n
        for j in range(nsegs[s]):
            w = segs[s, j]
            # the wall's side facing the agent only (dtCrowd's test)
            if (w[3] - px) * (w[2] - pz) - (w[0] - px) * (w[5] - pz) < F32(0.0):
                continue
            sx = w[3] - w[0]
            sz = w[5] - w[2]
            l2 = sx * sx + sz * sz
            t = F32(0.0)
            if l2 > F32(0.0):
                t = ((px - w[0]) * sx + (pz - w[2]) * sz) / l2
                t = min(max(t, F32(0.0)), F32(1.0))
            qx = w[0] + t * sx
            qz = w[2] + t * sz
            gx, gz = ttc_force(px - qx, pz - qz, vx, vz, radius[s], k, tau0, horizon)
            fx += gx * wwall
            fz += gz * wwall
            count += 1
        fl = np.sqrt(fx * fx + fz * fz)
        if fl > fmax:
            fx = fx * (fmax / fl)
            fz = fz * (fmax / fl)
        nx = vx + fx * dt
        nz = vz + fz * dt
        sp = np.sqrt(nx * nx + nz * nz)
        vmax = max_speed[s]
        if sp > vmax:
            nx = nx * (vmax / sp)
            nz = nz * (vmax / sp)
        nvel[s, 0] = nx
        nvel[s, 1] = F32(0.0)
        nvel[s, 2] = nz
    return count
