"""numba kernels that hold and change the ECM's vertex/edge index in place.

The index (:class:`navkit.ecm._diagram.Diagram`) is a set of flat arrays:

* vertices: ``vx, vy, vr`` (position, clearance), ``valive``, ``vdeg`` and the
  fixed-width rows ``vsite`` (the vertex's sites, ascending) with ``vrec`` (the
  incidence record of each of those sites), ``veh`` (head of the vertex's list
  of edge ends) and the free-slot stack ``vfree``;
* incidence records ``rv`` (vertex of the record), ``rnext, rprev``: for every
  site a doubly linked list of its vertices headed by ``shead[site]``, records
  recycled through the stack ``rfree``;
* edges: ``ev`` (end vertices), ``es`` (sites, a < b), ``ealive``; edge end
  ``2 e + k`` (k = 0, 1) sits in the doubly linked list of vertex ``ev[e, k]``
  (``enx, epv``); free slots on the stack ``efree``;
* ``cnt``: counters (see the constants below) and the per-update logs of touched
  vertices and edges (``tvmark/tvlog``, ``temark/telog``; a mark equal to the
  current stamp means "already logged").

All insertions and deletions are O(1) list operations, so a local update
changes the index without touching anything but its neighbourhood.  The update
steps are fused into one kernel call: :func:`insert_prepare` /
:func:`delete_prepare` find and delete the conflicting part, solve the
candidate circles, add the new vertices (:func:`commit_vertices`, merging
coincident ones) and re-join the bisectors whose vertex sets changed
(:func:`rejoin_pairs`) when the arrays have room.  Otherwise the caller grows
them and calls :func:`commit_vertices` / :func:`rejoin_pairs` itself
(:func:`rejoin_pairs` reports the edge room it lacks before changing anything).  The geometry is that of
:mod:`navkit.ecm._update_kernels`.  Kernels raise, never write out of bounds,
if they were given too little room.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import borrow, njit

from . import _update_kernels as U

# counters in ``cnt``
NV = 0  # vertex slots in use (high-water mark)
NVF = 1  # free vertex slots on ``vfree``
NE = 2  # edge slots in use (high-water mark)
NEF = 3  # free edge slots on ``efree``
NRF = 4  # free incidence records on ``rfree``
NTV = 5  # vertices logged as touched in this update
NTE = 6  # edges logged as touched in this update
STAMP = 7  # touched-log stamp of this update
MAXDEG = 8  # largest vertex degree (sites) seen
NCNT = 9


# ---------------------------------------------------------------- list helpers
@njit
def _link(i, owner, head, nxt, prv):
    h = head[owner]
    nxt[i] = h
    prv[i] = -1
    if h >= 0:
        prv[h] = i
    head[owner] = i


@njit
def _unlink(i, owner, head, nxt, prv):
    p = prv[i]
    n = nxt[i]
    if p >= 0:
        nxt[p] = n
    else:
        head[owner] = n
    if n >= 0:
        prv[n] = p


@njit
def _touch(i, mark, log, cnt, slot):
    if mark[i] != cnt[STAMP]:
        mark[i] = cnt[STAMP]
        log[cnt[slot]] = i
        cnt[slot] += 1


# ----------------------------------------------------------------------- edges
@njit
def _edge_add(v0, v1, a, b, ev, es, ealive, enx, epv, efree, veh, cnt, temark, telog):
    if a > b:
        a, b = b, a
    if cnt[NEF] > 0:
        cnt[NEF] -= 1
        e = efree[cnt[NEF]]
    else:
        e = cnt[NE]
        if e >= ealive.shape[0]:
            raise ValueError("ECM index: edge capacity exhausted")
        cnt[NE] += 1
    ev[e, 0] = v0
    ev[e, 1] = v1
    es[e, 0] = a
    es[e, 1] = b
    ealive[e] = True
    _link(2 * e, v0, veh, enx, epv)
    _link(2 * e + 1, v1, veh, enx, epv)
    _touch(e, temark, telog, cnt, NTE)
    return e


@njit
def _edge_kill(e, ev, ealive, enx, epv, efree, veh, cnt, temark, telog):
    ealive[e] = False
    efree[cnt[NEF]] = e
    cnt[NEF] += 1
    _unlink(2 * e, ev[e, 0], veh, enx, epv)
    _unlink(2 * e + 1, ev[e, 1], veh, enx, epv)
    _touch(e, temark, telog, cnt, NTE)


@njit
def add_edges(
    ev_in, es_in, ev, es, ealive, enx, epv, efree, veh, cnt, temark, telog
):  # fmt: skip
    """Add edges ``ev_in[i]`` (end vertices) with sites ``es_in[i]`` (bulk load)."""
    for i in range(ev_in.shape[0]):
        _edge_add(
            ev_in[i, 0], ev_in[i, 1], es_in[i, 0], es_in[i, 1],
            ev, es, ealive, enx, epv, efree, veh, cnt, temark, telog,
        )  # fmt: skip


# -------------------------------------------------------------------- vertices
@njit
def _vertex_find(x, y, sids, lo, hi, t, vx, vy, shead, rv, rnext):
    """An alive vertex within ``t`` (per coordinate) of (x, y) among the vertices
    of the sites ``sids[lo:hi]``, or -1."""
    for q in range(lo, hi):
        r = shead[sids[q]]
        while r >= 0:
            v = rv[r]
            if abs(vx[v] - x) <= t and abs(vy[v] - y) <= t:
                return v
            r = rnext[r]
    return -1


@njit
def _vertex_add_site(v, s, vdeg, vsite, vrec, shead, rv, rnext, rprev, rfree, cnt):
    """Add site ``s`` to vertex ``v`` (kept ascending; nothing if present)."""
    d = vdeg[v]
    for j in range(d):
        if vsite[v, j] == s:
            return
    if d == vsite.shape[1]:
        raise ValueError("ECM index: vertex width exhausted")
    if cnt[NRF] == 0:
        raise ValueError("ECM index: incidence records exhausted")
    cnt[NRF] -= 1
    rec = rfree[cnt[NRF]]
    rv[rec] = v
    _link(rec, s, shead, rnext, rprev)
    j = d
    while j > 0 and vsite[v, j - 1] > s:
        vsite[v, j] = vsite[v, j - 1]
        vrec[v, j] = vrec[v, j - 1]
        j -= 1
    vsite[v, j] = s
    vrec[v, j] = rec
    vdeg[v] = d + 1
    if d + 1 > cnt[MAXDEG]:
        cnt[MAXDEG] = d + 1


@njit
def _vertex_kill(
    v, vdeg, vsite, vrec, valive, veh, vfree, shead, rnext, rprev, rfree,
    ev, ealive, enx, epv, efree, cnt, tvmark, tvlog, temark, telog,
):  # fmt: skip
    """Delete vertex ``v`` and its edges; its slot and records are recycled."""
    while veh[v] >= 0:
        _edge_kill(veh[v] >> 1, ev, ealive, enx, epv, efree, veh, cnt, temark, telog)
    for j in range(vdeg[v]):
        rec = vrec[v, j]
        _unlink(rec, vsite[v, j], shead, rnext, rprev)
        rfree[cnt[NRF]] = rec
        cnt[NRF] += 1
    vdeg[v] = 0
    valive[v] = False
    vfree[cnt[NVF]] = v
    cnt[NVF] += 1
    _touch(v, tvmark, tvlog, cnt, NTV)


@njit(entry=True, link=False)  # (also called from Python)
def commit_vertices(
    xyr, ok, ptr, ids, corners, pairs, merge, tol,
    vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree,
    shead, rv, rnext, rprev, rfree, ax, ay,
    cnt, tvmark, tvlog,
):  # fmt: skip
    """Add the circles ``xyr[i]`` with ``ok[i]`` as vertices tangent to the sites
    ``ids[ptr[i]:ptr[i+1]]``, then the zero-clearance corner vertices
    ``corners`` ((k, 3) int64 rows (s_in, p, s_out), at point site p).  With
    ``merge``, a new vertex within 10 tol of an existing vertex of one of its
    sites is merged into it (union of the site sets).

    Returns (vertex id per circle (-1 where not ok) and per corner, concatenated;
    the (m, 2) ascending unique site pairs of ``pairs`` and of every added or
    merged vertex).
    """
    nc = xyr.shape[0]
    out = np.full(nc + corners.shape[0], -1, np.int64)
    cid = np.empty(3, np.int64)
    t = tol * 10
    for i in range(nc + corners.shape[0]):
        if i < nc:
            if not ok[i]:
                continue
            x = xyr[i, 0]
            y = xyr[i, 1]
            r = xyr[i, 2]
            src = ids
            lo = ptr[i]
            hi = ptr[i + 1]
        else:
            c = i - nc
            cid[0] = corners[c, 0]
            cid[1] = corners[c, 1]
            cid[2] = corners[c, 2]
            p = corners[c, 1]
            x = ax[p]
            y = ay[p]
            r = 0.0
            src = cid
            lo = 0
            hi = 3
        v = -1
        if merge:
            v = _vertex_find(x, y, src, lo, hi, t, vx, vy, shead, rv, rnext)
        if v < 0:
            if cnt[NVF] > 0:
                cnt[NVF] -= 1
                v = vfree[cnt[NVF]]
            else:
                v = cnt[NV]
                if v >= valive.shape[0]:
                    raise ValueError("ECM index: vertex capacity exhausted")
                cnt[NV] += 1
            vx[v] = x
            vy[v] = y
            vr[v] = r
            valive[v] = True
            vdeg[v] = 0
            veh[v] = -1
        for q in range(lo, hi):
            _vertex_add_site(v, src[q], vdeg, vsite, vrec, shead, rv, rnext, rprev, rfree, cnt)
        _touch(v, tvmark, tvlog, cnt, NTV)
        out[i] = v
    # site pairs of the given pairs and of every vertex made
    npair = pairs.shape[0]
    for i in range(out.shape[0]):
        if out[i] >= 0:
            d = vdeg[out[i]]
            npair += d * (d - 1) // 2
    keys = np.empty(npair, np.int64)
    k = 0
    for i in range(pairs.shape[0]):
        a = pairs[i, 0]
        b = pairs[i, 1]
        keys[k] = (min(a, b) << 32) | max(a, b)
        k += 1
    for i in range(out.shape[0]):
        v = out[i]
        if v < 0:
            continue
        for j0 in range(vdeg[v]):
            for j1 in range(j0 + 1, vdeg[v]):
                keys[k] = (vsite[v, j0] << 32) | vsite[v, j1]
                k += 1
    return out, _pairs_of_keys(keys[:k])


@njit(link=False)
def _pairs_of_keys(keys):
    """Unique site pairs, ascending, from keys ``a << 32 | b``: (m, 2) int64."""
    keys = np.sort(keys)
    m = 0
    for i in range(keys.shape[0]):
        if i == 0 or keys[i] != keys[i - 1]:
            m += 1
    out = np.empty((m, 2), np.int64)
    m = 0
    for i in range(keys.shape[0]):
        if i == 0 or keys[i] != keys[i - 1]:
            out[m, 0] = keys[i] >> 32
            out[m, 1] = keys[i] & 0xFFFFFFFF
            m += 1
    return out


@njit
def _push_key(buf, k, a, b):
    """Append the pair key ``min << 32 | max`` of sites a, b (see :func:`_pairs_of_keys`)."""
    return U._append(buf, k, (min(a, b) << 32) | max(a, b))


@njit(entry=True, link=False)  # (also called from Python)
def width_needed(xyr, ok, ptr, corners, tol, vx, vy, vdeg, ids, shead, rv, rnext, ax, ay):
    """An upper bound of the site count of any vertex after
    :func:`commit_vertices`: per new vertex, the sites of every new vertex
    within 20 tol of it (a merged group lies within 10 tol of its first
    member) plus those of an existing vertex it merges into."""
    nc = xyr.shape[0]
    k = nc + corners.shape[0]
    px = np.empty(k)
    py = np.empty(k)
    sz = np.zeros(k, np.int64)
    for i in range(k):
        if i < nc:
            px[i] = xyr[i, 0]
            py[i] = xyr[i, 1]
            sz[i] = ptr[i + 1] - ptr[i] if ok[i] else 0
        else:
            px[i] = ax[corners[i - nc, 1]]
            py[i] = ay[corners[i - nc, 1]]
            sz[i] = 3
    cid = np.empty(3, np.int64)
    best = 0
    for i in range(k):
        if sz[i] == 0:
            continue
        tot = 0
        for j in range(k):
            if abs(px[j] - px[i]) <= 20 * tol and abs(py[j] - py[i]) <= 20 * tol:
                tot += sz[j]
        if i < nc:
            v = _vertex_find(
                px[i], py[i], ids, ptr[i], ptr[i + 1], 10 * tol, vx, vy, shead, rv, rnext
            )
        else:
            cid[0] = corners[i - nc, 0]
            cid[1] = corners[i - nc, 1]
            cid[2] = corners[i - nc, 2]
            v = _vertex_find(px[i], py[i], cid, 0, 3, 10 * tol, vx, vy, shead, rv, rnext)
        if v >= 0:
            tot += vdeg[v]
        best = max(best, tot)
    return best


@njit
def _fits(xyr, ok, ptr, ids, corners, tol, vx, vy, valive, vdeg, vsite, shead, rv, rnext, ax, ay, cnt):  # fmt: skip
    """Whether the vertex arrays have room for the ok circles and the corners
    (slots, incidence records, row width)."""
    nadd = corners.shape[0]
    for i in range(ok.shape[0]):
        if ok[i]:
            nadd += 1
    if valive.shape[0] - cnt[NV] + cnt[NVF] < nadd:
        return False
    if cnt[NRF] < ptr[ok.shape[0]] + 3 * corners.shape[0]:
        return False
    w = width_needed(xyr, ok, ptr, corners, tol, vx, vy, vdeg, ids, shead, rv, rnext, ax, ay)
    return vsite.shape[1] >= w


# --------------------------------------------------------------------- updates
@njit
def _add_aff(s, aff, naf, isaff, isnew):
    """Append ``s`` to the affected sites unless it is new or already there."""
    if isnew[s]:
        return aff, naf
    return U._append_unseen(aff, naf, s, isaff)


@njit(link=False)
def _solve_and_commit(
    tri, local, corners, pairs, tol,
    vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree,
    shead, rv, rnext, rprev, rfree, cnt, tvmark, tvlog,
    ev, es, ealive, enx, epv, efree, temark, telog,
    kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx,
    cells, counts, gx0, gy0, h, nx, ny,
):  # fmt: skip
    """Solve the candidate circles of the site triples ``tri`` (``local``: the
    sites near the update, checked first) and, when the arrays have room, add
    them and ``corners`` as vertices and re-join the bisectors
    (:func:`rejoin_pairs`).  Returns (added, joined, pairs, xyr, ok, ptr, ids) as
    :func:`insert_prepare` does."""
    xyr, ok, ptr, ids = U.candidate_vertices(
        tri, local, kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx, tol,
        cells, counts, gx0, gy0, h, nx, ny,
    )  # fmt: skip
    if not _fits(xyr, ok, ptr, ids, corners, tol, vx, vy, valive, vdeg, vsite, shead, rv, rnext, ax, ay, cnt):  # fmt: skip
        return False, 0, pairs, xyr, ok, ptr, ids
    _, pairs = commit_vertices(
        xyr, ok, ptr, ids, corners, pairs, True, tol,
        vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree,
        shead, rv, rnext, rprev, rfree, ax, ay, cnt, tvmark, tvlog,
    )  # fmt: skip
    joined = rejoin_pairs(
        pairs, tol, vx, vy, vr, vdeg, vsite, veh, shead, rv, rnext,
        ev, es, ealive, enx, epv, efree, cnt, temark, telog,
        kind, ax, ay, bx, by, e0, e1, side, alive, cells, counts, gx0, gy0, h, nx, ny,
    )  # fmt: skip
    return True, joined, pairs, xyr, ok, ptr, ids


@njit
def insert_prepare(
    new, corners, tol,
    vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree,
    shead, rv, rnext, rprev, rfree,
    ev, es, ealive, enx, epv, efree,
    cnt, tvmark, tvlog, temark, telog,
    kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx, inc,
    cells, counts, gx0, gy0, h, nx, ny,
):  # fmt: skip
    """First half of the insertion of the alive sites ``new``: delete the vertices
    whose empty circle a new site enters and the edges touching them or cut by
    a new cell, and solve the candidate circles (see
    :meth:`navkit.ecm._diagram.Diagram.insert_sites`).

    The new vertices and the zero-clearance ``corners`` ((k, 3) rows
    (s_in, p, s_out)) are added too (:func:`commit_vertices`) when the arrays
    have room for them.

    Returns (added, joined, pairs, xyr, ok, ptr, ids): ``added`` says whether
    the vertices were added; ``pairs`` ((k, 2)) are then every bisector to
    re-join, otherwise only those of the deleted edges, and (xyr, ok, ptr, ids)
    are :func:`navkit.ecm._update_kernels.candidate_vertices`' circles for the
    caller to add after growing the arrays.  When they were added the bisectors
    were re-joined too, and ``joined`` is :func:`rejoin_pairs`' result (< 0: the
    edge arrays lacked room, nothing was joined); otherwise it is 0.
    """
    # borrowed views (no reference counting when helpers take them; see borrow)
    vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree = borrow((vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree))  # fmt: skip
    shead, rv, rnext, rprev, rfree = borrow((shead, rv, rnext, rprev, rfree))
    ev, es, ealive, enx, epv, efree = borrow((ev, es, ealive, enx, epv, efree))
    cnt, tvmark, tvlog, temark, telog = borrow((cnt, tvmark, tvlog, temark, telog))
    kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx = borrow((kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx))  # fmt: skip
    cells, counts = borrow((cells, counts))
    new, corners, inc = borrow((new, corners, inc))
    nn = new.shape[0]
    nsite = kind.shape[0]
    x0 = np.inf
    x1 = -np.inf
    y0 = np.inf
    y1 = -np.inf
    for i in range(nn):
        s = new[i]
        x0 = min(x0, ax[s])
        x1 = max(x1, ax[s])
        y0 = min(y0, ay[s])
        y1 = max(y1, ay[s])
        if kind[s] == 1:
            x0 = min(x0, bx[s])
            x1 = max(x1, bx[s])
            y0 = min(y0, by[s])
            y1 = max(y1, by[s])
    nv = cnt[NV]
    ne = cnt[NE]
    # 0. the sites whose cells hold the new point sites: there the new cell
    # starts, and from there the vertices and edges near it are found
    for i in range(nn):
        alive[new[i]] = False
    seeds = np.full(nn, -1, np.int64)
    for i in range(nn):
        p = new[i]
        if kind[p] == 0:
            seeds[i], _ = U.grid_nearest(
                ax[p], ay[p], cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, alive
            )
    for i in range(nn):
        alive[new[i]] = True
    vnear, enear = U.near_elements(
        seeds, x0, x1, y0, y1, tol, vx, vy, vr, valive, vdeg, vsite, veh, enx, ev, es, ealive,
        shead, rv, rnext, nsite, nv, ne,
    )  # fmt: skip
    # 1. vertices in conflict
    kv = U.conflict_vertices(
        new, x0, x1, y0, y1, vnear, vx, vy, vr, valive, tol, kind, ax, ay, bx, by
    )
    # 2. edges touching them or cut in their interior
    vkill = np.zeros(max(nv, 1), np.bool_)
    emk = np.zeros(max(ne, 1), np.bool_)
    aff_e = np.empty(64, np.int64)
    na = 0
    for i in range(kv.shape[0]):
        vkill[kv[i]] = True
    for i in range(kv.shape[0]):
        q = veh[kv[i]]
        while q >= 0:
            e = q >> 1
            if not emk[e]:
                emk[e] = True
                if na == aff_e.shape[0]:
                    aff_e = np.concatenate((aff_e, np.empty(na, np.int64)))
                aff_e[na] = e
                na += 1
            q = enx[q]
    cut, rest = U.cut_edge_candidates(
        new, x0, x1, y0, y1, enear, ev, es, ealive, vkill, vx, vy, vr, tol, kind, ax, ay, bx, by
    )
    hit = np.zeros(0, np.bool_)
    if rest.shape[0]:
        hit = U.cut_edges_exact(
            rest, new, ev, es, vx, vy, vr, tol, kind, ax, ay, bx, by, e0, e1, side
        )
    ncand = cut.shape[0] + rest.shape[0]
    for i in range(ncand):
        if i < cut.shape[0]:
            e = cut[i]
        else:
            if not hit[i - cut.shape[0]]:
                continue
            e = rest[i - cut.shape[0]]
        if not emk[e]:
            emk[e] = True
            if na == aff_e.shape[0]:
                aff_e = np.concatenate((aff_e, np.empty(na, np.int64)))
            aff_e[na] = e
            na += 1
    # affected sites and the bisectors to re-join
    isnew = np.zeros(nsite, np.bool_)
    for i in range(nn):
        isnew[new[i]] = True
    isaff = np.zeros(nsite, np.bool_)
    aff = np.empty(64, np.int64)
    naf = 0
    pkeys = np.empty(max(2 * na, 16), np.int64)
    npk = 0
    for i in range(na):
        e = aff_e[i]
        pkeys, npk = _push_key(pkeys, npk, es[e, 0], es[e, 1])
    for i in range(na):
        aff, naf = _add_aff(es[aff_e[i], 0], aff, naf, isaff, isnew)
        aff, naf = _add_aff(es[aff_e[i], 1], aff, naf, isaff, isnew)
    for i in range(kv.shape[0]):
        v = kv[i]
        for j in range(vdeg[v]):
            aff, naf = _add_aff(vsite[v, j], aff, naf, isaff, isnew)
    # sites whose cells contain a new point site
    for i in range(nn):
        if seeds[i] >= 0:
            aff, naf = _add_aff(seeds[i], aff, naf, isaff, isnew)
    pairs = _pairs_of_keys(pkeys[:npk])
    # delete
    for i in range(na):
        e = aff_e[i]
        if ealive[e]:
            _edge_kill(e, ev, ealive, enx, epv, efree, veh, cnt, temark, telog)
    for i in range(kv.shape[0]):
        _vertex_kill(
            kv[i], vdeg, vsite, vrec, valive, veh, vfree, shead, rnext, rprev, rfree,
            ev, ealive, enx, epv, efree, cnt, tvmark, tvlog, temark, telog,
        )  # fmt: skip
    # 3. candidate triples: a new site with a cut bisector, or with a segment and
    # its endpoint (their normal line is not stored as an edge but can be cut)
    ckeys = np.empty(npk + 2 * naf + 16, np.int64)
    nck = 0
    for i in range(npk):
        ckeys[nck] = pkeys[i]
        nck += 1
    for i in range(naf):
        a = aff[i]
        if kind[a] == 1:
            ckeys, nck = _push_key(ckeys, nck, a, e0[a])
            ckeys, nck = _push_key(ckeys, nck, a, e1[a])
        else:
            for j in range(2):
                sg = inc[a, j]
                if sg >= 0 and alive[sg]:
                    ckeys, nck = _push_key(ckeys, nck, a, sg)
    cp = _pairs_of_keys(ckeys[:nck])
    # a convex obstacle (a point, a segment, a convex polygon) meets an empty
    # circle outside it in one point: two of its sites share a vertex only if
    # they share a point, and no circle outside it touches three of its sites
    convex = True
    for i in range(nn):
        if kind[new[i]] == 0 and side[new[i]] != 1:
            convex = False
    pr = np.empty((max(nn * nn, 1), 2), np.int64)
    npr = 0
    if nn >= 2:
        if convex:
            for i in range(nn):
                sg = new[i]
                if kind[sg] == 1:
                    pr[npr, 0] = sg
                    pr[npr, 1] = e0[sg]
                    pr[npr + 1, 0] = sg
                    pr[npr + 1, 1] = e1[sg]
                    npr += 2
            for i in range(nn):
                p = new[i]
                if kind[p] == 0 and inc[p, 0] >= 0 and inc[p, 1] >= 0:
                    if isnew[inc[p, 0]] and isnew[inc[p, 1]]:
                        pr[npr, 0] = inc[p, 0]
                        pr[npr, 1] = inc[p, 1]
                        npr += 1
        else:
            for i in range(nn):
                for j in range(i + 1, nn):
                    pr[npr, 0] = new[i]
                    pr[npr, 1] = new[j]
                    npr += 1
    n3 = nn * (nn - 1) * (nn - 2) // 6 if (nn >= 3 and not convex) else 0
    ntri = nn * cp.shape[0] + npr * naf + n3
    tri = np.empty((ntri, 3), np.int64)
    k = 0
    for i in range(nn):
        for j in range(cp.shape[0]):
            tri[k, 0] = new[i]
            tri[k, 1] = cp[j, 0]
            tri[k, 2] = cp[j, 1]
            k += 1
    for i in range(npr):
        for j in range(naf):
            tri[k, 0] = pr[i, 0]
            tri[k, 1] = pr[i, 1]
            tri[k, 2] = aff[j]
            k += 1
    if n3:
        for i in range(nn):
            for j in range(i + 1, nn):
                for m in range(j + 1, nn):
                    tri[k, 0] = new[i]
                    tri[k, 1] = new[j]
                    tri[k, 2] = new[m]
                    k += 1
    local = np.concatenate((new, aff[:naf]))
    return _solve_and_commit(
        tri, local, corners, pairs, tol,
        vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree,
        shead, rv, rnext, rprev, rfree, cnt, tvmark, tvlog,
        ev, es, ealive, enx, epv, efree, temark, telog,
        kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx,
        cells, counts, gx0, gy0, h, nx, ny,
    )  # fmt: skip


@njit
def delete_prepare(
    dead, tol,
    vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree,
    shead, rv, rnext, rprev, rfree,
    ev, es, ealive, enx, epv, efree,
    cnt, tvmark, tvlog, temark, telog,
    kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx,
    cells, counts, gx0, gy0, h, nx, ny,
):  # fmt: skip
    """First half of the deletion of the sites ``dead``: delete their vertices,
    mark them dead (and drop them from the site grid) and solve the candidate
    circles tangent to three of their former neighbours.

    Returns (added, joined, pairs, xyr, ok, ptr, ids) as :func:`insert_prepare` (the
    deleted edges' bisectors that survive, then those of the new vertices).
    """
    # borrowed views (no reference counting when helpers take them; see borrow)
    vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree = borrow((vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree))  # fmt: skip
    shead, rv, rnext, rprev, rfree = borrow((shead, rv, rnext, rprev, rfree))
    ev, es, ealive, enx, epv, efree = borrow((ev, es, ealive, enx, epv, efree))
    cnt, tvmark, tvlog, temark, telog = borrow((cnt, tvmark, tvlog, temark, telog))
    kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx = borrow((kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx))  # fmt: skip
    cells, counts = borrow((cells, counts))
    dead = borrow(dead)
    nsite = kind.shape[0]
    nv = cnt[NV]
    isdead = np.zeros(nsite, np.bool_)
    for i in range(dead.shape[0]):
        isdead[dead[i]] = True
    vk = np.zeros(max(nv, 1), np.bool_)
    killed = np.empty(64, np.int64)
    nk = 0
    for i in range(dead.shape[0]):
        r = shead[dead[i]]
        while r >= 0:
            v = rv[r]
            if not vk[v]:
                vk[v] = True
                if nk == killed.shape[0]:
                    killed = np.concatenate((killed, np.empty(nk, np.int64)))
                killed[nk] = v
                nk += 1
            r = rnext[r]
    isnb = np.zeros(nsite, np.bool_)
    nbl = np.empty(64, np.int64)  # the neighbours, as first seen
    nnb = 0
    pkeys = np.empty(64, np.int64)
    npk = 0
    for i in range(nk):
        v = killed[i]
        for j in range(vdeg[v]):
            t = vsite[v, j]
            if not isdead[t]:
                nbl, nnb = U._append_unseen(nbl, nnb, t, isnb)
        q = veh[v]
        while q >= 0:
            e = q >> 1
            a = es[e, 0]
            b = es[e, 1]
            if not isdead[a] and not isdead[b]:
                pkeys, npk = _push_key(pkeys, npk, a, b)
            q = enx[q]
    for i in range(nk):
        _vertex_kill(
            killed[i], vdeg, vsite, vrec, valive, veh, vfree, shead, rnext, rprev, rfree,
            ev, ealive, enx, epv, efree, cnt, tvmark, tvlog, temark, telog,
        )  # fmt: skip
    for i in range(dead.shape[0]):
        alive[dead[i]] = False
    U.grid_remove(np.sort(dead), kind, ax, ay, bx, by, cells, counts, gx0, gy0, h, nx, ny)
    nb = np.sort(nbl[:nnb])  # ascending, as the triples are made
    m = nnb
    tri = np.empty((m * (m - 1) * (m - 2) // 6, 3), np.int64)
    k = 0
    for i in range(m):
        for j in range(i + 1, m):
            for l in range(j + 1, m):
                tri[k, 0] = nb[i]
                tri[k, 1] = nb[j]
                tri[k, 2] = nb[l]
                k += 1
    return _solve_and_commit(
        tri, nb[:m], np.empty((0, 3), np.int64), _pairs_of_keys(pkeys[:npk]), tol,
        vx, vy, vr, valive, vdeg, vsite, vrec, veh, vfree,
        shead, rv, rnext, rprev, rfree, cnt, tvmark, tvlog,
        ev, es, ealive, enx, epv, efree, temark, telog,
        kind, ax, ay, bx, by, e0, e1, side, alive, owner, cvx,
        cells, counts, gx0, gy0, h, nx, ny,
    )  # fmt: skip


@njit(entry=True, link=False)  # (also called from Python)
def rejoin_pairs(
    pairs, tol,
    vx, vy, vr, vdeg, vsite, veh, shead, rv, rnext,
    ev, es, ealive, enx, epv, efree,
    cnt, temark, telog,
    kind, ax, ay, bx, by, e0, e1, side, alive,
    cells, counts, gx0, gy0, h, nx, ny,
):  # fmt: skip
    """Re-join the edges of every bisector (a, b) in ``pairs`` ((k, 2), a < b):
    delete its edges, then join consecutive vertices of a and b along it
    (:func:`navkit.ecm._update_kernels.rejoin_candidates`).

    Returns the number of edges added, or minus the number of free edge slots
    needed (nothing changed) when the edge arrays are too small.
    """
    # borrowed views (no reference counting when helpers take them; see borrow)
    vx, vy, vr, vdeg, vsite, veh, shead, rv, rnext = borrow((vx, vy, vr, vdeg, vsite, veh, shead, rv, rnext))  # fmt: skip
    ev, es, ealive, enx, epv, efree = borrow((ev, es, ealive, enx, epv, efree))
    cnt, temark, telog = borrow((cnt, temark, telog))
    kind, ax, ay, bx, by, e0, e1, side, alive = borrow((kind, ax, ay, bx, by, e0, e1, side, alive))  # fmt: skip
    cells, counts, pairs = borrow((cells, counts, pairs))
    npair = pairs.shape[0]
    pa = np.empty(npair, np.int64)
    pb = np.empty(npair, np.int64)
    ptr = np.zeros(npair + 1, np.int64)
    vids = np.empty(64, np.int64)
    old = np.empty(64, np.int64)
    nold = 0
    n = 0
    m = 0
    for p in range(npair):
        a = pairs[p, 0]
        b = pairs[p, 1]
        live = alive[a] and alive[b]
        if kind[a] == 0 and kind[b] == 1 and (a == e0[b] or a == e1[b]):
            live = False
        if kind[b] == 0 and kind[a] == 1 and (b == e0[a] or b == e1[a]):
            live = False
        # every vertex of the bisector (and every first end of its edges) is a
        # vertex of both sites: walk the shorter of their lists (in lockstep
        # until one ends) and test each vertex's own row for the other site
        ra = shead[a]
        rb = shead[b]
        while ra >= 0 and rb >= 0:
            ra = rnext[ra]
            rb = rnext[rb]
        short = a if ra < 0 else b
        other = b if ra < 0 else a
        start = n
        r = shead[short]
        while r >= 0:
            v = rv[r]
            r = rnext[r]
            has = False
            for j in range(vdeg[v]):
                if vsite[v, j] == other:
                    has = True
                    break
            if not has:
                continue
            q = veh[v]
            while q >= 0:
                e = q >> 1
                if (q & 1) == 0 and es[e, 0] == a and es[e, 1] == b:
                    if nold == old.shape[0]:
                        old = np.concatenate((old, np.empty(nold, np.int64)))
                    old[nold] = e
                    nold += 1
                q = enx[q]
            if live:
                if n == vids.shape[0]:
                    vids = np.concatenate((vids, np.empty(n, np.int64)))
                vids[n] = v
                n += 1
        if n - start < 2:
            n = start
            continue
        pa[m] = a
        pb[m] = b
        ptr[m + 1] = n
        m += 1
    kp, k0, k1 = U.rejoin_candidates(
        pa[:m], pb[:m], ptr[: m + 1], vids[:n], vx, vy, vr, tol,
        cells, counts, gx0, gy0, h, nx, ny, kind, ax, ay, bx, by, side, alive,
    )  # fmt: skip
    free = ealive.shape[0] - cnt[NE] + cnt[NEF] + nold
    if kp.shape[0] > free:
        return -(kp.shape[0] - free)
    for i in range(nold):
        _edge_kill(old[i], ev, ealive, enx, epv, efree, veh, cnt, temark, telog)
    for i in range(kp.shape[0]):
        _edge_add(
            k0[i], k1[i], pa[kp[i]], pb[kp[i]],
            ev, es, ealive, enx, epv, efree, veh, cnt, temark, telog,
        )  # fmt: skip
    return kp.shape[0]
