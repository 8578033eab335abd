"""navkit's default tile-cache mode (``recast_compatible=False``): obstacles grown by the
agent radius, detail meshes on every tile, off-mesh connections kept, no dropped request."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _oracle import poly_centers, update_calls
from _tc_cases import peer_tilecache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from navkit.detour.query import NavMeshQuery
from navkit.errors import InputError
from navkit.tilecache import TileCache
from navkit.tilecache.format import decompress_tile_cache_layer, read_tile_cache
from navkit.tilecache.obstacles import (
    BOX,
    CYLINDER,
    ORIENTED_BOX,
    PRISM,
    Obstacle,
    expand_obstacle,
    obstacle_outline,
    rot_aux,
)
from navkit.tilecache.update import PROCESSED

#: The agent radius of the grown-obstacle property [wu]. The layers of the peer's
#: dungeon cache were eroded for 0.6; obstacles are grown by the params' radius, set
#: larger here so that "grown by radius - tolerance" is far from the bare footprint.
R = 1.5
#: How far inside the grown outline a crossing must go to count [wu]: a cell is cut
#: when its centre lies in the grown outline (a cell left walkable may reach
#: cs / sqrt(2) = 0.21 into it) and the walkable contour may cut a further
#: max_error = 1.3 cells = 0.39 into it.
TOL = 0.6
Y_TOL = 0.9

_STATE: dict = {}


def _dungeon(compatible: bool, radius: float = R):
    key = ("dungeon", compatible, radius)
    if key not in _STATE:
        tset = read_tile_cache(peer_tilecache("dungeon"))
        p = tset.params._replace(walkable_radius=radius, max_obstacles=256)
        tc = TileCache(tset._replace(params=p), recast_compatible=compatible)
        c = poly_centers(tc.navmesh)
        ys = np.round(c[:, 1], 1)
        vals, counts = np.unique(ys, return_counts=True)
        floor = float(vals[counts.argmax()])
        _STATE[key] = (tc, floor, c[np.abs(c[:, 1] - floor) < 0.2])
    return _STATE[key]


# -- expansion -------------------------------------------------------------------------------
def _seg_dist(p, a, b) -> float:
    ab = b - a
    t = float(np.clip(np.dot(p - a, ab) / np.dot(ab, ab), 0.0, 1.0))
    return float(np.hypot(*(p - (a + t * ab))))


def _poly_dist(poly: np.ndarray, p: np.ndarray) -> float:
    """Distance from p to a convex polygon (0 inside), either winding."""
    n = len(poly)
    s = [
        (poly[(i + 1) % n][0] - poly[i][0]) * (p[1] - poly[i][1])
        - (poly[(i + 1) % n][1] - poly[i][1]) * (p[0] - poly[i][0])
        for i in range(n)
    ]
    if all(v >= 0 for v in s) or all(v <= 0 for v in s):
        return 0.0
    return min(_seg_dist(p, poly[i], poly[(i + 1) % n]) for i in range(n))


shape_st = st.fixed_dictionaries(
    {
        "kind": st.sampled_from([CYLINDER, BOX, ORIENTED_BOX, PRISM]),
        "size": st.floats(0.2, 3.0),
        "aspect": st.floats(0.2, 1.0),
        "angle": st.floats(-3.14, 3.14),
        "n": st.integers(3, 9),
        "r": st.floats(0.05, 2.0),
    }
)


def _shape(d: dict) -> Obstacle:
    s, q, a = d["size"], d["size"] * d["aspect"], d["angle"]
    z2, z0 = np.zeros(2, np.float32), np.zeros((0, 2), np.float32)
    if d["kind"] == CYLINDER:
        return Obstacle(CYLINDER, np.float32([1, 0, 2]), np.float32([s, 1, 0]), z2, z0, 0)
    if d["kind"] == BOX:
        return Obstacle(
            BOX, np.float32([1 - s, 0, 2 - q]), np.float32([1 + s, 1, 2 + q]), z2, z0, 0
        )
    if d["kind"] == ORIENTED_BOX:
        return Obstacle(
            ORIENTED_BOX, np.float32([1, 0.5, 2]), np.float32([s, 0.5, q]), rot_aux(a), z0, 0
        )
    t = a + 2 * math.pi * np.arange(d["n"]) / d["n"]
    pts = np.stack([1 + s * np.cos(t), 2 + q * np.sin(t)], axis=1).astype(np.float32)
    return Obstacle(PRISM, np.float32([0, 0, 0]), np.float32([0, 1, 0]), z2, pts, 0)


@settings(max_examples=150, deadline=None)
@given(d=shape_st, u=st.floats(0, 1), v=st.floats(0, 1))
def test_expansion_holds_the_minkowski_sum_and_little_more(d, u, v):
    """Every point within r of the footprint lies in the grown shape; every point of the
    grown outline lies within r / cos(22.5 deg) of the footprint."""
    ob = _shape(d)
    r = d["r"]
    g = expand_obstacle(ob, r)
    foot = obstacle_outline(ob, 256)
    ang = 2 * math.pi * u
    p = np.array([1 + (3.0 + r) * math.cos(ang), 2 + (3.0 + r) * math.sin(ang)])
    # walk from far away towards the centre until within r of the footprint
    c = np.array([1.0, 2.0])
    for t in np.linspace(0, 1, 200):
        q = p + t * (c - p)
        if ob.kind == CYLINDER:
            dist = max(0.0, float(np.hypot(*(q - c))) - float(ob.b[0]))
        else:
            dist = _poly_dist(foot, q)
        if dist < r * (1 - 1e-4) * v:
            if g.kind == CYLINDER:
                assert np.hypot(*(q - c)) <= g.b[0] + 1e-4
            else:
                assert _poly_dist(g.points.astype(np.float64), q) <= 1e-4
            break
    if g.kind == PRISM:
        for q in g.points.astype(np.float64):
            assert _poly_dist(foot, q) <= r / math.cos(math.pi / 8) + 1e-3


def test_expansion_leaves_area_obstacles_and_compatible_mode_alone():
    ob = _shape({"kind": BOX, "size": 1.0, "aspect": 1.0, "angle": 0.0, "n": 4, "r": 0})
    assert expand_obstacle(ob, 0.0) is ob
    tc, _, _ = _dungeon(False)
    assert tc._state.effective(ob._replace(area=5)).kind == BOX
    assert tc._state.effective(ob).kind == PRISM
    tcc, _, _ = _dungeon(True)
    assert tcc._state.effective(ob) is ob


# -- the grown-footprint property ----------------------------------------------------------
def _foot_dist(s: dict, p: np.ndarray) -> float:
    dx, dz = p[0] - s["c"][0], p[2] - s["c"][2]
    if s["kind"] == "cylinder":
        return max(0.0, math.hypot(dx, dz) - s["r"])
    if s["kind"] in ("box", "obox"):
        a = s.get("a", 0.0)
        uu = math.cos(a) * dx - math.sin(a) * dz
        vv = math.sin(a) * dx + math.cos(a) * dz
        return math.hypot(max(abs(uu) - s["hx"], 0.0), max(abs(vv) - s["hz"], 0.0))
    return _poly_dist(np.array(s["pts"]), np.array([p[0], p[2]]))


def _inside_grown(shapes: list[dict], p: np.ndarray, grow: float) -> bool:
    for s in shapes:
        y0, y1 = s["y"]
        if y0 + Y_TOL <= p[1] <= y1 - Y_TOL and _foot_dist(s, p) < grow:
            return True
    return False


def _crosses(shapes, a, b, grow) -> bool:
    n = max(2, int(np.linalg.norm((b - a)[[0, 2]]) / 0.05) + 1)
    return any(_inside_grown(shapes, a + t * (b - a), grow) for t in np.linspace(0, 1, n))


obstacle = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["cylinder", "box", "obox", "prism"]),
        "at": st.integers(0, 10_000),
        "size": st.floats(0.5, 2.0),
        "aspect": st.floats(0.6, 1.0),
        "angle": st.floats(-3.14, 3.14),
        "n": st.integers(3, 7),
    }
)


def _add(tc: TileCache, ob: dict, floor: float, pts: np.ndarray) -> tuple[int, dict]:
    c = pts[ob["at"] % len(pts)].copy()
    c[1] = floor
    s, q = ob["size"], ob["size"] * ob["aspect"]
    y = (floor - 1.0, floor + 2.0)
    if ob["kind"] == "cylinder":
        h = tc.add_cylinder([c[0], y[0], c[2]], s, y[1] - y[0])
        return h, {"kind": "cylinder", "c": c, "r": s, "y": y}
    if ob["kind"] == "box":
        h = tc.add_box([c[0] - s, y[0], c[2] - q], [c[0] + s, y[1], c[2] + q])
        return h, {"kind": "box", "c": c, "hx": s, "hz": q, "y": y}
    if ob["kind"] == "obox":
        h = tc.add_oriented_box([c[0], floor + 0.5, c[2]], [s, 1.5, q], ob["angle"])
        return h, {"kind": "obox", "c": c, "hx": s, "hz": q, "a": ob["angle"], "y": y}
    n = ob["n"]
    ang = ob["angle"] + 2 * math.pi * np.arange(n) / n
    poly = [(c[0] + s * math.cos(t), c[2] + s * math.sin(t)) for t in ang]
    h = tc.add_prism([[x, y[0], z] for x, z in poly], y[1] - y[0])
    return h, {"kind": "prism", "c": c, "pts": poly, "y": y}


def _violations(tc, floor, pts, shapes, grow, pair_seed, pairs=25) -> int:
    q = NavMeshQuery(tc.navmesh)
    rng = np.random.default_rng(pair_seed)
    bad = 0
    for _ in range(pairs):
        a = pts[rng.integers(len(pts))].astype(np.float64)
        b = pts[rng.integers(len(pts))].astype(np.float64)
        if _inside_grown(shapes, a, R) or _inside_grown(shapes, b, R):
            continue
        path = q.path(a, b)
        for p0, p1 in zip(path.points[:-1], path.points[1:]):
            bad += _crosses(shapes, p0.astype(np.float64), p1.astype(np.float64), grow)
        near = q.find_nearest_poly(a, [0.2, 1.0, 0.2])
        if not near.ref:
            continue
        start = near.point.astype(np.float64)
        hit = q.raycast(near.ref, start, b)
        end = start + min(hit.t, 1.0) * (b - start)
        start[1] = end[1] = floor
        bad += _crosses(shapes, start, end, grow)
    return bad


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obs=st.lists(obstacle, min_size=1, max_size=3), pair_seed=st.integers(0, 2**31))
def test_paths_and_raycasts_keep_the_agent_radius_from_obstacles(obs, pair_seed):
    tc, floor, pts = _dungeon(False)
    added = [_add(tc, ob, floor, pts) for ob in obs]
    try:
        update_calls(tc)
        shapes = [s for _, s in added]
        assert _violations(tc, floor, pts, shapes, R - TOL, pair_seed) == 0
    finally:
        for h, _ in added:
            tc.remove(h)
        update_calls(tc)


def test_the_grown_property_fails_in_compatible_mode():
    """Recast's cache cuts the bare footprint: paths graze obstacles closer than R - TOL."""
    bad = 0
    for compatible in (True, False):
        tc, floor, pts = _dungeon(compatible)
        rng = np.random.default_rng(7)
        added = [
            _add(
                tc,
                {
                    "kind": "cylinder",
                    "at": int(k),
                    "size": 1.0,
                    "aspect": 1.0,
                    "angle": 0.0,
                    "n": 3,
                },
                floor,
                pts,
            )  # fmt: skip
            for k in rng.integers(0, 10_000, 6)
        ]
        update_calls(tc)
        shapes = [s for _, s in added]
        n = sum(_violations(tc, floor, pts, shapes, R - TOL, seed, 40) for seed in range(4))
        for h, _ in added:
            tc.remove(h)
        update_calls(tc)
        if compatible:
            bad = n
        else:
            assert n == 0
    assert bad > 0


# -- detail mesh ----------------------------------------------------------------------------
def _ground_samples(tset, refs=None, per_layer=40, seed=1) -> np.ndarray:
    """Random points on walkable cells: (x, floor height of the cell, z) [wu]."""
    rng = np.random.default_rng(seed)
    p = tset.params
    out = []
    for t in tset.tiles:
        if refs is not None and t.ref not in refs:
            continue
        lay = decompress_tile_cache_layer(t.data)
        h = lay.header
        ok = np.argwhere((lay.heights != 0xFF) & (lay.areas != 0))
        if not len(ok):
            continue
        for z, x in ok[rng.choice(len(ok), size=min(per_layer, len(ok)), replace=False)]:
            fx, fz = rng.random(2)
            out.append((h.bmin[0] + (x + fx) * p.cs, h.bmin[1] + lay.heights[z, x] * p.ch,
                        h.bmin[2] + (z + fz) * p.cs))  # fmt: skip
    return np.array(out)


def _heights(nm, g: np.ndarray) -> np.ndarray:
    """Navmesh height over each sample (NaN where no polygon lies right under it)."""
    q = NavMeshQuery(nm)
    out = np.full(len(g), np.nan)
    for i, p in enumerate(g):
        r = q.find_nearest_poly(p, [0.01, 1.0, 0.01])
        if r.ref and abs(r.point[0] - p[0]) < 1e-3 and abs(r.point[2] - p[2]) < 1e-3:
            out[i] = r.point[1]
    return out


def test_rebuilt_tiles_follow_the_ground():
    """On undulating ground the detail mesh keeps the navmesh within a sample error of the
    cell floors, before and after a rebuild (without it, polygon planes are a climb or
    more off); where no obstacle covers, heights before and after the rebuild agree."""
    tset = read_tile_cache(peer_tilecache("undulating"))
    climb = float(tset.params.walkable_climb)
    ch = float(tset.params.ch)
    tc = TileCache(tset, recast_compatible=False)
    compat = TileCache(tset, recast_compatible=True)
    c = poly_centers(tc.navmesh)
    centres = c[np.random.default_rng(3).choice(len(c), 4, replace=False)]
    g_all = _ground_samples(tset)
    before = _heights(tc.navmesh, g_all)
    for cc in centres:
        tc.add_cylinder(cc - [0, 1, 0], 1.0, 3.0)
    ch_ = tc.update()
    assert tc.up_to_date and ch_.rebuilt
    locs = set(ch_.rebuilt)
    refs = {t.ref for t in tset.tiles if (t.header.tx, t.header.ty, t.header.tlayer) in locs}
    g = _ground_samples(tset, refs, per_layer=150, seed=2)
    far = np.array([np.min(np.hypot(*(centres[:, [0, 2]] - p[[0, 2]]).T)) > 1.0 + 0.6 + 1.0
                    for p in g])  # fmt: skip
    g = g[far]
    after = _heights(tc.navmesh, g)
    old = _heights(TileCache(tset, recast_compatible=False).navmesh, g)
    flat = _heights(compat.navmesh, g)
    for name, y in (("before", before), ("after", after)):
        ref = g_all if name == "before" else g
        err = np.abs(y - ref[:, 1])
        err = err[np.isfinite(err)]
        assert len(err) > 0.5 * len(ref), name
        # detail samples are within ch of the cell floors; cells are ch-quantized
        assert np.median(err) <= ch + 0.05, (name, np.median(err))
        assert np.percentile(err, 99) <= climb, (name, np.percentile(err, 99))
    both = np.isfinite(after) & np.isfinite(old)
    assert both.sum() > 100
    assert np.percentile(np.abs(after - old)[both], 99) <= climb
    # the same test on Recast's tile (no detail mesh) fails
    err = np.abs(flat - g[:, 1])
    err = err[np.isfinite(err)]
    assert np.median(err) > ch + 0.05 or np.percentile(err, 99) > climb


# -- off-mesh connections -------------------------------------------------------------------
def test_offmesh_connection_survives_a_rebuild_of_its_tile():
    tset = read_tile_cache(peer_tilecache("dungeon"))
    plain = TileCache(tset, recast_compatible=False)
    c = poly_centers(plain.navmesh)
    a = c[len(c) // 2]
    d = np.hypot(*(c[:, [0, 2]] - a[[0, 2]]).T)
    b = c[np.argmin(np.where(d > 4.0, d, np.inf))]
    con = {"start": a.tolist(), "end": b.tolist(), "radius": 0.5, "bidirectional": True,
           "area": 0, "flags": 1, "userId": 4242}  # fmt: skip
    tc = TileCache(tset, recast_compatible=False, offmesh=[con])
    assert tc.navmesh.stats()["offmesh"] == 1

    def user_ids() -> list[int]:
        nm = tc.navmesh
        return [int(u) for s in nm.tile_slots() for u in nm.tile_data(s).off_user_id]

    assert user_ids() == [4242]
    # an obstacle 2 m from the start, on the start's tile
    tx = int((a[0] - tset.params.orig[0]) // (tset.params.width * tset.params.cs))
    tz = int((a[2] - tset.params.orig[2]) // (tset.params.height * tset.params.cs))
    h = tc.add_cylinder([a[0] + 2.0, a[1] - 1.0, a[2]], 0.3, 3.0)
    ch = tc.update()
    assert any((x, y) == (tx, tz) for x, y, _ in ch.rebuilt), ch.rebuilt
    assert user_ids() == [4242]
    assert tc.navmesh.stats()["offmesh"] == 1
    # and through save / load
    tc2 = TileCache.load(tc.to_bytes())
    assert tc2.recast_compatible is False
    assert tc2.navmesh.stats() == tc.navmesh.stats()
    tc.remove(h)
    tc.update()
    assert user_ids() == [4242]
    # the compatible mode refuses them (Recast's rebuilt tiles lose them)
    with pytest.raises(Exception, match="offmesh"):
        TileCache(tset, offmesh=[con])


# -- no dropped request ---------------------------------------------------------------------
def test_200_obstacles_at_once():
    tset = read_tile_cache(peer_tilecache("dungeon"))
    tset = tset._replace(params=tset.params._replace(max_obstacles=256))
    tc = TileCache(tset, recast_compatible=False)
    c = poly_centers(tc.navmesh)
    pick = c[np.random.default_rng(11).choice(len(c), 200, replace=len(c) < 200)]
    hs = [tc.add_cylinder(p - [0, 1.5, 0], 0.3, 3.0) for p in pick]
    assert len(hs) == 200 and len(tc._state.reqs) == 200
    tc.update()
    assert tc.up_to_date
    st_ = tc._state
    assert all(st_.obs[h & 0xFFFF].state == PROCESSED for h in hs)
    # every obstacle's layers were rebuilt with it: no centre is on the navmesh anymore
    q = NavMeshQuery(tc.navmesh)
    for p in pick:
        r = q.find_nearest_poly(p, [0.05, 1.0, 0.05])
        on = r.ref and abs(float(r.point[1] - p[1])) < 1.5
        assert not on or np.hypot(*(r.point - p)[[0, 2]]) > 0.3, p
    # Recast's cache refuses the 65th queued request
    compat = TileCache(tset, recast_compatible=True)
    for p in pick[:64]:
        compat.add_cylinder(p - [0, 0.5, 0], 0.3, 2.0)
    with pytest.raises(InputError, match="64 requests"):
        compat.add_cylinder(pick[64] - [0, 0.5, 0], 0.3, 2.0)
    compat.update()
    assert compat.up_to_date


def test_touched_layers_come_from_the_grown_bounds():
    """A small cylinder 0.5 wu from a tile border reaches across it once grown by R."""
    tc, floor, pts = _dungeon(False)
    tcc, _, _ = _dungeon(True)
    p = tc.params
    tw = p.width * p.cs
    for c in pts:
        fx = (c[0] - p.orig[0]) / tw
        x_border = p.orig[0] + math.ceil(fx) * tw
        at = np.array([x_border - 0.5, floor - 1.0, c[2]])
        h = tc.add_cylinder(at, 0.3, 3.0)
        hc = tcc.add_cylinder(at, 0.3, 3.0)
        grown = {(x, y) for x, y, _ in tc.touched_tiles(h)}
        bare = {(x, y) for x, y, _ in tcc.touched_tiles(hc)}
        tc.remove(h)
        tcc.remove(hc)
        update_calls(tc)
        update_calls(tcc)
        if any(x == math.ceil(fx) for x, _ in grown):
            assert bare and all(x < math.ceil(fx) for x, _ in bare)
            return
    pytest.fail("no floor point whose neighbour tile has a layer")


# -- area obstacles mark the bare footprint -------------------------------------------------
def _open_floor_point(tc, floor, pts, clear):
    """A floor point whose circle of radius ``clear`` lies on the navmesh."""
    q = NavMeshQuery(tc.navmesh)
    for c in pts[:: max(1, len(pts) // 60)]:
        ring = [
            np.array([c[0] + clear * math.cos(t), floor, c[2] + clear * math.sin(t)])
            for t in np.linspace(0, 2 * math.pi, 16, endpoint=False)
        ]
        near = [q.find_nearest_poly(p, [0.05, 0.5, 0.05]) for p in ring]
        if all(
            n.ref and abs(n.point[0] - p[0]) + abs(n.point[2] - p[2]) < 1e-3
            for n, p in zip(near, ring)
        ):
            return np.array([c[0], floor, c[2]])
    raise AssertionError("no open floor in the dungeon")


def _area_vertex_dists(tc, c, area):
    """xz distances from c of every vertex of every polygon with this area id."""
    nm = tc.navmesh
    a = nm.arrays()
    out = []
    for ref in nm.poly_refs():
        gp = nm.poly_index(ref)
        if int(a.poly_area[gp]) != area:
            continue
        v = a.verts[a.poly_verts[gp, : int(a.poly_vert_count[gp])]].astype(np.float64)
        out.extend(np.hypot(v[:, 0] - c[0], v[:, 2] - c[2]))
    return np.array(out)


def test_area_obstacles_are_not_grown_by_the_agent_radius():
    """Default mode: ``area=`` marks the bare footprint (agents may enter it, as water or
    mud); a hole of the same shape is grown by the agent radius R."""
    tc, floor, pts = _dungeon(False)
    r = 1.0
    c = _open_floor_point(tc, floor, pts, r + R + 1.0)
    assert _area_vertex_dists(tc, c, 5).size == 0
    h = tc.add_cylinder([c[0], floor - 1.0, c[2]], r, 3.0, area=5)
    try:
        update_calls(tc)
        d = _area_vertex_dists(tc, c, 5)
        assert d.size and d.max() <= r + TOL  # grown, it would reach r + R = 2.5
        assert d.max() >= r - TOL
        q = NavMeshQuery(tc.navmesh)
        p = np.array([c[0] + r + 0.5 * R, floor, c[2]])
        n = q.find_nearest_poly(p, [0.05, 0.5, 0.05])
        assert n.ref and abs(n.point[0] - p[0]) < 1e-3  # still walkable ground
    finally:
        tc.remove(h)
        update_calls(tc)
    h = tc.add_cylinder([c[0], floor - 1.0, c[2]], r, 3.0)
    try:
        update_calls(tc)
        n = NavMeshQuery(tc.navmesh).find_nearest_poly(p, [0.05, 0.5, 0.05])
        assert not n.ref or abs(n.point[0] - p[0]) > 0.1  # inside the grown hole
    finally:
        tc.remove(h)
        update_calls(tc)
