"""Tile cache build: every tile's heightfield layers, compressed, as a tile cache set.

This is RecastDemo's ``Sample_TempObstacles`` preprocessing (through the
@recast-navigation ``generateTileCache`` the Recast peer runs): for each tile, in
row order, rasterize with the border, the three filters, the compact heightfield,
erode by the agent radius, :func:`~navkit.tilecache.layers.build_heightfield_layers`,
then one compressed tile per layer (``dtBuildTileCacheLayer`` with FastLZ), added to
the cache in that order.

The tile grid, tile bounds, triangle binning and the executor loop are the tile
pipeline's (:mod:`navkit.pipeline`), shared with the bake; the stages up to the
eroded compact heightfield are the bake's own
(:func:`navkit.recast.build.tile_compact_heightfield`). A tile here is a pure
function of (mesh, config, tile coordinates): :func:`tile_layers`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Executor
from typing import NamedTuple

import numpy as np

from ..detour.navmesh import NavMeshParams
from ..errors import BuildError, ConfigError, InputError
from ..geometry.trimesh import TriMesh
from ..pipeline import (
    TileGrid,
    _next_pow2,
    bin_triangles,
    mesh_bounds,
    run_tiles,
    tile_bounds,
    tile_coords,
    tile_grid,
    tiled_navmesh_params,
)
from ..recast import _chain
from ..recast import rasterize as _rasterize
from ..recast.build import _front_error
from ..recast.config import BakeConfig, RcConfig
from .format import (
    CompressedTile,
    TileCacheLayerHeader,
    TileCacheParams,
    TileCacheSet,
    _check_header,
    _compress_layer,
)
from .layers import HeightfieldLayerSet, _layers_of_arrays

__all__ = [
    "TileLayers",
    "tile_layers",
    "build_tile_layers",
    "build_tile_cache",
]

f32 = np.float32


class TileLayers(NamedTuple):
    """The layers of one tile: the layer set and each layer's compressed tile data."""

    tx: int
    ty: int
    layers: HeightfieldLayerSet | None
    data: tuple[bytes, ...]
    #: The header of each layer's compressed tile (``data[i]``'s first 56 bytes, parsed).
    headers: tuple[TileCacheLayerHeader, ...] = ()


def _layer_headers(lset: HeightfieldLayerSet, tx: int, ty: int) -> list[TileCacheLayerHeader]:
    bmin, bmax = lset.bmin.tolist(), lset.bmax.tolist()
    hmin, hmax = lset.hmin.tolist(), lset.hmax.tolist()
    minx, maxx = lset.minx.tolist(), lset.maxx.tolist()
    miny, maxy = lset.miny.tolist(), lset.maxy.tolist()
    return [
        TileCacheLayerHeader(
            tx=tx,
            ty=ty,
            tlayer=i,
            bmin=tuple(bmin[i]),
            bmax=tuple(bmax[i]),
            hmin=hmin[i],
            hmax=hmax[i],
            width=lset.width,
            height=lset.height,
            minx=minx[i],
            maxx=maxx[i],
            miny=miny[i],
            maxy=maxy[i],
        )  # fmt: skip
        for i in range(lset.nlayers)
    ]


def _tile_chf(
    vertices: np.ndarray, triangles: np.ndarray, tri_areas: np.ndarray, rc: RcConfig,
    filters: tuple[bool, bool, bool], tbmin: np.ndarray, tbmax: np.ndarray, sel: np.ndarray,
) -> tuple:  # fmt: skip
    """Rasterize ``triangles[sel]``, filter, compact and erode one tile in one kernel call
    (the solo bake's chained stages; equal to
    :func:`~navkit.recast.build.tile_compact_heightfield`'s stage by stage calls).
    Returns :func:`~navkit.tilecache.layers._layers_of_arrays`'s first arguments."""
    size = rc.tile_size + 2 * rc.border_size
    cs32, ch32 = np.float32(rc.cs), np.float32(rc.ch)
    _rasterize.check_grid(size, size, tbmin, tbmax, ch32)
    wh = int(rc.walkable_height)
    info = np.zeros(8, np.int64)
    cidx, ccnt, ys, _, con, areas = _chain.front_kernel(
        vertices, triangles, tri_areas, sel, True, size, size, tbmin, tbmax, cs32, ch32, wh,
        int(rc.walkable_climb), int(rc.walkable_radius), filters[0], filters[1], filters[2],
        info, np.zeros(len(_chain.FRONT) + 1, np.int64),
    )  # fmt: skip
    if info[0] != _chain.OK:
        _front_error(int(info[0]), int(info[1]))
    cbmax = tbmax.copy()  # the compact heightfield's: raised by the walkable height
    cbmax[1] = np.float32(cbmax[1] + np.float32(np.float32(wh) * ch32))
    arrays = (cidx.reshape(-1), ccnt.reshape(-1), con, areas)
    return arrays, ys, size, size, cs32, ch32, tbmin, cbmax


def tile_layers(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray,
    rc: RcConfig,
    filters: tuple[bool, bool, bool],
    tbmin: np.ndarray,
    tbmax: np.ndarray,
    sel: np.ndarray,
    tx: int,
    ty: int,
) -> TileLayers:
    """Tile (tx, ty) of the cache build: a pure function, safe to run in another process.

    Parameters
    ----------
    vertices : (n, 3) float32
        The whole mesh's vertices (validated).
    triangles : (m, 3) int32
    tri_areas : (m,) uint8
        Area id of every triangle of the mesh.
    rc : RcConfig
    filters : (bool, bool, bool)
        The bake's three span filters.
    tbmin, tbmax : (3,) float32
        Tile bounds with the border [wu] (:func:`navkit.pipeline.tile_bounds`).
    sel : (k,) int64
        Indices of the triangles overlapping the tile (:func:`navkit.pipeline.bin_triangles`).
    tx, ty : int
        Tile coordinates.
    """
    if sel.size == 0:
        return TileLayers(tx, ty, None, ())
    arrays, ys, w, h, cs32, ch32, bmin, bmax = _tile_chf(
        vertices, triangles, tri_areas, rc, filters, tbmin, tbmax, sel
    )
    lset = _layers_of_arrays(
        arrays, ys, w, h, cs32, ch32, bmin, bmax, rc.border_size, int(rc.walkable_height)
    )
    headers = tuple(_layer_headers(lset, tx, ty))
    for h in headers:
        _check_header(h, "layer", BuildError)
    n, cells = lset.nlayers, lset.width * lset.height
    raw = np.concatenate(
        (
            lset.heights.reshape(n, cells),
            lset.areas.reshape(n, cells),
            lset.cons.reshape(n, cells),
        ),
        axis=1,
    )  # (nlayers, 3 * width * height): each layer's heights | areas | cons
    data = tuple(_compress_layer(h, raw[i]) for i, h in enumerate(headers))
    return TileLayers(tx, ty, lset, data, headers)


def _prepare(mesh: TriMesh, config: BakeConfig):
    if not isinstance(mesh, TriMesh):
        raise InputError(f"the tile cache needs a TriMesh, got {type(mesh).__name__}")
    if not isinstance(config, BakeConfig):
        raise InputError(f"config must be a BakeConfig, got {type(config).__name__}")
    if config.tile_size <= 0:
        raise ConfigError("tile_size", "the tile cache needs tiles: tile_size must be > 0")
    rc = config.voxel()
    if rc.tile_size > 255:
        raise ConfigError("tile_size", f"{rc.tile_size} exceeds 255, the largest layer side")
    bmin, bmax = mesh_bounds(mesh)
    verts = _rasterize._as_vertices(mesh.vertices)
    tris = _rasterize._as_triangles(mesh.triangles, verts.shape[0])
    if mesh.areas is None:
        tri_areas = _rasterize.mark_walkable_triangles(verts, tris, rc.walkable_slope_angle)
    else:
        tri_areas = _rasterize._as_areas(mesh.areas, tris.shape[0], "areas")
    grid = tile_grid(bmin, bmax, rc)
    filters = (
        config.filter_low_hanging_obstacles,
        config.filter_ledge_spans,
        config.filter_walkable_low_height_spans,
    )
    return rc, verts, tris, tri_areas, grid, filters


def build_tile_layers(mesh: TriMesh, config: BakeConfig, tx: int, ty: int) -> TileLayers:
    """The layers of tile (tx, ty) of ``mesh`` (for inspection and tests).

    Raises
    ------
    InputError
        Tile coordinates outside the grid, or a bad mesh.
    ConfigError
        ``config.tile_size`` is 0 or above 255.
    """
    rc, verts, tris, tri_areas, grid, filters = _prepare(mesh, config)
    if not (0 <= tx < grid.tiles_x and 0 <= ty < grid.tiles_z):
        raise InputError(f"tile ({tx}, {ty}) outside the {grid.tiles_x} x {grid.tiles_z} grid")
    start, binned = bin_triangles(verts, tris, grid, rc)
    k = ty * grid.tiles_x + tx
    tbmin, tbmax = tile_bounds(grid, rc, tx, ty)
    return tile_layers(
        verts, tris, tri_areas, rc, filters, tbmin, tbmax, binned[start[k] : start[k + 1]], tx, ty
    )


def _params(
    grid: TileGrid, rc: RcConfig, expected_layers_per_tile: int, max_obstacles: int
) -> tuple[NavMeshParams, TileCacheParams]:
    """The navmesh and tile cache params ``generateTileCache`` sets up."""
    ntiles = grid.tiles_x * grid.tiles_z * expected_layers_per_tile
    # the generators compute the tile size in JavaScript numbers; Detour stores float32
    tws = float(f32(float(rc.tile_size) * float(rc.cs)))
    nav = tiled_navmesh_params(grid.bmin, tws, ntiles)
    orig = nav.orig
    params = TileCacheParams(
        orig=orig, cs=float(f32(rc.cs)), ch=float(f32(rc.ch)),
        width=rc.tile_size, height=rc.tile_size,
        walkable_height=float(f32(rc.walkable_height * float(rc.ch))),
        walkable_radius=float(f32(rc.walkable_radius * float(rc.cs))),
        walkable_climb=float(f32(rc.walkable_climb * float(rc.ch))),
        max_simplification_error=float(f32(rc.max_simplification_error)),
        max_tiles=ntiles, max_obstacles=max_obstacles,
    )  # fmt: skip
    return nav, params


def build_tile_cache(
    mesh: TriMesh,
    config: BakeConfig,
    *,
    expected_layers_per_tile: int = 4,
    max_obstacles: int = 128,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TileCacheSet:
    """Build the tile cache of ``mesh``: every tile's layers, compressed, in slot order.

    Parameters
    ----------
    mesh : TriMesh
    config : BakeConfig
        ``tile_size`` (1..255 voxels) and the agent settings; the peer uses 48.
    expected_layers_per_tile : int
        Sizes the cache: ``max_tiles = tiles_x * tiles_z * expected_layers_per_tile``.
    max_obstacles : int
        Obstacle slots recorded in the params.
    executor : concurrent.futures.Executor, optional
        Builds tiles in parallel; results are added in row order either way.
    progress : callable(done, total), optional

    Returns
    -------
    TileCacheSet
        Byte for byte what ``exportTileCache`` writes for Recast's own build.

    Raises
    ------
    ConfigError
        ``tile_size`` 0 or above 255, ``expected_layers_per_tile`` < 1,
        ``max_obstacles`` < 0, or more layers than the cache holds.
    """
    if not (isinstance(expected_layers_per_tile, int) and expected_layers_per_tile >= 1):
        raise ConfigError(
            "expected_layers_per_tile", f"must be an int >= 1, got {expected_layers_per_tile!r}"
        )
    if not (isinstance(max_obstacles, int) and 0 <= max_obstacles <= 1 << 22):
        raise ConfigError("max_obstacles", f"must be an int in 0..2^22, got {max_obstacles!r}")
    rc, verts, tris, tri_areas, grid, filters = _prepare(mesh, config)
    nav, params = _params(grid, rc, expected_layers_per_tile, max_obstacles)
    if params.max_tiles > 1 << 22:
        raise ConfigError("expected_layers_per_tile", f"{params.max_tiles} cache slots is too many")
    start, binned = bin_triangles(verts, tris, grid, rc)
    coords = tile_coords(grid.tiles_x, grid.tiles_z)

    def args(x: int, y: int) -> tuple:
        k = y * grid.tiles_x + x
        tbmin, tbmax = tile_bounds(grid, rc, x, y)
        return (
            verts,
            tris,
            tri_areas,
            rc,
            filters,
            tbmin,
            tbmax,
            binned[start[k] : start[k + 1]],
            x,
            y,
        )

    results = run_tiles(tile_layers, coords, args, executor, progress)
    tile_bits = int(math.log2(_next_pow2(params.max_tiles)))
    tiles: list[CompressedTile] = []
    for x, y in coords:
        r = results[(x, y)]
        for header, data in zip(r.headers, r.data, strict=True):
            if len(tiles) >= params.max_tiles:
                raise ConfigError(
                    "expected_layers_per_tile",
                    f"more than {params.max_tiles} layers; raise expected_layers_per_tile",
                )
            ref = (1 << tile_bits) | len(tiles)  # salt 1, slots filled in order
            tiles.append(CompressedTile(ref, header, data))
    return TileCacheSet(nav, params, tuple(tiles))
