"""Kernels of :func:`navkit.ecm.path.find_path`: one call answers a query.

``query`` retracts start and goal onto the medial axis, splits their edges at
the retraction points, runs Dijkstra over the route graph, assembles the
route's samples (with the two sites of the edge each lies on), builds the
corridor portals (closest obstacle points shrunk toward the medial axis) and
pulls the string through them (:func:`navkit.ecm._kernels.funnel`).  It is the
same computation, in the same floating-point operations, as the pure-Python
version it replaces (numpy's pairwise summation included, see ``_sum``), so
the results are identical bit for bit.  The one documented difference is the
order in which a retraction scans its candidate edges (first seen in the
diagram's incidence lists, before: a Python set's order), which decides only
exact ties of the ray parameter.

Edge polylines live in a flat cache: points ``P`` (cap, 2) with, per edge id,
``off`` (first row, -1 = not sampled) and ``cnt`` (rows).  A kernel that needs
an unsampled edge samples it (:func:`navkit.ecm._kernels.sample_edge`) and
appends it; when ``P`` is full it returns ``NEED_ROOM`` and the caller grows
``P`` and calls again (what was sampled stays valid).
"""

from __future__ import annotations

import math

import numpy as np

from navkit._jit import njit

from . import _kernels as K

OK = 0
NONE = 1
NEED_ROOM = 2
ARC_SLACK = 1e-3  # see navkit.ecm.path


@njit
def _leaf_sum(a, lo, n):
    """numpy's pairwise summation of ``a[lo:lo + n]`` for ``n <= 128``."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0 = a[lo]
    r1 = a[lo + 1]
    r2 = a[lo + 2]
    r3 = a[lo + 3]
    r4 = a[lo + 4]
    r5 = a[lo + 5]
    r6 = a[lo + 6]
    r7 = a[lo + 7]
    i = 8
    stop = n - (n % 8)
    while i < stop:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit
def _sum(a, lo, n):
    """``np.sum(a[lo:lo + n])`` bit for bit: numpy's pairwise summation (blocks
    of at most 128 with 8 accumulators; above that the sum of the two halves,
    split at a multiple of 8).  The recursion runs on an explicit stack (numba's
    on-disk cache does not handle recursive kernels)."""
    if n <= 128:
        return _leaf_sum(a, lo, n)
    slo = np.empty(192, np.int64)  # tasks: (lo, n, combine?)
    sn = np.empty(192, np.int64)
    sc = np.empty(192, np.bool_)
    vals = np.empty(96)
    nt = 1
    nv = 0
    slo[0] = lo
    sn[0] = n
    sc[0] = False
    while nt > 0:
        nt -= 1
        tl = slo[nt]
        tn = sn[nt]
        if sc[nt]:
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
        elif tn <= 128:
            vals[nv] = _leaf_sum(a, tl, tn)
            nv += 1
        else:
            n2 = tn // 2
            n2 -= n2 % 8
            slo[nt] = tl
            sn[nt] = tn
            sc[nt] = True
            slo[nt + 1] = tl + n2
            sn[nt + 1] = tn - n2
            sc[nt + 1] = False
            slo[nt + 2] = tl
            sn[nt + 2] = n2
            sc[nt + 2] = False
            nt += 3
    return vals[0]


@njit(entry=True)  # (also called from Python)
def plen(q):
    """Length of the polyline ``q`` (k, 2): ``np.sum(np.hypot(*np.diff(q, axis=0).T))``."""
    n = q.shape[0]
    if n <= 1:
        return 0.0
    d = np.empty(n - 1)
    for i in range(n - 1):
        d[i] = math.hypot(q[i + 1, 0] - q[i, 0], q[i + 1, 1] - q[i, 1])
    return _sum(d, 0, n - 1)


@njit
def clr_ok(q, k, ax, ay, bx, by, r):
    """Whether every point of ``q`` (m, 2) is at least ``r`` from the site
    (kind ``k``; a point (ax, ay) or the segment to (bx, by))."""
    best = np.inf
    dx = bx - ax
    dy = by - ay
    ll = dx * dx + dy * dy
    for i in range(q.shape[0]):
        px = q[i, 0] - ax
        py = q[i, 1] - ay
        if k == 1:
            t = (px * dx + py * dy) / ll
            t = max(t, 0.0)
            t = min(t, 1.0)
            px = px - t * dx
            py = py - t * dy
        h = math.hypot(px, py)
        if h < best:
            best = h
    return best >= r


@njit
def ensure(e, off, cnt, P, used, ev, es, vx, vy, kind, ax, ay, bx, by, max_step):
    """Sample edge ``e`` into the flat cache unless it is there; False if ``P``
    has no room for it."""
    if off[e] >= 0:
        return True
    pts, _ = K.sample_edge(e, ev, es, vx, vy, kind, ax, ay, bx, by, max_step)
    k = pts.shape[0]
    u = used[0]
    if u + k > P.shape[0]:
        return False
    for i in range(k):
        P[u + i, 0] = pts[i, 0]
        P[u + i, 1] = pts[i, 1]
    off[e] = u
    cnt[e] = k
    used[0] = u + k
    return True


@njit
def _scan(cand, nc, x, y, ux, uy, dist, off, cnt, P, hit):
    """First crossing of the ray (x, y) + lam (ux, uy) with the polylines of
    ``cand[:nc]`` (all sampled): hit = (edge, piece, fraction); False if none.
    Ties go to the first edge of ``cand``, then the first piece."""
    best = np.inf
    be = -1
    bi = 0
    bmu = 0.0
    lam_min = -1e-9 * (1 + dist)
    for c in range(nc):
        e = cand[c]
        o = off[e]
        for i in range(cnt[e] - 1):
            a0 = P[o + i, 0]
            a1 = P[o + i, 1]
            ex = P[o + i + 1, 0] - a0
            ey = P[o + i + 1, 1] - a1
            den = ux * ey - uy * ex
            if den == 0:
                continue
            lam = ((a0 - x) * ey - (a1 - y) * ex) / den
            mu = ((a0 - x) * uy - (a1 - y) * ux) / den
            if mu >= -1e-12 and mu <= 1 + 1e-12 and lam >= lam_min and lam < best:
                best = lam
                be = e
                bi = i
                bmu = mu
    if be < 0:
        return False
    f = 0.0 if 0.0 > bmu else bmu
    f = 1.0 if 1.0 < f else f
    hit[0] = be
    hit[1] = bi
    hit[2] = f
    return True


@njit(entry=True)  # (also called from Python)
def retract(
    x, y, s, dist,
    ev, es, vx, vy, kind, ax, ay, bx, by,
    shead, rv, rnext, valive, veh, enx,
    off, cnt, P, used, emark, stamp, cbuf, max_step, hit,
):  # fmt: skip
    """Where the ray from the closest point of site ``s`` (at distance ``dist``
    > 0) through (x, y) first meets the medial axis: fills hit = (edge, piece,
    fraction, px, py).  Returns OK, NONE or NEED_ROOM."""
    fx = ax[s]
    fy = ay[s]
    if kind[s] == 1:
        dx = bx[s] - fx
        dy = by[s] - fy
        t = ((x - fx) * dx + (y - fy) * dy) / (dx * dx + dy * dy)
        t = 0.0 if not t > 0.0 else t
        t = 1.0 if not t < 1.0 else t
        fx = fx + t * dx
        fy = fy + t * dy
    ux = (x - fx) / dist
    uy = (y - fy) / dist
    # candidate edges: those ending at a vertex of s, each once
    stamp[0] += 1
    st = stamp[0]
    nc = 0
    if s >= 0 and s < shead.shape[0]:
        rec = shead[s]
        while rec >= 0:
            v = rv[rec]
            rec = rnext[rec]
            if v < 0 or v >= veh.shape[0] or not valive[v]:
                continue
            q = veh[v]
            while q >= 0:
                e = q >> 1
                q = enx[q]
                if emark[e] != st:
                    emark[e] = st
                    cbuf[nc] = e
                    nc += 1
    found = False
    if kind[s] == 1 and nc > 8:
        # a long wall: only the edges whose ends' feet bracket this foot first
        dx = bx[s] - ax[s]
        dy = by[s] - ay[s]
        ln2 = dx * dx + dy * dy
        tx = ((x - ax[s]) * dx + (y - ay[s]) * dy) / ln2
        keep = np.empty(nc, np.int64)
        nk = 0
        for c in range(nc):
            e = cbuf[c]
            v0 = ev[e, 0]
            v1 = ev[e, 1]
            t0 = ((vx[v0] - ax[s]) * dx + (vy[v0] - ay[s]) * dy) / ln2
            t1 = ((vx[v1] - ax[s]) * dx + (vy[v1] - ay[s]) * dy) / ln2
            if min(t0, t1) <= tx + 1e-6 and max(t0, t1) >= tx - 1e-6:
                keep[nk] = e
                nk += 1
        for c in range(nk):
            if not ensure(
                keep[c], off, cnt, P, used, ev, es, vx, vy, kind, ax, ay, bx, by, max_step
            ):
                return NEED_ROOM
        found = _scan(keep, nk, x, y, ux, uy, dist, off, cnt, P, hit)
    if not found:
        for c in range(nc):
            if not ensure(
                cbuf[c], off, cnt, P, used, ev, es, vx, vy, kind, ax, ay, bx, by, max_step
            ):
                return NEED_ROOM
        found = _scan(cbuf, nc, x, y, ux, uy, dist, off, cnt, P, hit)
    if not found:
        return NONE
    o = off[int(hit[0])] + int(hit[1])
    f = hit[2]
    hit[3] = P[o, 0] + f * (P[o + 1, 0] - P[o, 0])
    hit[4] = P[o, 1] + f * (P[o + 1, 1] - P[o, 1])
    return OK


@njit
def _split(P, o, k, i, px, py):
    """Pieces from the retraction point (px, py) on piece ``i`` of the polyline
    P[o:o + k] to its first and to its last point."""
    a = np.empty((i + 2, 2))
    a[0, 0] = px
    a[0, 1] = py
    for j in range(i + 1):
        a[j + 1, 0] = P[o + i - j, 0]
        a[j + 1, 1] = P[o + i - j, 1]
    b = np.empty((k - i, 2))
    b[0, 0] = px
    b[0, 1] = py
    for j in range(k - i - 1):
        b[j + 1, 0] = P[o + i + 1 + j, 0]
        b[j + 1, 1] = P[o + i + 1 + j, 1]
    return a, b


@njit
def _ends(ok0, ok1, v0, v1, piece0, piece1):
    """The end vertices of a split edge that its pieces reach with clearance
    (``ok0``, ``ok1``), with the pieces' lengths: (vertices, costs)."""
    ids = np.empty(2, np.int64)
    cost = np.empty(2)
    n = 0
    if ok0:
        ids[n] = v0
        cost[n] = plen(piece0)
        n += 1
    if ok1:
        ids[n] = v1
        cost[n] = plen(piece1)
        n += 1
    return ids[:n], cost[:n]


@njit
def _cross(ax_, ay_, bx_, by_, cx, cy):
    return (bx_ - ax_) * (cy - ay_) - (by_ - ay_) * (cx - ax_)


@njit
def _route(
    xs0, xs1, xg0, xg1, hs, hg, r, pref, use_pref,
    indptr, nbr, frm, eidx, eids, wgt, nv,
    ev, es, vx, vy, kind, ax, ay, bx, by,
    off, cnt, P, used, max_step,
):  # fmt: skip
    """Route, corridor and path between two retracted points.

    ``hs``/``hg``: the retractions (edge, piece, fraction, px, py) of start
    (xs0, xs1) and goal (xg0, xg1) [wu, local]; ``r`` the agent radius,
    ``pref`` the preferred clearance (used when ``use_pref``); the route graph
    in CSR form (``indptr``, ``nbr``, ``frm``, ``eidx`` -> ``eids``) with
    per-adjacency weights ``wgt`` (inf where too narrow).  Returns (status,
    path (k, 2), centers (n, 2), radii (n,), left (n, 2), right (n, 2),
    edges (q,) int64).
    """
    e_s = int(hs[0])
    e_g = int(hg[0])
    for e in (e_s, e_g):
        if not ensure(e, off, cnt, P, used, ev, es, vx, vy, kind, ax, ay, bx, by, max_step):
            return (
                NEED_ROOM,
                np.empty((0, 2)),
                np.empty((0, 2)),
                np.empty(0),
                np.empty((0, 2)),
                np.empty((0, 2)),
                np.empty(0, np.int64),
            )
    i_s = int(hs[1])
    i_g = int(hg[1])
    s0, s1 = _split(P, off[e_s], cnt[e_s], i_s, hs[3], hs[4])
    g0, g1 = _split(P, off[e_g], cnt[e_g], i_g, hg[3], hg[4])
    a_s = es[e_s, 0]
    a_g = es[e_g, 0]
    vs0 = ev[e_s, 0]
    vs1 = ev[e_s, 1]
    vg0 = ev[e_g, 0]
    vg1 = ev[e_g, 1]
    ks, kg = kind[a_s], kind[a_g]
    ok_s0 = clr_ok(s0, ks, ax[a_s], ay[a_s], bx[a_s], by[a_s], r)
    ok_s1 = clr_ok(s1, ks, ax[a_s], ay[a_s], bx[a_s], by[a_s], r)
    ok_g0 = clr_ok(g0, kg, ax[a_g], ay[a_g], bx[a_g], by[a_g], r)
    ok_g1 = clr_ok(g1, kg, ax[a_g], ay[a_g], bx[a_g], by[a_g], r)
    best_cost = np.inf
    mode = 0  # 0 none, 1 graph route, 2 direct along one edge
    chain = np.empty(0, np.int64)
    v_first = -1
    bv = -1
    if (ok_s0 or ok_s1) and (ok_g0 or ok_g1):
        src, sc = _ends(ok_s0, ok_s1, vs0, vs1, s0, s1)
        dst, dc = _ends(ok_g0, ok_g1, vg0, vg1, g0, g1)
        prev, bv, cost = K.dijkstra(indptr, nbr, wgt, nv, src, sc, dst, dc)
        if bv >= 0 and math.isfinite(cost):
            nch = 0
            v = bv
            while prev[v] >= 0:
                nch += 1
                v = frm[prev[v]]
            chain = np.empty(nch, np.int64)  # adjacency indices, route order
            v = bv
            j = nch
            while prev[v] >= 0:
                j -= 1
                chain[j] = prev[v]
                v = frm[prev[v]]
            v_first = v
            best_cost = cost
            mode = 1
    seg = np.empty((0, 2))
    if e_s == e_g:
        # both on one edge: walk along it directly
        o = off[e_s]
        i0 = i_s + hs[2]
        i1 = i_g + hg[2]
        lo = min(i0, i1)
        hi = max(i0, i1)
        a = int(math.floor(lo)) + 1
        b = min(int(math.ceil(hi)), cnt[e_s])
        nm = max(b - a, 0)
        seg = np.empty((nm + 2, 2))
        seg[0, 0] = hs[3]
        seg[0, 1] = hs[4]
        for j in range(nm):
            jj = a + j if i0 <= i1 else b - 1 - j
            seg[j + 1, 0] = P[o + jj, 0]
            seg[j + 1, 1] = P[o + jj, 1]
        seg[nm + 1, 0] = hg[3]
        seg[nm + 1, 1] = hg[4]
        if clr_ok(seg, ks, ax[a_s], ay[a_s], bx[a_s], by[a_s], r):
            ls = plen(seg)
            if ls <= best_cost:
                best_cost = ls
                mode = 2
    if mode == 0:
        return (
            NONE,
            np.empty((0, 2)),
            np.empty((0, 2)),
            np.empty(0),
            np.empty((0, 2)),
            np.empty((0, 2)),
            np.empty(0, np.int64),
        )
    # ------------------------------------------------ route samples and edges
    if mode == 2:
        n = seg.shape[0]
        m = seg
        sa = np.full(n, es[e_s, 0], np.int64)
        sb = np.full(n, es[e_s, 1], np.int64)
        edges = np.full(1, e_s, np.int64)
    else:
        for j in range(chain.shape[0]):
            if not ensure(
                eids[eidx[chain[j]]],
                off,
                cnt,
                P,
                used,
                ev,
                es,
                vx,
                vy,
                kind,
                ax,
                ay,
                bx,
                by,
                max_step,
            ):
                return (
                    NEED_ROOM,
                    np.empty((0, 2)),
                    np.empty((0, 2)),
                    np.empty(0),
                    np.empty((0, 2)),
                    np.empty((0, 2)),
                    np.empty(0, np.int64),
                )
        first = s1 if (v_first == vs1 and ok_s1) else s0
        last = g1 if (bv == vg1 and ok_g1) else g0  # reversed below
        n = first.shape[0] + last.shape[0]
        for j in range(chain.shape[0]):
            n += cnt[eids[eidx[chain[j]]]]
        m = np.empty((n, 2))
        sa = np.empty(n, np.int64)
        sb = np.empty(n, np.int64)
        k = 0
        for j in range(first.shape[0]):
            m[k, 0] = first[j, 0]
            m[k, 1] = first[j, 1]
            sa[k] = es[e_s, 0]
            sb[k] = es[e_s, 1]
            k += 1
        ne = 1
        prev_e = e_s
        for j in range(chain.shape[0]):
            e = eids[eidx[chain[j]]]
            o = off[e]
            c = cnt[e]
            fwd = ev[e, 0] == frm[chain[j]]
            for t in range(c):
                tt = o + (t if fwd else c - 1 - t)
                m[k, 0] = P[tt, 0]
                m[k, 1] = P[tt, 1]
                sa[k] = es[e, 0]
                sb[k] = es[e, 1]
                k += 1
            ne += 1
            prev_e = e
        nl = last.shape[0]
        for j in range(nl):
            m[k, 0] = last[nl - 1 - j, 0]
            m[k, 1] = last[nl - 1 - j, 1]
            sa[k] = es[e_g, 0]
            sb[k] = es[e_g, 1]
            k += 1
        add_g = e_g != prev_e
        edges = np.empty(ne + (1 if add_g else 0), np.int64)
        edges[0] = e_s
        for j in range(chain.shape[0]):
            edges[j + 1] = eids[eidx[chain[j]]]
        if add_g:
            edges[ne] = e_g
    # ------------------------------------------------ corridor and portals
    px = np.ascontiguousarray(m[:, 0])
    py = np.ascontiguousarray(m[:, 1])
    fa = K.feet(px, py, sa, kind, ax, ay, bx, by)
    fb = K.feet(px, py, sb, kind, ax, ay, bx, by)
    fl = np.empty((n, 2))
    fr = np.empty((n, 2))
    rho = np.empty(n)
    Lp = np.empty((n, 2))
    Rp = np.empty((n, 2))
    slack = 1.0 + ARC_SLACK
    for i in range(n):
        ia = min(i + 1, n - 1)
        ib = max(i - 1, 0)
        dvx = m[ia, 0] - m[ib, 0]
        dvy = m[ia, 1] - m[ib, 1]
        mx = m[i, 0]
        my = m[i, 1]
        if dvx * (fa[i, 1] - my) - dvy * (fa[i, 0] - mx) > 0:
            lx, ly, rx, ry = fa[i, 0], fa[i, 1], fb[i, 0], fb[i, 1]
        else:
            lx, ly, rx, ry = fb[i, 0], fb[i, 1], fa[i, 0], fa[i, 1]
        fl[i, 0] = lx
        fl[i, 1] = ly
        fr[i, 0] = rx
        fr[i, 1] = ry
        h = math.hypot(mx - fa[i, 0], my - fa[i, 1])
        rho[i] = h
        rr = r
        if use_pref:
            rr = min(pref, h)
            rr = max(r, rr)
        t = 1.0
        if h > 0:
            t = min(rr * slack / h, 1.0)
        Lp[i, 0] = lx + (mx - lx) * t
        Lp[i, 1] = ly + (my - ly) * t
        Rp[i, 0] = rx + (mx - rx) * t
        Rp[i, 1] = ry + (my - ry) * t
    # drop portals that the start has already passed or the goal has not reached
    i0 = 0
    i1 = n
    while i0 < i1 and _cross(xs0, xs1, Rp[i0, 0], Rp[i0, 1], Lp[i0, 0], Lp[i0, 1]) <= 0.0:
        i0 += 1
    while (
        i1 > i0
        and _cross(xg0, xg1, Lp[i1 - 1, 0], Lp[i1 - 1, 1], Rp[i1 - 1, 0], Rp[i1 - 1, 1]) <= 0.0
    ):
        i1 -= 1
    q = i1 - i0 + 2
    L = np.empty((q, 2))
    R = np.empty((q, 2))
    L[0, 0] = R[0, 0] = xs0
    L[0, 1] = R[0, 1] = xs1
    for j in range(i1 - i0):
        L[j + 1, 0] = Lp[i0 + j, 0]
        L[j + 1, 1] = Lp[i0 + j, 1]
        R[j + 1, 0] = Rp[i0 + j, 0]
        R[j + 1, 1] = Rp[i0 + j, 1]
    L[q - 1, 0] = R[q - 1, 0] = xg0
    L[q - 1, 1] = R[q - 1, 1] = xg1
    pts = K.funnel(L, R)
    return OK, pts, m, rho, fl, fr, edges


@njit
def query(
    xs0, xs1, xg0, xg1, near_s, dist_s, near_g, dist_g, r, pref, use_pref, ox, oy,
    indptr, nbr, frm, eidx, eids, wgt, nv,
    ev, es, vx, vy, kind, ax, ay, bx, by,
    shead, rv, rnext, valive, veh, enx,
    off, cnt, P, used, emark, stamp, cbuf, max_step,
):  # fmt: skip
    """A whole path query: :func:`retract` start (xs0, xs1) and goal (xg0, xg1)
    (local [wu]; nearest sites ``near_*`` at ``dist_*`` > 0), then the route,
    corridor and path of :func:`_route`, moved to world coordinates by the
    origin (ox, oy).  Returns (status, path (k, 2), its length, route (n + 2,
    2), centers (n, 2), radii (n,), left (n, 2), right (n, 2), edges (q,)
    int64); arrays are empty unless status is OK."""
    hs = np.zeros(5)
    hg = np.zeros(5)
    status = retract(
        xs0, xs1, near_s, dist_s, ev, es, vx, vy, kind, ax, ay, bx, by,
        shead, rv, rnext, valive, veh, enx, off, cnt, P, used, emark, stamp, cbuf, max_step, hs,
    )  # fmt: skip
    if status == OK:
        status = retract(
            xg0, xg1, near_g, dist_g, ev, es, vx, vy, kind, ax, ay, bx, by,
            shead, rv, rnext, valive, veh, enx, off, cnt, P, used, emark, stamp, cbuf, max_step, hg,
        )  # fmt: skip
    if status != OK:
        e2 = np.empty((0, 2))
        return status, e2, 0.0, e2, e2, np.empty(0), e2, e2, np.empty(0, np.int64)
    status, pts, m, rho, fl, fr, edges = _route(
        xs0, xs1, xg0, xg1, hs, hg, r, pref, use_pref,
        indptr, nbr, frm, eidx, eids, wgt, nv,
        ev, es, vx, vy, kind, ax, ay, bx, by,
        off, cnt, P, used, max_step,
    )  # fmt: skip
    if status != OK:
        e2 = np.empty((0, 2))
        return status, e2, 0.0, e2, e2, np.empty(0), e2, e2, np.empty(0, np.int64)
    n = m.shape[0]
    pw = np.empty_like(pts)
    for i in range(pts.shape[0]):
        pw[i, 0] = pts[i, 0] + ox
        pw[i, 1] = pts[i, 1] + oy
    route = np.empty((n + 2, 2))
    route[0, 0] = xs0 + ox
    route[0, 1] = xs1 + oy
    for i in range(n):
        route[i + 1, 0] = m[i, 0] + ox
        route[i + 1, 1] = m[i, 1] + oy
        fl[i, 0] += ox
        fl[i, 1] += oy
        fr[i, 0] += ox
        fr[i, 1] += oy
    route[n + 1, 0] = xg0 + ox
    route[n + 1, 1] = xg1 + oy
    return status, pw, plen(pw), route, route[1 : n + 1].copy(), rho, fl, fr, edges
