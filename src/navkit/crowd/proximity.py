"""Spatial hash of agent bounds (Detour's dtProximityGrid) and neighbour search.

Items are registered per cell into ``next_pow2(pool_size)`` hash buckets as
singly linked lists (newest first); :meth:`ProximityGrid.query_items` visits
cells row by row and returns unique ids in Detour's order, which fixes the
order of equal-distance neighbours.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ProximityGrid", "add_neighbour"]

_NONE = 0xFFFF


def _next_pow2(v: int) -> int:
    p = 1
    while p < v:
        p <<= 1
    return p


def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _hash(x: int, y: int, n: int) -> int:
    return (_i32(x * 73856093) ^ _i32(y * 19349663)) & (n - 1)


class ProximityGrid:
    """dtProximityGrid(pool_size, cell_size): ``clear``, ``add_item``, ``query_items``."""

    def __init__(self, pool_size: int, cell_size: np.float32) -> None:
        self.cell_size = np.float32(cell_size)
        self.inv_cell_size = np.float32(1.0) / self.cell_size
        self.buckets_size = _next_pow2(pool_size)
        self.pool_size = pool_size
        self.buckets = np.full(self.buckets_size, _NONE, np.int64)
        self.item_x = np.zeros(pool_size, np.int64)
        self.item_y = np.zeros(pool_size, np.int64)
        self.item_id = np.zeros(pool_size, np.int64)
        self.item_next = np.zeros(pool_size, np.int64)
        self.pool_head = 0

    def clear(self) -> None:
        self.buckets[:] = _NONE
        self.pool_head = 0

    def _cell(self, v: np.float32) -> int:
        return int(math.floor(np.float32(v) * self.inv_cell_size))

    def add_item(self, item: int, minx, miny, maxx, maxy) -> None:
        x0, y0, x1, y1 = self._cell(minx), self._cell(miny), self._cell(maxx), self._cell(maxy)
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                if self.pool_head < self.pool_size:
                    h = _hash(x, y, self.buckets_size)
                    i = self.pool_head
                    self.pool_head += 1
                    self.item_x[i] = x
                    self.item_y[i] = y
                    self.item_id[i] = item
                    self.item_next[i] = self.buckets[h]
                    self.buckets[h] = i

    def query_items(self, minx, miny, maxx, maxy, max_ids: int) -> list[int]:
        x0, y0, x1, y1 = self._cell(minx), self._cell(miny), self._cell(maxx), self._cell(maxy)
        ids: list[int] = []
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                i = int(self.buckets[_hash(x, y, self.buckets_size)])
                while i != _NONE:
                    if self.item_x[i] == x and self.item_y[i] == y:
                        it = int(self.item_id[i])
                        if it not in ids:
                            if len(ids) >= max_ids:
                                return ids
                            ids.append(it)
                    i = int(self.item_next[i])
        return ids


def add_neighbour(idx: int, dist: np.float32, idxs: list, dists: list, max_neis: int) -> None:
    """dtCrowd's addNeighbour: insert (idx, dist) keeping the list sorted, capped at max_neis."""
    n = len(idxs)
    if n == 0 or dist >= dists[n - 1]:
        if n >= max_neis:
            return
        idxs.append(idx)
        dists.append(dist)
        return
    i = 0
    while i < n and not dist <= dists[i]:
        i += 1
    idxs.insert(i, idx)
    dists.insert(i, dist)
    del idxs[max_neis:]
    del dists[max_neis:]
