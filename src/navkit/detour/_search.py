"""A* over the polygon graph (Detour's ``findPath`` and the sliced variant).

Nodes sit at portal midpoints (the start node at the start position); the
cost of a step is the 3D distance between node positions times the area cost
of the polygon being left, plus, on reaching the goal polygon, the distance
to the end position. The heuristic is the straight distance to the end
position scaled by ``H_SCALE = 0.999``. A node reached across a tile border
is keyed by (ref, side/2) so a polygon can be entered from several tile sides.
When the goal is not reached (disconnected, or the node pool runs out), the
path leads to the visited node with the smallest heuristic and is flagged
``PARTIAL_RESULT``. Ties are broken exactly as in Detour (link order, the
heap's sift rules, strict ``<`` comparisons).

The sliced search keeps its state in two small arrays (``qi`` int64,
``qf`` float32) so that it can run a bounded number of iterations per call;
with ``ANY_ANGLE`` it tries a raycast shortcut to the grandparent as Detour's
``updateSlicedFindPath`` does.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

from ._geom import FLT_MAX, vdist, vdist_sqr
from ._nodes import (
    M_HEAP,
    NODE_CLOSED,
    NODE_OPEN,
    NODE_PARENT_DETACHED,
    heap_empty,
    heap_modify,
    heap_modify_t,
    heap_pop,
    heap_pop_t,
    heap_push,
    heap_push_t,
    open_pool,
    pool_clear,
    pool_find_any,
    pool_get,
)
from ._portal import (
    BUFFER_TOO_SMALL,
    DETAIL_MASK,
    FAILURE,
    IN_PROGRESS,
    INVALID_PARAM,
    OUT_OF_NODES,
    PARTIAL_RESULT,
    SUCCESS,
    _find_link,
    edge_midpoint,
    passes,
)
from ._raycast import raycast_kernel
from ._view import POLYTYPE_OFFMESH, open_view, poly_index, poly_index_unsafe

H_SCALE = F32(0.999)
_HALF = F32(0.5)
_INV255 = F32(1.0) / F32(255.0)
FINDPATH_ANY_ANGLE = 2
RAYCAST_USE_COSTS = 1
RAY_CAST_LIMIT_PROPORTIONS = F32(50.0)


@njit(inline="always")
def _dist(a, b):
    return vdist(a[0], a[1], a[2], b[0], b[1], b[2])


@njit(lent=True)
def path_to_node(pool, node, out, max_path):
    """Write the parent chain ending at node into out (start first); returns (status, count)."""
    length = 0
    cur = node
    while cur != -1:
        length += 1
        cur = pool.parent[cur]
    cur = node
    w = length
    while w > max_path:
        cur = pool.parent[cur]
        w -= 1
    for i in range(w - 1, -1, -1):
        out[i] = pool.ref[cur]
        cur = pool.parent[cur]
    if length > max_path:
        return SUCCESS | BUFFER_TOO_SMALL, max_path
    return SUCCESS, length


@njit(lent=True, link=False)
def find_path_kernel(nav, pool, flt, acost, start_ref, end_ref, spos, epos, max_path, out):
    """Detour's findPath. Returns (status, path length)."""
    sp = poly_index(nav, start_ref)
    ep = poly_index(nav, end_ref)
    if sp < 0 or ep < 0 or max_path <= 0:
        return FAILURE | INVALID_PARAM, 0
    if start_ref == end_ref:
        out[0] = start_ref
        return SUCCESS, 1
    # hoisted arrays: the hot loop touches plain arrays only
    poly_link = nav.poly_link
    poly_area = nav.poly_area
    poly_flags = nav.poly_flags
    link_ref = nav.link_ref
    link_next = nav.link_next
    link_side = nav.link_side
    link_edge = nav.link_edge
    link_bmin = nav.link_bmin
    link_bmax = nav.link_bmax
    poly_type = nav.poly_type
    poly_verts = nav.poly_verts
    poly_nverts = nav.poly_nverts
    verts = nav.verts
    tile_pbase = nav.tile_pbase
    pbits = nav.bits[0]
    pmask = (np.int64(1) << pbits) - 1
    tmask = (np.int64(1) << nav.bits[1]) - 1
    ppos = pool.pos
    pcost = pool.cost
    ptotal = pool.total
    pflags = pool.flags
    pparent = pool.parent
    pref = pool.ref
    heap = pool.heap
    hval = pool.heap_total
    heap_pos = pool.heap_pos
    meta = pool.meta
    pool_clear(pool)
    s = pool_get(pool, start_ref, 0)
    for c in range(3):
        ppos[s, c] = spos[c]
    pparent[s] = -1
    pcost[s] = 0
    ptotal[s] = _dist(spos, epos) * H_SCALE
    pflags[s] = NODE_OPEN
    heap_push_t(heap, hval, heap_pos, meta, s, ptotal[s])
    last_best = s
    last_best_cost = ptotal[s]
    out_of_nodes = False
    ex, ey, ez = epos[0], epos[1], epos[2]
    while meta[M_HEAP] != 0:
        best = heap_pop_t(heap, hval, heap_pos, meta)
        ub = np.uint64(best)
        pflags[ub] = (pflags[ub] & ~NODE_OPEN) | NODE_CLOSED
        best_ref = pref[ub]
        if best_ref == end_ref:
            last_best = best
            break
        bp = tile_pbase[(best_ref >> pbits) & tmask] + (best_ref & pmask)
        par = pparent[ub]
        parent_ref = pref[np.uint64(par)] if par != -1 else np.int64(0)
        area_cost = acost[poly_area[bp]]
        bx, by, bz = ppos[ub, 0], ppos[ub, 1], ppos[ub, 2]
        bcost = pcost[ub]
        k = poly_link[bp]
        while k != -1:
            # unsigned subscripts: no wraparound fix on this dependent load chain
            uk = np.uint64(k)
            nref = link_ref[uk]
            side = link_side[uk]
            k = link_next[uk]
            if nref == 0 or nref == parent_ref:
                continue
            npi = tile_pbase[(nref >> pbits) & tmask] + (nref & pmask)
            f = poly_flags[npi]
            if (f & flt[0]) == 0 or (f & flt[1]) != 0:
                continue
            state = 0
            if side != 0xFF:
                state = side >> 1
            nn = pool_get(pool, nref, state)
            if nn == -1:
                out_of_nodes = True
                continue
            # nn >= 0 from here: unsigned subscripts (no wraparound fix on each access)
            un = np.uint64(nn)
            if pflags[un] == 0:
                # the portal midpoint (_portal.portal_midpoint's float32 operations),
                # written out here: a call spills this loop's registers
                mx = my = mz = F32(0.0)
                kf = _find_link(poly_link, link_ref, link_next, bp, nref)
                if poly_type[bp] == POLYTYPE_OFFMESH or poly_type[npi] == POLYTYPE_OFFMESH:
                    vi = np.int64(-1)
                    if poly_type[bp] == POLYTYPE_OFFMESH:
                        vi = poly_verts[bp, link_edge[np.uint64(kf)]]
                    else:
                        kb = _find_link(poly_link, link_ref, link_next, npi, best_ref)
                        if kb != -1:
                            vi = poly_verts[npi, link_edge[np.uint64(kb)]]
                    if vi != -1:
                        x, y, z = verts[vi, 0], verts[vi, 1], verts[vi, 2]
                        mx, my, mz = (x + x) * _HALF, (y + y) * _HALF, (z + z) * _HALF
                else:
                    ukf = np.uint64(kf)
                    ed = link_edge[ukf]
                    e1 = ed + 1
                    if e1 >= poly_nverts[bp]:
                        e1 = 0
                    i0 = poly_verts[bp, ed]
                    i1 = poly_verts[bp, e1]
                    ax, ay, az = verts[i0, 0], verts[i0, 1], verts[i0, 2]
                    qx, qy, qz = verts[i1, 0], verts[i1, 1], verts[i1, 2]
                    bmin = link_bmin[ukf]
                    bmax = link_bmax[ukf]
                    if link_side[ukf] != 0xFF and (bmin != 0 or bmax != 255):
                        tmin = F32(bmin) * _INV255
                        tmax = F32(bmax) * _INV255
                        lx = ax + (qx - ax) * tmin
                        ly = ay + (qy - ay) * tmin
                        lz = az + (qz - az) * tmin
                        rx = ax + (qx - ax) * tmax
                        ry = ay + (qy - ay) * tmax
                        rz = az + (qz - az) * tmax
                        mx, my, mz = (lx + rx) * _HALF, (ly + ry) * _HALF, (lz + rz) * _HALF
                    else:
                        mx, my, mz = (ax + qx) * _HALF, (ay + qy) * _HALF, (az + qz) * _HALF
                ppos[un, 0] = mx
                ppos[un, 1] = my
                ppos[un, 2] = mz
            nx, ny, nz = ppos[un, 0], ppos[un, 1], ppos[un, 2]
            cur_cost = vdist(bx, by, bz, nx, ny, nz) * area_cost
            if nref == end_ref:
                end_cost = vdist(nx, ny, nz, ex, ey, ez) * acost[poly_area[npi]]
                cost = bcost + cur_cost + end_cost
                heur = F32(0.0)
            else:
                cost = bcost + cur_cost
                heur = vdist(nx, ny, nz, ex, ey, ez) * H_SCALE
            total = cost + heur
            fl = pflags[un]
            if (fl & NODE_OPEN) != 0 and total >= ptotal[un]:
                continue
            if (fl & NODE_CLOSED) != 0 and total >= ptotal[un]:
                continue
            pparent[un] = best
            pflags[un] = fl & ~NODE_CLOSED
            pcost[un] = cost
            ptotal[un] = total
            if (fl & NODE_OPEN) != 0:
                heap_modify_t(heap, hval, heap_pos, nn, total)
            else:
                pflags[un] |= NODE_OPEN
                heap_push_t(heap, hval, heap_pos, meta, nn, total)
            if heur < last_best_cost:
                last_best_cost = heur
                last_best = nn
    status, n = path_to_node(pool, last_best, out, max_path)
    if pref[last_best] != end_ref:
        status |= PARTIAL_RESULT
    if out_of_nodes:
        status |= OUT_OF_NODES
    return status, n


# -- sliced search -------------------------------------------------------------
# qi: [status, start_ref, end_ref, last_best_node, options]
# qf: [sx, sy, sz, ex, ey, ez, last_best_cost, raycast_limit_sqr]
Q_STATUS, Q_START, Q_END, Q_BEST, Q_OPTS = 0, 1, 2, 3, 4


@njit(link=False)
def sliced_init(nav, pool, flt, qi, qf, start_ref, end_ref, spos, epos, options):
    """Start a sliced search; returns its status."""
    qi[:] = 0
    qi[Q_STATUS] = FAILURE
    qi[Q_START] = start_ref
    qi[Q_END] = end_ref
    qi[Q_BEST] = -1
    qi[Q_OPTS] = options
    qf[0:3] = spos
    qf[3:6] = epos
    qf[7] = FLT_MAX
    sp = poly_index(nav, start_ref)
    ep = poly_index(nav, end_ref)
    if sp < 0 or ep < 0:
        qi[Q_STATUS] = FAILURE | INVALID_PARAM
        return qi[Q_STATUS]
    if (options & FINDPATH_ANY_ANGLE) != 0:
        r = nav.tile_radius[nav.poly_tile[sp]] * RAY_CAST_LIMIT_PROPORTIONS
        qf[7] = r * r
    if start_ref == end_ref:
        qi[Q_STATUS] = SUCCESS
        return SUCCESS
    pool_clear(pool)
    s = pool_get(pool, start_ref, 0)
    pool.pos[s, :] = spos
    pool.parent[s] = -1
    pool.cost[s] = 0
    pool.total[s] = _dist(spos, epos) * H_SCALE
    pool.flags[s] = NODE_OPEN
    heap_push(pool, s)
    qi[Q_STATUS] = IN_PROGRESS
    qi[Q_BEST] = s
    qf[6] = pool.total[s]
    return IN_PROGRESS


@njit(link=False)
def sliced_update(nav, pool, flt, acost, qi, qf, max_iter):
    """Run up to max_iter A* iterations; returns (status, iterations done)."""
    if (qi[Q_STATUS] & IN_PROGRESS) == 0:
        return qi[Q_STATUS], 0
    end_ref = qi[Q_END]
    if poly_index(nav, qi[Q_START]) < 0 or poly_index(nav, end_ref) < 0:
        qi[Q_STATUS] = FAILURE
        return FAILURE, 0
    epos = qf[3:6]
    any_angle = (qi[Q_OPTS] & FINDPATH_ANY_ANGLE) != 0
    hit_path = np.zeros(1, np.int64)
    hit_normal = np.zeros(3, np.float32)
    sl = np.empty(3, np.float32)
    sr = np.empty(3, np.float32)
    it = 0
    while it < max_iter and not heap_empty(pool):
        it += 1
        best = heap_pop(pool)
        pool.flags[best] = (pool.flags[best] & ~NODE_OPEN) | NODE_CLOSED
        best_ref = pool.ref[best]
        if best_ref == end_ref:
            qi[Q_BEST] = best
            qi[Q_STATUS] = SUCCESS | (qi[Q_STATUS] & DETAIL_MASK)
            return qi[Q_STATUS], it
        bp = poly_index(nav, best_ref)
        if bp < 0:
            qi[Q_STATUS] = FAILURE
            return FAILURE, it
        par = pool.parent[best]
        parent_ref = np.int64(0)
        grand_ref = np.int64(0)
        if par != -1:
            parent_ref = pool.ref[par]
            gp = pool.parent[par]
            if gp != -1:
                grand_ref = pool.ref[gp]
        if parent_ref != 0:
            if poly_index(nav, parent_ref) < 0 or (
                grand_ref != 0 and poly_index(nav, grand_ref) < 0
            ):
                qi[Q_STATUS] = FAILURE
                return FAILURE, it
        try_los = False
        if any_angle and parent_ref != 0:
            pp = pool.pos[par]
            bpos = pool.pos[best]
            if vdist_sqr(pp[0], pp[1], pp[2], bpos[0], bpos[1], bpos[2]) < qf[7]:
                try_los = True
        area_cost = acost[nav.poly_area[bp]]
        k = nav.poly_link[bp]
        while k != -1:
            nref = nav.link_ref[k]
            k = nav.link_next[k]
            if nref == 0 or nref == parent_ref:
                continue
            npi = poly_index_unsafe(nav, nref)
            if not passes(flt, npi, nav):
                continue
            nn = pool_get(pool, nref, 0)
            if nn == -1:
                qi[Q_STATUS] |= OUT_OF_NODES
                continue
            if pool.parent[nn] != -1 and pool.parent[nn] == pool.parent[best]:
                continue
            if pool.flags[nn] == 0:
                edge_midpoint(nav, bp, nref, npi, best_ref, pool.pos[nn], sl, sr)
            shortcut = False
            ray_cost = F32(0.0)
            if try_los:
                rst, rt, redge, rn, rcost = raycast_kernel(
                    nav, flt, acost, parent_ref, pool.pos[par], pool.pos[nn],
                    RAYCAST_USE_COSTS, grand_ref, hit_path, 0, hit_normal,
                )  # fmt: skip
                shortcut = rt >= F32(1.0)
                ray_cost = rcost
            if shortcut:
                cost = pool.cost[par] + ray_cost
            else:
                cost = pool.cost[best] + _dist(pool.pos[best], pool.pos[nn]) * area_cost
            if nref == end_ref:
                cost = cost + _dist(pool.pos[nn], epos) * acost[nav.poly_area[npi]]
                heur = F32(0.0)
            else:
                heur = _dist(pool.pos[nn], epos) * H_SCALE
            total = cost + heur
            fl = pool.flags[nn]
            if (fl & NODE_OPEN) != 0 and total >= pool.total[nn]:
                continue
            if (fl & NODE_CLOSED) != 0 and total >= pool.total[nn]:
                continue
            pool.parent[nn] = pool.parent[best] if shortcut else best
            fl = fl & ~(NODE_CLOSED | NODE_PARENT_DETACHED)
            if shortcut:
                fl |= NODE_PARENT_DETACHED
            pool.flags[nn] = fl
            pool.cost[nn] = cost
            pool.total[nn] = total
            if (fl & NODE_OPEN) != 0:
                heap_modify(pool, nn)
            else:
                pool.flags[nn] |= NODE_OPEN
                heap_push(pool, nn)
            if heur < qf[6]:
                qf[6] = heur
                qi[Q_BEST] = nn
    if heap_empty(pool):
        qi[Q_STATUS] = SUCCESS | (qi[Q_STATUS] & DETAIL_MASK)
    return qi[Q_STATUS], it


@njit
def _emit_from(nav, pool, flt, acost, qi, node, out, max_path):
    """Reverse the parent chain from node and write it (expanding raycast shortcuts)."""
    prev = -1
    prev_ray = 0
    cur = node
    while cur != -1:
        nxt = pool.parent[cur]
        pool.parent[cur] = prev
        prev = cur
        next_ray = pool.flags[cur] & NODE_PARENT_DETACHED
        pool.flags[cur] = (pool.flags[cur] & ~NODE_PARENT_DETACHED) | prev_ray
        prev_ray = next_ray
        cur = nxt
    n = 0
    cur = prev
    normal = np.zeros(3, np.float32)
    while cur != -1:
        nxt = pool.parent[cur]
        st = np.int64(0)
        if (pool.flags[cur] & NODE_PARENT_DETACHED) != 0 and nxt != -1:
            sub = out[n:]
            rst, rt, redge, rn, rcost = raycast_kernel(
                nav, flt, acost, pool.ref[cur], pool.pos[cur], pool.pos[nxt], 0, np.int64(0),
                sub, max_path - n, normal,
            )  # fmt: skip
            st = rst
            n += rn
            if n > 0 and out[n - 1] == pool.ref[nxt]:
                n -= 1
        else:
            out[n] = pool.ref[cur]
            n += 1
            if n >= max_path:
                st = BUFFER_TOO_SMALL
        if (st & DETAIL_MASK) != 0:
            qi[Q_STATUS] |= st & DETAIL_MASK
            break
        cur = nxt
    return n


@njit(link=False)
def sliced_finalize(nav, pool, flt, acost, qi, out, max_path):
    """Finish a sliced search; returns (status, count) and resets the query state."""
    if (qi[Q_STATUS] & FAILURE) != 0 or max_path <= 0:
        qi[:] = 0
        return FAILURE, 0
    if qi[Q_START] == qi[Q_END]:
        out[0] = qi[Q_START]
        n = 1
    else:
        best = qi[Q_BEST]
        if pool.ref[best] != qi[Q_END]:
            qi[Q_STATUS] |= PARTIAL_RESULT
        n = _emit_from(nav, pool, flt, acost, qi, best, out, max_path)
    details = qi[Q_STATUS] & DETAIL_MASK
    qi[:] = 0
    return SUCCESS | details, n


@njit(link=False)
def sliced_finalize_partial(nav, pool, flt, acost, qi, existing, out, max_path):
    """Finish toward the furthest polygon of ``existing`` that the search visited."""
    if existing.shape[0] == 0 or (qi[Q_STATUS] & FAILURE) != 0 or max_path <= 0:
        qi[:] = 0
        return FAILURE, 0
    if qi[Q_START] == qi[Q_END]:
        out[0] = qi[Q_START]
        n = 1
    else:
        node = -1
        for i in range(existing.shape[0] - 1, -1, -1):
            node = pool_find_any(pool, existing[i])
            if node != -1:
                break
        if node == -1:
            qi[Q_STATUS] |= PARTIAL_RESULT
            node = qi[Q_BEST]
        n = _emit_from(nav, pool, flt, acost, qi, node, out, max_path)
    details = qi[Q_STATUS] & DETAIL_MASK
    qi[:] = 0
    return SUCCESS | details, n


# -- entry points: the same kernels on a packed view descriptor (see _view.pack_view) --
@njit
def find_path_entry(d, pool_d, flt, acost, start_ref, end_ref, spos, epos, max_path, out):
    """:func:`find_path_kernel` on the view described by ``d``."""
    return find_path_kernel(
        open_view(d), open_pool(pool_d), flt, acost, start_ref, end_ref, spos, epos, max_path, out
    )


@njit
def sliced_init_entry(d, pool_d, flt, qi, qf, start_ref, end_ref, spos, epos, options):
    """:func:`sliced_init` on the view described by ``d``."""
    return sliced_init(
        open_view(d), open_pool(pool_d), flt, qi, qf, start_ref, end_ref, spos, epos, options
    )


@njit
def sliced_update_entry(d, pool_d, flt, acost, qi, qf, max_iter):
    """:func:`sliced_update` on the view described by ``d``."""
    return sliced_update(open_view(d), open_pool(pool_d), flt, acost, qi, qf, max_iter)


@njit
def sliced_finalize_entry(d, pool_d, flt, acost, qi, out, max_path):
    """:func:`sliced_finalize` on the view described by ``d``."""
    return sliced_finalize(open_view(d), open_pool(pool_d), flt, acost, qi, out, max_path)


@njit
def sliced_finalize_partial_entry(d, pool_d, flt, acost, qi, existing, out, max_path):
    """:func:`sliced_finalize_partial` on the view described by ``d``."""
    return sliced_finalize_partial(
        open_view(d), open_pool(pool_d), flt, acost, qi, existing, out, max_path
    )
