"""navkit's own crowd mode (``Crowd(..., mode="navkit")``, navkit.crowd.replan) on the
bundled dungeon: doors (polygon flags switched off and on under a walking agent),
tiles rebuilt by a tile-cache obstacle, partial paths that open later, a door that
keeps opening and closing, and the per-update iteration budget of path requests."""

from __future__ import annotations

import numpy as np
import pytest

import navkit
import navkit.data
from navkit.crowd import AgentParams
from navkit.crowd.agents import TARGET_NONE, TARGET_REQUESTING, TARGET_VALID
from navkit.errors import ConfigError, InputError

DT = 1 / 30
SOLO = AgentParams(update_flags=0, collision_query_range=0.01)  # agents ignore each other


@pytest.fixture(scope="module")
def mesh():
    return navkit.load_obj(navkit.data.path("dungeon.obj"))


@pytest.fixture(scope="module")
def navmesh(mesh):
    return navkit.bake(mesh, navkit.BakeConfig())


def _doors(navmesh):
    """(start, target, door) with a complete path whose polygon ``door`` (5th or later)
    is a chokepoint: with its flags off, the target is unreachable."""
    q = navkit.NavMeshQuery(navmesh)
    for i in range(300):
        a = q.find_random_point(rng=2 * i)
        b = q.find_random_point(rng=2 * i + 1)
        pc = q.find_path(a.ref, b.ref, a.point, b.point)
        if pc.partial or len(pc.polys) < 10:
            continue
        for k in range(4, len(pc.polys) - 3):
            door = int(pc.polys[k])
            with _closed(navmesh, door):
                shut = q.find_path(a.ref, b.ref, a.point, b.point).partial
            if shut:
                yield a.point, b.point, door
                break


class _closed:
    """Context manager: the door polygon's flags are 0 inside."""

    def __init__(self, navmesh, door: int) -> None:
        self.navmesh, self.door = navmesh, door
        self.flags = navmesh.get_poly_flags(door)

    def set(self, closed: bool) -> None:
        self.navmesh.set_poly_flags(self.door, 0 if closed else self.flags)

    def __enter__(self):
        self.set(True)
        return self

    def __exit__(self, *exc) -> None:
        self.set(False)


def _assert_on_mesh(crowd, q, extra_polys=()):
    """Every agent stands on a polygon (within 1e-3 wu in xz, 0.5 wu in y)."""
    for s in np.flatnonzero(crowd.active).tolist():
        p = crowd.positions[s]
        best = np.inf
        near = q.find_nearest_poly(p, [0.5, 2.0, 0.5])
        cands = ([near.ref] if near.ref else []) + list(extra_polys)
        for ref in cands:
            c, _ = q.closest_point_on_poly(int(ref), p)
            if abs(float(c[1] - p[1])) <= 0.5:
                best = min(best, float(np.hypot(c[0] - p[0], c[2] - p[2])))
        assert best <= 1e-3, f"agent {s} at {p.tolist()} is off the navmesh ({best})"


def _logger(log, blocked=True, done=None):
    return dict(
        on_result=lambda h, path: log.append("result") or True,
        on_blocked=lambda h: log.append("blocked") or blocked,
        on_done=lambda h: log.append("done") or done,
    )


def _corridor(crowd, s):
    return crowd.agents.c_path[s, : crowd.agents.c_npath[s]].tolist()


# -- the door -----------------------------------------------------------------------------
@pytest.mark.parametrize("keep_going", [True, False])
def test_door_closes_blocked_then_opens_arrival(navmesh, keep_going):
    start, target, door = next(_doors(navmesh))
    q = navkit.NavMeshQuery(navmesh)
    crowd = navkit.Crowd(navmesh, 2, 0.6, mode="navkit")
    h = crowd.add_agent(start, AgentParams())
    s = crowd.slot(h)
    log: list = []
    crowd.request_move_target(h, target, **_logger(log, keep_going))
    door_ctl = _closed(navmesh, door)
    try:
        for _ in range(900):  # walk until the door is 1-3 polygons ahead
            crowd.update(DT)
            if door in _corridor(crowd, s)[1:4]:
                break
        assert log == ["result"] and crowd.request_status(h) == "moving"
        door_ctl.set(True)
        for _ in range(240):  # 8 s closed: blocked, walks to the door and waits there
            crowd.update(DT)
            _assert_on_mesh(crowd, q, [door])
            assert crowd.agents.c_path[s, 0] != door
        assert log == ["result", "blocked"]
        assert crowd.request_status(h) == "blocked"
        rp = crowd.replanner
        assert rp.replans[s] == 1 and rp.local_fixes[s] == 0  # no local fix for a chokepoint
        if not keep_going:
            assert crowd.target_states[s] == TARGET_NONE
            door_ctl.set(False)
            for _ in range(150):
                crowd.update(DT)
            assert log == ["result", "blocked"] and crowd.request_status(h) == "blocked"
            return
        assert crowd.target_states[s] == TARGET_VALID
        assert float(np.hypot(*crowd.velocities[s][[0, 2]])) < 0.2  # waiting at the door
        door_ctl.set(False)  # no event: the periodic retry notices it
        reopened = None
        for i in range(1800):
            crowd.update(DT)
            _assert_on_mesh(crowd, q)
            if reopened is None and crowd.request_status(h) == "moving":
                reopened = i
                assert door in _corridor(crowd, s)
            if "done" in log:
                break
        assert reopened is not None and reopened * DT <= 2.0 + 0.1  # retry: 1.5 +- 0.5 s
        assert log == ["result", "blocked", "done"]
        assert rp.route_switches[s] == 1
    finally:
        door_ctl.set(False)


def test_dtcrowd_mode_does_not_report_the_door(navmesh):
    """dtCrowd replans onto a partial path silently (the contrast with navkit mode)."""
    start, target, door = next(_doors(navmesh))
    crowd = navkit.Crowd(navmesh, 2, 0.6)
    assert crowd.mode == "dtcrowd" and crowd.replanner is None
    h = crowd.add_agent(start, AgentParams())
    s = crowd.slot(h)
    log: list = []
    crowd.request_move_target(h, target, **_logger(log))
    with _closed(navmesh, door) as door_ctl:
        door_ctl.set(False)
        for _ in range(900):
            crowd.update(DT)
            if door in _corridor(crowd, s)[1:4]:
                break
        door_ctl.set(True)
        for _ in range(120):
            crowd.update(DT)
        assert "blocked" not in log and crowd.agents.partial[s]


def test_partial_path_retries_and_takes_the_route(navmesh):
    start, target, door = next(_doors(navmesh))
    q = navkit.NavMeshQuery(navmesh)
    for notify in (False, True):
        crowd = navkit.Crowd(navmesh, 2, 0.6, mode="navkit")
        h = crowd.add_agent(start, AgentParams())
        s = crowd.slot(h)
        log: list = []
        with _closed(navmesh, door) as door_ctl:
            # on_done True: arrived at the end of the partial path, keep the request
            crowd.request_move_target(h, target, **_logger(log, done=True))
            for _ in range(240):  # 8 s: to the end of the partial path
                crowd.update(DT)
                _assert_on_mesh(crowd, q, [door])
            assert log == ["result", "done"] and crowd.request_status(h) == "done"
            assert crowd.replanner.route_switches[s] == 0
            door_ctl.set(False)
            if notify:  # the caller says which polygon changed: retried at once
                assert crowd.mark_changed([door]).tolist() == []  # not on its corridor
            steps = 0
            while crowd.agents.c_path[s, crowd.agents.c_npath[s] - 1] != crowd.agents.target_ref[s]:
                crowd.update(DT)
                steps += 1
                assert steps <= (8 if notify else 62), "the opened route was not taken"
            assert crowd.replanner.route_switches[s] == 1
            for _ in range(1800):
                crowd.update(DT)
                _assert_on_mesh(crowd, q)
                if log.count("done") == 2:
                    break
            assert log == ["result", "done", "done"]


@pytest.mark.parametrize("period", [2.0, 2.5, 3.0])
def test_flickering_door_does_not_trap_the_agent(navmesh, period):
    """A door that opens and closes every ``period`` s: the agent arrives, and switches
    route a bounded number of times (no back-and-forth between two routes)."""
    start, target, door = next(_doors(navmesh))
    q = navkit.NavMeshQuery(navmesh)
    crowd = navkit.Crowd(navmesh, 2, 0.6, mode="navkit")
    h = crowd.add_agent(start, AgentParams())
    s = crowd.slot(h)
    log: list = []
    with _closed(navmesh, door) as door_ctl:
        crowd.request_move_target(h, target, **_logger(log))
        closed, t, last = True, 0.0, 0.0
        for _ in range(int(60 / DT)):
            t += DT
            if t - last >= period:
                closed, last = not closed, t
                door_ctl.set(closed)
            crowd.update(DT)
            _assert_on_mesh(crowd, q, [door])
            if "done" in log:
                break
    assert log[-1] == "done", log
    assert log.count("blocked") <= 2
    assert crowd.replanner.route_switches[s] <= 4


def _two_routes(navmesh):
    """(start, target, door): with ``door`` shut a complete but longer route remains."""
    q = navkit.NavMeshQuery(navmesh)
    for i in range(200):
        a = q.find_random_point(rng=2 * i)
        b = q.find_random_point(rng=2 * i + 1)
        pc = q.find_path(a.ref, b.ref, a.point, b.point)
        if pc.partial or len(pc.polys) < 12:
            continue
        for k in range(5, len(pc.polys) - 3):
            door = int(pc.polys[k])
            with _closed(navmesh, door):
                other = q.find_path(a.ref, b.ref, a.point, b.point)
            if not other.partial and len(other.polys) > len(pc.polys) + 6:
                return a.point, b.point, door
    pytest.skip("no door with a longer way around on the sample paths")


@pytest.mark.parametrize("period", [1.0, 2.0, 2.5])
def test_flickering_door_with_a_way_around(period):
    """nav_test: a door on the short route, a complete longer route around it. The door
    flips every ``period`` s from the start: the agent arrives, never blocked, with a
    bounded number of route switches."""
    navmesh = navkit.bake(navkit.load_obj(navkit.data.path("nav_test.obj")), navkit.BakeConfig())
    start, target, door = _two_routes(navmesh)
    q = navkit.NavMeshQuery(navmesh)
    crowd = navkit.Crowd(navmesh, 2, 0.6, mode="navkit")
    h = crowd.add_agent(start, AgentParams())
    s = crowd.slot(h)
    log: list = []
    crowd.request_move_target(h, target, **_logger(log))
    door_ctl = _closed(navmesh, door)
    closed, t, last = False, 0.0, 0.0
    try:
        for _ in range(int(40 / DT)):
            t += DT
            if t - last >= period:
                closed, last = not closed, t
                door_ctl.set(closed)
            crowd.update(DT)
            _assert_on_mesh(crowd, q, [door])
            if "done" in log:
                break
    finally:
        door_ctl.set(False)
    assert log == ["result", "done"], log
    assert crowd.replanner.route_switches[s] <= 5


# -- tile cache ---------------------------------------------------------------------------
def test_tile_rebuild_replans_only_the_touched_agents(mesh):
    """An obstacle rebuilds the tiles in front of agent 0: exactly the agents whose
    corridor held a rebuilt polygon replan; the others walk on bit for bit as in a twin
    crowd on an untouched copy of the tile cache."""
    tc = navkit.TileCache.bake(mesh, navkit.BakeConfig(tile_size=48))
    twin_tc = navkit.TileCache.load(tc.to_bytes())
    n = 12

    def crowd_on(nm):
        q = navkit.NavMeshQuery(nm)
        crowd = navkit.Crowd(nm, 16, 0.6, mode="navkit")
        hs = []
        for i in range(n):
            a = q.find_random_point(rng=100 + 2 * i)
            b = q.find_random_point(rng=101 + 2 * i)
            hs.append(crowd.add_agent(a.point, SOLO))
            crowd.request_move_target(hs[-1], b.point)
        return crowd, hs, q

    crowd, hs, q = crowd_on(tc.navmesh)
    twin, twin_hs, _ = crowd_on(twin_tc.navmesh)
    unsubscribe = crowd.attach(tc)
    for _ in range(60):
        crowd.update(DT)
        twin.update(DT)
    assert np.array_equal(crowd.positions, twin.positions)
    a = crowd.agents
    ahead = a.corner_verts[0, 0] - a.npos[0]
    pos = a.npos[0] + 3.0 * ahead / np.linalg.norm(ahead) - np.float32([0, 0.5, 0])
    corridors = [set(_corridor(crowd, s)) for s in range(n)]
    tc.add_cylinder(pos, 1.0, 2.0)
    changes = tc.update()
    while not changes.up_to_date:
        changes = tc.update()
    rebuilt = set(changes.invalidated)
    touched = {s for s in range(n) if corridors[s] & rebuilt}
    assert 0 in touched and len(touched) < n
    under = {s for s in range(n) if int(crowd.agents.c_path[s, 0]) in rebuilt}
    assert 0 in under  # the tile under agent 0 itself was rebuilt
    assert set(np.flatnonzero(crowd.replanner.marked).tolist()) == touched  # the event
    for _ in range(600):
        crowd.update(DT)
        twin.update(DT)
        _assert_on_mesh(crowd, q)
        for s in set(range(n)) - touched:
            assert np.array_equal(crowd.positions[s], twin.positions[s])
        for s in touched:
            assert not rebuilt & set(_corridor(crowd, s))
    rp = crowd.replanner
    assert set(np.flatnonzero(rp.replans[:n]).tolist()) == touched
    assert [crowd.request_status(h) for h in hs] == [twin.request_status(h) for h in twin_hs]
    unsubscribe()
    tc.add_cylinder(pos + np.float32([0, 0, 4]), 1.0, 2.0)
    tc.update()
    crowd.update(DT)
    assert not rp.marked.any()  # unsubscribed: nobody marked


def test_distant_change_is_fixed_without_visible_change(navmesh):
    """Polygon flags switched off far ahead, with a detour around them: the corridor is
    repaired locally and the agent walks exactly as before while it is far away."""
    q = navkit.NavMeshQuery(navmesh)
    for i in range(300):
        a = q.find_random_point(rng=2 * i)
        b = q.find_random_point(rng=2 * i + 1)
        pc = q.find_path(a.ref, b.ref, a.point, b.point)
        if pc.partial or len(pc.polys) < 16:
            continue
        far = [int(r) for r in pc.polys[12:-2]]
        far = [r for r in far if _detour_exists(navmesh, q, a, b, r)]
        if far:
            break
    else:
        pytest.skip("no polygon with a detour around it on the sample paths")
    poly = far[0]
    runs = []
    for change in (False, True):
        crowd = navkit.Crowd(navmesh, 2, 0.6, mode="navkit")
        h = crowd.add_agent(a.point, AgentParams())
        crowd.request_move_target(h, b.point)
        crowd.update(DT)
        with _closed(navmesh, poly) as ctl:
            ctl.set(change)
            if change:
                assert crowd.mark_changed([poly]).tolist() == [crowd.slot(h)]
            track = []
            for _ in range(30):
                crowd.update(DT)
                track.append(crowd.positions[crowd.slot(h)].copy())
            runs.append((np.array(track), crowd.replanner, crowd.slot(h)))
    (plain, _, _), (changed, rp, s) = runs
    assert rp.replans[s] == 1 and rp.local_fixes[s] == 1
    assert np.array_equal(plain, changed)


def _detour_exists(navmesh, q, a, b, poly):
    with _closed(navmesh, poly):
        return not q.find_path(a.ref, b.ref, a.point, b.point).partial


# -- the budget ---------------------------------------------------------------------------
def test_thousand_requests_cost_a_bounded_number_of_iterations(navmesh):
    q = navkit.NavMeshQuery(navmesh)
    n, budget = 1000, 1000
    pts = [q.find_random_point(rng=i) for i in range(2 * n)]
    crowd = navkit.Crowd(navmesh, n, 0.6, mode="navkit", max_iterations_per_update=budget)
    hs = [crowd.add_agent(p.point, SOLO) for p in pts[:n]]
    for h, p in zip(hs, pts[n:]):
        crowd.request_move_target(h, p.ref, p.point)
    rp = crowd.replanner
    per_update = (budget - budget // 4) // rp.quick_iterations
    started = 0
    for _ in range(n // per_update + 2):
        crowd.update(DT)
        its = sum(rp.iterations.values())
        assert 0 < its <= budget, rp.iterations
        assert rp.requests_started <= per_update
        started += rp.requests_started
    assert started == n
    assert not (crowd.target_states[:n] == TARGET_REQUESTING).any()
    # dtcrowd mode: every requesting agent searches at once; the queue gets its 100
    crowd = navkit.Crowd(navmesh, n, 0.6)
    hs = [crowd.add_agent(p.point, SOLO) for p in pts[:n]]
    for h, p in zip(hs, pts[n:]):
        crowd.request_move_target(h, p.ref, p.point)
    crowd.update(DT)
    assert not (crowd.target_states[:n] == TARGET_REQUESTING).any()
    assert 0 < crowd.path_queue.last_iterations <= 100


# -- API ----------------------------------------------------------------------------------
def test_mode_switch(navmesh, mesh):
    with pytest.raises(ConfigError, match="mode"):
        navkit.Crowd(navmesh, 2, 0.6, mode="fast")
    with pytest.raises(ConfigError, match="replanning"):
        navkit.Crowd(navmesh, 2, 0.6, replanning=True)
    crowd = navkit.Crowd(navmesh, 2, 0.6)
    with pytest.raises(ConfigError, match="navkit"):
        crowd.mark_changed([1])
    tc = navkit.TileCache.bake(mesh, navkit.BakeConfig(tile_size=48))
    with pytest.raises(InputError, match="navmesh"):
        navkit.Crowd(navmesh, 2, 0.6, mode="navkit").attach(tc)
    off = navkit.Crowd(navmesh, 2, 0.6, mode="navkit", replanning=False)
    assert off.replanner is not None and not off.replanner.replanning
    with pytest.raises(ConfigError):
        off.attach(tc)
    nk = navkit.Crowd(navmesh, 2, 0.6, mode="navkit")
    with pytest.raises(InputError, match="poly refs"):
        nk.mark_changed(["door"])
    with pytest.raises(InputError, match="Changes"):
        nk.on_changes([1, 2])
    assert nk.mark_changed([]).tolist() == []
    with pytest.raises(InputError, match="max_iterations_per_update"):
        navkit.Crowd(navmesh, 2, 0.6, mode="navkit", max_iterations_per_update=0)


# -- a changing world ---------------------------------------------------------------------
def test_agents_stay_on_the_mesh_while_the_world_changes(mesh):
    """40 agents with RecastDemo's settings on a tile cache whose obstacles come and go
    every second, plus polygon flags toggled: no agent leaves the navmesh, a corridor
    holds a stale polygon only while its repair waits for budget (a few updates at
    most), and most agents arrive."""
    tc = navkit.TileCache.bake(mesh, navkit.BakeConfig(tile_size=48))
    nm = tc.navmesh
    q = navkit.NavMeshQuery(nm)
    crowd = navkit.Crowd(nm, 40, 0.6, mode="navkit")
    crowd.attach(tc)
    rng = np.random.default_rng(5)
    hs = []
    for i in range(40):
        a = q.find_random_point(rng=300 + i)
        hs.append(crowd.add_agent(a.point, AgentParams()))
        crowd.request_move_target(hs[-1], q.find_random_point(rng=400 + i).point)
    obstacles: list[int] = []
    flagged: dict[int, int] = {}
    done = set()
    stale_for = [0] * 40
    for step in range(900):
        if step % 30 == 0:
            if obstacles and rng.random() < 0.5:
                tc.remove(obstacles.pop(int(rng.integers(len(obstacles)))))
            s = int(rng.integers(40))
            if crowd.agents.ncorners[s] and len(obstacles) < 6:
                p = crowd.agents.corner_verts[s, 0] - np.float32([0, 0.5, 0])
                try:
                    obstacles.append(tc.add_cylinder(p, 0.8, 2.0))
                except InputError:
                    pass
            tc.update()
            for r, f in list(flagged.items()):  # reopen the doors of last time
                if q._poly(r) >= 0:
                    nm.set_poly_flags(r, f)
                flagged.pop(r)
            s = int(rng.integers(40))
            path = crowd.agents.c_path[s, : crowd.agents.c_npath[s]]
            if len(path) > 3:
                r = int(path[rng.integers(1, len(path))])
                flagged[r] = nm.get_poly_flags(r)
                nm.set_poly_flags(r, 0)
                crowd.mark_changed([r])
        crowd.update(DT)
        _assert_on_mesh(crowd, q, list(flagged))
        a = crowd.agents
        for s in range(40):
            bad = [int(r) for r in a.c_path[s, : a.c_npath[s]] if q._poly(int(r)) < 0]
            # a stale polygon only while the repair waits for budget (marked), briefly
            assert not bad or crowd.replanner.marked[s], (step, s)
            stale_for[s] = stale_for[s] + 1 if bad else 0
            assert stale_for[s] <= 10, (step, s)
            if crowd.request_status(hs[s]) == "done":
                done.add(s)
    assert len(done) >= 30, len(done)
