"""`navkit crowd` as a subprocess on the bundled sample level."""

from __future__ import annotations

import json
import subprocess
import sys

import navkit.data

CLI = [sys.executable, "-m", "navkit.cli", "crowd"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=1800)


def test_crowd_json_gif_html(tmp_path):
    gif, html = tmp_path / "c.gif", tmp_path / "c.html"
    r = run(
        str(navkit.data.path("dungeon.obj")), "--agents", "6", "--seconds", "2", "--seed", "3",
        "--json", "--gif", str(gif), "--html", str(html), "--frames", "4",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["agents"] == 6 and m["steps"] == 120 and m["dt"] == 1 / 60
    assert 0.0 <= m["arrival_fraction"] <= 1.0
    assert 0.0 <= m["mean_overlap"] <= m["worst_overlap"]
    assert 0 <= m["stuck"] <= m["reachable"] <= 6
    assert m["update_ms_median"] > 0
    assert m["frames"] == {"gif": 4, "html": 20}
    assert gif.read_bytes()[:6] == b"GIF89a"
    text = html.read_text()
    assert "<svg" in text and "<canvas" in text and "<polygon" in text
    assert "http" not in text  # self-contained


def test_crowd_navkit_mode():
    r = run(str(navkit.data.path("dungeon.obj")), "--agents", "6", "--seconds", "2",
            "--mode", "navkit", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["mode"] == "navkit" and m["agents"] == 6 and 0.0 <= m["arrival_fraction"] <= 1.0
    assert run(str(navkit.data.path("dungeon.obj")), "--mode", "fast").returncode == 2


def test_crowd_level_of_detail():
    level = str(navkit.data.path("dungeon.obj"))
    r = run(level, "--agents", "6", "--seconds", "2", "--mode", "navkit",
            "--level-of-detail", "4", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["mode"] == "navkit" and m["level_of_detail"] == 4 and m["steps"] == 120
    # dtCrowd mode updates every agent: asking it to stagger is an error, said up front
    r = run(level, "--level-of-detail", "4")
    assert r.returncode == 2 and "--mode navkit" in r.stderr
    r = run(level, "--mode", "navkit", "--level-of-detail", "0")
    assert r.returncode == 2 and "--level-of-detail" in r.stderr


def test_crowd_text_and_bad_input(tmp_path):
    r = run(str(navkit.data.path("dungeon.obj")), "--agents", "0")
    assert r.returncode == 2
    assert "--agents" in r.stderr
    r = run(str(tmp_path / "missing.navmesh"), "--agents", "3")
    assert r.returncode == 2 and "no such file" in r.stderr
