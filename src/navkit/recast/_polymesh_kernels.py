"""Building blocks of the polygon mesh stage (Recast's ``RecastMesh.cpp`` helpers).

Integer xz predicates and ear-clipping triangulation (``triangulate`` with its
strict and loose diagonal tests), the vertex hash (``addVertex``), greedy
convex merging (``getPolyMergeValue`` / ``mergePolyVerts``), and the edge
matching that fills neighbour links (``buildMeshAdjacency``) plus tile portal
marking. See :mod:`navkit.recast.polymesh` for how they fit together. Every
function is a numba kernel on int64 arrays; polygon rows hold vertex indices
padded with ``0xFFFF``.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import njit
from navkit.recast.types import MESH_NULL_IDX

_NULL = MESH_NULL_IDX
_MULTIPLE_REGS = 0  #: RC_MULTIPLE_REGS: region of a polygon spanning several regions
_BUCKETS = 1 << 12  #: vertex hash buckets


# -- 2D integer predicates on the xz plane ---------------------------------------------------
@njit(lent=True)
def _area2(ax, az, bx, bz, cx, cz):
    """Twice the signed area of (a, b, c); negative when c is left of a -> b."""
    return (bx - ax) * (cz - az) - (cx - ax) * (bz - az)


@njit(lent=True)
def _on_segment(ax, az, bx, bz, cx, cz):
    """c is collinear with a-b and lies on the closed segment."""
    if _area2(ax, az, bx, bz, cx, cz) != 0:
        return False
    if ax != bx:
        return (ax <= cx <= bx) or (ax >= cx >= bx)
    return (az <= cz <= bz) or (az >= cz >= bz)


@njit(lent=True)
def _cross_properly(ax, az, bx, bz, cx, cz, dx, dz):
    """Segments a-b and c-d share a point interior to both (no collinear triple)."""
    abc = _area2(ax, az, bx, bz, cx, cz)
    abd = _area2(ax, az, bx, bz, dx, dz)
    cda = _area2(cx, cz, dx, dz, ax, az)
    cdb = _area2(cx, cz, dx, dz, bx, bz)
    if abc == 0 or abd == 0 or cda == 0 or cdb == 0:
        return False
    return ((abc < 0) != (abd < 0)) and ((cda < 0) != (cdb < 0))


@njit(lent=True)
def _touch(ax, az, bx, bz, cx, cz, dx, dz):
    """Segments a-b and c-d intersect, properly or at an end point."""
    if _cross_properly(ax, az, bx, bz, cx, cz, dx, dz):
        return True
    return (
        _on_segment(ax, az, bx, bz, cx, cz)
        or _on_segment(ax, az, bx, bz, dx, dz)
        or _on_segment(cx, cz, dx, dz, ax, az)
        or _on_segment(cx, cz, dx, dz, bx, bz)
    )


# -- ear-clipping triangulation -----------------------------------------------------------
@njit(lent=True)
def _succ(i, n):
    return i + 1 if i + 1 < n else 0


@njit(lent=True)
def _pred(i, n):
    return i - 1 if i >= 1 else n - 1


@njit(lent=True)
def _clear_of_edges(i, j, n, px, pz, ring, loose):
    """Diagonal ring[i]-ring[j] meets no polygon edge not incident to it."""
    ax = px[ring[i]]
    az = pz[ring[i]]
    bx = px[ring[j]]
    bz = pz[ring[j]]
    for k in range(n):
        k1 = _succ(k, n)
        if k == i or k1 == i or k == j or k1 == j:
            continue
        cx = px[ring[k]]
        cz = pz[ring[k]]
        dx = px[ring[k1]]
        dz = pz[ring[k1]]
        if (ax == cx and az == cz) or (bx == cx and bz == cz):
            continue
        if (ax == dx and az == dz) or (bx == dx and bz == dz):
            continue
        if loose:
            if _cross_properly(ax, az, bx, bz, cx, cz, dx, dz):
                return False
        elif _touch(ax, az, bx, bz, cx, cz, dx, dz):
            return False
    return True


@njit(lent=True)
def _inside_cone(i, j, n, px, pz, ring, loose):
    """Diagonal ring[i]-ring[j] starts into the polygon's interior at ring[i]."""
    a = ring[i]
    b = ring[j]
    nx_ = ring[_succ(i, n)]
    pv = ring[_pred(i, n)]
    if _area2(px[pv], pz[pv], px[a], pz[a], px[nx_], pz[nx_]) <= 0:
        # convex corner: the diagonal must lie between the two edges
        s1 = _area2(px[a], pz[a], px[b], pz[b], px[pv], pz[pv])
        s2 = _area2(px[b], pz[b], px[a], pz[a], px[nx_], pz[nx_])
        if loose:
            return s1 <= 0 and s2 <= 0
        return s1 < 0 and s2 < 0
    # reflex corner: the diagonal must not lie in the outer wedge
    t1 = _area2(px[a], pz[a], px[b], pz[b], px[nx_], pz[nx_])
    t2 = _area2(px[b], pz[b], px[a], pz[a], px[pv], pz[pv])
    return not (t1 <= 0 and t2 <= 0)


@njit(lent=True)
def _is_diagonal(i, j, n, px, pz, ring, loose):
    return _inside_cone(i, j, n, px, pz, ring, loose) and _clear_of_edges(
        i, j, n, px, pz, ring, loose
    )


@njit(lent=True, link=False)
def _triangulate(n, px, pz, ring, ear, tris):
    """Ear-clip the polygon ``ring[:n]`` (indices into px/pz) into ``tris``.

    ``ring`` and ``ear`` are scratch and are overwritten. Returns the number of
    triangles, negated when the polygon could not be finished (the triangles
    written so far are kept, as Recast does).
    """
    if n < 3:
        return 0
    for i in range(n):
        ear[i] = False
    for i in range(n):
        i1 = _succ(i, n)
        if _is_diagonal(i, _succ(i1, n), n, px, pz, ring, False):
            ear[i1] = True
    nt = 0
    while n > 3:
        best = -1
        best_len = -1
        for i in range(n):
            i1 = _succ(i, n)
            if ear[i1]:
                a = ring[i]
                c = ring[_succ(i1, n)]
                dx = px[c] - px[a]
                dz = pz[c] - pz[a]
                d = dx * dx + dz * dz
                if best_len < 0 or d < best_len:
                    best_len = d
                    best = i
        if best == -1:
            # overlapping segments: retry with the loose tests
            for i in range(n):
                i1 = _succ(i, n)
                i2 = _succ(i1, n)
                if _is_diagonal(i, i2, n, px, pz, ring, True):
                    a = ring[i]
                    c = ring[_succ(i2, n)]
                    dx = px[c] - px[a]
                    dz = pz[c] - pz[a]
                    d = dx * dx + dz * dz
                    if best_len < 0 or d < best_len:
                        best_len = d
                        best = i
            if best == -1:
                return -nt
        i = best
        i1 = _succ(i, n)
        i2 = _succ(i1, n)
        tris[nt, 0] = ring[i]
        tris[nt, 1] = ring[i1]
        tris[nt, 2] = ring[i2]
        nt += 1
        # drop ring[i1]
        n -= 1
        for k in range(i1, n):
            ring[k] = ring[k + 1]
            ear[k] = ear[k + 1]
        if i1 >= n:
            i1 = 0
        i = _pred(i1, n)
        ear[i] = _is_diagonal(_pred(i, n), i1, n, px, pz, ring, False)
        ear[i1] = _is_diagonal(i, _succ(i1, n), n, px, pz, ring, False)
    tris[nt, 0] = ring[0]
    tris[nt, 1] = ring[1]
    tris[nt, 2] = ring[2]
    return nt + 1


# -- vertex welding ---------------------------------------------------------------------------
@njit(lent=True)
def _weld_vertex(x, y, z, verts, first, chain, nv):
    """Index of the vertex (x, y +-2, z) in ``verts[:nv]``, appending it if new.

    Returns ``(index, new nv)``.
    """
    bucket = (0x8DA6B343 * x + 0xCB1AB31F * z) & (_BUCKETS - 1)
    i = first[bucket]
    while i != -1:
        if verts[i, 0] == x and verts[i, 2] == z and abs(verts[i, 1] - y) <= 2:
            return i, nv
        i = chain[i]
    verts[nv, 0] = x
    verts[nv, 1] = y
    verts[nv, 2] = z
    chain[nv] = first[bucket]
    first[bucket] = nv
    return nv, nv + 1


# -- polygon merging --------------------------------------------------------------------------
@njit(lent=True)
def _nverts_of(polys, p, nvp):
    for i in range(nvp):
        if polys[p, i] == _NULL:
            return i
    return nvp


@njit(lent=True)
def _strictly_left(verts, a, b, c):
    return _area2(verts[a, 0], verts[a, 2], verts[b, 0], verts[b, 2], verts[c, 0], verts[c, 2]) < 0


@njit(lent=True)
def _merge_score(polys, pa, pb, verts, nvp):
    """``(squared shared edge length, edge in pa, edge in pb)``, or ``(-1, .., ..)``
    when the pair shares no edge or would merge into a non-convex or too big polygon."""
    na = _nverts_of(polys, pa, nvp)
    nb = _nverts_of(polys, pb, nvp)
    if na + nb - 2 > nvp:
        return -1, -1, -1
    ea = -1
    eb = -1
    for i in range(na):
        a0 = polys[pa, i]
        a1 = polys[pa, (i + 1) % na]
        if a0 > a1:
            a0, a1 = a1, a0
        for j in range(nb):
            b0 = polys[pb, j]
            b1 = polys[pb, (j + 1) % nb]
            if b0 > b1:
                b0, b1 = b1, b0
            if a0 == b0 and a1 == b1:
                # the last edge of pa with a match wins (first match in pb)
                ea = i
                eb = j
                break
    if ea == -1 or eb == -1:
        return -1, -1, -1
    if not _strictly_left(
        verts, polys[pa, (ea + na - 1) % na], polys[pa, ea], polys[pb, (eb + 2) % nb]
    ):
        return -1, -1, -1
    if not _strictly_left(
        verts, polys[pb, (eb + nb - 1) % nb], polys[pb, eb], polys[pa, (ea + 2) % na]
    ):
        return -1, -1, -1
    va = polys[pa, ea]
    vb = polys[pa, (ea + 1) % na]
    dx = verts[va, 0] - verts[vb, 0]
    dz = verts[va, 2] - verts[vb, 2]
    return dx * dx + dz * dz, ea, eb


_SCORE_CACHE_MAX = 2048  #: polygons per merge problem up to which pair scores are cached


@njit(lent=True)
def _score_pair(score, sea, seb, polys, p, q, verts, nvp):
    """Store the merge score of the pair (p, q), scored as Recast does: lower index first."""
    j = min(p, q)
    k = max(p, q)
    v, ea, eb = _merge_score(polys, j, k, verts, nvp)
    score[j, k] = v
    sea[j, k] = ea
    seb[j, k] = eb


@njit(lent=True, link=False)
def _merge_greedily(polys, npolys, pregs, pareas, verts, nvp, row):
    """Merge ``polys[:npolys]`` pairwise, longest shared edge first; returns the new count.

    Each round takes the first pair (j < k, row-major) with the highest score,
    as Recast does. A pair's score depends only on its two polygons, so scores
    are cached and after a merge only the pairs of the two slots that changed
    are re-scored; the choice is the same as re-scoring every pair each round.
    """
    cached = npolys <= _SCORE_CACHE_MAX
    m0 = npolys if cached else 1
    score = np.zeros((m0, m0), np.int64)
    sea = np.zeros((m0, m0), np.int64)
    seb = np.zeros((m0, m0), np.int64)
    if cached:
        for j in range(npolys - 1):
            for k in range(j + 1, npolys):
                _score_pair(score, sea, seb, polys, j, k, verts, nvp)
    while True:
        best = 0
        best_a = 0
        best_b = 0
        best_ea = 0
        best_eb = 0
        if cached:
            for j in range(npolys - 1):
                srow = score[j]
                for k in range(j + 1, npolys):
                    if srow[k] > best:
                        best = srow[k]
                        best_a = j
                        best_b = k
            best_ea = sea[best_a, best_b]
            best_eb = seb[best_a, best_b]
        else:
            for j in range(npolys - 1):
                for k in range(j + 1, npolys):
                    v, ea, eb = _merge_score(polys, j, k, verts, nvp)
                    if v > best:
                        best = v
                        best_a = j
                        best_b = k
                        best_ea = ea
                        best_eb = eb
        if best <= 0:
            return npolys
        na = _nverts_of(polys, best_a, nvp)
        nb = _nverts_of(polys, best_b, nvp)
        for i in range(nvp):
            row[i] = _NULL
        m = 0
        for i in range(na - 1):
            row[m] = polys[best_a, (best_ea + 1 + i) % na]
            m += 1
        for i in range(nb - 1):
            row[m] = polys[best_b, (best_eb + 1 + i) % nb]
            m += 1
        for i in range(nvp):
            polys[best_a, i] = row[i]
        if pregs[best_a] != pregs[best_b]:
            pregs[best_a] = _MULTIPLE_REGS
        last = npolys - 1
        if best_b != last:
            for i in range(nvp):
                polys[best_b, i] = polys[last, i]
        pregs[best_b] = pregs[last]
        pareas[best_b] = pareas[last]
        npolys -= 1
        if cached:
            for q in range(npolys):
                if q != best_a:
                    _score_pair(score, sea, seb, polys, best_a, q, verts, nvp)
                if best_b < npolys and q != best_b:
                    _score_pair(score, sea, seb, polys, best_b, q, verts, nvp)


# -- adjacency and portals ------------------------------------------------------------------
@njit(lent=True)
def _link_neighbours(polys, npolys, nv, nvp):
    """Fill the neighbour half of ``polys`` from shared edges (``buildMeshAdjacency``)."""
    cap = max(npolys * nvp, 1)
    head = np.full(max(nv, 1), -1, np.int64)
    chain = np.empty(cap, np.int64)
    ev1 = np.empty(cap, np.int64)
    p0 = np.empty(cap, np.int64)
    s0 = np.empty(cap, np.int64)
    p1 = np.empty(cap, np.int64)
    s1 = np.empty(cap, np.int64)
    ne = 0
    for i in range(npolys):
        n = _nverts_of(polys, i, nvp)
        for j in range(n):
            a = polys[i, j]
            b = polys[i, j + 1] if j + 1 < n else polys[i, 0]
            if a < b:
                ev1[ne] = b
                p0[ne] = i
                s0[ne] = j
                p1[ne] = i
                s1[ne] = 0
                chain[ne] = head[a]
                head[a] = ne
                ne += 1
    for i in range(npolys):
        n = _nverts_of(polys, i, nvp)
        for j in range(n):
            a = polys[i, j]
            b = polys[i, j + 1] if j + 1 < n else polys[i, 0]
            if a > b:
                e = head[b]
                while e != -1:
                    if ev1[e] == a and p0[e] == p1[e]:
                        p1[e] = i
                        s1[e] = j
                        break
                    e = chain[e]
    for e in range(ne):
        if p0[e] != p1[e]:
            polys[p0[e], nvp + s0[e]] = p1[e]
            polys[p1[e], nvp + s1[e]] = p0[e]


@njit(lent=True)
def _mark_portals(polys, npolys, verts, nvp, width, height):
    """Tag open edges lying on the tile boundary as portals ``0x8000 | dir``."""
    for i in range(npolys):
        n = _nverts_of(polys, i, nvp)
        for j in range(n):
            if polys[i, nvp + j] != _NULL:
                continue
            a = polys[i, j]
            b = polys[i, j + 1] if j + 1 < n else polys[i, 0]
            if verts[a, 0] == 0 and verts[b, 0] == 0:
                polys[i, nvp + j] = 0x8000
            elif verts[a, 2] == height and verts[b, 2] == height:
                polys[i, nvp + j] = 0x8001
            elif verts[a, 0] == width and verts[b, 0] == width:
                polys[i, nvp + j] = 0x8002
            elif verts[a, 2] == 0 and verts[b, 2] == 0:
                polys[i, nvp + j] = 0x8003
