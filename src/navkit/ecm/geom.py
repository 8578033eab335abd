"""Exact geometry of the segment Voronoi diagram used by navkit's ECM updates.

Sites are points and open segments (a segment's endpoints are separate point
sites).  A Voronoi vertex is the centre of a circle tangent to three sites that
contains no site; this module solves the tangency equations for every
combination of kinds (PPP: circumcentre; PPS, PSS: quadratics along a bisector
line; SSS: a 3x3 linear system per side choice; a segment with its own endpoint:
the centre lies on the endpoint's normal line -- the ECM's *bisector vertices*).
It also parametrises the bisector of two sites (line, parabola or angle
bisector) so that the vertices on one bisector can be ordered and consecutive
ones joined by an edge.  Formulas follow Geraerts (2010) and Karavelas (2004);
the code is navkit's own, in plain float64.

Site record (all float64/int): ``kind`` 0 point / 1 segment; ``a``, ``b`` the
coordinates (points use ``a``); ``e0``, ``e1`` the endpoint point-site ids of a
segment; ``side`` 1 = one-sided segment with free space on its left, 0 = two-sided.
"""

from __future__ import annotations

import math

__all__ = ["tangent_circles", "site_dist", "pair_param", "pair_point"]


def _seg_frame(ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    ln = math.hypot(dx, dy)
    ux, uy = dx / ln, dy / ln
    # left normal; line: n.x - c = signed distance (positive on the left)
    nx, ny = -uy, ux
    c = nx * ax + ny * ay
    return ux, uy, nx, ny, c, ln


def site_dist(S, i, x, y, ptol=1e-9):
    """Distance from (x, y) to site ``i`` and whether the foot lies on the site.

    Returns ``(d, fx, fy, ok)``: distance [wu], foot point, and for segments
    whether the projection falls inside [0, 1] (within ``ptol``).
    """
    ax, ay = S.ax[i], S.ay[i]
    if S.kind[i] == 0:
        return math.hypot(x - ax, y - ay), ax, ay, True
    bx, by = S.bx[i], S.by[i]
    dx, dy = bx - ax, by - ay
    t = ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)
    ok = -ptol <= t <= 1.0 + ptol
    tc = min(1.0, max(0.0, t))
    fx, fy = ax + tc * dx, ay + tc * dy
    return math.hypot(x - fx, y - fy), fx, fy, ok


def _solve_quadratic(a, b, c):
    if abs(a) < 1e-14 * (abs(b) + abs(c) + 1e-300):
        if b == 0.0:
            return []
        return [-c / b]
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        if disc > -1e-12 * b * b:
            disc = 0.0
        else:
            return []
    sq = math.sqrt(disc)
    # stable roots
    q = -0.5 * (b + math.copysign(sq, b))
    out = []
    if q != 0.0:
        out.append(c / q)
        out.append(q / a)
    else:
        out.append(0.0)
    return out


def _ppp(p, q, r):
    (ax, ay), (bx, by), (cx, cy) = p, q, r
    d = 2.0 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    if d == 0.0:
        return []
    a2, b2, c2 = ax * ax + ay * ay, bx * bx + by * by, cx * cx + cy * cy
    ux = (a2 * (by - cy) + b2 * (cy - ay) + c2 * (ay - by)) / d
    uy = (a2 * (cx - bx) + b2 * (ax - cx) + c2 * (bx - ax)) / d
    return [(ux, uy)]


def _normal_line_hits(px, py, nx, ny, other, S):
    """Centres x = p + t n on the normal of a segment at its endpoint p, equidistant
    (|t|) from site ``other``."""
    out = []
    if S.kind[other] == 0:
        qx, qy = S.ax[other], S.ay[other]
        dpx, dpy = px - qx, py - qy
        den = 2.0 * (nx * dpx + ny * dpy)
        if den != 0.0:
            t = -(dpx * dpx + dpy * dpy) / den
            out.append((px + t * nx, py + t * ny))
    else:
        _, _, mx, my, c2, _ = _seg_frame(S.ax[other], S.ay[other], S.bx[other], S.by[other])
        base = c2 - (mx * px + my * py)
        dot = mx * nx + my * ny
        for st in (1.0, -1.0):
            for s2 in (1.0, -1.0):
                den = dot - s2 * st
                if den != 0.0:
                    t = base / den
                    if t * st >= 0.0:
                        out.append((px + t * nx, py + t * ny))
    return out


def tangent_circles(S, i, j, k):
    """Candidate centres (x, y) of circles tangent to sites i, j, k (unvalidated)."""
    ids = sorted((i, j, k), key=lambda s: S.kind[s])
    kinds = [S.kind[s] for s in ids]
    npts = kinds.count(0)
    if npts == 3:
        return _ppp(*[(S.ax[s], S.ay[s]) for s in ids])
    if npts == 2:
        p, q, s = ids
        if p in (S.e0[s], S.e1[s]) or q in (S.e0[s], S.e1[s]):
            e, o = (p, q) if p in (S.e0[s], S.e1[s]) else (q, p)
            if o in (S.e0[s], S.e1[s]):
                return []
            _, _, nx, ny, _, _ = _seg_frame(S.ax[s], S.ay[s], S.bx[s], S.by[s])
            return _normal_line_hits(S.ax[e], S.ay[e], nx, ny, o, S)
        px, py, qx, qy = S.ax[p], S.ay[p], S.ax[q], S.ay[q]
        mx, my = 0.5 * (px + qx), 0.5 * (py + qy)
        wx, wy = -(qy - py), qx - px
        wl = math.hypot(wx, wy)
        if wl == 0.0:
            return []
        wx, wy = wx / wl, wy / wl
        _, _, nx, ny, c, _ = _seg_frame(S.ax[s], S.ay[s], S.bx[s], S.by[s])
        al = nx * mx + ny * my - c
        be = nx * wx + ny * wy
        ga = (mx - px) ** 2 + (my - py) ** 2
        ts = _solve_quadratic(be * be - 1.0, 2.0 * al * be, al * al - ga)
        return [(mx + t * wx, my + t * wy) for t in ts]
    if npts == 1:
        p, s1, s2 = ids
        px, py = S.ax[p], S.ay[p]
        e1 = p in (S.e0[s1], S.e1[s1])
        e2 = p in (S.e0[s2], S.e1[s2])
        if e1 and e2:
            return []
        if e1 or e2:
            s, o = (s1, s2) if e1 else (s2, s1)
            _, _, nx, ny, _, _ = _seg_frame(S.ax[s], S.ay[s], S.bx[s], S.by[s])
            return _normal_line_hits(px, py, nx, ny, o, S)
        _, _, n1x, n1y, c1, _ = _seg_frame(S.ax[s1], S.ay[s1], S.bx[s1], S.by[s1])
        _, _, n2x, n2y, c2, _ = _seg_frame(S.ax[s2], S.ay[s2], S.bx[s2], S.by[s2])
        det = n1x * n2y - n1y * n2x
        out = []
        for g1 in (1.0, -1.0):
            for g2 in (1.0, -1.0):
                if abs(det) > 1e-14:
                    # x = x0 + rho * x1
                    x0 = (c1 * n2y - c2 * n1y) / det
                    y0 = (n1x * c2 - n2x * c1) / det
                    x1 = (g1 * n2y - g2 * n1y) / det
                    y1 = (n1x * g2 - n2x * g1) / det
                    dx, dy = x0 - px, y0 - py
                    for rho in _solve_quadratic(
                        x1 * x1 + y1 * y1 - 1.0, 2.0 * (x1 * dx + y1 * dy), dx * dx + dy * dy
                    ):
                        if rho > 0.0:
                            out.append((x0 + rho * x1, y0 + rho * y1))
                else:
                    kap = 1.0 if n1x * n2x + n1y * n2y > 0 else -1.0
                    den = kap * g1 - g2
                    if den == 0.0:
                        continue
                    rho = (c2 - kap * c1) / den
                    if rho <= 0.0:
                        continue
                    # line n1.x = c1 + g1 rho, points x = l0 + t d
                    cc = c1 + g1 * rho
                    lx, ly = n1x * cc, n1y * cc
                    dxv, dyv = -n1y, n1x
                    ex, ey = lx - px, ly - py
                    for t in _solve_quadratic(
                        1.0, 2.0 * (dxv * ex + dyv * ey), ex * ex + ey * ey - rho * rho
                    ):
                        out.append((lx + t * dxv, ly + t * dyv))
        return out
    # three segments
    rows = [_seg_frame(S.ax[s], S.ay[s], S.bx[s], S.by[s]) for s in ids]
    out = []
    for g in ((1, 1, 1), (1, 1, -1), (1, -1, 1), (1, -1, -1)):
        for sg in (1.0, -1.0):
            m = [(r[2], r[3], -sg * gi) for r, gi in zip(rows, g)]
            c = [r[4] for r in rows]
            det = (
                m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
            )
            if abs(det) < 1e-14:
                continue

            def rep(col, m=m, c=c):
                mm = [list(r) for r in m]
                for rr in range(3):
                    mm[rr][col] = c[rr]
                return (
                    mm[0][0] * (mm[1][1] * mm[2][2] - mm[1][2] * mm[2][1])
                    - mm[0][1] * (mm[1][0] * mm[2][2] - mm[1][2] * mm[2][0])
                    + mm[0][2] * (mm[1][0] * mm[2][1] - mm[1][1] * mm[2][0])
                )

            x, y, rho = rep(0) / det, rep(1) / det, rep(2) / det
            if rho > 0.0:
                out.append((x, y))
    return out


def pair_param(S, a, b, x, y):
    """Position of (x, y) along the bisector of sites a, b: ``(branch, t)``.

    Points on different branches (the two angle bisectors of two segments) are
    never joined.
    """
    ka, kb = S.kind[a], S.kind[b]
    if ka == 0 and kb == 0:
        wx, wy = -(S.ay[b] - S.ay[a]), S.ax[b] - S.ax[a]
        return 0, x * wx + y * wy
    if ka + kb == 1:
        s = a if ka == 1 else b
        ux, uy, _, _, _, _ = _seg_frame(S.ax[s], S.ay[s], S.bx[s], S.by[s])
        return 0, (x - S.ax[s]) * ux + (y - S.ay[s]) * uy
    _, _, n1x, n1y, c1, _ = _seg_frame(S.ax[a], S.ay[a], S.bx[a], S.by[a])
    _, _, n2x, n2y, c2, _ = _seg_frame(S.ax[b], S.ay[b], S.bx[b], S.by[b])
    d1 = n1x * x + n1y * y - c1
    d2 = n2x * x + n2y * y - c2
    br = 1 if d1 * d2 >= 0.0 else -1
    if d1 * d2 == 0.0 and S.side[a] == 0:
        br = 1
    gx, gy = (n1x - n2x, n1y - n2y) if br == 1 else (n1x + n2x, n1y + n2y)
    if gx * gx + gy * gy < 1e-20:
        gx, gy = (n1x + n2x, n1y + n2y) if br == 1 else (n1x - n2x, n1y - n2y)
    return br, x * (-gy) + y * gx


def pair_point(S, a, b, p0, p1, f=0.5):
    """A point of the bisector of a, b between two points on it (same branch):
    the one whose parameter is ``(1 - f) t0 + f t1``."""
    br, t0 = pair_param(S, a, b, *p0)
    _, t1 = pair_param(S, a, b, *p1)
    tm = t0 + f * (t1 - t0)
    ka, kb = S.kind[a], S.kind[b]
    if ka == 0 and kb == 0:
        ax, ay, bx, by = S.ax[a], S.ay[a], S.ax[b], S.ay[b]
        wx, wy = -(by - ay), bx - ax
        mx, my = 0.5 * (ax + bx), 0.5 * (ay + by)
        w2 = wx * wx + wy * wy
        tau = (tm - (mx * wx + my * wy)) / w2
        return mx + tau * wx, my + tau * wy
    if ka + kb == 1:
        s, p = (a, b) if ka == 1 else (b, a)
        ux, uy, nx, ny, _, _ = _seg_frame(S.ax[s], S.ay[s], S.bx[s], S.by[s])
        rx, ry = S.ax[p] - S.ax[s], S.ay[p] - S.ay[s]
        pu, pv = rx * ux + ry * uy, rx * nx + ry * ny
        if pv == 0.0:
            return p0[0] + f * (p1[0] - p0[0]), p0[1] + f * (p1[1] - p0[1])
        yv = ((tm - pu) ** 2 + pv * pv) / (2.0 * pv)
        return S.ax[s] + tm * ux + yv * nx, S.ay[s] + tm * uy + yv * ny
    # segment-segment: straight line
    return p0[0] + f * (p1[0] - p0[0]), p0[1] + f * (p1[1] - p0[1])
