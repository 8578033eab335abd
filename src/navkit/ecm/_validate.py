"""numba kernels that clean and validate one obstacle before it is inserted.

:func:`clean_ring` drops repeated corners and (for closed rings) corners where
the ring goes straight on, until neither is left -- the input cleaning of
:class:`navkit.ecm.CorridorMap`; a corner where the ring doubles back is kept
(the thinness test then rejects it).  :func:`check_obstacle` then runs every
test an insertion needs in one call: the ring does not touch itself, is not
thinner than the minimum feature size ``feat`` (:func:`ring_thin`), lies inside
the boundary (or entirely outside it), stays more than ``feat`` from every alive
site (over the site grid), is not inside another obstacle (the nearest site sees
it on its inner side) and contains no other obstacle; :func:`obstacle_ring`
does the snapping, the cleaning and the checks in one call.  The status codes
are the ``OK`` ... ``THIN`` constants below.
"""

from __future__ import annotations

import math

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
ZERO_AREA = 9
THIN = 10


@njit(entry=True, link=False)  # (also called from Python)
def snap_ring(p, ox, oy, gscale, scale, closed):
    """Input corners p ((m, 2) float64 [wu], world) to the local grid: shifted
    by the origin, multiplied by ``gscale`` (a power of two: the local unit
    times ``scale``), rounded half to even and divided by ``scale`` (so local
    coordinates are multiples of 1/scale), then cleaned (:func:`clean_ring`).
    Returns (status: OK, NONFINITE, TOO_FAR (beyond 2^30 grid steps of the
    origin) or ZERO_AREA (a closed ring of three or more distinct corners
    whose snapped corners all lie on one line); the ring as (k, 2) float64)."""
    m = p.shape[0]
    x = np.empty(m)
    y = np.empty(m)
    for i in range(m):
        if not (np.isfinite(p[i, 0]) and np.isfinite(p[i, 1])):
            return NONFINITE, np.empty((0, 2))
    for i in range(m):
        qx = (p[i, 0] - ox) * gscale
        qy = (p[i, 1] - oy) * gscale
        if abs(qx) > 2.0**30 or abs(qy) > 2.0**30:
            return TOO_FAR, np.empty((0, 2))
        x[i] = np.rint(qx) / scale
        y[i] = np.rint(qy) / scale
    # distinct corners as given (a polygon that snapping flattens to a segment
    # or a point is a zero-area polygon, not a segment)
    rx = np.empty(m)
    ry = np.empty(m)
    for i in range(m):
        rx[i] = p[i, 0]
        ry[i] = p[i, 1]
    nd = clean_ring(rx, ry, closed, False)[0].shape[0]
    cx, cy = clean_ring(x, y, closed, True)
    k = cx.shape[0]
    if closed and nd >= 3:
        a2 = 0.0
        for i in range(k):
            j = i + 1 if i + 1 < k else 0
            a2 += cx[i] * cy[j] - cx[j] * cy[i]
        if k < 3 or a2 == 0.0:
            return ZERO_AREA, np.empty((0, 2))
    out = np.empty((k, 2))
    for i in range(k):
        out[i, 0] = cx[i]
        out[i, 1] = cy[i]
    return OK, out


@njit
def clean_ring(x, y, closed, straight):
    """Corners (x, y) ((m,) float64 each) without repeated corners and, if
    ``closed`` and ``straight``, without straight-on corners (the ring goes on
    in the same direction; a corner where it doubles back is kept); repeated
    until stable."""
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
        if not anyd and n >= 3 and closed and straight:
            for i in range(n):
                a = i - 1 if i > 0 else n - 1
                c = i + 1 if i + 1 < n else 0
                cr = (px[i] - px[a]) * (py[c] - py[i]) - (py[i] - py[a]) * (px[c] - px[i])
                dt = (px[i] - px[a]) * (px[c] - px[i]) + (py[i] - py[a]) * (py[c] - py[i])
                if cr == 0.0 and dt > 0.0:
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
def _pseg(px, py, ax, ay, bx, by):
    """Distance from point p to segment ab."""
    dx = bx - ax
    dy = by - ay
    ll = dx * dx + dy * dy
    t = 0.0
    if ll > 0.0:
        t = min(1.0, max(0.0, ((px - ax) * dx + (py - ay) * dy) / ll))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


@njit
def ring_thin(rx, ry, feat):
    """Whether a cleaned obstacle ring ((k,) float64 each) has a feature smaller
    than ``feat``: a segment (k == 2) no longer than it, or (k >= 3) a corner
    not farther than it to an edge that does not end at that corner (a short edge,
    a sliver, a needle or an edge doubling back). O(k^2)."""
    k = rx.shape[0]
    if k == 2:
        return math.hypot(rx[1] - rx[0], ry[1] - ry[0]) <= feat
    if k < 3:
        return False
    for i in range(k):
        for j in range(k):
            j2 = j + 1 if j + 1 < k else 0
            if j == i or j2 == i:
                continue
            if _pseg(rx[i], ry[i], rx[j], ry[j], rx[j2], ry[j2]) <= feat:
                return True
    return False


@njit(link=False)
def check_obstacle(
    rx, ry, brx, bry, tol, feat, check,
    cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, side, owner, alive,
):  # fmt: skip
    """Validate a cleaned obstacle ring (rx, ry) ((k,) float64; k = 1 point,
    2 segment, >= 3 polygon) against the boundary ring (brx, bry) and, with
    ``check``, the alive sites over the grid (``feat``: the minimum feature
    size and gap; ``tol``: the diagram's tolerance).  A polygon is reoriented clockwise
    (free space on the left of its edges).

    Returns (status code, rx, ry).
    """
    k = rx.shape[0]
    if k == 0:
        return OUTSIDE, rx, ry
    if k >= 3:
        if ring_self_touch(rx, ry):
            return SELF_TOUCH, rx, ry
    if k >= 3:
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
    if ring_thin(rx, ry, feat):
        return THIN, rx, ry
    if not check:
        return OK, rx, ry
    nseg = k if k >= 3 else (1 if k == 2 else 0)
    for i in range(max(nseg, 1)):
        j = i + 1 if i + 1 < k else 0
        d = grid_seg_min_dist(
            rx[i], ry[i], rx[j], ry[j], feat,
            cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive,
        )  # fmt: skip
        if d <= feat:
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
    p, ox, oy, gscale, scale, brx, bry, tol, feat, check,
    cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, side, owner, alive,
):  # fmt: skip
    """:func:`snap_ring` (closed) then :func:`check_obstacle` in one call: the
    input corners p ((m, 2) float64 [wu], world) as a validated local ring.

    Returns (status code, ring (k, 2) float64, local, clockwise for a polygon).
    """
    code, out = snap_ring(p, ox, oy, gscale, scale, True)
    if code != OK:
        return code, out
    k = out.shape[0]
    rx = np.empty(k)
    ry = np.empty(k)
    for i in range(k):
        rx[i] = out[i, 0]
        ry[i] = out[i, 1]
    st, rx, ry = check_obstacle(
        rx, ry, brx, bry, tol, feat, check,
        cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, side, owner, alive,
    )  # fmt: skip
    ring = np.empty((rx.shape[0], 2))
    for i in range(rx.shape[0]):
        ring[i, 0] = rx[i]
        ring[i, 1] = ry[i]
    return st, ring
