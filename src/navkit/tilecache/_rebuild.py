"""One tile-cache update step in one kernel: layer -> Detour tile -> navmesh swap.

``dtTileCache::buildNavMeshTile`` followed by the navmesh's ``removeTile`` /
``addTile``, for the recast-compatible mode (no detail mesh, BV tree or off-mesh
connection): FastLZ decompression, obstacle marking (slot order), regions,
contours, polygon mesh (the stage kernels of :mod:`~navkit.tilecache.fastlz`,
:mod:`~navkit.tilecache.obstacles`, :mod:`~navkit.tilecache.regions`,
:mod:`~navkit.tilecache.contours`, :mod:`~navkit.tilecache.polymesh`), then
:func:`navkit.detour._swap.swap_poly_mesh_tile` writes the tile into the navmesh
pools and relinks it. :func:`navkit.tilecache._update.run_steps` runs these steps
(the requests, the obstacle states and the navmesh's free slots around them) in one
call from Python, on the arrays the cache keeps
(:class:`~navkit.tilecache.update.CacheState`), and the cache's construction compiles
what its updates run.

:func:`rebuild_swap_detail` is the same step for navkit's default mode: after the
polygon mesh it builds the detail mesh (Recast's detail kernel over the layer's
heights, :func:`_layer_chf`), Detour's tile arrays and BV tree, picks the off-mesh
connections that start on the tile, and :func:`navkit.detour._swap.swap_tile_data`
writes all of it into the pools: the tiles
:func:`~navkit.tilecache.tilemesh.build_layer_tile` (``detail=True``) and the
NavMesh's Python swap give, field for field (tests/tilecache/test_default_step.py).
Obstacles arrive grown by the agent radius (the cache packs them so).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..detour._bvtree import _subdivide
from ..detour._swap import swap_poly_mesh_tile, swap_tile_data
from ..detour.tile import _tile_kernel
from ..recast.detail import _detail_kernel
from .contours import _contours_kernel
from .fastlz import _decompress
from .obstacles import (
    BOX,
    CYLINDER,
    ORIENTED_BOX,
    _mark_box,
    _mark_cylinder,
    _mark_oriented_box,
    _mark_prism,
)
from .polymesh import NVP, _polymesh_kernel
from .regions import _regions_kernel

__all__ = [
    "rebuild_swap",
    "rebuild_swap_detail",
    "BUILD_FAILED",
]

#: out[0] when the layer could not be built (out[6]: which stage); the navmesh is untouched
BUILD_FAILED = 10
CORRUPT, TOO_MANY_REGIONS, CONTOUR_OVERFLOW, MESH_OVERFLOW = 1, 2, 3, 4


@njit
def _failed(out, stage, raw):  # pragma: no cover - numba
    out[0] = BUILD_FAILED
    out[6] = stage
    e = np.zeros((0, 3), np.int64)
    return 1, raw[:0].reshape((0, 0)), e, e, np.zeros(0, np.int64)


@njit(link=False)
def _layer_mesh(
    comp, hdr, bmin, sel, kinds, fa, fb, rot, areas_id, pstart, pcount, pts, climb, max_error,
    wp, out,
):  # pragma: no cover - numba  # fmt: skip
    """Decompress a layer, mark its obstacles, build its polygon mesh (the stages of
    ``buildNavMeshTile`` before ``dtCreateNavMeshData``).

    Returns (status, heights (h, w) uint8 as marked, verts (nv, 3) int64, polys
    (np, 12) int64, areas (np,) uint8); status 1 when a stage failed (``out[0]`` =
    BUILD_FAILED, ``out[6]`` the stage).
    """
    n3 = 3 * hdr[0] * hdr[1]
    raw = np.empty(n3, np.uint8)  # (a complete decode writes every byte)
    ok = _decompress(comp, raw) == n3
    return _raw_mesh(
        raw, ok, hdr, bmin, sel, kinds, fa, fb, rot, areas_id, pstart, pcount, pts, climb,
        max_error, wp, out,
    )  # fmt: skip


@njit
def _layer_raw(comp, n3, rawpool, rrow, rfill):  # pragma: no cover - numba
    """The layer's decompressed bytes (heights, areas, cons) in a new buffer, and
    whether the stream decoded. ``rrow >= 0``: row ``rrow`` of ``rawpool`` keeps
    them: copied from it when ``rfill == 0`` (the layer's stream is not decoded
    again), written to it after the decode otherwise (the cache's copy of a layer
    under live obstacles, before any obstacle is marked)."""
    raw = np.empty(n3, np.uint8)  # (a complete decode or copy writes every byte)
    if rrow >= 0 and rfill == 0:
        src = rawpool[rrow]
        for k in range(n3):  # (a plain loop: a memcpy; the slice copy went byte by byte)
            raw[k] = src[k]
        return raw, True
    ok = _decompress(comp, raw) == n3
    if ok and rrow >= 0:
        dst = rawpool[rrow]
        for k in range(n3):
            dst[k] = raw[k]
    return raw, ok


@njit(link=False)
def _raw_mesh(
    raw, ok, hdr, bmin, sel, kinds, fa, fb, rot, areas_id, pstart, pcount, pts, climb,
    max_error, wp, out,
):  # pragma: no cover - numba  # fmt: skip
    """:func:`_layer_mesh` after the decode: ``raw`` the layer's bytes (``ok`` False: the
    stream was corrupt)."""
    w = hdr[0]
    h = hdr[1]
    n = w * h
    if not ok:
        return _failed(out, CORRUPT, raw)
    heights = raw[:n]
    areas = raw[n : 2 * n]
    cons = raw[2 * n :]
    h2 = heights.reshape((h, w))
    a2 = areas.reshape((h, w))
    cs = wp[0]
    ch = wp[1]
    for i in sel:
        k = kinds[i]
        aid = areas_id[i]
        if k == CYLINDER:
            _mark_cylinder(h2, a2, bmin, cs, ch, fa[i], fb[i, 0], fb[i, 1], aid)
        elif k == BOX:
            _mark_box(h2, a2, bmin, cs, ch, fa[i], fb[i], aid)
        elif k == ORIENTED_BOX:
            _mark_oriented_box(h2, a2, bmin, cs, ch, fa[i], fb[i], rot[i], aid)
        else:
            p0 = pstart[i]
            _mark_prism(h2, a2, bmin, cs, ch, pts[p0 : p0 + pcount[i]], fa[i, 1], fb[i, 1], aid)
    regs, nregs = _regions_kernel(heights, areas, w, h, climb)
    if nregs < 0:
        return _failed(out, TOO_MANY_REGIONS, raw)
    start, nverts, creg, carea, cverts, err = _contours_kernel(
        heights, areas, cons, regs, w, h, nregs, climb, max_error
    )
    if err < 0:
        return _failed(out, CONTOUR_OVERFLOW, raw)
    verts, polys, pareas, st = _polymesh_kernel(start, nverts, carea.astype(np.int64), cverts)
    if st != 0:
        return _failed(out, MESH_OVERFLOW, raw)
    return 0, h2, verts, polys, pareas


@njit(inline="always")  # (only the loops below call it: compiled once, there)
def rebuild_swap(
    comp, hdr, bmin, bmax, sel, kinds, fa, fb, rot, areas_id, pstart, pcount, pts,
    climb, max_error, d, cnt, ibits, wp, free_head, out, rawpool, rrow, rfill,
):  # pragma: no cover - numba  # fmt: skip
    """Rebuild one layer with its obstacles and swap it into the navmesh.

    Parameters
    ----------
    comp : (n,) uint8
        The layer's FastLZ stream (after the 56-byte header).
    hdr : (5,) int64
        width, height, tx, ty, tlayer.
    bmin, bmax : (3,) float32
        The layer header's bounds [wu].
    sel : (k,) int64
        Obstacle slots marked on the layer, in slot order; ``kinds``, ``fa``, ``fb``,
        ``rot``, ``areas_id``, ``pstart``, ``pcount`` are per slot (an
        :class:`~navkit.tilecache.obstacles.Obstacle`'s fields), ``pts`` (P, 2)
        float32 the prisms' corners.
    climb : int
        [vx]; ``max_error`` float32 [cells].
    d, cnt, ibits, wp, free_head, out
        As :func:`navkit.detour._swap.swap_poly_mesh_tile` (``wp[0:2]`` = cs, ch).
    rawpool, rrow, rfill
        The cache's decompressed layers (:func:`_layer_raw`).
    """
    raw, ok = _layer_raw(comp, 3 * hdr[0] * hdr[1], rawpool, rrow, rfill)
    st, heights, verts, polys, pareas = _raw_mesh(
        raw, ok, hdr, bmin, sel, kinds, fa, fb, rot, areas_id, pstart, pcount, pts, climb,
        max_error, wp, out,
    )  # fmt: skip
    if st != 0:
        return
    swap_poly_mesh_tile(
        d, cnt, ibits, hdr[2], hdr[3], hdr[4], bmin, bmax, wp, free_head, verts, polys, pareas,
        out,
    )  # fmt: skip


# -- navkit's default mode: detail mesh, BV tree, off-mesh connections ---------------------

#: out[6] of BUILD_FAILED when Detour's tile could not be made from the meshes
TILE_DATA = 5


@njit
def _layer_chf(h2, climb):  # pragma: no cover - numba
    """The compact heightfield of :func:`~navkit.tilecache.tilemesh.layer_heightfield`
    over a layer's (marked) heights: ``(w + 2) x (h + 2)`` cells (the ring repeats
    the edge cells), one span per cell with a floor, 4-neighbours connected within
    ``climb``. Returns (cells_index, cells_count, y, con, reg, width, height)."""
    h, w = h2.shape
    gw = w + 2
    gh = h + 2
    hh = np.empty((gh, gw), np.int64)
    for z in range(gh):
        sz = min(max(z - 1, 0), h - 1)
        for x in range(gw):
            hh[z, x] = h2[sz, min(max(x - 1, 0), w - 1)]
    cidx = np.empty(gw * gh, np.uint32)
    ccnt = np.empty(gw * gh, np.uint8)
    n = 0
    for z in range(gh):
        for x in range(gw):
            c = z * gw + x
            cidx[c] = n
            has = hh[z, x] != 0xFF
            ccnt[c] = 1 if has else 0
            n += 1 if has else 0
    y = np.empty(n, np.uint16)
    con = np.empty(n, np.uint32)
    k = 0
    for z in range(gh):
        for x in range(gw):
            v = hh[z, x]
            if v == 0xFF:
                continue
            c = np.uint32(0)
            for dr in range(4):
                dx = -1 if dr == 0 else (1 if dr == 2 else 0)
                dz = 1 if dr == 1 else (-1 if dr == 3 else 0)
                nx = x + dx
                nz = z + dz
                ok = 0 <= nx < gw and 0 <= nz < gh
                if ok:
                    u = hh[nz, nx]
                    ok = u != 0xFF and abs(u - v) <= climb
                if not ok:
                    c |= np.uint32(0x3F) << np.uint32(6 * dr)
            y[k] = v
            con[k] = c
            k += 1
    return cidx, ccnt, y, con, np.zeros(n, np.uint16), gw, gh


@njit
def _off_mesh_side(px, pz, bmin, bmax):  # pragma: no cover - numba
    """Side (0..7) of a point outside the tile's xz bounds, 0xFF inside."""
    code = 0
    if px >= bmax[0]:
        code |= 1
    if pz >= bmax[2]:
        code |= 2
    if px < bmin[0]:
        code |= 4
    if pz < bmin[2]:
        code |= 8
    if code == 1:
        return 0
    if code == 3:
        return 1
    if code == 2:
        return 2
    if code == 6:
        return 3
    if code == 4:
        return 4
    if code == 12:
        return 5
    if code == 8:
        return 6
    if code == 9:
        return 7
    return 0xFF


@njit(inline="always")  # (only the loops below call it: compiled once, there)
def rebuild_swap_detail(
    comp, hdr, bmin, bmax, sel, kinds, fa, fb, rot, areas_id, pstart, pcount, pts,
    climb, max_error, dparams, offmesh, d, cnt, ibits, wp, free_head, out, rawpool, rrow,
    rfill,
):  # pragma: no cover - numba  # fmt: skip
    """:func:`rebuild_swap` for navkit's default mode: the tile also gets a detail
    mesh, a BV tree and the off-mesh connections that start on it, as
    :func:`~navkit.tilecache.tilemesh.build_layer_tile` (``detail=True``) builds them.

    Parameters
    ----------
    dparams : (3,) float32
        Detail sample distance [wu], sample max error [wu], edge radius [cells]
        (``build_poly_mesh_detail``'s settings).
    offmesh : tuple
        The off-mesh connections: verts (n, 6) float32, rad (n,) float32,
        bidirectional (n,) uint8, area (n,) uint8, flags (n,) uint16, user_id (n,)
        uint32 (n = 0: none).
    Others as :func:`rebuild_swap`. ``out[0]`` = BUILD_FAILED, ``out[6]`` = TILE_DATA
    when Detour's tile data could not be made.
    """
    raw, ok = _layer_raw(comp, 3 * hdr[0] * hdr[1], rawpool, rrow, rfill)
    st, h2, verts, polys, pareas = _raw_mesh(
        raw, ok, hdr, bmin, sel, kinds, fa, fb, rot, areas_id, pstart, pcount, pts, climb,
        max_error, wp, out,
    )  # fmt: skip
    if st != 0:
        return
    cs = wp[0]
    ch = wp[1]
    npolys = polys.shape[0]
    pv = verts.astype(np.uint16)
    pp = polys.astype(np.uint16)
    cidx, ccnt, sy, con, sreg, gw, gh = _layer_chf(h2, climb)
    dm, dv, dt = _detail_kernel(
        pv, pp, np.zeros(npolys, np.uint16), np.int64(NVP), cs, ch, bmin, np.int64(0),
        cidx, ccnt, np.int64(gw), np.int64(gh), sy, con, sreg, cs, ch,
        dparams[0], dparams[1], np.int64(dparams[2]),
    )  # fmt: skip
    (
        tverts, poly_verts, poly_neis, tareas, tflags, vcount, dvb, dvc, dtb, dtc, dverts,
        dtris, ibmin, ibmax, nlinks, err,
    ) = _tile_kernel(
        pv, pp, np.int64(NVP), bmin, cs, ch, pareas.astype(np.uint8), np.ones(npolys, np.uint16),
        dm, dv, dt,
    )  # fmt: skip
    if err != 0 or (npolys > 0 and verts.shape[0] >= 0xFFFF):
        out[0] = BUILD_FAILED
        out[6] = TILE_DATA
        return
    bv_bmin = np.zeros((2 * npolys, 3), np.uint16)
    bv_bmax = np.zeros((2 * npolys, 3), np.uint16)
    bv_i = np.zeros(2 * npolys, np.int32)
    if npolys > 0:
        _subdivide(ibmin, ibmax, npolys, bv_bmin, bv_bmax, bv_i)
    # off-mesh connections whose start lies on the tile (dtCreateNavMeshData)
    ov, orad, obidir, oarea, oflags, ouid = offmesh
    ncon = orad.shape[0]
    stored = np.empty(ncon, np.int64)
    end_side = np.empty(ncon, np.int64)
    nstored = 0
    if ncon > 0 and npolys > 0:
        hmin = np.float32(3.4028234663852886e38)
        hmax = np.float32(-3.4028234663852886e38)
        for i in range(dv.shape[0]):
            hmin = min(hmin, dv[i, 1])
            hmax = max(hmax, dv[i, 1])
        hmin = np.float32(hmin - wp[4])
        hmax = np.float32(hmax + wp[4])
        for i in range(ncon):
            c0 = _off_mesh_side(ov[i, 0], ov[i, 2], bmin, bmax)
            c1 = _off_mesh_side(ov[i, 3], ov[i, 5], bmin, bmax)
            if c0 == 0xFF and (ov[i, 1] < hmin or ov[i, 1] > hmax):
                c0 = 0
            nlinks += 2 * ((1 if c0 == 0xFF else 0) + (1 if c1 == 0xFF else 0))
            if c0 == 0xFF:
                stored[nstored] = i
                end_side[nstored] = c1
                nstored += 1
    swap_tile_data(
        d, cnt, ibits, hdr[2], hdr[3], hdr[4], bmin, bmax, wp, free_head,
        (
            tverts, poly_verts, poly_neis, tflags, tareas, vcount, dvb, dtb, dvc, dtc,
            dverts, dtris, bv_bmin, bv_bmax, bv_i,
        ),
        offmesh, stored[:nstored], end_side[:nstored], nlinks, out,
    )  # fmt: skip
