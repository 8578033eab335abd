"""Optimal (Polyanya) paths vs Detour's A*+funnel on the peer's 1000 pairs per mesh.

Usage: python bench/optimal.py [mesh ...]   (default: dungeon nav_test undulating)

Prints a table and a JSON line: the peer's (wasm Detour) median per query from
``<mesh>.json``, navkit A*+funnel (``query.path``) median time per pair, optimal median per pair, their ratio, and the mean xz length ratio
optimal/funnel over pairs both complete (xz: the metric the optimal search minimises). Each pair is timed once after a warm-up
pass (numba compile, planner preparation).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

import navkit
from navkit.detour.optimal import find_optimal_path
from navkit.errors import QueryError

RESULTS = Path("/work/shared/peer/results")
MESHES = Path("/work/shared/data/meshes")


def _xz_len(p: np.ndarray) -> float:
    d = np.diff(p[:, [0, 2]].astype(np.float64), axis=0)
    return float(np.hypot(d[:, 0], d[:, 1]).sum())


def bench(name: str) -> dict:
    doc = json.loads((RESULTS / f"{name}.pairs.json").read_text())
    nm = navkit.bake(navkit.load_obj(MESHES / f"{name}.obj"), navkit.BakeConfig())
    q = navkit.NavMeshQuery(nm)
    he = doc.get("halfExtents") or [2, 4, 2]
    pairs = [(np.array(p["start"]), np.array(p["end"])) for p in doc["pairs"]]
    t_f, t_o, ratios = [], [], []
    for warm in (True, False):
        for s, e in pairs:
            t0 = time.perf_counter()
            try:
                d = q.path(s, e, half_extents=he)
            except QueryError:
                d = None
            t1 = time.perf_counter()
            try:
                o = find_optimal_path(q, s, e, half_extents=he)
            except QueryError:
                o = None
            t2 = time.perf_counter()
            if warm:
                continue
            t_f.append(t1 - t0)
            t_o.append(t2 - t1)
            if d is not None and o is not None and d.complete and o.complete:
                lf = _xz_len(d.points)
                if lf > 0:
                    ratios.append(_xz_len(o.points) / lf)
    mf, mo = float(np.median(t_f)) * 1e6, float(np.median(t_o)) * 1e6
    peer = json.loads((RESULTS / f"{name}.json").read_text())["queries"]["per_query_ms"]["median"]
    return {
        "mesh": name,
        "pairs": len(pairs),
        "peer_detour_median_us": round(peer * 1e3, 2),
        "funnel_median_us": round(mf, 2),
        "optimal_median_us": round(mo, 2),
        "ratio": round(mo / mf, 3),
        "mean_length_ratio": round(float(np.mean(ratios)), 5) if ratios else None,
        "min_length_ratio": round(float(np.min(ratios)), 5) if ratios else None,
        "max_length_ratio": round(float(np.max(ratios)), 7) if ratios else None,
    }


def main(argv: list[str]) -> None:
    names = argv or ["dungeon", "nav_test", "undulating"]
    rows = [bench(n) for n in names]
    print(
        f"{'mesh':<12}{'peer Detour us':>15}{'A*+funnel us':>14}{'optimal us':>12}{'ratio':>8}"
        f"{'len opt/funnel':>16}"
    )
    for r in rows:
        print(
            f"{r['mesh']:<12}{r['peer_detour_median_us']:>15.1f}{r['funnel_median_us']:>14.1f}"
            f"{r['optimal_median_us']:>12.1f}"
            f"{r['ratio']:>8.2f}{r['mean_length_ratio']!s:>16}"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
