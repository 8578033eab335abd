"""navkit.crowd.metrics on hand-made trajectories with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from navkit.crowd.metrics import crowd_metrics
from navkit.errors import InputError

DT = 0.1


def still(points, steps: int) -> np.ndarray:
    """(steps + 1, N, 3): agents that never move."""
    return np.repeat(np.asarray(points, np.float64)[None], steps + 1, axis=0)


def test_two_agents_overlapping_by_a_known_amount():
    # radius 0.5 each, xz distance 0.7: penetration 0.3 = 0.6 of a radius, every step
    traj = still([[0, 0, 0], [0.7, 0, 0]], 4)
    m = crowd_metrics(traj, traj[0], 0.5, 2.0, DT)
    assert m.overlap_samples == 5
    assert m.mean_overlap == pytest.approx(0.6, abs=1e-6)
    assert m.worst_overlap == pytest.approx(0.6, abs=1e-6)


def test_overlap_mean_and_worst_over_steps_and_pairs():
    # steps: distance 0.9 (0.2 of a radius), 1.0 (touching: no overlap), 0.5 (1.0)
    traj = np.zeros((3, 2, 3))
    traj[:, 1, 2] = [0.9, 1.0, 0.5]
    m = crowd_metrics(traj, traj[0], 0.5, 2.0, DT)
    assert m.overlap_samples == 2
    assert m.mean_overlap == pytest.approx(0.6, abs=1e-6)
    assert m.worst_overlap == pytest.approx(1.0, abs=1e-6)


def test_no_overlap_across_storeys_or_apart():
    # same xz, 3 m apart in height (height 2): no overlap; a third agent far away
    traj = still([[0, 0, 0], [0, 3, 0], [5, 0, 5]], 2)
    m = crowd_metrics(traj, traj[0], 0.5, 2.0, DT)
    assert (m.overlap_samples, m.mean_overlap, m.worst_overlap) == (0, 0.0, 0.0)


def test_unequal_radii_overlap_is_fraction_of_the_mean_radius():
    traj = still([[0, 0, 0], [1.0, 0, 0]], 1)
    m = crowd_metrics(traj, traj[0], np.array([0.4, 0.8]), 2.0, DT)
    # ri + rj = 1.2, d = 1.0: 0.2 / 0.6
    assert m.worst_overlap == pytest.approx(0.2 / 0.6, abs=1e-6)


def test_agent_that_never_moves_is_stuck():
    traj = still([[0, 0, 0]], 100)  # 10 s at 0.1 s
    m = crowd_metrics(traj, [[10, 0, 0]], 0.5, 2.0, DT)
    assert m.stuck == 1
    assert m.arrival_fraction == 0.0
    assert m.path_ratio_agents == 0 and m.path_ratio_mean is None


def test_still_agent_is_not_stuck_when_unreachable_or_arrived_or_run_too_short():
    traj = still([[0, 0, 0], [20, 0, 0]], 100)
    targets = [[10, 0, 0], [20.5, 0, 0]]  # the second has arrived
    m = crowd_metrics(traj, targets, 0.5, 2.0, DT, reachable=[False, True])
    assert m.stuck == 0 and m.reachable == 1
    assert m.arrival_fraction == 0.5
    short = still([[0, 0, 0]], 40)  # 4 s < 5 s
    assert crowd_metrics(short, [[10, 0, 0]], 0.5, 2.0, DT).stuck == 0


def test_walking_agent_arrives_not_stuck_with_path_ratio():
    # walks 1 m/s along x to a target 10 m away, then along a detour: ratio known
    t = np.arange(101) * DT
    traj = np.zeros((101, 1, 3))
    traj[:, 0, 0] = np.minimum(t, 10.0)
    m = crowd_metrics(traj, [[10, 0, 0]], 0.5, 2.0, DT)
    assert m.stuck == 0 and m.arrival_fraction == 1.0
    assert m.path_ratio_mean == pytest.approx(1.0)
    # an L-shaped walk: 6 m along z then 8 m along x to a target at (8, 0, 6): 14 / 10
    pts = [(0, 0, z) for z in np.linspace(0, 6, 61)] + [(x, 0, 6) for x in np.linspace(0, 8, 81)]
    traj = np.array(pts, np.float64)[:, None, :]
    m = crowd_metrics(traj, [[8, 0, 6]], 0.5, 2.0, DT)
    assert m.path_ratio_mean == pytest.approx(1.4, abs=1e-6)


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="trajectory"):
        crowd_metrics(np.zeros((3, 2)), np.zeros((2, 3)), 0.5, 2.0, DT)
    with pytest.raises(InputError, match="targets"):
        crowd_metrics(np.zeros((3, 2, 3)), np.zeros((3, 3)), 0.5, 2.0, DT)
    with pytest.raises(InputError, match="radius"):
        crowd_metrics(np.zeros((3, 2, 3)), np.zeros((2, 3)), 0.0, 2.0, DT)
    with pytest.raises(InputError, match="dt"):
        crowd_metrics(np.zeros((3, 2, 3)), np.zeros((2, 3)), 0.5, 2.0, 0.0)
