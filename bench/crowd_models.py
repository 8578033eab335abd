"""Velocity-planning models side by side: dtCrowd's sampled presets, TTC, ORCA.

Runs the circle swap (16 agents, radius 8 m) and the four-way crossing (4 groups of
6 through a 24 m plaza) of ``tests/crowd/model_scenarios.py`` for each model
(dtCrowd presets 0..3 of RecastDemo, "ttc", "orca"; radius 0.4 m, 1.5 m/s, 8 m/s^2,
dt 0.05 s, 900 steps) and prints a table and JSON: agents arrived (within 0.5 m),
time of the last arrival and mean arrival [s], worst and mean overlap (fraction of
a radius), fraction of frames with an overlap, mean |acceleration| and |jerk| of
the agents still travelling (from positions) [m/s^2, m/s^3], stuck agents, ms per
update. "ttc-explicit" is the TTC model with the paper's force integrated
explicitly (``TTCParams(implicit=False)``), for comparison. With ``--scale`` it also
times one update for ``--sizes`` agents (default 100, 1000) walking to random targets
on a square plaza of side max(64, 5 sqrt(n)) m, per model (ms, median of 60 steps,
ratio to the sampled preset 1, RecastDemo's default), and the corridor agents of
the Explicit Corridor Map (``ecm-corridor``) on the same square.

There is no peer column: dtCrowd has no TTC or ORCA mode; the sampled rows are
navkit's dtCrowd-identical mode (float32-identical to Detour's, tests/crowd).

Usage::

    python bench/crowd_models.py [--steps 900] [--scale] [--sizes 100,1000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "crowd"))
import model_scenarios as ms  # noqa: E402

import navkit  # noqa: E402

MODES = [("sampled", 0), ("sampled", 1), ("sampled", 2), ("sampled", 3), ("ttc", 1), ("orca", 1)]
EXTRA = [("ttc-explicit", 1)]  # scenario rows only


def name(model: str, preset: int) -> str:
    return f"sampled{preset}" if model == "sampled" else model


def scale(n: int, steps: int) -> dict:
    side = int(max(64, 5 * np.sqrt(n)))
    nm = navkit.bake_grid(np.zeros((side, side), bool), cell_size=1.0)
    rng = np.random.default_rng(7)
    out = {}
    for model, preset in MODES:
        c = navkit.Crowd(nm, n, ms.RADIUS)
        c.use_recastdemo_presets()
        pts = rng.uniform(1, side - 1, (2, n, 2))
        for p, t in zip(pts[0], pts[1], strict=True):
            h = c.add_agent([p[0], 0, p[1]], ms.params(model, preset))
            c.request_move_target(h, [t[0], 0, t[1]])
        c.update(ms.DT)
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            c.update(ms.DT)
            times.append(time.perf_counter() - t0)
        out[name(model, preset)] = float(np.median(times) * 1000)
    # corridor agents on the corridor map of the same square (navkit.ecm)
    from navkit.ecm import CorridorAgents, CorridorMap

    cm = CorridorMap.from_polygons([(0, 0), (side, 0), (side, side), (0, side)])
    ag = CorridorAgents(cm, max_agents=n)
    pts = rng.uniform(1, side - 1, (2, n, 2))
    for p, t in zip(pts[0], pts[1], strict=True):
        ag.add_agent(p, goal=t, radius=ms.RADIUS, max_speed=1.5, max_acceleration=8.0)
    ag.update(ms.DT)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        ag.update(ms.DT)
        times.append(time.perf_counter() - t0)
    out["ecm-corridor"] = float(np.median(times) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=900)
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--sizes", default="100,1000", help="crowd sizes of --scale")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for scenario in ("circle", "crossing"):
        for model, preset in MODES + EXTRA:
            r = ms.run(model, scenario, preset=preset, steps=args.steps).row()
            r["model"] = name(model, preset)
            r["scenario"] = scenario
            rows.append(r)
    cols = [
        ("scenario", "{:<9}"), ("model", "{:<9}"), ("arrived", "{:>4}"),
        ("arrival_time", "{:>7.2f}"), ("mean_arrival_time", "{:>7.2f}"),
        ("worst_overlap", "{:>8.4f}"), ("mean_overlap", "{:>8.4f}"),
        ("overlap_frames", "{:>7.3f}"), ("mean_accel", "{:>7.3f}"), ("mean_jerk", "{:>8.2f}"),
        ("stuck", "{:>3}"), ("ms_per_update", "{:>7.2f}"),
    ]  # fmt: skip
    print(" ".join(c for c, _ in cols))
    for r in rows:
        print(" ".join(f.format(r[c]) for c, f in cols))
    result = {"scenarios": rows}
    if args.scale:
        result["scale_ms_per_update"] = {}
        for n in (int(x) for x in args.sizes.split(",")):
            t = scale(n, 60)
            base = t["sampled1"]
            result["scale_ms_per_update"][n] = t
            print(
                f"{n} agents: "
                + "  ".join(f"{k} {v:.2f} ms ({v / base:.2f}x)" for k, v in t.items())
            )
    print(json.dumps(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
