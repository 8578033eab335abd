"""Static construction of the free-space segment Voronoi diagram.

The full build uses Boost.Polygon's Voronoi (Fortune's sweep extended to
segments, O(n log n), exact predicates on integer input) through PyPI
``pyvoronoi``.  Why a library here: an exact sweep with parabolic beach-line
arcs and robust predicates is a large, well-studied piece of numerics that Boost
has kept correct for a decade, and the static build doubles as the independent
oracle for navkit's own local updates (:mod:`navkit.ecm._diagram`), which share
no code with it.  Input coordinates are snapped to a power-of-two grid
(``scale``) by :class:`~navkit.ecm.CorridorMap` first, so Boost's integer
rounding is exact.

When ``pyvoronoi`` is not installed, the diagram is built by inserting the
obstacles one by one with the local-update code (slower, O(n k)).
"""

from __future__ import annotations

import math

import numpy as np

from navkit._jit import njit
from navkit.errors import BuildError

from ._tangent import _dok, _sok

try:  # optional dependency: pip install navkit[ecm]
    import pyvoronoi as _pv
except ImportError:  # pragma: no cover - exercised only without the extra
    _pv = None

HAVE_PYVORONOI = _pv is not None


def build_with_boost(diag, corners, scale: float) -> None:
    """Fill the empty :class:`Diagram` ``diag`` from Boost's Voronoi diagram of its
    alive sites. ``corners``: (s_in, p, s_out) corner vertices of polygons."""
    if _pv is None:
        raise BuildError("pyvoronoi is not installed (pip install navkit[ecm])")
    S = diag.S
    pv = _pv.Pyvoronoi(scale)
    n = S.n
    alive, kind = S.alive[:n], S.kind[:n]
    segm = alive & (kind == 1)
    is_end = np.zeros(n, np.bool_)
    is_end[S.e0[:n][segm]] = True
    is_end[S.e1[:n][segm]] = True
    # points that end no segment (point obstacles), then segments, in id order
    pt_ids = np.flatnonzero(alive & (kind == 0) & ~is_end).astype(np.int64)
    seg_ids = np.flatnonzero(segm).astype(np.int64)
    for x, y in zip(S.ax[pt_ids].tolist(), S.ay[pt_ids].tolist()):
        pv.AddPoint([x, y])
    for x0, y0, x1, y1 in zip(
        S.ax[seg_ids].tolist(), S.ay[seg_ids].tolist(),
        S.bx[seg_ids].tolist(), S.by[seg_ids].tolist(),
    ):  # fmt: skip
        pv.AddSegment([[x0, y0], [x1, y1]])
    pv.Construct()
    npt = len(pt_ids)
    # Boost's output as arrays (one pass over its Python objects each)
    cells = pv.GetCells()
    cat = np.fromiter((c.source_category for c in cells), np.int64, len(cells))
    csite = np.fromiter((c.site for c in cells), np.int64, len(cells))
    verts = pv.GetVertices()
    vxy = np.array([(v.X, v.Y) for v in verts], np.float64).reshape(-1, 2)
    edges = pv.GetEdges()
    ed = np.array(
        [(e.start, e.end, e.cell, e.twin, e.is_primary) for e in edges], np.int64
    ).reshape(-1, 5)
    # the site of each cell: a point, a segment, or a segment's end point
    pts, segs = pt_ids, seg_ids
    sid = segs[np.clip(csite - npt, 0, max(len(segs) - 1, 0))] if len(segs) else csite
    cell_site = np.where(
        cat == 0,
        pts[np.clip(csite, 0, max(npt - 1, 0))] if npt else csite,
        np.where(cat == 1, S.e0[sid], np.where(cat == 2, S.e1[sid], sid)),
    )
    # each vertex's sites: the sites of the cells of the edges that end there
    start, end, ecell = ed[:, 0], ed[:, 1], ed[:, 2]
    vv = np.concatenate([start[start >= 0], end[end >= 0]])
    vs = np.concatenate([cell_site[ecell[start >= 0]], cell_site[ecell[end >= 0]]])
    key = np.unique(vv * np.int64(S.n + 1) + vs)
    kv, ks = key // (S.n + 1), key % (S.n + 1)
    vptr = np.zeros(len(verts) + 1, np.int64)
    np.add.at(vptr, kv + 1, 1)
    vptr = np.cumsum(vptr)
    is_corner = np.zeros(S.n, np.bool_)
    cn = np.asarray(corners, np.int64).reshape(-1, 3)
    is_corner[cn[:, 1]] = True
    keep, xyr, ptr, ids = merged_vertices(
        np.ascontiguousarray(vxy[:, 0]), np.ascontiguousarray(vxy[:, 1]), vptr, ks,
        is_corner, cn, diag.tol, S.kind, S.ax, S.ay, S.bx, S.by, S.side,
    )  # fmt: skip
    vid, _ = diag.add_vertices(xyr, ptr, ids, merge=False)
    keep = np.where(keep >= 0, vid[np.maximum(keep, 0)], -1)
    # primary edges between two kept vertices, once per (sites, ends), no
    # segment-endpoint normals
    twin = ed[:, 3]
    k = np.arange(len(ed))
    sel = (twin >= k) & (ed[:, 4] != 0) & (start >= 0) & (end >= 0)
    k = k[sel]
    v0, v1 = keep[start[k]], keep[end[k]]
    a, b = cell_site[ecell[k]], cell_site[ecell[twin[k]]]
    sel = (v0 >= 0) & (v1 >= 0) & (v0 != v1) & ~_secondary(S, a, b)
    v0, v1, a, b = v0[sel], v1[sel], a[sel], b[sel]
    quad = np.stack([np.minimum(a, b), np.maximum(a, b), np.minimum(v0, v1), np.maximum(v0, v1)], 1)
    _, first = np.unique(quad, axis=0, return_index=True)
    first = np.sort(first)
    diag.add_edges(np.stack([v0[first], v1[first]], 1), np.stack([a[first], b[first]], 1))


def _secondary(S, a, b):
    """Whether each pair (a, b) is a segment and one of its own end points."""
    pa, sb = S.kind[a] == 0, S.kind[b] == 1
    pb, sa = S.kind[b] == 0, S.kind[a] == 1
    return (pa & sb & ((S.e0[b] == a) | (S.e1[b] == a))) | (
        pb & sa & ((S.e0[a] == b) | (S.e1[a] == b))
    )


@njit
def _slot(hk0, hk1, used, gx, gy):
    """Open-addressing slot of grid cell (gx, gy): its slot, or the empty one where
    it would go."""
    mask = used.shape[0] - 1
    h = ((gx * 73856093) ^ (gy * 19349663)) & mask
    while used[h] and (hk0[h] != gx or hk1[h] != gy):
        h = (h + 1) & mask
    return h


@njit
def merged_vertices(vx, vy, vptr, vsites, is_corner, corners, tol, kind, ax, ay, bx, by, side):
    """Boost's vertices as ECM vertices: those with at least three sites, on the
    free side of each, with zero-clearance ones snapped to the polygon corner
    among their sites (dropped without one), then the ``corners``
    ((k, 3) (s_in, p, s_out)); a vertex within 10 tol (per coordinate) of one
    already kept is merged into it (site sets joined; the first one found in a
    grid of cells of 1000 tol, scanned row by row, in order of addition).

    Returns (keep (n,) merged index or -1 per Boost vertex, xyr (k, 3), ptr
    (k + 1,), ids: each merged vertex's sites, ascending)."""
    n = vx.shape[0]
    m = n + corners.shape[0]
    t = tol * 10.0
    cell = max(tol * 1e3, 1e-300)
    cap = 1
    while cap < 2 * m + 2:
        cap *= 2
    used = np.zeros(cap, np.bool_)
    hk0 = np.zeros(cap, np.int64)
    hk1 = np.zeros(cap, np.int64)
    head = np.full(cap, -1, np.int64)
    tail = np.full(cap, -1, np.int64)
    nxt = np.full(m, -1, np.int64)
    px = np.empty(m)
    py = np.empty(m)
    pr = np.empty(m)
    npos = 0
    # site entries of each merged vertex (a linked list per vertex)
    ecap = vsites.shape[0] + 3 * corners.shape[0] + 1
    esite = np.empty(ecap, np.int64)
    enext = np.empty(ecap, np.int64)
    ehead = np.full(m, -1, np.int64)
    ne = 0
    keep = np.full(n, -1, np.int64)
    buf = np.empty(3, np.int64)
    for i in range(n + corners.shape[0]):
        if i < n:
            lo, hi = vptr[i], vptr[i + 1]
            if hi - lo < 3:
                continue
            x, y = vx[i], vy[i]
            s0 = vsites[lo]
            rho, _ = _dok(kind[s0], ax[s0], ay[s0], bx[s0], by[s0], x, y, 1e-9)
            if rho <= tol:
                p = -1
                for q in range(lo, hi):
                    if is_corner[vsites[q]]:
                        p = vsites[q]
                        break
                if p < 0:
                    continue
                x, y, rho = ax[p], ay[p], 0.0
            else:
                good = True
                for q in range(lo, hi):
                    s = vsites[q]
                    if not _sok(kind[s], ax[s], ay[s], bx[s], by[s], side[s], x, y, rho, tol):
                        good = False
                        break
                if not good:
                    continue
            if not (math.isfinite(x) and math.isfinite(y)):
                continue
        else:
            c = i - n
            p = corners[c, 1]
            x, y, rho = ax[p], ay[p], 0.0
            buf[0] = corners[c, 0]
            buf[1] = corners[c, 1]
            buf[2] = corners[c, 2]
        # an already kept vertex at (about) the same point
        gx = int(math.floor(x / cell))
        gy = int(math.floor(y / cell))
        k = -1
        for a in range(gx - 1, gx + 2):
            for b in range(gy - 1, gy + 2):
                h = _slot(hk0, hk1, used, a, b)
                if not used[h]:
                    continue
                q = head[h]
                while q >= 0:
                    if abs(px[q] - x) <= t and abs(py[q] - y) <= t:
                        k = q
                        break
                    q = nxt[q]
                if k >= 0:
                    break
            if k >= 0:
                break
        if k < 0:
            k = npos
            npos += 1
            px[k] = x
            py[k] = y
            pr[k] = rho
            h = _slot(hk0, hk1, used, gx, gy)
            if not used[h]:
                used[h] = True
                hk0[h] = gx
                hk1[h] = gy
                head[h] = k
            else:
                nxt[tail[h]] = k
            tail[h] = k
        if i < n:
            for q in range(vptr[i], vptr[i + 1]):
                esite[ne] = vsites[q]
                enext[ne] = ehead[k]
                ehead[k] = ne
                ne += 1
            keep[i] = k
        else:
            for q in range(3):
                esite[ne] = buf[q]
                enext[ne] = ehead[k]
                ehead[k] = ne
                ne += 1
    xyr = np.empty((npos, 3))
    ptr = np.zeros(npos + 1, np.int64)
    ids = np.empty(ne, np.int64)
    w = 0
    tmp = np.empty(ne, np.int64)
    for k in range(npos):
        xyr[k, 0] = px[k]
        xyr[k, 1] = py[k]
        xyr[k, 2] = pr[k]
        c = 0
        q = ehead[k]
        while q >= 0:
            tmp[c] = esite[q]
            c += 1
            q = enext[q]
        srt = np.sort(tmp[:c])
        for j in range(c):
            if j == 0 or srt[j] != srt[j - 1]:
                ids[w] = srt[j]
                w += 1
        ptr[k + 1] = w
    return keep, xyr, ptr, ids[:w]
