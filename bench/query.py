"""Query timings on the peer's pairs: NavMeshQuery vs Detour (the peer's ``queries``/``raycast``).

Usage: ``python bench/query.py [mesh ...]`` (default: dungeon nav_test undulating).
Prints, per mesh, microseconds per pair for the peer's flow (find_nearest_poly x2 +
find_path + find_straight_path) through the public API, the same flow inside one
kernel (``pair_kernel``), the ``paths`` batch (1 and all threads) and ``raycast``,
beside the peer's medians. CPU time (``process_time``) and wall time, best of 3.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numba
import numpy as np

from navkit.detour.navmesh import NavMesh
from navkit.detour.query import NavMeshQuery

RESULTS = Path(__file__).resolve().parents[1].parent / "shared" / "peer" / "results"


def _best(fn, n, reps=3):
    w = c = float("inf")
    fn()
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        w = min(w, (time.perf_counter() - t0) / n * 1e6)
        c = min(c, (time.process_time() - c0) / n * 1e6)
    return w, c


def bench(mesh: str) -> None:
    nm = NavMesh.from_recast(RESULTS / f"{mesh}.solo.navmesh.bin")
    q = NavMeshQuery(nm)
    pairs = json.loads((RESULTS / f"{mesh}.pairs.json").read_text())["pairs"]
    peer = json.loads((RESULTS / f"{mesh}.json").read_text())
    S = np.array([p["start"] for p in pairs], np.float32)
    E = np.array([p["end"] for p in pairs], np.float32)
    n = len(S)

    def flow():
        for i in range(n):
            a = q.find_nearest_poly(S[i])
            b = q.find_nearest_poly(E[i])
            fp = q.find_path(a.ref, b.ref, S[i], E[i])
            end = E[i]
            if fp.polys[-1] != b.ref:
                end, _ = q.closest_point_on_poly(int(fp.polys[-1]), E[i])
            q.find_straight_path(S[i], end, fp.polys)

    def one_by_one():
        for i in range(n):
            q.path(S[i], E[i])

    refs = [p["startRef"] for p in pairs]

    def rays():
        for i in range(n):
            q.raycast(refs[i], S[i], E[i], max_path=0)

    pq = peer["queries"]["per_query_ms"]["median"] * 1e3
    pr = peer["raycast"]["per_raycast_ms"]["median"] * 1e3
    rows = [("flow via API", _best(flow, n), pq), ("path() per pair", _best(one_by_one, n), pq)]
    S5, E5 = np.tile(S, (5, 1)), np.tile(E, (5, 1))
    nth = numba.get_num_threads()
    for th in sorted({1, nth}):
        numba.set_num_threads(th)
        rows.append(
            (
                f"paths() batch, {th} thr",
                _best(lambda th=th: q.paths(S5, E5, threads=th), 5 * n),
                pq,
            )
        )
    numba.set_num_threads(nth)
    rows.append(("raycast via API", _best(rays, n), pr))
    print(f"{mesh}:")
    for name, (w, c), ref in rows:
        print(
            f"  {name:24s} wall {w:8.2f} us  cpu {c:8.2f} us   peer median {ref:6.2f} us  (cpu/peer {c / ref:5.2f})"
        )


if __name__ == "__main__":
    for m in sys.argv[1:] or ["dungeon", "nav_test", "undulating"]:
        bench(m)
