"""Heightfield layers and the tile cache build: equal to Recast's, plus invariants and hand cases."""

from __future__ import annotations

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from _tc_cases import EXPECTED, MESHES, peer_tilecache
from chf_grid import DX, DZ, grid_chf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import ROOT, mesh_path

from navkit.errors import BuildError, ConfigError, InputError
from navkit.geometry.obj import load_obj
from navkit.geometry.sample import sample_level
from navkit.recast.config import BakeConfig
from navkit.tilecache import build as TB
from navkit.tilecache import format as F
from navkit.tilecache.layers import build_heightfield_layers

#: The peer's tile-cache settings: RecastDemo's defaults with 48-voxel tiles.
PEER_CONFIG = BakeConfig(tile_size=48)


@pytest.fixture(scope="module")
def built():
    cache: dict[str, F.TileCacheSet] = {}

    def get(mesh: str) -> F.TileCacheSet:
        if mesh not in cache:
            cache[mesh] = TB.build_tile_cache(load_obj(mesh_path(mesh)), PEER_CONFIG)
        return cache[mesh]

    return get


# -- against Recast ---------------------------------------------------------------------
@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_layers_equal_recast(mesh, built):
    ref = F.read_tile_cache(peer_tilecache(mesh))
    mine = built(mesh)
    exp = EXPECTED[mesh]
    assert len(mine.tiles) == exp["layers"]

    def per_tile(s):
        out: dict[tuple[int, int], int] = {}
        for t in s.tiles:
            out[(t.header.tx, t.header.ty)] = out.get((t.header.tx, t.header.ty), 0) + 1
        return out

    assert per_tile(mine) == per_tile(ref)
    for k, (a, b) in enumerate(zip(mine.tiles, ref.tiles)):
        la, lb = mine.layer(k), ref.layer(k)
        where = (a.header.tx, a.header.ty, a.header.tlayer)
        assert la.header == lb.header, where
        for field in ("heights", "areas", "cons"):
            diff = np.argwhere(getattr(la, field) != getattr(lb, field))
            assert diff.size == 0, f"{where} {field} differs at (z, x) {diff[:5].tolist()}"
        assert a.data == b.data, where
        assert a.ref == b.ref
    assert mine.raw_bytes == exp["raw"]
    assert mine.compressed_bytes == exp["compressed"]
    assert mine.params == ref.params and mine.navmesh_params == ref.navmesh_params
    assert F.tile_cache_to_bytes(mine) == peer_tilecache(mesh).read_bytes()


@pytest.mark.peer
def test_detour_imports_what_navkit_writes(built, tmp_path):
    if shutil.which("node") is None:
        pytest.skip("node is not available")
    work = ROOT / ".scratch" / "peer"
    if not (work / "node_modules" / "@recast-navigation" / "core").is_dir():
        pytest.skip(f"{work} has no installed peer (node modules)")
    files = []
    for mesh in MESHES:
        p = tmp_path / f"{mesh}.navkit.tilecache.bin"
        F.write_tile_cache(p, built(mesh))
        files.append(p)
    r = subprocess.run(
        ["node", "tools/import_check.mjs", *map(str, files)],
        cwd=work, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:] + r.stdout[-2000:]
    recs = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    assert len(recs) == 3
    for rec in recs:
        assert "error" not in rec
        assert rec["magic"] == "TSET" and rec["tiles"] > 0 and rec["polygons"] > 0
        assert rec["reexport_identical"] is True


@pytest.mark.peer
def test_one_tile_and_parallel_build_agree(built):
    mesh = load_obj(mesh_path("dungeon"))
    full = built("dungeon")
    t = full.tiles[5].header
    one = TB.build_tile_layers(mesh, PEER_CONFIG, t.tx, t.ty)
    mine = [x.data for x in full.tiles if (x.header.tx, x.header.ty) == (t.tx, t.ty)]
    assert list(one.data) == mine
    assert one.layers is not None and one.layers.nlayers == len(mine)
    calls: list[tuple[int, int]] = []
    with ThreadPoolExecutor(2) as ex:
        par = TB.build_tile_cache(
            mesh, PEER_CONFIG, executor=ex, progress=lambda d, t: calls.append((d, t))
        )
    assert F.tile_cache_to_bytes(par) == F.tile_cache_to_bytes(full)
    assert [d for d, _ in calls] == list(range(1, len(calls) + 1))
    assert calls[-1][0] == calls[-1][1] == 42  # 6 x 7 tiles


# -- invariants -------------------------------------------------------------------------
def _check_invariants(chf, lset, bs):
    lw, lh = chf.width - 2 * bs, chf.height - 2 * bs
    assert lset.width == lw and lset.height == lh
    filled = lset.heights != 255
    for i in range(lset.nlayers):
        hmin, hmax = int(lset.hmin[i]), int(lset.hmax[i])
        assert 0 <= hmax - hmin < 255
        zs, xs = np.nonzero(filled[i])
        if xs.size:
            assert (lset.minx[i], lset.maxx[i]) == (xs.min(), xs.max())
            assert (lset.miny[i], lset.maxy[i]) == (zs.min(), zs.max())
        assert np.all(lset.areas[i][~filled[i]] == 0) and np.all(lset.cons[i][~filled[i]] == 0)
        assert lset.bmin[i, 1] == np.float32(
            np.float32(chf.bmin[1]) + np.float32(hmin) * np.float32(chf.ch)
        )
    for z in range(lh):
        for x in range(lw):
            c0 = int(chf.cells_index[z + bs, x + bs])
            spans = range(c0, c0 + int(chf.cells_count[z + bs, x + bs]))
            walk = [i for i in spans if chf.areas[i] != 0]
            here = [i for i in range(lset.nlayers) if filled[i, z, x]]
            # every walkable span is in exactly one layer
            assert len(here) == len(walk), (x, z)
            assert sorted(int(chf.areas[i]) for i in walk) == sorted(
                int(lset.areas[k, z, x]) for k in here
            )
            ys = {int(chf.y[i]) for i in walk}
            for k in here:
                con = int(lset.cons[k, z, x])
                if con >> 4 == 0:  # no portal: the stored height is the span's floor
                    assert int(lset.hmin[k]) + int(lset.heights[k, z, x]) in ys
                for d in range(4):
                    if con & (1 << d):
                        nx, nz = x + DX[d], z + DZ[d]
                        assert 0 <= nx < lw and 0 <= nz < lh
                        assert filled[k, nz, nx]
                        assert lset.cons[k, nz, nx] & (1 << ((d + 2) % 4))
                    assert not (con & (1 << d) and con & (16 << d))


def test_flat_floor_is_one_layer_with_portals_at_the_tile_edge():
    chf = grid_chf([[[(10, 63)] for _ in range(5)] for _ in range(5)])
    lset = build_heightfield_layers(chf, 1, 2)
    assert lset.nlayers == 1 and lset.width == lset.height == 3
    assert (lset.hmin[0], lset.hmax[0]) == (10, 10)
    assert np.all(lset.heights[0] == 0) and np.all(lset.areas[0] == 63)
    expect = np.zeros((3, 3), np.uint8)
    for z in range(3):
        for x in range(3):
            for d in range(4):
                nx, nz = x + DX[d], z + DZ[d]
                inside = 0 <= nx < 3 and 0 <= nz < 3
                expect[z, x] |= (1 << d) if inside else (16 << d)  # border spans: portals
    assert np.array_equal(lset.cons[0], expect)
    assert (lset.minx[0], lset.maxx[0], lset.miny[0], lset.maxy[0]) == (0, 2, 0, 2)
    _check_invariants(chf, lset, 1)


def test_stacked_floors_are_separate_layers():
    chf = grid_chf([[[(0, 63), (30, 63)] for _ in range(4)] for _ in range(4)])
    lset = build_heightfield_layers(chf, 0, 2)
    assert lset.nlayers == 2
    assert sorted(zip(lset.hmin.tolist(), lset.hmax.tolist())) == [(0, 0), (30, 30)]
    assert np.all(lset.heights == 0)
    _check_invariants(chf, lset, 0)


@pytest.mark.parametrize("gap, layers", [(5, 1), (8, 1), (9, 2), (50, 2)])
def test_unconnected_patches_merge_when_close_in_height(gap, layers):
    # left half at y 0, right half at y gap: never linked (climb 1); merged when
    # [0, 0 + 4 * walkable_height] and [gap, gap + 8] overlap
    floors = [[[(0 if x < 3 else gap, 63)] for x in range(6)] for _ in range(4)]
    chf = grid_chf(floors)
    lset = build_heightfield_layers(chf, 0, 2)
    assert lset.nlayers == layers
    if layers == 1:
        assert (lset.hmin[0], lset.hmax[0]) == (0, gap)
        assert np.all(lset.heights[0, :, :3] == 0) and np.all(lset.heights[0, :, 3:] == gap)
        assert np.all(lset.cons[0, :, 2] & 4 == 0)  # no link across the step
    _check_invariants(chf, lset, 0)


def test_empty_and_unwalkable():
    chf = grid_chf([[[(0, 0)] for _ in range(4)] for _ in range(4)])
    lset = build_heightfield_layers(chf, 0, 2)
    assert lset.nlayers == 0 and lset.heights.shape == (0, 4, 4)


@st.composite
def _floors(draw):
    w = draw(st.integers(3, 9))
    h = draw(st.integers(3, 9))
    floors = []
    for _z in range(h):
        row = []
        for _x in range(w):
            levels = draw(st.lists(st.integers(0, 3), max_size=3, unique=True))
            spans = []
            for lv in sorted(levels):
                y = lv * 70 + draw(st.integers(0, 2))
                area = draw(st.sampled_from([63, 63, 63, 5, 0]))
                spans.append((y, area))
            row.append(spans)
        floors.append(row)
    return floors, draw(st.integers(0, 1)), draw(st.integers(1, 20))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_floors())
def test_layer_invariants(case):
    floors, bs, wh = case
    chf = grid_chf(floors, climb=2)
    if chf.width - 2 * bs < 1 or chf.height - 2 * bs < 1:
        return
    lset = build_heightfield_layers(chf, bs, wh)
    _check_invariants(chf, lset, bs)


def test_sample_level_invariants():
    mesh = sample_level()
    cfg = BakeConfig(tile_size=32)
    s = TB.build_tile_cache(mesh, cfg)
    assert len(s.tiles) > 0
    back = F.tile_cache_from_bytes(F.tile_cache_to_bytes(s))
    assert back.tiles == s.tiles
    rc = cfg.voxel()
    from navkit.pipeline import bin_triangles, mesh_bounds, tile_bounds, tile_grid
    from navkit.recast.build import tile_compact_heightfield
    from navkit.recast.rasterize import mark_walkable_triangles

    bmin, bmax = mesh_bounds(mesh)
    grid = tile_grid(bmin, bmax, rc)
    verts = mesh.vertices.astype(np.float32)
    tris = mesh.triangles.astype(np.int32)
    areas = mark_walkable_triangles(verts, tris, rc.walkable_slope_angle)
    start, binned = bin_triangles(verts, tris, grid, rc)
    for ty in range(grid.tiles_z):
        for tx in range(grid.tiles_x):
            k = ty * grid.tiles_x + tx
            sel = binned[start[k] : start[k + 1]]
            if sel.size == 0:
                continue
            lo, hi = tile_bounds(grid, rc, tx, ty)
            chf = tile_compact_heightfield(verts, tris[sel], areas[sel], rc, lo, hi)
            lset = build_heightfield_layers(chf, rc.border_size, rc.walkable_height)
            _check_invariants(chf, lset, rc.border_size)


# -- errors -----------------------------------------------------------------------------
def test_bad_arguments():
    chf = grid_chf([[[(0, 63)] for _ in range(4)] for _ in range(4)])
    with pytest.raises(InputError):
        build_heightfield_layers(chf, -1, 2)
    with pytest.raises(InputError):
        build_heightfield_layers(chf, 2, 2)  # no cells left inside the border
    with pytest.raises(InputError):
        build_heightfield_layers(chf._replace(cells_count=chf.cells_count[:2]), 0, 2)
    lset = build_heightfield_layers(chf, 0, 2)
    with pytest.raises(InputError):
        lset.layer(1)
    assert lset.layer(0).heights.shape == (4, 4)
    mesh = sample_level()
    with pytest.raises(ConfigError):
        TB.build_tile_cache(mesh, BakeConfig())  # solo: no tiles
    with pytest.raises(ConfigError):
        TB.build_tile_cache(mesh, BakeConfig(tile_size=300))
    with pytest.raises(ConfigError):
        TB.build_tile_cache(mesh, PEER_CONFIG, expected_layers_per_tile=0)
    with pytest.raises(ConfigError):
        TB.build_tile_cache(mesh, PEER_CONFIG, max_obstacles=-1)
    with pytest.raises(InputError):
        TB.build_tile_cache("mesh", PEER_CONFIG)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        TB.build_tile_layers(mesh, PEER_CONFIG, 99, 0)


def test_too_many_regions_is_a_build_error():
    # a 24 x 24 checkerboard: 288 isolated cells, each its own region
    floors = [[[(0, 63)] if (x + z) % 2 == 0 else [] for x in range(24)] for z in range(24)]
    chf = grid_chf(floors)
    with pytest.raises(BuildError, match="255"):
        build_heightfield_layers(chf, 0, 2)


#: Other settings, in the peer's (RecastDemo's) names and in BakeConfig's.
OTHER_SETTINGS = {
    "tile32": ({"tileSize": 32}, {"tile_size": 32}),
    "tile64": ({"tileSize": 64}, {"tile_size": 64}),
    "fine": (
        {"tileSize": 48, "cellSize": 0.2, "cellHeight": 0.1},
        {"tile_size": 48, "cell_size": 0.2, "cell_height": 0.1},
    ),
    "small_agent": (
        {"tileSize": 40, "agentHeight": 1.0, "agentRadius": 0.3, "agentMaxClimb": 0.5},
        {"tile_size": 40, "agent_height": 1.0, "agent_radius": 0.3, "agent_max_climb": 0.5},
    ),
}


@pytest.mark.peer
@pytest.mark.slow
@pytest.mark.parametrize("setting", sorted(OTHER_SETTINGS))
@pytest.mark.parametrize("mesh", MESHES)
def test_other_settings_equal_recast(mesh, setting, tmp_path):
    """Recast's tile cache built now by the peer with other tile sizes, cells, agents."""
    from peer_support import peer_workdir

    peer_cfg, cfg = OTHER_SETTINGS[setting]
    obj = mesh_path(mesh)
    work = peer_workdir()
    out = tmp_path / "recast.bin"
    r = subprocess.run(
        ["node", "recast_peer.mjs", str(obj), json.dumps(peer_cfg), "--sections", "",
         "--export-tilecache", str(out)],
        cwd=work, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if r.returncode != 0 or not out.exists():
        pytest.skip(f"peer failed: {r.stderr[-300:]}")
    ref = out.read_bytes()
    mine = TB.build_tile_cache(load_obj(obj), BakeConfig(**cfg))
    theirs = F.tile_cache_from_bytes(ref)
    assert len(mine.tiles) == len(theirs.tiles)
    for k, (a, b) in enumerate(zip(mine.tiles, theirs.tiles)):
        assert a.header == b.header, k
        la, lb = mine.layer(k), theirs.layer(k)
        for field in ("heights", "areas", "cons"):
            assert np.array_equal(getattr(la, field), getattr(lb, field)), (k, field)
    assert F.tile_cache_to_bytes(mine) == ref
