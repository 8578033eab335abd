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
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = ["build_tile_cache_regions", "NULL_REGION"]

#: region id of a cell without a region
NULL_REGION = 0xFF
_MAX_NEIS = 16


@njit
def _connected(heights, areas, ia, ib, climb):
    if areas[ia] != areas[ib]:
        return False
    return abs(np.int64(heights[ia]) - np.int64(heights[ib])) <= climb


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
    sw_ns = np.zeros(w, np.int64)
    sw_id = np.zeros(w, np.int64)
    sw_nei = np.zeros(w, np.int64)
    prev_count = np.zeros(256, np.int64)
    reg_id = 0
    for y in range(h):
        for i in range(reg_id):
            prev_count[i] = 0
        sweep_id = 0
        for x in range(w):
            idx = x + y * w
            if areas[idx] == 0:
                continue
            sid = 0xFF
            xidx = idx - 1
            if x > 0 and _connected(heights, areas, idx, xidx, climb):
                if regs[xidx] != 0xFF:
                    sid = regs[xidx]
            if sid == 0xFF:
                sid = sweep_id
                sweep_id = (sweep_id + 1) & 0xFF
                sw_nei[sid] = 0xFF
                sw_ns[sid] = 0
            yidx = idx - w
            if y > 0 and _connected(heights, areas, idx, yidx, climb):
                nr = regs[yidx]
                if nr != 0xFF:
                    if sw_ns[sid] == 0:
                        sw_nei[sid] = nr
                    if sw_nei[sid] == nr:
                        sw_ns[sid] = (sw_ns[sid] + 1) & 0xFFFF
                        prev_count[nr] = (prev_count[nr] + 1) & 0xFF
                    else:
                        sw_nei[sid] = 0xFF
            regs[idx] = sid
        for i in range(sweep_id):
            if sw_nei[i] != 0xFF and prev_count[sw_nei[i]] == sw_ns[i]:
                sw_id[i] = sw_nei[i]
            else:
                if reg_id == 255:
                    return regs, -1
                sw_id[i] = reg_id
                reg_id += 1
        for x in range(w):
            idx = x + y * w
            if regs[idx] != 0xFF:
                regs[idx] = sw_id[regs[idx]]

    nregs = reg_id
    area = np.zeros(nregs, np.int64)
    area_id = np.zeros(nregs, np.int64)
    neis = np.zeros((nregs, _MAX_NEIS), np.int64)
    nneis = np.zeros(nregs, np.int64)
    for y in range(h):
        for x in range(w):
            idx = x + y * w
            ri = regs[idx]
            if ri == 0xFF:
                continue
            area[ri] += 1
            area_id[ri] = areas[idx]
            ymi = idx - w
            if y > 0 and _connected(heights, areas, idx, ymi, climb):
                rai = regs[ymi]
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
    rid = np.arange(nregs).astype(np.int64)
    # the regions of each label as a list (head, nxt, tail): a merge relabels and
    # joins one group's members instead of scanning every region
    head = np.arange(nregs).astype(np.int64)
    tail = np.arange(nregs).astype(np.int64)
    nxt = np.full(nregs, -1, np.int64)
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
    remap = np.zeros(256, np.int64)
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
