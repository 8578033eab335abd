"""One tile-cache update step in one kernel: layer -> Detour tile -> navmesh swap.

``dtTileCache::buildNavMeshTile`` followed by the navmesh's ``removeTile`` /
``addTile``, for the recast-compatible mode (no detail mesh, BV tree or off-mesh
connection): FastLZ decompression, obstacle marking (slot order), regions,
contours, polygon mesh (the stage kernels of :mod:`~navkit.tilecache.fastlz`,
:mod:`~navkit.tilecache.obstacles`, :mod:`~navkit.tilecache.regions`,
:mod:`~navkit.tilecache.contours`, :mod:`~navkit.tilecache.polymesh`), then
:func:`navkit.detour._swap.swap_poly_mesh_tile` writes the tile into the navmesh
pools and relinks it. One call from Python per step, on arrays the cache keeps
(:class:`~navkit.tilecache.update.CacheState`), so numba's dispatch resolves the
same few argument types every time.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..detour._swap import swap_poly_mesh_tile
from .contours import _contours_kernel
from .fastlz import _decompress
from .obstacles import (
    BOX,
    CYLINDER,
    ORIENTED_BOX,
    _mark_box,
    _mark_cylinder,
    _mark_oriented_box,
    _mark_prism,
)
from .polymesh import _polymesh_kernel
from .regions import _regions_kernel

__all__ = ["rebuild_swap", "BUILD_FAILED"]

#: out[0] when the layer could not be built (out[6]: which stage); the navmesh is untouched
BUILD_FAILED = 10
CORRUPT, TOO_MANY_REGIONS, CONTOUR_OVERFLOW, MESH_OVERFLOW = 1, 2, 3, 4


@njit
def rebuild_swap(
    comp, hdr, bmin, bmax, sel, kinds, fa, fb, rot, areas_id, pstart, pcount, pts,
    climb, max_error, d, cnt, ibits, wp, free_head, out,
):  # pragma: no cover - numba  # fmt: skip
    """Rebuild one layer with its obstacles and swap it into the navmesh.

    Parameters
    ----------
    comp : (n,) uint8
        The layer's FastLZ stream (after the 56-byte header).
    hdr : (5,) int64
        width, height, tx, ty, tlayer.
    bmin, bmax : (3,) float32
        The layer header's bounds [wu].
    sel : (k,) int64
        Obstacle slots marked on the layer, in slot order; ``kinds``, ``fa``, ``fb``,
        ``rot``, ``areas_id``, ``pstart``, ``pcount`` are per slot (an
        :class:`~navkit.tilecache.obstacles.Obstacle`'s fields), ``pts`` (P, 2)
        float32 the prisms' corners.
    climb : int
        [vx]; ``max_error`` float32 [cells].
    d, cnt, ibits, wp, free_head, out
        As :func:`navkit.detour._swap.swap_poly_mesh_tile` (``wp[0:2]`` = cs, ch).
    """
    w = hdr[0]
    h = hdr[1]
    n = w * h
    raw = np.zeros(3 * n, np.uint8)
    if _decompress(comp, raw) != 3 * n:
        out[0] = BUILD_FAILED
        out[6] = CORRUPT
        return
    heights = raw[:n]
    areas = raw[n : 2 * n]
    cons = raw[2 * n :]
    h2 = heights.reshape((h, w))
    a2 = areas.reshape((h, w))
    cs = wp[0]
    ch = wp[1]
    for i in sel:
        k = kinds[i]
        aid = areas_id[i]
        if k == CYLINDER:
            _mark_cylinder(h2, a2, bmin, cs, ch, fa[i], fb[i, 0], fb[i, 1], aid)
        elif k == BOX:
            _mark_box(h2, a2, bmin, cs, ch, fa[i], fb[i], aid)
        elif k == ORIENTED_BOX:
            _mark_oriented_box(h2, a2, bmin, cs, ch, fa[i], fb[i], rot[i], aid)
        else:
            p0 = pstart[i]
            _mark_prism(h2, a2, bmin, cs, ch, pts[p0 : p0 + pcount[i]], fa[i, 1], fb[i, 1], aid)
    regs, nregs = _regions_kernel(heights, areas, w, h, climb)
    if nregs < 0:
        out[0] = BUILD_FAILED
        out[6] = TOO_MANY_REGIONS
        return
    start, nverts, creg, carea, cverts, err = _contours_kernel(
        heights, areas, cons, regs, w, h, nregs, climb, max_error
    )
    if err < 0:
        out[0] = BUILD_FAILED
        out[6] = CONTOUR_OVERFLOW
        return
    verts, polys, pareas, st = _polymesh_kernel(start, nverts, carea.astype(np.int64), cverts)
    if st != 0:
        out[0] = BUILD_FAILED
        out[6] = MESH_OVERFLOW
        return
    swap_poly_mesh_tile(
        d, cnt, ibits, hdr[2], hdr[3], hdr[4], bmin, bmax, wp, free_head, verts, polys, pareas,
        out,
    )  # fmt: skip
