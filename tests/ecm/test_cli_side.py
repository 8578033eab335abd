"""A cold ``navkit ecm`` on two cores: a side process compiles the path kernels
(navkit._warmup.EcmSide) while the command builds the map."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from navkit import _jit, _warmup

_SIGNATURES = """
from importlib.resources import files
from navkit import _warmup
from navkit.ecm import ecm_command

made = _warmup.ecm_path_signatures()
for disp, sig in made:
    disp.compile(sig)
before = [set(d.signatures) for d, _ in made]
scene = str(files("navkit.data") / "scene.json")
for start, goal in (((1.0, 1.0), (19.0, 11.0)), (None, None)):
    ecm_command(scene, start, goal, clearance=0.5, out={out!r})
for (disp, sig), sigs in zip(made, before, strict=True):
    assert set(disp.signatures) == sigs and len(sigs) == 1, (disp, sigs, disp.signatures)
print("ok")
"""


def test_ecm_side_compiles_the_signatures_the_cli_uses(tmp_path):
    """The side compiles the path kernels from empty arrays' types; the real command
    (a path, then the picture) must call those very signatures, or it would compile
    them again. In a fresh interpreter: other tests call these kernels with other
    arguments. With NAVKIT_COLD_COMPILE=1 on an empty cache."""
    env = dict(os.environ)
    if os.environ.get("NAVKIT_COLD_COMPILE"):
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    code = _SIGNATURES.format(out=str(tmp_path / "ecm.png"))
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=1800, env=env
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


def test_ecm_side_starts_only_cold_and_on_two_cores(monkeypatch):
    started = []
    monkeypatch.setattr(_warmup, "EcmSide", lambda: started.append(1) or "side")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: True)
    assert _warmup.start_ecm_side() is None  # warm: nothing starts
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: None)
    assert _warmup.start_ecm_side() is None  # cannot tell (caching off)
    monkeypatch.setattr(_jit, "is_cached", lambda kernel: False)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert _warmup.start_ecm_side() is None  # one core: the command compiles alone
    assert not started
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert _warmup.start_ecm_side() == "side" and started == [1]


def test_ecm_side_process_prints_path_and_ends(tmp_path):
    """The side process runs to its tag and ends (on this test run's cache)."""
    side = _warmup.EcmSide()
    side.wait("path")
    assert "path" in side.seen
    side.close()
    assert side.process.returncode == 0


def test_cli_ecm_waits_for_its_side_and_closes_it(monkeypatch, tmp_path, capsys):
    """``navkit ecm`` waits for the side's ``path`` before the first query, and
    closes the side after the picture."""
    from importlib.resources import files

    from navkit import cli

    calls = []

    class Side:
        def wait(self, tag):
            calls.append(("wait", tag))

        def close(self, finish=True):
            calls.append(("close", finish))

    monkeypatch.setattr(cli, "_start_ecm_side", lambda: Side())
    scene = str(files("navkit.data") / "scene.json")
    out = str(tmp_path / "ecm.png")
    assert cli.main(["ecm", scene, "--from", "1,1", "--to", "19,11", "-o", out]) == 0
    assert calls == [("wait", "path"), ("close", True)]


@pytest.mark.skipif(
    not os.environ.get("NAVKIT_COLD_COMPILE"),
    reason="cold compile of the corridor map's kernels (a minute or more): set NAVKIT_COLD_COMPILE=1",
)
def test_cold_cli_ecm_with_its_side_process(tmp_path):
    """A cold ``navkit ecm`` (its side process compiling the path kernels) prints the
    same result as a warm one, announces its compile once, and the warm run after it
    compiles nothing and starts no side process."""
    from importlib.resources import files

    scene = str(files("navkit.data") / "scene.json")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    outs = []
    for run in ("cold", "warm"):
        png = tmp_path / f"{run}.png"
        r = subprocess.run(
            [sys.executable, "-m", "navkit.cli", "ecm", scene, "--from", "1,1", "--to",
             "19,11", "--clearance", "0.5", "-o", str(png)],
            capture_output=True, text=True, timeout=3600, env=env,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.replace(str(png), "OUT"))
        lines = [ln for ln in r.stderr.splitlines() if "compil" in ln.lower()]
        if run == "cold":
            assert any("two cores" in ln for ln in lines), r.stderr  # the side started
            assert len(lines) == len(set(lines)), r.stderr  # each announcement once
        else:
            assert not lines, r.stderr
    assert outs[0] == outs[1] and "path length" in outs[0], outs
