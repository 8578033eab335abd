"""A compressed layer to a Detour tile (``dtTileCache::buildNavMeshTile``).

Decompress the layer, rasterize the obstacles that touch it, then
:func:`~navkit.tilecache.regions.build_tile_cache_regions`,
:func:`~navkit.tilecache.contours.build_tile_cache_contours`,
:func:`~navkit.tilecache.polymesh.build_tile_cache_poly_mesh` and Detour's
``dtCreateNavMeshData`` (no detail mesh, no BV tree, as the tile cache calls it).
The mesh process is the Recast generators' default (``createDefaultTileCacheMeshProcess``:
every polygon gets flag 1 and area 0), except that an area id marked by an obstacle
(``area=``) is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..detour.tile import TileData, create_navmesh_data
from ..errors import BuildError
from ..recast.types import PolyMesh
from . import fastlz
from .contours import build_tile_cache_contours
from .format import (
    LAYER_HEADER_SIZE,
    TileCacheLayerHeader,
    TileCacheParams,
    decompress_tile_cache_layer,
)
from .obstacles import Obstacle, mark_obstacle
from .polymesh import NVP, build_tile_cache_poly_mesh
from .regions import build_tile_cache_regions

__all__ = ["build_layer_tile", "walkable_climb_vx"]

f32 = np.float32


def walkable_climb_vx(params: TileCacheParams) -> int:
    """``(int)(walkableClimb / ch)`` in float32, as ``buildNavMeshTile``."""
    return int(f32(params.walkable_climb) / f32(params.ch))


def build_layer_tile(
    data: bytes,
    params: TileCacheParams,
    obstacles: Sequence[Obstacle] = (),
    header: TileCacheLayerHeader | None = None,
) -> TileData | None:
    """The Detour tile of one compressed layer with ``obstacles`` rasterized on it.

    Parameters
    ----------
    data : bytes
        A compressed tile (layer header + FastLZ stream).
    params : TileCacheParams
    obstacles : sequence of Obstacle
        In Detour's order (obstacle slot order).
    header : TileCacheLayerHeader, optional
        ``data``'s header, already parsed and checked (the cache's own tiles): skips
        parsing it again.

    Returns
    -------
    TileData or None
        None when the layer yields no polygon (the tile is then removed).

    Raises
    ------
    BuildError
        One of Detour's fixed buffers overflows (more than 255 regions, a contour
        longer than twice the layer's perimeter, too many edges around a removed vertex).
    """
    if header is None:
        layer = decompress_tile_cache_layer(data)
        hd, heights, areas, cons = layer.header, layer.heights, layer.areas, layer.cons
    else:
        hd = header
        n = hd.width * hd.height
        raw = np.frombuffer(fastlz.decompress(data[LAYER_HEADER_SIZE:], 3 * n), np.uint8)
        grids = raw.reshape(3, hd.height, hd.width).copy()
        heights, areas, cons = grids[0], grids[1], grids[2]
    orig = np.array(hd.bmin, np.float32)
    for ob in obstacles:
        mark_obstacle(heights, areas, orig, params.cs, params.ch, ob)
    climb = walkable_climb_vx(params)
    regs, nregs = build_tile_cache_regions(heights, areas, climb)
    where = f"layer ({hd.tx}, {hd.ty}, {hd.tlayer})"
    if nregs < 0:
        raise BuildError(f"{where}: more than 255 regions")
    cset = build_tile_cache_contours(
        heights, areas, cons, regs, nregs, climb, params.max_simplification_error
    )
    if cset is None:
        raise BuildError(f"{where}: a contour overflows the trace buffer")
    mesh = build_tile_cache_poly_mesh(cset)
    if mesh is None:
        raise BuildError(f"{where}: polygon mesh buffer overflow")
    verts, polys, pareas = mesh
    npolys = polys.shape[0]
    if npolys == 0:
        return None
    out_areas = pareas.copy()
    out_areas[out_areas == 63] = 0
    pm = PolyMesh(
        verts=verts,
        polys=polys,
        regs=np.zeros(npolys, np.uint16),
        flags=np.ones(npolys, np.uint16),
        areas=out_areas,
        nvp=NVP,
        bmin=orig,
        bmax=np.array(hd.bmax, np.float32),
        cs=float(f32(params.cs)),
        ch=float(f32(params.ch)),
        border_size=0,
        max_edge_error=float(params.max_simplification_error),
    )
    return create_navmesh_data(
        pm,
        None,
        walkable_height=params.walkable_height,
        walkable_radius=params.walkable_radius,
        walkable_climb=params.walkable_climb,
        tile_x=hd.tx,
        tile_y=hd.ty,
        layer=hd.tlayer,
        build_bv_tree=False,
        area_remap=None,
        flags=None,
    )
