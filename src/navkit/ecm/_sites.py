"""Site storage of the ECM (struct-of-arrays, grown by doubling).

A site is a point or an open segment; a segment's endpoints are point sites of
their own (ids ``e0``, ``e1``).  ``side`` says where free space is: for a
segment 1 = only on its left (a polygon edge, polygons oriented so free space is
on the left), 0 = both sides; for a point 1 = its Voronoi cell is free space, 0 =
a corner whose cell lies inside the obstacle (a left turn of its polygon).
``inc`` lists the (at most two) segments ending at each point site, for the
update kernels.  A polygon's sites are written in one kernel call
(:meth:`Sites.add_polygon`).
"""

from __future__ import annotations

import math

import numpy as np

from navkit._jit import njit

from ._update_kernels import grid_insert, grid_insert_ids


@njit
def _fill_polygon(
    p0, x, y, owner, kind, ax, ay, bx, by, e0, e1, side, alive, own, cvx, inc
):  # fmt: skip
    """Write the k corners (ids p0 ..) and k edges (ids p0 + k ..) of ring (x, y),
    with ``cvx`` set when the polygon is convex."""
    k = x.shape[0]
    for i in range(k):
        a = i - 1 if i > 0 else k - 1
        c = i + 1 if i + 1 < k else 0
        turn = (x[i] - x[a]) * (y[c] - y[i]) - (y[i] - y[a]) * (x[c] - x[i])
        for q, kd in ((p0 + i, 0), (p0 + k + i, 1)):
            kind[q] = kd
            ax[q] = x[i]
            ay[q] = y[i]
            bx[q] = x[c] if kd == 1 else 0.0
            by[q] = y[c] if kd == 1 else 0.0
            e0[q] = p0 + i if kd == 1 else -1
            e1[q] = p0 + c if kd == 1 else -1
            side[q] = 1 if (kd == 1 or turn <= 0) else 0
            alive[q] = True
            own[q] = owner
        # segments ending at the corner, in the order one-by-one adding gives
        inc[p0 + i, 0] = p0 + k + (a if i > 0 else 0)
        inc[p0 + i, 1] = p0 + k + (i if i > 0 else k - 1)
        inc[p0 + k + i, 0] = -1
        inc[p0 + k + i, 1] = -1
    # a convex polygon (no corner whose cell lies inside it): see ``Sites.cvx``
    convex = True
    for i in range(k):
        if side[p0 + i] == 0:
            convex = False
    for q in range(p0, p0 + 2 * k):
        cvx[q] = convex


class Sites:
    """Growable arrays of sites. Attributes are numpy arrays of length ``cap``;
    only the first ``n`` entries are used."""

    cells: np.ndarray  # the uniform grid, once :meth:`make_grid` made it
    counts: np.ndarray

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
        # the site belongs to a convex obstacle (a convex polygon, a segment or
        # a point): no empty circle outside it touches two of its sites that
        # share no point
        self.cvx = np.zeros(cap, np.bool_)
        # the same as rows (at most two segments end at a point; -1 = none)
        self.inc = np.full((cap, 2), -1, np.int64)
        # blocks of ids of deleted obstacles, by length, for reuse: a map whose
        # obstacles keep moving or coming and going stays the same size
        self.free: dict[int, list[int]] = {}

    def alloc(self, count: int) -> int:
        """First id of ``count`` consecutive unused ids: a released block of that
        length if there is one, otherwise new ids at the end (growing the arrays)."""
        blocks = self.free.get(count)
        if blocks:
            return blocks.pop()
        while self.n + count > self.kind.shape[0]:
            self._grow()
        p0 = self.n
        self.n += count
        return p0

    def release(self, ids) -> None:
        """Give back the ids of a deleted obstacle (one block from :meth:`alloc`,
        dead, out of the grid and of every diagram vertex) for reuse."""
        if len(ids):
            p0 = int(min(ids))
            self.free.setdefault(len(ids), []).append(p0)

    def _grow(self) -> None:
        for name in ("kind", "ax", "ay", "bx", "by", "e0", "e1", "side", "alive", "owner", "cvx"):
            a = getattr(self, name)
            b = np.empty(2 * a.shape[0], a.dtype)
            b[: a.shape[0]] = a
            b[a.shape[0] :] = -1 if name in ("e0", "e1", "owner") else 0
            setattr(self, name, b)
        inc = np.full((2 * self.inc.shape[0], 2), -1, np.int64)
        inc[: self.inc.shape[0]] = self.inc
        self.inc = inc

    def add(self, kind, ax, ay, bx=0.0, by=0.0, e0=-1, e1=-1, side=1, owner=-1, at=None) -> int:
        """Write one site at id ``at`` (from :meth:`alloc`), or at a new id."""
        if at is None:
            i = self.alloc(1)
        else:
            i = int(at)
        self.kind[i] = kind
        self.ax[i], self.ay[i], self.bx[i], self.by[i] = ax, ay, bx, by
        self.e0[i], self.e1[i] = e0, e1
        self.side[i] = side
        self.alive[i] = True
        self.owner[i] = owner
        self.cvx[i] = False
        self.inc[i] = -1  # (re)written: no segment ends here yet
        self.grid_add(i)
        if kind == 1:
            for p in (int(e0), int(e1)):
                slot = 0 if self.inc[p, 0] < 0 else 1
                if self.inc[p, slot] >= 0:
                    raise ValueError("a point site ends at most two segments")
                self.inc[p, slot] = i
        return i

    def add_polygon(self, x, y, owner, at=None) -> tuple:
        """Add the corners (point sites) and edges (segment sites, corner i to
        i + 1) of the closed ring (x, y) ((k,) float64, clockwise: free space on
        the left of each edge), at ids ``at`` .. ``at + 2k`` (from :meth:`alloc`)
        or at new ids.  A corner is ``side`` 0 where the ring turns left (its cell
        lies inside the obstacle).  Returns (corner ids, edge ids)."""
        k = x.shape[0]
        p0 = self.alloc(2 * k) if at is None else int(at)
        _fill_polygon(
            p0, x, y, owner, self.kind, self.ax, self.ay, self.bx, self.by, self.e0, self.e1,
            self.side, self.alive, self.owner, self.cvx, self.inc,
        )  # fmt: skip
        pid = list(range(p0, p0 + k))
        sid = list(range(p0 + k, p0 + 2 * k))
        if hasattr(self, "cells"):
            self._grid_insert(np.arange(p0, p0 + 2 * k, dtype=np.int64))
        return pid, sid

    def _grid_insert(self, ids) -> None:
        """Bucket the sites ``ids`` ((m,) int64) in the grid, doubling the cell
        capacity whenever a cell is full."""
        k = 0
        while k < ids.shape[0]:
            k = grid_insert_ids(ids, k, self.kind, self.ax, self.ay, self.bx, self.by, *self.grid_args())  # fmt: skip
            if k < ids.shape[0]:
                self._grow_cells()

    def _grow_cells(self) -> None:
        cells = self.cells
        big = np.zeros((cells.shape[0], 2 * cells.shape[1]), np.int64)
        big[:, : cells.shape[1]] = cells
        self.cells = big

    # ------------------------------------------------------------ uniform grid
    def make_grid(self, x0, y0, x1, y1, h) -> None:
        """Bucket sites in square cells of side ``h`` [wu] over the box (x0, y0)-(x1, y1)."""
        self.gx0, self.gy0, self.h = float(x0), float(y0), float(h)
        self.gnx = max(1, int(math.ceil((x1 - x0) / h)) + 1)
        self.gny = max(1, int(math.ceil((y1 - y0) / h)) + 1)
        self.cells = np.zeros((self.gnx * self.gny, 8), np.int64)
        self.counts = np.zeros(self.gnx * self.gny, np.int64)
        self._grid_insert(np.flatnonzero(self.alive[: self.n]).astype(np.int64))

    def grid_add(self, i: int) -> None:
        """Bucket site ``i`` in the cells it comes near (doubling the cell capacity
        when one is full)."""
        if not hasattr(self, "cells"):
            return
        while not grid_insert(i, self.kind, self.ax, self.ay, self.bx, self.by, *self.grid_args()):
            self._grow_cells()

    def grid_args(self):
        return (self.cells, self.counts, self.gx0, self.gy0, self.h, self.gnx, self.gny)

    def key(self, i: int) -> tuple:
        """Geometric identity of a site (independent of its id)."""
        if self.kind[i] == 0:
            return (0, float(self.ax[i]), float(self.ay[i]))
        return (1, float(self.ax[i]), float(self.ay[i]), float(self.bx[i]), float(self.by[i]))

    def kernel_args(self):
        return (self.kind, self.ax, self.ay, self.bx, self.by, self.alive, self.n)
