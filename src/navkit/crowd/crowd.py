"""A crowd of agents on a navmesh (Detour's dtCrowd).

:meth:`Crowd.update` runs :attr:`Crowd.PHASES` in dtCrowd::update's order, each
phase a pass over all agents, and records its wall time in
:attr:`Crowd.timings` [s]. Arithmetic is float32 in Detour's order so that, on
Detour's own navmesh with the same agents and targets, positions, velocities
and states follow dtCrowd step for step (float32-identical on the Recast
peer's traces, see tests/crowd).

Phases (dtCrowd::update): check_path_validity (checkPathValidity),
move_requests + path_queue (updateMoveRequest: 20-iteration quick search, then
dtPathQueue with 100 iterations per update), topology_optimization
(updateTopologyOptimization), proximity_grid, neighbours (local boundaries +
getNeighbours), corners (findCorners + optimizePathVisibility),
offmesh_triggers, steering, separation, velocity_planning (sampled adaptive
obstacle avoidance), integration, collisions, move_along_surface
(movePosition), offmesh_animation. Agent state lives in
:class:`~navkit.crowd.agents.AgentArrays`. Every per-agent phase is one numba
kernel call over all active agents (serial, or ``prange`` over chunks of agents
with ``Crowd(..., parallel=True)``: the same float32 results). The dtcrowd
mode's move requests and path queue are one kernel call
(:func:`navkit.crowd.step.requests_kernel`; navkit mode's replanner is Python).
Still Python, over the few agents concerned (each selected with one numpy
expression): topology optimisation outside the one-kernel step (one agent per
update), and off-mesh link entry and animation. Requests with callbacks are
tracked after the phases (:mod:`navkit.crowd.requests`).

In dtcrowd mode (no temporary obstacles, no TTC / ORCA / local-grid agent) the
phases run as one kernel call, :func:`navkit.crowd.step.step` (``step_par`` with
``parallel=True`` and more than one chunk of agents: the per-agent phases on all
cores; its arrays passed as one descriptor, :func:`navkit.crowd.step.pack`), which returns to
Python only for the slow validity path, pending move requests or path-queue work
(then one ``requests_kernel`` call), and off-mesh links (same float32 results;
:attr:`Crowd.timings` from its time-stamp-counter stamps).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable

import numpy as np

from navkit import _check
from navkit._jit import entry_call
from navkit.detour.filter import QueryFilter
from navkit.detour.query import (
    FAILURE,
    PARTIAL_RESULT,
    STRAIGHTPATH_OFFMESH_CONNECTION,
    SUCCESS,
    NavMeshQuery,
)
from navkit.errors import ConfigError, InputError, StaleHandleError
from navkit.recast._chain import tick_ms

from . import avoidance as _avoidance
from . import boundary as _boundary
from . import corridor as cor
from . import proximity as _proximity
from . import steering as _steering
from . import step as _step
from ._par import TinyPools, chunks
from .agents import (
    LOCAL_GRID,
    OPTIMIZE_TOPO,
    STATE_INVALID,
    STATE_OFFMESH,
    STATE_WALKING,
    TARGET_FAILED,
    TARGET_NONE,
    TARGET_REQUESTING,
    TARGET_VALID,
    TARGET_VELOCITY,
    TARGET_WAITING_FOR_PATH,
    TARGET_WAITING_FOR_QUEUE,
    AgentArrays,
    AgentParams,
)  # fmt: skip
from .avoidance import (
    DEFAULT_PARAMS,
    MAX_PARAMS,
    PRESETS,
    ObstacleAvoidanceParams,
)
from .boundary import Boundaries

# navkit extensions (temporary obstacles, TTC / ORCA, local grid): the dtCrowd path runs
# unchanged while no agent uses them
from .contact import CONTACT_ALLOW, CONTACT_ROUNDS, CONTACT_TOLERANCE, resolve_contacts
from .door import SIGHT as DOOR_SIGHT
from .door import find_gaps  # navkit extension
from .local_grid import LocalGridParams, LocalGridPlanner, track_progress
from .lod import LodState, build_cells, cell_neighbours, cell_neighbours_par, hold, select, stamp
from .obstacles import TemporaryObstacles, plan_sampled_with_obstacles, push_out_of_obstacles
from .orca import ORCAParams, plan_orca
from .path_queue import PATHQ_INVALID, PathQueue, path_validity_kernel
from .proximity import ProximityGrid, build_grid
from .replan import MODES, Replanner
from .requests import RequestTracker
from .ttc import TTCParams, oncoming_ahead, plan_ttc  # navkit extension

__all__ = ["Crowd"]

F = np.float32
_MAX_COMMON_NODES = 512
_MAX_PATHQUEUE_NODES = 4096
_MAX_PATH_RESULT = 256
_MAX_ITERS_PER_UPDATE = 100
_PATH_MAX_AGENTS = 8
_CHECK_LOOKAHEAD = 10
_TARGET_REPLAN_DELAY = F(1.0)
_OPT_TIME_THR = F(0.5)


def _tween(t, t0, t1):
    v = (t - t0) / (t1 - t0)
    return F(0.0) if v < F(0.0) else (F(1.0) if v > F(1.0) else v)


class Crowd:
    """Agents moving on a navmesh toward targets (dtCrowd).

    Parameters
    ----------
    navmesh : NavMesh
    max_agents : int
        Capacity, 1..65535.
    max_agent_radius : float
        Largest agent radius [wu] (> 0): sets the placement box
        (2r, 1.5r, 2r) and the proximity grid's cell (3r).
    mode : {"dtcrowd", "navkit"}
        ``"dtcrowd"`` (default): Detour's dtCrowd step for step (float32-identical
        replays). ``"navkit"``: navkit's own path following
        (:mod:`navkit.crowd.replan`): local corridor repair, blocked requests,
        periodic retries of partial paths, tile-cache events, one iteration budget
        for all path searches of an update.
    replanning : bool, optional
        Only with ``mode="navkit"`` (default there: True): False keeps dtCrowd's
        validity checks and only applies the budget.
    lookahead : int
        Corridor polygons checked every update in navkit mode (default 10, as dtCrowd).
    max_iterations_per_update : int, optional
        A* iterations per update: dtcrowd mode, the path queue's (default 100, as
        dtCrowd); navkit mode, all searches of the update together (default 1000).

    level_of_detail : int, keyword-only
        Only with ``mode="navkit"``, 1..16 (default 1: every agent's every phase every
        update). ``k > 1`` staggers each agent's expensive work over k updates,
        round robin by slot (:mod:`navkit.crowd.lod`): corridor checks, local
        boundaries, neighbour queries and velocity planning run for a k-th of the
        agents per update, corners when due or when the corridor changed;
        steering, integration, collisions and the move along the surface still run
        for every agent every update. For crowds of thousands (see
        docs/benchmarks.md for the speed and what it costs in quality).

    :attr:`mode` holds the mode; :attr:`replanner` the navkit mode's replanner (its
    per-agent counters: replans, local fixes, route switches; the last update's A*
    iterations).
    parallel : bool, keyword-only
        Run the per-agent phases (boundaries and neighbours, corners, steering,
        separation, velocity planning, integration, collisions, move along surface)
        as ``prange`` kernels over chunks of agents on all cores (default False:
        one thread). Each agent's arithmetic is the same either way, so the
        results are the same float32 values. It pays off with thousands of
        agents on otherwise idle cores; on a loaded machine set
        ``OMP_WAIT_POLICY=PASSIVE`` before the first parallel call (waiting
        OpenMP threads then sleep instead of spinning through other processes'
        time slices). In dtcrowd mode the one-kernel step times itself on one
        thread against all threads every 64 updates and runs the faster
        (:class:`navkit.crowd.step.ThreadChooser`; the same results either way).

    Agent state is readable as slot-indexed arrays (no copies): :attr:`positions`,
    :attr:`velocities`, :attr:`states`, :attr:`target_states`, :attr:`active`;
    :meth:`slot` maps a handle to its row.

    navkit extensions (dtCrowd's behaviour is unchanged while no agent uses them):
    each agent's ``AgentParams.avoidance_model`` picks its velocity planning,
    "sampled" (dtCrowd's), "ttc" (:mod:`~navkit.crowd.ttc`, parameters
    :attr:`ttc_params`, a :class:`~navkit.crowd.ttc.TTCParams`) or "orca"
    (:mod:`~navkit.crowd.orca`, :attr:`orca_params`); temporary obstacles
    (:meth:`add_temporary_obstacle`) are avoided by all three; agents with the
    LOCAL_GRID update flag detour around what blocks their corridor
    (:mod:`~navkit.crowd.local_grid`, state and ``params`` in :attr:`local_grid`).
    """

    PHASES = (
        "check_path_validity", "move_requests", "path_queue", "topology_optimization",
        "proximity_grid", "neighbours", "corners", "offmesh_triggers", "steering",
        "separation", "velocity_planning", "integration", "collisions",
        "move_along_surface", "offmesh_animation",
    )  # fmt: skip

    def __init__(
        self, navmesh, max_agents: int, max_agent_radius: float, *, mode: str = "dtcrowd",
        replanning: bool | None = None, lookahead: int = 10,
        max_iterations_per_update: int | None = None, parallel: bool = False,
        level_of_detail: int = 1,
    ) -> None:  # fmt: skip
        if not hasattr(navmesh, "arrays"):
            raise InputError("navmesh must be a navkit NavMesh")
        if mode not in MODES:
            raise ConfigError("mode", f"must be one of {MODES}, got {mode!r}")
        if mode == "dtcrowd" and replanning:
            raise ConfigError("replanning", 'needs mode="navkit" (dtCrowd does not replan so)')
        lod = _check.integer(level_of_detail, "level_of_detail", 1, 16)
        if mode == "dtcrowd" and lod != 1:
            raise ConfigError("level_of_detail", 'needs mode="navkit" (dtCrowd updates every agent)')
        self.max_agents = _check.integer(max_agents, "max_agents", 1, 65535)
        r = _check.real(max_agent_radius, "max_agent_radius", 0.0, lo_open=True, unit="wu")
        self.navmesh = navmesh
        self.max_agent_radius = F(r)
        mr = self.max_agent_radius
        self.half_extents = np.array([mr * F(2.0), mr * F(1.5), mr * F(2.0)], np.float32)
        self.query = NavMeshQuery(navmesh, max_nodes=_MAX_COMMON_NODES)
        self.path_queue = PathQueue(navmesh, _MAX_PATH_RESULT, _MAX_PATHQUEUE_NODES)
        self.grid = ProximityGrid(self.max_agents * 4, mr * F(3.0))
        self.agents = AgentArrays(self.max_agents)
        self.boundary = Boundaries(self.max_agents)
        self._avoid_tables_key: tuple | None = None
        self._avoid_tables = (np.zeros((0, 10), np.float32), np.zeros((0, 3), np.int32))
        self.velocity_samples = 0  # candidate velocities scored in the last update
        self.filters = [QueryFilter() for _ in range(16)]
        self._avoid: list[ObstacleAvoidanceParams] = [DEFAULT_PARAMS] * MAX_PARAMS
        self._timings: dict[str, float] = dict.fromkeys(self.PHASES, 0.0)
        self._timings_due: dict | None = None  # the step's stamps not yet in _timings
        self._act = np.zeros(0, np.int64)
        self._act_dirty = True  # an agent was added or removed since _act was made
        self._desc_act = -1  # agents in the step descriptor's act buffer (-1: stale)
        self._pending: list[int] = []
        self._requests = RequestTracker(self)
        self.parallel = bool(parallel)
        self._tiny = TinyPools()
        self._chooser = _step.ThreadChooser()  # parallel crowd: serial or parallel step
        self._nch: tuple = (None, 1)  # ((active agents, chooser period), threads_for)
        self._nsamples = np.zeros(self.max_agents, np.int64)
        self._ftabs: tuple[np.ndarray, np.ndarray] | None = None
        self._ftabs_of: list = []
        self._ftables = self._filter_tables()
        self._walking = np.zeros(self.max_agents, np.bool_)
        # level of detail (navkit mode, crowd/lod.py): the due agents of this update
        self.level_of_detail = lod
        self._lod = LodState(self.max_agents, lod)
        self._due = self._act
        self._corner_act = self._act
        self._due_buf = np.zeros(self.max_agents, np.int64)
        self._corner_buf = np.zeros(self.max_agents, np.int64)
        self.boundary_updates = 0  # local boundaries rebuilt in the last update
        self._step_cache: tuple | None = None  # the step kernel's arrays (_step_state)
        self._desc_cache: tuple | None = None  # their descriptor (_step_descriptor)
        self._req_desc_cache: tuple | None = None  # requests_kernel's (_requests_descriptor)
        self._act_buf = np.zeros(self.max_agents, np.int64)
        self._stepped = False  # the last update ran as the step kernel (crowd/step.py)
        # -- navkit extensions
        self.temporary_obstacles = TemporaryObstacles()
        self._ttc_params = TTCParams()
        self._orca_params = ORCAParams()
        self.local_grid = LocalGridPlanner(self.max_agents, LocalGridParams())
        self.interactions = 0  # TTC forces / ORCA half-planes evaluated in the last update
        self._gaps = np.zeros((self.max_agents, 9), np.float32)  # crowd/door.py find_gaps
        self._fin = np.zeros(self.max_agents, np.float32)  # distance to the target
        # distance to the oncoming agents ahead (crowd/ttc.py oncoming_ahead)
        self._onc = np.full(self.max_agents, np.inf, np.float32)
        # -- end navkit extensions
        # [replan] navkit mode: replanning and the iteration budget (crowd/replan.py)
        self.mode = mode
        self._replan: Replanner | None = None
        self._queue_iterations = _MAX_ITERS_PER_UPDATE
        if mode == "navkit":
            self._replan = Replanner(
                self, replanning=True if replanning is None else replanning,
                lookahead=lookahead, max_iterations_per_update=(
                    1000 if max_iterations_per_update is None else max_iterations_per_update),
            )  # fmt: skip
        elif max_iterations_per_update is not None:
            self._queue_iterations = _check.integer(
                max_iterations_per_update, "max_iterations_per_update", 1, 1 << 30
            )
        # a cold cache: a side process compiles part of the step's kernels from now on,
        # until the first update (navkit._warmup.cold_crowd); stopped if never updated
        self._side = None
        if mode == "dtcrowd":
            from navkit._warmup import start_crowd_side

            self._side = start_crowd_side()
            if self._side is not None:
                self._side_stop = weakref.finalize(self, self._side.close, False)

    # -- replanning (navkit mode) ----------------------------------------------------------
    @property
    def replanner(self) -> Replanner | None:
        """The :class:`~navkit.crowd.replan.Replanner` in navkit mode (None in dtcrowd mode)."""
        return self._replan

    def attach(self, tile_cache) -> Callable[[], None]:
        """Subscribe to a :class:`navkit.TileCache` whose navmesh the crowd walks on:
        after each of its updates, only the agents whose corridor (or target) holds
        an invalidated polygon check and repair their whole corridor
        (:meth:`on_changes`). Returns the unsubscribe function. Needs navkit mode
        with replanning (ConfigError otherwise)."""
        self._need_replanning("attach")
        if getattr(tile_cache, "navmesh", None) is not self.navmesh:
            raise InputError("attach: the tile cache's navmesh is not the crowd's navmesh")
        return tile_cache.subscribe(self.on_changes)

    def on_changes(self, changes) -> np.ndarray:
        """React to a tile cache's :class:`~navkit.tilecache.update.Changes` (its
        ``invalidated`` poly refs): returns the (k,) int64 slots marked for replanning."""
        if not hasattr(changes, "invalidated"):
            raise InputError("changes must be a TileCache update's Changes (with .invalidated)")
        return self.mark_changed(changes.invalidated)

    def mark_changed(self, polys) -> np.ndarray:
        """Tell the crowd that polygons changed (e.g. ``NavMesh.set_poly_flags``): the
        agents whose corridor or target holds one check their whole corridor in the
        next update, and partial paths retry soon. Returns the marked (k,) int64 slots."""
        rp = self._need_replanning("mark_changed")
        return rp.mark(polys)

    def _need_replanning(self, what: str) -> Replanner:
        if self._replan is None or not self._replan.replanning:
            raise ConfigError("mode", f'{what} needs Crowd(..., mode="navkit") with replanning')
        return self._replan

    # -- configuration ---------------------------------------------------------------------
    def set_obstacle_avoidance_params(self, idx: int, params: ObstacleAvoidanceParams) -> None:
        """dtCrowd::setObstacleAvoidanceParams (idx 0..7)."""
        i = _check.integer(idx, "idx", 0, MAX_PARAMS - 1)
        if not isinstance(params, ObstacleAvoidanceParams):
            raise InputError("params must be an ObstacleAvoidanceParams")
        self._avoid[i] = params

    def get_obstacle_avoidance_params(self, idx: int) -> ObstacleAvoidanceParams:
        return self._avoid[_check.integer(idx, "idx", 0, MAX_PARAMS - 1)]

    def use_recastdemo_presets(self) -> None:
        """Install RecastDemo CrowdTool's four avoidance presets as params 0..3."""
        for i, p in enumerate(PRESETS):
            self._avoid[i] = p

    def filter(self, idx: int) -> QueryFilter:
        """The query filter ``idx`` (0..15) used by agents with that ``query_filter``."""
        return self.filters[_check.integer(idx, "idx", 0, 15)]

    # -- agents ----------------------------------------------------------------------------
    @property
    def positions(self) -> np.ndarray:
        """(max_agents, 3) float32 agent positions (rows of inactive slots are stale)."""
        return self.agents.npos

    @property
    def velocities(self) -> np.ndarray:
        """(max_agents, 3) float32 agent velocities [wu/s] (the arrays themselves, no copy)."""
        return self.agents.vel

    @property
    def states(self) -> np.ndarray:
        """(max_agents,) int8 STATE_INVALID / STATE_WALKING / STATE_OFFMESH."""
        return self.agents.state

    @property
    def target_states(self) -> np.ndarray:
        """(max_agents,) int8 move-target states (dtMoveRequestState: none, failed, valid,
        requesting, waiting for queue, waiting for path, velocity)."""
        return self.agents.target_state

    @property
    def active(self) -> np.ndarray:
        """(max_agents,) bool: which slots hold an agent."""
        return self.agents.active

    def slot(self, handle: int) -> int:
        """Row of a live agent in the arrays (StaleHandleError otherwise)."""
        return self.agents.slot(handle)

    @staticmethod
    def _check_params(params: object) -> AgentParams:
        if not isinstance(params, AgentParams):
            raise InputError("params must be an AgentParams")
        return params

    def add_agent(self, position, params: AgentParams) -> int:
        """dtCrowd::addAgent: place at the nearest navmesh point; returns the agent's handle.

        Raises InputError when the crowd is full or no polygon lies within the
        placement box around ``position``.
        """
        p = _check.point(position, "position")
        params = self._check_params(params)
        s = self.agents.alloc()
        if s < 0:
            raise InputError(f"the crowd is full (max_agents={self.max_agents})")
        flt = self.filters[params.query_filter]
        near = self.query.find_nearest_poly(p, self.half_extents, flt)
        if near.ref == 0:
            raise InputError(
                f"position {p.tolist()} is not on the navmesh (no polygon within "
                f"{self.half_extents.tolist()})"
            )
        a = self.agents
        a.set_params(s, params)
        cor.reset(a, s, near.ref, near.point)
        self.boundary.reset(s)
        a.partial[s] = False
        a.topology_opt_time[s] = 0
        a.target_replan_time[s] = 0
        a.nneis[s] = 0
        a.dvel[s] = 0
        a.nvel[s] = 0
        a.vel[s] = 0
        a.npos[s] = near.point
        a.desired_speed[s] = 0
        a.state[s] = STATE_WALKING
        a.target_state[s] = TARGET_NONE
        a.active[s] = True
        self._act_dirty = True
        a.anim_active[s] = False
        self.local_grid.reset(s)  # navkit extension
        return a.handle(s)

    def remove_agent(self, handle: int) -> None:
        """dtCrowd::removeAgent (the handle and its slot's old handles become stale)."""
        s = self.agents.slot(handle)
        self._requests.on_reset(s)
        self.agents.free(s)
        self._act_dirty = True

    def update_agent_params(self, handle: int, params: AgentParams) -> None:
        s = self.agents.slot(handle)
        self.agents.set_params(s, self._check_params(params))

    def agent_params(self, handle: int) -> AgentParams:
        return self.agents.params(self.agents.slot(handle))

    def request_move_target(
        self, handle: int, target, position=None, *,
        on_result: Callable[[int, np.ndarray], bool | None] | None = None,
        on_blocked: Callable[[int], bool | None] | None = None,
        on_done: Callable[[int], bool | None] | None = None,
    ) -> None:  # fmt: skip
        """dtCrowd::requestMoveTarget, optionally with callbacks.

        Two forms: ``request_move_target(handle, ref, position)`` (Detour's: the
        target point on polygon ``ref``) and ``request_move_target(handle,
        target_xyz)``, which takes the nearest polygon within the crowd's
        placement box around the point with the agent's filter (InputError when
        there is none). The keyword-only callbacks ``on_result(handle, path)``,
        ``on_blocked(handle)`` and ``on_done(handle)`` run after
        :meth:`update`'s phases, in agent-slot order, once per event; see
        :mod:`navkit.crowd.requests` for their meaning and return values, and
        :meth:`request_status` / :meth:`events` to poll instead.
        """
        cbs = RequestTracker.check_callbacks(on_result, on_blocked, on_done)
        s = self.agents.slot(handle)
        if position is None:
            p = _check.point(target, "target")
            flt = self.filters[int(self.agents.query_filter[s])]
            near = self.query.find_nearest_poly(p, self.half_extents, flt)
            if near.ref == 0:
                raise InputError(
                    f"target {p.tolist()} is not on the navmesh (no polygon within "
                    f"{self.half_extents.tolist()} passing the agent's filter)"
                )
            ref, position = near.ref, near.point
        else:
            ref = target
        self._request(handle, ref, position, replan=False)
        a = self.agents
        self._requests.on_target(s, int(a.target_ref[s]), a.target_pos[s], cbs)

    def request_status(self, handle: int) -> str:
        """Status of the agent's movement request: one of
        :data:`navkit.crowd.requests.STATUSES` ("none", "pending", "moving",
        "partial", "blocked", "done", "failed"), as of the last update."""
        return self._requests.status[self.agents.slot(handle)]

    def events(self) -> list[tuple[int, str]]:
        """(handle, event) pairs of the last update in firing order; event is
        "result", "blocked" or "done"."""
        return list(self._requests.events)

    def _request(self, handle, ref, position, replan: bool) -> None:
        s = self.agents.slot(handle)
        p = _check.point(position, "position")
        r = int(ref) if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool) else -1
        if r <= 0:
            raise InputError(f"ref must be a polygon ref (int > 0), got {ref!r}")
        self._set_target(s, r, p, replan)

    def _set_target(self, s: int, ref: int, p, replan: bool) -> None:
        a = self.agents
        a.target_ref[s] = ref
        a.target_pos[s] = p
        a.target_pathq_ref[s] = PATHQ_INVALID
        a.target_replan[s] = replan
        a.target_state[s] = TARGET_REQUESTING if ref else TARGET_FAILED

    def request_move_velocity(self, handle: int, velocity) -> None:
        """dtCrowd::requestMoveVelocity: steer with a fixed velocity [wu/s]."""
        s = self.agents.slot(handle)
        v = _check.point(velocity, "velocity")
        a = self.agents
        a.target_ref[s] = 0
        a.target_pos[s] = v
        a.target_pathq_ref[s] = PATHQ_INVALID
        a.target_replan[s] = False
        a.target_state[s] = TARGET_VELOCITY
        self._requests.on_velocity(s)

    def reset_move_target(self, handle: int) -> None:
        """dtCrowd::resetMoveTarget (also ends the agent's request, status "none")."""
        s = self.agents.slot(handle)
        self._reset(s)
        self._requests.on_reset(s)

    def _reset(self, s: int) -> None:
        a = self.agents
        a.target_ref[s] = 0
        a.target_pos[s] = 0
        a.dvel[s] = 0
        a.target_pathq_ref[s] = PATHQ_INVALID
        a.target_replan[s] = False
        a.target_state[s] = TARGET_NONE

    # -- navkit extensions: model parameters, temporary obstacles ----------------------------
    @property
    def ttc_params(self) -> TTCParams:
        """Parameters of the "ttc" agents (:class:`~navkit.crowd.ttc.TTCParams`)."""
        return self._ttc_params

    @ttc_params.setter
    def ttc_params(self, p: TTCParams) -> None:
        if not isinstance(p, TTCParams):
            raise InputError(f"ttc_params must be a TTCParams, got {type(p).__name__}")
        self._ttc_params = p

    @property
    def orca_params(self) -> ORCAParams:
        """Parameters of the "orca" agents (:class:`~navkit.crowd.orca.ORCAParams`)."""
        return self._orca_params

    @orca_params.setter
    def orca_params(self, p: ORCAParams) -> None:
        if not isinstance(p, ORCAParams):
            raise InputError(f"orca_params must be an ORCAParams, got {type(p).__name__}")
        self._orca_params = p

    def add_temporary_obstacle(self, position, radius: float, velocity=(0.0, 0.0, 0.0)) -> int:
        """Add a very temporary obstacle: a moving upright cylinder every avoidance model
        avoids, agents are pushed out of, and the local grid planner routes around.

        Parameters
        ----------
        position : (3,) float
            Centre of its base [wu].
        radius : float
            [wu], > 0.
        velocity : (3,) float
            [wu/s]; predicts its motion (the crowd does not move it, see
            :meth:`move_temporary_obstacle`).

        Returns
        -------
        int
            Its handle (generational, as agents').
        """
        return self.temporary_obstacles.add(position, radius, velocity)

    def move_temporary_obstacle(self, handle: int, position, velocity=None) -> None:
        """New position (and velocity when given) of a temporary obstacle
        (StaleHandleError for a removed one)."""
        self.temporary_obstacles.move(handle, position, velocity)

    def remove_temporary_obstacle(self, handle: int) -> None:
        self.temporary_obstacles.remove(handle)

    # -- update ----------------------------------------------------------------------------
    @property
    def timings(self) -> dict[str, float]:
        """Seconds each phase (:attr:`PHASES`) took in the last update (a phase that did
        not run: 0). The one-kernel step's stamps are turned into seconds when read."""
        due = self._timings_due
        if due is not None:
            self._timings_due = None
            tim = self._timings
            k = tick_ms() * 1e-3
            ticks = self._step_state()[0][0]
            t0s, t1s = ticks.tolist()
            for name, a, b in zip(self.PHASES, t0s, t1s):
                tim[name] = (b - a) * k
            for name, t in due.items():
                tim[name] += t
        return self._timings

    def update(self, dt: float) -> None:
        """Advance the crowd by dt seconds (dtCrowd::update); dt finite and > 0."""
        if type(dt) is float and 1e-30 < dt < 1e30:  # (the common case, checked cheaply)
            dt32 = F(dt)
        else:
            dt32 = F(_check.real(dt, "dt", 0.0, lo_open=True, unit="s"))
            if not dt32 > 0:  # positive but below float32's smallest
                raise InputError(f"dt must be > 0 as float32 [s], got {dt!r}")
        if self._side is not None:  # the first update on a cold cache: on two cores
            from navkit._warmup import cold_crowd

            side, self._side = self._side, None
            self._side_stop.detach()
            with cold_crowd(side, fused=self._fusable()):
                self.update(dt)
            return
        self._timings_due = None
        if self._act_dirty:
            self._act = self.agents.active.nonzero()[0].astype(np.int64, copy=False)
            self._act_dirty = False
            self._desc_act = -1  # the step descriptor's act buffer is stale
        self._ftables = self._filter_tables()
        if self._lod.k != 1:
            self._select_due(dt32)
        else:
            self._due = self._corner_act = self._act
        self._stepped = self._fusable() and self._update_fused(dt32)
        if not self._stepped:
            tim = self._timings
            for name in self.PHASES:
                t0 = time.perf_counter()
                getattr(self, "_" + name)(dt32)
                tim[name] = time.perf_counter() - t0
        self._requests.after_update()  # callbacks: after all phases, never inside a kernel

    def _fusable(self) -> bool:
        """Whether this update can run as :func:`navkit.crowd.step.step` (dtcrowd mode,
        no temporary obstacles; the kernel itself refuses TTC / ORCA / local grid
        agents). A parallel crowd runs :func:`navkit.crowd.step.step_par`."""
        return (
            self._replan is None and self._lod.k == 1
            and self.temporary_obstacles.packed().shape[0] == 0
        )  # fmt: skip

    def _step_state(self) -> tuple:
        """The step kernel's scratch and its agent, boundary and grid arrays (built once:
        these arrays are never reallocated)."""
        st = self._step_cache
        if st is None:
            a, b, g = self.agents, self.boundary, self.grid
            n = self.max_agents
            scratch = (
                np.zeros((2, len(self.PHASES)), np.int64), np.zeros(8, np.int64),
                np.zeros(n, np.int64), np.zeros(n, np.bool_),
            )  # fmt: skip
            arrays = (
                a.active, a.state, a.target_state, a.target_ref, a.target_pos,
                a.target_pathq_ref, a.target_replan, a.target_replan_time, a.update_flags,
                a.query_filter, a.avoidance_model, a.avoidance_type, a.radius, a.height,
                a.max_speed, a.max_acceleration, a.collision_query_range,
                a.path_optimization_range, a.separation_weight, a.desired_speed, a.npos, a.vel,
                a.dvel, a.nvel, a.disp, a.c_pos, a.c_target, a.c_path, a.c_npath,
                a.corner_verts, a.corner_flags, a.corner_polys, a.ncorners, a.neis, a.nei_dist,
                a.nneis, a.topology_opt_time, a.partial, a.anim_active, b.center, b.segs,
                b.seg_d, b.nsegs, b.polys, b.npolys, g.inv_cell_size, g.buckets, g.items, g.lo,
            )  # fmt: skip
            st = self._step_cache = (scratch, arrays)
        return st

    def _step_descriptor(self, flags, costs, fp, ip) -> np.ndarray:
        """The step kernel's arrays as one descriptor (:func:`navkit.crowd.step.pack`),
        rebuilt when an array it names is replaced (navmesh view, filter or avoidance
        tables); ``act`` is a buffer whose length word is set per update."""
        q = self.query
        key = (q._vh().desc, q._pool, q._qi, q._qf, flags, costs, fp, ip)
        ids = tuple(map(id, key))  # (the cache holds the key's objects: no id is reused)
        cache = self._desc_cache
        if cache is None or cache[0] != ids:
            (ticks, info, slow, walking), arrays = self._step_state()
            head = (
                ticks, info, slow, key[0], self._tiny.desc, q._pool, q._qi, q._qf, flags, costs,
                self.path_queue.ref, self._act_buf, walking, self._nsamples, fp, ip,
            )  # fmt: skip
            body = arrays[:45] + arrays[46:]  # (inv_cell_size is a scalar argument)
            desc = _step.pack(head + body, _step.STEP_SPEC)
            cache = self._desc_cache = (ids, desc, head + body, key)
            self._desc_act = -1
        desc = cache[1]
        if self._desc_act < 0:  # _act changed (or a new descriptor)
            n = self._act.shape[0]
            self._act_buf[:n] = self._act
            desc[4 * _step.STEP_ACT + 1] = n
            self._desc_act = n
        return desc

    def _update_fused(self, dt) -> bool:
        """dtCrowd::update through the step kernel, Python only where it must run (see
        :mod:`navkit.crowd.step`); False (nothing done) when an agent uses a navkit
        extension. Phase timings come from the kernel's time-stamp-counter stamps."""
        ticks, info, slow, walking = self._step_state()[0]
        flags, costs = self._ftables
        fp, ip = self._avoidance_tables()
        ticks.fill(0)
        kernel, nch = _step.step_desc, 1
        chooser = None
        if self.parallel:  # (one chunk: the serial step, the same results without the
            # parallel kernels' regions)
            chooser = self._chooser
            key = (self._act.shape[0], chooser.k // chooser.PERIOD)
            if self._nch[0] != key:  # (numba.get_num_threads: ~1-4 us; asked once a period)
                self._nch = (key, _step.threads_for(key[0]))
            nch = self._nch[1]
            if nch <= 1:
                chooser.k += 1
                chooser = None
            elif chooser.serial_now():  # (the same results: see ThreadChooser)
                nch = 1
            else:
                kernel = _step.step_par_desc
                info[_step.I_PAR_ALL] = _step.PAR_ALL_MIN
        desc = self._step_descriptor(flags, costs, fp, ip)
        inv_cell = self.grid.inv_cell_size
        t_k = time.perf_counter()
        rd = self._requests_descriptor()
        qi, qc = self._queue_iterations, _PATH_MAX_AGENTS
        stop = entry_call(kernel, _step.STAGE_START, nch, dt, inv_cell, desc, rd, qi, qc)
        t_k = time.perf_counter() - t_k
        if stop == _step.STOP_FALLBACK:
            return False
        py: dict[str, float] = {}  # the phases run in Python this update
        if stop == _step.STOP_REQUESTS:
            t0 = time.perf_counter()
            for s in slow[: info[_step.I_NSLOW]].tolist():  # in slot order, as dtCrowd
                self._check_path_validity_slow(s)
            t1 = time.perf_counter()
            if self._requests_kernel(3):  # both phases in one call (timed as move_requests)
                t2 = t3 = time.perf_counter()
            else:
                self._move_requests(dt)
                t2 = time.perf_counter()
                self._path_queue(dt)
                t3 = time.perf_counter()
            py["check_path_validity"] = t1 - t0
            py["move_requests"], py["path_queue"] = t2 - t1, t3 - t2
            t4 = time.perf_counter()
            stop = entry_call(kernel, _step.STAGE_TOPOLOGY, nch, dt, inv_cell, desc, rd, qi, qc)
            t_k += time.perf_counter() - t4
        if stop == _step.STOP_OFFMESH:
            t0 = time.perf_counter()
            self._offmesh_triggers(dt)
            py["offmesh_triggers"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            stop = entry_call(kernel, _step.STAGE_STEERING, nch, dt, inv_cell, desc, rd, qi, qc)
            t_k += time.perf_counter() - t1
        if chooser is not None:
            chooser.record(nch == 1, t_k)
        iv = info.tolist()
        if iv[_step.I_QITERS] >= 0:  # the step ran the move requests and the path queue
            self.path_queue.last_iterations = iv[_step.I_QITERS]
        self.grid.pool_head = iv[_step.I_POOL_HEAD]
        self.boundary_updates = iv[_step.I_BOUNDARY_UPDATES]
        self.velocity_samples = iv[_step.I_SAMPLES]
        if iv[_step.I_ANIM]:
            t0 = time.perf_counter()
            self._offmesh_animation(dt)
            py["offmesh_animation"] = time.perf_counter() - t0
        self._timings_due = py  # (the stamps become seconds when timings is read)
        return True

    def _select_due(self, dt) -> None:
        """Level of detail (crowd/lod.py): the due agents and the corner refreshes."""
        lod, a = self._lod, self.agents
        if lod.k == 1:
            self._due = self._corner_act = self._act
            return
        lod.frame += 1
        nd, nc = select(
            self._act, lod.frame, lod.k, a.state == STATE_WALKING, a.target_state, a.c_path,
            a.c_npath, a.c_target, a.ncorners, a.corner_verts, a.npos, a.radius, a.max_speed,
            dt, lod.stamp_ref, lod.stamp_target, lod.due, self._due_buf, self._corner_buf,
        )  # fmt: skip
        self._due = self._due_buf[:nd].copy()
        self._corner_act = self._corner_buf[:nc].copy()

    def _scan_act(self, marked: np.ndarray | None = None) -> tuple[np.ndarray, np.float32]:
        """Agents whose corridor is checked this update, and the time since their last
        check: all every update, or the due ones (and the marked) every k updates."""
        k = self._lod.k
        if k == 1:
            return self._act, F(1.0)
        act = self._act
        sel = self._lod.due[act]
        if marked is not None:
            sel |= marked[act]
        return act[sel], F(k)

    # -- phases ----------------------------------------------------------------------------
    def _check_path_validity(self, dt) -> None:
        if self._replan is not None and self._replan.check_path_validity(dt):  # [replan]
            return
        a = self.agents
        scan, kdt = self._scan_act()
        code = path_validity_kernel(
            self.query._vh().desc, self._ftables[0], scan, a.state == STATE_WALKING,
            a.query_filter, a.target_state, a.target_ref, a.target_replan_time, a.c_path,
            a.c_npath, dt * kdt,
        )  # fmt: skip
        for s in np.flatnonzero(code).tolist():  # in dtCrowd's order (act is sorted)
            if code[s] == 2:
                self._set_target(s, int(a.target_ref[s]), a.target_pos[s].copy(), True)
            else:
                self._check_path_validity_slow(s)

    def _check_path_validity_slow(self, s: int) -> None:
        """checkPathValidity for an agent whose polygon or target polygon is no longer valid."""
        a, q = self.agents, self.query
        replan = False
        flt = self.filters[a.query_filter[s]]
        agent_ref = int(a.c_path[s, 0])
        agent_pos = a.npos[s].copy()
        if not q.is_valid_poly_ref(agent_ref, flt):
            near = q.find_nearest_poly(a.npos[s], self.half_extents, flt)
            agent_ref = near.ref
            agent_pos = near.point if near.ref else agent_pos
            if not agent_ref:
                cor.reset(a, s, 0, agent_pos)
                a.partial[s] = False
                self.boundary.reset(s)
                a.state[s] = STATE_INVALID
                return
            cor.fix_path_start(a, s, agent_ref, agent_pos)
            self.boundary.reset(s)
            a.npos[s] = agent_pos
            replan = True
        ts = a.target_state[s]
        if ts == TARGET_NONE or ts == TARGET_VELOCITY:
            return
        if ts != TARGET_FAILED:
            if not q.is_valid_poly_ref(int(a.target_ref[s]), flt):
                near = q.find_nearest_poly(a.target_pos[s], self.half_extents, flt)
                a.target_ref[s] = near.ref
                if near.ref:
                    a.target_pos[s] = near.point
                replan = True
            if not a.target_ref[s]:
                cor.reset(a, s, agent_ref, agent_pos)
                a.partial[s] = False
                a.target_state[s] = TARGET_NONE
        if not cor.is_valid(a, s, _CHECK_LOOKAHEAD, q, flt):
            replan = True
        if a.target_state[s] == TARGET_VALID:
            if (
                a.target_replan_time[s] > _TARGET_REPLAN_DELAY
                and a.c_npath[s] < _CHECK_LOOKAHEAD
                and a.c_path[s, a.c_npath[s] - 1] != a.target_ref[s]
            ):
                replan = True
        if replan and a.target_state[s] != TARGET_NONE:
            self._set_target(s, int(a.target_ref[s]), a.target_pos[s].copy(), True)

    def _take_quick_result(self, s: int, res, path: np.ndarray, tref: int) -> None:
        """The quick search's result for agent ``s`` (dtCrowd's requesting step): its
        corridor, and the target valid or waiting for the path queue."""
        a, q = self.agents, self.query
        req_path = res.polys
        req_pos = None
        if not (res.status & FAILURE) and req_path.shape[0] > 0:
            if req_path[-1] != tref:
                try:
                    req_pos, _ = q.closest_point_on_poly(int(req_path[-1]), a.target_pos[s])
                except StaleHandleError:  # Detour: closestPointOnPoly fails
                    req_path = req_path[:0]
            else:
                req_pos = a.target_pos[s].copy()
        else:
            req_path = req_path[:0]
        if req_path.shape[0] == 0:
            req_pos = a.npos[s].copy()
            req_path = np.array([path[0]], np.int64)
        cor.set_corridor(a, s, req_pos, req_path)
        self.boundary.reset(s)
        a.partial[s] = False
        if req_path[-1] == tref:
            a.target_state[s] = TARGET_VALID
            a.target_replan_time[s] = 0
        else:
            a.target_state[s] = TARGET_WAITING_FOR_QUEUE

    def _requests_kernel(self, which: int) -> bool:
        """Move requests (which & 1) and / or the path queue (which & 2) through
        :func:`navkit.crowd.step.requests_kernel`; False (nothing done) when a queued
        request has no filter index (then the Python phases run)."""
        pq = self.path_queue
        its = entry_call(
            _step.requests_desc, self._requests_descriptor(), self._queue_iterations,
            _PATH_MAX_AGENTS, which,
        )  # fmt: skip
        if its < 0:
            return False
        if which & 2:
            pq.last_iterations = int(its)
        return True

    def _requests_descriptor(self) -> np.ndarray:
        """:func:`navkit.crowd.step.requests_kernel`'s arrays as one descriptor (rebuilt
        when the navmesh view or a filter table is replaced)."""
        q, pq = self.query, self.path_queue
        flags, costs = self._ftables
        pqq = pq.query
        key = (q._vh().desc, q._pool, q._qi, q._qf, flags, costs, pqq._pool, pqq._qi, pqq._qf)
        cache = self._req_desc_cache
        if cache is None or any(x is not y for x, y in zip(cache[0], key)):
            a, b = self.agents, self.boundary
            arrays = (
                *key[:6], a.active, a.state, a.target_state, a.target_ref, a.target_pos,
                a.target_pathq_ref, a.target_replan, a.target_replan_time, a.query_filter,
                a.npos, a.partial, a.c_target, a.c_path, a.c_npath, b.center, b.npolys, b.nsegs,
                *key[6:], pq.ref, pq.status, pq.keep_alive, pq.start_ref, pq.end_ref,
                pq.start_pos, pq.end_pos, pq.filter_index, pq.paths, pq.npaths, pq.counters,
            )  # fmt: skip
            cache = self._req_desc_cache = (key, _step.pack(arrays, _step.REQUESTS_SPEC), arrays)
        return cache[1]

    def _move_requests(self, dt) -> None:
        if self._replan is not None:  # [replan] navkit mode: within the iteration budget
            return self._replan.move_requests(dt)
        if self._requests_kernel(1):
            return
        a, q = self.agents, self.query
        ts_ = a.target_state
        todo = np.flatnonzero(
            a.active & (a.state != STATE_INVALID)
            & ((ts_ == TARGET_REQUESTING) | (ts_ == TARGET_WAITING_FOR_QUEUE))
        )  # fmt: skip
        # the quick searches first, then the queue in slot order: the same queue as
        # dtCrowd's one pass (a search changes only its own agent)
        for s in todo[a.target_state[todo] == TARGET_REQUESTING].tolist():
            flt = self.filters[a.query_filter[s]]
            npath = int(a.c_npath[s])
            path = a.c_path[s, :npath]
            tref = int(a.target_ref[s])
            q.init_sliced_find_path(int(path[0]), tref, a.npos[s], a.target_pos[s], flt)
            q.update_sliced_find_path(20)
            if a.target_replan[s]:
                res = q.finalize_sliced_find_path_partial(path.copy(), 32)
            else:
                res = q.finalize_sliced_find_path(32)
            self._take_quick_result(s, res, path, tref)
        qbuf = np.empty(_PATH_MAX_AGENTS, np.int64)
        nq = _step.path_queue_order(todo, a.target_state, a.target_replan_time, qbuf)
        queue = qbuf[:nq].tolist()
        pq = self.path_queue
        for s in queue:
            npath = int(a.c_npath[s])
            a.target_pathq_ref[s] = pq.request(
                int(a.c_path[s, npath - 1]), int(a.target_ref[s]), a.c_target[s],
                a.target_pos[s], self.filters[a.query_filter[s]], int(a.query_filter[s]),
            )  # fmt: skip
            if a.target_pathq_ref[s] != PATHQ_INVALID:
                a.target_state[s] = TARGET_WAITING_FOR_PATH

    def _path_queue(self, dt) -> None:
        if self._replan is not None:  # [replan] navkit mode: budget, repairs, retries
            return self._replan.path_queue(dt)
        if self._requests_kernel(2):
            return
        a, q, pq = self.agents, self.query, self.path_queue
        pq.update(self._queue_iterations)
        todo = np.flatnonzero(a.active & (a.target_state == TARGET_WAITING_FOR_PATH))
        for s in todo.tolist():
            st = pq.get_request_status(int(a.target_pathq_ref[s]))
            if st & FAILURE:
                a.target_pathq_ref[s] = PATHQ_INVALID
                a.target_state[s] = TARGET_REQUESTING if a.target_ref[s] else TARGET_FAILED
                a.target_replan_time[s] = 0
            elif st & SUCCESS:
                npath = int(a.c_npath[s])
                path = a.c_path[s, :npath]
                target_pos = a.target_pos[s].copy()
                st, res_arr = pq.get_path_result(int(a.target_pathq_ref[s]))
                valid = not (st & FAILURE) and res_arr.shape[0] > 0
                a.partial[s] = bool(st & PARTIAL_RESULT)
                if valid and path[npath - 1] != res_arr[0]:
                    valid = False
                res: list[int] = []
                if valid:
                    res = [int(r) for r in res_arr]
                    if npath > 1:
                        nres = len(res)
                        if (npath - 1) + nres > _MAX_PATH_RESULT:
                            nres = _MAX_PATH_RESULT - (npath - 1)
                        res = [int(r) for r in path[: npath - 1]] + res[:nres]
                        j = 0
                        while j < len(res):
                            if j - 1 >= 0 and j + 1 < len(res) and res[j - 1] == res[j + 1]:
                                del res[j - 1 : j + 1]
                                j -= 2
                            j += 1
                    if res[-1] != a.target_ref[s]:
                        try:
                            target_pos, _ = q.closest_point_on_poly(res[-1], target_pos)
                        except StaleHandleError:  # Detour: closestPointOnPoly fails
                            valid = False
                if valid:
                    cor.set_corridor(a, s, target_pos, np.array(res, np.int64))
                    self.boundary.reset(s)
                    a.target_state[s] = TARGET_VALID
                else:
                    a.target_state[s] = TARGET_FAILED
                a.target_replan_time[s] = 0

    def _topology_optimization(self, dt) -> None:
        a, q = self.agents, self.query
        queue: list[int] = []
        act, ts = self._act, a.target_state[self._act]
        sel = act[
            (a.state[act] == STATE_WALKING) & (ts != TARGET_NONE) & (ts != TARGET_VELOCITY)
            & ((a.update_flags[act] & OPTIMIZE_TOPO) != 0)
        ]  # fmt: skip
        a.topology_opt_time[sel] += dt  # float32, as each agent's own addition
        # dtCrowd's addToOptQueue with one place: the first agent with the greatest time
        # (argmax returns the first of equal maxima; one numpy call instead of a Python
        # loop over every agent past the threshold, which is all of them after 0.5 s)
        due = sel[a.topology_opt_time[sel] >= _OPT_TIME_THR]
        if due.shape[0]:
            queue.append(int(due[np.argmax(a.topology_opt_time[due])]))
        for s in queue:
            npath = int(a.c_npath[s])
            if npath >= 3:
                flt = self.filters[a.query_filter[s]]
                q.init_sliced_find_path(
                    int(a.c_path[s, 0]), int(a.c_path[s, npath - 1]), a.c_pos[s], a.c_target[s], flt
                )
                q.update_sliced_find_path(32)
                res = q.finalize_sliced_find_path_partial(a.c_path[s, :npath].copy(), 32)
                if res.status & SUCCESS and res.polys.shape[0] > 0:
                    a.c_npath[s] = cor.merge_corridor_start_shortcut(
                        a.c_path[s], npath, a.c_path.shape[1], res.polys, res.polys.shape[0]
                    )
            a.topology_opt_time[s] = 0

    def _proximity_grid(self, dt) -> None:
        a, g = self.agents, self.grid
        g.pool_head = build_grid(
            self._act, a.npos, a.radius, g.inv_cell_size, g.buckets, g.items, g.lo
        )
        if self._lod.k > 1:  # level of detail: the neighbour query's own grid (crowd/lod.py)
            self._cells = build_cells(self._act, a.npos, a.collision_query_range)

    def _neighbours(self, dt) -> None:
        a, g, b, par = self.agents, self.grid, self.boundary, self.parallel
        walking = a.state == STATE_WALKING
        upd = _boundary.update_boundaries_par if par else _boundary.update_boundaries
        due = self._due
        self.boundary_updates = int(upd(
            self.query._vh().desc, self._tiny.desc, self._ftables[0], due,
            chunks(due.shape[0], par), walking, a.c_path, a.npos,
            a.collision_query_range, a.query_filter, b.center, b.segs, b.seg_d, b.nsegs,
            b.polys, b.npolys,
        ))  # fmt: skip
        if self._lod.k > 1:
            (cell_neighbours_par if par else cell_neighbours)(
                due, walking, a.npos, a.height, a.collision_query_range, *self._cells, a.neis,
                a.nei_dist, a.nneis,
            )  # fmt: skip
            return
        find = _proximity.find_neighbours_par if par else _proximity.find_neighbours
        find(
            due, self._act, walking, a.npos, a.height, a.collision_query_range, g.inv_cell_size,
            g.buckets, g.items, g.lo, a.neis, a.nei_dist, a.nneis,
        )  # fmt: skip

    def _filter_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """(16, 2) int32 include/exclude flags and (16, 64) float32 area costs of the filters.

        The crowd's filters keep their arrays as rows of these two tables (their
        setters write in place), so the tables are always current; a filter put into
        :attr:`filters` from outside is copied in and re-pointed at its row."""
        tabs = self._ftabs
        if tabs is None or self._ftabs_of != self.filters:
            fl = self.filters
            if len(fl) != 16 or not all(isinstance(f, QueryFilter) for f in fl):
                raise InputError("Crowd.filters must hold 16 QueryFilter")
            tabs = (
                np.stack([f.arrays[0] for f in fl]).astype(np.int32),
                np.stack([f.arrays[1] for f in fl]).astype(np.float32),
            )
            if len({id(f) for f in fl}) < len(fl):
                return tabs  # one filter in several places: stacked anew every update
            for i, f in enumerate(fl):
                f._flags, f._costs = tabs[0][i], tabs[1][i]
            self._ftabs, self._ftabs_of = tabs, list(fl)
        return tabs

    def _corners(self, dt) -> None:
        a, par = self.agents, self.parallel
        flags, costs = self._ftables
        kernel = cor.corners_kernel_par if par else cor.corners_kernel
        sel = self._corner_act
        kernel(
            self.query._vh().desc, flags, costs, sel, chunks(sel.shape[0], par),
            a.state == STATE_WALKING, a.target_state, a.update_flags, a.query_filter, a.path_optimization_range, a.c_pos,
            a.c_target, a.c_path, a.c_npath, a.corner_verts, a.corner_flags, a.corner_polys,
            a.ncorners,
        )  # fmt: skip
        if self._lod.k > 1:
            lod = self._lod
            stamp(sel, a.c_path, a.c_npath, a.c_target, lod.stamp_ref, lod.stamp_target)
            lod.corners_refreshed = int(sel.shape[0])

    def _offmesh_triggers(self, dt) -> None:
        a, act = self.agents, self._act
        ts, nc_ = a.target_state[act], a.ncorners[act]
        last = a.corner_flags[act, np.maximum(nc_ - 1, 0)]
        sel = act[
            (a.state[act] == STATE_WALKING) & (ts != TARGET_NONE) & (ts != TARGET_VELOCITY)
            & (nc_ > 0) & ((last & STRAIGHTPATH_OFFMESH_CONNECTION) != 0)
        ]  # fmt: skip
        for s in sel.tolist():
            nc = int(a.ncorners[s])
            if nc and a.corner_flags[s, nc - 1] & STRAIGHTPATH_OFFMESH_CONNECTION:
                r = a.radius[s] * F(2.25)
                dx = a.corner_verts[s, nc - 1, 0] - a.npos[s, 0]
                dz = a.corner_verts[s, nc - 1, 2] - a.npos[s, 2]
                if dx * dx + dz * dz < r * r:
                    got = cor.move_over_offmesh_connection(
                        a, s, int(a.corner_polys[s, nc - 1]), self.navmesh
                    )
                    if got is None:
                        continue  # path validity will replan a bad link
                    _, link, start, end = got
                    a.anim_init_pos[s] = a.npos[s]
                    a.anim_poly_ref[s] = link
                    a.anim_active[s] = True
                    a.anim_t[s] = 0
                    a.anim_start_pos[s] = start
                    a.anim_end_pos[s] = end
                    ex, ez = end[0] - start[0], end[2] - start[2]
                    d = np.sqrt(ex * ex + ez * ez)
                    a.anim_tmax[s] = (d / a.max_speed[s]) * F(0.5)
                    a.state[s] = STATE_OFFMESH
                    a.ncorners[s] = 0
                    a.nneis[s] = 0

    def _steering(self, dt) -> None:
        a = self.agents
        (_steering.steer_par if self.parallel else _steering.steer)(
            self._act, a.state == STATE_WALKING, a.target_state, a.target_pos, a.update_flags,
            a.ncorners, a.corner_verts, a.corner_flags, a.npos, a.radius, a.max_speed,
            a.desired_speed, a.dvel,
        )  # fmt: skip
        self._local_grid(dt)  # navkit extension

    def _local_grid(self, dt) -> None:
        """navkit extension: detours of blocked LOCAL_GRID agents (crowd/local_grid.py)."""
        a, lg = self.agents, self.local_grid
        use = a.state == STATE_WALKING
        use &= (a.update_flags & LOCAL_GRID) != 0
        use &= (a.target_state == TARGET_VALID) & a.active
        if not use[self._act].any():
            return
        p, obs = lg.params, self.temporary_obstacles.packed()
        track = use & ~lg.detouring
        track_progress(
            self._act, track, a.npos, a.radius, a.desired_speed, a.ncorners, a.corner_verts,
            a.vel, a.neis, a.nneis, obs, lg.anchor, lg.anchor_time, F(p.stall_time),
            F(p.stall_distance), F(p.lookahead), dt, lg.blocked,
        )  # fmt: skip
        for s in np.flatnonzero(lg.blocked).tolist():
            lg.plan(s, a, self.boundary, obs)
            lg.anchor[s] = a.npos[s]
            lg.anchor_time[s] = 0
        lg.detouring &= use
        for s in np.flatnonzero(lg.detouring).tolist():
            lg.steer(s, a, float(dt))

    def _separation(self, dt) -> None:
        a = self.agents
        (_steering.separate_par if self.parallel else _steering.separate)(
            self._act, a.state == STATE_WALKING, a.target_state, a.update_flags, a.npos, a.neis,
            a.nneis, a.collision_query_range, a.separation_weight, a.desired_speed, a.dvel,
        )  # fmt: skip

    def _avoidance_tables(self) -> tuple[np.ndarray, np.ndarray]:
        key = tuple(self._avoid)
        if self._avoid_tables_key != key:
            arrs = [p.arrays() for p in self._avoid]
            self._avoid_tables = (np.stack([f for f, _ in arrs]), np.stack([i for _, i in arrs]))
            self._avoid_tables_key = key
        return self._avoid_tables

    def _velocity_planning(self, dt) -> None:
        a, b, par = self.agents, self.boundary, self.parallel
        fp, ip = self._avoidance_tables()
        # -- navkit extension: per-agent model dispatch, temporary obstacles
        if self._lod.k > 1:
            hold(
                self._act, self._lod.due, a.state == STATE_WALKING, a.active, a.update_flags,
                a.dvel, a.nvel, a.neis, a.nneis, a.nei_dist,
            )  # fmt: skip
        due = self._due
        obs = self.temporary_obstacles.packed()
        if obs.shape[0] or a.avoidance_model[due].any():
            self._velocity_planning_models(dt, fp, ip, obs)
            return
        # -- end navkit extension
        ns = self._nsamples
        ns[:] = 0
        plan = _avoidance.plan_velocities_par if par else _avoidance.plan_velocities
        plan(
            due, chunks(due.shape[0], par), a.state == STATE_WALKING, a.update_flags,
            a.npos, a.radius, a.vel, a.dvel, a.desired_speed, a.neis, a.nneis, b.segs, b.nsegs,
            a.avoidance_type, fp, ip, a.nvel, ns,
        )  # fmt: skip
        self.velocity_samples = int(ns.sum())

    def _velocity_planning_models(self, dt, fp, ip, obs) -> None:
        """navkit extension: dtCrowd's sampling for "sampled" agents (with the temporary
        obstacles as extra circles), crowd/ttc.py and crowd/orca.py for the others."""
        a, b, g = self.agents, self.boundary, self.grid
        walking = a.state == STATE_WALKING
        avoiding = walking & ((a.update_flags & 2) != 0)  # OBSTACLE_AVOIDANCE
        model = a.avoidance_model
        act = self._due
        sampled = act[~(avoiding[act] & (model[act] != 0))]
        if obs.shape[0]:
            self.velocity_samples = plan_sampled_with_obstacles(
                sampled, walking, a.update_flags, a.npos, a.radius, a.height, a.vel, a.dvel,
                a.desired_speed, a.neis, a.nneis, b.segs, b.nsegs, a.avoidance_type, fp, ip, obs,
                a.nvel,
            )  # fmt: skip
        else:
            ns = self._nsamples
            ns[:] = 0
            _avoidance.plan_velocities(
                sampled, chunks(sampled.shape[0], False), walking, a.update_flags, a.npos,
                a.radius, a.vel, a.dvel, a.desired_speed, a.neis, a.nneis, b.segs, b.nsegs,
                a.avoidance_type, fp, ip, a.nvel, ns,
            )  # fmt: skip
            self.velocity_samples = int(ns.sum())
        self.interactions = 0
        gap = self._gaps
        # narrow passages on the TTC / ORCA agents' paths (crowd/door.py)
        find_gaps(act, avoiding & (model != 0), a.npos, a.radius, b.segs, b.nsegs, a.ncorners,
                  a.corner_verts, gap, F(dt), a.collision_query_range * F(DOOR_SIGHT))  # fmt: skip
        # straight distance to the target (crowd/ttc.py hold_ground)
        fin = self._fin
        fin[:] = np.inf
        tv = a.target_state == TARGET_VALID
        fin[tv] = np.hypot(a.target_pos[tv, 0] - a.npos[tv, 0], a.target_pos[tv, 2] - a.npos[tv, 2])
        mask = avoiding & (model == 1)
        if mask[act].any():
            tp = self.ttc_params
            onc = self._onc
            if tp.oncoming_sight > 0.0:
                # how far ahead each sees people coming the other way (crowd/ttc.py)
                oncoming_ahead(act, mask, a.npos, a.dvel, a.max_speed, a.radius, a.height,
                               g.inv_cell_size, g.buckets, g.items,
                               a.collision_query_range * F(tp.oncoming_sight), onc)  # fmt: skip
            self.interactions += plan_ttc(
                act, mask, a.npos, a.vel, a.dvel, a.radius, a.height, a.max_speed,
                a.max_acceleration, a.collision_query_range, g.inv_cell_size, g.buckets, g.items,
                obs, b.segs, b.nsegs, gap, fin, tp.array(), dt, a.nvel, onc,
            )  # fmt: skip
        mask = avoiding & (model == 2)
        if mask[act].any():
            self.interactions += plan_orca(
                act, mask, a.npos, a.vel, a.dvel, a.radius, a.height, a.max_speed,
                a.max_acceleration, a.collision_query_range, g.inv_cell_size, g.buckets, g.items,
                obs, b.segs, b.nsegs, gap, fin, self.orca_params.array(), dt, a.nvel,
            )  # fmt: skip

    def _integration(self, dt) -> None:
        a = self.agents
        (_steering.integrate_par if self.parallel else _steering.integrate)(
            self._act, a.state == STATE_WALKING, a.max_acceleration, dt, a.nvel, a.vel, a.npos
        )

    def _collisions(self, dt) -> None:
        a = self.agents
        (_steering.resolve_collisions_par if self.parallel else _steering.resolve_collisions)(
            self._act, a.state == STATE_WALKING, a.npos, a.radius, a.dvel, a.neis, a.nneis, a.disp
        )
        obs = self.temporary_obstacles.packed()  # navkit extension
        if obs.shape[0]:
            push_out_of_obstacles(self._act, a.state == STATE_WALKING, a.npos, a.radius,
                                  a.height, obs)  # fmt: skip
        # navkit extension: TTC / ORCA agents resolve their contacts fully (crowd/contact.py)
        walking = a.state == STATE_WALKING
        mask = walking & (a.avoidance_model != 0)
        if mask[self._act].any():
            b, g = self.boundary, self.grid
            resolve_contacts(self._act, mask, walking, a.npos, a.c_pos, a.radius, a.height,
                             g.inv_cell_size, g.buckets, g.items, b.segs, b.nsegs,
                             CONTACT_ROUNDS, F(CONTACT_TOLERANCE), F(CONTACT_ALLOW))  # fmt: skip

    def _move_along_surface(self, dt) -> None:
        a, par = self.agents, self.parallel
        flags, _ = self._ftables
        walking = a.state == STATE_WALKING
        kernel = cor.move_kernel_par if par else cor.move_kernel
        kernel(
            self.query._vh().desc, self._tiny.desc, flags, self._act,
            chunks(self._act.shape[0], par), walking, a.target_state, a.query_filter, a.npos,
            a.c_pos, a.c_target, a.c_path, a.c_npath,
        )  # fmt: skip
        ts = a.target_state
        a.partial[walking & ((ts == TARGET_NONE) | (ts == TARGET_VELOCITY))] = False

    def _offmesh_animation(self, dt) -> None:
        a = self.agents
        for s in self._act[a.anim_active[self._act]].tolist():
            a.anim_t[s] += dt
            t, tmax = a.anim_t[s], a.anim_tmax[s]
            if t > tmax:
                a.anim_active[s] = False
                a.state[s] = STATE_WALKING
                continue
            ta = tmax * F(0.15)
            if t < ta:
                u = _tween(t, F(0.0), ta)
                p0, p1 = a.anim_init_pos[s], a.anim_start_pos[s]
            else:
                u = _tween(t, ta, tmax)
                p0, p1 = a.anim_start_pos[s], a.anim_end_pos[s]
            a.npos[s] = (p0[0] + (p1[0] - p0[0]) * u, p0[1] + (p1[1] - p0[1]) * u,
                         p0[2] + (p1[2] - p0[2]) * u)  # fmt: skip
            a.vel[s] = 0
            a.dvel[s] = 0
