"""The tile pipeline: how a level becomes tiles, and tiles a Detour navmesh.

Both the bake (:func:`bake`) and the tile cache (:mod:`navkit.tilecache`) run
the same loop, which lives here, above ``navkit.recast`` (the voxel stages, which
never import ``detour``) and ``navkit.detour`` (the runtime tiles):

1. **tile grid** -- :func:`tile_grid` cuts the level's bounds into
   ``tile_size``-voxel tiles as RecastDemo's Sample_TileMesh does; :func:`tile_bounds`
   gives one tile's bounds with its ``border_size`` border, bit for bit as Recast's.
2. **triangle binning** -- :func:`bin_triangles` lists the triangles overlapping
   every tile at once (a CSR over row-major tiles, the job of Recast's chunky mesh).
3. **executor and progress** -- :func:`run_tiles` runs a pure per-tile function
   serially or on any ``concurrent.futures.Executor`` and reports ``progress(done,
   total)``; results are keyed by tile, so callers consume them in row order and a
   parallel build equals a serial one byte for byte.
4. **navmesh assembly** -- :func:`tiled_navmesh_params` sizes the navmesh's tile
   and polygon bits; :func:`add_tiles` adds the built tiles in order.

The bake's common case (watershed, no volume or off-mesh connection, no executor
or a thread pool) runs the whole tile loop in one kernel,
:func:`navkit._bake_tiles.tiles_kernel`, and adds its tiles with
``NavMesh._add_packed``; the per-tile path below gives the same navmesh. A solo
bake's common case (also without ``keep_intermediates``) is that kernel on a grid of
one tile without border, so both bakes share one compile.

A tile of the bake is :func:`build_tile` (the Recast stages of
:func:`navkit.recast.build.build_polymesh` on the tile's triangles); a tile of the
tile cache is :func:`navkit.tilecache.build.tile_layers` (its compressed
heightfield layers).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

import numpy as np

from ._jit import njit
from .detour import navmesh as _nm
from .detour import tile as _tile
from .errors import BuildError, InputError
from .geometry.trimesh import TriMesh
from .recast.build import (
    MAX_GRID_SIDE,
    MAX_SOLO_CELLS,
    ConvexVolume,
    TileResult,
    _build_chained,
    _build_polymesh_run,
    grid_size,
    mesh_bounds,
)
from .recast.config import BakeConfig, RcConfig

__all__ = [
    "TileGrid",
    "tile_grid",
    "tile_bounds",
    "tile_triangles",
    "bin_triangles",
    "run_tiles",
    "tiled_navmesh_params",
    "add_tiles",
    "BuildReport",
    "build_tile",
    "bake",
    "ConvexVolume",
    "TileResult",
    "grid_size",
    "mesh_bounds",
]

f32 = np.float32
T = TypeVar("T")


# -- 1, 2: the tile grid and the triangles of each tile ----------------------------------------
class TileGrid(NamedTuple):
    """How a level is cut into tiles."""

    bmin: np.ndarray
    bmax: np.ndarray
    grid_width: int
    grid_height: int
    tiles_x: int
    tiles_z: int
    tile_world_size: float


def tile_grid(bmin: np.ndarray, bmax: np.ndarray, rc: RcConfig) -> TileGrid:
    """The tile layout RecastDemo's Sample_TileMesh uses for these bounds."""
    gw, gh = grid_size(bmin, bmax, rc.cs)
    ts = rc.tile_size
    tw, th = (gw + ts - 1) // ts, (gh + ts - 1) // ts
    return TileGrid(bmin, bmax, gw, gh, tw, th, float(f32(ts) * f32(rc.cs)))


def tile_bounds(grid: TileGrid, rc: RcConfig, tx: int, ty: int) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of tile (tx, ty) including its border [wu].

    Computed in double precision and rounded to float32 once, as the Recast
    generators do (they do this arithmetic in JavaScript numbers before handing
    the bounds to Recast), so tile headers match Recast's bit for bit.
    """
    tcs = float(rc.tile_size) * float(rc.cs)
    pad = float(rc.border_size) * float(rc.cs)
    bmin = grid.bmin.astype(np.float64)
    bmax = grid.bmax.astype(np.float64)
    tbmin = np.array([bmin[0] + tx * tcs - pad, bmin[1], bmin[2] + ty * tcs - pad])
    tbmax = np.array([bmin[0] + (tx + 1) * tcs + pad, bmax[1], bmin[2] + (ty + 1) * tcs + pad])
    return tbmin.astype(np.float32), tbmax.astype(np.float32)


def _tile_bounds_table(
    grid: TileGrid, rc: RcConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tile_bounds` of every column and row at once: x bounds of tile column
    ``tx`` are ``(xs_lo[tx], xs_hi[tx])``, z bounds of row ``ty`` ``(zs_lo[ty],
    zs_hi[ty])`` (float32, the same values: x depends only on ``tx``, z on ``ty``)."""
    tcs = float(rc.tile_size) * float(rc.cs)
    pad = float(rc.border_size) * float(rc.cs)
    b0 = float(np.float64(grid.bmin[0]))
    b2 = float(np.float64(grid.bmin[2]))
    tx = np.arange(grid.tiles_x, dtype=np.float64)
    tz = np.arange(grid.tiles_z, dtype=np.float64)
    # the same float64 expressions as tile_bounds, element by element
    xs_lo = ((b0 + tx * tcs) - pad).astype(np.float32)
    xs_hi = ((b0 + (tx + 1) * tcs) + pad).astype(np.float32)
    zs_lo = ((b2 + tz * tcs) - pad).astype(np.float32)
    zs_hi = ((b2 + (tz + 1) * tcs) + pad).astype(np.float32)
    return xs_lo, xs_hi, zs_lo, zs_hi


def tile_triangles(
    mesh_v: np.ndarray, mesh_t: np.ndarray, tbmin: np.ndarray, tbmax: np.ndarray
) -> np.ndarray:
    """Indices of triangles whose xz bounds overlap the tile's (a cheap prefilter)."""
    tv = mesh_v[mesh_t]  # (m, 3, 3)
    lo = tv.min(axis=1)
    hi = tv.max(axis=1)
    keep = (
        (hi[:, 0] >= tbmin[0])
        & (lo[:, 0] <= tbmax[0])
        & (hi[:, 2] >= tbmin[2])
        & (lo[:, 2] <= tbmax[2])
    )
    return np.flatnonzero(keep)


@njit
def _first_above(xs, v, strict):  # pragma: no cover - numba
    """``np.searchsorted(xs, v, side="right" if strict else "left")`` on ascending ``xs``:
    the first index with ``xs[i] > v`` (strict) or ``xs[i] >= v``."""
    lo = 0
    hi = xs.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if xs[mid] > v or (not strict and xs[mid] == v):
            hi = mid
        else:
            lo = mid + 1
    return lo


#: a triangle's share of a tile's estimated build cost, in square world units of
#: walkable area (about what one more triangle costs to rasterize)
_TRI_COST = 0.05


@njit
def _bin_kernel(verts, tris, xs_lo, xs_hi, zs_lo, zs_hi):  # pragma: no cover - numba
    """CSR of triangle indices per tile (row-major tiles, ascending triangle order) and
    each tile's estimated build cost.

    Tile column ``tx`` spans ``[xs_lo[tx], xs_hi[tx]]`` in x, row ``ty`` ``[zs_lo[ty],
    zs_hi[ty]]`` in z (both ascending); a triangle is in every tile its xz bounds
    overlap. The cost of a tile is the xz area of its triangles (each triangle's share
    in proportion to how much of its xz bounds the tile covers) plus :data:`_TRI_COST`
    per triangle: most stages of a tile take time about proportional to its spans."""
    m = tris.shape[0]
    tiles_x = xs_lo.shape[0]
    tiles_z = zs_lo.shape[0]
    ntiles = tiles_x * tiles_z
    box = np.empty((m, 4), verts.dtype)  # x_lo, x_hi, z_lo, z_hi
    rng = np.empty((m, 4), np.int64)  # x0, x1, z0, z1
    area = np.empty(m, np.float64)  # xz area over xz bounds area
    start = np.zeros(ntiles + 1, np.int64)
    for i in range(m):
        a = tris[i, 0]
        b = tris[i, 1]
        c = tris[i, 2]
        x_lo = min(verts[a, 0], min(verts[b, 0], verts[c, 0]))
        x_hi = max(verts[a, 0], max(verts[b, 0], verts[c, 0]))
        z_lo = min(verts[a, 2], min(verts[b, 2], verts[c, 2]))
        z_hi = max(verts[a, 2], max(verts[b, 2], verts[c, 2]))
        box[i, 0] = x_lo
        box[i, 1] = x_hi
        box[i, 2] = z_lo
        box[i, 3] = z_hi
        # first tile with tile_hi >= tri_lo .. last tile with tile_lo <= tri_hi
        x0 = _first_above(xs_hi, x_lo, False)
        x1 = min(_first_above(xs_lo, x_hi, True) - 1, tiles_x - 1)
        z0 = _first_above(zs_hi, z_lo, False)
        z1 = min(_first_above(zs_lo, z_hi, True) - 1, tiles_z - 1)
        rng[i, 0] = x0
        rng[i, 1] = x1
        rng[i, 2] = z0
        rng[i, 3] = z1
        ux = np.float64(verts[b, 0]) - np.float64(verts[a, 0])
        uz = np.float64(verts[b, 2]) - np.float64(verts[a, 2])
        vx = np.float64(verts[c, 0]) - np.float64(verts[a, 0])
        vz = np.float64(verts[c, 2]) - np.float64(verts[a, 2])
        bx = np.float64(x_hi) - np.float64(x_lo)
        bz = np.float64(z_hi) - np.float64(z_lo)
        area[i] = 0.5 * abs(ux * vz - uz * vx) / (bx * bz) if bx * bz > 0.0 else 0.0
        for tz in range(z0, z1 + 1):
            for tx in range(x0, x1 + 1):
                start[tz * tiles_x + tx + 1] += 1
    for k in range(ntiles):
        start[k + 1] += start[k]
    fill = start[:-1].copy()
    out = np.empty(start[ntiles], np.int64)
    cost = np.zeros(ntiles, np.float64)
    for i in range(m):
        for tz in range(rng[i, 2], rng[i, 3] + 1):
            dz = min(box[i, 3], zs_hi[tz]) - max(box[i, 2], zs_lo[tz])
            for tx in range(rng[i, 0], rng[i, 1] + 1):
                k = tz * tiles_x + tx
                out[fill[k]] = i
                fill[k] += 1
                dx = min(box[i, 1], xs_hi[tx]) - max(box[i, 0], xs_lo[tx])
                cost[k] += area[i] * np.float64(dx) * np.float64(dz) + _TRI_COST
    return start, out, cost


def bin_triangles(
    mesh_v: np.ndarray, mesh_t: np.ndarray, grid: TileGrid, rc: RcConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Triangles overlapping every tile, computed once for the whole grid.

    Gives exactly :func:`tile_triangles` for each tile: a triangle's xz bounds are
    compared with the same float32 tile bounds, whose columns (rows) increase
    monotonically, so the overlapped tiles form a range found by binary search.

    Returns
    -------
    start : (tiles_x * tiles_z + 1,) int64
        Tile ``ty * tiles_x + tx`` holds ``tris[start[k]:start[k + 1]]``.
    tris : (total,) int64
        Triangle indices, ascending within each tile.
    """
    start, tris, _cost = _bin_kernel(mesh_v, mesh_t, *_tile_bounds_table(grid, rc))
    return start, tris


@njit
def _mesh_scan(verts, tris):  # pragma: no cover - numba
    """Bounds of the vertices the triangles use (:func:`mesh_bounds`) and the number of
    zero-area triangles (``TriMesh.degenerate_mask().sum()``: the float64 cross
    product of two edges is exactly zero) in one pass."""
    used = np.zeros(verts.shape[0], np.bool_)
    ndeg = 0
    for t in range(tris.shape[0]):
        a = tris[t, 0]
        b = tris[t, 1]
        c = tris[t, 2]
        used[a] = True
        used[b] = True
        used[c] = True
        ax = np.float64(verts[a, 0])
        ay = np.float64(verts[a, 1])
        az = np.float64(verts[a, 2])
        e0x = np.float64(verts[b, 0]) - ax
        e0y = np.float64(verts[b, 1]) - ay
        e0z = np.float64(verts[b, 2]) - az
        e1x = np.float64(verts[c, 0]) - ax
        e1y = np.float64(verts[c, 1]) - ay
        e1z = np.float64(verts[c, 2]) - az
        cx = e0y * e1z - e0z * e1y
        cy = e0z * e1x - e0x * e1z
        cz = e0x * e1y - e0y * e1x
        if cx * cx + cy * cy + cz * cz == 0.0:
            ndeg += 1
    lo = np.empty(3, verts.dtype)
    hi = np.empty(3, verts.dtype)
    first = True
    for i in range(verts.shape[0]):
        if not used[i]:
            continue
        for k in range(3):
            v = verts[i, k]
            if first or v < lo[k]:
                lo[k] = v
            if first or v > hi[k]:
                hi[k] = v
        first = False
    return lo, hi, ndeg


# -- 3: executor and progress ------------------------------------------------------------------
def tile_coords(tiles_x: int, tiles_z: int) -> list[tuple[int, int]]:
    """Every tile ``(x, y)`` of a ``tiles_x`` by ``tiles_z`` grid, in row order."""
    return [(x, y) for y in range(tiles_z) for x in range(tiles_x)]


def run_tiles(
    fn: Callable[..., T],
    coords: Sequence[tuple[int, int]],
    args: Callable[[int, int], tuple],
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[tuple[int, int], T]:
    """``fn(*args(x, y))`` for every tile of ``coords``, serially or on ``executor``.

    Parameters
    ----------
    fn : callable
        A pure, module-level function (so that a process or cluster executor can
        pickle it).
    coords : sequence of (int, int)
        The tiles, in the order the caller will consume them.
    args : callable(x, y) -> tuple
        The arguments of tile ``(x, y)``.
    executor : concurrent.futures.Executor, optional
        Runs the tiles in parallel (threads, processes, or a dask cluster).
    progress : callable(done, total), optional
        Called after each finished tile, in completion order.

    Returns
    -------
    dict
        ``(x, y) -> fn(...)``, whatever order the tiles finished in.
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


# -- 4: navmesh assembly -----------------------------------------------------------------------
def _next_pow2(v: int) -> int:
    return 1 if v <= 1 else 1 << (v - 1).bit_length()


def tiled_navmesh_params(
    orig: Sequence[float] | np.ndarray, tile_world_size: float, max_tiles: int
) -> _nm.NavMeshParams:
    """The navmesh params of a tiled build: ``max_tiles`` rounded up to a power of two
    (at most 2^14 tile slots), the remaining bits of a 22-bit ref for polygons, as
    the Recast generators set up ``dtNavMesh::init``."""
    tile_bits = min(int(math.log2(_next_pow2(max_tiles))), 14)
    return _nm.NavMeshParams(
        orig=(float(orig[0]), float(orig[1]), float(orig[2])),
        tile_width=tile_world_size,
        tile_height=tile_world_size,
        max_tiles=1 << tile_bits,
        max_polys=1 << (22 - tile_bits),
    )


def add_tiles(navmesh: _nm.NavMesh, tiles: Iterable[_tile.TileData]) -> list[int]:
    """Add tiles navkit just built (no array checks) to ``navmesh``, in order, and return
    their refs: the same slots, links and refs as ``dtNavMesh::addTile`` one after the
    other, with one link kernel call for all of them (``NavMesh._add_tiles``)."""
    return navmesh._add_tiles(list(tiles))


# -- the bake ----------------------------------------------------------------------------------
@dataclass
class BuildReport:
    """Timings and intermediate counts of a bake.

    Attributes
    ----------
    timings : dict of str to float
        Milliseconds per stage, summed over tiles.
    counts : dict of str to int
        ``spans``, ``walkable_spans``, ``compact_spans``, ``regions``, ``contours``,
        ``contour_verts``, ``raw_contour_verts``, ``polys``, ``poly_verts``,
        ``detail_verts``, ``detail_tris``, summed over tiles.
    total_ms : float
        Wall time of the whole bake.
    grid_tiles : int
        Tiles of the bake's grid (1 for a solo bake): ``tiles_built + tiles_empty``.
    tiles_built : int
        Grid tiles that gave polygons: the navmesh's tiles (``stats()["tiles"]``).
    tiles_empty : int
        Grid tiles that gave no polygon (nothing walkable there): not in the navmesh.
    degenerate_triangles : int
        Zero-area input triangles (rasterize to nothing; reported, not fatal).
    intermediates : dict or None
        Solo builds with ``keep_intermediates=True``: the stage outputs by name.
    """

    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    total_ms: float = 0.0
    grid_tiles: int = 0
    tiles_built: int = 0
    tiles_empty: int = 0
    degenerate_triangles: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    intermediates: dict[str, Any] | None = None
    #: Region id of every ground polygon, in tile-slot then polygon order (for drawing).
    poly_regions: np.ndarray | None = None

    def add(self, r: TileResult) -> None:
        for k, v in r.timings.items():
            self.timings[k] = self.timings.get(k, 0.0) + v
        for k, v in r.counts.items():
            self.counts[k] = self.counts.get(k, 0) + v

    def as_dict(self) -> dict[str, Any]:
        return {
            "timings_ms": {k: round(v, 4) for k, v in self.timings.items()},
            "counts": dict(self.counts),
            "total_ms": round(self.total_ms, 4),
            "grid_tiles": self.grid_tiles,
            "tiles_built": self.tiles_built,
            "tiles_empty": self.tiles_empty,
            "degenerate_triangles": self.degenerate_triangles,
            "config": dict(self.config),
        }


def build_tile(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray | None,
    config: BakeConfig,
    grid: TileGrid,
    tx: int,
    ty: int,
    volumes: Sequence[ConvexVolume] = (),
    *,
    tri_sel: np.ndarray | None = None,
) -> TileResult:
    """Build tile (tx, ty) of a tiled bake: a pure function, safe to run in another process.

    ``tri_sel`` (optional) gives the indices of the triangles overlapping the tile
    (as :func:`bake` precomputes them for all tiles at once); by default they are
    found here.
    """
    rc = config.voxel()
    tbmin, tbmax = tile_bounds(grid, rc, tx, ty)
    from .recast.rasterize import _as_areas, _as_triangles, _as_vertices

    vertices = _as_vertices(vertices)
    triangles = _as_triangles(triangles, vertices.shape[0])
    if tri_areas is not None:
        tri_areas = _as_areas(tri_areas, triangles.shape[0], "tri_areas")
    sel = tile_triangles(vertices, triangles, tbmin, tbmax) if tri_sel is None else tri_sel
    return _build_tile(
        vertices, triangles, tri_areas, config, rc, tbmin, tbmax, sel, tx, ty, volumes
    )


def _build_tile(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray | None,
    config: BakeConfig,
    rc: RcConfig,
    tbmin: np.ndarray,
    tbmax: np.ndarray,
    sel: np.ndarray,
    tx: int,
    ty: int,
    volumes: Sequence[ConvexVolume] = (),
) -> TileResult:
    if sel.size == 0:
        return TileResult(tx, ty, None, None, {}, {}, None)
    size = rc.tile_size + 2 * rc.border_size
    filters = (
        config.filter_low_hanging_obstacles,
        config.filter_ledge_spans,
        config.filter_walkable_low_height_spans,
    )
    if not volumes and tri_areas is not None:
        # the tile's triangles are picked inside the kernel (no per-tile copies)
        return _build_chained(
            vertices, triangles, tri_areas, sel, rc, tbmin, tbmax, size, size,
            config.partition, filters, tx, ty,
        )  # fmt: skip
    areas = None if tri_areas is None else tri_areas[sel]
    return _build_polymesh_run(
        vertices,
        triangles[sel],
        areas,
        rc,
        bmin=tbmin,
        bmax=tbmax,
        width=size,
        height=size,
        partition=config.partition,
        filters=filters,
        volumes=volumes,
        tx=tx,
        ty=ty,
    )


def _bake_tile(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray | None,
    config: BakeConfig,
    rc: RcConfig,
    tbmin: np.ndarray,
    tbmax: np.ndarray,
    sel: np.ndarray,
    tx: int,
    ty: int,
    volumes: Sequence[ConvexVolume],
    offmesh: Any,
    tile_params: dict[str, Any],
) -> tuple[TileResult, _tile.TileData | None, float]:
    """One tile of :func:`bake`, built and converted to Detour's tile data in the worker
    (so that a thread or process pool also runs ``create_navmesh_data`` in parallel).

    Returns the tile result, its tile data (None for an empty tile) and the
    milliseconds ``create_navmesh_data`` took.
    """
    r = _build_tile(vertices, triangles, tri_areas, config, rc, tbmin, tbmax, sel, tx, ty, volumes)
    if r.pmesh is None:
        return r, None, 0.0
    t0 = time.perf_counter()
    data = _tile.create_navmesh_data(
        r.pmesh, r.dmesh, tile_x=tx, tile_y=ty, offmesh=offmesh, **tile_params
    )
    return r, data, (time.perf_counter() - t0) * 1e3


# -- the tile loop in a kernel -----------------------------------------------------------------
def _kernel_bake_ok(
    config: BakeConfig, volumes: Sequence[ConvexVolume], offmesh: Any, executor
) -> bool:
    """Whether :func:`_bake_tiles_in_kernel` can build this bake's tiles: the watershed
    partition, no volume, no off-mesh connection, no executor or a thread pool."""
    return (
        config.partition == "watershed"
        and not volumes
        and _tile._no_offmesh(offmesh)
        and (executor is None or isinstance(executor, ThreadPoolExecutor))
    )


def _threads_of(executor: Executor | None) -> int:
    if executor is None:
        return 1
    return max(1, int(getattr(executor, "_max_workers", 1)))


def _bake_tiles_in_kernel(
    report: BuildReport,
    verts: np.ndarray,
    tris: np.ndarray,
    tri_areas: np.ndarray,
    bin_start: np.ndarray,
    bin_tris: np.ndarray,
    cost: np.ndarray | None,
    tiles_x: int,
    width: int,
    height: int,
    border: int,
    rc: RcConfig,
    config: BakeConfig,
    bounds: tuple,
    tile_params: dict[str, Any],
    executor: Executor | None,
    progress: Callable[[int, int], None] | None,
    navmesh_for: Callable[[_nm.PackedTiles], _nm.NavMesh],
) -> _nm.NavMesh | None:
    """The tiles of :func:`bake` through :func:`navkit._bake_tiles.tiles_kernel`, on
    the calling thread or on a thread pool's threads, added in row order to the
    navmesh ``navmesh_for(tiles)`` gives (None when no tile was built): the same
    navmesh, report and exceptions as :func:`_bake_tile` per tile. A solo bake is a
    grid of one ``width`` x ``height`` tile without border. ``cost`` (optional): each
    tile's estimated build cost (:func:`_bin_kernel`), which orders the tiles for the
    threads."""
    from . import _bake_tiles as K
    from .recast import _chain
    from .recast import contours as _contours
    from .recast.rasterize import check_grid

    xs_lo, xs_hi, zs_lo, zs_hi, y_lo, y_hi = bounds
    ntiles = bin_start.shape[0] - 1
    if ntiles == 0:  # a grid without tiles: nothing to build, as in the per-tile loop
        return None
    cs32, ch32 = np.float32(rc.cs), np.float32(rc.ch)
    sd = np.float32(rc.detail_sample_dist)
    sme = np.float32(rc.detail_sample_max_error)
    if not (np.isfinite(sd) and sd >= 0 and np.isfinite(sme) and sme >= 0):
        raise InputError(f"detail sample settings must be finite and >= 0, got {sd!r}, {sme!r}")
    tb0 = np.array([xs_lo[0], y_lo, zs_lo[0]], np.float32)
    tb1 = np.array([xs_hi[0], y_hi, zs_hi[0]], np.float32)
    check_grid(width, height, tb0, tb1, ch32)
    me = np.float32(rc.max_simplification_error)
    todo = np.flatnonzero(np.diff(bin_start)).astype(np.int64)
    status = np.zeros((ntiles, 7), np.int64)
    counts = np.zeros((ntiles, len(K.COUNT_NAMES)), np.int64)
    ticks = np.zeros((ntiles, K.N_TICKS), np.int64)
    sizes = np.zeros((ntiles, 5), np.int64)
    tbounds = np.zeros((ntiles, 6), np.float32)

    threaded = []  # set when threads took tiles out of row order

    def run(chunk: np.ndarray, threads: bool = True) -> list[tuple]:
        counter = np.zeros(1, np.int64)
        args: tuple[Any, ...] = (
            verts, tris, tri_areas, bin_start, bin_tris, chunk, counter, tiles_x,
            xs_lo, xs_hi, zs_lo, zs_hi, y_lo, y_hi, width, height, border, cs32, ch32,
            int(rc.walkable_height), int(rc.walkable_climb), int(rc.walkable_radius),
            config.filter_low_hanging_obstacles, config.filter_ledge_spans,
            config.filter_walkable_low_height_spans, int(rc.min_region_area),
            int(rc.merge_region_area), me, int(rc.max_edge_len),
            _contours.CONTOUR_TESS_WALL_EDGES, int(rc.max_verts_per_poly), sd, sme,
            max(1, int(math.ceil(me))), status, counts, ticks, sizes, tbounds,
        )  # fmt: skip
        nw = min(_threads_of(executor), chunk.shape[0])
        if executor is None or nw <= 1 or not threads:
            return [K.typed_part(K.tiles_kernel(*args))]
        # the threads take the tiles of highest estimated cost first, so that the last
        # tiles taken (while another thread may already wait) are small ones
        est = bin_start[chunk + 1] - bin_start[chunk] if cost is None else cost[chunk]
        args = (*args[:5], chunk[np.argsort(-est, kind="stable")], *args[6:])
        threaded.append(True)
        # nw - 1 workers on the pool and one on this thread, which would only wait
        futs = [executor.submit(K.tiles_kernel, *args) for _ in range(nw - 1)]
        try:
            mine = K.tiles_kernel(*args)
        finally:
            done = [f.result() for f in futs]
        return [K.typed_part(part) for part in (mine, *done)]

    parts: list[tuple] = []
    if progress is None:
        parts = run(todo)
    else:  # in chunks of grid rows, each reported when done
        step = max(1, -(-ntiles // 32))
        for lo in range(0, ntiles, step):
            hi = min(lo + step, ntiles)
            chunk = todo[(todo >= lo) & (todo < hi)]
            parts.extend(run(chunk))
            if _failed_tiles(status[chunk]).any():
                break  # raised below
            for done in range(lo + 1, hi + 1):
                progress(done, ntiles)
    if threaded and _failed_tiles(status[todo]).any():
        # threads took the tiles out of row order and stopped at a failure: the serial
        # loop's failure (the first in row order) and warnings come from a serial run
        for table in (status, counts, ticks, sizes, tbounds):
            table[:] = 0
        parts = run(todo, threads=False)
    st = status[todo]
    level = st[:, 6]
    # the first failed tile in row order (the serial loop's exception), after the
    # warnings of the tiles before it
    failed = _failed_tiles(st)
    first = int(np.argmax(failed)) if failed.any() else todo.shape[0]
    bad = np.flatnonzero(
        (level[: first + 1] >= 2) & ((st[: first + 1, 4] != 0) | (st[: first + 1, 5] != 0))
    )
    if bad.size:
        from .recast import polymesh as _polymesh

        for i in bad.tolist():
            _polymesh._warn_bad(int(st[i, 4]), int(st[i, 5]))
    if first < todo.shape[0]:
        _raise_tile_error(st[first], float(sd))
    t0 = time.perf_counter()
    # report: the counts and stage timings summed over the tiles
    valid = level[:, None] >= _COUNT_NEED  # which counts each tile reports
    sums = (counts[todo] * valid).sum(axis=0).tolist()
    for j in np.flatnonzero(valid.any(axis=0)).tolist():
        name = K.COUNT_NAMES[j]
        report.counts[name] = report.counts.get(name, 0) + int(sums[j])
    tk = ticks[todo]
    ms = _chain.tick_ms()
    names = (*_chain.FRONT, "build_distance_field", "build_regions", *_chain.BACK)
    durs = _stamps_ms(tk[:, K.TK_FRONT : K.TK_TILE], ms)
    del durs[K.TK_BACK - 1]  # from the regions' end to the back kernel's start
    for name, dur in zip(names, durs, strict=True):
        if dur is not None:
            report.timings[name] = report.timings.get(name, 0.0) + dur
    done_mask = st[:, 0] == K.T_DONE
    data_ms = float(
        (tk[done_mask, K.TK_TILE] - tk[done_mask, K.TK_BACK + len(_chain.BACK)]).sum() * ms
    )
    ids, arrays = K.row_order(parts, sizes)
    report.tiles_built = int(ids.shape[0])
    report.tiles_empty = ntiles - report.tiles_built
    navmesh = None
    if ids.shape[0]:
        sz = sizes[ids]
        tbd = tbounds[ids]
        (
            v, pv, pn, pf, pc, pa, pr, dvb, dvc, dtb, dtc, dv, dt, bvmin, bvmax, bvi,
        ) = arrays  # fmt: skip
        packed = _nm.PackedTiles(
            x=ids % tiles_x, y=ids // tiles_x, bmin=tbd[:, :3], bmax=tbd[:, 3:],
            nverts=sz[:, K.S_VERTS], polys=sz[:, K.S_POLYS], links=sz[:, K.S_LINKS],
            ndverts=sz[:, K.S_DVERTS], ndtris=sz[:, K.S_DTRIS], verts=v, poly_verts=pv,
            poly_neis=pn, poly_flags=pf, poly_vert_count=pc, poly_area=pa,
            detail_vert_base=dvb, detail_vert_count=dvc, detail_tri_base=dtb,
            detail_tri_count=dtc, detail_verts=dv, detail_tris=dt, bv_bmin=bvmin,
            bv_bmax=bvmax, bv_i=bvi,
            walkable_height=float(np.float32(tile_params["walkable_height"])),
            walkable_radius=float(np.float32(tile_params["walkable_radius"])),
            walkable_climb=float(np.float32(tile_params["walkable_climb"])),
            bv_quant_factor=float(np.float32(np.float32(1.0) / cs32)),
        )  # fmt: skip
        navmesh = navmesh_for(packed)
        navmesh._add_packed(packed)
        report.poly_regions = pr
    report.timings["create_navmesh_data"] = data_ms + (time.perf_counter() - t0) * 1e3
    return navmesh


def _solo_navmesh(tiles: _nm.PackedTiles) -> _nm.NavMesh:
    """``dtNavMesh::init(data)`` of a solo bake: the parameters derived from its one
    tile's header."""
    bmin, bmax = tiles.bmin[0], tiles.bmax[0]
    return _nm.NavMesh(
        _nm.NavMeshParams(
            orig=(float(bmin[0]), float(bmin[1]), float(bmin[2])),
            tile_width=float(f32(bmax[0]) - f32(bmin[0])),
            tile_height=float(f32(bmax[2]) - f32(bmin[2])),
            max_tiles=1,
            max_polys=int(tiles.polys[0]),
        )
    )


def _count_need() -> np.ndarray:
    """(1, n) the level (``status[k, 6]``) a tile needs to report each count column."""
    from . import _bake_tiles as K

    lv = np.asarray(K.C_LEVELS)
    return 1 + np.searchsorted(lv, np.arange(len(K.COUNT_NAMES)), side="right")[None, :]


_COUNT_NEED = _count_need()


def _failed_tiles(status: np.ndarray) -> np.ndarray:
    """Which rows of a :mod:`navkit._bake_tiles` status table are failed tiles."""
    from . import _bake_tiles as K
    from .recast import _chain

    where = status[:, 0]
    failed = (where == K.T_FRONT) | (where == K.T_REGIONS) | (where == K.T_TILE)
    return failed | ((where == K.T_BACK) & (status[:, 1] != _chain.EMPTY))


def _stamps_ms(stamps: np.ndarray, ms: float) -> list[float | None]:
    """Per stage, milliseconds summed over tiles from rows of stage stamps (column 0
    the start; a zero stamp: the stage did not run), as ``_chain.ticks_to_ms``."""
    # a tile's stamps increase, so the stamp before stage i is the running maximum
    last = np.maximum.accumulate(stamps[:, :-1], axis=1)
    t = stamps[:, 1:]
    ran = t != 0
    total = np.where(ran, t - last, 0).sum(axis=0) * ms
    return [float(v) if r else None for v, r in zip(total.tolist(), ran.any(axis=0).tolist())]


def _raise_tile_error(st: np.ndarray, sd: float) -> None:
    """Raise what :func:`_bake_tile` raises for a tile's :mod:`navkit._bake_tiles` status."""
    from . import _bake_tiles as K
    from .recast.build import _back_error, _front_error

    where, code = int(st[0]), int(st[1])
    if where == K.T_FRONT:
        _front_error(code, int(st[2]))
    if where == K.T_REGIONS:
        raise BuildError("watershed partition: region id overflow (more than 65534 regions)")
    if where == K.T_BACK:
        _back_error(code, int(st[2]), int(st[3]), sd)
    if where == K.T_TILE:
        raise InputError(_tile._TILE_ERRORS[code])
    raise BuildError(f"internal error: tile status {where}, {code}")  # pragma: no cover


def _check_bake_args(
    mesh, config, executor, progress, keep_intermediates, volumes, offmesh
) -> tuple:
    """bake()'s argument types (InputError naming the argument); returns the volumes."""
    if not isinstance(mesh, TriMesh):
        raise InputError(f"bake() needs a TriMesh, got {type(mesh).__name__}")
    if config is not None and not isinstance(config, BakeConfig):
        raise InputError(f"config must be a BakeConfig or None, got {type(config).__name__}")
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise InputError("executor must be a concurrent.futures.Executor or None")
    if progress is not None and not callable(progress):
        raise InputError(f"progress must be callable(done, total), got {progress!r}")
    if not isinstance(keep_intermediates, bool | np.bool_):
        raise InputError(f"keep_intermediates must be True or False, got {keep_intermediates!r}")
    if isinstance(volumes, str | bytes) or not hasattr(volumes, "__iter__"):
        raise InputError(f"volumes must be a sequence of ConvexVolume, got {volumes!r}")
    if offmesh is not None and (
        isinstance(offmesh, str | bytes) or not hasattr(offmesh, "__iter__")
    ):
        raise InputError(f"offmesh must be a sequence of OffMeshConnection, got {offmesh!r}")
    vols = tuple(volumes)
    for v in vols:
        if not isinstance(v, ConvexVolume):
            raise InputError(f"volumes must hold ConvexVolume items, got {type(v).__name__}")
    return vols


def _bake_threads(threads: int | None) -> int:
    """bake()'s thread count for a tiled bake without an executor: ``threads``, else
    numba's thread count for the calling thread. numba's thread pool is not launched
    for it (the tiles run on Python threads): before anything launched it, the count
    is ``NUMBA_NUM_THREADS`` (a process that later forks stays clear of an OpenMP
    runtime it never used)."""
    if threads is not None:
        return int(threads)
    import numba
    from numba.np.ufunc import parallel as _par

    if getattr(_par, "_is_initialized", True):
        from ._jit import get_threads

        return get_threads()
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _bake_pool(n: int) -> ThreadPoolExecutor:
    """bake()'s own thread pool for ``n`` threads, kept for the next bake (starting
    threads costs each bake ~0.1-1 ms). The calling thread runs one of the ``n``
    workers itself, so the pool starts at most ``n - 1`` threads. Kept per process: a
    forked child has none of its parent's threads and makes its own pool."""
    key = (os.getpid(), n)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = ThreadPoolExecutor(n, thread_name_prefix="navkit-bake")
        return pool


@functools.cache
def _default_config() -> BakeConfig:
    """RecastDemo's settings, made (and validated) once: BakeConfig is frozen."""
    return BakeConfig()


def bake(
    mesh: TriMesh,
    config: BakeConfig | None = None,
    *,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
    keep_intermediates: bool = False,
    volumes: Sequence[ConvexVolume] = (),
    offmesh: Any = None,
    threads: int | None = None,
):
    """Bake a navigation mesh from level geometry.

    Parameters
    ----------
    mesh : TriMesh
        Level geometry in world units.
    config : BakeConfig, optional
        Settings (RecastDemo's defaults when omitted). ``config.tile_size == 0``
        bakes one solo tile; otherwise the level is cut into tiles with a border
        of ``walkable_radius + 3`` voxels, built independently and stitched.
    executor : concurrent.futures.Executor, optional
        Builds tiles in parallel. A ``ThreadPoolExecutor(n)`` is the cheapest on one
        machine: ``n`` threads run the tile loop kernel (:mod:`navkit._bake_tiles`,
        without the GIL) over one shared tile list, and nothing is pickled (the
        calling thread is one of them: ``n - 1`` tasks go to the pool). A
        ``ProcessPoolExecutor``, or a dask ``distributed.Client(...).get_executor()``
        for a cluster, also works. Tiles are added to the navmesh in row order
        whatever the completion order, so the result is identical to a serial bake.
    progress : callable(done, total), optional
        Called after each tile (and once for a solo bake).
    keep_intermediates : bool
        Solo bakes: keep every stage's output in ``navmesh.build_report.intermediates``.
    volumes : sequence of ConvexVolume
        Areas to mark before partitioning (``rcMarkConvexPolyArea``).
    offmesh : sequence of OffMeshConnection, optional
        Off-mesh connections baked into the tiles that hold their start points.
    threads : int, optional
        Threads that build the tiles of a tiled bake when no ``executor`` is given
        (default: numba's thread count, ``numba.get_num_threads()``; 1 bakes on the
        calling thread). They take tiles from one shared list, as a
        ``ThreadPoolExecutor(threads)`` would; the navmesh is the same whatever the
        count. The calling thread is one of them, and the other ``threads - 1`` are
        kept (idle) for the next bake in this process. A solo bake is one tile: one
        thread.

    Returns
    -------
    NavMesh
        With ``navmesh.build_report`` (a :class:`BuildReport`).

    Raises
    ------
    InputError
        Empty mesh or no triangles.
    BuildError
        Geometry too large for one heightfield (use ``tile_size``), or nothing walkable.
    """
    t_start = time.perf_counter()
    volumes = _check_bake_args(
        mesh, config, executor, progress, keep_intermediates, volumes, offmesh
    )
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int | np.integer):
            raise InputError(f"threads must be a positive int or None, got {threads!r}")
        if threads < 1:
            raise InputError(f"threads must be at least 1, got {threads}")
        if executor is not None:
            raise InputError("give bake() an executor or threads, not both")
    config = config or _default_config()
    rc = config.voxel()
    if mesh.n_triangles == 0:
        raise InputError(f"{mesh.name}: the mesh has no triangles")
    with contextlib.ExitStack() as stack:
        if (
            executor is None and rc.tile_size != 0
            and _kernel_bake_ok(config, volumes, offmesh, None)
        ):  # fmt: skip
            n = _bake_threads(threads)
            if n > 1:  # the tile kernel on n threads, without the GIL (see ``executor``)
                executor = _bake_pool(n)
        # through the tile kernel? (a solo bake ignores the executor; intermediates need
        # the per-stage functions)
        if rc.tile_size == 0:
            via_kernel = not keep_intermediates and _kernel_bake_ok(config, volumes, offmesh, None)
        else:
            via_kernel = _kernel_bake_ok(config, volumes, offmesh, executor)
        args = (
            mesh, config, rc, executor, progress, keep_intermediates, volumes, offmesh, t_start,
            via_kernel,
        )  # fmt: skip
        if via_kernel:
            # on a cold cache (and a second core) a side process compiles half of the tile
            # kernel's kernels meanwhile (navkit._warmup.cold_bake)
            from ._warmup import cold_bake

            stack.enter_context(cold_bake())
        return _bake_checked(*args)


def _bake_checked(
    mesh: TriMesh,
    config: BakeConfig,
    rc: RcConfig,
    executor: Executor | None,
    progress: Callable[[int, int], None] | None,
    keep_intermediates: bool,
    volumes: tuple,
    offmesh: Any,
    t_start: float,
    via_kernel: bool,
):
    """:func:`bake` once its arguments are checked (``rc``: ``config.voxel()``;
    ``via_kernel``: the tiles are built by :func:`_bake_tiles_in_kernel`)."""
    report = BuildReport(config=config.to_dict())
    from .recast.rasterize import _as_areas, _as_triangles, _as_vertices

    verts = _as_vertices(mesh.vertices)
    tris = _as_triangles(mesh.triangles, verts.shape[0])
    # mesh_bounds(mesh) and mesh.degenerate_mask().sum() in one kernel pass
    bmin, bmax, ndeg = _mesh_scan(verts, tris)
    report.degenerate_triangles = int(ndeg)
    tri_areas = None if mesh.areas is None else _as_areas(mesh.areas, tris.shape[0], "areas")
    filters = (
        config.filter_low_hanging_obstacles,
        config.filter_ledge_spans,
        config.filter_walkable_low_height_spans,
    )
    gw, gh = grid_size(bmin, bmax, rc.cs)
    tile_params: dict[str, Any] = dict(
        walkable_height=float(f32(rc.walkable_height) * f32(rc.ch)),
        walkable_radius=float(f32(rc.walkable_radius) * f32(rc.cs)),
        walkable_climb=float(f32(rc.walkable_climb) * f32(rc.ch)),
    )

    if rc.tile_size == 0:
        if gw <= 0 or gh <= 0:
            raise BuildError(f"{mesh.name}: the geometry has no extent in x or z")
        if gw >= MAX_GRID_SIDE or gh >= MAX_GRID_SIDE or gw * gh > MAX_SOLO_CELLS:
            raise BuildError(
                f"{mesh.name}: a solo heightfield of {gw} x {gh} cells is too large; "
                f"bake in tiles (e.g. tile_size=64) or use a larger cell_size"
            )
        report.grid_tiles = 1
        if via_kernel:
            # one tile of gw x gh voxels without border through the tiled bake's kernel
            if tri_areas is None:
                t0 = time.perf_counter()
                from .recast.rasterize import mark_walkable_triangles

                tri_areas = mark_walkable_triangles(verts, tris, rc.walkable_slope_angle)
                report.timings["mark_walkable_triangles"] = (time.perf_counter() - t0) * 1e3
            m = tris.shape[0]
            b0, b1 = bmin.astype(np.float32), bmax.astype(np.float32)
            solo = _bake_tiles_in_kernel(
                report, verts, tris, tri_areas, np.array([0, m], np.int64),
                np.arange(m, dtype=np.int64), None, 1, gw, gh, 0, rc, config,
                (b0[:1], b1[:1], b0[2:], b1[2:], b0[1], b1[1]), tile_params, None, progress,
                _solo_navmesh,
            )  # fmt: skip
            if solo is None:
                raise BuildError(
                    f"{mesh.name}: nothing is walkable with these settings{mesh.winding_hint()}"
                )
            navmesh = solo
        else:
            r = _build_polymesh_run(
                verts,
                tris,
                tri_areas,
                rc,
                bmin=bmin,
                bmax=bmax,
                width=gw,
                height=gh,
                partition=config.partition,
                filters=filters,
                volumes=volumes,
                keep_intermediates=keep_intermediates,
            )
            report.add(r)
            report.intermediates = r.intermediates
            if progress is not None:
                progress(1, 1)
            if r.pmesh is None:
                raise BuildError(
                    f"{mesh.name}: nothing is walkable with these settings{mesh.winding_hint()}"
                )
            t0 = time.perf_counter()
            data = _tile.create_navmesh_data(r.pmesh, r.dmesh, offmesh=offmesh, **tile_params)
            # dtNavMesh::init(data): parameters derived from the single tile's header.
            navmesh = _nm.NavMesh(
                _nm.NavMeshParams(
                    orig=(float(data.bmin[0]), float(data.bmin[1]), float(data.bmin[2])),
                    tile_width=float(f32(data.bmax[0]) - f32(data.bmin[0])),
                    tile_height=float(f32(data.bmax[2]) - f32(data.bmin[2])),
                    max_tiles=1,
                    max_polys=data.poly_count,
                )
            )
            navmesh._add_tile(data, None, check=False)
            report.poly_regions = r.pmesh.regs.copy()
            report.timings["create_navmesh_data"] = (time.perf_counter() - t0) * 1e3
            report.tiles_built = 1
    else:
        grid = tile_grid(bmin, bmax, rc)
        if grid.tiles_x * grid.tiles_z > (1 << 22):
            raise BuildError(
                f"{mesh.name}: {grid.tiles_x * grid.tiles_z} tiles is too many; use a larger tile_size"
            )
        coords = tile_coords(grid.tiles_x, grid.tiles_z)
        total = len(coords)
        report.grid_tiles = total
        if tri_areas is None:
            # per-triangle, so marking once equals marking each tile's selection
            t0 = time.perf_counter()
            from .recast.rasterize import mark_walkable_triangles

            tri_areas = mark_walkable_triangles(verts, tris, rc.walkable_slope_angle)
            report.timings["mark_walkable_triangles"] = (time.perf_counter() - t0) * 1e3
        xs_lo, xs_hi, zs_lo, zs_hi = _tile_bounds_table(grid, rc)
        bin_start, bin_tris, cost = _bin_kernel(verts, tris, xs_lo, xs_hi, zs_lo, zs_hi)
        # Tiles without triangles come out empty; the others must fit the navmesh's
        # tile table (32-bit refs: at most 2^14 tiles), checked before building any.
        occupied = int(np.count_nonzero(np.diff(bin_start)))
        if occupied > (1 << 14):
            raise BuildError(
                f"{mesh.name}: tile_size={rc.tile_size} cuts the level into {occupied} tiles "
                f"with geometry, more than a navmesh holds ({1 << 14}); use a larger tile_size"
            )

        y_lo, y_hi = np.float32(bmin[1]), np.float32(bmax[1])
        navmesh = _nm.NavMesh(
            tiled_navmesh_params(bmin, grid.tile_world_size, grid.tiles_x * grid.tiles_z)
        )
        if via_kernel:
            size = rc.tile_size + 2 * rc.border_size
            _bake_tiles_in_kernel(
                report, verts, tris, tri_areas, bin_start, bin_tris, cost, grid.tiles_x, size,
                size, int(rc.border_size), rc, config, (xs_lo, xs_hi, zs_lo, zs_hi, y_lo, y_hi),
                tile_params, executor, progress, lambda _tiles: navmesh,
            )  # fmt: skip
        else:

            def tile_args(x: int, y: int) -> tuple:
                k = y * grid.tiles_x + x
                tbmin = np.array([xs_lo[x], y_lo, zs_lo[y]], np.float32)
                tbmax = np.array([xs_hi[x], y_hi, zs_hi[y]], np.float32)
                sel = bin_tris[bin_start[k] : bin_start[k + 1]]
                return (
                    verts, tris, tri_areas, config, rc, tbmin, tbmax, sel, x, y, volumes,
                    offmesh, tile_params,
                )  # fmt: skip

            results = run_tiles(_bake_tile, coords, tile_args, executor, progress)
            t0 = time.perf_counter()
            regs: list[np.ndarray] = []
            datas: list[_tile.TileData] = []
            data_ms = 0.0
            for x, y in coords:
                r, td, ms = results[(x, y)]
                report.add(r)
                if td is None or r.pmesh is None:
                    report.tiles_empty += 1
                    continue
                datas.append(td)
                data_ms += ms
                regs.append(r.pmesh.regs)
                report.tiles_built += 1
            add_tiles(navmesh, datas)
            # the tiles' create_navmesh_data (in the workers) plus the linking here
            report.timings["create_navmesh_data"] = data_ms + (time.perf_counter() - t0) * 1e3
            if regs:
                # tiles were added in row order into slots 0, 1, ...: slot order = this order
                report.poly_regions = np.concatenate(regs)
        if report.tiles_built == 0:
            raise BuildError(
                f"{mesh.name}: nothing is walkable with these settings{mesh.winding_hint()}"
            )
    report.total_ms = (time.perf_counter() - t_start) * 1e3
    navmesh.build_report = report
    return navmesh
