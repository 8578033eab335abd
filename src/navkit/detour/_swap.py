"""In-place tile swaps and pool compaction over a NavMesh's pools, in numba.

The tile cache replaces one navmesh tile per update step. Done from Python
(:meth:`NavMesh._replace_tile`) that costs ~0.15 ms: the tile's arrays are
appended to the pools with numpy slicing, and the link kernel receives the 63
arrays of :class:`~navkit.detour.navmesh.NavMeshArrays` (numba types and unboxes
each on every call). Here the whole swap is one kernel over the pools described
by one int64 array (:meth:`NavMesh._kernel_desc`: address and shape of every
tile-table and pool array at full capacity, as ``_view.pack_arrays`` does for the
query view), with the used/dead counts of the pools in ``cnt`` ((2, 8) int64, the
NavMesh's own counters). Nothing is allocated in Python.

:func:`swap_poly_mesh_tile` is ``removeTile`` + ``dtCreateNavMeshData`` +
``addTile`` for a tile without detail mesh, BV tree or off-mesh connection (what
``dtTileCache::buildNavMeshTile`` creates): same slot, salt, lookup chain, link
slots and free lists as :meth:`NavMesh._remove_tile` / :meth:`NavMesh._add_tile`
(the link steps are the kernels of :mod:`navkit.detour._links`). The new tile is
appended at the end of the pools; when a pool lacks room it returns the counts
it needs before touching anything, and the caller grows the pools and calls again.

:func:`compact_pools` removes the dead ranges of every pool in place (live ranges
move down in pool order; every cross-pool index is shifted, ``link_poly``
re-resolved from the refs). Pool positions are internal: refs, links and exports
do not change.
"""

from __future__ import annotations

import numpy as np

from .._jit import F32, njit, ref_opener
from . import _links as L
from .navmesh import _POOL_SPEC, _TILE_SPEC, NavMeshArrays

#: Pools in ``cnt`` column order (NavMesh._POOLS order).
POOL_NAMES = ("vert", "poly", "link", "dmesh", "dvert", "dtri", "bv", "off")
VERT, POLY, LINK, DMESH, DVERT, DTRI, BV, OFF = range(8)
#: descriptor row of each pool's first array (its capacity)
_CAP_ROW = (32, 33, 41, 48, 52, 53, 54, 57)

#: swap_poly_mesh_tile statuses (out[0])
OK = 0
NEED_GROW = 1
TOO_MANY_POLYS = 2
NO_FREE_SLOT = 3
BAD_POLY = 4
BAD_VERTEX = 5
TOO_MANY_VERTS = 6

_NVP = 6
_NULL = 0xFFFF


def _pool_spec() -> tuple:
    """(name, dtype, ndim) of every :class:`NavMeshArrays` field, in order: the arrays
    ``NavMesh._kernel_desc`` describes (tile table, lookup table, pools)."""
    spec: list[tuple[str, object, int]] = []
    for name in NavMeshArrays._fields:
        if name == "lut":
            spec.append((name, np.int32, 1))
        else:
            dt, cols = _TILE_SPEC[name] if name in _TILE_SPEC else _POOL_SPEC[name]
            spec.append((name, dt, 2 if cols else 1))
    return tuple(spec)


#: ``open_pool(d)``: the navmesh's tile table and pools described by ``d``
#: (``NavMesh._kernel_desc``) as one reference (:class:`navkit._jit.ArraysRef`): its
#: attributes are the :class:`NavMeshArrays` fields as lent arrays at full capacity (the
#: used rows are ``cnt[0]``). Passed to a helper, it is one pointer (the named tuple of 63
#: arrays was ~400 flattened arguments per call, and 63 array structs built per open).
#: No kernel may return one of its arrays (a cached kernel whose return type holds lent
#: arrays fails on reload); helpers return scalars.
open_pool = ref_opener(NavMeshArrays, _pool_spec())


@njit
def capacity(d, k):
    """Allocated rows of pool ``k``."""
    return d[3 * _CAP_ROW[k] + 1]


@njit
def _hash(x, y, mask):
    return ((np.int64(0x8DA6B343) * x + np.int64(0xD8163841) * y) & 0xFFFFFFFF) & mask


@njit
def _slots_at(a, mask, x, y, skip, out, n):
    """Append the slots at (x, y) (lookup-chain order, except ``skip``) to ``out[n:]``."""
    s = np.int64(a.lut[_hash(x, y, mask)])
    while s >= 0:
        if a.tile_x[s] == x and a.tile_y[s] == y and s != skip:
            out[n] = s
            n += 1
        s = np.int64(a.tile_next[s])
    return n


_DX = (1, 1, 0, -1, -1, -1, 0, 1)


@njit
def _count_around(a, mask, x, y):
    """Tiles at (x, y) and its 8 neighbours."""
    n = 0
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            s = np.int64(a.lut[_hash(x + dx, y + dy, mask)])
            while s >= 0:
                if a.tile_x[s] == x + dx and a.tile_y[s] == y + dy:
                    n += 1
                s = np.int64(a.tile_next[s])
    return n


_DY = (0, 1, 1, 1, 0, -1, -1, -1)


@njit
def _neighbours(a, mask, x, y, nei, sides):
    """Tiles around (x, y), side 0..7 in order (``getNeighbourTilesAt``)."""
    n = 0
    for side in range(8):
        m = _slots_at(a, mask, x + _DX[side], y + _DY[side], -1, nei, n)
        for k in range(n, m):
            sides[k] = side
        n = m
    return n


@njit
def _ilog2_next_pow2(v):
    p = 1
    b = 0
    while p < v:
        p <<= 1
        b += 1
    return b


# -- the steps every swap shares -------------------------------------------------------


@njit
def _find_tile(a, mask, tx, ty, tlayer):
    """Slot of the tile at (tx, ty, tlayer), -1 when none."""
    s = np.int64(a.lut[_hash(tx, ty, mask)])
    while s >= 0:
        if a.tile_x[s] == tx and a.tile_y[s] == ty and a.tile_layer[s] == tlayer:
            return s
        s = np.int64(a.tile_next[s])
    return np.int64(-1)


@njit
def _detach(a, old, tx, ty, mask, unlink, ibits, cnt, others, out):
    """``removeTile`` of slot ``old``: out of the lookup chain, its ranges counted dead,
    salt bumped; the tiles that may link into it are written to ``others`` (their
    count is returned). ``unlink``: drop their links now (no tile replaces it)."""
    salt_bits, tile_bits, poly_bits = ibits[0], ibits[1], ibits[2]
    out[2] = old
    out[3] = a.tile_salt[old]
    out[4] = a.tile_poly_count[old]
    out[1] |= 1
    hb = _hash(tx, ty, mask)
    prev = np.int64(-1)
    cur = np.int64(a.lut[hb])
    while cur >= 0:
        if cur == old:
            if prev < 0:
                a.lut[hb] = a.tile_next[cur]
            else:
                a.tile_next[prev] = a.tile_next[cur]
            break
        prev = cur
        cur = np.int64(a.tile_next[cur])
    n_others = _slots_at(a, mask, tx, ty, -1, others, 0)
    sides0 = np.zeros(others.shape[0], np.int64)
    n_others += _neighbours(a, mask, tx, ty, others[n_others:], sides0)
    if unlink:
        L.disconnect_tile(a, old, others[:n_others], tile_bits, poly_bits)
    pb = a.tile_poly_base[old]
    for gp in range(pb, pb + a.tile_poly_count[old]):
        a.poly_tile[gp] = -1
        a.poly_first_link[gp] = -1
    cnt[1, VERT] += a.tile_vert_count[old]
    cnt[1, POLY] += a.tile_poly_count[old]
    cnt[1, LINK] += a.tile_link_count[old]
    cnt[1, DMESH] += a.tile_dmesh_count[old]
    cnt[1, DVERT] += a.tile_dvert_count[old]
    cnt[1, DTRI] += a.tile_dtri_count[old]
    cnt[1, BV] += a.tile_bv_count[old]
    cnt[1, OFF] += a.tile_off_count[old]
    a.tile_vert_count[old] = 0
    a.tile_poly_count[old] = 0
    a.tile_link_count[old] = 0
    a.tile_dmesh_count[old] = 0
    a.tile_dvert_count[old] = 0
    a.tile_dtri_count[old] = 0
    a.tile_bv_count[old] = 0
    a.tile_off_count[old] = 0
    a.tile_used[old] = 0
    a.tile_link_free[old] = -1
    salt = (np.int64(a.tile_salt[old]) + 1) & ((np.int64(1) << salt_bits) - 1)
    a.tile_salt[old] = salt if salt != 0 else 1
    a.tile_next[old] = -1
    return n_others


@njit
def _attach(a, slot, tx, ty, mask, cnt, need, out):
    """``addTile``'s slot: into the lookup chain; the pools' used counts grow by
    ``need``. Returns each pool's first new row (reopen the pools after it)."""
    out[5] = slot
    out[1] |= 2
    hb = _hash(tx, ty, mask)
    a.tile_next[slot] = a.lut[hb]
    a.lut[hb] = slot
    base = np.zeros(8, np.int64)
    for k in range(8):
        base[k] = cnt[0, k]
        cnt[0, k] += need[k]
    return base


@njit
def _make_room(d, cnt, ibits, need, mask, tx, ty, tlayer, npolys, free_head, out):
    """The common head of both swaps: check capacity (``NEED_GROW`` with the counts),
    remove the tile at (tx, ty, tlayer) if any, and take a slot for ``need`` rows
    (``addTile``: the freed slot, else the free list's head). Returns (slot, old,
    base, others, n_others); slot < 0 means the swap is over (out[0] says why, or the
    tile was only removed)."""
    none = np.zeros(1, np.int64)
    for k in range(8):
        if cnt[0, k] + need[k] > capacity(d, k):
            out[0] = NEED_GROW
            for j in range(8):
                out[8 + j] = need[j]
            return np.int64(-1), np.int64(-1), none, none, 0
    a = open_pool(d)
    old = _find_tile(a, mask, tx, ty, tlayer)
    if old < 0 and npolys > 0 and free_head < 0:
        out[0] = NO_FREE_SLOT
        return np.int64(-1), old, none, none, 0
    others = np.zeros(_count_around(a, mask, tx, ty) + 1, np.int64)
    n_others = 0
    if old >= 0:
        n_others = _detach(a, old, tx, ty, mask, npolys == 0, ibits, cnt, others, out)
    if npolys == 0:
        _maybe_compact(d, cnt, ibits, out)
        return np.int64(-1), old, none, others, n_others
    slot = old if old >= 0 else np.int64(free_head)
    base = _attach(a, slot, tx, ty, mask, cnt, need, out)
    return slot, old, base, others, n_others


@njit
def _zero_links(a, lb, n):
    for li in range(lb, lb + n):
        a.link_ref[li] = 0
        a.link_poly[li] = -1
        a.link_next[li] = -1
        a.link_edge[li] = 0
        a.link_side[li] = 0
        a.link_bmin[li] = 0
        a.link_bmax[li] = 0


@njit
def _tile_row(a, slot, base, need, tx, ty, tlayer, bmin, bmax, wp, off_mesh_base):
    """The tile-table row of a new tile (ranges ``base`` / ``need``)."""
    a.tile_vert_base[slot] = base[VERT]
    a.tile_poly_base[slot] = base[POLY]
    a.tile_link_base[slot] = base[LINK]
    a.tile_dmesh_base[slot] = base[DMESH]
    a.tile_dvert_base[slot] = base[DVERT]
    a.tile_dtri_base[slot] = base[DTRI]
    a.tile_bv_base[slot] = base[BV]
    a.tile_off_base[slot] = base[OFF]
    a.tile_vert_count[slot] = need[VERT]
    a.tile_poly_count[slot] = need[POLY]
    a.tile_link_count[slot] = need[LINK]
    a.tile_dmesh_count[slot] = need[DMESH]
    a.tile_dvert_count[slot] = need[DVERT]
    a.tile_dtri_count[slot] = need[DTRI]
    a.tile_bv_count[slot] = need[BV]
    a.tile_off_count[slot] = need[OFF]
    a.tile_used[slot] = 1
    a.tile_x[slot] = tx
    a.tile_y[slot] = ty
    a.tile_layer[slot] = tlayer
    a.tile_user_id[slot] = 0
    for k in range(3):
        a.tile_bmin[slot, k] = bmin[k]
        a.tile_bmax[slot, k] = bmax[k]
    a.tile_walkable_height[slot] = wp[2]
    a.tile_walkable_radius[slot] = wp[3]
    a.tile_walkable_climb[slot] = wp[4]
    a.tile_bv_quant[slot] = F32(1.0) / wp[0]
    a.tile_off_mesh_base[slot] = off_mesh_base


@njit(link=False)
def _relink(a, old, others, slot, tx, ty, mask, tile_bits, poly_bits):
    """Every link step of ``removeTile`` (slot ``old``, -1: none) then ``addTile``."""
    same = np.zeros(others.shape[0] + 1, np.int64)
    n_same = _slots_at(a, mask, tx, ty, slot, same, 0)
    nei = np.zeros(_count_around(a, mask, tx, ty) + 1, np.int64)
    sides = np.zeros(nei.shape[0], np.int64)
    n_nei = _neighbours(a, mask, tx, ty, nei, sides)
    if old >= 0:
        L.replace_tile(
            a, old, others, slot, same[:n_same], nei[:n_nei], sides[:n_nei], tile_bits, poly_bits
        )
    else:
        L.connect_tile(a, slot, same[:n_same], nei[:n_nei], sides[:n_nei], tile_bits, poly_bits)


@njit
def swap_poly_mesh_tile(
    d, cnt, ibits, tx, ty, tlayer, bmin, bmax, wp, free_head, pverts, polys, pareas, out
):  # pragma: no cover - numba
    """Replace the tile at (tx, ty, tlayer) by the one built from a polygon mesh.

    Parameters
    ----------
    d : int64 descriptor (NavMesh._kernel_desc); cnt : (2, 8) int64 used/dead per pool.
    ibits : (5,) int64 salt_bits, tile_bits, poly_bits, lut mask, ref64.
    bmin, bmax : (3,) float32 tile bounds [wu].
    wp : (5,) float32 cs, ch, walkable_height, walkable_radius, walkable_climb.
    free_head : the NavMesh's first free slot (-1: none); used only when no tile
        is at the location.
    pverts : (nv, 3) int64 voxel vertices; polys : (np, 12) int64 (``0xffff`` none;
        ``0x8000 | dir`` portals, Recast's rcPolyMesh layout with nvp 6); pareas (np,).
        ``np == 0``: the old tile is removed and none added.
    out : (16,) int64
        [status, action (1 removed, 2 added, 3 replaced), old slot, old salt,
        old poly count, new slot, 1 when the pools are due for compaction (the caller's
        ``NavMesh._swap_done`` compacts them), -, then the 8 pool
        counts needed on NEED_GROW].

    The new polygons get flag 1 and their area (63 -> 0), as ``buildNavMeshTile``.
    """
    for k in range(16):
        out[k] = 0
    out[2] = -1
    out[5] = -1
    tile_bits, poly_bits, mask, ref64 = ibits[1], ibits[2], ibits[3], ibits[4]
    nverts = pverts.shape[0]
    npolys = polys.shape[0]
    cs, ch = wp[0], wp[1]
    # counts and checks (nothing is modified before they pass)
    need = np.zeros(8, np.int64)
    edges = 0
    portals = 0
    tris = 0
    if npolys > 0:
        if nverts >= 0xFFFF:
            out[0] = TOO_MANY_VERTS
            return
        for i in range(npolys):
            n = 0
            while n < _NVP and polys[i, n] != _NULL:
                n += 1
            if n < 3:
                out[0] = BAD_POLY
                return
            for j in range(n):
                if polys[i, j] >= nverts:
                    out[0] = BAD_VERTEX
                    return
                raw = polys[i, _NVP + j]
                if (raw & 0x8000) != 0 and (raw & 0xF) != 0xF:
                    portals += 1
            edges += n
            tris += n - 2
        if ref64 == 0 and poly_bits < _ilog2_next_pow2(npolys):
            out[0] = TOO_MANY_POLYS
            return
        need[VERT] = nverts
        need[POLY] = npolys
        need[LINK] = edges + 2 * portals
        need[DMESH] = npolys
        need[DTRI] = tris
    slot, old, base, others, n_others = _make_room(
        d, cnt, ibits, need, mask, tx, ty, tlayer, npolys, free_head, out
    )
    if slot < 0:
        return
    a = open_pool(d)
    vb = base[VERT]
    pb = base[POLY]
    lb = base[LINK]
    for i in range(nverts):
        a.verts[vb + i, 0] = bmin[0] + F32(pverts[i, 0]) * cs
        a.verts[vb + i, 1] = bmin[1] + F32(pverts[i, 1]) * ch
        a.verts[vb + i, 2] = bmin[2] + F32(pverts[i, 2]) * cs
    tb = base[DTRI]
    for i in range(npolys):
        gp = pb + i
        n = 0
        while n < _NVP and polys[i, n] != _NULL:
            n += 1
        for j in range(_NVP):
            if j < n:
                a.poly_verts[gp, j] = vb + polys[i, j]
                raw = polys[i, _NVP + j]
                if raw & 0x8000:
                    dd = raw & 0xF
                    if dd == 0xF:
                        a.poly_neis[gp, j] = 0
                    elif dd == 0:
                        a.poly_neis[gp, j] = 0x8000 | 4
                    elif dd == 1:
                        a.poly_neis[gp, j] = 0x8000 | 2
                    elif dd == 2:
                        a.poly_neis[gp, j] = 0x8000
                    else:
                        a.poly_neis[gp, j] = 0x8000 | 6
                else:
                    a.poly_neis[gp, j] = (raw + 1) & 0xFFFF
            else:
                a.poly_verts[gp, j] = vb
                a.poly_neis[gp, j] = 0
        a.poly_flags[gp] = 1
        ar = pareas[i]
        a.poly_area[gp] = 0 if ar == 63 else ar
        a.poly_type[gp] = 0
        a.poly_vert_count[gp] = n
        a.poly_first_link[gp] = -1
        a.poly_tile[gp] = slot
        dm = base[DMESH] + i
        a.dmesh_vert_base[dm] = base[DVERT]
        a.dmesh_tri_base[dm] = tb
        a.dmesh_vert_count[dm] = 0
        a.dmesh_tri_count[dm] = n - 2
        for j in range(2, n):
            f = 4
            if j == 2:
                f |= 1
            if j == n - 1:
                f |= 16
            a.dtris[tb, 0] = 0
            a.dtris[tb, 1] = j - 1
            a.dtris[tb, 2] = j
            a.dtris[tb, 3] = f
            tb += 1
    _zero_links(a, lb, need[LINK])
    _tile_row(a, slot, base, need, tx, ty, tlayer, bmin, bmax, wp, npolys)
    _relink(a, old, others[:n_others], slot, tx, ty, mask, tile_bits, poly_bits)
    _maybe_compact(d, cnt, ibits, out)


@njit(link=False)
def swap_tile_data(
    d, cnt, ibits, tx, ty, tlayer, bmin, bmax, wp, free_head, t, offmesh, stored, end_side,
    nlinks, out,
):  # pragma: no cover - numba  # fmt: skip
    """:func:`swap_poly_mesh_tile` for a whole Detour tile (detail mesh, BV tree,
    off-mesh connections): what :meth:`NavMesh._replace_tile` / ``_add_tile`` /
    ``_remove_tile`` do with the :class:`~navkit.detour.tile.TileData` of
    ``create_navmesh_data``.

    Parameters
    ----------
    t : tuple
        The tile's ground polygons with tile-local indices, as ``TileData`` holds them:
        verts, poly_verts, poly_neis, poly_flags, poly_area, poly_vert_count,
        detail_vert_base, detail_tri_base, detail_vert_count, detail_tri_count,
        detail_verts, detail_tris, bv_bmin, bv_bmax, bv_i. No polygon: the old tile is
        removed.
    offmesh : tuple
        All off-mesh connections: verts (n, 6) float32, rad, bidirectional (uint8),
        area, flags, user_id.
    stored, end_side : (k,) int64
        The connections the tile stores (their start lies on it), in order, and the
        side of each one's end (0xFF: on the tile).
    nlinks : int
        The tile's link count (``TileData.max_link_count``).
    d, cnt, ibits, tx, ty, tlayer, bmin, bmax, wp, free_head, out
        As :func:`swap_poly_mesh_tile`.
    """
    (
        verts, poly_verts, poly_neis, poly_flags, poly_area, poly_vc,
        dvb, dtb, dvc, dtc, dverts, dtris, bv_bmin, bv_bmax, bv_i,
    ) = t  # fmt: skip
    ov, orad, obidir, oarea, oflags, ouid = offmesh
    for k in range(16):
        out[k] = 0
    out[2] = -1
    out[5] = -1
    tile_bits, poly_bits, mask, ref64 = ibits[1], ibits[2], ibits[3], ibits[4]
    nground = poly_verts.shape[0]
    nv = verts.shape[0]
    nstored = stored.shape[0]
    npolys = nground + nstored
    need = np.zeros(8, np.int64)
    if nground > 0:
        if ref64 == 0 and poly_bits < _ilog2_next_pow2(npolys):
            out[0] = TOO_MANY_POLYS
            return
        need[VERT] = nv + 2 * nstored
        need[POLY] = npolys
        need[LINK] = nlinks
        need[DMESH] = nground
        need[DVERT] = dverts.shape[0]
        need[DTRI] = dtris.shape[0]
        need[BV] = bv_i.shape[0]
        need[OFF] = nstored
    else:
        npolys = 0
    slot, old, base, others, n_others = _make_room(
        d, cnt, ibits, need, mask, tx, ty, tlayer, npolys, free_head, out
    )
    if slot < 0:
        return
    a = open_pool(d)
    vb = base[VERT]
    pb = base[POLY]
    for i in range(nv):
        for k in range(3):
            a.verts[vb + i, k] = verts[i, k]
    for i in range(nground):
        gp = pb + i
        for j in range(_NVP):
            a.poly_verts[gp, j] = vb + np.int64(poly_verts[i, j])
            a.poly_neis[gp, j] = poly_neis[i, j]
        a.poly_flags[gp] = poly_flags[i]
        a.poly_area[gp] = poly_area[i]
        a.poly_type[gp] = 0
        a.poly_vert_count[gp] = poly_vc[i]
        a.poly_first_link[gp] = -1
        a.poly_tile[gp] = slot
    # the off-mesh connections' vertices and polygons follow the ground's
    for n in range(nstored):
        i = stored[n]
        for k in range(3):
            a.verts[vb + nv + 2 * n, k] = ov[i, k]
            a.verts[vb + nv + 2 * n + 1, k] = ov[i, 3 + k]
        gp = pb + nground + n
        for j in range(_NVP):
            a.poly_verts[gp, j] = vb
            a.poly_neis[gp, j] = 0
        a.poly_verts[gp, 0] = vb + nv + 2 * n
        a.poly_verts[gp, 1] = vb + nv + 2 * n + 1
        a.poly_flags[gp] = oflags[i]
        a.poly_area[gp] = oarea[i] & 0x3F
        a.poly_type[gp] = 1
        a.poly_vert_count[gp] = 2
        a.poly_first_link[gp] = -1
        a.poly_tile[gp] = slot
        m = base[OFF] + n
        for k in range(6):
            a.off_pos[m, k] = ov[i, k]
        a.off_rad[m] = orad[i]
        a.off_poly[m] = gp
        a.off_flags[m] = 1 if obidir[i] != 0 else 0
        a.off_side[m] = end_side[n]
        a.off_user_id[m] = ouid[i]
    _zero_links(a, base[LINK], need[LINK])
    for i in range(nground):
        m = base[DMESH] + i
        a.dmesh_vert_base[m] = np.int64(dvb[i]) + base[DVERT]
        a.dmesh_tri_base[m] = np.int64(dtb[i]) + base[DTRI]
        a.dmesh_vert_count[m] = dvc[i]
        a.dmesh_tri_count[m] = dtc[i]
    for i in range(need[DVERT]):
        for k in range(3):
            a.dverts[base[DVERT] + i, k] = dverts[i, k]
    for i in range(need[DTRI]):
        for k in range(4):
            a.dtris[base[DTRI] + i, k] = dtris[i, k]
    for i in range(need[BV]):
        for k in range(3):
            a.bv_bmin[base[BV] + i, k] = bv_bmin[i, k]
            a.bv_bmax[base[BV] + i, k] = bv_bmax[i, k]
        a.bv_i[base[BV] + i] = bv_i[i]
    _tile_row(a, slot, base, need, tx, ty, tlayer, bmin, bmax, wp, nground)
    _relink(a, old, others[:n_others], slot, tx, ty, mask, tile_bits, poly_bits)
    _maybe_compact(d, cnt, ibits, out)


@njit
def _maybe_compact(d, cnt, ibits, out):
    """Flag a compaction (out[6] = 1) when a pool is more than half dead: the caller
    runs :func:`compact_pools` (``NavMesh._swap_done``) after the kernel returns. Not
    called from here, so a swap compiles without it (~4 CPU s of the first tile-cache
    update: the compaction and its per-dtype moves are compiled only when due)."""
    for k in range(8):
        if cnt[1, k] > 0 and cnt[1, k] * 2 > cnt[0, k]:
            out[6] = 1
            return


@njit
def _move1(arr, src, dst, n):
    for i in range(n):
        arr[dst + i] = arr[src + i]


@njit
def _move2(arr, src, dst, n):
    for i in range(n):
        for j in range(arr.shape[1]):
            arr[dst + i, j] = arr[src + i, j]


@njit
def _tile_range(a, k, t):
    """(first row, row count) of tile slot ``t`` in pool ``k`` (scalars: a kernel must
    not return the pool's lent arrays, see :data:`open_pool`)."""
    if k == VERT:
        return a.tile_vert_base[t], a.tile_vert_count[t]
    if k == POLY:
        return a.tile_poly_base[t], a.tile_poly_count[t]
    if k == LINK:
        return a.tile_link_base[t], a.tile_link_count[t]
    if k == DMESH:
        return a.tile_dmesh_base[t], a.tile_dmesh_count[t]
    if k == DVERT:
        return a.tile_dvert_base[t], a.tile_dvert_count[t]
    if k == DTRI:
        return a.tile_dtri_base[t], a.tile_dtri_count[t]
    if k == BV:
        return a.tile_bv_base[t], a.tile_bv_count[t]
    return a.tile_off_base[t], a.tile_off_count[t]


@njit
def _set_tile_base(a, k, t, v):
    if k == VERT:
        a.tile_vert_base[t] = v
    elif k == POLY:
        a.tile_poly_base[t] = v
    elif k == LINK:
        a.tile_link_base[t] = v
    elif k == DMESH:
        a.tile_dmesh_base[t] = v
    elif k == DVERT:
        a.tile_dvert_base[t] = v
    elif k == DTRI:
        a.tile_dtri_base[t] = v
    elif k == BV:
        a.tile_bv_base[t] = v
    else:
        a.tile_off_base[t] = v


@njit
def _move_rows(a, k, src, dst, n):
    if k == VERT:
        _move2(a.verts, src, dst, n)
    elif k == POLY:
        _move2(a.poly_verts, src, dst, n)
        _move2(a.poly_neis, src, dst, n)
        _move1(a.poly_flags, src, dst, n)
        _move1(a.poly_area, src, dst, n)
        _move1(a.poly_type, src, dst, n)
        _move1(a.poly_vert_count, src, dst, n)
        _move1(a.poly_first_link, src, dst, n)
        _move1(a.poly_tile, src, dst, n)
    elif k == LINK:
        _move1(a.link_ref, src, dst, n)
        _move1(a.link_poly, src, dst, n)
        _move1(a.link_next, src, dst, n)
        _move1(a.link_edge, src, dst, n)
        _move1(a.link_side, src, dst, n)
        _move1(a.link_bmin, src, dst, n)
        _move1(a.link_bmax, src, dst, n)
    elif k == DMESH:
        _move1(a.dmesh_vert_base, src, dst, n)
        _move1(a.dmesh_tri_base, src, dst, n)
        _move1(a.dmesh_vert_count, src, dst, n)
        _move1(a.dmesh_tri_count, src, dst, n)
    elif k == DVERT:
        _move2(a.dverts, src, dst, n)
    elif k == DTRI:
        _move2(a.dtris, src, dst, n)
    elif k == BV:
        _move2(a.bv_bmin, src, dst, n)
        _move2(a.bv_bmax, src, dst, n)
        _move1(a.bv_i, src, dst, n)
    else:
        _move2(a.off_pos, src, dst, n)
        _move1(a.off_rad, src, dst, n)
        _move1(a.off_poly, src, dst, n)
        _move1(a.off_flags, src, dst, n)
        _move1(a.off_side, src, dst, n)
        _move1(a.off_user_id, src, dst, n)


@njit
def compact_pools(d, cnt, salt_bits, tile_bits, poly_bits):  # pragma: no cover - numba
    """Remove every pool's dead ranges in place (see the module docstring)."""
    a = open_pool(d)
    nt = a.tile_used.shape[0]
    live = np.zeros(nt, np.int64)
    nlive = 0
    for t in range(nt):
        if a.tile_used[t] != 0:
            live[nlive] = t
            nlive += 1
    live = live[:nlive]
    shift = np.zeros((8, nlive), np.int64)
    for k in range(8):
        bases = np.zeros(nlive, np.int64)
        for i in range(nlive):
            bases[i] = _tile_range(a, k, live[i])[0]
        order = np.argsort(bases, kind="mergesort")
        run = 0
        for i in order:
            t = live[i]
            src, n = _tile_range(a, k, t)
            if n > 0 and src != run:
                _move_rows(a, k, src, run, n)
            shift[k, i] = run - src
            _set_tile_base(a, k, t, run)
            run += n
        cnt[0, k] = run
        cnt[1, k] = 0
    a = open_pool(d)
    for i in range(nlive):
        t = live[i]
        dv = shift[VERT, i]
        dl = shift[LINK, i]
        pb = a.tile_poly_base[t]
        for gp in range(pb, pb + a.tile_poly_count[t]):
            for j in range(a.poly_verts.shape[1]):
                a.poly_verts[gp, j] += dv
            if a.poly_first_link[gp] >= 0:
                a.poly_first_link[gp] += dl
        lb = a.tile_link_base[t]
        for li in range(lb, lb + a.tile_link_count[t]):
            if a.link_next[li] >= 0:
                a.link_next[li] += dl
        if a.tile_link_free[t] >= 0:
            a.tile_link_free[t] += dl
        db = a.tile_dmesh_base[t]
        for m in range(db, db + a.tile_dmesh_count[t]):
            a.dmesh_vert_base[m] += shift[DVERT, i]
            a.dmesh_tri_base[m] += shift[DTRI, i]
        ob = a.tile_off_base[t]
        for m in range(ob, ob + a.tile_off_count[t]):
            a.off_poly[m] += shift[POLY, i]
    L.resolve_link_polys(a, cnt[0, LINK], salt_bits, tile_bits, poly_bits)
