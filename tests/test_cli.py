import json
import subprocess
import sys

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
    r = subprocess.run(
        [sys.executable, "-m", "navkit.cli", "demo", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "sample_level.png").exists()
    assert (tmp_path / "sample_level.navmesh").exists()
    assert "baked" in r.stdout


def test_first_run_warns_before_compiling(monkeypatch, capsys):
    from navkit import _jit, cli

    monkeypatch.setattr(_jit, "is_cached", lambda kernel: False)
    cli._warn_if_cold()
    assert "compiling navkit's kernels" in capsys.readouterr().err
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: True)
    cli._warn_if_cold()
    assert capsys.readouterr().err == ""


def test_is_cached_knows_the_bake_kernels():
    from navkit._jit import is_cached
    from navkit.recast import rasterize

    assert is_cached(rasterize._rasterize_kernel) in (True, False)
    assert is_cached(len) is None  # not a numba kernel: unknown
