"""Spatial hash of agent bounds (Detour's dtProximityGrid) and the neighbour search.

Items are registered per cell into ``next_pow2(pool_size)`` hash buckets as
singly linked lists (newest first); a query visits cells row by row and returns
unique ids in Detour's order, which fixes the order of equal-distance
neighbours. :func:`build_grid` and :func:`find_neighbours` are numba kernels
over all agents (dtCrowd's grid registration and getNeighbours/addNeighbour).
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

__all__ = ["ProximityGrid", "build_grid", "find_neighbours", "MAX_QUERY_IDS"]

_NONE = -1
MAX_QUERY_IDS = 32  # getNeighbours' MAX_NEIS


def _next_pow2(v: int) -> int:
    p = 1
    while p < v:
        p <<= 1
    return p


class ProximityGrid:
    """dtProximityGrid(pool_size, cell_size) storage (the kernels fill and query it)."""

    def __init__(self, pool_size: int, cell_size: np.float32) -> None:
        self.cell_size = np.float32(cell_size)
        self.inv_cell_size = np.float32(1.0) / self.cell_size
        self.buckets = np.full(_next_pow2(pool_size), _NONE, np.int64)
        # items: x, y, id, next
        self.items = np.zeros((pool_size, 4), np.int64)
        self.pool_head = 0


@njit(inline="always")
def _cell(v, inv):
    return np.int64(np.floor(v * inv))


@njit(inline="always")
def _hash(x, y, nb):
    # ((x*73856093) ^ (y*19349663)) & (n-1): the low bits do not depend on the
    # int32 wrap-around of Detour's products
    return ((x * 73856093) ^ (y * 19349663)) & (nb - 1)


@njit(cache=True)
def build_grid(act, npos, radius, inv, buckets, items):
    """Clear the grid and add every active agent's xz bounds (item id = rank in ``act``).

    Returns the number of pool items used."""
    buckets[:] = _NONE
    nb = buckets.shape[0]
    cap = items.shape[0]
    head = 0
    for i in range(act.shape[0]):
        s = act[i]
        r = radius[s]
        x0 = _cell(npos[s, 0] - r, inv)
        y0 = _cell(npos[s, 2] - r, inv)
        x1 = _cell(npos[s, 0] + r, inv)
        y1 = _cell(npos[s, 2] + r, inv)
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                if head < cap:
                    h = _hash(x, y, nb)
                    items[head, 0] = x
                    items[head, 1] = y
                    items[head, 2] = i
                    items[head, 3] = buckets[h]
                    buckets[h] = head
                    head += 1
    return head


@njit(inline="always")
def _query_items(minx, miny, maxx, maxy, inv, buckets, items, ids):
    x0 = _cell(minx, inv)
    y0 = _cell(miny, inv)
    x1 = _cell(maxx, inv)
    y1 = _cell(maxy, inv)
    nb = buckets.shape[0]
    n = 0
    for y in range(y0, y1 + 1):
        for x in range(x0, x1 + 1):
            k = buckets[_hash(x, y, nb)]
            while k != _NONE:
                if items[k, 0] == x and items[k, 1] == y:
                    it = items[k, 2]
                    found = False
                    for j in range(n):
                        if ids[j] == it:
                            found = True
                            break
                    if not found:
                        if n >= ids.shape[0]:
                            return n
                        ids[n] = it
                        n += 1
                k = items[k, 3]
    return n


@njit(cache=True)
def find_neighbours(act, walking, npos, height, qrange, inv, buckets, items, neis, nei_dist, nneis):
    """dtCrowd's getNeighbours for every walking agent: the nearest (xz) agents within
    its collision query range whose vertical extents overlap, sorted by distance,
    at most ``neis.shape[1]``; ``neis`` holds agent slots."""
    ids = np.empty(MAX_QUERY_IDS, np.int64)
    maxn = neis.shape[1]
    for i in range(act.shape[0]):
        s = act[i]
        if not walking[s]:
            continue
        px, py, pz = npos[s, 0], npos[s, 1], npos[s, 2]
        rng = qrange[s]
        nid = _query_items(px - rng, pz - rng, px + rng, pz + rng, inv, buckets, items, ids)
        n = 0
        for k in range(nid):
            o = act[ids[k]]
            if o == s:
                continue
            dx = px - npos[o, 0]
            dy = py - npos[o, 1]
            dz = pz - npos[o, 2]
            if abs(dy) >= (height[s] + height[o]) / F32(2.0):
                continue
            d2 = dx * dx + F32(0.0) * F32(0.0) + dz * dz
            if d2 > rng * rng:
                continue
            # addNeighbour
            if n == 0 or d2 >= nei_dist[s, n - 1]:
                if n >= maxn:
                    continue
                at = n
            else:
                at = 0
                while at < n and not d2 <= nei_dist[s, at]:
                    at += 1
                m = min(n - at, maxn - (at + 1))
                for j in range(m - 1, -1, -1):
                    neis[s, at + 1 + j] = neis[s, at + j]
                    nei_dist[s, at + 1 + j] = nei_dist[s, at + j]
            neis[s, at] = o
            nei_dist[s, at] = d2
            n = min(n + 1, maxn)
        nneis[s] = n
