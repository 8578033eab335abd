"""Walkability raycast along the polygon graph (Detour's ``dtNavMeshQuery::raycast``).

The ray is tested in 2D (xz). Starting in the start polygon, the segment is
clipped against the current convex polygon; the edge it leaves through
(``seg_max``) decides where to go next: the neighbour linked on that edge
(skipping off-mesh connections and filtered polygons; on tile borders the
crossing must lie inside the link's sub-range), or a wall hit. ``t`` is the
furthest exit parameter seen; when the end point lies inside a polygon the
ray is unobstructed and ``t = FLT_MAX``. The hit normal is the wall edge's
outward xz-normal. With ``RAYCAST_USE_COSTS`` the path cost accumulates the
filter cost of each polygon crossing, with the crossing's height taken on the
polygon edge.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

from ._geom import FLT_MAX, ONE, ZERO, vdist
from ._portal import BUFFER_TOO_SMALL, FAILURE, INVALID_PARAM, SUCCESS, passes
from ._view import POLYTYPE_OFFMESH, poly_index, poly_index_unsafe

_INV255 = F32(1.0) / F32(255.0)
_EPS = F32(0.000001)


@njit(inline="always")
def _clip(verts, row, nv, sx, sz, ddx, ddz):
    """``intersect_seg_poly_2d`` of the ray (start (sx, sz), direction (ddx, ddz)) with
    polygon ``row``'s corners read in place from ``verts`` (the same float32 operations
    in the same order; no copy into a corner buffer, unsigned subscripts: no
    wraparound fix). Returns (ok, tmin, tmax, smin, smax)."""
    tmin = ZERO
    tmax = ONE
    smin = -1
    smax = -1
    if nv <= 0:  # no edge (as the copy-then-clip loop: nothing read)
        return True, tmin, tmax, smin, smax
    j = nv - 1
    vj = np.uint64(row[np.uint64(j)])
    jx = verts[vj, 0]
    jz = verts[vj, 2]
    for i in range(nv):
        vi = np.uint64(row[np.uint64(i)])
        ix = verts[vi, 0]
        iz = verts[vi, 2]
        ex = ix - jx
        ez = iz - jz
        fx = sx - jx
        fz = sz - jz
        num = ez * fx - ex * fz
        den = ddz * ex - ddx * ez
        if abs(den) < _EPS:
            if num < ZERO:
                return False, tmin, tmax, smin, smax
        else:
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
        jx = ix
        jz = iz
    return True, tmin, tmax, smin, smax


@njit(lent=True)
def raycast_kernel(
    nav, flt, acost, start_ref, spos, epos, options, prev_ref, path, max_path, normal
):
    """Cast spos -> epos from start_ref.

    Returns
    -------
    (status, t, hit_edge, path_count, path_cost); ``normal`` (3,) receives the hit normal
    and ``path[:path_count]`` the visited polygon refs. (:func:`raycast_core` with its
    scratch allocated here.)
    """
    pv = np.empty((6, 3), np.float32)
    cur_pos = np.empty(3, np.float32)
    return raycast_core(
        nav, flt, acost, start_ref, spos, epos, options, prev_ref, path, max_path, normal, pv,
        cur_pos,
    )  # fmt: skip


@njit(lent=True)
def raycast_core(
    nav, flt, acost, start_ref, spos, epos, options, prev_ref, path, max_path, normal, pv,
    cur_pos,
):  # fmt: skip
    """:func:`raycast_kernel` with caller scratch ``pv`` (6, 3) and ``cur_pos`` (3,) float32.

    (``pv`` is no longer used: the corners are read in place; it stays in the signature
    for the callers.)"""
    normal[0] = ZERO
    normal[1] = ZERO
    normal[2] = ZERO
    t = ZERO
    cost = ZERO
    hit_edge = -1
    cur = poly_index(nav, start_ref)
    if cur < 0:
        return FAILURE | INVALID_PARAM, t, hit_edge, 0, cost
    if prev_ref != 0 and poly_index(nav, prev_ref) < 0:
        return FAILURE | INVALID_PARAM, t, hit_edge, 0, cost
    use_costs = (options & 1) != 0
    dx = epos[0] - spos[0]
    dy = epos[1] - spos[1]
    dz = epos[2] - spos[2]
    cur_pos[0] = spos[0]
    cur_pos[1] = spos[1]
    cur_pos[2] = spos[2]
    status = SUCCESS
    n = 0
    cur_ref = start_ref
    # A ray crosses each convex polygon once; the cap only guards against a navmesh whose
    # validation was bypassed (load-time checks reject meshes that could loop forever).
    steps = nav.poly_tile.shape[0] + 1
    verts = nav.verts
    sx = spos[0]
    sz = spos[2]
    ddx = epos[0] - spos[0]
    ddz = epos[2] - spos[2]
    while cur_ref != 0:
        steps -= 1
        if steps < 0:
            return FAILURE | INVALID_PARAM, t, hit_edge, n, cost
        row = nav.poly_verts[np.uint64(cur)]
        nv = nav.poly_nverts[np.uint64(cur)]
        ok, tmin, tmax, smin, smax = _clip(verts, row, nv, sx, sz, ddx, ddz)
        if not ok:
            return status, t, hit_edge, n, cost
        hit_edge = smax
        if tmax > t:
            t = tmax
        if n < max_path:
            path[n] = cur_ref
            n += 1
        else:
            status |= BUFFER_TOO_SMALL
        if smax == -1:
            t = FLT_MAX
            if use_costs:
                cost += (
                    vdist(cur_pos[0], cur_pos[1], cur_pos[2], epos[0], epos[1], epos[2])
                    * acost[nav.poly_area[cur]]
                )
            return status, t, hit_edge, n, cost
        next_ref = np.int64(0)
        nxt = -1
        k = nav.poly_link[cur]
        while k != -1:
            kk = np.uint64(k)  # unsigned: no wraparound fix on the chain's loads
            k = nav.link_next[kk]
            if nav.link_edge[kk] != smax:
                continue
            lref = nav.link_ref[kk]
            lp = poly_index_unsafe(nav, lref)
            if nav.poly_type[lp] == POLYTYPE_OFFMESH:
                continue
            if not passes(flt, lp, nav):
                continue
            side = nav.link_side[kk]
            if side == 0xFF:
                next_ref = lref
                nxt = lp
                break
            bmin = nav.link_bmin[kk]
            bmax = nav.link_bmax[kk]
            if bmin == 0 and bmax == 255:
                next_ref = lref
                nxt = lp
                break
            e = nav.link_edge[kk]
            left = nav.verts[nav.poly_verts[cur, e]]
            right = nav.verts[nav.poly_verts[cur, (e + 1) % nav.poly_nverts[cur]]]
            if side == 0 or side == 4:
                lmin = left[2] + (right[2] - left[2]) * (F32(bmin) * _INV255)
                lmax = left[2] + (right[2] - left[2]) * (F32(bmax) * _INV255)
                if lmin > lmax:
                    lmin, lmax = lmax, lmin
                z = spos[2] + (epos[2] - spos[2]) * tmax
                if z >= lmin and z <= lmax:
                    next_ref = lref
                    nxt = lp
                    break
            elif side == 2 or side == 6:
                lmin = left[0] + (right[0] - left[0]) * (F32(bmin) * _INV255)
                lmax = left[0] + (right[0] - left[0]) * (F32(bmax) * _INV255)
                if lmin > lmax:
                    lmin, lmax = lmax, lmin
                x = spos[0] + (epos[0] - spos[0]) * tmax
                if x >= lmin and x <= lmax:
                    next_ref = lref
                    nxt = lp
                    break
        if use_costs:
            lx = cur_pos[0]
            ly = cur_pos[1]
            lz = cur_pos[2]
            cur_pos[0] = spos[0] + dx * t
            cur_pos[1] = spos[1] + dy * t
            cur_pos[2] = spos[2] + dz * t
            e1 = verts[row[smax]]
            e2 = verts[row[(smax + 1) % nv]]
            ex = e2[0] - e1[0]
            ey = e2[1] - e1[1]
            ez = e2[2] - e1[2]
            fx = cur_pos[0] - e1[0]
            fz = cur_pos[2] - e1[2]
            s = fx / ex if ex * ex > ez * ez else fz / ez
            cur_pos[1] = e1[1] + ey * s
            cost += (
                vdist(lx, ly, lz, cur_pos[0], cur_pos[1], cur_pos[2]) * acost[nav.poly_area[cur]]
            )
        if next_ref == 0:
            va = row[smax]
            vb = row[smax + 1 if smax + 1 < nv else 0]
            ndx = verts[vb, 0] - verts[va, 0]
            ndz = verts[vb, 2] - verts[va, 2]
            nx = ndz
            nz = -ndx
            ln = np.sqrt(nx * nx + ZERO * ZERO + nz * nz)
            inv = F32(1.0) / ln
            normal[0] = nx * inv
            normal[1] = ZERO * inv
            normal[2] = nz * inv
            return status, t, hit_edge, n, cost
        cur = nxt
        cur_ref = next_ref
    return status, t, hit_edge, n, cost
