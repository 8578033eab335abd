"""Watershed region partitioning (Recast's ``rcBuildRegions``).

The distance field is flooded from its highest level down, two distance units
per level. Spans are bucketed into 8 level stacks at a time (every 8th level the
unassigned spans are re-sorted by ``dist >> 1``; in between, the leftovers of the
previous stack are appended to the next). At each level the existing regions
first grow into the stack's spans (at most 8 rounds; each round every span
takes the region of the same-area 4-neighbour with the smallest distance-to-seed
+ 2, updates applied after the round), then every still unassigned span of the
stack seeds a new region by depth-first flood fill over spans with
``dist >= level - 2``; a span is dropped from the fill when a 4-neighbour or the
diagonal reached through it already belongs to another region. After level 0
the regions expand without a round limit, then :func:`_merge_and_filter`
(Recast's ``mergeAndFilterRegions``) removes small groups, merges small regions
and compacts the ids. With ``border_size > 0`` the tile border is first painted
with ids 1..4 | ``BORDER_REG`` (those four ids stay reserved, so interior
regions are numbered from 5). As in Recast, a field whose ``max_distance`` is 0
(every span on a boundary) seeds no region at all.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import lend, njit
from navkit.errors import BuildError, InputError
from navkit.recast.regions_common import (
    _merge_and_filter,
    _nei,
    _paint_borders,
    check_chf,
    check_region_args,
)
from navkit.recast.types import BORDER_REG, CompactHeightfield

__all__ = ["build_regions"]

_NB_STACKS = 8
_EXPAND_ITERS = 8


@njit
def _span_cells(cidx, ccount, w, h, n):
    """Cell coordinates (x, z) of every span, (n,) int32 each."""
    px = np.empty(n, np.int32)
    pz = np.empty(n, np.int32)
    for z in range(h):
        for x in range(w):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccount[c])):
                px[i] = x
                pz[i] = z
    return px, pz


@njit(lent=True, link=False)
def _expand(cidx, con, areas, px, pz, w, level, max_iter, reg, rdist, stack, n, dirty):
    """Grow regions into the ``n`` spans of ``stack`` (-1 = settled); Recast's expandRegions.

    Each round every open span takes the region of its same-area 4-neighbour with
    the smallest seed distance + 2; the round's choices are applied together.
    """
    it = 0
    while n > 0:
        failed = 0
        nd = 0
        for k in range(n):
            i = np.int64(stack[k])
            if i < 0:
                failed += 1
                continue
            x = np.int64(px[i])
            z = np.int64(pz[i])
            r = np.int64(reg[i])
            d2 = 0xFFFF
            a = areas[i]
            for d in range(4):
                ai = _nei(cidx, con, w, x, z, i, d)
                if ai < 0 or areas[ai] != a:
                    continue
                nr = np.int64(reg[ai])
                if nr > 0 and (nr & BORDER_REG) == 0:
                    nd2 = np.int64(rdist[ai]) + 2
                    if nd2 < d2:
                        r = nr
                        d2 = nd2
            if r != 0:
                stack[k] = -1
                dirty[nd, 0] = i
                dirty[nd, 1] = r
                dirty[nd, 2] = d2
                nd += 1
            else:
                failed += 1
        for k in range(nd):
            reg[dirty[k, 0]] = dirty[k, 1]
            rdist[dirty[k, 0]] = dirty[k, 2]
        if failed == n:
            break
        if level > 0:
            it += 1
            if it >= max_iter:
                break


@njit(lent=True, link=False)
def _flood(cidx, con, areas, dist, px, pz, w, i, level, r, reg, rdist, fstack):
    """Depth-first flood of a new region ``r`` from span i; True if any span kept it.

    A popped span is given back (reg 0) when a same-area 4-neighbour, or the
    diagonal reached through it, already has another region.
    """
    a = areas[i]
    top = 0
    fstack[top] = i
    top += 1
    reg[i] = r
    rdist[i] = 0
    lev = level - 2 if level >= 2 else 0
    count = 0
    while top > 0:
        top -= 1
        ci = np.int64(fstack[top])
        cx = np.int64(px[ci])
        cz = np.int64(pz[ci])
        other = 0
        for d in range(4):
            ai = _nei(cidx, con, w, cx, cz, ci, d)
            if ai < 0 or areas[ai] != a:
                continue
            nr = np.int64(reg[ai])
            if (nr & BORDER_REG) != 0:
                continue
            if nr != 0 and nr != r:
                other = nr
                break
            bi = _nei(cidx, con, w, np.int64(px[ai]), np.int64(pz[ai]), ai, (d + 1) & 3)
            if bi >= 0:
                if areas[bi] != a:
                    continue
                nr2 = np.int64(reg[bi])
                if nr2 != 0 and nr2 != r:
                    other = nr2
                    break
        if other != 0:
            reg[ci] = 0
            continue
        count += 1
        for d in range(4):
            ai = _nei(cidx, con, w, cx, cz, ci, d)
            if ai < 0 or areas[ai] != a:
                continue
            if dist[ai] >= lev and reg[ai] == 0:
                reg[ai] = r
                rdist[ai] = 0
                fstack[top] = ai
                top += 1
    return count > 0


@njit(link=False)
def _kernel(cidx, ccount, con, areas, dist, w, h, max_distance, border_size, min_area, merge_area):
    """Returns (reg, max_regions, status); status -1 = region id overflow."""
    # The helpers get borrowed views: no reference counting in their calls, one per seed
    # span (docs/architecture.md, Kernels). The arguments live in the caller; ``reg_own``
    # is returned and the other owners are used after the level loop.
    cidx, ccount, con, areas, dist = lend((cidx, ccount, con, areas, dist))
    n = con.shape[0]
    reg_own = np.zeros(n, np.uint16)
    rdist_own = np.zeros(n, np.uint16)
    px_own, pz_own = _span_cells(cidx, ccount, w, h, n)
    # level stacks of span indices; each holds distinct spans, so n entries suffice
    lvl = np.empty((_NB_STACKS, n), np.int32)
    ln = np.zeros(_NB_STACKS, np.int64)
    fstack_own = np.empty(n, np.int32)
    dirty_own = np.empty((n, 3), np.int64)
    reg, rdist, px, pz, fstack, dirty = lend(
        (reg_own, rdist_own, px_own, pz_own, fstack_own, dirty_own)
    )

    next_id = 1
    if border_size > 0:
        next_id = _paint_borders(cidx, ccount, areas, w, h, border_size, reg)

    level = (max_distance + 1) & ~1
    sid = -1
    while level > 0:
        level = level - 2 if level >= 2 else 0
        sid = (sid + 1) & (_NB_STACKS - 1)
        if sid == 0:
            # sortCellsByLevel: bucket unassigned spans by (level - dist) / 2, clamped,
            # in scan order (rows by z, cells by x, spans bottom up) = span order
            start = level >> 1
            ln[:] = 0
            for i in range(n):
                if areas[i] == 0 or reg[i] != 0:
                    continue
                s = start - (np.int64(dist[i]) >> 1)
                if s >= _NB_STACKS:
                    continue
                if s < 0:
                    s = 0
                lvl[s, ln[s]] = i
                ln[s] += 1
        else:
            # appendStacks: carry the previous stack's unassigned spans over
            p = sid - 1
            k = ln[sid]
            for j in range(ln[p]):
                i = lvl[p, j]
                if i < 0 or reg[i] != 0:
                    continue
                lvl[sid, k] = i
                k += 1
            ln[sid] = k
        m = ln[sid]
        stack = lvl[sid]
        for k in range(m):
            if reg[stack[k]] != 0:
                stack[k] = -1
        _expand(cidx, con, areas, px, pz, w, level, _EXPAND_ITERS, reg, rdist, stack, m, dirty)
        for k in range(m):
            i = np.int64(stack[k])
            if i >= 0 and reg[i] == 0:
                if _flood(cidx, con, areas, dist, px, pz, w, i, level, next_id, reg, rdist, fstack):
                    if next_id == 0xFFFF:
                        return reg_own, 0, -1
                    next_id += 1

    # Final expansion over every unassigned walkable span, without a round limit.
    m = 0
    for i in range(n):
        if reg[i] == 0 and areas[i] != 0:
            fstack[m] = i
            m += 1
    # the owners here: they stay alive as long as their borrowed views are used
    _expand(
        cidx, con, areas, px_own, pz_own, w, 0, _EXPAND_ITERS * 8,
        reg_own, rdist_own, fstack_own, m, dirty_own,
    )  # fmt: skip

    nreg = next_id + 1
    count = _merge_and_filter(cidx, ccount, con, areas, w, h, reg_own, nreg, min_area, merge_area)
    return reg_own, count, 0


def build_regions(
    chf: CompactHeightfield, *, border_size: int, min_region_area: int, merge_region_area: int
) -> CompactHeightfield:
    """Partition walkable spans into regions by watershed (Recast's ``rcBuildRegions``).

    Parameters
    ----------
    chf : CompactHeightfield
        With its distance field built (:func:`navkit.recast.distance.build_distance_field`).
    border_size : int
        Width of the non-navigable tile border [vx]; 0 for solo builds.
    min_region_area : int
        Connected groups of regions with fewer spans are removed [vx^2].
    merge_region_area : int
        Regions with at most this many spans are merged into a neighbour when
        possible [vx^2].

    Returns
    -------
    CompactHeightfield
        A copy with ``reg`` (n,) uint16 (0 = none, ``BORDER_REG`` flag on border
        spans), ``max_regions`` and ``border_size`` set as Recast sets them.

    Raises
    ------
    InputError
        Inconsistent arrays, a missing distance field or negative sizes.
    BuildError
        More than 65534 regions.
    """
    check_region_args(
        border_size, min_region_area=min_region_area, merge_region_area=merge_region_area
    )
    cidx, ccount, con, areas = check_chf(chf)
    dist = np.asarray(chf.dist)
    if dist.shape != con.shape:
        raise InputError(f"dist must have shape {con.shape}, got {dist.shape}")
    dist = np.ascontiguousarray(dist, dtype=np.uint16)
    max_distance = int(chf.max_distance)
    if not 0 <= max_distance <= 0xFFFF:
        raise InputError(f"max_distance out of range: {max_distance}")
    reg, count, status = _kernel(
        cidx,
        ccount,
        con,
        areas,
        dist,
        int(chf.width),
        int(chf.height),
        max_distance,
        int(border_size),
        int(min_region_area),
        int(merge_region_area),
    )
    if status < 0:
        raise BuildError("watershed partition: region id overflow (more than 65534 regions)")
    return chf._replace(reg=reg, max_regions=int(count), border_size=int(border_size))
