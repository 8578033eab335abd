"""navkit.Follower: chasing, throttled replanning, staying on the navmesh, ledge drops."""

from __future__ import annotations

import numpy as np
import pytest

import navkit
from navkit.crowd.follower import Follower, FollowerParams
from navkit.errors import ConfigError, InputError
from navkit.scenarios.geometry import level

DT = 1 / 30


@pytest.fixture(scope="module")
def crossing():
    return level("crossing")


@pytest.fixture(scope="module")
def ledge():
    return level("ledge")


def on_navmesh(q, p) -> bool:
    """p lies on a polygon's surface: over it (or on its outline) in xz, within 0.3 wu
    of its height."""
    near = q.find_nearest_poly(p, (0.01, 1.0, 0.01))
    d = np.hypot(float(near.point[0] - p[0]), float(near.point[2] - p[2]))
    return bool(near.ref) and d <= 1e-3 and abs(float(near.point[1] - p[1])) <= 0.3


def route_crossing(t: float) -> np.ndarray:
    """A target walking at 1.2 m/s from the west arm round the corner into the north arm,
    then standing still."""
    s = min(t * 1.2, 12.0 + 12.0)
    if s <= 12.0:
        return np.array([-12.0 + s, 0.0, 0.0], np.float32)
    return np.array([0.0, 0.0, -(s - 12.0)], np.float32)


def chase(nm, fol: Follower, target, seconds: float, dt: float = DT):
    q = navkit.NavMeshQuery(nm)
    steps = []
    for k in range(int(round(seconds / dt))):
        tg = target((k + 1) * dt)
        st = fol.update(dt, tg)
        steps.append((st, tg))
        assert on_navmesh(q, st.position), (k, st.position)
    return steps


def test_reaches_a_moving_target(crossing):
    # start down the south arm: the target is round a corner, so the ray is blocked at first
    fol = Follower(crossing, (0.0, 0.0, 12.0), FollowerParams(max_speed=2.0, max_acceleration=4.0))
    steps = chase(crossing, fol, route_crossing, 30.0)
    modes = {st.mode for st, _ in steps}
    assert {"path", "direct"} <= modes  # it followed path points and then saw the target
    st, tg = steps[-1]
    d = float(np.linalg.norm(st.position - tg))
    assert d <= fol.params.catch_up_distance + 1e-6
    assert st.mode == "idle" and np.linalg.norm(st.velocity) < 1e-3  # stopped near it
    # it kept up while the target walked (never farther than the start gap plus a margin)
    gaps = [float(np.linalg.norm(s.position - t)) for s, t in steps]
    assert max(gaps[int(12 / DT) :]) < 8.0


@pytest.mark.parametrize("interval", [0.5, 1.25])
def test_replans_no_more_often_than_the_threshold(crossing, interval):
    # the target keeps moving out of sight: every due update wants a new path
    def zigzag(t: float) -> np.ndarray:
        return np.array([-12.0 + 2.0 * np.sin(t), 0.0, 1.5 * np.cos(2 * t)], np.float32)

    p = FollowerParams(max_speed=1.0, replan_interval=interval)
    fol = Follower(crossing, (0.0, 0.0, 12.0), p)
    steps = chase(crossing, fol, zigzag, 8.0)
    assert all(st.mode == "path" for st, _ in steps[:30])  # the target stays hidden at first
    times = np.array(fol.query_times)
    assert fol.path_queries == len(times) >= 3  # it did replan
    assert np.all(np.diff(times) >= interval - 1e-9)
    assert fol.path_queries <= 1 + 8.0 / interval + 1e-9


def test_replan_only_when_the_target_moved(crossing):
    fol = Follower(crossing, (0.0, 0.0, 12.0), FollowerParams(max_speed=1.5))
    still = np.array([-12.0, 0.0, 0.0], np.float32)  # round the corner, not moving
    chase(crossing, fol, lambda t: still, 5.0)
    assert fol.path_queries == 1


def test_speed_and_acceleration_limits(crossing):
    p = FollowerParams(max_speed=2.0, max_acceleration=3.0)
    fol = Follower(crossing, (0.0, 0.0, 12.0), p)
    vel = [fol.velocity.copy()] + [
        st.velocity for st, _ in chase(crossing, fol, route_crossing, 12)
    ]
    v = np.array(vel, np.float64)
    assert np.linalg.norm(v, axis=1).max() <= p.max_speed * (1 + 1e-5)
    dv = np.linalg.norm(np.diff(v, axis=0), axis=1)
    assert dv.max() <= p.max_acceleration * DT * (1 + 1e-4) + 1e-6
    assert dv.max() >= 0.9 * p.max_acceleration * DT  # the limit was reached, so it was tested


def test_stop_and_catch_up_distances(crossing):
    p = FollowerParams(stop_distance=1.0, catch_up_distance=3.0, max_speed=2.0)
    fol = Follower(crossing, (0.0, 0.0, 5.0), p)
    tg = np.array([0.0, 0.0, 0.0], np.float32)
    for _ in range(int(6 / DT)):
        st = fol.update(DT, tg)
    assert st.mode == "idle" and np.linalg.norm(st.velocity) < 1e-3
    assert 0.5 <= np.linalg.norm(st.position - tg) <= 1.05
    # moving away by less than the catch-up distance: it stays put
    tg2 = tg + np.float32([0.0, 0.0, -1.5])
    pos = fol.update(DT, tg2).position
    for _ in range(30):
        st = fol.update(DT, tg2)
    assert st.mode == "idle" and np.allclose(st.position, pos, atol=1e-3)
    # beyond it: it follows again
    tg3 = tg + np.float32([0.0, 0.0, -4.0])
    assert fol.update(DT, tg3).mode == "direct"


def walk_to(nm, p: FollowerParams, start, target, seconds=25.0):
    fol = Follower(nm, start, p)
    q = navkit.NavMeshQuery(nm)
    walked, trace = 0.0, [fol.position.copy()]
    tg = np.asarray(target, np.float32)
    for _ in range(int(seconds / DT)):
        prev = fol.position.copy()
        st = fol.update(DT, tg)
        walked += float(np.linalg.norm((st.position - prev)[[0, 2]]))
        trace.append(st.position)
        assert on_navmesh(q, st.position), st.position
        if st.mode == "idle":
            break
    return fol, walked, np.array(trace)


def test_ignore_height_takes_the_shorter_drop(ledge):
    # platform (y 1.5) at x < 0, floor at x > 0, a ramp down at z in [6, 10]
    start, target = (-3.0, 1.5, -5.0), (3.0, 0.0, -5.0)
    base = dict(stop_distance=0.5, catch_up_distance=0.6)
    stairs, walked_s, tr_s = walk_to(ledge, FollowerParams(**base), start, target)
    drop, walked_d, tr_d = walk_to(ledge, FollowerParams(ignore_height=True, **base), start, target)
    assert stairs.drops == 0 and stairs.path_queries >= 1
    assert tr_s[:, 2].max() > 6.0  # went round by the ramp
    assert drop.drops == 1 and drop.path_queries == 0  # the height-ignoring ray was clear
    assert tr_d[:, 2].max() < -4.0  # straight across
    assert walked_d < 8.0 < 20.0 < walked_s
    for fol in (stairs, drop):
        assert np.linalg.norm(fol.position - np.float32(target)) <= 0.6


def test_ignore_height_never_climbs(ledge):
    # from the floor to the platform: the ray is blocked (no drop), the ramp is taken
    fol, walked, tr = walk_to(
        ledge, FollowerParams(ignore_height=True, stop_distance=0.5, catch_up_distance=0.6),
        (3.0, 0.0, -5.0), (-3.0, 1.5, -5.0),
    )  # fmt: skip
    assert fol.drops == 0 and fol.path_queries >= 1 and tr[:, 2].max() > 6.0
    assert abs(float(fol.position[1]) - 1.5) < 0.3


def test_attached_to_a_crowd(crossing):
    crowd = navkit.Crowd(crossing, 4, 0.3)
    h = crowd.add_agent((0.0, 0.0, 12.0), navkit.AgentParams(radius=0.3, max_speed=2.0))
    fol = Follower(crossing, (0.0, 0.0, 12.0), FollowerParams(max_speed=2.0)).attach(crowd, h)
    assert fol.attached
    q = navkit.NavMeshQuery(crossing)
    for k in range(int(30 / DT)):
        tg = route_crossing((k + 1) * DT)
        st = fol.update(DT, tg)
        assert np.allclose(crowd.target_states[crowd.slot(h)], 6)  # a velocity request
        crowd.update(DT)
        assert on_navmesh(q, crowd.positions[crowd.slot(h)])
    assert np.linalg.norm(crowd.positions[crowd.slot(h)] - tg) <= 2.0 + 0.1
    assert st.mode == "idle" and fol.path_queries >= 1


def test_bad_input(crossing):
    with pytest.raises(ConfigError):
        FollowerParams(stop_distance=3.0, catch_up_distance=1.0)
    with pytest.raises(ConfigError):
        FollowerParams(max_speed=-1.0)
    with pytest.raises(InputError):
        Follower(crossing, (500.0, 0.0, 0.0))
    with pytest.raises(InputError):
        Follower("not a navmesh", (0.0, 0.0, 0.0))
    fol = Follower(crossing, (0.0, 0.0, 12.0))
    with pytest.raises(InputError):
        fol.update(0.0, (0, 0, 0))
    with pytest.raises(InputError):
        fol.update(DT, (np.nan, 0, 0))
    # a target off the navmesh: the follower slows down and says so
    assert fol.update(DT, (500.0, 0.0, 0.0)).mode == "lost"


def test_ignore_height_does_not_pass_walls_at_the_same_level():
    # two rooms at the same height, a wall between them with a 1 m door at z = 0
    nm = level("bottleneck")
    p = FollowerParams(ignore_height=True, stop_distance=0.5, catch_up_distance=0.6)
    fol, walked, tr = walk_to(nm, p, (-3.0, 0.0, 3.0), (3.0, 0.0, 3.0))
    assert fol.drops == 0 and fol.path_queries >= 1
    crossing = tr[np.argmin(np.abs(tr[:, 0]))]  # where it passed x = 0
    assert abs(float(crossing[2])) < 0.5  # through the door
    assert np.linalg.norm(fol.position - np.float32([3.0, 0.0, 3.0])) <= 0.6
