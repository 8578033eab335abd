"""The Recast pipeline on one heightfield grid: rasterize to detail mesh.

:func:`build_polymesh` runs every stage on one grid (a whole level, or one tile
with its border) and returns the polygon and detail meshes with per-stage timings
and counts. Cutting a level into tiles, running tiles on an executor and
assembling a Detour navmesh is the tile pipeline's work (:mod:`navkit.pipeline`,
above both ``recast`` and ``detour``): this package never imports ``detour``.

The order of the stages and every derived number follow RecastDemo's
``Sample_SoloMesh::handleBuild`` and ``Sample_TileMesh::buildTileMesh`` (through
the @recast-navigation generators the Recast peer runs), so that navkit's bake
matches Recast's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..errors import BuildError, InputError
from ..geometry.trimesh import TriMesh
from . import _chain
from . import area as _area
from . import compact as _compact
from . import contours as _contours
from . import detail as _detail
from . import distance as _distance
from . import filter as _filter
from . import polymesh as _polymesh
from . import rasterize as _rasterize
from . import regions_layers as _layers
from . import regions_monotone as _mono
from . import regions_watershed as _ws
from .config import RcConfig
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
    "grid_size",
    "mesh_bounds",
    "build_polymesh",
    "tile_compact_heightfield",
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


def _compact_stages(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray,
    rc: RcConfig,
    bmin: np.ndarray,
    bmax: np.ndarray,
    width: int,
    height: int,
    filters: tuple[bool, bool, bool],
    tm: _Timer,
    counts: dict[str, int],
    inter: dict[str, Any] | None,
) -> CompactHeightfield:
    """Rasterize, filter, compact and erode one grid (validated arrays, areas marked)."""

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
    return chf


def tile_compact_heightfield(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray,
    rc: RcConfig,
    tbmin: np.ndarray,
    tbmax: np.ndarray,
    filters: tuple[bool, bool, bool] = (True, True, True),
) -> CompactHeightfield:
    """A tile's eroded compact heightfield, border included (the tile cache's layer input).

    The first stages of :func:`build_polymesh` (rasterize, the three filters, compact,
    erode by ``rc.walkable_radius``) on a ``tile_size + 2 * border_size`` square grid.

    Parameters
    ----------
    vertices : (n, 3) float32
    triangles : (m, 3) int32
        The tile's triangles (validated, in range).
    tri_areas : (m,) uint8
    rc : RcConfig
    tbmin, tbmax : (3,) float32
        Tile bounds with the border [wu] (:func:`navkit.pipeline.tile_bounds`).
    filters : (bool, bool, bool)
        Low-hanging obstacles, ledge spans, low-height spans.
    """
    size = rc.tile_size + 2 * rc.border_size
    return _compact_stages(
        vertices, triangles, tri_areas, rc, tbmin, tbmax, size, size, filters, _Timer(), {}, None
    )


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

    if not keep_intermediates and not volumes:
        return _build_chained(
            vertices, triangles, tri_areas, None, rc, bmin, bmax, width, height, partition,
            filters, tx, ty,
        )  # fmt: skip
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
    chf = _compact_stages(
        vertices, triangles, tri_areas, rc, bmin, bmax, width, height, filters, tm, counts, inter
    )
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

    region_kw: dict[str, int] = {
        "border_size": rc.border_size,
        "min_region_area": rc.min_region_area,
    }
    if partition == "watershed":
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


_NO_SEL = np.zeros(0, np.int64)


def _build_chained(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray | None,
    sel: np.ndarray | None,
    rc: RcConfig,
    bmin: np.ndarray,
    bmax: np.ndarray,
    width: int,
    height: int,
    partition: str,
    filters: tuple[bool, bool, bool],
    tx: int = 0,
    ty: int = 0,
) -> TileResult:
    """:func:`_build_polymesh_run` without intermediates or volumes: the stages in
    :mod:`navkit.recast._chain`'s two kernels, the partition between them.

    ``sel`` (optional) selects the triangles of ``triangles`` to rasterize (a tile's);
    the results equal :func:`_build_polymesh_run`'s on ``triangles[sel]``.
    """
    timings: dict[str, float] = {}
    if tri_areas is None:
        t0 = time.perf_counter()
        tri_areas = _rasterize.mark_walkable_triangles(vertices, triangles, rc.walkable_slope_angle)
        timings["mark_walkable_triangles"] = (time.perf_counter() - t0) * 1e3
    cs32, ch32 = np.float32(rc.cs), np.float32(rc.ch)
    _rasterize.check_grid(width, height, bmin, bmax, ch32)
    wh, wc, wr = int(rc.walkable_height), int(rc.walkable_climb), int(rc.walkable_radius)
    info = np.zeros(8, np.int64)
    ticks = np.zeros(len(_chain.FRONT) + 1, np.int64)
    cidx, ccnt, ys, hh, con, areas = _chain.front_kernel(
        vertices, triangles, tri_areas, _NO_SEL if sel is None else sel, sel is not None,
        width, height, bmin, bmax, cs32, ch32, wh, wc, wr,
        filters[0], filters[1], filters[2], info, ticks,
    )  # fmt: skip
    timings.update(_chain.ticks_to_ms(ticks, _chain.FRONT))
    st = int(info[0])
    if st != _chain.OK:
        _front_error(st, int(info[1]))
    counts = {
        "spans": int(info[_chain.F_SPANS]),
        "walkable_spans": int(info[_chain.F_WALKABLE]),
        "compact_spans": int(info[_chain.F_COMPACT]),
    }
    n = ys.shape[0]
    b = int(rc.border_size)
    cbmax = bmax.copy()
    cbmax[1] = np.float32(cbmax[1] + np.float32(np.float32(wh) * ch32))
    flat_i = cidx.reshape(-1)
    flat_c = ccnt.reshape(-1)
    region_kw: dict[str, int] = {"border_size": b, "min_region_area": rc.min_region_area}
    if partition == "watershed":
        t0 = time.perf_counter()
        dist, mx = _distance._kernel(flat_i, flat_c, con, areas, width, height)
        t1 = time.perf_counter()
        reg, nreg, status = _ws._kernel(
            flat_i, flat_c, con, areas, dist, width, height, int(mx), b,
            int(rc.min_region_area), int(rc.merge_region_area),
        )  # fmt: skip
        timings["build_distance_field"] = (t1 - t0) * 1e3
        timings["build_regions"] = (time.perf_counter() - t1) * 1e3
        if status < 0:
            raise BuildError("watershed partition: region id overflow (more than 65534 regions)")
        nreg = int(nreg)
    else:
        chf = CompactHeightfield(
            width, height, wh, wc, 0, 0, 0, bmin.copy(), cbmax, float(cs32), float(ch32),
            cidx, ccnt, ys, hh, con, np.zeros(n, np.uint16), areas, np.zeros(n, np.uint16),
        )  # fmt: skip
        if partition == "monotone":
            build_regions: Callable[..., CompactHeightfield] = _mono.build_regions_monotone
            region_kw["merge_region_area"] = rc.merge_region_area
        elif partition == "layers":
            build_regions = _layers.build_layer_regions
        else:  # validated by BakeConfig
            raise InputError(f"unknown partition {partition!r}")
        t0 = time.perf_counter()
        chf = build_regions(chf, **region_kw)
        timings["build_regions"] = (time.perf_counter() - t0) * 1e3
        reg, nreg = chf.reg, int(chf.max_regions)
    counts["regions"] = nreg

    sd = np.float32(rc.detail_sample_dist)
    sme = np.float32(rc.detail_sample_max_error)
    if not (np.isfinite(sd) and sd >= 0 and np.isfinite(sme) and sme >= 0):
        raise InputError(f"detail sample settings must be finite and >= 0, got {sd!r}, {sme!r}")
    me = np.float32(rc.max_simplification_error)
    # the contour set's (and polygon mesh's) bounds: shifted inward by the border
    pbmin = bmin.copy()
    pbmax = cbmax.copy()
    if b > 0:
        pad = np.float32(b) * cs32
        pbmin[0] += pad
        pbmin[2] += pad
        pbmax[0] -= pad
        pbmax[2] -= pad
    radius = max(1, int(math.ceil(me)))
    nvp = int(rc.max_verts_per_poly)
    info[:] = 0
    ticks = np.zeros(len(_chain.BACK) + 1, np.int64)
    pv, pp, pr, pa, meshes, dverts, dtris = _chain.back_kernel(
        width, height, b, flat_i, flat_c, con, ys, reg, areas, nreg, me,
        int(rc.max_edge_len), _contours.CONTOUR_TESS_WALL_EDGES, nvp, cs32, ch32, pbmin,
        sd, sme, radius, cs32, ch32, info, ticks,
    )  # fmt: skip
    timings.update(_chain.ticks_to_ms(ticks, _chain.BACK))
    st = int(info[0])
    counts["contours"] = int(info[_chain.B_CONTOURS])
    counts["contour_verts"] = int(info[_chain.B_CVERTS])
    counts["raw_contour_verts"] = int(info[_chain.B_RAW])
    if st == _chain.ERR_CONTOUR_CELLS:
        _back_error(st, int(info[1]), int(info[2]))
    if st == _chain.EMPTY and counts["contours"] == 0:
        return TileResult(tx, ty, None, None, timings, counts, None)
    if st in (_chain.ERR_POLY_VERTS, _chain.ERR_POLYS):
        _back_error(st, int(info[1]), int(info[2]))
    bad_c, bad_h = int(info[_chain.B_BAD_CONTOURS]), int(info[_chain.B_BAD_HOLES])
    if bad_c or bad_h:
        _polymesh._warn_bad(bad_c, bad_h)
    counts["polys"] = int(pp.shape[0])
    counts["poly_verts"] = int(pv.shape[0])
    if st == _chain.EMPTY:
        return TileResult(tx, ty, None, None, timings, counts, None)
    if st == _chain.ERR_SAMPLES:
        _back_error(st, int(info[1]), int(info[2]), float(sd))
    pmesh = PolyMesh(
        verts=pv, polys=pp, regs=pr, flags=np.zeros(pp.shape[0], np.uint16), areas=pa,
        nvp=nvp, bmin=pbmin, bmax=pbmax, cs=float(cs32), ch=float(ch32), border_size=b,
        max_edge_error=float(me),
    )  # fmt: skip
    dmesh = PolyMeshDetail(meshes, dverts, dtris)
    counts["detail_meshes"] = dmesh.nmeshes
    counts["detail_verts"] = dmesh.nverts
    counts["detail_tris"] = dmesh.ntris
    return TileResult(tx, ty, pmesh, dmesh, timings, counts, None)


def _front_error(status: int, value: int) -> None:
    """Raise what the public stage functions raise for a front kernel status."""
    if status == _chain.ERR_SPAN_POOL:  # pragma: no cover - guarded by the reservation
        raise BuildError("internal error: the span pool reservation was too small")
    if status == _chain.ERR_TOO_MANY_SPANS:
        raise BuildError(
            f"{value} walkable spans exceed Recast's compact heightfield limit of "
            f"{_compact._MAX_SPANS}; bake with tiles (set tile_size)"
        )
    if status == _chain.ERR_COLUMN_SPANS:
        raise BuildError(
            f"a column holds {value} walkable spans, more than the 255 a compact cell "
            "counts; raise cell_height or simplify the geometry"
        )
    if status == _chain.ERR_LAYERS:
        raise BuildError(
            f"heightfield has too many layers: a neighbour link needs layer {value} "
            f"(max {_compact._MAX_LAYERS}); raise cell_height or simplify the geometry"
        )
    raise InputError("compact heightfield has a neighbour link outside its grid or cells")


def _back_error(status: int, v1: int, v2: int, sd: float = 0.0) -> None:
    """Raise what the public stage functions raise for a back kernel error status
    (``v1``, ``v2``: its ``info[1:3]``; ``sd``: the detail sample distance)."""
    if status == _chain.ERR_CONTOUR_CELLS:
        raise InputError(
            f"compact heightfield span {v1}: cell range or neighbour link out of bounds"
        )
    if status == _chain.ERR_POLY_VERTS:
        raise BuildError(
            f"rcBuildPolyMesh: too many vertices {v1} (limit {_polymesh._MAX_INPUT_VERTS - 1})"
        )
    if status == _chain.ERR_POLYS:
        raise BuildError("rcBuildPolyMesh: too many polygons")
    if status == _chain.ERR_SAMPLES:
        raise InputError(
            f"sample_dist {sd!r} is too small for polygons {v1} x "
            f"{v2} voxels wide (> {_detail._MAX_GRID_SAMPLES} grid samples)"
        )
    raise BuildError(f"internal error: back kernel status {status}")  # pragma: no cover
