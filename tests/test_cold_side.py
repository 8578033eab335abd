"""A cold library bake (and tile cache) on two cores: the side process of
navkit._warmup that compiles half of the kernels meanwhile, when it starts, and that
it changes nothing in the result."""

import contextlib
import os
import subprocess
import sys

import numpy as np
import pytest

import navkit
from navkit import _jit, _warmup
from navkit.geometry import TriMesh, sample_level


class _FakeSide:
    """Stands for a BakeSide: records its hold and how it was closed."""

    mode = "bake"

    def __init__(self, log):
        self.log = log

    def hold(self):
        @contextlib.contextmanager
        def held():
            self.log.append("hold")
            _warmup._held[0] += 1
            try:
                yield
            finally:
                _warmup._held[0] -= 1

        return held()

    def close(self, finish=True):
        self.log.append("close" if finish else "kill")


@pytest.fixture
def fake_side(monkeypatch):
    """BakeSide replaced by a recorder, the cache cold, two cores, no opt-out."""
    log = []
    monkeypatch.setattr(_warmup, "BakeSide", lambda mode="bake": log.append(mode) or _FakeSide(log))
    monkeypatch.setattr(_warmup, "compile_bake_front", lambda mode="bake": log.append("front"))
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: False)
    monkeypatch.setattr(_warmup, "_loaded", lambda kernel: False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.delenv(_warmup.SIDE_ENV, raising=False)
    monkeypatch.setattr(_jit, "announcer", _jit._Announcer())
    return log


def _quad():
    return TriMesh(
        vertices=np.array([[0, 0, 0], [0, 0, 6], [6, 0, 6], [6, 0, 0]], np.float32),
        triangles=np.array([[0, 1, 2], [0, 2, 3]], np.int32),
    )


@pytest.mark.parametrize("tile_size", [0, 16])
def test_library_bake_starts_a_side_when_cold(fake_side, capsys, tile_size):
    nm = navkit.bake(_quad(), navkit.BakeConfig(tile_size=tile_size))
    assert nm.stats()["polys"] > 0
    assert fake_side == ["bake", "hold", "front", "close"]
    assert "navkit: compiling bake kernels" in capsys.readouterr().err  # announced up front
    assert _warmup._held[0] == 0


def test_library_bake_stops_its_side_when_it_fails(fake_side):
    down = TriMesh(  # wound clockwise: nothing walkable
        vertices=np.array([[0, 0, 0], [6, 0, 0], [6, 0, 6], [0, 0, 6]], np.float32),
        triangles=np.array([[0, 1, 2], [0, 2, 3]], np.int32),
    )
    with pytest.raises(navkit.errors.BuildError):
        navkit.bake(down, navkit.BakeConfig())
    assert fake_side == ["bake", "hold", "front", "kill"]


def test_library_bake_starts_no_side_when_warm_opted_out_or_elsewhere(fake_side, monkeypatch):
    quad = _quad()
    # bakes that do not go through the tile kernel
    navkit.bake(quad, navkit.BakeConfig(partition="monotone"))
    navkit.bake(quad, navkit.BakeConfig(), keep_intermediates=True)
    assert fake_side == []
    monkeypatch.setenv(_warmup.SIDE_ENV, "0")
    navkit.bake(quad, navkit.BakeConfig())
    assert fake_side == []
    monkeypatch.setenv(_warmup.SIDE_ENV, "1")
    # inside another side's hold (the CLI's, or a bake within a bake): no second side
    with _FakeSide([]).hold():
        navkit.bake(quad, navkit.BakeConfig())
    assert fake_side == []
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    navkit.bake(quad, navkit.BakeConfig())
    assert fake_side == []
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: True)  # warm
    navkit.bake(quad, navkit.BakeConfig())
    assert fake_side == []
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: False)
    monkeypatch.setattr(_warmup, "_loaded", lambda kernel: False)
    empty = TriMesh(vertices=quad.vertices, triangles=np.zeros((0, 3), np.int32))
    with pytest.raises(navkit.errors.InputError):  # checked before any side starts
        navkit.bake(empty, navkit.BakeConfig())
    assert fake_side == []


def test_side_process_allowed(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.delenv(_warmup.SIDE_ENV, raising=False)
    assert _warmup.side_process_allowed()
    for off in ("0", "off", "No", "false "):
        monkeypatch.setenv(_warmup.SIDE_ENV, off)
        assert not _warmup.side_process_allowed(), off
    monkeypatch.setenv(_warmup.SIDE_ENV, "1")
    assert _warmup.side_process_allowed()
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert not _warmup.side_process_allowed()


_IN_WORKER = """
import multiprocessing, os
from navkit import _warmup

def allowed(_):
    return _warmup.side_process_allowed()

if __name__ == "__main__":
    os.cpu_count = lambda: 2
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print(_warmup.side_process_allowed(), pool.map(allowed, [0])[0])
"""


def test_no_side_in_a_multiprocessing_worker(tmp_path):
    """A worker of a process pool (navkit warmup's, a user's) starts no side process:
    the pool already uses the cores."""
    script = tmp_path / "w.py"
    script.write_text(_IN_WORKER)
    env = {k: v for k, v in os.environ.items() if k != _warmup.SIDE_ENV}
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "False"]


_COLD_BAKE = """
import sys
import navkit
# no __main__ guard: the side process must not import this script again
for tile_size in (0, 32):
    nm = navkit.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=tile_size))
    sys.stdout.buffer.write(nm.to_recast())
"""


@pytest.mark.skipif(
    not os.environ.get("NAVKIT_COLD_COMPILE"),
    reason="cold compile of every bake kernel (a minute or more): set NAVKIT_COLD_COMPILE=1",
)
def test_cold_library_bake_with_its_side_process(tmp_path):
    """A cold ``navkit.bake`` from a script without a ``__main__`` guard (its side
    process compiling half of the kernels) gives the same bytes as a bake in this
    process, announces its compile once, and a warm run compiles nothing."""
    ref = b"".join(
        navkit.bake(sample_level(), navkit.BakeConfig(tile_size=t)).to_recast() for t in (0, 32)
    )
    _cold_then_warm(tmp_path, _COLD_BAKE, ref, "bake kernels")


def _cold_then_warm(tmp_path, source: str, ref: bytes, group: str, args=()) -> None:
    """Run ``source`` as a script on an empty numba cache, then again: both print
    ``ref``; the cold run announces the ``group`` compile (on two cores) and every
    announcement once, the warm one announces nothing."""
    script = tmp_path / "script.py"
    script.write_text(source)
    env = {k: v for k, v in os.environ.items() if k != _warmup.SIDE_ENV}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    for run in ("cold", "warm"):
        r = subprocess.run(
            [sys.executable, str(script), *args], capture_output=True, timeout=3600, env=env
        )
        err = r.stderr.decode()
        assert r.returncode == 0, err
        assert r.stdout == ref, run
        lines = [ln for ln in err.splitlines() if "compil" in ln.lower()]
        if run == "cold":
            assert any(group in ln and "two cores" in ln for ln in lines), err
            assert len(lines) == len(set(lines)), err
        else:
            assert not lines, err


# -- the tile cache ---------------------------------------------------------------------------
@pytest.fixture
def fake_tc_side(fake_side, monkeypatch):
    monkeypatch.setattr(
        _warmup, "_compile_as_callee", lambda names, kinds=None: fake_side.append(tuple(names))
    )
    return fake_side


def test_tile_cache_bake_starts_a_side_when_cold(fake_tc_side, capsys):
    from navkit.tilecache import TileCache

    tc = TileCache.bake(_quad(), navkit.BakeConfig(tile_size=16))
    assert tc.navmesh.stats()["polys"] > 0
    assert fake_tc_side == ["tilecache", "hold", _warmup.TILECACHE_FRONT_KERNELS, "close"]
    # (announced up front; this test's announcer is not numba's listener, which may
    # announce the tile cache's own compiles here)
    assert "tile-cache kernels (first run only, ~30 s on two cores)" in capsys.readouterr().err


def test_tile_cache_bake_starts_no_side_otherwise(fake_tc_side, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from navkit.tilecache import TileCache

    cfg = navkit.BakeConfig(tile_size=16)
    TileCache.bake(_quad(), cfg, recast_compatible=True)  # update_call, not the detail one
    # (its navmesh from the layers gets the side of a tile cache load, after the layers)
    assert fake_tc_side == ["tcload", "hold", ("swap_poly_mesh_tile",), "close"]
    fake_tc_side.clear()
    with ThreadPoolExecutor(2) as ex:
        TileCache.bake(_quad(), cfg, executor=ex)  # the executor's per-tile path
    monkeypatch.setenv(_warmup.SIDE_ENV, "off")
    TileCache.bake(_quad(), cfg)
    monkeypatch.delenv(_warmup.SIDE_ENV)
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: True)
    TileCache.bake(_quad(), cfg)
    assert fake_tc_side == []
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: False)
    monkeypatch.setattr(_warmup, "_loaded", lambda kernel: False)
    with pytest.raises(navkit.errors.ConfigError):
        TileCache.bake(_quad(), navkit.BakeConfig(tile_size=0))
    assert fake_tc_side[-1] == "kill"


_TC_SIGNATURES = """
import navkit
from navkit import _warmup
from navkit.tilecache import TileCache

kinds = {**_warmup._bake_types(), **_warmup._tile_cache_types()}
names = _warmup.TILECACHE_SIDE_KERNELS + _warmup.TILECACHE_FRONT_KERNELS
_warmup._compile_as_callee(names, kinds)
kernels = [kinds[n][0] for n in names]
sigs = [set(k.signatures) for k in kernels]
TileCache.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=32))
for k, before in zip(kernels, sigs, strict=True):
    assert set(k.signatures) == before and len(before) == 1, (k, before, k.signatures)
print("ok")
"""


def test_tile_cache_side_compiles_the_signatures_the_tile_cache_uses(tmp_path):
    """The tile cache's side process and its own process compile their kernels from
    the argument types of _warmup._tile_cache_types and _bake_types: the update
    kernel must call those very signatures, or it would compile them again. In a fresh
    interpreter; with NAVKIT_COLD_COMPILE=1 on an empty cache (on a warm one the
    update kernel loads without typing its calls)."""
    _signature_script(tmp_path, _TC_SIGNATURES)


def _signature_script(tmp_path, script: str, *args: str) -> None:
    """Run ``script`` in a fresh interpreter without a side process (on an empty cache
    with NAVKIT_COLD_COMPILE=1) and check that it ends with "ok"."""
    env = dict(os.environ, NAVKIT_SIDE_PROCESS="0")
    if os.environ.get("NAVKIT_COLD_COMPILE"):
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    r = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


_COLD_TC = """
import sys
import navkit
from navkit.tilecache import TileCache

tc = TileCache.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=32))
sys.stdout.buffer.write(tc.to_recast() + tc.navmesh.to_recast())
"""


@pytest.mark.skipif(
    not os.environ.get("NAVKIT_COLD_COMPILE"),
    reason="cold compile of every tile cache kernel (a minute or more): set NAVKIT_COLD_COMPILE=1",
)
def test_cold_tile_cache_bake_with_its_side_process(tmp_path):
    """A cold ``TileCache.bake`` (its side process compiling the update kernel's mesh
    and swap kernels) gives the same layers and navmesh as one in this process,
    announces its compile once, and a warm run compiles nothing."""
    from navkit.tilecache import TileCache

    tc = TileCache.bake(sample_level(), navkit.BakeConfig(tile_size=32))
    ref = tc.to_recast() + tc.navmesh.to_recast()
    _cold_then_warm(tmp_path, _COLD_TC, ref, "tile-cache kernels")


def test_a_bake_kernel_loaded_in_this_process_starts_no_side(fake_side, monkeypatch):
    """Once the tile kernel is compiled or loaded here, a bake checks nothing else (no
    cache lookup on disk per bake) and starts no side, whatever the cache says."""
    monkeypatch.setattr(_warmup, "_loaded", lambda kernel: True)
    navkit.bake(_quad(), navkit.BakeConfig())
    assert fake_side == []


def test_a_solo_bake_with_a_process_pool_still_gets_its_side(fake_side):
    """A solo bake ignores the executor (one tile through the tile kernel), so a process
    pool given to it does not stop the side as it does for a tiled bake."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1) as pool:
        navkit.bake(_quad(), navkit.BakeConfig(), executor=pool)
        assert fake_side == ["bake", "hold", "front", "close"]
        fake_side.clear()
        navkit.bake(_quad(), navkit.BakeConfig(tile_size=16), executor=pool)
        assert fake_side == []


# -- a tile cache from its layers: TileCache.from_recast, TileCache.load -----------------------
@pytest.fixture(scope="module")
def tc_files(tmp_path_factory):
    """A small tile cache's Recast file and navkit files (both modes), made before any
    fake side (with no real side either)."""
    from navkit.tilecache import TileCache

    was = os.environ.get(_warmup.SIDE_ENV)
    os.environ[_warmup.SIDE_ENV] = "0"
    try:
        d = tmp_path_factory.mktemp("tc")
        cfg = navkit.BakeConfig(tile_size=16)
        tc = TileCache.bake(_quad(), cfg)
        tc.to_recast(d / "q.tilecache.bin")
        tc.save(d / "default.tc")
        TileCache.bake(_quad(), cfg, recast_compatible=True).save(d / "compat.tc")
    finally:
        if was is None:
            del os.environ[_warmup.SIDE_ENV]
        else:
            os.environ[_warmup.SIDE_ENV] = was
    return d


_LOAD_FRONT = {m: front for m, (_side, front) in _warmup.TILECACHE_LOAD_SPLITS.items()}


def test_tile_cache_load_starts_a_side_when_cold(tc_files, fake_tc_side, capsys):
    """A cold ``from_recast`` / ``load`` builds its navmesh with a side process of the
    cache's mode (recast-compatible: ``update_call``'s split; navkit's:
    ``update_call_detail``'s), announced up front."""
    from navkit.tilecache import TileCache

    cases = [
        (lambda: TileCache.from_recast(tc_files / "q.tilecache.bin"), "tcload"),
        (lambda: TileCache.from_recast((tc_files / "q.tilecache.bin").read_bytes()), "tcload"),
        (
            lambda: TileCache.from_recast(tc_files / "q.tilecache.bin", recast_compatible=False),
            "tcload-detail",
        ),
        (lambda: TileCache.load(tc_files / "default.tc"), "tcload-detail"),
        (lambda: TileCache.load(tc_files / "compat.tc"), "tcload"),
    ]
    for load, mode in cases:
        fake_tc_side.clear()
        tc = load()
        assert tc.navmesh.stats()["polys"] > 0
        assert fake_tc_side == [mode, "hold", _LOAD_FRONT[mode], "close"]
        assert _warmup._held[0] == 0
    assert "tile-cache kernels (first run only, ~20 s on two cores)" in capsys.readouterr().err


def test_tile_cache_load_stops_its_side_when_it_fails(tc_files, fake_tc_side, monkeypatch):
    from navkit.errors import BuildError
    from navkit.tilecache import TileCache
    from navkit.tilecache.update import CacheState

    def fail(self, coords, progress=None):
        raise BuildError("layer (0, 0, 0): too many regions")

    monkeypatch.setattr(CacheState, "build_initial", fail)
    with pytest.raises(BuildError):
        TileCache.from_recast(tc_files / "q.tilecache.bin")
    assert fake_tc_side == ["tcload", "hold", _LOAD_FRONT["tcload"], "kill"]
    assert _warmup._held[0] == 0


def test_tile_cache_load_starts_no_side_otherwise(tc_files, fake_tc_side, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from navkit.tilecache import TileCache
    from navkit.tilecache.format import read_tile_cache

    src = tc_files / "q.tilecache.bin"
    with ThreadPoolExecutor(2) as ex:  # the executor's per-tile path
        TileCache(read_tile_cache(src), executor=ex)
    monkeypatch.setenv(_warmup.SIDE_ENV, "off")
    TileCache.from_recast(src)
    monkeypatch.delenv(_warmup.SIDE_ENV)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    TileCache.load(tc_files / "default.tc")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: True)  # warm on disk
    TileCache.from_recast(src)
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: False)
    monkeypatch.setattr(_warmup, "_loaded", lambda kernel: True)  # loaded in this process
    TileCache.load(tc_files / "default.tc")
    assert fake_tc_side == []


_WARM_LOAD = """
import sys
from navkit import _warmup
from navkit.tilecache import TileCache

def no_side(*a, **k):
    raise AssertionError("a side process started on a warm cache")

_warmup.BakeSide = no_side
tc = TileCache.from_recast(sys.argv[1])
tc2 = TileCache.load(sys.argv[2])
print(tc.navmesh.stats()["polys"], tc2.navmesh.stats()["polys"])
"""


def test_warm_tile_cache_load_starts_no_side(tc_files, tmp_path, monkeypatch):
    """On a warm cache (a fresh interpreter: nothing loaded yet, the cache files on
    disk) ``from_recast`` and ``load`` start no side process and announce nothing."""
    from navkit.tilecache import TileCache

    args = [str(tc_files / "q.tilecache.bin"), str(tc_files / "default.tc")]
    monkeypatch.setenv(_warmup.SIDE_ENV, "0")
    TileCache.from_recast(args[0])  # compiled or loaded here (no side): the cache is warm
    TileCache.load(args[1])
    env = {k: v for k, v in os.environ.items() if k != _warmup.SIDE_ENV}
    script = tmp_path / "warm.py"
    script.write_text(_WARM_LOAD)
    r = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=600,
        env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "compil" not in r.stderr.lower(), r.stderr
    assert all(int(n) > 0 for n in r.stdout.split()), r.stdout


_TC_LOAD_SIGNATURES = """
import sys
from navkit import _warmup
from navkit.tilecache import TileCache

kinds = _warmup._tile_cache_kinds()
names = sorted({n for split in _warmup.TILECACHE_LOAD_SPLITS.values() for h in split for n in h})
_warmup._compile_as_callee(names, kinds)
kernels = [kinds[n][0] for n in names]
sigs = [set(k.signatures) for k in kernels]
TileCache.from_recast(sys.argv[1])
TileCache.load(sys.argv[2])
for k, before in zip(kernels, sigs, strict=True):
    assert set(k.signatures) == before and len(before) == 1, (k, before, k.signatures)
print("ok")
"""


def test_tile_cache_load_side_compiles_the_signatures_the_load_uses(tc_files, tmp_path):
    """As test_tile_cache_side_compiles_the_signatures_the_tile_cache_uses, for both
    modes of a tile cache load (update_call and update_call_detail): with
    NAVKIT_COLD_COMPILE=1 on an empty cache."""
    _signature_script(
        tmp_path, _TC_LOAD_SIGNATURES, str(tc_files / "q.tilecache.bin"),
        str(tc_files / "default.tc"),
    )  # fmt: skip


_COLD_TC_LOAD = """
import sys
from navkit.tilecache import TileCache

# no __main__ guard: the side process must not import this script again
a = TileCache.from_recast(sys.argv[1])
b = TileCache.load(sys.argv[2])
sys.stdout.buffer.write(a.navmesh.to_recast() + b.navmesh.to_recast() + b.to_bytes())
"""


@pytest.mark.skipif(
    not os.environ.get("NAVKIT_COLD_COMPILE"),
    reason="cold compile of both tile cache update kernels (a minute or more): "
    "set NAVKIT_COLD_COMPILE=1",
)
def test_cold_tile_cache_load_with_its_side_process(tmp_path):
    """A cold ``TileCache.from_recast`` (recast-compatible) and ``TileCache.load`` (a
    navkit-mode cache) with their side processes give the same navmeshes as in this
    process, announce their compile once, and a warm run compiles nothing."""
    from navkit.tilecache import TileCache

    tc = TileCache.bake(sample_level(), navkit.BakeConfig(tile_size=32))
    tc.to_recast(tmp_path / "level.tilecache.bin")
    tc.save(tmp_path / "level.tc")
    a = TileCache.from_recast(tmp_path / "level.tilecache.bin")
    b = TileCache.load(tmp_path / "level.tc")
    ref = a.navmesh.to_recast() + b.navmesh.to_recast() + b.to_bytes()
    args = [str(tmp_path / "level.tilecache.bin"), str(tmp_path / "level.tc")]
    _cold_then_warm(tmp_path, _COLD_TC_LOAD, ref, "tile-cache kernels", args)


# -- a crowd's first update -------------------------------------------------------------------
@pytest.fixture(scope="module")
def crowd_navmesh():
    return navkit.bake(sample_level(), navkit.BakeConfig())


def _crowd(nm, max_agents=4, **kw):
    """_CROWD's crowd (its agents: half as many as it holds)."""
    from navkit.detour.query import NavMeshQuery

    q = NavMeshQuery(nm)
    crowd = navkit.Crowd(nm, max_agents=max_agents, max_agent_radius=0.6, **kw)
    goal = q.find_nearest_poly((43.0, 8.0, 38.0))
    for i in range(max_agents // 2):
        a = crowd.add_agent(q.find_random_point(rng=i).point, navkit.AgentParams(radius=0.4))
        crowd.request_move_target(a, goal.ref, goal.point)
    return crowd


def test_crowd_starts_a_side_when_cold(crowd_navmesh, fake_tc_side, capsys):
    """A dtcrowd-mode crowd made on a cold cache starts the crowd's side process; its
    first update holds it, compiles this process's half and closes it; later updates
    and crowds made after that (the step loaded) start nothing."""
    crowd = _crowd(crowd_navmesh)
    assert fake_tc_side == ["crowd"]
    crowd.update(1 / 60)
    assert fake_tc_side == ["crowd", "hold", _warmup.CROWD_FRONT_KERNELS, "close"]
    assert "crowd kernels (first run only, ~15 s on two cores)" in capsys.readouterr().err
    crowd.update(1 / 60)
    assert len(fake_tc_side) == 4 and _warmup._held[0] == 0


def test_crowd_stops_its_side_when_the_update_fails(crowd_navmesh, fake_tc_side, monkeypatch):
    crowd = _crowd(crowd_navmesh)
    with pytest.raises(navkit.errors.InputError):
        crowd.update(float("nan"))  # (checked before the side is taken)
    assert fake_tc_side == ["crowd"]

    def fail(*a, **k):
        raise MemoryError

    monkeypatch.setattr(crowd, "_update_fused", fail)
    with pytest.raises(MemoryError):
        crowd.update(1 / 60)
    assert fake_tc_side == ["crowd", "hold", _warmup.CROWD_FRONT_KERNELS, "kill"]


def test_crowd_side_stopped_when_not_needed(crowd_navmesh, fake_tc_side):
    """A first update that does not run the step kernel (a temporary obstacle: the
    phases run from Python, with other signatures) stops the side at once; a crowd
    dropped before any update stops it too."""
    import gc

    crowd = _crowd(crowd_navmesh)
    crowd.temporary_obstacles.add((20.0, 0.0, 20.0), 1.0)
    crowd.update(1 / 60)
    assert fake_tc_side == ["crowd", "kill"]
    crowd = _crowd(crowd_navmesh)
    del crowd
    gc.collect()
    assert fake_tc_side == ["crowd", "kill", "crowd", "kill"]


def test_crowd_starts_no_side_otherwise(crowd_navmesh, fake_tc_side, monkeypatch):
    _crowd(crowd_navmesh, mode="navkit").update(1 / 60)  # (its phases: other kernels)
    monkeypatch.setenv(_warmup.SIDE_ENV, "0")
    _crowd(crowd_navmesh).update(1 / 60)
    monkeypatch.delenv(_warmup.SIDE_ENV)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    _crowd(crowd_navmesh).update(1 / 60)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with _FakeSide([]).hold():  # inside another side's hold
        _crowd(crowd_navmesh).update(1 / 60)
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: True)  # warm on disk
    _crowd(crowd_navmesh).update(1 / 60)
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: False)
    monkeypatch.setattr(_warmup, "_loaded", lambda kernel: True)  # loaded in this process
    _crowd(crowd_navmesh).update(1 / 60)
    assert fake_tc_side == []


_CROWD = """
import sys
import numpy as np
import navkit
from navkit.detour.navmesh import NavMesh
from navkit.detour.query import NavMeshQuery

nm = NavMesh.load(sys.argv[1])
q = NavMeshQuery(nm)
crowd = navkit.Crowd(nm, max_agents=8, max_agent_radius=0.6)
goal = q.find_nearest_poly((43.0, 8.0, 38.0))
for i in range(4):
    a = crowd.add_agent(q.find_random_point(rng=i).point, navkit.AgentParams(radius=0.4))
    crowd.request_move_target(a, goal.ref, goal.point)
"""
_CROWD_SIGS_HEAD = """
from navkit import _warmup
kinds = _warmup._crowd_types()
names = _warmup.CROWD_SIDE_KERNELS + _warmup.CROWD_FRONT_KERNELS
_warmup._compile_as_callee(names, kinds)
kernels = [kinds[n][0] for n in names]
sigs = [set(k.signatures) for k in kernels]
"""
_CROWD_SIGS_TAIL = """
for _ in range(3):
    crowd.update(1 / 60)
for k, before in zip(kernels, sigs, strict=True):
    assert set(k.signatures) == before and len(before) == 1, (k, before, k.signatures)
print("ok")
"""
_CROWD_SIGNATURES = _CROWD_SIGS_HEAD + _CROWD + _CROWD_SIGS_TAIL


def test_crowd_side_compiles_the_signatures_the_crowd_uses(crowd_navmesh, tmp_path):
    """The crowd's side process and its own first update compile the step's phase
    kernels from the argument types of _warmup._crowd_types: the step kernel must call
    those very signatures, or it would compile them again (fresh interpreter; with
    NAVKIT_COLD_COMPILE=1 on an empty cache, where every call of the step is typed)."""
    crowd_navmesh.save(tmp_path / "level.navmesh")
    _signature_script(tmp_path, _CROWD_SIGNATURES, str(tmp_path / "level.navmesh"))


_COLD_CROWD = _CROWD + (
    "# no __main__ guard: the side process must not import this script again\n"
    "for _ in range(5):\n"
    "    crowd.update(1 / 60)\n"
    "sys.stdout.buffer.write(crowd.agents.npos.tobytes() + crowd.agents.vel.tobytes())\n"
)


@pytest.mark.skipif(
    not os.environ.get("NAVKIT_COLD_COMPILE"),
    reason="cold compile of the crowd's kernels (a minute or more): set NAVKIT_COLD_COMPILE=1",
)
def test_cold_crowd_with_its_side_process(crowd_navmesh, tmp_path):
    """A crowd's cold first updates (its side process compiling part of the step's
    kernels) move the agents as in this process, announce the crowd's compile once,
    and a warm run compiles nothing."""
    from navkit.detour.navmesh import NavMesh

    path = tmp_path / "level.navmesh"
    crowd_navmesh.save(path)
    crowd = _crowd(NavMesh.load(path), max_agents=8)
    for _ in range(5):
        crowd.update(1 / 60)
    ref = crowd.agents.npos.tobytes() + crowd.agents.vel.tobytes()
    _cold_then_warm(tmp_path, _COLD_CROWD, ref, "crowd kernels", [str(path)])


_NO_SIDE = """
from navkit import _warmup

def no_side(*a, **k):
    raise AssertionError("a side process started on a warm cache")

_warmup.BakeSide = no_side
"""
_WARM_CROWD = _NO_SIDE + _CROWD + 'crowd.update(1 / 60)\nprint("ok")\n'


def test_warm_crowd_starts_no_side(crowd_navmesh, tmp_path, monkeypatch):
    """On a warm cache (a fresh interpreter: nothing loaded yet) a crowd starts no side
    process and announces nothing."""
    path = tmp_path / "level.navmesh"
    crowd_navmesh.save(path)
    monkeypatch.setenv(_warmup.SIDE_ENV, "0")
    _crowd(crowd_navmesh).update(1 / 60)  # compiled or loaded here: the cache is warm
    env = {k: v for k, v in os.environ.items() if k != _warmup.SIDE_ENV}
    r = subprocess.run(
        [sys.executable, "-c", _WARM_CROWD, str(path)], capture_output=True, text=True,
        timeout=600, env=env,
    )  # fmt: skip
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr
    assert "compil" not in r.stderr.lower(), r.stderr


def test_crowd_side_holds_only_the_sides_kernels():
    """The crowd's side holds its phase kernels (and the sliced search kernels its
    move requests compile), not this process's own; every phase kernel of
    _crowd_types is one or the other."""
    side = _warmup.BakeSide.__new__(_warmup.BakeSide)
    side.mode = "crowd"
    kinds = _warmup._crowd_types()
    own, theirs = _warmup.CROWD_FRONT_KERNELS, _warmup.CROWD_SIDE_KERNELS
    assert sorted(own + theirs) == sorted(kinds)
    with side.hold():
        held = {n for n, (d, _) in kinds.items() if "compile" in d.__dict__}
        assert all("compile" in d.__dict__ for d in _warmup._crowd_requests_callees())
    assert held == set(theirs)
    assert all("compile" not in d.__dict__ for d, _ in kinds.values())


def test_crowd_side_process_runs_to_its_end():
    side = _warmup.BakeSide("crowd")
    side.close()
    assert side.seen >= {*_warmup.CROWD_SIDE_KERNELS, "crowd"} and side.process.returncode == 0
