"""Benchmark of navkit.ecm: build, local updates, path queries.

Prints a table and a JSON line. Scenes: a rectangle with random convex-ish
polygon obstacles (about 4.5 segments each) on a jittered grid.

    .venv/bin/python bench/ecm.py [--quick]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ecm"))
from scenes import random_obstacle, random_scene  # noqa: E402

from navkit.ecm import CorridorMap  # noqa: E402


def scene(n_segments: int, seed: int = 1):
    n = max(1, round(n_segments / 4.5))
    w, h = 100 * np.sqrt(n / 250), 60 * np.sqrt(n / 250)
    rng = np.random.default_rng(seed)
    b, obs, (_cw, _ch, s) = random_scene(seed, n, w, h, 2.0)
    obs = [random_obstacle(rng, *o.mean(0), s, kind="poly") for o in obs]
    return b, obs, s


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    quick = "--quick" in sys.argv
    # load (or compile, on the very first run) every kernel before timing
    w = CorridorMap.from_polygons([[0, 0], [4, 0], [4, 4], [0, 4]], [[[2.5, 1.5]]])
    h = w.insert_polygon([[1, 2.5], [1.6, 2.5], [1.3, 3]]).handle
    w.move(h, offset=[0.1, 0])
    w.remove(h)
    w.find_path([0.5, 0.5], [3.5, 3.5], clearance=0.1)
    res: dict = {"build_s": {}}
    sizes = [100, 1000] if quick else [100, 1000, 10000]
    maps = {}
    for ns in sizes:
        b, obs, s = scene(ns)
        t, m = timed(lambda b=b, obs=obs: CorridorMap.from_polygons(b, obs))
        nseg = int(np.sum(m.sites.kind[: m.sites.n] == 1))
        res["build_s"][nseg] = t
        maps[ns] = (m, b, obs, s)
    m, b, obs, s = maps[1000]
    rng = np.random.default_rng(7)
    hs = [h for h in m.obstacles if h]
    ins, dele, mov = [], [], []
    v, r, _, _ = m.medial_axis()
    spots = v[r > 2.5 * s]
    for _i in range(40 if quick else 100):
        c = spots[rng.integers(len(spots))]
        poly = random_obstacle(rng, c[0], c[1], s * 0.8, kind="poly")
        try:
            t, rep = timed(lambda poly=poly: m.insert_polygon(poly))
        except Exception:
            continue
        ins.append(t)
        t, _ = timed(lambda rep=rep: m.remove(rep.handle))
        dele.append(t)
        h = int(hs[rng.integers(len(hs))])
        try:
            t, _ = timed(lambda h=h: m.move(h, offset=rng.uniform(-0.1, 0.1, 2) * s))
            mov.append(t)
        except Exception:
            pass
    t_rebuild, _ = timed(lambda: m.rebuilt())
    q = []
    lo, hi = np.array(b).min(0), np.array(b).max(0)
    # the first query after updates samples every new edge once (cached afterwards)
    t_first, _ = timed(lambda: m.find_path(lo + 1, hi - 1, clearance=0.3))
    res["first_query_ms"] = 1e3 * t_first
    for _ in range(30 if quick else 100):
        a, g = rng.uniform(lo + 1, hi - 1, (2, 2))
        if m.clearance_at(a) < 0.3 or m.clearance_at(g) < 0.3:
            continue
        t, _ = timed(lambda a=a, g=g: m.find_path(a, g, clearance=0.3))
        q.append(t)

    def stat(x):
        return {
            "median_ms": 1e3 * float(np.median(x)),
            "worst_ms": 1e3 * float(np.max(x)),
            "n": len(x),
        }

    res.update(
        insert=stat(ins),
        delete=stat(dele),
        move=stat(mov),
        rebuild_ms=1e3 * t_rebuild,
        path_query=stat(q),
    )
    print("ECM benchmark (navkit.ecm; paper: insert 1.3-2.5 ms, delete 1.2-5.4 ms, move < 1.5 ms)")
    for k, t in res["build_s"].items():
        print(f"  build {k:6d} segments: {t * 1e3:10.1f} ms")
    nseg1000 = list(res["build_s"])[1]
    print(f"  updates on the {nseg1000}-segment scene (rebuild {res['rebuild_ms']:.1f} ms):")
    for k in ("insert", "delete", "move", "path_query"):
        st = res[k]
        print(
            f"  {k:10s} median {st['median_ms']:8.2f} ms  worst {st['worst_ms']:8.2f} ms  "
            f"(n={st['n']}, rebuild/median = {res['rebuild_ms'] / st['median_ms']:.1f}x)"
        )
    print(
        f"  first path query after the updates (samples all edges): {res['first_query_ms']:.1f} ms"
    )
    print(json.dumps(res))


if __name__ == "__main__":
    main()
