"""Site storage of the ECM (struct-of-arrays, grown by doubling).

A site is a point or an open segment; a segment's endpoints are point sites of
their own (ids ``e0``, ``e1``).  ``side`` says where free space is: for a
segment 1 = only on its left (a polygon edge, polygons oriented so free space is
on the left), 0 = both sides; for a point 1 = its Voronoi cell is free space, 0 =
a corner whose cell lies inside the obstacle (a left turn of its polygon).
"""

from __future__ import annotations

import math

import numpy as np


class Sites:
    """Growable arrays of sites. Attributes are numpy arrays of length ``cap``;
    only the first ``n`` entries are used."""

    def __init__(self, cap: int = 64) -> None:
        self.n = 0
        self.kind = np.zeros(cap, np.int8)
        self.ax = np.zeros(cap)
        self.ay = np.zeros(cap)
        self.bx = np.zeros(cap)
        self.by = np.zeros(cap)
        self.e0 = np.full(cap, -1, np.int64)
        self.e1 = np.full(cap, -1, np.int64)
        self.side = np.zeros(cap, np.int8)
        self.alive = np.zeros(cap, np.bool_)
        self.owner = np.full(cap, -1, np.int64)
        self.incident: dict[int, list] = {}  # point site -> segment sites ending there

    def _grow(self) -> None:
        for name in ("kind", "ax", "ay", "bx", "by", "e0", "e1", "side", "alive", "owner"):
            a = getattr(self, name)
            b = np.empty(2 * a.shape[0], a.dtype)
            b[: a.shape[0]] = a
            b[a.shape[0] :] = -1 if name in ("e0", "e1", "owner") else 0
            setattr(self, name, b)

    def add(self, kind, ax, ay, bx=0.0, by=0.0, e0=-1, e1=-1, side=1, owner=-1) -> int:
        if self.n == self.kind.shape[0]:
            self._grow()
        i = self.n
        self.kind[i] = kind
        self.ax[i], self.ay[i], self.bx[i], self.by[i] = ax, ay, bx, by
        self.e0[i], self.e1[i] = e0, e1
        self.side[i] = side
        self.alive[i] = True
        self.owner[i] = owner
        self.n += 1
        self.grid_add(i)
        if kind == 1:
            self.incident.setdefault(int(e0), []).append(i)
            self.incident.setdefault(int(e1), []).append(i)
        return i

    # ------------------------------------------------------------ uniform grid
    def make_grid(self, x0, y0, x1, y1, h) -> None:
        """Bucket sites in square cells of side ``h`` [wu] over the box (x0, y0)-(x1, y1)."""
        self.gx0, self.gy0, self.h = float(x0), float(y0), float(h)
        self.gnx = max(1, int(math.ceil((x1 - x0) / h)) + 1)
        self.gny = max(1, int(math.ceil((y1 - y0) / h)) + 1)
        self.cells = np.zeros((self.gnx * self.gny, 8), np.int64)
        self.counts = np.zeros(self.gnx * self.gny, np.int64)
        for i in range(self.n):
            if self.alive[i]:
                self.grid_add(i)

    def grid_add(self, i: int) -> None:
        if not hasattr(self, "cells"):
            return
        if self.kind[i] == 0:
            xs, ys = (self.ax[i], self.ax[i]), (self.ay[i], self.ay[i])
        else:
            xs, ys = (self.ax[i], self.bx[i]), (self.ay[i], self.by[i])
        h = self.h
        i0 = min(self.gnx - 1, max(0, int(math.floor((min(xs) - self.gx0) / h))))
        i1 = min(self.gnx - 1, max(0, int(math.floor((max(xs) - self.gx0) / h))))
        j0 = min(self.gny - 1, max(0, int(math.floor((min(ys) - self.gy0) / h))))
        j1 = min(self.gny - 1, max(0, int(math.floor((max(ys) - self.gy0) / h))))
        ax, ay = self.ax[i], self.ay[i]
        dx, dy = xs[1] - xs[0] if self.kind[i] else 0.0, 0.0
        dx, dy = (self.bx[i] - ax, self.by[i] - ay) if self.kind[i] else (0.0, 0.0)
        ln2 = dx * dx + dy * dy
        for gi in range(i0, i1 + 1):
            for gj in range(j0, j1 + 1):
                if ln2 > 0:
                    # skip cells the segment does not come near (distance from the
                    # cell centre to the segment > half the cell diagonal)
                    cx, cy = self.gx0 + (gi + 0.5) * h, self.gy0 + (gj + 0.5) * h
                    t = min(1.0, max(0.0, ((cx - ax) * dx + (cy - ay) * dy) / ln2))
                    if math.hypot(cx - ax - t * dx, cy - ay - t * dy) > 0.7072 * h:
                        continue
                c = gi * self.gny + gj
                if self.counts[c] == self.cells.shape[1]:
                    big = np.zeros((self.cells.shape[0], 2 * self.cells.shape[1]), np.int64)
                    big[:, : self.cells.shape[1]] = self.cells
                    self.cells = big
                self.cells[c, self.counts[c]] = i
                self.counts[c] += 1

    def grid_args(self):
        return (self.cells, self.counts, self.gx0, self.gy0, self.h, self.gnx, self.gny)

    def key(self, i: int) -> tuple:
        """Geometric identity of a site (independent of its id)."""
        if self.kind[i] == 0:
            return (0, float(self.ax[i]), float(self.ay[i]))
        return (1, float(self.ax[i]), float(self.ay[i]), float(self.bx[i]), float(self.by[i]))

    def kernel_args(self):
        return (self.kind, self.ax, self.ay, self.bx, self.by, self.alive, self.n)
