"""The single calls' vector results are rows of a buffer the query hands out in turn
(``query._OUT_ROWS`` rows, then a fresh buffer), their visited polygons slices of
another (``query._PATH_BUF`` refs), path()'s points and corridor slices of a third:
each result must stay what its call returned, whatever calls follow -- more than a
buffer's worth of them, of every kind that writes one, with calls refused for bad
input (exceptions between taking a row and the kernel call) in between -- and equal
the batch's answer for the same input.
"""

from __future__ import annotations

import numpy as np
import pytest
from peer_support import peer_file

import navkit.detour.query as qmod
from navkit.detour.navmesh import NavMesh
from navkit.detour.query import NavMeshQuery
from navkit.errors import InputError, QueryError


@pytest.fixture(scope="module")
def q():
    return NavMeshQuery(NavMesh.from_recast(peer_file("dungeon.solo.navmesh.bin")))


def _bad_calls(q, ref, k):
    """Calls refused at some step of each single call (cycled by k)."""
    nan = float("nan")
    calls = [
        lambda: q.raycast(ref, (nan, 0.0, 0.0), (1.0, 0.0, 1.0)),
        lambda: q.raycast(ref, ("x", 0.0, 0.0), (1.0, 0.0, 1.0)),
        lambda: q.raycast(ref, (0.0, 0.0, 0.0), (1.0, 0.0, 1.0), filter=object()),
        lambda: q.find_nearest_poly((0.0, "y", 0.0)),
        lambda: q.find_nearest_poly((0.0, float("inf"), 0.0)),
        lambda: q.closest_point_on_poly(ref, (0.0, nan, 0.0)),
        lambda: q.closest_point_on_poly(ref, "abc"),
        lambda: q.move_along_surface(ref, (0.0, 0.0, nan), (1.0, 0.0, 1.0)),
        lambda: q.move_along_surface(ref, (0.0, 0.0, 0.0), ("z", 0.0, 1.0)),
        lambda: q.move_along_surface(ref, (0.0, 0.0, 0.0), (1.0, 0.0, 1.0), filter=3),
    ]
    with pytest.raises(InputError):
        calls[k % len(calls)]()


@pytest.mark.parametrize("tuples", [False, True])
def test_row_results_stay_and_match_the_batches(q, tuples):
    rp = q.find_random_points(2 * (qmod._OUT_ROWS // 2 + 50), rng=11)
    n = rp.refs.shape[0] // 2
    refs, s, e = rp.refs[:n], rp.points[:n], rp.points[n:]
    near = q.find_nearest_polys(e)
    ray = q.raycasts(refs, s, e, max_path=256)
    close = q.closest_points_on_polys(refs, e)
    move = q.move_along_surfaces(refs, s, e)
    kept = []
    for i in range(n):
        r = int(refs[i])
        si, ei = (tuple(s[i].tolist()), tuple(e[i].tolist())) if tuples else (s[i], e[i])
        # every third ray reserves half the visited-polygon buffer: a fresh one often
        mp = qmod._PATH_BUF // 2 if i % 3 == 0 else 256
        kept.append((
            q.find_nearest_poly(ei).point, q.raycast(r, si, ei, max_path=mp),
            q.closest_point_on_poly(r, ei)[0], q.move_along_surface(r, si, ei),
        ))  # fmt: skip
        if i % 7 == 3:
            _bad_calls(q, r, i // 7)
    assert 4 * n > 2 * qmod._OUT_ROWS  # the rows ran out twice at least
    for i, (pn, rh, cp, mv) in enumerate(kept):
        for a in (pn, rh.hit_normal, cp, mv.position):
            assert a.dtype == np.float32 and a.shape == (3,) and a.flags.writeable
        np.testing.assert_array_equal(pn, near.points[i])
        np.testing.assert_array_equal(rh.hit_normal, ray.hit_normal[i])
        np.testing.assert_array_equal(rh.path, ray.path[i, : ray.path_count[i]])
        np.testing.assert_array_equal(cp, close.points[i])
        np.testing.assert_array_equal(mv.position, move.positions[i])
        np.testing.assert_array_equal(mv.visited, move.visited[i, : move.n_visited[i]])


def test_row_results_are_independent(q):
    rp = q.find_random_points(4, rng=3)
    a = q.find_nearest_poly(rp.points[0]).point
    b = q.find_nearest_poly(rp.points[1]).point
    want = b.copy()
    a[:] = 1e6
    np.testing.assert_array_equal(b, want)
    np.testing.assert_array_equal(q.find_nearest_poly(rp.points[1]).point, want)


def test_path_results_stay_and_match_the_batch(q):
    """path()'s points and corridor are slices of buffers its kernel fills call after
    call (fresh buffers when one is full): each result stays what its call returned."""
    import navkit.detour._single as single

    rp = q.find_random_points(2 * 400, rng=5)
    s, e = rp.points[:400], rp.points[400:]
    b = q.paths(s, e)
    kept = {}
    for k, cap in enumerate((256, 16)):
        for i in range(400):
            try:
                kept[k, i] = q.path(s[i], e[i], max_path=cap, max_points=cap)
            except QueryError:
                kept[k, i] = None
    rows = 0
    for i in range(400):
        p = kept[0, i]
        assert (p is None) == (not b.ok[i])
        if p is None:
            continue
        rows += p.polys.shape[0]
        np.testing.assert_array_equal(p.points, b.points[i, : b.n_points[i]])
        np.testing.assert_array_equal(p.polys, b.polys[i, : b.n_polys[i]])
        assert p.complete == bool(b.complete[i]) and p.length == b.lengths[i]
    assert rows > single.PATH_ROWS  # the corridor buffer was renewed
    for i in range(400):
        p, p16 = kept[0, i], kept[1, i]
        if p is not None and p16 is not None and p.polys.shape[0] <= 16:
            np.testing.assert_array_equal(p16.polys, p.polys)
