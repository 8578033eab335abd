"""Access to Recast's own output, produced by the peer in ``../shared/peer``.

- :func:`shared_dir` -- the ``shared`` folder beside the checkout (or ``$NAVKIT_SHARED``).
- :func:`shared_file` -- a file under it, or a skip saying which file is missing.
- :func:`movingai_file` -- a Moving AI map or scenario file of ``data/movingai``.
- :func:`peer_tool` -- a Python module of ``peer/tools`` (e.g. ``read_recast_export``).
- :func:`peer_results` -- ``peer/results/<name>.json`` as a dict.
- :func:`stage_dump` -- Recast's state after every bake stage for a mesh and
  partition, produced on first use by running the peer (node) in the git-ignored
  ``.scratch/peer`` folder and cached there.

Tests that need a reference which cannot be produced here are skipped with the
reason; ``.ci/run`` prepares the peer first, so in CI they run.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = ROOT / ".scratch"
MESHES = ("dungeon", "nav_test", "undulating")
PARTITIONS = ("watershed", "monotone", "layers")


def shared_dir() -> Path:
    env = os.environ.get("NAVKIT_SHARED")
    return Path(env) if env else ROOT.parent / "shared"


def shared_file(*parts: str) -> Path:
    """``shared_dir() / parts...``; skips the test when the file is not there."""
    p = shared_dir().joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} not available (needs ../shared or $NAVKIT_SHARED)")
    return p


def movingai_file(name: str) -> Path:
    """A file of the Moving AI subset in ``shared/data/movingai`` (skips without it)."""
    return shared_file("data", "movingai", name)


def peer_tool(module: str):
    """Import a Python helper from ``shared/peer/tools`` (skips without it)."""
    import importlib

    tools = shared_file("peer", "tools")
    if not (tools / f"{module}.py").exists():
        pytest.skip(f"{tools / module}.py not available")
    if str(tools) not in sys.path:
        sys.path.insert(0, str(tools))
    return importlib.import_module(module)


def mesh_path(name: str) -> Path:
    p = shared_dir() / "data" / "meshes" / f"{name}.obj"
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


def peer_results(name: str) -> dict:
    p = shared_dir() / "peer" / "results" / f"{name}.json"
    if not p.exists():
        pytest.skip(f"{p} not available")
    return json.loads(p.read_text())


def peer_file(name: str) -> Path:
    p = shared_dir() / "peer" / "results" / name
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


def peer_workdir() -> Path:
    """A writable copy of the peer with its node modules installed."""
    work = SCRATCH / "peer"
    if (work / "node_modules" / "@recast-navigation" / "core").is_dir():
        return work
    src = shared_dir() / "peer"
    if not src.is_dir() or shutil.which("npm") is None:
        pytest.skip("the Recast peer (../shared/peer and npm) is not available")
    if not work.exists():
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("node_modules", "stages"))
        for p in [work, *work.rglob("*")]:
            p.chmod(p.stat().st_mode | 0o200)
    r = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"], cwd=work, capture_output=True, text=True
    )
    if r.returncode != 0:
        pytest.skip(f"npm ci failed for the peer: {r.stderr[-300:]}")
    return work


def _read_stages_module():
    return peer_tool("read_stages")


@functools.cache
def stage_dump(mesh: str, partition: str = "watershed") -> tuple[dict, dict]:
    """Recast's state after each stage: ``(manifest, {stage: {array: ndarray}})``."""
    work = peer_workdir()
    out = work / "stages" / f"{mesh}.{partition}"
    if not (out / "manifest.json").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        obj = mesh_path(mesh)
        with open(out.parent / f"{mesh}.{partition}.json", "w") as f:
            r = subprocess.run(
                [
                    "node",
                    "recast_peer.mjs",
                    str(obj),
                    "{}",
                    "--sections",
                    "solo",
                    "--runs",
                    "1",
                    "--partition",
                    partition,
                    "--dump-stages",
                    str(out),
                ],
                cwd=work,
                stdout=f,
                stderr=subprocess.PIPE,
                text=True,
            )
        if r.returncode != 0 or not (out / "manifest.json").exists():
            pytest.skip(f"peer stage dump failed: {r.stderr[-300:]}")
    rs = _read_stages_module()
    return rs.load_stages(str(out))


def run_peer(mesh_obj: str | Path, config: dict, *args: str) -> dict:
    """Run the peer with a config and extra args; return its JSON output."""
    work = peer_workdir()
    r = subprocess.run(
        ["node", "recast_peer.mjs", str(mesh_obj), json.dumps(config), *args],
        cwd=work,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"peer failed: {r.stderr[-300:]}")
    return json.loads(r.stdout)


# -- Recast's dumped state as navkit's stage types ----------------------------------------
def _f32(v):
    import numpy as np

    return np.asarray(v, dtype=np.float32)


def heightfield_from_dump(manifest: dict, stages: dict, stage: str = "heightfield_filtered"):
    """A :class:`navkit.recast.types.Heightfield` holding Recast's state after ``stage``."""
    import numpy as np

    from navkit.recast.types import Heightfield

    s = stages[stage]
    g = manifest["grid"]
    return Heightfield(
        g["width"],
        g["height"],
        _f32(manifest["bmin"]),
        _f32(manifest["bmax"]),
        float(np.float32(manifest["cs"])),
        float(np.float32(manifest["ch"])),
        s["col_start"].astype(np.int32),
        s["smin"].copy(),
        s["smax"].copy(),
        s["area"].copy(),
    )


def chf_from_dump(manifest: dict, stages: dict, stage: str = "compact_regions"):
    """A :class:`navkit.recast.types.CompactHeightfield` holding Recast's state after ``stage``."""
    import numpy as np

    from navkit.recast.types import CompactHeightfield

    s = stages[stage]
    f = manifest["stages"][stage]["fields"]
    cfg = manifest["rcConfig"]
    n = s["y"].shape[0]
    dist = s["dist"].copy() if "dist" in s else np.zeros(n, np.uint16)
    return CompactHeightfield(
        f.get("width", manifest["grid"]["width"]),
        f.get("height", manifest["grid"]["height"]),
        f.get("walkableHeight", cfg["walkableHeight"]),
        f.get("walkableClimb", cfg["walkableClimb"]),
        f.get("borderSize", 0),
        f.get("maxDistance", 0),
        f.get("maxRegions", 0),
        _f32(f.get("bmin", manifest["bmin"])),
        _f32(f.get("bmax", manifest["bmax"])),
        float(np.float32(manifest["cs"])),
        float(np.float32(manifest["ch"])),
        s["cells_index"].copy(),
        s["cells_count"].copy(),
        s["y"].copy(),
        s["h"].copy(),
        s["con"].copy(),
        s["reg"].copy(),
        s["areas"].copy(),
        dist,
    )


def contours_from_dump(manifest: dict, stages: dict):
    """A :class:`navkit.recast.types.ContourSet` holding Recast's contours."""
    import numpy as np

    from navkit.recast.types import ContourSet

    s = stages["contours"]
    f = manifest["stages"]["contours"]["fields"]
    cfg = manifest["rcConfig"]
    return ContourSet(
        s["reg"].copy(),
        s["area"].copy(),
        s["nverts"].astype(np.int32),
        s["nrverts"].astype(np.int32),
        s["verts"].astype(np.int32),
        s["rverts"].astype(np.int32),
        _f32(f.get("bmin", manifest["bmin"])),
        _f32(f.get("bmax", manifest["bmax"])),
        float(np.float32(manifest["cs"])),
        float(np.float32(manifest["ch"])),
        f.get("width", manifest["grid"]["width"]),
        f.get("height", manifest["grid"]["height"]),
        f.get("borderSize", 0),
        float(np.float32(cfg["maxSimplificationError"])),
    )


def polymesh_from_dump(manifest: dict, stages: dict):
    """A :class:`navkit.recast.types.PolyMesh` holding Recast's polygon mesh."""
    import numpy as np

    from navkit.recast.types import PolyMesh

    s = stages["polymesh"]
    f = manifest["stages"]["polymesh"]["fields"]
    cfg = manifest["rcConfig"]
    return PolyMesh(
        s["verts"].copy(),
        s["polys"].copy(),
        s["regs"].copy(),
        s["flags"].copy(),
        s["areas"].copy(),
        int(cfg["maxVertsPerPoly"]),
        _f32(f.get("bmin", manifest["bmin"])),
        _f32(f.get("bmax", manifest["bmax"])),
        float(np.float32(manifest["cs"])),
        float(np.float32(manifest["ch"])),
        f.get("borderSize", 0),
        float(np.float32(f.get("maxEdgeError", cfg["maxSimplificationError"]))),
    )


#: borderSize forced on the peer's solo build for the tile-style border dumps.
PEER_BORDER = 5


@functools.cache
def border_stage_dump(mesh: str, partition: str = "watershed") -> tuple[dict, dict]:
    """Recast's stage dump of a solo build whose partition ran with ``borderSize = 5``.

    The shared peer always bakes solo meshes with borderSize 0. To test the tile-border
    code paths against Recast itself, a copy of the peer script in ``.scratch/peer`` takes
    the border from ``NAVKIT_PEER_BORDER`` (one line added after the grid size is set).
    """
    work = peer_workdir()
    if shutil.which("node") is None:
        pytest.skip("node is not available to run the Recast peer")
    script = work / "recast_peer_border.mjs"
    if not script.exists():
        src = (work / "recast_peer.mjs").read_text()
        anchor = "cfg.height = gridSize.height;"
        if anchor not in src:
            pytest.skip("peer script changed: cannot force borderSize")
        hook = " if (process.env.NAVKIT_PEER_BORDER) cfg.borderSize = Number(process.env.NAVKIT_PEER_BORDER);"
        script.write_text(src.replace(anchor, anchor + hook, 1))
    out = work / "stages_border" / f"{mesh}.{partition}"
    if not (out / "manifest.json").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(
            ["node", script.name, str(mesh_path(mesh)), "{}", "--sections", "",
             "--partition", partition, "--dump-stages", str(out)],
            cwd=work, capture_output=True, text=True,
            env={**os.environ, "NAVKIT_PEER_BORDER": str(PEER_BORDER)},
        )  # fmt: skip
        if r.returncode != 0 or not (out / "manifest.json").exists():
            pytest.skip(f"peer border dump failed: {r.stderr[-300:]}")
    manifest, stages = _read_stages_module().load_stages(str(out))
    if manifest["stages"]["compact_regions"]["fields"]["borderSize"] != PEER_BORDER:
        pytest.skip("the peer did not take the forced borderSize")
    return manifest, stages
