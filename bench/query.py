"""Query benchmark: navkit's NavMeshQuery beside Detour (the peer), same pairs, same run.

For each sample mesh the peer bakes the solo navmesh, draws 1000 start/end pairs
with Detour's own ``findRandomPoint`` and times RecastDemo's NavMeshTester flow
per pair (findNearestPoly x2 + findPath + findStraightPath) and one raycast per
pair. navkit loads the very same navmesh (Recast's export), takes the very same
pairs, and times:

- ``flow``: the same four calls made one by one from Python;
- ``path``: ``query.path()``, the same flow in one kernel call;
- ``batch``: ``query.paths()`` over all pairs at once (parallel);
- ``raycast``: ``query.raycast(..., max_path=0)`` per pair (the peer's call: Detour's
  ``dtRaycastHit`` gets no path buffer, so neither side records visited polygons);
- ``raycast + visited``: ``query.raycast()`` with its default 256-polygon visited list.

The two sides run interleaved: each of ``--runs`` rounds runs the peer once (a fresh
node process: bake, the pair flow, the raycasts) and then every navkit variant once
over the whole set, so both see the same machine load. It prints a table and JSON:
per pair, the median over rounds of navkit's time and of Detour's (the peer's total
over the set / count), and their ratio (below 1 = navkit faster). It also checks
that the paths agree.

Usage::

    python bench/query.py [--runs 5] [--meshes dungeon,nav_test,undulating] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer import MESHES, median, print_table, run_peer  # noqa: E402

import navkit  # noqa: E402


def run_us(fn, n: int) -> float:
    """Microseconds per pair of one run of fn over n pairs."""
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) / n * 1e6


def bench_mesh(name: str, runs: int) -> list[dict]:
    """Interleaved rounds: each round runs the peer (Detour) once, then every navkit
    variant once, so both sides see the same machine load; medians over rounds."""
    with tempfile.TemporaryDirectory() as d:
        pairs_file = Path(d) / "pairs.json"
        nav_file = Path(d) / "solo.bin"
        peer_args = ("--sections", "solo,queries,raycast", "--out", str(pairs_file),
                     "--export-solo", str(nav_file))  # fmt: skip
        peer = run_peer(name, {}, *peer_args)
        pairs = json.loads(pairs_file.read_text())["pairs"]
        nm = navkit.NavMesh.from_recast(nav_file)
        q = navkit.NavMeshQuery(nm)
        starts = np.array([p["start"] for p in pairs], dtype=np.float32)
        ends = np.array([p["end"] for p in pairs], dtype=np.float32)
        n = len(pairs)
        ext = (2.0, 4.0, 2.0)

        def flow():
            for s, e in zip(starts, ends):
                a = q.find_nearest_poly(s, ext)
                b = q.find_nearest_poly(e, ext)
                c = q.find_path(a.ref, b.ref, a.point, b.point)
                q.find_straight_path(a.point, b.point, c.polys)

        def one_call():
            for s, e in zip(starts, ends):
                q.path(s, e)

        def batch():
            q.paths(starts, ends)

        start_refs = [q.find_nearest_poly(s, ext).ref for s in starts]

        def rays():  # the peer's call: Detour's dtRaycastHit gets no path buffer
            for r, s, e in zip(start_refs, starts, ends):
                q.raycast(r, s, e, max_path=0)

        def rays_path():  # navkit's default also returns the visited polygons
            for r, s, e in zip(start_refs, starts, ends):
                q.raycast(r, s, e)

        # agreement with Detour on these pairs
        res = q.paths(starts, ends)
        same_complete = int(np.sum(res.complete == np.array([p["complete"] for p in pairs])))
        variants = (("flow (4 calls)", flow, "pair"), ("path()", one_call, "pair"),
                    ("paths() batch", batch, "pair"), ("raycast", rays, "ray"),
                    ("raycast + visited", rays_path, "ray"))  # fmt: skip
        for _, fn, _ in variants:
            fn()  # warm-up (loads or compiles the kernels)
        ours: dict[str, list[float]] = {label: [] for label, _, _ in variants}
        theirs: dict[str, list[float]] = {"pair": [], "ray": []}
        for r in range(runs):
            if r:
                peer = run_peer(name, {}, *peer_args)
            qp, rp = peer["queries"], peer["raycast"]
            theirs["pair"].append(qp["total_ms"] / qp["queries"] * 1e3)
            theirs["ray"].append(rp["total_ms"] / rp["raycasts"] * 1e3)
            for label, fn, _ in variants:
                ours[label].append(run_us(fn, n))
    rows: list[dict] = []
    for label, _, kind in variants:
        us, ref = median(ours[label]), median(theirs[kind])
        rows.append({
            "mesh": name, "query": label, "navkit_us": us, "detour_us": ref,
            "ratio": us / ref, "pairs": n, "same_complete": same_complete,
        })  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--meshes", default=",".join(MESHES))
    ap.add_argument("--json", help="also write the JSON here")
    args = ap.parse_args()

    rows = []
    for name in args.meshes.split(","):
        rows += bench_mesh(name, args.runs)
    print_table(rows, [
        ("mesh", "mesh", "s"), ("query", "query", "s"), ("navkit_us", "navkit us/pair", ".2f"),
        ("detour_us", "detour us/pair", ".2f"), ("ratio", "ratio", ".2f"),
        ("same_complete", "same status", "d"), ("pairs", "pairs", "d"),
    ])  # fmt: skip
    text = json.dumps({"bench": "query", "runs": args.runs, "rows": rows}, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
