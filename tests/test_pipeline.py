"""The tile pipeline (navkit.pipeline): executor loop and bulk navmesh assembly."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from navkit import pipeline
from navkit.detour.navmesh import NavMesh
from navkit.errors import BuildError, InputError
from navkit.geometry.sample import sample_level
from navkit.geometry.trimesh import TriMesh
from navkit.recast.config import BakeConfig
from navkit.tilecache.build import build_tile_cache
from navkit.tilecache.tilemesh import build_layer_tile


def _square(x: int, y: int, layer: int = 0) -> int:
    return (x + 1) * 100 + (y + 1) * 10 + layer


def test_run_tiles_keys_results_by_tile_whatever_the_executor():
    coords = pipeline.tile_coords(3, 2)
    assert coords == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
    seen: list[tuple[int, int]] = []
    serial = pipeline.run_tiles(
        _square, coords, lambda x, y: (x, y), None, lambda d, t: seen.append((d, t))
    )
    assert serial == {(x, y): _square(x, y) for x, y in coords}
    assert seen == [(i + 1, 6) for i in range(6)]
    seen.clear()
    with ThreadPoolExecutor(2) as ex:
        par = pipeline.run_tiles(
            _square, coords, lambda x, y: (x, y), ex, lambda d, t: seen.append((d, t))
        )
    assert par == serial and sorted(seen) == [(i + 1, 6) for i in range(6)]


@pytest.fixture(scope="module")
def layer_tiles():
    """The tiles of a tile cache of the sample level (several layers per position)."""
    tset = build_tile_cache(sample_level(), BakeConfig(tile_size=16))
    datas = [build_layer_tile(t.data, tset.params) for t in tset.tiles]
    datas = [d for d in datas if d is not None]
    assert len({(d.x, d.y) for d in datas}) < len(datas)  # some position has 2+ layers
    return tset.navmesh_params, datas


def _pools(nm: NavMesh) -> dict[str, np.ndarray]:
    a = nm.arrays()
    return {k: np.array(getattr(a, k)) for k in a._fields}


@pytest.mark.parametrize("split", [0, 1, 7])
def test_add_tiles_equals_adding_them_one_by_one(layer_tiles, split):
    params, datas = layer_tiles
    one = NavMesh(params)
    refs1 = [one._add_tile(d, None, check=False) for d in datas]
    bulk = NavMesh(params)
    # some tiles first (one by one), the rest in bulk: links to earlier tiles as addTile's
    refs2 = [bulk._add_tile(d, None, check=False) for d in datas[:split]]
    refs2 += pipeline.add_tiles(bulk, datas[split:])
    assert refs1 == refs2
    p1, p2 = _pools(one), _pools(bulk)
    for k in p1:
        np.testing.assert_array_equal(p1[k], p2[k], err_msg=k)
    assert one.to_recast() == bulk.to_recast()


def test_add_tiles_adds_nothing_when_one_tile_cannot_go_in(layer_tiles):
    params, datas = layer_tiles
    nm = NavMesh(params)
    nm._add_tile(datas[3], None, check=False)
    before = nm.to_recast()
    with pytest.raises(InputError, match="already occupies"):
        pipeline.add_tiles(nm, datas[:5])
    with pytest.raises(InputError, match="already occupies"):
        pipeline.add_tiles(nm, [datas[0], datas[0]])
    assert nm.to_recast() == before
    assert pipeline.add_tiles(nm, []) == []


@pytest.fixture(scope="module")
def baked_tiles():
    """The tiles of a tiled bake of the sample level with detail meshes, BV trees and an
    off-mesh connection (every pool _store fills)."""
    from navkit.pipeline import bake

    mesh = sample_level()
    cfg = BakeConfig(tile_size=16)
    nm = bake(mesh, cfg)
    c = np.array([nm.tile_data(s).verts.mean(axis=0) for s in nm.tile_slots()])
    a, b = c[-2], c[len(c) // 2]  # starts on a late tile: its polygons do not start at 0
    con = {"start": a.tolist(), "end": b.tolist(), "radius": 0.6, "bidirectional": True}
    nm = bake(mesh, cfg, offmesh=[con])
    datas = [nm.tile_data(s) for s in nm.tile_slots()]
    assert sum(d.off_mesh_con_count for d in datas) == 1
    assert all(d.bv_node_count and d.detail_tris.shape[0] for d in datas)
    return nm.params, datas


@pytest.mark.parametrize("split", [0, 3])
def test_add_tiles_stores_every_pool_as_one_by_one(baked_tiles, split):
    params, datas = baked_tiles
    one = NavMesh(params)
    refs1 = [one._add_tile(d, None, check=False) for d in datas]
    bulk = NavMesh(params)
    refs2 = [bulk._add_tile(d, None, check=False) for d in datas[:split]]
    refs2 += pipeline.add_tiles(bulk, datas[split:])
    assert refs1 == refs2
    p1, p2 = _pools(one), _pools(bulk)
    for k in p1:
        np.testing.assert_array_equal(p1[k], p2[k], err_msg=k)
    assert one.to_recast() == bulk.to_recast()


def _per_tile_bake(monkeypatch, mesh, cfg, **kw):
    """The bake through the per-tile path (``_bake_tile`` per tile, ``add_tiles``)."""
    with monkeypatch.context() as m:
        m.setattr(pipeline, "_kernel_bake_ok", lambda *a: False)
        return pipeline.bake(mesh, cfg, **kw)


@pytest.mark.parametrize("tile_size", [16, 32])
def test_tile_kernel_bake_equals_per_tile_bake(monkeypatch, tile_size):
    """The tile loop in one kernel (serial, on a thread pool, in progress chunks) gives
    the per-tile path's pools, report counts, regions and tile tallies."""
    mesh = sample_level()
    cfg = BakeConfig(tile_size=tile_size)
    ref = _per_tile_bake(monkeypatch, mesh, cfg)
    calls: list[tuple[int, int]] = []
    with ThreadPoolExecutor(2) as ex:
        bakes = [
            pipeline.bake(mesh, cfg, threads=1),
            pipeline.bake(mesh, cfg, threads=2),
            pipeline.bake(mesh, cfg, executor=ex),
            pipeline.bake(mesh, cfg, progress=lambda d, t: calls.append((d, t))),
        ]
    total = ref.build_report.grid_tiles
    assert calls == [(i + 1, total) for i in range(total)]
    p0 = _pools(ref)
    r0 = ref.build_report
    for nm in bakes:
        p = _pools(nm)
        for k in p0:
            np.testing.assert_array_equal(p0[k], p[k], err_msg=k)
        r = nm.build_report
        assert r.counts == r0.counts
        assert list(r.timings) == list(r0.timings)
        np.testing.assert_array_equal(r.poly_regions, r0.poly_regions)
        assert (r.tiles_built, r.tiles_empty, r.grid_tiles) == (
            r0.tiles_built,
            r0.tiles_empty,
            r0.grid_tiles,
        )
        assert nm.to_recast() == ref.to_recast()


def _stacked_floors() -> TriMesh:
    """Flat floors 2.5 m apart: 260 over x in [0, 20] and 40 more over x in [12, 20],
    so a column of the first tile holds 260 walkable spans and one of the next 300."""
    verts, tris = [], []
    for i in range(300):
        y, x0 = 2.5 * i, (0.0 if i < 260 else 12.0)
        b = len(verts)
        verts += [(x0, y, 0.0), (20.0, y, 0.0), (20.0, y, 20.0), (x0, y, 20.0)]
        tris += [(b, b + 2, b + 1), (b, b + 3, b + 2)]
    return TriMesh(np.array(verts, np.float32), np.array(tris, np.int32))


def test_tile_kernel_bake_raises_the_first_failed_tiles_error(monkeypatch):
    """A failing tile raises what the per-tile path raises: the first failure in row
    order, also when threads took a later tile (more triangles) first."""
    mesh = _stacked_floors()
    cfg = BakeConfig(tile_size=32)
    with pytest.raises(BuildError, match="a column holds 260 walkable spans"):
        _per_tile_bake(monkeypatch, mesh, cfg)
    with pytest.raises(BuildError, match="a column holds 260 walkable spans"):
        pipeline.bake(mesh, cfg)
    with ThreadPoolExecutor(2) as ex, pytest.raises(BuildError, match="holds 260 walkable"):
        pipeline.bake(mesh, cfg, executor=ex)


def test_tile_kernel_bake_of_a_grid_without_tiles(monkeypatch):
    """A level flat in x (zero width: a grid of no tiles) gives the per-tile path's
    error, not an IndexError from the tile kernel's bounds (found by tests/fuzz)."""
    mesh = TriMesh(
        np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0]], np.float32), np.array([[0, 1, 2]], np.int32)
    )
    cfg = BakeConfig(tile_size=32)
    with pytest.raises(BuildError) as ref:
        _per_tile_bake(monkeypatch, mesh, cfg)
    monkeypatch.undo()
    with pytest.raises(BuildError) as got:
        pipeline.bake(mesh, cfg)
    assert str(got.value) == str(ref.value)


def _solo_bakes(monkeypatch, mesh, cfg=None):
    """A solo bake through the tile kernel and through both older routes: the chained
    stages with ``create_navmesh_data`` and ``_add_tile``, and the stage-by-stage run
    (``keep_intermediates=True``)."""
    cfg = cfg or BakeConfig()
    got = pipeline.bake(mesh, cfg)
    old = _per_tile_bake(monkeypatch, mesh, cfg)
    staged = pipeline.bake(mesh, cfg, keep_intermediates=True)
    return got, old, staged


def _assert_same_bake(got: NavMesh, ref: NavMesh) -> None:
    assert got.params == ref.params
    p0, p = _pools(ref), _pools(got)
    for k in p0:
        np.testing.assert_array_equal(p0[k], p[k], err_msg=k)
    r, r0 = got.build_report, ref.build_report
    assert r.counts == r0.counts
    assert set(r.timings) == set(r0.timings)
    np.testing.assert_array_equal(r.poly_regions, r0.poly_regions)
    assert (r.tiles_built, r.tiles_empty, r.grid_tiles) == (1, 0, 1)
    assert (r0.tiles_built, r0.tiles_empty, r0.grid_tiles) == (1, 0, 1)
    assert got.to_recast() == ref.to_recast()


@pytest.mark.parametrize("name", ["dungeon", "nav_test", "undulating"])
def test_solo_kernel_bake_equals_the_per_stage_bake(monkeypatch, name):
    """A solo bake runs through the tiled bake's kernel as one tile without border: the
    navmesh params, every pool, the Recast export bytes, the counts and the regions of
    the per-stage routes."""
    from peer_support import mesh_path

    import navkit

    got, old, staged = _solo_bakes(monkeypatch, navkit.load_obj(mesh_path(name)))
    _assert_same_bake(got, old)
    _assert_same_bake(got, staged)


def test_solo_kernel_bake_equals_the_per_stage_bake_on_the_sample_level(monkeypatch):
    """The same on the shipped sample level (several storeys), with given triangle areas
    and non-default settings, and a progress callback called once."""
    mesh = sample_level()
    calls: list[tuple[int, int]] = []
    cfg = BakeConfig(cell_size=0.25, verts_per_poly=4, detail_sample_dist=3.0)
    got = pipeline.bake(mesh, cfg, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 1)]
    _assert_same_bake(got, _per_tile_bake(monkeypatch, mesh, cfg))
    areas = np.where(np.arange(mesh.n_triangles) % 7 == 0, 5, 63).astype(np.uint8)
    marked = TriMesh(mesh.vertices, mesh.triangles, areas=areas)
    for ref in _solo_bakes(monkeypatch, marked)[1:]:
        _assert_same_bake(pipeline.bake(marked, BakeConfig()), ref)


def test_solo_kernel_bake_errors_are_the_per_stage_errors(monkeypatch):
    """What a solo bake raises through the kernel is what the per-stage route raises:
    nothing walkable (a downward-facing floor), and too many spans in a column."""
    down = TriMesh(
        np.array([[0, 0, 0], [10, 0, 0], [10, 0, 10], [0, 0, 10]], np.float32),
        np.array([[0, 1, 2], [0, 2, 3]], np.int32),
    )
    for mesh in (down, _stacked_floors()):
        with pytest.raises(BuildError) as ref:
            _per_tile_bake(monkeypatch, mesh, BakeConfig())
        with pytest.raises(BuildError) as got:
            pipeline.bake(mesh, BakeConfig())
        assert str(got.value) == str(ref.value)


def test_bake_threads_default_and_checks(monkeypatch):
    """A tiled bake without an executor runs on numba's thread count (a thread pool of
    that many), threads=1 on the calling thread; bad counts are refused."""
    mesh = sample_level()
    cfg = BakeConfig(tile_size=32)
    seen: list[int] = []

    class Spy(ThreadPoolExecutor):
        def __init__(self, n, **kw):
            seen.append(n)
            super().__init__(n, **kw)

    monkeypatch.setattr(pipeline, "ThreadPoolExecutor", Spy)
    monkeypatch.setattr(pipeline, "_POOLS", {})
    monkeypatch.setattr(pipeline, "_bake_threads", lambda t: 3 if t is None else t)
    pipeline.bake(mesh, cfg)
    pipeline.bake(mesh, cfg, threads=1)
    pipeline.bake(mesh, BakeConfig())  # solo: one tile, no pool
    pipeline.bake(mesh, cfg)  # the pool is kept for the next bake
    assert seen == [3]
    # the calling thread is one of the three workers: the pool started at most two
    (pool,) = pipeline._POOLS.values()
    assert 1 <= len(pool._threads) <= 2
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(InputError, match="threads"):
            pipeline.bake(mesh, cfg, threads=bad)
    with ThreadPoolExecutor(1) as ex, pytest.raises(InputError, match="not both"):
        pipeline.bake(mesh, cfg, executor=ex, threads=2)


def test_a_forked_child_bakes_on_its_own_pool():
    """The kept pool's threads do not exist in a forked child: it makes its own, and
    bakes the parent's navmesh."""
    import multiprocessing as mp

    mesh = sample_level()
    cfg = BakeConfig(tile_size=32)
    ref = pipeline.bake(mesh, cfg, threads=2).to_recast()
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as p:
        got = p.apply_async(_bake_bytes_in_child, (mesh, cfg)).get(timeout=300)
    assert got == ref


def _bake_bytes_in_child(mesh, cfg):
    return pipeline.bake(mesh, cfg, threads=2).to_recast()
