"""Per-polygon point queries: surface height, closest point, closest boundary point.

Follows Detour 1.6 (``dtNavMesh::getPolyHeight``, ``dtNavMesh::closestPointOnPoly``,
``dtNavMeshQuery::closestPointOnPolyBoundary``): a point whose xz-projection is
inside the polygon keeps its x/z and takes its height from the first detail
triangle that contains it (falling back to the nearest detail edge when every
triangle test fails on a degenerate triangle); a point outside snaps to the
nearest *boundary* detail edge (2D distance, first minimum wins). Off-mesh
connection polygons are segments between their two endpoints.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import njit

from ._geom import (
    FLT_MAX,
    ZERO,
    dist_pt_poly_edges,
    dist_pt_seg_sqr_2d,
    height_on_triangle_xyz,
    lerp3,
)
from ._view import POLYTYPE_OFFMESH, load_poly, open_view

_DETAIL_EDGE_BOUNDARY = 1


@njit(lent=True)
def height_in_poly(nav, p, pos):
    """(ok, h): surface height under pos when its xz-projection lies in ground polygon p."""
    if nav.poly_type[p] == POLYTYPE_OFFMESH:
        return False, ZERO
    out = np.empty(3, np.float32)
    if closest_point_on_poly(nav, p, pos, out):
        return True, out[1]
    return False, ZERO


@njit(lent=True)
def closest_point_on_poly(nav, p, pos, out):
    """Closest point of polygon p to pos into out (3,); returns True when pos is over p."""
    pv = np.empty((6, 3), np.float32)
    tri = np.zeros((5, 3), np.float32)
    return closest_point_nav(nav, p, pos, out, pv, tri)


@njit(lent=True)
def poly_height(nav, p, pos):
    """(ok, h) as dtNavMeshQuery::getPolyHeight (off-mesh polys interpolate their segment)."""
    if nav.poly_type[p] == POLYTYPE_OFFMESH:
        v0 = nav.verts[nav.poly_verts[p, 0]]
        v1 = nav.verts[nav.poly_verts[p, 1]]
        d, t = dist_pt_seg_sqr_2d(pos[0], pos[2], v0[0], v0[2], v1[0], v1[2])
        return True, v0[1] + (v1[1] - v0[1]) * t
    return height_in_poly(nav, p, pos)


@njit(lent=True)
def poly_height_core(nav, p, pos, out, pv, tri):
    """:func:`poly_height` with caller scratch ``out`` (3,), ``pv`` (6, 3), ``tri`` (5, 3)."""
    if nav.poly_type[p] == POLYTYPE_OFFMESH:
        v0 = nav.verts[nav.poly_verts[p, 0]]
        v1 = nav.verts[nav.poly_verts[p, 1]]
        d, t = dist_pt_seg_sqr_2d(pos[0], pos[2], v0[0], v0[2], v1[0], v1[2])
        return True, v0[1] + (v1[1] - v0[1]) * t
    tri[:] = ZERO  # as the fresh scratch of closest_point_on_poly
    if closest_point_nav(nav, p, pos, out, pv, tri):
        return True, out[1]
    return False, ZERO


@njit(lent=True)
def closest_point_on_boundary(nav, p, pos, out):
    """pos itself when inside polygon p (xz), else the nearest point on its outline."""
    pv = np.empty((6, 3), np.float32)
    ed = np.empty(6, np.float32)
    et = np.empty(6, np.float32)
    closest_point_on_boundary_s(nav, p, pos, out, pv, ed, et)


@njit(lent=True)
def closest_point_on_boundary_s(nav, p, pos, out, pv, ed, et):
    """:func:`closest_point_on_boundary` with caller scratch pv (6, 3), ed, et (6,) float32."""
    n = load_poly(nav, p, pv)
    if dist_pt_poly_edges(pos[0], pos[2], pv, n, ed, et):
        out[0] = pos[0]
        out[1] = pos[1]
        out[2] = pos[2]
        return
    dmin = ed[0]
    imin = 0
    for i in range(1, n):
        if ed[i] < dmin:
            dmin = ed[i]
            imin = i
    lerp3(out, pv[imin], pv[(imin + 1) % n], et[imin])


# -- array-level cores (hot paths: no NavView passing, caller-provided scratch) ---------------


@njit(inline="always")
def _dvert(verts, poly_verts, nv, dm_vbase, dverts, p, local, out, row):
    """Detail vertex ``local`` of polygon p into out[row] (indexed writes: no row views,
    whose reference counting cost more than the copy in this hot loop)."""
    if local < nv:
        v = poly_verts[p, local]
        out[row, 0] = verts[v, 0]
        out[row, 1] = verts[v, 1]
        out[row, 2] = verts[v, 2]
    else:
        d = dm_vbase[p] + local - nv
        out[row, 0] = dverts[d, 0]
        out[row, 1] = dverts[d, 1]
        out[row, 2] = dverts[d, 2]


# _dvert_xyz and _detail_edge are kernels of their own (LLVM inlines them), not numba's
# inline="always": closest_point_nav calls them 9 and 3 times, and numba's inlining
# types a fresh copy of the callee at each call site (its compile took 2.2 CPU s, 8 s
# inside the optimal path's kernels; 0.96 s this way)
@njit(lent=True)
def _dvert_xyz(verts, poly_verts, nv, dm_vbase, dverts, p, local):
    """Detail vertex ``local`` of polygon p as three scalars."""
    if local < nv:
        v = np.uint64(poly_verts[p, local])
        return verts[v, 0], verts[v, 1], verts[v, 2]
    d = np.uint64(dm_vbase[p] + local - nv)
    return dverts[d, 0], dverts[d, 1], dverts[d, 2]


@njit(lent=True)
def _detail_edge(px, pz, only_boundary, fl, j, lj, li, jx, jy, jz, ix, iy, iz, dmin, tmin, tri):
    """One edge (corner j, local index lj -> local index li) of closestPointOnDetailEdges'
    scan: returns the updated (dmin, tmin); a nearer edge's ends go to tri rows 3 and 4."""
    eflag = (fl >> (j * 2)) & 3
    if (eflag & _DETAIL_EDGE_BOUNDARY) == 0 and (only_boundary or lj < li):
        return dmin, tmin
    d, t = dist_pt_seg_sqr_2d(px, pz, jx, jz, ix, iz)
    if d < dmin:
        tri[3, 0] = jx
        tri[3, 1] = jy
        tri[3, 2] = jz
        tri[4, 0] = ix
        tri[4, 1] = iy
        tri[4, 2] = iz
        return d, t
    return dmin, tmin


@njit(inline="always")
def _height_on_rows(px, pz, t):
    """:func:`height_on_triangle` of the triangle t[0], t[1], t[2]."""
    return height_on_triangle_xyz(
        px, pz, t[0, 0], t[0, 1], t[0, 2], t[1, 0], t[1, 1], t[1, 2], t[2, 0], t[2, 1], t[2, 2]
    )


@njit(inline="always")
def _inside_corners(px, pz, verts, poly_verts, pu, nv):
    """:func:`point_in_poly` of (px, pz) against polygon ``pu``'s corners read in place
    (the same float32 operations in the same order; no copy into a corner buffer,
    unsigned subscripts: no wraparound fix)."""
    inside = False
    if nv <= 0:  # no edge (nothing read)
        return inside
    vj = np.uint64(poly_verts[pu, np.uint64(nv - 1)])
    xj = verts[vj, 0]
    zj = verts[vj, 2]
    for i in range(nv):
        vi = np.uint64(poly_verts[pu, np.uint64(i)])
        xi = verts[vi, 0]
        zi = verts[vi, 2]
        if (zi > pz) != (zj > pz):
            if px < (xj - xi) * (pz - zi) / (zj - zi) + xi:
                inside = not inside
        xj = xi
        zj = zi
    return inside


@njit(lent=True)
def closest_point_nav(nav, p, pos, out, pv, tri):
    """Detour's closestPointOnPoly on the view ``nav``; tri (5, 3) is scratch (pv (6, 3)
    is no longer used: the corners are read in place; it stays for the callers).

    Writes the closest point to ``out``; returns Detour's posOverPoly (True when ``pos``
    projects inside the polygon)."""
    return _closest_point_body(
        nav.verts, nav.poly_verts, nav.poly_nverts, nav.poly_type, nav.dm_vbase, nav.dm_tbase,
        nav.dm_ntris, nav.dverts, nav.dtris, p, pos, out, pv, tri,
    )  # fmt: skip


@njit(inline="always")
def _closest_point_body(
    verts, poly_verts, poly_nverts, poly_type, dm_vbase, dm_tbase, dm_ntris, dverts, dtris,
    p, pos, out, pv, tri,
):  # fmt: skip
    out[0] = pos[0]
    out[1] = pos[1]
    out[2] = pos[2]
    nv = poly_nverts[p]
    if poly_type[p] == POLYTYPE_OFFMESH:
        v0 = poly_verts[p, 0]
        v1 = poly_verts[p, 1]
        d, t = dist_pt_seg_sqr_2d(
            pos[0], pos[2], verts[v0, 0], verts[v0, 2], verts[v1, 0], verts[v1, 2]
        )
        for c in range(3):
            out[c] = verts[v0, c] + (verts[v1, c] - verts[v0, c]) * t
        return False
    inside = _inside_corners(pos[0], pos[2], verts, poly_verts, np.uint64(p), nv)
    tb = dm_tbase[p]
    ntri = dm_ntris[p]
    px = pos[0]
    pz = pos[2]
    # detail corners in scalars (registers), not copied through the tri scratch: the
    # stores and reloads cost a store-forwarding round trip per coordinate
    if inside:
        for k in range(ntri):
            r = np.uint64(tb + k)
            ax, ay, az = _dvert_xyz(verts, poly_verts, nv, dm_vbase, dverts, p, dtris[r, 0])
            bx, by, bz = _dvert_xyz(verts, poly_verts, nv, dm_vbase, dverts, p, dtris[r, 1])
            cx, cy, cz = _dvert_xyz(verts, poly_verts, nv, dm_vbase, dverts, p, dtris[r, 2])
            ok, h = height_on_triangle_xyz(px, pz, ax, ay, az, bx, by, bz, cx, cy, cz)
            if ok:
                out[1] = h
                return True
    # nearest detail edge (boundary edges only when outside)
    only_boundary = not inside
    dmin = FLT_MAX
    tmin = ZERO
    for k in range(ntri):
        r = np.uint64(tb + k)
        fl = dtris[r, 3]
        if only_boundary and (fl & 0x15) == 0:
            continue
        l0 = dtris[r, 0]
        l1 = dtris[r, 1]
        l2 = dtris[r, 2]
        ax, ay, az = _dvert_xyz(verts, poly_verts, nv, dm_vbase, dverts, p, l0)
        bx, by, bz = _dvert_xyz(verts, poly_verts, nv, dm_vbase, dverts, p, l1)
        cx, cy, cz = _dvert_xyz(verts, poly_verts, nv, dm_vbase, dverts, p, l2)
        # the triangle's edges (corner j -> corner i) in Detour's order: 2-0, 0-1, 1-2
        dmin, tmin = _detail_edge(
            px, pz, only_boundary, fl, 2, l2, l0, cx, cy, cz, ax, ay, az, dmin, tmin, tri
        )
        dmin, tmin = _detail_edge(
            px, pz, only_boundary, fl, 0, l0, l1, ax, ay, az, bx, by, bz, dmin, tmin, tri
        )
        dmin, tmin = _detail_edge(
            px, pz, only_boundary, fl, 1, l1, l2, bx, by, bz, cx, cy, cz, dmin, tmin, tri
        )
    if inside:
        out[1] = tri[3, 1] + (tri[4, 1] - tri[3, 1]) * tmin
        return True
    for c in range(3):
        out[c] = tri[3, c] + (tri[4, c] - tri[3, c]) * tmin
    return False


# -- entry points: the same kernels on a packed view descriptor (see _view.pack_view) --
@njit
def closest_point_on_boundary_entry(d, p, pos, out):
    """:func:`closest_point_on_boundary` on the view described by ``d``."""
    return closest_point_on_boundary(open_view(d), p, pos, out)
