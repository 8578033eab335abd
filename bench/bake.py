"""Bake benchmark: navkit beside Recast (the peer), same meshes, same run.

For each sample mesh, solo and tiled (tile size 48), this times navkit's
``bake`` (warm JIT cache, median of ``--runs``) and runs the Recast peer with
the same settings in the same run, then prints a table and JSON: navkit
median, Recast median, ratio (navkit / Recast; below 1 = navkit faster) and the
polygon / vertex / detail-triangle counts of both. It also reports the first-run
compile time (empty numba cache, in a subprocess) and the warm wall time of
``navkit bake`` on dungeon from the command line.

Usage::

    python bench/bake.py [--runs 7] [--meshes dungeon,nav_test,undulating] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer import MESHES, median, mesh_path, print_table, run_peer  # noqa: E402

import navkit  # noqa: E402
from navkit.pipeline import bake  # noqa: E402


def time_bake(mesh, config, runs: int, executor=None) -> tuple[float, object]:
    bake(mesh, config, executor=executor)  # warm-up (compiles on the very first use)
    ts, nm = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        nm = bake(mesh, config, executor=executor)
        ts.append((time.perf_counter() - t0) * 1e3)
    return median(ts), nm


def first_run_compile_s() -> float:
    with tempfile.TemporaryDirectory() as cache:
        code = (
            "import time,navkit;t=time.perf_counter();"
            "from navkit.pipeline import bake;"
            f"bake(navkit.load_obj({str(mesh_path('dungeon'))!r}));"
            "print(time.perf_counter()-t)"
        )
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        r = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return float(r.stdout.strip().splitlines()[-1])


def warm_cli_s(runs: int = 3) -> float:
    exe = Path(sys.executable).with_name("navkit")
    with tempfile.TemporaryDirectory() as d:
        cmd = [str(exe), "bake", str(mesh_path("dungeon")), "-o", str(Path(d) / "d.navmesh")]
        subprocess.run(cmd, check=True, capture_output=True)
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            ts.append(time.perf_counter() - t0)
    return median(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--meshes", default=",".join(MESHES))
    ap.add_argument("--json", help="also write the JSON here")
    ap.add_argument("--skip-compile", action="store_true", help="skip the first-run compile timing")
    args = ap.parse_args()

    rows = []
    for name in args.meshes.split(","):
        mesh = navkit.load_obj(mesh_path(name))
        peer = run_peer(name, {"runs": args.runs, "tileSize": 48}, "--sections", "solo,tiled")
        pool = ThreadPoolExecutor(max_workers=2)
        modes = (
            ("solo", "solo", navkit.BakeConfig(), None),
            ("tiled", "tiled", navkit.BakeConfig(tile_size=48), None),
            # not the headline figure (Recast's is single-threaded): tiles on 2 threads
            ("tiled 2 threads", "tiled", navkit.BakeConfig(tile_size=48), pool),
        )
        for mode, peer_mode, cfg, ex in modes:
            ours_ms, nm = time_bake(mesh, cfg, args.runs, ex)
            st = nm.stats()
            theirs = peer[peer_mode]
            rows.append(
                {
                    "mesh": name,
                    "mode": mode,
                    "navkit_ms": ours_ms,
                    "recast_ms": theirs["time_ms"]["median"],
                    "ratio": ours_ms / theirs["time_ms"]["median"],
                    "tiles": st["tiles"],
                    "recast_tiles": theirs["tiles"],
                    "polys": st["polys"],
                    "recast_polys": theirs["polygons"],
                    "verts": st["verts"],
                    "recast_verts": theirs["vertices"],
                    "detail_tris": st["detail_tris"],
                    "recast_detail_tris": theirs["detail_triangles"],
                }
            )
    print_table(
        rows,
        [
            ("mesh", "mesh", "s"),
            ("mode", "mode", "s"),
            ("navkit_ms", "navkit ms", ".2f"),
            ("recast_ms", "recast ms", ".2f"),
            ("ratio", "ratio", ".2f"),
            ("tiles", "tiles", "d"),
            ("polys", "polys", "d"),
            ("recast_polys", "(recast)", "d"),
            ("verts", "verts", "d"),
            ("recast_verts", "(recast)", "d"),
            ("detail_tris", "dtris", "d"),
            ("recast_detail_tris", "(recast)", "d"),
        ],
    )
    out = {"bench": "bake", "runs": args.runs, "rows": rows}
    if not args.skip_compile:
        out["first_run_compile_s"] = first_run_compile_s()
        out["warm_cli_bake_dungeon_s"] = warm_cli_s()
        print(f"first run (empty numba cache) bake of dungeon: {out['first_run_compile_s']:.1f} s")
        print(f"warm `navkit bake dungeon.obj`: {out['warm_cli_bake_dungeon_s']:.2f} s")
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
