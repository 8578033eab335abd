import json
import subprocess
import sys
import time

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
    assert r.stderr.count("[5/5]") == 1


def test_warmup_rejects_unknown_groups(capsys):
    assert main(["warmup", "--groups", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_is_cached_knows_the_bake_kernels():
    from navkit._jit import is_cached
    from navkit.recast import rasterize

    assert is_cached(rasterize._rasterize_kernel) in (True, False)
    assert is_cached(len) is None  # not a numba kernel: unknown
