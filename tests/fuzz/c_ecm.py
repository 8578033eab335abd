"""Corridor-map operation sequences (valid and invalid) against the rebuild oracle,
and optimal paths on Moving AI maps."""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from .common import HOSTILE_FLOATS, HOSTILE_OTHER, check_finite, expect, pick, shared_dir


def _obstacle(rng, cx, cy, size):
    kind = pick(rng, ["poly", "poly", "seg", "point"])
    if kind == "point":
        return np.array([[cx, cy]])
    if kind == "seg":
        a = rng.uniform(0, np.pi)
        d = np.array([np.cos(a), np.sin(a)]) * size
        return np.array([[cx, cy] - d, [cx, cy] + d])
    k = int(rng.integers(3, 7))
    ang = (np.arange(k) + rng.uniform(-0.3, 0.3, k)) * (2 * np.pi / k) + rng.uniform(0, 2 * np.pi)
    rad = size * rng.uniform(0.5, 1.0, k)
    return np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], axis=1)


def _hostile_points(rng, base):
    r = int(rng.integers(8))
    if r == 0:
        p = np.array(base, float).copy()
        p.flat[int(rng.integers(p.size))] = pick(rng, HOSTILE_FLOATS)
        return p
    if r == 1:
        return np.array([[1, 1], [2, 2], [2, 1], [1, 2]], float) + base[0]  # bow tie
    if r == 2:
        return np.array([[1, 1], [2, 1], [3, 1]], float) + base[0]  # zero area
    if r == 3:
        return np.asarray(base)[:, :1] if np.asarray(base).ndim == 2 else base
    if r == 4:
        return np.array(base, float) * pick(rng, [1e6, 1e12, 1e300])
    if r == 5:
        return np.repeat(np.asarray(base, float)[:1], 3, axis=0)  # one point thrice
    if r == 6:
        return pick(rng, HOSTILE_OTHER + [[[0, 0, 0]], [], np.zeros((0, 2))])
    return np.array(base, float) + rng.uniform(-0.5, 0.5, np.shape(base)) * 1e-9  # near-duplicate


def ecm_ops_case(rng: np.random.Generator, index: int) -> None:
    from navkit.ecm import CorridorMap, map_difference
    from navkit.errors import NavkitError

    w, h = float(rng.uniform(15, 40)), float(rng.uniform(10, 30))
    boundary = np.array([[0, 0], [w, 0], [w, h], [0, h]], float)
    obs = []
    for _ in range(int(rng.integers(0, 8))):
        obs.append(
            _obstacle(rng, *rng.uniform([2, 2], [w - 2, h - 2]), float(rng.uniform(0.3, 1.5)))
        )
    try:
        m = CorridorMap.from_polygons(boundary, obs)
    except NavkitError:
        m = CorridorMap.from_polygons(boundary)
    every = int(pick(rng, [1, 2, 4]))
    steps = int(rng.integers(4, 14))
    for step in range(steps):
        hs = [k for k in m.obstacles if k]
        op = pick(
            rng, ["ins", "ins", "rem", "mov", "mov", "bad_ins", "bad_rem", "bad_mov", "query"]
        )
        try:
            if op == "ins":
                m.insert_polygon(
                    _obstacle(
                        rng, *rng.uniform([1, 1], [w - 1, h - 1]), float(rng.uniform(0.2, 1.5))
                    )
                )
            elif op == "rem" and hs:
                m.remove(int(pick(rng, hs)))
            elif op == "mov" and hs:
                k = int(pick(rng, hs))
                if rng.random() < 0.7:
                    m.move(k, offset=rng.uniform(-1, 1, 2) * pick(rng, [0.2, 1.0, 3.0]))
                else:
                    m.move(k, _obstacle(rng, *rng.uniform([1, 1], [w - 1, h - 1]), 1.0))
            elif op == "bad_ins":
                base = _obstacle(rng, *rng.uniform([1, 1], [w - 1, h - 1]), 1.0)
                pts = _hostile_points(rng, base)
                how = int(rng.integers(3))
                if how == 0:
                    m.insert_polygon(pts)
                elif how == 1:
                    m.insert_point(
                        pick(rng, [[math.nan, 1], [w + 5, 1], [1], None, "x", [1e300, 1]])
                    )
                else:
                    m.insert_segment(
                        pick(rng, [[1, 1], [math.inf, 1]]), pick(rng, [[w + 3, 2], [1, 1], [2, 2]])
                    )
            elif op == "bad_rem":
                m.remove(pick(rng, [0, -1, 999, None, "x", 1.5, math.nan, 2**70] + hs[:1]))
            elif op == "bad_mov":
                k = pick(rng, hs + [0, 999, None]) if hs else 999
                r = int(rng.integers(4))
                if r == 0:
                    m.move(
                        k, offset=pick(rng, [[math.nan, 0], [1e300, 0], [w * 3, 0], [0], "x", None])
                    )
                elif (
                    r == 1 and hs
                ):  # onto another obstacle: must be refused and leave the map intact
                    other = m.obstacles[int(pick(rng, hs))]["ring"] + m.origin
                    m.move(k, other + rng.uniform(-0.05, 0.05, other.shape))
                else:
                    m.move(
                        k,
                        _hostile_points(
                            rng, np.array([[1, 1], [2, 1], [1.5, 2]]) + rng.uniform(0, 5, 2)
                        ),
                    )
            elif op == "query":
                a = rng.uniform([0, 0], [w, h])
                b = rng.uniform([0, 0], [w, h])
                c = float(pick(rng, [0.0, 0.1, 0.5, 2.0, -1.0, math.nan, 1e300]))
                p = m.find_path(a, b, clearance=c)
                if p is not None:
                    check_finite(p.points, "ecm find_path")
                    expect(np.allclose(p.points[0], a, atol=1e-6) and np.allclose(p.points[-1], b, atol=1e-6),
                           "ecm path does not join start and goal")  # fmt: skip
                cl = m.clearance_at(
                    a if rng.random() < 0.9 else pick(rng, [[math.nan, 0], [1e300, 1]])
                )
                expect(cl >= 0 and math.isfinite(cl), f"clearance_at {cl}")
                m.nearest_medial_point(a)
        except NavkitError:
            pass
        m.check()
        if step % every == 0 or step == steps - 1:
            diff = map_difference(m, m.rebuilt())
            expect(
                diff == [],
                f"corridor map differs from its rebuild after step {step} ({op}): {diff[:3]}",
            )


# -- optimal paths on Moving AI maps ----------------------------------------------------------
_MAPS = ("arena", "32room_000", "maze512-2-5")


@cache
def _grid_query(name: str):
    import navkit
    from navkit.geometry.grid import bake_grid, load_movingai_map, load_movingai_scenarios

    sd = shared_dir()
    if sd is None or not (sd / "data" / "movingai" / f"{name}.map").is_file():
        rng = np.random.default_rng(7)
        g = rng.random((40, 40)) < 0.25
        nm = bake_grid(g)
        scen = None
    else:
        base = sd / "data" / "movingai" / f"{name}.map"
        nm = bake_grid(load_movingai_map(base))
        scen = load_movingai_scenarios(str(base) + ".scen")
    return navkit.NavMeshQuery(nm, max_nodes=65535), scen


def optimal_case(rng: np.random.Generator, index: int) -> None:
    from navkit.detour.optimal import find_optimal_path

    name = pick(rng, list(_MAPS))
    q, scen = _grid_query(name)
    if scen is not None and rng.random() < 0.5:
        k = int(rng.integers(len(scen.start)))
        sx, sy = scen.start[k]
        gx, gy = scen.goal[k]
        s = (float(sx) + 0.5, 0.0, float(sy) + 0.5)
        e = (float(gx) + 0.5, 0.0, float(gy) + 0.5)
        octile = float(scen.optimal_length[k])
    else:
        s = tuple(q.find_random_point(rng=int(rng.integers(1 << 30))).point.tolist())
        e = tuple(q.find_random_point(rng=int(rng.integers(1 << 30))).point.tolist())
        octile = None
    p = find_optimal_path(q, s, e, half_extents=(0.5, 2.0, 0.5))
    check_finite(p.points, "optimal path")
    xz = float(np.sum(np.hypot(*np.diff(p.points[:, [0, 2]].astype(np.float64), axis=0).T)))
    straight = float(np.hypot(p.points[-1][0] - p.points[0][0], p.points[-1][2] - p.points[0][2]))
    expect(
        xz >= straight - 1e-4, f"optimal path shorter than the straight line ({xz} < {straight})"
    )
    if p.complete:
        expect(abs(p.points[-1][0] - e[0]) < 0.51 and abs(p.points[-1][2] - e[2]) < 0.51,
               "complete optimal path does not end at the goal")  # fmt: skip
        if octile is not None:
            # a grid path between cell centres is a path through the free cells: never shorter
            expect(xz <= octile + 1e-3 * (1 + octile),
                   f"optimal path {xz:.5f} longer than the grid optimum {octile:.5f}")  # fmt: skip
