"""The tiled bake's once-per-bake triangle binning equals the per-tile prefilter."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from navkit import BakeConfig, TriMesh
from navkit.pipeline import bin_triangles, mesh_bounds, tile_bounds, tile_grid, tile_triangles


def _check(mesh: TriMesh, tile_size: int) -> None:
    rc = BakeConfig(tile_size=tile_size).voxel()
    bmin, bmax = mesh_bounds(mesh)
    grid = tile_grid(bmin, bmax, rc)
    start, tris = bin_triangles(mesh.vertices, mesh.triangles, grid, rc)
    assert start.shape == (grid.tiles_x * grid.tiles_z + 1,)
    for ty in range(grid.tiles_z):
        for tx in range(grid.tiles_x):
            lo, hi = tile_bounds(grid, rc, tx, ty)
            k = ty * grid.tiles_x + tx
            want = tile_triangles(mesh.vertices, mesh.triangles, lo, hi)
            np.testing.assert_array_equal(tris[start[k] : start[k + 1]], want)


def test_sample_level_bins_equal_prefilter():
    from navkit.geometry import sample_level

    _check(sample_level(), 16)


def test_triangle_on_a_tile_edge_goes_to_both_tiles():
    # one thin triangle exactly at x = 0 of a 2-tile level, plus a big floor
    v = np.array([[0, 0, 0], [20, 0, 0], [0, 0, 5], [0, 1, 0], [0, 1, 1], [0, 2, 0]], np.float32)
    t = np.array([[0, 2, 1], [3, 4, 5]], np.int32)
    _check(TriMesh(v, t), 16)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([16, 24, 32]))
def test_random_soup_bins_equal_prefilter(seed, tile_size):
    rng = np.random.default_rng(seed)
    n = 30
    v = (rng.random((n, 3)) * np.array([60, 5, 40])).astype(np.float32)
    v[:, 0] = np.where(rng.random(n) < 0.3, np.round(v[:, 0] / 4.8) * 4.8, v[:, 0])
    t = rng.integers(0, n, (40, 3)).astype(np.int32)
    _check(TriMesh(v, t), tile_size)
