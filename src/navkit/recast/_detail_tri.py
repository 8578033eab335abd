"""Geometry and triangulation kernels of the detail mesh (Recast's RecastMeshDetail.cpp).

All points live in one ``(n, 3)`` float32 array and are referred to by index; the
xz plane is the triangulation plane, y is height. Every formula is evaluated in
float32 with Recast's operation order so that results match Recast bit for bit.

Two triangulations are provided:

- :func:`triangulate_hull` -- Recast's ``triangulateHull``: a fan-like strip over
  the hull of a convex polygon, advancing on the left or the right side,
  whichever closes the shorter triangle. Recast's choice of the starting ear
  compares perimeters against an initial minimum of 0, so the start is always
  hull vertex 0; this is reproduced.
- :func:`delaunay_hull` -- Recast's ``delaunayHull``: a constrained Delaunay
  triangulation grown edge by edge from the hull ("complete facet": for each
  open edge side, the point whose circumcircle is smallest, with overlap checks
  when a point lies within the circle's tolerance band). Edges are kept as
  rows ``(s, t, left face, right face)``; faces are then assembled from the
  edge records and dangling faces are removed by swap-with-last.

:func:`tri_edge_flags` is ``getTriFlags``: bit 2*k set when triangle edge k lies
on the polygon outline (within 1e-3 wu).
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

__all__ = [
    "FLT_MAX",
    "vdist2",
    "dist_pt_seg2d",
    "dist_pt_seg3",
    "dist_to_poly",
    "tri_cache",
    "dist_to_tri_mesh",
    "poly_min_extent",
    "triangulate_hull",
    "delaunay_hull",
    "tri_edge_flags",
]

FLT_MAX = np.finfo(np.float32).max
_ZERO = F32(0.0)
_ONE = F32(1.0)
_TWO = F32(2.0)
_CIRCLE_EPS = F32(1e-6)
_FACET_EPS = F32(1e-5)
_TOL_OUT = F32(1.0) + F32(0.001)  # C: r*(1+tol) with float tol
_TOL_IN = F32(1.0) - F32(0.001)
_BARY_EPS = F32(1e-4)
_BARY_MAX = F32(1.0) + F32(1e-4)
_EDGE_THR_SQ = F32(0.001) * F32(0.001)

EV_UNDEF = -1  #: edge side not yet assigned a face
EV_HULL = -2  #: edge side outside the hull


@njit(lent=True)
def vdist2(p: np.ndarray, a: int, q: np.ndarray, b: int):
    """xz distance between ``p[a]`` and ``q[b]`` [wu], float32."""
    dx = q[b, 0] - p[a, 0]
    dz = q[b, 2] - p[a, 2]
    return F32(np.sqrt(dx * dx + dz * dz))


@njit(lent=True)
def _cross2(p: np.ndarray, a: int, b: int, c: int):
    """xz cross product of (b - a) and (c - a), float32."""
    u1 = p[b, 0] - p[a, 0]
    v1 = p[b, 2] - p[a, 2]
    u2 = p[c, 0] - p[a, 0]
    v2 = p[c, 2] - p[a, 2]
    return u1 * v2 - v1 * u2


@njit(lent=True)
def dist_pt_seg2d(px, pz, ax, az, bx, bz):
    """Squared xz distance from point p to segment a-b, float32."""
    pqx = bx - ax
    pqz = bz - az
    dx = px - ax
    dz = pz - az
    d = pqx * pqx + pqz * pqz
    t = pqx * dx + pqz * dz
    if d > _ZERO:
        t /= d
    if t < _ZERO:
        t = _ZERO
    elif t > _ONE:
        t = _ONE
    dx = ax + t * pqx - px
    dz = az + t * pqz - pz
    return dx * dx + dz * dz


@njit(lent=True)
def dist_pt_seg3(pts: np.ndarray, i: int, a: int, b: int):
    """Squared 3D distance from ``pts[i]`` to segment ``pts[a]``-``pts[b]``, float32."""
    pqx = pts[b, 0] - pts[a, 0]
    pqy = pts[b, 1] - pts[a, 1]
    pqz = pts[b, 2] - pts[a, 2]
    dx = pts[i, 0] - pts[a, 0]
    dy = pts[i, 1] - pts[a, 1]
    dz = pts[i, 2] - pts[a, 2]
    d = pqx * pqx + pqy * pqy + pqz * pqz
    t = pqx * dx + pqy * dy + pqz * dz
    if d > _ZERO:
        t /= d
    if t < _ZERO:
        t = _ZERO
    elif t > _ONE:
        t = _ONE
    dx = pts[a, 0] + t * pqx - pts[i, 0]
    dy = pts[a, 1] + t * pqy - pts[i, 1]
    dz = pts[a, 2] + t * pqz - pts[i, 2]
    return dx * dx + dy * dy + dz * dz


@njit(lent=True)
def dist_to_poly(poly: np.ndarray, n: int, px, pz):
    """Signed squared xz distance from p to the polygon outline (negative inside)."""
    inside = False
    dmin = FLT_MAX
    j = n - 1
    for i in range(n):
        xi = poly[i, 0]
        zi = poly[i, 2]
        xj = poly[j, 0]
        zj = poly[j, 2]
        if ((zi > pz) != (zj > pz)) and (px < (xj - xi) * (pz - zi) / (zj - zi) + xi):
            inside = not inside
        d = dist_pt_seg2d(px, pz, xj, zj, xi, zi)
        if not (dmin < d):
            dmin = d
        j = i
    return -dmin if inside else dmin


@njit(lent=True)
def tri_cache(pts: np.ndarray, tris: np.ndarray, ntris: int, tc: np.ndarray):
    """Per-triangle terms of Recast's ``distPtTri`` that do not depend on the point.

    Row k of ``tc`` (float32) holds a.x, a.y, a.z, (c-a).xyz, (b-a).xyz, dot00,
    dot01, dot11 and 1/(dot00*dot11 - dot01^2) of triangle k -- the same float32
    values Recast recomputes for every sample, computed once per triangulation.
    """
    for k in range(ntris):
        a = tris[k, 0]
        b = tris[k, 1]
        c = tris[k, 2]
        v0x = pts[c, 0] - pts[a, 0]
        v0z = pts[c, 2] - pts[a, 2]
        v1x = pts[b, 0] - pts[a, 0]
        v1z = pts[b, 2] - pts[a, 2]
        dot00 = v0x * v0x + v0z * v0z
        dot01 = v0x * v1x + v0z * v1z
        dot11 = v1x * v1x + v1z * v1z
        tc[k, 0] = pts[a, 0]
        tc[k, 1] = pts[a, 1]
        tc[k, 2] = pts[a, 2]
        tc[k, 3] = v0x
        tc[k, 4] = pts[c, 1] - pts[a, 1]
        tc[k, 5] = v0z
        tc[k, 6] = v1x
        tc[k, 7] = pts[b, 1] - pts[a, 1]
        tc[k, 8] = v1z
        tc[k, 9] = dot00
        tc[k, 10] = dot01
        tc[k, 11] = dot11
        tc[k, 12] = _ONE / (dot00 * dot11 - dot01 * dot01)


@njit(lent=True)
def dist_to_tri_mesh(px, py, pz, tc: np.ndarray, ntris: int):
    """Recast's ``distToTriMesh``: smallest |height difference| at p over the triangles
    containing p in xz (barycentric tolerance 1e-4), or -1 when none does.

    ``tc`` comes from :func:`tri_cache`.
    """
    dmin = FLT_MAX
    for k in range(ntris):
        v2x = px - tc[k, 0]
        v2z = pz - tc[k, 2]
        dot02 = tc[k, 3] * v2x + tc[k, 5] * v2z
        dot12 = tc[k, 6] * v2x + tc[k, 8] * v2z
        u = (tc[k, 11] * dot02 - tc[k, 10] * dot12) * tc[k, 12]
        v = (tc[k, 9] * dot12 - tc[k, 10] * dot02) * tc[k, 12]
        if u >= -_BARY_EPS and v >= -_BARY_EPS and (u + v) <= _BARY_MAX:
            y = tc[k, 1] + tc[k, 4] * u + tc[k, 7] * v
            d = abs(y - py)
            if d < dmin:
                dmin = d
    if dmin == FLT_MAX:
        return F32(-1.0)
    return dmin


@njit(lent=True)
def poly_min_extent(pts: np.ndarray, n: int):
    """Smallest over edges of the largest xz distance of a vertex to that edge [wu]."""
    min_dist = FLT_MAX
    for i in range(n):
        ni = (i + 1) % n
        max_edge = _ZERO
        for j in range(n):
            if j == i or j == ni:
                continue
            d = dist_pt_seg2d(pts[j, 0], pts[j, 2], pts[i, 0], pts[i, 2], pts[ni, 0], pts[ni, 2])
            if not (max_edge > d):
                max_edge = d
        if not (min_dist < max_edge):
            min_dist = max_edge
    return F32(np.sqrt(min_dist))


@njit(lent=True)
def triangulate_hull(pts: np.ndarray, hull: np.ndarray, nhull: int, nin: int, tris: np.ndarray):
    """Strip-triangulate the convex hull ``hull[:nhull]``; write rows of ``tris``, return count.

    The strip starts at the ear of smallest xz perimeter whose tip is one of the
    ``nin`` polygon vertices (edge samples are not ears, their corner is flat).
    """
    if nhull < 3:
        return 0
    start = 0
    left = 1
    right = nhull - 1
    dmin = FLT_MAX
    for i in range(nhull):
        if hull[i] >= nin:
            continue
        pi = i - 1 if i >= 1 else nhull - 1
        ni = i + 1 if i + 1 < nhull else 0
        d = (
            vdist2(pts, hull[pi], pts, hull[i])
            + vdist2(pts, hull[i], pts, hull[ni])
            + vdist2(pts, hull[ni], pts, hull[pi])
        )
        if d < dmin:
            start = i
            left = ni
            right = pi
            dmin = d
    tris[0, 0] = hull[start]
    tris[0, 1] = hull[left]
    tris[0, 2] = hull[right]
    tris[0, 3] = 0
    nt = 1
    while (left + 1) % nhull != right:
        nleft = left + 1 if left + 1 < nhull else 0
        nright = right - 1 if right - 1 >= 0 else nhull - 1
        hl = hull[left]
        hnl = hull[nleft]
        hr = hull[right]
        hnr = hull[nright]
        dleft = vdist2(pts, hl, pts, hnl) + vdist2(pts, hnl, pts, hr)
        dright = vdist2(pts, hr, pts, hnr) + vdist2(pts, hl, pts, hnr)
        tris[nt, 0] = hl
        tris[nt, 2] = hr
        tris[nt, 3] = 0
        if dleft < dright:
            tris[nt, 1] = hnl
            left = nleft
        else:
            tris[nt, 1] = hnr
            right = nright
        nt += 1
    return nt


# -- Delaunay hull ---------------------------------------------------------------------


@njit(lent=True)
def _find_edge(edges: np.ndarray, nedges: int, s: int, t: int):
    for i in range(nedges):
        if (edges[i, 0] == s and edges[i, 1] == t) or (edges[i, 0] == t and edges[i, 1] == s):
            return i
    return EV_UNDEF


@njit(lent=True)
def _add_edge(
    edges: np.ndarray, nedges: int, max_edges: int, s: int, t: int, left: int, right: int
):
    """Append edge s-t unless present or full; return the new edge count."""
    if nedges >= max_edges:
        return nedges
    if _find_edge(edges, nedges, s, t) != EV_UNDEF:
        return nedges
    edges[nedges, 0] = s
    edges[nedges, 1] = t
    edges[nedges, 2] = left
    edges[nedges, 3] = right
    return nedges + 1


@njit(lent=True)
def _set_face(edges: np.ndarray, e: int, s: int, t: int, f: int):
    """Record face f on the side of edge e that sees s -> t (if still unassigned)."""
    if edges[e, 0] == s and edges[e, 1] == t and edges[e, 2] == EV_UNDEF:
        edges[e, 2] = f
    elif edges[e, 1] == s and edges[e, 0] == t and edges[e, 3] == EV_UNDEF:
        edges[e, 3] = f


@njit(lent=True)
def _segs_cross(pts: np.ndarray, a: int, b: int, c: int, d: int):
    a1 = _cross2(pts, a, b, d)
    a2 = _cross2(pts, a, b, c)
    if a1 * a2 < _ZERO:
        a3 = _cross2(pts, c, d, a)
        a4 = a3 + a2 - a1
        if a3 * a4 < _ZERO:
            return True
    return False


@njit(lent=True)
def _crosses_any(pts: np.ndarray, edges: np.ndarray, nedges: int, s1: int, t1: int):
    for i in range(nedges):
        s0 = edges[i, 0]
        t0 = edges[i, 1]
        if s0 == s1 or s0 == t1 or t0 == s1 or t0 == t1:
            continue
        if _segs_cross(pts, s0, t0, s1, t1):
            return True
    return False


@njit(lent=True)
def _circumcircle(pts: np.ndarray, p1: int, p2: int, p3: int):
    """Circumcircle (cx, cz, r) of three points in xz, computed relative to p1."""
    v2x = pts[p2, 0] - pts[p1, 0]
    v2z = pts[p2, 2] - pts[p1, 2]
    v3x = pts[p3, 0] - pts[p1, 0]
    v3z = pts[p3, 2] - pts[p1, 2]
    cp = (v2x - _ZERO) * (v3z - _ZERO) - (v2z - _ZERO) * (v3x - _ZERO)
    if abs(cp) > _CIRCLE_EPS:
        v1sq = _ZERO * _ZERO + _ZERO * _ZERO
        v2sq = v2x * v2x + v2z * v2z
        v3sq = v3x * v3x + v3z * v3z
        den = _TWO * cp
        cx = (v1sq * (v2z - v3z) + v2sq * (v3z - _ZERO) + v3sq * (_ZERO - v2z)) / den
        cz = (v1sq * (v3x - v2x) + v2sq * (_ZERO - v3x) + v3sq * (v2x - _ZERO)) / den
        dx = _ZERO - cx
        dz = _ZERO - cz
        r = F32(np.sqrt(dx * dx + dz * dz))
        return cx + pts[p1, 0], cz + pts[p1, 2], r
    return pts[p1, 0], pts[p1, 2], _ZERO


@njit(lent=True)
def _complete_facet(pts, npts, edges, nedges, max_edges, nfaces, e):
    """Close the open side of edge e with the best point; return (nedges, nfaces)."""
    if edges[e, 2] == EV_UNDEF:
        s = edges[e, 0]
        t = edges[e, 1]
    elif edges[e, 3] == EV_UNDEF:
        s = edges[e, 1]
        t = edges[e, 0]
    else:
        return nedges, nfaces
    pt = npts
    cx = _ZERO
    cz = _ZERO
    r = F32(-1.0)
    for u in range(npts):
        if u == s or u == t:
            continue
        if _cross2(pts, s, t, u) > _FACET_EPS:
            if r < _ZERO:
                pt = u
                cx, cz, r = _circumcircle(pts, s, t, u)
                continue
            dx = pts[u, 0] - cx
            dz = pts[u, 2] - cz
            d = F32(np.sqrt(dx * dx + dz * dz))
            if d > r * _TOL_OUT:
                continue
            elif d < r * _TOL_IN:
                pt = u
                cx, cz, r = _circumcircle(pts, s, t, u)
            else:
                if _crosses_any(pts, edges, nedges, s, u):
                    continue
                if _crosses_any(pts, edges, nedges, t, u):
                    continue
                pt = u
                cx, cz, r = _circumcircle(pts, s, t, u)
    if pt < npts:
        _set_face(edges, e, s, t, nfaces)
        e2 = _find_edge(edges, nedges, pt, s)
        if e2 == EV_UNDEF:
            nedges = _add_edge(edges, nedges, max_edges, pt, s, nfaces, EV_UNDEF)
        else:
            _set_face(edges, e2, pt, s, nfaces)
        e2 = _find_edge(edges, nedges, t, pt)
        if e2 == EV_UNDEF:
            nedges = _add_edge(edges, nedges, max_edges, t, pt, nfaces, EV_UNDEF)
        else:
            _set_face(edges, e2, t, pt, nfaces)
        nfaces += 1
    else:
        _set_face(edges, e, s, t, EV_HULL)
    return nedges, nfaces


@njit(lent=True)
def delaunay_hull(pts, npts, hull, nhull, edges, tris):
    """Delaunay-triangulate ``pts[:npts]`` inside ``hull[:nhull]``; return the triangle count.

    ``edges`` needs at least ``10 * npts`` rows (Recast's cap); ``tris`` at least
    ``2 * 10 * npts`` rows. Triangles are written to ``tris[:, :3]`` (``tris[:, 3]`` = -1).
    """
    max_edges = min(npts * 10, edges.shape[0])
    nedges = 0
    nfaces = 0
    j = nhull - 1
    for i in range(nhull):
        nedges = _add_edge(edges, nedges, max_edges, hull[j], hull[i], EV_HULL, EV_UNDEF)
        j = i
    cur = 0
    while cur < nedges:
        if edges[cur, 2] == EV_UNDEF:
            nedges, nfaces = _complete_facet(pts, npts, edges, nedges, max_edges, nfaces, cur)
        if edges[cur, 3] == EV_UNDEF:
            nedges, nfaces = _complete_facet(pts, npts, edges, nedges, max_edges, nfaces, cur)
        cur += 1
    nfaces = min(nfaces, tris.shape[0])
    for i in range(nfaces):
        tris[i, 0] = -1
        tris[i, 1] = -1
        tris[i, 2] = -1
        tris[i, 3] = -1
    for i in range(nedges):
        s = edges[i, 0]
        t = edges[i, 1]
        f = edges[i, 3]
        if 0 <= f < nfaces:
            if tris[f, 0] == -1:
                tris[f, 0] = s
                tris[f, 1] = t
            elif tris[f, 0] == t:
                tris[f, 2] = s
            elif tris[f, 1] == s:
                tris[f, 2] = t
        f = edges[i, 2]
        if 0 <= f < nfaces:
            if tris[f, 0] == -1:
                tris[f, 0] = t
                tris[f, 1] = s
            elif tris[f, 0] == s:
                tris[f, 2] = t
            elif tris[f, 1] == t:
                tris[f, 2] = s
    # Remove dangling faces, replacing each by the last one.
    nt = nfaces
    i = 0
    while i < nt:
        if tris[i, 0] == -1 or tris[i, 1] == -1 or tris[i, 2] == -1:
            for k in range(4):
                tris[i, k] = tris[nt - 1, k]
            nt -= 1
        else:
            i += 1
    return nt


@njit(lent=True)
def _on_outline(pts, a, b, poly, npoly):
    for i in range(npoly):
        j = npoly - 1 if i == 0 else i - 1
        if (
            dist_pt_seg2d(pts[a, 0], pts[a, 2], poly[j, 0], poly[j, 2], poly[i, 0], poly[i, 2])
            < _EDGE_THR_SQ
            and dist_pt_seg2d(pts[b, 0], pts[b, 2], poly[j, 0], poly[j, 2], poly[i, 0], poly[i, 2])
            < _EDGE_THR_SQ
        ):
            return 1
    return 0


@njit(lent=True)
def tri_edge_flags(pts, a, b, c, poly, npoly):
    """Recast's ``getTriFlags``: 1 << (2*k) for each triangle edge k on the polygon outline."""
    f = _on_outline(pts, a, b, poly, npoly)
    f |= _on_outline(pts, b, c, poly, npoly) << 2
    f |= _on_outline(pts, c, a, poly, npoly) << 4
    return f
