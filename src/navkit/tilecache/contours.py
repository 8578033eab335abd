"""Layer contours of the tile cache (``dtBuildTileCacheContours``).

One contour per region, traced from the region's first cell in row order around
its boundary (a wall follower over the layer's cells; the edge to a neighbour cell
is open when the ``cons`` bit says so and the neighbour is in the same region).
Each boundary vertex records what lies across its edge: another region, a portal
to the neighbouring tile in one of the four directions (``0xf8 + dir``) or a wall
(255); collinear runs with the same neighbour collapse into one segment. The raw
outline is simplified (Douglas-Peucker over the segments between changes of
neighbour, error ``max_error`` in cells), then every vertex gets the height of the
highest walkable cell around its corner, its portal direction (low nibble, 0xf for
none) and, in bit 7, whether the polygon mesh should remove it (a vertex in the
middle of a straight portal edge).

Output layout (struct of arrays; contour ``c`` owns ``verts[start[c]:start[c] + nverts[c]]``):
``verts`` (n, 4) uint8 = (x, height, z, flags) in layer cells.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import F32, njit

__all__ = ["TileCacheContours", "build_tile_cache_contours"]


class TileCacheContours(NamedTuple):
    """A layer's contours (``dtTileCacheContourSet``), one per region id.

    Attributes
    ----------
    start, nverts : (nconts,) int64
        Each contour's first row in ``verts`` and its vertex count (0: not traced).
    reg, area : (nconts,) uint8
        Region and area id of each contour.
    verts : (n, 4) uint8
        (x, height, z, flags) per vertex.
    """

    start: np.ndarray
    nverts: np.ndarray
    reg: np.ndarray
    area: np.ndarray
    verts: np.ndarray


@njit
def _neighbour_reg(cons, regs, w, ax, ay, d):
    ia = ax + ay * w
    con = np.int64(cons[ia]) & 0xF
    portal = np.int64(cons[ia]) >> 4
    mask = 1 << d
    if (con & mask) == 0:
        if portal & mask:
            return 0xF8 + d
        return 0xFF
    bx = ax + (-1, 0, 1, 0)[d]
    by = ay + (0, 1, 0, -1)[d]
    return np.int64(regs[bx + by * w])


@njit
def _append_vertex(tv, nv, cap, x, y, z, r):
    """appendVertex; returns the new count, or -1 when the buffer is full."""
    if nv > 1:
        if tv[nv - 1, 3] == r:
            if tv[nv - 2, 0] == tv[nv - 1, 0] and tv[nv - 1, 0] == x:
                tv[nv - 1, 1] = y
                tv[nv - 1, 2] = z
                return nv
            if tv[nv - 2, 2] == tv[nv - 1, 2] and tv[nv - 1, 2] == z:
                tv[nv - 1, 0] = x
                tv[nv - 1, 1] = y
                return nv
    if nv + 1 > cap:
        return -1
    tv[nv, 0] = x
    tv[nv, 1] = y
    tv[nv, 2] = z
    tv[nv, 3] = r
    return nv + 1


@njit
def _walk_contour(heights, cons, regs, w, h, x, y, tv, cap):
    """walkContour: the raw outline into ``tv``; returns its size (-1: too long)."""
    nv = 0
    start_x, start_y = x, y
    start_dir = -1
    own = np.int64(regs[x + y * w])
    for i in range(4):
        d = (i + 3) & 3
        if _neighbour_reg(cons, regs, w, x, y, d) != own:
            start_dir = d
            break
    if start_dir == -1:
        return 0
    d = start_dir
    max_iter = w * h
    it = 0
    while it < max_iter:
        own = np.int64(regs[x + y * w])
        rn = _neighbour_reg(cons, regs, w, x, y, d)
        nx, ny = x, y
        if rn != own:
            px, pz = x, y
            if d == 0:
                pz += 1
            elif d == 1:
                px += 1
                pz += 1
            elif d == 2:
                px += 1
            nv = _append_vertex(tv, nv, cap, px, np.int64(heights[x + y * w]), pz, rn)
            if nv < 0:
                return -1
            ndir = (d + 1) & 3
        else:
            nx = x + (-1, 0, 1, 0)[d]
            ny = y + (0, 1, 0, -1)[d]
            ndir = (d + 3) & 3
        if it > 0 and x == start_x and y == start_y and d == start_dir:
            break
        x, y, d = nx, ny, ndir
        it += 1
    if nv > 0 and tv[nv - 1, 0] == tv[0, 0] and tv[nv - 1, 2] == tv[0, 2]:
        nv -= 1
    return nv


@njit
def _dist_pt_seg(x, z, px, pz, qx, qz):
    pqx = F32(qx - px)
    pqz = F32(qz - pz)
    dx = F32(x - px)
    dz = F32(z - pz)
    d = pqx * pqx + pqz * pqz
    t = pqx * dx + pqz * dz
    if d > 0:
        t = t / d
    if t < 0:
        t = F32(0.0)
    elif t > 1:
        t = F32(1.0)
    dx = F32(px) + t * pqx - F32(x)
    dz = F32(pz) + t * pqz - F32(z)
    return dx * dx + dz * dz


@njit
def _simplify(tv, nv, poly, max_error):
    """simplifyContour: keeps the chosen raw vertices in ``tv[:n]``; returns n."""
    npoly = 0
    for i in range(nv):
        j = i + 1 if i + 1 < nv else 0
        if tv[j, 3] != tv[i, 3]:
            poly[npoly] = i
            npoly += 1
    if npoly < 2:
        llx, llz, lli = tv[0, 0], tv[0, 2], 0
        urx, urz, uri = tv[0, 0], tv[0, 2], 0
        for i in range(1, nv):
            x = tv[i, 0]
            z = tv[i, 2]
            if x < llx or (x == llx and z < llz):
                llx, llz, lli = x, z, i
            if x > urx or (x == urx and z > urz):
                urx, urz, uri = x, z, i
        npoly = 2
        poly[0] = lli
        poly[1] = uri
    err2 = F32(max_error) * F32(max_error)
    i = 0
    while i < npoly:
        ii = i + 1 if i + 1 < npoly else 0
        ai = poly[i]
        ax, az = tv[ai, 0], tv[ai, 2]
        bi = poly[ii]
        bx, bz = tv[bi, 0], tv[bi, 2]
        maxd = F32(0.0)
        maxi = -1
        # (ci steps by cinc modulo nv: a subtraction instead of a division, as
        # ci + cinc < 2 * nv)
        if bx > ax or (bx == ax and bz > az):
            cinc = 1
            ci = ai + cinc
            endi = bi
        else:
            cinc = nv - 1
            ci = bi + cinc
            endi = ai
        if ci >= nv:
            ci -= nv
        while ci != endi:
            d = _dist_pt_seg(tv[ci, 0], tv[ci, 2], ax, az, bx, bz)
            if d > maxd:
                maxd = d
                maxi = ci
            ci += cinc
            if ci >= nv:
                ci -= nv
        if maxi != -1 and maxd > err2:
            npoly += 1
            for j in range(npoly - 1, i, -1):
                poly[j] = poly[j - 1]
            poly[i + 1] = maxi
        else:
            i += 1
    start = 0
    for i in range(1, npoly):
        if poly[i] < poly[start]:
            start = i
    # rotate so the lowest raw index comes first; in place when every source row is at
    # or after its destination (the kept indices increase cyclically, so they are: a
    # forward copy then never reads a row it overwrote), else through a copy
    in_place = True
    for i in range(npoly):
        if poly[(start + i) % npoly] < i:
            in_place = False
    if in_place:
        for i in range(npoly):
            src = poly[(start + i) % npoly]
            if src != i:
                for k in range(4):
                    tv[i, k] = tv[src, k]
        return npoly
    out = np.empty((npoly, 4), np.int64)
    for i in range(npoly):
        out[i] = tv[poly[(start + i) % npoly]]
    tv[:npoly] = out
    return npoly


@njit
def _corner_height(heights, areas, cons, regs, w, h, x, y, z, climb):
    """getCornerHeight: (height, should_remove)."""
    n = 0
    portal = 0xF
    height = 0
    preg = 0xFF
    all_same = True
    for dz in range(-1, 1):
        for dx in range(-1, 1):
            px = x + dx
            pz = z + dz
            if px >= 0 and pz >= 0 and px < w and pz < h:
                idx = px + pz * w
                lh = np.int64(heights[idx])
                if abs(lh - y) <= climb and areas[idx] != 0:
                    height = max(height, lh)
                    portal &= np.int64(cons[idx]) >> 4
                    if preg != 0xFF and preg != regs[idx]:
                        all_same = False
                    preg = np.int64(regs[idx])
                    n += 1
    pc = 0
    for d in range(4):
        if portal & (1 << d):
            pc += 1
    return height, (n > 1 and pc == 1 and all_same)


@njit(link=False)
def _contours_kernel(heights, areas, cons, regs, w, h, nregs, climb, max_error):  # pragma: no cover
    """(start, nverts, reg, area, verts, err): err -1 when a contour overflows."""
    cap_out = 4 * (w + h) + 64
    while True:
        res = _contours_into(heights, areas, cons, regs, w, h, nregs, climb, max_error, cap_out)
        if res[5] != _OUT_FULL:
            return res
        cap_out *= 4


_OUT_FULL = -2


@njit(link=False)
def _contours_into(
    heights, areas, cons, regs, w, h, nregs, climb, max_error, cap_out
):  # pragma: no cover - numba
    """:func:`_contours_kernel` with room for ``cap_out`` output vertices (err
    ``_OUT_FULL`` when they do not fit). The output buffer is never reallocated here:
    an array variable reassigned inside the cell loop costs numba a reference-count
    update per cell (this kernel ran 5x slower so)."""
    cap = (w + h) * 2 * 2
    # (the trace buffer, the kept indices and the output rows are written before they
    # are read: not zeroed)
    tv = np.empty((cap, 4), np.int64)
    poly = np.empty(cap, np.int64)
    nverts = np.zeros(nregs, np.int64)
    start = np.zeros(nregs, np.int64)
    creg = np.zeros(nregs, np.uint8)
    carea = np.zeros(nregs, np.uint8)
    out = np.empty((cap_out, 4), np.uint8)
    nout = 0
    found = 0  # (regions traced: once all are, the rest of the scan would skip every cell)
    for y in range(h):
        for x in range(w):
            idx = x + y * w
            ri = np.int64(regs[idx])
            if ri == 0xFF:
                continue
            if nverts[ri] > 0:
                continue
            creg[ri] = ri
            carea[ri] = areas[idx]
            nv = _walk_contour(heights, cons, regs, w, h, x, y, tv, cap)
            if nv < 0:
                return start, nverts, creg, carea, out[:0], -1
            if nv == 0:
                continue
            nv = _simplify(tv, nv, poly, max_error)
            nverts[ri] = nv
            if nout + nv > cap_out:
                return start, nverts, creg, carea, out[:0].copy(), _OUT_FULL
            start[ri] = nout
            j = nv - 1
            for i in range(nv):
                nei = tv[i, 3]
                lh, rem = _corner_height(
                    heights, areas, cons, regs, w, h, tv[j, 0], tv[j, 1], tv[j, 2], climb
                )
                f = 0x0F
                if nei != 0xFF and nei >= 0xF8:
                    f = nei - 0xF8
                if rem:
                    f |= 0x80
                out[nout + j, 0] = tv[j, 0]
                out[nout + j, 1] = lh
                out[nout + j, 2] = tv[j, 2]
                out[nout + j, 3] = f
                j = i
            nout += nv
            found += 1
            if found == nregs:
                return start, nverts, creg, carea, out[:nout].copy(), 0
    return start, nverts, creg, carea, out[:nout].copy(), 0


def build_tile_cache_contours(
    heights: np.ndarray,
    areas: np.ndarray,
    cons: np.ndarray,
    regs: np.ndarray,
    nregs: int,
    walkable_climb: int,
    max_error: float,
) -> TileCacheContours | None:
    """Contours of a layer's regions (``dtBuildTileCacheContours``).

    Parameters
    ----------
    heights, areas, cons, regs : (height, width) uint8
        The layer and its regions (:func:`~navkit.tilecache.regions.build_tile_cache_regions`).
    nregs : int
        Region count.
    walkable_climb : int
        [vx].
    max_error : float
        Simplification error [cells] (float32).

    Returns
    -------
    TileCacheContours or None
        None when a contour overflows Detour's trace buffer (``DT_BUFFER_TOO_SMALL``).
    """
    h, w = heights.shape
    start, nverts, creg, carea, verts, err = _contours_kernel(
        np.ascontiguousarray(heights).reshape(-1),
        np.ascontiguousarray(areas).reshape(-1),
        np.ascontiguousarray(cons).reshape(-1),
        np.ascontiguousarray(regs).reshape(-1),
        int(w),
        int(h),
        int(nregs),
        int(walkable_climb),
        np.float32(max_error),
    )
    if err < 0:
        return None
    return TileCacheContours(start, nverts, creg, carea, verts)
