"""The default mode's one-kernel update steps (``tilecache._rebuild.rebuild_swap_detail``,
run by ``_update.run_steps_detail``)
against its Python path (``build_layer_tile(detail=True)`` and the NavMesh's tile
swap): the same tiles (polygons, detail meshes, BV trees, off-mesh connections,
links) after every update of a sequence of adds, moves and removes."""

from __future__ import annotations

import numpy as np
import pytest
from _oracle import poly_centers
from _tc_cases import peer_tilecache

from navkit.detour.tile import first_difference
from navkit.tilecache import TileCache
from navkit.tilecache.format import read_tile_cache


class _PythonPath(TileCache):
    _kernel_tiles = False  # initial tiles: build_layer_tile and add_tiles


def _pair(mesh: str, with_offmesh: bool) -> tuple[TileCache, TileCache, np.ndarray]:
    tset = read_tile_cache(peer_tilecache(mesh))
    tset = tset._replace(params=tset.params._replace(max_obstacles=256))
    plain = TileCache(tset, recast_compatible=False)
    c = poly_centers(plain.navmesh)
    cons = None
    if with_offmesh:
        rng = np.random.default_rng(7)
        cons = []
        for k, i in enumerate(rng.choice(len(c), 6, replace=False)):
            a = c[i]
            d = np.hypot(*(c[:, [0, 2]] - a[[0, 2]]).T)
            b = c[np.argmin(np.where(d > 3.0, d, np.inf))]
            cons.append({"start": a.tolist(), "end": b.tolist(), "radius": 0.5,
                         "bidirectional": bool(k % 2), "area": k % 3, "flags": 1 + k,
                         "userId": 100 + k})  # fmt: skip
    kernel = TileCache(tset, recast_compatible=False, offmesh=cons)
    python = _PythonPath(tset, recast_compatible=False, offmesh=cons)
    python._state.fast_detail = False
    return kernel, python, c


def _same(a: TileCache, b: TileCache, where: str) -> None:
    na, nb = a.navmesh, b.navmesh
    assert na.tile_slots() == nb.tile_slots(), where
    for s in na.tile_slots():
        diff = first_difference(na.tile_data(s), nb.tile_data(s))
        assert diff is None, f"{where}: tile slot {s}: {diff}"
    assert na.to_recast() == nb.to_recast(), where


def _script(tc: TileCache, c: np.ndarray, seed: int):
    """Seeded adds (every shape, some marking an area), moves and removes; yields after
    each update (a few updates are single steps)."""
    rng = np.random.default_rng(seed)
    live: list[int] = []
    for step in range(40):
        op = rng.random()
        if op < 0.55 or not live:
            p = c[rng.integers(len(c))]
            kind = rng.integers(4)
            area = int(rng.integers(1, 5)) if rng.random() < 0.2 else None
            if kind == 0:
                h = tc.add_cylinder([p[0], p[1] - 0.5, p[2]], float(rng.uniform(0.3, 2.5)),
                                    2.0, area=area)  # fmt: skip
            elif kind == 1:
                e = rng.uniform(0.3, 3.0, 2)
                h = tc.add_box([p[0] - e[0], p[1] - 0.5, p[2] - e[1]],
                               [p[0] + e[0], p[1] + 1.5, p[2] + e[1]], area=area)  # fmt: skip
            elif kind == 2:
                h = tc.add_oriented_box([p[0], p[1], p[2]], [*rng.uniform(0.3, 2.0, 1), 1.0,
                                        *rng.uniform(0.3, 2.0, 1)], float(rng.uniform(-3, 3)),
                                        area=area)  # fmt: skip
            else:
                r = float(rng.uniform(0.5, 2.0))
                ang = np.sort(rng.uniform(0, 2 * np.pi, 5))
                pts = [[p[0] + r * np.cos(t), p[1] - 0.5, p[2] + r * np.sin(t)] for t in ang]
                try:
                    h = tc.add_prism(pts, 2.0, area=area)
                except Exception:  # a degenerate draw (collinear corners)
                    continue
            live.append(h)
        elif op < 0.75:
            h = live[int(rng.integers(len(live)))]
            tc.move(h, [float(rng.uniform(-2, 2)), 0.0, float(rng.uniform(-2, 2))])
        else:
            tc.remove(live.pop(int(rng.integers(len(live)))))
        if step % 5 == 4:
            while not tc.up_to_date:
                tc.update(max_tiles=1)
                yield step
        else:
            tc.update()
            yield step
    for h in live:
        tc.remove(h)
    tc.update()
    yield -1


@pytest.mark.parametrize(
    "mesh,offmesh,seed",
    [("dungeon", True, 1), ("dungeon", False, 2), ("nav_test", True, 3), ("undulating", True, 4)],
)
def test_one_kernel_step_matches_the_python_path(mesh, offmesh, seed):
    kernel, python, c = _pair(mesh, offmesh)
    _same(kernel, python, "initial")
    ka = _script(kernel, c, seed)
    pa = _script(python, c, seed)
    n = 0
    for sk, sp in zip(ka, pa):
        assert sk == sp
        _same(kernel, python, f"{mesh} after step {sk}")
        n += 1
    assert n > 40
    # the kernel really ran (the Python path is not the one being compared with itself)
    assert kernel._state.fast_steps > 0 and python._state.fast_steps == 0


def test_a_tile_covered_by_an_obstacle_is_removed_and_comes_back():
    kernel, python, c = _pair("dungeon", True)
    tset = kernel.tile_cache_set
    t = tset.tiles[len(tset.tiles) // 2]
    h = t.header
    lo = [h.bmin[0] - 1.0, h.bmin[1] - 1.0, h.bmin[2] - 1.0]
    hi = [h.bmax[0] + 1.0, h.bmax[1] + 1.0, h.bmax[2] + 1.0]
    before = kernel.navmesh.stats()
    for tc in (kernel, python):
        tc.add_box(lo, hi)
        tc.update()
    assert kernel.navmesh.get_tile_ref_at(h.tx, h.ty, h.tlayer) == 0
    _same(kernel, python, "covered")
    for tc in (kernel, python):
        tc.remove(tc.obstacle_handles()[0])
        tc.update()
    _same(kernel, python, "uncovered")
    assert kernel.navmesh.stats() == before


@pytest.mark.parametrize("compatible", [True, False])
def test_initial_tiles_from_the_step_kernel_equal_the_python_path(compatible):
    """A cache built without an executor adds its initial tiles with the update step's
    kernel (so that the first update compiles nothing new): the same navmesh as
    build_layer_tile + add_tiles, tile for tile."""
    tset = read_tile_cache(peer_tilecache("nav_test"))
    kernel = TileCache(tset, recast_compatible=compatible)
    python = _PythonPath(tset, recast_compatible=compatible)
    assert kernel._state.fast_steps == len(tset.tiles) and python._state.fast_steps == 0
    _same(kernel, python, "initial")


def test_initial_tiles_report_progress_per_position():
    """The kernel-built initial tiles report progress as the per-position path does:
    one call per tile position (positions without layers too), done counting up to
    the total."""
    tset = read_tile_cache(peer_tilecache("dungeon"))
    got: list = []
    want: list = []
    TileCache(tset, progress=lambda d, t: got.append((d, t)))
    _PythonPath(tset, progress=lambda d, t: want.append((d, t)))
    assert got == want
    assert got[-1][0] == got[-1][1] and [d for d, _ in got] == list(range(1, got[-1][1] + 1))
