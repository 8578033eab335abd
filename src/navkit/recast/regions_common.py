"""Pieces shared by the three region partitions (watershed, monotone, layers).

- Input checks: a compact heightfield's cell table and neighbour links are
  verified once (:func:`check_chf`), so the kernels can follow links without
  bounds checks.
- :func:`_paint_borders` -- Recast's ``paintRectRegion`` for the four tile-border
  strips (ids 1..4 with ``BORDER_REG``).
- :func:`_sweep_rows` -- the row sweep of ``rcBuildRegionsMonotone`` and
  ``rcBuildLayerRegions``: runs along +x get a row-local id; a run whose spans all
  touch (towards -z) one single previous-row region, and that region only touches
  that run, continues that region, otherwise it starts a new one.
- :func:`_merge_and_filter` -- Recast's ``mergeAndFilterRegions``: region
  neighbourhoods are found by walking each region's outline (``walkContour``),
  connected groups smaller than ``min_region_area`` are removed, small regions are
  merged into their smallest compatible neighbour until nothing changes, then ids
  are compacted.
- :func:`_compact_ids` -- the id compaction and remap both merge steps end with.

Region bookkeeping (neighbour lists, floor lists) lives in ``(nreg, cap)`` int64
tables with a length per row; a table doubles its capacity when a row is full
(:func:`_push`). Everything follows the order in which Recast visits spans and
regions, since ids and merge choices depend on it.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import lend, njit
from navkit.errors import InputError
from navkit.recast.types import BORDER_REG, NOT_CONNECTED, CompactHeightfield

__all__ = ["check_chf", "check_region_args"]

_DX = np.array([-1, 0, 1, 0], dtype=np.int64)
_DZ = np.array([0, 1, 0, -1], dtype=np.int64)


@njit(inline="always")
def _nei(cidx, con, w, x, z, i, d):
    """Span index of the neighbour of span ``i`` (cell x, z) in direction ``d``, or -1."""
    c = (np.int64(con[i]) >> (6 * d)) & 0x3F
    if c == NOT_CONNECTED:
        return -1
    return np.int64(cidx[(x + _DX[d]) + (z + _DZ[d]) * w]) + c


@njit
def _links_ok(cidx, ccount, con, w, h, n):
    """True when the cells tile the spans in scan order and every link names an existing span.

    Recast lays spans out cell after cell (rows by z, cells by x), so span order
    is scan order; the kernels rely on that. Empty cells may hold any index.
    """
    expect = 0
    for z in range(h):
        for x in range(w):
            c = x + z * w
            cnt = np.int64(ccount[c])
            if cnt == 0:
                continue  # Recast leaves the index of empty cells at 0
            if np.int64(cidx[c]) != expect or expect + cnt > n:
                return False
            edge = x == 0 or z == 0 or x == w - 1 or z == h - 1
            for i in range(expect, expect + cnt):
                links = np.int64(con[i])
                if links & 0xFFFFFF == 0xFFFFFF:
                    continue  # no neighbour at all
                for d in range(4):
                    lay = (links >> (6 * d)) & 0x3F
                    if lay == NOT_CONNECTED:
                        continue
                    ax = x + _DX[d]
                    az = z + _DZ[d]
                    if edge and (ax < 0 or az < 0 or ax >= w or az >= h):
                        return False
                    if lay >= np.int64(ccount[ax + az * w]):
                        return False
            expect += cnt
    return expect == n


def check_chf(chf: CompactHeightfield):
    """Validate ``chf`` and return ``(cidx, ccount, con, areas)`` for the kernels.

    ``cidx`` (width*height,) uint32 and ``ccount`` (width*height,) uint8 are the
    cell table flattened (cell ``x + z*width``); ``con`` (n,) uint32 and ``areas``
    (n,) uint8 are the span arrays. Arrays are copied only to fix their dtype.

    Raises
    ------
    InputError
        On shape or dtype mismatches, a cell table that does not lay the spans
        out cell after cell (as Recast does), or links to cells or layers that do
        not exist.
    """
    w, h = int(chf.width), int(chf.height)
    if w < 0 or h < 0:
        raise InputError(f"compact heightfield has a negative grid size ({w} x {h})")
    ci = np.asarray(chf.cells_index)
    cc = np.asarray(chf.cells_count)
    if ci.shape != (h, w) or cc.shape != (h, w):
        raise InputError(
            f"cells_index/cells_count must have shape (height, width) = ({h}, {w}), "
            f"got {ci.shape} and {cc.shape}"
        )
    n = int(np.asarray(chf.y).shape[0])
    con = _as_uint(np.asarray(chf.con), np.uint32, "con", (n,))
    areas = _as_uint(np.asarray(chf.areas), np.uint8, "areas", (n,))
    cidx = _as_uint(ci, np.uint32, "cells_index", (h, w)).reshape(-1)
    ccount = _as_uint(cc, np.uint8, "cells_count", (h, w)).reshape(-1)
    if not _links_ok(cidx, ccount, con, w, h, n):
        raise InputError("compact heightfield cells or neighbour links point outside its spans")
    return cidx, ccount, con, areas


def _as_uint(a: np.ndarray, dtype, name: str, shape: tuple) -> np.ndarray:
    """``a`` as a C-contiguous array of ``dtype`` (copied only when needed), range-checked."""
    if a.shape != shape:
        raise InputError(f"{name} must have shape {shape}, got {a.shape}")
    if a.dtype != dtype:
        if not np.issubdtype(a.dtype, np.integer):
            raise InputError(
                f"{name} must be an integer array ({np.dtype(dtype).name}), got {a.dtype}"
            )
        if a.size and (int(a.min()) < 0 or int(a.max()) > np.iinfo(dtype).max):
            raise InputError(f"{name} holds values outside {np.dtype(dtype).name}")
        a = a.astype(dtype)
    return np.ascontiguousarray(a)


def check_region_args(border_size: int, **areas: int) -> None:
    """Reject negative border or area sizes with :class:`InputError`."""
    if int(border_size) < 0:
        raise InputError(f"border_size must be >= 0, got {border_size}")
    for name, v in areas.items():
        if int(v) < 0:
            raise InputError(f"{name} must be >= 0, got {v}")


# -- growable per-region lists -------------------------------------------------------------
@njit
def _push(tab, lens, r, v):
    """Append ``v`` to row ``r`` of ``tab``; returns the (possibly reallocated) table."""
    k = lens[r]
    if k == tab.shape[1]:
        bigger = np.empty((tab.shape[0], 2 * tab.shape[1]), dtype=tab.dtype)
        bigger[:, : tab.shape[1]] = tab
        tab = bigger
    tab[r, k] = v
    lens[r] = k + 1
    return tab


@njit
def _reserve(tab, need):
    """``tab`` with at least ``need`` columns."""
    if need <= tab.shape[1]:
        return tab
    cap = tab.shape[1]
    while cap < need:
        cap *= 2
    bigger = np.empty((tab.shape[0], cap), dtype=tab.dtype)
    bigger[:, : tab.shape[1]] = tab
    return bigger


@njit
def _push_unique(tab, lens, r, v):
    for k in range(lens[r]):
        if tab[r, k] == v:
            return tab
    return _push(tab, lens, r, v)


@njit(lent=True)
def _drop_cyclic_repeats(buf, n):
    """Recast's ``removeAdjacentNeighbours``: drop ``buf[k]`` while it equals its cyclic successor."""
    k = 0
    while k < n and n > 1:
        nk = (k + 1) % n
        if buf[k] == buf[nk]:
            for j in range(k, n - 1):
                buf[j] = buf[j + 1]
            n -= 1
        else:
            k += 1
    return n


# -- border painting and row sweeps ----------------------------------------------------------
@njit(lent=True)
def _paint_rect(cidx, ccount, areas, w, x0, x1, z0, z1, rid, reg):
    for z in range(z0, z1):
        for x in range(x0, x1):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccount[c])):
                if areas[i] != 0:
                    reg[i] = rid


@njit(lent=True)
def _paint_borders(cidx, ccount, areas, w, h, border_size, reg):
    """Paint the four border strips with ids 1..4 | BORDER_REG; returns the next free id."""
    bw = min(w, border_size)
    bh = min(h, border_size)
    _paint_rect(cidx, ccount, areas, w, 0, bw, 0, h, 1 | BORDER_REG, reg)
    _paint_rect(cidx, ccount, areas, w, w - bw, w, 0, h, 2 | BORDER_REG, reg)
    _paint_rect(cidx, ccount, areas, w, 0, w, 0, bh, 3 | BORDER_REG, reg)
    _paint_rect(cidx, ccount, areas, w, 0, w, h - bh, h, 4 | BORDER_REG, reg)
    return 5


@njit(lent=True)
def _sweep_rows(cidx, ccount, con, areas, w, h, border_size, reg, next_id):
    """Monotone row sweep (shared by monotone and layer partitions).

    ``reg`` (n,) uint16 is updated in place; returns the next unused region id.
    """
    NULL_NEI = 0xFFFF
    n = reg.shape[0]
    # a row has at most as many runs as spans, and each run takes at most one new id
    row_max = 0
    for z in range(h):
        k = 0
        for x in range(w):
            k += np.int64(ccount[x + z * w])
        row_max = max(row_max, k)
    run_nei = np.zeros(
        row_max + 2, np.int64
    )  # previous-row region touched (0 none, NULL_NEI several)
    run_ns = np.zeros(row_max + 2, np.int64)  # spans of the run touching it
    run_id = np.zeros(row_max + 2, np.int64)
    prev = np.zeros(next_id + n + 2, np.int32)  # per region: spans of this row touching it
    nid = next_id
    for z in range(border_size, h - border_size):
        prev[: nid + 1] = 0
        rid = 1
        for x in range(border_size, w - border_size):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccount[c])):
                a = areas[i]
                if a == 0:
                    continue
                run = 0
                ai = _nei(cidx, con, w, x, z, i, 0)
                if ai >= 0 and (reg[ai] & BORDER_REG) == 0 and areas[ai] == a:
                    run = np.int64(reg[ai])
                if run == 0:
                    run = rid
                    rid += 1
                    run_ns[run] = 0
                    run_nei[run] = 0
                ai = _nei(cidx, con, w, x, z, i, 3)
                if ai >= 0:
                    nr = np.int64(reg[ai])
                    if nr != 0 and (nr & BORDER_REG) == 0 and areas[ai] == a:
                        if run_nei[run] == 0 or run_nei[run] == nr:
                            run_nei[run] = nr
                            run_ns[run] += 1
                            prev[nr] += 1
                        else:
                            run_nei[run] = NULL_NEI
                reg[i] = run
        for k in range(1, rid):
            nb = run_nei[k]
            if nb != NULL_NEI and nb != 0 and prev[nb] == run_ns[k]:
                run_id[k] = nb
            else:
                run_id[k] = nid
                nid += 1
        for x in range(border_size, w - border_size):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccount[c])):
                r = reg[i]
                if r > 0 and r < rid:
                    reg[i] = run_id[r]
    return nid


# -- mergeAndFilterRegions -------------------------------------------------------------------
@njit
def _walk_outline(cidx, con, w, reg, x, z, i, d, buf):
    """Walk the outline of span i's region from edge ``d``; returns (buf, n) of neighbour ids.

    The neighbours are recorded in the order met (clockwise), each change once,
    with cyclic repeats dropped as Recast's ``walkContour`` does.
    """
    start_d = d
    start_i = i
    ai = _nei(cidx, con, w, x, z, i, d)
    cur = np.int64(reg[ai]) if ai >= 0 else 0
    n = 0
    buf[n] = cur
    n += 1
    it = 0
    while True:
        it += 1
        if it >= 40000:
            break
        ai = _nei(cidx, con, w, x, z, i, d)
        r = np.int64(reg[ai]) if ai >= 0 else 0
        if r != reg[i]:  # solid edge
            if r != cur:
                cur = r
                if n == buf.shape[0]:
                    t = np.empty(2 * n, np.int64)
                    t[:n] = buf
                    buf = t
                buf[n] = cur
                n += 1
            d = (d + 1) & 3
        else:
            if ai < 0:
                return buf, n  # cannot happen with consistent links
            x = x + _DX[d]
            z = z + _DZ[d]
            i = ai
            d = (d + 3) & 3
        if i == start_i and d == start_d:
            break
    if n > 1:
        k = 0
        while k < n:
            nk = (k + 1) % n
            if buf[k] == buf[nk]:
                for j in range(k, n - 1):
                    buf[j] = buf[j + 1]
                n -= 1
            else:
                k += 1
    return buf, n


@njit(lent=True)
def _can_merge(a, b, rid, rarea, conns, nconn, floors, nfloor):
    if rarea[a] != rarea[b]:
        return False
    bid = rid[b]
    k = 0
    for j in range(nconn[a]):
        if conns[a, j] == bid:
            k += 1
    if k > 1:
        return False
    for j in range(nfloor[a]):
        if floors[a, j] == bid:
            return False
    return True


@njit(lent=True)
def _compact_ids(rid, nreg, reg):
    """Renumber live ids 1.. in table order and remap ``reg``; returns the highest new id."""
    remap = np.zeros(nreg, np.bool_)
    for k in range(nreg):
        remap[k] = rid[k] != 0 and (rid[k] & BORDER_REG) == 0
    gen = 0
    for k in range(nreg):
        if not remap[k]:
            continue
        old = rid[k]
        gen += 1
        for j in range(k, nreg):
            if rid[j] == old:
                rid[j] = gen
                remap[j] = False
    for i in range(reg.shape[0]):
        r = reg[i]
        if (r & BORDER_REG) == 0:
            reg[i] = rid[r]
    return gen


@njit(lent=True, link=False)
def _merge_and_filter(cidx, ccount, con, areas, w, h, reg, nreg, min_area, merge_area):
    """Recast's ``mergeAndFilterRegions`` over ``reg`` in place; returns the new region count."""
    # no reference counting in the helpers' calls (docs/architecture.md, Kernels)
    cidx, ccount, con, areas, reg = lend((cidx, ccount, con, areas, reg))
    rid = np.arange(nreg).astype(np.int64)
    rspans = np.zeros(nreg, np.int64)
    rarea = np.zeros(nreg, np.int64)
    overlap = np.zeros(nreg, np.bool_)
    visited = np.zeros(nreg, np.bool_)
    conns = np.empty((nreg, 8), np.int64)
    nconn = np.zeros(nreg, np.int64)
    floors = np.empty((nreg, 4), np.int64)
    nfloor = np.zeros(nreg, np.int64)
    buf = np.empty(64, np.int64)

    # Span counts, floors (other regions in the same column) and outline neighbours.
    for z in range(h):
        for x in range(w):
            c = x + z * w
            s0 = np.int64(cidx[c])
            s1 = s0 + np.int64(ccount[c])
            for i in range(s0, s1):
                r = np.int64(reg[i])
                if r == 0 or r >= nreg:
                    continue
                rspans[r] += 1
                for j in range(s0, s1):
                    if j == i:
                        continue
                    f = np.int64(reg[j])
                    if f == 0 or f >= nreg:
                        continue
                    if f == r:
                        overlap[r] = True
                    floors = _push_unique(floors, nfloor, r, f)
                if nconn[r] > 0:
                    continue
                rarea[r] = areas[i]
                edge = -1
                for d in range(4):
                    ai = _nei(cidx, con, w, x, z, i, d)
                    nr = np.int64(reg[ai]) if ai >= 0 else 0
                    if nr != r:
                        edge = d
                        break
                if edge >= 0:
                    buf, n = _walk_outline(cidx, con, w, reg, x, z, i, edge, buf)
                    conns = _reserve(conns, n)
                    conns[r, :n] = buf[:n]
                    nconn[r] = n

    # Remove connected groups of regions that are too small (unless they touch a tile border).
    stack = np.empty(nreg + 1, np.int64)
    trace = np.empty(nreg + 1, np.int64)
    for k in range(nreg):
        if rid[k] == 0 or (rid[k] & BORDER_REG) != 0:
            continue
        if rspans[k] == 0 or visited[k]:
            continue
        to_border = False
        total = 0
        ns = 0
        nt = 0
        visited[k] = True
        stack[ns] = k
        ns += 1
        while ns > 0:
            ns -= 1
            ri = stack[ns]
            total += rspans[ri]
            trace[nt] = ri
            nt += 1
            for j in range(nconn[ri]):
                nb = conns[ri, j]
                if (nb & BORDER_REG) != 0:
                    to_border = True
                    continue
                if visited[nb]:
                    continue
                if rid[nb] == 0 or (rid[nb] & BORDER_REG) != 0:
                    continue
                stack[ns] = rid[nb]
                ns += 1
                visited[nb] = True
        if total < min_area and not to_border:
            for j in range(nt):
                rspans[trace[j]] = 0
                rid[trace[j]] = 0

    # Merge small regions (and regions away from the null border) into neighbours.
    tmp = np.empty(16, np.int64)
    while True:
        merges = 0
        for k in range(nreg):
            if rid[k] == 0 or (rid[k] & BORDER_REG) != 0:
                continue
            if overlap[k] or rspans[k] == 0:
                continue
            if rspans[k] > merge_area:
                touches_null = False
                for j in range(nconn[k]):
                    if conns[k, j] == 0:
                        touches_null = True
                        break
                if touches_null:
                    continue
            smallest = 0xFFFFFFF
            target_id = rid[k]
            for j in range(nconn[k]):
                nb = conns[k, j]
                if (nb & BORDER_REG) != 0:
                    continue
                if rid[nb] == 0 or (rid[nb] & BORDER_REG) != 0 or overlap[nb]:
                    continue
                if (
                    rspans[nb] < smallest
                    and _can_merge(k, nb, rid, rarea, conns, nconn, floors, nfloor)
                    and _can_merge(nb, k, rid, rarea, conns, nconn, floors, nfloor)
                ):
                    smallest = rspans[nb]
                    target_id = rid[nb]
            if target_id == rid[k]:
                continue
            old = rid[k]
            t = target_id
            # mergeRegions(target, k): splice k's neighbour ring into t's at their shared edge.
            at = -1
            for j in range(nconn[t]):
                if conns[t, j] == old:
                    at = j
                    break
            if at < 0:
                continue
            ak = -1
            for j in range(nconn[k]):
                if conns[k, j] == rid[t]:
                    ak = j
                    break
            if ak < 0:
                continue
            na = nconn[t]
            nb_ = nconn[k]
            if tmp.shape[0] < na + nb_:
                tmp = np.empty(2 * (na + nb_), np.int64)
            m = 0
            for j in range(na - 1):
                tmp[m] = conns[t, (at + 1 + j) % na]
                m += 1
            for j in range(nb_ - 1):
                tmp[m] = conns[k, (ak + 1 + j) % nb_]
                m += 1
            m = _drop_cyclic_repeats(tmp, m)
            conns = _reserve(conns, m)
            conns[t, :m] = tmp[:m]
            nconn[t] = m
            for j in range(nfloor[k]):
                floors = _push_unique(floors, nfloor, t, floors[k, j])
            rspans[t] += rspans[k]
            rspans[k] = 0
            nconn[k] = 0
            # Point everything that referred to the old id at the target.
            for j in range(nreg):
                if rid[j] == 0 or (rid[j] & BORDER_REG) != 0:
                    continue
                if rid[j] == old:
                    rid[j] = target_id
                changed = False
                for q in range(nconn[j]):
                    if conns[j, q] == old:
                        conns[j, q] = target_id
                        changed = True
                for q in range(nfloor[j]):
                    if floors[j, q] == old:
                        floors[j, q] = target_id
                if changed:
                    nconn[j] = _drop_cyclic_repeats(conns[j], nconn[j])
            merges += 1
        if merges == 0:
            break

    return _compact_ids(rid, nreg, reg)
