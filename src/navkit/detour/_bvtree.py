"""The bounding-volume tree of a Detour tile (Detour's ``createBVTree``/``subdivide``).

Each ground polygon becomes an item with quantised bounds: the min/max of its
``rcPolyMeshDetail`` vertices (corner copies included) relative to the tile's
``bmin``, times ``1/cs`` on all three axes, truncated and clamped to 0..65535.
Without a detail mesh the voxel coordinates are used, with y rescaled by
``ch/cs`` (floor for min, ceil for max). The tree is built top-down in pre-order:
a node covering several items takes their union, sorts them by ``bmin`` along
the longest axis of that union and gives the first half to the left child.
Internal nodes store ``-escape`` (the size of their subtree).

The sort is the C library's ``qsort``, which is not stable, so ties are ordered
by the implementation. The Recast peer is compiled with emscripten, whose libc
is musl; musl's ``qsort`` is a smoothsort. :func:`_smoothsort` reproduces its
sequence of comparisons and moves so that equal keys land where Recast puts them.
"""

from __future__ import annotations

import numpy as np

from .._jit import F32, borrow, njit

__all__ = ["build_bv_tree"]


@njit
def _ntz64(x):
    n = 0
    while (x & np.uint64(1)) == np.uint64(0) and n < 64:
        x = x >> np.uint64(1)
        n += 1
    return n


@njit
def _cmp(order, keys, a, b):
    ka = keys[order[a]]
    kb = keys[order[b]]
    if ka < kb:
        return -1
    if ka > kb:
        return 1
    return 0


@njit
def _cycle(order, ar, n):
    if n < 2:
        return
    tmp = order[ar[0]]
    for i in range(n - 1):
        order[ar[i]] = order[ar[i + 1]]
    order[ar[n - 1]] = tmp


@njit
def _sift(order, keys, head, pshift, lp, ar):
    ar[0] = head
    i = 1
    while pshift > 1:
        rt = head - 1
        lf = head - 1 - lp[pshift - 2]
        if _cmp(order, keys, ar[0], lf) >= 0 and _cmp(order, keys, ar[0], rt) >= 0:
            break
        if _cmp(order, keys, lf, rt) >= 0:
            ar[i] = lf
            i += 1
            head = lf
            pshift -= 1
        else:
            ar[i] = rt
            i += 1
            head = rt
            pshift -= 2
    _cycle(order, ar, i)


@njit
def _trinkle(order, keys, head, p, pshift, trusty, lp, ar, ar2):
    ar[0] = head
    i = 1
    one = np.uint64(1)
    while p != one:
        stepson = head - lp[pshift]
        if _cmp(order, keys, stepson, ar[0]) <= 0:
            break
        if trusty == 0 and pshift > 1:
            rt = head - 1
            lf = head - 1 - lp[pshift - 2]
            if _cmp(order, keys, rt, stepson) >= 0 or _cmp(order, keys, lf, stepson) >= 0:
                break
        ar[i] = stepson
        i += 1
        head = stepson
        trail = _ntz64(p - one)
        p = p >> np.uint64(trail)
        pshift += trail
        trusty = 0
    if trusty == 0:
        _cycle(order, ar, i)
        _sift(order, keys, head, pshift, lp, ar2)


@njit
def _smoothsort(order, keys, lo, hi):
    """Sort ``order[lo:hi]`` by ``keys[order[k]]`` exactly as musl's qsort does."""
    _smoothsort_in(
        order, keys, lo, hi, np.zeros(96, np.int64), np.zeros(130, np.int64),
        np.zeros(130, np.int64),
    )  # fmt: skip


@njit
def _smoothsort_in(order, keys, lo, hi, lp, ar, ar2):
    """:func:`_smoothsort` with its scratch arrays given (one allocation per tree)."""
    nel = hi - lo
    if nel <= 0:
        return
    lp[0] = 1
    lp[1] = 1
    i = 2
    while True:
        lp[i] = lp[i - 2] + lp[i - 1] + 1
        if lp[i] >= nel:
            break
        i += 1
    head = lo
    high = lo + nel - 1
    p = np.uint64(1)
    pshift = 1
    one = np.uint64(1)
    while head < high:
        if (p & np.uint64(3)) == np.uint64(3):
            _sift(order, keys, head, pshift, lp, ar)
            p = p >> np.uint64(2)
            pshift += 2
        else:
            if lp[pshift - 1] >= high - head:
                _trinkle(order, keys, head, p, pshift, 0, lp, ar, ar2)
            else:
                _sift(order, keys, head, pshift, lp, ar)
            if pshift == 1:
                p = p << one
                pshift = 0
            else:
                p = p << np.uint64(pshift - 1)
                pshift = 1
        p = p | one
        head += 1
    _trinkle(order, keys, head, p, pshift, 0, lp, ar, ar2)
    while pshift != 1 or p != one:
        if pshift <= 1:
            trail = _ntz64(p - one)
            p = p >> np.uint64(trail)
            pshift += trail
        else:
            p = p << np.uint64(2)
            pshift -= 2
            p = p ^ np.uint64(7)
            p = p >> one
            _trinkle(order, keys, head - lp[pshift] - 1, p, pshift + 1, 1, lp, ar, ar2)
            p = p << one
            p = p | one
            _trinkle(order, keys, head - 1, p, pshift, 1, lp, ar, ar2)
        head -= 1


@njit(link=False)
def _subdivide(ibmin, ibmax, n, out_bmin, out_bmax, out_i):
    """Pre-order median-split tree over items ``0..n-1``; returns the node count."""
    return _subdivide_in(
        ibmin, ibmax, n, out_bmin, out_bmax, out_i, np.arange(n), np.zeros(n, np.int64),
        np.zeros((4 * n + 8, 4), np.int64), np.zeros(96, np.int64), np.zeros(130, np.int64),
        np.zeros(130, np.int64),
    )  # fmt: skip


@njit
def _subdivide_in(ibmin, ibmax, n, out_bmin, out_bmax, out_i, order, keys, stack, lp, ar, ar2):
    """:func:`_subdivide` with its scratch given (``order = arange(n)``; the rest any
    values). Its arrays are borrowed once here, so that the sort's helpers do no
    reference counting (docs/architecture.md, Kernels)."""
    ibmin, ibmax, out_bmin, out_bmax, out_i = borrow((ibmin, ibmax, out_bmin, out_bmax, out_i))
    order, keys, stack, lp, ar, ar2 = borrow((order, keys, stack, lp, ar, ar2))
    sp = 0
    stack[0, 0] = 0
    stack[0, 1] = n
    stack[0, 2] = -1
    stack[0, 3] = 0
    sp = 1
    cur = 0
    while sp > 0:
        sp -= 1
        imin = stack[sp, 0]
        imax = stack[sp, 1]
        icur = stack[sp, 2]
        phase = stack[sp, 3]
        if phase == 1:
            out_i[icur] = -(cur - icur)
            continue
        icur = cur
        cur += 1
        if imax - imin == 1:
            it = order[imin]
            for k in range(3):
                out_bmin[icur, k] = ibmin[it, k]
                out_bmax[icur, k] = ibmax[it, k]
            out_i[icur] = it
            continue
        for k in range(3):
            out_bmin[icur, k] = ibmin[order[imin], k]
            out_bmax[icur, k] = ibmax[order[imin], k]
        for j in range(imin + 1, imax):
            it = order[j]
            for k in range(3):
                if ibmin[it, k] < out_bmin[icur, k]:
                    out_bmin[icur, k] = ibmin[it, k]
                if ibmax[it, k] > out_bmax[icur, k]:
                    out_bmax[icur, k] = ibmax[it, k]
        ex = np.int64(out_bmax[icur, 0]) - np.int64(out_bmin[icur, 0])
        ey = np.int64(out_bmax[icur, 1]) - np.int64(out_bmin[icur, 1])
        ez = np.int64(out_bmax[icur, 2]) - np.int64(out_bmin[icur, 2])
        axis = 0
        mx = ex
        if ey > mx:
            axis = 1
            mx = ey
        if ez > mx:
            axis = 2
        for j in range(imin, imax):  # the sort reads only these items' keys
            it = order[j]
            keys[it] = ibmin[it, axis]
        _smoothsort_in(order, keys, imin, imax, lp, ar, ar2)
        isplit = imin + (imax - imin) // 2
        stack[sp, 0] = imin
        stack[sp, 1] = imax
        stack[sp, 2] = icur
        stack[sp, 3] = 1
        stack[sp + 1, 0] = isplit
        stack[sp + 1, 1] = imax
        stack[sp + 1, 2] = -1
        stack[sp + 1, 3] = 0
        stack[sp + 2, 0] = imin
        stack[sp + 2, 1] = isplit
        stack[sp + 2, 2] = -1
        stack[sp + 2, 3] = 0
        sp += 3
    return cur


@njit
def _quantize_detail(dm, dv, bmin, qf, out_min, out_max):
    n = dm.shape[0]
    for i in range(n):
        vb = dm[i, 0]
        ndv = dm[i, 1]
        for k in range(3):  # per axis, in scalars (no array per polygon)
            lo = dv[vb, k]
            hi = dv[vb, k]
            for j in range(1, ndv):
                v = dv[vb + j, k]
                if v < lo:
                    lo = v
                if v > hi:
                    hi = v
            a = int((lo - bmin[k]) * qf)
            b = int((hi - bmin[k]) * qf)
            out_min[i, k] = min(max(a, 0), 0xFFFF)
            out_max[i, k] = min(max(b, 0), 0xFFFF)


def build_bv_tree(pverts, polys, nvp, nv_per, bmin, cs, ch, dm=None, dv=None):
    """BV nodes of one tile: ``(bmin (2n,3) u16, bmax (2n,3) u16, i (2n,) i32)``.

    The last ``2n - used`` nodes stay zero, as in Detour's blob.
    """
    n = int(polys.shape[0])
    qf = F32(F32(1.0) / F32(cs))
    ibmin = np.zeros((n, 3), np.int64)
    ibmax = np.zeros((n, 3), np.int64)
    if dm is not None:
        _quantize_detail(
            np.ascontiguousarray(dm, np.int64),
            np.ascontiguousarray(dv, np.float32),
            np.asarray(bmin, np.float32),
            qf,
            ibmin,
            ibmax,
        )
    else:
        ratio_ch = np.float32(ch)
        for i in range(n):
            idx = polys[i, : int(nv_per[i])].astype(np.int64)
            v = pverts[idx].astype(np.int64)
            ibmin[i] = v.min(axis=0)
            ibmax[i] = v.max(axis=0)
            y0 = np.float32(np.float32(ibmin[i, 1]) * ratio_ch / np.float32(cs))
            y1 = np.float32(np.float32(ibmax[i, 1]) * ratio_ch / np.float32(cs))
            ibmin[i, 1] = int(np.floor(y0)) & 0xFFFF
            ibmax[i, 1] = int(np.ceil(y1)) & 0xFFFF
    out_bmin = np.zeros((2 * n, 3), np.uint16)
    out_bmax = np.zeros((2 * n, 3), np.uint16)
    out_i = np.zeros(2 * n, np.int32)
    if n:
        _subdivide(ibmin, ibmax, n, out_bmin, out_bmax, out_i)
    return out_bmin, out_bmax, out_i
