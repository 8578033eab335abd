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
        ring = o["ring"] + m.origin
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
    crossing of the medial axis as a search over every edge of the wall."""
    from navkit.ecm import path as P

    b, obs, _ = random_scene(seed, 30, 60, 40)
    m = CorridorMap.from_polygons(b, obs)
    S, d = m.sites, m.diagram
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(400):
        q = m._local_point(rng.uniform([0.2, 0.2], [59.8, 39.8]))
        s, dist = P._nearest(m, *q)
        if s < 0 or S.kind[s] != 1 or dist <= 0 or m.clearance_at(q + m.origin) <= 0:
            continue
        _, fx, fy, _ = P.site_dist(S, s, *q)
        ux, uy = (q[0] - fx) / dist, (q[1] - fy) / dist
        cand = {e for v in d.vertices_of(int(s)) for e in d.edges_of(v)}
        if len(cand) <= 8:
            continue
        full = P._first_hit(m, cand, q[0], q[1], ux, uy, dist)
        got = P._retract(m, *q)
        assert (got is None) == (full is None)
        if full is not None:
            assert got[:3] == full
            checked += 1
    assert checked > 20
