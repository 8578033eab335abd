"""Layer regions of the tile cache (``dtBuildTileCacheRegions``).

The tile cache does not run Recast's region builders on a layer; it partitions the
layer's walkable cells into monotone regions in one sweep and merges them:

1. **Sweep** rows in z. In a row, a walkable cell continues the sweep of its -x
   neighbour when the two connect (same area, heights within ``walkable_climb``),
   else starts a new sweep. A sweep whose connected -z cells all belong to one
   region of the previous row, and that region connects to no other cell of this
   row, continues that region; every other sweep gets a new region id (at most 255).
2. **Neighbours**: per region, its cell count, area id and the regions it touches
   across -z (at most 16 kept, in first-seen order).
3. **Merge**: regions are visited in id order; each merges into the largest
   neighbour of the same area with which it shares exactly one neighbour relation
   (so the union stays monotone), relabelling every region of its group.
4. **Compact** the ids in increasing order of the merged ids.

Connectivity here is recomputed from heights and areas (not the ``cons`` grid), as
in Detour, so an obstacle that clears cells splits regions.

The kernel does steps 1 and 2 in one pass over the rows (a row's neighbours are
counted when its sweeps get their ids: the rows above are final, so the lists come
out in the same order as Detour's second pass), and keeps what consecutive cells
update in registers (the previous cell, the current sweep's neighbour and count, the
current run of one region's cells), flushed when it changes: the same counts without
a store-to-load chain per cell.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = ["build_tile_cache_regions", "NULL_REGION"]

#: region id of a cell without a region
NULL_REGION = 0xFF
_MAX_NEIS = 16


@njit
def _can_merge(old_id, new_id, reg_id, neis, nneis, head, nxt):
    """canMerge: exactly one neighbour relation from the regions labelled ``old_id``
    (the list ``head[old_id]``, ``nxt``) to those labelled ``new_id``. The same count
    as Detour's scan over every region, over the group's members only."""
    count = 0
    m = head[old_id]
    while m != -1:
        for j in range(nneis[m]):
            if reg_id[neis[m, j]] == new_id:
                count += 1
                if count > 1:
                    return False
        m = nxt[m]
    return count == 1


@njit(link=False)
def _regions_kernel(heights, areas, w, h, climb):  # pragma: no cover - numba
    """(regs (w*h,) uint8, region count), or (regs, -1) when ids overflow 255."""
    n = w * h
    regs = np.full(n, 0xFF, np.uint8)  # (uint8, as in Detour)
    # one block: the sweeps (every entry written before it is read), the per-region
    # arrays for up to 256 ids (counts zeroed), the -z connectivity of the row's cells
    sbuf = np.empty(3 * w + 256 + 6 * 256 + w, np.int64)
    sw_ns = sbuf[:w]
    sw_id = sbuf[w : 2 * w]
    sw_nei = sbuf[2 * w : 3 * w]
    o = 3 * w
    prev_count = sbuf[o : o + 256]
    area = sbuf[o + 256 : o + 512]
    area_id = sbuf[o + 512 : o + 768]
    nneis = sbuf[o + 768 : o + 1024]
    rid = sbuf[o + 1024 : o + 1280]
    head = sbuf[o + 1280 : o + 1536]
    tail = sbuf[o + 1536 : o + 1792]
    ycon = sbuf[o + 1792 :]
    neis = np.empty((256, _MAX_NEIS), np.uint8)  # (region ids: bytes, a small block)
    for i in range(256):
        area[i] = 0
        nneis[i] = 0
    reg_id = 0
    for y in range(h):
        for i in range(reg_id):
            prev_count[i] = 0
        sweep_id = 0
        # the previous cell's area (0: none), height and sweep; the current sweep's
        # neighbour and count (written back when another sweep starts)
        pa = 0
        ph = 0
        pr = 0xFF
        cur = -1
        cur_nei = 0xFF
        cur_ns = 0
        row = y * w
        for x in range(w):
            idx = x + row
            a = areas[idx]
            if a == 0:
                pa = 0
                continue
            hg = np.int64(heights[idx])
            if pa == a and abs(hg - ph) <= climb and pr != 0xFF:
                sid = pr
            else:
                sid = sweep_id
                sweep_id = (sweep_id + 1) & 0xFF
                if cur >= 0:
                    sw_nei[cur] = cur_nei
                    sw_ns[cur] = cur_ns
                    if cur_nei != 0xFF:  # (the sweep's cells counted on its neighbour)
                        prev_count[cur_nei] = (prev_count[cur_nei] + cur_ns) & 0xFF
                cur = sid
                cur_nei = 0xFF
                cur_ns = 0
            yc = 0
            if y > 0:
                yidx = idx - w
                if areas[yidx] == a and abs(hg - np.int64(heights[yidx])) <= climb:
                    yc = 1
                    nr = np.int64(regs[yidx])
                    if nr != 0xFF:
                        if cur_ns == 0:
                            cur_nei = nr
                        if cur_nei == nr:
                            cur_ns = (cur_ns + 1) & 0xFFFF
                        else:
                            if cur_nei != 0xFF:  # (the cells counted so far)
                                prev_count[cur_nei] = (prev_count[cur_nei] + cur_ns) & 0xFF
                            cur_nei = 0xFF
            ycon[x] = yc
            regs[idx] = sid
            pa = a
            ph = hg
            pr = sid
        if cur >= 0:
            sw_nei[cur] = cur_nei
            sw_ns[cur] = cur_ns
            if cur_nei != 0xFF:
                prev_count[cur_nei] = (prev_count[cur_nei] + cur_ns) & 0xFF
        for i in range(sweep_id):
            if sw_nei[i] != 0xFF and prev_count[sw_nei[i]] == sw_ns[i]:
                sw_id[i] = sw_nei[i]
            else:
                if reg_id == 255:
                    return regs, -1
                sw_id[i] = reg_id
                reg_id += 1
        # the row's final sweep ids, its cells' counts and -z neighbours (the rows
        # above are final: the same lists, in the same order, as a pass after the sweep)
        lr = -1  # (the run of cells of one region: its count kept in a register)
        lc = 0
        for x in range(w):
            idx = x + row
            r = regs[idx]
            if r == 0xFF:
                continue
            ri = sw_id[r]
            regs[idx] = ri
            if ri != lr:
                if lr >= 0:
                    area[lr] += lc
                lr = ri
                lc = 0
                area_id[ri] = areas[idx]
            lc += 1
            if ycon[x]:
                rai = np.int64(regs[idx - w])
                if rai != 0xFF and rai != ri:
                    # addUniqueLast (Detour does not bound the list; 16 is plenty for
                    # tiles up to 255 cells, more neighbours are dropped here)
                    k = nneis[ri]
                    if not (k > 0 and neis[ri, k - 1] == rai) and k < _MAX_NEIS:
                        neis[ri, k] = rai
                        nneis[ri] = k + 1
                    k = nneis[rai]
                    if not (k > 0 and neis[rai, k - 1] == ri) and k < _MAX_NEIS:
                        neis[rai, k] = ri
                        nneis[rai] = k + 1
        if lr >= 0:
            area[lr] += lc

    nregs = reg_id
    nxt = np.empty(max(nregs, 1), np.int64)
    remap = prev_count
    for i in range(nregs):
        rid[i] = i
        head[i] = i
        tail[i] = i
        nxt[i] = -1
    for i in range(256):
        remap[i] = 0
    # the regions of each label as a list (head, nxt, tail): a merge relabels and
    # joins one group's members instead of scanning every region
    for i in range(nregs):
        merge = -1
        mergea = 0
        for j in range(nneis[i]):
            nei = neis[i, j]
            if rid[i] == rid[nei]:
                continue
            if area_id[i] != area_id[nei]:
                continue
            if area[nei] > mergea:
                if _can_merge(rid[i], rid[nei], rid, neis, nneis, head, nxt):
                    mergea = area[nei]
                    merge = nei
        if merge != -1:
            old_id = rid[i]
            new_id = rid[merge]
            m = head[old_id]
            while m != -1:
                rid[m] = new_id
                m = nxt[m]
            nxt[tail[new_id]] = head[old_id]
            tail[new_id] = tail[old_id]
            head[old_id] = -1
    for i in range(nregs):
        remap[rid[i]] = 1
    count = 0
    for i in range(256):
        if remap[i]:
            remap[i] = count
            count += 1
    for i in range(nregs):
        rid[i] = remap[rid[i]]
    for i in range(n):
        if regs[i] != 0xFF:
            regs[i] = rid[regs[i]]
    return regs, count


def build_tile_cache_regions(
    heights: np.ndarray, areas: np.ndarray, walkable_climb: int
) -> tuple[np.ndarray, int]:
    """Regions of a layer (``dtBuildTileCacheRegions``).

    Parameters
    ----------
    heights, areas : (height, width) uint8
        The layer's grids (areas after obstacle marking; 0 = not walkable).
    walkable_climb : int
        Largest height step between connected cells [vx].

    Returns
    -------
    regs : (height, width) uint8
        Region id per cell, :data:`NULL_REGION` (255) where there is none.
    count : int
        Number of regions; -1 when the sweep needs more than 255 region ids
        (Detour's ``DT_BUFFER_TOO_SMALL``).
    """
    h, w = heights.shape
    regs, count = _regions_kernel(
        np.ascontiguousarray(heights).reshape(-1),
        np.ascontiguousarray(areas).reshape(-1),
        int(w),
        int(h),
        int(walkable_climb),
    )
    return regs.reshape(h, w), int(count)
