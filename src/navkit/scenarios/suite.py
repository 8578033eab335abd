"""The standard crowd scenarios and their runner.

Each scenario is a function ``(scale, seed) -> Setup``: a navmesh, the measured
agents' starts, targets and base agent (people on the synthetic levels: radius
0.3 m, height 1.8 m, 1.4 m/s; RecastDemo's agent on the sample levels), a
duration, and optionally extra bodies (an obstacle, a followed target) moved by
a hook before every crowd update. :func:`run_scenario` configures the agents
with a mode (:mod:`navkit.scenarios.modes`), runs the crowd at ``hz`` and
measures it (:mod:`navkit.scenarios.metrics`).

Scenarios (``scale`` multiplies the agent counts; 1 is the suite's default; ``seed``
picks the random scenarios' targets, and for the four people scenarios a jitter of
the starts by up to 0.1 m when > 0):

=================  ===============================================================
``crossing``       four groups of 6 cross a plus-shaped junction of 5 m corridors
``bottleneck``     20 agents pass a 1 m door between two rooms
``corridor``       50 + 50 agents walk a 40 m x 4 m corridor in opposite directions
``circle``         16 agents on a 10 m radius circle swap to the antipode
``random_dungeon``, ``random_nav_test``, ``random_undulating``
                   20 agents with random reachable targets on the sample levels
``moving_obstacle`` 12 agents walk a 6 m wide corridor that a cart (r 0.5 m) crosses
                   back and forth at 1 m/s
``follower``       a :class:`~navkit.crowd.follower.Follower` (attached to a crowd
                   agent) chases a target walking across nav_test's storeys
=================  ===============================================================

The moving obstacle is a crowd agent driven by ``request_move_velocity`` with
no steering flags (no avoidance, no turn anticipation): dtCrowd's avoidance sees
it as a moving circle with a velocity, which is what a rolling cart is to the
other agents; a tile-cache obstacle would instead carve the navmesh and be met by
replanning, a different mechanism (and a tile rebuild per move).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from navkit import _check
from navkit.crowd.agents import AgentParams
from navkit.crowd.crowd import Crowd
from navkit.detour.query import NavMeshQuery
from navkit.errors import InputError, QueryError

from .geometry import level
from .metrics import ScenarioMetrics, scenario_metrics
from .modes import get_mode

__all__ = [
    "Setup", "ScenarioResult", "SCENARIOS", "DESCRIPTIONS", "run_scenario", "get_scenario", "Extra", "HUMAN",
]  # fmt: skip

#: people on the synthetic levels (RecastDemo's ranges: 12 r query, 30 r optimisation)
HUMAN = AgentParams(
    radius=0.3, height=1.8, max_speed=1.4, max_acceleration=4.0, collision_query_range=3.6,
    path_optimization_range=9.0,
)  # fmt: skip


@dataclass
class Extra:
    """A body in the crowd that is not measured (an obstacle, a followed target)."""

    position: np.ndarray  # (3,) start
    params: AgentParams | None  # None: not a crowd agent (moved by the hook, drawn only)


@dataclass
class Setup:
    """A scenario ready to run."""

    name: str
    navmesh: object
    starts: np.ndarray  # (N, 3)
    targets: np.ndarray  # (N, 3)
    agent: AgentParams  # the scenario's agent, before the mode
    seconds: float
    reach: float = 0.5
    extras: list[Extra] = field(default_factory=list)
    #: hook(crowd, handles, extra_positions (E, 3) in/out, t [s], dt) before each update;
    #: handles[:N] the measured agents, handles[N:] the extras' (-1 when not agents)
    hook: Callable | None = None
    #: follower(crowd, handle) -> Follower attached to measured agent 0 (follower scenario)
    follower: Callable | None = None
    #: (N,) reference path lengths (default: the navmesh shortest path start -> target)
    shortest: np.ndarray | None = None


@dataclass
class ScenarioResult:
    scenario: str
    mode: str
    navmesh: object
    trajectory: np.ndarray  # (T + 1, N, 3) float32 measured agents [wu]
    velocities: np.ndarray  # (T + 1, N, 3) float32 crowd velocities [wu/s]
    extras: np.ndarray  # (T + 1, E, 3) float32 unmeasured bodies
    targets: np.ndarray  # (N, 3)
    agent: AgentParams  # the measured agents' params (after the mode)
    dt: float
    update_ms: np.ndarray  # (T,)
    metrics: ScenarioMetrics
    info: dict = field(default_factory=dict)


def _grid(cx: float, cz: float, n: int, cols: int, spacing: float) -> np.ndarray:
    rows = -(-n // cols)
    out = np.zeros((n, 3), np.float32)
    for i in range(n):
        r, c = divmod(i, cols)
        out[i] = (cx + (c - (cols - 1) / 2) * spacing, 0.0, cz + (r - (rows - 1) / 2) * spacing)
    return out


def _count(base: int, scale: float, lo: int = 1) -> int:
    return max(lo, int(round(base * scale)))


#: how far [wu] seed > 0 moves the people scenarios' starts (uniform in x and in z)
JITTER = 0.1


def _jitter(starts: np.ndarray, seed: int) -> np.ndarray:
    """The starts of seed ``seed``: as laid out for 0, else each moved by up to
    :data:`JITTER` in x and in z (numpy's default_rng(seed)): the outcomes of
    counterflow and doors are chaotic in the initial conditions, so a criterion is
    checked on several seeds."""
    if seed == 0:
        return starts
    rng = np.random.default_rng(seed)
    n = starts.shape[0]
    d = np.c_[rng.uniform(-JITTER, JITTER, n), np.zeros(n), rng.uniform(-JITTER, JITTER, n)]
    return (starts + d).astype(np.float32)


def crossing(scale: float = 1.0, seed: int = 0) -> Setup:
    k = _count(6, scale)
    g = _grid(0.0, 0.0, k, 3, 0.9)  # a 3-wide block
    starts, targets = [], []
    for ang in range(4):  # from each arm's end to the opposite one
        c, s = [(1, 0), (0, 1), (-1, 0), (0, -1)][ang]
        for p in g:
            # block across the arm, centred 12 m out; rows along the arm
            u, w = float(p[0]), float(p[2]) - 12.0
            # the block translates across (the front row goes to the far row), so
            # agents that arrive first do not stand in the way of the others
            starts.append((c * w - s * u, 0.0, s * w + c * u))
            targets.append((c * (w + 24.0) - s * u, 0.0, s * (w + 24.0) + c * u))
    return Setup("crossing", level("crossing"), _jitter(np.array(starts, np.float32), seed),
                 np.array(targets, np.float32), HUMAN, 40.0)  # fmt: skip


def bottleneck(scale: float = 1.0, seed: int = 0) -> Setup:
    n = _count(20, scale)
    starts = _grid(-5.0, 0.0, n, 5, 0.9)
    # the same block, looser (1.5 m: arrived agents leave gaps to walk through), the
    # front column going to the far column
    targets = _grid(6.0, 0.0, n, 5, 1.5)
    return Setup("bottleneck", level("bottleneck"), _jitter(starts, seed), targets, HUMAN, 60.0)


def corridor(scale: float = 1.0, seed: int = 0) -> Setup:
    n = _count(50, scale)
    a = _grid(0.0, -14.0, n, 4, 0.8)  # 4 across the 4 m corridor, rows along it
    a = a[:, [2, 1, 0]].copy()  # rows along x
    b = a.copy()
    b[:, 0] *= -1
    shift = np.array(
        [28.0, 0.0, 0.0], np.float32
    )  # each group translates: its front row to the far row
    starts = np.concatenate([a, b])
    targets = np.concatenate([a + shift, b - shift])
    return Setup("corridor", level("corridor"), _jitter(starts, seed), targets, HUMAN, 45.0)


def circle(scale: float = 1.0, seed: int = 0) -> Setup:
    n = _count(16, scale, 2)
    ang = np.arange(n) * (2 * np.pi / n)
    starts = np.stack([10 * np.cos(ang), np.zeros(n), 10 * np.sin(ang)], 1).astype(np.float32)
    return Setup("circle", level("open"), _jitter(starts, seed), -starts, HUMAN, 40.0)


def _random(name: str):
    def make(scale: float = 1.0, seed: int = 0) -> Setup:
        nm = level(name)
        q = NavMeshQuery(nm, max_nodes=65535)
        rng = np.random.default_rng(seed)
        n = _count(20, scale)
        starts: list[np.ndarray] = []
        targets: list[np.ndarray] = []
        while len(starts) < n:
            a = q.find_random_point(rng=rng)
            b = q.find_random_point(rng=rng)
            try:
                p = q.path(a.point, b.point)
            except QueryError:
                continue
            if p.complete and p.length > 5.0:
                starts.append(a.point)
                targets.append(b.point)
        return Setup(f"random_{name}", nm, np.array(starts), np.array(targets), AgentParams(),
                     25.0, reach=1.0)  # fmt: skip

    make.__name__ = f"random_{name}"
    return make


def moving_obstacle(scale: float = 1.0, seed: int = 0) -> Setup:
    n = _count(12, scale)
    starts = _grid(0.0, -11.0, n, 4, 0.9)[:, [2, 1, 0]].copy()  # 4 across the corridor
    targets = starts + np.array([22.0, 0.0, 0.0], np.float32)
    cart = AgentParams(radius=0.5, height=1.0, max_speed=1.0, max_acceleration=10.0,
                       collision_query_range=3.0, path_optimization_range=9.0,
                       update_flags=0, separation_weight=0.0)  # fmt: skip
    vz = [1.0]

    def hook(crowd, handles, extra, t, dt):
        h = handles[-1]
        z = float(crowd.positions[crowd.slot(h), 2])
        if z > 2.0:
            vz[0] = -1.0
        elif z < -2.0:
            vz[0] = 1.0
        crowd.request_move_velocity(h, (0.0, 0.0, vz[0]))

    return Setup("moving_obstacle", level("wide_corridor"), starts, targets, HUMAN, 40.0,
                 extras=[Extra(np.array([0.0, 0.0, -2.0], np.float32), cart)], hook=hook)  # fmt: skip


#: the target's route across nav_test: from a lower floor up to the top storey (y 7.9),
#: then down to a terrace
FOLLOWER_ROUTE = ((29.61, -2.17, -2.52), (48.38, 7.93, 23.96), (60.22, 1.2, 19.25))


def follower(scale: float = 1.0, seed: int = 0) -> Setup:
    from navkit.crowd.follower import Follower, FollowerParams

    nm = level("nav_test")
    q = NavMeshQuery(nm, max_nodes=65535)
    pts = [np.asarray(FOLLOWER_ROUTE[0], np.float32)]
    for a, b in zip(FOLLOWER_ROUTE[:-1], FOLLOWER_ROUTE[1:], strict=True):
        leg = q.path(a, b)
        if not leg.complete:  # pragma: no cover - the route is fixed
            raise QueryError(f"follower route leg {a} -> {b} is not complete")
        pts.extend(leg.points[1:])
    route = np.array(pts, np.float64)
    seg = np.linalg.norm(np.diff(route, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    speed = 2.5  # the target walks at 2.5 m/s, the follower runs at up to 3.5

    def target_at(t: float) -> np.ndarray:
        s = min(3.0 + max(t - 1.0, 0.0) * speed, cum[-1])  # 3 m ahead, leaves after 1 s
        i = min(int(np.searchsorted(cum, s, side="right")) - 1, len(seg) - 1)
        u = (s - cum[i]) / seg[i] if seg[i] > 0 else 0.0
        return (route[i] + (route[i + 1] - route[i]) * u).astype(np.float32)

    start = route[0]

    fp = FollowerParams(max_speed=3.5, stop_distance=1.5, catch_up_distance=2.5)
    made: list = []

    def attach(crowd, handle):  # run_scenario calls this once the agent exists
        f = Follower(NavMeshQuery(nm), crowd.positions[crowd.slot(handle)], fp)
        made.append(f.attach(crowd, handle))
        return f

    def hook(crowd, handles, extra, t, dt):
        extra[0] = target_at(t + dt)
        made[0].update(dt, extra[0])

    seconds = float(cum[-1] / speed + 12.0)
    return Setup("follower", nm, np.array([start], np.float32),
                 np.array([route[-1]], np.float32), AgentParams(), seconds, reach=2.5,
                 extras=[Extra(target_at(0.0), None)], hook=hook,
                 follower=attach, shortest=np.array([cum[-1]]))  # fmt: skip


#: name -> one line saying what the scenario is (the tables print it)
DESCRIPTIONS: dict[str, str] = {
    "crossing": "four groups of 6 cross a plus-shaped junction of 5 m wide corridors",
    "bottleneck": "20 agents pass a 1 m door (0.3 m of navmesh after erosion on 0.15 m cells) between rooms",
    "corridor": "50 + 50 agents walk a 40 m x 4 m corridor in opposite directions",
    "circle": "16 agents on a 10 m radius circle swap to the antipode",
    "random_dungeon": "20 agents with random reachable targets on RecastDemo's dungeon",
    "random_nav_test": "20 agents with random reachable targets on RecastDemo's nav_test",
    "random_undulating": "20 agents with random reachable targets on RecastDemo's undulating",
    "moving_obstacle": "12 agents walk a 6 m wide corridor that a cart (r 0.5 m, a crowd "
    "agent without avoidance) crosses back and forth at 1 m/s",
    "follower": "a Follower attached to a crowd agent chases a target walking at 2.5 m/s "
    "across nav_test's storeys",
}

#: name -> scenario function (scale, seed) -> Setup
SCENARIOS: dict[str, Callable[..., Setup]] = {
    "crossing": crossing,
    "bottleneck": bottleneck,
    "corridor": corridor,
    "circle": circle,
    "random_dungeon": _random("dungeon"),
    "random_nav_test": _random("nav_test"),
    "random_undulating": _random("undulating"),
    "moving_obstacle": moving_obstacle,
    "follower": follower,
}


def get_scenario(name: str) -> Callable[..., Setup]:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise InputError(f"no scenario named {name!r}; scenarios: {', '.join(SCENARIOS)}") from None


def run_scenario(
    name: str,
    mode: str = "dtcrowd-good",
    *,
    scale: float = 1.0,
    seed: int = 0,
    hz: float = 20.0,
    seconds: float | None = None,
) -> ScenarioResult:
    """Run scenario ``name`` with crowd mode ``mode`` and measure it.

    Parameters
    ----------
    name : str
        A key of :data:`SCENARIOS`.
    mode : str
        A key of :data:`navkit.scenarios.modes.MODES`.
    scale : float
        Multiplies the agent counts (> 0).
    seed : int
        Random scenarios' seed; for crossing, bottleneck, corridor and circle, > 0
        moves the starts by up to :data:`JITTER` (0: as laid out).
    hz : float
        Crowd updates per simulated second (default 20).
    seconds : float, optional
        Simulated time [s] (default: the scenario's).
    """
    scale = _check.real(scale, "scale", 0.0, 100.0, lo_open=True)
    seed = _check.integer(seed, "seed", 0, 2**63 - 1)
    hz = _check.real(hz, "hz", 0.0, 1000.0, lo_open=True, unit="Hz")
    m = get_mode(mode)
    if m.scenarios is not None and name not in m.scenarios:
        raise InputError(f"mode {mode!r} runs on the scenarios {', '.join(m.scenarios)}, not {name!r}")
    st = get_scenario(name)(scale, seed)
    if seconds is not None:
        st.seconds = _check.real(seconds, "seconds", 0.0, 3600.0, lo_open=True, unit="s")
    if m.runner is not None:  # a mode that is not a Crowd (the corridor agents)
        dt = 1.0 / hz
        traj, vel, ms, agent = m.runner(st, dt, max(1, int(round(st.seconds * hz))))
        ext = np.zeros((traj.shape[0], 0, 3), np.float32)
        return _result(name, mode, st, traj, vel, ext, agent, dt, ms,
                       {"hz": hz, "scale": scale, "seed": seed})  # fmt: skip
    n, ne = st.starts.shape[0], len(st.extras)
    crowd_extras = [e for e in st.extras if e.params is not None]
    rmax = max([st.agent.radius] + [e.params.radius for e in crowd_extras])  # type: ignore[union-attr]
    crowd = Crowd(st.navmesh, n + len(crowd_extras), rmax)
    if m.setup is not None:
        m.setup(crowd)
    agent = m.configure(crowd, st.agent)
    handles: list[int] = []
    for i in range(n):
        h = crowd.add_agent(st.starts[i], agent)
        handles.append(h)
        if st.follower is None:
            crowd.request_move_target(h, st.targets[i])
    for e in st.extras:
        handles.append(crowd.add_agent(e.position, e.params) if e.params is not None else -1)
    fol = st.follower(crowd, handles[0]) if st.follower is not None else None
    slots = np.array([crowd.slot(h) for h in handles[:n]], np.int64)
    dt = 1.0 / hz
    steps = max(1, int(round(st.seconds * hz)))
    traj = np.zeros((steps + 1, n, 3), np.float32)
    vel = np.zeros((steps + 1, n, 3), np.float32)
    ext = np.zeros((steps + 1, ne, 3), np.float32)
    xpos = np.array([e.position for e in st.extras], np.float32).reshape(ne, 3)
    traj[0] = crowd.positions[slots]
    ext[0] = xpos
    ms = np.zeros(steps)
    for k in range(steps):
        t0 = time.perf_counter()  # the hook's time counts: a follower decides in it
        if st.hook is not None:
            st.hook(crowd, handles, xpos, k * dt, dt)
        crowd.update(dt)
        ms[k] = (time.perf_counter() - t0) * 1e3
        traj[k + 1] = crowd.positions[slots]
        vel[k + 1] = crowd.velocities[slots]
        for j, h in enumerate(handles[n:]):
            if h != -1:
                xpos[j] = crowd.positions[crowd.slot(h)]
        ext[k + 1] = xpos
    return _result(name, mode, st, traj, vel, ext, agent, dt, ms,
                   {"hz": hz, "scale": scale, "seed": seed}, fol)  # fmt: skip


def _result(name, mode, st, traj, vel, ext, agent, dt, ms, info, fol=None) -> ScenarioResult:
    """Measure a finished run (``traj`` (T + 1, N, 3) the measured agents,
    ``ext`` (T + 1, E, 3) the extras) into a :class:`ScenarioResult`."""
    n = traj.shape[1]
    q = NavMeshQuery(st.navmesh, max_nodes=65535)
    shortest = np.zeros(n) if st.shortest is None else np.asarray(st.shortest, np.float64)
    for i in range(n if st.shortest is None else 0):
        try:
            shortest[i] = q.path(st.starts[i], st.targets[i]).length
        except QueryError:
            shortest[i] = 0.0
    all_r = np.array([agent.radius] * n + [e.params.radius if e.params else 0.3 for e in st.extras])
    all_h = np.array([agent.height] * n + [e.params.height if e.params else 1.8 for e in st.extras])
    body = [i for i, e in enumerate(st.extras) if e.params is not None]
    allp = np.concatenate([traj, ext[:, body]], axis=1)
    keep = np.r_[np.arange(n), n + np.array(body, int)]
    met = scenario_metrics(
        traj, st.targets, shortest, agent.radius, agent.height, dt, ms, reach=st.reach,
        all_positions=allp, all_radius=all_r[keep], all_height=all_h[keep],
    )  # fmt: skip
    if fol is not None:
        info["path_queries"] = fol.path_queries
        info["query_times"] = list(fol.query_times)
        info["replan_interval"] = fol.params.replan_interval
    return ScenarioResult(name, mode, st.navmesh, traj, vel, ext, st.targets, agent, dt, ms,
                          met, info)  # fmt: skip
