"""Start-to-end path in one kernel call, for one pair or many in parallel.

Per pair this is RecastDemo's NavMeshTester flow, as the peer runs it:
``findNearestPoly`` for both ends, ``findPath``, and when the corridor stops
short of the end polygon the end point is moved onto the last corridor
polygon (``closestPointOnPoly``) before ``findStraightPath``. The batch
version runs pairs in a ``prange`` loop over chunks, one node pool per chunk.
"""

from __future__ import annotations

import numba
import numpy as np

from navkit._atomic import CHUNKS, WORKERS, claim
from navkit._jit import borrow, njit, pnjit

from ._funnel import straight_path_core
from ._nearest import find_nearest_core
from ._nodes import open_pool
from ._poly import closest_point_nav
from ._portal import FAILURE
from ._search import find_path_kernel
from ._view import open_view, poly_index_unsafe

NO_START = 1
NO_END = 2
NO_PATH = 3


# Inlined into _single.path_single (one pair) and _pairs_chunk (the batch's chunks): numba
# optimises and codegens a kernel's module together with every kernel it calls, so each
# wrapper level between an entry and the A* / funnel / nearest kernels is one more pass
# over all of their code (bench/compile.py: ~1.7-2.9 s CPU per level, loaded machine).
@njit(inline="always")
def pair_core(
    nav, pool, flt, acost, s, e, half, max_path, max_pts, polys, pts, flags, refs,
    small, pv, tri, ports, types, valid, fs, fe, cnt,
):  # fmt: skip
    """One pair. Returns (code, n_polys, n_points, start_ref, end_ref, path_status, length).

    ``length`` is the straight path's 3D length [wu] (float64), NaN unless code is 0.
    Caller scratch: small (6, 3) and pv (6, 3) float32, tri (5, 3) float32, and the
    straight path's (ports (2, >= max_path, 3) float32, types and valid (>= max_path,),
    fs (16, 3), fe (2, 6), cnt (1,)): a batch allocates them once."""
    tmp = small[0]
    pt = small[1]
    end = small[2]
    # the cores directly, with this kernel's scratch: each wrapper level would be one
    # more kernel to compile, and numba optimises a kernel together with all it calls
    sp, so = find_nearest_core(nav, s, half, flt, tmp, pt, pv, tri)
    ep, eo = find_nearest_core(nav, e, half, flt, tmp, pt, pv, tri)
    sref = nav.poly_ref[sp] if sp >= 0 else np.int64(0)
    eref = nav.poly_ref[ep] if ep >= 0 else np.int64(0)
    if sp < 0:
        return NO_START, 0, 0, sref, eref, FAILURE, np.nan
    if ep < 0:
        return NO_END, 0, 0, sref, eref, FAILURE, np.nan
    st, n = find_path_kernel(nav, pool, flt, acost, sref, eref, s, e, max_path, polys)
    if (st & FAILURE) != 0 or n == 0:
        return NO_PATH, 0, 0, sref, eref, st, np.nan
    end[0] = e[0]
    end[1] = e[1]
    end[2] = e[2]
    if polys[n - 1] != eref:
        tri[:] = 0.0  # as closest_point_on_poly's fresh scratch
        closest_point_nav(nav, poly_index_unsafe(nav, polys[n - 1]), e, end, pv, tri)
    sst, m = straight_path_core(
        nav, polys, n, s, end, 0, max_pts, pts, flags, refs, ports, types, valid, fs, fe, cnt,
    )  # fmt: skip
    if (sst & FAILURE) != 0 or m == 0:
        return NO_PATH, n, 0, sref, eref, st, np.nan
    acc = 0.0
    for k in range(1, m):
        dx = np.float64(pts[k, 0]) - np.float64(pts[k - 1, 0])
        dy = np.float64(pts[k, 1]) - np.float64(pts[k - 1, 1])
        dz = np.float64(pts[k, 2]) - np.float64(pts[k - 1, 2])
        acc += np.sqrt(dx * dx + dy * dy + dz * dz)
    return 0, n, m, sref, eref, st, acc


@njit
def _keep(arrays):
    """A use of ``arrays`` (does nothing): keeps the owners of borrowed scratch alive to here."""
    return arrays[0].shape[0]


@njit
def _pairs_chunk(
    nav, pool, flt, acost, starts, ends, half, max_path, max_pts, i0, i1,
    out_code, out_np, out_nm, out_sref, out_eref, out_status, out_polys, out_pts, out_flags,
    out_off, out_len,
):  # fmt: skip
    """Pairs i0..i1 one after the other (a plain kernel: the same loop in the prange
    body itself ran slower).

    Each pair runs on scratch rows of the chunk (the same rows for every pair, so they stay
    in L1 as Detour's one path buffer does); its corridor and corners are then appended
    to the chunk's rows of ``out_polys`` / ``out_pts`` / ``out_flags`` read as flat buffers
    (pair after pair, no gaps: rows i0..i1 hold at most i1 - i0 results of at most a row
    each), at the offsets noted in ``out_off[i]`` (polygon, point). One result row per
    pair (2-3 KB apart) made each pair write 6-9 lines the last call had left in L2 or
    L3: 0.3-0.6 us per pair."""
    # scratch allocated once per chunk, used through borrowed views (see _many._nearest_chunk)
    mp = max(max_path, 1)
    mk = max(max_pts, 1)
    own = (
        np.empty((6, 3), np.float32), np.empty((6, 3), np.float32), np.zeros((5, 3), np.float32),
        np.empty((2, mp, 3), np.float32), np.empty(mp, np.int64), np.empty(mp, np.bool_),
        np.empty((16, 3), np.float32), np.empty((2, 6), np.float32), np.empty(1, np.int64),
        np.empty(mp, np.int64), np.empty((mk, 3), np.float32), np.empty(mk, np.uint8),
        np.empty(mk, np.int64),
    )  # fmt: skip
    small, pv, tri, ports, types, valid, fs, fe, cnt, polys, pts, flags, refs = borrow(own)
    wp = out_polys.shape[1]
    wk = out_pts.shape[1]
    fpolys = out_polys.reshape(out_polys.shape[0] * wp)
    fpts = out_pts.reshape((out_pts.shape[0] * wk, 3))
    fflags = out_flags.reshape(out_flags.shape[0] * wk)
    op = np.uint64(i0 * wp)
    ok = np.uint64(i0 * wk)
    for i in range(i0, i1):
        code, n, m, sref, eref, st, length = pair_core(
            nav, pool, flt, acost, starts[i], ends[i], half, max_path, max_pts,
            polys, pts, flags, refs, small, pv, tri, ports, types, valid, fs, fe, cnt,
        )  # fmt: skip
        out_code[i] = code
        out_np[i] = n
        out_nm[i] = m
        out_sref[i] = sref
        out_eref[i] = eref
        out_status[i] = st
        out_len[i] = length
        out_off[i, 0] = op
        out_off[i, 1] = ok
        for j in range(n):
            fpolys[op + np.uint64(j)] = polys[j]
        for j in range(m):
            r = ok + np.uint64(j)
            fpts[r, 0] = pts[j, 0]
            fpts[r, 1] = pts[j, 1]
            fpts[r, 2] = pts[j, 2]
            fflags[r] = flags[j]
        op += np.uint64(n)
        ok += np.uint64(m)
    _keep(own)


@pnjit
def batch_kernel(
    d, work, pool_ds, flt, acost, starts, ends, half, max_path, max_pts,
    out_code, out_np, out_nm, out_sref, out_eref, out_status, out_polys, out_pts, out_flags, out_off,
    out_len,
):  # fmt: skip
    """All pairs on the view described by d, in ``work[CHUNKS]`` chunks that ``work[WORKERS]``
    workers take from a shared counter (:func:`navkit._atomic.claim`); worker w uses node
    pool pool_ds[w]. Pair i's results lie in the flat buffers at out_off[i] (see
    :func:`_pairs_chunk`)."""
    npairs = starts.shape[0]
    nchunks = work[CHUNKS]
    per = (npairs + nchunks - 1) // nchunks
    for w in numba.prange(work[WORKERS]):
        # Opened per worker: borrowed arrays (no reference counting shared between threads),
        # and a tuple type cannot cross into numba's parfor function.
        # The shared arguments are borrowed too: two threads updating one array's
        # reference count on every helper call would fight over its cache line.
        nav = open_view(d)
        pool = open_pool(pool_ds[w])
        c = claim(work)
        while c >= 0:
            _pairs_chunk(
                nav, pool, borrow(flt), borrow(acost), borrow(starts), borrow(ends), borrow(half),
                max_path, max_pts, c * per, min(npairs, (c + 1) * per), borrow(out_code),
                borrow(out_np), borrow(out_nm), borrow(out_sref), borrow(out_eref),
                borrow(out_status), borrow(out_polys), borrow(out_pts), borrow(out_flags),
                borrow(out_off), borrow(out_len),
            )  # fmt: skip
            c = claim(work)


@njit
def compact_block(sp, spts, sfl, off, n_polys, n_pts, out_polys, out_pts, out_fl, last):
    """Copy a block's results from the flat scratch buffers (pair i at ``off[i]``, see
    :func:`_pairs_chunk`) into its result arrays (as wide as the block's longest result),
    zero past each pair's counts, and note each pair's last corridor polygon (``last``;
    0 when the corridor is empty)."""
    wp = out_polys.shape[1]
    wk = out_pts.shape[1]
    fp = sp.reshape(sp.shape[0] * sp.shape[1])
    fk = spts.reshape((spts.shape[0] * spts.shape[1], 3))
    ff = sfl.reshape(sfl.shape[0] * sfl.shape[1])
    for i in range(out_polys.shape[0]):
        npl = n_polys[i]
        o = off[i, 0]
        for j in range(wp):
            out_polys[i, j] = fp[o + j] if j < npl else 0
        last[i] = fp[o + npl - 1] if npl > 0 else 0
        npt = n_pts[i]
        o = off[i, 1]
        for j in range(wk):
            if j < npt:
                out_pts[i, j, 0] = fk[o + j, 0]
                out_pts[i, j, 1] = fk[o + j, 1]
                out_pts[i, j, 2] = fk[o + j, 2]
                out_fl[i, j] = ff[o + j]
            else:
                out_pts[i, j, 0] = 0
                out_pts[i, j, 1] = 0
                out_pts[i, j, 2] = 0
                out_fl[i, j] = 0
