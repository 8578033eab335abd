"""Tile-cache benchmark: navkit's TileCache beside Recast's dtTileCache (the peer), same run.

For each sample mesh the peer (real Recast in WebAssembly, ``--sections tilecache``)
builds the tile cache with RecastDemo's Sample_TempObstacles settings (48-voxel
tiles), places 50 cylinders at seeded ``findRandomPoint`` positions and times them.
navkit builds the same cache (``TileCache.bake`` with ``BakeConfig(tile_size=48)``,
the same layers byte for byte) and takes the very same obstacles. The obstacle
and build figures are interleaved with the peer: ``--peer-runs`` rounds of (one peer invocation
timing ``--runs`` rounds, then ``--runs`` navkit rounds); ratio = navkit / Recast
(below 1 = navkit faster), the median of the per-round ratios, printed with their
[min, max] over the rounds. navkit's default mode (``TileCache.bake``'s default:
grown obstacles, detail meshes; no peer does it) runs the same obstacles in the same
rounds, printed as ``default-mode ms`` and its ratio to the compatible mode:

- ``build``: the cache and its navmesh from the triangle mesh (``generateTileCache``);
- ``add 1 + update``: one obstacle added and updated until up to date, median over the
  50 obstacles (added one after the other, each on top of the previous ones);
- ``remove 1 + update``: the same obstacles removed one at a time;
- ``add 50 + update``: all 50 added, then updated until up to date;
- ``remove 50 + update``: all removed, then updated until up to date.

It also prints the bytes of the layers (raw, FastLZ as Recast stores them, navkit's
own file format ``TileCache.save``) and the time of one layer rebuild without the
navmesh swap, median over every layer of the mesh with one obstacle on it, best of
5 each: ``layer rebuild ms`` as the cache runs it (the update kernel's rebuild:
decompress, mark, regions, contours, polygons, called alone from Python), ``python
path ms`` on the reference path ``build_layer_tile`` (the same stages as separate
kernels with numpy glue, plus Detour's tile arrays; the cache takes it only when the
navmesh has runtime off-mesh connections); and ``update step ms``, one whole update
step on a layer (rebuild + navmesh swap, ``CacheState.build_tile``).

``--no-native`` skips the native peer (``../shared/peer-native``: the same Recast
commit compiled with g++ -O2, same seeds and obstacles); otherwise its medians and
navkit's ratio to them are printed too.

What limits it (2026-12-02 night, tc10, and 2026-12-03, tc11; docs/benchmarks.md has
the figures). An add
is one kernel call (``tilecache._update.add_cylinder_call`` / ``add_oriented_box_call``
for plain numbers in the compatible mode: bounds, world check, Detour's limit, the
ADD request), an update one kernel call over the cache's arrays
(``tilecache._update.update_call``: the requests, each layer's rebuild and navmesh
swap, the free slots, the obstacle states), and every layer keeps its decoded bytes
(no FastLZ decode after the first). Python is ~15% of an add + update in situ
(the add ~4 us, the update call ~6 us); the rest is the kernel's per-layer work, in
three stages of similar size after tc11 (hot, per layer under obstacles: regions
7-13 us, contours 7-8 us, polygons 8-9 us), the links to the neighbours (~13% of the
kernel in situ) and the swap. A layer rebuild takes 26-39 us hot. The default
mode costs 2-4x the compatible one: the detail mesh (Recast's detail stage over the
layer's heights), the BV tree and the tile data; on undulating the detail mesh holds
11.2 triangles per polygon (dungeon 2.5, nav_test 2.8).

``--build-only`` times the build alone, interleaved with the peer to even out the
load of a shared machine: ``--peer-runs`` rounds of (one peer invocation timing
``--runs`` builds, then ``--runs`` navkit builds); the ratio is the median of the rounds'
ratios. The build itself (2026-12-03): each tile's rasterize .. erode is the solo
bake's chained kernel (one call per tile), the layers and FastLZ are a few kernel
calls per tile, and the navmesh's first build is the update kernel over all layers.

Usage::

    python bench/tilecache.py [--runs 5] [--meshes dungeon,nav_test,undulating] [--json out.json]
    python bench/tilecache.py --build-only [--runs 5] [--peer-runs 3]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer import MESHES, SHARED, median, mesh_path, print_table, run_peer  # noqa: E402

import navkit  # noqa: E402
from navkit.tilecache import TileCache  # noqa: E402
from navkit.tilecache.format import LAYER_HEADER_SIZE  # noqa: E402
from navkit.tilecache.tilemesh import build_layer_tile  # noqa: E402

NATIVE = SHARED / "peer-native" / "bin" / "recast_native"


def run_native(name: str, runs: int) -> dict | None:
    """The native peer's tile-cache section (same settings, seeds and obstacles as the
    WASM peer), or None without ../shared/peer-native."""
    if not NATIVE.exists():
        return None
    r = subprocess.run(
        [str(NATIVE), str(mesh_path(name)), json.dumps({"tileSize": 48}), "--sections",
         "tilecache", "--runs", str(runs), "--quiet"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(r.stdout)["tilecache"]


def peer_figures(tcs: list[dict]) -> dict[str, float]:
    """Median over peer invocations of each timed operation [ms]."""
    obs = [t["obstacles"] for t in tcs]
    return {
        "build": median([t["build_ms"]["median"] for t in tcs]),
        "add1": median([o["incremental_add_update_ms"]["median"] for o in obs]),
        "remove1": median([o["incremental_remove_update_ms"]["median"] for o in obs]),
        "add50": median([o["batch_add_and_update_ms"] for o in obs]),
        "remove50": median([o["batch_remove_and_update_ms"] for o in obs]),
    }


def add(tc: TileCache, s: dict) -> int:
    if s["shape"] == "cylinder":
        return tc.add_cylinder(s["position"], s["radius"], s["height"])
    return tc.add_oriented_box(s["center"], s["half_extents"], s["y_radians"])


def settle(tc: TileCache) -> None:
    while not tc.up_to_date:
        tc.update()


def ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def time_ops(tc: TileCache, shapes: list[dict]) -> dict[str, float]:
    """One round of the peer's obstacle script on a cache without obstacles."""
    t0 = time.perf_counter()
    hs = [add(tc, s) for s in shapes]
    settle(tc)
    batch_add = ms(t0)
    t0 = time.perf_counter()
    for h in hs:
        tc.remove(h)
    settle(tc)
    batch_remove = ms(t0)
    per_add, per_remove, hs = [], [], []
    for s in shapes:
        t0 = time.perf_counter()
        hs.append(add(tc, s))
        settle(tc)
        per_add.append(ms(t0))
    for h in hs:
        t0 = time.perf_counter()
        tc.remove(h)
        settle(tc)
        per_remove.append(ms(t0))
    return {
        "add1": median(per_add),
        "remove1": median(per_remove),
        "add50": batch_add,
        "remove50": batch_remove,
    }


def layer_rebuild_ms(tc: TileCache, shape: dict, reps: int = 5) -> tuple[float, float, float]:
    """Median ms over every layer of one layer rebuild with a cylinder of ``shape``'s
    radius on the layer's centre, no navmesh swap (best of ``reps`` after a warm-up):
    as the cache runs it (the update kernel's rebuild, ``_rebuild._layer_mesh``:
    decompress, mark, regions, contours, polygons; the swap then writes the tile into
    the navmesh pools) and on the Python reference path (``build_layer_tile``, ~8
    kernel dispatches with numpy glue and ``create_navmesh_data``'s tile arrays;
    the cache uses it only for navmeshes with runtime off-mesh connections); and of
    one whole update step on that layer (rebuild without obstacle + navmesh swap,
    through ``CacheState.build_tile``; best of ``reps``)."""
    import numpy as np

    from navkit.tilecache._rebuild import _layer_mesh
    from navkit.tilecache.obstacles import CYLINDER, Obstacle

    st = tc._state
    p = tc.params
    cs = float(p.cs)
    kern, rebuild, swap = [], [], []
    sel = np.zeros(1, np.int64)
    kinds = np.full(1, CYLINDER, np.int64)
    fb = np.zeros((1, 3), np.float32)
    rot = np.zeros((1, 2), np.float32)
    aid = np.zeros(1, np.uint8)
    z1 = np.zeros(1, np.int64)
    pts = np.zeros((0, 2), np.float32)
    out = np.zeros(16, np.int64)
    for ref, t in st.tiles.items():
        h = t.header
        c = (
            (h.bmin[0] + (h.minx + h.maxx) * 0.5 * cs),
            h.bmin[1],
            (h.bmin[2] + (h.miny + h.maxy) * 0.5 * cs),
        )
        ob = Obstacle(
            CYLINDER,
            np.array(c, np.float32),
            np.array([shape["radius"], h.bmax[1] - h.bmin[1] + 1, 0], np.float32),
            np.zeros(2, np.float32),
            np.zeros((0, 2), np.float32),
            0,
        )
        i = st._tix[ref]
        comp = st._comp[st._coff[i] : st._coff[i + 1]]
        fa = ob.a.reshape(1, 3)
        fb[0] = ob.b
        best = math.inf
        for _ in range(reps + 1):  # timing noise only adds: the best (after a warm-up)
            t0 = time.perf_counter()
            _layer_mesh(comp, st._hdrs[i], st._bmins[i], sel, kinds, fa, fb, rot, aid, z1, z1,
                        pts, st._climb, st._max_error, st._wp, out)  # fmt: skip
            best = min(best, ms(t0))
        kern.append(best)
        best = math.inf
        for _ in range(reps + 1):
            t0 = time.perf_counter()
            build_layer_tile(t.data, p, [ob], h)
            best = min(best, ms(t0))
        rebuild.append(best)
        best = math.inf
        for _ in range(reps):
            t0 = time.perf_counter()
            st.build_tile(ref, [])
            best = min(best, ms(t0))
        swap.append(best)
    return median(kern), median(rebuild), median(swap)


def spread(xs: list[float]) -> list[float]:
    """[min, max] of per-round figures."""
    return [min(xs), max(xs)]


def bench_mesh(name: str, runs: int, peer_runs: int, native: bool) -> dict:
    """Interleaved rounds: ``peer_runs`` times (one WASM peer invocation timing ``runs``
    rounds, then ``runs`` navkit rounds in each mode); per round, navkit's figure is the
    median of its ``runs`` round figures. Reported: medians over the rounds, the median
    of the per-round ratios and their [min, max] spread."""
    mesh = navkit.load_obj(mesh_path(name))
    cfg = navkit.BakeConfig(tile_size=48)
    natives = [run_native(name, runs) for _ in range(peer_runs)] if native else []
    natives = [n for n in natives if n is not None]
    tc = TileCache.bake(mesh, cfg, recast_compatible=True)  # warm-up (compiles on first use)
    dc = TileCache.bake(mesh, cfg)  # navkit's default mode (no peer)
    peers, ours, dflt, rb, rbpy, stp = [], [], [], [], [], []
    builds: list[float] = []  # navkit's median build of each round (after its peer run)
    for _ in range(peer_runs):
        peer = run_peer(name, {"runs": runs, "tileSize": 48}, "--sections", "tilecache")
        peers.append(peer["tilecache"])
        bs = []
        for _ in range(runs):
            t0 = time.perf_counter()
            tc = TileCache.bake(mesh, cfg, recast_compatible=True)
            bs.append(ms(t0))
        builds.append(median(bs))
        shapes = peer["tilecache"]["obstacles"]["shapes"]
        if not ours:
            time_ops(tc, shapes)  # warm-up
            time_ops(dc, shapes)
        for dst, cache in ((ours, tc), (dflt, dc)):
            rounds = [time_ops(cache, shapes) for _ in range(runs)]
            dst.append({k: median([r[k] for r in rounds]) for k in rounds[0]})
        r, rpy, sw = layer_rebuild_ms(tc, shapes[0], reps=max(runs, 5))
        rb.append(r)
        rbpy.append(rpy)
        stp.append(sw)
    peer = peers[0]
    ob = peer["obstacles"]
    if natives and natives[0]["obstacles"]["shapes"] != ob["shapes"]:
        raise SystemExit(f"{name}: the native peer placed other obstacles than the WASM peer")
    nat = peer_figures(natives) if natives else None
    per_peer = [peer_figures([p]) for p in peers]
    ops = {}
    for k in ("add1", "remove1", "add50", "remove50"):
        ratios = [o[k] / pp[k] for o, pp in zip(ours, per_peer)]
        dratios = [dd[k] / o[k] for dd, o in zip(dflt, ours)]
        ops[k] = {
            "navkit_ms": median([o[k] for o in ours]),
            "recast_ms": median([pp[k] for pp in per_peer]),
            "ratio": median(ratios),
            "ratio_spread": spread(ratios),
            "default_ms": median([dd[k] for dd in dflt]),
            "default_vs_compat": median(dratios),
            "default_vs_compat_spread": spread(dratios),
            **({"native_ms": nat[k], "ratio_native": median([o[k] for o in ours]) / nat[k]}
               if nat is not None else {}),
        }  # fmt: skip
    bb = peer_figures(peers)["build"]
    bratios = [b / pp["build"] for b, pp in zip(builds, per_peer)]
    ops["build"] = {
        "navkit_ms": median(builds),
        "recast_ms": bb,
        "ratio": median(bratios),
        "ratio_spread": spread(bratios),
        **({"native_ms": nat["build"], "ratio_native": median(builds) / nat["build"]}
           if nat is not None else {}),
    }  # fmt: skip
    tset = tc.tile_cache_set
    fastlz = sum(len(t.data) - LAYER_HEADER_SIZE for t in tset.tiles)
    raw = sum(3 * t.header.width * t.header.height for t in tset.tiles)
    own = None
    if hasattr(tc, "save"):
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "c.tilecache"
            tc.save(f)
            own = f.stat().st_size
    return {
        "mesh": name,
        "layers": len(tset.tiles),
        "ops": ops,
        "layer_rebuild_ms": median(rb),
        "layer_rebuild_spread": spread(rb),
        "layer_rebuild_python_ms": median(rbpy),
        "tile_step_ms": median(stp),
        "tile_step_spread": spread(stp),
        "bytes": {
            "raw": raw,
            "fastlz": fastlz,
            "recast_fastlz": peer["compressed_layer_bytes"] - LAYER_HEADER_SIZE * peer["layers"],
            "tset_file": len(tc.to_recast()),
            "navkit_file": own,
        },
    }


def bench_build(name: str, runs: int, rounds: int) -> dict:
    """Build only: ``rounds`` of (the peer's median of ``runs`` builds, ``runs`` navkit
    builds); the ratio is the median of the rounds' ratios."""
    mesh = navkit.load_obj(mesh_path(name))
    cfg = navkit.BakeConfig(tile_size=48)
    TileCache.bake(mesh, cfg, recast_compatible=True)  # warm-up (compiles on first use)
    ours, theirs = [], []
    for _ in range(rounds):
        peer = run_peer(name, {"runs": runs, "tileSize": 48}, "--sections", "tilecache",
                        "--obstacles", "1")  # fmt: skip
        theirs.append(peer["tilecache"]["build_ms"]["median"])
        bs = []
        for _ in range(runs):
            t0 = time.perf_counter()
            TileCache.bake(mesh, cfg, recast_compatible=True)
            bs.append(ms(t0))
        ours.append(median(bs))
    # the median of the rounds' ratios: each round's figures were taken minutes apart
    # at most, so a change of the machine's pace between rounds does not skew it
    ratios = [a / b for a, b in zip(ours, theirs)]
    return {"mesh": name, "navkit_ms": median(ours), "recast_ms": median(theirs),
            "ratio": median(ratios), "ratio_spread": spread(ratios)}  # fmt: skip


LABELS = {
    "build": "build",
    "add1": "add 1 + update",
    "remove1": "remove 1 + update",
    "add50": "add 50 + update",
    "remove50": "remove 50 + update",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--meshes", default=",".join(MESHES))
    ap.add_argument("--peer-runs", type=int, default=3, help="peer invocations (batch medians)")
    ap.add_argument(
        "--no-native", action="store_true", help="skip ../shared/peer-native (native Recast)"
    )
    ap.add_argument("--json", help="also write the JSON here")
    ap.add_argument("--build-only", action="store_true", help="time the build alone")
    args = ap.parse_args()
    if args.build_only:
        rows = [bench_build(m, args.runs, args.peer_runs) for m in args.meshes.split(",")]
        print_table(
            rows,
            [
                ("mesh", "mesh", "s"),
                ("navkit_ms", "navkit build ms", ".2f"),
                ("recast_ms", "recast build ms", ".2f"),
                ("ratio", "ratio", ".2f"),
            ],
        )
        text = json.dumps({"bench": "tilecache-build", "runs": args.runs,
                           "rounds": args.peer_runs, "meshes": rows}, indent=2)  # fmt: skip
        print(text)
        if args.json:
            Path(args.json).write_text(text)
        return
    res = [
        bench_mesh(m, args.runs, args.peer_runs, not args.no_native) for m in args.meshes.split(",")
    ]
    rows = []
    for r in res:
        for k, v in r["ops"].items():
            row = {"mesh": r["mesh"], "op": LABELS[k], **v}
            if "ratio_spread" in v:
                row["rmin"], row["rmax"] = v["ratio_spread"]
            rows.append(row)
    cols = [
        ("mesh", "mesh", "s"),
        ("op", "operation", "s"),
        ("navkit_ms", "navkit ms", ".3f"),
        ("recast_ms", "WASM ms", ".3f"),
        ("ratio", "ratio", ".2f"),
        ("rmin", "min", ".2f"),
        ("rmax", "max", ".2f"),
        ("default_ms", "default-mode ms", ".3f"),
        ("default_vs_compat", "default/compat", ".2f"),
    ]
    if any("native_ms" in r for r in rows):
        cols += [("native_ms", "native ms", ".3f"), ("ratio_native", "ratio nat", ".2f")]
    print_table(rows, cols)
    print()
    brows = [
        {
            "mesh": r["mesh"],
            "layers": r["layers"],
            "rebuild": r["layer_rebuild_ms"],
            "rb0": r["layer_rebuild_spread"][0],
            "rb1": r["layer_rebuild_spread"][1],
            "rbpy": r["layer_rebuild_python_ms"],
            "step": r["tile_step_ms"],
            **r["bytes"],
        }
        for r in res
    ]
    print_table(
        brows,
        [
            ("mesh", "mesh", "s"),
            ("layers", "layers", "d"),
            ("rebuild", "layer rebuild ms", ".3f"),
            ("rb0", "min", ".3f"),
            ("rb1", "max", ".3f"),
            ("rbpy", "python path ms", ".3f"),
            ("step", "update step ms", ".3f"),
            ("raw", "raw B", "d"),
            ("fastlz", "FastLZ B", "d"),
            ("recast_fastlz", "(recast)", "d"),
            ("tset_file", "TSET file B", "d"),
            ("navkit_file", "navkit file B", "d"),
        ],
    )
    out = {"bench": "tilecache", "runs": args.runs, "peer_runs": args.peer_runs, "meshes": res}
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
