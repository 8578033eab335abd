"""Benchmark of navkit.ecm: build, local updates, path queries.

Prints a table and a JSON line: build time for about 100 / 1,000 / 10,000
segments; median and worst insertion, deletion and move of a polygon obstacle on
the 1,000-segment scene (wall clock and process CPU time, the latter less
sensitive to a loaded machine); path query times (the first after the updates
separately); the rebuild time of the same scene and the rebuild/update ratios.
Scenes: a rectangle with random polygon obstacles (about 4.5 segments each) on
a jittered grid.

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
from navkit.errors import InputError  # noqa: E402


def scene(n_segments: int, seed: int = 1):
    n = max(1, round(n_segments / 4.5))
    w, h = 100 * np.sqrt(n / 250), 60 * np.sqrt(n / 250)
    rng = np.random.default_rng(seed)
    b, obs, (_cw, _ch, s) = random_scene(seed, n, w, h, 2.0)
    obs = [random_obstacle(rng, *o.mean(0), s, kind="poly") for o in obs]
    return b, obs, s


_CPU: list = []


def timed(fn):
    """Wall-clock seconds of fn() and its result; the process CPU seconds are
    appended to ``_CPU``."""
    c = time.process_time()
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    _CPU.append(time.process_time() - c)
    return dt, out


def warm_up() -> None:
    """Load (or compile, on the very first run) every kernel before timing: a few
    updates and queries on a small random scene."""
    b, obs, s = scene(100, seed=3)
    m = CorridorMap.from_polygons(b, obs)
    rng = np.random.default_rng(3)
    v, r, _, _ = m.medial_axis()
    spots = v[r > 2.5 * s]
    hs = [h for h in m.obstacles if h]
    for i in range(6):
        c = spots[rng.integers(len(spots))]
        try:
            h = m.insert_polygon(random_obstacle(rng, c[0], c[1], s * 0.8, kind="poly")).handle
            m.remove(h)
            m.move(int(hs[i]), offset=rng.uniform(-0.1, 0.1, 2) * s)
        except Exception:
            pass
    lo, hi = np.array(b).min(0), np.array(b).max(0)
    m.find_path(lo + 1, hi - 1, clearance=0.3)


def main() -> None:
    quick = "--quick" in sys.argv
    warm_up()
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
    lo, hi = np.array(b).min(0), np.array(b).max(0)
    t_first, _ = timed(lambda: m.find_path(lo + 1, hi - 1, clearance=0.3))
    res["first_query_after_build_ms"] = 1e3 * t_first
    rng = np.random.default_rng(7)
    hs = [h for h in m.obstacles if h]
    ins, dele, mov = [], [], []
    cins, cdel, cmov = [], [], []
    v, r, _, _ = m.medial_axis()
    spots = v[r > 2.5 * s]
    for _i in range(40 if quick else 100):
        c = spots[rng.integers(len(spots))]
        poly = random_obstacle(rng, c[0], c[1], s * 0.8, kind="poly")
        try:
            t, rep = timed(lambda poly=poly: m.insert_polygon(poly))
        except InputError:  # overlaps an obstacle: rejected, map unchanged
            continue
        ins.append(t)
        cins.append(_CPU[-1])
        t, _ = timed(lambda rep=rep: m.remove(rep.handle))
        dele.append(t)
        cdel.append(_CPU[-1])
        h = int(hs[rng.integers(len(hs))])
        try:
            t, _ = timed(lambda h=h: m.move(h, offset=rng.uniform(-0.1, 0.1, 2) * s))
            mov.append(t)
            cmov.append(_CPU[-1])
        except InputError:
            pass
    # locality: moves on the largest scene, to compare with the 1,000-segment ones
    big = max(maps)
    if big != 1000:
        mb, _bb, _ob, sb = maps[big]
        hb = [h for h in mb.obstacles if h]
        movb = []
        for _i in range(60):
            h = int(hb[rng.integers(len(hb))])
            try:
                t, _ = timed(lambda h=h: mb.move(h, offset=rng.uniform(-0.1, 0.1, 2) * sb))
                movb.append(t)
            except InputError:
                pass
        res["move_largest_scene"] = {
            "segments": int(np.sum(mb.sites.kind[: mb.sites.n] == 1)),
            "median_ms": 1e3 * float(np.median(movb)),
            "worst_ms": 1e3 * float(np.max(movb)),
            "n": len(movb),
        }
    t_rebuild, _ = timed(lambda: m.rebuilt())
    q = []
    # the first query after updates samples every new edge once (cached afterwards)
    t_first, _ = timed(lambda: m.find_path(lo + 1, hi - 1, clearance=0.3))
    res["first_query_ms"] = 1e3 * t_first
    for _ in range(30 if quick else 100):
        a, g = rng.uniform(lo + 1, hi - 1, (2, 2))
        if m.clearance_at(a) < 0.3 or m.clearance_at(g) < 0.3:
            continue
        t, _ = timed(lambda a=a, g=g: m.find_path(a, g, clearance=0.3))
        q.append(t)

    def stat(x, c=None):
        out = {
            "median_ms": 1e3 * float(np.median(x)),
            "worst_ms": 1e3 * float(np.max(x)),
            "n": len(x),
        }
        if c is not None:
            out["cpu_median_ms"] = 1e3 * float(np.median(c))
            out["cpu_worst_ms"] = 1e3 * float(np.max(c))
        return out

    res.update(
        insert=stat(ins, cins),
        delete=stat(dele, cdel),
        move=stat(mov, cmov),
        rebuild_ms=1e3 * t_rebuild,
        path_query=stat(q),
    )
    for k in ("insert", "delete", "move"):
        res[k]["rebuild_over_median"] = res["rebuild_ms"] / res[k]["median_ms"]
        res[k]["rebuild_over_worst"] = res["rebuild_ms"] / res[k]["worst_ms"]
    print("ECM benchmark (navkit.ecm; paper: insert 1.3-2.5 ms, delete 1.2-5.4 ms, move < 1.5 ms)")
    for k, t in res["build_s"].items():
        print(f"  build {k:6d} segments: {t * 1e3:10.1f} ms")
    nseg1000 = list(res["build_s"])[1]
    print(f"  updates on the {nseg1000}-segment scene (rebuild {res['rebuild_ms']:.1f} ms):")
    print("  op          median    worst   (cpu median  worst)  rebuild/median  rebuild/worst")
    for k in ("insert", "delete", "move"):
        st = res[k]
        print(
            f"  {k:8s} {st['median_ms']:8.2f} {st['worst_ms']:8.2f}   "
            f"({st['cpu_median_ms']:8.2f} {st['cpu_worst_ms']:8.2f})  "
            f"{st['rebuild_over_median']:10.1f}x  {st['rebuild_over_worst']:10.1f}x   n={st['n']}"
        )
    if "move_largest_scene" in res:
        st = res["move_largest_scene"]
        print(
            f"  move on the {st['segments']}-segment scene: median {st['median_ms']:.2f} ms, "
            f"worst {st['worst_ms']:.2f} ms (n={st['n']}; compare the 1,000-segment move: updates are local)"
        )
    st = res["path_query"]
    print(
        f"  path query median {st['median_ms']:.2f} ms, worst {st['worst_ms']:.2f} ms "
        f"(n={st['n']}); first query after the build {res['first_query_after_build_ms']:.1f} ms, "
        f"after the updates {res['first_query_ms']:.1f} ms"
    )
    print(json.dumps(res))


if __name__ == "__main__":
    main()
