"""The tile cache's update calls in one kernel: requests, rebuilds, swaps, obstacle states.

``dtTileCache::update`` over the cache's arrays (:class:`~navkit.tilecache.update.CacheState`
keeps them): the obstacle table (``obi`` salt / state / next / touched and pending
counts, ``obt`` touched layers, ``obp`` pending layers, in layer indices), the rebuild
queue ``upd``, the layers' streams and headers, the per-position layer lists for
``queryTiles``, the decompressed copies of the layers under obstacles and the
navmesh pools. :func:`run_steps` runs steps until up to date (or ``max_steps``): it
turns the queued requests into touched layers when no rebuild is pending, rebuilds
the next layer with its live obstacles and swaps it into the navmesh
(:func:`~navkit.tilecache._rebuild.rebuild_swap`), keeps the navmesh's free-slot
list, and advances the obstacle states; each step's outcome is one row of ``rec``
(layer, ok, old tile ref, its poly count, old slot). Python is left only what it
must do between calls: grow the pools (``GROW``), compact them (``COMPACT``), grow
the touched arrays (``ROOM``), raise a swap error (``SWAP_ERROR``).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..detour._swap import NEED_GROW, OK
from ._rebuild import BUILD_FAILED, rebuild_swap, rebuild_swap_detail

# obi columns
SALT, STATE, NEXT, NT, NP = 0, 1, 2, 3, 4
OBI_COLS = 5
EMPTY, PROCESSING, PROCESSED, REMOVING = 0, 1, 2, 3
ADD, REMOVE, MOVE = 0, 1, 2
# sc entries
S_NEXT_FREE, S_NUPD, S_NREQ, S_MAXT, S_MAXU, S_GX0, S_GY0, S_GNX, S_GNY = 0, 1, 2, 3, 4, 5, 6, 7, 8
S_NFREE, S_RAWN, S_FAIL, S_NEED, S_FREECHG, S_KEEPALL = 9, 10, 11, 12, 13, 14
SC_SIZE = 16
# run_steps codes
DONE, GROW, COMPACT, FULL, SWAP_ERROR, ROOM = 0, 1, 2, 3, 4, 5
#: layers per position that queryTiles looks at (Detour's MAX_TILES of queryTiles)
QUERY_MAX_TILES = 32
REC_COLS = 5


@njit
def query_layers(pos_off, pos_lay, tight, gf, sc, qmin, qmax, out):  # pragma: no cover - numba
    """``queryTiles``: layers whose tight bounds overlap [qmin, qmax] (float32, Detour's
    arithmetic), in Detour's order, written to ``out`` (as many as fit); returns the
    count (also those that did not fit)."""
    o0 = gf[0]
    o2 = gf[1]
    tw = gf[2]
    th = gf[3]
    tx0 = np.int64(np.floor(np.float32(qmin[0] - o0) / tw))
    tx1 = np.int64(np.floor(np.float32(qmax[0] - o0) / tw))
    ty0 = np.int64(np.floor(np.float32(qmin[2] - o2) / th))
    ty1 = np.int64(np.floor(np.float32(qmax[2] - o2) / th))
    gx0 = sc[S_GX0]
    gy0 = sc[S_GY0]
    gnx = sc[S_GNX]
    gny = sc[S_GNY]
    n = 0
    for ty in range(max(ty0, gy0), min(ty1, gy0 + gny - 1) + 1):
        for tx in range(max(tx0, gx0), min(tx1, gx0 + gnx - 1) + 1):
            p = (ty - gy0) * gnx + (tx - gx0)
            a = pos_off[p]
            b = min(pos_off[p + 1], a + QUERY_MAX_TILES)
            for k in range(a, b):
                t = pos_lay[k]
                if (
                    qmin[0] <= tight[t, 3]
                    and qmin[1] <= tight[t, 4]
                    and qmin[2] <= tight[t, 5]
                    and qmax[0] >= tight[t, 0]
                    and qmax[1] >= tight[t, 1]
                    and qmax[2] >= tight[t, 2]
                ):
                    if n < out.shape[0]:
                        out[n] = t
                    n += 1
    return n


@njit
def _queue(obp, i, upd, sc, tiles, nt):  # pragma: no cover - numba
    """Queue ``tiles[:nt]`` for rebuild (at most ``max_update`` pending, no repeats) and
    as obstacle ``i``'s pending layers."""
    obp_n = 0
    maxu = sc[S_MAXU]
    for k in range(nt):
        t = tiles[k]
        nu = sc[S_NUPD]
        if nu < maxu:
            there = False
            for j in range(nu):
                if upd[j] == t:
                    there = True
                    break
            if not there:
                upd[nu] = t
                sc[S_NUPD] = nu + 1
            obp[i, obp_n] = t
            obp_n += 1
    return obp_n


@njit
def process_requests(obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch):
    # pragma: no cover - numba
    """Turn the queued requests ``req[:sc[S_NREQ]]`` into touched and pending layers and
    rebuilds (``dtTileCache::update``'s first half). False (nothing changed,
    ``sc[S_NEED]`` the touched capacity needed) when ``obt`` is too narrow."""
    n = obi.shape[0]
    nreq = sc[S_NREQ]
    maxt = sc[S_MAXT]
    cap = obt.shape[1]
    need = 0
    for r in range(nreq):
        action = req[r, 0]
        ref = req[r, 1]
        i = ref & 0xFFFF
        if i >= n or obi[i, SALT] != (ref >> 16) & 0xFFFF or action == REMOVE:
            continue
        c = min(
            query_layers(pos_off, pos_lay, tight, gf, sc, obq[i, :3], obq[i, 3:], scratch), maxt
        )
        need = max(need, c)
    if need > cap:
        sc[S_NEED] = need
        return False
    tiles = scratch
    for r in range(nreq):
        action = req[r, 0]
        ref = req[r, 1]
        i = ref & 0xFFFF
        if i >= n or obi[i, SALT] != (ref >> 16) & 0xFFFF:
            continue
        if action == ADD:
            c = min(
                query_layers(pos_off, pos_lay, tight, gf, sc, obq[i, :3], obq[i, 3:], tiles), maxt
            )
            for k in range(c):
                obt[i, k] = tiles[k]
            obi[i, NT] = c
            obi[i, NP] = _queue(obp, i, upd, sc, tiles, c)
        elif action == REMOVE:
            obi[i, STATE] = REMOVING
            c = obi[i, NT]
            for k in range(c):
                tiles[k] = obt[i, k]
            obi[i, NP] = _queue(obp, i, upd, sc, tiles, c)
        else:  # MOVE (navkit): the old and the new footprint are rebuilt
            old = obi[i, NT]
            for k in range(old):
                tiles[k] = obt[i, k]
            c = min(
                query_layers(pos_off, pos_lay, tight, gf, sc, obq[i, :3], obq[i, 3:], tiles[old:]),
                maxt,
            )
            m = old
            for k in range(c):
                t = tiles[old + k]
                obt[i, k] = t
                there = False
                for j in range(old):
                    if tiles[j] == t:
                        there = True
                        break
                if not there:
                    tiles[m] = t
                    m += 1
            obi[i, NT] = c
            obi[i, STATE] = PROCESSING
            obi[i, NP] = _queue(obp, i, upd, sc, tiles, m)
    sc[S_NREQ] = 0
    return True


@njit
def live_slots(obi, obt, layer, sel):  # pragma: no cover - numba
    """Slots of the obstacles marked on ``layer`` (processing or processed), in slot
    order, written to ``sel``; returns their count."""
    k = 0
    for i in range(obi.shape[0]):
        s = obi[i, STATE]
        if s == PROCESSING or s == PROCESSED:
            for j in range(obi[i, NT]):
                if obt[i, j] == layer:
                    sel[k] = i
                    k += 1
                    break
    return k


@njit
def advance(obi, obp, sc, layer):  # pragma: no cover - numba
    """The obstacle states after ``layer`` was rebuilt (slot order: freed slots join
    the free list so)."""
    for i in range(obi.shape[0]):
        s = obi[i, STATE]
        if s != PROCESSING and s != REMOVING:
            continue
        m = obi[i, NP]
        for j in range(m):
            if obp[i, j] == layer:
                obp[i, j] = obp[i, m - 1]
                m -= 1
                break
        obi[i, NP] = m
        if m == 0:
            if s == PROCESSING:
                obi[i, STATE] = PROCESSED
            else:
                obi[i, STATE] = EMPTY
                salt = (obi[i, SALT] + 1) & 0xFFFF
                obi[i, SALT] = salt if salt != 0 else 1
                obi[i, NEXT] = sc[S_NEXT_FREE]
                sc[S_NEXT_FREE] = i


@njit
def _pop_front(upd, sc):  # pragma: no cover - numba
    nu = sc[S_NUPD]
    for j in range(nu - 1):
        upd[j] = upd[j + 1]
    sc[S_NUPD] = nu - 1


GO, NOSTEP, STOP = 10, 11, 12


@njit
def _pre(only, obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch, sel,
         raw_row, raw_free, rec, nrec):  # pragma: no cover - numba  # fmt: skip
    """A step's head: the requests when no rebuild is pending, the next layer, its
    obstacles and its decompressed copy's row. Returns (code, layer, obstacles, row,
    fill): GO, NOSTEP (a step without rebuild), DONE, ROOM or FULL."""
    if only >= 0:
        layer = only
    else:
        if sc[S_NUPD] == 0:
            if sc[S_NREQ] == 0:
                return DONE, 0, 0, 0, 0
            if not process_requests(
                obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch
            ):
                return ROOM, 0, 0, 0, 0
            if sc[S_NUPD] == 0:
                return NOSTEP, 0, 0, 0, 0
        layer = upd[0]
    if nrec == rec.shape[0]:
        return FULL, 0, 0, 0, 0
    ns = live_slots(obi, obt, layer, sel)
    rrow = raw_row[layer]
    rfill = 0
    if rrow < 0 and (ns > 0 or sc[S_KEEPALL] != 0) and sc[S_RAWN] > 0:
        sc[S_RAWN] -= 1
        rrow = raw_free[sc[S_RAWN]]
        raw_row[layer] = rrow
        rfill = 1
    return GO, layer, ns, rrow, rfill


@njit
def _post(only, out, layer, ns, rrow, rfill, obi, obp, sc, upd, raw_row, raw_free, free, rec,
          nrec, ibits):  # pragma: no cover - numba  # fmt: skip
    """A step's tail after the rebuild and swap wrote ``out``: the queue, the layer's
    copy, the step's record, the free slots (``free[:sc[S_NFREE]]``, head last), the
    obstacle states. Returns (code, records): GO, GROW, SWAP_ERROR, COMPACT or STOP."""
    st = out[0]
    if st == NEED_GROW:
        return GROW, nrec
    failed = st == BUILD_FAILED
    if only < 0:
        _pop_front(upd, sc)
    if st != OK and not failed:  # a swap error: the step is dropped
        if rfill:
            raw_free[sc[S_RAWN]] = rrow
            sc[S_RAWN] += 1
            raw_row[layer] = -1
        return SWAP_ERROR, nrec
    if raw_row[layer] >= 0 and ((ns == 0 and sc[S_KEEPALL] == 0) or (rfill == 1 and failed)):
        raw_free[sc[S_RAWN]] = raw_row[layer]
        sc[S_RAWN] += 1
        raw_row[layer] = -1
    rec[nrec, 0] = layer
    rec[nrec, 1] = 0 if failed else 1
    rec[nrec, 2] = 0
    rec[nrec, 3] = 0
    rec[nrec, 4] = -1
    compact = False
    if failed:
        sc[S_FAIL] = out[6]
    else:
        action = out[1]
        if action & 1:
            rec[nrec, 2] = (out[3] << (ibits[2] + ibits[1])) | (out[2] << ibits[2])
            rec[nrec, 3] = out[4]
            rec[nrec, 4] = out[2]
        nf = sc[S_NFREE]
        if action == 1:
            free[nf] = out[2]
            sc[S_NFREE] = nf + 1
            sc[S_FREECHG] = 1
        elif action == 2:
            sc[S_NFREE] = nf - 1
            sc[S_FREECHG] = 1
        compact = out[6] != 0
    if only >= 0:
        return STOP, nrec + 1
    advance(obi, obp, sc, layer)
    return (COMPACT if compact else GO), nrec + 1


@njit
def run_steps(
    max_steps, only, obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch,
    sel, comp, coff, hdrs, bmins, bmaxs, kinds, fa, fb, rot, areas_id, pstart, pcount, pts,
    climb, max_error, d, cnt, ibits, wp, rawpool, raw_row, raw_free, free, rec, outs,
):  # pragma: no cover - numba  # fmt: skip
    """Update steps (``dtTileCache::update`` calls) of the recast-compatible mode until up
    to date or ``max_steps`` were done (``only >= 0``: rebuild that layer alone, no
    request or state change). Returns (records, code, steps)."""
    nrec = 0
    steps = 0
    sc[S_FREECHG] = 0
    while steps < max_steps:
        code, layer, ns, rrow, rfill = _pre(
            only, obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch, sel,
            raw_row, raw_free, rec, nrec,
        )  # fmt: skip
        if code == NOSTEP:
            steps += 1
            continue
        if code != GO:
            return nrec, code, steps
        nf = sc[S_NFREE]
        fh = free[nf - 1] if nf > 0 else np.int64(-1)
        rebuild_swap(
            comp[coff[layer] : coff[layer + 1]], hdrs[layer], bmins[layer], bmaxs[layer],
            sel[:ns], kinds, fa, fb, rot, areas_id, pstart, pcount, pts, climb, max_error,
            d, cnt, ibits, wp, fh, outs[nrec], rawpool, rrow, rfill,
        )  # fmt: skip
        code, nrec = _post(
            only, outs[nrec], layer, ns, rrow, rfill, obi, obp, sc, upd, raw_row, raw_free,
            free, rec, nrec, ibits,
        )  # fmt: skip
        if code == GROW or code == SWAP_ERROR:
            return nrec, code, steps
        steps += 1
        if code != GO:
            return nrec, (DONE if code == STOP else code), steps
    return nrec, DONE, steps


@njit
def run_steps_detail(
    max_steps, only, obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch,
    sel, comp, coff, hdrs, bmins, bmaxs, kinds, fa, fb, rot, areas_id, pstart, pcount, pts,
    climb, max_error, dparams, offmesh, d, cnt, ibits, wp, rawpool, raw_row, raw_free, free,
    rec, outs,
):  # pragma: no cover - numba  # fmt: skip
    """:func:`run_steps` for navkit's default mode (detail meshes, off-mesh connections)."""
    nrec = 0
    steps = 0
    sc[S_FREECHG] = 0
    while steps < max_steps:
        code, layer, ns, rrow, rfill = _pre(
            only, obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch, sel,
            raw_row, raw_free, rec, nrec,
        )  # fmt: skip
        if code == NOSTEP:
            steps += 1
            continue
        if code != GO:
            return nrec, code, steps
        nf = sc[S_NFREE]
        fh = free[nf - 1] if nf > 0 else np.int64(-1)
        rebuild_swap_detail(
            comp[coff[layer] : coff[layer + 1]], hdrs[layer], bmins[layer], bmaxs[layer],
            sel[:ns], kinds, fa, fb, rot, areas_id, pstart, pcount, pts, climb, max_error,
            dparams, offmesh, d, cnt, ibits, wp, fh, outs[nrec], rawpool, rrow, rfill,
        )  # fmt: skip
        code, nrec = _post(
            only, outs[nrec], layer, ns, rrow, rfill, obi, obp, sc, upd, raw_row, raw_free,
            free, rec, nrec, ibits,
        )  # fmt: skip
        if code == GROW or code == SWAP_ERROR:
            return nrec, code, steps
        steps += 1
        if code != GO:
            return nrec, (DONE if code == STOP else code), steps
    return nrec, DONE, steps


@njit
def begin_step(obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch):
    # pragma: no cover - numba
    """The Python path's step head: process the requests when no rebuild is pending and
    take the next layer off the queue. Returns the layer, -1 (no rebuild: the step is
    over) or -2 (``obt`` too narrow, ``sc[S_NEED]``)."""
    if sc[S_NUPD] == 0:
        if sc[S_NREQ] == 0:
            return -1
        if not process_requests(
            obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch
        ):
            return -2
        if sc[S_NUPD] == 0:
            return -1
    layer = upd[0]
    _pop_front(upd, sc)
    return layer


# -- the kernels' arrays as one descriptor ---------------------------------------------------
# A kernel called from Python unboxes each array argument (a few hundred ns each, more
# when the interpreter's caches are cold after the previous rebuild): the update step's
# 40 arrays cost more than its request processing. The cache packs them once into one
# int64 descriptor (address and extents of each, :func:`pack`, rebuilt when one of them
# is reallocated) and calls :func:`update_call` / :func:`update_call_detail`.

#: the update kernels' arrays in the descriptor, in order: (name, dtype, ndim)
STATE_SPEC = (
    ("obi", "i8", 2), ("obq", "f4", 2), ("obt", "i8", 2), ("obp", "i8", 2), ("sc", "i8", 1),
    ("upd", "i8", 1), ("req", "i8", 2), ("pos_off", "i8", 1), ("pos_lay", "i8", 1),
    ("tight", "f4", 2), ("gf", "f4", 1), ("scratch", "i8", 1), ("sel", "i8", 1),
    ("comp", "u1", 1), ("coff", "i8", 1), ("hdrs", "i8", 2), ("bmins", "f4", 2),
    ("bmaxs", "f4", 2), ("kinds", "i8", 1), ("fa", "f4", 2), ("fb", "f4", 2), ("rot", "f4", 2),
    ("areas_id", "u1", 1), ("pstart", "i8", 1), ("pcount", "i8", 1), ("pts", "f4", 2),
    ("wp", "f4", 1), ("rawpool", "u1", 2), ("raw_row", "i8", 1), ("raw_free", "i8", 1),
    ("free", "i8", 1), ("rec", "i8", 2), ("outs", "i8", 2), ("dparams", "f4", 1),
    ("ov", "f4", 2), ("orad", "f4", 1), ("obidir", "u1", 1), ("oarea", "u1", 1),
    ("oflags", "u2", 1), ("ouid", "u4", 1), ("world", "f8", 1),
)  # fmt: skip
_WORDS = 3  # address, then up to 2 extents


def _opener(spec):
    from numba.core import types
    from numba.np import numpy_support

    from .._jit import desc_opener

    members = [types.Array(numpy_support.from_dtype(np.dtype(dt)), nd, "C") for _, dt, nd in spec]
    return desc_opener(members, types.Tuple(members), _WORDS)


_open_state = _opener(STATE_SPEC)

#: the navmesh's arrays the update kernels swap tiles into, packed after the state's
#: (``sd[NM_OFFSET:]``): its pools' descriptor, its pool counters, its ref bits
NM_SPEC = (("nmd", "i8", 1), ("nmcnt", "i8", 2), ("ibits", "i8", 1))
NM_OFFSET = _WORDS * len(STATE_SPEC)
_open_nm = _opener(NM_SPEC)


def pack(arrays, spec=STATE_SPEC) -> np.ndarray:
    """The descriptor of ``arrays`` (``spec``'s, in order: :data:`STATE_SPEC` or
    :data:`NM_SPEC`): address and extents of each. The caller keeps them alive, and
    packs again when one is reallocated."""
    out = np.zeros(_WORDS * len(spec), np.int64)
    if len(arrays) != len(spec):
        raise TypeError(f"{len(arrays)} arrays for {len(spec)} descriptor entries")
    for i, ((name, dt, nd), a) in enumerate(zip(spec, arrays)):
        if (
            not isinstance(a, np.ndarray) or a.dtype != np.dtype(dt) or a.ndim != nd
            or not a.flags.c_contiguous
        ):  # fmt: skip
            raise TypeError(f"{name}: not a C-contiguous {dt} array of rank {nd}")
        out[_WORDS * i] = a.ctypes.data
        out[_WORDS * i + 1 : _WORDS * i + 1 + nd] = a.shape
    return out


@njit
def update_call(max_steps, only, climb, max_error, sd):  # pragma: no cover
    """:func:`run_steps` on the arrays of the descriptor ``sd`` (:func:`pack` of the
    state's arrays, then of the navmesh's, :data:`NM_SPEC`: one array to unbox); also
    returns the rebuilds and requests left and whether the free slots changed."""
    (
        obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch, sel, comp, coff,
        hdrs, bmins, bmaxs, kinds, fa, fb, rot, areas_id, pstart, pcount, pts, wp, rawpool,
        raw_row, raw_free, free, rec, outs, dparams, ov, orad, obidir, oarea, oflags, ouid,
        world,
    ) = _open_state(sd)  # fmt: skip
    d, cnt, ibits = _open_nm(sd[NM_OFFSET:])
    nrec, code, steps = run_steps(
        max_steps, only, obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch,
        sel, comp, coff, hdrs, bmins, bmaxs, kinds, fa, fb, rot, areas_id, pstart, pcount, pts,
        climb, max_error, d, cnt, ibits, wp, rawpool, raw_row, raw_free, free, rec, outs,
    )  # fmt: skip
    return nrec, code, steps, sc[S_NUPD], sc[S_NREQ], sc[S_FREECHG]


@njit
def update_call_detail(max_steps, only, climb, max_error, sd):  # pragma: no cover
    """:func:`run_steps_detail` on the arrays of the descriptor ``sd`` (:func:`pack`)."""
    (
        obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch, sel, comp, coff,
        hdrs, bmins, bmaxs, kinds, fa, fb, rot, areas_id, pstart, pcount, pts, wp, rawpool,
        raw_row, raw_free, free, rec, outs, dparams, ov, orad, obidir, oarea, oflags, ouid,
        world,
    ) = _open_state(sd)  # fmt: skip
    d, cnt, ibits = _open_nm(sd[NM_OFFSET:])
    nrec, code, steps = run_steps_detail(
        max_steps, only, obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch,
        sel, comp, coff, hdrs, bmins, bmaxs, kinds, fa, fb, rot, areas_id, pstart, pcount, pts,
        climb, max_error, dparams, (ov, orad, obidir, oarea, oflags, ouid), d, cnt, ibits, wp,
        rawpool, raw_row, raw_free, free, rec, outs,
    )  # fmt: skip
    return nrec, code, steps, sc[S_NUPD], sc[S_NREQ], sc[S_FREECHG]


#: add_call's refusals (a ref is >= 0; ``-4 - n``: the obstacle touches n layers, too many)
ADD_FULL, ADD_NO_ROOM, ADD_OUTSIDE = -1, -2, -3


@njit
def _add(obi, obq, sc, req, pos_off, pos_lay, tight, gf, scratch, kinds, fa, fb, rot_, areas_id,
         check_max, kind, area, a, b, rot):  # pragma: no cover - numba  # fmt: skip
    """:func:`add_call` once the query bounds are in ``obq`` of the free list's head."""
    i = sc[S_NEXT_FREE]
    q = obq[i]
    if check_max >= 0:
        n = query_layers(pos_off, pos_lay, tight, gf, sc, q[:3], q[3:], scratch)
        if n > check_max:
            return -4 - n
    nreq = sc[S_NREQ]
    salt = obi[i, SALT]
    sc[S_NEXT_FREE] = obi[i, NEXT]
    obi[i, STATE] = PROCESSING
    obi[i, NEXT] = -1
    obi[i, NT] = 0
    obi[i, NP] = 0
    kinds[i] = kind
    areas_id[i] = area
    for k in range(3):
        fa[i, k] = a[k]
        fb[i, k] = b[k]
    rot_[i, 0] = rot[0]
    rot_[i, 1] = rot[1]
    ref = (salt << 16) | i
    req[nreq, 0] = ADD
    req[nreq, 1] = ref
    sc[S_NREQ] = nreq + 1
    return ref


@njit
def add_call(sd, check_max, kind, area, a, b, rot, q0, q1, q2, q3, q4, q5):  # pragma: no cover
    """Add an obstacle (``addObstacle``): take the free list's head slot, store the shape
    as marked (``kind``, ``area``, ``a``, ``b``, ``rot``; the prisms' corners are the
    caller's) and its query bounds ``q`` [wu], queue its ADD request. Returns its ref;
    ADD_FULL (no free slot), ADD_NO_ROOM (the request array is full), or
    ``-4 - n`` when ``check_max >= 0`` and it touches ``n > check_max`` layers (nothing
    is changed then)."""
    (
        obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch, sel, comp, coff,
        hdrs, bmins, bmaxs, kinds, fa, fb, rot_, areas_id, pstart, pcount, pts, wp, rawpool,
        raw_row, raw_free, free, rec, outs, dparams, ov, orad, obidir, oarea, oflags, ouid,
        world,
    ) = _open_state(sd)  # fmt: skip
    i = sc[S_NEXT_FREE]
    if i < 0:
        return ADD_FULL
    if sc[S_NREQ] >= req.shape[0]:
        return ADD_NO_ROOM
    q = obq[i]  # (a free slot's row: written before the check, harmless)
    q[0] = q0
    q[1] = q1
    q[2] = q2
    q[3] = q3
    q[4] = q4
    q[5] = q5
    return _add(
        obi, obq, sc, req, pos_off, pos_lay, tight, gf, scratch, kinds, fa, fb, rot_, areas_id,
        check_max, kind, area, a, b, rot,
    )  # fmt: skip


@njit
def add_cylinder_call(sd, check_max, x, y, z, r, h):  # pragma: no cover - numba
    """:func:`add_call` for a hole-cutting cylinder given as numbers (a recast-compatible
    cache: marked as given): its float32 position, radius and height, Detour's bounds
    (float32 arithmetic) checked against the world (``world``: min, max [wu]; ADD_OUTSIDE
    when they miss it)."""
    (
        obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch, sel, comp, coff,
        hdrs, bmins, bmaxs, kinds, fa, fb, rot_, areas_id, pstart, pcount, pts, wp, rawpool,
        raw_row, raw_free, free, rec, outs, dparams, ov, orad, obidir, oarea, oflags, ouid,
        world,
    ) = _open_state(sd)  # fmt: skip
    i = sc[S_NEXT_FREE]
    if i < 0:
        return ADD_FULL
    if sc[S_NREQ] >= req.shape[0]:
        return ADD_NO_ROOM
    a = np.empty(3, np.float32)
    b = np.zeros(3, np.float32)
    a[0] = x
    a[1] = y
    a[2] = z
    b[0] = r
    b[1] = h
    q = obq[i]  # (a free slot's row: written before the checks, harmless)
    q[0] = a[0] - b[0]
    q[1] = a[1]
    q[2] = a[2] - b[0]
    q[3] = a[0] + b[0]
    q[4] = a[1] + b[1]
    q[5] = a[2] + b[0]
    if (
        q[3] < world[0] or q[4] < world[1] or q[5] < world[2]
        or q[0] > world[3] or q[1] > world[4] or q[2] > world[5]
    ):  # fmt: skip
        return ADD_OUTSIDE
    return _add(
        obi, obq, sc, req, pos_off, pos_lay, tight, gf, scratch, kinds, fa, fb, rot_, areas_id,
        check_max, 0, 0, a, b, np.zeros(2, np.float32),
    )  # fmt: skip


@njit
def add_oriented_box_call(sd, check_max, x, y, z, hx, hy, hz, yr):  # pragma: no cover - numba
    """:func:`add_cylinder_call` for a hole-cutting box rotated about +y: its float32
    centre and half extents, Detour's ``rotAux`` (cos and sin of the half angle, taken
    in double and rounded to float32, as :func:`~navkit.tilecache.obstacles.rot_aux`)
    and bounds (``1.41 * max(hx, hz)`` around the centre)."""
    (
        obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch, sel, comp, coff,
        hdrs, bmins, bmaxs, kinds, fa, fb, rot_, areas_id, pstart, pcount, pts, wp, rawpool,
        raw_row, raw_free, free, rec, outs, dparams, ov, orad, obidir, oarea, oflags, ouid,
        world,
    ) = _open_state(sd)  # fmt: skip
    i = sc[S_NEXT_FREE]
    if i < 0:
        return ADD_FULL
    if sc[S_NREQ] >= req.shape[0]:
        return ADD_NO_ROOM
    a = np.empty(3, np.float32)
    b = np.empty(3, np.float32)
    a[0] = x
    a[1] = y
    a[2] = z
    b[0] = hx
    b[1] = hy
    b[2] = hz
    ang = np.float32(yr)
    coshalf = np.float32(np.cos(np.float64(np.float32(0.5) * ang)))
    sinhalf = np.float32(np.sin(np.float64(np.float32(-0.5) * ang)))
    rot = np.empty(2, np.float32)
    rot[0] = coshalf * sinhalf
    rot[1] = coshalf * coshalf - np.float32(0.5)
    maxr = np.float32(1.41) * max(b[0], b[2])
    q = obq[i]  # (a free slot's row: written before the checks, harmless)
    q[0] = a[0] - maxr
    q[1] = a[1] - b[1]
    q[2] = a[2] - maxr
    q[3] = a[0] + maxr
    q[4] = a[1] + b[1]
    q[5] = a[2] + maxr
    if (
        q[3] < world[0] or q[4] < world[1] or q[5] < world[2]
        or q[0] > world[3] or q[1] > world[4] or q[2] > world[5]
    ):  # fmt: skip
        return ADD_OUTSIDE
    return _add(
        obi, obq, sc, req, pos_off, pos_lay, tight, gf, scratch, kinds, fa, fb, rot_, areas_id,
        check_max, 2, 0, a, b, rot,
    )  # fmt: skip


@njit
def remove_call(sd, ref, max_req):  # pragma: no cover - numba
    """Queue the REMOVE request of a live obstacle (``removeObstacle``): 0, or -1 (not a
    live handle), -2 (``max_req >= 0`` requests queued already), -3 (the request array
    is full). The caller checks the removals already queued."""
    (
        obi, obq, obt, obp, sc, upd, req, pos_off, pos_lay, tight, gf, scratch, sel, comp, coff,
        hdrs, bmins, bmaxs, kinds, fa, fb, rot_, areas_id, pstart, pcount, pts, wp, rawpool,
        raw_row, raw_free, free, rec, outs, dparams, ov, orad, obidir, oarea, oflags, ouid,
        world,
    ) = _open_state(sd)  # fmt: skip
    if ref <= 0 or ref > 0xFFFFFFFF:
        return -1
    i = ref & 0xFFFF
    if i >= obi.shape[0] or obi[i, SALT] != (ref >> 16) & 0xFFFF:
        return -1
    s = obi[i, STATE]
    if s == EMPTY or s == REMOVING:
        return -1
    nreq = sc[S_NREQ]
    if max_req >= 0 and nreq >= max_req:
        return -2
    if nreq >= req.shape[0]:
        return -3
    req[nreq, 0] = REMOVE
    req[nreq, 1] = ref
    sc[S_NREQ] = nreq + 1
    return 0
