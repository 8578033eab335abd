"""Numba kernels of the optimal (any-angle) path search; see :mod:`navkit.detour.optimal`.

Prepared mesh (:func:`prepare_kernel`, struct of arrays over "boundary points"):
every walkable polygon p (ground type, passes the filter) gets a counter-clockwise
ring of 2D points ``xy[start[p]:start[p+1]]`` in the plane (x, -z): its corners plus
the ends of every tile portal that covers only part of an edge. Segment j runs from
point j to the next point of the same ring; ``nb[j]`` is the polygon behind it (-1 =
wall: no link, an excluded or off-mesh polygon) and ``twin[j]`` the same segment in
``nb[j]``'s ring. ``vid[j]`` names the mesh vertex at point j (union over shared
segments, so polygons on different storeys never share a vertex); ``corner[v]`` is
True where some wall touches vertex v; ``comp[p]`` labels connected components.

Search nodes (Polyanya, Cui, Harabor & Grastien, ICAPS 2017) are an interval [R, L]
on the entry segment of a polygon and a root point: ``nf`` (N, 8) float64 columns
root x, y, L x, y, R x, y, g, f; ``ni`` (N, 6) int64 columns root vertex (-1 = the
start), polygon, entry segment, flags (1: L is the segment's end point, 2: R is its
start point, 4: goal node), parent, polygon holding the root. L lies toward the
entry segment's first point and is counter-clockwise of R seen from the root.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import njit

from ._poly import closest_point_on_poly
from ._view import open_view, poly_index_unsafe

GOAL = 4
FOUND = 0
NO_PATH = -1
FULL = -2


# -- preparation --------------------------------------------------------------------------
@njit
def _find(par, i):
    r = i
    while par[r] != r:
        r = par[r]
    while par[i] != r:
        nxt = par[i]
        par[i] = r
        i = nxt
    return r


@njit
def prepare_kernel(nav, ok):
    """Build the prepared mesh; returns (xy, start, nb, twin, vid, corner, comp, max_ring)."""
    npoly = ok.shape[0]
    start = np.zeros(npoly + 1, np.int64)
    for p in range(npoly):
        c = 0
        if ok[p]:
            c = nav.poly_nverts[p]
            lk = nav.poly_link[p]
            while lk != -1:
                c += 2
                lk = nav.link_next[lk]
        start[p + 1] = start[p] + c
    total = start[npoly]
    xy = np.zeros((total, 2), np.float64)
    nb = np.full(total, -1, np.int64)
    tmp_t0 = np.zeros(256, np.float64)
    tmp_t1 = np.zeros(256, np.float64)
    tmp_e = np.zeros(256, np.int64)
    tmp_q = np.zeros(256, np.int64)
    out = start.copy()  # fill cursor; final ring ends are written back to start later
    ends = np.zeros(npoly, np.int64)
    for p in range(npoly):
        o = start[p]
        if not ok[p]:
            ends[p] = o
            continue
        n = nav.poly_nverts[p]
        m = 0
        lk = nav.poly_link[p]
        while lk != -1:
            e = nav.link_edge[lk]
            ref = nav.link_ref[lk]
            lk_next = nav.link_next[lk]
            if e < n and ref != 0 and m < 256:
                q = poly_index_unsafe(nav, ref)
                if ok[q]:
                    a0 = nav.poly_verts[p, e]
                    a1 = nav.poly_verts[p, (e + 1) % n]
                    ax = np.float64(nav.verts[a0, 0])
                    az = np.float64(nav.verts[a0, 2])
                    dx = np.float64(nav.verts[a1, 0]) - ax
                    dz = np.float64(nav.verts[a1, 2]) - az
                    dd = dx * dx + dz * dz
                    t0 = 0.0
                    t1 = 1.0
                    if nav.link_side[lk] != 0xFF and dd > 0.0:
                        # tile portal: overlap with the neighbour's matching edge
                        best = -1.0
                        t0 = 1.0
                        t1 = 0.0
                        nq = nav.poly_nverts[q]
                        l2 = nav.poly_link[q]
                        while l2 != -1:
                            e2 = nav.link_edge[l2]
                            if e2 < nq and nav.link_ref[l2] == nav.poly_ref[p]:
                                b0 = nav.poly_verts[q, e2]
                                b1 = nav.poly_verts[q, (e2 + 1) % nq]
                                u0 = (
                                    (nav.verts[b0, 0] - ax) * dx + (nav.verts[b0, 2] - az) * dz
                                ) / dd
                                u1 = (
                                    (nav.verts[b1, 0] - ax) * dx + (nav.verts[b1, 2] - az) * dz
                                ) / dd
                                lo = max(0.0, min(u0, u1))
                                hi = min(1.0, max(u0, u1))
                                if hi - lo > best:
                                    best = hi - lo
                                    t0 = lo
                                    t1 = hi
                            l2 = nav.link_next[l2]
                        if t0 < 1e-7:
                            t0 = 0.0
                        if t1 > 1.0 - 1e-7:
                            t1 = 1.0
                    if (t1 - t0) * np.sqrt(dd) > 1e-6:
                        tmp_t0[m] = t0
                        tmp_t1[m] = t1
                        tmp_e[m] = e
                        tmp_q[m] = q
                        m += 1
            lk = lk_next
        # insertion sort by (edge, t0)
        for i in range(1, m):
            j = i
            while j > 0 and (
                tmp_e[j - 1] > tmp_e[j] or (tmp_e[j - 1] == tmp_e[j] and tmp_t0[j - 1] > tmp_t0[j])
            ):
                tmp_e[j - 1], tmp_e[j] = tmp_e[j], tmp_e[j - 1]
                tmp_t0[j - 1], tmp_t0[j] = tmp_t0[j], tmp_t0[j - 1]
                tmp_t1[j - 1], tmp_t1[j] = tmp_t1[j], tmp_t1[j - 1]
                tmp_q[j - 1], tmp_q[j] = tmp_q[j], tmp_q[j - 1]
                j -= 1
        i = 0
        for e in range(n):
            a0 = nav.poly_verts[p, e]
            a1 = nav.poly_verts[p, (e + 1) % n]
            ax = np.float64(nav.verts[a0, 0])
            az = np.float64(nav.verts[a0, 2])
            dx = np.float64(nav.verts[a1, 0]) - ax
            dz = np.float64(nav.verts[a1, 2]) - az
            xy[o, 0] = ax
            xy[o, 1] = -az
            o += 1
            cur = 0.0
            while i < m and tmp_e[i] == e:
                t0 = max(tmp_t0[i], cur)
                t1 = tmp_t1[i]
                if t1 > t0:
                    if t0 > cur:
                        xy[o, 0] = ax + t0 * dx
                        xy[o, 1] = -(az + t0 * dz)
                        o += 1
                    nb[o - 1] = tmp_q[i]
                    if t1 < 1.0:
                        xy[o, 0] = ax + t1 * dx
                        xy[o, 1] = -(az + t1 * dz)
                        o += 1
                    cur = t1
                i += 1
        ends[p] = o
    # compact the rings
    pos = 0
    for p in range(npoly):
        s = start[p]
        c = ends[p] - s
        for k in range(c):
            xy[pos + k, 0] = xy[s + k, 0]
            xy[pos + k, 1] = xy[s + k, 1]
            nb[pos + k] = nb[s + k]
        out[p] = pos
        pos += c
    out[npoly] = pos
    start = out
    xy = xy[:pos].copy()
    nb = nb[:pos].copy()
    max_ring = 0
    for p in range(npoly):
        max_ring = max(max_ring, start[p + 1] - start[p])
    # twins
    twin = np.full(pos, -1, np.int64)
    for p in range(npoly):
        s = start[p]
        c = start[p + 1] - s
        for j in range(c):
            q = nb[s + j]
            if q < 0:
                continue
            ax = xy[s + j, 0]
            ay = xy[s + j, 1]
            bx = xy[s + (j + 1) % c, 0]
            by = xy[s + (j + 1) % c, 1]
            sq = start[q]
            cq = start[q + 1] - sq
            best = 1e300
            bi = -1
            for k in range(cq):
                if nb[sq + k] != p:
                    continue
                d = abs(xy[sq + k, 0] - bx) + abs(xy[sq + k, 1] - by)
                d += abs(xy[sq + (k + 1) % cq, 0] - ax) + abs(xy[sq + (k + 1) % cq, 1] - ay)
                if d < best:
                    best = d
                    bi = sq + k
            if bi >= 0 and best < 1e-3:
                twin[s + j] = bi
    for j in range(pos):
        if twin[j] < 0 or twin[twin[j]] < 0:
            nb[j] = -1
            twin[j] = -1
    # vertex identities: union the ends of twin segments
    par = np.arange(pos)
    owner = np.zeros(pos, np.int64)
    for p in range(npoly):
        for j in range(start[p], start[p + 1]):
            owner[j] = p
    for j in range(pos):
        t = twin[j]
        if t < 0:
            continue
        p = owner[j]
        q = owner[t]
        jn = start[p] + (j - start[p] + 1) % (start[p + 1] - start[p])
        tn = start[q] + (t - start[q] + 1) % (start[q + 1] - start[q])
        a = _find(par, j)
        b = _find(par, tn)
        if a != b:
            par[a] = b
        a = _find(par, jn)
        b = _find(par, t)
        if a != b:
            par[a] = b
    vid = np.full(pos, -1, np.int64)
    label = np.full(pos, -1, np.int64)
    nv = 0
    for j in range(pos):
        r = _find(par, j)
        if label[r] < 0:
            label[r] = nv
            nv += 1
        vid[j] = label[r]
    corner = np.zeros(nv, np.bool_)
    for p in range(npoly):
        s = start[p]
        c = start[p + 1] - s
        for j in range(c):
            if nb[s + j] < 0 or nb[s + (j + c - 1) % c] < 0:
                corner[vid[s + j]] = True
    # components
    cp = np.arange(npoly)
    for j in range(pos):
        q = nb[j]
        if q >= 0:
            a = _find(cp, owner[j])
            b = _find(cp, q)
            if a != b:
                cp[a] = b
    comp = np.full(npoly, -1, np.int64)
    for p in range(npoly):
        if ok[p]:
            comp[p] = _find(cp, p)
    return xy, start, nb, twin, vid, corner, comp, max_ring


@njit
def closest_reachable_kernel(nav, comp, c, goal):
    """Polygon of component c nearest goal (3D) and that nearest point."""
    best = np.inf
    bp = -1
    tmp = np.empty(3, np.float32)
    bpt = goal.copy()
    for p in range(comp.shape[0]):
        if comp[p] != c:
            continue
        closest_point_on_poly(nav, p, goal, tmp)
        d = 0.0
        for k in range(3):
            d += (np.float64(tmp[k]) - goal[k]) ** 2
        if d < best:
            best = d
            bp = p
            bpt[:] = tmp
    return bp, bpt


# -- search --------------------------------------------------------------------------------
@njit(inline="always")
def _cross(ax, ay, bx, by):
    return ax * by - ay * bx


@njit
def _h(rx, ry, lx, ly, qx, qy, gx, gy):
    """Lower bound of root -> interval [l, q] -> goal (mirror the goal when on the root's side)."""
    dx = qx - lx
    dy = qy - ly
    dd = dx * dx + dy * dy
    cr = _cross(dx, dy, rx - lx, ry - ly)
    cg = _cross(dx, dy, gx - lx, gy - ly)
    if cr * cg > 0.0 and dd > 0.0:
        k = 2.0 * cg / dd
        gx = gx + k * dy
        gy = gy - k * dx
    vx = gx - rx
    vy = gy - ry
    den = _cross(vx, vy, dx, dy)
    if den != 0.0:
        t = _cross(vx, vy, rx - lx, ry - ly) / den
        if -1e-12 <= t <= 1.0 + 1e-12:
            return np.sqrt(vx * vx + vy * vy)
    a = np.sqrt((lx - rx) ** 2 + (ly - ry) ** 2) + np.sqrt((gx - lx) ** 2 + (gy - ly) ** 2)
    b = np.sqrt((qx - rx) ** 2 + (qy - ry) ** 2) + np.sqrt((gx - qx) ** 2 + (gy - qy) ** 2)
    return min(a, b)


@njit
def _less(nf, a, b):
    if nf[a, 7] != nf[b, 7]:
        return nf[a, 7] < nf[b, 7]
    return nf[a, 6] > nf[b, 6]


@njit
def _heap_push(nf, heap, cnt, k):
    i = cnt[1]
    cnt[1] += 1
    heap[i] = k
    while i > 0:
        par = (i - 1) >> 1
        if _less(nf, heap[i], heap[par]):
            heap[i], heap[par] = heap[par], heap[i]
            i = par
        else:
            break


@njit
def _heap_pop(nf, heap, cnt):
    top = heap[0]
    cnt[1] -= 1
    n = cnt[1]
    heap[0] = heap[n]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= n:
            break
        b = a + 1
        c = a
        if b < n and _less(nf, heap[b], heap[a]):
            c = b
        if _less(nf, heap[c], heap[i]):
            heap[i], heap[c] = heap[c], heap[i]
            i = c
        else:
            break
    return top


@njit
def _push(nf, ni, heap, cnt, rx, ry, rv, lx, ly, qx, qy, g, f, poly, seg, flags, parent, rpoly):
    k = cnt[0]
    if k >= nf.shape[0]:
        cnt[2] = 1
        return
    cnt[0] += 1
    nf[k, 0] = rx
    nf[k, 1] = ry
    nf[k, 2] = lx
    nf[k, 3] = ly
    nf[k, 4] = qx
    nf[k, 5] = qy
    nf[k, 6] = g
    nf[k, 7] = f
    ni[k, 0] = rv
    ni[k, 1] = poly
    ni[k, 2] = seg
    ni[k, 3] = flags
    ni[k, 4] = parent
    ni[k, 5] = rpoly
    _heap_push(nf, heap, cnt, k)


@njit
def _root_ok(root_g, stamp, cur, v, g, eps):
    """Root-level pruning: keep g if it is the best seen for vertex v."""
    if stamp[v] != cur:
        stamp[v] = cur
        root_g[v] = g
        return True
    if g > root_g[v] + eps:
        return False
    if g < root_g[v]:
        root_g[v] = g
    return True


@njit
def _emit(M, nf, ni, heap, cnt, base, n, el, u0, u1, rx, ry, rv, g, rpoly, parent, gx, gy, eps):
    """Successors on the chain range [u0, u1] (chain point c = ring point (el + c) % n)."""
    xy, nb, twin = M
    for s in range(1, n):
        a = max(u0 - s, 0.0)
        b = min(u1 - s, 1.0)
        if b <= a:
            continue
        j = base + (el + s) % n
        q = nb[j]
        if q < 0:
            continue
        j2 = base + (el + s + 1) % n
        ax = xy[j, 0]
        ay = xy[j, 1]
        bx = xy[j2, 0]
        by = xy[j2, 1]
        x0 = ax if a == 0.0 else ax + a * (bx - ax)
        y0 = ay if a == 0.0 else ay + a * (by - ay)
        x1 = bx if b == 1.0 else ax + b * (bx - ax)
        y1 = by if b == 1.0 else ay + b * (by - ay)
        if abs(x1 - x0) + abs(y1 - y0) < eps:
            continue
        fl = 0
        if b == 1.0:
            fl |= 1
        if a == 0.0:
            fl |= 2
        h = _h(rx, ry, x1, y1, x0, y0, gx, gy)
        _push(
            nf, ni, heap, cnt, rx, ry, rv, x1, y1, x0, y0, g, g + h, q, twin[j], fl, parent, rpoly
        )


@njit
def _ring_point_at(xy, base, n, x, y, eps):
    """Ring point of the ring xy[base:base + n] at (x, y) (within eps), or -1."""
    for c in range(n):
        j = base + c
        if abs(xy[j, 0] - x) + abs(xy[j, 1] - y) <= eps:
            return j
    return -1


@njit
def _exit_param(s, n, right, eps, xy, base, el):
    """Chain position (segment + fraction) where a cone ray leaves the polygon."""
    c = n - 1
    for k in range(1, n):
        v = s[k + 1]
        if (right and v > eps) or ((not right) and v >= -eps):
            c = k
            break
    s0 = s[c]
    s1 = s[c + 1]
    if right:
        t = 0.0 if s0 >= -eps else s0 / (s0 - s1)
    else:
        if s1 <= eps:
            t = 1.0
        elif s0 >= -eps:
            t = 0.0
        else:
            t = s0 / (s0 - s1)
    j = base + (el + c) % n
    j2 = base + (el + c + 1) % n
    ln = np.sqrt((xy[j2, 0] - xy[j, 0]) ** 2 + (xy[j2, 1] - xy[j, 1]) ** 2)
    if t * ln < eps:
        t = 0.0
    elif (1.0 - t) * ln < eps:
        t = 1.0
    return c + min(max(t, 0.0), 1.0)


@njit
def search_kernel(
    xy, start, nb, twin, vid, corner, sp, sx, sy, gp, gx, gy, eps, nf, ni, heap, cnt,
    root_g, stamp, cur, sc_r, sc_l, cl_stamp, cl_g,
):  # fmt: skip
    """Polyanya from (sx, sy) in polygon sp to (gx, gy) in gp. Returns goal node, NO_PATH or FULL.

    ``root_g``/``stamp`` (per mesh vertex) hold the best g of each root vertex,
    ``cl_stamp``/``cl_g`` (per ring point) the g at which a polygon was expanded
    from a root on that ring point (its whole interior visible); entries whose stamp
    is not ``cur`` are unset.
    """
    M = (xy, nb, twin)
    cnt[0] = 0
    cnt[1] = 0
    cnt[2] = 0
    if sp == gp:
        _push(nf, ni, heap, cnt, sx, sy, -1, gx, gy, gx, gy, 0.0, 0.0, sp, -1, GOAL, -1, sp)
        return 0
    base = start[sp]
    n = start[sp + 1] - base
    jc = _ring_point_at(xy, base, n, sx, sy, eps)
    if jc >= 0:  # a start on a vertex of sp: sp is expanded (closed list, see below)
        cl_stamp[jc] = cur
        cl_g[jc] = 0.0
    for j in range(n):
        q = nb[base + j]
        if q < 0:
            continue
        j2 = base + (j + 1) % n
        h = _h(sx, sy, xy[j2, 0], xy[j2, 1], xy[base + j, 0], xy[base + j, 1], gx, gy)
        _push(
            nf, ni, heap, cnt, sx, sy, -1, xy[j2, 0], xy[j2, 1], xy[base + j, 0], xy[base + j, 1],
            0.0, h, q, twin[base + j], 3, -1, sp,
        )  # fmt: skip
    while cnt[1] > 0:
        if cnt[2]:
            return FULL
        k = _heap_pop(nf, heap, cnt)
        fl = ni[k, 3]
        if fl & GOAL:
            return k
        rv = ni[k, 0]
        g = nf[k, 6]
        if rv >= 0 and stamp[rv] == cur and g > root_g[rv] + eps:
            continue
        rx = nf[k, 0]
        ry = nf[k, 1]
        lx = nf[k, 2]
        ly = nf[k, 3]
        qx = nf[k, 4]
        qy = nf[k, 5]
        Q = ni[k, 1]
        rpoly = ni[k, 5]
        base = start[Q]
        n = start[Q + 1] - base
        el = ni[k, 2] - base
        jl = base + el  # ring point of the entry segment's start (L side)
        jr = base + (el + 1) % n  # its end (R side)
        ilen = np.sqrt((lx - qx) ** 2 + (ly - qy) ** 2)
        if ilen < eps:
            continue
        side = _cross(qx - lx, qy - ly, rx - lx, ry - ly) / ilen
        if side > -eps:
            # the root lies on the entry segment's line
            ex = xy[jr, 0] - xy[jl, 0]
            ey = xy[jr, 1] - xy[jl, 1]
            t = ((rx - xy[jl, 0]) * ex + (ry - xy[jl, 1]) * ey) / (ex * ex + ey * ey)
            elen = np.sqrt(ex * ex + ey * ey)
            if t * elen < -eps or (t - 1.0) * elen > eps:
                # beyond the segment: turn at the nearer interval end (a vertex)
                dl = np.sqrt((lx - rx) ** 2 + (ly - ry) ** 2)
                dr = np.sqrt((qx - rx) ** 2 + (qy - ry) ** 2)
                if dl <= dr:
                    if not fl & 1:
                        continue
                    v = vid[jl]
                    g = g + dl
                    rx = lx
                    ry = ly
                else:
                    if not fl & 2:
                        continue
                    v = vid[jr]
                    g = g + dr
                    rx = qx
                    ry = qy
                if not _root_ok(root_g, stamp, cur, v, g, eps):
                    continue
                rv = v
                rpoly = Q
            # the root is on Q's boundary: all of Q is visible, and the successors depend
            # only on (root point, Q). Expand that pair once per search (closed list): a
            # root at a vertex inside the mesh is surrounded by a closed fan of polygons,
            # and without this the fan is walked round and round at the same g forever.
            jc = _ring_point_at(xy, base, n, rx, ry, eps)
            if jc >= 0:
                if cl_stamp[jc] == cur and g >= cl_g[jc] - eps:
                    continue
                cl_stamp[jc] = cur
                cl_g[jc] = g
            if Q == gp:
                d = np.sqrt((gx - rx) ** 2 + (gy - ry) ** 2)
                _push(
                    nf, ni, heap, cnt, rx, ry, rv, gx, gy, gx, gy, g, g + d, Q, -1, GOAL, k, rpoly
                )
            for c in range(1, n):
                j = base + (el + c) % n
                if nb[j] < 0:
                    continue
                j2 = base + (el + c + 1) % n
                ax = xy[j, 0]
                ay = xy[j, 1]
                bx = xy[j2, 0]
                by = xy[j2, 1]
                sl = np.sqrt((bx - ax) ** 2 + (by - ay) ** 2)
                if abs(_cross(bx - ax, by - ay, rx - ax, ry - ay)) < eps * sl:
                    da = abs(rx - ax) + abs(ry - ay)
                    db = abs(rx - bx) + abs(ry - by)
                    if da > eps and db > eps:
                        continue  # collinear with the root, not touching it
                h = _h(rx, ry, bx, by, ax, ay, gx, gy)
                _push(
                    nf, ni, heap, cnt, rx, ry, rv, bx, by, ax, ay, g, g + h, nb[j], twin[j], 3,
                    k, rpoly,
                )  # fmt: skip
            continue
        # proper cone: rays root->R and root->L
        dR = np.sqrt((qx - rx) ** 2 + (qy - ry) ** 2)
        dL = np.sqrt((lx - rx) ** 2 + (ly - ry) ** 2)
        uxr = (qx - rx) / dR
        uyr = (qy - ry) / dR
        uxl = (lx - rx) / dL
        uyl = (ly - ry) / dL
        for c in range(1, n + 1):
            j = base + (el + c) % n
            px = xy[j, 0] - rx
            py = xy[j, 1] - ry
            sc_r[c] = _cross(uxr, uyr, px, py)
            sc_l[c] = _cross(uxl, uyl, px, py)
        uR = _exit_param(sc_r, n, True, eps, xy, base, el)
        uL = _exit_param(sc_l, n, False, eps, xy, base, el)
        if uL < uR:
            uL = uR
        if Q == gp:
            sg_r = _cross(uxr, uyr, gx - rx, gy - ry)
            sg_l = _cross(uxl, uyl, gx - rx, gy - ry)
            if sg_r >= -eps and sg_l <= eps:
                d = np.sqrt((gx - rx) ** 2 + (gy - ry) ** 2)
                _push(
                    nf, ni, heap, cnt, rx, ry, rv, gx, gy, gx, gy, g, g + d, Q, -1, GOAL, k, rpoly
                )
            elif sg_r < -eps:
                if fl & 2 and corner[vid[jr]]:
                    g2 = g + dR
                    d = np.sqrt((gx - qx) ** 2 + (gy - qy) ** 2)
                    _push(
                        nf, ni, heap, cnt, xy[jr, 0], xy[jr, 1], vid[jr], gx, gy, gx, gy, g2,
                        g2 + d, Q, -1, GOAL, k, Q,
                    )  # fmt: skip
            elif fl & 1 and corner[vid[jl]]:
                g2 = g + dL
                d = np.sqrt((gx - lx) ** 2 + (gy - ly) ** 2)
                _push(
                    nf, ni, heap, cnt, xy[jl, 0], xy[jl, 1], vid[jl], gx, gy, gx, gy, g2, g2 + d,
                    Q, -1, GOAL, k, Q,
                )  # fmt: skip
        _emit(M, nf, ni, heap, cnt, base, n, el, uR, uL, rx, ry, rv, g, rpoly, k, gx, gy, eps)
        if fl & 2 and uR > 1.0 and corner[vid[jr]]:
            v = vid[jr]
            g2 = g + dR
            if _root_ok(root_g, stamp, cur, v, g2, eps):
                _emit(
                    M, nf, ni, heap, cnt, base, n, el, 1.0, uR, xy[jr, 0], xy[jr, 1], v, g2, Q, k,
                    gx, gy, eps,
                )  # fmt: skip
        if fl & 1 and uL < n and corner[vid[jl]]:
            v = vid[jl]
            g2 = g + dL
            if _root_ok(root_g, stamp, cur, v, g2, eps):
                _emit(
                    M, nf, ni, heap, cnt, base, n, el, uL, float(n), xy[jl, 0], xy[jl, 1], v, g2,
                    Q, k, gx, gy, eps,
                )  # fmt: skip
    if cnt[2]:
        return FULL
    return NO_PATH


@njit
def trace_kernel(nf, ni, k, sp, out_xy, out_poly, corridor):
    """Path points (goal first) with the polygon holding each, and the polygon corridor
    (goal first). Returns (n_points, n_corridor)."""
    m = 1
    out_xy[0, 0] = nf[k, 2]
    out_xy[0, 1] = nf[k, 3]
    out_poly[0] = ni[k, 1]
    nc = 0
    cur = k
    while cur >= 0:
        rx = nf[cur, 0]
        ry = nf[cur, 1]
        if rx != out_xy[m - 1, 0] or ry != out_xy[m - 1, 1]:
            out_xy[m, 0] = rx
            out_xy[m, 1] = ry
            out_poly[m] = ni[cur, 5]
            m += 1
        if (ni[cur, 3] & GOAL) == 0 or ni[cur, 4] < 0:
            if nc == 0 or corridor[nc - 1] != ni[cur, 1]:
                corridor[nc] = ni[cur, 1]
                nc += 1
        cur = ni[cur, 4]
    if nc == 0 or corridor[nc - 1] != sp:
        corridor[nc] = sp
        nc += 1
    return m, nc


@njit
def finish_kernel(nav, nf, ni, k, sp, s3, g3, pts, corridor):
    """3D path (start first) and corridor (start first) from goal node k.

    Interior points get the detail-surface height of the polygon holding them.
    Returns (n_points, n_corridor, 3D length).
    """
    m_cap = pts.shape[0]
    xy = np.empty((m_cap, 2), np.float64)
    poly = np.empty(m_cap, np.int64)
    rev = np.empty(corridor.shape[0], np.int64)
    m, nc = trace_kernel(nf, ni, k, sp, xy, poly, rev)
    for i in range(nc):
        corridor[i] = rev[nc - 1 - i]
    if m < 2:
        m = 2
        pts[0, :] = s3
        pts[1, :] = g3
    else:
        q = np.empty(3, np.float32)
        tmp = np.empty(3, np.float32)
        for i in range(m):
            j = m - 1 - i
            if i == 0:
                pts[i, :] = s3
            elif i == m - 1:
                pts[i, :] = g3
            else:
                q[0] = np.float32(xy[j, 0])
                q[1] = np.float32(0.0)
                q[2] = np.float32(-xy[j, 1])
                closest_point_on_poly(nav, poly[j], q, tmp)
                pts[i, 0] = q[0]
                pts[i, 1] = tmp[1]
                pts[i, 2] = q[2]
    length = 0.0
    for i in range(m - 1):
        d = 0.0
        for c in range(3):
            d += (np.float64(pts[i + 1, c]) - np.float64(pts[i, c])) ** 2
        length += np.sqrt(d)
    return m, nc, length


# -- entry points: the same kernels on a packed view descriptor (see _view.pack_view) --
@njit
def prepare_entry(d, ok):
    """:func:`prepare_kernel` on the view described by ``d``."""
    return prepare_kernel(open_view(d), ok)


@njit
def closest_reachable_entry(d, comp, c, goal):
    """:func:`closest_reachable_kernel` on the view described by ``d``."""
    return closest_reachable_kernel(open_view(d), comp, c, goal)


@njit
def finish_entry(d, nf, ni, k, sp, s3, g3, pts, corridor):
    """:func:`finish_kernel` on the view described by ``d``."""
    return finish_kernel(open_view(d), nf, ni, k, sp, s3, g3, pts, corridor)
