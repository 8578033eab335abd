"""Per-update cost of the corridor agents (navkit.ecm.CorridorAgents) at 100,
1,000 and 10,000 agents, and what planning them cost.

The world: a square hall (side grows with the agent count, about 25 m^2 per
agent) with a grid of square pillars; agents of radius 0.2-0.5 m start at random
free points and head for random free points. Prints a table and, with --json,
JSON. No peer: Recast has no corridor agents (compare with bench/crowd.py for
the dtCrowd modes).

    python bench/ecm_agents.py [--sizes 100,1000,10000] [--steps 50] [--threads N] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time

import numba
import numpy as np

from navkit.ecm import CorridorAgents, CorridorMap


def world(n: int):
    side = max(20.0, math.sqrt(25.0 * n))
    k = max(2, int(side / 10))
    pillars = []
    for i in range(k):
        for j in range(k):
            cx = (i + 0.5) * side / k
            cy = (j + 0.5) * side / k
            h = 1.0
            pillars.append([(cx - h, cy - h), (cx + h, cy - h), (cx + h, cy + h), (cx - h, cy + h)])
    cm = CorridorMap.from_polygons([(0, 0), (side, 0), (side, side), (0, side)], pillars)
    return cm, side


def run(n: int, steps: int, seed: int = 1) -> dict:
    cm, side = world(n)
    rng = np.random.default_rng(seed)
    ag = CorridorAgents(cm, max_agents=n)
    t0 = time.perf_counter()
    added = 0
    while added < n:
        r = float(rng.uniform(0.2, 0.5))
        p = rng.uniform(0.5, side - 0.5, 2)
        g = rng.uniform(0.5, side - 0.5, 2)
        if cm.clearance_at(p) < r or cm.clearance_at(g) < r:
            continue
        if np.any(np.hypot(*(ag.positions[:added] - p).T) < 1.1):
            continue
        ag.add_agent(p, goal=g, radius=r)
        added += 1
    plan = (time.perf_counter() - t0) / n
    ag.update(0.05)  # compile / warm
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        ag.update(0.05)
        times.append(time.perf_counter() - t)
    return {
        "agents": n,
        "update_ms_median": statistics.median(times) * 1e3,
        "plan_ms_per_agent": plan * 1e3,
        "moving_after": int(np.sum(ag.states == 1)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.threads:
        numba.set_num_threads(a.threads)
    rows = [run(int(s), a.steps) for s in a.sizes.split(",")]
    print(f"corridor agents, {numba.get_num_threads()} threads, median of {a.steps} updates (dt 0.05 s)")
    print(f"{'agents':>8} {'ms/update':>10} {'plan ms/agent':>14}")
    for r in rows:
        print(f"{r['agents']:>8} {r['update_ms_median']:>10.3f} {r['plan_ms_per_agent']:>14.3f}")
    if a.json:
        print(json.dumps({"threads": numba.get_num_threads(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
