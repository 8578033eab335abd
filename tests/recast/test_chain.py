"""The chained stage kernels (``recast/_chain.py``) against the stage-by-stage path.

A bake without volumes or intermediates runs each grid in two chained kernels; with
``keep_intermediates=True`` it runs the stages one public function after the other.
Both must give the same polygon and detail meshes, counts and navmesh bytes (and
both equal Recast's: tests/recast/test_bake.py).
"""

import numpy as np
import pytest
from peer_support import MESHES, mesh_path

import navkit
from navkit import BakeConfig
from navkit.pipeline import bake, bin_triangles, build_tile, tile_bounds, tile_grid
from navkit.recast.build import _build_polymesh_run, mesh_bounds
from navkit.recast.rasterize import mark_walkable_triangles


@pytest.fixture(scope="module")
def meshes():
    return {m: navkit.load_obj(mesh_path(m)) for m in MESHES}


def _same_result(a, b):
    assert (a.pmesh is None) == (b.pmesh is None)
    assert a.counts == b.counts
    if a.pmesh is None:
        return
    for f in ("verts", "polys", "regs", "flags", "areas", "bmin", "bmax"):
        x, y = getattr(a.pmesh, f), getattr(b.pmesh, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f
    for f in ("nvp", "cs", "ch", "border_size", "max_edge_error"):
        assert getattr(a.pmesh, f) == getattr(b.pmesh, f), f
    for f in ("meshes", "verts", "tris"):
        x, y = getattr(a.dmesh, f), getattr(b.dmesh, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f


@pytest.mark.parametrize("name", MESHES)
@pytest.mark.parametrize("partition", ["watershed", "monotone", "layers"])
def test_solo_chain_equals_stage_path(meshes, name, partition):
    cfg = BakeConfig(partition=partition)
    chained = bake(meshes[name], cfg)
    staged = bake(meshes[name], cfg, keep_intermediates=True)
    assert chained.build_report.counts == staged.build_report.counts
    assert set(chained.build_report.timings) == set(staged.build_report.timings)
    assert chained.to_recast() == staged.to_recast()


@pytest.mark.parametrize("name", MESHES)
@pytest.mark.parametrize("partition", ["watershed", "layers"])
def test_tiles_chain_equal_stage_path(meshes, name, partition):
    """Every tile of a tiled bake: the chain (triangles picked inside the kernel) equals
    the stage-by-stage build of the tile's triangles."""
    mesh = meshes[name]
    cfg = BakeConfig(tile_size=48, partition=partition)
    rc = cfg.voxel()
    bmin, bmax = mesh_bounds(mesh)
    grid = tile_grid(bmin, bmax, rc)
    verts = np.ascontiguousarray(mesh.vertices, np.float32)
    tris = np.ascontiguousarray(mesh.triangles, np.int32)
    areas = mark_walkable_triangles(verts, tris, rc.walkable_slope_angle)
    start, binned = bin_triangles(verts, tris, grid, rc)
    size = rc.tile_size + 2 * rc.border_size
    built = 0
    for ty in range(grid.tiles_z):
        for tx in range(grid.tiles_x):
            k = ty * grid.tiles_x + tx
            sel = binned[start[k] : start[k + 1]]
            if sel.size == 0:
                continue
            a = build_tile(verts, tris, areas, cfg, grid, tx, ty, tri_sel=sel)
            tbmin, tbmax = tile_bounds(grid, rc, tx, ty)
            b = _build_polymesh_run(
                verts, tris[sel], areas[sel], rc, bmin=tbmin, bmax=tbmax, width=size,
                height=size, partition=partition, keep_intermediates=True, tx=tx, ty=ty,
            )  # fmt: skip
            _same_result(a, b)
            built += a.pmesh is not None
    assert built > 0


def test_stage_timers_are_reported(meshes):
    """The chain's time-stamp stamps give every stage a non-negative time."""
    rep = bake(meshes[MESHES[0]], BakeConfig()).build_report
    for stage in (
        "rasterize_triangles",
        "filter_ledge_spans",
        "build_compact_heightfield",
        "erode_walkable_area",
        "build_distance_field",
        "build_regions",
        "build_contours",
        "build_poly_mesh",
        "build_poly_mesh_detail",
    ):
        assert rep.timings[stage] >= 0.0, stage
    assert sum(rep.timings.values()) > 0.0
