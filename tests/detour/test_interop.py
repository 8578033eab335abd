"""navkit's bakes as Detour sees them: Detour loads our files, and off-mesh bakes match Recast's."""

import json
import subprocess

import pytest
from peer_support import mesh_path, peer_file, peer_workdir, shared_file

import navkit
from navkit import BakeConfig, OffMeshConnections

JUMP = [{"start": [44.0, 4.0, 50.0], "end": [48.5, 0.0, 50.0], "radius": 0.6,
         "bidirectional": False, "area": 5, "flags": 8, "userId": 77}]  # fmt: skip


@pytest.mark.peer
@pytest.mark.parametrize("tile_size", [0, 32])
def test_detour_loads_navkit_exports_and_reexports_identically(tmp_path, tile_size):
    nm = navkit.bake(
        navkit.sample_level(), BakeConfig(tile_size=tile_size),
        offmesh=OffMeshConnections.from_dicts(JUMP),
    )  # fmt: skip
    f = tmp_path / "ours.bin"
    nm.to_recast(f)
    work = peer_workdir()
    r = subprocess.run(["node", "tools/import_check.mjs", str(f)], cwd=work,
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout.strip().splitlines()[-1])
    s = nm.stats()
    assert info["reexport_identical"] is True
    assert info["tiles"] == s["tiles"]
    assert info["polygons"] == s["polys"]
    assert info["off_mesh_connections"] == s["offmesh"] == 1


@pytest.mark.peer
@pytest.mark.parametrize("mode", ["solo", "tiled"])
def test_offmesh_bake_bytes_equal_recast(mode):
    cons = json.loads(shared_file("peer", "offmesh", "dungeon.json").read_text())
    cons = cons["offmesh"] if isinstance(cons, dict) else cons
    cfg = BakeConfig(tile_size=48 if mode == "tiled" else 0)
    nm = navkit.bake(navkit.load_obj(mesh_path("dungeon")), cfg,
                     offmesh=OffMeshConnections.from_dicts(cons))  # fmt: skip
    assert nm.to_recast() == peer_file(f"dungeon.offmesh.{mode}.navmesh.bin").read_bytes()
