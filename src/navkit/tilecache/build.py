"""Tile cache build: every tile's heightfield layers, compressed, as a tile cache set.

This is RecastDemo's ``Sample_TempObstacles`` preprocessing (through the
@recast-navigation ``generateTileCache`` the Recast peer runs): for each tile, in
row order, rasterize with the border, the three filters, the compact heightfield,
erode by the agent radius, :func:`~navkit.tilecache.layers.build_heightfield_layers`,
then one compressed tile per layer (``dtBuildTileCacheLayer`` with FastLZ), added to
the cache in that order.

The tile grid, tile bounds and triangle binning are the bake's
(:mod:`navkit.recast.build`), imported rather than copied, so the two stay one
tile pipeline; a tile here is a pure function of (mesh, config, tile coordinates).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import NamedTuple, TypeVar

import numpy as np

from ..detour.navmesh import NavMeshParams
from ..errors import ConfigError, InputError
from ..geometry.trimesh import TriMesh
from ..recast import area as _area
from ..recast import compact as _compact
from ..recast import filter as _filter
from ..recast import rasterize as _rasterize
from ..recast.build import TileGrid, _bin_triangles, mesh_bounds, tile_bounds, tile_grid
from ..recast.config import BakeConfig, RcConfig
from ..recast.types import CompactHeightfield
from .format import (
    CompressedTile,
    TileCacheLayerHeader,
    TileCacheParams,
    TileCacheSet,
    _header_from_bytes,
    build_tile_cache_layer,
)
from .layers import HeightfieldLayerSet, build_heightfield_layers

__all__ = [
    "TileLayers",
    "tile_compact_heightfield",
    "build_tile_layers",
    "build_tile_cache",
    "run_tiles",
]

f32 = np.float32


class TileLayers(NamedTuple):
    """The layers of one tile: the layer set and each layer's compressed tile data."""

    tx: int
    ty: int
    layers: HeightfieldLayerSet | None
    data: tuple[bytes, ...]


def tile_compact_heightfield(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray,
    rc: RcConfig,
    tbmin: np.ndarray,
    tbmax: np.ndarray,
    filters: tuple[bool, bool, bool] = (True, True, True),
) -> CompactHeightfield:
    """A tile's eroded compact heightfield, border included (the layers' input).

    ``vertices`` (n, 3) float32, ``triangles`` (m, 3) int32 (the tile's triangles),
    ``tri_areas`` (m,) uint8, already validated; ``tbmin``/``tbmax`` the tile bounds
    with border (:func:`navkit.recast.build.tile_bounds`).
    """
    size = rc.tile_size + 2 * rc.border_size
    cs32, ch32 = f32(rc.cs), f32(rc.ch)
    _rasterize.check_grid(size, size, tbmin, tbmax, ch32)
    hf = _rasterize._rasterize_run(
        vertices, triangles, tri_areas, size, size, tbmin, tbmax, cs32, ch32, int(rc.walkable_climb)
    )
    if filters[0]:
        hf = _filter._low_hanging_run(hf, int(rc.walkable_climb))
    if filters[1]:
        hf = _filter._ledge_run(hf, int(rc.walkable_height), int(rc.walkable_climb))
    if filters[2]:
        hf = _filter._low_height_run(hf, int(rc.walkable_height))
    chf = _compact._compact_run(hf, int(rc.walkable_height), int(rc.walkable_climb))
    return _area._erode_run(chf, int(rc.walkable_radius))


def _layer_headers(lset: HeightfieldLayerSet, tx: int, ty: int) -> list[TileCacheLayerHeader]:
    out = []
    for i in range(lset.nlayers):
        out.append(
            TileCacheLayerHeader(
                tx=tx,
                ty=ty,
                tlayer=i,
                bmin=tuple(float(v) for v in lset.bmin[i]),  # type: ignore[arg-type]
                bmax=tuple(float(v) for v in lset.bmax[i]),  # type: ignore[arg-type]
                hmin=int(lset.hmin[i]),
                hmax=int(lset.hmax[i]),
                width=lset.width,
                height=lset.height,
                minx=int(lset.minx[i]),
                maxx=int(lset.maxx[i]),
                miny=int(lset.miny[i]),
                maxy=int(lset.maxy[i]),
            )  # fmt: skip
        )
    return out


def _tile_layers(
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
    if sel.size == 0:
        return TileLayers(tx, ty, None, ())
    chf = tile_compact_heightfield(
        vertices, triangles[sel], tri_areas[sel], rc, tbmin, tbmax, filters
    )
    lset = build_heightfield_layers(chf, rc.border_size, rc.walkable_height)
    data = tuple(
        build_tile_cache_layer(h, lset.heights[i], lset.areas[i], lset.cons[i])
        for i, h in enumerate(_layer_headers(lset, tx, ty))
    )
    return TileLayers(tx, ty, lset, data)


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
    start, binned = _bin_triangles(verts, tris, grid, rc)
    k = ty * grid.tiles_x + tx
    tbmin, tbmax = tile_bounds(grid, rc, tx, ty)
    return _tile_layers(
        verts, tris, tri_areas, rc, filters, tbmin, tbmax, binned[start[k] : start[k + 1]], tx, ty
    )


def _params(
    grid: TileGrid, rc: RcConfig, expected_layers_per_tile: int, max_obstacles: int
) -> tuple[NavMeshParams, TileCacheParams]:
    """The navmesh and tile cache params ``generateTileCache`` sets up."""
    ntiles = grid.tiles_x * grid.tiles_z * expected_layers_per_tile
    tile_bits = min(int(math.log2(_next_pow2(ntiles))), 14)
    orig = (float(grid.bmin[0]), float(grid.bmin[1]), float(grid.bmin[2]))
    # the generators compute these in JavaScript numbers; Detour stores float32
    tws = float(f32(float(rc.tile_size) * float(rc.cs)))
    nav = NavMeshParams(
        orig=orig, tile_width=tws, tile_height=tws, max_tiles=1 << tile_bits,
        max_polys=1 << (22 - tile_bits),
    )  # fmt: skip
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


def _next_pow2(v: int) -> int:
    return 1 if v <= 1 else 1 << (v - 1).bit_length()


T = TypeVar("T")


def run_tiles(
    fn: Callable[..., T],
    coords: Sequence[tuple[int, int]],
    args: Callable[[int, int], tuple],
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[tuple[int, int], T]:
    """``fn(*args(x, y))`` for every tile, serially or on ``executor``.

    The bake's tile loop (:func:`navkit.recast.build.bake`) in a reusable form: the
    results are keyed by tile, so callers consume them in row order whatever order
    they completed in, and parallel builds equal serial ones. ``progress(done,
    total)`` is called after each tile.
    """
    results: dict[tuple[int, int], T] = {}
    total = len(coords)
    if executor is None:
        for i, (x, y) in enumerate(coords):
            results[(x, y)] = fn(*args(x, y))
            if progress is not None:
                progress(i + 1, total)
        return results
    from concurrent.futures import as_completed

    futs = {executor.submit(fn, *args(x, y)): (x, y) for x, y in coords}
    for i, fut in enumerate(as_completed(futs)):
        results[futs[fut]] = fut.result()
        if progress is not None:
            progress(i + 1, total)
    return results


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
    start, binned = _bin_triangles(verts, tris, grid, rc)
    coords = [(x, y) for y in range(grid.tiles_z) for x in range(grid.tiles_x)]

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

    results = run_tiles(_tile_layers, coords, args, executor, progress)
    tile_bits = int(math.log2(_next_pow2(params.max_tiles)))
    tiles: list[CompressedTile] = []
    for x, y in coords:
        for data in results[(x, y)].data:
            if len(tiles) >= params.max_tiles:
                raise ConfigError(
                    "expected_layers_per_tile",
                    f"more than {params.max_tiles} layers; raise expected_layers_per_tile",
                )
            ref = (1 << tile_bits) | len(tiles)  # salt 1, slots filled in order
            tiles.append(CompressedTile(ref, _header_from_bytes(data, "layer"), data))
    return TileCacheSet(nav, params, tuple(tiles))
