"""scenario_metrics on hand-made trajectories with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from navkit.scenarios.metrics import scenario_metrics


def test_straight_walk_and_a_known_overlap():
    dt, steps = 0.1, 50
    t = np.arange(steps + 1) * dt
    traj = np.zeros((steps + 1, 2, 3), np.float32)
    traj[:, 0, 0] = np.minimum(t * 1.0, 3.0)  # 1 m/s along x, stops at x = 3 (t = 3 s)
    traj[:, 1] = (2.5, 0.0, 0.3)  # agent 1 stands at its target, next to agent 0's path
    targets = np.array([[3.0, 0.0, 0.0], [2.5, 0.0, 0.3]], np.float32)
    m = scenario_metrics(
        traj, targets, np.array([3.0, 0.0]), 0.3, 2.0, dt, np.full(steps, 0.5), reach=0.25
    )
    assert m.agents == 2 and m.seconds == pytest.approx(5.0)
    assert m.arrival_fraction == 1.0
    # agent 0 within 0.25 m of x = 3 from t = 2.8 s; agent 1 from the start
    assert m.arrival_time_max == pytest.approx(2.8) and m.arrival_time_mean == pytest.approx(1.4)
    assert m.path_over_shortest == pytest.approx(1.0, abs=1e-6)  # agent 1: no shortest length
    # agent 0 passes x = 2.5 at distance 0.3: overlap (0.6 - 0.3) / 0.3
    assert m.overlap_worst == pytest.approx((0.6 - 0.3) / 0.3, rel=1e-5)
    frames = sum(np.hypot(traj[k, 0, 0] - 2.5, 0.3) < 0.6 * (1 - 0.01 / 2) for k in range(51))
    assert m.overlap_frames == pytest.approx(frames / (steps + 1))
    # constant velocity until arrival: no acceleration, no jerk
    assert m.accel_mean == pytest.approx(0.0, abs=1e-4)
    assert m.jerk_mean == pytest.approx(0.0, abs=1e-2)
    assert m.speed_max == pytest.approx(1.0, rel=1e-5)
    assert m.ms_per_update == 0.5 and m.stuck == 0


def test_acceleration_and_jerk_of_a_parabola():
    dt, steps = 0.05, 40
    t = np.arange(steps + 1) * dt
    traj = np.zeros((steps + 1, 1, 3))
    traj[:, 0, 0] = 0.5 * 2.0 * t**2  # a = 2 m/s^2, jerk 0
    m = scenario_metrics(traj, [[100.0, 0.0, 0.0]], [100.0], 0.3, 2.0, dt, [1.0])
    assert m.arrival_fraction == 0.0 and m.arrival_time_mean is None
    assert m.path_over_shortest is None
    assert m.accel_mean == pytest.approx(2.0, rel=1e-6)
    assert m.jerk_mean == pytest.approx(0.0, abs=1e-6)
