"""The runtime tile cache in recast-compatible mode equals Recast's dtTileCache byte for byte.

References: the peer's committed files (``<mesh>.tilecache.bin``, ``<mesh>.obstacles.json``,
``<mesh>.obstacles.navmesh.bin``), the peer run now with other seeds, shapes, counts
and tile sizes, and ``tilecache_oracle.mjs`` (Recast's own cache driven op by op).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _oracle import add_shapes, oracle, poly_centers, shape_ops, update_calls
from _tc_cases import MESHES, peer_tilecache
from peer_support import mesh_path, peer_file, run_peer

from navkit.geometry.obj import load_obj
from navkit.recast.config import BakeConfig
from navkit.tilecache import TileCache
from navkit.tilecache.format import read_tile_cache


@pytest.fixture(scope="module")
def caches():
    got: dict[str, bytes] = {}

    def get(mesh: str) -> bytes:
        if mesh not in got:
            got[mesh] = peer_tilecache(mesh).read_bytes()
        return got[mesh]

    return get


def _obstacle_run(mesh: str) -> dict:
    return json.loads(peer_file(f"{mesh}.obstacles.json").read_text())["tilecache"]


@pytest.mark.parametrize("mesh", MESHES)
def test_navmesh_before_obstacles_has_recasts_figures(mesh):
    tc = TileCache.from_recast(peer_tilecache(mesh))
    before = _obstacle_run(mesh)["navmesh_before"]
    s = tc.navmesh.stats()
    assert (s["tiles"], s["polys"], s["verts"], s["detail_tris"]) == (
        before["tiles"], before["polygons"], before["vertices"], before["detail_triangles"],
    )  # fmt: skip
    assert s["detail_verts"] == 0 and s["bv_nodes"] == 0
    assert tc.up_to_date


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_navmesh_before_obstacles_byte_identical(mesh, caches):
    """All layers built without obstacles export as Recast's tile-cache navmesh."""
    tc = TileCache.from_recast(peer_tilecache(mesh))
    (res,) = oracle(caches(mesh), [{"op": "export"}])
    assert tc.navmesh.to_recast() == res["navmesh"]


@pytest.mark.parametrize("mesh", MESHES)
def test_committed_obstacles_byte_identical(mesh):
    """The 50 obstacles of <mesh>.obstacles.json, one dtTileCache::update per step:
    same number of steps, same navmesh bytes (link slots and salts included), then
    removing them all restores Recast's polygon count."""
    run = _obstacle_run(mesh)
    ob = run["obstacles"]
    tc = TileCache.from_recast(peer_tilecache(mesh))
    handles = add_shapes(tc, ob["shapes"])
    assert update_calls(tc) == ob["batch_update_calls"]
    want = ob["navmesh_with_obstacles"]
    s = tc.navmesh.stats()
    assert (s["tiles"], s["polys"], s["verts"]) == (
        want["tiles"], want["polygons"], want["vertices"],
    )  # fmt: skip
    assert tc.navmesh.to_recast() == peer_file(f"{mesh}.obstacles.navmesh.bin").read_bytes()
    for h in handles:
        tc.remove(h)
    assert update_calls(tc) == ob["remove_update_calls"]
    after = ob["navmesh_after_remove"]
    s = tc.navmesh.stats()
    assert (s["tiles"], s["polys"], s["verts"]) == (
        after["tiles"], after["polygons"], after["vertices"],
    )  # fmt: skip


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_all_removed_byte_identical(mesh, caches):
    """After the 50 obstacles are removed again the navmesh (with Detour's link and
    salt history) exports as Recast's."""
    ob = _obstacle_run(mesh)["obstacles"]
    ops = shape_ops(ob["shapes"]) + [{"op": "update_all"}]
    ops += [{"op": "remove", "k": k} for k in range(len(ob["shapes"]))]
    ops += [{"op": "update_all"}, {"op": "export"}]
    res = oracle(caches(mesh), ops)
    tc = TileCache.from_recast(peer_tilecache(mesh))
    handles = add_shapes(tc, ob["shapes"])
    update_calls(tc)
    for h in handles:
        tc.remove(h)
    assert update_calls(tc) == res[-2]["calls"]
    assert tc.navmesh.to_recast() == res[-1]["navmesh"]


@pytest.mark.peer
@pytest.mark.parametrize(
    "mesh,seed,shapes,count",
    [
        ("dungeon", 3, ["box"], 40),
        ("nav_test", 11, ["cylinder"], 60),
        ("undulating", 5, ["box", "box", "cylinder"], 30),
    ],
)
def test_peer_other_seeds_shapes_counts(mesh, seed, shapes, count, tmp_path):
    """The peer run now with another seed, shape mix and obstacle count."""
    out = tmp_path / "obs.bin"
    r = run_peer(
        mesh_path(mesh),
        {"obstacleShapes": shapes},
        "--sections", "tilecache", "--runs", "1", "--warmup", "0", "--seed", str(seed),
        "--obstacles", str(count), "--export-obstacles-navmesh", str(out), "--quiet",
    )  # fmt: skip
    ob = r["tilecache"]["obstacles"]
    tc = TileCache.from_recast(peer_tilecache(mesh))
    add_shapes(tc, ob["shapes"])
    assert update_calls(tc) == ob["batch_update_calls"]
    assert tc.navmesh.to_recast() == out.read_bytes()


@pytest.mark.peer
@pytest.mark.slow
@pytest.mark.parametrize("mesh", ["dungeon", "nav_test"])
def test_bake_other_tile_size_equals_peer(mesh, tmp_path):
    """TileCache.bake with 32-voxel tiles: same cache set and same navmesh with obstacles."""
    out = tmp_path / "obs.bin"
    tset = tmp_path / "tc.bin"
    r = run_peer(
        mesh_path(mesh),
        {"tileSize": 32, "obstacleShapes": ["cylinder", "box"]},
        "--sections", "tilecache", "--runs", "1", "--warmup", "0", "--obstacles", "25",
        "--export-obstacles-navmesh", str(out), "--export-tilecache", str(tset), "--quiet",
    )  # fmt: skip
    tc = TileCache.bake(load_obj(mesh_path(mesh)), BakeConfig(tile_size=32), recast_compatible=True)
    assert tc.tile_cache_set == read_tile_cache(tset)
    add_shapes(tc, r["tilecache"]["obstacles"]["shapes"])
    assert update_calls(tc) == r["tilecache"]["obstacles"]["batch_update_calls"]
    assert tc.navmesh.to_recast() == out.read_bytes()


def _script(tc: TileCache, seed: int, n_ops: int) -> tuple[list[dict], list]:
    """A random interleaving of adds, removals, single update steps and exports."""
    rng = np.random.default_rng(seed)
    centers = poly_centers(tc.navmesh)
    ops: list[dict] = []
    live: list[int] = []
    added = 0
    for _ in range(n_ops):
        u = rng.random()
        if u < 0.45:
            c = centers[rng.integers(len(centers))] + rng.uniform(-1, 1, 3) * [1, 0, 1]
            c = [round(float(v), 4) for v in c]
            if rng.random() < 0.5:
                ops.append(
                    {"op": "cylinder", "pos": [c[0], c[1] - 0.5, c[2]],
                     "radius": round(float(rng.uniform(0.3, 1.8)), 3),
                     "height": round(float(rng.uniform(0.5, 3)), 3)}
                )  # fmt: skip
            else:
                ops.append(
                    {"op": "obox", "center": c,
                     "half": [round(float(v), 3) for v in rng.uniform(0.2, 1.5, 3)],
                     "angle": round(float(rng.uniform(-4, 4)), 3)}
                )  # fmt: skip
            live.append(added)
            added += 1
        elif u < 0.6 and live:
            k = live.pop(int(rng.integers(len(live))))
            ops.append({"op": "remove", "k": k})
        elif u < 0.95:
            ops.append({"op": "update"})
        else:
            ops.append({"op": "export"})
    ops += [{"op": "update_all"}, {"op": "export"}]
    return ops, live


def _replay(tc: TileCache, ops: list[dict], handles: list[int] | None = None) -> list:
    handles = [] if handles is None else handles
    out: list = []
    for op in ops:
        if op["op"] == "cylinder":
            handles.append(tc.add_cylinder(op["pos"], op["radius"], op["height"]))
            out.append(None)
        elif op["op"] == "obox":
            handles.append(tc.add_oriented_box(op["center"], op["half"], op["angle"]))
            out.append(None)
        elif op["op"] == "remove":
            tc.remove(handles[op["k"]])
            out.append(None)
        elif op["op"] == "update":
            out.append(tc.update(max_tiles=1).up_to_date)
        elif op["op"] == "update_all":
            out.append(update_calls(tc))
        else:
            out.append(tc.navmesh.to_recast())
    return out


@pytest.mark.peer
@pytest.mark.parametrize("mesh,seed", [("dungeon", 1), ("nav_test", 2), ("undulating", 3)])
def test_interleaved_script_equals_recast(mesh, seed, caches):
    """Adds, removals (also of obstacles still being processed), single update steps
    and exports at random points: every export and every up-to-date flag as Recast's."""
    tc = TileCache.from_recast(peer_tilecache(mesh))
    ops, _ = _script(tc, seed, 160)
    theirs = oracle(caches(mesh), ops)
    mine = _replay(tc, ops)
    for k, (op, a, b) in enumerate(zip(ops, mine, theirs)):
        if op["op"] == "update":
            assert a == b["upToDate"], k
        elif op["op"] == "update_all":
            assert a == b["calls"], k
        elif op["op"] == "export":
            assert a == b["navmesh"], k


@pytest.mark.peer
@pytest.mark.slow
def test_more_touched_tiles_than_detour_queues(tmp_path):
    """60 wide obstacles on 24-voxel tiles touch more than 64 layers: Detour queues only
    64 rebuilds and leaves the rest (its known limitation); navkit does the same in
    recast-compatible mode, step for step."""
    from navkit.tilecache import build_tile_cache, tile_cache_to_bytes
    from navkit.tilecache import update as U

    tset = build_tile_cache(load_obj(mesh_path("nav_test")), BakeConfig(tile_size=24))
    data = tile_cache_to_bytes(tset)
    tc = TileCache(tset)
    rng = np.random.default_rng(5)
    centers = poly_centers(tc.navmesh)
    ops = []
    for _ in range(60):
        c = centers[rng.integers(len(centers))]
        ops.append({"op": "cylinder", "pos": [round(float(v), 4) for v in c - [0, 0.5, 0]],
                    "radius": 2.5, "height": 2.0})  # fmt: skip
    ops += [{"op": "update"}, {"op": "update_all"}, {"op": "export"}]
    ops += [{"op": "remove", "k": k} for k in range(60)] + [{"op": "update_all"}, {"op": "export"}]
    theirs = oracle(data, ops)
    handles: list[int] = []
    mine = _replay(tc, ops[:61], handles)
    assert len(tc._state.update) == U.MAX_UPDATE - 1  # the queue was full
    touched = set().union(*(tc._state.touched_by(tc.obstacle(h)) for h in handles))
    assert len(touched) > U.MAX_UPDATE  # so some touched tiles were dropped
    mine += _replay(tc, ops[61:], handles)
    assert mine[60] == theirs[60]["upToDate"]
    assert mine[61] == theirs[61]["calls"] and mine[62] == theirs[62]["navmesh"]
    assert mine[123] == theirs[123]["calls"] and mine[124] == theirs[124]["navmesh"]
