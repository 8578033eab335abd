"""A compressed layer to a Detour tile (``dtTileCache::buildNavMeshTile``).

``detail=False`` (``recast_compatible``) is Detour's tile exactly, as below.
``detail=True`` (navkit's default mode) also gives the tile a detail mesh, a BV tree
and the off-mesh connections whose start lies on it. The detail mesh is Recast's own
detail stage (:func:`navkit.recast.detail.build_poly_mesh_detail`, RecastDemo's
settings: samples every 6 cells, 1 cell-height error) run over a compact-heightfield
adapter of the layer (:func:`layer_heightfield`): one span per cell at the layer's
floor height, 4-neighbours connected within the climb, one region; a one-cell ring
around the layer repeats its edge cells, so polygon vertices on the tile border (at
``x = width``) have cells under them. Heights therefore follow the layer's cells, as
a solo bake's detail mesh follows its compact heightfield.

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

from ..detour.tile import OffMeshConnections, TileData, create_navmesh_data
from ..errors import BuildError
from ..recast.detail import build_poly_mesh_detail
from ..recast.types import CompactHeightfield, PolyMesh
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

__all__ = ["build_layer_tile", "layer_heightfield", "walkable_climb_vx"]

f32 = np.float32
#: Detail sampling of the default mode, in cells / cell heights (RecastDemo's defaults).
DETAIL_SAMPLE_DIST_CELLS = 6.0
DETAIL_SAMPLE_MAX_ERROR_CH = 1.0
_NOT_CONNECTED = 0x3F


def layer_heightfield(
    heights: np.ndarray, params: TileCacheParams, orig: np.ndarray, climb: int
) -> CompactHeightfield:
    """A compact heightfield over a layer's height grid, for Recast's detail stage.

    Parameters
    ----------
    heights : (h, w) uint8
        The layer's floor heights [cells of ``ch`` above ``orig[1]``]; 0xFF = no floor.
    params : TileCacheParams
    orig : (3,) float32
        The layer's bmin [wu].
    climb : int
        Largest height step between connected cells [vx].

    Returns
    -------
    CompactHeightfield
        ``(h + 2) x (w + 2)`` cells, ``border_size`` 1 (the ring repeats the edge cells),
        one span per cell with a floor, region 0 everywhere.
    """
    hh = np.pad(np.asarray(heights, np.uint8), 1, mode="edge")
    gh, gw = hh.shape
    has = hh != 0xFF
    cnt = has.astype(np.uint8)
    idx = (np.cumsum(cnt.reshape(-1)) - cnt.reshape(-1)).astype(np.uint32).reshape(gh, gw)
    y = hh[has].astype(np.uint16)
    hi = hh.astype(np.int32)
    con = np.zeros((gh, gw), np.uint32)
    for d, (dx, dz) in enumerate(((-1, 0), (0, 1), (1, 0), (0, -1))):
        nb = np.full((gh, gw), -1000, np.int32)
        src = hi.copy()
        src[~has] = -1000
        ys = slice(max(dz, 0), gh + min(dz, 0))
        xs = slice(max(dx, 0), gw + min(dx, 0))
        yd = slice(max(-dz, 0), gh + min(-dz, 0))
        xd = slice(max(-dx, 0), gw + min(-dx, 0))
        nb[yd, xd] = src[ys, xs]
        ok = has & (nb >= 0) & (np.abs(nb - hi) <= climb)
        con |= np.where(ok, 0, _NOT_CONNECTED).astype(np.uint32) << np.uint32(6 * d)
    n = int(y.shape[0])
    b0 = np.asarray(orig, np.float32) - np.array([params.cs, 0, params.cs], np.float32)
    return CompactHeightfield(
        width=gw,
        height=gh,
        walkable_height=0,
        walkable_climb=int(climb),
        border_size=1,
        max_distance=0,
        max_regions=1,
        bmin=b0,
        bmax=b0 + np.array([gw * params.cs, 255 * params.ch, gh * params.cs], np.float32),
        cs=float(f32(params.cs)),
        ch=float(f32(params.ch)),
        cells_index=idx,
        cells_count=cnt,
        y=y,
        h=np.full(n, 255, np.uint8),
        con=con[has],
        reg=np.zeros(n, np.uint16),
        areas=np.ones(n, np.uint8),
        dist=np.zeros(n, np.uint16),
    )


def walkable_climb_vx(params: TileCacheParams) -> int:
    """``(int)(walkableClimb / ch)`` in float32, as ``buildNavMeshTile``."""
    return int(f32(params.walkable_climb) / f32(params.ch))


def build_layer_tile(
    data: bytes,
    params: TileCacheParams,
    obstacles: Sequence[Obstacle] = (),
    header: TileCacheLayerHeader | None = None,
    *,
    detail: bool = False,
    offmesh: OffMeshConnections | None = None,
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
    detail : bool
        navkit's default mode: add a detail mesh and a BV tree (see the module doc).
    offmesh : OffMeshConnections, optional
        Off-mesh connections; those whose start lies on the tile are stored in it.

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
    dmesh = None
    if detail:
        chf = layer_heightfield(heights, params, orig, climb)
        dmesh = build_poly_mesh_detail(
            pm,
            chf,
            sample_dist=float(f32(DETAIL_SAMPLE_DIST_CELLS) * f32(params.cs)),
            sample_max_error=float(f32(DETAIL_SAMPLE_MAX_ERROR_CH) * f32(params.ch)),
        )
    return create_navmesh_data(
        pm,
        dmesh,
        walkable_height=params.walkable_height,
        walkable_radius=params.walkable_radius,
        walkable_climb=params.walkable_climb,
        tile_x=hd.tx,
        tile_y=hd.ty,
        layer=hd.tlayer,
        build_bv_tree=detail,
        area_remap=None,
        flags=None,
        offmesh=offmesh,
    )
