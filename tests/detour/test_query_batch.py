"""Batch queries against the single calls: item i of a batch is the single call's answer.

Random inputs (hypothesis) on Detour's exported navmeshes: solo (one tile, BV tree),
tiled (tile lookup across cells) and solo with off-mesh connections. Points are drawn
in and around the mesh bounds so that every status shows up (no polygon in the box,
rays hitting walls or leaving through the end, points outside their polygon), and refs
include stale and garbage ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import peer_file

from navkit.detour.filter import QueryFilter
from navkit.detour.navmesh import NavMesh
from navkit.detour.query import FAILURE, INVALID_PARAM, RAYCAST_USE_COSTS, NavMeshQuery
from navkit.errors import InputError, StaleHandleError

MESHES = ("dungeon.solo", "dungeon.tiled", "dungeon.offmesh.solo")
_CACHE: dict[str, tuple] = {}


def _mesh(name: str):
    if name not in _CACHE:
        nm = NavMesh.from_recast(peer_file(f"{name}.navmesh.bin"))
        q = NavMeshQuery(nm)
        v = q.view
        lo = v.verts.min(axis=0) - 3.0
        hi = v.verts.max(axis=0) + 3.0
        _CACHE[name] = (q, lo.astype(np.float64), hi.astype(np.float64))
    return _CACHE[name]


@pytest.fixture(autouse=True, scope="module")
def _threads_on_tiny_batches():
    """Every batch here is tiny: without this the batches would run on one thread
    (:data:`navkit.detour.query.MIN_THREAD_WORK_US`) and ``threads=2`` test nothing."""
    import navkit.detour.query as qmod

    old = qmod.MIN_THREAD_WORK_US
    qmod.MIN_THREAD_WORK_US = 1e-9
    yield
    qmod.MIN_THREAD_WORK_US = old


def test_short_batches_run_on_fewer_threads():
    import numba

    import navkit.detour.query as qmod

    q = _mesh("dungeon.solo")[0]
    nth = min(2, numba.config.NUMBA_NUM_THREADS)
    old = qmod.MIN_THREAD_WORK_US
    qmod.MIN_THREAD_WORK_US = 200.0
    try:
        # 1000 heights at 0.05 us: 50 us of work, one thread (one chunk); 100,000: 5 ms,
        # every thread, in chunks of about CHUNK_US (at least 4 per thread)
        assert q._nchunks(1000, 2, qmod._ITEM_US["height"]) == (1, 1)
        th, ch = q._nchunks(100_000, 2, qmod._ITEM_US["height"])
        assert th == nth
        if nth > 1:
            assert ch == int(100_000 * qmod._ITEM_US["height"] / qmod.CHUNK_US)
        assert q._nchunks(100_000, 1, qmod._ITEM_US["height"]) == (1, 1)
        assert q._nchunks(5, 2) == ((nth, 5) if nth > 1 else (1, 1))  # no estimate: the cap
    finally:
        qmod.MIN_THREAD_WORK_US = old


def test_one_item_chunks_give_the_same_batches(monkeypatch):
    """Chunks of one item each, taken by two workers from the shared counter in whatever
    order they finish, write the same rows as one thread's single chunk."""
    import navkit.detour.query as qmod

    q = _mesh("nav_test.solo")[0]
    pts = q.find_random_points(300, rng=5, threads=1).points
    ends = q.find_random_points(300, rng=6, threads=1).points
    refs = q.find_nearest_polys(pts, threads=1).refs
    assert np.count_nonzero(refs) > 250

    def run(threads):
        return (
            q.find_nearest_polys(pts, threads=threads),
            q.raycasts(refs, pts, ends, threads=threads, max_path=8),
            q.move_along_surfaces(refs, pts, ends, threads=threads),
            q.paths(pts[:60], ends[:60], threads=threads),
            q.poly_heights(refs, pts, threads=threads),
        )

    one = run(1)
    monkeypatch.setattr(qmod, "CHUNK_US", 1e-9)
    if q._nchunks(300, 2)[0] > 1:
        assert q._nchunks(300, 2, qmod._ITEM_US["raycast"])[1] == 300
    two = run(2)
    for a, b in zip(one, two):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


settings.register_profile("batch", max_examples=15, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


def _inputs(draw, name: str, n: int):
    q, lo, hi = _mesh(name)
    seed = draw(st.integers(0, 2**32 - 1))
    g = np.random.default_rng(seed)
    a = (lo + (hi - lo) * g.random((n, 3))).astype(np.float32)
    b = (lo + (hi - lo) * g.random((n, 3))).astype(np.float32)
    # most points on the surface (nearest polygons of random points), some anywhere
    near = q.find_nearest_polys(a, (4.0, 8.0, 4.0))
    a = np.where(near.found[:, None] & (g.random(n) < 0.8)[:, None], near.points, a)
    refs = near.refs.copy()
    v = q.view
    pick = g.random(n)
    refs[pick < 0.1] = 0  # no polygon
    bad = pick > 0.93
    refs[bad] = v.poly_ref[g.integers(0, v.poly_ref.shape[0], int(bad.sum()))] ^ (1 << 40)
    rnd = pick > 0.85
    refs[rnd & ~bad] = v.poly_ref[g.integers(0, v.poly_ref.shape[0], int((rnd & ~bad).sum()))]
    return q, a, b, refs, g


def _filter(g) -> QueryFilter | None:
    if g.random() < 0.5:
        return None
    return QueryFilter(include_flags=int(g.integers(0, 4)), exclude_flags=int(g.integers(0, 3)))


def _same(x, y) -> bool:
    return bool(np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True))


@settings(settings.get_profile("batch"))
@given(st.data(), st.sampled_from(MESHES), st.integers(0, 40), st.sampled_from([1, 2]))
def test_find_nearest_polys_equal_single_calls(data, name, n, threads):
    q, a, _, _, g = _inputs(data.draw, name, n)
    half = tuple(float(x) for x in g.uniform(0.0, 6.0, 3))
    flt = _filter(g)
    b = q.find_nearest_polys(a, half, flt, threads=threads)
    assert b.refs.shape == (n,) and b.points.shape == (n, 3) and b.points.dtype == np.float32
    for i in range(n):
        r = q.find_nearest_poly(a[i], half, flt)
        assert r.ref == int(b.refs[i]) % (1 << 64)
        assert _same(r.point, b.points[i]) and r.over_poly == bool(b.over_poly[i])
        assert r.status == b.status[i] and r.found == b.found[i]


@settings(settings.get_profile("batch"))
@given(st.data(), st.sampled_from(MESHES), st.integers(0, 40), st.sampled_from([0, 1, 5, 256]),
       st.sampled_from([1, 2]))  # fmt: skip
def test_raycasts_equal_single_calls(data, name, n, max_path, threads):
    q, a, b, refs, g = _inputs(data.draw, name, n)
    flt = _filter(g)
    opts = RAYCAST_USE_COSTS if g.random() < 0.5 else 0
    prev = np.where(g.random(n) < 0.3, np.roll(refs, 1), 0)
    rb = q.raycasts(refs, a, b, flt, opts, prev, max_path, threads=threads)
    assert rb.path.shape == (n, max(1, max_path))
    for i in range(n):
        r = q.raycast(int(refs[i]) % (1 << 64), a[i], b[i], flt, opts, int(prev[i]) % (1 << 64),
                      max_path)  # fmt: skip
        assert r.status == rb.status[i]
        assert _same(np.float32(r.t), rb.t[i]) and r.hit == rb.hit[i]
        assert r.hit_edge_index == rb.hit_edge_index[i]
        assert _same(r.hit_normal, rb.hit_normal[i]) and _same(
            np.float32(r.path_cost), rb.path_cost[i]
        )
        k = int(rb.path_count[i])
        assert _same(r.path, rb.path[i, :k]) and not rb.path[i, k:].any()


@settings(settings.get_profile("batch"))
@given(st.data(), st.sampled_from(MESHES), st.integers(0, 40), st.sampled_from([1, 2]))
def test_closest_points_and_heights_equal_single_calls(data, name, n, threads):
    q, _, b, refs, _ = _inputs(data.draw, name, n)
    cb = q.closest_points_on_polys(refs, b, threads=threads)
    hb = q.poly_heights(refs, b, threads=threads)
    for i in range(n):
        ref = int(refs[i]) % (1 << 64)
        try:
            pt, over = q.closest_point_on_poly(ref, b[i])
        except StaleHandleError:
            assert cb.status[i] == FAILURE | INVALID_PARAM and _same(cb.points[i], b[i])
            assert hb.status[i] == FAILURE | INVALID_PARAM and not hb.ok[i]
            assert np.isnan(hb.heights[i])
            continue
        assert cb.status[i] == 0 or not cb.status[i] & FAILURE
        assert _same(pt, cb.points[i]) and over == bool(cb.over_poly[i])
        h = q.get_poly_height(ref, b[i])
        if h is None:
            assert not hb.ok[i] and np.isnan(hb.heights[i]) and hb.status[i] & FAILURE
        else:
            assert hb.ok[i] and np.float32(h) == hb.heights[i] and not hb.status[i] & FAILURE


@settings(settings.get_profile("batch"))
@given(st.data(), st.sampled_from(MESHES), st.integers(0, 30), st.sampled_from([0, 1, 4, 16]),
       st.sampled_from([1, 2]))  # fmt: skip
def test_move_along_surfaces_equal_single_calls(data, name, n, max_visited, threads):
    q, a, b, refs, g = _inputs(data.draw, name, n)
    # moves of agent size: ends near the starts, as a crowd moves
    ends = np.where((g.random(n) < 0.7)[:, None], a + (b - a) * np.float32(0.1), b)
    flt = _filter(g)
    mb = q.move_along_surfaces(refs, a, ends, flt, max_visited, threads=threads)
    for i in range(n):
        m = q.move_along_surface(int(refs[i]) % (1 << 64), a[i], ends[i], flt, max_visited)
        k = int(mb.n_visited[i])
        assert m.status == mb.status[i] and _same(m.position, mb.positions[i])
        assert _same(m.visited, mb.visited[i, :k]) and not mb.visited[i, k:].any()


@settings(settings.get_profile("batch"))
@given(st.sampled_from(MESHES), st.integers(0, 25), st.integers(0, 2**32 - 1),
       st.sampled_from([1, 2]), st.booleans())  # fmt: skip
def test_find_random_points_equal_successive_single_calls(name, n, seed, threads, filtered):
    q, _, _ = _mesh(name)
    flt = QueryFilter(include_flags=seed % 4, exclude_flags=0) if filtered else None
    b = q.find_random_points(n, flt, seed, threads=threads)
    g = np.random.default_rng(seed)
    for i in range(n):
        r = q.find_random_point(flt, g)
        assert r.ref == int(b.refs[i]) % (1 << 64) and _same(r.point, b.points[i])


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.MT19937, np.random.Philox,
                                    np.random.SFC64])  # fmt: skip
@pytest.mark.parametrize("predraw", [0, 1, 3])
def test_find_random_points_continue_any_generator_stream(bitgen, predraw):
    """The batch draws its uniforms in one call: the points are still those of successive
    single calls, for every bit generator and after an odd number of float32 draws
    (the generator then holds a spare 32 bits), and the generator ends where theirs does."""
    q, _, _ = _mesh("nav_test.solo")
    ga, gb = np.random.Generator(bitgen(7)), np.random.Generator(bitgen(7))
    ga.random(predraw, dtype=np.float32)
    gb.random(predraw, dtype=np.float32)
    b = q.find_random_points(9, rng=ga)
    for i in range(9):
        r = q.find_random_point(rng=gb)
        assert r.ref == int(b.refs[i]) % (1 << 64) and _same(r.point, b.points[i])
    assert ga.random(dtype=np.float32) == gb.random(dtype=np.float32)


@settings(settings.get_profile("batch"))
@given(st.sampled_from([np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937]),
       st.integers(0, 5), st.integers(1, 40), st.integers(1, 9), st.integers(1, 5),
       st.integers(0, 2**32 - 1))  # fmt: skip
def test_draw_uniforms_in_parts_is_the_serial_draw(bitgen, predraw, rows, width, nthreads, seed):
    """find_random_points' uniforms drawn in parts on threads (generators advanced past the
    parts before, a spare 32 bits kept or not) are the serial draw's, and the generator
    ends where the serial draw leaves it."""
    from navkit.detour import query as qmod

    ga, gb = np.random.Generator(bitgen(seed)), np.random.Generator(bitgen(seed))
    ga.random(predraw, dtype=np.float32)
    gb.random(predraw, dtype=np.float32)
    a = np.empty((rows, width), np.float32)
    b = np.empty((rows, width), np.float32)
    ga.random(dtype=np.float32, out=a)
    qmod._draw_uniforms(gb, b, nthreads, min_size=0)
    assert np.array_equal(a, b)
    assert ga.random(3, dtype=np.float32).tolist() == gb.random(3, dtype=np.float32).tolist()
    assert ga.random(2).tolist() == gb.random(2).tolist()


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.PCG64DXSM])
@pytest.mark.parametrize("predraw", [0, 1])
def test_find_random_points_drawn_on_two_threads_equal_single_calls(bitgen, predraw, monkeypatch):
    from navkit.detour import query as qmod

    monkeypatch.setattr(qmod, "PARALLEL_DRAW_MIN", 0)
    q, _, _ = _mesh("dungeon.solo")
    ga, gb = np.random.Generator(bitgen(3)), np.random.Generator(bitgen(3))
    ga.random(predraw, dtype=np.float32)
    gb.random(predraw, dtype=np.float32)
    b = q.find_random_points(31, rng=ga, threads=2)
    for i in range(31):
        r = q.find_random_point(rng=gb)
        assert r.ref == int(b.refs[i]) % (1 << 64) and _same(r.point, b.points[i])
    assert ga.random(dtype=np.float32) == gb.random(dtype=np.float32)


def test_batch_bad_input_raises():
    q, _, _ = _mesh("dungeon.solo")
    ok = np.zeros((2, 3), np.float32)
    with pytest.raises(InputError):
        q.find_nearest_polys(np.array([[0.0, np.nan, 0.0]]))
    with pytest.raises(InputError):
        q.find_nearest_polys(np.zeros((2, 2)))
    with pytest.raises(InputError):
        q.raycasts([1, 2], ok, np.zeros((3, 3), np.float32))
    with pytest.raises(InputError):
        q.raycasts([1], ok, ok)
    with pytest.raises(InputError):
        q.poly_heights([1, 2], np.full((2, 3), np.inf))
    with pytest.raises(InputError):
        q.move_along_surfaces([1, 2], ok, ok, max_visited=-1)
    with pytest.raises(InputError):
        q.find_random_points(-1)
    with pytest.raises(InputError):
        q.find_nearest_polys(ok, threads=-1)


def test_batch_empty():
    q, _, _ = _mesh("dungeon.solo")
    z = np.zeros((0, 3), np.float32)
    assert q.find_nearest_polys(z).refs.shape == (0,)
    assert q.raycasts([], z, z).t.shape == (0,)
    assert q.closest_points_on_polys([], z).points.shape == (0, 3)
    assert q.poly_heights([], z).heights.shape == (0,)
    assert q.move_along_surfaces([], z, z).positions.shape == (0, 3)
    assert q.find_random_points(0).points.shape == (0, 3)
