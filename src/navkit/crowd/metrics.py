"""Quality figures of a crowd run, computed from its trajectories.

:func:`crowd_metrics` takes every agent's position after every step (any
source: navkit's :class:`~navkit.crowd.Crowd`, or a Detour trace) and returns
:class:`CrowdMetrics`:

- ``arrival_fraction``: agents within ``reach`` (1 m, 3D, as the Recast peer
  reports) of their target after the last step;
- ``mean_overlap`` / ``worst_overlap``: interpenetration of agents, as a
  fraction of a radius. Two agents (upright cylinders: base ``y``, ``height``,
  ``radius``) overlap when their xz distance is below ``ri + rj`` and their
  height intervals intersect; the overlap is ``(ri + rj - d) / ((ri + rj) / 2)``.
  The mean is over every (step, overlapping pair) sample, 0 when none overlap;
  ``overlap_samples`` counts them;
- ``stuck``: agents with a reachable target that, during some 5 s window, moved
  less than ``stuck_distance`` (net, in xz) and had not arrived (farther than
  ``reach`` from the target at the window's end);
- ``path_ratio_mean`` / ``path_ratio_median``: over arrived agents whose
  straight-line start-target distance is at least ``min_straight``, the length
  walked until first within ``reach`` plus the remaining straight distance
  to the target, over the straight-line distance (>= 1; None without such agents).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from navkit import _check
from navkit._jit import njit
from navkit.errors import InputError

__all__ = ["CrowdMetrics", "CrowdRun", "crowd_metrics", "random_crowd_run"]


@dataclass(frozen=True)
class CrowdMetrics:
    agents: int
    steps: int
    dt: float  # [s]
    arrival_fraction: float
    mean_overlap: float  # fraction of a radius
    worst_overlap: float  # fraction of a radius
    overlap_samples: int  # (step, pair) samples with an overlap
    stuck: int
    reachable: int  # agents with a reachable target
    path_ratio_mean: float | None
    path_ratio_median: float | None
    path_ratio_agents: int

    def as_dict(self) -> dict:
        return asdict(self)


@njit(cache=True)
def _overlaps(traj, radius, height):  # pragma: no cover - numba
    """(sum, max, count) of pair overlaps over all steps (sweep along x per step)."""
    t_n, n = traj.shape[0], traj.shape[1]
    rmax = 0.0
    for i in range(n):
        if radius[i] > rmax:
            rmax = radius[i]
    total = 0.0
    worst = 0.0
    count = 0
    for t in range(t_n):
        xs = traj[t, :, 0].astype(np.float64)
        order = np.argsort(xs)
        for a in range(n):
            i = order[a]
            xi = xs[i]
            for b in range(a + 1, n):
                j = order[b]
                if xs[j] - xi >= radius[i] + rmax:
                    break
                rr = radius[i] + radius[j]
                dx = xs[j] - xi
                dz = float(traj[t, j, 2]) - float(traj[t, i, 2])
                d2 = dx * dx + dz * dz
                if d2 >= rr * rr:
                    continue
                yi = float(traj[t, i, 1])
                yj = float(traj[t, j, 1])
                if not (yj < yi + height[i] and yi < yj + height[j]):
                    continue
                ov = (rr - np.sqrt(d2)) / (0.5 * rr)
                total += ov
                count += 1
                if ov > worst:
                    worst = ov
    return total, worst, count


def crowd_metrics(
    trajectory,
    targets,
    radius,
    height,
    dt: float,
    *,
    reachable=None,
    reach: float = 1.0,
    stuck_seconds: float = 5.0,
    stuck_distance: float = 0.5,
    min_straight: float = 1.0,
) -> CrowdMetrics:
    """Metrics of a crowd run (see the module docstring).

    Parameters
    ----------
    trajectory : (T + 1, N, 3) float array
        Agent positions [wu]: row 0 at the start (placed positions), row k after step k.
    targets : (N, 3) float array
        Target positions [wu].
    radius, height : float or (N,) float array
        Agent radii and heights [wu], > 0.
    dt : float
        Step [s], > 0.
    reachable : (N,) bool array, optional
        Whether each agent's target is reachable (default: all).
    reach : float
        Arrival distance [wu] (3D), default 1.
    stuck_seconds, stuck_distance : float
        The window [s] and the net xz movement [wu] below which an agent that has
        not arrived is stuck.
    min_straight : float
        Smallest straight-line distance [wu] of the agents in the path ratio.
    """
    p = np.asarray(trajectory, dtype=np.float64)
    if p.ndim != 3 or p.shape[2] != 3 or p.shape[0] < 1:
        raise InputError(f"trajectory must have shape (T + 1, N, 3), got {p.shape}")
    t1, n = p.shape[0], p.shape[1]
    tg = np.asarray(targets, dtype=np.float64)
    if tg.shape != (n, 3):
        raise InputError(f"targets must have shape ({n}, 3), got {tg.shape}")
    if not (np.isfinite(p).all() and np.isfinite(tg).all()):
        raise InputError("trajectory and targets must be finite")
    r = np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,)).copy()
    h = np.broadcast_to(np.asarray(height, dtype=np.float64), (n,)).copy()
    if n and not (
        np.all(r > 0) and np.all(h > 0) and np.isfinite(r).all() and np.isfinite(h).all()
    ):
        raise InputError("radius and height must be finite and > 0")
    dt = _check.real(dt, "dt", 0.0, lo_open=True, unit="s")
    reach = _check.real(reach, "reach", 0.0, unit="wu")
    stuck_seconds = _check.real(stuck_seconds, "stuck_seconds", 0.0, lo_open=True, unit="s")
    stuck_distance = _check.real(stuck_distance, "stuck_distance", 0.0, unit="wu")
    min_straight = _check.real(min_straight, "min_straight", 0.0, unit="wu")
    if reachable is None:
        ok = np.ones(n, bool)
    else:
        ok = np.asarray(reachable, dtype=bool)
        if ok.shape != (n,):
            raise InputError(f"reachable must have shape ({n},), got {ok.shape}")
    steps = t1 - 1
    if n == 0:
        return CrowdMetrics(0, steps, dt, 0.0, 0.0, 0.0, 0, 0, 0, None, None, 0)

    dist = np.linalg.norm(p - tg[None], axis=2)  # (T + 1, N)
    arrived = dist <= reach
    arrival = float(arrived[-1].mean())

    tot, worst, cnt = _overlaps(p.astype(np.float32), r, h)
    mean_ov = tot / cnt if cnt else 0.0

    w = int(round(stuck_seconds / dt))
    stuck = np.zeros(n, bool)
    if w >= 1 and t1 > w:
        d = p[w:, :, [0, 2]] - p[:-w, :, [0, 2]]
        still = np.hypot(d[..., 0], d[..., 1]) < stuck_distance
        stuck = np.any(still & ~arrived[w:], axis=0) & ok

    straight = dist[0]
    first = np.argmax(arrived, axis=0)  # first step within reach (0 when never)
    seg = np.linalg.norm(np.diff(p, axis=0), axis=2)  # (T, N)
    walked = np.concatenate([np.zeros((1, n)), np.cumsum(seg, axis=0)])
    sel = arrived.any(axis=0) & (straight >= max(min_straight, 1e-9))
    idx = np.flatnonzero(sel)
    ratios = (walked[first[idx], idx] + dist[first[idx], idx]) / straight[idx]
    return CrowdMetrics(
        agents=n,
        steps=steps,
        dt=dt,
        arrival_fraction=arrival,
        mean_overlap=float(mean_ov),
        worst_overlap=float(worst),
        overlap_samples=int(cnt),
        stuck=int(stuck.sum()),
        reachable=int(ok.sum()),
        path_ratio_mean=float(ratios.mean()) if idx.size else None,
        path_ratio_median=float(np.median(ratios)) if idx.size else None,
        path_ratio_agents=int(idx.size),
    )


@dataclass
class CrowdRun:
    """A random crowd run (:func:`random_crowd_run`) and its metrics."""

    trajectory: np.ndarray  # (T + 1, N, 3) float32 [wu]
    targets: np.ndarray  # (N, 3) float32 [wu]
    reachable: np.ndarray  # (N,) bool
    radius: float
    height: float
    dt: float
    update_ms: np.ndarray  # (T,) float64 wall time of each update [ms]
    metrics: CrowdMetrics


def random_crowd_run(
    navmesh,
    agents: int,
    seconds: float,
    *,
    seed: int = 0,
    hz: float = 60.0,
    params=None,
    target_tries: int = 20,
    mode: str = "dtcrowd",
    level_of_detail: int = 1,
) -> CrowdRun:
    """Place ``agents`` agents at random navmesh points with random reachable targets and run.

    Starts and targets come from :meth:`NavMeshQuery.find_random_point` with
    ``numpy.random.default_rng(seed)``; a target is drawn again (up to
    ``target_tries`` times) until an A* search from the agent's polygon reaches it.
    ``params`` defaults to RecastDemo CrowdTool's agent (radius 0.6, height 2,
    max speed 3.5, acceleration 8, obstacle avoidance preset 1). ``mode`` is the
    crowd's (:class:`~navkit.crowd.Crowd`: "dtcrowd" or "navkit"), and
    ``level_of_detail`` its staggering of per-agent work (navkit mode only; see
    :class:`~navkit.crowd.Crowd`).
    """
    import time

    from navkit.detour.query import NavMeshQuery

    from .agents import AgentParams
    from .crowd import Crowd

    n = _check.integer(agents, "agents", 1, 65535)
    seconds = _check.real(seconds, "seconds", 0.0, 3600.0, lo_open=True, unit="s")
    hz = _check.real(hz, "hz", 0.0, 1000.0, lo_open=True, unit="Hz")
    seed = _check.integer(seed, "seed", 0, 2**63 - 1)
    if params is None:
        params = AgentParams()  # RecastDemo CrowdTool's agent
    elif not isinstance(params, AgentParams):
        raise InputError("params must be an AgentParams")
    rng = np.random.default_rng(seed)
    q = NavMeshQuery(navmesh, max_nodes=65535)
    crowd = Crowd(navmesh, n, params.radius, mode=mode, level_of_detail=level_of_detail)
    crowd.use_recastdemo_presets()
    slots = np.empty(n, np.int64)
    targets = np.empty((n, 3), np.float32)
    ok = np.zeros(n, bool)
    for i in range(n):
        a = q.find_random_point(rng=rng)
        if a.ref == 0:
            raise InputError("the navmesh has no polygon to place agents on")
        h = crowd.add_agent(a.point, params)
        s = crowd.slot(h)
        start = int(crowd.agents.c_path[s, 0])
        for _ in range(max(1, target_tries)):
            b = q.find_random_point(rng=rng)
            res = q.find_path(start, b.ref, crowd.positions[s], b.point, max_path=65535)
            if res.polys.shape[0] and int(res.polys[-1]) == b.ref:
                ok[i] = True
                break
        crowd.request_move_target(h, b.ref, b.point)
        slots[i] = s
        targets[i] = b.point
    steps = max(1, int(round(seconds * hz)))
    dt = 1.0 / hz
    traj = np.empty((steps + 1, n, 3), np.float32)
    traj[0] = crowd.positions[slots]
    ms = np.empty(steps)
    for k in range(steps):
        t0 = time.perf_counter()
        crowd.update(dt)
        ms[k] = (time.perf_counter() - t0) * 1e3
        traj[k + 1] = crowd.positions[slots]
    m = crowd_metrics(traj, targets, params.radius, params.height, dt, reachable=ok)
    return CrowdRun(traj, targets, ok, float(params.radius), float(params.height), dt, ms, m)
