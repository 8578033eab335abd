"""Distance field of a compact heightfield (Recast's ``rcBuildDistanceField``).

Every span gets an approximate distance to the nearest boundary, in units of
half a cell (2 per straight step, 3 per diagonal step). Spans with fewer than
four same-area neighbours are boundaries (distance 0). A two-pass chamfer sweep
propagates distances: the forward pass (rows by +z, cells by +x) looks at the
-x, (-x,-z), -z and (+x,-z) neighbours, the backward pass (reverse order) at +x,
(+x,+z), +z and (-x,+z); diagonals are reached through the straight neighbour's
link, as Recast does. ``max_distance`` is the largest chamfer distance. Then a
3x3 box blur with threshold 1 (distances <= 2 kept as is) smooths the field:
the nine samples are summed (a missing neighbour counts as the centre value)
and ``(sum + 5) // 9`` is stored.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import njit
from navkit.recast.regions_common import _nei, check_chf
from navkit.recast.types import CompactHeightfield

__all__ = ["build_distance_field"]


@njit
def _chamfer(cidx, ccount, con, areas, w, h, src):
    """Chamfer distances into ``src`` (n,) uint16; returns their maximum."""
    n = src.shape[0]
    for i in range(n):
        src[i] = 0xFFFF
    for z in range(h):
        for x in range(w):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccount[c])):
                same = 0
                for d in range(4):
                    ai = _nei(cidx, con, w, x, z, i, d)
                    if ai >= 0 and areas[ai] == areas[i]:
                        same += 1
                if same != 4:
                    src[i] = 0
    # forward: straight d, then diagonal via d's neighbour turning to d2
    for z in range(h):
        for x in range(w):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccount[c])):
                for d, d2 in ((0, 3), (3, 2)):
                    ai = _nei(cidx, con, w, x, z, i, d)
                    if ai < 0:
                        continue
                    v = np.int64(src[ai]) + 2
                    if v < src[i]:
                        src[i] = v
                    ax = x + (-1 if d == 0 else 0)
                    az = z + (-1 if d == 3 else 0)
                    bi = _nei(cidx, con, w, ax, az, ai, d2)
                    if bi >= 0:
                        v = np.int64(src[bi]) + 3
                        if v < src[i]:
                            src[i] = v
    for z in range(h - 1, -1, -1):
        for x in range(w - 1, -1, -1):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccount[c])):
                for d, d2 in ((2, 1), (1, 0)):
                    ai = _nei(cidx, con, w, x, z, i, d)
                    if ai < 0:
                        continue
                    v = np.int64(src[ai]) + 2
                    if v < src[i]:
                        src[i] = v
                    ax = x + (1 if d == 2 else 0)
                    az = z + (1 if d == 1 else 0)
                    bi = _nei(cidx, con, w, ax, az, ai, d2)
                    if bi >= 0:
                        v = np.int64(src[bi]) + 3
                        if v < src[i]:
                            src[i] = v
    mx = 0
    for i in range(n):
        if src[i] > mx:
            mx = src[i]
    return mx


@njit
def _blur(cidx, ccount, con, w, h, src, dst):
    """3x3 box blur of ``src`` into ``dst`` (threshold 1, as Recast calls it)."""
    thr = 2
    for z in range(h):
        for x in range(w):
            c = x + z * w
            for i in range(np.int64(cidx[c]), np.int64(cidx[c]) + np.int64(ccount[c])):
                cd = np.int64(src[i])
                if cd <= thr:
                    dst[i] = cd
                    continue
                acc = cd
                for d in range(4):
                    ai = _nei(cidx, con, w, x, z, i, d)
                    if ai < 0:
                        acc += 2 * cd
                        continue
                    acc += src[ai]
                    d2 = (d + 1) & 3
                    if d == 0:
                        ax, az = x - 1, z
                    elif d == 1:
                        ax, az = x, z + 1
                    elif d == 2:
                        ax, az = x + 1, z
                    else:
                        ax, az = x, z - 1
                    bi = _nei(cidx, con, w, ax, az, ai, d2)
                    if bi >= 0:
                        acc += src[bi]
                    else:
                        acc += cd
                dst[i] = (acc + 5) // 9


@njit(link=False)
def _kernel(cidx, ccount, con, areas, w, h):
    n = con.shape[0]
    src = np.empty(n, np.uint16)
    dst = np.empty(n, np.uint16)
    mx = _chamfer(cidx, ccount, con, areas, w, h, src)
    _blur(cidx, ccount, con, w, h, src, dst)
    return dst, mx


def build_distance_field(chf: CompactHeightfield) -> CompactHeightfield:
    """Compute ``chf.dist`` and ``chf.max_distance`` (Recast's ``rcBuildDistanceField``).

    Parameters
    ----------
    chf : CompactHeightfield
        Compact heightfield (usually eroded); its ``dist`` is ignored.

    Returns
    -------
    CompactHeightfield
        A copy with ``dist`` (n,) uint16 -- the blurred distance to the nearest
        boundary [half cells] -- and ``max_distance``, the maximum distance
        *before* the blur, as Recast stores it.

    Raises
    ------
    InputError
        If the heightfield's arrays are inconsistent.
    """
    cidx, ccount, con, areas = check_chf(chf)
    dist, mx = _kernel(cidx, ccount, con, areas, int(chf.width), int(chf.height))
    return chf._replace(dist=dist, max_distance=int(mx))
