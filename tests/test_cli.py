import argparse
import json
import os
import re
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import navkit
from navkit.cli import main
from navkit.geometry import sample_level, save_obj


@pytest.fixture(scope="module")
def level(tmp_path_factory):
    p = tmp_path_factory.mktemp("lvl") / "level.obj"
    save_obj(sample_level(), p)
    return p


def test_bake_info_render(level, tmp_path, capsys):
    out = tmp_path / "level.navmesh"
    assert main(["bake", str(level), "-o", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert str(out) in line and "polys" in line
    assert main(["info", str(out), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["polys"] > 0 and stats["tiles"] == 1
    png = tmp_path / "level.png"
    assert main(["render", str(out), "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    png2 = tmp_path / "input.png"
    assert main(["render", str(level), "-o", str(png2)]) == 0
    assert png2.stat().st_size > 1000


def test_bake_tiled_json_and_recast_output(level, tmp_path, capsys):
    out = tmp_path / "level.bin"
    assert (
        main(["bake", str(level), "-o", str(out), "--tile-size", "32", "--workers", "1", "--json"])
        == 0
    )
    stats = json.loads(capsys.readouterr().out)
    assert stats["tiles"] > 1
    nm = navkit.NavMesh.from_recast(out)
    assert nm.stats()["polys"] == stats["polys"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["bake", "missing.obj", "-o", "x.navmesh"], "no such file"),
        (["bake", "{level}", "-o", "{tmp}/x.navmesh", "--cell-size", "-1"], "cell_size"),
        (["bake", "{level}", "-o", "{tmp}/x.navmesh", "--verts-per-poly", "9"], "verts_per_poly"),
        (["bake", "{level}", "-o", "{tmp}/x.navmesh", "--workers", "0"], "--workers must be at least 1"),
        (["warmup", "--workers", "-2"], "--workers must be at least 1"),
        (["bake", "{notobj}", "-o", "{tmp}/x.navmesh"], "not an OBJ"),
        (["bake", "{level}", "-o", "{tmp}/nodir/x.navmesh"], "does not exist"),
        (["info", "{notobj}"], "navmesh"),
        (["info", "{level}"], ""),
    ],
)
def test_errors_are_one_line_and_nonzero(level, tmp_path, capsys, args, needle):
    notobj = tmp_path / "junk.obj"
    notobj.write_text("this is not geometry\n")
    args = [a.format(level=level, tmp=tmp_path, notobj=notobj) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error" in err
    assert needle.lower() in err.lower()
    # nothing half-written
    assert not list(tmp_path.glob("*.navmesh")) and not list(tmp_path.glob(".*.tmp"))


def test_console_script_runs_demo(tmp_path):
    def demo():
        r = subprocess.run(
            [sys.executable, "-m", "navkit.cli", "demo", "-o", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert r.returncode == 0, r.stderr
        return r

    r = demo()
    assert (tmp_path / "sample_level.png").exists()
    assert (tmp_path / "sample_level.navmesh").exists()
    assert "baked" in r.stdout
    # the tile cache is `demo --obstacles` (tests/tilecache/test_cli_tilecache.py)
    assert not (tmp_path / "tilecache_before.png").exists() and "--obstacles" in r.stdout
    # the first run compiled (or loaded) everything; a warm run says nothing about compiling
    r = demo()
    assert "compil" not in (r.stdout + r.stderr).lower(), r.stderr


class _Disp:
    """Stands in for a numba dispatcher in compile events."""

    def __init__(self, module):
        self.py_func = type("F", (), {"__module__": module})()


def _compile_events(ann, module, seconds, depth=2):
    from numba.core.event import Event, EventStatus

    data = {"dispatcher": _Disp(module)}
    for _ in range(depth):
        ann.notify(Event("numba:compile", EventStatus.START, data=data))
    time.sleep(seconds)
    for _ in range(depth):
        ann.notify(Event("numba:compile", EventStatus.END, data=data))


def test_long_compiles_are_announced_once(monkeypatch, capsys):
    from navkit import _jit

    monkeypatch.setattr(_jit, "ANNOUNCE_AFTER_S", 0.2)
    ann = _jit._Announcer()
    _compile_events(ann, "navkit.recast.detail", 0.05)  # short: nothing yet
    assert capsys.readouterr().err == ""
    _compile_events(ann, "navkit.recast.contours", 0.4)  # the group's total passes 0.2 s
    err = capsys.readouterr().err
    assert err.startswith("navkit: compiling bake kernels (first run only") and err.count("\n") == 1
    _compile_events(ann, "navkit.recast.area", 0.3)  # once per group
    assert capsys.readouterr().err == ""
    _compile_events(ann, "navkit.ecm._index", 0.3)  # another group
    assert "corridor-map" in capsys.readouterr().err
    _compile_events(ann, "numpy.somewhere", 0.3)  # not navkit's kernels
    assert capsys.readouterr().err == ""


def test_kernels_compile_once_for_literal_arguments():
    from navkit._jit import njit

    @njit(cache=False)
    def helper(a, b, flag):
        if flag:
            return a + b
        return a - b

    @njit(cache=False)
    def entry(x):
        return helper(x, -1, True) + helper(x, 3, False) + helper(x, x, True)

    assert entry(5) == (5 - 1) + (5 - 3) + (5 + 5)
    assert len(helper.signatures) == 1  # not one per literal -1 / 3 / True / False


def test_tiled_bake_in_workers_announces_when_cold(monkeypatch, capsys):
    from navkit import _jit, cli

    monkeypatch.setattr(_jit, "announcer", _jit._Announcer())
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: False)
    cli._warn_if_cold()
    cli._warn_if_cold()
    assert capsys.readouterr().err.count("navkit: compiling bake kernels") == 1
    monkeypatch.setattr(_jit, "announcer", _jit._Announcer())
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: True)
    cli._warn_if_cold()
    assert capsys.readouterr().err == ""


def test_warmup_runs(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "navkit.cli", "warmup", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("warmed up ")
    assert all(g in r.stdout for g in ("bake", "corridor-map", "query", "optimal-path"))
    assert r.stderr.count("[7/7]") == 1


def test_warmup_rejects_unknown_groups(capsys):
    assert main(["warmup", "--groups", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_is_cached_knows_the_bake_kernels():
    from navkit._jit import is_cached
    from navkit.recast import rasterize

    assert is_cached(rasterize._rasterize_kernel) in (True, False)
    assert is_cached(len) is None  # not a numba kernel: unknown


# -- the command line as a newcomer runs it (subprocesses) ----------------------------------
START, END = "-19.18,2.75,0.21", "14.69,10.2,1.75"  # a pair of Recast's own dungeon queries


def navkit_cli(*args, cwd=None, umask=None, env=None, timeout=900):
    return subprocess.run(
        [sys.executable, "-m", "navkit.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        umask=-1 if umask is None else umask,
        env=None if env is None else {**os.environ, **env},
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def dungeon(tmp_path_factory):
    """The bundled dungeon baked solo by the CLI, under umask 022."""
    d = tmp_path_factory.mktemp("dungeon")
    r = navkit_cli("bake", navkit.data.path("dungeon.obj"), "-o", d / "d.navmesh", umask=0o022)
    assert r.returncode == 0, r.stderr
    return d / "d.navmesh"


def test_attach_negative_values():
    from navkit.cli import _attach_negative_values as f

    assert f(["path", "x", "--from", "-1,2,3", "--to", "-.5,0,0"]) == [
        "path", "x", "--from=-1,2,3", "--to=-.5,0,0"
    ]  # fmt: skip
    assert f(["render", "x", "--path", "-1,0,0:2,0,0", "-o", "y.png"])[2] == "--path=-1,0,0:2,0,0"
    assert f(["path", "x", "--from", "1,2,3"]) == ["path", "x", "--from", "1,2,3"]
    assert f(["bake", "--", "--from", "-1"]) == ["bake", "--", "--from", "-1"]
    assert f(["path", "x", "--json", "--from"]) == ["path", "x", "--json", "--from"]


def test_path_takes_negative_coordinates(dungeon):
    spaced = navkit_cli("path", dungeon, "--from", START, "--to", END, "--json")
    assert spaced.returncode == 0, spaced.stderr
    joined = navkit_cli("path", dungeon, f"--from={START}", f"--to={END}", "--json")
    assert joined.returncode == 0, joined.stderr
    a, b = json.loads(spaced.stdout), json.loads(joined.stdout)
    assert a == b and a["complete"]
    assert a["points"][0] == pytest.approx([-19.18, 2.75, 0.21], abs=1e-3)


def test_path_half_extents_sets_the_search_box(dungeon):
    above = "-19.18,10.75,0.21"  # 8 wu above the floor: outside the default box (2, 4, 2)
    r = navkit_cli("path", dungeon, "--from", above, "--to", END)
    assert r.returncode == 2
    assert "error" in r.stderr and "polygon" in r.stderr.lower()
    ok = navkit_cli("path", dungeon, "--from", above, "--to", END, "--half-extents", "2,12,2")
    assert ok.returncode == 0, ok.stderr
    assert "complete" in ok.stdout
    bad = navkit_cli("path", dungeon, "--from", START, "--to", END, "--half-extents", "1,1")
    assert bad.returncode == 2 and "--half-extents" in bad.stderr


def test_bake_help_shows_every_default():
    from navkit.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    bake = sub.choices["bake"]
    for action in bake._actions:
        if action.dest in ("help", "level", "output") or action.const is True:
            continue
        assert action.help, action.dest
        assert "default" in action.help, action.dest
    r = navkit_cli("bake", "--help")
    assert r.returncode == 0
    for needle in ("--cell-size X", "(default: 0.3)", "(default: 0.6", "(default: watershed)"):
        assert needle in r.stdout


def test_bake_moving_ai_map_and_image(tmp_path):
    out = tmp_path / "arena.navmesh"
    r = navkit_cli("bake", navkit.data.path("arena.map"), "-o", out, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["polys"] > 0
    assert navkit.NavMesh.load(out).stats()["polys"] == json.loads(r.stdout)["polys"]
    # flags of the 3D bake are refused for a grid, before any work
    r = navkit_cli("bake", navkit.data.path("arena.map"), "-o", tmp_path / "x.navmesh",
                   "--cell-size", "0.5")  # fmt: skip
    assert r.returncode == 2 and "--cell-size" in r.stderr and not (tmp_path / "x.navmesh").exists()
    # an image: dark = blocked; a 20 x 30 room with a wall in the middle
    import matplotlib.image as mpimg

    img = np.full((20, 30), 255, np.uint8)
    img[:, 14:16] = 0
    img[8:12, 14:16] = 255  # a door
    mpimg.imsave(tmp_path / "room.png", img, cmap="gray", vmin=0, vmax=255)
    r = navkit_cli("bake", tmp_path / "room.png", "-o", tmp_path / "room.navmesh", "--json")
    assert r.returncode == 0, r.stderr
    nm = navkit.NavMesh.load(tmp_path / "room.navmesh")
    p = navkit.NavMeshQuery(nm).path((2, 0, 2), (28, 0, 2))
    assert p.complete and p.length > 27  # around the wall, through the door (straight: 26)
    r = navkit_cli("bake", tmp_path / "missing.png", "-o", tmp_path / "m.navmesh")
    assert r.returncode == 2 and "no such file" in r.stderr


def test_render_formats_views_and_color_by(dungeon, tmp_path):
    jpg = tmp_path / "d.jpg"
    r = navkit_cli("render", dungeon, "-o", jpg, "--path", f"{START}:{END}")
    assert r.returncode == 0, r.stderr
    assert jpg.read_bytes()[:3] == b"\xff\xd8\xff"  # JPEG, not PNG bytes under a .jpg name
    svg = tmp_path / "d.svg"
    assert navkit_cli("render", dungeon, "-o", svg, "--view", "side").returncode == 0
    assert b"<svg" in svg.read_bytes()[:2000]
    png = tmp_path / "d.png"
    assert navkit_cli("render", dungeon, "-o", png, "--view", "iso").returncode == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = navkit_cli("render", dungeon, "-o", tmp_path / "d.gif")
    assert r.returncode == 2 and ".png" in r.stderr and not (tmp_path / "d.gif").exists()
    # region ids are not stored in files: a clear error naming the choices, not islands
    r = navkit_cli("render", dungeon, "-o", tmp_path / "r.png", "--color-by", "region")
    assert r.returncode == 2 and not (tmp_path / "r.png").exists()
    assert "region" in r.stderr and "area, tile, island" in r.stderr
    geo = tmp_path / "g.png"
    r = navkit_cli("render", navkit.data.path("nav_test.obj"), "-o", geo, "--view", "iso")
    assert r.returncode == 0, r.stderr
    assert geo.stat().st_size > 10_000


def test_outputs_get_the_mode_of_a_plain_open(dungeon, tmp_path):
    assert stat.S_IMODE(dungeon.stat().st_mode) == 0o644  # baked under umask 022
    png = tmp_path / "d.png"
    assert navkit_cli("render", dungeon, "-o", png, umask=0o022).returncode == 0
    assert stat.S_IMODE(png.stat().st_mode) == 0o644
    out = tmp_path / "demo"
    assert navkit_cli("demo", "-o", out, umask=0o027).returncode == 0
    for f in ("sample_level.navmesh", "sample_level.png"):
        assert stat.S_IMODE((out / f).stat().st_mode) == 0o640


def test_atomic_write_keeps_an_existing_files_mode(tmp_path):
    from navkit._io import atomic_write_bytes

    p = tmp_path / "f.bin"
    old = os.umask(0o022)
    try:
        atomic_write_bytes(p, b"1")
        assert stat.S_IMODE(p.stat().st_mode) == 0o644
        p.chmod(0o604)
        atomic_write_bytes(p, b"2")
        assert stat.S_IMODE(p.stat().st_mode) == 0o604 and p.read_bytes() == b"2"
        os.umask(0o077)
        atomic_write_bytes(tmp_path / "g.bin", b"3")
        assert stat.S_IMODE((tmp_path / "g.bin").stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_progress_and_summary_count_the_same_tiles(tmp_path):
    level, out = navkit.data.path("dungeon.obj"), tmp_path / "t.navmesh"
    args = ("bake", level, "-o", out, "--tile-size", "48", "--workers", "1")
    r = navkit_cli(*args, env={"NAVKIT_PROGRESS": "1"})
    assert r.returncode == 0, r.stderr
    last = r.stderr.replace("\r", "\n").strip().splitlines()[-1]
    done, total = re.search(r"(\d+)/(\d+) grid tiles", last).groups()
    assert done == total
    s = json.loads(navkit_cli(*args, "--json").stdout)
    b = s["build"]
    assert b["grid_tiles"] == int(total)
    assert b["tiles_built"] == s["tiles"]
    assert b["tiles_built"] + b["tiles_empty"] == b["grid_tiles"]
    assert b["tiles_empty"] > 0  # the dungeon leaves some of its 48-voxel tiles empty
    assert f"{s['tiles']} tiles" in r.stdout
    assert f"({b['tiles_empty']} of the {total} grid tiles empty)" in r.stdout


def test_data_command(tmp_path):
    r = navkit_cli("data")
    assert r.returncode == 0 and all(n in r.stdout for n in navkit.data.names())
    r = navkit_cli("data", "path", "dungeon")
    assert r.returncode == 0 and r.stdout.strip() == str(navkit.data.path("dungeon.obj"))
    r = navkit_cli("data", "copy", "arena.map", "scene.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "arena.map").read_bytes() == navkit.data.path("arena.map").read_bytes()
    (tmp_path / "scene.json").unlink()
    r = navkit_cli("data", "copy", "scene.json", "nope", cwd=tmp_path)
    assert r.returncode == 2 and "arena.map" in r.stderr  # lists the samples
    assert not (tmp_path / "scene.json").exists()  # every name is checked before a copy


@pytest.mark.skipif(
    not os.environ.get("NAVKIT_COLD_COMPILE"),
    reason="cold compile of every demo kernel (minutes): set NAVKIT_COLD_COMPILE=1",
)
def test_cold_demo_announces_each_compile_once_and_a_warm_one_never(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))

    def demo(*flags):
        r = subprocess.run(
            [sys.executable, "-m", "navkit.cli", "demo", *flags, "-o", str(tmp_path / "out")],
            capture_output=True, text=True, timeout=3600, env=env,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        return r

    # the plain demo: a second process compiles the path, the bake's side process
    # (navkit._warmup.BakeSide) half of the bake
    from navkit._jit import NUMBA_PATCHES

    r = demo()
    lines = [ln for ln in r.stderr.splitlines() if "compil" in ln.lower()]
    assert any("bake kernels" in ln for ln in lines), r.stderr
    assert len(lines) == len(set(lines)), r.stderr  # each announcement once
    assert (tmp_path / "out" / "sample_level.png").exists()
    r = demo()
    assert "compil" not in (r.stdout + r.stderr).lower(), r.stderr
    # with the tile cache: the second process compiled the navmesh kernels, the demo's
    # own process loads them instead of compiling them again
    r = demo("--obstacles")
    lines = [ln for ln in r.stderr.splitlines() if "compil" in ln.lower()]
    assert len(lines) == len(set(lines)), r.stderr
    if NUMBA_PATCHES.get("callee_compiles_without_wrapper"):
        assert not any(ln.startswith("navkit: compiling navmesh") for ln in lines), r.stderr
    for name in ("sample_level.png", "tilecache_before.png", "tilecache_after.png"):
        assert (tmp_path / "out" / name).exists()
    r = demo("--obstacles")
    assert "compil" not in (r.stdout + r.stderr).lower(), r.stderr


_DEMO_SIGNATURES = """
import navkit
from navkit import _warmup
from navkit.detour import _single, islands
from navkit.detour.query import NavMeshQuery
from navkit.geometry import sample_level

_warmup.compile_path_kernels()
_warmup.compile_picture_kernels()
# (kernels called from Python: one called only from other kernels is not loaded
# when those load from the cache, so its signatures would be empty on a warm run)
made_up = (_single.path_single, islands._label_kernel)
sigs = [set(k.signatures) for k in made_up]
nm = navkit.bake(sample_level(), navkit.BakeConfig())
NavMeshQuery(nm).path((5.0, 0.0, 5.0), (43.0, 8.0, 38.0))
nm.islands()  # (the picture's colours)
for k, before in zip(made_up, sigs, strict=True):
    assert set(k.signatures) == before and len(before) == 1, (k, before, k.signatures)
print("ok")
"""


def test_demo_side_compiles_the_signatures_the_demo_uses():
    """The demo's side process compiles path()'s kernels from made-up arguments and the
    demo the picture's kernel on an empty navmesh: the real calls (the path, the
    islands of a baked navmesh) must reuse those signatures.

    In a fresh interpreter, as the demo's processes are: in this one, other tests have
    already called these kernels with other arguments (read-only arrays, for one)."""
    r = subprocess.run(
        [sys.executable, "-c", _DEMO_SIGNATURES], capture_output=True, text=True, timeout=1800
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


# -- a cold `navkit bake` on two cores (navkit._warmup.BakeSide) ----------------------------
_BAKE_SIGNATURES = """
import navkit
from navkit import _warmup
from navkit.detour import _links, _pool_links

kinds = _warmup._bake_types()
_warmup._compile_as_callee(list(kinds))
_warmup._bake_link_kernels()
kernels = [d for d, _ in kinds.values()] + [_pool_links.connect_new_tiles, _links.count_links]
sigs = [set(k.signatures) for k in kernels]
for tile_size in (0, 32):
    nm = navkit.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=tile_size))
    nm.stats()
for k, before in zip(kernels, sigs, strict=True):
    assert set(k.signatures) == before and len(before) == 1, (k, before, k.signatures)
print("ok")
"""


def test_bake_side_compiles_the_signatures_the_bake_uses(tmp_path):
    """The side process of a cold ``navkit bake`` and the bake's own process compile
    their kernels from the argument types in navkit._warmup._bake_types: the bake's
    tile kernel and its navmesh (solo and tiled) must call those very signatures, or
    it would compile them again. In a fresh interpreter (other tests call these
    kernels with other arguments). On a warm cache a linked callee (the boundary
    flags) is not loaded again with the tile kernel: with NAVKIT_COLD_COMPILE=1 this
    runs on an empty cache, where every call of the tile kernel is typed."""
    env = dict(os.environ, NAVKIT_SIDE_PROCESS="0")  # (the library bake's own side: off)
    if os.environ.get("NAVKIT_COLD_COMPILE"):
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    r = subprocess.run(
        [sys.executable, "-c", _BAKE_SIGNATURES],
        capture_output=True, text=True, timeout=1800, env=env,
    )  # fmt: skip
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


def test_bake_side_starts_only_cold_and_on_two_cores(monkeypatch):
    from navkit import _jit, _warmup

    started = []
    monkeypatch.setattr(_warmup, "BakeSide", lambda mode="bake": started.append(mode) or "side")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_warmup, "_loaded", lambda kernel: False)  # (not loaded here yet)
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: True)
    assert _warmup.start_bake_side() is None  # warm: nothing starts
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: None)
    assert _warmup.start_bake_side() is None  # cannot tell (caching off): nothing either
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: False)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert _warmup.start_bake_side() is None  # one core: the bake compiles alone
    assert not started
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert _warmup.start_bake_side() == "side" and started == ["bake"]


def test_bake_side_hold_waits_then_restores(monkeypatch):
    """While held, a compile of a side kernel first waits for the side's tag; after,
    the dispatchers compile as before (no instance attribute left)."""
    from navkit import _warmup

    side = _warmup.BakeSide.__new__(_warmup.BakeSide)
    waited = []
    side.wait = waited.append  # type: ignore[method-assign]
    disp, sig = _warmup._bake_types()["merge_holes"]
    with side.hold():
        disp.compile(sig)
        assert waited == ["merge_holes"]  # the kernel's own tag
    assert "compile" not in disp.__dict__
    assert all("compile" not in d.__dict__ for d, _ in _warmup._bake_types().values())


@pytest.mark.parametrize("mode", ["bake", "demo", "demo-tc"])
def test_bake_side_holds_only_the_sides_kernels(mode):
    """Each mode splits the bake's kernels in two: the side's are held (waited for),
    the caller's own (compile_bake_front) are not, and every kernel is one or the other."""
    from navkit import _warmup

    side = _warmup.BakeSide.__new__(_warmup.BakeSide)
    side.mode = mode
    kinds = _warmup._bake_types()
    demo = mode != "bake"
    own = _warmup.DEMO_FRONT_KERNELS if demo else _warmup.BAKE_FRONT_KERNELS
    theirs = _warmup.DEMO_SIDE_KERNELS if demo else _warmup.BAKE_SIDE_KERNELS
    assert sorted(own + theirs) == sorted(kinds)
    with side.hold():
        held = {n for n, (d, _) in kinds.items() if "compile" in d.__dict__}
    assert held == set(theirs)
    if mode == "demo-tc":  # the tile cache's: the side's polygon mesh and update kernel
        from navkit.tilecache import _update

        tc = _warmup._tile_cache_types()
        with side.hold(tile_cache=True):
            held = {n for n, (d, _) in tc.items() if "compile" in d.__dict__}
            assert "compile" in _update.update_call_detail.__dict__
        assert held == set(_warmup.DEMO_TC_SIDE_KERNELS)
        assert "compile" not in _update.update_call_detail.__dict__


@pytest.mark.skipif(
    not os.environ.get("NAVKIT_COLD_COMPILE"),
    reason="cold compile of every bake kernel (a minute or more): set NAVKIT_COLD_COMPILE=1",
)
@pytest.mark.parametrize("tiles", [(), ("--tile-size", "48")], ids=["solo", "tiled"])
def test_cold_cli_bake_with_its_side_process(level, tmp_path, tiles):
    """A cold ``navkit bake`` (its side process compiling half of the kernels) writes
    the same bytes as a bake in this process, announces its compile once, and a warm
    run after it compiles nothing and starts no side process."""
    ref = tmp_path / "ref.bin"
    assert main(["bake", str(level), "-o", str(ref), *tiles, "--workers", "1"]) == 0
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    for run in ("cold", "warm"):
        out = tmp_path / f"{run}.bin"
        r = navkit_cli("bake", level, "-o", out, *tiles, env=env, timeout=3600)
        assert r.returncode == 0, r.stderr
        assert out.read_bytes() == ref.read_bytes(), run
        lines = [ln for ln in r.stderr.splitlines() if "compil" in ln.lower()]
        if run == "cold":
            assert any("bake kernels" in ln for ln in lines), r.stderr
            assert len(lines) == len(set(lines)), r.stderr  # each announcement once
        else:
            assert not lines, r.stderr


def test_bake_side_process_ends_either_way():
    """The side is a plain subprocess: close() waits for its last line; close(finish=
    False), after a failed bake, stops it at once."""
    from navkit import _warmup

    side = _warmup.BakeSide()
    side.close()
    assert side.seen >= {"back", "links"} and side.process.returncode == 0
    side = _warmup.BakeSide()
    side.close(finish=False)
    assert side.process.returncode is not None
    side = _warmup.BakeSide("demo")  # goes on with the picture's and the path's kernels
    side.close()
    assert side.seen >= {"back", "links", "path"} and side.process.returncode == 0
    # demo --obstacles: then the tile cache's kernels, the update kernel once this
    # process said that the swap kernel is compiled (or closed the side's stdin)
    for signal in (True, False):
        side = _warmup.BakeSide("demo-tc")
        if signal:
            side.signal("swap")
        side.close()
        assert side.seen >= {"path", "raw_mesh", "update", "tilecache"}, side.seen
        assert side.process.returncode == 0


def test_bake_side_imports_navkit_by_the_callers_path(monkeypatch, tmp_path):
    """numba keys cache entries to a kernel's source path: the side process must import
    navkit by the very path this process did (a symbolic link kept), or its cache
    entries are never found here."""
    import subprocess
    from pathlib import Path

    import navkit
    from navkit import _warmup

    root = Path(navkit.__file__).resolve().parent.parent
    if str(root) in _warmup._site_dirs():
        pytest.skip("navkit is installed in site-packages here")
    link = tmp_path / "linked-src"
    link.symlink_to(root, target_is_directory=True)
    monkeypatch.setattr(navkit, "__file__", str(link / "navkit" / "__init__.py"))
    seen = {}

    class _Popen:
        def __init__(self, args, **kw):
            seen.update(kw["env"])
            self.stdout = None

    monkeypatch.setattr(subprocess, "Popen", _Popen)
    _warmup.BakeSide()
    assert seen["PYTHONPATH"].split(os.pathsep)[0] == str(link)


def test_bake_says_which_format_an_unusual_suffix_gets(level, tmp_path, capsys):
    out = tmp_path / "level.txt"
    assert main(["bake", str(level), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "level.txt gets navkit's navmesh format" in err and ".bin" in err
    assert navkit.NavMesh.load(out).stats()["polys"] > 0
    assert main(["bake", str(level), "-o", str(tmp_path / "level.navmesh")]) == 0
    assert "format" not in capsys.readouterr().err
    upper = tmp_path / "level.BIN"
    assert main(["bake", str(level), "-o", str(upper)]) == 0
    assert "format" not in capsys.readouterr().err
    assert navkit.NavMesh.from_recast(upper).stats()["polys"] > 0
