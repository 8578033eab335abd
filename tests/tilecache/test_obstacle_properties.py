"""Property: with random obstacles in place, no straight path and no raycast crosses an
obstacle's footprint (shrunk by the rasterization and contour tolerances)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _oracle import poly_centers, update_calls
from _tc_cases import peer_tilecache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from navkit.detour.query import NavMeshQuery
from navkit.tilecache import TileCache

#: How far inside its outline a footprint must be crossed to count [wu]: Detour cuts
#: cells whose centre is within radius + cs/2 (a point within r - 0.21 cs is always cut)
#: and the contour of the walkable area may cut into the hole by max_error (1.3 cells).
MARGIN = 0.6
#: Height tolerance [wu]: without a detail mesh a polygon's plane is within a climb of
#: the cells' floors.
Y_TOL = 0.9

_STATE: dict = {}


def _setup():
    if "tc" not in _STATE:
        tc = TileCache.from_recast(peer_tilecache("dungeon"))
        c = poly_centers(tc.navmesh)
        ys = np.round(c[:, 1], 1)
        vals, counts = np.unique(ys, return_counts=True)
        floor = float(vals[counts.argmax()])
        _STATE.update(tc=tc, floor=floor, pts=c[np.abs(c[:, 1] - floor) < 0.2])
    return _STATE["tc"], _STATE["floor"], _STATE["pts"]


def _inside(shape: dict, p: np.ndarray) -> bool:
    y0, y1 = shape["y"]
    if not (y0 + Y_TOL <= p[1] <= y1 - Y_TOL):
        return False
    dx, dz = p[0] - shape["c"][0], p[2] - shape["c"][2]
    if shape["kind"] == "cylinder":
        return math.hypot(dx, dz) < shape["r"] - MARGIN
    if shape["kind"] == "box":
        return abs(dx) < shape["hx"] - MARGIN and abs(dz) < shape["hz"] - MARGIN
    if shape["kind"] == "obox":
        a = shape["a"]
        u = math.cos(a) * dx - math.sin(a) * dz
        v = math.sin(a) * dx + math.cos(a) * dz
        return abs(u) < shape["hx"] - MARGIN and abs(v) < shape["hz"] - MARGIN
    pts = shape["pts"]  # counter-clockwise in (x, z) as seen with x right, z up
    n = len(pts)
    for i in range(n):
        ax, az = pts[i]
        bx, bz = pts[(i + 1) % n]
        ex, ez = bx - ax, bz - az
        d = (ex * (p[2] - az) - ez * (p[0] - ax)) / math.hypot(ex, ez)
        if d < MARGIN:
            return False
    return True


def _crosses(shapes: list[dict], a: np.ndarray, b: np.ndarray) -> bool:
    n = max(2, int(np.linalg.norm((b - a)[[0, 2]]) / 0.05) + 1)
    for t in np.linspace(0.0, 1.0, n):
        p = a + t * (b - a)
        if any(_inside(s, p) for s in shapes):
            return True
    return False


obstacle = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["cylinder", "box", "obox", "prism"]),
        "at": st.integers(0, 10_000),
        "size": st.floats(1.0, 2.5),
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


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obs=st.lists(obstacle, min_size=1, max_size=3), pair_seed=st.integers(0, 2**31))
def test_paths_and_raycasts_avoid_obstacles(obs, pair_seed):
    tc, floor, pts = _setup()
    added = [_add(tc, ob, floor, pts) for ob in obs]
    try:
        update_calls(tc)
        shapes = [s for _, s in added]
        q = NavMeshQuery(tc.navmesh)
        rng = np.random.default_rng(pair_seed)
        for _ in range(25):
            a = pts[rng.integers(len(pts))].astype(np.float64)
            b = pts[rng.integers(len(pts))].astype(np.float64)
            if any(_inside(s, a) or _inside(s, b) for s in shapes):
                continue
            path = q.path(a, b)
            for p0, p1 in zip(path.points[:-1], path.points[1:]):
                assert not _crosses(shapes, p0.astype(np.float64), p1.astype(np.float64)), (
                    "straight path crosses an obstacle",
                    a,
                    b,
                )
            near = q.find_nearest_poly(a, [0.2, 1.0, 0.2])
            if not near.ref:
                continue
            start = near.point.astype(np.float64)
            hit = q.raycast(near.ref, start, b)
            t = min(hit.t, 1.0)
            end = start + t * (b - start)
            end[1] = floor  # a ray on the floor: both ends are floor points
            start[1] = floor
            assert not _crosses(shapes, start, end), ("raycast crosses an obstacle", a, b)
    finally:
        for h, _ in added:
            tc.remove(h)
        update_calls(tc)


def test_the_property_can_fail():
    """Without an update the obstacle is not cut yet, and a path goes straight through."""
    tc = TileCache.from_recast(peer_tilecache("dungeon"))
    _, floor, pts = _setup()
    a, b = None, None
    q = NavMeshQuery(tc.navmesh)
    for i in range(len(pts)):
        for j in range(len(pts)):
            d = pts[j] - pts[i]
            if 6 < math.hypot(d[0], d[2]) < 12:
                p = q.path(pts[i], pts[j])
                if len(p.points) == 2 and p.complete:
                    a, b = pts[i], pts[j]
                    break
        if a is not None:
            break
    assert a is not None
    mid = (a + b) / 2
    shape = {"kind": "cylinder", "c": mid, "r": 1.5, "y": (floor - 1, floor + 2)}
    tc.add_cylinder([mid[0], floor - 1, mid[2]], 1.5, 3.0)
    p = q.path(a, b)
    assert _crosses([shape], p.points[0].astype(float), p.points[-1].astype(float))
    update_calls(tc)
    p = NavMeshQuery(tc.navmesh).path(a, b)
    assert not any(
        _crosses([shape], u.astype(float), v.astype(float))
        for u, v in zip(p.points[:-1], p.points[1:])
    )
