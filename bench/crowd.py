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
its own arrival fraction (it writes no trajectories). navkit's timed crowd is
``Crowd(parallel=True)`` (its one-kernel step with the per-agent phases on all cores:
the same float32 trajectories; every 64 updates it times that step against the
one-thread step and runs the faster, so on a busy machine it may run on one
thread), then the one-thread crowd in the same run (``1-thread
ms``, ``ratio 1t``; ``final= 1t`` its final positions equal to the peer's); ``cpu ms`` is
the parallel crowd's CPU time per update, all threads. ``--serial`` times only the
one-thread crowd.

``--big`` instead runs the 10,000-agent row: navkit's Moving AI arena map
(``navkit.data``, 49 x 49 cells) scaled to 6 m cells (a 294 m square, about
52,000 m2 of floor) is written as an OBJ and baked by the peer (solo, Recast's
default config), whose crowd section places 10,000 agents and targets with
RecastDemo's settings (radius 0.6, collision query range 12 r, path optimisation range 30 r,
avoidance preset 1). navkit runs the same agents on that navmesh serially (as
Detour: same float32 results) and with ``parallel=True`` (prange over agents on
all cores), with those settings and with reduced ones: RecastDemo's "low"
avoidance preset 0 (5 directions x 2 rings, depth 1: 11 samples per agent
instead of 5 x 2 x depth 2 = 22), collision query range 4 r (neighbours and walls
within 2.4 m instead of 7.2 m) and path optimisation range 10 r. ``--big-steps``
updates of 1/60 s each (the peer times the same count). ``OMP_WAIT_POLICY`` is
set to PASSIVE unless given.

Memory per agent (``bytes/agent``) is the struct-of-arrays storage of one agent
slot: :class:`~navkit.crowd.agents.AgentArrays` (corridor of 256 polygons
included), the local boundary, and the proximity grid's share, from the arrays'
own ``nbytes`` (see :func:`bytes_per_agent`).

Usage::

    python bench/crowd.py [--agents 100,500,1000] [--steps 600] [--meshes ...] [--native]
                          [--serial] [--phases] [--json out.json]
    python bench/crowd.py --big [--big-steps 120] [--native] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# --passive (read before numba starts OpenMP): waiting OpenMP threads sleep instead of
# spinning. On a shared, loaded machine a spinning barrier waits out other processes'
# time slices; on a quiet one sleeping costs a wake-up per parallel region (at 100 agents
# 0.62-1.31 ms per update against 0.41-0.47 ms spinning, 2026-12-02). Default: OpenMP's
# own policy, which is what a user gets.
if "--passive" in sys.argv:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer import MESHES, SHARED, median, mesh_path, peer_dir, print_table, run_peer  # noqa: E402, I001

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


def bytes_per_agent(crowd) -> dict:
    """Bytes of struct-of-arrays storage per agent slot, by part (from ``nbytes``)."""
    n = crowd.max_agents

    def arrays(obj) -> int:
        return sum(v.nbytes for v in vars(obj).values() if isinstance(v, np.ndarray))

    corridor = crowd.agents.c_path.nbytes
    agents = arrays(crowd.agents) - corridor
    grid = crowd.grid.buckets.nbytes + crowd.grid.items.nbytes + crowd.grid.lo.nbytes
    parts = {
        "agent_state": agents / n, "corridor": corridor / n,
        "boundary": arrays(crowd.boundary) / n, "proximity_grid": grid / n,
    }  # fmt: skip
    parts["total"] = sum(parts.values())
    return parts


def run_navkit(
    nm, tr: dict, *, parallel: bool = False, steps: int | None = None, lod: int = 0,
    **override,
) -> tuple[list[float], np.ndarray, np.ndarray, int, dict]:
    """(ms per update, (T + 1, K, 3) trajectory, reachable, agents placed as the peer,
    median ms of each update phase). ``override``: AgentParams fields to change;
    ``steps`` the number of updates (default: the trace's). ``lod`` > 0: navkit mode
    with that level of detail, after 10 untimed updates with an unlimited path budget
    (every agent gets its path, as in dtCrowd's first update; the timed updates then
    run navkit's default budget)."""
    kw = {"mode": "navkit", "level_of_detail": lod} if lod else {}
    crowd = navkit.Crowd(nm, tr["agents"], tr["max_agent_radius"], parallel=parallel, **kw)
    crowd.use_recastdemo_presets()
    ap = agent_params(tr["agent_params"])
    if override:
        ap = dataclasses.replace(ap, **override)
    slots = []
    for start, tgt, ref in zip(tr["starts"], tr["targets"], tr["target_refs"]):
        h = crowd.add_agent(start, ap)
        crowd.request_move_target(h, ref, tgt)
        slots.append(crowd.slot(h))
    sl = np.array(slots)
    placed_same = int(
        np.all(crowd.positions[sl] == np.asarray(tr["placed"], np.float32), axis=1).sum()
    )
    ok = reachable(nm, crowd, sl, tr) if steps is None else np.ones(len(sl), bool)
    steps = len(tr["steps"]) if steps is None else steps
    rp = crowd.replanner
    if lod and rp is not None:
        budget = (rp.budget, rp.reserve)
        rp.budget, rp.reserve = 1 << 30, 1 << 28
        for _ in range(10):
            crowd.update(tr["dt"])
        rp.budget, rp.reserve = budget
    traj = np.empty((steps + 1, len(sl), 3), np.float32)
    traj[0] = crowd.positions[sl]
    ms, cpu = [], []
    phases: dict[str, list[float]] = {p: [] for p in crowd.PHASES}
    for k in range(steps):
        # (process_time is a system call, ~1 us: outside the wall-time window)
        c0 = time.process_time()
        t0 = time.perf_counter()
        crowd.update(tr["dt"])
        t1 = time.perf_counter()
        cpu.append((time.process_time() - c0) * 1e3)
        ms.append((t1 - t0) * 1e3)
        traj[k + 1] = crowd.positions[sl]
        for p, t in crowd.timings.items():
            phases[p].append(t * 1e3)
    phase_ms = {p: median(v) for p, v in phases.items()} if steps else {}
    phase_ms["bytes_per_agent"] = bytes_per_agent(crowd)["total"]
    phase_ms["cpu_ms"] = median(cpu) if steps else 0.0  # all threads' CPU time per update
    return ms, traj, ok, placed_same, phase_ms


def warm_up(nm, tr: dict) -> None:
    """Compile or load the kernels (a few agents, a few steps)."""
    small = dict(tr, agents=min(20, tr["agents"]), steps=tr["steps"][:30])
    for k in ("starts", "targets", "target_refs", "placed"):
        small[k] = tr[k][: small["agents"]]
    run_navkit(nm, small)
    run_navkit(nm, small, parallel=True)


def run_native(name: str, k: int, steps: int) -> dict | None:
    if not NATIVE.exists():
        return None
    r = subprocess.run(
        [str(NATIVE), str(mesh_path(name)), "{}", "--sections", "solo,crowd", "--runs", "1",
         "--agents", str(k), "--steps", str(steps), "--quiet"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(r.stdout)["crowd"][0]


def bench(name: str, k: int, steps: int, native: bool, warm: list, serial: bool) -> dict:
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
    ms, traj, ok, placed_same, phase_ms = run_navkit(nm, tr, parallel=not serial)
    if not serial:  # the one-thread crowd in the same run, for comparison
        ms1, traj1, _, _, _ = run_navkit(nm, tr)
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
    row["navkit_cpu_ms"] = phase_ms.pop("cpu_ms")
    if not serial:
        row["navkit_serial_ms"] = median(ms1)
        row["ratio_serial"] = row["navkit_serial_ms"] / row["detour_ms"]
        row["serial_same_final_positions"] = int(np.all(traj1[-1] == ptraj[-1], axis=1).sum())
    for side, m in (("navkit", ours), ("detour", theirs)):
        for key, val in m.as_dict().items():
            if key not in ("agents", "steps", "dt"):
                row[f"{side}_{key}"] = val
    row["bytes_per_agent"] = phase_ms.pop("bytes_per_agent")
    row["navkit_phase_ms"] = phase_ms
    if native:
        nat = run_native(name, k, steps)
        if nat is not None:
            row["native_ms"] = float(nat["update_ms"]["median"])
            row["native_reached"] = nat["reached_fraction"]
            row["ratio_native"] = row["navkit_ms"] / row["native_ms"]
            if not serial:
                row["ratio_native_serial"] = row["navkit_serial_ms"] / row["native_ms"]
    return row


BIG_AGENTS = 10_000
BIG_CELL = 6.0  # [wu] per arena.map cell


def big_mesh(d: Path) -> Path:
    """arena.map as a flat OBJ of 6 m cells (free cells only)."""
    from navkit.data import load_grid
    from navkit.geometry import save_obj
    from navkit.geometry.grid import grid_mesh

    out = d / "arena_big.obj"
    save_obj(grid_mesh(load_grid("arena"), BIG_CELL), out)
    return out


def peer_big(obj: Path, k: int, steps: int, args: list[str]) -> dict:
    r = subprocess.run(
        ["node", "recast_peer.mjs", str(obj), "{}", "--sections", "solo,crowd", "--runs", "1",
         "--agents", str(k), "--steps", str(steps), "--quiet", *args],
        cwd=peer_dir(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(r.stdout)["crowd"][0]


def bench_big(steps: int, native: bool) -> list[dict]:
    """The 10,000-agent rows (see the module docstring)."""
    k = BIG_AGENTS
    with tempfile.TemporaryDirectory() as d:
        obj = big_mesh(Path(d))
        tr_file, nav_file = Path(d) / "trace.json", Path(d) / "solo.bin"
        # a short traced run gives the agents, targets and navmesh; a second one the timing
        peer_big(obj, k, 2, ["--crowd-trace", str(tr_file), "--export-solo", str(nav_file)])
        peer = peer_big(obj, k, steps, [])
        tr = json.loads(tr_file.read_text())
        nm = navkit.NavMesh.from_recast(nav_file)
        nat = None
        if native and NATIVE.exists():
            r = subprocess.run(
                [str(NATIVE), str(obj), "{}", "--sections", "solo,crowd", "--runs", "1",
                 "--agents", str(k), "--steps", str(steps), "--quiet"],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            nat = json.loads(r.stdout)["crowd"][0]
    warm_up(nm, tr)
    rows = []
    preset = tr["agent_params"]["obstacleAvoidanceType"]
    r = float(tr["agent_params"]["radius"])
    own = {"avoidance_type": 0, "collision_query_range": 4 * r, "path_optimization_range": 10 * r}
    runs: list[tuple[bool, dict, int]] = [
        (False, {}, 0), (True, {}, 0), (False, own, 0), (True, own, 0),
        (False, {}, 1), (False, {}, 4), (True, {}, 4), (False, {}, 8), (True, {}, 8),
    ]  # fmt: skip
    for parallel, override, lod in runs:
        ms, traj, _, placed, phase_ms = run_navkit(
            nm, tr, parallel=parallel, steps=steps, lod=lod, **override
        )
        targets = np.asarray(tr["targets"], np.float32)
        moved = np.linalg.norm(traj[-1] - traj[0], axis=1)
        left = np.linalg.norm((traj[-1] - targets)[:, [0, 2]], axis=1)
        ap_ = tr["agent_params"]
        ovl = _overlap(traj[-1], ap_["radius"], ap_["height"])
        row = {
            "mode": "parallel" if parallel else "serial",
            "settings": (f"navkit lod {lod}" if lod else "reduced" if override else "dtCrowd"),
            "avoidance": f"preset {override.get('avoidance_type', preset)}",
            "agents": k, "steps": steps, "placed_as_peer": placed,
            "navkit_ms": median(ms), "navkit_p90_ms": float(np.percentile(ms, 90)),
            "detour_ms": float(peer["update_ms"]["median"]),
            "mean_moved": float(moved.mean()), "mean_left": float(left.mean()),
            "final_mean_overlap": ovl[0], "final_worst_overlap": ovl[1],
            "bytes_per_agent": phase_ms.pop("bytes_per_agent"), "navkit_phase_ms": phase_ms,
            "navkit_cpu_ms": phase_ms.pop("cpu_ms"),
        }  # fmt: skip
        row["ratio"] = row["navkit_ms"] / row["detour_ms"]
        if nat is not None:
            row["native_ms"] = float(nat["update_ms"]["median"])
            row["ratio_native"] = row["navkit_ms"] / row["native_ms"]
        rows.append(row)
        print(f"big {row['mode']} {row['settings']} done", file=sys.stderr, flush=True)
    return rows


def _overlap(pos: np.ndarray, radius: float, height: float) -> tuple[float, float]:
    """Mean and worst overlap of overlapping agent pairs at the end (fraction of a radius)."""
    from navkit.crowd.metrics import _overlaps

    r = np.full(pos.shape[0], radius, np.float64)
    h = np.full(pos.shape[0], height, np.float64)
    tot, worst, cnt = _overlaps(pos[None].astype(np.float32), r, h)
    return (float(tot / cnt) if cnt else 0.0), float(worst)


def main_big(args) -> None:
    rows = bench_big(args.big_steps, args.native)
    cols = [
        ("mode", "mode", "s"), ("settings", "settings", "s"), ("avoidance", "avoidance", "s"),
        ("agents", "K", "d"),
        ("navkit_ms", "navkit ms", ".2f"), ("navkit_p90_ms", "p90 ms", ".2f"),
        ("navkit_cpu_ms", "cpu ms", ".2f"),
        ("detour_ms", "detour ms", ".2f"), ("ratio", "ratio", ".2f"),
    ]  # fmt: skip
    if args.native:
        cols += [("native_ms", "native ms", ".2f"), ("ratio_native", "ratio nat", ".2f")]
    cols += [
        ("mean_moved", "moved m", ".2f"), ("mean_left", "to target m", ".2f"),
        ("final_mean_overlap", "ovl mean", ".3f"), ("final_worst_overlap", "ovl max", ".3f"),
        ("bytes_per_agent", "bytes/agent", ".0f"),
    ]  # fmt: skip
    print_table(rows, cols)
    text = json.dumps({"bench": "crowd-big", "steps": args.big_steps, "rows": rows}, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


def print_phases(rows: list[dict]) -> None:
    """navkit's median time of each update phase [us] (of the timed crowd), one row per
    mesh and size; phases that never took 0.5 us are left out."""
    names = [
        p for p in navkit.Crowd.PHASES
        if any(r["navkit_phase_ms"].get(p, 0.0) >= 5e-4 for r in rows)
    ]  # fmt: skip
    prow = [
        {"mesh": r["mesh"], "agents": r["agents"],
         **{p: r["navkit_phase_ms"].get(p, 0.0) * 1e3 for p in names}}
        for r in rows
    ]  # fmt: skip
    cols = [("mesh", "mesh", "s"), ("agents", "K", "d")]
    cols += [(p, p.replace("_", " ")[:14], ".0f") for p in names]
    print("\nnavkit phase medians (us):")
    print_table(prow, cols)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", default="100,500,1000")
    ap.add_argument("--steps", type=int, default=600, help="updates of 1/60 s (peer default)")
    ap.add_argument("--meshes", default=",".join(MESHES))
    ap.add_argument("--native", action="store_true", help="also time ../shared/peer-native")
    ap.add_argument("--json", help="also write the JSON here")
    ap.add_argument(
        "--serial", action="store_true",
        help="time only the one-thread crowd (default: Crowd(parallel=True), then the "
        "one-thread crowd in the same run)",
    )  # fmt: skip
    ap.add_argument(
        "--phases", action="store_true",
        help="also print navkit's median time of each update phase (us) per row",
    )  # fmt: skip
    ap.add_argument(
        "--passive", action="store_true",
        help="OMP_WAIT_POLICY=PASSIVE: waiting threads sleep (use on a loaded machine)",
    )
    ap.add_argument("--big", action="store_true", help="the 10,000-agent row instead")
    ap.add_argument("--big-steps", type=int, default=120, help="updates in the --big row")
    args = ap.parse_args()
    if args.big:
        main_big(args)
        return

    rows: list[dict] = []
    warm: list = []
    for name in args.meshes.split(","):
        for k in (int(v) for v in args.agents.split(",")):
            rows.append(bench(name, k, args.steps, args.native, warm, args.serial))
            print(f"{name} K={k} done", file=sys.stderr, flush=True)
    cols = [
        ("mesh", "mesh", "s"), ("agents", "K", "d"), ("navkit_ms", "navkit ms", ".2f"),
        ("navkit_cpu_ms", "cpu ms", ".2f"),
        ("detour_ms", "detour ms", ".2f"), ("ratio", "ratio", ".2f"),
    ]  # fmt: skip
    if args.native:
        cols += [("native_ms", "native ms", ".2f"), ("ratio_native", "ratio nat", ".2f")]
    if not args.serial:
        cols += [("navkit_serial_ms", "1-thread ms", ".2f"), ("ratio_serial", "ratio 1t", ".2f")]
        if args.native:
            cols += [("ratio_native_serial", "ratio nat 1t", ".2f")]
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
    if not args.serial:
        cols += [("serial_same_final_positions", "final= 1t", "d")]
    cols += [("bytes_per_agent", "bytes/agent", ".0f")]
    print_table(rows, cols)
    if args.phases:
        print_phases(rows)
    text = json.dumps({"bench": "crowd", "steps": args.steps, "rows": rows}, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
