"""Float32 geometry helpers shared by the query kernels.

These are the small vector routines Detour's queries are built from
(``DetourCommon``: distance from a point to a segment on the xz-plane, the
crossing-number point-in-polygon test, the parametric clip of a segment
against a convex polygon, the barycentric height of a point over a triangle,
the closest point on a 3D triangle, the separating-axis overlap of two convex
polygons, area-weighted random points). Every helper works on float32 values
and rounds like C ``float`` arithmetic: literals are ``F32`` and the operand
order of each expression follows Detour's, so results agree bit for bit.

Points are 3-vectors (x, y, z) in world units [wu]; "2D" helpers ignore y.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

ZERO = F32(0.0)
ONE = F32(1.0)
HALF = F32(0.5)
#: dtVequal threshold: (1/16384)^2 [wu^2].
EQUAL_EPS_SQR = F32(1.0 / 16384.0) * F32(1.0 / 16384.0)
FLT_MAX = F32(np.finfo(np.float32).max)


@njit(inline="always")
def vdist_sqr(ax, ay, az, bx, by, bz):
    """Squared 3D distance [wu^2], float32."""
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    return dx * dx + dy * dy + dz * dz


@njit(inline="always")
def vdist(ax, ay, az, bx, by, bz):
    """3D distance [wu], float32 (sqrtf)."""
    return np.sqrt(vdist_sqr(ax, ay, az, bx, by, bz))


@njit(inline="always")
def vequal(a, b):
    """True when two (3,) points are closer than 1/16384 wu."""
    return vdist_sqr(a[0], a[1], a[2], b[0], b[1], b[2]) < EQUAL_EPS_SQR


@njit(inline="always")
def tri_area_2d(a, b, c):
    """Twice the signed xz-area of triangle (a, b, c); positive when clockwise seen from +y."""
    abx = b[0] - a[0]
    abz = b[2] - a[2]
    acx = c[0] - a[0]
    acz = c[2] - a[2]
    return acx * abz - abx * acz


@njit(inline="always")
def lerp3(out, a, b, t):
    """out = a + (b - a) * t for (3,) float32 vectors."""
    out[0] = a[0] + (b[0] - a[0]) * t
    out[1] = a[1] + (b[1] - a[1]) * t
    out[2] = a[2] + (b[2] - a[2]) * t


@njit(inline="always")
def dist_pt_seg_sqr_2d(px, pz, ax, az, bx, bz):
    """Squared xz-distance from point p to segment a-b and the segment parameter.

    Returns
    -------
    (d2, t) : float32 pair, t clamped to [0, 1].
    """
    sx = bx - ax
    sz = bz - az
    dx = px - ax
    dz = pz - az
    den = sx * sx + sz * sz
    t = sx * dx + sz * dz
    if den > ZERO:
        t = t / den
    if t < ZERO:
        t = ZERO
    elif t > ONE:
        t = ONE
    ex = ax + t * sx - px
    ez = az + t * sz - pz
    return ex * ex + ez * ez, t


@njit(lent=True)
def point_in_poly(px, pz, pv, n):
    """Crossing-number test of (px, pz) against the first n rows of pv (n, 3)."""
    inside = False
    j = n - 1
    for i in range(n):
        zi = pv[i, 2]
        zj = pv[j, 2]
        if (zi > pz) != (zj > pz):
            xi = pv[i, 0]
            if px < (pv[j, 0] - xi) * (pz - zi) / (zj - zi) + xi:
                inside = not inside
        j = i
    return inside


@njit(lent=True)
def dist_pt_poly_edges(px, pz, pv, n, ed, et):
    """Point-in-polygon plus the squared distance/parameter to every edge.

    ``ed[j]``/``et[j]`` describe edge j = (pv[j], pv[j+1 mod n]).
    """
    inside = False
    j = n - 1
    for i in range(n):
        zi = pv[i, 2]
        zj = pv[j, 2]
        if (zi > pz) != (zj > pz):
            xi = pv[i, 0]
            if px < (pv[j, 0] - xi) * (pz - zi) / (zj - zi) + xi:
                inside = not inside
        d, t = dist_pt_seg_sqr_2d(px, pz, pv[j, 0], pv[j, 2], pv[i, 0], pv[i, 2])
        ed[j] = d
        et[j] = t
        j = i
    return inside


@njit(lent=True)
def intersect_seg_poly_2d(p0, p1, pv, n):
    """Clip segment p0-p1 against convex polygon pv[:n] on the xz-plane.

    Returns
    -------
    (hit, tmin, tmax, seg_min, seg_max) : the entering/leaving parameters and
    the edges they cross (-1 when the segment starts/ends inside).
    """
    eps = F32(0.000001)
    tmin = ZERO
    tmax = ONE
    smin = -1
    smax = -1
    dx = p1[0] - p0[0]
    dz = p1[2] - p0[2]
    j = n - 1
    for i in range(n):
        ex = pv[i, 0] - pv[j, 0]
        ez = pv[i, 2] - pv[j, 2]
        fx = p0[0] - pv[j, 0]
        fz = p0[2] - pv[j, 2]
        num = ez * fx - ex * fz
        den = dz * ex - dx * ez
        if abs(den) < eps:
            if num < ZERO:
                return False, tmin, tmax, smin, smax
            j = i
            continue
        t = num / den
        if den < ZERO:
            if t > tmin:
                tmin = t
                smin = j
                if tmin > tmax:
                    return False, tmin, tmax, smin, smax
        else:
            if t < tmax:
                tmax = t
                smax = j
                if tmax < tmin:
                    return False, tmin, tmax, smin, smax
        j = i
    return True, tmin, tmax, smin, smax


@njit(lent=True)
def intersect_seg_seg_2d(ap, aq, bp, bq):
    """Parameters (s, t) where xz-lines ap-aq and bp-bq cross; ok False when parallel."""
    ux = aq[0] - ap[0]
    uz = aq[2] - ap[2]
    vx = bq[0] - bp[0]
    vz = bq[2] - bp[2]
    wx = ap[0] - bp[0]
    wz = ap[2] - bp[2]
    d = ux * vz - uz * vx
    if abs(d) < F32(1e-6):
        return False, ZERO, ZERO
    s = (vx * wz - vz * wx) / d
    t = (ux * wz - uz * wx) / d
    return True, s, t


@njit(inline="always")
def height_on_triangle_xyz(px, pz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """:func:`height_on_triangle` on the corners' coordinates (no array arguments)."""
    v0x = cx - ax
    v0y = cy - ay
    v0z = cz - az
    v1x = bx - ax
    v1y = by - ay
    v1z = bz - az
    v2x = px - ax
    v2z = pz - az
    den = v0x * v1z - v0z * v1x
    if abs(den) < F32(1e-6):
        return False, ZERO
    u = v1z * v2x - v1x * v2z
    v = v0x * v2z - v0z * v2x
    if den < ZERO:
        den = -den
        u = -u
        v = -v
    if u >= ZERO and v >= ZERO and (u + v) <= den:
        return True, ay + (v0y * u + v1y * v) / den
    return False, ZERO


@njit(lent=True)
def height_on_triangle(px, pz, a, b, c):
    """Height of the vertical line through (px, pz) on triangle abc.

    Returns (ok, h); ok is False outside the triangle or for a degenerate one.
    """
    return height_on_triangle_xyz(px, pz, a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2])


@njit(lent=True)
def closest_pt_on_triangle(out, p, a, b, c):
    """Closest point to p on 3D triangle abc (Voronoi-region method), into out (3,)."""
    abx = b[0] - a[0]
    aby = b[1] - a[1]
    abz = b[2] - a[2]
    acx = c[0] - a[0]
    acy = c[1] - a[1]
    acz = c[2] - a[2]
    apx = p[0] - a[0]
    apy = p[1] - a[1]
    apz = p[2] - a[2]
    d1 = abx * apx + aby * apy + abz * apz
    d2 = acx * apx + acy * apy + acz * apz
    if d1 <= ZERO and d2 <= ZERO:
        out[0] = a[0]
        out[1] = a[1]
        out[2] = a[2]
        return
    bpx = p[0] - b[0]
    bpy = p[1] - b[1]
    bpz = p[2] - b[2]
    d3 = abx * bpx + aby * bpy + abz * bpz
    d4 = acx * bpx + acy * bpy + acz * bpz
    if d3 >= ZERO and d4 <= d3:
        out[0] = b[0]
        out[1] = b[1]
        out[2] = b[2]
        return
    vc = d1 * d4 - d3 * d2
    if vc <= ZERO and d1 >= ZERO and d3 <= ZERO:
        v = d1 / (d1 - d3)
        out[0] = a[0] + v * abx
        out[1] = a[1] + v * aby
        out[2] = a[2] + v * abz
        return
    cpx = p[0] - c[0]
    cpy = p[1] - c[1]
    cpz = p[2] - c[2]
    d5 = abx * cpx + aby * cpy + abz * cpz
    d6 = acx * cpx + acy * cpy + acz * cpz
    if d6 >= ZERO and d5 <= d6:
        out[0] = c[0]
        out[1] = c[1]
        out[2] = c[2]
        return
    vb = d5 * d2 - d1 * d6
    if vb <= ZERO and d2 >= ZERO and d6 <= ZERO:
        w = d2 / (d2 - d6)
        out[0] = a[0] + w * acx
        out[1] = a[1] + w * acy
        out[2] = a[2] + w * acz
        return
    va = d3 * d6 - d5 * d4
    if va <= ZERO and (d4 - d3) >= ZERO and (d5 - d6) >= ZERO:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        out[0] = b[0] + w * (c[0] - b[0])
        out[1] = b[1] + w * (c[1] - b[1])
        out[2] = b[2] + w * (c[2] - b[2])
        return
    denom = ONE / (va + vb + vc)
    v = vb * denom
    w = vc * denom
    out[0] = a[0] + abx * v + acx * w
    out[1] = a[1] + aby * v + acy * w
    out[2] = a[2] + abz * v + acz * w


@njit
def _project_poly(nx, nz, pv, n):
    lo = nx * pv[0, 0] + nz * pv[0, 2]
    hi = lo
    for i in range(1, n):
        d = nx * pv[i, 0] + nz * pv[i, 2]
        lo = min(lo, d)
        hi = max(hi, d)
    return lo, hi


@njit(lent=True)
def overlap_poly_poly_2d(pa, na, pb, nb):
    """Separating-axis test of two convex xz-polygons (touching within 1e-4 counts as apart)."""
    eps = F32(1e-4)
    for k in range(2):
        pv = pa if k == 0 else pb
        n = na if k == 0 else nb
        j = n - 1
        for i in range(n):
            nx = pv[i, 2] - pv[j, 2]
            nz = -(pv[i, 0] - pv[j, 0])
            amin, amax = _project_poly(nx, nz, pa, na)
            bmin, bmax = _project_poly(nx, nz, pb, nb)
            if not (amin + eps <= bmax and amax - eps >= bmin):
                return False
            j = i
    return True


@njit(lent=True)
def random_point_in_convex_poly(pv, n, s, t, out):
    """Area-weighted random point in convex polygon pv[:n] from two uniforms s, t in [0, 1)."""
    areas = np.zeros(n, dtype=np.float32)
    asum = ZERO
    for i in range(2, n):
        areas[i] = tri_area_2d(pv[0], pv[i - 1], pv[i])
        asum += max(F32(0.001), areas[i])
    thr = s * asum
    acc = ZERO
    u = ONE
    tri = n - 1
    for i in range(2, n):
        da = areas[i]
        if thr >= acc and thr < (acc + da):
            u = (thr - acc) / da
            tri = i
            break
        acc += da
    v = np.sqrt(t)
    a = ONE - v
    b = (ONE - u) * v
    c = u * v
    for k in range(3):
        out[k] = a * pv[0, k] + b * pv[tri - 1, k] + c * pv[tri, k]
