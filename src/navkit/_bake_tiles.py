"""The tiled bake's tile loop in one kernel: Recast stages to Detour tile data.

:func:`tiles_kernel` builds tiles of a tiled bake one after the other, each tile
through the same kernels as :func:`navkit.pipeline._bake_tile` (``_chain.front_kernel``,
the watershed partition, ``_chain.back_kernel``, ``detour.tile._tile_kernel`` and
the BV tree), with no Python between the stages nor between the tiles. Several
threads may run it at once on the same tile list: each takes the next tile from a
shared counter (an atomic add), so the tiles spread over the threads as they
finish, and writes the tile's figures in the tile's own rows of the shared
``status`` / ``counts`` / ``ticks`` / ``sizes`` / ``tbounds`` tables and its
arrays in its own lists. The caller puts the tiles back in row order
(:func:`row_order`), so any number of threads gives the serial bake's navmesh.
A solo bake runs it too, on a grid of one tile (its ``width`` x ``height`` voxels,
no border).

Status of a tile (``status[k, 0]``): :data:`T_TODO` not built, :data:`T_FRONT`
front kernel error (``status[k, 1:4]`` = its ``info[0:3]``), :data:`T_REGIONS`
region id overflow, :data:`T_BACK` back kernel status (error or EMPTY),
:data:`T_TILE` tile data error (``status[k, 1]`` = ``_tile_kernel``'s code),
:data:`T_DONE` built. ``status[k, 4:6]`` are rcBuildPolyMesh's bad contour and
hole counts, ``status[k, 6]`` how far the tile's counts go (:data:`C_LEVELS`).
After an error a thread stops taking tiles, and so do the others.
"""

from __future__ import annotations

import numpy as np

from ._atomic import fetch_add as _fetch_add
from ._jit import njit
from .detour._bvtree import _subdivide
from .detour.tile import _tile_kernel
from .recast import _chain
from .recast.distance import _kernel as _distance_kernel
from .recast.regions_watershed import _kernel as _watershed_kernel

__all__ = ["tiles_kernel", "typed_part", "row_order"]

T_TODO, T_FRONT, T_REGIONS, T_BACK, T_TILE, T_DONE = 0, 1, 2, 3, 4, 5
#: ``counts`` columns
COUNT_NAMES = (
    "spans", "walkable_spans", "compact_spans", "regions", "contours", "contour_verts",
    "raw_contour_verts", "polys", "poly_verts", "detail_meshes", "detail_verts", "detail_tris",
)  # fmt: skip
#: counts a tile reports at each level (``status[k, 6]``): 1 up to the contours,
#: 2 up to the polygons, 3 all
C_LEVELS = (7, 9, 12)
#: ``ticks`` columns: the front kernel's 7 stamps, the end of the distance field and
#: of the regions, the back kernel's 4 stamps, the end of the tile data
TK_FRONT, TK_DIST, TK_REGIONS, TK_BACK, TK_TILE = 0, 7, 8, 9, 13
N_TICKS = 14
#: ``sizes`` columns: verts, polys, detail verts, detail tris, links
S_VERTS, S_POLYS, S_DVERTS, S_DTRIS, S_LINKS = 0, 1, 2, 3, 4


@njit
def _cat(parts):  # pragma: no cover - numba
    """The 1-d arrays of ``parts`` one after the other (byte arrays in the tile kernel:
    one signature)."""
    n = 0
    for a in parts:
        n += a.shape[0]
    out = np.empty(n, parts[0].dtype)
    k = 0
    for a in parts:
        m = a.shape[0]
        out[k : k + m] = a
        k += m
    return out


@njit
def tiles_kernel(
    verts, tris, tri_areas, bin_start, bin_tris, todo, counter, tiles_x,
    xs_lo, xs_hi, zs_lo, zs_hi, y_lo, y_hi, width, height, border, cs, ch, wh, wc, wr,
    f_low, f_ledge, f_height, min_area, merge_area, max_error, max_edge_len, build_flags,
    nvp, sd, sme, radius, status, counts, ticks, sizes, tbounds,
):  # fmt: skip  # pragma: no cover - numba
    """Build the tiles ``todo[counter[0]++]`` until none is left (or a tile fails).

    Returns the built tiles' grid indices in the order built, and their arrays one
    tile after the other: verts, poly verts, poly neighbours, poly flags, poly
    vertex counts, poly areas, poly regions, detail vert bases, detail vert counts,
    detail tri bases, detail tri counts, detail verts, detail tris, BV node bounds
    (min, max) and BV node indices (``2 * polys`` rows per tile), each as raw bytes
    (:func:`typed_part` views them as their fields).
    """
    built = [np.int64(0)]
    # each field's arrays as raw bytes (one list type, so _cat compiles once); the
    # caller gives them back their dtypes and shapes (FIELD_TYPES, typed_part)
    l_v = [np.zeros(0, np.uint8)]
    l_pv = [np.zeros(0, np.uint8)]
    l_pn = [np.zeros(0, np.uint8)]
    l_pf = [np.zeros(0, np.uint8)]
    l_pc = [np.zeros(0, np.uint8)]
    l_pa = [np.zeros(0, np.uint8)]
    l_pr = [np.zeros(0, np.uint8)]
    l_dvb = [np.zeros(0, np.uint8)]
    l_dvc = [np.zeros(0, np.uint8)]
    l_dtb = [np.zeros(0, np.uint8)]
    l_dtc = [np.zeros(0, np.uint8)]
    l_dv = [np.zeros(0, np.uint8)]
    l_dt = [np.zeros(0, np.uint8)]
    l_bmin = [np.zeros(0, np.uint8)]
    l_bmax = [np.zeros(0, np.uint8)]
    l_bi = [np.zeros(0, np.uint8)]
    ntodo = todo.shape[0]
    bmin = np.empty(3, np.float32)
    bmax = np.empty(3, np.float32)
    info = np.zeros(8, np.int64)
    pad = np.float32(border) * cs
    while True:
        i = _fetch_add(counter, 0, 1)
        if i >= ntodo:
            break
        k = todo[i]
        tx = k % tiles_x
        ty = k // tiles_x
        bmin[0] = xs_lo[tx]
        bmin[1] = y_lo
        bmin[2] = zs_lo[ty]
        bmax[0] = xs_hi[tx]
        bmax[1] = y_hi
        bmax[2] = zs_hi[ty]
        sel = bin_tris[bin_start[k] : bin_start[k + 1]]
        tk = ticks[k]
        info[:] = 0
        cidx, ccnt, ys, hh, con, areas = _chain.front_kernel(
            verts, tris, tri_areas, sel, True, width, height, bmin, bmax, cs, ch, wh, wc, wr,
            f_low, f_ledge, f_height, info, tk[TK_FRONT:TK_DIST],
        )  # fmt: skip
        if info[0] != _chain.OK:
            status[k, 0] = T_FRONT
            status[k, 1] = info[0]
            status[k, 2] = info[1]
            _fetch_add(counter, 0, ntodo)
            break
        counts[k, 0] = info[_chain.F_SPANS]
        counts[k, 1] = info[_chain.F_WALKABLE]
        counts[k, 2] = info[_chain.F_COMPACT]
        flat_i = cidx.reshape(-1)
        flat_c = ccnt.reshape(-1)
        dist, mx = _distance_kernel(flat_i, flat_c, con, areas, width, height)
        tk[TK_DIST] = _chain._tsc()
        reg, nreg, wst = _watershed_kernel(
            flat_i, flat_c, con, areas, dist, width, height, np.int64(mx), border, min_area,
            merge_area,
        )  # fmt: skip
        tk[TK_REGIONS] = _chain._tsc()
        if wst < 0:
            status[k, 0] = T_REGIONS
            _fetch_add(counter, 0, ntodo)
            break
        counts[k, 3] = nreg
        # the contour set's (and polygon mesh's) bounds: shifted inward by the border
        pbmin = bmin.copy()
        pbmax = bmax.copy()
        pbmax[1] = np.float32(pbmax[1] + np.float32(np.float32(wh) * ch))
        if border > 0:
            pbmin[0] += pad
            pbmin[2] += pad
            pbmax[0] -= pad
            pbmax[2] -= pad
        info[:] = 0
        pv, pp, pr, pa, meshes, dverts, dtris = _chain.back_kernel(
            width, height, border, flat_i, flat_c, con, ys, reg, areas, np.int64(nreg), max_error,
            max_edge_len, build_flags, nvp, cs, ch, pbmin, sd, sme, radius, cs, ch, info,
            tk[TK_BACK:TK_TILE],
        )  # fmt: skip
        st = info[0]
        counts[k, 4] = info[_chain.B_CONTOURS]
        counts[k, 5] = info[_chain.B_CVERTS]
        counts[k, 6] = info[_chain.B_RAW]
        status[k, 4] = info[_chain.B_BAD_CONTOURS]
        status[k, 5] = info[_chain.B_BAD_HOLES]
        status[k, 6] = 1
        if st == _chain.EMPTY and counts[k, 4] == 0:
            status[k, 0] = T_BACK
            status[k, 1] = st
            continue
        if st == _chain.ERR_CONTOUR_CELLS or st == _chain.ERR_POLY_VERTS or st == _chain.ERR_POLYS:
            status[k, 0] = T_BACK
            status[k, 1] = st
            status[k, 2] = info[1]
            _fetch_add(counter, 0, ntodo)
            break
        counts[k, 7] = pp.shape[0]
        counts[k, 8] = pv.shape[0]
        status[k, 6] = 2
        if st == _chain.EMPTY:
            status[k, 0] = T_BACK
            status[k, 1] = st
            continue
        if st != _chain.OK:  # ERR_SAMPLES
            status[k, 0] = T_BACK
            status[k, 1] = st
            status[k, 2] = info[1]
            status[k, 3] = info[2]
            _fetch_add(counter, 0, ntodo)
            break
        npolys = pp.shape[0]
        counts[k, 9] = meshes.shape[0]
        counts[k, 10] = dverts.shape[0]
        counts[k, 11] = dtris.shape[0]
        status[k, 6] = 3
        # -- Detour tile data (create_navmesh_data's common case) --
        pflags = np.zeros(npolys, np.uint16)
        (
            tv, tpv, tpn, tpa, tpf, tvc, dvb, dvc, dtb, dtc, tdv, tdt, ibmin, ibmax, links, err,
        ) = _tile_kernel(pv, pp, nvp, pbmin, cs, ch, pa, pflags, meshes, dverts, dtris)  # fmt: skip
        if err != 0:
            status[k, 0] = T_TILE
            status[k, 1] = err
            _fetch_add(counter, 0, ntodo)
            break
        bv_min = np.zeros((2 * npolys, 3), np.uint16)
        bv_max = np.zeros((2 * npolys, 3), np.uint16)
        bv_i = np.zeros(2 * npolys, np.int32)
        _subdivide(ibmin, ibmax, np.int64(npolys), bv_min, bv_max, bv_i)
        tk[TK_TILE] = _chain._tsc()
        for a in range(3):
            tbounds[k, a] = pbmin[a]
            tbounds[k, 3 + a] = pbmax[a]
        sizes[k, S_VERTS] = tv.shape[0]
        sizes[k, S_POLYS] = npolys
        sizes[k, S_DVERTS] = tdv.shape[0]
        sizes[k, S_DTRIS] = tdt.shape[0]
        sizes[k, S_LINKS] = links
        built.append(k)
        l_v.append(tv.reshape(-1).view(np.uint8))
        l_pv.append(tpv.reshape(-1).view(np.uint8))
        l_pn.append(tpn.reshape(-1).view(np.uint8))
        l_pf.append(tpf.reshape(-1).view(np.uint8))
        l_pc.append(tvc.reshape(-1).view(np.uint8))
        l_pa.append(tpa.reshape(-1).view(np.uint8))
        l_pr.append(pr.reshape(-1).view(np.uint8))
        l_dvb.append(dvb.reshape(-1).view(np.uint8))
        l_dvc.append(dvc.reshape(-1).view(np.uint8))
        l_dtb.append(dtb.reshape(-1).view(np.uint8))
        l_dtc.append(dtc.reshape(-1).view(np.uint8))
        l_dv.append(tdv.reshape(-1).view(np.uint8))
        l_dt.append(tdt.reshape(-1).view(np.uint8))
        l_bmin.append(bv_min.reshape(-1).view(np.uint8))
        l_bmax.append(bv_max.reshape(-1).view(np.uint8))
        l_bi.append(bv_i.reshape(-1).view(np.uint8))
        status[k, 0] = T_DONE
    ids = np.empty(len(built) - 1, np.int64)
    for j in range(1, len(built)):
        ids[j - 1] = built[j]
    return (
        ids, _cat(l_v), _cat(l_pv), _cat(l_pn), _cat(l_pf), _cat(l_pc), _cat(l_pa), _cat(l_pr),
        _cat(l_dvb), _cat(l_dvc), _cat(l_dtb), _cat(l_dtc), _cat(l_dv), _cat(l_dt),
        _cat(l_bmin), _cat(l_bmax), _cat(l_bi),
    )  # fmt: skip


#: dtype and row width (0: 1-d) of each array :func:`tiles_kernel` returns after ``ids``
FIELD_TYPES = (
    (np.float32, 3), (np.uint16, 6), (np.uint16, 6), (np.uint16, 0), (np.uint8, 0),
    (np.uint8, 0), (np.uint16, 0), (np.uint32, 0), (np.uint8, 0), (np.uint32, 0),
    (np.uint8, 0), (np.float32, 3), (np.uint8, 4), (np.uint16, 3), (np.uint16, 3),
    (np.int32, 0),
)  # fmt: skip


def typed_part(part: tuple) -> tuple:
    """A :func:`tiles_kernel` result with its byte arrays viewed as their fields."""
    out = [part[0]]
    for raw, (dt, w) in zip(part[1:], FIELD_TYPES, strict=True):
        a = raw.view(dt)
        out.append(a.reshape(-1, w) if w else a)
    return tuple(out)


#: the per-tile size column of each returned array (after ``ids``); -2: 2 * polys
FIELD_SIZES = (
    S_VERTS, S_POLYS, S_POLYS, S_POLYS, S_POLYS, S_POLYS, S_POLYS, S_POLYS, S_POLYS,
    S_POLYS, S_POLYS, S_DVERTS, S_DTRIS, -2, -2, -2,
)  # fmt: skip


def row_order(parts: list[tuple], sizes: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The tiles of several :func:`tiles_kernel` calls in row order: their grid indices
    (ascending) and each array with the tiles' rows in that order."""
    parts = [p for p in parts if p[0].shape[0]]
    if len(parts) == 1:
        ids = parts[0][0]
        if ids.shape[0] < 2 or bool(np.all(ids[1:] > ids[:-1])):
            return ids, list(parts[0][1:])
    if not parts:
        return np.zeros(0, np.int64), []
    ids = np.concatenate([p[0] for p in parts])
    order = np.argsort(ids, kind="stable")
    out = []
    for f, col in enumerate(FIELD_SIZES):
        n = 2 * sizes[ids, S_POLYS] if col == -2 else sizes[ids, col]
        start = np.cumsum(n) - n  # of each tile in the concatenation (built order)
        cat = np.concatenate([p[1 + f] for p in parts])
        ln = n[order]
        # rows of the tiles in row order: start[order[j]] .. + ln[j]
        idx = np.repeat(start[order] - (np.cumsum(ln) - ln), ln) + np.arange(int(ln.sum()))
        out.append(cat[idx])
    return ids[order], out
