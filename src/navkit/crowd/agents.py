"""Crowd agents as struct-of-arrays with generational handles (dtCrowdAgent).

Every per-agent field of Detour's ``dtCrowdAgent`` is one numpy array indexed by
the agent's slot (``0 .. max_agents-1``); a slot is reused after
:meth:`AgentArrays.free`, and its generation counter is bumped so an old handle
no longer names the new agent (:class:`~navkit.errors.StaleHandleError`).

A handle is a Python int: ``generation << 32 | slot``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from navkit.errors import ConfigError, InputError, StaleHandleError

__all__ = [
    "AgentParams", "AgentArrays", "STATE_INVALID", "STATE_WALKING", "STATE_OFFMESH",
    "TARGET_NONE", "TARGET_FAILED", "TARGET_VALID", "TARGET_REQUESTING",
    "TARGET_WAITING_FOR_QUEUE", "TARGET_WAITING_FOR_PATH", "TARGET_VELOCITY",
    "ANTICIPATE_TURNS", "OBSTACLE_AVOIDANCE", "SEPARATION", "OPTIMIZE_VIS", "OPTIMIZE_TOPO",
    "MAX_NEIGHBOURS", "MAX_CORNERS", "LOCAL_GRID", "AVOIDANCE_MODELS",
]  # fmt: skip

# dtCrowdAgentState
STATE_INVALID = 0
STATE_WALKING = 1
STATE_OFFMESH = 2
# MoveRequestState
TARGET_NONE = 0
TARGET_FAILED = 1
TARGET_VALID = 2
TARGET_REQUESTING = 3
TARGET_WAITING_FOR_QUEUE = 4
TARGET_WAITING_FOR_PATH = 5
TARGET_VELOCITY = 6
# UpdateFlags
ANTICIPATE_TURNS = 1
OBSTACLE_AVOIDANCE = 2
SEPARATION = 4
OPTIMIZE_VIS = 8
OPTIMIZE_TOPO = 16
# -- navkit extensions (not dtCrowd's): see crowd/ttc.py, crowd/orca.py, crowd/local_grid.py
LOCAL_GRID = 32  # detour around blocking circles with the local grid planner
#: velocity-planning models; an agent's index in this tuple is its ``avoidance_model`` code
AVOIDANCE_MODELS = ("sampled", "ttc", "orca")
# -- end navkit extensions

MAX_NEIGHBOURS = 6  # DT_CROWDAGENT_MAX_NEIGHBOURS
MAX_CORNERS = 4  # DT_CROWDAGENT_MAX_CORNERS
MAX_PATH = 256  # dtCrowd's m_maxPathResult (corridor capacity)
_SLOT_BITS = 32
_SLOT_MASK = (1 << _SLOT_BITS) - 1


def _finite(v: object, field: str, lo: float, hi: float = math.inf) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ConfigError(field, f"must be a number, got {type(v).__name__}")
    try:
        f = float(v)
    except OverflowError:  # an int beyond float range
        f = math.inf
    if not (math.isfinite(f) and lo <= f <= hi):
        raise ConfigError(field, f"must be finite in [{lo}, {hi}], got {v!r}")
    return f


def _int(v: object, field: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= int(v) <= hi:
        raise ConfigError(field, f"must be an integer in [{lo}, {hi}], got {v!r}")
    return int(v)


@dataclass(frozen=True)
class AgentParams:
    """An agent's configuration (dtCrowdAgentParams); lengths in wu, times in s.

    Attributes
    ----------
    radius, height : float
        Agent cylinder (> 0).
    max_speed : float
        [wu/s], >= 0.
    max_acceleration : float
        [wu/s^2], >= 0.
    collision_query_range : float
        Range of the neighbour and wall queries (> 0; RecastDemo uses 12 * radius).
    path_optimization_range : float
        Visibility-optimisation range (> 0; RecastDemo uses 30 * radius).
    separation_weight : float
        Weight of the separation steering (>= 0).
    update_flags : int
        OR of ANTICIPATE_TURNS, OBSTACLE_AVOIDANCE, SEPARATION, OPTIMIZE_VIS, OPTIMIZE_TOPO
        (dtCrowd's) and LOCAL_GRID (navkit's: detour around blocking temporary obstacles
        and agents with :mod:`navkit.crowd.local_grid`). Default: RecastDemo's (all but
        SEPARATION).
    avoidance_type : int
        Obstacle avoidance preset index, 0..7 (used by the "sampled" model).
    query_filter : int
        Index of the crowd's query filter, 0..15.
    avoidance_model : {"sampled", "ttc", "orca"}
        Velocity planning of an agent with OBSTACLE_AVOIDANCE: "sampled" is dtCrowd's
        (dtObstacleAvoidanceQuery with preset ``avoidance_type``), "ttc" the
        time-to-collision power law (:mod:`navkit.crowd.ttc`), "orca" optimal
        reciprocal collision avoidance (:mod:`navkit.crowd.orca`).
    """

    radius: float = 0.6
    height: float = 2.0
    max_speed: float = 3.5
    max_acceleration: float = 8.0
    collision_query_range: float = 7.2
    path_optimization_range: float = 18.0
    separation_weight: float = 2.0
    update_flags: int = ANTICIPATE_TURNS | OBSTACLE_AVOIDANCE | OPTIMIZE_VIS | OPTIMIZE_TOPO
    avoidance_type: int = 1
    query_filter: int = 0
    avoidance_model: str = "sampled"

    def __post_init__(self) -> None:
        for name, lo in (
            ("radius", 1e-6), ("height", 1e-6), ("max_speed", 0.0), ("max_acceleration", 0.0),
            ("collision_query_range", 1e-6), ("path_optimization_range", 1e-6),
            ("separation_weight", 0.0),
        ):  # fmt: skip
            object.__setattr__(self, name, _finite(getattr(self, name), name, lo, 1e30))
        object.__setattr__(self, "update_flags", _int(self.update_flags, "update_flags", 0, 63))
        object.__setattr__(
            self, "avoidance_type", _int(self.avoidance_type, "avoidance_type", 0, 7)
        )
        object.__setattr__(self, "query_filter", _int(self.query_filter, "query_filter", 0, 15))
        if self.avoidance_model not in AVOIDANCE_MODELS:
            raise ConfigError(
                "avoidance_model",
                f"must be one of {AVOIDANCE_MODELS}, got {self.avoidance_model!r}",
            )


class AgentArrays:
    """All agents' state, one array per dtCrowdAgent field (slot-indexed).

    Float fields are float32 like Detour's. Positions ``npos``, velocities
    ``vel`` (N, 3); ``state``/``target_state`` (N,) int8 (STATE_*, TARGET_*).
    """

    def __init__(self, n: int) -> None:
        f3 = lambda: np.zeros((n, 3), np.float32)  # noqa: E731
        self.n = n
        self.active = np.zeros(n, np.bool_)
        self.generation = np.zeros(n, np.int64)
        # params (float32 like dtCrowdAgentParams)
        self.radius = np.zeros(n, np.float32)
        self.height = np.zeros(n, np.float32)
        self.max_speed = np.zeros(n, np.float32)
        self.max_acceleration = np.zeros(n, np.float32)
        self.collision_query_range = np.zeros(n, np.float32)
        self.path_optimization_range = np.zeros(n, np.float32)
        self.separation_weight = np.zeros(n, np.float32)
        self.update_flags = np.zeros(n, np.int32)
        self.avoidance_type = np.zeros(n, np.int32)
        self.query_filter = np.zeros(n, np.int32)
        self.avoidance_model = np.zeros(n, np.int8)  # index into AVOIDANCE_MODELS (navkit's)
        # state
        self.state = np.zeros(n, np.int8)
        self.partial = np.zeros(n, np.bool_)
        self.topology_opt_time = np.zeros(n, np.float32)
        self.npos = f3()
        self.disp = f3()
        self.dvel = f3()
        self.nvel = f3()
        self.vel = f3()
        self.desired_speed = np.zeros(n, np.float32)
        self.nneis = np.zeros(n, np.int32)
        self.neis = np.zeros((n, MAX_NEIGHBOURS), np.int32)
        self.nei_dist = np.zeros((n, MAX_NEIGHBOURS), np.float32)
        self.ncorners = np.zeros(n, np.int32)
        self.corner_verts = np.zeros((n, MAX_CORNERS, 3), np.float32)
        self.corner_flags = np.zeros((n, MAX_CORNERS), np.uint8)
        self.corner_polys = np.zeros((n, MAX_CORNERS), np.int64)
        # off-mesh link traversal (dtCrowdAgentAnimation)
        self.anim_active = np.zeros(n, np.bool_)
        self.anim_init_pos = f3()
        self.anim_start_pos = f3()
        self.anim_end_pos = f3()
        self.anim_poly_ref = np.zeros(n, np.int64)
        self.anim_t = np.zeros(n, np.float32)
        self.anim_tmax = np.zeros(n, np.float32)
        # move request
        self.target_state = np.zeros(n, np.int8)
        self.target_ref = np.zeros(n, np.int64)
        self.target_pos = f3()
        self.target_pathq_ref = np.zeros(n, np.int64)
        self.target_replan = np.zeros(n, np.bool_)
        self.target_replan_time = np.zeros(n, np.float32)
        # corridor (dtPathCorridor): position, target and polygon path
        self.c_pos = f3()
        self.c_target = f3()
        self.c_path = np.zeros((n, MAX_PATH), np.int64)
        self.c_npath = np.zeros(n, np.int32)

    # -- slots and handles -----------------------------------------------------------------
    def alloc(self) -> int:
        """Lowest free slot (dtCrowd::addAgent's order), or -1 when full."""
        free = np.flatnonzero(~self.active)
        return int(free[0]) if free.size else -1

    def handle(self, slot: int) -> int:
        return (int(self.generation[slot]) << _SLOT_BITS) | slot

    def slot(self, handle: object) -> int:
        """Slot of a live handle; StaleHandleError for a removed/reused one."""
        if isinstance(handle, bool) or not isinstance(handle, (int, np.integer)) or handle < 0:
            raise InputError(f"agent handle must be a non-negative int, got {handle!r}")
        h = int(handle)
        s = h & _SLOT_MASK
        if s >= self.n or not self.active[s] or int(self.generation[s]) != h >> _SLOT_BITS:
            raise StaleHandleError(f"agent handle {h:#x} names no live agent")
        return s

    def set_params(self, s: int, p: AgentParams) -> None:
        self.radius[s] = p.radius
        self.height[s] = p.height
        self.max_speed[s] = p.max_speed
        self.max_acceleration[s] = p.max_acceleration
        self.collision_query_range[s] = p.collision_query_range
        self.path_optimization_range[s] = p.path_optimization_range
        self.separation_weight[s] = p.separation_weight
        self.update_flags[s] = p.update_flags
        self.avoidance_type[s] = p.avoidance_type
        self.query_filter[s] = p.query_filter
        self.avoidance_model[s] = AVOIDANCE_MODELS.index(p.avoidance_model)

    def params(self, s: int) -> AgentParams:
        return AgentParams(
            float(self.radius[s]), float(self.height[s]), float(self.max_speed[s]),
            float(self.max_acceleration[s]), float(self.collision_query_range[s]),
            float(self.path_optimization_range[s]), float(self.separation_weight[s]),
            int(self.update_flags[s]), int(self.avoidance_type[s]), int(self.query_filter[s]),
            AVOIDANCE_MODELS[int(self.avoidance_model[s])],
        )  # fmt: skip

    def free(self, s: int) -> None:
        self.active[s] = False
        self.generation[s] += 1
