"""Layer polygon mesh of the tile cache (``dtBuildTileCachePolyMesh``).

Each contour with at least 3 vertices is ear-clipped (shortest diagonal first,
Detour's tile-cache triangulator: no fallback for self-touching outlines), its
vertices are welded through a 256-bucket hash (same x, z and heights within 2),
and its triangles are merged greedily into convex polygons of up to 6 vertices
(longest shared edge first). Vertices flagged by the contour builder (bit 7:
middle of a straight portal edge) are then removed where possible and the hole
is re-triangulated and merged. Last, adjacency: shared edges get the other
polygon's index; open edges lying on a contour edge with a portal direction get
``0x8000 | dir``.

Polygons are (np, 12) uint16 like Recast's ``rcPolyMesh`` with ``nvp = 6``.
"""

from __future__ import annotations

import numpy as np

from .._jit import borrow, njit
from .contours import TileCacheContours

__all__ = ["build_tile_cache_poly_mesh", "NVP"]

NVP = 6
_NULL = 0xFFFF
_MAX_REM_EDGES = 48

# error codes
_OK = 0
_ERR_BUFFER = -1


@njit
def _area2(ax, az, bx, bz, cx, cz):
    return (bx - ax) * (cz - az) - (cx - ax) * (bz - az)


@njit
def _vx(verts, indices, i):
    return np.int64(verts[indices[i] & 0x7FFF, 0])


@njit
def _vz(verts, indices, i):
    return np.int64(verts[indices[i] & 0x7FFF, 2])


@njit
def _between(ax, az, bx, bz, cx, cz):
    if _area2(ax, az, bx, bz, cx, cz) != 0:
        return False
    if ax != bx:
        return (ax <= cx and cx <= bx) or (ax >= cx and cx >= bx)
    return (az <= cz and cz <= bz) or (az >= cz and cz >= bz)


@njit
def _intersect(ax, az, bx, bz, cx, cz, dx, dz):
    abc = _area2(ax, az, bx, bz, cx, cz)
    abd = _area2(ax, az, bx, bz, dx, dz)
    cda = _area2(cx, cz, dx, dz, ax, az)
    cdb = _area2(cx, cz, dx, dz, bx, bz)
    if not (abc == 0 or abd == 0 or cda == 0 or cdb == 0):
        if ((abc < 0) != (abd < 0)) and ((cda < 0) != (cdb < 0)):
            return True
    if (
        _between(ax, az, bx, bz, cx, cz)
        or _between(ax, az, bx, bz, dx, dz)
        or _between(cx, cz, dx, dz, ax, az)
        or _between(cx, cz, dx, dz, bx, bz)
    ):
        return True
    return False


@njit
def _diagonalie(i, j, n, verts, indices):
    d0x, d0z = _vx(verts, indices, i), _vz(verts, indices, i)
    d1x, d1z = _vx(verts, indices, j), _vz(verts, indices, j)
    # An edge whose bounding box misses the diagonal's cannot intersect it (a proper
    # crossing lies in both boxes, and a point "between" a segment's ends lies on it)
    # when neither segment is a point (_between of a point segment tests one
    # coordinate): those edges are skipped without the four orientation tests.
    dminx = min(d0x, d1x)
    dmaxx = max(d0x, d1x)
    dminz = min(d0z, d1z)
    dmaxz = max(d0z, d1z)
    dpoint = d0x == d1x and d0z == d1z
    for k in range(n):
        k1 = k + 1 if k + 1 < n else 0
        if not (k == i or k1 == i or k == j or k1 == j):
            p0x, p0z = _vx(verts, indices, k), _vz(verts, indices, k)
            p1x, p1z = _vx(verts, indices, k1), _vz(verts, indices, k1)
            if (
                (d0x == p0x and d0z == p0z)
                or (d1x == p0x and d1z == p0z)
                or (d0x == p1x and d0z == p1z)
                or (d1x == p1x and d1z == p1z)
            ):
                continue
            if not dpoint and not (p0x == p1x and p0z == p1z):
                if (
                    max(p0x, p1x) < dminx
                    or min(p0x, p1x) > dmaxx
                    or max(p0z, p1z) < dminz
                    or min(p0z, p1z) > dmaxz
                ):
                    continue
            if _intersect(d0x, d0z, d1x, d1z, p0x, p0z, p1x, p1z):
                return False
    return True


@njit
def _in_cone(i, j, n, verts, indices):
    i1 = i + 1 if i + 1 < n else 0
    in1 = i - 1 if i - 1 >= 0 else n - 1
    pix, piz = _vx(verts, indices, i), _vz(verts, indices, i)
    pjx, pjz = _vx(verts, indices, j), _vz(verts, indices, j)
    p1x, p1z = _vx(verts, indices, i1), _vz(verts, indices, i1)
    pnx, pnz = _vx(verts, indices, in1), _vz(verts, indices, in1)
    if _area2(pnx, pnz, pix, piz, p1x, p1z) <= 0:
        return _area2(pix, piz, pjx, pjz, pnx, pnz) < 0 and _area2(pjx, pjz, pix, piz, p1x, p1z) < 0
    return not (
        _area2(pix, piz, pjx, pjz, p1x, p1z) <= 0 and _area2(pjx, pjz, pix, piz, pnx, pnz) <= 0
    )


@njit
def _diagonal(i, j, n, verts, indices):
    return _in_cone(i, j, n, verts, indices) and _diagonalie(i, j, n, verts, indices)


@njit
def _triangulate(n, verts, indices, tris):
    """Detour tile cache ``triangulate``; returns the triangle count (negative on failure)."""
    ntris = 0
    for i in range(n):
        i1 = i + 1 if i + 1 < n else 0
        i2 = i1 + 1 if i1 + 1 < n else 0
        if _diagonal(i, i2, n, verts, indices):
            indices[i1] |= 0x8000
    while n > 3:
        min_len = -1
        mini = -1
        for i in range(n):
            i1 = i + 1 if i + 1 < n else 0
            if indices[i1] & 0x8000:
                i2 = i1 + 1 if i1 + 1 < n else 0
                dx = _vx(verts, indices, i2) - _vx(verts, indices, i)
                dz = _vz(verts, indices, i2) - _vz(verts, indices, i)
                ln = dx * dx + dz * dz
                if min_len < 0 or ln < min_len:
                    min_len = ln
                    mini = i
        if mini == -1:
            return -ntris
        i = mini
        i1 = i + 1 if i + 1 < n else 0
        i2 = i1 + 1 if i1 + 1 < n else 0
        tris[ntris, 0] = indices[i] & 0x7FFF
        tris[ntris, 1] = indices[i1] & 0x7FFF
        tris[ntris, 2] = indices[i2] & 0x7FFF
        ntris += 1
        n -= 1
        for k in range(i1, n):
            indices[k] = indices[k + 1]
        if i1 >= n:
            i1 = 0
        i = i1 - 1 if i1 - 1 >= 0 else n - 1
        ip = i - 1 if i - 1 >= 0 else n - 1
        if _diagonal(ip, i1, n, verts, indices):
            indices[i] |= 0x8000
        else:
            indices[i] &= 0x7FFF
        i1n = i1 + 1 if i1 + 1 < n else 0
        if _diagonal(i, i1n, n, verts, indices):
            indices[i1] |= 0x8000
        else:
            indices[i1] &= 0x7FFF
    tris[ntris, 0] = indices[0] & 0x7FFF
    tris[ntris, 1] = indices[1] & 0x7FFF
    tris[ntris, 2] = indices[2] & 0x7FFF
    ntris += 1
    return ntris


@njit
def _count_poly_verts(p):
    for i in range(NVP):
        if p[i] == _NULL:
            return i
    return NVP


@njit
def _uleft(verts, a, b, c):
    return (
        _area2(
            np.int64(verts[a, 0]),
            np.int64(verts[a, 2]),
            np.int64(verts[b, 0]),
            np.int64(verts[b, 2]),
            np.int64(verts[c, 0]),
            np.int64(verts[c, 2]),
        )
        < 0
    )


@njit
def _merge_polys(pa, pb, ea, eb, tmp):
    """Row ``pa`` becomes the union of rows ``pa`` and ``pb`` joined at their edges
    ``ea`` and ``eb``; ``tmp`` (2 * NVP,) int64 scratch."""
    na = _count_poly_verts(pa)
    nb = _count_poly_verts(pb)
    for i in range(NVP * 2):
        tmp[i] = _NULL
    n = 0
    for i in range(na - 1):
        tmp[n] = pa[(ea + 1 + i) % na]
        n += 1
    for i in range(nb - 1):
        tmp[n] = pb[(eb + 1 + i) % nb]
        n += 1
    for i in range(NVP):
        pa[i] = tmp[i]


@njit
def _pair_value(polys, j, k, na, nb, verts):
    """``getPolyMergeValue`` of rows ``j`` and ``k`` (``na``/``nb`` vertices, na + nb - 2
    <= NVP): (value, ea, eb), value -1 when they cannot merge. Works on the rows in
    place (no array views) and without modulo in the edge loops."""
    ea = -1
    eb = -1
    for i in range(na):
        va0 = polys[j, i]
        va1 = polys[j, i + 1] if i + 1 < na else polys[j, 0]
        if va0 > va1:
            va0, va1 = va1, va0
        for m in range(nb):
            vb0 = polys[k, m]
            vb1 = polys[k, m + 1] if m + 1 < nb else polys[k, 0]
            if vb0 > vb1:
                vb0, vb1 = vb1, vb0
            if va0 == vb0 and va1 == vb1:
                ea = i
                eb = m
                break
    if ea == -1:
        return -1, ea, eb
    if not _uleft(verts, polys[j, (ea + na - 1) % na], polys[j, ea], polys[k, (eb + 2) % nb]):
        return -1, ea, eb
    if not _uleft(verts, polys[k, (eb + nb - 1) % nb], polys[k, eb], polys[j, (ea + 2) % na]):
        return -1, ea, eb
    va = polys[j, ea]
    vb = polys[j, ea + 1] if ea + 1 < na else polys[j, 0]
    dx = np.int64(verts[va, 0]) - np.int64(verts[vb, 0])
    dy = np.int64(verts[va, 2]) - np.int64(verts[vb, 2])
    return dx * dx + dy * dy, ea, eb


@njit
def _pair_packed(polys, j, k, cnt, verts):
    """Merge value of rows ``j`` < ``k`` packed with its edges: ``value << 6 | ea << 3 |
    eb``, or -1 when they cannot merge (too many vertices, no shared edge, concave)."""
    na = cnt[j]
    nb = cnt[k]
    if na + nb - 2 > NVP:
        return -1
    v, ea, eb = _pair_value(polys, j, k, na, nb, verts)
    if v < 0:
        return -1
    return (v << 6) | (ea << 3) | eb


@njit
def _vertex_sig(polys, j, n):
    """Bit ``v % 64`` of each of row ``j``'s ``n`` vertices."""
    sg = np.int64(0)
    for i in range(n):
        sg |= np.int64(1) << (polys[j, i] & 63)
    return sg


@njit(inline="always")
def _bits(x):
    """The number of bits set in ``x`` (a vertex signature of at most NVP bits)."""
    c = 0
    while x != 0:
        x &= x - 1
        c += 1
    return c


@njit(inline="always")
def _may_merge(sig, nc, a, b):
    """False when rows ``a`` and ``b`` cannot share an edge: their signatures share no
    bit (no common vertex), or at most one bit while both rows' vertices have distinct
    bits (``nc``: then every common vertex is a common bit, so they share at most one
    vertex)."""
    m = sig[a] & sig[b]
    if m == 0:
        return False
    return not (nc[a] and nc[b] and (m & (m - 1)) == 0)


@njit
def _merge_loop(polys, npolys, verts, pareas, has_areas):
    """Greedy merge of ``polys[:npolys]`` (rows of NVP); returns the new count.

    Recast's loop: every pair's merge value, the best pair merged (the first in row
    order among the largest), again until none merges. A pair's value depends only on
    its two rows, so the values are kept in a matrix and, after a merge, only the
    pairs of the two rows that changed (the merged row, and the last row moved into
    the freed one) are computed again: the scan is the same, ~n times less work.
    Values are cell-space squared lengths (< 2 * 256**2), so the packing fits int32."""
    n0 = max(npolys, 1)
    # the per-row arrays in one block (each is written before it is read)
    blk = np.empty(5 * n0 + 2 * NVP, np.int64)
    cnt = blk[:n0]
    # each row's vertex signature (bit v % 64 of each vertex v): rows whose signatures
    # share no bit share no vertex, so no edge, and cannot merge (-1, as
    # _pair_packed would say) without comparing their edges
    sig = blk[n0 : 2 * n0]
    nc = blk[4 * n0 : 5 * n0]  # (1: the row's vertices have distinct signature bits)
    for j in range(npolys):
        cnt[j] = _count_poly_verts(polys[j])
        sig[j] = _vertex_sig(polys, j, cnt[j])
        nc[j] = _bits(sig[j]) == cnt[j]
    pv = np.empty((n0, n0), np.int32)
    tmp = blk[5 * n0 :]
    # each row's best pair (value, k): the largest value of row j's pairs (j, k > j),
    # the first such k; the best pair overall is the first row's with the largest
    # value (Recast's scan order). A merge changes the rows of the two polygons and
    # the entries in their columns only: the other rows' bests are kept, compared with
    # their new entries, or computed again when they pointed at a changed column.
    rbv = blk[2 * n0 : 3 * n0]
    rbk = blk[3 * n0 : 4 * n0]
    for j in range(npolys - 1):
        bv = 0
        bk = 0
        for k in range(j + 1, npolys):
            p = _pair_packed(polys, j, k, cnt, verts) if _may_merge(sig, nc, j, k) else -1
            pv[j, k] = p
            v = p >> 6
            if v > bv:
                bv = v
                bk = k
        rbv[j] = bv
        rbk[j] = bk
    while True:
        best_val = 0
        best_pa = 0
        for j in range(npolys - 1):
            if rbv[j] > best_val:
                best_val = rbv[j]
                best_pa = j
        if best_val <= 0:
            break
        best_pb = rbk[best_pa]
        p = np.int64(pv[best_pa, best_pb])
        _merge_polys(polys[best_pa], polys[best_pb], (p >> 3) & 7, p & 7, tmp)
        cnt[best_pa] = cnt[best_pa] + cnt[best_pb] - 2
        sig[best_pa] = _vertex_sig(polys, best_pa, cnt[best_pa])
        nc[best_pa] = _bits(sig[best_pa]) == cnt[best_pa]
        last = npolys - 1
        polys[best_pb, :] = polys[last, :]
        cnt[best_pb] = cnt[last]
        sig[best_pb] = sig[last]
        nc[best_pb] = nc[last]
        if has_areas:
            pareas[best_pb] = pareas[last]
        npolys -= 1
        for x in range(npolys):
            if x != best_pa:
                lo = min(x, best_pa)
                hi = max(x, best_pa)
                pv[lo, hi] = (
                    _pair_packed(polys, lo, hi, cnt, verts) if _may_merge(sig, nc, lo, hi) else -1
                )
        if best_pb < npolys:
            for x in range(npolys):
                if x != best_pb and x != best_pa:
                    lo = min(x, best_pb)
                    hi = max(x, best_pb)
                    pv[lo, hi] = (
                        _pair_packed(polys, lo, hi, cnt, verts)
                        if _may_merge(sig, nc, lo, hi)
                        else -1
                    )
        for j in range(npolys - 1):
            k0 = rbk[j]
            if (
                j == best_pa or j == best_pb or k0 == best_pa or k0 == best_pb
                or k0 == last
            ):  # fmt: skip
                bv = 0
                bk = 0
                for k in range(j + 1, npolys):
                    v = np.int64(pv[j, k]) >> 6
                    if v > bv:
                        bv = v
                        bk = k
                rbv[j] = bv
                rbk[j] = bk
            else:
                # (the row's other entries did not change: its best stays, unless a
                # changed entry beats it or ties it earlier)
                for c in (best_pa, best_pb):
                    if j < c < npolys:
                        v = np.int64(pv[j, c]) >> 6
                        if v > rbv[j] or (v == rbv[j] and c < k0):
                            rbv[j] = v
                            rbk[j] = c
                            k0 = c
    return npolys


@njit
def _add_vertex(x, y, z, verts, first_vert, next_vert, nv):
    bucket = ((0x8DA6B343 * x + 0xCB1AB31F * z) & 0xFFFFFFFF) & 255
    i = first_vert[bucket]
    while i != _NULL:
        if verts[i, 0] == x and verts[i, 2] == z and abs(np.int64(verts[i, 1]) - y) <= 2:
            return i, nv
        i = next_vert[i]
    i = nv
    nv += 1
    verts[i, 0] = x
    verts[i, 1] = y
    verts[i, 2] = z
    next_vert[i] = first_vert[bucket]
    first_vert[bucket] = i
    return i, nv


@njit
def _can_remove_vertex(polys, npolys, rem):
    num_touched = 0
    num_remaining = 0
    for i in range(npolys):
        nv = _count_poly_verts(polys[i])
        num_removed = 0
        for j in range(nv):
            if polys[i, j] == rem:
                num_touched += 1
                num_removed += 1
        if num_removed:
            num_remaining += nv - (num_removed + 1)
    if num_remaining <= 2:
        return False
    max_edges = num_touched * 2
    if max_edges > _MAX_REM_EDGES:
        return False
    edges = np.zeros((_MAX_REM_EDGES, 3), np.int64)
    nedges = 0
    for i in range(npolys):
        nv = _count_poly_verts(polys[i])
        k = nv - 1
        for j in range(nv):
            if polys[i, j] == rem or polys[i, k] == rem:
                a = np.int64(polys[i, j])
                b = np.int64(polys[i, k])
                if b == rem:
                    a, b = b, a
                exists = False
                for m in range(nedges):
                    if edges[m, 1] == b:
                        edges[m, 2] += 1
                        exists = True
                if not exists:
                    edges[nedges, 0] = a
                    edges[nedges, 1] = b
                    edges[nedges, 2] = 1
                    nedges += 1
            k = j
    num_open = 0
    for i in range(nedges):
        if edges[i, 2] < 2:
            num_open += 1
    return num_open <= 2


@njit
def _remove_vertex(verts, nverts, polys, areas, npolys, rem, max_tris):
    """removeVertex; returns (nverts, npolys, status)."""
    edges = np.zeros((_MAX_REM_EDGES, 3), np.int64)
    nedges = 0
    hole = np.zeros(_MAX_REM_EDGES + 1, np.int64)
    nhole = 0
    harea = np.zeros(_MAX_REM_EDGES + 1, np.int64)
    nharea = 0
    i = 0
    while i < npolys:
        nv = _count_poly_verts(polys[i])
        has_rem = False
        for j in range(nv):
            if polys[i, j] == rem:
                has_rem = True
        if has_rem:
            k = nv - 1
            for j in range(nv):
                if polys[i, j] != rem and polys[i, k] != rem:
                    if nedges >= _MAX_REM_EDGES:
                        return nverts, npolys, _ERR_BUFFER
                    edges[nedges, 0] = polys[i, k]
                    edges[nedges, 1] = polys[i, j]
                    edges[nedges, 2] = areas[i]
                    nedges += 1
                k = j
            for j in range(NVP):
                polys[i, j] = polys[npolys - 1, j]
            for j in range(NVP, 2 * NVP):
                polys[i, j] = _NULL
            areas[i] = areas[npolys - 1]
            npolys -= 1
            i -= 1
        i += 1
    for i in range(rem, nverts - 1):
        verts[i, 0] = verts[i + 1, 0]
        verts[i, 1] = verts[i + 1, 1]
        verts[i, 2] = verts[i + 1, 2]
    nverts -= 1
    for i in range(npolys):
        nv = _count_poly_verts(polys[i])
        for j in range(nv):
            if polys[i, j] > rem:
                polys[i, j] -= 1
    for i in range(nedges):
        if edges[i, 0] > rem:
            edges[i, 0] -= 1
        if edges[i, 1] > rem:
            edges[i, 1] -= 1
    if nedges == 0:
        return nverts, npolys, _OK
    hole[0] = edges[0, 0]
    nhole = 1
    harea[0] = edges[0, 2]
    nharea = 1
    while nedges:
        match = False
        i = 0
        while i < nedges:
            ea = edges[i, 0]
            eb = edges[i, 1]
            a = edges[i, 2]
            add = False
            if hole[0] == eb:
                if nhole >= _MAX_REM_EDGES:
                    return nverts, npolys, _ERR_BUFFER
                for m in range(nhole, 0, -1):
                    hole[m] = hole[m - 1]
                hole[0] = ea
                nhole += 1
                for m in range(nharea, 0, -1):
                    harea[m] = harea[m - 1]
                harea[0] = a
                nharea += 1
                add = True
            elif hole[nhole - 1] == ea:
                if nhole >= _MAX_REM_EDGES:
                    return nverts, npolys, _ERR_BUFFER
                hole[nhole] = eb
                nhole += 1
                harea[nharea] = a
                nharea += 1
                add = True
            if add:
                edges[i, 0] = edges[nedges - 1, 0]
                edges[i, 1] = edges[nedges - 1, 1]
                edges[i, 2] = edges[nedges - 1, 2]
                nedges -= 1
                match = True
                i -= 1
            i += 1
        if not match:
            break
    tverts = np.zeros((nhole, 4), np.uint8)  # the contours' dtype: _triangulate compiles once
    tpoly = np.zeros(nhole, np.int64)
    for i in range(nhole):
        pi = hole[i]
        tverts[i, 0] = verts[pi, 0] & 0xFF
        tverts[i, 1] = verts[pi, 1] & 0xFF
        tverts[i, 2] = verts[pi, 2] & 0xFF
        tpoly[i] = i
    tris = np.zeros((max(nhole, 3), 3), np.int64)
    ntris = _triangulate(nhole, tverts, tpoly, tris)
    if ntris < 0:
        ntris = -ntris
    if ntris > _MAX_REM_EDGES:
        return nverts, npolys, _ERR_BUFFER
    tp = np.full((max(ntris, 1), NVP), _NULL, np.int64)
    pareas = np.zeros(max(ntris, 1), np.int64)
    ntp = 0
    for j in range(ntris):
        t0, t1, t2 = tris[j, 0], tris[j, 1], tris[j, 2]
        if t0 != t1 and t0 != t2 and t1 != t2:
            tp[ntp, 0] = hole[t0]
            tp[ntp, 1] = hole[t1]
            tp[ntp, 2] = hole[t2]
            pareas[ntp] = harea[t0]
            ntp += 1
    if ntp == 0:
        return nverts, npolys, _OK
    ntp = _merge_loop(tp, ntp, verts, pareas, True)
    for i in range(ntp):
        if npolys >= max_tris:
            break
        for j in range(2 * NVP):
            polys[npolys, j] = _NULL
        for j in range(NVP):
            polys[npolys, j] = tp[i, j]
        areas[npolys] = pareas[i]
        npolys += 1
    return nverts, npolys, _OK


@njit
def _adjacency(polys, npolys, verts, cstart, cnverts, cverts):
    max_edges = npolys * NVP
    nverts = verts.shape[0]
    first_edge = np.full(nverts, _NULL, np.int64)
    next_edge = np.full(max(max_edges, 1), _NULL, np.int64)
    ev = np.zeros((max(max_edges, 1), 2), np.int64)
    epe = np.zeros((max(max_edges, 1), 2), np.int64)
    ep = np.zeros((max(max_edges, 1), 2), np.int64)
    ec = 0
    for i in range(npolys):
        for j in range(NVP):
            if polys[i, j] == _NULL:
                break
            v0 = np.int64(polys[i, j])
            v1 = (
                np.int64(polys[i, 0])
                if (j + 1 >= NVP or polys[i, j + 1] == _NULL)
                else np.int64(polys[i, j + 1])
            )
            if v0 < v1:
                ev[ec, 0] = v0
                ev[ec, 1] = v1
                ep[ec, 0] = i
                epe[ec, 0] = j
                ep[ec, 1] = i
                epe[ec, 1] = 0xFF
                next_edge[ec] = first_edge[v0]
                first_edge[v0] = ec
                ec += 1
    for i in range(npolys):
        for j in range(NVP):
            if polys[i, j] == _NULL:
                break
            v0 = np.int64(polys[i, j])
            v1 = (
                np.int64(polys[i, 0])
                if (j + 1 >= NVP or polys[i, j + 1] == _NULL)
                else np.int64(polys[i, j + 1])
            )
            if v0 > v1:
                found = False
                e = first_edge[v1]
                while e != _NULL:
                    if ev[e, 1] == v0 and ep[e, 0] == ep[e, 1]:
                        ep[e, 1] = i
                        epe[e, 1] = j
                        found = True
                        break
                    e = next_edge[e]
                if not found:
                    ev[ec, 0] = v1
                    ev[ec, 1] = v0
                    ep[ec, 0] = i
                    epe[ec, 0] = j
                    ep[ec, 1] = i
                    epe[ec, 1] = 0xFF
                    next_edge[ec] = first_edge[v1]
                    first_edge[v1] = ec
                    ec += 1
    for c in range(cstart.shape[0]):
        n = cnverts[c]
        if n < 3:
            continue
        b = cstart[c]
        k = n - 1
        for j in range(n):
            va = b + k
            vb = b + j
            k = j
            d = np.int64(cverts[va, 3]) & 0xF
            if d == 0xF:
                continue
            if d == 0 or d == 2:
                x = np.int64(cverts[va, 0])
                zmin = np.int64(cverts[va, 2])
                zmax = np.int64(cverts[vb, 2])
                if zmin > zmax:
                    zmin, zmax = zmax, zmin
                for m in range(ec):
                    if ep[m, 0] != ep[m, 1]:
                        continue
                    a0 = ev[m, 0]
                    a1 = ev[m, 1]
                    if verts[a0, 0] == x and verts[a1, 0] == x:
                        ezmin = np.int64(verts[a0, 2])
                        ezmax = np.int64(verts[a1, 2])
                        if ezmin > ezmax:
                            ezmin, ezmax = ezmax, ezmin
                        if zmin < ezmax and zmax > ezmin:
                            epe[m, 1] = d
            else:
                z = np.int64(cverts[va, 2])
                xmin = np.int64(cverts[va, 0])
                xmax = np.int64(cverts[vb, 0])
                if xmin > xmax:
                    xmin, xmax = xmax, xmin
                for m in range(ec):
                    if ep[m, 0] != ep[m, 1]:
                        continue
                    a0 = ev[m, 0]
                    a1 = ev[m, 1]
                    if verts[a0, 2] == z and verts[a1, 2] == z:
                        exmin = np.int64(verts[a0, 0])
                        exmax = np.int64(verts[a1, 0])
                        if exmin > exmax:
                            exmin, exmax = exmax, exmin
                        if xmin < exmax and xmax > exmin:
                            epe[m, 1] = d
    for i in range(ec):
        if ep[i, 0] != ep[i, 1]:
            polys[ep[i, 0], NVP + epe[i, 0]] = ep[i, 1]
            polys[ep[i, 1], NVP + epe[i, 1]] = ep[i, 0]
        elif epe[i, 1] != 0xFF:
            polys[ep[i, 0], NVP + epe[i, 0]] = 0x8000 | epe[i, 1]


@njit
def _keep_alive(arrays):
    """A use of ``arrays``: their owner lives until here (see :func:`navkit._jit.borrow`)."""
    return len(arrays)


@njit(link=False)
def _polymesh_kernel(cstart, cnverts, carea, cverts):  # pragma: no cover - numba
    """(verts, polys, areas, status) of a layer's contours."""
    nconts = cstart.shape[0]
    max_verts = 0
    max_tris = 0
    max_per = 0
    for i in range(nconts):
        if cnverts[i] < 3:
            continue
        max_verts += cnverts[i]
        max_tris += cnverts[i] - 2
        max_per = max(max_per, cnverts[i])
    # the zeroed arrays as views of one zeroed block, the _NULL-filled ones of another
    mv1 = max(max_verts, 1)
    mp1 = max(max_per, 1)
    o1 = max_verts + 1
    o2 = o1 + 3 * max_verts
    o3 = o2 + max_tris
    o4 = o3 + mv1
    o5 = o4 + mp1
    o6 = o5 + 3 * mp1
    zb = np.zeros(o6 + 1, np.int64)
    vflags = zb[:o1]
    verts = zb[o1:o2].reshape((max_verts, 3))
    areas = zb[o2:o3]
    next_vert = zb[o3:o4]
    indices = zb[o4:o5]
    tris = zb[o5:o6].reshape((mp1, 3))
    dummy = zb[o6:]
    q1 = 2 * NVP * max_tris
    q2 = q1 + 256
    nb = np.full(q2 + NVP * mp1, _NULL, np.int64)
    polys = nb[:q1].reshape((max_tris, 2 * NVP))
    first_vert = nb[q1:q2]
    tp = nb[q2:].reshape((mp1, NVP))
    # The helpers take borrowed arrays (no reference counting on each of their many
    # calls). A borrowed view does not own its memory: numba frees a local array after
    # its last use, so the scratch owners are used again after the call (without that
    # they were freed before the body ran, and its own allocations reused them).
    scratch = (vflags, first_vert, next_vert, indices, tris, tp, dummy)
    nverts, npolys, st = _polymesh_body(
        borrow(cstart), borrow(cnverts), borrow(carea), borrow(cverts), borrow(vflags),
        borrow(verts), borrow(polys), borrow(areas), borrow(first_vert), borrow(next_vert),
        borrow(indices), borrow(tris), borrow(tp), borrow(dummy), max_tris,
    )  # fmt: skip
    _keep_alive(scratch)
    if st != _OK:
        return verts[:0], polys[:0], areas[:0], st
    return verts[:nverts], polys[:npolys], areas[:npolys], _OK


@njit(link=False)
def _polymesh_body(
    cstart, cnverts, carea, cverts, vflags, verts, polys, areas, first_vert, next_vert,
    indices, tris, tp, dummy, max_tris,
):  # pragma: no cover - numba  # fmt: skip
    nconts = cstart.shape[0]
    nverts = 0
    npolys = 0
    for c in range(nconts):
        n = cnverts[c]
        if n < 3:
            continue
        b = cstart[c]
        cv = cverts[b : b + n]
        for j in range(n):
            indices[j] = j
        ntris = _triangulate(n, cv, indices, tris)
        if ntris <= 0:
            ntris = -ntris
        for j in range(n):
            idx, nverts = _add_vertex(
                np.int64(cv[j, 0]),
                np.int64(cv[j, 1]),
                np.int64(cv[j, 2]),
                verts,
                first_vert,
                next_vert,
                nverts,
            )
            indices[j] = idx
            if cv[j, 3] & 0x80:
                vflags[idx] = 1
        ntp = 0
        tp[:ntris, :] = _NULL  # (the merge reads the first ntp <= ntris rows only)
        for j in range(ntris):
            t0, t1, t2 = tris[j, 0], tris[j, 1], tris[j, 2]
            if t0 != t1 and t0 != t2 and t1 != t2:
                tp[ntp, 0] = indices[t0]
                tp[ntp, 1] = indices[t1]
                tp[ntp, 2] = indices[t2]
                ntp += 1
        if ntp == 0:
            continue
        ntp = _merge_loop(tp, ntp, verts, dummy, False)
        for j in range(ntp):
            for k in range(NVP):
                polys[npolys, k] = tp[j, k]
            areas[npolys] = carea[c]
            npolys += 1
            if npolys > max_tris:
                return 0, 0, _ERR_BUFFER
    i = 0
    while i < nverts:
        if vflags[i]:
            if not _can_remove_vertex(polys, npolys, i):
                i += 1
                continue
            nverts, npolys, st = _remove_vertex(verts, nverts, polys, areas, npolys, i, max_tris)
            if st != _OK:
                return 0, 0, st
            for j in range(i, nverts):
                vflags[j] = vflags[j + 1]
            i -= 1
        i += 1
    _adjacency(polys[:npolys], npolys, verts[:nverts], cstart, cnverts, cverts)
    return nverts, npolys, _OK


def build_tile_cache_poly_mesh(
    cset: TileCacheContours,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Polygon mesh of a layer's contours (``dtBuildTileCachePolyMesh``).

    Returns
    -------
    verts : (nv, 3) uint16
        (x, height, z) in layer cells.
    polys : (np, 12) uint16
        6 vertex indices then 6 neighbour entries (polygon index, ``0x8000 | dir``
        for a portal, ``0xffff`` none).
    areas : (np,) uint8
    None
        when a buffer of Detour's overflows (``DT_BUFFER_TOO_SMALL``).
    """
    verts, polys, areas, st = _polymesh_kernel(
        np.asarray(cset.start, np.int64),
        np.asarray(cset.nverts, np.int64),
        np.asarray(cset.area, np.int64),
        np.ascontiguousarray(cset.verts, np.uint8),
    )
    if st != _OK:
        return None
    return verts.astype(np.uint16), polys.astype(np.uint16), areas.astype(np.uint8)
