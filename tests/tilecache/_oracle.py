"""Recast's own ``dtTileCache`` at test time (``tilecache_oracle.mjs`` in the peer's node)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from peer_support import peer_workdir

HERE = Path(__file__).resolve().parent


def oracle(tset: bytes, ops: list[dict]) -> list[dict]:
    """Run ``ops`` on Recast's tile cache built from the TSET bytes ``tset``.

    ``export`` results come back as bytes under ``"navmesh"``.
    """
    if shutil.which("node") is None:
        pytest.skip("node is not available")
    work = peer_workdir()
    r = subprocess.run(
        ["node", str(HERE / "tilecache_oracle.mjs")],
        input=json.dumps({"tset": base64.b64encode(tset).decode(), "ops": ops}),
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PEER_DIR": str(work)},
    )
    if r.returncode != 0:
        pytest.fail(f"tilecache oracle failed: {r.stderr[-500:]}")
    out = json.loads(r.stdout)
    for o in out:
        if "navmesh" in o:
            o["navmesh"] = base64.b64decode(o["navmesh"])
    return out


def shape_ops(shapes: list[dict]) -> list[dict]:
    """Oracle ops adding the peer's ``obstacles.shapes`` entries."""
    ops = []
    for s in shapes:
        if s["shape"] == "cylinder":
            ops.append(
                {"op": "cylinder", "pos": s["position"], "radius": s["radius"],
                 "height": s["height"]}
            )  # fmt: skip
        else:
            ops.append(
                {"op": "obox", "center": s["center"], "half": s["half_extents"],
                 "angle": s["y_radians"]}
            )  # fmt: skip
    return ops


def add_shapes(cache, shapes: list[dict]) -> list[int]:
    """Add the peer's ``obstacles.shapes`` to a navkit TileCache; their handles."""
    out = []
    for s in shapes:
        if s["shape"] == "cylinder":
            out.append(cache.add_cylinder(s["position"], s["radius"], s["height"]))
        else:
            out.append(cache.add_oriented_box(s["center"], s["half_extents"], s["y_radians"]))
    return out


def update_calls(cache) -> int:
    """Update one ``dtTileCache::update`` step at a time until up to date; the step count."""
    n = 0
    while not cache.up_to_date:
        cache.update(max_tiles=1)
        n += 1
    return n


def poly_centers(navmesh) -> np.ndarray:
    """(n, 3) centres of every polygon of a navmesh (float64)."""
    a = navmesh.arrays()
    out = []
    for ref in navmesh.poly_refs():
        gp = navmesh.poly_index(ref)
        nv = int(a.poly_vert_count[gp])
        out.append(a.verts[a.poly_verts[gp, :nv]].astype(np.float64).mean(axis=0))
    return np.array(out)
