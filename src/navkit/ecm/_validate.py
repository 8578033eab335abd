"""numba kernels that clean and validate one obstacle before it is inserted.

:func:`clean_ring` drops repeated corners and (for closed rings) corners where
the ring goes straight on, until neither is left -- the input cleaning of
:class:`navkit.ecm.CorridorMap`.  :func:`check_obstacle` then runs every test
an insertion needs in one call: the ring does not touch itself, lies inside the
boundary (or entirely outside it), stays more than ``tol`` from every alive site
(over the site grid), is not inside another obstacle (the nearest site sees it
on its inner side) and contains no other obstacle; :func:`obstacle_ring` does
the snapping, the cleaning and the checks in one call.  The status codes are
the ``OK`` ... ``TOO_FAR`` constants below.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import njit

from ._kernels import grid_seg_min_dist, point_in_ring, ring_self_touch
from ._tangent import _side_ok
from ._update_kernels import grid_nearest, grid_point_in_ring

OK = 0
SELF_TOUCH = 1
OUTSIDE = 2
CROSSES = 3
TOUCHES = 4
INSIDE = 5
CONTAINS = 6
NONFINITE = 7
TOO_FAR = 8


@njit
def snap_ring(p, ox, oy, scale, closed):
    """Input corners p ((m, 2) float64 [wu], world) to the local grid: shifted
    by the origin, rounded to multiples of 1/scale (half to even), then cleaned
    (:func:`clean_ring`).  Returns (status: 0 ok, 1 non-finite, 2 too far out;
    the ring as (k, 2) float64)."""
    m = p.shape[0]
    x = np.empty(m)
    y = np.empty(m)
    for i in range(m):
        if not (np.isfinite(p[i, 0]) and np.isfinite(p[i, 1])):
            return 1, np.empty((0, 2))
    for i in range(m):
        qx = (p[i, 0] - ox) * scale
        qy = (p[i, 1] - oy) * scale
        if abs(qx) > 2.0**30 or abs(qy) > 2.0**30:
            return 2, np.empty((0, 2))
        x[i] = np.rint(qx) / scale
        y[i] = np.rint(qy) / scale
    cx, cy = clean_ring(x, y, closed)
    out = np.empty((cx.shape[0], 2))
    for i in range(cx.shape[0]):
        out[i, 0] = cx[i]
        out[i, 1] = cy[i]
    return 0, out


@njit
def clean_ring(x, y, closed):
    """Corners (x, y) ((m,) float64 each) without repeated corners and, if
    ``closed``, without straight-on corners; repeated until stable."""
    n = x.shape[0]
    px = x.copy()
    py = y.copy()
    drop = np.zeros(n, np.bool_)
    changed = True
    while changed and n > 1:
        changed = False
        nq = n if closed else n - 1
        anyd = False
        for i in range(n):
            drop[i] = False
        for i in range(nq):
            j = i + 1 if i + 1 < n else 0
            if px[i] == px[j] and py[i] == py[j]:
                drop[i] = True
                anyd = True
        if not anyd and n >= 3 and closed:
            for i in range(n):
                a = i - 1 if i > 0 else n - 1
                c = i + 1 if i + 1 < n else 0
                cr = (px[i] - px[a]) * (py[c] - py[i]) - (py[i] - py[a]) * (px[c] - px[i])
                if cr == 0.0:
                    drop[i] = True
                    anyd = True
        if anyd:
            k = 0
            for i in range(n):
                if not drop[i]:
                    px[k] = px[i]
                    py[k] = py[i]
                    k += 1
            n = k
            changed = True
    return px[:n].copy(), py[:n].copy()


@njit
def check_obstacle(
    rx, ry, brx, bry, tol, check,
    cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, side, owner, alive,
):  # fmt: skip
    """Validate a cleaned obstacle ring (rx, ry) ((k,) float64; k = 1 point,
    2 segment, >= 3 polygon) against the boundary ring (brx, bry) and, with
    ``check``, the alive sites over the grid.  A polygon is reoriented clockwise
    (free space on the left of its edges).

    Returns (status code, rx, ry).
    """
    k = rx.shape[0]
    if k == 0:
        return OUTSIDE, rx, ry
    if k >= 3:
        if ring_self_touch(rx, ry):
            return SELF_TOUCH, rx, ry
        a2 = 0.0
        for i in range(k):
            j = i + 1 if i + 1 < k else 0
            a2 += rx[i] * ry[j] - rx[j] * ry[i]
        if a2 > 0:
            rx = rx[::-1].copy()
            ry = ry[::-1].copy()
    nin = 0
    for i in range(k):
        if point_in_ring(rx[i], ry[i], brx, bry):
            nin += 1
    if nin == 0:
        # entirely outside, unless the boundary lies inside it
        if not (k >= 3 and point_in_ring(brx[0], bry[0], rx, ry)):
            return OUTSIDE, rx, ry
    if nin < k:
        return CROSSES, rx, ry
    if not check:
        return OK, rx, ry
    nseg = k if k >= 3 else (1 if k == 2 else 0)
    for i in range(max(nseg, 1)):
        j = i + 1 if i + 1 < k else 0
        d = grid_seg_min_dist(
            rx[i], ry[i], rx[j], ry[j], tol,
            cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive,
        )  # fmt: skip
        if d <= tol:
            return TOUCHES, rx, ry
    # inside another obstacle: the nearest obstacle feature sees it on its inner side
    sn, dn = grid_nearest(rx[0], ry[0], cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive)  # fmt: skip
    if sn >= 0 and not _side_ok(sn, rx[0], ry[0], dn, kind, ax, ay, bx, by, side, tol):
        return INSIDE, rx, ry
    if k >= 3:
        x0, x1, y0, y1 = rx.min(), rx.max(), ry.min(), ry.max()
        if grid_point_in_ring(
            x0, y0, x1, y1, rx, ry, cells, counts, gx0, gy0, h, nx, ny,
            kind, ax, ay, owner, alive,
        ):  # fmt: skip
            return CONTAINS, rx, ry
    return OK, rx, ry


@njit
def obstacle_ring(
    p, ox, oy, scale, brx, bry, tol, check,
    cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, side, owner, alive,
):  # fmt: skip
    """:func:`snap_ring` (closed) then :func:`check_obstacle` in one call: the
    input corners p ((m, 2) float64 [wu], world) as a validated local ring.

    Returns (status code, ring (k, 2) float64, local, clockwise for a polygon).
    """
    code, out = snap_ring(p, ox, oy, scale, True)
    if code != 0:
        return (NONFINITE if code == 1 else TOO_FAR), out
    k = out.shape[0]
    rx = np.empty(k)
    ry = np.empty(k)
    for i in range(k):
        rx[i] = out[i, 0]
        ry[i] = out[i, 1]
    st, rx, ry = check_obstacle(
        rx, ry, brx, bry, tol, check,
        cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, side, owner, alive,
    )  # fmt: skip
    ring = np.empty((rx.shape[0], 2))
    for i in range(rx.shape[0]):
        ring[i, 0] = rx[i]
        ring[i, 1] = ry[i]
    return st, ring
