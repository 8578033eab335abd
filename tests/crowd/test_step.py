"""The dtcrowd mode's one-kernel update (navkit.crowd.step) against the phase-by-phase
update, on a navkit-baked level (no peer needed): the same float32 state after every
step, through path requests, the path queue, a filter change that invalidates agents,
new targets mid-run and removed agents; and the fallbacks to the phases."""

from __future__ import annotations

import numpy as np
import pytest

import navkit
from navkit.crowd import AgentParams
from navkit.crowd import step as step_mod
from navkit.crowd.replan import _insert_by_time
from navkit.crowd.step import I_NSLOW, path_queue_order


@pytest.fixture(scope="module")
def navmesh():
    return navkit.bake(navkit.sample_level(), navkit.BakeConfig())


def _crowd(navmesh, n, seed, parallel=False):
    q = navkit.NavMeshQuery(navmesh)
    crowd = navkit.Crowd(navmesh, n + 4, 0.6, parallel=parallel)
    crowd.use_recastdemo_presets()
    rng = np.random.default_rng(seed)
    hs = []
    for i in range(n):
        p = q.find_random_point(rng=int(rng.integers(1 << 30))).point
        t = q.find_random_point(rng=int(rng.integers(1 << 30)))
        flags = (1 | 2 | 8 | 16) if i % 3 else (1 | 4 | 8)
        h = crowd.add_agent(p, AgentParams(radius=0.4, update_flags=flags))
        crowd.request_move_target(h, t.ref, t.point)
        hs.append(h)
    return crowd, hs, q


def _state(crowd):
    a = crowd.agents
    return [a.npos, a.vel, a.state, a.target_state, a.c_path, a.c_npath, a.ncorners,
            a.corner_verts, a.nneis, a.neis, crowd.boundary.nsegs, a.c_target, a.partial,
            a.target_pathq_ref, a.target_replan_time]  # fmt: skip


@pytest.mark.parametrize(("chunks", "py_requests"), [(0, False), (3, False), (0, True)])
def test_step_kernel_matches_the_phases(navmesh, monkeypatch, chunks, py_requests):
    """chunks 0: the serial step; 3: the parallel step (step_par) with its per-agent
    phases on 3 chunks of agents (blocks of 16 ranks dealt round robin). py_requests:
    the phase-by-phase crowd runs its move requests and path queue in Python instead
    of step.requests_kernel (the kernel's quick searches, queue and merged results
    against the Python phases)."""
    if chunks:
        monkeypatch.setattr(step_mod, "threads_for", lambda n: chunks)
        monkeypatch.setattr(step_mod, "AUTO_SERIAL", False)  # the parallel step every time
        monkeypatch.setattr(step_mod, "PAR_ALL_MIN", 0)  # every per-agent phase on chunks
    fused, hs, q = _crowd(navmesh, 40, 7, parallel=bool(chunks))
    phased, hs2, _ = _crowd(navmesh, 40, 7)
    monkeypatch.setattr(phased, "_fusable", lambda: False)
    if py_requests:
        monkeypatch.setattr(phased, "_requests_kernel", lambda which: False)
    rng = np.random.default_rng(3)
    stepped = 0
    refs: list = []
    old: list = []
    for k in range(240):
        if k == 60:  # polygons under some agents closed: the slow validity path (those
            # agents move to a nearby polygon and replan) and replans of the others
            refs = sorted({int(fused.agents.c_path[fused.slot(h), 0]) for h in hs[1:40:6]})
            old = [navmesh.get_poly_flags(r) for r in refs]
            for r in refs:
                navmesh.set_poly_flags(r, 0)
        if k == 63:
            for r, f in zip(refs, old):
                navmesh.set_poly_flags(r, f)
        if k % 50 == 25:  # new targets: move requests and the path queue mid-run
            t = q.find_random_point(rng=int(rng.integers(1 << 30)))
            for c, h in ((fused, hs), (phased, hs2)):
                for j in range(0, len(h), 4):
                    c.request_move_target(h[j], t.ref, t.point)
        if k == 120:
            fused.remove_agent(hs[5])
            phased.remove_agent(hs2[5])
        fused.update(1 / 60)
        phased.update(1 / 60)
        stepped += fused._stepped
        if k == 60:  # the kernel listed agents for the slow validity path
            assert fused._step_cache[0][1][I_NSLOW] > 0
        assert not phased._stepped
        for x, y in zip(_state(fused), _state(phased)):
            assert np.array_equal(x, y), f"step {k}"
        assert fused.velocity_samples == phased.velocity_samples
        assert fused.boundary_updates == phased.boundary_updates
    assert stepped == 240
    # the path queue served requests (handles are numbered from 1), as in both crowds
    assert fused.path_queue.next_handle > 2
    assert fused.path_queue.next_handle == phased.path_queue.next_handle
    assert set(fused.timings) == set(fused.PHASES)
    assert fused.timings["velocity_planning"] > 0


def test_extensions_fall_back_to_the_phases(navmesh):
    crowd, hs, q = _crowd(navmesh, 6, 1)
    crowd.update(1 / 60)
    assert crowd._stepped
    crowd.update_agent_params(hs[2], AgentParams(radius=0.4, avoidance_model="ttc"))
    crowd.update(1 / 60)
    assert not crowd._stepped
    crowd.update_agent_params(hs[2], AgentParams(radius=0.4))
    crowd.update(1 / 60)
    assert crowd._stepped
    h = crowd.add_temporary_obstacle(crowd.positions[crowd.slot(hs[0])] + 3, 0.5)
    crowd.update(1 / 60)
    assert not crowd._stepped
    crowd.remove_temporary_obstacle(h)
    crowd.update(1 / 60)
    assert crowd._stepped


def test_replaced_filter_is_used(navmesh):
    crowd, hs, q = _crowd(navmesh, 4, 2)
    crowd.update(1 / 60)
    crowd.filters[0] = navkit.QueryFilter(include_flags=0)
    crowd.update(1 / 60)
    assert crowd._ftables[0][0, 0] == 0
    assert (crowd.states[[crowd.slot(h) for h in hs]] == 0).all()  # all invalid


def test_pack_describes_arrays_and_refuses_others():
    """The step's descriptor: address and extents per array; an array unlike the spec
    (dtype, rank, not C-contiguous, read-only) is refused, never reinterpreted."""
    spec = (("a", "f4", 2), ("b", "i8", 1), ("c", "u1", 3))
    a, b, c = np.zeros((3, 2), np.float32), np.zeros(5, np.int64), np.zeros((2, 3, 4), np.uint8)
    d = step_mod.pack((a, b, c), spec)
    assert d.tolist() == [a.ctypes.data, 3, 2, 0, b.ctypes.data, 5, 0, 0, c.ctypes.data, 2, 3, 4]
    ro = b.copy()
    ro.flags.writeable = False
    for bad in (
        (a.astype(np.float64), b, c), (a, b[None], c), (np.zeros((3, 4), np.float32)[:, :2], b, c),
        (a, ro, c), (a, b),
    ):  # fmt: skip
        with pytest.raises(TypeError):
            step_mod.pack(bad, spec)


@pytest.mark.parametrize("seed", range(20))
def test_path_queue_order_is_add_to_path_queue(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    times = rng.integers(0, 5, n).astype(np.float32) / 4  # many ties
    states = rng.choice(np.array([2, 3, 4, 4, 5], np.int8), n)
    todo = np.sort(rng.choice(n, int(rng.integers(0, n + 1)), replace=False)).astype(np.int64)
    ref: list = []
    for s in todo.tolist():
        if states[s] == 4:
            _insert_by_time(s, times, ref, 8)
    out = np.full(8, -1, np.int64)
    k = path_queue_order(todo, states, times, out)
    assert out[:k].tolist() == ref


def _random_agents(rng, cap, n, overflow):
    """A proximity grid and ``cap`` agents' arrays for the neighbour tests: positions
    on three heights, a quarter on integer points (exact ties in distance), ``n``
    active ones (``cap - 1`` when ``overflow``: radii of 3 m, wider than the grid's)."""
    from navkit.crowd.proximity import ProximityGrid

    g = ProximityGrid(cap * 4, np.float32(0.6) * np.float32(3.0))
    side = float(rng.choice([4.0, 15.0, 60.0]))
    npos = np.zeros((cap, 3), np.float32)
    npos[:, 0] = rng.uniform(-side, side, cap)
    npos[:, 2] = rng.uniform(-side, side, cap)
    npos[:, 1] = rng.choice([0.0, 0.5, 5.0], cap)
    npos[: cap // 4] = np.round(npos[: cap // 4])
    radius = rng.uniform(0.2, 0.6, cap).astype(np.float32)
    if overflow:
        radius[:] = 3.0
        n = cap - 1
    height = np.full(cap, 2.0, np.float32)
    qrange = rng.choice([2.0, 7.2], cap).astype(np.float32)
    walking = rng.random(cap) < 0.9
    act = np.sort(rng.choice(cap, n, replace=False)).astype(np.int64)
    return g, npos, radius, height, qrange, walking, act


@pytest.mark.parametrize("seed", range(12))
def test_dense_cell_neighbours_are_the_grid_walks(seed):
    """find_neighbours_dense (the grid's items by cell, no hashing) gives find_neighbours'
    neighbours in its order: dense crowds (the first MAX_QUERY_IDS ids), ties in
    distance, agents not walking, heights apart, an overflowed pool, and agents so far
    apart that dense_cells gives up (w = 0)."""
    from navkit.crowd.proximity import (
        build_grid,
        dense_cells,
        find_neighbours,
        find_neighbours_dense,
    )  # fmt: skip

    rng = np.random.default_rng(100 + seed)
    cap = 600
    # small crowds too (the step uses the dense cells at every size)
    n = int(rng.integers(2, 100)) if seed % 3 == 1 else int(rng.integers(100, cap))
    # seed % 4 == 3: radii wider than the max radius: the pool overflows
    g, npos, radius, height, qrange, walking, act = _random_agents(rng, cap, n, seed % 4 == 3)
    if seed % 6 == 5:
        npos[0, 0] = 1e6  # one agent far away: too many cells, the hash walk
        act[0] = 0
        act = np.sort(act)
    head = build_grid(act, npos, radius, g.inv_cell_size, g.buckets, g.items, g.lo)
    x0, y0, w, h, start, ids = dense_cells(g.items, g.lo, head)
    assert (w == 0) == (seed % 6 == 5)
    out = []
    for dense in (False, True):
        neis = np.full((cap, 6), -1, np.int32)
        dist = np.zeros((cap, 6), np.float32)
        nn = np.zeros(cap, np.int32)
        if dense and w > 0:
            find_neighbours_dense(
                act, act, walking, npos, height, qrange, g.inv_cell_size, x0, y0, w, h, start,
                ids, neis, dist, nn,
            )  # fmt: skip
        else:
            find_neighbours(
                act, act, walking, npos, height, qrange, g.inv_cell_size, g.buckets, g.items,
                g.lo, neis, dist, nn,
            )  # fmt: skip
        out.append((neis, dist, nn))
    for a, b in zip(out[0], out[1]):
        assert np.array_equal(a, b)
    assert out[0][2].max() > 0


def test_thread_chooser_probes_both_and_keeps_the_faster():
    """A parallel crowd runs the two steps in turns of two updates in the first PROBES
    updates of each PERIOD (the second of each turn timed), then the one with the
    smaller median kernel time over the last KEEP timed updates of each: after a change
    of regime, within two periods (windows every period: no backoff here)."""
    ch = step_mod.ThreadChooser()
    ch.MAX_GAP = 1
    for fast_serial in (True, False, True, False):
        for period in range(2):
            seen = []
            for k in range(ch.PERIOD):
                ser = ch.serial_now()
                seen.append(ser)
                # (the untimed first update of each of the faster step's turns is slow:
                # it must not count)
                t = 1.0 if ser == fast_serial else 2.0
                if k < ch.PROBES and k % 2 == 0 and ser == fast_serial:
                    t = 5.0
                ch.record(ser, t + 0.01 * (k % 3))
            probes = seen[: ch.PROBES]
            assert probes == [(k // 2) % 2 == 1 for k in range(ch.PROBES)]
            if period == 1:
                assert all(s == fast_serial for s in seen[ch.PROBES :])


def test_thread_chooser_goes_parallel_only_for_a_clear_gain():
    """A serial crowd switches to the parallel step only when its median is below ENTER
    times the serial one; a parallel crowd stays parallel while it is not slower."""
    ch = step_mod.ThreadChooser()
    ch.MAX_GAP = 1

    def periods(par_t, n=2):
        for _ in range(n * ch.PERIOD):
            ser = ch.serial_now()
            ch.record(ser, 1.0 if ser else par_t)
        return ch.serial

    assert periods(0.95) is True  # 5% faster: not worth the risk
    assert periods(0.8) is False  # 20% faster: parallel
    assert periods(0.97) is False  # still faster: stays parallel
    assert periods(1.1) is True  # slower: back to serial


def test_thread_chooser_backs_off_while_parallel_loses():
    """While the parallel step loses outright, probe windows come 2, 4, ... up to
    MAX_GAP periods apart; the first window in which it wins brings the gap back to one
    period (and the crowd goes parallel for a clear gain)."""
    ch = step_mod.ThreadChooser()
    P, W = ch.PERIOD, ch.PROBES

    def run(n, par_t):
        starts = []
        for _ in range(n):
            pos = ch._pos()
            if pos == 0:
                starts.append(ch.k)
            ser = ch.serial_now()
            ch.record(ser, 1.0 if ser else par_t)
        return starts

    starts = run(P * (2 + 4 + 8 + 8) + W, 1.3)
    assert [b - a for a, b in zip(starts, starts[1:])] == [2 * P, 4 * P, 8 * P, 8 * P]
    assert ch.serial is True
    # parallel 5% faster: no loss (the gap comes back to one period), no switch either
    run(3 * ch.MAX_GAP * P, 0.95)
    assert ch._gap == 1 and ch.serial is True
    starts = run(3 * P, 0.95)
    assert [b - a for a, b in zip(starts, starts[1:])] == [P, P]
    # the parallel step now clearly faster: the next window switches to it
    run(2 * P, 0.5)
    assert ch.serial is False
    # and while it stays parallel, probes stay every period
    starts = run(4 * P, 0.5)
    assert [b - a for a, b in zip(starts, starts[1:])] == [P, P, P]
