"""Corridor agents: agents of any radius moving on an Explicit Corridor Map.

Each agent plans with :meth:`CorridorMap.find_path` for its own radius (the
clearance) and keeps three things from the answer: the indicative path (the
shortest path for its radius, or the route keeping ``preferred_clearance`` where
there is room), and its corridor -- disks along the medial route whose radius is
the clearance there. Every :meth:`CorridorAgents.update` then, for all agents at
once in numba kernels:

* picks the **attraction point**: the furthest point of the indicative path
  inside the agent's clearance disk (the disk around it that touches the nearest
  obstacle), so the agent cuts corners only where it can see past them
  (Karamouzas, Geraerts and Overmars, "Indicative routes for path planning and
  crowd simulation", 2009);
* adds **local forces**: steering towards the attraction point at the
  preferred speed (slowing down over the last ``slow_distance``), a
  time-to-collision force from each neighbour (the power law of Karamouzas,
  Skinner and Guy, PRL 2014: energy k / tau^2 * exp(-tau / tau0)), a push from
  the nearest obstacle point (the same power law), and optionally group
  coherence (a pull towards the centre of the agent's group);
* moves, separates overlapping agents, and keeps every agent **inside its
  corridor** (the disks shrunk by its radius) and at least its radius from
  every obstacle -- a hard constraint, whatever the forces say (eight rounds of
  separation and constraint per update).

Agents that arrived stand at their goal but make way: a walking agent does not
avoid them and pushes through (they take most of the push, and step aside off its
line rather than ahead of it: pushed along the line past its goal, an agent would
walk back into the walker, a head-on standoff), and an arrived agent pushed more
than ``3 * arrive_distance`` (or its radius) off its goal walks back. (Walkers
used to avoid arrived agents except within 2.2 m of their own goal: in the 50 + 50
corridor of the scenario suite they then stood in front of the other group's
block of goals.)

Standoffs: two walking agents that both crawl (under half their maximum speed) and
still predict a collision -- at a door, one at each jamb -- would wait for each
other; the one nearer its goal has the right of way (it ignores the other's
time-to-collision push; the other still avoids it). On the scenario suite's
bottleneck (seeds 0-7) this cut the agents standing 5 s at the door from 10.6 to 6.6
on average and the last arrival from 26.0 to 24.9 s (worst 30.1 -> 29.1 s).

Doors: where an agent's corridor ahead narrows below two bodies (its clearance
under twice the agent's radius: one at a time) and widens again, the agents bound
for it queue as the crowd's TTC and ORCA agents do (:mod:`navkit.crowd.door`,
``AgentSettings.door_queue``): the nearest goes first, ignoring the others' push
and stepping in promptly, the others wait on a funnel around the door's mouth and
time their approach to it. On the scenario suite's bottleneck (seeds 0-15) nobody
stands 5 s at the door (53 agents on seeds 0-7 before) and the last arrives after
21.8-22.7 s (was 22.8-29.1 s).

When the map changes (:meth:`CorridorMap.insert_polygon`, ``remove``, ``move``
...), the agents subscribed to it get the :class:`UpdateReport`; an agent whose
route ran along an edge the update replaced (:meth:`UpdateReport.affects`)
plans again from where it stands; the others keep their corridors. An agent
with no path (its goal enclosed, or an obstacle dropped onto it) is BLOCKED and
tries again every ``retry_interval`` seconds and after every update.

>>> import navkit
>>> from navkit.ecm import CorridorMap, CorridorAgents
>>> scene = navkit.data.load_scene()
>>> cm = CorridorMap.from_polygons(scene["boundary"], scene["obstacles"])
>>> agents = CorridorAgents(cm)
>>> a = agents.add_agent((1, 1), goal=(19, 11), radius=0.5)
>>> for _ in range(400):
...     agents.update(0.05)
>>> agents.state(a)
'arrived'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from navkit._check import integer, real
from navkit.crowd.door import SIGHT as DOOR_SIGHT
from navkit.crowd.door import _rank as rank_queues
from navkit.errors import InputError, StaleHandleError

from . import _agent_kernels as AK
from .corridor_map import CorridorMap, UpdateReport, _vec2
from .path import PathResult

__all__ = ["CorridorAgents", "AgentSettings"]

_STATE_NAMES = {0: "free", AK.MOVING: "moving", AK.ARRIVED: "arrived", AK.BLOCKED: "blocked"}


@dataclass(frozen=True)
class AgentSettings:
    """Force-model constants shared by all agents of a :class:`CorridorAgents`.

    Attributes
    ----------
    tau0 : float -- time-to-collision horizon of the power law [s] (3.0).
    k_ttc : float -- strength of the time-to-collision force [wu^2/s^2... scaled] (1.5).
    horizon : float -- collisions predicted further ahead are ignored [s] (8.0).
    sense : float -- neighbours farther than this are ignored [wu] (4.0).
    relax : float -- time to reach the preferred velocity [s] (0.4).
    slow_distance : float -- slow down over the last stretch to the goal [wu] (1.0).
    arrive_distance : float -- arrived within this of the goal [wu] (0.1).
    wall_range : float -- walls nearer than this to the agent's surface repel it by time to collision [wu] (1.0).
    coherence : float -- agents ahead of their group's centre slow down by
        1 / (1 + coherence * distance ahead) [1/wu] (0.0: off).
    keep_side : float -- an oncoming agent's time-to-collision push gets this
        fraction again sideways, to the agent's right (1.0; 0: none). It breaks the
        symmetric standoffs of counterflow in narrow corridors.
    max_force : float -- push of a full overlap or touching a wall [wu/s^2] (20.0).
    separate : float -- fraction of an overlap removed per step (0.5).
    retry_interval : float -- blocked agents plan again this often [s] (1.0).
    separation_rounds : int -- rounds of separation and corridor constraint per update
        (8; 3 left overlaps of 0.22 of a radius in the suite's 50 + 50 corridor).
    door_queue : float -- agents whose corridor narrows below two bodies within
        ``navkit.crowd.door.SIGHT`` times ``sense`` ahead queue for that door as the
        crowd's TTC and ORCA agents do (:mod:`navkit.crowd.door`): the nearest goes
        first, the others wait on a funnel this many radii and more from its mouth
        (3.0; 0: off).
    door_pace : float -- the queue's timed approach: the agents behind the second come
        no faster than needed to reach the funnel when their turn comes, one turn per
        this many seconds (0.8; 0: off).
    door_creep : float -- the timed approach's least speed [wu/s] (0.15).
    """

    tau0: float = 3.0
    k_ttc: float = 1.5
    horizon: float = 8.0
    sense: float = 4.0
    relax: float = 0.4
    slow_distance: float = 1.0
    arrive_distance: float = 0.1
    wall_range: float = 1.0
    coherence: float = 0.0
    keep_side: float = 1.0
    max_force: float = 20.0
    separate: float = 0.5
    retry_interval: float = 1.0
    separation_rounds: int = 8
    door_queue: float = 3.0
    door_pace: float = 0.8
    door_creep: float = 0.15

    def __post_init__(self) -> None:
        for name in (
            "tau0", "k_ttc", "horizon", "sense", "relax", "slow_distance", "arrive_distance",
            "wall_range", "max_force", "retry_interval",
        ):  # fmt: skip
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise InputError(f"AgentSettings.{name} must be a finite number > 0, got {v!r:.60}")
        for name in ("coherence", "separate", "keep_side", "door_queue", "door_pace", "door_creep"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise InputError(
                    f"AgentSettings.{name} must be a finite number >= 0, got {v!r:.60}"
                )
        if not (isinstance(self.separation_rounds, int) and 1 <= self.separation_rounds <= 100):
            raise InputError(
                f"AgentSettings.separation_rounds must be an int in 1..100, got "
                f"{self.separation_rounds!r:.60}"
            )
        if self.separate > 1:
            raise InputError(f"AgentSettings.separate must be <= 1, got {self.separate!r}")


class CorridorAgents:
    """Agents of different radii following their corridors on a :class:`CorridorMap`.

    Parameters
    ----------
    cmap : CorridorMap
        The map; the agents subscribe to its updates (see the module docs).
    max_agents : int
        Slots to allocate (the arrays below have this many rows).
    settings : AgentSettings, optional
        Force-model constants.

    Attributes (arrays of ``max_agents`` rows; rows of free slots are zero)
    ------------------------------------------------------------------------
    positions : (max_agents, 2) float64 [wu]
    velocities : (max_agents, 2) float64 [wu/s], as travelled in the last update
    radii : (max_agents,) float64 [wu]
    states : (max_agents,) int8 -- 0 free slot, 1 moving, 2 arrived, 3 blocked
    attraction : (max_agents, 2) float64 [wu] -- each agent's current attraction point
    """

    def __init__(
        self, cmap: CorridorMap, max_agents: int = 256, settings: AgentSettings | None = None
    ):
        if not isinstance(cmap, CorridorMap):
            raise InputError(f"cmap must be a CorridorMap, got {type(cmap).__name__}")
        max_agents = integer(max_agents, "max_agents", 1, 0xFFFF)
        self.cmap = cmap
        self.settings = settings if settings is not None else AgentSettings()
        if not isinstance(self.settings, AgentSettings):
            raise InputError("settings must be an AgentSettings")
        n = int(max_agents)
        self.max_agents = n
        self.positions = np.zeros((n, 2))
        self.velocities = np.zeros((n, 2))
        self.radii = np.zeros(n)
        self.max_speed = np.zeros(n)
        self.max_acceleration = np.zeros(n)
        self.goals = np.zeros((n, 2))
        self.states = np.zeros(n, np.int8)
        self.groups = np.full(n, -1, np.int64)
        self.attraction = np.zeros((n, 2))
        self.preferred = np.full(n, np.nan)  # preferred clearance (nan: none)
        self.replans = np.zeros(n, np.int64)  # how many times each agent planned
        self._salt = np.zeros(n, np.int64)
        self._pseg = np.zeros(n, np.int64)
        self._pt = np.zeros(n)
        self._kc = np.zeros(n, np.int64)
        self._retry = np.zeros(n)  # seconds until a blocked agent tries again
        self._paths: list[PathResult | None] = [None] * n
        self._disks: list[tuple[np.ndarray, np.ndarray] | None] = [None] * n
        self._why: list[str] = [""] * n
        self._flat: tuple | None = None
        self._new_vel = np.zeros((n, 2))
        self._new_pos = np.zeros((n, 2))
        self._tmp = np.zeros((n, 2))
        self._gaps = np.zeros((n, 9), np.float32)  # doors (_agent_kernels.find_doors)
        self._pos3 = np.zeros((n, 3), np.float32)
        self.time = 0.0
        self._unsubscribe = cmap.subscribe(self.on_map_update)

    # -- handles ---------------------------------------------------------
    def _slot(self, handle) -> int:
        if isinstance(handle, bool) or not isinstance(handle, (int, np.integer)):
            raise InputError(f"agent handle must be an int, got {handle!r:.60}")
        s = int(handle) & 0xFFFF
        if s >= self.max_agents or self.states[s] == 0 or self._salt[s] != int(handle) >> 16:
            raise StaleHandleError(f"agent handle {handle} is stale or was never issued")
        return s

    def _site_args(self) -> tuple:
        S = self.cmap.sites
        m = self.cmap
        return (
            float(m.origin[0]), float(m.origin[1]), float(m.unit),
            *S.grid_args(), S.kind, S.ax, S.ay, S.bx, S.by, S.alive,
        )  # fmt: skip

    # -- agents ----------------------------------------------------------
    def add_agent(
        self,
        position: Sequence[float],
        goal: Sequence[float],
        *,
        radius: float,
        max_speed: float = 1.4,
        max_acceleration: float = 4.0,
        preferred_clearance: float | None = None,
        group: int = -1,
    ) -> int:
        """Add an agent at ``position`` ((2,) [wu]) heading for ``goal`` ((2,) [wu]).

        ``radius`` [wu] is its clearance; ``max_speed`` [wu/s] and
        ``max_acceleration`` [wu/s^2] its limits; ``preferred_clearance`` (>=
        radius) makes it follow the route keeping that far from obstacles where
        the corridor is wide enough; agents of the same ``group`` (>= 0) keep
        together when :attr:`AgentSettings.coherence` > 0.

        Returns a generational handle. Raises InputError when the position is
        outside free space or closer than ``radius`` to an obstacle, or when no
        slot is free; an agent whose goal cannot be reached is added BLOCKED.
        """
        p = _vec2(position, "position")
        g = _vec2(goal, "goal")
        r = real(radius, "radius", 0.0, 1e300, lo_open=True, unit="wu")
        vs = real(max_speed, "max_speed", 0.0, 1e300, lo_open=True, unit="wu/s")
        acc = real(max_acceleration, "max_acceleration", 0.0, 1e300, lo_open=True, unit="wu/s^2")
        pc = math.nan
        if preferred_clearance is not None:
            pc = float(preferred_clearance)
            if not (math.isfinite(pc) and pc >= r):
                raise InputError(
                    f"preferred_clearance must be >= radius ({r:g}), got {preferred_clearance!r:.60}"
                )
        group = integer(group, "group", -1, 2**62)
        clr = self.cmap.clearance_at(p)
        if clr < r:
            raise InputError(
                f"position {p.tolist()} is {'outside free space' if clr <= 0 else f'only {clr:.4g} from an obstacle'}"
                f"; an agent of radius {r:g} needs at least that much room"
            )
        free = np.flatnonzero(self.states == 0)
        if free.size == 0:
            raise InputError(f"all {self.max_agents} agent slots are taken")
        s = int(free[0])
        self._salt[s] = (self._salt[s] + 1) & 0x7FFFFFFF
        self.positions[s] = p
        self.velocities[s] = 0.0
        self.radii[s] = r
        self.max_speed[s] = vs
        self.max_acceleration[s] = acc
        self.preferred[s] = pc
        self.groups[s] = int(group)
        self.goals[s] = g
        self.replans[s] = 0
        self.states[s] = AK.MOVING
        self._plan(s)
        return int(self._salt[s]) << 16 | s

    def remove_agent(self, handle: int) -> None:
        """Remove an agent; its handle becomes stale."""
        s = self._slot(handle)
        self.states[s] = 0
        self.positions[s] = 0.0
        self.velocities[s] = 0.0
        self._paths[s] = None
        self._disks[s] = None
        self._flat = None

    def set_goal(self, handle: int, goal: Sequence[float]) -> None:
        """Send an agent to a new goal ((2,) [wu]); it plans at once."""
        s = self._slot(handle)
        self.goals[s] = _vec2(goal, "goal")
        self.states[s] = AK.MOVING
        self._plan(s)

    def state(self, handle: int) -> str:
        """``"moving"``, ``"arrived"`` or ``"blocked"``."""
        return _STATE_NAMES[int(self.states[self._slot(handle)])]

    def blocked_reason(self, handle: int) -> str:
        """Why a blocked agent has no path (a :class:`navkit.ecm.path.NoPath` message); "" otherwise."""
        s = self._slot(handle)
        return self._why[s] if self.states[s] == AK.BLOCKED else ""

    def path(self, handle: int) -> PathResult | None:
        """The agent's current plan (indicative path and corridor); None when blocked."""
        return self._paths[self._slot(handle)]

    def corridor(self, handle: int) -> tuple[np.ndarray, np.ndarray]:
        """The agent's corridor: disk centres ((k, 2) [wu]) along its medial
        route no more than ``radius / 2`` apart, and their radii ((k,) [wu], the
        clearance there). The agent keeps inside these disks shrunk by its radius."""
        d = self._disks[self._slot(handle)]
        if d is None:
            return np.zeros((0, 2)), np.zeros(0)
        return d[0].copy(), d[1].copy()

    @property
    def handles(self) -> list[int]:
        """Handles of every agent, in slot order."""
        return [int(self._salt[s]) << 16 | int(s) for s in np.flatnonzero(self.states != 0)]

    # -- planning --------------------------------------------------------
    def _plan(self, s: int) -> bool:
        r = float(self.radii[s])
        pc = self.preferred[s]
        res = self.cmap.find_path(
            self.positions[s], self.goals[s], clearance=r,
            preferred_clearance=None if math.isnan(pc) else float(pc), explain=True,
        )  # fmt: skip
        self.replans[s] += 1
        self._flat = None
        if not res:
            self.states[s] = AK.BLOCKED
            self._why[s] = res.message
            self._paths[s] = None
            self._disks[s] = None
            self._retry[s] = self.settings.retry_interval
            return False
        assert isinstance(res, PathResult)
        self._paths[s] = res
        cen, rad = AK.densify(
            np.ascontiguousarray(res.route, np.float64), max(0.5 * r, 1e-6), *self._site_args()
        )
        self._disks[s] = (cen, rad)
        self._why[s] = ""
        self._pseg[s] = 0
        self._pt[s] = 0.0
        self._kc[s] = 0
        if self.states[s] == AK.BLOCKED:
            self.states[s] = AK.MOVING
        return True

    def on_map_update(self, report: UpdateReport) -> list[int]:
        """Plan again every agent whose route the map update ``report`` touched,
        and every blocked agent. Called by the map for every update (the agents
        subscribe when created). Returns the handles that planned again."""
        out: list[int] = []
        for slot in np.flatnonzero(self.states != 0):
            s = int(slot)
            p = self._paths[s]
            if self.states[s] == AK.BLOCKED or (
                self.states[s] == AK.MOVING and p is not None and report.affects(p)
            ):
                self._plan(s)
                out.append(int(self._salt[s]) << 16 | s)
        return out

    def close(self) -> None:
        """Stop listening to the map's updates."""
        self._unsubscribe()

    def _flatten(self) -> tuple:
        if self._flat is None:
            n = self.max_agents
            pptr = np.zeros(n, np.int64)
            pcnt = np.zeros(n, np.int64)
            cptr = np.zeros(n, np.int64)
            ccnt = np.zeros(n, np.int64)
            pl, cl, rl = [], [], []
            po = co = 0
            for s in range(n):
                p = self._paths[s]
                d = self._disks[s]
                if p is None or d is None or self.states[s] == 0:
                    continue
                pptr[s] = po
                pcnt[s] = len(p.points)
                po += len(p.points)
                pl.append(p.points)
                cptr[s] = co
                ccnt[s] = len(d[1])
                co += len(d[1])
                cl.append(d[0])
                rl.append(d[1])
            P = np.ascontiguousarray(np.vstack(pl)) if pl else np.zeros((1, 2))
            C = np.ascontiguousarray(np.vstack(cl)) if cl else np.zeros((1, 2))
            R = np.ascontiguousarray(np.concatenate(rl)) if rl else np.zeros(1)
            self._flat = (
                np.ascontiguousarray(P[:, 0]), np.ascontiguousarray(P[:, 1]), pptr, pcnt,
                np.ascontiguousarray(C[:, 0]), np.ascontiguousarray(C[:, 1]), R, cptr, ccnt,
            )  # fmt: skip
        return self._flat

    # -- simulation ------------------------------------------------------
    def update(self, dt: float) -> None:
        """Advance every agent by ``dt`` seconds (> 0, finite)."""
        dt = real(dt, "dt", 0.0, 1e300, lo_open=True, unit="s")
        self.time += dt
        blocked = np.flatnonzero(self.states == AK.BLOCKED)
        if blocked.size:
            self._retry[blocked] -= dt
            for s in blocked[self._retry[blocked] <= 0]:
                self._plan(int(s))
        PX, PY, pptr, pcnt, CX, CY, CR, cptr, ccnt = self._flatten()
        st = self.settings
        site = self._site_args()
        act = self.states != 0
        reach = (
            2.0 * float(self.radii[act].max(initial=0.0))
            + 2.0 * float(self.max_speed[act].max(initial=0.0)) * dt
        )
        grid = AK.build_grid(self.positions, self.states, max(st.sense, reach, 1e-6))
        gap = self._gaps
        if st.door_queue > 0.0:
            # doors narrower than two bodies on the corridors ahead, and their queues
            look = np.full(self.max_agents, DOOR_SIGHT * st.sense)
            if AK.find_doors(self.positions, self.radii, self.states, self._kc, CX, CY, CR,
                             cptr, ccnt, look, dt, gap):  # fmt: skip
                self._pos3[:, 0] = self.positions[:, 0]
                self._pos3[:, 2] = self.positions[:, 1]
                rank_queues(np.flatnonzero(self.states == AK.MOVING), self._pos3, gap)
        AK.plan_velocities(
            dt, self.positions, self.velocities, self.radii, self.max_speed, self.max_acceleration,
            self.goals, self.states, self.groups, self._pseg, self._pt, self.attraction,
            PX, PY, pptr, pcnt, *site,
            st.tau0, st.k_ttc, st.horizon, st.sense, st.relax, st.slow_distance,
            st.arrive_distance, st.wall_range, st.coherence, st.keep_side, st.max_force, *grid, self._new_vel,
            gap, st.door_queue, st.door_pace, st.door_creep,
        )  # fmt: skip
        AK.integrate(
            dt, self.positions, self.velocities, self._new_vel, self.radii, self.max_speed,
            self.states, self._kc, CX, CY, CR, cptr, ccnt, st.separate, st.separation_rounds,
            *site, *grid,
            self._tmp, self._new_pos,
        )  # fmt: skip
        self.positions[:] = self._new_pos

    def __repr__(self) -> str:
        counts = {name: int(np.sum(self.states == k)) for k, name in _STATE_NAMES.items() if k}
        return f"CorridorAgents({', '.join(f'{k}={v}' for k, v in counts.items())})"
