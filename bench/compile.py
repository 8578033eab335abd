"""Compile-time benchmark: the cold first use of each navkit feature.

Each feature runs in a fresh Python process with an empty numba cache
(``NUMBA_CACHE_DIR`` pointed at a new temporary folder), so it pays every compile
its first use needs. A feature may need a setup (a navmesh loaded from a file, a
corridor map built); the setup is timed separately, and the feature's figure is
its first call after the setup. Each step reports wall time and the process's CPU
time (user + system, ``resource.getrusage``, with its finished child processes: the
demo compiles in two): the machine may be shared, and CPU time is the steadier
figure. It also reports how many kernels compiled, how many
of them compiled more than once (one signature per kernel is the goal), and the
kernels that took longest (exclusive compile CPU time, numba's ``numba:compile``
events).

Every Python process of a feature (the demo starts a second one) also logs its own
compiles through a ``sitecustomize`` module put on ``PYTHONPATH``: the per-process
table gives each process's CPU time, its exclusive compile time, when (wall, from
the feature's start) its last compile ended, and the LLVM share of its compiles
(function passes, the linked module's passes, machine code; also per kernel,
charged to the innermost kernel being compiled). With more than one
process it lists each process's slowest kernels and the kernels compiled in more than
one process (duplicates a split of the work should avoid); the JSON has every
process's full kernel list (compiles, exclusive CPU s, the signatures of kernels
compiled more than once).

The navmesh the query features load (and the Recast tile cache file that
``tilecache_load`` reads) is baked once beforehand with the current (usually warm)
cache.

Usage::

    python bench/compile.py [--features demo,path,...] [--json out.json] [--top 5]
    python bench/compile.py --list
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENE = ROOT / "src" / "navkit" / "data" / "scene.json"  # shipped as package data

# Each feature: (setup code, feature code). Both run in the same process; names
# defined by the setup are visible to the feature. ``NAVMESH`` and ``SCENE`` are
# file paths; ``TMP`` is a scratch folder.
_QUERY_SETUP = (
    "import numpy as np\n"
    "from navkit.detour.navmesh import NavMesh\n"
    "from navkit.detour.query import NavMeshQuery\n"
    "nm = NavMesh.load(NAVMESH)\n"
    "q = NavMeshQuery(nm)\n"
)
_ECM_LOAD = (
    "import json\n"
    "from navkit.ecm import CorridorMap\n"
    "d = json.loads(Path(SCENE).read_text())\n"
    "b, obs = d['boundary'], d['obstacles']\n"
)
_ECM_SETUP = _ECM_LOAD + "cm = CorridorMap.from_polygons(b, obs)\n"
_CLI_LEVEL = (
    "from importlib.resources import files\n"
    "from navkit.cli import main\n"
    "LEVEL = str(files('navkit.data') / 'nav_test.obj')\n"
)
FEATURES: dict[str, tuple[str, str]] = {
    "import": ("", "import navkit"),
    "bake_solo": (
        "import navkit",
        "navkit.bake(navkit.sample_level(), navkit.BakeConfig())",
    ),
    "bake_tiled": (
        "import navkit",
        "navkit.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=32))",
    ),
    "demo": ("", "from navkit.cli import main\nmain(['demo', '-o', TMP])"),
    "demo_obstacles": ("", "from navkit.cli import main\nmain(['demo', '--obstacles', '-o', TMP])"),
    # the command line's bake of a level file, solo and tiled (default workers)
    "cli_bake": (_CLI_LEVEL, "main(['bake', LEVEL, '-o', TMP + '/level.navmesh'])"),
    "cli_bake_tiled": (
        _CLI_LEVEL,
        "main(['bake', LEVEL, '--tile-size', '48', '-o', TMP + '/level.navmesh'])",
    ),
    "load": ("", _QUERY_SETUP),
    "path": (_QUERY_SETUP, "q.path((5.0, 0.0, 5.0), (43.0, 8.0, 38.0))"),
    "path_optimal": (_QUERY_SETUP, "q.path((5.0, 0.0, 5.0), (43.0, 8.0, 38.0), optimal=True)"),
    "paths": (
        _QUERY_SETUP,
        "a = np.array([[5.0, 0.0, 5.0]] * 8)\nb = np.array([[43.0, 8.0, 38.0]] * 8)\nq.paths(a, b)",
    ),
    "raycast": (
        _QUERY_SETUP,
        "r = q.find_nearest_poly((5.0, 0.0, 5.0))\nq.raycast(r.ref, r.point, (40.0, 0.0, 5.0))",
    ),
    "ecm_from_polygons": (_ECM_LOAD, "cm = CorridorMap.from_polygons(b, obs)"),
    "ecm_from_polygons_own": (
        _ECM_LOAD,
        "cm = CorridorMap.from_polygons(b, obs, use_library=False)",
    ),
    "ecm_find_path": (_ECM_SETUP, "cm.find_path((1.0, 1.0), (19.0, 11.0), clearance=0.5)"),
    "ecm_move": (
        _ECM_SETUP,
        "rep = cm.insert_polygon([[1.5, 9.5], [2.5, 9.5], [2.5, 10.5], [1.5, 10.5]])\n"
        "cm.move(rep.handle, offset=(0.5, 0.0))",
    ),
    "tilecache_bake": (
        "import navkit\nfrom navkit.tilecache import TileCache",
        "tc = TileCache.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=32))",
    ),
    # a Recast tile cache file (made beforehand, as the navmesh) and its navmesh
    "tilecache_load": (
        "from navkit.tilecache import TileCache",
        "tc = TileCache.from_recast(Path(NAVMESH).with_name('sample.tilecache.bin'))",
    ),
    "tilecache_update": (
        "import navkit\nfrom navkit.tilecache import TileCache\n"
        "tc = TileCache.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=32))",
        "tc.add_cylinder((12.0, 0.0, 12.0), 1.5, 2.0)\n"
        "tc.add_box((20.0, -0.5, 3.0), (23.0, 2.0, 9.0))\n"
        "while not tc.up_to_date:\n    tc.update()",
    ),
    "crowd_update": (
        _QUERY_SETUP + "import navkit\n"
        "crowd = navkit.Crowd(nm, max_agents=8, max_agent_radius=0.6)\n"
        "goal = q.find_nearest_poly((43.0, 8.0, 38.0))\n"
        "for i in range(4):\n"
        "    a = crowd.add_agent(q.find_random_point(rng=i).point, navkit.AgentParams(radius=0.4))\n"
        "    crowd.request_move_target(a, goal.ref, goal.point)\n",
        "for _ in range(3):\n    crowd.update(1 / 60)",
    ),
    "navkit_ecm": (
        "",
        "from navkit.cli import main\n"
        "main(['ecm', str(SCENE), '--from', '1,1', '--to', '19,11', '-o', TMP + '/ecm.png'])",
    ),
}

_CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path

def cpu():  # this process and its finished children (the demo's compile process)
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime

import numba
from numba.core import event

events = []   # (dispatcher name, args, inclusive s, exclusive s) of thread CPU time
stack = []

class _L(event.Listener):
    def on_start(self, ev):
        stack.append([time.thread_time(), 0.0])
    def on_end(self, ev):
        t0, child = stack.pop()
        dt = time.thread_time() - t0
        if stack:
            stack[-1][1] += dt
        d = ev.data["dispatcher"]
        name = getattr(d, "py_func", d).__module__ + "." + getattr(d, "py_func", d).__qualname__
        events.append((name, str(ev.data["args"]), dt, dt - child))

event.register("numba:compile", _L())

NAVMESH = sys.argv[1]; SCENE = sys.argv[2]; TMP = sys.argv[3]
setup, feature = json.loads(sys.argv[4])
out = {}
for step, code in (("setup", setup), ("feature", feature)):
    events.clear()
    w0, c0 = time.perf_counter(), cpu()
    exec(compile(code, step, "exec"), globals())
    out[step] = {"wall": time.perf_counter() - w0, "cpu": cpu() - c0, "events": list(events)}
print("@@" + json.dumps(out))
"""


# Put on PYTHONPATH of a feature's processes: each writes its compile log at exit.
_SITE = r"""
import atexit, json, os, time
_dir = os.environ.get("NAVKIT_BENCH_COMPILE_LOG")
if _dir:
    _rec = {"pid": os.getpid(), "start": time.time(), "compile": 0.0, "n": 0, "last": 0.0,
            "llvm": {}, "kernels": {}, "kernel_llvm": {}, "outer": []}
    try:
        from numba.core import codegen, event

        class _L(event.Listener):
            def __init__(self):
                self.stack = []

            def on_start(self, ev):
                d = ev.data["dispatcher"]
                f = getattr(d, "py_func", d)
                _names.append(f.__module__ + "." + f.__qualname__)
                if not self.stack:  # an outermost compile: [wall start, end, kernel]
                    _rec["outer"].append([time.time(), 0.0, _names[-1]])
                self.stack.append([time.thread_time(), 0.0])

            def on_end(self, ev):
                _names.pop()
                t0, child = self.stack.pop()
                dt = time.thread_time() - t0
                if self.stack:
                    self.stack[-1][1] += dt
                _rec["compile"] += dt - child
                _rec["n"] += 1
                _rec["last"] = time.time()
                if not self.stack:
                    _rec["outer"][-1][1] = _rec["last"]
                d = ev.data["dispatcher"]
                f = getattr(d, "py_func", d)
                k = _rec["kernels"].setdefault(f.__module__ + "." + f.__qualname__, [0, 0.0, []])
                k[0] += 1
                k[1] += dt - child
                k[2].append(str(ev.data["args"]))

        _names = []  # the kernels being compiled, innermost last

        event.register("numba:compile", _L())

        def _timed(cls, name, key):
            orig = getattr(cls, name)

            def w(self, *a, **k):
                t = time.thread_time()
                try:
                    return orig(self, *a, **k)
                finally:
                    dt = time.thread_time() - t
                    _rec["llvm"][key] = _rec["llvm"].get(key, 0.0) + dt
                    if _names:  # charged to the innermost kernel being compiled
                        kl = _rec["kernel_llvm"].setdefault(_names[-1], {})
                        kl[key] = kl.get(key, 0.0) + dt

            setattr(cls, name, w)

        _timed(codegen.CPUCodeLibrary, "_optimize_functions", "function passes")
        _timed(codegen.CPUCodeLibrary, "_optimize_final_module", "module passes")
        _timed(codegen.JITCodeLibrary, "_finalize_specific", "machine code")
    except Exception as e:  # numba's internals moved: log what still works
        _rec["error"] = repr(e)

    def _dump():
        _rec["cpu"] = time.process_time()
        with open(os.path.join(_dir, "%d.json" % os.getpid()), "w") as fh:
            json.dump(_rec, fh)

    atexit.register(_dump)
"""


def _prepare_navmesh(path: Path) -> None:
    code = (
        "import sys, navkit\n"
        "navkit.bake(navkit.sample_level(), navkit.BakeConfig()).save(sys.argv[1])\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)


def _prepare_tile_cache(path: Path) -> None:
    code = (
        "import sys, navkit\n"
        "from navkit.tilecache import TileCache\n"
        "tc = TileCache.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=32))\n"
        "tc.to_recast(sys.argv[1])\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)


def run_feature(name: str, navmesh: Path, cache_dir: str | None = None) -> dict:
    """Run one feature in a fresh process with an empty (or the given) numba cache."""
    setup, feature = FEATURES[name]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env["NUMBA_CACHE_DIR"] = cache_dir or os.path.join(tmp, "numba-cache")
        site, logs = Path(tmp) / "site", Path(tmp) / "logs"
        site.mkdir()
        logs.mkdir()
        (site / "sitecustomize.py").write_text(_SITE)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(site)] + env.get("PYTHONPATH", "").split(os.pathsep)
        ).rstrip(os.pathsep)
        env["NAVKIT_BENCH_COMPILE_LOG"] = str(logs)
        start = time.time()
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-c", _CHILD, str(navmesh), str(SCENE), tmp,
             json.dumps([setup, feature])],
            env=env, capture_output=True, text=True, cwd=tmp,
        )  # fmt: skip
        total = time.perf_counter() - t0
        procs = []
        for f in sorted(logs.glob("*.json")):
            r = json.loads(f.read_text())
            r["last"] = r["last"] - start if r["n"] else 0.0
            r["t0"] = r["start"] - start
            r["outer"] = [[a - start, b - start, k] for a, b, k in r.get("outer", [])]
            procs.append(r)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("@@")), None)
    if p.returncode != 0 or line is None:
        raise RuntimeError(f"{name} failed:\n{p.stdout}\n{p.stderr}")
    res = json.loads(line[2:])
    res["process_wall"] = total
    res["processes"] = procs
    res["stderr"] = p.stderr
    return res


def summarize(name: str, res: dict, top: int) -> dict:
    f, s = res["feature"], res["setup"]
    per: dict[str, list] = {}
    for kname, args, _incl, excl in f["events"]:
        per.setdefault(kname, []).append((args, excl))
    multi = {k: [a for a, _ in v] for k, v in per.items() if len(v) > 1}
    tot = {k: sum(e for _, e in v) for k, v in per.items()}
    slow = sorted(tot.items(), key=lambda kv: -kv[1])[:top]
    return {
        "feature": name,
        "wall_s": round(f["wall"], 2),
        "cpu_s": round(f["cpu"], 2),
        "setup_wall_s": round(s["wall"], 2),
        "setup_cpu_s": round(s["cpu"], 2),
        "process_wall_s": round(res["process_wall"], 2),
        "kernels": len(per),
        "compiles": sum(len(v) for v in per.values()),
        "multi": multi,
        "slowest": [[k, round(t, 2)] for k, t in slow],
        "stderr": res["stderr"].strip()[-400:],
        "processes": [
            {
                "cpu_s": round(p["cpu"], 2),
                "compile_s": round(p["compile"], 2),
                "compiles": p["n"],
                "last_compile_end_s": round(p["last"], 1),
                "llvm_s": {k: round(v, 2) for k, v in p["llvm"].items()},
                "kernel_llvm_s": {
                    k: {a: round(b, 2) for a, b in v.items()}
                    for k, v in p.get("kernel_llvm", {}).items()
                },
                "started_s": round(p.get("t0", 0.0), 1),
                "timeline": _segments(p.get("outer", [])),
                "kernels": [
                    [k, v[0], round(v[1], 2)] + ([v[2]] if v[0] > 1 else [])
                    for k, v in sorted(p.get("kernels", {}).items(), key=lambda kv: -kv[1][1])
                ],
            }
            for p in res.get("processes", [])
        ],
        "in_several_processes": _shared_kernels(res.get("processes", [])),
    }


def _segments(outer: list, gap: float = 1.0) -> list:
    """A process's outermost compiles [wall start, end, kernel] (s from the feature's
    start) merged into busy segments [start, end, compiles, longest kernel]: what the
    process compiled when, and where it waited (between segments)."""
    segs: list = []
    for a, b, k in outer:
        if segs and a - segs[-1][1] <= gap:
            seg = segs[-1]
            seg[1] = max(seg[1], b)
            seg[2] += 1
            if b - a > seg[4]:
                seg[3], seg[4] = k, b - a
        else:
            segs.append([a, b, 1, k, b - a])
    return [
        [round(a, 1), round(b, 1), n, k.rsplit(".", 2)[-2] + "." + k.rsplit(".", 1)[-1]]
        for a, b, n, k, _ in segs
    ]


def _llvm_of(proc: dict, kernel: str) -> str:
    """' (LLVM: function passes a, module passes b, machine code c)' of a kernel's
    exclusive compile, or '' when none was logged."""
    d = proc.get("kernel_llvm_s", {}).get(kernel)
    if not d:
        return ""
    return " (LLVM: " + ", ".join(f"{k} {v:.2f}" for k, v in d.items()) + ")"


def _shared_kernels(procs: list) -> list:
    """Kernels compiled by more than one process of a feature: [name, CPU s in all]."""
    seen: dict[str, list] = {}
    for p in procs:
        for k, (_n, t, *_a) in p.get("kernels", {}).items():
            seen.setdefault(k, []).append(t)
    dup = [[k, round(sum(ts), 2)] for k, ts in seen.items() if len(ts) > 1]
    return sorted(dup, key=lambda kv: -kv[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--features", default=",".join(FEATURES))
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--top", type=int, default=5, help="slowest kernels listed per feature")
    ap.add_argument("--list", action="store_true", help="list the features and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(FEATURES))
        return 0
    names = [n.strip() for n in args.features.split(",") if n.strip()]
    for n in names:
        if n not in FEATURES:
            ap.error(f"unknown feature {n!r}; one of {', '.join(FEATURES)}")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        navmesh = Path(d) / "sample.navmesh"
        if any("NAVMESH" in "".join(FEATURES[n]) for n in names):
            _prepare_navmesh(navmesh)
        if any("sample.tilecache.bin" in FEATURES[n][1] for n in names):
            _prepare_tile_cache(navmesh.with_name("sample.tilecache.bin"))
        for n in names:
            row = summarize(n, run_feature(n, navmesh), args.top)
            rows.append(row)
            print(
                f"{n:22s} feature {row['wall_s']:6.1f} s wall {row['cpu_s']:6.1f} s cpu | "
                f"setup {row['setup_wall_s']:6.1f} s wall {row['setup_cpu_s']:6.1f} s cpu | "
                f"{row['kernels']} kernels, {row['compiles']} compiles",
                flush=True,
            )
            for k, sigs in row["multi"].items():
                print(f"    {len(sigs)}x {k}")
            for k, t in row["slowest"]:
                print(f"    {t:6.2f} s {k}")
            for p in row["processes"]:
                llvm = ", ".join(f"{k} {v:.1f}" for k, v in p["llvm_s"].items())
                print(
                    f"    process: {p['cpu_s']:6.1f} s cpu, {p['compile_s']:6.1f} s compiling "
                    f"({p['compiles']} compiles, last ended at {p['last_compile_end_s']:.0f} s "
                    f"wall; LLVM: {llvm})"
                )
                if len(row["processes"]) > 1 and p["timeline"]:
                    print(
                        f"      started at {p['started_s']:.1f} s; compiling (outermost "
                        "compiles, gaps > 1 s split): "
                        + ", ".join(f"{a:.0f}-{b:.0f} s ({n}: {k})" for a, b, n, k in p["timeline"])
                    )
                for k, n, t, *_a in p["kernels"][: args.top if len(row["processes"]) > 1 else 0]:
                    print(f"      {t:6.2f} s {n}x {k}{_llvm_of(p, k)}")
                if len(row["processes"]) == 1:  # LLVM part of the slowest kernels
                    for k, _t in row["slowest"]:
                        if _llvm_of(p, k):
                            print(f"      LLVM of {k}:{_llvm_of(p, k)}")
            if row["in_several_processes"]:
                dup = row["in_several_processes"]
                print(
                    f"    compiled in more than one process: {len(dup)} kernels, "
                    f"{sum(t for _, t in dup):.1f} s CPU in all"
                )
                for k, t in dup[: args.top]:
                    print(f"      {t:6.2f} s {k}")
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    print(json.dumps({"loadavg": load, "cpus": os.cpu_count(), "rows": rows}, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps({"loadavg": load, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
