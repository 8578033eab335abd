"""Movement requests with callbacks (navkit.crowd.requests) on the bundled dungeon."""

from __future__ import annotations

import numpy as np
import pytest

import navkit
import navkit.data
from navkit.crowd import AgentParams
from navkit.crowd.agents import TARGET_NONE, TARGET_VALID
from navkit.errors import InputError

DT = 1 / 30
MAX_STEPS = 1500


MODE = "dtcrowd"


@pytest.fixture(params=["dtcrowd", "navkit"], autouse=True)
def mode(request):
    """Every test runs in both crowd modes (navkit mode: navkit.crowd.replan)."""
    global MODE
    MODE = request.param
    yield MODE
    MODE = "dtcrowd"


@pytest.fixture(scope="module")
def navmesh():
    return navkit.bake(navkit.load_obj(navkit.data.path("dungeon.obj")), navkit.BakeConfig())


def _pairs(navmesh, want_partial: bool, lo: float, hi: float):
    """Deterministic (start, target, target_ref) pairs with a complete/partial A* path."""
    q = navkit.NavMeshQuery(navmesh)
    for i in range(400):
        a = q.find_random_point(rng=2 * i)
        b = q.find_random_point(rng=2 * i + 1)
        d = float(np.hypot(*(a.point - b.point)[[0, 2]]))
        if not lo <= d <= hi:
            continue
        pc = q.find_path(a.ref, b.ref, a.point, b.point)
        if pc.partial == want_partial and len(pc.polys) > 1:
            yield a.point, b.point, b.ref


def _crowd(navmesh, start):
    crowd = navkit.Crowd(navmesh, 4, 0.6, mode=MODE)
    h = crowd.add_agent(start, AgentParams(radius=0.6, max_speed=3.5, max_acceleration=8.0))
    return crowd, h


def _run(crowd, stop, steps=MAX_STEPS):
    for _ in range(steps):
        for k in crowd.timings:  # a callback run inside a phase would see a -1
            crowd.timings[k] = -1.0
        crowd.update(DT)
        if stop():
            return True
    return False


def _logger(crowd, log, result=None, blocked=None, done=None):
    def check():
        assert all(v >= 0 for v in crowd.timings.values()), crowd.timings

    def on_result(h, path):
        check()
        assert path.dtype == np.int64 and path.ndim == 1 and len(path) >= 1
        log.append(("result", h))
        return result

    def on_blocked(h):
        check()
        log.append(("blocked", h))
        return blocked

    def on_done(h):
        check()
        log.append(("done", h))
        return done(h) if callable(done) else done

    return dict(on_result=on_result, on_blocked=on_blocked, on_done=on_done)


def test_callbacks_fire_once_in_order(navmesh):
    start, target, _ = next(_pairs(navmesh, False, 5.0, 15.0))
    crowd, h = _crowd(navmesh, start)
    assert crowd.request_status(h) == "none"
    log: list = []
    crowd.request_move_target(h, target, **_logger(crowd, log))
    assert crowd.request_status(h) == "pending"
    seen = []
    assert _run(crowd, lambda: seen.extend(crowd.events()) or crowd.request_status(h) == "done")
    assert log == [("result", h), ("done", h)]
    assert seen == [(h, "result"), (h, "done")]
    # on_done returned None: the request ended, the target was reset
    s = crowd.slot(h)
    assert crowd.target_states[s] == TARGET_NONE
    _run(crowd, lambda: False, 60)
    assert log == [("result", h), ("done", h)] and crowd.events() == []


def test_arrival_is_near_the_target(navmesh):
    start, target, _ = next(_pairs(navmesh, False, 5.0, 15.0))
    crowd, h = _crowd(navmesh, start)
    crowd.request_move_target(h, target)  # no callbacks: pollable only, nothing reset
    assert _run(crowd, lambda: crowd.request_status(h) == "done")
    s = crowd.slot(h)
    near = crowd.query.find_nearest_poly(target, crowd.half_extents).point
    assert np.hypot(*(crowd.positions[s] - near)[[0, 2]]) <= 0.5 + 1e-4
    assert crowd.target_states[s] == TARGET_VALID  # without on_done the target stays


def test_on_done_keep_following(navmesh):
    pairs = _pairs(navmesh, False, 5.0, 15.0)
    start, target, _ = next(pairs)
    crowd, h = _crowd(navmesh, start)
    log: list = []
    crowd.request_move_target(h, target, **_logger(crowd, log, done=True))
    assert _run(crowd, lambda: crowd.request_status(h) == "done")
    _run(crowd, lambda: False, 90)  # stays at the goal: done does not fire again
    assert log == [("result", h), ("done", h)]
    assert crowd.target_states[crowd.slot(h)] == TARGET_VALID  # request kept alive
    # the target moves: the caller re-requests from on_done and the agent follows
    targets = [target + np.float32([0.0, 0.0, 0.0])]
    later = [p for p, _, _ in [next(pairs) for _ in range(3)]]
    moved = []

    def follow(hh):
        if later:
            nxt = later.pop(0)
            moved.append(nxt)
            crowd.request_move_target(hh, nxt, **_logger(crowd, log, done=follow))
        return True

    crowd.request_move_target(h, targets[0] + np.float32([0.01, 0, 0]),
                              **_logger(crowd, log, done=follow))  # fmt: skip
    assert _run(crowd, lambda: not later and crowd.request_status(h) == "done", 4 * MAX_STEPS)
    assert [e for e, _ in log].count("done") == 2 + len(moved)
    assert crowd.target_states[crowd.slot(h)] == TARGET_VALID


def test_refuse_partial_path(navmesh):
    start, target, _ = next(_pairs(navmesh, True, 3.0, 40.0))
    crowd, h = _crowd(navmesh, start)
    log: list = []
    crowd.request_move_target(h, target, **_logger(crowd, log, result=False))
    assert _run(crowd, lambda: crowd.request_status(h) != "pending")
    assert log == [("result", h)]
    assert crowd.request_status(h) == "failed"
    assert crowd.target_states[crowd.slot(h)] == TARGET_NONE
    _run(crowd, lambda: False, 30)
    assert log == [("result", h)]
    # accepting it instead: status "partial", then done at the end of the partial path
    log.clear()
    crowd.request_move_target(h, target, **_logger(crowd, log, result=True))
    assert _run(crowd, lambda: crowd.request_status(h) != "pending")
    assert crowd.request_status(h) == "partial" and log == [("result", h)]


@pytest.mark.parametrize("keep_going", [False, True])
def test_blocked_target(navmesh, keep_going):
    q = navkit.NavMeshQuery(navmesh)
    box = np.float32([2.5, 2.0, 2.5])
    for start, target, _ in _pairs(navmesh, False, 10.0, 25.0):
        off, _ = q.query_polygons(target, box)
        sref = q.find_nearest_poly(start, [1, 1, 1]).ref
        if sref not in set(off.tolist()):
            break
    crowd, h = _crowd(navmesh, start)
    log: list = []
    crowd.request_move_target(h, target, **_logger(crowd, log, blocked=keep_going))
    assert _run(crowd, lambda: crowd.request_status(h) == "moving")
    _run(crowd, lambda: False, 10)
    flags = {int(r): navmesh.get_poly_flags(int(r)) for r in off}
    try:
        for r in flags:  # the target polygon and all around it: no local fix
            navmesh.set_poly_flags(r, 0)
        assert _run(crowd, lambda: crowd.request_status(h) not in ("moving", "partial"))
        assert log == [("result", h), ("blocked", h)]
        if keep_going:
            assert _run(crowd, lambda: crowd.request_status(h) == "done")
            assert log == [("result", h), ("blocked", h), ("done", h)]
            s = crowd.slot(h)
            assert crowd.agents.c_path[s, 0] not in flags
        else:
            assert crowd.request_status(h) == "blocked"
            assert crowd.target_states[crowd.slot(h)] == TARGET_NONE
            _run(crowd, lambda: False, 30)
            assert log == [("result", h), ("blocked", h)]
    finally:
        for r, f in flags.items():
            navmesh.set_poly_flags(r, f)


def test_velocity_and_reset(navmesh):
    start, target, ref = next(_pairs(navmesh, False, 5.0, 15.0))
    crowd, h = _crowd(navmesh, start)
    crowd.request_move_target(h, ref, target)  # Detour's positional form still works
    assert crowd.request_status(h) == "pending"
    crowd.request_move_velocity(h, [1.0, 0.0, 0.0])
    assert crowd.request_status(h) == "moving"
    crowd.update(DT)
    assert crowd.events() == []
    crowd.reset_move_target(h)
    assert crowd.request_status(h) == "none"


def test_bad_requests(navmesh):
    start, _, _ = next(_pairs(navmesh, False, 5.0, 15.0))
    crowd, h = _crowd(navmesh, start)
    with pytest.raises(InputError, match="not on the navmesh"):
        crowd.request_move_target(h, [1e4, 1e4, 1e4])
    with pytest.raises(InputError, match="on_done"):
        crowd.request_move_target(h, start, on_done=3)
    with pytest.raises(InputError, match="target"):
        crowd.request_move_target(h, [np.nan, 0, 0])
    assert crowd.request_status(h) == "none"
