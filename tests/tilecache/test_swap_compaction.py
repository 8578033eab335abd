"""The one-kernel update steps leave the pool compaction to ``NavMesh._swap_done``
(the swap kernels only flag it, so they compile without it): after every update no
pool is more than half dead, compactions do happen, and the navmesh stays the one the
Python path builds (which compacts in ``NavMesh._release``)."""

from __future__ import annotations

import numpy as np

import navkit
from navkit.tilecache import TileCache


def _dead_fractions(tc: TileCache) -> np.ndarray:
    cnt = tc.navmesh._cnt  # (2, 8): used, dead rows per pool
    return cnt[1] / np.maximum(cnt[0], 1)


def test_swaps_compact_the_pools_after_the_kernel():
    mesh = navkit.sample_level()
    config = navkit.BakeConfig(tile_size=32)
    kernel = TileCache.bake(mesh, config)
    python = TileCache.bake(mesh, config)
    python._state.fast_detail = False
    compactions = 0
    for step in range(30):
        for tc in (kernel, python):
            h = tc.add_cylinder((12.0 + step % 3, 0.0, 12.0), 1.5, 2.0)
            tc.update()
            tc.remove(h)
            tc.update()
        frac = _dead_fractions(kernel)
        assert (frac <= 0.5).all(), f"step {step}: a pool is more than half dead: {frac}"
        compactions += int(kernel.navmesh._cnt[1].sum() == 0)
        assert kernel.navmesh.to_recast() == python.navmesh.to_recast(), f"step {step}"
    assert kernel._state.fast_steps > 0
    assert compactions > 0  # the swaps did reach the threshold and compacted
