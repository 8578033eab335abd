"""Heightfield layers (Recast's ``rcBuildHeightfieldLayers``).

A tile's compact heightfield is split into 2D layers: sets of spans with at most
one span per cell, whose heights fit in a byte above the layer's base. The tile
cache stores each layer compressed and rebuilds navmesh tiles from them. The build
has four stages, each a kernel here, in Recast's order:

1. **Monotone partition** (:func:`_partition_kernel`). Rows are swept in z inside
   the border; in each row, a walkable span continues its -x neighbour's sweep or
   starts a new one. A sweep whose spans all connect (-z) to one region of the
   previous row, and that region to no other sweep of this row, continues that
   region; every other sweep starts a new region (at most 255).
2. **Region graph** (:func:`_region_graph_kernel`). Per region: height range, up to
   16 neighbour regions (more are dropped, as in Recast) and the regions that share
   a column with it (up to 63: more is an error).
3. **Layers** (:func:`_layer_kernel`). Regions are visited in id order; an
   unvisited region roots a layer, which grows breadth first over neighbours that
   do not overlap the root's layer and keep its height range under 255. The roots
   ("base" regions) are then merged, lowest id first, with other roots whose
   ranges, widened upwards by ``4 * walkable_height``, overlap, as long as the
   union stays under 255 and no region of one lies below the other. Layer ids are
   compacted.
4. **Store** (:func:`_store_kernel`). Per layer: the cells inside the border get
   the span's height above the layer's base (``hmin``), its area, and connection
   bits: low nibble = neighbour in the same layer and inside the tile, high nibble
   = walkable neighbour in another layer (a portal, whose floor also raises this
   cell's stored height). The used cell range and the bounds are recorded.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import F32, njit
from ..errors import BuildError, InputError
from ..recast.regions_common import check_chf
from ..recast.types import CompactHeightfield

__all__ = ["HeightfieldLayer", "HeightfieldLayerSet", "build_heightfield_layers"]

_NULL = 0xFF
_MAX_LAYERS = 63
_MAX_NEIS = 16
_MAX_STACK = 64
_NOT_CONNECTED = 0x3F

#: error codes of the kernels (negative results)
_ERR_REGIONS = -1
_ERR_OVERLAP = -2
_ERR_SWEEPS = -3


class HeightfieldLayer(NamedTuple):
    """One layer (``rcHeightfieldLayer``).

    Attributes
    ----------
    bmin, bmax : (3,) float32
        Bounds [wu]: the tile without its border; y spans ``hmin..hmax``.
    cs, ch : float
        Cell size and height [wu].
    width, height : int
        Layer grid size (the tile size) [vx].
    minx, maxx, miny, maxy : int
        Cells that hold data (all 0 when none do).
    hmin, hmax : int
        Height range [vx] above the heightfield's ``bmin[1]``.
    heights : (height, width) uint8
        Floor height above ``hmin`` [vx]; 255 = no floor in this layer.
    areas : (height, width) uint8
        Area id (0 where there is no floor).
    cons : (height, width) uint8
        Low nibble: connected in direction 0..3 ((-1,0), (0,+1), (+1,0), (0,-1) in
        (x, z)) within this layer; high nibble: portal to another layer.
    """

    bmin: np.ndarray
    bmax: np.ndarray
    cs: float
    ch: float
    width: int
    height: int
    minx: int
    maxx: int
    miny: int
    maxy: int
    hmin: int
    hmax: int
    heights: np.ndarray
    areas: np.ndarray
    cons: np.ndarray


class HeightfieldLayerSet(NamedTuple):
    """All layers of one tile (``rcHeightfieldLayerSet``), as struct-of-arrays.

    Attributes
    ----------
    nlayers : int
    width, height : int
        Grid size of every layer [vx].
    cs, ch : float
    bmin, bmax : (nlayers, 3) float32
    hmin, hmax, minx, maxx, miny, maxy : (nlayers,) int32
    heights, areas, cons : (nlayers, height, width) uint8
    """

    nlayers: int
    width: int
    height: int
    cs: float
    ch: float
    bmin: np.ndarray
    bmax: np.ndarray
    hmin: np.ndarray
    hmax: np.ndarray
    minx: np.ndarray
    maxx: np.ndarray
    miny: np.ndarray
    maxy: np.ndarray
    heights: np.ndarray
    areas: np.ndarray
    cons: np.ndarray

    def layer(self, i: int) -> HeightfieldLayer:
        """Layer ``i`` as a :class:`HeightfieldLayer` (views into the set's arrays)."""
        if not 0 <= i < self.nlayers:
            raise InputError(f"layer index {i} out of range 0..{self.nlayers - 1}")
        return HeightfieldLayer(
            self.bmin[i], self.bmax[i], self.cs, self.ch, self.width, self.height,
            int(self.minx[i]), int(self.maxx[i]), int(self.miny[i]), int(self.maxy[i]),
            int(self.hmin[i]), int(self.hmax[i]), self.heights[i], self.areas[i], self.cons[i],
        )  # fmt: skip


# -- helpers ------------------------------------------------------------------------------
@njit(inline="always")
def _dx(d):  # pragma: no cover - numba
    return -1 if d == 0 else (1 if d == 2 else 0)


@njit(inline="always")
def _dz(d):  # pragma: no cover - numba
    return 1 if d == 1 else (-1 if d == 3 else 0)


@njit(inline="always")
def _contains(tab, n, r, v):  # pragma: no cover - numba
    for k in range(n[r]):
        if tab[r, k] == v:
            return True
    return False


@njit(inline="always")
def _add_unique(tab, n, r, v):  # pragma: no cover - numba
    """Recast's addUnique: False only when ``v`` is new and row ``r`` is full."""
    if _contains(tab, n, r, v):
        return True
    if n[r] >= tab.shape[1]:
        return False
    tab[r, n[r]] = v
    n[r] += 1
    return True


# -- stage 1: monotone partition ----------------------------------------------------------
@njit
def _partition_kernel(cidx, ccount, con, areas, w, h, bs):  # pragma: no cover - numba
    """Region id per span (255 = none) and the region count (< 0: error code)."""
    nspans = areas.shape[0]
    src_reg = np.full(nspans, _NULL, np.int32)
    # Recast ids a row's sweeps with a byte (and sizes their array by the grid width,
    # which more sweeps than cells in a row overrun: undefined there, allowed here)
    cap = 256
    sw_ns = np.zeros(cap, np.int64)
    sw_nei = np.zeros(cap, np.int32)
    sw_id = np.zeros(cap, np.int32)
    prev_count = np.zeros(256, np.int64)
    reg_id = 0
    for z in range(bs, h - bs):
        prev_count[:reg_id] = 0
        nsweep = 0
        for x in range(bs, w - bs):
            c = x + z * w
            for i in range(cidx[c], cidx[c] + ccount[c]):
                if areas[i] == 0:
                    continue
                sid = _NULL
                k = con[i] & _NOT_CONNECTED
                if k != _NOT_CONNECTED:
                    ai = cidx[(x - 1) + z * w] + k
                    if areas[ai] != 0 and src_reg[ai] != _NULL:
                        sid = src_reg[ai]
                if sid == _NULL:
                    if nsweep >= cap:
                        return src_reg, _ERR_SWEEPS
                    sid = nsweep
                    nsweep += 1
                    sw_nei[sid] = _NULL
                    sw_ns[sid] = 0
                k = (con[i] >> 18) & _NOT_CONNECTED
                if k != _NOT_CONNECTED:
                    ai = cidx[x + (z - 1) * w] + k
                    nr = src_reg[ai]
                    if nr != _NULL:
                        if sw_ns[sid] == 0:
                            sw_nei[sid] = nr
                        if sw_nei[sid] == nr:
                            sw_ns[sid] += 1
                            prev_count[nr] += 1
                        else:
                            sw_nei[sid] = _NULL  # more than one neighbour region
                src_reg[i] = sid
        for s in range(nsweep):
            if sw_nei[s] != _NULL and prev_count[sw_nei[s]] == sw_ns[s]:
                sw_id[s] = sw_nei[s]
            else:
                if reg_id == 255:
                    return src_reg, _ERR_REGIONS
                sw_id[s] = reg_id
                reg_id += 1
        for x in range(bs, w - bs):
            c = x + z * w
            for i in range(cidx[c], cidx[c] + ccount[c]):
                if src_reg[i] != _NULL:
                    src_reg[i] = sw_id[src_reg[i]]
    return src_reg, reg_id


# -- stage 2: region graph ----------------------------------------------------------------
@njit
def _region_graph_kernel(cidx, ccount, con, ys, w, h, src_reg, nregs):  # pragma: no cover
    """Per region: y range, neighbours (<= 16), overlapping regions (<= 63).

    Returns ``(ymin, ymax, neis, nneis, lays, nlays, status)``; status < 0 on overflow.
    """
    ymin = np.full(nregs, 0xFFFF, np.int64)
    ymax = np.zeros(nregs, np.int64)
    neis = np.zeros((nregs, _MAX_NEIS), np.int32)
    nneis = np.zeros(nregs, np.int64)
    lays = np.zeros((nregs, _MAX_LAYERS), np.int32)
    nlays = np.zeros(nregs, np.int64)
    col = np.zeros(_MAX_LAYERS, np.int32)
    for z in range(h):
        for x in range(w):
            c = x + z * w
            ncol = 0
            for i in range(cidx[c], cidx[c] + ccount[c]):
                ri = src_reg[i]
                if ri == _NULL:
                    continue
                y = np.int64(ys[i])
                if y < ymin[ri]:
                    ymin[ri] = y
                if y > ymax[ri]:
                    ymax[ri] = y
                if ncol < _MAX_LAYERS:
                    col[ncol] = ri
                    ncol += 1
                for d in range(4):
                    k = (con[i] >> (6 * d)) & _NOT_CONNECTED
                    if k != _NOT_CONNECTED:
                        ai = cidx[(x + _dx(d)) + (z + _dz(d)) * w] + k
                        rai = src_reg[ai]
                        if rai != _NULL and rai != ri:
                            _add_unique(neis, nneis, ri, rai)  # a full list just drops it
            for a in range(ncol - 1):
                for b in range(a + 1, ncol):
                    if col[a] != col[b]:
                        if not _add_unique(lays, nlays, col[a], col[b]):
                            return ymin, ymax, neis, nneis, lays, nlays, _ERR_OVERLAP
                        if not _add_unique(lays, nlays, col[b], col[a]):
                            return ymin, ymax, neis, nneis, lays, nlays, _ERR_OVERLAP
    return ymin, ymax, neis, nneis, lays, nlays, 0


# -- stage 3: layers ----------------------------------------------------------------------
@njit
def _layer_kernel(ymin, ymax, neis, nneis, lays, nlays, walkable_height):  # pragma: no cover
    """Layer id per region (compacted) and whether it is its layer's base region.

    Changes ``ymin``/``ymax``/``lays``/``nlays`` of the base regions as Recast does
    (they end up describing the whole layer). Returns ``(layer_id, base, nlayers)``;
    ``nlayers`` < 0 on overflow.
    """
    nregs = ymin.shape[0]
    layer_id = np.full(nregs, _NULL, np.int64)
    base = np.zeros(nregs, np.bool_)
    stack = np.zeros(_MAX_STACK, np.int64)
    lid = 0
    for root in range(nregs):
        if layer_id[root] != _NULL:
            continue
        layer_id[root] = lid
        base[root] = True
        stack[0] = root
        nstack = 1
        while nstack > 0:
            r = stack[0]  # pop front
            nstack -= 1
            for j in range(nstack):
                stack[j] = stack[j + 1]
            for j in range(nneis[r]):
                nei = neis[r, j]
                if layer_id[nei] != _NULL:
                    continue
                if _contains(lays, nlays, root, nei):
                    continue
                if max(ymax[root], ymax[nei]) - min(ymin[root], ymin[nei]) >= 255:
                    continue
                if nstack < _MAX_STACK:
                    stack[nstack] = nei
                    nstack += 1
                    layer_id[nei] = lid
                    for k in range(nlays[nei]):
                        if not _add_unique(lays, nlays, root, lays[nei, k]):
                            return layer_id, base, _ERR_OVERLAP
                    ymin[root] = min(ymin[root], ymin[nei])
                    ymax[root] = max(ymax[root], ymax[nei])
        lid = (lid + 1) & 0xFF

    # merge non-overlapping layers that are close in height
    merge_h = (walkable_height * 4) & 0xFFFF
    for i in range(nregs):
        if not base[i]:
            continue
        new_id = layer_id[i]
        while True:
            old_id = _NULL
            for j in range(nregs):
                if i == j or not base[j]:
                    continue
                # Recast's overlapRange on unsigned shorts
                if (
                    ymin[i] > ((ymax[j] + merge_h) & 0xFFFF)
                    or ((ymax[i] + merge_h) & 0xFFFF) < ymin[j]
                ):
                    continue
                if max(ymax[i], ymax[j]) - min(ymin[i], ymin[j]) >= 255:
                    continue
                overlap = False
                for k in range(nregs):
                    if layer_id[k] == layer_id[j] and _contains(lays, nlays, i, k):
                        overlap = True
                        break
                if overlap:
                    continue
                old_id = layer_id[j]
                break
            if old_id == _NULL:
                break
            for j in range(nregs):
                if layer_id[j] == old_id:
                    base[j] = False
                    layer_id[j] = new_id
                    for k in range(nlays[j]):
                        if not _add_unique(lays, nlays, i, lays[j, k]):
                            return layer_id, base, _ERR_OVERLAP
                    ymin[i] = min(ymin[i], ymin[j])
                    ymax[i] = max(ymax[i], ymax[j])

    # compact the ids
    remap = np.zeros(256, np.int64)
    for i in range(nregs):
        remap[layer_id[i]] = 1
    n = 0
    for i in range(256):
        if remap[i]:
            remap[i] = n
            n += 1
        else:
            remap[i] = _NULL
    for i in range(nregs):
        layer_id[i] = remap[layer_id[i]]
    return layer_id, base, n


# -- stage 4: store -----------------------------------------------------------------------
@njit
def _store_kernel(
    cidx, ccount, con, areas, ys, w, h, bs, src_reg, layer_id, base, ymin, ymax, nlayers
):  # pragma: no cover - numba
    lw = w - 2 * bs
    lh = h - 2 * bs
    heights = np.full((nlayers, lh, lw), 0xFF, np.uint8)
    lareas = np.zeros((nlayers, lh, lw), np.uint8)
    cons = np.zeros((nlayers, lh, lw), np.uint8)
    info = np.zeros((nlayers, 6), np.int32)  # hmin, hmax, minx, maxx, miny, maxy
    nregs = layer_id.shape[0]
    for cur in range(nlayers):
        hmin = 0
        hmax = 0
        for j in range(nregs):
            if base[j] and layer_id[j] == cur:
                hmin = ymin[j]
                hmax = ymax[j]
        minx = lw
        maxx = 0
        miny = lh
        maxy = 0
        for y in range(lh):
            for x in range(lw):
                cx = bs + x
                cy = bs + y
                c = cx + cy * w
                for j in range(cidx[c], cidx[c] + ccount[c]):
                    if src_reg[j] == _NULL:
                        continue
                    lid = layer_id[src_reg[j]]
                    if lid != cur:
                        continue
                    minx = min(minx, x)
                    maxx = max(maxx, x)
                    miny = min(miny, y)
                    maxy = max(maxy, y)
                    hgt = (np.int64(ys[j]) - hmin) & 0xFF
                    lareas[cur, y, x] = areas[j]
                    portal = 0
                    cn = 0
                    for d in range(4):
                        k = (con[j] >> (6 * d)) & _NOT_CONNECTED
                        if k == _NOT_CONNECTED:
                            continue
                        ax = cx + _dx(d)
                        ay = cy + _dz(d)
                        ai = cidx[ax + ay * w] + k
                        alid = _NULL if src_reg[ai] == _NULL else layer_id[src_reg[ai]]
                        if areas[ai] != 0 and lid != alid:
                            portal |= 1 << d
                            ay_ = np.int64(ys[ai])
                            if ay_ > hmin:
                                hgt = max(hgt, (ay_ - hmin) & 0xFF)
                        if areas[ai] != 0 and lid == alid:
                            nx = ax - bs
                            ny = ay - bs
                            if nx >= 0 and ny >= 0 and nx < lw and ny < lh:
                                cn |= 1 << d
                    heights[cur, y, x] = hgt
                    cons[cur, y, x] = (portal << 4) | cn
        if minx > maxx:
            minx = 0
            maxx = 0
        if miny > maxy:
            miny = 0
            maxy = 0
        info[cur, 0] = hmin
        info[cur, 1] = hmax
        info[cur, 2] = minx
        info[cur, 3] = maxx
        info[cur, 4] = miny
        info[cur, 5] = maxy
    return heights, lareas, cons, info


@njit
def _bounds_kernel(chf_bmin, chf_bmax, cs, ch, bs, hmin, hmax):  # pragma: no cover - numba
    """Layer bounds in float32 as Recast computes them."""
    n = hmin.shape[0]
    pad = F32(bs) * cs
    lo = chf_bmin.copy()
    hi = chf_bmax.copy()
    lo[0] = lo[0] + pad
    lo[2] = lo[2] + pad
    hi[0] = hi[0] - pad
    hi[2] = hi[2] - pad
    bmin = np.empty((n, 3), np.float32)
    bmax = np.empty((n, 3), np.float32)
    for i in range(n):
        bmin[i, :] = lo
        bmax[i, :] = hi
        bmin[i, 1] = lo[1] + F32(hmin[i]) * ch
        bmax[i, 1] = lo[1] + F32(hmax[i]) * ch
    return bmin, bmax


def build_heightfield_layers(
    chf: CompactHeightfield, border_size: int, walkable_height: int
) -> HeightfieldLayerSet:
    """Split a tile's compact heightfield into 2D layers (``rcBuildHeightfieldLayers``).

    Parameters
    ----------
    chf : CompactHeightfield
        The tile's compact heightfield, border included, walkable area eroded
        (RecastDemo's Sample_TempObstacles order).
    border_size : int
        Border around the tile [vx]; layers cover the cells inside it.
    walkable_height : int
        Agent height [vx]; layers whose height ranges come within
        ``4 * walkable_height`` of each other may merge.

    Returns
    -------
    HeightfieldLayerSet
        ``nlayers`` may be 0.

    Raises
    ------
    InputError
        Malformed heightfield, negative sizes, a border that leaves no cells, or a
        layer wider than 255 cells.
    BuildError
        What Recast reports as a failure: more than 255 regions, a region
        overlapping more than 63 others, or more than 256 sweeps in one row (Recast
        ids them with a byte; it also sizes their array by the grid width, so a row
        with more sweeps than cells overruns it there: navkit allows up to 256).
    """
    return _layers_run(chf, check_chf(chf), border_size, walkable_height)


def _layers_run(
    chf: CompactHeightfield, arrays: tuple, border_size: int, walkable_height: int
) -> HeightfieldLayerSet:
    """:func:`build_heightfield_layers` given ``arrays = check_chf(chf)`` (or, for a
    heightfield navkit's compact stage just built, the same arrays unchecked)."""
    return _layers_of_arrays(
        arrays, np.asarray(chf.y), int(chf.width), int(chf.height), np.float32(chf.cs),
        np.float32(chf.ch), np.asarray(chf.bmin, np.float32), np.asarray(chf.bmax, np.float32),
        border_size, walkable_height,
    )  # fmt: skip


def _layers_of_arrays(
    arrays: tuple, ys: np.ndarray, w: int, h: int, cs32: np.float32, ch32: np.float32,
    bmin: np.ndarray, bmax: np.ndarray, border_size: int, walkable_height: int,
) -> HeightfieldLayerSet:  # fmt: skip
    """:func:`_layers_run` on the compact heightfield's arrays: ``arrays`` as
    :func:`_layers_run` takes them, the spans' ``ys``, the grid size, the cell size and
    height, and the compact heightfield's bounds (float32 (3,))."""
    cidx, ccount, con, areas = arrays
    bs = int(border_size)
    wh = int(walkable_height)
    if bs < 0 or wh < 0:
        raise InputError(
            f"border_size {border_size} and walkable_height {walkable_height} must be >= 0"
        )
    lw, lh = w - 2 * bs, h - 2 * bs
    if not (1 <= lw <= 255 and 1 <= lh <= 255):
        raise InputError(
            f"layers of {lw} x {lh} cells (grid {w} x {h}, border {bs}): each side must be 1..255"
        )
    if ys.dtype != np.uint16:
        ys = ys.astype(np.uint16)
    src_reg, nregs = _partition_kernel(cidx, ccount, con, areas, w, h, bs)
    if nregs == _ERR_REGIONS:
        raise BuildError("heightfield layers: more than 255 monotone regions in the tile")
    if nregs == _ERR_SWEEPS:
        raise BuildError("heightfield layers: more than 256 span sweeps in one row")
    g = _region_graph_kernel(cidx, ccount, con, ys, w, h, src_reg, nregs)
    ymin, ymax, neis, nneis, lays, nlays, status = g
    if status < 0:
        raise BuildError("heightfield layers: a region overlaps more than 63 others")
    layer_id, base, nlayers = _layer_kernel(ymin, ymax, neis, nneis, lays, nlays, wh)
    if nlayers < 0:
        raise BuildError("heightfield layers: a layer overlaps more than 63 regions")
    heights, lareas, cons, info = _store_kernel(
        cidx, ccount, con, areas, ys, w, h, bs, src_reg, layer_id, base, ymin, ymax, nlayers
    )
    bmin, bmax = _bounds_kernel(
        bmin, bmax, cs32, ch32, bs,
        info[:, 0].copy(), info[:, 1].copy(),
    )  # fmt: skip
    return HeightfieldLayerSet(
        nlayers=int(nlayers), width=lw, height=lh, cs=float(cs32), ch=float(ch32),
        bmin=bmin, bmax=bmax, hmin=info[:, 0].copy(), hmax=info[:, 1].copy(),
        minx=info[:, 2].copy(), maxx=info[:, 3].copy(), miny=info[:, 4].copy(),
        maxy=info[:, 5].copy(), heights=heights, areas=lareas, cons=cons,
    )  # fmt: skip
