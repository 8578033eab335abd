"""Queries on navkit's own bakes against Detour's answers on Recast's bakes (same pairs)."""

import json

import numpy as np
import pytest
from peer_support import MESHES, mesh_path, peer_file

import navkit


@pytest.mark.peer
@pytest.mark.parametrize("name", MESHES)
@pytest.mark.parametrize("tile_size", [0, 48])
def test_own_bake_same_status_and_lengths(name, tile_size):
    pairs = json.loads(peer_file(f"{name}.pairs.json").read_text())["pairs"]
    nm = navkit.bake(navkit.load_obj(mesh_path(name)), navkit.BakeConfig(tile_size=tile_size))
    q = navkit.NavMeshQuery(nm)
    s = np.array([p["start"] for p in pairs], np.float32)
    e = np.array([p["end"] for p in pairs], np.float32)
    res = q.paths(s, e)
    ref_complete = np.array([p["complete"] for p in pairs])
    assert np.array_equal(res.complete, ref_complete)
    # lengths of complete paths (a partial path's end depends on how far the search got);
    # Recast's pairs were measured on its solo bake, so the tiled bake is compared with it too
    ref_len = np.array([p["length"] if p["ok"] else np.nan for p in pairs], float)
    ok = res.complete & np.isfinite(ref_len) & (ref_len > 0)
    rel = np.abs(res.lengths[ok] - ref_len[ok]) / ref_len[ok]
    assert np.median(rel) <= 0.01
    if tile_size == 0:  # solo: navkit's bake is Recast's bake, so the paths are the same
        assert np.max(rel) < 1e-5
