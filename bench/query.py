"""Query benchmark: navkit's NavMeshQuery beside Detour natively (C++) and in WebAssembly.

For each sample mesh the WASM peer (../shared/peer) bakes the solo navmesh, draws
1000 start/end pairs with Detour's own ``findRandomPoint`` and times RecastDemo's
NavMeshTester flow per pair (findNearestPoly x2 + findPath + findStraightPath) and
one raycast per pair. The native peer (../shared/peer-native, the same Recast/Detour
commit compiled with g++ -O2; its navmesh is byte-identical) runs the very same pairs
(``--pairs-in``). navkit loads the very same navmesh (Recast's export), takes the very
same pairs, and times per query type:

- ``single``: one Python call per item (``path()`` for the pair flow, ``raycast(...,
  max_path=0)`` -- the peers' call: Detour's raycast gets no path buffer --,
  ``find_nearest_poly()``, ...);
- ``batch 1t`` / ``batch 2t``: the batch call over all items (``paths()``,
  ``raycasts()``, ``find_nearest_polys()``, ...) on one and on two threads
  (``threads=``); ``scaling`` is their ratio, timed on batches of the inputs repeated
  ``SCALE_REPEAT`` times more (closest point, height and moves 10x, raycasts 5x, random
  points 10,000; the repeated inputs are made before the timing), so that each lasts
  milliseconds: navkit runs a batch of less than
  ``MIN_THREAD_WORK_US`` (200 us) of estimated work per thread on fewer threads;
- for the pair flow also ``flow``: the four calls made one by one from Python.

Query types: the pair flow, find_nearest_poly (the pairs' start and end points),
raycast (from the start's nearest polygon to the end), closest_point_on_poly and
get_poly_height (end points on the start polygon), move_along_surface (start polygon,
start -> end), find_random_point (1000 points). The cheap ones (nearest, raycast,
closest point, height) run over the pairs repeated 10 times, so that one batch call
lasts long against the thread launch. The peers time the pair flow, its
nearest-polygon part and the raycast; the other rows compare single calls with the
batch only. Detour's figures: native ``batch_mean_per_query_ms`` /
``batch_mean_per_raycast_ms`` (one timed pass over all items, no clock read per item)
and for findNearestPoly half the mean of ``nearest_pair_ms`` (timed per pair, so it
carries two clock reads of ~40 ns); WASM: ``total_ms`` / count (per-call timing, mostly
the JS binding's overhead).

Rounds are interleaved: each of ``--runs`` rounds runs the WASM peer, then the native
peer, then every navkit variant over the whole set, so all see the same machine load;
each figure is the median over rounds of the time per item [us] (wall clock, as the
peers time); ``native best`` is the native peer's fastest round (its pass over the
pairs is short, so one preemption on a busy machine moves its median). Beside
``batch1/native`` (median over median), ``paired`` is the median over rounds of each
round's navkit/native ratio (the two timed seconds apart, so a slow phase of the
machine, which lasts minutes here, cancels), and ``best/best`` navkit's fastest round
over native's fastest. ``overhead`` is
single minus batch 1t: what one Python call costs beyond the kernel. Ratios below 1 =
navkit faster.

``batch 1t`` is one call per round (as the native peer's one pass), timed right after
one untimed call of the same batch: the native peer's timed pass follows a first pass of
the same calls over the same items, so its code, branch history and navmesh are warm; the
batch call before it in a round is otherwise the 1000-20000 single calls, which run the
query's single-call kernel (its own compiled copy) and Python. Without the warm call the
batch starts cold (qnative7: 3-5% on the pair flow; ``--cold`` times it so). The scaling
compares the fastest of ``--reps`` calls in a row on one thread and on two (each
clock's own minimum), the 2-thread calls after 30 ms of untimed calls. Why: a
1000-pair ``paths()`` call lasts 3-7 ms, and when no core is idle (the lead's "quiet"
machine had one other busy process) Linux wakes numba's OpenMP worker on the calling
thread's own core (wake-affine placement); the two threads then take turns on one core
(process CPU = wall) until the load balancer moves the worker, some 5 calls later, and
the worker falls asleep again after a few idle milliseconds. The old bench timed one
call per round, right after the peers' processes and the 1-thread calls, so it printed
a pair-flow scaling of 1.03-1.24 while the same calls repeated scale 1.7-1.9x
(``OMP_WAIT_POLICY=active``, a worker that never sleeps, gives 1.8x even alternating 1-
and 2-thread calls). The figure printed is the steady state of back-to-back batch
calls; a lone 2-thread call on a busy machine can run at one thread's speed.
``2t/1t CPU`` is the process CPU time of the 2-thread batch over the 1-thread one (the
work the second thread adds: launch, contention); the wall scaling is at most 2 over
it, and is only meaningful on a quiet machine (``load``, the 1-minute load average at
each round's start, is in the JSON).

On a loaded machine (other processes on the cores) navkit's longer timed loops are
preempted far more often than the peers' short passes; ``--clock cpu`` then times
navkit's one-thread figures (single, batch 1t) in CPU time of the calling thread (the
batch runs in that thread when ``threads=1``), which approximates what the peers' short
wall-clock passes measure. The 2-thread figure and the scaling stay wall clock.

Usage::

    python bench/query.py [--runs 5] [--meshes dungeon,nav_test,undulating] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer import MESHES, median, native_binary, print_table, run_native, run_peer  # noqa: E402

import navkit  # noqa: E402

REPEAT = 10
#: the scaling's batches: the inputs repeated again, so that every batch lasts some
#: milliseconds on one thread (waking a worker thread costs tens of microseconds; a
#: batch shorter than navkit.detour.query.MIN_THREAD_WORK_US per thread runs on fewer)
SCALE_REPEAT = {"pair": 1, "nearest": 1, "raycast": 5, "closest": 10, "height": 10,
                "move": 10, "random": 10}  # fmt: skip
#: time ``batch 1t`` right after one untimed call of the same batch (see the docstring)
WARM_BATCH = True


def run_us(
    fn, n: int, reps: int = 1, settle: float = 0.0, warm: int = 0
) -> tuple[float, float, float]:
    """(wall, CPU of the calling thread, CPU of the process) microseconds per item of fn
    over n items: the fastest of ``reps`` back-to-back calls (each clock's own minimum),
    after ``warm`` untimed calls and untimed calls for ``settle`` seconds (at most 20)."""
    for _ in range(warm):
        fn()
    t_end = time.perf_counter() + settle
    for _ in range(20 if settle > 0 else 0):
        fn()
        if time.perf_counter() >= t_end:
            break
    best = [np.inf, np.inf, np.inf]
    for _ in range(reps):
        p0 = time.process_time()
        c0 = time.thread_time()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        c1 = time.thread_time()
        p1 = time.process_time()
        best = [min(best[0], t1 - t0), min(best[1], c1 - c0), min(best[2], p1 - p0)]
    return best[0] / n * 1e6, best[1] / n * 1e6, best[2] / n * 1e6


def _peer_figures(res: dict, native: bool) -> dict[str, float]:
    """us per item of the peer's timings (see module docstring)."""
    qp, rp = res["queries"], res["raycast"]
    out = {"nearest": qp["nearest_pair_ms"]["mean"] / 2 * 1e3}
    if native:
        out["pair"] = qp["batch_mean_per_query_ms"] * 1e3
        out["raycast"] = rp["batch_mean_per_raycast_ms"] * 1e3
    else:
        out["pair"] = qp["total_ms"] / qp["queries"] * 1e3
        out["raycast"] = rp["total_ms"] / rp["raycasts"] * 1e3
    return out


def bench_mesh(
    name: str, runs: int, with_native: bool, clock: str = "wall", reps: int = 5
) -> list[dict]:
    with tempfile.TemporaryDirectory() as d:
        pairs_file = Path(d) / "pairs.json"
        nav_file = Path(d) / "solo.bin"
        peer_args = ("--sections", "solo,queries,raycast", "--out", str(pairs_file),
                     "--export-solo", str(nav_file))  # fmt: skip
        wasm = run_peer(name, {}, *peer_args)
        native_args = ("--sections", "queries,raycast", "--pairs-in", str(pairs_file),
                       "--runs", "1")  # fmt: skip
        pairs = json.loads(pairs_file.read_text())["pairs"]
        nm = navkit.NavMesh.from_recast(nav_file)
        q = navkit.NavMeshQuery(nm)
        starts = np.array([p["start"] for p in pairs], np.float32)
        ends = np.array([p["end"] for p in pairs], np.float32)
        n = len(pairs)
        # the cheap queries run over the pairs repeated REPEAT times, so that a batch
        # is long against the thread launch
        rs, re_ = np.tile(starts, (REPEAT, 1)), np.tile(ends, (REPEAT, 1))
        both = np.concatenate([rs, re_])
        refs = q.find_nearest_polys(rs).refs
        ref_list = [int(r) for r in refs]
        nr = refs.shape[0]
        live = refs != 0
        lrefs, lstarts, lends = refs[live], rs[live], re_[live]
        lref_list = [int(r) for r in lrefs]
        nl = int(live.sum())
        nm_ = min(nl, n)  # moves: the pairs once

        # the single calls take points as a caller holds them: (3,) arrays made beforehand
        # (iterating a 2-D array makes a view per row, ~0.1 us, inside the timed loop)
        starts_l, ends_l = list(starts), list(ends)
        rs_l, re_l, both_l = list(rs), list(re_), list(both)
        lstarts_l, lends_l = list(lstarts), list(lends)

        def flow():
            for s, e in zip(starts_l, ends_l):
                a = q.find_nearest_poly(s)
                b = q.find_nearest_poly(e)
                c = q.find_path(a.ref, b.ref, a.point, b.point)
                q.find_straight_path(a.point, b.point, c.polys)

        def path_single():
            for s, e in zip(starts_l, ends_l):
                try:
                    q.path(s, e)
                except navkit.errors.QueryError:
                    pass

        def ray_single():
            for r, s, e in zip(ref_list, rs_l, re_l):
                q.raycast(r, s, e, max_path=0)

        def near_single():
            for c in both_l:
                q.find_nearest_poly(c)

        def closest_single():
            for r, e in zip(lref_list, lends_l):
                q.closest_point_on_poly(r, e)

        def height_single():
            for r, e in zip(lref_list, lends_l):
                q.get_poly_height(r, e)

        def move_single():
            for r, s, e in zip(lref_list[:nm_], lstarts_l[:nm_], lends_l[:nm_]):
                q.move_along_surface(r, s, e)

        def random_single():
            g = np.random.default_rng(1)
            for _ in range(n):
                q.find_random_point(rng=g)

        def batches(th, big=False):
            # big: the inputs repeated SCALE_REPEAT[kind] times (the scaling's batches),
            # made here, before the timing: np.tile inside the timed call was a serial
            # copy in both the one- and the two-thread figure
            def t(k, *arrays):
                if not big:
                    return arrays
                return tuple(np.tile(a, (SCALE_REPEAT[k],) + (1,) * (a.ndim - 1)) for a in arrays)

            pr = t("pair", starts, ends)
            ry = t("raycast", refs, rs, re_)
            nb = t("nearest", both)
            cl = t("closest", lrefs, lends)
            ht = t("height", lrefs, lends)
            mv = t("move", lrefs[:nm_], lstarts[:nm_], lends[:nm_])
            nrand = n * (SCALE_REPEAT["random"] if big else 1)
            return {
                "pair": lambda: q.paths(*pr, threads=th),
                "raycast": lambda: q.raycasts(*ry, threads=th),
                "nearest": lambda: q.find_nearest_polys(*nb, threads=th),
                "closest": lambda: q.closest_points_on_polys(*cl, threads=th),
                "height": lambda: q.poly_heights(*ht, threads=th),
                "move": lambda: q.move_along_surfaces(*mv, threads=th),
                "random": lambda: q.find_random_points(nrand, rng=1, threads=th),
            }

        kinds = {  # kind: (label, single, items)
            "pair": ("query pair flow", path_single, n),
            "nearest": ("find_nearest_poly", near_single, 2 * nr),
            "raycast": ("raycast", ray_single, nr),
            "closest": ("closest_point_on_poly", closest_single, nl),
            "height": ("get_poly_height", height_single, nl),
            "move": ("move_along_surface", move_single, nm_),
            "random": ("find_random_point", random_single, n),
        }
        b1, b1big, b2big = batches(1), batches(1, True), batches(2, True)
        variants = [("flow", "pair", flow, n, 1)]
        for k, (_, single, items) in kinds.items():
            big = items * SCALE_REPEAT[k]
            variants += [("single", k, single, items, 1), ("batch1", k, b1[k], items, 1),
                         ("batch1r", k, b1big[k], big, reps),
                         ("batch2", k, b2big[k], big, -reps)]  # fmt: skip
        res = q.paths(starts, ends)
        same_complete = int(np.sum(res.complete == np.array([p["complete"] for p in pairs])))
        for _, _, fn, _, _ in variants:
            fn()  # warm-up (loads or compiles the kernels)
        ours: dict[tuple[str, str], list[float]] = {(v, k): [] for v, k, _, _, _ in variants}
        cpu: dict[tuple[str, str], list[float]] = {(v, k): [] for v, k, _, _, _ in variants}
        pcpu: dict[tuple[str, str], list[float]] = {(v, k): [] for v, k, _, _, _ in variants}
        loads = []
        peers: dict[str, list[dict]] = {"wasm": [], "native": []}
        for r in range(runs):
            if r:
                wasm = run_peer(name, {}, *peer_args)
            peers["wasm"].append(_peer_figures(wasm, False))
            if with_native:
                peers["native"].append(_peer_figures(run_native(name, {}, *native_args), True))
            loads.append(os.getloadavg()[0])
            for v, k, fn, items, nrep in variants:
                # batch2 (nrep < 0) runs untimed for 30 ms first: see the module docstring
                # batch1: one untimed call of the same batch first, as the native peer's
                # timed pass follows its first pass over the same items (WARM_BATCH)
                w, c, pc = run_us(fn, items, abs(nrep), 0.03 if nrep < 0 else 0.0,
                                  int(v == "batch1" and WARM_BATCH))  # fmt: skip
                ours[(v, k)].append(w)
                cpu[(v, k)].append(c)
                pcpu[(v, k)].append(pc)
    rows: list[dict] = []
    for k, (label, _, items) in kinds.items():
        med = {v: median(ours[(v, k)]) for v in ("single", "batch1", "batch2")}
        wall = dict(med)
        if clock == "cpu":  # one-thread figures in CPU time of the calling thread
            med["single"] = median(cpu[("single", k)])
            med["batch1"] = median(cpu[("batch1", k)])
        row = {
            "mesh": name, "query": label, "items": items,
            "single_us": med["single"], "batch1_us": med["batch1"], "batch2_us": med["batch2"],
            # both sides as the fastest of --reps calls (the 2-thread one settled first)
            "scaling": median(ours[("batch1r", k)]) / wall["batch2"],
            "overhead_us": med["single"] - med["batch1"],
            # process CPU of the 2-thread batch over the 1-thread one: the work the second
            # thread adds (contention, launch); wall scaling is at most 2 / this
            "cpu2_over_cpu1": median(pcpu[("batch2", k)]) / median(pcpu[("batch1r", k)]),
            "load": median(loads),
            "clock": clock, "single_wall_us": wall["single"], "batch1_wall_us": wall["batch1"],
            "flow_us": median(ours[("flow", k)]) if ("flow", k) in ours else None,
        }  # fmt: skip
        for side in ("wasm", "native"):
            figs = [f[k] for f in peers[side] if k in f]
            ref = median(figs) if figs else None
            row[f"{side}_us"] = ref
            row[f"{side}_best_us"] = min(figs) if figs else None
            row[f"single_vs_{side}"] = med["single"] / ref if ref else None
            row[f"batch1_vs_{side}"] = med["batch1"] / ref if ref else None
            # two estimators that a slow phase of the machine moves less: the median of
            # each round's ratio (both sides timed within seconds of each other), and
            # the fastest round's over the fastest round's
            b1s = cpu[("batch1", k)] if clock == "cpu" else ours[("batch1", k)]
            if figs and len(figs) == len(b1s):
                row[f"batch1_vs_{side}_paired"] = median([a / b for a, b in zip(b1s, figs)])
                row[f"batch1_vs_{side}_best"] = min(b1s) / min(figs)
        if k == "pair":
            row["same_complete"] = same_complete
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--meshes", default=",".join(MESHES))
    ap.add_argument("--native", action=argparse.BooleanOptionalAction, default=True,
                    help="also run the native peer (default: when ../shared/peer-native exists)")  # fmt: skip
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: navkit's one-thread figures (single, batch 1t) in CPU time of "
                    "the calling thread, for a loaded machine (the 2-thread figure and the "
                    "scaling stay wall clock)")  # fmt: skip
    ap.add_argument("--reps", type=int, default=5,
                    help="each round times a batch call as the fastest of this many calls "
                    "in a row (one call of a 1000-pair batch lasts a few ms: one "
                    "preemption would decide its figure)")  # fmt: skip
    ap.add_argument("--cold", action="store_true",
                    help="time batch 1t without the untimed call of the same batch before it "
                    "(as before 2026-12-03 afternoon)")  # fmt: skip
    ap.add_argument("--json", help="also write the JSON here")
    args = ap.parse_args()
    with_native = args.native and native_binary() is not None
    global WARM_BATCH
    WARM_BATCH = not args.cold

    rows = []
    for name in args.meshes.split(","):
        rows += bench_mesh(name, args.runs, with_native, args.clock, args.reps)
    print_table(rows, [
        ("mesh", "mesh", "s"), ("query", "query", "s"), ("single_us", "single us", ".2f"),
        ("batch1_us", "batch 1t us", ".3f"), ("batch2_us", "batch 2t us", ".3f"),
        ("scaling", "2t scaling", ".2f"), ("cpu2_over_cpu1", "2t/1t CPU", ".2f"),
        ("overhead_us", "overhead/call us", ".2f"),
        ("native_us", "native us", ".3f"), ("native_best_us", "native best", ".3f"),
        ("wasm_us", "wasm us", ".2f"),
        ("batch1_vs_native", "batch1/native", ".2f"),
        ("batch1_vs_native_paired", "paired", ".2f"), ("batch1_vs_native_best", "best/best", ".2f"),
        ("single_vs_native", "single/native", ".2f"),
        ("batch1_vs_wasm", "batch1/wasm", ".2f"), ("single_vs_wasm", "single/wasm", ".2f"),
    ])  # fmt: skip
    flows = [r for r in rows if r.get("flow_us") is not None]
    if flows:
        print(
            "\nquery pair flow as 4 Python calls (find_nearest_poly x2, find_path, find_straight_path):"
        )
        for r in flows:
            print(f"  {r['mesh']}: {r['flow_us']:.2f} us/pair; same complete status as Detour: "
                  f"{r['same_complete']}/{r['items']}")  # fmt: skip
    text = json.dumps(
        {"bench": "query", "runs": args.runs, "reps": args.reps, "native": with_native,
         "clock": args.clock, "warm_batch": WARM_BATCH, "rows": rows}, indent=2,
    )  # fmt: skip
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
