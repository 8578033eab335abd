"""Bake orchestration: the Recast pipeline end to end, solo or tiled.

:func:`build_polymesh` runs every stage on one heightfield grid (a whole level,
or one tile with its border) and returns the polygon and detail meshes with
per-stage timings and counts. :func:`bake` turns those into a Detour navmesh:
one tile for a solo build, or a grid of tiles built independently (optionally in
parallel on any ``concurrent.futures.Executor``) and stitched by portal links.

The order of the stages and every derived number follow RecastDemo's
``Sample_SoloMesh::handleBuild`` and ``Sample_TileMesh::buildTileMesh`` (through
the @recast-navigation generators the Recast peer runs), so that navkit's bake
matches Recast's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from ..errors import BuildError, InputError
from ..geometry.trimesh import TriMesh
from .config import BakeConfig, RcConfig
from .types import (
    CompactHeightfield,
    ContourSet,
    Heightfield,
    PolyMesh,
    PolyMeshDetail,
)

__all__ = [
    "ConvexVolume",
    "TileResult",
    "BuildReport",
    "grid_size",
    "build_polymesh",
    "build_tile",
    "tile_grid",
    "bake",
]

f32 = np.float32

#: Recast's ``rcCalcGridSize`` would overflow beyond this many cells per side.
MAX_GRID_SIDE = 1 << 15
#: Largest solo heightfield (cells) navkit bakes before suggesting tiles.
MAX_SOLO_CELLS = 1 << 26


class ConvexVolume(NamedTuple):
    """A prism that marks an area id on the compact heightfield (``rcMarkConvexPolyArea``).

    Attributes
    ----------
    verts : (n, 3) float32
        Convex polygon in xz (y ignored), world units.
    hmin, hmax : float
        Vertical extent [wu].
    area : int
        Area id to mark, 0..63 (0 makes it unwalkable).
    """

    verts: np.ndarray
    hmin: float
    hmax: float
    area: int


class TileResult(NamedTuple):
    """What building one grid (solo level or tile) produces."""

    tx: int
    ty: int
    pmesh: PolyMesh | None
    dmesh: PolyMeshDetail | None
    timings: dict[str, float]
    counts: dict[str, int]
    intermediates: dict[str, Any] | None


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


def grid_size(bmin: np.ndarray, bmax: np.ndarray, cs: float) -> tuple[int, int]:
    """Cells along x and z covering the bounds (``rcCalcGridSize``, float32 math)."""
    cs32 = f32(cs)
    w = int(f32(f32(bmax[0]) - f32(bmin[0])) / cs32 + f32(0.5))
    h = int(f32(f32(bmax[2]) - f32(bmin[2])) / cs32 + f32(0.5))
    return w, h


def mesh_bounds(mesh: TriMesh) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the vertices the triangles use (what the Recast generators bake)."""
    if mesh.n_triangles == 0:
        raise InputError(f"{mesh.name}: the mesh has no triangles")
    used = np.zeros(mesh.vertices.shape[0], np.bool_)
    used[mesh.triangles.ravel()] = True
    v = mesh.vertices[used]
    return v.min(axis=0).astype(np.float32), v.max(axis=0).astype(np.float32)


class _Timer:
    def __init__(self) -> None:
        self.t: dict[str, float] = {}

    def run(self, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        self.t[name] = self.t.get(name, 0.0) + (time.perf_counter() - t0) * 1e3
        return out


def build_polymesh(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray | None,
    rc: RcConfig,
    *,
    bmin: np.ndarray,
    bmax: np.ndarray,
    width: int,
    height: int,
    partition: str = "watershed",
    filters: tuple[bool, bool, bool] = (True, True, True),
    volumes: Sequence[ConvexVolume] = (),
    keep_intermediates: bool = False,
    tx: int = 0,
    ty: int = 0,
) -> TileResult:
    """Run Recast's pipeline on one grid: rasterize to detail mesh.

    Parameters
    ----------
    vertices : (n, 3) float32
    triangles : (m, 3) int32
    tri_areas : (m,) uint8 or None
        Per-triangle area ids; ``None`` marks walkable triangles by slope.
    rc : RcConfig
        Voxel-unit settings (``rc.border_size`` > 0 for tiles).
    bmin, bmax : (3,) float32
        Grid bounds including the border [wu].
    width, height : int
        Grid size including the border [vx].

    Returns
    -------
    TileResult
        ``pmesh`` and ``dmesh`` are ``None`` when the grid has no polygons.
    """
    from . import rasterize as _rasterize

    v = _rasterize._as_vertices(vertices)
    t = _rasterize._as_triangles(triangles, v.shape[0])
    a = None if tri_areas is None else _rasterize._as_areas(tri_areas, t.shape[0], "tri_areas")
    bmin = _rasterize._as_vec3(bmin, "bmin")
    bmax = _rasterize._as_vec3(bmax, "bmax")
    if np.any(bmax < bmin):
        raise InputError(f"bmax {bmax} must not be below bmin {bmin}")
    return _build_polymesh_run(
        v, t, a, rc, bmin=bmin, bmax=bmax, width=width, height=height, partition=partition,
        filters=filters, volumes=volumes, keep_intermediates=keep_intermediates, tx=tx, ty=ty,
    )  # fmt: skip


def _build_polymesh_run(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray | None,
    rc: RcConfig,
    *,
    bmin: np.ndarray,
    bmax: np.ndarray,
    width: int,
    height: int,
    partition: str = "watershed",
    filters: tuple[bool, bool, bool] = (True, True, True),
    volumes: Sequence[ConvexVolume] = (),
    keep_intermediates: bool = False,
    tx: int = 0,
    ty: int = 0,
) -> TileResult:
    """:func:`build_polymesh` on validated arrays: (n, 3) finite float32 vertices,
    (m, 3) int32 in-range triangles, (m,) uint8 areas or None, (3,) float32 bounds.

    Stages run through their modules' ``_run`` entry points, which skip the
    public functions' checks of arrays these stages made themselves.
    """
    from . import area as _area
    from . import compact as _compact
    from . import contours as _contours
    from . import detail as _detail
    from . import filter as _filter
    from . import polymesh as _polymesh
    from . import rasterize as _rasterize

    tm = _Timer()
    counts: dict[str, int] = {}
    inter: dict[str, Any] | None = {} if keep_intermediates else None

    if tri_areas is None:
        tri_areas = tm.run(
            "mark_walkable_triangles",
            _rasterize.mark_walkable_triangles,
            vertices,
            triangles,
            rc.walkable_slope_angle,
        )
    lo, hi = bmin, bmax
    cs32, ch32 = np.float32(rc.cs), np.float32(rc.ch)
    _rasterize.check_grid(width, height, lo, hi, ch32)
    hf: Heightfield = tm.run(
        "rasterize_triangles",
        _rasterize._rasterize_run,
        vertices,
        triangles,
        tri_areas,
        width,
        height,
        lo,
        hi,
        cs32,
        ch32,
        int(rc.walkable_climb),
    )
    counts["spans"] = hf.span_count
    if inter is not None:
        inter["heightfield_rasterized"] = hf
    if filters[0]:
        hf = tm.run(
            "filter_low_hanging_obstacles",
            _filter._low_hanging_run,
            hf,
            int(rc.walkable_climb),
        )
    if filters[1]:
        hf = tm.run(
            "filter_ledge_spans",
            _filter._ledge_run,
            hf,
            int(rc.walkable_height),
            int(rc.walkable_climb),
        )
    if filters[2]:
        hf = tm.run(
            "filter_walkable_low_height_spans",
            _filter._low_height_run,
            hf,
            int(rc.walkable_height),
        )
    counts["walkable_spans"] = hf.walkable_span_count
    if inter is not None:
        inter["heightfield_filtered"] = hf

    chf: CompactHeightfield = tm.run(
        "build_compact_heightfield",
        _compact._compact_run,
        hf,
        int(rc.walkable_height),
        int(rc.walkable_climb),
    )
    del hf
    counts["compact_spans"] = chf.span_count
    if inter is not None:
        inter["compact_initial"] = chf
    chf = tm.run("erode_walkable_area", _area._erode_run, chf, int(rc.walkable_radius))
    for vol in volumes:
        chf = tm.run(
            "mark_convex_poly_area",
            _area.mark_convex_poly_area,
            chf,
            vol.verts,
            vol.hmin,
            vol.hmax,
            vol.area,
        )
    if inter is not None:
        inter["compact_eroded"] = chf

    from . import regions_layers as _layers
    from . import regions_monotone as _mono
    from . import regions_watershed as _ws

    region_kw: dict[str, int] = {
        "border_size": rc.border_size,
        "min_region_area": rc.min_region_area,
    }
    if partition == "watershed":
        from . import distance as _distance

        chf = tm.run("build_distance_field", _distance.build_distance_field, chf)
        if inter is not None:
            inter["compact_distance"] = chf
        build_regions: Callable[..., CompactHeightfield] = _ws.build_regions
    elif partition == "monotone":
        build_regions = _mono.build_regions_monotone
    elif partition == "layers":
        build_regions = _layers.build_layer_regions
    else:  # validated by BakeConfig
        raise InputError(f"unknown partition {partition!r}")
    if partition != "layers":  # layer regions are never merged by size
        region_kw["merge_region_area"] = rc.merge_region_area
    chf = tm.run("build_regions", build_regions, chf, **region_kw)
    counts["regions"] = int(chf.max_regions)
    if inter is not None:
        inter["compact_regions"] = chf

    cset: ContourSet = tm.run(
        "build_contours",
        _contours.build_contours,
        chf,
        max_error=rc.max_simplification_error,
        max_edge_len=rc.max_edge_len,
    )
    counts["contours"] = cset.count
    counts["contour_verts"] = int(cset.nverts.sum())
    counts["raw_contour_verts"] = int(cset.nrverts.sum())
    if inter is not None:
        inter["contours"] = cset
    if cset.count == 0:
        return TileResult(tx, ty, None, None, tm.t, counts, inter)

    pmesh: PolyMesh = tm.run(
        "build_poly_mesh", _polymesh.build_poly_mesh, cset, nvp=rc.max_verts_per_poly
    )
    counts["polys"] = pmesh.npolys
    counts["poly_verts"] = pmesh.nverts
    if inter is not None:
        inter["polymesh"] = pmesh
    if pmesh.npolys == 0:
        return TileResult(tx, ty, None, None, tm.t, counts, inter)
    sd = np.float32(rc.detail_sample_dist)
    sme = np.float32(rc.detail_sample_max_error)
    if not (np.isfinite(sd) and sd >= 0 and np.isfinite(sme) and sme >= 0):
        raise InputError(f"detail sample settings must be finite and >= 0, got {sd!r}, {sme!r}")
    dmesh: PolyMeshDetail = tm.run(
        "build_poly_mesh_detail",
        _detail._detail_run,
        pmesh,
        chf,
        pmesh.verts,
        pmesh.polys,
        pmesh.regs,
        chf.cells_index.reshape(-1),
        chf.cells_count.reshape(-1),
        sd,
        sme,
    )
    counts["detail_meshes"] = dmesh.nmeshes
    counts["detail_verts"] = dmesh.nverts
    counts["detail_tris"] = dmesh.ntris
    if inter is not None:
        inter["detail"] = dmesh
    return TileResult(tx, ty, pmesh, dmesh, tm.t, counts, inter)


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


def _tile_triangles(
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
def _bin_kernel(x0, x1, z0, z1, tiles_x, tiles_z):  # pragma: no cover - numba
    """CSR of triangle indices per tile (row-major tiles, ascending triangle order)."""
    m = x0.shape[0]
    ntiles = tiles_x * tiles_z
    start = np.zeros(ntiles + 1, np.int64)
    for i in range(m):
        for tz in range(max(z0[i], 0), min(z1[i], tiles_z - 1) + 1):
            for tx in range(max(x0[i], 0), min(x1[i], tiles_x - 1) + 1):
                start[tz * tiles_x + tx + 1] += 1
    for k in range(ntiles):
        start[k + 1] += start[k]
    fill = start[:-1].copy()
    out = np.empty(start[ntiles], np.int64)
    for i in range(m):
        for tz in range(max(z0[i], 0), min(z1[i], tiles_z - 1) + 1):
            for tx in range(max(x0[i], 0), min(x1[i], tiles_x - 1) + 1):
                k = tz * tiles_x + tx
                out[fill[k]] = i
                fill[k] += 1
    return start, out


@njit
def _tri_xz_bounds(verts, tris):  # pragma: no cover - numba
    """Per-triangle min and max of x (column 0) and z (column 2), as ``(m, 3)`` arrays."""
    m = tris.shape[0]
    lo = np.empty((m, 3), verts.dtype)
    hi = np.empty((m, 3), verts.dtype)
    for i in range(m):
        for a in (0, 2):
            v0 = verts[tris[i, 0], a]
            v1 = verts[tris[i, 1], a]
            v2 = verts[tris[i, 2], a]
            lo[i, a] = min(v0, min(v1, v2))
            hi[i, a] = max(v0, max(v1, v2))
    return lo, hi


def _bin_triangles(
    mesh_v: np.ndarray, mesh_t: np.ndarray, grid: TileGrid, rc: RcConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Triangles overlapping every tile, computed once for the whole grid.

    Gives exactly :func:`_tile_triangles` for each tile: a triangle's xz bounds are
    compared with the same float32 tile bounds, whose columns (rows) increase
    monotonically, so the overlapped tiles form a range found by binary search.

    Returns
    -------
    start : (tiles_x * tiles_z + 1,) int64
        Tile ``ty * tiles_x + tx`` holds ``tris[start[k]:start[k + 1]]``.
    tris : (total,) int64
        Triangle indices, ascending within each tile.
    """
    tw, th = grid.tiles_x, grid.tiles_z
    xs_lo = np.empty(tw, np.float32)
    xs_hi = np.empty(tw, np.float32)
    zs_lo = np.empty(th, np.float32)
    zs_hi = np.empty(th, np.float32)
    for tx in range(tw):
        lo, hi = tile_bounds(grid, rc, tx, 0)
        xs_lo[tx], xs_hi[tx] = lo[0], hi[0]
    for ty in range(th):
        lo, hi = tile_bounds(grid, rc, 0, ty)
        zs_lo[ty], zs_hi[ty] = lo[2], hi[2]
    lo, hi = _tri_xz_bounds(mesh_v, mesh_t)
    # first tile with tile_hi >= tri_lo .. last tile with tile_lo <= tri_hi
    x0 = np.searchsorted(xs_hi, lo[:, 0], side="left")
    x1 = np.searchsorted(xs_lo, hi[:, 0], side="right") - 1
    z0 = np.searchsorted(zs_hi, lo[:, 2], side="left")
    z1 = np.searchsorted(zs_lo, hi[:, 2], side="right") - 1
    return _bin_kernel(x0, x1, z0, z1, tw, th)


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
    from .rasterize import _as_areas, _as_triangles, _as_vertices

    vertices = _as_vertices(vertices)
    triangles = _as_triangles(triangles, vertices.shape[0])
    if tri_areas is not None:
        tri_areas = _as_areas(tri_areas, triangles.shape[0], "tri_areas")
    sel = _tile_triangles(vertices, triangles, tbmin, tbmax) if tri_sel is None else tri_sel
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
        filters=(
            config.filter_low_hanging_obstacles,
            config.filter_ledge_spans,
            config.filter_walkable_low_height_spans,
        ),
        volumes=volumes,
        tx=tx,
        ty=ty,
    )


def _next_pow2(v: int) -> int:
    return 1 if v <= 1 else 1 << (v - 1).bit_length()


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


def bake(
    mesh: TriMesh,
    config: BakeConfig | None = None,
    *,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
    keep_intermediates: bool = False,
    volumes: Sequence[ConvexVolume] = (),
    offmesh: Any = None,
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
        machine: the stage kernels release the GIL, and nothing is pickled. A
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
    from ..detour import navmesh as _nm
    from ..detour import tile as _tile

    t_start = time.perf_counter()
    volumes = _check_bake_args(
        mesh, config, executor, progress, keep_intermediates, volumes, offmesh
    )
    config = config or BakeConfig()
    rc = config.voxel()
    bmin, bmax = mesh_bounds(mesh)
    report = BuildReport(config=config.to_dict())
    report.degenerate_triangles = int(mesh.degenerate_mask().sum())
    from .rasterize import _as_areas, _as_triangles, _as_vertices

    verts = _as_vertices(mesh.vertices)
    tris = _as_triangles(mesh.triangles, verts.shape[0])
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
        report.grid_tiles = 1
    else:
        grid = tile_grid(bmin, bmax, rc)
        if grid.tiles_x * grid.tiles_z > (1 << 22):
            raise BuildError(
                f"{mesh.name}: {grid.tiles_x * grid.tiles_z} tiles is too many; use a larger tile_size"
            )
        coords = [(x, y) for y in range(grid.tiles_z) for x in range(grid.tiles_x)]
        total = len(coords)
        report.grid_tiles = total
        if tri_areas is None:
            # per-triangle, so marking once equals marking each tile's selection
            t0 = time.perf_counter()
            from .rasterize import mark_walkable_triangles

            tri_areas = mark_walkable_triangles(verts, tris, rc.walkable_slope_angle)
            report.timings["mark_walkable_triangles"] = (time.perf_counter() - t0) * 1e3
        bin_start, bin_tris = _bin_triangles(verts, tris, grid, rc)
        # Tiles without triangles come out empty; the others must fit the navmesh's
        # tile table (32-bit refs: at most 2^14 tiles), checked before building any.
        occupied = int(np.count_nonzero(np.diff(bin_start)))
        if occupied > (1 << 14):
            raise BuildError(
                f"{mesh.name}: tile_size={rc.tile_size} cuts the level into {occupied} tiles "
                f"with geometry, more than a navmesh holds ({1 << 14}); use a larger tile_size"
            )

        def tile_args(x: int, y: int) -> tuple:
            k = y * grid.tiles_x + x
            tbmin, tbmax = tile_bounds(grid, rc, x, y)
            sel = bin_tris[bin_start[k] : bin_start[k + 1]]
            return (verts, tris, tri_areas, config, rc, tbmin, tbmax, sel, x, y, tuple(volumes))

        results: dict[tuple[int, int], TileResult] = {}
        if executor is None:
            for i, (x, y) in enumerate(coords):
                results[(x, y)] = _build_tile(*tile_args(x, y))
                if progress is not None:
                    progress(i + 1, total)
        else:
            from concurrent.futures import as_completed

            futs = {executor.submit(_build_tile, *tile_args(x, y)): (x, y) for x, y in coords}
            for i, fut in enumerate(as_completed(futs)):
                results[futs[fut]] = fut.result()
                if progress is not None:
                    progress(i + 1, total)
        tile_bits = min(int(math.log2(_next_pow2(grid.tiles_x * grid.tiles_z))), 14)
        poly_bits = 22 - tile_bits
        navmesh = _nm.NavMesh(
            _nm.NavMeshParams(
                orig=(float(bmin[0]), float(bmin[1]), float(bmin[2])),
                tile_width=grid.tile_world_size,
                tile_height=grid.tile_world_size,
                max_tiles=1 << tile_bits,
                max_polys=1 << poly_bits,
            )
        )
        t0 = time.perf_counter()
        regs: list[np.ndarray] = []
        for x, y in coords:
            r = results[(x, y)]
            report.add(r)
            if r.pmesh is None:
                report.tiles_empty += 1
                continue
            data = _tile.create_navmesh_data(
                r.pmesh, r.dmesh, tile_x=x, tile_y=y, offmesh=offmesh, **tile_params
            )
            navmesh._add_tile(data, None, check=False)
            regs.append(r.pmesh.regs)
            report.tiles_built += 1
        report.timings["create_navmesh_data"] = (time.perf_counter() - t0) * 1e3
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
