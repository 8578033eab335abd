"""Paths on the ECM: clearance kept (brute force), never shorter than the
visibility-graph oracle, equal to it when both go the same way."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scenes import random_scene

from navkit.ecm import CorridorMap

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracles.visibility import convex_hull, shortest_path_length  # noqa: E402

RECT = [[0, 0], [10, 0], [10, 6], [0, 6]]


def _features(m):
    """All obstacle segments (as (a, b) pairs, points as a == b) in world coordinates."""
    segs = []
    for o in m.obstacles.values():
        ring = m._world(o["ring"])
        if len(ring) == 1:
            segs.append((ring[0], ring[0]))
        elif len(ring) == 2:
            segs.append((ring[0], ring[1]))
        else:
            segs += [(ring[i], ring[(i + 1) % len(ring)]) for i in range(len(ring))]
    a = np.array([s[0] for s in segs])
    b = np.array([s[1] for s in segs])
    return a, b


def _seg_seg_dist(p, q, a, b, n=64):
    """Min distance from segment pq to segments a[i]b[i]: pq sampled densely, plus
    the exact distances from the obstacle corners to pq."""
    t = np.linspace(0, 1, n)[:, None]
    pts = p + t * (q - p)  # (n, 2)
    d = b - a
    dd = np.maximum((d * d).sum(1), 1e-300)
    s = np.clip(((pts[:, None, :] - a[None]) * d[None]).sum(2) / dd[None], 0, 1)
    foot = a[None] + s[..., None] * d[None]
    best = float(np.min(np.hypot(*(foot - pts[:, None, :]).transpose(2, 0, 1))))
    e = q - p
    ee = max(float(e @ e), 1e-300)
    for c in (a, b):
        u = np.clip(((c - p) @ e) / ee, 0, 1)
        best = min(best, float(np.min(np.hypot(*(p + u[:, None] * e - c).T))))
    return best


def _path_clearance(m, pts):
    a, b = _features(m)
    return min(_seg_seg_dist(pts[i], pts[i + 1], a, b) for i in range(len(pts) - 1))


@pytest.mark.parametrize("seed", range(4))
def test_paths_keep_clearance(seed):
    bnd, obs, _ = random_scene(seed, 15, 40, 30)
    m = CorridorMap.from_polygons(bnd, obs)
    rng = np.random.default_rng(seed)
    found = 0
    for _ in range(12):
        r = float(rng.choice([0.0, 0.3, 0.8]))
        s, g = rng.uniform([1, 1], [39, 29], (2, 2))
        if m.clearance_at(s) < r or m.clearance_at(g) < r:
            continue
        p = m.find_path(s, g, clearance=r)
        if p is None:
            continue
        found += 1
        assert np.allclose(p.points[0], s) and np.allclose(p.points[-1], g)
        assert _path_clearance(m, p.points) >= r - 1e-9
        assert np.all(p.radii >= r - 1e-9)
    assert found >= 4


def test_no_corridor_wide_enough():
    m = CorridorMap.from_polygons(RECT, [[[5, 0.5], [5, 5.5]]])  # wall with 0.5 gaps
    assert m.find_path([1, 3], [9, 3], clearance=0.24) is not None  # gap half-width 0.25
    assert m.find_path([1, 3], [9, 3], clearance=0.26) is None
    assert m.find_path([0.1, 3], [9, 3], clearance=0.2) is None  # start too close


def test_preferred_clearance_keeps_further_away():
    m = CorridorMap.from_polygons(RECT, [[[4, 2], [6, 2], [6, 4], [4, 4]]])
    p = m.find_path([1, 1], [9, 5], clearance=0.2)
    q = m.find_path([1, 1], [9, 5], clearance=0.2, preferred_clearance=1.0)
    assert q.length >= p.length - 1e-9
    assert _path_clearance(m, q.points) > _path_clearance(m, p.points) + 0.3


def _convex_scene(seed, n):
    rng = np.random.default_rng(seed)
    obs = []
    bnd, raw, _ = random_scene(seed, n, 20, 12, 1.5)
    for o in raw:
        obs.append(convex_hull(o) if len(o) >= 3 else o)
    return bnd, obs, rng


def test_same_corridor_equals_oracle():
    obs = [np.array([[4, 3], [6, 3], [5, 4.5]], float)]
    m = CorridorMap.from_polygons(RECT, obs)
    for goal in ([9, 3.2], [9, 2.5], [8, 1]):
        p = m.find_path([1, 1.5], goal, clearance=0.5)
        ref = shortest_path_length((0, 0, 10, 6), obs, [1, 1.5], goal, 0.5)
        assert p.length == pytest.approx(ref, abs=5e-3)


def test_never_shorter_than_visibility_oracle():
    ratios = []
    for seed in range(2):
        bnd, obs, rng = _convex_scene(seed, 5)
        m = CorridorMap.from_polygons(bnd, obs)
        for _ in range(6):
            r = float(rng.choice([0.2, 0.5]))
            s, g = rng.uniform([1, 1], [19, 11], (2, 2))
            if m.clearance_at(s) < r or m.clearance_at(g) < r:
                continue
            p = m.find_path(s, g, clearance=r)
            ref = shortest_path_length((0, 0, 20, 12), obs, s, g, r)
            if p is None:
                continue
            assert p.length >= ref - 1e-6
            ratios.append(p.length / ref)
    assert ratios
    print(
        f"corridor/oracle length: mean {np.mean(ratios):.6f} max {np.max(ratios):.6f} n={len(ratios)}"
    )


def test_closed_form_edge_stats_match_dense_samples():
    """Route-graph edge length and least clearance (closed form) against each
    edge's sampled polyline: the chords are never longer than the arc and within
    1e-3 of it; the least clearance equals the least sampled one (the samples
    include the bisector's closest point to the sites)."""
    from navkit.ecm import _kernels as K
    from navkit.ecm.path import edge_polyline

    b, obs, _ = random_scene(5, 15, 40, 30)
    m = CorridorMap.from_polygons(b, obs)
    d, S = m.diagram, m.sites
    eids = np.nonzero(d.ealive[: d.next_e])[0].astype(np.int64)
    ln, mc = K.edge_stats(eids, d.ev, d.es, d.vx, d.vy, S.kind, S.ax, S.ay, S.bx, S.by)
    curved = 0
    for e, L, c in zip(eids.tolist(), ln, mc):
        pts, clr = edge_polyline(m, e)
        chord = float(np.sum(np.hypot(*np.diff(pts, axis=0).T)))
        assert chord <= L * (1 + 1e-12) + 1e-12
        assert chord >= L * (1 - 1e-3) - 1e-12
        assert abs(c - clr.min()) <= 1e-9 * (1 + clr.max())
        curved += chord < L * (1 - 1e-9)
    assert curved > 0  # the scene has parabolic edges


@pytest.mark.parametrize("seed", range(3))
def test_retraction_filter_finds_the_first_crossing(seed):
    """Retraction from a point whose nearest obstacle is a long wall samples only
    the wall's edges above the point's foot; it must find the same first
    crossing of the medial axis as a search over every edge of the wall (the
    pure-Python search of the reference) and equal the reference retraction."""
    import path_reference as REF

    from navkit.ecm import path as P
    from navkit.ecm.geom import site_dist

    b, obs, _ = random_scene(seed, 30, 60, 40)
    m = CorridorMap.from_polygons(b, obs)
    S, d = m.sites, m.diagram
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(400):
        q = m._local_point(rng.uniform([0.2, 0.2], [59.8, 39.8]))
        s, dist = P._nearest(m, *q)
        if s < 0 or S.kind[s] != 1 or dist <= 0 or m.clearance_at(m._world(q)) <= 0:
            continue
        _, fx, fy, _ = site_dist(S, s, *q)
        ux, uy = (q[0] - fx) / dist, (q[1] - fy) / dist
        cand = {e for v in d.vertices_of(int(s)) for e in d.edges_of(v)}
        if len(cand) <= 8:
            continue
        full = REF._first_hit(m, cand, q[0], q[1], ux, uy, dist)
        got = P._retract(m, *q)
        ref = REF._retract(m, *q)
        assert (got is None) == (full is None) == (ref is None)
        if full is not None:
            assert got[:3] == full == ref[:3]
            assert np.array_equal(got[3], ref[3])
            checked += 1
    assert checked > 20


def _same_result(a, b):
    """Whether two find_path results are equal bit for bit (or both None)."""
    if a is None or b is None:
        return a is None and b is None
    for f in ("points", "route", "centers", "radii", "left", "right"):
        x, y = getattr(a, f), getattr(b, f)
        if x.shape != y.shape or not np.array_equal(x, y):
            return False
    return a.length == b.length and a.edges == b.edges and a.clearance == b.clearance


def _compare_queries(m, rng, n, lo, hi):
    """n random queries (several clearances, with and without a preferred
    clearance) through find_path and the pure-Python reference; returns how
    many found a path."""
    import path_reference as REF

    found = 0
    for i in range(n):
        a, g = rng.uniform(lo, hi, (2, 2))
        r = [0.0, 0.15, 0.4, 0.8][i % 4]
        pref = None if i % 3 else r + 0.5
        got = m.find_path(a, g, clearance=r, preferred_clearance=pref)
        ref = REF.find_path(m, a, g, r, pref)
        assert _same_result(got, ref), (i, a, g, r, pref)
        found += got is not None
    return found


@pytest.mark.parametrize("seed", range(3))
def test_find_path_equals_pure_python_reference_across_updates(seed):
    """The kernel query equals the pure-Python query it replaced (every field,
    bit for bit; the same None cases) on random scenes of points, segments and
    polygons, before and after random insertions, removals and moves (edges
    sampled before an update must not be reused once the update touched them)."""
    from scenes import random_obstacle

    bnd, obs, (_cw, _ch, sz) = random_scene(seed, 25, 50, 30)
    m = CorridorMap.from_polygons(bnd, obs)
    rng = np.random.default_rng(100 + seed)
    lo, hi = np.array([0.3, 0.3]), np.array([49.7, 29.7])
    found = _compare_queries(m, rng, 40, lo, hi)
    handles = [h for h in m.obstacles if h]
    for k in range(6):
        if k % 3 == 0:
            c = rng.uniform(lo + 2, hi - 2)
            try:
                handles.append(m.insert_polygon(random_obstacle(rng, *c, sz * 0.6)).handle)
            except Exception:
                continue
        elif k % 3 == 1:
            m.remove(int(handles.pop(int(rng.integers(len(handles))))))
        else:
            try:
                m.move(
                    int(handles[int(rng.integers(len(handles)))]), offset=rng.uniform(-0.3, 0.3, 2)
                )
            except Exception:
                continue
        found += _compare_queries(m, rng, 20, lo, hi)
    assert found > 50


def test_flat_polyline_cache_grows_and_restarts():
    """A flat cache too small for one query's polylines makes the kernels ask for
    room; the query is answered all the same (grown cache, or restarted when
    most of it belongs to dropped edges)."""
    from navkit.ecm import path as P

    bnd, obs, _ = random_scene(7, 20, 40, 30)
    m = CorridorMap.from_polygons(bnd, obs)
    rng = np.random.default_rng(7)
    m._pathflat = P._Flat(m.diagram, m.diagram.next_e, cap=16)
    assert _compare_queries(m, rng, 12, np.array([0.3, 0.3]), np.array([39.7, 29.7])) > 3
    st = m._pathflat
    assert st.P.shape[0] > 16
    # most rows dropped: the next growth starts afresh
    st.drop(np.nonzero(st.off >= 0)[0])
    st.grow()
    assert st.used[0] == 0 and not (st.off >= 0).any()
    assert _compare_queries(m, rng, 12, np.array([0.3, 0.3]), np.array([39.7, 29.7])) > 3


def test_pairwise_sum_equals_numpy():
    """The kernels' path lengths use numpy's summation order exactly."""
    from navkit.ecm._path_kernels import _sum, plen

    rng = np.random.default_rng(0)
    for n in [*range(1, 300), 1000, 1023, 1024, 1025, 4099]:
        a = rng.uniform(0, 1, n) * 10.0 ** rng.uniform(-3, 3, n)
        assert _sum(a, 0, n) == np.sum(a)
        q = rng.normal(size=(n, 2))
        want = float(np.sum(np.hypot(*np.diff(q, axis=0).T))) if n > 1 else 0.0
        assert plen(q) == want


def test_concurrent_queries_on_one_map_equal_serial_ones():
    """Threads querying one map share its polyline cache (the kernels run
    without the GIL); every answer equals the serial one."""
    from concurrent.futures import ThreadPoolExecutor

    bnd, obs, _ = random_scene(11, 25, 50, 30)
    rng = np.random.default_rng(11)
    qs = [rng.uniform([0.3, 0.3], [49.7, 29.7], (2, 2)) for _ in range(60)]
    serial = CorridorMap.from_polygons(bnd, obs)
    want = [serial.find_path(a, g, clearance=0.2) for a, g in qs]
    m = CorridorMap.from_polygons(bnd, obs)
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda q: m.find_path(q[0], q[1], clearance=0.2), qs))
    assert all(_same_result(a, b) for a, b in zip(got, want))
    assert sum(w is not None for w in want) > 20


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.1, -1.0])
def test_bad_preferred_clearance_is_an_input_error(bad):
    from navkit.errors import InputError

    m = CorridorMap.from_polygons(RECT, [[[4, 2], [6, 2], [6, 4], [4, 4]]])
    with pytest.raises(InputError):
        m.find_path([1, 1], [9, 5], clearance=0.2, preferred_clearance=bad)
    assert m.find_path([1, 1], [9, 5], clearance=0.2, preferred_clearance=0.5) is not None
