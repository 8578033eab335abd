"""Path requests under a per-update budget: K agents ask for a path in the same update.

On each sample mesh (navkit's own bake), K agents (default 1000; ``update_flags=0``
so that the request phases dominate) are placed at Detour-seeded random points and
all given a random target before the first update; then ``--steps`` updates of
1/60 s run in each crowd mode:

- ``dtcrowd``: dtCrowd's scheme, every requesting agent runs its 20-iteration quick
  search in the same update, the path queue gets 100 iterations per update;
- ``navkit``: all searches of an update share ``max_iterations_per_update`` (1000).

Printed per mesh and mode: the worst and the median time of the request phases
(check_path_validity + move_requests + path_queue) over the updates [ms], the
worst whole update [ms], the most A* iterations of one update (navkit mode counts
them; dtcrowd mode: 20 per quick search + the queue's), and how many agents have a
complete or partial path at the end. ``ratio`` is navkit's worst request-phase time
over dtcrowd's (below 1 = navkit's worst frame is shorter). This is navkit beside
navkit: the peer's dtCrowd reports no per-update maximum.

Usage::

    python bench/crowd_requests.py [--agents 1000] [--steps 60] [--meshes ...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer import MESHES, median, print_table  # noqa: E402

import navkit  # noqa: E402
import navkit.data  # noqa: E402
from navkit.crowd import AgentParams  # noqa: E402
from navkit.crowd.agents import TARGET_VALID  # noqa: E402

PHASES = ("check_path_validity", "move_requests", "path_queue")
QUICK = 20


def run(nm, mode: str, k: int, steps: int) -> dict:
    q = navkit.NavMeshQuery(nm)
    pts = [q.find_random_point(rng=i) for i in range(2 * k)]
    crowd = navkit.Crowd(nm, k, 0.6, mode=mode)
    params = AgentParams(update_flags=0, collision_query_range=0.01)
    hs = [crowd.add_agent(p.point, params) for p in pts[:k]]
    for h, p in zip(hs, pts[k:]):
        crowd.request_move_target(h, p.ref, p.point)
    queue_its: list[int] = []
    if mode == "dtcrowd":
        update = crowd.path_queue.update
        crowd.path_queue.update = lambda m: queue_its.append(update(m)) or queue_its[-1]
    phase_ms, update_ms, iters = [], [], []
    for _ in range(steps):
        requesting = int((crowd.target_states == 3).sum())
        t0 = time.perf_counter()
        crowd.update(1 / 60)
        update_ms.append((time.perf_counter() - t0) * 1e3)
        phase_ms.append(sum(crowd.timings[p] for p in PHASES) * 1e3)
        rp = crowd.replanner
        if rp is not None:
            iters.append(sum(rp.iterations.values()))
        else:  # every requesting agent searched (<= 20 each) + the queue
            iters.append(requesting * QUICK + (queue_its[-1] if queue_its else 0))
    valid = int((crowd.target_states[:k] == TARGET_VALID).sum())
    return {
        "request_phases_worst_ms": max(phase_ms),
        "request_phases_median_ms": median(phase_ms),
        "update_worst_ms": max(update_ms),
        "update_median_ms": median(update_ms),
        "max_iterations_per_update": max(iters),
        "with_path": valid,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--meshes", nargs="*", default=list(MESHES))
    ap.add_argument("--json", help="also write the JSON here")
    args = ap.parse_args()
    rows = []
    for mesh in args.meshes:
        nm = navkit.bake(navkit.load_obj(navkit.data.path(f"{mesh}.obj")), navkit.BakeConfig())
        run(nm, "navkit", 50, 3)  # compile both modes' kernels outside the timing
        run(nm, "dtcrowd", 50, 3)
        res = {m: run(nm, m, args.agents, args.steps) for m in ("dtcrowd", "navkit")}
        row = {"mesh": mesh, "agents": args.agents, "steps": args.steps}
        row.update({f"{m}_{k}": v for m in res for k, v in res[m].items()})
        row["ratio"] = (
            res["navkit"]["request_phases_worst_ms"] / res["dtcrowd"]["request_phases_worst_ms"]
        )
        rows.append(row)
    print_table(
        rows,
        [
            ("mesh", "mesh", "s"), ("agents", "agents", "d"),
            ("dtcrowd_request_phases_worst_ms", "dtcrowd worst ms", ".1f"),
            ("navkit_request_phases_worst_ms", "navkit worst ms", ".1f"),
            ("ratio", "ratio", ".2f"),
            ("dtcrowd_request_phases_median_ms", "dtcrowd median ms", ".2f"),
            ("navkit_request_phases_median_ms", "navkit median ms", ".2f"),
            ("dtcrowd_max_iterations_per_update", "dtcrowd max iters", "d"),
            ("navkit_max_iterations_per_update", "navkit max iters", "d"),
            ("dtcrowd_with_path", "dtcrowd with path", "d"),
            ("navkit_with_path", "navkit with path", "d"),
        ],
    )  # fmt: skip
    text = json.dumps({"bench": "crowd_requests", "rows": rows}, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
