"""Region outlines: Recast's ``rcBuildContours``.

Every compact span whose region differs from a neighbour's gets a 4-bit mask of
its boundary edges. Scanning the grid row by row, the first span still holding
boundary edges starts a walk that follows the region's border clockwise (turn
right at a boundary edge, step into the neighbour and turn left otherwise),
emitting one raw vertex per boundary edge: the edge's corner, at the highest
floor of the up to four spans around the corner, tagged with the region across
the edge, ``AREA_BORDER`` when the area changes there and ``BORDER_VERTEX`` for
corners on the tile border. The raw outline is then simplified: it starts from
every vertex where the neighbouring region (or area-border state) changes, or,
for an outline without neighbours, from its lower-left and upper-right
vertices; points farthest from a wall or area-border segment are added while
they deviate more than ``max_error``; wall edges (and, optionally, area edges)
longer than ``max_edge_len`` are split at their middle raw vertex; each kept
vertex takes the neighbour region of the raw vertex after it; consecutive
duplicates in x/z are dropped. With a tile border the coordinates are shifted
so the border is excluded. Finally contours wound clockwise (holes) are merged
into the outline of their region through the shortest diagonal that crosses no
outline or remaining hole edge, leaving the hole with no simplified vertices.

Everything (including the order of qsort's comparisons, reproduced with musl's
smoothsort as in the WebAssembly build of Recast, and Recast's use of the hole
index to pick the diagonal vertex that is exempt from the crossing test)
follows Recast's ``rcBuildContours``, ``walkContour``, ``getCornerHeight``,
``simplifyContour``, ``removeDegenerateSegments`` and ``mergeRegionHoles``
(RecastContour.cpp), so the result equals Recast's array for array.
"""

from __future__ import annotations

import math

import numpy as np

from navkit._jit import F32, borrow, njit
from navkit.errors import ConfigError, InputError

from .types import (
    AREA_BORDER,
    BORDER_REG,
    BORDER_VERTEX,
    CONTOUR_REG_MASK,
    NOT_CONNECTED,
    CompactHeightfield,
    ContourSet,
)

__all__ = ["CONTOUR_TESS_WALL_EDGES", "CONTOUR_TESS_AREA_EDGES", "build_contours"]

CONTOUR_TESS_WALL_EDGES = 1  #: RC_CONTOUR_TESS_WALL_EDGES: split long wall edges
CONTOUR_TESS_AREA_EDGES = 2  #: RC_CONTOUR_TESS_AREA_EDGES: split long edges between areas

_WALK_MAX_ITER = 40000  # Recast gives up on a walk after 39999 steps


# -- small helpers ---------------------------------------------------------------------------
@njit
def _dir_x(d):
    return -1 if d == 0 else (1 if d == 2 else 0)


@njit
def _dir_z(d):
    return 1 if d == 1 else (-1 if d == 3 else 0)


@njit
def _link(con, i, d):
    return (con[i] >> np.uint32(6 * d)) & np.uint32(0x3F)


@njit
def _grow(a, need):
    """``a`` with room for at least ``need`` rows (doubling), contents kept."""
    if need <= a.shape[0]:
        return a
    cap = max(need, 2 * a.shape[0])
    b = np.empty((cap, a.shape[1]), a.dtype)
    b[: a.shape[0]] = a
    return b


# -- boundary flags and the walk ---------------------------------------------------------------
@njit
def _boundary_flags(w, h, cidx, ccnt, con, reg):
    """Per span, bit ``d`` set where the neighbour in direction ``d`` has another region.

    Also checks every link (Recast trusts them): returns ``(flags, bad)`` where ``bad`` is
    the first span whose cell range or a link leaves the arrays, or -1.
    """
    # no reference counting in the helpers' calls (docs/architecture.md, Kernels)
    cidx, ccnt, con, reg = borrow((cidx, ccnt, con, reg))
    nspans = reg.shape[0]
    flags = np.zeros(nspans, np.uint8)
    for c in range(w * h):
        if np.int64(cidx[c]) + np.int64(ccnt[c]) > nspans:
            return flags, np.int64(cidx[c])
    for z in range(h):
        for x in range(w):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccnt[c])):
                r = reg[i]
                region = r != 0 and (r & BORDER_REG) == 0
                same = 0
                for d in range(4):
                    lk = _link(con, i, d)
                    if lk == NOT_CONNECTED:
                        continue
                    nx = x + _dir_x(d)
                    nz = z + _dir_z(d)
                    if nx < 0 or nz < 0 or nx >= w or nz >= h:
                        return flags, i
                    nc = nx + nz * w
                    if lk >= ccnt[nc]:
                        return flags, i
                    if region and reg[np.int64(cidx[nc]) + lk] == r:
                        same |= 1 << d
                if region:
                    flags[i] = same ^ 0xF
    return flags, -1


@njit
def _boundary_flags_linked(w, h, cidx, ccnt, con, reg):
    """:func:`_boundary_flags` of a compact heightfield whose cells and links are
    known to be in range (the bake chain's: the front kernel checked every link).

    Only region spans are visited, as in Recast; the others keep flag 0.
    """
    cidx, ccnt, con, reg = borrow((cidx, ccnt, con, reg))
    nspans = reg.shape[0]
    flags = np.zeros(nspans, np.uint8)
    for z in range(h):
        for x in range(w):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccnt[c])):
                r = reg[i]
                if r == 0 or (r & BORDER_REG) != 0:
                    continue
                cn = np.int64(con[i])
                same = 0
                lk = cn & 0x3F  # direction 0: x - 1
                if lk != NOT_CONNECTED and reg[np.int64(cidx[c - 1]) + lk] == r:
                    same |= 1
                lk = (cn >> 6) & 0x3F  # direction 1: z + 1
                if lk != NOT_CONNECTED and reg[np.int64(cidx[c + w]) + lk] == r:
                    same |= 2
                lk = (cn >> 12) & 0x3F  # direction 2: x + 1
                if lk != NOT_CONNECTED and reg[np.int64(cidx[c + 1]) + lk] == r:
                    same |= 4
                lk = (cn >> 18) & 0x3F  # direction 3: z - 1
                if lk != NOT_CONNECTED and reg[np.int64(cidx[c - w]) + lk] == r:
                    same |= 8
                flags[i] = same ^ 0xF
    return flags


@njit
def _span_code(reg, areas, i):
    return np.int64(reg[i]) | (np.int64(areas[i]) << 16)


@njit
def _corner(x, z, i, d, w, cidx, con, ys, reg, areas):
    """Height of the corner after edge ``d`` of span ``i``, and whether it is a border vertex."""
    d1 = (d + 1) & 3
    top = np.int64(ys[i])
    c0 = _span_code(reg, areas, i)
    c1 = np.int64(0)
    c2 = np.int64(0)
    c3 = np.int64(0)
    lk = _link(con, i, d)
    if lk != NOT_CONNECTED:
        ax = x + _dir_x(d)
        az = z + _dir_z(d)
        a = np.int64(cidx[ax + az * w]) + lk
        top = max(top, np.int64(ys[a]))
        c1 = _span_code(reg, areas, a)
        lk2 = _link(con, a, d1)
        if lk2 != NOT_CONNECTED:
            b = np.int64(cidx[(ax + _dir_x(d1)) + (az + _dir_z(d1)) * w]) + lk2
            top = max(top, np.int64(ys[b]))
            c2 = _span_code(reg, areas, b)
    lk = _link(con, i, d1)
    if lk != NOT_CONNECTED:
        ax = x + _dir_x(d1)
        az = z + _dir_z(d1)
        a = np.int64(cidx[ax + az * w]) + lk
        top = max(top, np.int64(ys[a]))
        c3 = _span_code(reg, areas, a)
        lk2 = _link(con, a, d)
        if lk2 != NOT_CONNECTED:
            b = np.int64(cidx[(ax + _dir_x(d)) + (az + _dir_z(d)) * w]) + lk2
            top = max(top, np.int64(ys[b]))
            c2 = _span_code(reg, areas, b)
    codes = (c0, c1, c2, c3)
    border = False
    if c0 != 0 and c1 != 0 and c2 != 0 and c3 != 0:
        for j in range(4):
            ca = codes[j]
            cb = codes[(j + 1) & 3]
            cc = codes[(j + 2) & 3]
            cd = codes[(j + 3) & 3]
            # two equal tile-border cells, then two interior cells of one area
            if (
                (ca & cb & BORDER_REG) != 0
                and ca == cb
                and ((cc | cd) & BORDER_REG) == 0
                and (cc >> 16) == (cd >> 16)
            ):
                border = True
                break
    return top, border


@njit(link=False)
def _walk(x, z, i, w, cidx, con, ys, reg, areas, flags, pts):
    """Raw outline starting at span ``i``; returns (pts, count). Clears walked edges."""
    d = 0
    while (flags[i] & (1 << d)) == 0:
        d += 1
    start_d = d
    start_i = i
    area = areas[i]
    n = 0
    it = 1
    while it < _WALK_MAX_ITER:
        if flags[i] & (1 << d):
            top, border = _corner(x, z, i, d, w, cidx, con, ys, reg, areas)
            px = x + (1 if d == 1 or d == 2 else 0)
            pz = z + (1 if d == 0 or d == 1 else 0)
            r = np.int64(0)
            lk = _link(con, i, d)
            if lk != NOT_CONNECTED:
                a = np.int64(cidx[(x + _dir_x(d)) + (z + _dir_z(d)) * w]) + lk
                r = np.int64(reg[a])
                if areas[a] != area:
                    r |= AREA_BORDER
            if border:
                r |= BORDER_VERTEX
            if n >= pts.shape[0]:  # the call only when growing: no refcounts per vertex
                pts = _grow(pts, n + 1)
            pts[n, 0] = px
            pts[n, 1] = top
            pts[n, 2] = pz
            pts[n, 3] = r
            n += 1
            flags[i] &= np.uint8(~(1 << d) & 0xFF)
            d = (d + 1) & 3
        else:
            lk = _link(con, i, d)
            if lk == NOT_CONNECTED:
                return pts, n  # inconsistent links; Recast stops here too
            x = x + _dir_x(d)
            z = z + _dir_z(d)
            i = np.int64(cidx[x + z * w]) + lk
            d = (d + 3) & 3
        if i == start_i and d == start_d:
            break
        it += 1
    return pts, n


# -- simplification ----------------------------------------------------------------------------
@njit
def _seg_dist2(x, z, px, pz, qx, qz):
    """Squared distance (float32) of (x, z) from segment p-q, as Recast computes it."""
    pqx = F32(qx - px)
    pqz = F32(qz - pz)
    dx = F32(x - px)
    dz = F32(z - pz)
    d = pqx * pqx + pqz * pqz
    t = pqx * dx + pqz * dz
    if d > F32(0):
        t = t / d
    if t < F32(0):
        t = F32(0)
    elif t > F32(1):
        t = F32(1)
    dx = F32(px) + t * pqx - F32(x)
    dz = F32(pz) + t * pqz - F32(z)
    return dx * dx + dz * dz


@njit
def _insert_after(sv, ns, pos, pts, k):
    """Insert raw vertex ``k`` into the simplified list after row ``pos``."""
    sv = _grow(sv, ns + 1)
    for j in range(ns, pos + 1, -1):
        for c in range(4):
            sv[j, c] = sv[j - 1, c]
    sv[pos + 1, 0] = pts[k, 0]
    sv[pos + 1, 1] = pts[k, 1]
    sv[pos + 1, 2] = pts[k, 2]
    sv[pos + 1, 3] = k
    return sv, ns + 1


@njit(link=False)
def _simplify(pts, pn, sv, max_error, max_edge_len, build_flags):
    """Simplified outline of raw ``pts[:pn]``; returns (sv, count). Column 3 = flags."""
    ns = 0
    connected = False
    for k in range(pn):
        if (pts[k, 3] & CONTOUR_REG_MASK) != 0:
            connected = True
            break
    if connected:
        for k in range(pn):
            k1 = k + 1 if k + 1 < pn else 0
            a = pts[k, 3]
            b = pts[k1, 3]
            if (a & CONTOUR_REG_MASK) != (b & CONTOUR_REG_MASK) or (a & AREA_BORDER) != (
                b & AREA_BORDER
            ):
                sv = _grow(sv, ns + 1)
                sv[ns, 0] = pts[k, 0]
                sv[ns, 1] = pts[k, 1]
                sv[ns, 2] = pts[k, 2]
                sv[ns, 3] = k
                ns += 1
    if ns == 0:
        lo = 0
        hi = 0
        for k in range(pn):
            x = pts[k, 0]
            z = pts[k, 2]
            if x < pts[lo, 0] or (x == pts[lo, 0] and z < pts[lo, 2]):
                lo = k
            if x > pts[hi, 0] or (x == pts[hi, 0] and z > pts[hi, 2]):
                hi = k
        sv = _grow(sv, 2)
        for c in range(3):
            sv[0, c] = pts[lo, c]
            sv[1, c] = pts[hi, c]
        sv[0, 3] = lo
        sv[1, 3] = hi
        ns = 2

    # refine until every raw vertex of a wall / area edge is within max_error
    tol = max_error * max_error
    s = 0
    while s < ns:
        s1 = s + 1 if s + 1 < ns else 0
        ax = sv[s, 0]
        az = sv[s, 2]
        ai = sv[s, 3]
        bx = sv[s1, 0]
        bz = sv[s1, 2]
        bi = sv[s1, 3]
        # walk the raw span in lexicographic order so shared edges simplify alike
        if bx > ax or (bx == ax and bz > az):
            step = 1
            k = ai + 1 if ai + 1 < pn else 0
            end = bi
        else:
            step = pn - 1
            k = bi + step if bi + step < pn else bi + step - pn
            end = ai
            ax, bx = bx, ax
            az, bz = bz, az
        far = -1
        fard = F32(0)
        if (pts[k, 3] & CONTOUR_REG_MASK) == 0 or (pts[k, 3] & AREA_BORDER) != 0:
            while k != end:
                dd = _seg_dist2(pts[k, 0], pts[k, 2], ax, az, bx, bz)
                if dd > fard:
                    fard = dd
                    far = k
                # (k + step) % pn without a 64-bit division: k < pn and step < pn
                k += step
                if k >= pn:
                    k -= pn
        if far != -1 and fard > tol:
            sv, ns = _insert_after(sv, ns, s, pts, far)
        else:
            s += 1

    # split long wall / area edges at their middle raw vertex
    if max_edge_len > 0 and (build_flags & (CONTOUR_TESS_WALL_EDGES | CONTOUR_TESS_AREA_EDGES)):
        lim = np.int64(max_edge_len) * np.int64(max_edge_len)
        s = 0
        while s < ns:
            s1 = s + 1 if s + 1 < ns else 0
            ax = sv[s, 0]
            az = sv[s, 2]
            ai = sv[s, 3]
            bx = sv[s1, 0]
            bz = sv[s1, 2]
            bi = sv[s1, 3]
            nf = pts[ai + 1 if ai + 1 < pn else 0, 3]
            split = False
            if (build_flags & CONTOUR_TESS_WALL_EDGES) and (nf & CONTOUR_REG_MASK) == 0:
                split = True
            if (build_flags & CONTOUR_TESS_AREA_EDGES) and (nf & AREA_BORDER) != 0:
                split = True
            mid = -1
            if split:
                ex = bx - ax
                ez = bz - az
                if ex * ex + ez * ez > lim:
                    span = bi + pn - ai if bi < ai else bi - ai
                    if span > 1:
                        if bx > ax or (bx == ax and bz > az):
                            mid = (ai + span // 2) % pn
                        else:
                            mid = (ai + (span + 1) // 2) % pn
            if mid != -1:
                sv, ns = _insert_after(sv, ns, s, pts, mid)
            else:
                s += 1

    # flags: neighbour region / area border of the next raw vertex, border flag of this one
    for s in range(ns):
        k = sv[s, 3]
        nxt = pts[k + 1 if k + 1 < pn else 0, 3]
        sv[s, 3] = (nxt & (CONTOUR_REG_MASK | AREA_BORDER)) | (pts[k, 3] & BORDER_VERTEX)

    # drop vertices equal (in x/z) to the next one; the index is not re-checked
    s = 0
    while s < ns:
        s1 = s + 1 if s + 1 < ns else 0
        if sv[s, 0] == sv[s1, 0] and sv[s, 2] == sv[s1, 2]:
            for j in range(s, ns - 1):
                for c in range(4):
                    sv[j, c] = sv[j + 1, c]
            ns -= 1
        s += 1
    return sv, ns


@njit(link=False)
def _trace_kernel(
    w, h, cidx, ccnt, con, ys, reg, areas, flags, max_error, max_edge_len, build_flags
):
    """All contours in Recast's order (rows, columns, spans).

    Returns (creg, carea, nverts, nrverts, verts, rverts), the vertex arrays concatenated.
    """
    # no reference counting in the helpers' calls (docs/architecture.md, Kernels)
    cidx, ccnt, con, ys, reg, areas, flags = borrow((cidx, ccnt, con, ys, reg, areas, flags))
    pts = np.empty((256, 4), np.int64)
    sv = np.empty((64, 4), np.int64)
    cap = 64
    creg = np.empty(cap, np.int64)
    carea = np.empty(cap, np.int64)
    cnv = np.empty(cap, np.int64)
    cnr = np.empty(cap, np.int64)
    verts = np.empty((1024, 4), np.int64)
    rverts = np.empty((4096, 4), np.int64)
    nc = 0
    nv = 0
    nr = 0
    for z in range(h):
        for x in range(w):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccnt[c])):
                if flags[i] == 0 or flags[i] == 0xF:
                    flags[i] = 0
                    continue
                r = reg[i]
                if r == 0 or (r & BORDER_REG) != 0:
                    continue
                pts, pn = _walk(x, z, i, w, cidx, con, ys, reg, areas, flags, pts)
                if pn == 0:
                    continue
                sv, ns = _simplify(pts, pn, sv, max_error, max_edge_len, build_flags)
                if ns < 3:
                    continue
                if nc == cap:
                    cap *= 2
                    creg2 = np.empty(cap, np.int64)
                    carea2 = np.empty(cap, np.int64)
                    cnv2 = np.empty(cap, np.int64)
                    cnr2 = np.empty(cap, np.int64)
                    creg2[:nc] = creg[:nc]
                    carea2[:nc] = carea[:nc]
                    cnv2[:nc] = cnv[:nc]
                    cnr2[:nc] = cnr[:nc]
                    creg, carea, cnv, cnr = creg2, carea2, cnv2, cnr2
                creg[nc] = r
                carea[nc] = areas[i]
                cnv[nc] = ns
                cnr[nc] = pn
                nc += 1
                verts = _grow(verts, nv + ns)
                verts[nv : nv + ns] = sv[:ns]
                nv += ns
                rverts = _grow(rverts, nr + pn)
                rverts[nr : nr + pn] = pts[:pn]
                nr += pn
    return creg[:nc], carea[:nc], cnv[:nc], cnr[:nc], verts[:nv], rverts[:nr]


# -- hole merging ------------------------------------------------------------------------------
@njit
def _ctz(v):
    n = 0
    while (v & 1) == 0 and n < 64:
        v >>= 1
        n += 1
    return n


@njit
def _cmp(k1, k2, a, b):
    if k1[a] != k1[b]:
        return -1 if k1[a] < k1[b] else 1
    if k2[a] != k2[b]:
        return -1 if k2[a] < k2[b] else 1
    return 0


@njit
def _rotate(k1, k2, pl, ar, n):
    """Element ar[0] <- ar[1] <- ... <- ar[n-1] <- old ar[0] (musl's cycle)."""
    if n < 2:
        return
    t1 = k1[ar[0]]
    t2 = k2[ar[0]]
    tp = pl[ar[0]]
    for j in range(n - 1):
        k1[ar[j]] = k1[ar[j + 1]]
        k2[ar[j]] = k2[ar[j + 1]]
        pl[ar[j]] = pl[ar[j + 1]]
    k1[ar[n - 1]] = t1
    k2[ar[n - 1]] = t2
    pl[ar[n - 1]] = tp


@njit
def _sift(k1, k2, pl, head, pshift, lp, ar):
    ar[0] = head
    n = 1
    while pshift > 1:
        rt = head - 1
        lf = head - 1 - lp[pshift - 2]
        if _cmp(k1, k2, ar[0], lf) >= 0 and _cmp(k1, k2, ar[0], rt) >= 0:
            break
        if _cmp(k1, k2, lf, rt) >= 0:
            ar[n] = lf
            head = lf
            pshift -= 1
        else:
            ar[n] = rt
            head = rt
            pshift -= 2
        n += 1
    _rotate(k1, k2, pl, ar, n)


@njit
def _trinkle(k1, k2, pl, head, p, pshift, trusty, lp, ar):
    ar[0] = head
    n = 1
    while p != 1:
        step = head - lp[pshift]
        if _cmp(k1, k2, step, ar[0]) <= 0:
            break
        if not trusty and pshift > 1:
            rt = head - 1
            lf = head - 1 - lp[pshift - 2]
            if _cmp(k1, k2, rt, step) >= 0 or _cmp(k1, k2, lf, step) >= 0:
                break
        ar[n] = step
        n += 1
        head = step
        trail = _ctz(p - 1)
        p >>= trail
        pshift += trail
        trusty = False
    if not trusty:
        _rotate(k1, k2, pl, ar, n)
        _sift(k1, k2, pl, head, pshift, lp, ar)


@njit
def _smoothsort(k1, k2, pl, n):
    """Sort rows ``(k1, k2, pl)[:n]`` in place by (k1, k2), making musl qsort's exact moves.

    Recast sorts with C ``qsort``, which is not stable; the WebAssembly build's libc (musl)
    implements it as smoothsort, so equal keys end up in the order this reproduces.
    """
    if n < 2:
        return
    lp = np.empty(64, np.int64)  # Leonardo numbers
    lp[0] = 1
    lp[1] = 1
    i = 2
    while True:
        lp[i] = lp[i - 2] + lp[i - 1] + 1
        if lp[i] >= n:
            break
        i += 1
    ar = np.empty(130, np.int64)
    head = 0
    high = n - 1
    p = 1  # bitmap of the Leonardo heaps present (fits in 64 bits here)
    pshift = 1
    while head < high:
        if (p & 3) == 3:
            _sift(k1, k2, pl, head, pshift, lp, ar)
            p >>= 2
            pshift += 2
        else:
            if lp[pshift - 1] >= high - head:
                _trinkle(k1, k2, pl, head, p, pshift, False, lp, ar)
            else:
                _sift(k1, k2, pl, head, pshift, lp, ar)
            if pshift == 1:
                p <<= 1
                pshift = 0
            else:
                p <<= pshift - 1
                pshift = 1
        p |= 1
        head += 1
    _trinkle(k1, k2, pl, head, p, pshift, False, lp, ar)
    while pshift != 1 or p != 1:
        if pshift <= 1:
            trail = _ctz(p - 1)
            p >>= trail
            pshift += trail
        else:
            p <<= 2
            pshift -= 2
            p ^= 7
            p >>= 1
            _trinkle(k1, k2, pl, head - lp[pshift] - 1, p, pshift + 1, True, lp, ar)
            p <<= 1
            p |= 1
            _trinkle(k1, k2, pl, head - 1, p, pshift, True, lp, ar)
        head -= 1


@njit
def _orient(ax, az, bx, bz, cx, cz):
    """Twice the signed area of triangle a, b, c in x/z (negative: c left of a->b)."""
    return (bx - ax) * (cz - az) - (cx - ax) * (bz - az)


@njit
def _on_segment(ax, az, bx, bz, cx, cz):
    """Whether c is collinear with a-b and lies on the closed segment."""
    if _orient(ax, az, bx, bz, cx, cz) != 0:
        return False
    if ax != bx:
        return (ax <= cx <= bx) or (ax >= cx >= bx)
    return (az <= cz <= bz) or (az >= cz >= bz)


@njit
def _segments_meet(ax, az, bx, bz, cx, cz, dx, dz):
    """Whether segments a-b and c-d intersect, properly or not."""
    abc = _orient(ax, az, bx, bz, cx, cz)
    abd = _orient(ax, az, bx, bz, dx, dz)
    cda = _orient(cx, cz, dx, dz, ax, az)
    cdb = _orient(cx, cz, dx, dz, bx, bz)
    if abc != 0 and abd != 0 and cda != 0 and cdb != 0:
        if ((abc < 0) != (abd < 0)) and ((cda < 0) != (cdb < 0)):
            return True
    return (
        _on_segment(ax, az, bx, bz, cx, cz)
        or _on_segment(ax, az, bx, bz, dx, dz)
        or _on_segment(cx, cz, dx, dz, ax, az)
        or _on_segment(cx, cz, dx, dz, bx, bz)
    )


@njit
def _crosses(buf, d0, d1, skip, start, n):
    """Whether segment d0-d1 (rows of ``buf``) crosses an edge of ``buf[start:start+n]``.

    Edges touching local vertex ``skip``, or sharing an end point with the segment, are ignored.
    """
    x0 = buf[d0, 0]
    z0 = buf[d0, 2]
    x1 = buf[d1, 0]
    z1 = buf[d1, 2]
    for k in range(n):
        k1 = k + 1 if k + 1 < n else 0
        if skip == k or skip == k1:
            continue
        px = buf[start + k, 0]
        pz = buf[start + k, 2]
        qx = buf[start + k1, 0]
        qz = buf[start + k1, 2]
        if (
            (px == x0 and pz == z0)
            or (px == x1 and pz == z1)
            or (qx == x0 and qz == z0)
            or (qx == x1 and qz == z1)
        ):
            continue
        if _segments_meet(x0, z0, x1, z1, px, pz, qx, qz):
            return True
    return False


@njit
def _in_cone(buf, start, n, j, cx, cz):
    """Whether point (cx, cz) lies in the interior angle at vertex ``j`` of the polygon."""
    pi = start + j
    pn = start + (j + 1 if j + 1 < n else 0)
    pp = start + (j - 1 if j >= 1 else n - 1)
    ix, iz = buf[pi, 0], buf[pi, 2]
    nx, nz = buf[pn, 0], buf[pn, 2]
    px, pz = buf[pp, 0], buf[pp, 2]
    if _orient(px, pz, ix, iz, nx, nz) <= 0:  # convex corner
        return _orient(ix, iz, cx, cz, px, pz) < 0 and _orient(cx, cz, ix, iz, nx, nz) < 0
    return not (_orient(ix, iz, cx, cz, nx, nz) <= 0 and _orient(cx, cz, ix, iz, px, pz) <= 0)


@njit
def _signed_area_half(buf, start, n):
    """Recast's calcAreaOfPolygon2D: (twice the signed area + 1) / 2, C division."""
    s = np.int64(0)
    j = n - 1
    for i in range(n):
        s += buf[start + i, 0] * buf[start + j, 2] - buf[start + j, 0] * buf[start + i, 2]
        j = i
    t = s + 1
    return t // 2 if t >= 0 else -((-t) // 2)


@njit(link=False)
def _merge_holes_kernel(creg, nverts, verts, nregions):
    """Merge each region's holes into its outline (Recast's mergeRegionHoles).

    Returns (nverts, verts) in the same contour order; merged holes get 0 vertices.
    """
    nc = creg.shape[0]
    start = np.zeros(nc, np.int64)
    for c in range(1, nc):
        start[c] = start[c - 1] + nverts[c - 1]
    hole = np.zeros(nc, np.bool_)
    nholes = 0
    for c in range(nc):
        if _signed_area_half(verts, start[c], nverts[c]) < 0:
            hole[c] = True
            nholes += 1
    if nholes == 0:
        return nverts, verts
    outline = np.full(nregions, -1, np.int64)
    for c in range(nc):
        if not hole[c]:
            outline[creg[c]] = c  # with several outlines, the last one wins as in Recast
    cnt = np.zeros(nregions, np.int64)
    for c in range(nc):
        if hole[c]:
            cnt[creg[c]] += 1
    # working buffer: the input, then every merged outline appended after it
    total = verts.shape[0]
    buf = np.empty((2 * total + 4 * nc + 16, 4), np.int64)
    buf[:total] = verts
    used = total
    cur_start = start.copy()
    cur_n = nverts.copy()
    corner = buf.shape[0] - 1  # scratch row for the hole vertex being connected
    for r in range(nregions):
        if cnt[r] == 0 or outline[r] < 0:
            continue  # Recast logs a bad outline and leaves the holes alone
        o = outline[r]
        hl = np.empty(cnt[r], np.int64)
        m = 0
        for c in range(nc):
            if hole[c] and creg[c] == r:
                hl[m] = c
                m += 1
        # sort holes by their lowest-leftmost vertex
        hx = np.empty(m, np.int64)
        hz = np.empty(m, np.int64)
        hleft = np.empty(m, np.int64)
        for q in range(m):
            s0 = cur_start[hl[q]]
            best = 0
            for v in range(1, cur_n[hl[q]]):
                x = buf[s0 + v, 0]
                z = buf[s0 + v, 2]
                if x < buf[s0 + best, 0] or (x == buf[s0 + best, 0] and z < buf[s0 + best, 2]):
                    best = v
            hx[q] = buf[s0 + best, 0]
            hz[q] = buf[s0 + best, 2]
            hleft[q] = best
        order = np.arange(m)
        _smoothsort(hx, hz, order, m)
        sorted_left = hleft[order]
        maxv = cur_n[o]
        for q in range(m):
            maxv += cur_n[hl[q]]
        # diagonal candidates persist across holes, as Recast's buffer does
        dvert = np.full(maxv, -1, np.int64)
        ddist = np.zeros(maxv, np.int64)
        dzero = np.zeros(maxv, np.int64)
        for q in range(m):
            hc = hl[order[q]]
            hs = cur_start[hc]
            hn = cur_n[hc]
            best = sorted_left[q]
            found = -1
            for _ in range(hn):
                buf[corner] = buf[hs + best]
                os_ = cur_start[o]
                on = cur_n[o]
                nd = 0
                for j in range(on):
                    if _in_cone(buf, os_, on, j, buf[corner, 0], buf[corner, 2]):
                        ex = buf[os_ + j, 0] - buf[corner, 0]
                        ez = buf[os_ + j, 2] - buf[corner, 2]
                        dvert[nd] = j
                        ddist[nd] = ex * ex + ez * ez
                        nd += 1
                _smoothsort(ddist, dzero, dvert, nd)  # shortest first
                for j in range(nd):
                    pt = os_ + dvert[j]
                    # Recast exempts the edges at diagonal q (the hole's index), not j
                    hit = _crosses(buf, pt, corner, dvert[q], os_, on)
                    k = q
                    while k < m and not hit:
                        kc = hl[order[k]]
                        hit = _crosses(buf, pt, corner, -1, cur_start[kc], cur_n[kc])
                        k += 1
                    if not hit:
                        found = dvert[j]
                        break
                if found != -1:
                    break
                best = (best + 1) % hn
            if found == -1:
                continue  # Recast logs that no merge point was found
            # outline from `found` all the way round to itself, then the hole likewise
            on = cur_n[o]
            os_ = cur_start[o]
            need = used + on + hn + 2
            if need > corner:
                nb = np.empty((2 * need + 16, 4), np.int64)
                nb[:used] = buf[:used]
                nb[nb.shape[0] - 1] = buf[corner]
                buf = nb
                corner = buf.shape[0] - 1
            w = used
            for t in range(on + 1):
                buf[w] = buf[os_ + (found + t) % on]
                w += 1
            for t in range(hn + 1):
                buf[w] = buf[hs + (best + t) % hn]
                w += 1
            cur_start[o] = used
            cur_n[o] = on + hn + 2
            used = w
            cur_n[hc] = 0
    tot = 0
    for c in range(nc):
        tot += cur_n[c]
    out = np.empty((tot, 4), np.int64)
    w = 0
    for c in range(nc):
        out[w : w + cur_n[c]] = buf[cur_start[c] : cur_start[c] + cur_n[c]]
        w += cur_n[c]
    return cur_n, out


# -- public entry ------------------------------------------------------------------------------
def _validate(chf: CompactHeightfield) -> None:
    if not isinstance(chf, CompactHeightfield):
        raise InputError(f"expected a CompactHeightfield, got {type(chf).__name__}")
    w, h = int(chf.width), int(chf.height)
    if w < 0 or h < 0:
        raise InputError(f"negative grid size {w} x {h}")
    for name in ("cells_index", "cells_count"):
        a = np.asarray(getattr(chf, name))
        if a.shape != (h, w):
            raise InputError(f"chf.{name} has shape {a.shape}, expected {(h, w)}")
    n = np.asarray(chf.y).shape
    if len(n) != 1:
        raise InputError(f"chf.y must be 1-D, got shape {n}")
    for name in ("h", "con", "reg", "areas"):
        a = np.asarray(getattr(chf, name))
        if a.shape != n:
            raise InputError(f"chf.{name} has shape {a.shape}, expected {n}")
    b = int(chf.border_size)
    if b < 0 or 2 * b > min(w, h) and (w or h):
        raise InputError(f"border_size {b} does not fit a {w} x {h} grid")


def build_contours(
    chf: CompactHeightfield,
    *,
    max_error: float,
    max_edge_len: int,
    build_flags: int = CONTOUR_TESS_WALL_EDGES,
) -> ContourSet:
    """Trace and simplify the outline of every region (Recast's ``rcBuildContours``).

    Parameters
    ----------
    chf : CompactHeightfield
        Compact heightfield with regions built (``reg`` filled, ``max_regions`` set).
    max_error : float
        Largest distance a simplified wall / area edge may stray from the raw outline [vx].
    max_edge_len : int
        Wall edges longer than this are split [vx]; 0 disables splitting.
    build_flags : int
        ``CONTOUR_TESS_WALL_EDGES`` and/or ``CONTOUR_TESS_AREA_EDGES``.

    Returns
    -------
    ContourSet
        Contours in Recast's order; ``verts`` / ``rverts`` (sum, 4) int32 are (x, y, z,
        flags) in voxels with the border removed. Holes merged into their region's outline
        keep their raw vertices and have ``nverts == 0``.

    Raises
    ------
    InputError
        Arrays of the wrong shape, or neighbour links that leave the grid.
    ConfigError
        A negative or non-finite ``max_error``, negative ``max_edge_len`` or unknown flags.
    """
    _validate(chf)
    try:
        me = float(max_error)
    except (TypeError, ValueError, OverflowError):
        me = math.nan
    if not math.isfinite(me) or me < 0:
        raise ConfigError("max_error", f"must be a finite value >= 0, got {max_error!r}")
    try:
        mel = int(max_edge_len)
        integral = mel == max_edge_len
    except (TypeError, ValueError, OverflowError):
        integral = False
    if not integral or mel < 0:
        raise ConfigError("max_edge_len", f"must be an integer >= 0, got {max_edge_len!r}")
    flags_arg = int(build_flags)
    if flags_arg & ~(CONTOUR_TESS_WALL_EDGES | CONTOUR_TESS_AREA_EDGES):
        raise ConfigError("build_flags", f"unknown contour build flags {build_flags!r}")
    w, h, b = int(chf.width), int(chf.height), int(chf.border_size)

    cidx = np.ascontiguousarray(chf.cells_index, dtype=np.uint32).reshape(-1)
    ccnt = np.ascontiguousarray(chf.cells_count, dtype=np.uint8).reshape(-1)
    con = np.ascontiguousarray(chf.con, dtype=np.uint32)
    ys = np.ascontiguousarray(chf.y, dtype=np.uint16)
    reg = np.ascontiguousarray(chf.reg, dtype=np.uint16)
    areas = np.ascontiguousarray(chf.areas, dtype=np.uint8)
    flags, bad = _boundary_flags(w, h, cidx, ccnt, con, reg)
    if bad >= 0:
        raise InputError(
            f"compact heightfield span {bad}: cell range or neighbour link out of bounds"
        )

    creg, carea, nverts, nrverts, verts, rverts = _trace_kernel(
        w, h, cidx, ccnt, con, ys, reg, areas, flags, F32(me), mel, flags_arg
    )
    if b > 0:
        verts[:, 0] -= b
        verts[:, 2] -= b
        rverts[:, 0] -= b
        rverts[:, 2] -= b
    nregions = max(int(chf.max_regions), int(creg.max()) if creg.size else 0) + 1
    nverts, verts = _merge_holes_kernel(creg, nverts, verts, nregions)

    cs = np.float32(chf.cs)
    bmin = np.array(chf.bmin, dtype=np.float32).copy()
    bmax = np.array(chf.bmax, dtype=np.float32).copy()
    if b > 0:
        pad = np.float32(b) * cs
        bmin[0] += pad
        bmin[2] += pad
        bmax[0] -= pad
        bmax[2] -= pad
    return ContourSet(
        creg.astype(np.uint16),
        carea.astype(np.uint8),
        nverts.astype(np.int32),
        nrverts.astype(np.int32),
        verts.astype(np.int32).reshape(-1, 4),
        rverts.astype(np.int32).reshape(-1, 4),
        bmin,
        bmax,
        float(cs),
        float(np.float32(chf.ch)),
        w - 2 * b,
        h - 2 * b,
        b,
        float(np.float32(me)),
    )
