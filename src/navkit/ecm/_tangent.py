"""numba port of :func:`navkit.ecm.geom.tangent_circles` plus validation.

Same formulas as :mod:`navkit.ecm.geom` (which stays the readable reference and
is what the tests compare against); this version evaluates many triples at once
for the local updates.
"""

from __future__ import annotations

import math

import numpy as np

from navkit._jit import borrow, njit


@njit(inline="always")
def _len(dx, dy):
    """Length of (dx, dy): a square root of the sum of squares, about six times
    cheaper than ``math.hypot`` (whose overflow guard these snapped, bounded
    coordinates never need)."""
    return math.sqrt(dx * dx + dy * dy)


@njit
def _frame(ax, ay, bx, by):
    dx = bx - ax
    dy = by - ay
    ln = _len(dx, dy)
    ux = dx / ln
    uy = dy / ln
    return ux, uy, -uy, ux, -uy * ax + ux * ay


@njit
def _quad(a, b, c):
    if abs(a) < 1e-14 * (abs(b) + abs(c) + 1e-300):
        if b == 0.0:
            return 0, 0.0, 0.0
        return 1, -c / b, 0.0
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        if disc > -1e-12 * b * b:
            disc = 0.0
        else:
            return 0, 0.0, 0.0
    sq = math.sqrt(disc)
    q = -0.5 * (b + (sq if b >= 0 else -sq))
    if q != 0.0:
        return 2, c / q, q / a
    return 1, 0.0, 0.0


@njit
def _push(out, n, x, y):
    if n < out.shape[0]:
        out[n, 0] = x
        out[n, 1] = y
        return n + 1
    return n


@njit
def _normal_hits(px, py, nx, ny, o, kind, ax, ay, bx, by, out, n):
    if kind[o] == 0:
        dpx = px - ax[o]
        dpy = py - ay[o]
        den = 2.0 * (nx * dpx + ny * dpy)
        if den != 0.0:
            t = -(dpx * dpx + dpy * dpy) / den
            n = _push(out, n, px + t * nx, py + t * ny)
    else:
        _, _, mx, my, c2 = _frame(ax[o], ay[o], bx[o], by[o])
        base = c2 - (mx * px + my * py)
        dot = mx * nx + my * ny
        for st in (1.0, -1.0):
            for s2 in (1.0, -1.0):
                den = dot - s2 * st
                if den != 0.0:
                    t = base / den
                    if t * st >= 0.0:
                        n = _push(out, n, px + t * nx, py + t * ny)
    return n


@njit(inline="always")
def _is_end(p, s, e0, e1):
    return p == e0[s] or p == e1[s]


@njit
def _circles(i, j, k, kind, ax, ay, bx, by, e0, e1, side, out):
    # order: points first
    ids = (i, j, k)
    npts = (kind[i] == 0) + (kind[j] == 0) + (kind[k] == 0)
    # order points first (stable)
    if kind[i] == 1 and kind[j] == 0:
        ids = (j, i, k)
    if kind[ids[1]] == 1 and kind[ids[2]] == 0:
        ids = (ids[0], ids[2], ids[1])
    if kind[ids[0]] == 1 and kind[ids[1]] == 0:
        ids = (ids[1], ids[0], ids[2])
    n = 0
    if npts == 3:
        x1, y1, x2, y2, x3, y3 = (
            ax[ids[0]],
            ay[ids[0]],
            ax[ids[1]],
            ay[ids[1]],
            ax[ids[2]],
            ay[ids[2]],
        )
        d = 2.0 * (x1 * (y2 - y3) + x2 * (y3 - y1) + x3 * (y1 - y2))
        if d != 0.0:
            a2 = x1 * x1 + y1 * y1
            b2 = x2 * x2 + y2 * y2
            c2 = x3 * x3 + y3 * y3
            ux = (a2 * (y2 - y3) + b2 * (y3 - y1) + c2 * (y1 - y2)) / d
            uy = (a2 * (x3 - x2) + b2 * (x1 - x3) + c2 * (x2 - x1)) / d
            n = _push(out, n, ux, uy)
        return n
    if npts == 2:
        p, q, s = ids[0], ids[1], ids[2]
        pe = _is_end(p, s, e0, e1)
        qe = _is_end(q, s, e0, e1)
        if pe or qe:
            if pe and qe:
                return 0
            e = p if pe else q
            o = q if pe else p
            _, _, nx, ny, _ = _frame(ax[s], ay[s], bx[s], by[s])
            return _normal_hits(ax[e], ay[e], nx, ny, o, kind, ax, ay, bx, by, out, 0)
        px, py, qx, qy = ax[p], ay[p], ax[q], ay[q]
        mx, my = 0.5 * (px + qx), 0.5 * (py + qy)
        wx, wy = -(qy - py), qx - px
        wl = _len(wx, wy)
        if wl == 0.0:
            return 0
        wx /= wl
        wy /= wl
        _, _, nx, ny, c = _frame(ax[s], ay[s], bx[s], by[s])
        al = nx * mx + ny * my - c
        be = nx * wx + ny * wy
        ga = (mx - px) ** 2 + (my - py) ** 2
        nr, t1, t2 = _quad(be * be - 1.0, 2.0 * al * be, al * al - ga)
        if nr >= 1:
            n = _push(out, n, mx + t1 * wx, my + t1 * wy)
        if nr == 2:
            n = _push(out, n, mx + t2 * wx, my + t2 * wy)
        return n
    if npts == 1:
        p, s1, s2 = ids[0], ids[1], ids[2]
        px, py = ax[p], ay[p]
        en1 = _is_end(p, s1, e0, e1)
        en2 = _is_end(p, s2, e0, e1)
        if en1 and en2:
            return 0
        if en1 or en2:
            s = s1 if en1 else s2
            o = s2 if en1 else s1
            _, _, nx, ny, _ = _frame(ax[s], ay[s], bx[s], by[s])
            return _normal_hits(px, py, nx, ny, o, kind, ax, ay, bx, by, out, 0)
        _, _, n1x, n1y, c1 = _frame(ax[s1], ay[s1], bx[s1], by[s1])
        _, _, n2x, n2y, c2 = _frame(ax[s2], ay[s2], bx[s2], by[s2])
        det = n1x * n2y - n1y * n2x
        for g1 in (1.0, -1.0):
            for g2 in (1.0, -1.0):
                # n_i . x - c_i = g_i rho: a one-sided segment (side 1, free
                # space on its left, where n_i points) only has g_i = +1
                if (g1 < 0.0 and side[s1] == 1) or (g2 < 0.0 and side[s2] == 1):
                    continue
                if abs(det) > 1e-14:
                    x0 = (c1 * n2y - c2 * n1y) / det
                    y0 = (n1x * c2 - n2x * c1) / det
                    x1 = (g1 * n2y - g2 * n1y) / det
                    y1 = (n1x * g2 - n2x * g1) / det
                    dx, dy = x0 - px, y0 - py
                    nr, r1, r2 = _quad(
                        x1 * x1 + y1 * y1 - 1.0, 2.0 * (x1 * dx + y1 * dy), dx * dx + dy * dy
                    )
                    if nr >= 1 and r1 > 0.0:
                        n = _push(out, n, x0 + r1 * x1, y0 + r1 * y1)
                    if nr == 2 and r2 > 0.0:
                        n = _push(out, n, x0 + r2 * x1, y0 + r2 * y1)
                else:
                    kap = 1.0 if n1x * n2x + n1y * n2y > 0 else -1.0
                    den = kap * g1 - g2
                    if den == 0.0:
                        continue
                    rho = (c2 - kap * c1) / den
                    if rho <= 0.0:
                        continue
                    cc = c1 + g1 * rho
                    lx, ly = n1x * cc, n1y * cc
                    dxv, dyv = -n1y, n1x
                    ex, ey = lx - px, ly - py
                    nr, t1, t2 = _quad(
                        1.0, 2.0 * (dxv * ex + dyv * ey), ex * ex + ey * ey - rho * rho
                    )
                    if nr >= 1:
                        n = _push(out, n, lx + t1 * dxv, ly + t1 * dyv)
                    if nr == 2:
                        n = _push(out, n, lx + t2 * dxv, ly + t2 * dyv)
        return n
    # three segments: n_i . x - c_i = sg * g_i * rho, by Cramer's rule
    _, _, n0x, n0y, c0 = _frame(ax[ids[0]], ay[ids[0]], bx[ids[0]], by[ids[0]])
    _, _, n1x, n1y, c1 = _frame(ax[ids[1]], ay[ids[1]], bx[ids[1]], by[ids[1]])
    _, _, n2x, n2y, c2 = _frame(ax[ids[2]], ay[ids[2]], bx[ids[2]], by[ids[2]])
    for gi in range(4):
        g1 = 1.0 if gi < 2 else -1.0
        g2 = 1.0 if gi % 2 == 0 else -1.0
        for sg in (1.0, -1.0):
            # n_i . x - c_i = sg g_i rho (g_0 = 1); a one-sided segment needs +rho
            if (
                (sg < 0.0 and side[ids[0]] == 1)
                or (sg * g1 < 0.0 and side[ids[1]] == 1)
                or (sg * g2 < 0.0 and side[ids[2]] == 1)
            ):
                continue
            k0, k1, k2 = -sg, -sg * g1, -sg * g2
            det = _det3(n0x, n0y, k0, n1x, n1y, k1, n2x, n2y, k2)
            if abs(det) < 1e-14:
                continue
            rho = _det3(n0x, n0y, c0, n1x, n1y, c1, n2x, n2y, c2) / det
            if rho > 0.0:
                x = _det3(c0, n0y, k0, c1, n1y, k1, c2, n2y, k2) / det
                y = _det3(n0x, c0, k0, n1x, c1, k1, n2x, c2, k2) / det
                n = _push(out, n, x, y)
    return n


@njit
def _det3(a, b, c, d, e, f, g, h, i):
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


@njit
def _dok(k, ax, ay, bx, by, x, y, ptol):
    """Distance from (x, y) to a site given by its values (kind k, ends (ax, ay),
    (bx, by)) and whether the foot lies on it (segment parameter within
    [-ptol, 1 + ptol]).  Scalars only: hot loops call it without any reference
    counting."""
    if k == 0:
        return _len(x - ax, y - ay), True
    dx = bx - ax
    dy = by - ay
    t = ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)
    ok = t >= -ptol and t <= 1.0 + ptol
    tc = min(1.0, max(0.0, t))
    return _len(x - (ax + tc * dx), y - (ay + tc * dy)), ok


@njit(entry=True)  # (also called from Python)
def _sok(k, ax, ay, bx, by, sd, x, y, rho, tol):
    """Whether a site (values as :func:`_dok`, ``sd`` its side) sees the circle
    (x, y, rho) on its free side."""
    if k == 0:
        return sd == 1 or rho <= tol
    if sd == 0:
        return True
    dx = bx - ax
    dy = by - ay
    cr = (dx * (y - ay) - dy * (x - ax)) / _len(dx, dy)
    return cr >= -tol


@njit(inline="always")
def _dist_ok(s, x, y, kind, ax, ay, bx, by, ptol):
    return _dok(kind[s], ax[s], ay[s], bx[s], by[s], x, y, ptol)


@njit(inline="always")
def _side_ok(s, x, y, rho, kind, ax, ay, bx, by, side, tol):
    return _sok(kind[s], ax[s], ay[s], bx[s], by[s], side[s], x, y, rho, tol)


@njit(inline="always")
def _dgrad(k, ax, ay, bx, by, x, y):
    """Distance from (x, y) to a site (values as :func:`_dok`) and its gradient."""
    fx = ax
    fy = ay
    if k == 1:
        dx = bx - ax
        dy = by - ay
        t = min(1.0, max(0.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
        fx = ax + t * dx
        fy = ay + t * dy
    d = _len(x - fx, y - fy)
    if d == 0.0:
        return d, 0.0, 0.0
    return d, (x - fx) / d, (y - fy) / d


@njit
def _refine(i, j, k, kind, ax, ay, bx, by, x, y):
    """A few Newton steps on d_s(x, y) = rho (s = i, j, k) from (x, y): the closed
    forms lose digits where the circle is ill-conditioned (a point between two
    nearly parallel segments), by more than tol.  Returns the new (x, y)."""
    for _ in range(3):
        d1, g1x, g1y = _dgrad(kind[i], ax[i], ay[i], bx[i], by[i], x, y)
        d2, g2x, g2y = _dgrad(kind[j], ax[j], ay[j], bx[j], by[j], x, y)
        d3, g3x, g3y = _dgrad(kind[k], ax[k], ay[k], bx[k], by[k], x, y)
        rho = (d1 + d2 + d3) / 3.0
        # rows [g_s, -1] . (dx, dy, drho) = rho - d_s
        det = _det3(g1x, g1y, -1.0, g2x, g2y, -1.0, g3x, g3y, -1.0)
        if det == 0.0 or not math.isfinite(det):
            break
        r1 = rho - d1
        r2 = rho - d2
        r3 = rho - d3
        ddx = _det3(r1, g1y, -1.0, r2, g2y, -1.0, r3, g3y, -1.0) / det
        ddy = _det3(g1x, r1, -1.0, g2x, r2, -1.0, g3x, r3, -1.0) / det
        if not (math.isfinite(ddx) and math.isfinite(ddy)):
            break
        x += ddx
        y += ddy
    return x, y


@njit(link=False)
def solve_triples(tri, kind, ax, ay, bx, by, e0, e1, side, tol):
    """Tangent circles of each triple that touch all three sites on their free
    side with positive radius. Returns (k, 4) float64 rows [x, y, rho, triple]."""
    m = tri.shape[0]
    res = np.empty((max(16, 2 * m), 4))
    nres = 0
    own = np.empty((16, 2))
    buf = borrow(own)  # _circles fills it once per triple: no reference counting
    for t in range(m):
        i, j, k = tri[t, 0], tri[t, 1], tri[t, 2]
        n = _circles(i, j, k, kind, ax, ay, bx, by, e0, e1, side, buf)
        ki, kj, kk = kind[i], kind[j], kind[k]
        for q in range(n):
            x = buf[q, 0]
            y = buf[q, 1]
            if not (math.isfinite(x) and math.isfinite(y)):
                continue
            # cheapest rejections first (same outcome as testing all three at once)
            d1, o1 = _dok(ki, ax[i], ay[i], bx[i], by[i], x, y, 1e-9)
            if not o1:
                continue
            d2, o2 = _dok(kj, ax[j], ay[j], bx[j], by[j], x, y, 1e-9)
            if not o2 or abs(d1 - d2) > 1e3 * tol:
                continue
            d3, o3 = _dok(kk, ax[k], ay[k], bx[k], by[k], x, y, 1e-9)
            if not o3:
                continue
            spread = max(d1, d2, d3) - min(d1, d2, d3)
            if spread > 1e3 * tol:
                continue
            if spread > tol:
                # lost digits (ill-conditioned circle): refine, test again
                x, y = _refine(i, j, k, kind, ax, ay, bx, by, x, y)
                d1, o1 = _dok(ki, ax[i], ay[i], bx[i], by[i], x, y, 1e-9)
                d2, o2 = _dok(kj, ax[j], ay[j], bx[j], by[j], x, y, 1e-9)
                d3, o3 = _dok(kk, ax[k], ay[k], bx[k], by[k], x, y, 1e-9)
                if not (o1 and o2 and o3) or max(d1, d2, d3) - min(d1, d2, d3) > tol:
                    continue
            rho = (d1 + d2 + d3) / 3.0
            if rho <= tol:
                continue
            if not (
                _sok(ki, ax[i], ay[i], bx[i], by[i], side[i], x, y, rho, tol)
                and _sok(kj, ax[j], ay[j], bx[j], by[j], side[j], x, y, rho, tol)
                and _sok(kk, ax[k], ay[k], bx[k], by[k], side[k], x, y, rho, tol)
            ):
                continue
            # skip duplicates of the same triple
            dup = False
            for r in range(nres - 1, -1, -1):
                if res[r, 3] != t:
                    break
                if abs(res[r, 0] - x) <= 10 * tol and abs(res[r, 1] - y) <= 10 * tol:
                    dup = True
                    break
            if dup:
                continue
            if nres == res.shape[0]:
                tmp = np.empty((2 * nres, 4))
                tmp[:nres] = res[:nres]
                res = tmp
            res[nres, 0] = x
            res[nres, 1] = y
            res[nres, 2] = rho
            res[nres, 3] = t
            nres += 1
    own[0, 0] = 0.0  # the borrowed buffer's owner lives until here
    return res[:nres]
