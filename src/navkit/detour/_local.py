"""Local searches around a point: Dijkstra expansions, walls, surface moves, random points.

- ``polys_around_kernel``: Dijkstra from the start polygon through portals that
  touch a circle (``findPolysAroundCircle``) or cross a convex shape
  (``findPolysAroundShape``); node positions at portal midpoints (lerp 0.5),
  step cost = filter cost, results in pop order (increasing cost).
- ``local_neighbourhood_kernel``: breadth-first search (stack of 48) keeping
  only polygons that do not overlap an already accepted, unconnected polygon.
- ``distance_to_wall_kernel``: Dijkstra by distance that shrinks the radius to
  the nearest solid edge found so far.
- ``wall_segments_kernel``: a polygon's edges split into wall and portal parts.
- ``move_along_surface_kernel``: breadth-first search (stack of 48, 64 nodes)
  toward the target, constrained to a circle around the move, returning the
  target when reached or the closest point on a wall edge.
- ``random_around_kernel``: area-weighted reservoir sampling over the
  polygons reached by the circle search, then a random point in the chosen one.

All follow Detour 1.6's semantics and tie-breaking.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

from ._geom import (
    FLT_MAX,
    HALF,
    ZERO,
    dist_pt_seg_sqr_2d,
    intersect_seg_poly_2d,
    lerp3,
    overlap_poly_poly_2d,
    point_in_poly,
    random_point_in_convex_poly,
    tri_area_2d,
    vdist,
)
from ._nodes import (
    NODE_CLOSED,
    NODE_OPEN,
    heap_empty,
    heap_modify,
    heap_pop,
    heap_push,
    open_pool,
    pool_clear,
    pool_get,
)
from ._poly import closest_point_on_poly
from ._portal import BUFFER_TOO_SMALL, EXT_LINK_MASK, OUT_OF_NODES, SUCCESS, passes, portal_points
from ._view import POLYTYPE_GROUND, POLYTYPE_OFFMESH, load_poly, open_view, poly_index_unsafe

MAX_STACK = 48


@njit(inline="always")
def _dist(a, b):
    return vdist(a[0], a[1], a[2], b[0], b[1], b[2])


@njit
def _start(pool, ref, pos):
    pool_clear(pool)
    s = pool_get(pool, ref, 0)
    pool.pos[s, :] = pos
    pool.parent[s] = -1
    pool.cost[s] = 0
    pool.total[s] = 0
    pool.flags[s] = NODE_OPEN
    heap_push(pool, s)
    return s


@njit
def polys_around_kernel(
    nav, pool, flt, acost, start_p, center, radius, shape, nshape, out_ref, out_parent, out_cost
):
    """Dijkstra around a circle (nshape == 0) or a convex shape; returns (status, count)."""
    start_ref = nav.poly_ref[start_p]
    _start(pool, start_ref, center)
    r2 = radius * radius
    va = np.empty(3, np.float32)
    vb = np.empty(3, np.float32)
    status = SUCCESS
    n = 0
    cap = out_ref.shape[0]
    while not heap_empty(pool):
        best = heap_pop(pool)
        pool.flags[best] = (pool.flags[best] & ~NODE_OPEN) | NODE_CLOSED
        best_ref = pool.ref[best]
        bp = poly_index_unsafe(nav, best_ref)
        par = pool.parent[best]
        parent_ref = pool.ref[par] if par != -1 else np.int64(0)
        if n < cap:
            out_ref[n] = best_ref
            out_parent[n] = parent_ref
            out_cost[n] = pool.total[best]
            n += 1
        else:
            status |= BUFFER_TOO_SMALL
        k = nav.poly_link[bp]
        while k != -1:
            nref = nav.link_ref[k]
            k = nav.link_next[k]
            if nref == 0 or nref == parent_ref:
                continue
            npi = poly_index_unsafe(nav, nref)
            if not passes(flt, npi, nav):
                continue
            portal_points(nav, bp, nref, npi, best_ref, va, vb)
            if nshape == 0:
                d, tseg = dist_pt_seg_sqr_2d(center[0], center[2], va[0], va[2], vb[0], vb[2])
                if d > r2:
                    continue
            else:
                ok, tmin, tmax, s0, s1 = intersect_seg_poly_2d(va, vb, shape, nshape)
                if not ok:
                    continue
                if tmin > F32(1.0) or tmax < ZERO:
                    continue
            nn = pool_get(pool, nref, 0)
            if nn == -1:
                status |= OUT_OF_NODES
                continue
            if (pool.flags[nn] & NODE_CLOSED) != 0:
                continue
            if pool.flags[nn] == 0:
                lerp3(pool.pos[nn], va, vb, HALF)
            total = (
                pool.total[best] + _dist(pool.pos[best], pool.pos[nn]) * acost[nav.poly_area[bp]]
            )
            if (pool.flags[nn] & NODE_OPEN) != 0 and total >= pool.total[nn]:
                continue
            pool.parent[nn] = best
            pool.total[nn] = total
            if (pool.flags[nn] & NODE_OPEN) != 0:
                heap_modify(pool, nn)
            else:
                pool.flags[nn] = NODE_OPEN
                heap_push(pool, nn)
    return status, n


@njit(link=False)
def local_neighbourhood_kernel(nav, tiny, flt, start_p, center, radius, out_ref, out_parent):
    """Detour's findLocalNeighbourhood; returns (status, count)."""
    start_ref = nav.poly_ref[start_p]
    pool_clear(tiny)
    s = pool_get(tiny, start_ref, 0)
    tiny.parent[s] = -1
    tiny.flags[s] = NODE_CLOSED
    stack = np.empty(MAX_STACK, np.int64)
    ns = 1
    stack[0] = s
    r2 = radius * radius
    pa = np.empty((6, 3), np.float32)
    pb = np.empty((6, 3), np.float32)
    va = np.empty(3, np.float32)
    vb = np.empty(3, np.float32)
    status = SUCCESS
    cap = out_ref.shape[0]
    n = 0
    if n < cap:
        out_ref[0] = start_ref
        out_parent[0] = 0
        n = 1
    else:
        status |= BUFFER_TOO_SMALL
    while ns > 0:
        cur = stack[0]
        for i in range(ns - 1):
            stack[i] = stack[i + 1]
        ns -= 1
        cur_ref = tiny.ref[cur]
        cp = poly_index_unsafe(nav, cur_ref)
        k = nav.poly_link[cp]
        while k != -1:
            nref = nav.link_ref[k]
            k = nav.link_next[k]
            if nref == 0:
                continue
            nn = pool_get(tiny, nref, 0)
            if nn == -1:
                continue
            if (tiny.flags[nn] & NODE_CLOSED) != 0:
                continue
            npi = poly_index_unsafe(nav, nref)
            if nav.poly_type[npi] == POLYTYPE_OFFMESH:
                continue
            if not passes(flt, npi, nav):
                continue
            portal_points(nav, cp, nref, npi, cur_ref, va, vb)
            d, tseg = dist_pt_seg_sqr_2d(center[0], center[2], va[0], va[2], vb[0], vb[2])
            if d > r2:
                continue
            tiny.flags[nn] |= NODE_CLOSED
            tiny.parent[nn] = cur
            npa = load_poly(nav, npi, pa)
            overlap = False
            for j in range(n):
                past = out_ref[j]
                connected = False
                kk = nav.poly_link[cp]
                while kk != -1:
                    if nav.link_ref[kk] == past:
                        connected = True
                        break
                    kk = nav.link_next[kk]
                if connected:
                    continue
                npb = load_poly(nav, poly_index_unsafe(nav, past), pb)
                if overlap_poly_poly_2d(pa, npa, pb, npb):
                    overlap = True
                    break
            if overlap:
                continue
            if n < cap:
                out_ref[n] = nref
                out_parent[n] = cur_ref
                n += 1
            else:
                status |= BUFFER_TOO_SMALL
            if ns < MAX_STACK:
                stack[ns] = nn
                ns += 1
    return status, n


@njit
def _edge_solid(nav, flt, p, j):
    """True when edge j of polygon p is a wall for the filter."""
    nei = nav.poly_neis[p, j]
    if (nei & EXT_LINK_MASK) != 0:
        k = nav.poly_link[p]
        while k != -1:
            if nav.link_edge[k] == j:
                if nav.link_ref[k] != 0:
                    if passes(flt, poly_index_unsafe(nav, nav.link_ref[k]), nav):
                        return False
                break
            k = nav.link_next[k]
        return True
    if nei != 0:
        q = nav.tile_pbase[nav.poly_tile[p]] + nei - 1
        if passes(flt, q, nav):
            return False
    return True


@njit
def distance_to_wall_kernel(nav, pool, flt, start_p, center, max_radius, hit_pos, hit_normal):
    """Detour's findDistanceToWall; returns (status, hit distance)."""
    start_ref = nav.poly_ref[start_p]
    _start(pool, start_ref, center)
    r2 = max_radius * max_radius
    status = SUCCESS
    best_j = -1
    best_i = -1
    while not heap_empty(pool):
        best = heap_pop(pool)
        pool.flags[best] = (pool.flags[best] & ~NODE_OPEN) | NODE_CLOSED
        best_ref = pool.ref[best]
        bp = poly_index_unsafe(nav, best_ref)
        par = pool.parent[best]
        parent_ref = pool.ref[par] if par != -1 else np.int64(0)
        nv = nav.poly_nverts[bp]
        j = nv - 1
        for i in range(nv):
            if _edge_solid(nav, flt, bp, j):
                vj = nav.verts[nav.poly_verts[bp, j]]
                vi = nav.verts[nav.poly_verts[bp, i]]
                d, tseg = dist_pt_seg_sqr_2d(center[0], center[2], vj[0], vj[2], vi[0], vi[2])
                if d <= r2:
                    r2 = d
                    for c in range(3):
                        hit_pos[c] = vj[c] + (vi[c] - vj[c]) * tseg
                    best_j = nav.poly_verts[bp, j]
                    best_i = nav.poly_verts[bp, i]
            j = i
        k = nav.poly_link[bp]
        while k != -1:
            kk = k
            k = nav.link_next[k]
            nref = nav.link_ref[kk]
            if nref == 0 or nref == parent_ref:
                continue
            npi = poly_index_unsafe(nav, nref)
            if nav.poly_type[npi] == POLYTYPE_OFFMESH:
                continue
            e = nav.link_edge[kk]
            va = nav.verts[nav.poly_verts[bp, e]]
            vb = nav.verts[nav.poly_verts[bp, (e + 1) % nv]]
            d, tseg = dist_pt_seg_sqr_2d(center[0], center[2], va[0], va[2], vb[0], vb[2])
            if d > r2:
                continue
            if not passes(flt, npi, nav):
                continue
            nn = pool_get(pool, nref, 0)
            if nn == -1:
                status |= OUT_OF_NODES
                continue
            if (pool.flags[nn] & NODE_CLOSED) != 0:
                continue
            if pool.flags[nn] == 0:
                left = np.empty(3, np.float32)
                right = np.empty(3, np.float32)
                portal_points(nav, bp, nref, npi, best_ref, left, right)
                for c in range(3):
                    pool.pos[nn, c] = (left[c] + right[c]) * HALF
            total = pool.total[best] + _dist(pool.pos[best], pool.pos[nn])
            if (pool.flags[nn] & NODE_OPEN) != 0 and total >= pool.total[nn]:
                continue
            pool.parent[nn] = best
            pool.total[nn] = total
            if (pool.flags[nn] & NODE_OPEN) != 0:
                heap_modify(pool, nn)
            else:
                pool.flags[nn] |= NODE_OPEN
                heap_push(pool, nn)
    if best_j >= 0:
        tx = nav.verts[best_i, 0] - nav.verts[best_j, 0]
        tz = nav.verts[best_i, 2] - nav.verts[best_j, 2]
        inv = F32(1.0) / np.sqrt(tz * tz + ZERO * ZERO + tx * tx)
        hit_normal[0] = tz * inv
        hit_normal[1] = ZERO
        hit_normal[2] = -tx * inv
    return status, np.sqrt(r2)


@njit(link=False)
def wall_segments_kernel(nav, flt, p, store_portals, segs, seg_refs):
    """Detour's getPolyWallSegments; returns (status, count)."""
    n = 0
    cap = segs.shape[0]
    status = SUCCESS
    ints_min = np.empty(18, np.int64)
    ints_max = np.empty(18, np.int64)
    ints_ref = np.empty(18, np.int64)
    inv = F32(1.0) / F32(255.0)
    nv = nav.poly_nverts[p]
    j = nv - 1
    for i in range(nv):
        vj = nav.verts[nav.poly_verts[p, j]]
        vi = nav.verts[nav.poly_verts[p, i]]
        nints = 0
        nei = nav.poly_neis[p, j]
        if (nei & EXT_LINK_MASK) == 0:
            nref = np.int64(0)
            if nei != 0:
                q = nav.tile_pbase[nav.poly_tile[p]] + nei - 1
                if passes(flt, q, nav):
                    nref = nav.poly_ref[q]
            if nref != 0 and not store_portals:
                j = i
                continue
            if n < cap:
                segs[n, 0:3] = vj
                segs[n, 3:6] = vi
                seg_refs[n] = nref
                n += 1
            else:
                status |= BUFFER_TOO_SMALL
            j = i
            continue
        k = nav.poly_link[p]
        while k != -1:
            if nav.link_edge[k] == j and nav.link_ref[k] != 0:
                if passes(flt, poly_index_unsafe(nav, nav.link_ref[k]), nav):
                    nints = _insert_interval(ints_min, ints_max, ints_ref, nints, 16,
                                             np.int64(nav.link_bmin[k]), np.int64(nav.link_bmax[k]),
                                             nav.link_ref[k])  # fmt: skip
            k = nav.link_next[k]
        nints = _insert_interval(ints_min, ints_max, ints_ref, nints, 16, -1, 0, 0)
        nints = _insert_interval(ints_min, ints_max, ints_ref, nints, 16, 255, 256, 0)
        for m in range(1, nints):
            if store_portals and ints_ref[m] != 0:
                if n < cap:
                    t0 = F32(ints_min[m]) * inv
                    t1 = F32(ints_max[m]) * inv
                    for c in range(3):
                        segs[n, c] = vj[c] + (vi[c] - vj[c]) * t0
                        segs[n, 3 + c] = vj[c] + (vi[c] - vj[c]) * t1
                    seg_refs[n] = ints_ref[m]
                    n += 1
                else:
                    status |= BUFFER_TOO_SMALL
            imin = ints_max[m - 1]
            imax = ints_min[m]
            if imin != imax:
                if n < cap:
                    t0 = F32(imin) * inv
                    t1 = F32(imax) * inv
                    for c in range(3):
                        segs[n, c] = vj[c] + (vi[c] - vj[c]) * t0
                        segs[n, 3 + c] = vj[c] + (vi[c] - vj[c]) * t1
                    seg_refs[n] = 0
                    n += 1
                else:
                    status |= BUFFER_TOO_SMALL
        j = i
    return status, n


@njit
def _insert_interval(tmin, tmax, ref, n, cap, a, b, r):
    if n + 1 > cap:
        return n
    idx = 0
    while idx < n:
        if b <= tmin[idx]:
            break
        idx += 1
    for m in range(n, idx, -1):
        tmin[m] = tmin[m - 1]
        tmax[m] = tmax[m - 1]
        ref[m] = ref[m - 1]
    tmin[idx] = a
    tmax[idx] = b
    ref[idx] = r
    return n + 1


@njit
def move_along_surface_kernel(nav, tiny, flt, start_p, spos, epos, result, visited):
    """Detour's moveAlongSurface; returns (status, visited count)."""
    return move_along_surface_core(
        nav, tiny, flt, start_p, spos, epos, result, visited,
        np.empty(MAX_STACK + 8, np.int64), np.empty((8, 3), np.float32),
    )  # fmt: skip


@njit(link=False)
def move_along_surface_core(nav, tiny, flt, start_p, spos, epos, result, visited, si, fs):
    """:func:`move_along_surface_kernel` with caller scratch si (MAX_STACK + 8,) int64 and
    fs (8, 3) float32 (hot loops pass borrowed arrays)."""
    start_ref = nav.poly_ref[start_p]
    pool_clear(tiny)
    s = pool_get(tiny, start_ref, 0)
    tiny.parent[s] = -1
    tiny.flags[s] = NODE_CLOSED
    stack = si[:MAX_STACK]
    neis = si[MAX_STACK:]
    stack[0] = s
    ns = 1
    best_pos = fs[0]
    best_pos[0] = spos[0]
    best_pos[1] = spos[1]
    best_pos[2] = spos[2]
    best_d = FLT_MAX
    best_node = -1
    search = fs[1]
    lerp3(search, spos, epos, HALF)
    rr = _dist(spos, epos) / F32(2.0) + F32(0.001)
    r2 = rr * rr
    pv = fs[2:8]
    status = SUCCESS
    while ns > 0:
        cur = stack[0]
        for i in range(ns - 1):
            stack[i] = stack[i + 1]
        ns -= 1
        cur_ref = tiny.ref[cur]
        cp = poly_index_unsafe(nav, cur_ref)
        nv = load_poly(nav, cp, pv)
        if point_in_poly(epos[0], epos[2], pv, nv):
            best_node = cur
            best_pos[:] = epos
            break
        j = nv - 1
        for i in range(nv):
            nn_ = 0
            nei = nav.poly_neis[cp, j]
            if (nei & EXT_LINK_MASK) != 0:
                k = nav.poly_link[cp]
                while k != -1:
                    if nav.link_edge[k] == j and nav.link_ref[k] != 0:
                        if passes(flt, poly_index_unsafe(nav, nav.link_ref[k]), nav) and nn_ < 8:
                            neis[nn_] = nav.link_ref[k]
                            nn_ += 1
                    k = nav.link_next[k]
            elif nei != 0:
                q = nav.tile_pbase[nav.poly_tile[cp]] + nei - 1
                if passes(flt, q, nav):
                    neis[nn_] = nav.poly_ref[q]
                    nn_ += 1
            if nn_ == 0:
                d, tseg = dist_pt_seg_sqr_2d(
                    epos[0], epos[2], pv[j, 0], pv[j, 2], pv[i, 0], pv[i, 2]
                )
                if d < best_d:
                    lerp3(best_pos, pv[j], pv[i], tseg)
                    best_d = d
                    best_node = cur
            else:
                for m in range(nn_):
                    nn = pool_get(tiny, neis[m], 0)
                    if nn == -1:
                        continue
                    if (tiny.flags[nn] & NODE_CLOSED) != 0:
                        continue
                    d, tseg = dist_pt_seg_sqr_2d(
                        search[0], search[2], pv[j, 0], pv[j, 2], pv[i, 0], pv[i, 2]
                    )
                    if d > r2:
                        continue
                    if ns < MAX_STACK:
                        tiny.parent[nn] = cur
                        tiny.flags[nn] |= NODE_CLOSED
                        stack[ns] = nn
                        ns += 1
            j = i
    n = 0
    cap = visited.shape[0]
    if best_node != -1:
        prev = -1
        node = best_node
        while node != -1:
            nxt = tiny.parent[node]
            tiny.parent[node] = prev
            prev = node
            node = nxt
        node = prev
        while node != -1:
            visited[n] = tiny.ref[node]
            n += 1
            if n >= cap:
                status |= BUFFER_TOO_SMALL
                break
            node = tiny.parent[node]
    result[:] = best_pos
    return status, n


@njit
def random_around_kernel(nav, pool, flt, start_p, center, radius, rnd, out):
    """Detour's findRandomPointAroundCircle with uniforms from rnd; returns global poly or -1.

    As Detour, a start polygon that fails the filter gives -1 (INVALID_PARAM), and the
    point drawn in the chosen polygon is projected with closestPointOnPoly (so a point
    that lands on the outline still gets the detail surface's height).
    """
    if not passes(flt, start_p, nav):
        return -1
    start_ref = nav.poly_ref[start_p]
    _start(pool, start_ref, center)
    r2 = radius * radius
    area_sum = ZERO
    chosen = -1
    ri = 0
    nr = rnd.shape[0]
    va = np.empty(3, np.float32)
    vb = np.empty(3, np.float32)
    pv = np.empty((6, 3), np.float32)
    while not heap_empty(pool):
        best = heap_pop(pool)
        pool.flags[best] = (pool.flags[best] & ~NODE_OPEN) | NODE_CLOSED
        best_ref = pool.ref[best]
        bp = poly_index_unsafe(nav, best_ref)
        if nav.poly_type[bp] == POLYTYPE_GROUND:
            nv = load_poly(nav, bp, pv)
            area = ZERO
            for j in range(2, nv):
                area += tri_area_2d(pv[0], pv[j - 1], pv[j])
            area_sum += area
            u = rnd[ri % nr]
            ri += 1
            if u * area_sum <= area:
                chosen = bp
        par = pool.parent[best]
        parent_ref = pool.ref[par] if par != -1 else np.int64(0)
        k = nav.poly_link[bp]
        while k != -1:
            nref = nav.link_ref[k]
            k = nav.link_next[k]
            if nref == 0 or nref == parent_ref:
                continue
            npi = poly_index_unsafe(nav, nref)
            if not passes(flt, npi, nav):
                continue
            portal_points(nav, bp, nref, npi, best_ref, va, vb)
            d, tseg = dist_pt_seg_sqr_2d(center[0], center[2], va[0], va[2], vb[0], vb[2])
            if d > r2:
                continue
            nn = pool_get(pool, nref, 0)
            if nn == -1:
                continue
            if (pool.flags[nn] & NODE_CLOSED) != 0:
                continue
            if pool.flags[nn] == 0:
                lerp3(pool.pos[nn], va, vb, HALF)
            total = pool.total[best] + _dist(pool.pos[best], pool.pos[nn])
            if (pool.flags[nn] & NODE_OPEN) != 0 and total >= pool.total[nn]:
                continue
            pool.parent[nn] = best
            pool.total[nn] = total
            if (pool.flags[nn] & NODE_OPEN) != 0:
                heap_modify(pool, nn)
            else:
                pool.flags[nn] = NODE_OPEN
                heap_push(pool, nn)
    if chosen == -1:
        return -1
    nv = load_poly(nav, chosen, pv)
    s = rnd[ri % nr]
    t = rnd[(ri + 1) % nr]
    pt = np.empty(3, np.float32)
    random_point_in_convex_poly(pv, nv, s, t, pt)
    closest_point_on_poly(nav, chosen, pt, out)
    return chosen


@njit
def random_point_kernel(nav, flt, rnd, out):
    """Area-weighted random point over every live ground polygon passing flt.

    Reservoir sampling as Detour's findRandomPoint does within a tile, run over
    all tiles at once (so the choice is area-weighted over the whole mesh; Detour
    first picks a tile uniformly). The point drawn in the chosen polygon is
    projected with closestPointOnPoly, as Detour does (a point on the outline is
    kept). ``rnd`` must hold P + 2 uniforms in [0, 1). Returns the global poly or -1.
    """
    pv = np.empty((6, 3), np.float32)
    area_sum = ZERO
    chosen = -1
    ri = 0
    for p in range(nav.poly_ref.shape[0]):
        t = nav.poly_tile[p]
        if nav.tile_used[t] == 0:
            continue
        loc = p - nav.tile_pbase[t]
        if loc < 0 or loc >= nav.tile_pcount[t]:
            continue
        if nav.poly_type[p] != POLYTYPE_GROUND:
            continue
        if not passes(flt, p, nav):
            continue
        nv = load_poly(nav, p, pv)
        area = ZERO
        for j in range(2, nv):
            area += tri_area_2d(pv[0], pv[j - 1], pv[j])
        area_sum += area
        u = rnd[ri]
        ri += 1
        if u * area_sum <= area:
            chosen = p
    if chosen == -1:
        return -1
    nv = load_poly(nav, chosen, pv)
    pt = np.empty(3, np.float32)
    random_point_in_convex_poly(pv, nv, rnd[ri], rnd[ri + 1], pt)
    closest_point_on_poly(nav, chosen, pt, out)  # as Detour: projected, never rejected
    return chosen


# -- entry points: the same kernels on a packed view descriptor (see _view.pack_view) --
@njit
def move_along_surface_entry(d, tiny_d, flt, start_p, spos, epos, result, visited):
    """:func:`move_along_surface_kernel` on the view described by ``d``."""
    return move_along_surface_kernel(
        open_view(d), open_pool(tiny_d), flt, start_p, spos, epos, result, visited
    )


@njit
def distance_to_wall_entry(d, pool_d, flt, start_p, center, max_radius, hit_pos, hit_normal):
    """:func:`distance_to_wall_kernel` on the view described by ``d``."""
    return distance_to_wall_kernel(
        open_view(d), open_pool(pool_d), flt, start_p, center, max_radius, hit_pos, hit_normal
    )


@njit
def wall_segments_entry(d, flt, p, store_portals, segs, seg_refs):
    """:func:`wall_segments_kernel` on the view described by ``d``."""
    return wall_segments_kernel(open_view(d), flt, p, store_portals, segs, seg_refs)


@njit
def polys_around_entry(
    d, pool_d, flt, acost, start_p, center, radius, shape, nshape, out_ref, out_parent, out_cost
):
    """:func:`polys_around_kernel` on the view described by ``d``."""
    return polys_around_kernel(
        open_view(d),
        open_pool(pool_d),
        flt,
        acost,
        start_p,
        center,
        radius,
        shape,
        nshape,
        out_ref,
        out_parent,
        out_cost,
    )


@njit
def local_neighbourhood_entry(d, tiny_d, flt, start_p, center, radius, out_ref, out_parent):
    """:func:`local_neighbourhood_kernel` on the view described by ``d``."""
    return local_neighbourhood_kernel(
        open_view(d), open_pool(tiny_d), flt, start_p, center, radius, out_ref, out_parent
    )


@njit
def random_point_entry(d, flt, rnd, out):
    """:func:`random_point_kernel` on the view described by ``d``."""
    return random_point_kernel(open_view(d), flt, rnd, out)


@njit
def random_around_entry(d, pool_d, flt, start_p, center, radius, rnd, out):
    """:func:`random_around_kernel` on the view described by ``d``."""
    return random_around_kernel(
        open_view(d), open_pool(pool_d), flt, start_p, center, radius, rnd, out
    )
