"""Crowd benchmark: navkit's Crowd beside Detour's dtCrowd (the peer), same agents, same run.

For each sample mesh and each crowd size K (100, 500, 1000) the peer bakes the
solo navmesh, runs its crowd section for K agents (RecastDemo CrowdTool's agent
and avoidance settings, starts and targets from Detour's seeded
``findRandomPoint``, ``--steps`` updates of 1/60 s) and writes its trace
(``--crowd-trace``: starts, placed positions, targets and target polygons, and
every agent's position after every step) and its navmesh (``--export-solo``).
navkit loads that navmesh, adds the very same agents with the very same params
and targets, checks that every agent lands on the peer's placed position, and
runs the same number of updates.

The peer seeds its random points with ``seed + 1000003 * K`` for a crowd of K, so
one peer run per K (``--agents K``, which is what makes the trace cover that K)
places the same agents as the peer's ``agents: [100, 500, 1000]`` run.

It prints a table and JSON: ms per ``update(1/60)`` (median over the steps) for
navkit and Detour and their ratio (below 1 = navkit faster), and for both sides
the metrics of :mod:`navkit.crowd.metrics` computed from each side's own
trajectories: arrival fraction (within 1 m after the run), mean and worst
overlap between agents (fraction of a radius), stuck agents (moved < 0.5 m in
some 5 s window without having arrived, target reachable), path length over
straight-line distance (arrived agents). ``detour_reached`` is the peer's own
arrival figure (it must equal ``detour_arrival_fraction``); ``navkit_phase_ms`` is the median
time of each phase of navkit's update. ``--native`` adds the native
peer (../shared/peer-native, same seeds so the same agents): its update time and
its own arrival fraction (it writes no trajectories).

Usage::

    python bench/crowd.py [--agents 100,500,1000] [--steps 600] [--meshes ...] [--native]
                          [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer import MESHES, SHARED, median, mesh_path, print_table, run_peer  # noqa: E402

import navkit  # noqa: E402
from navkit.crowd import AgentParams  # noqa: E402
from navkit.crowd.metrics import crowd_metrics  # noqa: E402

NATIVE = SHARED / "peer-native" / "bin" / "recast_native"


def agent_params(ap: dict) -> AgentParams:
    return AgentParams(
        radius=ap["radius"], height=ap["height"], max_speed=ap["maxSpeed"],
        max_acceleration=ap["maxAcceleration"], collision_query_range=ap["collisionQueryRange"],
        path_optimization_range=ap["pathOptimizationRange"],
        separation_weight=ap["separationWeight"], update_flags=ap["updateFlags"],
        avoidance_type=ap["obstacleAvoidanceType"],
    )  # fmt: skip


def reachable(nm, crowd, slots, tr) -> np.ndarray:
    """Whether each agent's target polygon is reachable from its start polygon."""
    q = navkit.NavMeshQuery(nm, max_nodes=65535)
    out = np.zeros(len(slots), bool)
    for i, (s, ref, tgt) in enumerate(zip(slots, tr["target_refs"], tr["targets"])):
        start = int(crowd.agents.c_path[s, 0])
        res = q.find_path(start, int(ref), crowd.positions[s], tgt, max_path=65535)
        out[i] = res.polys.shape[0] > 0 and int(res.polys[-1]) == int(ref)
    return out


def run_navkit(nm, tr: dict) -> tuple[list[float], np.ndarray, np.ndarray, int, dict]:
    """(ms per update, (T + 1, K, 3) trajectory, reachable, agents placed as the peer,
    median ms of each update phase)."""
    crowd = navkit.Crowd(nm, tr["agents"], tr["max_agent_radius"])
    crowd.use_recastdemo_presets()
    ap = agent_params(tr["agent_params"])
    slots = []
    for start, tgt, ref in zip(tr["starts"], tr["targets"], tr["target_refs"]):
        h = crowd.add_agent(start, ap)
        crowd.request_move_target(h, ref, tgt)
        slots.append(crowd.slot(h))
    sl = np.array(slots)
    placed_same = int(
        np.all(crowd.positions[sl] == np.asarray(tr["placed"], np.float32), axis=1).sum()
    )
    ok = reachable(nm, crowd, sl, tr)
    steps = len(tr["steps"])
    traj = np.empty((steps + 1, len(sl), 3), np.float32)
    traj[0] = crowd.positions[sl]
    ms = []
    phases: dict[str, list[float]] = {p: [] for p in crowd.PHASES}
    for k in range(steps):
        t0 = time.perf_counter()
        crowd.update(tr["dt"])
        ms.append((time.perf_counter() - t0) * 1e3)
        traj[k + 1] = crowd.positions[sl]
        for p, t in crowd.timings.items():
            phases[p].append(t * 1e3)
    phase_ms = {p: median(v) for p, v in phases.items()} if steps else {}
    return ms, traj, ok, placed_same, phase_ms


def warm_up(nm, tr: dict) -> None:
    """Compile or load the kernels (a few agents, a few steps)."""
    small = dict(tr, agents=min(20, tr["agents"]), steps=tr["steps"][:30])
    for k in ("starts", "targets", "target_refs", "placed"):
        small[k] = tr[k][: small["agents"]]
    run_navkit(nm, small)


def run_native(name: str, k: int, steps: int) -> dict | None:
    if not NATIVE.exists():
        return None
    r = subprocess.run(
        [str(NATIVE), str(mesh_path(name)), "{}", "--sections", "solo,crowd", "--runs", "1",
         "--agents", str(k), "--steps", str(steps), "--quiet"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(r.stdout)["crowd"][0]


def bench(name: str, k: int, steps: int, native: bool, warm: list) -> dict:
    with tempfile.TemporaryDirectory() as d:
        tr_file, nav_file = Path(d) / "trace.json", Path(d) / "solo.bin"
        peer = run_peer(
            name, {}, "--sections", "solo,crowd", "--agents", str(k), "--steps", str(steps),
            "--runs", "1", "--crowd-trace", str(tr_file), "--export-solo", str(nav_file),
            "--quiet",
        )["crowd"][0]  # fmt: skip
        tr = json.loads(tr_file.read_text())
        nm = navkit.NavMesh.from_recast(nav_file)
    if not warm:
        warm_up(nm, tr)
        warm.append(True)
    ms, traj, ok, placed_same, phase_ms = run_navkit(nm, tr)
    ap = tr["agent_params"]
    targets = np.asarray(tr["targets"], np.float64)
    dt = float(tr["dt"])
    ours = crowd_metrics(traj, targets, ap["radius"], ap["height"], dt, reachable=ok)
    ptraj = np.concatenate(
        [np.asarray(tr["placed"], np.float32)[None], np.asarray(tr["steps"], np.float32)[:, :, :3]]
    )
    theirs = crowd_metrics(ptraj, targets, ap["radius"], ap["height"], dt, reachable=ok)
    same_final = int(np.all(traj[-1] == ptraj[-1], axis=1).sum())
    row = {
        "mesh": name, "agents": k, "steps": len(ms), "placed_as_peer": placed_same,
        "navkit_ms": median(ms), "detour_ms": float(peer["update_ms"]["median"]),
        "detour_reached": peer["reached_fraction"], "same_final_positions": same_final,
    }  # fmt: skip
    row["ratio"] = row["navkit_ms"] / row["detour_ms"]
    for side, m in (("navkit", ours), ("detour", theirs)):
        for key, val in m.as_dict().items():
            if key not in ("agents", "steps", "dt"):
                row[f"{side}_{key}"] = val
    row["navkit_phase_ms"] = phase_ms
    if native:
        nat = run_native(name, k, steps)
        if nat is not None:
            row["native_ms"] = float(nat["update_ms"]["median"])
            row["native_reached"] = nat["reached_fraction"]
            row["ratio_native"] = row["navkit_ms"] / row["native_ms"]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", default="100,500,1000")
    ap.add_argument("--steps", type=int, default=600, help="updates of 1/60 s (peer default)")
    ap.add_argument("--meshes", default=",".join(MESHES))
    ap.add_argument("--native", action="store_true", help="also time ../shared/peer-native")
    ap.add_argument("--json", help="also write the JSON here")
    args = ap.parse_args()

    rows: list[dict] = []
    warm: list = []
    for name in args.meshes.split(","):
        for k in (int(v) for v in args.agents.split(",")):
            rows.append(bench(name, k, args.steps, args.native, warm))
            print(f"{name} K={k} done", file=sys.stderr, flush=True)
    cols = [
        ("mesh", "mesh", "s"), ("agents", "K", "d"), ("navkit_ms", "navkit ms", ".2f"),
        ("detour_ms", "detour ms", ".2f"), ("ratio", "ratio", ".2f"),
    ]  # fmt: skip
    if args.native:
        cols += [("native_ms", "native ms", ".2f"), ("ratio_native", "ratio nat", ".2f")]
    cols += [
        ("navkit_arrival_fraction", "arrive nk", ".3f"),
        ("detour_arrival_fraction", "arrive dt", ".3f"),
        ("navkit_mean_overlap", "ovl mean nk", ".3f"), ("detour_mean_overlap", "ovl mean dt", ".3f"),
        ("navkit_worst_overlap", "ovl max nk", ".3f"), ("detour_worst_overlap", "ovl max dt", ".3f"),
        ("navkit_stuck", "stuck nk", "d"), ("detour_stuck", "stuck dt", "d"),
        ("navkit_path_ratio_mean", "path/line nk", ".3f"),
        ("detour_path_ratio_mean", "path/line dt", ".3f"),
        ("placed_as_peer", "placed=", "d"), ("same_final_positions", "final=", "d"),
    ]  # fmt: skip
    print_table(rows, cols)
    text = json.dumps({"bench": "crowd", "steps": args.steps, "rows": rows}, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
