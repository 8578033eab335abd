"""Numba kernels that build and cut Detour's polygon links on navkit's pooled arrays.

These follow ``dtNavMesh``'s link maintenance (Detour/Source/DetourNavMesh.cpp):
``connectIntLinks`` (internal edges, built backwards so each list runs from the
lowest edge up), ``baseOffMeshLinks`` (off-mesh start points onto the nearest
ground polygon of their own tile, and back), ``connectExtLinks`` with
``findConnectingPolys`` (portal edges matched against the opposite side of a
neighbour tile: slabs within 0.01 in the slab coordinate whose height profiles
overlap within ``walkableClimb``; the shared sub-range is stored as bytes
0..255 along the edge), ``connectExtOffMeshLinks`` (off-mesh end points landing
in a tile) and ``unconnectLinks``. Links come from a per-tile free list: the
link section of the tile blob, threaded through ``next``, as Detour does, so the
exported bytes are the same.

Every kernel takes :class:`navkit.detour.navmesh.NavMeshArrays` (``a``) and the
ref bit layout ``(tile_bits, poly_bits)``. Indices are global pool indices;
``-1`` is "none".
"""

from __future__ import annotations

import numpy as np

from .._jit import F32, njit

EXT_LINK = 0x8000


@njit(inline="always")
def ref_base(a, t, tile_bits, poly_bits):
    """Poly ref of poly 0 of tile slot ``t`` (uint64)."""
    return (np.uint64(a.tile_salt[t]) << np.uint64(poly_bits + tile_bits)) | (
        np.uint64(t) << np.uint64(poly_bits)
    )


@njit(inline="always")
def ref_tile(ref, tile_bits, poly_bits):
    return np.int64((ref >> np.uint64(poly_bits)) & np.uint64((1 << tile_bits) - 1))


@njit(inline="always")
def ref_poly(ref, poly_bits):
    return np.int64(ref & np.uint64((1 << poly_bits) - 1))


@njit(inline="always")
def alloc_link(a, t):
    head = a.tile_link_free[t]
    if head < 0:
        return -1
    a.tile_link_free[t] = a.link_next[head]
    return head


@njit(inline="always")
def free_link(a, t, li):
    a.link_next[li] = a.tile_link_free[t]
    a.tile_link_free[t] = li


@njit(inline="always")
def _push_link(a, t, gp, target_ref, target_gp, edge, side, bmin, bmax):
    li = alloc_link(a, t)
    if li < 0:
        return -1
    a.link_ref[li] = target_ref
    a.link_poly[li] = target_gp
    a.link_edge[li] = edge
    a.link_side[li] = side
    a.link_bmin[li] = bmin
    a.link_bmax[li] = bmax
    a.link_next[li] = a.poly_first_link[gp]
    a.poly_first_link[gp] = li
    return li


@njit(inline="always")
def init_link_free_list(a, t):
    """Thread the tile's whole link section into its free list (``addTile``)."""
    base = a.tile_link_base[t]
    n = a.tile_link_count[t]
    for i in range(n - 1):
        a.link_next[base + i] = base + i + 1
    if n > 0:
        a.link_next[base + n - 1] = -1
        a.tile_link_free[t] = base
    else:
        a.tile_link_free[t] = -1


@njit(inline="always")
def connect_int_links(a, t, tile_bits, poly_bits):
    """``connectIntLinks``: links across the tile's internal edges."""
    base = ref_base(a, t, tile_bits, poly_bits)
    p0 = a.tile_poly_base[t]
    for gp in range(p0, p0 + a.tile_poly_count[t]):
        a.poly_first_link[gp] = -1
        if a.poly_type[gp] == 1:
            continue
        for j in range(np.int64(a.poly_vert_count[gp]) - 1, -1, -1):
            nei = np.int64(a.poly_neis[gp, j])
            if nei == 0 or (nei & EXT_LINK) != 0:
                continue
            _push_link(a, t, gp, base | np.uint64(nei - 1), p0 + nei - 1, j, 0xFF, 0, 0)


# --- point/polygon geometry (DetourCommon) ---------------------------------------------------


@njit
def _dist_pt_seg_sqr_2d(px, pz, ax, az, bx, bz):
    pqx = bx - ax
    pqz = bz - az
    dx = px - ax
    dz = pz - az
    d = pqx * pqx + pqz * pqz
    t = pqx * dx + pqz * dz
    if d > F32(0.0):
        t = t / d
    if t < F32(0.0):
        t = F32(0.0)
    elif t > F32(1.0):
        t = F32(1.0)
    dx = ax + t * pqx - px
    dz = az + t * pqz - pz
    return dx * dx + dz * dz, t


@njit
def _closest_height_on_tri(p, a, b, c):
    eps = F32(1e-6)
    v0x = c[0] - a[0]
    v0y = c[1] - a[1]
    v0z = c[2] - a[2]
    v1x = b[0] - a[0]
    v1y = b[1] - a[1]
    v1z = b[2] - a[2]
    v2x = p[0] - a[0]
    v2z = p[2] - a[2]
    denom = v0x * v1z - v0z * v1x
    if abs(denom) < eps:
        return False, F32(0.0)
    u = v1z * v2x - v1x * v2z
    v = v0x * v2z - v0z * v2x
    if denom < F32(0.0):
        denom = -denom
        u = -u
        v = -v
    if u >= F32(0.0) and v >= F32(0.0) and (u + v) <= denom:
        return True, a[1] + (v0y * u + v1y * v) / denom
    return False, F32(0.0)


@njit
def _tri_vert(a, gp, tv, out):
    """Position of local detail-triangle vertex ``tv`` of ground polygon ``gp``."""
    nv = np.int64(a.poly_vert_count[gp])
    if tv < nv:
        vi = a.poly_verts[gp, tv]
        for k in range(3):
            out[k] = a.verts[vi, k]
    else:
        t = a.poly_tile[gp]
        dmi = a.tile_dmesh_base[t] + (gp - a.tile_poly_base[t])
        di = a.dmesh_vert_base[dmi] + (tv - nv)
        for k in range(3):
            out[k] = a.dverts[di, k]


@njit
def _point_in_poly(a, gp, px, pz):
    nv = np.int64(a.poly_vert_count[gp])
    c = False
    j = nv - 1
    for i in range(nv):
        vi = a.poly_verts[gp, i]
        vj = a.poly_verts[gp, j]
        xi = a.verts[vi, 0]
        zi = a.verts[vi, 2]
        xj = a.verts[vj, 0]
        zj = a.verts[vj, 2]
        if ((zi > pz) != (zj > pz)) and (px < (xj - xi) * (pz - zi) / (zj - zi) + xi):
            c = not c
        j = i
    return c


@njit
def _closest_on_detail_edges(a, gp, pos, only_boundary, out):
    t = a.poly_tile[gp]
    dmi = a.tile_dmesh_base[t] + (gp - a.tile_poly_base[t])
    tb = a.dmesh_tri_base[dmi]
    nt = np.int64(a.dmesh_tri_count[dmi])
    dmin = F32(3.4028234663852886e38)
    tmin = F32(0.0)
    v = np.zeros((3, 3), np.float32)
    pmin = np.zeros(3, np.float32)
    pmax = np.zeros(3, np.float32)
    for i in range(nt):
        tri = a.dtris[tb + i]
        if only_boundary and (np.int64(tri[3]) & 0x15) == 0:
            continue
        for j in range(3):
            _tri_vert(a, gp, np.int64(tri[j]), v[j])
        j = 2
        for k in range(3):
            flags = (np.int64(tri[3]) >> (j * 2)) & 0x3
            if (flags & 1) == 0 and (only_boundary or tri[j] < tri[k]):
                j = k
                continue
            d, tt = _dist_pt_seg_sqr_2d(pos[0], pos[2], v[j, 0], v[j, 2], v[k, 0], v[k, 2])
            if d < dmin:
                dmin = d
                tmin = tt
                for q in range(3):
                    pmin[q] = v[j, q]
                    pmax[q] = v[k, q]
            j = k
    for q in range(3):
        out[q] = pmin[q] + (pmax[q] - pmin[q]) * tmin


@njit
def closest_point_on_poly(a, gp, pos, out):
    """``dtNavMesh::closestPointOnPoly``; returns whether ``pos`` is over the polygon."""
    for k in range(3):
        out[k] = pos[k]
    if a.poly_type[gp] != 1 and _point_in_poly(a, gp, pos[0], pos[2]):
        t = a.poly_tile[gp]
        dmi = a.tile_dmesh_base[t] + (gp - a.tile_poly_base[t])
        tb = a.dmesh_tri_base[dmi]
        tv = np.zeros((3, 3), np.float32)
        for j in range(np.int64(a.dmesh_tri_count[dmi])):
            tri = a.dtris[tb + j]
            for k in range(3):
                _tri_vert(a, gp, np.int64(tri[k]), tv[k])
            ok, h = _closest_height_on_tri(pos, tv[0], tv[1], tv[2])
            if ok:
                out[1] = h
                return True
        tmp = np.zeros(3, np.float32)
        _closest_on_detail_edges(a, gp, pos, False, tmp)
        out[1] = tmp[1]
        return True
    if a.poly_type[gp] == 1:
        v0 = a.poly_verts[gp, 0]
        v1 = a.poly_verts[gp, 1]
        _, tt = _dist_pt_seg_sqr_2d(
            pos[0], pos[2], a.verts[v0, 0], a.verts[v0, 2], a.verts[v1, 0], a.verts[v1, 2]
        )
        for k in range(3):
            out[k] = a.verts[v0, k] + (a.verts[v1, k] - a.verts[v0, k]) * tt
        return False
    _closest_on_detail_edges(a, gp, pos, True, out)
    return False


@njit
def query_polygons_in_tile(a, t, qmin, qmax, out):
    """``queryPolygonsInTile``: global poly indices overlapping a box (max ``len(out)``)."""
    n = 0
    maxn = out.shape[0]
    p0 = a.tile_poly_base[t]
    nb = a.tile_bv_count[t]
    if nb > 0:
        b0 = a.tile_bv_base[t]
        bq = np.zeros(3, np.int64)
        bx = np.zeros(3, np.int64)
        qf = a.tile_bv_quant[t]
        for k in range(3):
            lo = min(max(qmin[k], a.tile_bmin[t, k]), a.tile_bmax[t, k]) - a.tile_bmin[t, k]
            hi = min(max(qmax[k], a.tile_bmin[t, k]), a.tile_bmax[t, k]) - a.tile_bmin[t, k]
            bq[k] = np.int64(np.uint16(np.int64(qf * lo))) & 0xFFFE
            bx[k] = np.int64(np.uint16(np.int64(qf * hi + F32(1.0)))) | 1
        i = 0
        while i < nb:
            node = b0 + i
            overlap = True
            for k in range(3):
                if bq[k] > np.int64(a.bv_bmax[node, k]) or bx[k] < np.int64(a.bv_bmin[node, k]):
                    overlap = False
            leaf = a.bv_i[node] >= 0
            if leaf and overlap:
                if n < maxn:
                    out[n] = p0 + a.bv_i[node]
                    n += 1
            if overlap or leaf:
                i += 1
            else:
                i += -a.bv_i[node]
        return n
    for gp in range(p0, p0 + a.tile_poly_count[t]):
        if a.poly_type[gp] == 1:
            continue
        lo = np.zeros(3, np.float32)
        hi = np.zeros(3, np.float32)
        v = a.poly_verts[gp, 0]
        for k in range(3):
            lo[k] = a.verts[v, k]
            hi[k] = a.verts[v, k]
        for j in range(1, np.int64(a.poly_vert_count[gp])):
            v = a.poly_verts[gp, j]
            for k in range(3):
                lo[k] = min(lo[k], a.verts[v, k])
                hi[k] = max(hi[k], a.verts[v, k])
        ok = True
        for k in range(3):
            if qmin[k] > hi[k] or qmax[k] < lo[k]:
                ok = False
        if ok and n < maxn:
            out[n] = gp
            n += 1
    return n


@njit
def find_nearest_poly_in_tile(a, t, center, half, nearest):
    """``findNearestPolyInTile``: global poly index (or -1) and the nearest point."""
    qmin = np.empty(3, np.float32)
    qmax = np.empty(3, np.float32)
    for k in range(3):
        qmin[k] = center[k] - half[k]
        qmax[k] = center[k] + half[k]
    cand = np.zeros(128, np.int64)
    n = query_polygons_in_tile(a, t, qmin, qmax, cand)
    best = -1
    best_d = F32(3.4028234663852886e38)
    cp = np.zeros(3, np.float32)
    climb = a.tile_walkable_climb[t]
    for i in range(n):
        gp = cand[i]
        over = closest_point_on_poly(a, gp, center, cp)
        if over:
            d = abs(center[1] - cp[1]) - climb
            d = d * d if d > F32(0.0) else F32(0.0)
        else:
            dx = center[0] - cp[0]
            dy = center[1] - cp[1]
            dz = center[2] - cp[2]
            d = dx * dx + dy * dy + dz * dz
        if d < best_d:
            for k in range(3):
                nearest[k] = cp[k]
            best_d = d
            best = gp
    return best


@njit
def base_off_mesh_links(a, t, tile_bits, poly_bits):
    """``baseOffMeshLinks``: off-mesh start points onto their tile's ground polygons."""
    if a.tile_off_count[t] == 0:
        return
    base = ref_base(a, t, tile_bits, poly_bits)
    p0 = a.tile_poly_base[t]
    o0 = a.tile_off_base[t]
    half = np.zeros(3, np.float32)
    pos = np.zeros(3, np.float32)
    near = np.zeros(3, np.float32)
    for oi in range(o0, o0 + a.tile_off_count[t]):
        gp = a.off_poly[oi]
        rad = a.off_rad[oi]
        half[0] = rad
        half[1] = a.tile_walkable_climb[t]
        half[2] = rad
        for k in range(3):
            pos[k] = a.off_pos[oi, k]
        land = find_nearest_poly_in_tile(a, t, pos, half, near)
        if land < 0:
            continue
        dx = near[0] - pos[0]
        dz = near[2] - pos[2]
        if dx * dx + dz * dz > rad * rad:
            continue
        v = a.poly_verts[gp, 0]
        for k in range(3):
            a.verts[v, k] = near[k]
        land_ref = base | np.uint64(land - p0)
        _push_link(a, t, gp, land_ref, land, 0, 0xFF, 0, 0)
        _push_link(a, t, land, base | np.uint64(gp - p0), gp, 0xFF, 0xFF, 0, 0)


@njit(link=False)
def connect_ext_off_mesh_links(a, t, target, side, tile_bits, poly_bits):
    """``connectExtOffMeshLinks``: off-mesh connections of ``target`` landing in ``t``."""
    if a.tile_off_count[target] == 0:
        return
    opp = 0xFF if side == -1 else (side + 4) & 7
    tbase = ref_base(a, target, tile_bits, poly_bits)
    base = ref_base(a, t, tile_bits, poly_bits)
    tp0 = a.tile_poly_base[target]
    p0 = a.tile_poly_base[t]
    o0 = a.tile_off_base[target]
    half = np.zeros(3, np.float32)
    pos = np.zeros(3, np.float32)
    near = np.zeros(3, np.float32)
    for oi in range(o0, o0 + a.tile_off_count[target]):
        if np.int64(a.off_side[oi]) != opp:
            continue
        gp = a.off_poly[oi]
        if a.poly_first_link[gp] < 0:
            continue
        rad = a.off_rad[oi]
        half[0] = rad
        half[1] = a.tile_walkable_climb[target]
        half[2] = rad
        for k in range(3):
            pos[k] = a.off_pos[oi, 3 + k]
        land = find_nearest_poly_in_tile(a, t, pos, half, near)
        if land < 0:
            continue
        dx = near[0] - pos[0]
        dz = near[2] - pos[2]
        if dx * dx + dz * dz > rad * rad:
            continue
        v = a.poly_verts[gp, 1]
        for k in range(3):
            a.verts[v, k] = near[k]
        _push_link(a, target, gp, base | np.uint64(land - p0), land, 1, opp, 0, 0)
        if (a.off_flags[oi] & 1) != 0:
            s = 0xFF if side == -1 else side
            _push_link(a, t, land, tbase | np.uint64(gp - tp0), gp, 0xFF, s, 0, 0)


@njit(inline="always")
def _slab_coord(vs, i, side):
    if side == 0 or side == 4:
        return vs[i, 0]
    if side == 2 or side == 6:
        return vs[i, 2]
    return F32(0.0)


@njit
def _slab_end_points(ax, ay, az, bx, by, bz, side):
    """(min u, its height, max u, its height) of the edge a-b along the slab axis (z
    for sides 0/4, x for 2/6): scalars in and out (no scratch arrays, views or
    reference counting)."""
    if side == 0 or side == 4:
        if az < bz:
            return az, ay, bz, by
        return bz, by, az, ay
    if side == 2 or side == 6:
        if ax < bx:
            return ax, ay, bx, by
        return bx, by, ax, ay
    z = F32(0.0)
    return z, z, z, z


@njit
def _overlap_slabs(amin0, amin1, amax0, amax1, bmin0, bmin1, bmax0, bmax1, px, py):
    minx = max(amin0 + px, bmin0 + px)
    maxx = min(amax0 - px, bmax0 - px)
    if minx > maxx:
        return False
    ad = (amax1 - amin1) / (amax0 - amin0)
    ak = amin1 - ad * amin0
    bd = (bmax1 - bmin1) / (bmax0 - bmin0)
    bk = bmin1 - bd * bmin0
    aminy = ad * minx + ak
    amaxy = ad * maxx + ak
    bminy = bd * minx + bk
    bmaxy = bd * maxx + bk
    dmin = bminy - aminy
    dmax = bmaxy - amaxy
    if dmin * dmax < F32(0.0):
        return True
    thr = (py * F32(2.0)) * (py * F32(2.0))
    if dmin * dmin <= thr or dmax * dmax <= thr:
        return True
    return False


@njit(inline="always")
def _find_connecting_polys(a, ia, ib, target, side, con, conarea):
    """``findConnectingPolys``: the polygons of ``target`` whose ``side`` portal edges
    meet the edge from vertex ``ia`` to ``ib`` (into ``con``, their shared range along
    the edge into ``conarea``)."""
    vs = a.verts
    amin0, amin1, amax0, amax1 = _slab_end_points(
        vs[ia, 0], vs[ia, 1], vs[ia, 2], vs[ib, 0], vs[ib, 1], vs[ib, 2], side
    )
    apos = _slab_coord(vs, ia, side)
    m = EXT_LINK | side
    n = 0
    p0 = a.tile_poly_base[target]
    climb = a.tile_walkable_climb[target]
    px = F32(0.01)
    for gp in range(p0, p0 + a.tile_poly_count[target]):
        nv = np.int64(a.poly_vert_count[gp])
        for j in range(nv):
            if np.int64(a.poly_neis[gp, j]) != m:
                continue
            ic = a.poly_verts[gp, j]
            bpos = _slab_coord(vs, ic, side)
            if abs(apos - bpos) > px:
                continue
            id_ = a.poly_verts[gp, j + 1] if j + 1 < nv else a.poly_verts[gp, 0]
            bmin0, bmin1, bmax0, bmax1 = _slab_end_points(
                vs[ic, 0], vs[ic, 1], vs[ic, 2], vs[id_, 0], vs[id_, 1], vs[id_, 2], side
            )
            if not _overlap_slabs(
                amin0, amin1, amax0, amax1, bmin0, bmin1, bmax0, bmax1, px, climb
            ):
                continue
            if n < con.shape[0]:
                conarea[n, 0] = max(amin0, bmin0)
                conarea[n, 1] = min(amax0, bmax0)
                con[n] = gp
                n += 1
            break
    return n


@njit(inline="always")
def _round_byte(x):
    # roundf(clamp(x, 0, 1) * 255): halves away from zero (x >= 0 here).
    v = min(max(x, F32(0.0)), F32(1.0)) * F32(255.0)
    r = np.floor(v)
    if v - r >= F32(0.5):
        r += F32(1.0)
    return np.int64(r)


@njit(inline="always")
def connect_ext_links(a, t, target, side, tile_bits, poly_bits, con, conarea):
    """``connectExtLinks``: portal edges of ``t`` facing ``side`` onto ``target``;
    ``con`` (4,) int64 and ``conarea`` (4, 2) float32 scratch."""
    tbase = ref_base(a, target, tile_bits, poly_bits)
    tp0 = a.tile_poly_base[target]
    p0 = a.tile_poly_base[t]
    for gp in range(p0, p0 + a.tile_poly_count[t]):
        nv = np.int64(a.poly_vert_count[gp])
        for j in range(nv):
            nei = np.int64(a.poly_neis[gp, j])
            if (nei & EXT_LINK) == 0:
                continue
            d = nei & 0xFF
            if side != -1 and d != side:
                continue
            ia = a.poly_verts[gp, j]
            ib = a.poly_verts[gp, j + 1] if j + 1 < nv else a.poly_verts[gp, 0]
            nn = _find_connecting_polys(a, ia, ib, target, (d + 4) & 7, con, conarea)
            for k in range(nn):
                li = alloc_link(a, t)
                if li < 0:
                    continue
                a.link_ref[li] = tbase | np.uint64(con[k] - tp0)
                a.link_poly[li] = con[k]
                a.link_edge[li] = j
                a.link_side[li] = d
                a.link_next[li] = a.poly_first_link[gp]
                a.poly_first_link[gp] = li
                vs = a.verts
                if d == 0 or d == 4:
                    tmin = (conarea[k, 0] - vs[ia, 2]) / (vs[ib, 2] - vs[ia, 2])
                    tmax = (conarea[k, 1] - vs[ia, 2]) / (vs[ib, 2] - vs[ia, 2])
                else:
                    tmin = (conarea[k, 0] - vs[ia, 0]) / (vs[ib, 0] - vs[ia, 0])
                    tmax = (conarea[k, 1] - vs[ia, 0]) / (vs[ib, 0] - vs[ia, 0])
                if d == 0 or d == 4 or d == 2 or d == 6:
                    if tmin > tmax:
                        tmin, tmax = tmax, tmin
                    a.link_bmin[li] = _round_byte(tmin)
                    a.link_bmax[li] = _round_byte(tmax)


@njit(inline="always")
def unconnect_links(a, t, target, tile_bits, poly_bits):
    """``unconnectLinks``: drop ``t``'s links that point into tile slot ``target``."""
    p0 = a.tile_poly_base[t]
    for gp in range(p0, p0 + a.tile_poly_count[t]):
        j = a.poly_first_link[gp]
        pj = -1
        while j >= 0:
            if ref_tile(a.link_ref[j], tile_bits, poly_bits) == target:
                nj = a.link_next[j]
                if pj < 0:
                    a.poly_first_link[gp] = nj
                else:
                    a.link_next[pj] = nj
                free_link(a, t, j)
                j = nj
            else:
                pj = j
                j = a.link_next[j]


@njit
def resolve_link_polys(a, n_links, salt_bits, tile_bits, poly_bits):
    """Recompute ``link_poly`` (global target poly) from ``link_ref`` for every link."""
    max_tiles = a.tile_salt.shape[0]
    for li in range(n_links):
        ref = a.link_ref[li]
        t = ref_tile(ref, tile_bits, poly_bits)
        p = ref_poly(ref, poly_bits)
        salt = np.int64((ref >> np.uint64(poly_bits + tile_bits)) & np.uint64((1 << salt_bits) - 1))
        if (
            t < max_tiles
            and a.tile_used[t] != 0
            and np.int64(a.tile_salt[t]) == salt
            and p < a.tile_poly_count[t]
        ):
            a.link_poly[li] = a.tile_poly_base[t] + p
        else:
            a.link_poly[li] = -1


@njit(link=False)
def connect_tile(a, t, same_xy, nei_slots, nei_sides, tile_bits, poly_bits):
    """Every link step of ``dtNavMesh::addTile`` for slot ``t``, in Detour's order.

    ``same_xy``: the other layers at the tile's (x, y) in lookup order;
    ``nei_slots``/``nei_sides``: the tiles around it, side 0..7 in order.
    """
    # (the off-mesh steps are called only for tiles with off-mesh connections: each
    # call passes the whole pool tuple, which costs more than the empty loop)
    con = np.zeros(4, np.int64)
    conarea = np.zeros((4, 2), np.float32)
    init_link_free_list(a, t)
    connect_int_links(a, t, tile_bits, poly_bits)
    if a.tile_off_count[t] > 0:
        base_off_mesh_links(a, t, tile_bits, poly_bits)
        connect_ext_off_mesh_links(a, t, t, -1, tile_bits, poly_bits)
    # One call site for connect_ext_links (it is inlined: four sites compiled it four
    # times). Step k: pair i = k // 2 (the same-(x, y) layers, then the neighbours);
    # even k links t to s, odd k links s to t and then the off-mesh links both ways,
    # which is Detour's order.
    nsame = same_xy.shape[0]
    for k in range(2 * (nsame + nei_slots.shape[0])):
        i = k >> 1
        if i < nsame:
            s = np.int64(same_xy[i])
            side = np.int64(-1)
            opp = np.int64(-1)
        else:
            s = np.int64(nei_slots[i - nsame])
            side = np.int64(nei_sides[i - nsame])
            opp = (side + 4) & 7
        odd = (k & 1) == 1
        frm = s if odd else np.int64(t)
        to = np.int64(t) if odd else s
        connect_ext_links(a, frm, to, opp if odd else side, tile_bits, poly_bits, con, conarea)
        if odd:
            if a.tile_off_count[s] > 0:
                connect_ext_off_mesh_links(a, t, s, side, tile_bits, poly_bits)
            if a.tile_off_count[t] > 0:
                connect_ext_off_mesh_links(a, s, t, opp, tile_bits, poly_bits)


@njit
def connect_new_tiles(b, slots, nei_start, nei_slots, nei_sides, tile_bits, poly_bits):
    """:func:`connect_tile` for each of new tiles without off-mesh connections, one per (x, y)
    (no other layer), into a navmesh whose tiles have none either (a bake's tiles).

    The same links as :func:`connect_tile` tile after tile: its off-mesh steps would
    find nothing to link, so they are left out (and are not compiled with the bake).
    ``b``: the pools as :func:`navkit.detour._swap.open_pool` opens them (the entry is
    :func:`navkit.detour._pool_links.connect_new_tiles`).
    """
    for i in range(slots.shape[0]):
        t = np.int64(slots[i])
        con = np.zeros(4, np.int64)
        conarea = np.zeros((4, 2), np.float32)
        init_link_free_list(b, t)
        connect_int_links(b, t, tile_bits, poly_bits)
        # Detour's order: t to each neighbour, then the neighbour to t (one call site:
        # connect_ext_links is inlined)
        for k in range(2 * (nei_start[i + 1] - nei_start[i])):
            j = nei_start[i] + (k >> 1)
            s = np.int64(nei_slots[j])
            side = np.int64(nei_sides[j])
            odd = (k & 1) == 1
            frm = s if odd else t
            to = t if odd else s
            side = (side + 4) & 7 if odd else side
            connect_ext_links(b, frm, to, side, tile_bits, poly_bits, con, conarea)


@njit
def replace_tile(a, old, others, t, same_xy, nei_slots, nei_sides, tile_bits, poly_bits):
    """:func:`disconnect_tile` of slot ``old`` then :func:`connect_tile` of slot ``t``
    (``removeTile`` then ``addTile``) in one call (the tile cache's swap)."""
    for s in others:
        unconnect_links(a, s, old, tile_bits, poly_bits)
    connect_tile(a, t, same_xy, nei_slots, nei_sides, tile_bits, poly_bits)


@njit
def disconnect_tile(a, t, others, tile_bits, poly_bits):
    """``removeTile``'s unlinking: drop the links of each tile in ``others`` into ``t``."""
    for s in others:
        unconnect_links(a, s, t, tile_bits, poly_bits)


@njit
def poly_index_of_ref(a, ref, salt_bits, tile_bits, poly_bits):
    """Global poly index of ``ref`` (uint64), or -1 when the ref is stale or invalid.

    The kernel-side counterpart of ``NavMesh.poly_index`` (which raises instead).
    """
    ref = np.uint64(ref)
    if ref == np.uint64(0):
        return -1
    t = ref_tile(ref, tile_bits, poly_bits)
    p = ref_poly(ref, poly_bits)
    salt = np.int64((ref >> np.uint64(poly_bits + tile_bits)) & np.uint64((1 << salt_bits) - 1))
    if t >= a.tile_salt.shape[0] or a.tile_used[t] == 0 or np.int64(a.tile_salt[t]) != salt:
        return -1
    if p >= a.tile_poly_count[t]:
        return -1
    return a.tile_poly_base[t] + p


@njit
def count_links(a):
    """Links in use: the total length of the live polygons' link lists."""
    n = 0
    for t in range(a.tile_used.shape[0]):
        if a.tile_used[t] == 0:
            continue
        p0 = a.tile_poly_base[t]
        for gp in range(p0, p0 + a.tile_poly_count[t]):
            li = a.poly_first_link[gp]
            while li >= 0:
                n += 1
                li = a.link_next[li]
    return n
