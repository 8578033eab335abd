"""Layer region partitioning (Recast's ``rcBuildLayerRegions``).

The spans are first cut into monotone regions by the same row sweep as
:mod:`navkit.recast.regions_monotone`. Recast's ``mergeAndFilterLayerRegions``
then groups them into 2D layers: for every region it records its span count,
area, y range, its 4-neighbour regions and the regions it shares a column with
(its "floors"). Regions are visited in id order; each unvisited one roots a new
layer, which grows breadth-first over neighbours of the same area that are not
among the root's floors, the root absorbing each newcomer's floors, y range,
span count and border contact. Layers with fewer than ``min_region_area`` spans
that do not touch the tile border are removed, and the ids are compacted. A
layer can hold several separate outlines; no region overlaps itself.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import njit
from navkit.errors import BuildError
from navkit.recast.regions_common import (
    _compact_ids,
    _nei,
    _paint_borders,
    _push,
    _push_unique,
    _sweep_rows,
    check_chf,
    check_region_args,
)
from navkit.recast.types import BORDER_REG, CompactHeightfield

__all__ = ["build_layer_regions"]


_BITSET_MAX_REGIONS = 8192  # up to 8 MiB per bitset


@njit(inline="always")
def _seen(bits, tab, lens, nreg, r, v):
    """Is ``v`` in list ``r``? Bitset lookup, or a linear scan when there is no bitset."""
    if bits.shape[0] > 0:
        k = r * nreg + v
        return (bits[k >> 6] >> np.uint64(k & 63)) & np.uint64(1) != 0
    for q in range(lens[r]):
        if tab[r, q] == v:
            return True
    return False


@njit(inline="always")
def _mark(bits, nreg, r, v):
    if bits.shape[0] > 0:
        k = r * nreg + v
        bits[k >> 6] |= np.uint64(1) << np.uint64(k & 63)


@njit
def _merge_layers(cidx, ccount, con, areas, ys, w, h, reg, nreg, min_area):
    """Recast's ``mergeAndFilterLayerRegions`` over ``reg`` in place; returns the region count."""
    rid = np.zeros(nreg, np.int64)
    rspans = np.zeros(nreg, np.int64)
    rarea = np.zeros(nreg, np.int64)
    ymin = np.full(nreg, 0xFFFF, np.int64)
    ymax = np.zeros(nreg, np.int64)
    to_border = np.zeros(nreg, np.bool_)
    conns = np.empty((nreg, 8), np.int64)
    nconn = np.zeros(nreg, np.int64)
    floors = np.empty((nreg, 4), np.int64)
    nfloor = np.zeros(nreg, np.int64)
    col = np.empty(256, np.int64)
    # membership bitsets of the neighbour and floor lists during the scan (when small enough)
    nbits = nreg * nreg if nreg <= _BITSET_MAX_REGIONS else 0
    cbits = np.zeros((nbits + 63) // 64, np.uint64)
    fbits = np.zeros((nbits + 63) // 64, np.uint64)

    for z in range(h):
        for x in range(w):
            c = x + z * w
            nc = 0
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccount[c])):
                r = np.int64(reg[i])
                if r == 0 or r >= nreg:
                    continue
                rspans[r] += 1
                rarea[r] = areas[i]
                y = np.int64(ys[i])
                if y < ymin[r]:
                    ymin[r] = y
                if y > ymax[r]:
                    ymax[r] = y
                col[nc] = r
                nc += 1
                for d in range(4):
                    ai = _nei(cidx, con, w, x, z, i, d)
                    if ai < 0:
                        continue
                    ra = np.int64(reg[ai])
                    if ra > 0 and ra < nreg and ra != r:
                        if not _seen(cbits, conns, nconn, nreg, r, ra):
                            conns = _push(conns, nconn, r, ra)
                            _mark(cbits, nreg, r, ra)
                    if (ra & BORDER_REG) != 0:
                        to_border[r] = True
            for a in range(nc - 1):
                for b in range(a + 1, nc):
                    ra = col[a]
                    rb = col[b]
                    if ra != rb:
                        if not _seen(fbits, floors, nfloor, nreg, ra, rb):
                            floors = _push(floors, nfloor, ra, rb)
                            _mark(fbits, nreg, ra, rb)
                        if not _seen(fbits, floors, nfloor, nreg, rb, ra):
                            floors = _push(floors, nfloor, rb, ra)
                            _mark(fbits, nreg, rb, ra)

    # Grow layers breadth-first from each unvisited region, in id order.
    queue = np.empty(nreg + 1, np.int64)
    layer = 1
    for k in range(1, nreg):
        if rid[k] != 0:
            continue
        rid[k] = layer
        qh = 0
        qt = 0
        queue[qt] = k
        qt += 1
        while qh < qt:
            cur = queue[qh]
            qh += 1
            for j in range(nconn[cur]):
                nb = conns[cur, j]
                if rid[nb] != 0:
                    continue
                if rarea[cur] != rarea[nb]:
                    continue
                clash = False
                for q in range(nfloor[k]):
                    if floors[k, q] == nb:
                        clash = True
                        break
                if clash:
                    continue
                queue[qt] = nb
                qt += 1
                rid[nb] = layer
                for q in range(nfloor[nb]):
                    floors = _push_unique(floors, nfloor, k, floors[nb, q])
                ymin[k] = min(ymin[k], ymin[nb])
                ymax[k] = max(ymax[k], ymax[nb])
                rspans[k] += rspans[nb]
                rspans[nb] = 0
                to_border[k] = to_border[k] or to_border[nb]
        layer += 1

    # Remove small layers that do not touch the tile border.
    for k in range(nreg):
        if rspans[k] > 0 and rspans[k] < min_area and not to_border[k]:
            gone = rid[k]
            for j in range(nreg):
                if rid[j] == gone:
                    rid[j] = 0

    return _compact_ids(rid, nreg, reg)


@njit
def _kernel(cidx, ccount, con, areas, ys, w, h, border_size, min_area):
    """Returns (reg, max_regions, status); status -1 = region id overflow."""
    reg = np.zeros(con.shape[0], np.uint16)
    next_id = 1
    if border_size > 0:
        next_id = _paint_borders(cidx, ccount, areas, w, h, border_size, reg)
    next_id = _sweep_rows(cidx, ccount, con, areas, w, h, border_size, reg, next_id)
    if next_id >= 0xFFFF:
        return reg, 0, -1
    count = _merge_layers(cidx, ccount, con, areas, ys, w, h, reg, next_id + 1, min_area)
    return reg, count, 0


def build_layer_regions(
    chf: CompactHeightfield, *, border_size: int, min_region_area: int
) -> CompactHeightfield:
    """Partition walkable spans into non-overlapping layers (Recast's ``rcBuildLayerRegions``).

    Parameters
    ----------
    chf : CompactHeightfield
        Compact heightfield (no distance field needed).
    border_size : int
        Width of the non-navigable tile border [vx]; 0 for solo builds.
    min_region_area : int
        Layers with fewer spans (and no tile-border contact) are removed [vx^2].

    Returns
    -------
    CompactHeightfield
        A copy with ``reg`` (n,) uint16, ``max_regions`` and ``border_size`` set.

    Raises
    ------
    InputError
        Inconsistent arrays or negative sizes.
    BuildError
        More region ids than 16 bits hold.
    """
    check_region_args(border_size, min_region_area=min_region_area)
    cidx, ccount, con, areas = check_chf(chf)
    ys = np.ascontiguousarray(chf.y, dtype=np.uint16)
    reg, count, status = _kernel(
        cidx,
        ccount,
        con,
        areas,
        ys,
        int(chf.width),
        int(chf.height),
        int(border_size),
        int(min_region_area),
    )
    if status < 0:
        raise BuildError("layer partition: region id overflow (more than 65534 regions)")
    return chf._replace(reg=reg, max_regions=int(count), border_size=int(border_size))
