"""Bake benchmark: navkit beside Recast native (g++ -O2) and Recast WASM, same meshes, same run.

For each sample mesh, solo and tiled (tile size 48), this times navkit's ``bake``
(warm JIT cache) and runs both Recast peers with the same settings in the same
run: ``../shared/peer-native`` (native, the anchor of issue 14) and
``../shared/peer`` (WebAssembly through its JS binding). It prints

* the bake table: navkit, native and WASM medians (wall ms) and navkit / native,
  navkit / WASM (below 1 = navkit faster), on one thread
  (``numba.set_num_threads(1)``, no executor) and on two (numba 2 threads; tiled:
  a 2-worker ``ThreadPoolExecutor``; the peers are single-threaded, so their
  one-thread figure is the reference for both);
* beside the median ratio to native, the ratio of the minima (the fastest navkit
  bake over the fastest native bake of the invocation: the least disturbed figure on
  a loaded machine), the median of the rounds' own median ratios (``paired``: each
  round times navkit and the native peer within seconds of each other) and their
  range (``rounds``: how far one round's figure can be trusted; use ``--rounds 5``
  or more when the range is wide);
* the same on CPU time (navkit: thread / process CPU time of the bake; native:
  the peer's process CPU time over N bakes minus over 1, divided by N - 1). On a
  shared machine the wall clock counts the time a process waits for a core; CPU
  time does not, so its ratio is the stabler one;
* per-stage wall medians and minima (solo: navkit's ``build_report.timings`` beside
  both peers' rcContext timers; tiled: navkit's, summed over tiles). The last row per mode is
  the bake's median minus the sum of the stage medians: the Python between the
  stages, and, on a loaded machine, most of the time spent waiting for a core (a
  short stage's median is rarely preempted, the whole bake always is);
* the counts of both (polys / verts / detail tris), which must be equal;

then JSON. ``--rounds R`` repeats the whole sequence; all samples of a figure are
pooled over the rounds and their median taken, so every ratio compares figures
measured in this invocation. It also reports the first-run compile time (empty
numba cache, in a subprocess) and the warm wall time of ``navkit bake`` on dungeon
from the command line.

Usage::

    python bench/bake.py [--runs 7] [--rounds 2] [--meshes dungeon,nav_test,undulating]
                         [--json out.json] [--skip-compile] [--no-cpu]
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

import numba

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer import (  # noqa: E402
    MESHES,
    median,
    mesh_path,
    native_binary,
    native_cpu_ms,
    print_table,
    run_native,
    run_peer,
)

import navkit  # noqa: E402
from navkit.pipeline import bake  # noqa: E402

#: navkit stage name -> the peers' rcContext timer name
STAGES = {
    "rasterize_triangles": "rasterize_triangles",
    "filter_low_hanging_obstacles": "filter_low_obstacles",
    "filter_ledge_spans": "filter_border",
    "filter_walkable_low_height_spans": "filter_walkable",
    "build_compact_heightfield": "build_compactheightfield",
    "erode_walkable_area": "erode_area",
    "build_distance_field": "build_distancefield",
    "build_regions": "build_regions",
    "build_contours": "build_contours",
    "build_poly_mesh": "build_polymesh",
    "build_poly_mesh_detail": "build_polymeshdetail",
    "create_navmesh_data": None,
}


def time_bake(mesh, config, runs: int, executor=None, threads: int = 1) -> dict:
    """Wall and CPU times (ms) of ``runs`` bakes, their stage timings and the last navmesh."""
    numba.set_num_threads(threads)
    cpu_clock = time.thread_time if executor is None and threads == 1 else time.process_time
    bake(mesh, config, executor=executor)  # warm-up (compiles on the very first use)
    wall, cpu, stages, nm = [], [], {}, None
    for _ in range(runs):
        c0 = cpu_clock()
        t0 = time.perf_counter()
        nm = bake(mesh, config, executor=executor)
        wall.append((time.perf_counter() - t0) * 1e3)
        cpu.append((cpu_clock() - c0) * 1e3)
        for k, v in nm.build_report.timings.items():
            stages.setdefault(k, []).append(v)
    return {"wall": wall, "cpu": cpu, "stages": stages, "navmesh": nm}


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


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b <= 0 else a / b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="bakes per round and figure")
    ap.add_argument("--rounds", type=int, default=2, help="repetitions of the whole sequence")
    ap.add_argument("--meshes", default=",".join(MESHES))
    ap.add_argument("--json", help="also write the JSON here")
    ap.add_argument("--skip-compile", action="store_true", help="skip the first-run compile timing")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU-time figures")
    ap.add_argument("--no-wasm", action="store_true", help="skip the WASM peer")
    args = ap.parse_args()
    have_native = native_binary() is not None
    if not have_native:
        print(f"note: no native peer at {native_binary()}; native columns stay empty")

    modes = (
        # (mode, peer section, tile size, threads, executor workers)
        ("solo", "solo", 0, 1, 0),
        ("tiled", "tiled", 48, 1, 0),
        ("solo 2 threads", "solo", 0, 2, 0),
        ("tiled 2 threads", "tiled", 48, 2, 2),
    )
    rows, stage_rows, out_meshes = [], [], {}
    for name in args.meshes.split(","):
        mesh = navkit.load_obj(mesh_path(name))
        peer_cfg = {"runs": args.runs, "tileSize": 48}
        samples: dict[str, list[float]] = {}
        stage_samples: dict[str, list[float]] = {}
        peers: dict[str, dict] = {}
        nm_by_mode = {}

        round_meds: dict[str, list[float]] = {}  # per round: the median of its samples

        def add(
            key: str,
            xs: list[float],
            into: dict[str, list[float]] = samples,
            rm: dict[str, list[float]] | None = round_meds,
        ) -> None:
            into.setdefault(key, []).extend(xs)
            if rm is not None and xs:
                rm.setdefault(key, []).append(median(xs))

        for _ in range(args.rounds):
            if not args.no_wasm:
                peers["wasm"] = run_peer(name, peer_cfg, "--sections", "solo,tiled")
            if have_native:
                peers["native"] = run_native(name, peer_cfg, "--sections", "solo,tiled")
            for impl, d in peers.items():
                for sec in ("solo", "tiled"):
                    add(f"{impl}/{sec}", d[sec]["times_ms"])
                for k, v in (d["solo"].get("stage_ms_median") or {}).items():
                    add(f"{impl}/{k}", [v], stage_samples, None)
            if have_native and not args.no_cpu:
                for sec in ("solo", "tiled"):
                    add(f"native_cpu/{sec}", [native_cpu_ms(name, peer_cfg, sec, args.runs + 1)])
            for mode, _sec, ts, threads, workers in modes:
                pool = ThreadPoolExecutor(workers) if workers else None
                try:
                    r = time_bake(mesh, navkit.BakeConfig(tile_size=ts), args.runs, pool, threads)
                finally:
                    if pool is not None:
                        pool.shutdown()
                add(f"navkit/{mode}", r["wall"])
                add(f"navkit_cpu/{mode}", r["cpu"])
                for k, v in r["stages"].items():
                    add(f"navkit/{mode}/{k}", v, stage_samples, None)
                nm_by_mode[mode] = r["navmesh"]
        numba.set_num_threads(1)

        def med(key: str, d: dict[str, list[float]] = samples) -> float | None:
            return median(d[key]) if d.get(key) else None

        for mode, sec, _ts, threads, _w in modes:
            st = nm_by_mode[mode].stats()
            ours, nat, wasm = med(f"navkit/{mode}"), med(f"native/{sec}"), med(f"wasm/{sec}")
            ours_cpu, nat_cpu = med(f"navkit_cpu/{mode}"), med(f"native_cpu/{sec}")
            ours_min = min(samples[f"navkit/{mode}"])
            nat_min = min(samples[f"native/{sec}"]) if samples.get(f"native/{sec}") else None
            per_round = [
                a / b
                for a, b in zip(
                    round_meds.get(f"navkit/{mode}", []), round_meds.get(f"native/{sec}", [])
                )
                if b > 0
            ]
            nd = peers.get("native", {}).get(sec, {})
            wd = peers.get("wasm", {}).get(sec, {})
            rows.append(
                {
                    "mesh": name,
                    "mode": mode,
                    "threads": threads,
                    "navkit_ms": ours,
                    "native_ms": nat,
                    "wasm_ms": wasm,
                    "ratio_native": _ratio(ours, nat),
                    "ratio_wasm": _ratio(ours, wasm),
                    "navkit_min_ms": ours_min,
                    "native_min_ms": nat_min,
                    "ratio_native_min": _ratio(ours_min, nat_min),
                    # the median of the rounds' ratios: each round times navkit and the
                    # native peer within seconds of each other (a slow phase of the machine
                    # moves both)
                    "ratio_native_paired": median(per_round) if per_round else None,
                    "ratio_native_rounds": (
                        f"{min(per_round):.2f}-{max(per_round):.2f}" if per_round else None
                    ),
                    "navkit_cpu_ms": ours_cpu,
                    "native_cpu_ms": nat_cpu,
                    "cpu_ratio_native": _ratio(ours_cpu, nat_cpu),
                    "tiles": st["tiles"],
                    "polys": st["polys"],
                    "native_polys": nd.get("polygons"),
                    "wasm_polys": wd.get("polygons"),
                    "verts": st["verts"],
                    "native_verts": nd.get("vertices"),
                    "detail_tris": st["detail_tris"],
                    "native_detail_tris": nd.get("detail_triangles"),
                }
            )
        # per stage: solo beside the peers' rcContext timers; tiled navkit alone
        mesh_stages = {}
        for mode in ("solo", "tiled"):
            total = med(f"navkit/{mode}")
            ssum = 0.0
            for k, peer_k in STAGES.items():
                ours = med(f"navkit/{mode}/{k}", stage_samples)
                if ours is None:
                    continue
                ssum += ours
                nat = med(f"native/{peer_k}", stage_samples) if mode == "solo" and peer_k else None
                wasm = med(f"wasm/{peer_k}", stage_samples) if mode == "solo" and peer_k else None
                # minima: a short stage is rarely preempted in its fastest run (native:
                # the least of the rounds' rcContext medians)
                o_min = min(stage_samples[f"navkit/{mode}/{k}"])
                n_min = (
                    min(stage_samples[f"native/{peer_k}"])
                    if nat is not None and stage_samples.get(f"native/{peer_k}")
                    else None
                )
                stage_rows.append(
                    {"mesh": name, "mode": mode, "stage": k, "navkit_ms": ours,
                     "native_ms": nat, "wasm_ms": wasm, "ratio_native": _ratio(ours, nat),
                     "navkit_min_ms": o_min, "native_min_ms": n_min,
                     "ratio_native_min": _ratio(o_min, n_min)}
                )  # fmt: skip
                mesh_stages[f"{mode}/{k}"] = ours
            stage_rows.append(
                {"mesh": name, "mode": mode, "stage": "(bake - stages: waits, Python)",
                 "navkit_ms": None if total is None else total - ssum}
            )  # fmt: skip
        out_meshes[name] = {
            "native_stage_ms_median": {
                k[len("native/") :]: median(v)
                for k, v in stage_samples.items()
                if k.startswith("native/")
            },
            "navkit_stage_ms_median": mesh_stages,
        }
    print_table(
        rows,
        [
            ("mesh", "mesh", "s"),
            ("mode", "mode", "s"),
            ("navkit_ms", "navkit ms", ".2f"),
            ("native_ms", "native ms", ".2f"),
            ("wasm_ms", "wasm ms", ".2f"),
            ("ratio_native", "/native", ".2f"),
            ("ratio_wasm", "/wasm", ".2f"),
            ("ratio_native_min", "min/min", ".2f"),
            ("ratio_native_paired", "paired", ".2f"),
            ("ratio_native_rounds", "rounds", "s"),
            ("navkit_cpu_ms", "navkit cpu", ".2f"),
            ("native_cpu_ms", "native cpu", ".2f"),
            ("cpu_ratio_native", "cpu /native", ".2f"),
            ("tiles", "tiles", "d"),
            ("polys", "polys", "d"),
            ("native_polys", "(native)", "d"),
            ("verts", "verts", "d"),
            ("native_verts", "(native)", "d"),
            ("detail_tris", "dtris", "d"),
            ("native_detail_tris", "(native)", "d"),
        ],
    )
    print()
    print_table(
        stage_rows,
        [
            ("mesh", "mesh", "s"),
            ("mode", "mode", "s"),
            ("stage", "stage", "s"),
            ("navkit_ms", "navkit ms", ".3f"),
            ("native_ms", "native ms", ".3f"),
            ("wasm_ms", "wasm ms", ".3f"),
            ("ratio_native", "/native", ".2f"),
            ("navkit_min_ms", "navkit min", ".3f"),
            ("native_min_ms", "native min", ".3f"),
            ("ratio_native_min", "min/min", ".2f"),
        ],
    )
    out = {
        "bench": "bake",
        "runs": args.runs,
        "rounds": args.rounds,
        "rows": rows,
        "stages": stage_rows,
        "meshes": out_meshes,
    }
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
