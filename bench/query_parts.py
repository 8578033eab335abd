"""The query pair flow's parts, each in a kernel loop: thread CPU time, or instructions.

``paths()`` runs, per pair, findNearestPoly twice, A* (``find_path_kernel``), the end
point's move onto the corridor's last polygon and the funnel (``straight_path_core``).
This script runs each part over the peer's 1000 stored pairs of a mesh
(``../shared/peer/results/MESH.pairs.json`` on ``MESH.solo.navmesh.bin``) in a kernel loop
of its own -- ``near`` (the 2000 end points), ``astar`` and ``funnel`` (their inputs from
a first pass), ``pair`` (the batch's chunk kernel over all pairs, as ``paths()`` runs it
on one thread, without Python around it) -- and ``paths`` (``paths(threads=1)``).

``--clock`` (default): the fastest of ``--reps`` loops by ``time.thread_time``, us per
item. ``--callgrind``: the script re-runs itself under ``valgrind --tool=callgrind`` with
instrumentation switched on around one loop of each part only (client requests from a
small C helper compiled with ``cc`` into a temporary folder, so it needs valgrind's
headers), with the cache and branch simulators, and prints per item: instructions (Ir),
data reads / writes, simulated L1 data misses (D1mr, D1mw), conditional branches and
their simulated mispredictions (Bc, Bcm), L1 instruction misses (I1mr). Native Detour's
side of that table: ``valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes
../shared/peer-native/bin/recast_native MESH.obj '{}' --sections queries --pairs-in
MESH.pairs.json --runs 1 --warmup 0`` and the inclusive costs of the functions called
4000 (findNearestPoly) and 2000 times (findPath, findStraightPath): see docs/benchmarks.md,
"qnative7".

Usage::

    python bench/query_parts.py [--meshes dungeon,nav_test,undulating] [--parts near,astar,...]
    python bench/query_parts.py --callgrind
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import navkit
from navkit._jit import borrow, njit
from navkit.detour._batch import _pairs_chunk
from navkit.detour._funnel import straight_path_core
from navkit.detour._nearest import find_nearest_core
from navkit.detour._nodes import open_pool
from navkit.detour._poly import closest_point_nav
from navkit.detour._search import find_path_kernel
from navkit.detour._view import open_view, poly_index_unsafe
from navkit.detour.query import _DEFAULT_ARRAYS, _DEFAULT_EXTENTS

RESULTS = Path(__file__).resolve().parents[2] / "shared" / "peer" / "results"
PARTS = ("near", "astar", "funnel", "pair", "paths")
EVENTS = "Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim".split()
SHOWN = ("Ir", "Dr", "Dw", "D1mr", "D1mw", "Bc", "Bcm", "I1mr")
_CG = """#include <valgrind/callgrind.h>
void cg_on(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void cg_off(const char *n) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT(n); }
"""


@njit
def _prep(d, pd, flt, acost, starts, ends, half, sref, eref, sp, ep, corr, ncorr, eadj):
    """Each part's inputs, as the pair flow computes them."""
    nav = open_view(d)
    pool = open_pool(pd)
    pt = np.empty(3, np.float32)
    pv = np.empty((6, 3), np.float32)
    tri = np.zeros((5, 3), np.float32)
    for i in range(starts.shape[0]):
        a, _ = find_nearest_core(nav, starts[i], half, flt, sp[i], pt, pv, tri)
        b, _ = find_nearest_core(nav, ends[i], half, flt, ep[i], pt, pv, tri)
        sref[i] = nav.poly_ref[a] if a >= 0 else 0
        eref[i] = nav.poly_ref[b] if b >= 0 else 0
        ncorr[i] = 0
        eadj[i, :] = ends[i]
        if a < 0 or b < 0:
            continue
        _, n = find_path_kernel(
            nav, pool, flt, acost, sref[i], eref[i], starts[i], ends[i], corr.shape[1], corr[i]
        )
        ncorr[i] = n
        if n > 0 and corr[i, n - 1] != eref[i]:
            tri[:] = 0.0
            last = poly_index_unsafe(nav, corr[i, n - 1])
            closest_point_nav(nav, last, ends[i], eadj[i], pv, tri)


@njit
def _near_loop(d, pts, half, flt):
    nav = open_view(d)
    out = np.empty(3, np.float32)
    pt = np.empty(3, np.float32)
    pv = np.empty((6, 3), np.float32)
    tri = np.zeros((5, 3), np.float32)
    acc = 0
    for i in range(pts.shape[0]):
        a, _ = find_nearest_core(nav, pts[i], half, flt, out, pt, pv, tri)
        acc += a
    return acc


@njit
def _astar_loop(d, pd, flt, acost, sref, eref, sp, ep, out):
    nav = open_view(d)
    pool = open_pool(pd)
    acc = 0
    for i in range(sref.shape[0]):
        if sref[i] != 0 and eref[i] != 0:
            _, n = find_path_kernel(
                nav, pool, flt, acost, sref[i], eref[i], sp[i], ep[i], out.shape[0], out
            )
            acc += n
    return acc


@njit
def _funnel_loop(d, corr, ncorr, sp, eadj):
    nav = open_view(d)
    w = corr.shape[1]
    pts = np.empty((w, 3), np.float32)
    fl = np.empty(w, np.uint8)
    rf = np.empty(w, np.int64)
    ports = np.empty((2, w, 3), np.float32)
    types = np.empty(w, np.int64)
    valid = np.empty(w, np.bool_)
    fs = np.empty((16, 3), np.float32)
    fe = np.empty((2, 6), np.float32)
    cnt = np.empty(1, np.int64)
    acc = 0
    for i in range(corr.shape[0]):
        if ncorr[i] != 0:
            _, m = straight_path_core(
                nav, corr[i], ncorr[i], sp[i], eadj[i], 0, w, pts, fl, rf, ports, types,
                valid, fs, fe, cnt,
            )  # fmt: skip
            acc += m
    return acc


@njit
def _pair_loop(d, pd, flt, acost, starts, ends, half, o):
    mp = o[6].shape[1]
    _pairs_chunk(
        open_view(d), open_pool(pd), borrow(flt), borrow(acost), borrow(starts),
        borrow(ends), borrow(half), mp, mp, 0, starts.shape[0], borrow(o[0]),
        borrow(o[1]), borrow(o[2]), borrow(o[3]), borrow(o[4]), borrow(o[5]), borrow(o[6]),
        borrow(o[7]), borrow(o[8]), borrow(o[9]), borrow(o[10]),
    )  # fmt: skip
    return 0


def part_calls(mesh: str) -> dict:
    """{part: (one loop over all items, item count)} on the mesh's stored pairs."""
    pairs = json.loads((RESULTS / f"{mesh}.pairs.json").read_text())["pairs"]
    q = navkit.NavMeshQuery(navkit.NavMesh.from_recast(RESULTS / f"{mesh}.solo.navmesh.bin"))
    s = np.array([p["start"] for p in pairs], np.float32)
    e = np.array([p["end"] for p in pairs], np.float32)
    n, w = len(pairs), 256
    d, pd = q._vh().desc, q._pool
    flt, acost = _DEFAULT_ARRAYS
    h = _DEFAULT_EXTENTS
    sref, eref, ncorr = (np.zeros(n, np.int64) for _ in range(3))
    sp, ep, eadj = (np.zeros((n, 3), np.float32) for _ in range(3))
    corr = np.zeros((n, w), np.int64)
    _prep(d, pd, flt, acost, s, e, h, sref, eref, sp, ep, corr, ncorr, eadj)
    both = np.concatenate([s, e])
    out = np.zeros(w, np.int64)
    o = (*(np.zeros(n, np.int64) for _ in range(6)), np.zeros((n, w), np.int64),
         np.zeros((n, w, 3), np.float32), np.zeros((n, w), np.uint8),
         np.zeros((n, 2), np.int64), np.zeros(n))  # fmt: skip
    return {
        "near": (lambda: _near_loop(d, both, h, flt), 2 * n),
        "astar": (lambda: _astar_loop(d, pd, flt, acost, sref, eref, sp, ep, out), n),
        "funnel": (lambda: _funnel_loop(d, corr, ncorr, sp, eadj), n),
        "pair": (lambda: _pair_loop(d, pd, flt, acost, s, e, h, o), n),
        "paths": (lambda: q.paths(s, e, threads=1), n),
    }


def _inside(mesh: str, parts: list[str], lib: str) -> None:
    """Under callgrind: one instrumented loop per part, each dumped on its own."""
    calls = part_calls(mesh)
    for p in parts:
        calls[p][0]()  # compiled / loaded, pages touched
    cg = ctypes.CDLL(lib)
    cg.cg_off.argtypes = [ctypes.c_char_p]
    for p in parts:
        cg.cg_on()
        calls[p][0]()
        cg.cg_off(f"{mesh}-{p}".encode())
    print(json.dumps({p: calls[p][1] for p in parts}))


def callgrind(meshes: list[str], parts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        c = Path(tmp) / "cg.c"
        c.write_text(_CG)
        lib = str(Path(tmp) / "libcg.so")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", lib, str(c)], check=True)
        for mesh in meshes:
            out = Path(tmp) / f"cg.{mesh}"
            r = subprocess.run(
                ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes",
                 "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable,
                 __file__, "--inside", mesh, "--parts", ",".join(parts), "--lib", lib],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            items = json.loads(r.stdout.strip().splitlines()[-1])
            print(f"{mesh} (per item)  " + "".join(f"{k:>9}" for k in SHOWN))
            for f in sorted(Path(tmp).glob(f"cg.{mesh}.*")):
                txt = f.read_text()
                part = re.search(r"Client Request: \S+-(\w+)", txt).group(1)  # type: ignore[union-attr]
                tot = re.search(r"^totals: (.*)$", txt, re.M).group(1).split()  # type: ignore[union-attr]
                per = dict(zip(EVENTS, (int(x) / items[part] for x in tot)))
                print(f"  {part:16}" + "".join(f"{per[k]:9.0f}" for k in SHOWN))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--meshes", default="dungeon,nav_test,undulating")
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--inside", help=argparse.SUPPRESS)
    ap.add_argument("--lib", help=argparse.SUPPRESS)
    a = ap.parse_args()
    parts = a.parts.split(",")
    if a.inside:
        _inside(a.inside, parts, a.lib)
        return
    if a.callgrind:
        callgrind(a.meshes.split(","), parts)
        return
    for mesh in a.meshes.split(","):
        calls = part_calls(mesh)
        res = {}
        for p in parts:
            fn, items = calls[p]
            fn()
            best = np.inf
            for _ in range(a.reps):
                c0 = time.thread_time()
                fn()
                best = min(best, time.thread_time() - c0)
            res[p] = best / items * 1e6
        load = os.getloadavg()[0]
        print(f"{mesh}: " + "  ".join(f"{p} {v:.3f}" for p, v in res.items()) +
              f"  (us per item, thread CPU, load {load:.1f})")  # fmt: skip


if __name__ == "__main__":
    main()
