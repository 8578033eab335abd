"""Box queries over tiles: ``queryPolygons`` and ``findNearestPoly``.

The query box (center +- half extents) selects tiles by grid cell (rows of
tile y, then x; tiles sharing a cell in lookup order). Inside a tile with a BV
tree the box is clamped to the tile bounds, quantised (min rounded down to
even, max up to odd) and the tree is walked in pre-order, skipping a subtree
by its escape index when its bounds miss the box; tiles without a tree test
every ground polygon's vertex bounds. Candidates failing the filter are
dropped. ``findNearestPoly`` then keeps the first candidate with the smallest
distance, where a point straight above/below a polygon scores
``max(0, |dy| - walkable_climb)^2`` and any other point the squared 3D
distance to the polygon's closest point (Detour 1.6 semantics).

The work is bounded by the tiles that exist: a box spanning more cells than the
tile table has slots visits only the cells that hold a tile (same order), so a
half extent of 1e8 costs no more than one covering the mesh.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

from ._geom import FLT_MAX, ZERO
from ._poly import closest_point_nav
from ._portal import passes
from ._view import POLYTYPE_OFFMESH, open_view, tile_hash


@njit
def _clampf(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


_I32_LO = -2147483648.0
_I32_HI = 2147483647.0


@njit
def _tile_loc(nav, x, z):
    """Tile cell of (x, z), clamped to the int32 range of tile coordinates."""
    tx = np.floor((x - nav.grid[0]) / nav.grid[3])
    ty = np.floor((z - nav.grid[2]) / nav.grid[4])
    tx = min(max(tx, _I32_LO), _I32_HI)
    ty = min(max(ty, _I32_LO), _I32_HI)
    return np.int64(tx), np.int64(ty)


@njit
def _box_cells(nav, qmin, qmax):
    """Tile cells (n, 2) int64 (x, y) to visit for a box, in Detour's order (rows of y,
    then x).

    A box spanning more cells than the tile table has slots (or 64) visits only the
    cells holding a live tile, so the work is bounded by the tiles that exist, not by
    the box: a huge half extent costs O(tiles log tiles), not O(extent^2).
    """
    minx, miny = _tile_loc(nav, qmin[0], qmin[2])
    maxx, maxy = _tile_loc(nav, qmax[0], qmax[2])
    if maxx < minx or maxy < miny:
        return np.empty((0, 2), np.int64)
    area = (np.float64(maxx - minx) + 1.0) * (np.float64(maxy - miny) + 1.0)
    nt = nav.tile_used.shape[0]
    if area <= max(64.0, np.float64(nt)):
        cells = np.empty((np.int64(area), 2), np.int64)
        k = 0
        for y in range(miny, maxy + 1):
            for x in range(minx, maxx + 1):
                cells[k, 0] = x
                cells[k, 1] = y
                k += 1
        return cells
    keys = np.empty(nt, np.uint64)  # (y + 2^31) << 32 | (x + 2^31): sorts by y, then x
    n = 0
    for t in range(nt):
        if nav.tile_used[t] == 0:
            continue
        x = np.int64(nav.tile_x[t])
        y = np.int64(nav.tile_y[t])
        if x < minx or x > maxx or y < miny or y > maxy:
            continue
        keys[n] = (np.uint64(y + 2147483648) << np.uint64(32)) | np.uint64(x + 2147483648)
        n += 1
    _heap_sort(keys, n)
    m = 0  # distinct keys (tiles of several layers share a cell)
    for i in range(n):
        if m == 0 or keys[i] != keys[m - 1]:
            keys[m] = keys[i]
            m += 1
    cells = np.empty((m, 2), np.int64)
    for i in range(m):
        cells[i, 0] = np.int64(keys[i] & np.uint64(0xFFFFFFFF)) - 2147483648
        cells[i, 1] = np.int64(keys[i] >> np.uint64(32)) - 2147483648
    return cells


@njit(lent=True)
def _heap_sort(a, n):
    """Sort a[:n] ascending in place (heap sort, O(n log n): a few lines to compile where
    np.unique / np.sort pull in numba's generic quicksort, ~2 s of compile)."""
    end = n
    start = n // 2
    while end > 1:
        if start > 0:  # heapify phase: sift down a[start - 1] over a[:n]
            start -= 1
            i = start
        else:  # extraction phase: move the maximum behind the heap, sift down the new root
            end -= 1
            a[0], a[end] = a[end], a[0]
            i = 0
        while True:
            c = 2 * i + 1
            if c >= end:
                break
            if c + 1 < end and a[c + 1] > a[c]:
                c += 1
            if a[i] >= a[c]:
                break
            a[i], a[c] = a[c], a[i]
            i = c


@njit(lent=True)
def _tile_candidates(nav, t, qmin, qmax, flt, out, n0):
    """Append the polygons of tile t overlapping the box (and passing flt) to out from n0."""
    n = n0
    cap = out.shape[0]
    base = nav.tile_pbase[t]
    nbv = nav.tile_bvcount[t]
    if nbv > 0:
        bmin = nav.tile_bmin[t]
        bmax = nav.tile_bmax[t]
        q = nav.tile_qfac[t]
        lo = np.empty(3, np.int64)
        hi = np.empty(3, np.int64)
        for c in range(3):
            a = _clampf(qmin[c], bmin[c], bmax[c]) - bmin[c]
            b = _clampf(qmax[c], bmin[c], bmax[c]) - bmin[c]
            lo[c] = (np.int64(q * a) & 0xFFFF) & 0xFFFE
            hi[c] = (np.int64(q * b + F32(1.0)) & 0xFFFF) | 1
        i = nav.tile_bvbase[t]
        end = i + nbv
        while i < end:
            overlap = not (
                lo[0] > nav.bv_max[i, 0] or hi[0] < nav.bv_min[i, 0]
                or lo[1] > nav.bv_max[i, 1] or hi[1] < nav.bv_min[i, 1]
                or lo[2] > nav.bv_max[i, 2] or hi[2] < nav.bv_min[i, 2]
            )  # fmt: skip
            leaf = nav.bv_i[i] >= 0
            if leaf and overlap:
                p = base + nav.bv_i[i]
                if passes(flt, p, nav) and n < cap:
                    out[n] = p
                    n += 1
            if overlap or leaf:
                i += 1
            else:
                i += -nav.bv_i[i]
    else:
        for p in range(base, base + nav.tile_pcount[t]):
            if nav.poly_type[p] == POLYTYPE_OFFMESH:
                continue
            if not passes(flt, p, nav):
                continue
            v = nav.verts[nav.poly_verts[p, 0]]
            mn = v.copy()
            mx = v.copy()
            for k in range(1, nav.poly_nverts[p]):
                w = nav.verts[nav.poly_verts[p, k]]
                for c in range(3):
                    mn[c] = min(mn[c], w[c])
                    mx[c] = max(mx[c], w[c])
            ov = True
            for c in range(3):
                if qmin[c] > mx[c] or qmax[c] < mn[c]:
                    ov = False
            if ov and n < cap:
                out[n] = p
                n += 1
    return n


@njit(lent=True)
def query_polygons_kernel(nav, center, half, flt, out):
    """Polygons whose bounds overlap the box; returns (count, overflowed)."""
    qmin = np.empty(3, np.float32)
    qmax = np.empty(3, np.float32)
    for c in range(3):
        qmin[c] = center[c] - half[c]
        qmax[c] = center[c] + half[c]
    cells = _box_cells(nav, qmin, qmax)
    n = 0
    over = False
    big = np.empty(out.shape[0] + 1, np.int64)
    for ci in range(cells.shape[0]):
        x = cells[ci, 0]
        y = cells[ci, 1]
        t = nav.lut[tile_hash(nav, x, y)] if nav.lut.shape[0] > 0 else -1
        while t != -1:
            tt = t
            t = nav.tile_next[t]
            if nav.tile_used[tt] == 0 or nav.tile_x[tt] != x or nav.tile_y[tt] != y:
                continue
            m = _tile_candidates(nav, tt, qmin, qmax, flt, big, n)
            if m > out.shape[0]:
                over = True
                m = out.shape[0]
            for j in range(n, m):
                out[j] = big[j]
            n = m
    return n, over


@njit(lent=True)
def _nearest_in_tile(nav, t, lx, ly, lz, hx, hy, hz, center, flt, nearest_pt, pt, pv, tri,
                     best, best_d, best_over):  # fmt: skip
    """findNearestPoly's test of every polygon of tile t overlapping the box (lx..hx, ...):
    candidates in the order :func:`_tile_candidates` lists them, each scored as it is found
    (no candidate list; Detour's distance, the first smallest kept). Returns the updated
    (best, best_d, best_over)."""
    climb = nav.tile_climb[t]
    base = nav.tile_pbase[t]
    nbv = nav.tile_bvcount[t]
    verts = nav.verts
    poly_verts = nav.poly_verts
    poly_nverts = nav.poly_nverts
    poly_type = nav.poly_type
    bv_min = nav.bv_min
    bv_max = nav.bv_max
    bv_i = nav.bv_i
    lo0 = lo1 = lo2 = hi0 = hi1 = hi2 = np.int64(0)
    if nbv > 0:  # walk the BV tree
        bmin = nav.tile_bmin[t]
        bmax = nav.tile_bmax[t]
        q = nav.tile_qfac[t]
        bx = bmin[0]
        by = bmin[1]
        bz = bmin[2]
        lo0 = (np.int64(q * (_clampf(lx, bx, bmax[0]) - bx)) & 0xFFFF) & 0xFFFE
        lo1 = (np.int64(q * (_clampf(ly, by, bmax[1]) - by)) & 0xFFFF) & 0xFFFE
        lo2 = (np.int64(q * (_clampf(lz, bz, bmax[2]) - bz)) & 0xFFFF) & 0xFFFE
        hi0 = (np.int64(q * (_clampf(hx, bx, bmax[0]) - bx) + F32(1.0)) & 0xFFFF) | 1
        hi1 = (np.int64(q * (_clampf(hy, by, bmax[1]) - by) + F32(1.0)) & 0xFFFF) | 1
        hi2 = (np.int64(q * (_clampf(hz, bz, bmax[2]) - bz) + F32(1.0)) & 0xFFFF) | 1
        i = nav.tile_bvbase[t]
        end = i + nbv
    else:  # every ground polygon, by its vertex bounds
        i = base
        end = base + nav.tile_pcount[t]
    while i < end:
        # the next candidate p (-1: none at this step), in either walk
        p = -1
        if nbv > 0:
            ui = np.uint64(i)  # unsigned: no wraparound fix on the walk's loads
            overlap = not (
                lo0 > bv_max[ui, 0] or hi0 < bv_min[ui, 0]
                or lo1 > bv_max[ui, 1] or hi1 < bv_min[ui, 1]
                or lo2 > bv_max[ui, 2] or hi2 < bv_min[ui, 2]
            )  # fmt: skip
            bi = bv_i[ui]
            leaf = bi >= 0
            if leaf and overlap:
                p = base + bi
            if overlap or leaf:
                i += 1
            else:
                i -= bi
        else:
            pp = i
            i += 1
            if poly_type[pp] != POLYTYPE_OFFMESH:
                v = poly_verts[pp, 0]
                mn0 = mx0 = verts[v, 0]
                mn1 = mx1 = verts[v, 1]
                mn2 = mx2 = verts[v, 2]
                for k in range(1, poly_nverts[pp]):
                    w = poly_verts[pp, k]
                    mn0 = min(mn0, verts[w, 0])
                    mx0 = max(mx0, verts[w, 0])
                    mn1 = min(mn1, verts[w, 1])
                    mx1 = max(mx1, verts[w, 1])
                    mn2 = min(mn2, verts[w, 2])
                    mx2 = max(mx2, verts[w, 2])
                if not (lx > mx0 or hx < mn0 or ly > mx1 or hy < mn1 or lz > mx2 or hz < mn2):
                    p = pp
        if p < 0 or not passes(flt, p, nav):
            continue
        over = closest_point_nav(nav, p, center, pt, pv, tri)
        dx = center[0] - pt[0]
        dy = center[1] - pt[1]
        dz = center[2] - pt[2]
        if over:
            d = abs(dy) - climb
            d = d * d if d > ZERO else ZERO
        else:
            d = dx * dx + dy * dy + dz * dz
        if d < best_d:
            nearest_pt[0] = pt[0]
            nearest_pt[1] = pt[1]
            nearest_pt[2] = pt[2]
            best, best_d, best_over = p, d, over
    return best, best_d, best_over


@njit(lent=True, link=False)
def find_nearest_core(nav, center, half, flt, nearest_pt, pt, pv, tri):
    """Detour's findNearestPoly with caller scratch ``pt`` (3,), ``pv`` (6, 3), ``tri``
    (5, 3) float32 (no allocation unless the box spans more than 64 tile cells).
    Returns (global poly index or -1, over_poly); ``nearest_pt`` receives the point
    (untouched when nothing was found).

    The helpers are ordinary kernels (not inlined): with the view and the arrays lent
    (``lent=True``: no reference counting) a call costs a few nanoseconds, and each
    helper compiles once."""
    lx = center[0] - half[0]
    ly = center[1] - half[1]
    lz = center[2] - half[2]
    hx = center[0] + half[0]
    hy = center[1] + half[1]
    hz = center[2] + half[2]
    best = -1
    best_d = FLT_MAX
    best_over = False
    tri[:] = ZERO  # closest_point_nav may read rows 3-4 before writing them
    minx, miny = _tile_loc(nav, lx, lz)
    maxx, maxy = _tile_loc(nav, hx, hz)
    if maxx < minx or maxy < miny:
        return best, best_over
    w = maxx - minx + 1
    area = np.float64(w) * (np.float64(maxy - miny) + 1.0)
    small = area <= max(64.0, np.float64(nav.tile_used.shape[0]))
    if small:  # every cell of the box, rows of y then x (no cell list: no allocation)
        for ci in range(np.int64(area)):
            best, best_d, best_over = _nearest_in_cell(
                nav, minx + ci % w, miny + ci // w, lx, ly, lz, hx, hy, hz, center, flt,
                nearest_pt, pt, pv, tri, best, best_d, best_over,
            )  # fmt: skip
        return best, best_over
    # only the cells holding a tile (same order)
    qmin = np.empty(3, np.float32)
    qmax = np.empty(3, np.float32)
    qmin[0], qmin[1], qmin[2] = lx, ly, lz
    qmax[0], qmax[1], qmax[2] = hx, hy, hz
    cells = _box_cells(nav, qmin, qmax)
    for ci in range(cells.shape[0]):
        best, best_d, best_over = _nearest_in_cell(
            nav, cells[ci, 0], cells[ci, 1], lx, ly, lz, hx, hy, hz, center, flt, nearest_pt,
            pt, pv, tri, best, best_d, best_over,
        )  # fmt: skip
    return best, best_over


@njit(lent=True)
def _nearest_in_cell(nav, x, y, lx, ly, lz, hx, hy, hz, center, flt, nearest_pt, pt, pv, tri,
                     best, best_d, best_over):  # fmt: skip
    """:func:`_nearest_in_tile` for each tile at cell (x, y); returns the updated
    (best, best_d, best_over)."""
    t = nav.lut[tile_hash(nav, x, y)] if nav.lut.shape[0] > 0 else -1
    while t != -1:
        tt = t
        t = nav.tile_next[t]
        if nav.tile_used[tt] == 0 or nav.tile_x[tt] != x or nav.tile_y[tt] != y:
            continue
        best, best_d, best_over = _nearest_in_tile(
            nav, tt, lx, ly, lz, hx, hy, hz, center, flt, nearest_pt, pt, pv, tri,
            best, best_d, best_over,
        )  # fmt: skip
    return best, best_d, best_over


@njit(lent=True)
def find_nearest_kernel(nav, center, half, flt, nearest_pt):
    """Detour's findNearestPoly. Returns (global poly index or -1, over_poly)."""
    pt = np.empty(3, np.float32)
    pv = np.empty((6, 3), np.float32)
    tri = np.zeros((5, 3), np.float32)
    return find_nearest_core(nav, center, half, flt, nearest_pt, pt, pv, tri)


# -- entry points: the same kernels on a packed view descriptor (see _view.pack_view) --
@njit
def find_nearest_entry(d, center, half, flt, nearest_pt):
    """:func:`find_nearest_kernel` on the view described by ``d``."""
    return find_nearest_kernel(open_view(d), center, half, flt, nearest_pt)


@njit
def query_polygons_entry(d, center, half, flt, out):
    """:func:`query_polygons_kernel` on the view described by ``d``."""
    return query_polygons_kernel(open_view(d), center, half, flt, out)
