"""numba kernels of the ECM: nearest-site distances and graph search.

Sites are stored as struct-of-arrays: ``kind`` (int8, 0 point / 1 segment),
``ax, ay, bx, by`` (float64 [wu]) and ``alive`` (bool).
"""

from __future__ import annotations

import math

import numpy as np

from navkit._jit import njit

from ._tangent import _len


@njit
def _site_dist(k, ax, ay, bx, by, x, y):
    if k == 0:
        return _len(x - ax, y - ay)
    dx = bx - ax
    dy = by - ay
    t = ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    return _len(x - (ax + t * dx), y - (ay + t * dy))


@njit
def nearest_site(x, y, kind, ax, ay, bx, by, alive, n):
    """Nearest alive site to (x, y): (site id, distance)."""
    best = np.inf
    bi = -1
    for s in range(n):
        if not alive[s]:
            continue
        d = _site_dist(kind[s], ax[s], ay[s], bx[s], by[s], x, y)
        if d < best:
            best = d
            bi = s
    return bi, best


@njit
def dijkstra(indptr, nbr, wgt, nv, src, src_cost, dst, dst_cost):
    """Shortest route on a CSR graph with several weighted sources and targets.

    ``src``/``src_cost``: start vertices and their initial costs; ``dst``/``dst_cost``:
    goal vertices and the cost still to add. Returns (prev (nv,) int64: the
    adjacency index by which each vertex was reached, -1 for sources; best goal
    vertex or -1; total cost)."""
    dist = np.full(nv, np.inf)
    prev = np.full(nv, -1, np.int64)
    done = np.zeros(nv, np.bool_)
    cap = 16 + 4 * nbr.shape[0] + src.shape[0]
    hk = np.empty(cap, np.float64)
    hv = np.empty(cap, np.int64)
    hn = 0
    for i in range(src.shape[0]):
        if src_cost[i] < dist[src[i]]:
            dist[src[i]] = src_cost[i]
    for v in range(nv):
        if dist[v] < np.inf:
            # push
            j = hn
            hk[j] = dist[v]
            hv[j] = v
            hn += 1
            while j > 0:
                p = (j - 1) >> 1
                if hk[p] <= hk[j]:
                    break
                hk[p], hk[j] = hk[j], hk[p]
                hv[p], hv[j] = hv[j], hv[p]
                j = p
    goal_add = np.full(nv, np.inf)
    for i in range(dst.shape[0]):
        if dst_cost[i] < goal_add[dst[i]]:
            goal_add[dst[i]] = dst_cost[i]
    best = np.inf
    bestv = -1
    while hn > 0:
        k = hk[0]
        v = hv[0]
        hn -= 1
        hk[0] = hk[hn]
        hv[0] = hv[hn]
        j = 0
        while True:
            l = 2 * j + 1
            if l >= hn:
                break
            r = l + 1
            c = l
            if r < hn and hk[r] < hk[l]:
                c = r
            if hk[j] <= hk[c]:
                break
            hk[c], hk[j] = hk[j], hk[c]
            hv[c], hv[j] = hv[j], hv[c]
            j = c
        if done[v] or k > dist[v]:
            continue
        if k >= best:
            break
        done[v] = True
        if k + goal_add[v] < best:
            best = k + goal_add[v]
            bestv = v
        for e in range(indptr[v], indptr[v + 1]):
            w = nbr[e]
            nd = k + wgt[e]
            if nd < dist[w]:
                dist[w] = nd
                prev[w] = e
                if hn < cap:
                    j = hn
                    hk[j] = nd
                    hv[j] = w
                    hn += 1
                    while j > 0:
                        p = (j - 1) >> 1
                        if hk[p] <= hk[j]:
                            break
                        hk[p], hk[j] = hk[j], hk[p]
                        hv[p], hv[j] = hv[j], hv[p]
                        j = p
    return prev, bestv, best


@njit
def _segdist(px, py, qx, qy, ax, ay, bx, by):
    d1 = (qx - px) * (ay - py) - (qy - py) * (ax - px)
    d2 = (qx - px) * (by - py) - (qy - py) * (bx - px)
    d3 = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
    d4 = (bx - ax) * (qy - ay) - (by - ay) * (qx - ax)
    if ((d1 > 0.0 and d2 < 0.0) or (d1 < 0.0 and d2 > 0.0)) and (
        (d3 > 0.0 and d4 < 0.0) or (d3 < 0.0 and d4 > 0.0)
    ):
        return 0.0
    k1 = 1 if (qx != px or qy != py) else 0
    k2 = 1 if (bx != ax or by != ay) else 0
    d = _site_dist(k1, px, py, qx, qy, ax, ay)
    d = min(d, _site_dist(k1, px, py, qx, qy, bx, by))
    d = min(d, _site_dist(k2, ax, ay, bx, by, px, py))
    d = min(d, _site_dist(k2, ax, ay, bx, by, qx, qy))
    return d


@njit
def first_close_pair(x0, y0, x1, y1, owner, tol):
    """Sweep over x: the first pair of segments of different owners closer than
    ``tol`` (points are zero-length segments), or (-1, -1)."""
    n = x0.shape[0]
    lo = np.minimum(x0, x1)
    order = np.argsort(lo)
    for ii in range(n):
        i = order[ii]
        hi_i = max(x0[i], x1[i]) + tol
        ylo_i = min(y0[i], y1[i]) - tol
        yhi_i = max(y0[i], y1[i]) + tol
        for jj in range(ii + 1, n):
            j = order[jj]
            if lo[j] > hi_i:
                break
            if owner[i] == owner[j]:
                continue
            if max(y0[j], y1[j]) < ylo_i or min(y0[j], y1[j]) > yhi_i:
                continue
            if _segdist(x0[i], y0[i], x1[i], y1[i], x0[j], y0[j], x1[j], y1[j]) <= tol:
                return i, j
    return -1, -1


@njit
def first_nested(px, py, lox, loy, hix, hiy, poly, ptr, rx, ry):
    """Sweep over x: the first (k, c) such that point k (the first corner of
    obstacle k) lies inside polygon obstacle c != k, or (-1, -1).  Boxes
    (lo, hi) per obstacle; ``poly`` marks polygons; rings are
    ``rx[ptr[c]:ptr[c+1]]``, ``ry[...]``."""
    n = px.shape[0]
    order = np.argsort(lox)
    slo = lox[order]
    wmax = 0.0
    for c in range(n):
        wmax = max(wmax, hix[c] - lox[c])
    for k in range(n):
        # boxes whose lo x is in [px - wmax, px]: a = np.searchsorted(slo, px - wmax,
        # "left"), b = np.searchsorted(slo, px, "right") (bisections written out: numba
        # compiles searchsorted once per side)
        v = px[k] - wmax
        a = 0
        top = n
        while a < top:
            mid = (a + top) // 2
            if slo[mid] < v:
                a = mid + 1
            else:
                top = mid
        b = a  # (v <= px[k])
        top = n
        while b < top:
            mid = (b + top) // 2
            if slo[mid] <= px[k]:
                b = mid + 1
            else:
                top = mid
        for q in range(a, b):
            c = order[q]
            if c == k or not poly[c]:
                continue
            if px[k] > hix[c] or py[k] < loy[c] or py[k] > hiy[c]:
                continue
            if point_in_ring(px[k], py[k], rx[ptr[c] : ptr[c + 1]], ry[ptr[c] : ptr[c + 1]]):
                return k, c
    return -1, -1


@njit
def route_csr(ev, nv):
    """Both directions of the edges ``ev`` ((m, 2) vertex ids) as a CSR graph by
    source vertex (a stable counting sort: per source, edges in order, the
    forward direction of all edges before the reverse ones).  Returns (indptr
    (nv + 1,), nbr, src, eidx (2m,) int64: neighbour, source and edge index per
    adjacency)."""
    m = ev.shape[0]
    indptr = np.zeros(nv + 1, np.int64)
    for k in range(2):
        for i in range(m):
            indptr[ev[i, k] + 1] += 1
    for v in range(nv):
        indptr[v + 1] += indptr[v]
    fill = indptr[:-1].copy()
    nbr = np.empty(2 * m, np.int64)
    src = np.empty(2 * m, np.int64)
    eidx = np.empty(2 * m, np.int64)
    for k in range(2):
        for i in range(m):
            a = ev[i, k]
            q = fill[a]
            fill[a] += 1
            nbr[q] = ev[i, 1 - k]
            src[q] = a
            eidx[q] = i
    return indptr, nbr, src, eidx


@njit
def ring_self_touch(x, y):
    """Whether two non-adjacent edges of a closed ring meet."""
    k = x.shape[0]
    for i in range(k):
        i2 = (i + 1) % k
        for j in range(i + 2, k):
            if i == 0 and j == k - 1:
                continue
            j2 = (j + 1) % k
            if _segdist(x[i], y[i], x[i2], y[i2], x[j], y[j], x[j2], y[j2]) == 0.0:
                return True
    return False


@njit(entry=True)  # (also called from Python)
def point_in_ring(x, y, rx, ry):
    """Even-odd test of (x, y) against a closed ring."""
    k = rx.shape[0]
    inside = False
    j = k - 1
    for i in range(k):
        if (ry[i] > y) != (ry[j] > y):
            xi = (rx[j] - rx[i]) * (y - ry[i]) / (ry[j] - ry[i]) + rx[i]
            if x < xi:
                inside = not inside
        j = i
    return inside


@njit
def _cr(ax_, ay_, bx_, by_, cx, cy):
    return (bx_ - ax_) * (cy - ay_) - (by_ - ay_) * (cx - ax_)


@njit
def funnel(L, R):
    """String pulling through portals (L[i], R[i]) ((n, 2) each; L on the
    counter-clockwise side). Portal 0 and n-1 are the start and goal points.
    Returns the path corners (k, 2)."""
    n = L.shape[0]
    out = np.empty((n + 2, 2))
    out[0] = L[0]
    k = 1
    apx, apy = L[0, 0], L[0, 1]
    plx, ply = apx, apy
    prx, pry = apx, apy
    il = 0
    ir = 0
    i = 1
    while i < n:
        lx, ly, rx, ry = L[i, 0], L[i, 1], R[i, 0], R[i, 1]
        if _cr(apx, apy, prx, pry, rx, ry) >= 0.0:
            if (apx == prx and apy == pry) or _cr(apx, apy, plx, ply, rx, ry) < 0.0:
                prx, pry, ir = rx, ry, i
            else:
                apx, apy = plx, ply
                out[k, 0], out[k, 1] = apx, apy
                k += 1
                prx, pry = apx, apy
                ir = il
                i = il + 1
                continue
        if _cr(apx, apy, plx, ply, lx, ly) <= 0.0:
            if (apx == plx and apy == ply) or _cr(apx, apy, prx, pry, lx, ly) > 0.0:
                plx, ply, il = lx, ly, i
            else:
                apx, apy = prx, pry
                out[k, 0], out[k, 1] = apx, apy
                k += 1
                plx, ply = apx, apy
                il = ir
                i = ir + 1
                continue
        i += 1
    if not (out[k - 1, 0] == L[n - 1, 0] and out[k - 1, 1] == L[n - 1, 1]):
        out[k] = L[n - 1]
        k += 1
    return out[:k].copy()


@njit
def feet(px, py, sid, kind, ax, ay, bx, by):
    """Closest point of site sid[i] to (px[i], py[i]) for every i: (m, 2)."""
    m = px.shape[0]
    out = np.empty((m, 2))
    for i in range(m):
        s = sid[i]
        if kind[s] == 0:
            out[i, 0] = ax[s]
            out[i, 1] = ay[s]
        else:
            dx = bx[s] - ax[s]
            dy = by[s] - ay[s]
            t = ((px[i] - ax[s]) * dx + (py[i] - ay[s]) * dy) / (dx * dx + dy * dy)
            t = min(1.0, max(0.0, t))
            out[i, 0] = ax[s] + t * dx
            out[i, 1] = ay[s] + t * dy
    return out


@njit
def grid_seg_min_dist(
    px, py, qx, qy, tol, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive
):
    """Smallest distance between segment pq and the alive sites in the grid cells
    its box (grown by ``tol``) touches; inf if none there."""
    best = np.inf
    i0 = max(0, min(nx - 1, int(math.floor((min(px, qx) - tol - gx0) / h))))
    i1 = max(0, min(nx - 1, int(math.floor((max(px, qx) + tol - gx0) / h))))
    j0 = max(0, min(ny - 1, int(math.floor((min(py, qy) - tol - gy0) / h))))
    j1 = max(0, min(ny - 1, int(math.floor((max(py, qy) + tol - gy0) / h))))
    for i in range(i0, i1 + 1):
        for j in range(j0, j1 + 1):
            c = i * ny + j
            for t in range(counts[c]):
                s = cells[c, t]
                if not alive[s]:
                    continue
                if kind[s] == 0:
                    d = _segdist(px, py, qx, qy, ax[s], ay[s], ax[s], ay[s])
                else:
                    d = _segdist(px, py, qx, qy, ax[s], ay[s], bx[s], by[s])
                if d < best:
                    best = d
    return best


@njit
def _bis_point(ps, x0, y0, x1, y1, t0, t1, f, sax, say, ux, uy, nx, ny, pu, pv):
    """Point at fraction f of a bisector piece: straight (ps == 0) or parabolic."""
    if ps == 0:
        return x0 + f * (x1 - x0), y0 + f * (y1 - y0)
    tm = t0 + f * (t1 - t0)
    yv = ((tm - pu) ** 2 + pv * pv) / (2.0 * pv)
    return sax + tm * ux + yv * nx, say + tm * uy + yv * ny


@njit
def sample_bisector(
    ps, x0, y0, x1, y1, t0, t1, sax, say, ux, uy, nx, ny, pu, pv, npt, qx, qy, fmin, max_step, n0
):
    """Fractions and points of a bisector piece, split until the direction to each
    of the ``npt`` point sites (qx, qy) turns by at most ``max_step`` [rad]
    between samples; ``fmin`` (in (0, 1), else ignored) is always a sample."""
    cap = 64
    fr = np.empty(cap)
    px = np.empty(cap)
    py = np.empty(cap)
    k = 0
    # initial uniform grid (plus fmin)
    stack_f = np.empty(4096)
    sp = 0
    base = np.empty(n0 + 2)
    nb = 0
    for i in range(n0 + 1):
        base[nb] = i / n0
        nb += 1
    if 0.0 < fmin < 1.0:
        base[nb] = fmin
        nb += 1
    base = np.sort(base[:nb])
    for i in range(nb - 1, 0, -1):
        if sp + 2 <= stack_f.shape[0]:
            stack_f[sp] = base[i - 1]
            stack_f[sp + 1] = base[i]
            sp += 2
    x, y = _bis_point(ps, x0, y0, x1, y1, t0, t1, base[0], sax, say, ux, uy, nx, ny, pu, pv)
    fr[0] = base[0]
    px[0] = x
    py[0] = y
    k = 1
    while sp > 0:
        sp -= 2
        fa = stack_f[sp]
        fb = stack_f[sp + 1]
        xa, ya = _bis_point(ps, x0, y0, x1, y1, t0, t1, fa, sax, say, ux, uy, nx, ny, pu, pv)
        xb, yb = _bis_point(ps, x0, y0, x1, y1, t0, t1, fb, sax, say, ux, uy, nx, ny, pu, pv)
        split = False
        for q in range(npt):
            a1 = math.atan2(ya - qy[q], xa - qx[q])
            a2 = math.atan2(yb - qy[q], xb - qx[q])
            da = abs((a2 - a1 + math.pi) % (2 * math.pi) - math.pi)
            if da > max_step:
                split = True
        if split and fb - fa > 1e-6 and sp + 4 <= stack_f.shape[0]:
            fm = 0.5 * (fa + fb)
            stack_f[sp] = fm
            stack_f[sp + 1] = fb
            stack_f[sp + 2] = fa
            stack_f[sp + 3] = fm
            sp += 4
            continue
        if k == cap:
            cap *= 2
            nf = np.empty(cap)
            nx_ = np.empty(cap)
            ny_ = np.empty(cap)
            nf[:k] = fr[:k]
            nx_[:k] = px[:k]
            ny_[:k] = py[:k]
            fr, px, py = nf, nx_, ny_
        fr[k] = fb
        px[k] = xb
        py[k] = yb
        k += 1
    out = np.empty((k, 2))
    out[:, 0] = px[:k]
    out[:, 1] = py[:k]
    return fr[:k].copy(), out


@njit
def _pt_seg_dist(px, py, x0, y0, x1, y1):
    dx = x1 - x0
    dy = y1 - y0
    ll = dx * dx + dy * dy
    t = 0.0
    if ll > 0.0:
        t = min(1.0, max(0.0, ((px - x0) * dx + (py - y0) * dy) / ll))
    return _len(px - (x0 + t * dx), py - (y0 + t * dy))


@njit
def _asinh_area(u):
    return 0.5 * (u * math.sqrt(1.0 + u * u) + math.asinh(u))


@njit
def edge_stats(eids, ev, es, vx, vy, kind, ax, ay, bx, by):
    """Exact length [wu] and least clearance [wu] of each medial-axis edge, in
    closed form (no sampling).

    A point-segment bisector is a parabola piece: in the segment's frame
    (u along it, n its left normal, the point at (pu, pv)) the centre at
    parameter t is at height ((t - pu)^2 + pv^2) / (2 pv), which is also its
    clearance; the arc length is |pv| [F(w)] with w = (t - pu) / pv and
    F(w) = (w sqrt(1 + w^2) + asinh w) / 2.  Other bisectors are straight: the
    clearance to a point site is its distance to the chord; to a segment site
    it is monotone along the piece (least at an end).

    Returns (length (m,), minclr (m,)) float64.
    """
    m = eids.shape[0]
    length = np.empty(m)
    minclr = np.empty(m)
    for q in range(m):
        e = eids[q]
        v0 = ev[e, 0]
        v1 = ev[e, 1]
        a = es[e, 0]
        b = es[e, 1]
        x0 = vx[v0]
        y0 = vy[v0]
        x1 = vx[v1]
        y1 = vy[v1]
        done = False
        if kind[a] + kind[b] == 1:
            sg = a if kind[a] == 1 else b
            pt = b if kind[a] == 1 else a
            dx = bx[sg] - ax[sg]
            dy = by[sg] - ay[sg]
            ln = _len(dx, dy)
            ux = dx / ln
            uy = dy / ln
            nx = -uy
            ny = ux
            rx = ax[pt] - ax[sg]
            ry = ay[pt] - ay[sg]
            pu = rx * ux + ry * uy
            pv = rx * nx + ry * ny
            if pv != 0.0:
                t0 = (x0 - ax[sg]) * ux + (y0 - ay[sg]) * uy
                t1 = (x1 - ax[sg]) * ux + (y1 - ay[sg]) * uy
                w0 = (t0 - pu) / pv
                w1 = (t1 - pu) / pv
                length[q] = abs(pv) * abs(_asinh_area(w1) - _asinh_area(w0))
                apv = abs(pv)
                c0 = ((t0 - pu) ** 2 + pv * pv) / (2.0 * apv)
                c1 = ((t1 - pu) ** 2 + pv * pv) / (2.0 * apv)
                c = min(c0, c1)
                if min(t0, t1) < pu < max(t0, t1):
                    c = min(c, 0.5 * apv)
                # never above the clearance the end vertices were found with
                c = min(c, _len(x0 - ax[pt], y0 - ay[pt]), _len(x1 - ax[pt], y1 - ay[pt]))
                minclr[q] = c
                done = True
        if not done:
            length[q] = _len(x1 - x0, y1 - y0)
            if kind[a] == 0:
                minclr[q] = _pt_seg_dist(ax[a], ay[a], x0, y0, x1, y1)
            elif kind[b] == 0:
                minclr[q] = _pt_seg_dist(ax[b], ay[b], x0, y0, x1, y1)
            else:
                minclr[q] = min(
                    _site_dist(1, ax[a], ay[a], bx[a], by[a], x0, y0),
                    _site_dist(1, ax[a], ay[a], bx[a], by[a], x1, y1),
                )
    return length, minclr


@njit(entry=True)  # (also called from Python)
def sample_edge(e, ev, es, vx, vy, kind, ax, ay, bx, by, max_step):
    """Samples of medial-axis edge ``e`` (see :func:`sample_bisector`): points
    (k, 2) from its first to its last vertex and their clearance (k,) [wu]."""
    v0 = ev[e, 0]
    v1 = ev[e, 1]
    a = es[e, 0]
    b = es[e, 1]
    x0 = vx[v0]
    y0 = vy[v0]
    x1 = vx[v1]
    y1 = vy[v1]
    qx = np.zeros(3)
    qy = np.zeros(3)
    npt = 0
    for s in (a, b):
        if kind[s] == 0:
            qx[npt] = ax[s]
            qy[npt] = ay[s]
            npt += 1
    ps = 0
    t0 = t1 = sax = say = ux = uy = nx = ny = pu = pv = 0.0
    fmin = -1.0
    if kind[a] + kind[b] == 1:
        sg = a if kind[a] == 1 else b
        pt = b if kind[a] == 1 else a
        dx = bx[sg] - ax[sg]
        dy = by[sg] - ay[sg]
        ln = _len(dx, dy)
        ux = dx / ln
        uy = dy / ln
        nx = -uy
        ny = ux
        sax = ax[sg]
        say = ay[sg]
        rx = ax[pt] - sax
        ry = ay[pt] - say
        pu = rx * ux + ry * uy
        pv = rx * nx + ry * ny
        t0 = (x0 - sax) * ux + (y0 - say) * uy
        t1 = (x1 - sax) * ux + (y1 - say) * uy
        if pv != 0.0:
            ps = 1
            if t1 != t0:
                fmin = (pu - t0) / (t1 - t0)  # the parabola's vertex: least clearance
    elif kind[a] == 0 and kind[b] == 0:
        mx = 0.5 * (ax[a] + ax[b])
        my = 0.5 * (ay[a] + ay[b])
        ex = x1 - x0
        ey = y1 - y0
        ee = ex * ex + ey * ey
        if ee > 0:
            fmin = ((mx - x0) * ex + (my - y0) * ey) / ee  # midpoint of the two points
    n0 = 4 if npt > 0 else 1
    _, pts = sample_bisector(
        ps, x0, y0, x1, y1, t0, t1, sax, say, ux, uy, nx, ny, pu, pv,
        npt, qx, qy, fmin, max_step, n0,
    )  # fmt: skip
    k = pts.shape[0]
    pts[0, 0] = x0
    pts[0, 1] = y0
    pts[k - 1, 0] = x1
    pts[k - 1, 1] = y1
    sid = np.full(k, a, np.int64)
    f = feet(pts[:, 0].copy(), pts[:, 1].copy(), sid, kind, ax, ay, bx, by)
    clr = np.empty(k)
    for i in range(k):
        clr[i] = _len(pts[i, 0] - f[i, 0], pts[i, 1] - f[i, 1])
    return pts, clr
