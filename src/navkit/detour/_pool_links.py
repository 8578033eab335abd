"""NavMesh's link kernels called from Python on the pools as one reference.

The tile swaps (:mod:`navkit.detour._swap`) call :mod:`navkit.detour._links`'s
kernels on the pools opened as one :class:`navkit._jit.ArraysRef`
(``_swap.open_pool``). :class:`~navkit.detour.navmesh.NavMesh`'s Python paths
(``add_tile``, the bulk add, ``remove_tile``, the tile cache's replace) used to pass
the named tuple of 63 arrays instead: numba compiled ``connect_tile`` and every helper
it calls (off-mesh links, nearest polygon in a tile, closest point...) a second time
for that type, ~7 CPU s of a cold demo. These entries open the pools from the
navmesh's descriptor (``NavMesh._kernel_desc``) and pass the same argument types the
swap kernels pass (int64 scalars, C-contiguous int64 arrays), so both share one
compile of each link kernel.
"""

from __future__ import annotations

from .._jit import njit
from . import _links as L
from ._swap import open_pool


@njit
def connect_tiles(
    d, slots, same_start, same_xy, nei_start, nei_slots, nei_sides, tile_bits, poly_bits
):
    """:func:`navkit.detour._links.connect_tiles` on the pools described by ``d``:
    ``connect_tile`` for ``slots[i]``, i = 0, 1, ... in order (one tile or many: one
    entry kernel, compiled once, for ``add_tile`` and the bulk adds)."""
    a = open_pool(d)
    for i in range(slots.shape[0]):
        L.connect_tile(
            a,
            slots[i],
            same_xy[same_start[i] : same_start[i + 1]],
            nei_slots[nei_start[i] : nei_start[i + 1]],
            nei_sides[nei_start[i] : nei_start[i + 1]],
            tile_bits,
            poly_bits,
        )


@njit
def connect_new_tiles(d, slots, nei_start, nei_slots, nei_sides, tile_bits, poly_bits):
    """:func:`navkit.detour._links.connect_new_tiles` (a bake's tiles: no off-mesh
    connections, one layer per (x, y)) on the pools described by ``d``."""
    L.connect_new_tiles(open_pool(d), slots, nei_start, nei_slots, nei_sides, tile_bits, poly_bits)


@njit
def replace_tile(d, old, others, t, same_xy, nei_slots, nei_sides, tile_bits, poly_bits):
    """:func:`navkit.detour._links.replace_tile` on the pools described by ``d``."""
    a = open_pool(d)
    L.replace_tile(a, old, others, t, same_xy, nei_slots, nei_sides, tile_bits, poly_bits)


@njit
def disconnect_tile(d, t, others, tile_bits, poly_bits):
    """:func:`navkit.detour._links.disconnect_tile` on the pools described by ``d``."""
    a = open_pool(d)
    L.disconnect_tile(a, t, others, tile_bits, poly_bits)
