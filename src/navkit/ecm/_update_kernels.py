"""numba kernels of the ECM's local updates (:mod:`navkit.ecm._diagram`).

Each kernel does one batched step of an update over the struct-of-arrays of
sites (``kind, ax, ay, bx, by, side, alive``), vertices (``vx, vy, vr``) and the
uniform site grid (``cells, counts, gx0, gy0, h, nx, ny``, see
:class:`navkit.ecm._sites.Sites`), so that Python only orchestrates a few calls
per update:

* :func:`rejoin_candidates` -- for every bisector (a, b) whose vertex set
  changed, order its vertices along the bisector (per branch) and keep the
  consecutive pairs whose midpoint is equidistant from a and b, on their free
  side, with no other site nearer (the empty-circle test over the grid);
* :func:`candidate_vertices` -- the tangent circles of candidate triples that
  no other site enters, with their site sets (the sites at distance rho) and
  whether all of them see the circle on their free side (one grid scan each);
* :func:`near_elements` -- the vertices and edges near an insertion, found by
  walking cells outward from the new points (no scan of the whole diagram);
* :func:`conflict_vertices` / :func:`cut_edge_candidates` -- of those, the
  vertices whose empty circle a set of new sites enters, and the edges a new
  site cuts at their midpoint (the remaining edges near the new sites are
  returned for the exact tangent-circle test).

Formulas are those of :mod:`navkit.ecm.geom` (the readable reference), in the
same float64 operation order.
"""

from __future__ import annotations

import math

import numpy as np

from navkit._jit import njit

from ._kernels import point_in_ring
from ._tangent import _dok, _len, _sok, solve_triples


@njit
def _frame(ax, ay, bx, by):
    dx = bx - ax
    dy = by - ay
    ln = _len(dx, dy)
    ux = dx / ln
    uy = dy / ln
    nx = -uy
    ny = ux
    return ux, uy, nx, ny, nx * ax + ny * ay


@njit
def pair_param(a, b, x, y, kind, ax, ay, bx, by):
    """(branch, t): position of (x, y) along the bisector of sites a, b
    (see :func:`navkit.ecm.geom.pair_param`)."""
    ka = kind[a]
    kb = kind[b]
    if ka == 0 and kb == 0:
        wx = -(ay[b] - ay[a])
        wy = ax[b] - ax[a]
        return 0, x * wx + y * wy
    if ka + kb == 1:
        s = a if ka == 1 else b
        ux, uy, _, _, _ = _frame(ax[s], ay[s], bx[s], by[s])
        return 0, (x - ax[s]) * ux + (y - ay[s]) * uy
    _, _, n1x, n1y, c1 = _frame(ax[a], ay[a], bx[a], by[a])
    _, _, n2x, n2y, c2 = _frame(ax[b], ay[b], bx[b], by[b])
    d1 = n1x * x + n1y * y - c1
    d2 = n2x * x + n2y * y - c2
    br = 1 if d1 * d2 >= 0.0 else -1
    if br == 1:
        gx, gy = n1x - n2x, n1y - n2y
    else:
        gx, gy = n1x + n2x, n1y + n2y
    if gx * gx + gy * gy < 1e-20:
        if br == 1:
            gx, gy = n1x + n2x, n1y + n2y
        else:
            gx, gy = n1x - n2x, n1y - n2y
    return br, x * (-gy) + y * gx


@njit
def pair_point(a, b, x0, y0, x1, y1, kind, ax, ay, bx, by):
    """Bisector point of a, b midway (in parameter) between two of its points
    (see :func:`navkit.ecm.geom.pair_point` with f = 0.5)."""
    _, t0 = pair_param(a, b, x0, y0, kind, ax, ay, bx, by)
    _, t1 = pair_param(a, b, x1, y1, kind, ax, ay, bx, by)
    tm = t0 + 0.5 * (t1 - t0)
    ka = kind[a]
    kb = kind[b]
    if ka == 0 and kb == 0:
        wx = -(ay[b] - ay[a])
        wy = ax[b] - ax[a]
        mx = 0.5 * (ax[a] + ax[b])
        my = 0.5 * (ay[a] + ay[b])
        w2 = wx * wx + wy * wy
        tau = (tm - (mx * wx + my * wy)) / w2
        return mx + tau * wx, my + tau * wy
    if ka + kb == 1:
        s = a if ka == 1 else b
        p = b if ka == 1 else a
        ux, uy, nx, ny, _ = _frame(ax[s], ay[s], bx[s], by[s])
        rx = ax[p] - ax[s]
        ry = ay[p] - ay[s]
        pu = rx * ux + ry * uy
        pv = rx * nx + ry * ny
        if pv == 0.0:
            return x0 + 0.5 * (x1 - x0), y0 + 0.5 * (y1 - y0)
        dt = tm - pu
        yv = (dt * dt + pv * pv) / (2.0 * pv)
        return ax[s] + tm * ux + yv * nx, ay[s] + tm * uy + yv * ny
    return x0 + 0.5 * (x1 - x0), y0 + 0.5 * (y1 - y0)


@njit
def _cell_range(x0, x1, y0, y1, gx0, gy0, h, nx, ny):
    i0 = max(0, min(nx - 1, int(math.floor((x0 - gx0) / h))))
    i1 = max(0, min(nx - 1, int(math.floor((x1 - gx0) / h))))
    j0 = max(0, min(ny - 1, int(math.floor((y0 - gy0) / h))))
    j1 = max(0, min(ny - 1, int(math.floor((y1 - gy0) / h))))
    return i0, i1, j0, j1


@njit
def _blocked(x, y, rho, tol, ex0, ex1, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive):  # fmt: skip
    """Whether an alive site other than ex0, ex1 is nearer than rho - tol to
    (x, y); squared distances, the cells around (x, y) first."""
    lim = rho - tol
    if lim <= 0.0:
        return False
    lim2 = lim * lim
    r = rho + 2 * tol
    i0, i1, j0, j1 = _cell_range(x - r, x + r, y - r, y + r, gx0, gy0, h, nx, ny)
    ci, _, cj, _ = _cell_range(x, x, y, y, gx0, gy0, h, nx, ny)
    a0, a1 = max(i0, ci - 1), min(i1, ci + 1)
    b0, b1 = max(j0, cj - 1), min(j1, cj + 1)
    for rep in range(2):
        for i in range(a0, a1 + 1) if rep == 0 else range(i0, i1 + 1):
            for j in range(b0, b1 + 1) if rep == 0 else range(j0, j1 + 1):
                if rep == 1 and a0 <= i <= a1 and b0 <= j <= b1:
                    continue
                c = i * ny + j
                for t in range(counts[c]):
                    s = cells[c, t]
                    if alive[s] and s != ex0 and s != ex1:
                        if _d2(kind[s], ax[s], ay[s], bx[s], by[s], x, y) < lim2:
                            return True
    return False


@njit(link=False)
def rejoin_candidates(
    pa, pb, ptr, vids, vx, vy, vr, tol, cells, counts, gx0, gy0, h, nx, ny,
    kind, ax, ay, bx, by, side, alive,
):  # fmt: skip
    """Edges of the bisectors (pa[p], pb[p]) whose vertices are ``vids[ptr[p]:ptr[p+1]]``.

    Per bisector, vertices are grouped by branch (a zero-clearance corner
    vertex of two segments lies on both branches) in order of first
    appearance, sorted by (parameter, id), and consecutive ones are joined
    where the bisector point midway between them is tangent to a and b on
    their free side with positive radius and no other site nearer.

    Returns (pair index, v0, v1), (k,) int64 each, in output order.
    """
    npair = pa.shape[0]
    cap = 16 + vids.shape[0] * 2
    out_p = np.empty(cap, np.int64)
    out_0 = np.empty(cap, np.int64)
    out_1 = np.empty(cap, np.int64)
    k = 0
    m = 0
    for p in range(npair):
        m = max(m, ptr[p + 1] - ptr[p])
    bkey = np.empty(2 * m + 2, np.int64)  # branch rank
    tkey = np.empty(2 * m + 2)
    vkey = np.empty(2 * m + 2, np.int64)
    for p in range(npair):
        a = pa[p]
        b = pb[p]
        both = kind[a] == 1 and kind[b] == 1
        n = 0
        # branch ranks in order of first appearance: br values -1, 0, 1
        rank = np.full(3, -1, np.int64)
        nrank = 0
        for q in range(ptr[p], ptr[p + 1]):
            v = vids[q]
            br, t = pair_param(a, b, vx[v], vy[v], kind, ax, ay, bx, by)
            if vr[v] <= tol and both:
                for bb in (1, -1):
                    if rank[bb + 1] < 0:
                        rank[bb + 1] = nrank
                        nrank += 1
                    bkey[n] = rank[bb + 1]
                    tkey[n] = t
                    vkey[n] = v
                    n += 1
            else:
                if rank[br + 1] < 0:
                    rank[br + 1] = nrank
                    nrank += 1
                bkey[n] = rank[br + 1]
                tkey[n] = t
                vkey[n] = v
                n += 1
        # insertion sort by (branch rank, t, v)
        for i in range(1, n):
            kb_, kt, kv = bkey[i], tkey[i], vkey[i]
            j = i - 1
            while j >= 0 and (
                bkey[j] > kb_
                or (bkey[j] == kb_ and (tkey[j] > kt or (tkey[j] == kt and vkey[j] > kv)))
            ):
                bkey[j + 1] = bkey[j]
                tkey[j + 1] = tkey[j]
                vkey[j + 1] = vkey[j]
                j -= 1
            bkey[j + 1] = kb_
            tkey[j + 1] = kt
            vkey[j + 1] = kv
        for i in range(n - 1):
            if bkey[i] != bkey[i + 1]:
                continue
            v0 = vkey[i]
            v1 = vkey[i + 1]
            if tkey[i + 1] - tkey[i] <= 0.0 and vr[v0] > tol and vr[v1] > tol:
                continue
            mx, my = pair_point(a, b, vx[v0], vy[v0], vx[v1], vy[v1], kind, ax, ay, bx, by)
            da, oka = _dok(kind[a], ax[a], ay[a], bx[a], by[a], mx, my, 1e-9)
            if not oka:
                continue
            db, okb = _dok(kind[b], ax[b], ay[b], bx[b], by[b], mx, my, 1e-9)
            if not okb:
                continue
            rho = (da + db) / 2.0
            if max(da, db) - min(da, db) > tol:
                continue
            if not _sok(kind[a], ax[a], ay[a], bx[a], by[a], side[a], mx, my, rho, tol):
                continue
            if not _sok(kind[b], ax[b], ay[b], bx[b], by[b], side[b], mx, my, rho, tol):
                continue
            if rho <= tol:
                continue
            if _blocked(
                mx, my, rho, tol, a, b, cells, counts, gx0, gy0, h, nx, ny,
                kind, ax, ay, bx, by, alive,
            ):  # fmt: skip
                continue
            if k == out_p.shape[0]:
                out_p = np.concatenate((out_p, np.empty(k, np.int64)))
                out_0 = np.concatenate((out_0, np.empty(k, np.int64)))
                out_1 = np.concatenate((out_1, np.empty(k, np.int64)))
            out_p[k] = p
            out_0[k] = v0
            out_1[k] = v1
            k += 1
    return out_p[:k], out_0[:k], out_1[:k]


@njit(link=False)
def conflict_vertices(new, x0, x1, y0, y1, vids, vx, vy, vr, valive, tol, kind, ax, ay, bx, by):
    """The alive vertices of ``vids`` (ascending) whose empty circle a new site
    enters by more than tol (ascending)."""
    out = np.empty(64, np.int64)
    k = 0
    for q in range(vids.shape[0]):
        v = vids[q]
        if not valive[v]:
            continue
        dbx = max(max(x0 - vx[v], vx[v] - x1), 0.0)
        dby = max(max(y0 - vy[v], vy[v] - y1), 0.0)
        lim = vr[v] - tol
        rho = vr[v]
        if not (lim > 0.0 and dbx * dbx + dby * dby < lim * lim):
            continue
        for i in range(new.shape[0]):
            s = new[i]
            d, _ = _dok(kind[s], ax[s], ay[s], bx[s], by[s], vx[v], vy[v], 1e-9)
            if d < rho - tol:
                if k == out.shape[0]:
                    out = np.concatenate((out, np.empty(k, np.int64)))
                out[k] = v
                k += 1
                break
    return out[:k]


@njit(inline="always")
def _append(buf, n, x):
    """``buf[n] = x`` (``buf`` doubled when full); returns (buf, n + 1)."""
    if n == buf.shape[0]:
        buf = np.concatenate((buf, np.empty(n, buf.dtype)))
    buf[n] = x
    return buf, n + 1


@njit(inline="always")
def _append_unseen(buf, n, x, seen):
    """:func:`_append` of ``x`` unless ``seen[x]``, which it sets."""
    if seen[x]:
        return buf, n
    seen[x] = True
    return _append(buf, n, x)


@njit(link=False)
def near_elements(
    seeds, x0, x1, y0, y1, tol, vx, vy, vr, valive, vdeg, vsite, veh, enx, ev, es, ealive,
    shead, rv, rnext, nsite, nv, ne,
):  # fmt: skip
    """The vertices and edges an insertion inside the box (x0..x1, y0..y1) can
    change, found locally: cells are visited outward from the ``seeds`` (the
    sites whose cells hold the new point sites), and from a cell on to every
    cell that shares with it a vertex whose circle (grown by tol) meets the box
    or an edge whose box, grown by its larger end clearance, meets it.

    This finds every vertex in conflict and every edge the new cell cuts: the
    new cell is connected and holds the new points, so every old cell it
    enters is reached across a boundary it crosses, and a boundary it crosses
    has a vertex in conflict or is cut -- both pass the tests above.

    Returns (vertex ids, edge ids), ascending, of the visited cells' vertices
    and edges that pass those tests (the candidates of
    :func:`conflict_vertices` and :func:`cut_edge_candidates`).
    """
    svis = np.zeros(nsite, np.bool_)
    vseen = np.zeros(max(nv, 1), np.bool_)
    eseen = np.zeros(max(ne, 1), np.bool_)
    queue = np.empty(64, np.int64)
    nq = 0
    for i in range(seeds.shape[0]):
        if seeds[i] >= 0:
            queue, nq = _append_unseen(queue, nq, seeds[i], svis)
    vout = np.empty(64, np.int64)
    nvo = 0
    eout = np.empty(64, np.int64)
    neo = 0
    head = 0
    while head < nq:
        s = queue[head]
        head += 1
        r = shead[s]
        while r >= 0:
            v = rv[r]
            r = rnext[r]
            if vseen[v] or not valive[v]:
                continue
            vseen[v] = True
            dbx = max(max(x0 - vx[v], vx[v] - x1), 0.0)
            dby = max(max(y0 - vy[v], vy[v] - y1), 0.0)
            lim = vr[v] + tol
            if dbx * dbx + dby * dby < lim * lim:
                vout, nvo = _append(vout, nvo, v)
                for j in range(vdeg[v]):
                    queue, nq = _append_unseen(queue, nq, vsite[v, j], svis)
            q = veh[v]
            while q >= 0:
                e = q >> 1
                q = enx[q]
                if eseen[e] or not ealive[e]:
                    continue
                eseen[e] = True
                a0 = ev[e, 0]
                a1 = ev[e, 1]
                rr = max(vr[a0], vr[a1]) + tol
                if x1 < min(vx[a0], vx[a1]) - rr or x0 > max(vx[a0], vx[a1]) + rr:
                    continue
                if y1 < min(vy[a0], vy[a1]) - rr or y0 > max(vy[a0], vy[a1]) + rr:
                    continue
                eout, neo = _append(eout, neo, e)
                queue, nq = _append_unseen(queue, nq, es[e, 0], svis)
                queue, nq = _append_unseen(queue, nq, es[e, 1], svis)
    return np.sort(vout[:nvo]), np.sort(eout[:neo])


@njit(link=False)
def cut_edge_candidates(
    new, x0, x1, y0, y1, eids, ev, es, ealive, vkill, vx, vy, vr, tol, kind, ax, ay, bx, by
):  # fmt: skip
    """The alive edges of ``eids`` (ascending) whose box (grown by the larger end
    clearance) meets the new sites' box and whose ends both survive: (cut, rest)
    where ``cut`` are those a new site is nearer to at the bisector midpoint and
    ``rest`` the others (for the exact tangent-circle test)."""
    cut = np.empty(64, np.int64)
    rest = np.empty(64, np.int64)
    nc = 0
    nr = 0
    for qe in range(eids.shape[0]):
        e = eids[qe]
        if not ealive[e]:
            continue
        a0 = ev[e, 0]
        a1 = ev[e, 1]
        r = max(vr[a0], vr[a1])
        if x1 < min(vx[a0], vx[a1]) - r or x0 > max(vx[a0], vx[a1]) + r:
            continue
        if y1 < min(vy[a0], vy[a1]) - r or y0 > max(vy[a0], vy[a1]) + r:
            continue
        if vkill[a0] or vkill[a1]:
            continue
        a = es[e, 0]
        b = es[e, 1]
        mx, my = pair_point(a, b, vx[a0], vy[a0], vx[a1], vy[a1], kind, ax, ay, bx, by)
        rho_m, _ = _dok(kind[a], ax[a], ay[a], bx[a], by[a], mx, my, 1e-9)
        hit = False
        for i in range(new.shape[0]):
            d, _ = _dok(kind[new[i]], ax[new[i]], ay[new[i]], bx[new[i]], by[new[i]], mx, my, 1e-9)
            if d < rho_m - tol:
                hit = True
                break
        if hit:
            if nc == cut.shape[0]:
                cut = np.concatenate((cut, np.empty(nc, np.int64)))
            cut[nc] = e
            nc += 1
        else:
            if nr == rest.shape[0]:
                rest = np.concatenate((rest, np.empty(nr, np.int64)))
            rest[nr] = e
            nr += 1
    return cut[:nc], rest[:nr]


@njit(link=False)
def _circle_sites(
    x, y, rho, tol, ex0, ex1, ex2, cells, counts, gx0, gy0, h, nx, ny,
    kind, ax, ay, bx, by, e0, e1, side, alive, ids, k,
):  # fmt: skip
    """Validate the circle (x, y, rho) of the triple ex0..ex2 with one grid scan:
    blocked if another alive site is nearer than rho - tol; otherwise its site
    set (the sites within rho + tol whose foot lies on them) is appended to
    ``ids`` from ``k`` on (ascending).  The cells around the centre are scanned
    first (a blocked circle is nearly always blocked near its centre).

    A free end point p of a segment g of the set is no site of the circle when
    the centre lies on g's side of the normal line at p by more than tol: p is
    then farther than g by only ~along^2 / (2 rho), within tol for a long way
    along g, but the circle touches g, not p (p's cell ends at that normal line).
    Such a p is dropped from the set, and a circle of a triple holding p is
    blocked (g hides p).

    Returns (-1 blocked | 0 some site sees the circle on its inner side | 1 ok,
    ids (maybe grown), new k).
    """
    r = rho + 2 * tol
    lim = rho - tol
    lim2 = lim * lim if lim > 0.0 else -1.0  # squared: no square root per site
    rad = rho + tol
    rad2 = rad * rad * (1.0 + 1e-9)
    start = k
    good = True
    i0, i1, j0, j1 = _cell_range(x - r, x + r, y - r, y + r, gx0, gy0, h, nx, ny)
    ci, _, cj, _ = _cell_range(x, x, y, y, gx0, gy0, h, nx, ny)
    a0, a1 = max(i0, ci - 1), min(i1, ci + 1)
    b0, b1 = max(j0, cj - 1), min(j1, cj + 1)
    for rep in range(2):
        for i in range(a0, a1 + 1) if rep == 0 else range(i0, i1 + 1):
            for j in range(b0, b1 + 1) if rep == 0 else range(j0, j1 + 1):
                if rep == 1 and a0 <= i <= a1 and b0 <= j <= b1:
                    continue
                c = i * ny + j
                for t in range(counts[c]):
                    s = cells[c, t]
                    if not alive[s]:
                        continue
                    d2 = _d2(kind[s], ax[s], ay[s], bx[s], by[s], x, y)
                    if d2 < lim2 and s != ex0 and s != ex1 and s != ex2:
                        return -1, ids, start
                    if d2 > rad2:
                        continue
                    d, on = _dok(kind[s], ax[s], ay[s], bx[s], by[s], x, y, 1e-9)
                    if not on or d > rad:
                        continue
                    dup = False
                    for u in range(start, k):
                        if ids[u] == s:
                            dup = True
                            break
                    if dup:
                        continue
                    if not _sok(kind[s], ax[s], ay[s], bx[s], by[s], side[s], x, y, rho, tol):
                        good = False
                    if k == ids.shape[0]:
                        ids = np.concatenate((ids, np.empty(k, np.int64)))
                    ids[k] = s
                    k += 1
    # free end points hidden by their own segment (see above)
    drop = False
    for u in range(start, k):
        g = ids[u]
        if kind[g] != 1:
            continue
        dx = bx[g] - ax[g]
        dy = by[g] - ay[g]
        ln = _len(dx, dy)
        ta = ((x - ax[g]) * dx + (y - ay[g]) * dy) / ln
        for end in range(2):
            p = e0[g] if end == 0 else e1[g]
            along = ta if end == 0 else ln - ta
            if along <= tol or p < 0 or side[p] != 1:
                continue
            if p == ex0 or p == ex1 or p == ex2:
                return -1, ids, start
            for w in range(start, k):
                if ids[w] == p:
                    ids[w] = -1
                    drop = True
    if drop:
        n = start
        for u in range(start, k):
            if ids[u] >= 0:
                ids[n] = ids[u]
                n += 1
        k = n
    ids[start:k] = np.sort(ids[start:k])
    return (1 if good else 0), ids, k


@njit
def _d2(k, ax, ay, bx, by, x, y):
    """Squared distance from (x, y) to a site given by its values (kind k, ends
    (ax, ay), (bx, by); a point or a closed segment).  Scalars only."""
    px = x - ax
    py = y - ay
    if k == 1:
        dx = bx - ax
        dy = by - ay
        t = min(1.0, max(0.0, (px * dx + py * dy) / (dx * dx + dy * dy)))
        px -= t * dx
        py -= t * dy
    return px * px + py * py


@njit
def _apart_s(i, j, ki, kj, e0i, e1i, e0j, e1j, oi, oj, ci, cj):
    """Sites i, j of one convex obstacle that share no point, from their values
    (kinds, segment ends, owners, convexity)."""
    if i == j or oi != oj or not (ci and cj):
        return False
    if ki == 1 and (j == e0i or j == e1i):
        return False
    if kj == 1 and (i == e0j or i == e1j):
        return False
    if ki == 1 and kj == 1:
        if e0i == e0j or e0i == e1j or e1i == e0j or e1i == e1j:
            return False
    return True


@njit(link=False)
def candidate_vertices(
    tri, local, kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx, tol,
    cells, counts, gx0, gy0, h, nx, ny,
):  # fmt: skip
    """New Voronoi vertices from candidate triples ((m, 3) int64 site ids): the
    tangent circles (:func:`navkit.ecm._tangent.solve_triples`) that no other
    site enters (by more than tol), with their site sets.

    ``local`` ((k,) int64) are the sites near the update (the triples' sites,
    typically): a circle that one of them enters is rejected before the grid
    scan, which most candidate circles are (same outcome, the scan would find
    the same or another blocking site).

    Returns (xyr (k, 3) float64 [x, y, rho], ok (k,) bool: every site of the set
    sees the circle on its free side, ptr (k+1,), ids (ptr[k],) sorted per circle).
    """
    # two sites of one convex obstacle that share no point never touch the
    # same empty circle (it meets a convex set outside it in one point)
    m = tri.shape[0]
    kept = np.empty((m, 3), np.int64)
    nuse = 0
    for t in range(m):
        i, j, k = tri[t, 0], tri[t, 1], tri[t, 2]
        ki, kj, kk = kind[i], kind[j], kind[k]
        oi, oj, ok_ = owner[i], owner[j], owner[k]
        ci, cj, ck = cvx[i], cvx[j], cvx[k]
        if not (
            _apart_s(i, j, ki, kj, e0[i], e1[i], e0[j], e1[j], oi, oj, ci, cj)
            or _apart_s(i, k, ki, kk, e0[i], e1[i], e0[k], e1[k], oi, ok_, ci, ck)
            or _apart_s(j, k, kj, kk, e0[j], e1[j], e0[k], e1[k], oj, ok_, cj, ck)
        ):
            kept[nuse, 0] = i
            kept[nuse, 1] = j
            kept[nuse, 2] = k
            nuse += 1
    tri = kept[:nuse].copy()
    res = solve_triples(tri, kind, ax, ay, bx, by, e0, e1, side, tol)
    xyr = np.empty((res.shape[0], 3))
    ok = np.empty(res.shape[0], np.bool_)
    ptr = np.zeros(res.shape[0] + 1, np.int64)
    ids = np.empty(16 + 4 * res.shape[0], np.int64)
    k = 0
    n = 0
    for q in range(res.shape[0]):
        t = int(res[q, 3])
        lim = res[q, 2] - tol
        if lim > 0.0:
            lim2 = lim * lim
            blocked = False
            for u in range(local.shape[0]):
                s = local[u]
                if s == tri[t, 0] or s == tri[t, 1] or s == tri[t, 2] or not alive[s]:
                    continue
                if _d2(kind[s], ax[s], ay[s], bx[s], by[s], res[q, 0], res[q, 1]) < lim2:
                    blocked = True
                    break
            if blocked:
                continue
        st, ids, k = _circle_sites(
            res[q, 0], res[q, 1], res[q, 2], tol, tri[t, 0], tri[t, 1], tri[t, 2],
            cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, e0, e1, side, alive,
            ids, k,
        )  # fmt: skip
        if st < 0:
            continue
        xyr[n, 0] = res[q, 0]
        xyr[n, 1] = res[q, 1]
        xyr[n, 2] = res[q, 2]
        ok[n] = st == 1
        ptr[n + 1] = k
        n += 1
    return xyr[:n], ok[:n], ptr[: n + 1], ids[:k]


@njit(entry=True)  # (also called from Python)
def grid_nearest(x, y, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive):
    """Nearest alive site to (x, y) over the grid, rings of cells outwards: (id, distance);
    (-1, inf) if none.  Ties go to the smaller id (as a scan in id order)."""
    ci = max(0, min(nx - 1, int(math.floor((x - gx0) / h))))
    cj = max(0, min(ny - 1, int(math.floor((y - gy0) / h))))
    best = np.inf
    bi = -1
    rmax = max(nx, ny)
    for r in range(rmax + 1):
        for i in range(max(0, ci - r), min(nx - 1, ci + r) + 1):
            edge_i = i == ci - r or i == ci + r
            j = max(0, cj - r)
            while j <= min(ny - 1, cj + r):
                c = i * ny + j
                for t in range(counts[c]):
                    s = cells[c, t]
                    if not alive[s]:
                        continue
                    d, _ = _dok(kind[s], ax[s], ay[s], bx[s], by[s], x, y, 1e-9)
                    if d < best or (d == best and s < bi):
                        best = d
                        bi = s
                if edge_i or j == cj + r:
                    j += 1
                else:
                    j = cj + r  # interior of the ring: jump to its far side
        if best < r * h:
            break
    return bi, best


@njit
def grid_insert(i, kind, ax, ay, bx, by, cells, counts, gx0, gy0, h, nx, ny):
    """Add site ``i`` to every grid cell it comes near (a segment: cells whose
    centre is within half a diagonal of it). Returns False, adding nothing, if
    one of those cells is full (the caller grows ``cells`` and retries)."""
    x0 = ax[i]
    y0 = ay[i]
    x1 = bx[i] if kind[i] == 1 else x0
    y1 = by[i] if kind[i] == 1 else y0
    i0, i1, j0, j1 = _cell_range(
        min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1), gx0, gy0, h, nx, ny
    )
    dx = x1 - x0
    dy = y1 - y0
    ln2 = dx * dx + dy * dy
    for rep in range(2):
        for gi in range(i0, i1 + 1):
            for gj in range(j0, j1 + 1):
                if ln2 > 0:
                    cx = gx0 + (gi + 0.5) * h
                    cy = gy0 + (gj + 0.5) * h
                    t = min(1.0, max(0.0, ((cx - x0) * dx + (cy - y0) * dy) / ln2))
                    if _len(cx - x0 - t * dx, cy - y0 - t * dy) > 0.7072 * h:
                        continue
                c = gi * ny + gj
                if rep == 0:
                    if counts[c] == cells.shape[1]:
                        return False
                else:
                    cells[c, counts[c]] = i
                    counts[c] += 1
    return True


@njit
def grid_insert_ids(ids, k0, kind, ax, ay, bx, by, cells, counts, gx0, gy0, h, nx, ny):
    """:func:`grid_insert` of the sites ``ids[k0:]`` in order; returns the
    position in ``ids`` of the first that did not fit (len(ids) if all did)."""
    for k in range(k0, ids.shape[0]):
        if not grid_insert(ids[k], kind, ax, ay, bx, by, cells, counts, gx0, gy0, h, nx, ny):
            return k
    return ids.shape[0]


@njit(link=False)
def grid_remove(ids, kind, ax, ay, bx, by, cells, counts, gx0, gy0, h, nx, ny):
    """Remove the sites ``ids`` from the grid cells of their boxes (the order
    of the other sites in a cell is kept)."""
    for u in range(ids.shape[0]):
        i = ids[u]
        x1 = bx[i] if kind[i] == 1 else ax[i]
        y1 = by[i] if kind[i] == 1 else ay[i]
        i0, i1, j0, j1 = _cell_range(
            min(ax[i], x1), max(ax[i], x1), min(ay[i], y1), max(ay[i], y1), gx0, gy0, h, nx, ny
        )
        for gi in range(i0, i1 + 1):
            for gj in range(j0, j1 + 1):
                c = gi * ny + gj
                k = 0
                for t in range(counts[c]):
                    if cells[c, t] != i:
                        cells[c, k] = cells[c, t]
                        k += 1
                counts[c] = k


@njit(link=False)
def cut_edges_exact(rest, new, ev, es, vx, vy, vr, tol, kind, ax, ay, bx, by, e0, e1, side):
    """The edges of ``rest`` that a new site cuts strictly inside: a valid tangent
    circle of (new site, a, b) whose bisector parameter lies strictly between
    the edge's end vertices' (on their branch). Returns a (len(rest),) bool mask."""
    nn = new.shape[0]
    m = rest.shape[0]
    tri = np.empty((m * nn, 3), np.int64)
    for q in range(m):
        for i in range(nn):
            tri[q * nn + i, 0] = new[i]
            tri[q * nn + i, 1] = es[rest[q], 0]
            tri[q * nn + i, 2] = es[rest[q], 1]
    res = solve_triples(tri, kind, ax, ay, bx, by, e0, e1, side, tol)
    out = np.zeros(m, np.bool_)
    for r in range(res.shape[0]):
        q = int(res[r, 3]) // nn
        if out[q]:
            continue
        e = rest[q]
        v0 = ev[e, 0]
        v1 = ev[e, 1]
        a = es[e, 0]
        b = es[e, 1]
        br0, t0 = pair_param(a, b, vx[v0], vy[v0], kind, ax, ay, bx, by)
        br1, t1 = pair_param(a, b, vx[v1], vy[v1], kind, ax, ay, bx, by)
        br = br0 if vr[v0] > tol else br1
        b2, t = pair_param(a, b, res[r, 0], res[r, 1], kind, ax, ay, bx, by)
        if b2 == br and min(t0, t1) + tol < t < max(t0, t1) - tol:
            out[q] = True
    return out


@njit
def grid_point_in_ring(x0, y0, x1, y1, rx, ry, cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, owner, alive):  # fmt: skip
    """Whether an alive obstacle point site (owner != 0) in the box
    [x0, x1] x [y0, y1] lies inside the closed ring (rx, ry) (even-odd rule)."""
    i0, i1, j0, j1 = _cell_range(x0, x1, y0, y1, gx0, gy0, h, nx, ny)
    for i in range(i0, i1 + 1):
        for j in range(j0, j1 + 1):
            c = i * ny + j
            for t in range(counts[c]):
                s = cells[c, t]
                if not alive[s] or kind[s] != 0 or owner[s] == 0:
                    continue
                if ax[s] < x0 or ax[s] > x1 or ay[s] < y0 or ay[s] > y1:
                    continue
                if point_in_ring(ax[s], ay[s], rx, ry):
                    return True
    return False
