"""The figures a scenario run is judged by (:class:`ScenarioMetrics`).

From the measured agents' positions after every step (``(T + 1, N, 3)``), their
targets and the shortest navmesh path lengths:

- ``arrival_fraction``: agents within ``reach`` (3D) of their target at the end;
  ``arrival_time_mean`` / ``arrival_time_max``: first time within ``reach``, over
  the agents that arrived [s];
- ``overlap_mean`` / ``overlap_worst``: pair interpenetration as a fraction of a
  radius (as :func:`navkit.crowd.metrics.crowd_metrics`: upright cylinders,
  ``(ri + rj - d) / ((ri + rj) / 2)``), mean over overlapping (frame, pair)
  samples; ``overlap_frames``: fraction of frames in which some pair overlaps by
  more than 1% of a radius; obstacles (unmeasured agents) count in the overlaps;
- ``stuck``: as crowd_metrics (moved < 0.5 m in some 5 s window, not arrived);
- ``path_over_shortest``: mean over arrived agents of (length walked until
  arrival + remaining distance) / the navmesh shortest path length;
- ``accel_mean`` / ``jerk_mean`` [m/s^2, m/s^3]: mean magnitude of the second and
  third finite differences of the xz positions, over each agent's frames until
  it arrives (smoothness: lower is smoother); ``speed_max`` [m/s]: the largest xz
  speed seen in the positions (collision pushes included);
- ``ms_per_update``: mean wall time of one crowd update [ms].
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from navkit.crowd.metrics import _overlaps, crowd_metrics

__all__ = ["ScenarioMetrics", "scenario_metrics"]


@dataclass(frozen=True)
class ScenarioMetrics:
    agents: int
    seconds: float
    arrival_fraction: float
    arrival_time_mean: float | None
    arrival_time_max: float | None
    overlap_mean: float
    overlap_worst: float
    overlap_frames: float
    stuck: int
    path_over_shortest: float | None
    accel_mean: float
    jerk_mean: float
    speed_max: float
    ms_per_update: float

    def as_dict(self) -> dict:
        return asdict(self)


def _frame_overlaps(traj: np.ndarray, radius: np.ndarray, height: np.ndarray):
    """(sum, worst, count, frames with an overlap > 1% of a radius)."""
    tot, worst, cnt, frames = 0.0, 0.0, 0, 0
    t32 = traj.astype(np.float32)
    for k in range(t32.shape[0]):
        s, w, c = _overlaps(t32[k : k + 1], radius, height)
        tot += s
        cnt += c
        worst = max(worst, w)
        frames += w > 0.01
    return tot, worst, cnt, frames


def scenario_metrics(
    trajectory: np.ndarray,
    targets: np.ndarray,
    shortest: np.ndarray,
    radius: float | np.ndarray,
    height: float | np.ndarray,
    dt: float,
    update_ms: np.ndarray,
    *,
    reach: float = 0.5,
    all_positions: np.ndarray | None = None,
    all_radius: np.ndarray | None = None,
    all_height: np.ndarray | None = None,
) -> ScenarioMetrics:
    """Metrics of a run (module docstring). ``trajectory`` (T + 1, N, 3) are the
    measured agents; ``all_*`` (optional) every body for the overlaps."""
    p = np.asarray(trajectory, np.float64)
    t1, n = p.shape[0], p.shape[1]
    tg = np.asarray(targets, np.float64)
    cm = crowd_metrics(p, tg, radius, height, dt, reach=reach)
    dist = np.linalg.norm(p - tg[None], axis=2)
    arrived = dist <= reach
    ever = arrived.any(axis=0)
    first = np.where(ever, np.argmax(arrived, axis=0), t1 - 1)
    at = first[ever] * dt
    # path over shortest
    seg = np.linalg.norm(np.diff(p, axis=0), axis=2)
    walked = np.concatenate([np.zeros((1, n)), np.cumsum(seg, axis=0)])
    sh = np.asarray(shortest, np.float64)
    sel = np.flatnonzero(ever & (sh > 1e-6))
    ratios = (walked[first[sel], sel] + dist[first[sel], sel]) / sh[sel]
    # smoothness, xz, until arrival
    xz = p[:, :, [0, 2]]
    acc_sum = jerk_sum = 0.0
    acc_n = jerk_n = 0
    vmax = 0.0
    if t1 >= 2:
        v = np.diff(xz, axis=0) / dt
        vmax = float(np.linalg.norm(v, axis=2).max()) if v.size else 0.0
    for i in range(n):
        m = int(first[i]) + 1
        q = xz[:m, i]
        if q.shape[0] >= 3:
            a = np.diff(q, 2, axis=0) / (dt * dt)
            acc_sum += float(np.linalg.norm(a, axis=1).sum())
            acc_n += a.shape[0]
        if q.shape[0] >= 4:
            j = np.diff(q, 3, axis=0) / (dt**3)
            jerk_sum += float(np.linalg.norm(j, axis=1).sum())
            jerk_n += j.shape[0]
    if all_positions is None or all_radius is None or all_height is None:
        bodies, br, bh = p, np.broadcast_to(radius, (n,)), np.broadcast_to(height, (n,))
    else:
        bodies, br, bh = np.asarray(all_positions), all_radius, all_height
    tot, worst, cnt, frames = _frame_overlaps(
        bodies, np.asarray(br, np.float64), np.asarray(bh, np.float64)
    )
    ms = np.asarray(update_ms, np.float64)
    return ScenarioMetrics(
        agents=n,
        seconds=(t1 - 1) * dt,
        arrival_fraction=cm.arrival_fraction,
        arrival_time_mean=float(at.mean()) if at.size else None,
        arrival_time_max=float(at.max()) if at.size else None,
        overlap_mean=tot / cnt if cnt else 0.0,
        overlap_worst=float(worst),
        overlap_frames=frames / t1,
        stuck=cm.stuck,
        path_over_shortest=float(ratios.mean()) if ratios.size else None,
        accel_mean=acc_sum / acc_n if acc_n else 0.0,
        jerk_mean=jerk_sum / jerk_n if jerk_n else 0.0,
        speed_max=vmax,
        ms_per_update=float(ms.mean()) if ms.size else 0.0,
    )
