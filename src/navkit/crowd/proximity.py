"""Spatial hash of agent bounds (Detour's dtProximityGrid) and the neighbour search.

Items are registered per cell into ``next_pow2(pool_size)`` hash buckets as
singly linked lists (newest first); a query visits cells row by row and returns
unique ids in Detour's order, which fixes the order of equal-distance
neighbours. :func:`build_grid` and :func:`find_neighbours` are numba kernels
over all agents (dtCrowd's grid registration and getNeighbours/addNeighbour).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from navkit._jit import F32, borrow, njit

from ._par import twins

__all__ = [
    "ProximityGrid",
    "build_grid",
    "find_neighbours",
    "find_neighbours_par",
    "dense_cells",
    "find_neighbours_dense",
    "MAX_QUERY_IDS",
]

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
        # lower-corner cell (x, y) of each registered agent (by rank)
        self.lo = np.zeros((pool_size, 2), np.int64)
        self.pool_head = 0


@njit(inline="always")
def _cell(v, inv):
    return np.int64(np.floor(v * inv))


@njit(inline="always")
def _hash(x, y, nb):
    # ((x*73856093) ^ (y*19349663)) & (n-1): the low bits do not depend on the
    # int32 wrap-around of Detour's products
    return ((x * 73856093) ^ (y * 19349663)) & (nb - 1)


@njit(cache=True, link=False)
def build_grid(act, npos, radius, inv, buckets, items, lo):
    """Clear the grid and add every active agent's xz bounds (item id = rank in ``act``);
    ``lo[i]`` gets the (x, y) cell of agent rank i's lower bound corner.

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
        lo[i, 0] = x0
        lo[i, 1] = y0
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


@njit
def _query_items(minx, miny, maxx, maxy, inv, buckets, items, ids):
    """dtProximityGrid::queryItems: the distinct item ids (ranks in ``act``) of the
    cells overlapping the box, cells row by row, each bucket newest first, at most
    ``ids.shape[0]``; returns how many (used by the navkit avoidance models)."""
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


def _find_neighbours_impl(sel, act, walking, npos, height, qrange, inv, buckets, items, lo,
                          neis, nei_dist, nneis):  # fmt: skip
    """dtCrowd's getNeighbours for every walking agent: the nearest (xz) agents within
    its collision query range whose vertical extents overlap, sorted by distance,
    at most ``neis.shape[1]``; ``neis`` holds agent slots.

    The grid query (dtProximityGrid::queryItems: cells row by row, each bucket's
    items newest first, the first MAX_QUERY_IDS distinct ids) is fused with the
    neighbour filter. An item's first cell in that order is the query box's
    corner clamped to the item's lower corner ``lo``; any other cell of the item
    is a repeat, which replaces Detour's linear search of the ids found so far.

    ``sel`` is the slots to query for (``act`` itself, or a subset: the level of
    detail's due agents); ``act`` the slots the grid was built from (item id = rank)."""
    sel, act, npos, height, qrange, buckets, items, lo, neis, nei_dist, nneis = borrow(
        (sel, act, npos, height, qrange, buckets, items, lo, neis, nei_dist, nneis)
    )
    maxn = neis.shape[1]
    nb = buckets.shape[0]
    for i in prange(sel.shape[0]):
        s = sel[i]
        if not walking[s]:
            continue
        px, py, pz = npos[s, 0], npos[s, 1], npos[s, 2]
        rng = qrange[s]
        qx0 = _cell(px - rng, inv)
        qy0 = _cell(pz - rng, inv)
        qx1 = _cell(px + rng, inv)
        qy1 = _cell(pz + rng, inv)
        n = 0
        nid = 0
        done = False
        for y in range(qy0, qy1 + 1):
            if done:
                break
            for x in range(qx0, qx1 + 1):
                if done:
                    break
                k = buckets[_hash(x, y, nb)]
                while k != _NONE:
                    if items[k, 0] == x and items[k, 1] == y:
                        it = items[k, 2]
                        if x == max(lo[it, 0], qx0) and y == max(lo[it, 1], qy0):
                            if nid >= MAX_QUERY_IDS:
                                done = True
                                break
                            nid += 1
                            o = act[it]
                            if o != s:
                                n = _add_neighbour(s, o, px, py, pz, rng, height, npos,
                                                   neis, nei_dist, n, maxn)  # fmt: skip
                    k = items[k, 3]
        nneis[s] = n


@njit(inline="always")
def _add_neighbour(s, o, px, py, pz, rng, height, npos, neis, nei_dist, n, maxn):
    dx = px - npos[o, 0]
    dy = py - npos[o, 1]
    dz = pz - npos[o, 2]
    if abs(dy) >= (height[s] + height[o]) / F32(2.0):
        return n
    d2 = dx * dx + F32(0.0) * F32(0.0) + dz * dz
    if d2 > rng * rng:
        return n
    # addNeighbour
    if n == 0 or d2 >= nei_dist[s, n - 1]:
        if n >= maxn:
            return n
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
    return min(n + 1, maxn)


find_neighbours, find_neighbours_par = twins(_find_neighbours_impl)


#: dense_cells gives up on a bounding box of more cells than this (agents far apart)
MAX_DENSE_CELLS = 1 << 16


@njit(cache=True, link=False)
def dense_cells(items, lo, head):
    """The grid's first ``head`` items by cell, for :func:`find_neighbours_dense`: the
    cells' bounding box (x0, y0, w, h), ``start`` (w * h + 1: each cell's first row in
    ``ids``) and ``ids`` (head, 4) rows (agent rank, its lower cell x, y, and the
    cell x of this item), each cell's items newest first (the order of its hash
    chain). w = 0 when the box has more than MAX_DENSE_CELLS cells (agents far apart:
    use the hash walk)."""
    ids = np.empty((head, 4), np.int64)
    if head == 0:
        return 0, 0, 0, 0, np.zeros(1, np.int64), ids
    x0 = items[0, 0]
    x1 = x0
    y0 = items[0, 1]
    y1 = y0
    for k in range(1, head):
        x0 = min(x0, items[k, 0])
        x1 = max(x1, items[k, 0])
        y0 = min(y0, items[k, 1])
        y1 = max(y1, items[k, 1])
    w = x1 - x0 + 1
    h = y1 - y0 + 1
    if w * h > MAX_DENSE_CELLS:
        return 0, 0, 0, 0, np.zeros(1, np.int64), ids
    nc = w * h
    start = np.zeros(nc + 1, np.int64)
    for k in range(head):
        start[(items[k, 1] - y0) * w + (items[k, 0] - x0) + 1] += 1
    for c in range(nc):
        start[c + 1] += start[c]
    # newest first: fill each cell from its end, oldest item first
    fill = start[1:].copy()
    for k in range(head):
        c = (items[k, 1] - y0) * w + (items[k, 0] - x0)
        fill[c] -= 1
        j = fill[c]
        it = items[k, 2]
        ids[j, 0] = it
        ids[j, 1] = lo[it, 0]
        ids[j, 2] = lo[it, 1]
        ids[j, 3] = items[k, 0]
    return x0, y0, w, h, start, ids


@njit(cache=True, link=False)
def find_neighbours_dense(sel, act, walking, npos, height, qrange, inv, x0, y0, w, h, start,
                          ids, neis, nei_dist, nneis):  # fmt: skip
    """:func:`find_neighbours` on the grid's items by cell (:func:`dense_cells`): the
    same cells in the same order, each cell's items in its hash chain's order, without
    hashing nor walking chains shared with other cells (cells outside the box hold
    no item). A row's cells are consecutive in ``ids``, so each row of the query box is
    one run of items (empty cells cost nothing: a 12 r query range spans 9 x 9 cells)."""
    maxn = neis.shape[1]
    for i in range(sel.shape[0]):
        s = sel[i]
        if not walking[s]:
            continue
        px, py, pz = npos[s, 0], npos[s, 1], npos[s, 2]
        rng = qrange[s]
        qx0 = _cell(px - rng, inv)
        qy0 = _cell(pz - rng, inv)
        qx1 = _cell(px + rng, inv)
        qy1 = _cell(pz + rng, inv)
        cx0 = max(qx0, x0)
        cx1 = min(qx1, x0 + w - 1)
        cy0 = max(qy0, y0)
        cy1 = min(qy1, y0 + h - 1)
        n = 0
        nid = 0
        done = False
        if cx0 <= cx1:
            for y in range(cy0, cy1 + 1):
                if done:
                    break
                row = (y - y0) * w - x0
                for k in range(start[row + cx0], start[row + cx1 + 1]):
                    # the item's first cell in the query's order: its lower corner
                    # clamped to the query box's (any other cell is a repeat)
                    if ids[k, 3] == max(ids[k, 1], qx0) and y == max(ids[k, 2], qy0):
                        if nid >= MAX_QUERY_IDS:
                            done = True
                            break
                        nid += 1
                        o = act[ids[k, 0]]
                        if o != s:
                            n = _add_neighbour(s, o, px, py, pz, rng, height, npos, neis,
                                               nei_dist, n, maxn)  # fmt: skip
        nneis[s] = n
