"""The command line's tile-cache parts, run as subprocesses: bake --tile-cache, render, info, demo."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from navkit.geometry import sample_level, save_obj
from navkit.tilecache import TileCache
from navkit.tilecache.io import MAGIC

PNG = b"\x89PNG\r\n\x1a\n"


def navkit(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(
        [sys.executable, "-m", "navkit.cli", *args], capture_output=True, text=True, timeout=900
    )
    if ok:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def level(tmp_path_factory):
    p = tmp_path_factory.mktemp("lvl") / "level.obj"
    save_obj(sample_level(), p)
    return p


@pytest.fixture(scope="module")
def baked(level, tmp_path_factory):
    d = tmp_path_factory.mktemp("tc")
    out = d / "level.tilecache"
    r = navkit("bake", str(level), "--tile-cache", "--tile-size", "32", "-o", str(out), "--json")
    return out, json.loads(r.stdout)


def test_bake_tile_cache_writes_navkits_format(baked):
    out, info = baked
    data = out.read_bytes()
    assert data[:8] == MAGIC and info["file_bytes"] == len(data)
    tc = TileCache.load(out)
    assert len(tc.tile_cache_set.tiles) == info["layers"]
    assert tc.navmesh.stats()["polys"] == info["polys"] > 0
    assert info["tile_size"] == 32 and info["format"] == "navkit tile cache"
    assert info["raw_bytes"] > info["fastlz_bytes"] > info["file_bytes"]


def test_bake_tile_cache_bin_is_recasts_tset(level, baked, tmp_path):
    out = tmp_path / "level.bin"
    navkit("bake", str(level), "--tile-cache", "--tile-size", "32", "-o", str(out))
    data = out.read_bytes()
    assert data[:4] == b"TEST"  # 'TSET' little-endian
    assert TileCache.load(baked[0]).to_recast() == data
    # the CLI bakes in the default mode (detail meshes): compare in that mode
    same = TileCache.from_recast(out, recast_compatible=False)
    assert same.navmesh.stats() == TileCache.load(baked[0]).navmesh.stats()


def test_bake_tile_cache_mode_flag(level, baked, tmp_path):
    """--recast-compatible bakes (and saves) a dtTileCache-mode cache; the default is navkit's."""
    assert baked[1]["mode"] == "navkit" and not TileCache.load(baked[0]).recast_compatible
    out = tmp_path / "compat.tilecache"
    args = ("bake", str(level), "--tile-cache", "--tile-size", "32", "-o", str(out))
    r = navkit(*args, "--recast-compatible")
    assert "(recast mode)" in r.stdout
    tc = TileCache.load(out)
    assert tc.recast_compatible
    # same layers; Recast's mode gives the navmesh no detail mesh beyond the polygons
    assert tc.to_recast() == TileCache.load(baked[0]).to_recast()
    ref = TileCache.from_recast(tc.to_recast(), recast_compatible=True)
    assert tc.navmesh.to_recast() == ref.navmesh.to_recast()
    assert tc.navmesh.to_recast() != TileCache.load(baked[0]).navmesh.to_recast()
    r = navkit("bake", "--help")
    assert "--recast-compatible" in r.stdout and "dtTileCache" in r.stdout
    r = navkit(
        "bake", str(level), "-o", str(tmp_path / "x.navmesh"), "--recast-compatible", ok=False
    )
    assert r.returncode != 0 and "--tile-cache" in r.stderr and "Traceback" not in r.stderr


def test_render_and_info_of_a_cache_with_obstacles(baked, tmp_path):
    tc = TileCache.load(baked[0])
    tc.add_cylinder((12.0, 0.0, 12.0), 1.5, 2.0)
    tc.add_oriented_box((30.0, 0.5, 20.0), (3.0, 1.0, 0.6), 0.6)
    tc.update()
    f = tmp_path / "obstacles.tilecache"
    tc.save(f)
    png = tmp_path / "obstacles.png"
    r = navkit("render", str(f), "-o", str(png))
    assert png.read_bytes()[:8] == PNG
    assert "2 obstacles" in r.stdout and f"{len(tc.touched_tiles())} layers" in r.stdout
    r = navkit("info", str(f), "--json")
    assert json.loads(r.stdout)["polys"] == tc.navmesh.stats()["polys"]
    svg = tmp_path / "tset.svg"
    tset = tmp_path / "level.bin"
    tset.write_bytes(tc.to_recast())
    r = navkit("render", str(tset), "-o", str(svg))
    assert b"<svg" in svg.read_bytes()[:400] and "0 obstacles" in r.stdout
    r = navkit("render", str(f), "-o", str(png), "--path", "1,0,1:5,0,5", ok=False)
    assert r.returncode != 0 and "--path" in r.stderr and "Traceback" not in r.stderr


def test_bake_tile_cache_refuses_grids(tmp_path):
    m = tmp_path / "g.map"
    m.write_text("type octile\nheight 2\nwidth 2\nmap\n..\n..\n")
    r = navkit("bake", str(m), "--tile-cache", "-o", str(tmp_path / "g.tilecache"), ok=False)
    assert r.returncode != 0 and "--tile-cache" in r.stderr and "Traceback" not in r.stderr


def test_demo_draws_the_tile_cache_before_and_after(tmp_path):
    r = navkit("demo", "--obstacles", "-o", str(tmp_path))
    for name in ("tilecache_before.png", "tilecache_after.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG
    tc = TileCache.load(tmp_path / "sample_level.tilecache")
    assert tc.obstacle_count == 4 and tc.up_to_date
    assert "4 obstacles added" in r.stdout and "tiles rebuilt" in r.stdout
