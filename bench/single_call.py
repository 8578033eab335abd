"""Single-call overhead: one Python call of a query against the kernel's own time.

Loads the dungeon navmesh of ``../shared/data/port_fixtures`` (no peer needed), draws
``--n`` random start/end pairs and times, per query, a loop of single calls and the
batch call over the same items on one thread (the kernel's time per item). Each figure
is the fastest of ``--reps`` rounds in CPU time of the calling thread (the machine is
shared: CPU time leaves out the time other processes hold the core, wall time does not),
the rounds interleaved over the queries. ``overhead`` = single - batch per item: what
the Python layer (argument checks, dispatch, unboxing, result objects) adds.

Usage::

    python bench/single_call.py [--n 2000] [--reps 15] [--only raycast,nearest]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import navkit

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "data"
    / "port_fixtures"
    / "dungeon_all_tiles_navmesh.bin"
)


def cpu_us(fn, n: int) -> float:
    t0 = time.thread_time_ns()
    fn()
    return (time.thread_time_ns() - t0) / n / 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--only", default="")
    ap.add_argument("--mesh", default=str(FIXTURE))
    args = ap.parse_args()
    nm = navkit.NavMesh.from_recast(args.mesh)
    q = navkit.NavMeshQuery(nm)
    n = args.n
    rp = q.find_random_points(2 * n, rng=7)
    starts, ends = rp.points[:n].copy(), rp.points[n:].copy()
    refs = rp.refs[:n].copy()
    ref_l = [int(r) for r in refs]
    s_l, e_l = list(starts), list(ends)
    et = [tuple(float(x) for x in p) for p in ends]
    cors = [q.find_path(r, int(er), s, e).polys for r, er, s, e in
            zip(ref_l, rp.refs[n:], s_l, e_l)]  # fmt: skip
    nk = min(n, 500)  # path-finding pairs (slower calls)
    erefs = [int(r) for r in rp.refs[n:]]

    def ray():
        for r, s, e in zip(ref_l, s_l, e_l):
            q.raycast(r, s, e, max_path=0)

    def ray_path():
        for r, s, e in zip(ref_l, s_l, e_l):
            q.raycast(r, s, e)

    def near():
        for c in e_l:
            q.find_nearest_poly(c)

    def near_tuple():
        for c in et:
            q.find_nearest_poly(c)

    def closest():
        for r, e in zip(ref_l, e_l):
            q.closest_point_on_poly(r, e)

    def height():
        for r, e in zip(ref_l, e_l):
            q.get_poly_height(r, e)

    def move():
        for r, s, e in zip(ref_l, s_l, e_l):
            q.move_along_surface(r, s, e)

    def fpath():
        for r, er, s, e in zip(ref_l[:nk], erefs[:nk], s_l[:nk], e_l[:nk]):
            q.find_path(r, er, s, e)

    def straight():
        for c, s, e in zip(cors[:nk], s_l[:nk], e_l[:nk]):
            q.find_straight_path(s, e, c)

    def path1():
        for s, e in zip(s_l[:nk], e_l[:nk]):
            try:
                q.path(s, e)
            except navkit.errors.QueryError:
                pass

    def b(fn):
        return fn

    kinds = {  # name: (single, items, batch or None)
        "raycast max_path=0": (ray, n, lambda: q.raycasts(refs, starts, ends, threads=1)),
        "raycast": (ray_path, n, lambda: q.raycasts(refs, starts, ends, max_path=256, threads=1)),
        "nearest": (near, n, lambda: q.find_nearest_polys(ends, threads=1)),
        "nearest (tuple)": (near_tuple, n, None),
        "closest_point_on_poly": (closest, n,
                                  lambda: q.closest_points_on_polys(refs, ends, threads=1)),
        "get_poly_height": (height, n, lambda: q.poly_heights(refs, ends, threads=1)),
        "move_along_surface": (move, n,
                               lambda: q.move_along_surfaces(refs, starts, ends, threads=1)),
        "find_path": (fpath, nk, None),
        "find_straight_path": (straight, nk, None),
        "path": (path1, nk, lambda: q.paths(starts[:nk], ends[:nk], threads=1)),
    }  # fmt: skip
    if args.only:
        keep = args.only.split(",")
        kinds = {k: v for k, v in kinds.items() if any(x in k for x in keep)}
    for single, _, batch in kinds.values():
        single()
        if batch:
            batch()
    best = {k: [np.inf, np.inf] for k in kinds}
    for _ in range(args.reps):
        for k, (single, items, batch) in kinds.items():
            best[k][0] = min(best[k][0], cpu_us(single, items))
            if batch:
                best[k][1] = min(best[k][1], cpu_us(batch, items))
    print(f"{'query':24s} {'single us':>10s} {'batch us':>9s} {'overhead us':>12s}")
    for k, (s, bt) in best.items():
        bs = f"{bt:9.3f}" if np.isfinite(bt) else f"{'-':>9s}"
        ov = f"{s - bt:12.3f}" if np.isfinite(bt) else f"{'-':>12s}"
        print(f"{k:24s} {s:10.3f} {bs} {ov}")


if __name__ == "__main__":
    main()
