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
