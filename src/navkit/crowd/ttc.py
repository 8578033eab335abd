"""Time-to-collision avoidance: the power law of Karamouzas, Skinner and Guy.

Karamouzas, Skinner and Guy ("Universal power law governing pedestrian
interactions", Phys. Rev. Lett. 113, 238701, 2014) measured that the
interaction energy of two pedestrians depends on their predicted time to
collision ``tau`` only::

    E(tau) = k / tau**2 * exp(-tau / tau0)

``tau`` is the first time at which the two discs (radii summed) touch if both
keep their velocities (no energy when they never do, or later than
``horizon``). With ``x = x_i - x_j``, ``v = v_i - v_j``, ``r = r_i + r_j``,
``a = v.v``, ``b = x.v``, ``c = x.x - r**2``, ``D = b**2 - a c``:
``tau = (-b - sqrt(D)) / a``. The paper's agents feel the force
``-grad_v E = k exp(-tau/tau0) (2/tau + 1/tau0) (x + tau v) / (tau sqrt(D))``
(:func:`ttc_force`) plus the goal force ``(v_pref - v) / xi``.

Integration. Integrated explicitly at a game's time step (0.05 s) the force
chatters: near a grazing encounter (``D -> 0``) it is very large, turns the
velocity out of the collision cone in one step, vanishes, and the goal force
turns it back (measured: acceleration spikes at the limit every few steps).
The default is therefore the implicit (backward Euler) step of the same model:
the new velocity ``u`` minimises::

    J(u) = |u - v|^2 / (2 dt) + |u - v_pref|^2 / (2 xi) + sum_j E_j(u) + w_wall sum_w E_w(u)
           + contact * k * sum_j max(0, (1 + margin) r_j - |x_j + (u - v_j) dt|)^2 / r_j^2

whose stationary point is ``u = v + dt (goal force(u) + avoidance force(u))``.
It is minimised by a pattern search (8 directions, 6 halvings) over the
velocities reachable in this step (``|u - v| <= max_acceleration dt``,
``|u| <= max_speed``), started from the current velocity and from the step toward
``v_pref``. The last term keeps discs from touching in the next step: the
energy itself stops growing once they touch (the pair's ``tau`` is 0).
``TTCParams(implicit=False)`` gives the explicit force integration instead.

Further details, each a parameter of :class:`TTCParams`:

- ``soft``: the radius widens to ``r (1 + soft)`` and the energy (and force) fade
  to 0 across the widening by the factor ``D / (a ((r(1+soft))^2 - r^2))``, so
  that they are continuous in the miss distance instead of jumping at grazing.
- ``force_turn``, ``pref_turn``: everyone passes on the same hand. The relative
  velocity of the energy term is turned by ``force_turn`` (explicit: the force
  is turned), and the preferred velocity by ``pref_turn``; without them a
  symmetric head-on pair, the circle swap and the four-way crossing end in a
  standoff (measured: the crossing jammed with all 24 agents stuck). The
  preferred velocity's turn applies along a way, not across an opening on the turn's
  hand (``turn_along_walls``).
- ``oncoming_sight``, ``oncoming_turn``: an agent that sees people coming the other
  way down its line from afar (:func:`oncoming_ahead`, beyond the nearest neighbours
  of its energy) turns harder to its hand, into its own flow's lane, before they meet.
- Overlapping discs (dtCrowd's collision phase still separates them) take the
  overlap depth as their radius in the energy, as in the paper's implementation.

Neighbours: the nearest :data:`~navkit.crowd.obstacles.MAX_NEAR` agents and
temporary obstacles within the collision query range (a temporary obstacle is a
neighbour that does not reciprocate), and the wall segments of the agent's local
boundary facing it, each a static point (radius 0) at its closest point.
dtCrowd's integration then limits the acceleration as for every agent.

Walls: the local boundary is the navmesh edge, already eroded by the agent radius,
so a wall segment ahead is met with ``wall_radius`` (0.6 r) in the energy and its end
points (door jambs, convex corners) with ``corner_radius`` (0.1 r); the penetration
term keeps the centre ``corner_radius`` inside the edge (signed distance beside a
segment). The energy saturates below :data:`TAU_MIN`.

Defaults: the paper's ``k = 1.5``, ``tau0 = 3 s`` and relaxation ``xi = 0.54 s``;
``horizon`` 9 s (3 tau0), ``soft`` 0.15, ``force_turn`` -0.3 rad and ``pref_turn``
0.25 rad (both to the same hand: the 50 + 50 corridor of the scenario suite forms
lanes; with 0.3 / 0.05 the two turns worked against each other and the corridor
jammed), ``contact`` 1000, ``margin`` 0.1 (tuned on the circle swap and the four-way
crossing of tests/crowd/test_models.py and the scenario suite); ``make_way`` 1 m (agents settled at their goal
step aside for those walking toward them: :mod:`navkit.crowd.make_way`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from navkit._jit import F32, njit

from .agents import _finite
from .door import door_queue
from .make_way import make_way
from .obstacles import GATHER_IDS, MAX_NEAR, gather_circles
from .proximity import _cell, _hash

__all__ = ["TTCParams", "oncoming_ahead", "plan_ttc", "ttc_force", "ttc_energy"]

#: relaxation time [s] of the agent whose turn it is at a door (door.py): with the
#: model's ``xi`` (0.54 s) it took about a second to get going, and the door passed
#: about 1 agent/s (about 1.3/s at 0.05 s)
XI_FIRST = 0.05
#: within this distance [wu] of its target an agent keeps ``pref_turn`` whatever the
#: walls (``turn_along_walls``): in a block of goals agents step sideways to their
#: goals, and the ray to the turn's hand then runs along the way
TURN_NEAR = 2.0
#: how far [collision query ranges] the ray of ``turn_along_walls`` looks for a wall
#: beside the agent (1 left agents at one wall of the crossing's 5 m arms without it;
#: 2 and 3 measured alike)
FAR = 2.0
#: floor of the predicted time to collision in the energy [s]
TAU_MIN = 0.05
_SEARCH_DIRS = 8
_SEARCH_DEPTH = 6
_DIRS = np.array(
    [[np.cos(2 * np.pi * i / _SEARCH_DIRS), np.sin(2 * np.pi * i / _SEARCH_DIRS)]
     for i in range(_SEARCH_DIRS)], np.float32,
)  # fmt: skip


@dataclass(frozen=True)
class TTCParams:
    """Parameters of the time-to-collision model (see the module docstring).

    Attributes
    ----------
    k : float
        Energy scale of the power law [wu^2/s^2] (> 0).
    tau0 : float
        Interaction time scale [s]: the exponential cut-off of E(tau) (> 0).
    xi : float
        Relaxation time of the goal force [s] (> 0).
    max_force : float
        Bound on the summed force of the explicit step [wu/s^2] (> 0).
    horizon : float
        Interactions with a predicted collision later than this are ignored [s] (> 0).
    wall_weight : float
        Scale of the wall energies relative to agent energies (>= 0).
    force_turn : float
        Turn of each neighbour's relative velocity (explicit: of its force) [rad],
        in [-1, 1]: everyone steps aside to the same hand.
    pref_turn : float
        Turn of the preferred velocity [rad], in [-0.5, 0.5].
    soft : float
        Widening of the radius across which the energy fades to 0 [fraction of r],
        in [0, 10].
    implicit : bool
        Implicit step (minimise J) rather than the explicit force integration.
    contact : float
        Weight of the next-step penetration term (>= 0).
    contact_margin : float
        Gap the penetration term keeps [fraction of r], in [0, 1].
    pref_turn_oncoming : bool
        Turn the preferred velocity by ``pref_turn`` times how head-on the agent's
        encounter is (the largest -cos between its desired direction and that of an
        agent ahead; 0 with nobody oncoming) instead of always. Off by default:
        measured on the suite (with the contact resolution of
        :mod:`navkit.crowd.contact`), it shortens the crossing's detours (path over
        shortest 1.06 -> 1.03) but the 50 + 50 corridor then jams (arrival 100% ->
        45-60%): its lanes need the constant turn. Re-measured with ``make_way``
        (seeds 0 and 1 of the suite): corridor 38% / 68%, crossing mean arrival 19.9 /
        19.4 s (19.2 / 19.0 s with the constant turn): the turn, switched on only as
        the flows meet, comes too late.
    follow_headway : float
        Queueing [s], 0: off (default). > 0: an agent's preferred speed is at most
        the speed of the agent it follows (one ahead, in its path, going the same
        way: ``_follow``) plus the free gap beyond ``follow_gap`` [wu] over
        ``follow_headway``. Off by default: measured at 0.5 s it removed the pushing
        at the bottleneck's door (worst overlap 0) but neither its waiting (16
        agents stand 5 s) nor the corridor's (8 -> 46 stuck).
    follow_gap : float
        Gap kept behind the followed agent [wu] (0.05).
    make_way : float
        An agent settled at its goal steps aside for an agent walking toward it that
        is closer than the summed radii plus ``make_way`` [wu] (:mod:`navkit.crowd.make_way`;
        0: off). Default 1.
    right_of_way : float
        Standoffs [fraction of the maximum speed], in [0, 1]: when an agent and a
        neighbour that both want to walk both move slower than this, the one further
        along the other's way ignores the other's energy (``_right_of_way``; 0: off).
        Default 0 (off). Measured on the scenario suite at 0.5 (seeds 0-7, against 0):
        bottleneck last arrival 45.0 -> 32.4 s on average (worst 51.4 -> 36.9 s),
        agents standing 5 s at the door 15.0 -> 12.6; 50 + 50 corridor 95.9% -> 97.1%
        arrive, the last within 35 s on 6 of 8 seeds (was 3), but more agents stand 5
        s in it on the tables' seed 0 (19 -> 55) and in the small corridor of
        tests/scenarios/test_model_scenarios.py (1 -> 3, its bound 2); crossing and
        circle within 0.4 s.
    door_queue : float
        Queueing at a door narrower than a body (:mod:`navkit.crowd.door`), [radii]:
        the agents bound for the door other than the first two wait this far from its
        middle (0: off). The agent whose turn it is also relaxes to its preferred
        velocity in :data:`XI_FIRST` instead of ``xi``. Default 3. Measured on the
        scenario suite's bottleneck (seeds 0-7, against 0): last arrival 45.0 -> 29.7 s
        on average, agents standing 5 s 15.0 -> 8.6, worst overlap 0.099 -> 0.080 of a
        radius (39.1 s and 14.4 without the quicker relaxation).
    door_pace : float
        Timed approach to a door narrower than a body [s per agent passing] (0: off;
        :func:`navkit.crowd.door.door_queue`): the agents behind the second come toward
        it no faster than needed to reach the waiting distance when their turn comes.
        Default 0.8 (the suite's 1 m door passes an agent every 0.6-1.2 s).
    door_creep : float
        Slowest timed approach [wu/s] (0.15: 0.75 m in 5 s).
    door_straight : bool
        Agents bound for such a door walk without ``pref_turn`` (default True): the
        hold kept the turned preferred velocity's part across the way to the door, and
        the waiting crowd slid along the wall to one side of it.
    hold_ground : float
        An agent within this distance [wu] of its target ignores the energies of the
        walking neighbours that are not arriving themselves (the penetration term
        still keeps them apart; :func:`_hold_ground`; 0: off). Default 1: arriving
        agents fled the walkers crossing the block of goals (the bottleneck's: one was
        carried 2.4 m off its goal) and stood 5 s away from it.
    squeeze : bool
        A walking agent ignores the energies of the agents settled at their goals
        (desired speed under half their maximum) and, when it is not within
        ``hold_ground`` of its own target, of the agents that are (they hold their
        ground against it): it walks up to them and they make way (``make_way``),
        the penetration term keeping the bodies apart, instead of stopping where
        their predicted collision starts (:func:`_squeeze`). Default True: walkers
        stood 1-6 m from their goals for 20 s in front of and inside the 50 + 50
        corridor's blocks of goals (0.8 m apart, 0.2 m between two bodies). Measured
        on the scenario suite (seeds 0-7, against False): corridor agents standing 5
        s 98 -> 57, arriving 96.4% -> 98.2%; bottleneck 19 -> 14 standing, last
        arrival 24.0 -> 20.0 s on average; crossing and circle within 0.1 s.
    turn_along_walls : bool
        The preferred velocity's turn to one hand (``pref_turn``) only along a way: not
        when the ray square to the agent's desired direction on the turn's hand passes
        between the walls of its local boundary on that hand (an opening: a junction's
        side way) without meeting one within :data:`FAR` collision query ranges
        (:func:`_turn_room`); kept with no wall on that hand at all (an open square)
        and within :data:`TURN_NEAR` of the target. Default True: in the four-way
        crossing each flow kept to its hand across the junction, into the far corner
        of its exit, where the flow entering there pushed its outer agents into the
        side way (loops of 3 s; the last arrival 21.8 s against dtcrowd-low's 19.95 s).
        Measured on the scenario suite (seeds 0-7, against False): crossing mean
        arrival 19.16 -> 18.35 s, last 21.70 -> 19.07 s on average; circle last 15.24
        -> 15.39 s (mean jerk 0.90 -> 1.62 m/s^3); bottleneck last 19.26 -> 19.12 s;
        the 50 + 50 corridor unchanged (bit for bit: its walls are beside every
        walker).
    aisle : float
        How far ahead [wu] a walking agent looks for the aisle through the people
        standing ahead of it (settled at their goals, or within ``hold_ground`` of
        them), 0: off. Its preferred velocity turns (by up to
        :data:`AISLE_TURN`) to the direction whose straight walk over that distance
        overlaps them least, a turn costing :data:`AISLE_COST` [wu of overlap per
        rad] (:func:`_aisle`). Default 1.6 (two rows of the 50 + 50 corridor's blocks
        of goals, 0.8 m apart): walkers bound deep into a block walked straight at
        its rows and pushed the agents standing in them off their goals. Measured on
        the scenario suite (seeds 0-15, against 0): corridor agents standing 5 s 125
        -> 85, seeds meeting the corridor's criteria 3 -> 6, arrival 98.56% either
        way; crossing last arrival 21.70 -> 21.79 s (seeds 0-7); bottleneck and
        circle unchanged.
    oncoming_sight : float
        How far ahead [collision query ranges] a walking agent sees people coming the
        other way down its line (:func:`oncoming_ahead`: the proximity grid along its
        line, beyond its nearest neighbours), 0: off. While it sees one, its preferred
        velocity turns to its hand by ``oncoming_turn`` instead of ``pref_turn``: it
        keeps to its side, into the lane of its own flow, before the flows meet (where
        it is kept, see ``turn_along_walls``; not at a narrow door). Default 2 (7.2 m
        at the suite's 3.6 m range). In the 50 + 50 corridor the avoidance's 16 nearest
        neighbours are all of its own group until the fronts touch, so the column that
        started on the wrong side for the lanes met the oncoming flow head-on, stood
        there 5 s, was swept 3-5 m back and reached its block of goals last. Measured on
        the scenario suite (the corridor's seeds 0-31, against 0): agents standing 5 s
        171 -> 111, seeds where everybody arrives within 35 s 19 -> 27 of 32, seeds
        with nobody standing 10 -> 8 (docs/crowd_models.md: the outcome is chaotic in
        the settings; seeds 16-31 alone 85 -> 83); crossing, circle and bottleneck
        (seeds 0-7) within 0.75 s of their last arrival.
    oncoming_turn : float
        Turn of the preferred velocity to the hand [rad] while people come the other
        way down the agent's line within ``oncoming_sight``, in [0, 1]. Default 0.5.
    wall_radius : float
        Radius with which the agent meets a wall segment ahead in the energy [fraction
        of its radius], in [0, 1] (0.1 let agents run into the crossing's corners and
        stop dead in front of the next one). The local boundary is the navmesh edge, already eroded by the agent
        radius at bake time: the full radius would count it twice (a 1 m door
        eroded to 0.4 m of navmesh would be closed to agents of radius 0.3).
    """

    k: float = 1.5
    tau0: float = 3.0
    xi: float = 0.54
    max_force: float = 20.0
    horizon: float = 9.0
    wall_weight: float = 1.0
    force_turn: float = -0.3
    pref_turn: float = 0.25
    soft: float = 0.15
    implicit: bool = True
    contact: float = 1000.0
    contact_margin: float = 0.1
    wall_radius: float = 0.6
    contact_steps: float = 1.0
    corner_radius: float = 0.1
    pref_turn_oncoming: bool = False
    follow_headway: float = 0.0
    follow_gap: float = 0.05
    make_way: float = 1.0
    right_of_way: float = 0.0
    door_queue: float = 3.0
    door_pace: float = 0.8
    door_creep: float = 0.15
    door_straight: bool = True
    hold_ground: float = 1.0
    squeeze: bool = True
    turn_along_walls: bool = True
    aisle: float = 1.6
    oncoming_sight: float = 2.0
    oncoming_turn: float = 0.5

    def __post_init__(self) -> None:
        for f in ("k", "tau0", "xi", "max_force", "horizon"):
            object.__setattr__(self, f, _finite(getattr(self, f), f, 1e-6, 1e30))
        object.__setattr__(self, "wall_weight", _finite(self.wall_weight, "wall_weight", 0.0, 1e30))
        object.__setattr__(self, "force_turn", _finite(self.force_turn, "force_turn", -1.0, 1.0))
        object.__setattr__(self, "pref_turn", _finite(self.pref_turn, "pref_turn", -0.5, 0.5))
        object.__setattr__(self, "soft", _finite(self.soft, "soft", 0.0, 10.0))
        object.__setattr__(self, "implicit", bool(self.implicit))
        object.__setattr__(self, "contact", _finite(self.contact, "contact", 0.0, 1e30))
        object.__setattr__(
            self, "contact_margin", _finite(self.contact_margin, "contact_margin", 0.0, 1.0)
        )
        object.__setattr__(self, "wall_radius", _finite(self.wall_radius, "wall_radius", 0.0, 1.0))
        object.__setattr__(
            self, "contact_steps", _finite(self.contact_steps, "contact_steps", 0.1, 100.0)
        )
        object.__setattr__(
            self, "corner_radius", _finite(self.corner_radius, "corner_radius", 0.0, 1.0)
        )
        object.__setattr__(self, "pref_turn_oncoming", bool(self.pref_turn_oncoming))
        object.__setattr__(
            self, "follow_headway", _finite(self.follow_headway, "follow_headway", 0.0, 100.0)
        )
        object.__setattr__(self, "follow_gap", _finite(self.follow_gap, "follow_gap", 0.0, 10.0))
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
        object.__setattr__(self, "turn_along_walls", bool(self.turn_along_walls))
        object.__setattr__(self, "aisle", _finite(self.aisle, "aisle", 0.0, 100.0))
        object.__setattr__(
            self, "oncoming_sight", _finite(self.oncoming_sight, "oncoming_sight", 0.0, 100.0)
        )
        object.__setattr__(
            self, "oncoming_turn", _finite(self.oncoming_turn, "oncoming_turn", 0.0, 1.0)
        )

    def array(self) -> np.ndarray:
        """float32 [k, tau0, xi, max_force, horizon, wall_weight, cos, sin(force_turn),
        cos, sin(pref_turn), soft, implicit, contact, 1 + contact_margin, wall_radius,
        contact_steps, corner_radius, pref_turn, pref_turn_oncoming, follow_headway,
        follow_gap, make_way, right_of_way, door_queue, door_pace, door_creep,
        door_straight, hold_ground, squeeze, turn_along_walls, aisle, oncoming_sight,
        oncoming_turn]."""
        return np.array(
            [self.k, self.tau0, self.xi, self.max_force, self.horizon, self.wall_weight,
             np.cos(self.force_turn), np.sin(self.force_turn), np.cos(self.pref_turn),
             np.sin(self.pref_turn), self.soft, float(self.implicit), self.contact,
             1.0 + self.contact_margin, self.wall_radius, self.contact_steps,
             self.corner_radius, self.pref_turn, float(self.pref_turn_oncoming),
             self.follow_headway, self.follow_gap, self.make_way, self.right_of_way,
             self.door_queue, self.door_pace, self.door_creep, float(self.door_straight),
             self.hold_ground, float(self.squeeze),
             float(self.turn_along_walls), self.aisle, self.oncoming_sight,
             self.oncoming_turn],
            np.float32,
        )  # fmt: skip


@njit(cache=True)
def ttc_force(xx, xz, vx, vz, r, k, tau0, horizon, soft):
    """Power-law force (fx, fz) on a disc at relative position (xx, xz) = x_i - x_j with
    relative velocity (vx, vz) = v_i - v_j and summed radius r; (0, 0) when no
    collision is predicted within ``horizon``. ``soft`` > 0 widens the radius to
    ``r (1 + soft)`` and tapers the force to 0 across the widening (see the module)."""
    d2 = xx * xx + xz * xz
    rr = r
    if d2 < r * r:  # overlapping: the overlap depth as the radius
        d = np.sqrt(d2)
        rr = min(r - d, F32(0.5) * d)
        if rr <= F32(1e-4):
            # at the same point: no direction to push along from the velocities
            return F32(0.0), F32(0.0)
    else:
        rr = r * (F32(1.0) + soft)
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
    if rr > r:
        # disc = a (rr^2 - miss^2): full force for a miss distance below r, 0 at rr
        w = disc / (a * (rr * rr - r * r))
        if w < F32(1.0):
            mag = mag * w
    return (xx + tau * vx) * mag, (xz + tau * vz) * mag


@njit(cache=True)
def ttc_energy(xx, xz, vx, vz, r, k, tau0, horizon, soft):
    """Power-law energy ``k / tau^2 exp(-tau / tau0)`` of a pair (arguments as
    :func:`ttc_force`), tapered like the force when ``soft`` > 0; 0 when no collision
    is predicted within ``horizon``."""
    d2 = xx * xx + xz * xz
    rr = r
    if d2 < r * r:
        d = np.sqrt(d2)
        rr = min(r - d, F32(0.5) * d)
        if rr <= F32(1e-4):
            # at the same point: no direction; the penetration term of the implicit
            # step separates them (a constant here would swamp the cost in float32)
            return F32(0.0)
    else:
        rr = r * (F32(1.0) + soft)
    a = vx * vx + vz * vz
    if a < F32(1e-8):
        return F32(0.0)
    b = xx * vx + xz * vz
    c = d2 - rr * rr
    disc = b * b - a * c
    if disc <= F32(0.0):
        return F32(0.0)
    tau = (-b - np.sqrt(disc)) / a
    if tau <= F32(0.0) or tau > horizon:
        return F32(0.0)
    # saturates below TAU_MIN: k / tau^2 of a deep overlap (1e6 at 1 ms) would swamp
    # every other term of the float32 cost (the penetration term takes over there)
    tau = max(tau, F32(TAU_MIN))
    e = k / (tau * tau) * np.exp(-tau / tau0)
    if rr > r:
        w = disc / (a * (rr * rr - r * r))
        if w < F32(1.0):
            e = e * w
    return e


@njit(cache=True)
def _cost(ux, uz, s, px, pz, vx, vz, prefx, prefz, near, n, segs, nsegs, rad, prm, dt, skip):
    """Implicit-step objective of candidate velocity (ux, uz) for agent s."""
    k, tau0, xi, horizon, wwall, soft = prm[0], prm[1], prm[2], prm[4], prm[5], prm[10]
    fc, fs = prm[6], prm[7]
    dx, dz = ux - vx, uz - vz
    gx, gz = ux - prefx, uz - prefz
    j = (dx * dx + dz * dz) / (F32(2.0) * dt) + (gx * gx + gz * gz) / (F32(2.0) * xi)
    for i in range(n):
        # relative velocity turned by -force_turn: a collision on the agent's preferred
        # side looks cheaper, so everyone passes on the same hand
        rvx = ux - near[i, 2]
        rvz = uz - near[i, 3]
        tx = rvx * fc + rvz * fs
        tz = -rvx * fs + rvz * fc
        xx = px - near[i, 0]
        xz = pz - near[i, 1]
        if xx * xx + xz * xz < F32(1e-8):
            # coincident agents (both pressed onto one point of an edge): both would
            # plan alike and stay together; the lower slot steps to -x, the higher to +x
            xx = F32(1e-3) if s > near[i, 6] else F32(-1e-3)
            xz = F32(0.0)
        rr = rad + near[i, 4]
        if not skip[i]:
            j += ttc_energy(xx, xz, tx, tz, rr, k, tau0, horizon, soft)
        # penetration after this step (the energy alone fades once discs touch)
        nx = xx + rvx * (dt * prm[15])
        nz = xz + rvz * (dt * prm[15])
        pen = rr * prm[13] - np.sqrt(nx * nx + nz * nz)
        if pen > F32(0.0):
            j += prm[12] * k * (pen * pen) / (rr * rr)
    wr = rad * prm[14]
    cr = rad * prm[16]
    for i in range(nsegs):
        w = segs[s, i]
        sx = w[3] - w[0]
        sz = w[5] - w[2]
        l2 = sx * sx + sz * sz
        if l2 <= F32(0.0):
            continue
        ln = np.sqrt(l2)
        # inward normal (the side dtCrowd's facing test keeps) and signed distance:
        # an agent the move along the surface left a hair behind the edge line (at
        # a concave corner) still meets the wall
        inx, inz = sz / ln, -sx / ln
        h = (px - w[0]) * inx + (pz - w[2]) * inz
        if h < -cr:
            continue
        t = ((px - w[0]) * sx + (pz - w[2]) * sz) / l2
        inside = F32(0.0) < t < F32(1.0)
        t = min(max(t, F32(0.0)), F32(1.0))
        qx = px - (w[0] + t * sx)
        qz = pz - (w[2] + t * sz)
        d = np.sqrt(qx * qx + qz * qz)
        # a wall ahead is met at wr, its end points (a door's jambs, convex corners
        # of the navmesh) at the smaller cr, which keeps narrow doors open
        er = wr if inside else cr
        if h > F32(0.0) and d > er:
            j += wwall * ttc_energy(qx, qz, ux, uz, er, k, tau0, horizon, soft)
        # the centre may reach the (eroded) edge, not cross it: penalise the distance
        # below wr after this step (the energy saturates at contact): along the
        # normal beside the segment, from the end point beyond it
        if inside or d <= F32(1e-4):
            nxw, nzw, d = inx, inz, h
        else:
            nxw, nzw = qx / d, qz / d
        pen = cr - (d + (ux * nxw + uz * nzw) * dt)
        if pen > F32(0.0):
            j += prm[12] * k * (pen * pen) / (rad * rad)
    return j


@njit(cache=True)
def _oncoming(s, px, pz, dvel, near, n):
    """How much of a head-on encounter agent ``s`` at (px, pz) is in, in [0, 1]: the
    largest -cos of the angle between its desired direction and that of an agent
    ahead of it (obstacles and standing agents do not count). Desired directions,
    not velocities: in a jammed counterflow the oncoming agents stand, yet they are
    still to be passed on the same hand."""
    dx, dz = dvel[s, 0], dvel[s, 2]
    dl = np.sqrt(dx * dx + dz * dz)
    if dl < F32(1e-6):
        return F32(0.0)
    hx, hz = dx / dl, dz / dl
    w = F32(0.0)
    for j in range(n):
        if near[j, 6] < F32(0.0):
            continue
        if (near[j, 0] - px) * hx + (near[j, 1] - pz) * hz <= F32(0.0):
            continue
        o = int(near[j, 6])
        ex, ez = dvel[o, 0], dvel[o, 2]
        el = np.sqrt(ex * ex + ez * ez)
        if el < F32(1e-6):
            continue
        on = -(ex * hx + ez * hz) / el
        if on > w:
            w = on
    return min(w, F32(1.0))


@njit(cache=True)
def _follow(s, px, pz, dvel, near, n, rad, headway, gap):
    """Factor (in [0, 1]) on agent ``s``'s preferred velocity that queues it behind
    the agents it follows: a neighbour (an agent, not an obstacle) that wants to go
    the same way (desired directions within 60 degrees), stands in the agent's path
    (its centre within the summed radii of the line along the agent's desired
    direction) and leads it (is further along the agent's direction than the agent
    is along the neighbour's; ties to the lower slot: of two agents converging on a
    door exactly one yields). The agent's speed is then at most the leader's speed
    along that direction plus the free gap over ``headway``: it keeps ``gap`` behind."""
    dx, dz = dvel[s, 0], dvel[s, 2]
    dl = np.sqrt(dx * dx + dz * dz)
    if dl < F32(1e-6):
        return F32(1.0)
    hx, hz = dx / dl, dz / dl
    lim = dl
    for j in range(n):
        if near[j, 5] != F32(0.0) or near[j, 6] < F32(0.0):
            continue
        o = int(near[j, 6])
        ex, ez = dvel[o, 0], dvel[o, 2]
        el = np.sqrt(ex * ex + ez * ez)
        if el < F32(1e-6):
            continue
        ox, oz = ex / el, ez / el
        if hx * ox + hz * oz < F32(0.5):
            continue
        rx, rz = near[j, 0] - px, near[j, 1] - pz
        along = rx * hx + rz * hz
        if along <= F32(0.0):
            continue
        rr = rad + near[j, 4]
        side = rx * hz - rz * hx
        if abs(side) >= rr:
            continue
        back = -(rx * ox + rz * oz)  # how far the agent is ahead along the neighbour's way
        if back > along or (back == along and s < o):
            continue
        d = np.sqrt(rx * rx + rz * rz)
        v = max(near[j, 2] * hx + near[j, 3] * hz, F32(0.0)) + max(d - rr - gap, F32(0.0)) / headway
        if v < lim:
            lim = v
    return lim / dl


@njit(cache=True)
def _right_of_way(s, px, pz, vel, dvel, max_speed, near, n, speed, skip):
    """Marks in ``skip[:n]`` the neighbours over which agent ``s`` at (px, pz) has the
    right of way in a standoff, and whose energy it therefore ignores (the
    penetration term still keeps them apart; they still avoid ``s``).

    A standoff: ``s`` and a neighbouring agent both want to walk (desired speed
    over half their maximum) yet both move under ``speed`` times it. ``s`` has the
    right of way when it is further along the neighbour's desired direction than
    the neighbour is along its own (ties to the lower slot): of two agents
    converging on a door, or nose to nose, exactly one gives way. Nothing is marked
    with ``speed`` <= 0."""
    for j in range(n):
        skip[j] = False
    if speed <= 0.0:
        return
    vm = max_speed[s]
    dx, dz = dvel[s, 0], dvel[s, 2]
    dl = np.sqrt(dx * dx + dz * dz)
    if dl < F32(0.5) * vm:
        return
    if vel[s, 0] * vel[s, 0] + vel[s, 2] * vel[s, 2] > (speed * vm) ** 2:
        return
    hx, hz = dx / dl, dz / dl
    for j in range(n):
        if near[j, 5] != F32(0.0) or near[j, 6] < F32(0.0):
            continue
        o = int(near[j, 6])
        vo = max_speed[o]
        ex, ez = dvel[o, 0], dvel[o, 2]
        el = np.sqrt(ex * ex + ez * ez)
        if el < F32(0.5) * vo:
            continue
        if near[j, 2] * near[j, 2] + near[j, 3] * near[j, 3] > (speed * vo) ** 2:
            continue
        ox, oz = ex / el, ez / el
        rx, rz = near[j, 0] - px, near[j, 1] - pz
        along = rx * hx + rz * hz
        back = -(rx * ox + rz * oz)
        if back > along + F32(0.02) or (back >= along - F32(0.02) and s < o):
            skip[j] = True


@njit(cache=True)
def _hold_ground(s, dvel, max_speed, fin, near, n, within, skip):
    """Marks in ``skip[:n]`` the walking neighbours (desired speed over half their
    maximum, farther than ``within`` from their own targets) of agent ``s`` when it
    is within ``within`` [wu] of its target: an agent arriving at its goal stands its
    ground instead of fleeing the walkers who pass through the block of goals (they
    avoid it; the penetration term still keeps them apart)."""
    if fin[s] >= within:
        return
    for j in range(n):
        if near[j, 5] != F32(0.0) or near[j, 6] < F32(0.0):
            continue
        o = int(near[j, 6])
        if fin[o] < within:
            continue
        if dvel[o, 0] * dvel[o, 0] + dvel[o, 2] * dvel[o, 2] >= (F32(0.5) * max_speed[o]) ** 2:
            skip[j] = True


@njit(cache=True)
def _squeeze(s, dvel, max_speed, near, n, skip, fin, within):
    """Marks in ``skip[:n]`` the settled neighbours (agents whose desired speed is
    under half their maximum: dtCrowd's arrival slow-down puts that within a radius
    of their goal) of agent ``s`` when it walks (desired speed over half its
    maximum), and, when ``s`` is not within ``within`` of its own target (``fin``),
    the neighbours that are (they hold their ground against it, :func:`_hold_ground`):
    a walker goes up to the people standing at their goals, who make way
    (:func:`navkit.crowd.make_way.make_way`), instead of stopping at the distance
    their predicted collision keeps; the penetration term still keeps the bodies
    apart."""
    if dvel[s, 0] * dvel[s, 0] + dvel[s, 2] * dvel[s, 2] < (F32(0.5) * max_speed[s]) ** 2:
        return
    for j in range(n):
        if near[j, 5] != F32(0.0) or near[j, 6] < F32(0.0):
            continue  # temporary obstacles do not make way
        o = int(near[j, 6])
        if dvel[o, 0] * dvel[o, 0] + dvel[o, 2] * dvel[o, 2] < (F32(0.5) * max_speed[o]) ** 2:
            skip[j] = True
        elif fin[o] < within and fin[s] >= within:
            skip[j] = True


#: largest turn [rad] of a walker's way from its desired direction to an aisle
#: (``TTCParams.aisle``, :func:`_aisle`)
AISLE_TURN = 1.0
#: what a turn to an aisle costs [wu of overlap per rad]: a straight walk that grazes
#: the people standing ahead by 0.2 m is worth a turn of 1 rad
AISLE_COST = 0.2
#: a neighbour moving on along the walker's way faster than this fraction of the
#: walker's maximum speed is not standing in it (the crossing's arriving blocks)
AISLE_ON = 0.5
#: directions the aisle search tries on each side of the desired one
_AISLE_STEPS = 6
#: spacing [wu] of the points along a tried direction
_AISLE_DS = 0.2


@njit(cache=True)
def _aisle(s, px, pz, dvel, max_speed, fin, within, near, n, segs, nsegs, rad, look, turn,
           cost, moving, idx):  # fmt: skip
    """Turn (cos, sin) of agent ``s``'s preferred velocity toward the aisle through the
    people standing ahead of it: the agents settled at their goals and, when ``s`` is
    not within ``within`` of its own target, the agents that are (the ones a walker
    squeezes past, :func:`_squeeze`), unless they move on along its way faster than
    ``moving`` times its maximum speed. Among the directions within ``turn`` [rad] of its
    desired one, the one whose straight walk over the next ``look`` [wu] (no farther
    than its target) keeps its body clearest of theirs (the least overlap, none
    counting as 0) less ``cost`` [wu per rad] of turn; walls (the local boundary,
    eroded by the radius) close a direction. A walker crossing a block of standing
    people walks down the gaps between them (and the one behind it down the same
    gap) instead of into them, and along a wall when the gap there is the widest (a
    block of goals four abreast in a 4 m corridor leaves 0.5 m between its outer files
    and the walls, 0.2 m between two files); (1, 0) when it does not walk, is within
    ``within`` of its target, or nobody stands ahead. ``idx`` scratch (MAX_NEAR,)
    int64."""
    vm = max_speed[s]
    dx, dz = dvel[s, 0], dvel[s, 2]
    dl = np.sqrt(dx * dx + dz * dz)
    if look <= F32(0.0) or dl < F32(0.5) * vm or fin[s] < within:
        return F32(1.0), F32(0.0)
    hx, hz = dx / dl, dz / dl
    reach = min(look, fin[s])
    m = 0
    for j in range(n):
        if near[j, 5] != F32(0.0) or near[j, 6] < F32(0.0):
            continue
        o = int(near[j, 6])
        ex, ez = dvel[o, 0], dvel[o, 2]
        if ex * ex + ez * ez >= (F32(0.5) * max_speed[o]) ** 2 and fin[o] >= within:
            continue  # a walker: it moves on
        if near[j, 2] * hx + near[j, 3] * hz > moving * vm:
            continue  # moving on along its way
        rx, rz = near[j, 0] - px, near[j, 1] - pz
        rr = rad + near[j, 4]
        if rx * rx + rz * rz > (reach + rr) * (reach + rr):
            continue
        if rx * hx + rz * hz <= -rr:
            continue  # behind
        idx[m] = j
        m += 1
    if m == 0:
        return F32(1.0), F32(0.0)
    npts = max(int(reach / F32(_AISLE_DS)), 1)
    best = F32(-1e30)
    bc, bs = F32(1.0), F32(0.0)
    for a in range(2 * _AISLE_STEPS + 1):
        # 0, then alternately to either side (ties keep the smaller turn)
        k = (a + 1) // 2
        th = turn * F32(k) / F32(_AISLE_STEPS)
        if a % 2 == 1:
            th = -th
        pen = cost * abs(th)
        if a > 0 and -pen <= best:
            break
        c, sn = np.cos(th), np.sin(th)
        ux, uz = hx * c - hz * sn, hx * sn + hz * c
        clear = F32(0.0)
        for t in range(1, npts + 1):
            qx = px + ux * (F32(_AISLE_DS) * F32(t))
            qz = pz + uz * (F32(_AISLE_DS) * F32(t))
            for i in range(m):
                j = idx[i]
                ox, oz = qx - near[j, 0], qz - near[j, 1]
                f = np.sqrt(ox * ox + oz * oz) - (rad + near[j, 4])
                if f < clear:
                    clear = f
            for w in range(nsegs):
                g = segs[s, w]
                sx, sz = g[3] - g[0], g[5] - g[2]
                l2 = sx * sx + sz * sz
                if l2 <= F32(0.0):
                    continue
                u = ((qx - g[0]) * sx + (qz - g[2]) * sz) / l2
                if u < F32(0.0) or u > F32(1.0):
                    continue
                ln = np.sqrt(l2)
                h = ((qx - g[0]) * sz - (qz - g[2]) * sx) / ln
                if h < F32(-0.05) and h > F32(-0.5):
                    clear = F32(-10.0)  # through a wall
        sc = clear - pen
        if sc > best:
            best, bc, bs = sc, c, sn
    return bc, bs


@njit(cache=True)
def _turn_room(s, px, pz, dvel, pss, segs, nsegs, far):
    """Whether agent ``s`` at (px, pz) keeps the turn of its preferred velocity to one
    hand (``pss``: the turn's sine; ``turn_along_walls``): yes when the ray from it
    square to its desired direction, on the turn's hand, meets a wall of its local
    boundary within ``far`` [wu] (it walks along a way), or when no wall of the boundary lies on that hand
    at all (an open square, or a way's far wall left out of the boundary's nearest
    segments); no when walls lie on that hand but the ray passes between them: an
    opening, a junction's side way, into whose far corner the turn would take it."""
    dx, dz = dvel[s, 0], dvel[s, 2]
    dl = np.sqrt(dx * dx + dz * dz)
    if dl < F32(1e-6):
        return True
    sg = F32(1.0) if pss > F32(0.0) else F32(-1.0)
    lx, lz = -dz / dl * sg, dx / dl * sg
    seen = False
    for j in range(nsegs):
        w = segs[s, j]
        a0 = (w[0] - px) * lx + (w[2] - pz) * lz
        a1 = (w[3] - px) * lx + (w[5] - pz) * lz
        if a0 <= F32(0.0) and a1 <= F32(0.0):
            continue  # wholly on the other hand
        seen = True
        ex, ez = w[3] - w[0], w[5] - w[2]
        den = lx * ez - lz * ex
        if abs(den) < F32(1e-9):
            continue
        ax, az = w[0] - px, w[2] - pz
        t = (ax * ez - az * ex) / den  # along the ray
        u = (ax * lz - az * lx) / den  # along the segment
        if F32(0.0) <= u <= F32(1.0) and F32(0.0) < t < far:
            return True
    return not seen


@njit(cache=True)
def oncoming_ahead(act, mask, npos, dvel, max_speed, radius, height, inv, buckets, items, sight,
                   out):  # fmt: skip
    """``out[s]``: how far ahead [wu] along its desired direction agent ``s`` (every ``s``
    in ``act`` with ``mask[s]``) sees the nearest agent coming the other way on its
    line, within ``sight[s]`` [wu]; inf when there is none or ``s`` does not walk.

    Coming the other way: walking (desired speed at least half its maximum, as ``s``)
    in a desired direction more than 120 degrees from that of ``s``, its centre
    within the summed radii of the line of ``s`` and its height overlapping. The
    cells of the proximity grid (``inv``, ``buckets``, ``items``: every active agent
    by its rank in ``act``) along the line are visited, nothing beside it: people
    see the crowd coming down their way over the heads of their own (the avoidance
    models' :data:`~navkit.crowd.obstacles.MAX_NEAR` nearest neighbours are all of
    their own flow in a dense group). Walls are not seen through in any case the
    agents meet (a desired direction points along the way); they are not tested."""
    nb = buckets.shape[0]
    cs = F32(1.0) / inv
    for i in range(act.shape[0]):
        s = act[i]
        out[s] = np.inf
        if not mask[s]:
            continue
        dx, dz = dvel[s, 0], dvel[s, 2]
        dl = np.sqrt(dx * dx + dz * dz)
        if dl < F32(0.5) * max_speed[s] or dl < F32(1e-6):
            continue
        hx, hz = dx / dl, dz / dl
        px, py, pz = npos[s, 0], npos[s, 1], npos[s, 2]
        # points cs apart along the line, each visiting the cells within w: an agent
        # within the summed radii of the line has its bounds (the cells it is
        # registered in) within radius[s] + cs / 2 of the nearest point on either axis
        w = radius[s] + F32(0.5) * cs + F32(1e-3)
        best = np.inf
        t = F32(0.0)
        lx, ly, ux, uy = np.int64(1), np.int64(1), np.int64(0), np.int64(0)
        while t - w < min(best, sight[s]):
            qx, qz = px + hx * t, pz + hz * t
            x0, y0 = _cell(qx - w, inv), _cell(qz - w, inv)
            x1, y1 = _cell(qx + w, inv), _cell(qz + w, inv)
            for y in range(y0, y1 + 1):
                for x in range(x0, x1 + 1):
                    if lx <= x <= ux and ly <= y <= uy:
                        continue  # visited at the previous point
                    k = buckets[_hash(x, y, nb)]
                    while k != -1:
                        if items[k, 0] == x and items[k, 1] == y:
                            o = act[items[k, 2]]
                            ex, ez = dvel[o, 0], dvel[o, 2]
                            el = np.sqrt(ex * ex + ez * ez)
                            if (
                                o != s
                                and el >= F32(0.5) * max_speed[o]
                                and ex * hx + ez * hz < F32(-0.5) * el
                                and abs(py - npos[o, 1]) < (height[s] + height[o]) * F32(0.5)
                            ):
                                rx, rz = npos[o, 0] - px, npos[o, 2] - pz
                                al = rx * hx + rz * hz
                                lat = rx * hz - rz * hx
                                if (
                                    F32(0.0) < al <= sight[s]
                                    and abs(lat) < radius[s] + radius[o]
                                    and al < best
                                ):
                                    best = al
                        k = items[k, 3]
            lx, ly, ux, uy = x0, y0, x1, y1
            t += cs
        out[s] = best


@njit(cache=True)
def plan_ttc(act, mask, npos, vel, dvel, radius, height, max_speed, max_acc, qrange, inv,
             buckets, items, obs, segs, nsegs, gap, fin, prm, dt, nvel, onc):  # fmt: skip
    """Planned velocity ``nvel`` of every agent ``s`` in ``act`` with ``mask[s]``.

    Neighbours from the proximity grid (``inv``, ``buckets``, ``items``) and the
    temporary obstacles ``obs`` ((k, 7) float32); walls ``segs[s, :nsegs[s]]``
    ((n, 8, 6) float32, dtLocalBoundary's); ``gap`` every agent's narrow passage
    ((n, 3) float32, :func:`navkit.crowd.door.find_gaps`); ``prm`` :meth:`TTCParams.array`;
    ``dt`` [s]; ``onc`` every agent's distance to the people coming the other way down
    its line (:func:`oncoming_ahead`; read with ``oncoming_sight`` > 0). Returns the
    number of interactions evaluated.
    """
    k, tau0, xi, fmax, horizon, wwall = prm[0], prm[1], prm[2], prm[3], prm[4], prm[5]
    fc, fs, pc, ps, soft, implicit = prm[6], prm[7], prm[8], prm[9], prm[10], prm[11]
    ids = np.empty(GATHER_IDS, np.int64)
    near = np.zeros((MAX_NEAR, 7), np.float32)
    skip = np.zeros(MAX_NEAR, np.bool_)
    aidx = np.zeros(MAX_NEAR, np.int64)
    count = 0
    for i in range(act.shape[0]):
        s = act[i]
        if not mask[s]:
            continue
        px, pz = npos[s, 0], npos[s, 2]
        vx, vz = vel[s, 0], vel[s, 2]
        vmax = max_speed[s]
        n = gather_circles(s, act, npos, vel, radius, height, qrange, inv, buckets, items, obs,
                           ids, near)  # fmt: skip
        pcs, pss = pc, ps
        if prm[18] > F32(0.5):
            # the turn in proportion to the fastest oncoming neighbour ahead (its speed
            # against the agent's desired direction over the desired speed, at most 1)
            w = _oncoming(s, px, pz, dvel, near, n)
            if w < F32(1.0):
                ang = prm[17] * w
                pcs, pss = np.cos(ang), np.sin(ang)
        if prm[23] > F32(0.0) and prm[26] > F32(0.5) and gap[s, 2] > F32(0.5):
            # bound for a narrow door: everybody queues for it, nobody to pass on a hand
            pcs, pss = F32(1.0), F32(0.0)
        if (
            prm[29] > F32(0.5)
            and pss != F32(0.0)
            and fin[s] >= F32(TURN_NEAR)
            and not _turn_room(s, px, pz, dvel, pss, segs, nsegs[s], FAR * qrange[s])
        ):
            # no turn to one hand across an opening (_turn_room)
            pcs, pss = F32(1.0), F32(0.0)
        if prm[31] > F32(0.0) and pss != F32(0.0) and onc[s] < prm[31] * qrange[s]:
            # people coming the other way down its line, seen from afar (oncoming_ahead):
            # keep to the hand harder, into the lane of its own flow, before they meet
            ang = prm[32] if pss > F32(0.0) else -prm[32]
            pcs, pss = np.cos(ang), np.sin(ang)
        prefx = dvel[s, 0] * pcs - dvel[s, 2] * pss
        prefz = dvel[s, 0] * pss + dvel[s, 2] * pcs
        if prm[30] > F32(0.0) and not (prm[23] > F32(0.0) and gap[s, 2] > F32(0.5)):
            # walking through people standing at their goals: down the aisle between them
            ac, asn = _aisle(s, px, pz, dvel, max_speed, fin, prm[27], near, n, segs,
                             nsegs[s], radius[s], prm[30], F32(AISLE_TURN), F32(AISLE_COST),
                             F32(AISLE_ON), aidx)  # fmt: skip
            prefx, prefz = prefx * ac - prefz * asn, prefx * asn + prefz * ac
        if prm[21] > F32(0.0):
            # settled at its goal: step aside for the walkers coming through (make_way.py)
            mwx, mwz = make_way(s, px, pz, dvel, max_speed, near, n, radius[s], prm[21])
            prefx += mwx * F32(0.5) * vmax
            prefz += mwz * F32(0.5) * vmax
        _right_of_way(s, px, pz, vel, dvel, max_speed, near, n, prm[22], skip)
        if prm[27] > F32(0.0):
            _hold_ground(s, dvel, max_speed, fin, near, n, prm[27], skip)
        if prm[28] > F32(0.5):
            _squeeze(s, dvel, max_speed, near, n, skip, fin, prm[27])
        brisk = False
        if prm[23] > F32(0.0):
            # queue at a door narrower than a body (door.py)
            prefx, prefz, brisk = door_queue(s, px, pz, prefx, prefz, gap, near, n, radius[s],
                                      prm[23] * radius[s], vmax, skip, prm[24], prm[25])  # fmt: skip
            if brisk:
                # the agent whose turn it is relaxes to its preferred velocity in
                # XI_FIRST instead of xi (the goal term's target moved accordingly)
                f = (dt + xi) / (dt + F32(XI_FIRST))
                prefx = vx + (prefx - vx) * f
                prefz = vz + (prefz - vz) * f
        if prm[19] > F32(0.0):
            f = _follow(s, px, pz, dvel, near, n, radius[s], prm[19], prm[20])
            prefx = prefx * f
            prefz = prefz * f
        count += n + nsegs[s]
        if implicit > F32(0.5):
            # pattern search over the velocities reachable this step
            reach = max(max_acc[s] * dt, F32(1e-3))
            bx, bz = vx, vz
            best = _cost(bx, bz, s, px, pz, vx, vz, prefx, prefz, near, n, segs, nsegs[s],
                         radius[s], prm, dt, skip)  # fmt: skip
            # the step toward the preferred velocity as a second start
            gx, gz = prefx - vx, prefz - vz
            gl = np.sqrt(gx * gx + gz * gz)
            if gl > F32(1e-6):
                f = min(gl, reach) / gl
                cx, cz = vx + gx * f, vz + gz * f
                if brisk:
                    # (the moved target may lie beyond the maximum speed)
                    c2 = cx * cx + cz * cz
                    if c2 > vmax * vmax:
                        c2 = vmax / np.sqrt(c2)
                        cx, cz = cx * c2, cz * c2
                cj = _cost(cx, cz, s, px, pz, vx, vz, prefx, prefz, near, n, segs, nsegs[s],
                           radius[s], prm, dt, skip)  # fmt: skip
                if cj < best:
                    best, bx, bz = cj, cx, cz
            step = reach * F32(0.5)
            for _ in range(_SEARCH_DEPTH):
                cx0, cz0 = bx, bz
                for d in range(_SEARCH_DIRS):
                    cx = cx0 + step * _DIRS[d, 0]
                    cz = cz0 + step * _DIRS[d, 1]
                    ex, ez = cx - vx, cz - vz
                    if ex * ex + ez * ez > reach * reach * F32(1.0001):
                        continue
                    if cx * cx + cz * cz > vmax * vmax:
                        continue
                    cj = _cost(cx, cz, s, px, pz, vx, vz, prefx, prefz, near, n, segs,
                               nsegs[s], radius[s], prm, dt, skip)  # fmt: skip
                    if cj < best:
                        best, bx, bz = cj, cx, cz
                step = step * F32(0.5)
            nvel[s, 0] = bx
            nvel[s, 1] = F32(0.0)
            nvel[s, 2] = bz
            continue
        # explicit: the force integrated over the step
        fx = (prefx - vx) / xi
        fz = (prefz - vz) / xi
        for j in range(n):
            gx, gz = ttc_force(px - near[j, 0], pz - near[j, 1], vx - near[j, 2],
                               vz - near[j, 3], radius[s] + near[j, 4], k, tau0, horizon,
                               soft)  # fmt: skip
            fx += gx * fc - gz * fs
            fz += gx * fs + gz * fc
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
            gx, gz = ttc_force(px - qx, pz - qz, vx, vz, radius[s] * prm[14], k, tau0, horizon,
                               soft)  # fmt: skip
            fx += gx * wwall
            fz += gz * wwall
        fl = np.sqrt(fx * fx + fz * fz)
        if fl > fmax:
            fx = fx * (fmax / fl)
            fz = fz * (fmax / fl)
        nx = vx + fx * dt
        nz = vz + fz * dt
        sp = np.sqrt(nx * nx + nz * nz)
        if sp > vmax:
            nx = nx * (vmax / sp)
            nz = nz * (vmax / sp)
        nvel[s, 0] = nx
        nvel[s, 1] = F32(0.0)
        nvel[s, 2] = nz
    return count
