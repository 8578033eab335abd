"""Shared helpers for the detour tests: Recast's files and tiles built from its dumps."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest
from peer_support import peer_file, polymesh_from_dump, shared_dir, stage_dump

from navkit.detour import NavMesh, NavMeshParams, create_navmesh_data
from navkit.recast.types import PolyMeshDetail

MESHES = ("dungeon", "nav_test", "undulating")
PARTITIONS = ("watershed", "monotone", "layers")


def solo_name(mesh: str, partition: str) -> str:
    return f"{mesh}{'' if partition == 'watershed' else '.' + partition}.solo.navmesh.bin"


def peer_navmesh_files() -> list[str]:
    d = shared_dir() / "peer" / "results"
    return sorted(p.name for p in d.glob("*.navmesh.bin")) if d.is_dir() else []


def port_fixture(name: str) -> Path:
    p = shared_dir() / "data" / "port_fixtures" / name
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


def detour_header(mesh: str) -> dict:
    p = shared_dir() / "peer" / "results" / f"{mesh}.json"
    if not p.exists():
        pytest.skip(f"{p} not available")
    return json.loads(p.read_text())["config"]["effective"]["detourHeader"]


@functools.cache
def recast_meshes(mesh: str, partition: str):
    """Recast's own polymesh and detail mesh for a solo build."""
    manifest, stages = stage_dump(mesh, partition)
    pm = polymesh_from_dump(manifest, stages)
    d = stages["detail"]
    return pm, PolyMeshDetail(d["meshes"].copy(), d["verts"].copy(), d["tris"].copy())


def build_solo_tile(mesh: str, partition: str, offmesh=None):
    pm, dm = recast_meshes(mesh, partition)
    h = detour_header(mesh)
    return create_navmesh_data(
        pm,
        dm,
        walkable_height=h["walkableHeight"],
        walkable_radius=h["walkableRadius"],
        walkable_climb=h["walkableClimb"],
        offmesh=offmesh,
    )


def solo_navmesh(td) -> NavMesh:
    """A one-tile NavMesh whose params derive from the tile, as ``dtNavMesh::init(data)``."""
    p = NavMeshParams(
        tuple(float(v) for v in td.bmin),
        float(np.float32(td.bmax[0] - td.bmin[0])),
        float(np.float32(td.bmax[2] - td.bmin[2])),
        1,
        td.poly_count,
    )
    nm = NavMesh(p)
    nm.add_tile(td)
    return nm


@functools.cache
def peer_bytes(name: str) -> bytes:
    return peer_file(name).read_bytes()


def link_sets(nm: NavMesh) -> dict:
    return {r: sorted(nm.links_of(r)) for r in nm.poly_refs()}


#: Off-mesh connections on dungeon that Detour does link: two across neighbouring tiles of
#: the tiled build (one bidirectional, one not) and one inside a tile.
LINKED_OFFMESH = [
    {"start": [-12.815216064453125, 10.063961029052734, -23.24127197265625],
     "end": [-0.11521577835083008, 10.197295188903809, -31.891273498535156],
     "radius": 0.6, "bidirectional": True, "area": 2, "flags": 3},
    {"start": [-13.615215301513672, 9.297294616699219, -17.816274642944336],
     "end": [-6.49021577835083, 10.097293853759766, -17.891273498535156],
     "radius": 0.6, "bidirectional": False, "area": 2, "flags": 3},
    {"start": [22.984783172607422, 15.047294616699219, -86.74127960205078],
     "end": [20.40478515625, 14.997294425964355, -87.94126892089844],
     "radius": 0.5, "bidirectional": True, "area": 1, "flags": 1},
]  # fmt: skip


@functools.cache
def linked_offmesh_exports() -> tuple[bytes, bytes]:
    """Recast's solo and tiled exports of dungeon with :data:`LINKED_OFFMESH` (made by the
    peer on first use, cached under .scratch)."""
    import shutil
    import subprocess

    from peer_support import SCRATCH, mesh_path, peer_workdir

    out = SCRATCH / "detour_offmesh"
    solo, tiled = out / "dungeon.linked.solo.bin", out / "dungeon.linked.tiled.bin"
    if not (solo.exists() and tiled.exists()):
        if shutil.which("node") is None:
            pytest.skip("node is not available to run the Recast peer")
        work = peer_workdir()
        out.mkdir(parents=True, exist_ok=True)
        cfg = json.dumps({"offmesh": LINKED_OFFMESH})
        r = subprocess.run(
            [
                "node",
                "recast_peer.mjs",
                str(mesh_path("dungeon")),
                cfg,
                "--sections",
                "",
                "--runs",
                "1",
                "--export-solo",
                str(solo),
                "--export-tiled",
                str(tiled),
            ],
            cwd=work,
            capture_output=True,
            text=True,
        )
        if r.returncode != 0 or not tiled.exists():
            pytest.skip(f"peer export failed: {r.stderr[-300:]}")
    return solo.read_bytes(), tiled.read_bytes()
