"""Run the Recast peer (../shared/peer, real Recast/Detour in WebAssembly) from benchmarks.

The shared folder may be read-only, so the peer is copied to the git-ignored
``.scratch/peer`` and its pinned packages installed there with ``npm ci``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NAVKIT_SHARED", ROOT.parent / "shared"))
MESHES = ("dungeon", "nav_test", "undulating")


def mesh_path(name: str) -> Path:
    return SHARED / "data" / "meshes" / f"{name}.obj"


def peer_dir() -> Path:
    work = ROOT / ".scratch" / "peer"
    if not (work / "node_modules" / "@recast-navigation" / "core").is_dir():
        if not work.exists():
            shutil.copytree(
                SHARED / "peer", work, ignore=shutil.ignore_patterns("node_modules", "stages")
            )
            for p in [work, *work.rglob("*")]:
                p.chmod(p.stat().st_mode | 0o200)
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=work,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return work


def run_peer(mesh: str, config: dict | None = None, *args: str) -> dict:
    """Run ``recast_peer.mjs`` on a sample mesh and return its JSON output."""
    r = subprocess.run(
        ["node", "recast_peer.mjs", str(mesh_path(mesh)), json.dumps(config or {}), *args],
        cwd=peer_dir(),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(r.stdout)


def native_binary() -> Path | None:
    """The native Recast/Detour peer (../shared/peer-native), or None when absent."""
    b = SHARED / "peer-native" / "bin" / "recast_native"
    return b if b.is_file() else None


def run_native(mesh: str, config: dict | None = None, *args: str) -> dict:
    """Run the native peer (``recast_native``, same JSON as the WASM peer) on a sample mesh."""
    b = native_binary()
    if b is None:
        raise FileNotFoundError("../shared/peer-native/bin/recast_native is missing")
    r = subprocess.run(
        [str(b), str(mesh_path(mesh)), json.dumps(config or {}), *args, "--quiet"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(r.stdout)


def median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def print_table(rows: list[dict], cols: list[tuple[str, str, str]]) -> None:
    """Print rows as an aligned table; cols are (key, header, format)."""
    cells = [[h for _, h, _ in cols]]
    for r in rows:
        cells.append([("" if r.get(k) is None else format(r[k], f)) for k, _, f in cols])
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    for j, row in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
        if j == 0:
            print("  ".join("-" * w for w in widths))


def native_cpu_ms(mesh: str, config: dict, section: str, runs: int) -> float:
    """CPU time (user + sys) of one native bake of ``section``, in ms.

    The peer is run with ``runs`` and with 1 timed bake, and the difference of the
    two processes' CPU times is divided by ``runs - 1``: loading, the warm-up and the
    untimed intermediates build cancel. Unlike wall time, CPU time does not count
    the time the process waits for a core, so it stays stable on a shared machine.
    """
    import resource

    def cpu(n: int) -> float:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        run_native(mesh, config, "--sections", section, "--runs", str(n), "--warmup", "0")
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

    return (cpu(runs) - cpu(1)) * 1e3 / (runs - 1)
