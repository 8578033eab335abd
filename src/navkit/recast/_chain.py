"""One grid's Recast stages chained in two kernels, for the bake's tile loop.

:func:`navkit.recast.build.build_polymesh` used to call about fifteen stage kernels
from Python, each behind its public function's checks and result objects; on a
48-voxel tile that Python cost as much as a small stage. Here the stages run in
two kernels that call the stage kernels directly:

* :func:`front_kernel` -- rasterize, the three filters, compact, erode;
* :func:`back_kernel` -- contours (trace, simplify, holes), polygon mesh, detail mesh;

with the partition between them (watershed: two kernel calls; monotone and layers:
their public functions). Both are ``link=False`` kernels: the bake's tile loop
(:func:`navkit._bake_tiles.tiles_kernel`) calls their own machine code. (Inlined into
the tile loop, as they were, they made its compile ~2x longer, ~8 CPU s after every
stage kernel, and a cold bake's side process could not take the back chain's part.) The stage kernels are the same ones the public functions
call, with the same argument types, so the results are the same arrays.

Per-stage timers: each kernel stamps the CPU's time-stamp counter
(``llvm.readcyclecounter``) at the end of every stage into a ``ticks`` array;
:func:`ticks_to_ms` converts with a once-per-process calibration against
``time.perf_counter``. The stamps cost a few nanoseconds each, so the timers stay on.

Errors: a kernel stops at the first failed check and returns a status code with its
figures in ``info``; :func:`navkit.recast.build` raises the same exceptions, with
the same messages, as the public stage functions.
"""

from __future__ import annotations

import time

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from .._jit import njit
from .area import _erode_kernel, _neighbour_kernel
from .compact import _MAX_LAYERS, _MAX_SPANS, _compact_kernel
from .contours import _boundary_flags_linked, _merge_holes_kernel, _trace_kernel
from .detail import _MAX_GRID_SAMPLES, _detail_kernel, _max_sample_grid
from .filter import _ledge_kernel, _low_hanging_kernel, _low_height_kernel
from .polymesh import _ERR_TOO_MANY_POLYS, _MAX_INPUT_VERTS, _build_kernel
from .rasterize import _rasterize_kernel

__all__ = ["front_kernel", "back_kernel", "ticks_to_ms", "FRONT", "BACK"]

#: status codes (``info[0]``)
OK = 0
ERR_SPAN_POOL = 1  #: rasterizer pool overflow (internal)
ERR_TOO_MANY_SPANS = 2  #: info[1] = walkable spans
ERR_COLUMN_SPANS = 3  #: info[1] = spans in one column
ERR_LAYERS = 4  #: info[1] = layer index needed
ERR_LINKS = 5  #: a neighbour link outside the grid
ERR_CONTOUR_CELLS = 6  #: info[1] = span
ERR_POLY_VERTS = 7  #: info[1] = contour vertices
ERR_POLYS = 8
ERR_SAMPLES = 9  #: info[1], info[2] = widest polygon extents
EMPTY = 10  #: no contour or no polygon: nothing to build

#: stage names per tick slot (slot 0 is the start stamp)
FRONT = (
    "rasterize_triangles",
    "filter_low_hanging_obstacles",
    "filter_ledge_spans",
    "filter_walkable_low_height_spans",
    "build_compact_heightfield",
    "erode_walkable_area",
)
BACK = ("build_contours", "build_poly_mesh", "build_poly_mesh_detail")

#: ``info`` slots of the front kernel
F_SPANS, F_WALKABLE, F_COMPACT = 3, 4, 5
#: ``info`` slots of the back kernel
B_CONTOURS, B_CVERTS, B_RAW, B_BAD_CONTOURS, B_BAD_HOLES = 3, 4, 5, 6, 7


@intrinsic
def _tsc(typingctx):
    """The CPU's time-stamp counter (``llvm.readcyclecounter``)."""

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return types.int64(), codegen


@njit
def tsc():
    """The time-stamp counter, from Python (calibration)."""
    return _tsc()


_TICK_MS: list[float] = []


def tick_ms() -> float:
    """Milliseconds per time-stamp-counter tick (measured once per process)."""
    if not _TICK_MS:
        tsc()  # load / compile first
        p0, t0 = time.perf_counter(), tsc()
        while time.perf_counter() - p0 < 0.002:
            pass
        p1, t1 = time.perf_counter(), tsc()
        _TICK_MS.append((p1 - p0) * 1e3 / max(t1 - t0, 1))
    return _TICK_MS[0]


def ticks_to_ms(ticks: np.ndarray, names: tuple[str, ...], skip=()) -> dict[str, float]:
    """Stage durations [ms] from a kernel's stamps (slot 0 = start; a zero stamp =
    the stage did not run)."""
    k = tick_ms()
    out: dict[str, float] = {}
    last = ticks[0]
    for i, name in enumerate(names):
        t = ticks[i + 1]
        if t == 0:
            continue
        if name not in skip:
            out[name] = float(t - last) * k
        last = t
    return out


@njit(link=False)
def front_kernel(
    verts, tris, tri_areas, sel, use_sel, width, height, bmin, bmax, cs, ch,
    walkable_height, walkable_climb, walkable_radius, f_low, f_ledge, f_height,
    info, ticks,
):  # fmt: skip
    """Rasterize (``tris[sel]`` when ``use_sel``), filter, compact and erode one grid.

    Returns ``(cells_index, cells_count, y, h, con, areas)`` of the eroded compact
    heightfield (empty arrays on an error status in ``info[0]``).
    """
    ticks[:] = 0
    ticks[0] = _tsc()
    if use_sel:
        t = tris[sel]
        a = tri_areas[sel]
    else:
        t = tris
        a = tri_areas
    col_start, smin, smax, area, overflow = _rasterize_kernel(
        verts, t, a, width, height, bmin, bmax, cs, ch, walkable_climb
    )
    ticks[1] = _tsc()
    e_ci = np.zeros((0, 0), np.uint32)
    e_cc = np.zeros((0, 0), np.uint8)
    e16 = np.zeros(0, np.uint16)
    e8 = np.zeros(0, np.uint8)
    e32 = np.zeros(0, np.uint32)
    if overflow:
        info[0] = ERR_SPAN_POOL
        return e_ci, e_cc, e16, e8, e32, e8
    info[F_SPANS] = smin.shape[0]
    if f_low:
        area = _low_hanging_kernel(col_start, smax, area, walkable_climb)
        ticks[2] = _tsc()
    if f_ledge:
        area = _ledge_kernel(
            col_start, smin, smax, area, width, height, walkable_height, walkable_climb
        )
        ticks[3] = _tsc()
    if f_height:
        area = _low_height_kernel(col_start, smin, smax, area, walkable_height)
        ticks[4] = _tsc()
    nwalk = 0
    for i in range(area.shape[0]):
        if area[i] != 0:
            nwalk += 1
    info[F_WALKABLE] = nwalk
    if nwalk >= _MAX_SPANS:
        info[0] = ERR_TOO_MANY_SPANS
        info[1] = nwalk
        return e_ci, e_cc, e16, e8, e32, e8
    cells_index, cells_count, y, hh, con, areas, max_count, too_high = _compact_kernel(
        col_start, smin, smax, area, width, height, walkable_height, walkable_climb
    )
    ticks[5] = _tsc()
    if max_count > 255:
        info[0] = ERR_COLUMN_SPANS
        info[1] = max_count
        return e_ci, e_cc, e16, e8, e32, e8
    if too_high > _MAX_LAYERS:
        info[0] = ERR_LAYERS
        info[1] = too_high
        return e_ci, e_cc, e16, e8, e32, e8
    info[F_COMPACT] = y.shape[0]
    thr = (walkable_radius * 2) & 0xFF  # Recast stores the threshold in an unsigned char
    nb, order, ok = _neighbour_kernel(cells_index, cells_count, con)
    if not ok:
        info[0] = ERR_LINKS
        return e_ci, e_cc, e16, e8, e32, e8
    areas = _erode_kernel(nb, order, areas, thr)
    ticks[6] = _tsc()
    info[0] = OK
    return cells_index, cells_count, y, hh, con, areas


@njit(link=False)
def back_kernel(
    w, h, b, cidx, ccnt, con, ys, reg, areas, max_regions, max_error, max_edge_len,
    build_flags, nvp, pcs, pch, porig, sd, sme, radius, ccs, cch, info, ticks,
):  # fmt: skip
    """Contours, polygon mesh and detail mesh of a partitioned compact heightfield.

    Returns ``(verts, polys, regs, areas, meshes, dverts, dtris)``: the polygon mesh
    in Recast's dtypes (uint16 / uint8) and the detail mesh; empty on a status.
    """
    ticks[:] = 0
    ticks[0] = _tsc()
    ev = np.zeros((0, 3), np.uint16)
    ep = np.zeros((0, 2 * nvp), np.uint16)
    e16 = np.zeros(0, np.uint16)
    e8 = np.zeros(0, np.uint8)
    em = np.zeros((0, 4), np.uint32)
    edv = np.zeros((0, 3), np.float32)
    edt = np.zeros((0, 4), np.uint8)

    # -- contours (build_contours) --
    # the front kernel checked every cell range and link (ERR_LINKS)
    flags = _boundary_flags_linked(w, h, cidx, ccnt, con, reg)
    creg, carea, nverts, nrverts, verts, rverts = _trace_kernel(
        w, h, cidx, ccnt, con, ys, reg, areas, flags, max_error, max_edge_len, build_flags
    )
    if b > 0:
        for i in range(verts.shape[0]):
            verts[i, 0] -= b
            verts[i, 2] -= b
    nc = creg.shape[0]
    top = max_regions
    for c in range(nc):
        top = max(top, creg[c])
    nverts, verts = _merge_holes_kernel(creg, nverts, verts, top + 1)
    nsv = 0
    nraw = 0
    used = 0
    for c in range(nc):
        nsv += nverts[c]
        nraw += nrverts[c]
        if nverts[c] >= 3:
            used += nverts[c]
    info[B_CONTOURS] = nc
    info[B_CVERTS] = nsv
    info[B_RAW] = nraw
    ticks[1] = _tsc()
    if nc == 0:
        info[0] = EMPTY
        return ev, ep, e16, e8, em, edv, edt

    # -- polygon mesh (build_poly_mesh) --
    if used >= _MAX_INPUT_VERTS:
        info[0] = ERR_POLY_VERTS
        info[1] = used
        return ev, ep, e16, e8, em, edv, edt
    starts = np.zeros(nc, np.int64)
    for c in range(1, nc):
        starts[c] = starts[c - 1] + nverts[c - 1]
    mverts, nv, polys, npolys, pregs, pareas, status, bad_contours, bad_holes = _build_kernel(
        verts, starts, nverts, creg, carea, nvp, b, w - 2 * b, h - 2 * b
    )
    if status == _ERR_TOO_MANY_POLYS:
        info[0] = ERR_POLYS
        return ev, ep, e16, e8, em, edv, edt
    info[B_BAD_CONTOURS] = bad_contours
    info[B_BAD_HOLES] = bad_holes
    pv = mverts[:nv].astype(np.uint16)
    pp = polys[:npolys].astype(np.uint16)
    pr = pregs[:npolys].astype(np.uint16)
    pa = pareas[:npolys].astype(np.uint8)
    ticks[2] = _tsc()
    if npolys == 0:
        info[0] = EMPTY
        return pv, pp, pr, pa, em, edv, edt

    # -- detail mesh (build_poly_mesh_detail) --
    if sd > 0:
        cells, ext_x, ext_z = _max_sample_grid(pv, pp, nvp, np.float64(pcs), np.float64(sd))
        if cells > _MAX_GRID_SAMPLES:
            info[0] = ERR_SAMPLES
            info[1] = ext_x
            info[2] = ext_z
            return pv, pp, pr, pa, em, edv, edt
    meshes, dverts, dtris = _detail_kernel(
        pv, pp, pr, nvp, pcs, pch, porig, b, cidx, ccnt, w, h, ys, con, reg, ccs, cch,
        sd, sme, radius,
    )  # fmt: skip
    ticks[3] = _tsc()
    info[0] = OK
    return pv, pp, pr, pa, meshes, dverts, dtris
