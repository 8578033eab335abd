"""CPU microseconds of Python per tile-cache add / remove / update call (issue 11).

One cache (``TileCache.bake``, 48-voxel tiles), 50 cylinders on upward-facing
triangles of the mesh (seeded), each added and updated, then removed and updated,
``--rounds`` times. ``time.process_time`` around every call; the update kernel's own
CPU time is measured around its entry call and subtracted (``upd_*_py``; it includes
the two timer calls around the kernel, ~1 us). Compare branches in the same run:
``PYTHONPATH=/tmp/base/src python bench/tilecache_python.py`` beside this checkout.

Usage::

    python bench/tilecache_python.py [dungeon|nav_test|undulating] [--default] [--rounds 20]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer import mesh_path  # noqa: E402

import navkit  # noqa: E402
from navkit.tilecache import TileCache  # noqa: E402
from navkit.tilecache import update as U  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mesh", nargs="?", default="dungeon")
    ap.add_argument("--default", action="store_true", help="navkit's default mode")
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    mesh = navkit.load_obj(mesh_path(args.mesh))
    tc = TileCache.bake(mesh, navkit.BakeConfig(tile_size=48), recast_compatible=not args.default)
    v, t = np.asarray(mesh.vertices), np.asarray(mesh.triangles)
    n = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    up = v[t].mean(axis=1)[(n[:, 1] / (np.linalg.norm(n, axis=1) + 1e-9)) > 0.9]
    pos = [up[i].tolist() for i in np.random.default_rng(1).choice(len(up), 50, replace=False)]

    kern = [0.0]
    call = U._call

    def timed(k, *a):  # type: ignore[no-untyped-def]
        t0 = time.process_time()
        r = call(k, *a)
        kern[0] += time.process_time() - t0
        return r

    U._call = timed

    def settle() -> None:
        while not tc.up_to_date:
            tc.update()

    for p in pos:  # warm-up
        h = tc.add_cylinder(p, 1.0, 2.0)
        settle()
        tc.remove(h)
        settle()
    pt = time.process_time
    s = dict.fromkeys(("add", "ua", "ka", "remove", "ur", "kr"), 0.0)
    calls = 0
    for _ in range(args.rounds):
        for p in pos:
            t0 = pt()
            h = tc.add_cylinder(p, 1.0, 2.0)
            t1 = pt()
            kern[0] = 0.0
            tc.update()
            t2 = pt()
            s["add"] += t1 - t0
            s["ua"] += t2 - t1
            s["ka"] += kern[0]
            t0 = pt()
            tc.remove(h)
            t1 = pt()
            kern[0] = 0.0
            tc.update()
            t2 = pt()
            s["remove"] += t1 - t0
            s["ur"] += t2 - t1
            s["kr"] += kern[0]
            calls += 1
            assert tc.up_to_date

    def us(x: float) -> float:
        return round(x / calls * 1e6, 2)

    print(json.dumps({
        "mesh": args.mesh, "compat": not args.default, "add": us(s["add"]),
        "upd_add_py": us(s["ua"] - s["ka"]), "kern_add": us(s["ka"]),
        "remove": us(s["remove"]), "upd_rm_py": us(s["ur"] - s["kr"]), "kern_rm": us(s["kr"]),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
