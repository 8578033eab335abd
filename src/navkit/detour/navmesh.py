"""Detour's ``dtNavMesh`` with struct-of-arrays pools shared by all tiles.

A :class:`NavMesh` holds any number of tiles (Detour's tile slots, salts, position
lookup and ref encoding) but stores their contents in global pools, so that numba
kernels take plain arrays. Adding a tile appends its ranges to every pool (pools
grow by doubling); removing a tile marks its ranges dead and bumps the slot's salt
(pools are compacted when half of one is dead). Links are built exactly as Detour
builds them (``connectIntLinks``, ``baseOffMeshLinks``, ``connectExtOffMeshLinks``,
then the other layers at the same (x, y) and the 8 neighbours with
``connectExtLinks``/``connectExtOffMeshLinks``; per-tile link free lists), so a
Recast export of the pools gives Detour's bytes. Source: Detour/Source/DetourNavMesh.cpp.

navkit extension: :meth:`NavMesh.add_off_mesh_connection` links an off-mesh
connection between *any* two tiles at runtime (Detour links a connection's end
only in the same or a neighbouring tile, when tiles are added); the start tile is
re-stored with the extra polygon and link capacity.

Layout of :class:`NavMeshArrays` (from :meth:`NavMesh.arrays`; global indices,
``-1`` = none; T = ``max_tiles``). Stale after any add/remove: call ``arrays()`` again.

Tile table (one row per slot):

- ``tile_salt`` (T,) uint32: the slot's salt (never 0).
- ``tile_used`` (T,) uint8: 1 when the slot holds a tile.
- ``tile_x``, ``tile_y``, ``tile_layer`` (T,) int32: grid location (y is world z) and layer.
- ``tile_user_id`` (T,) uint32: header userId.
- ``tile_bmin``, ``tile_bmax`` (T, 3) float32: tile bounds [wu].
- ``tile_walkable_height``, ``tile_walkable_radius``, ``tile_walkable_climb`` (T,) float32 [wu].
- ``tile_bv_quant`` (T,) float32: bvQuantFactor (1/cs).
- ``tile_off_mesh_base`` (T,) int32: local index of the first off-mesh polygon.
- ``tile_<pool>_base``, ``tile_<pool>_count`` (T,) int64 for pool in vert, poly, link,
  dmesh, dvert, dtri, bv, off: the tile's range in each pool (link count = maxLinkCount).
- ``tile_link_free`` (T,) int64: head of the tile's free-link list (global link index).
- ``tile_next`` (T,) int32 and ``lut`` (L,) int32: Detour's position hash chains
  (``lut[hash(x, y)]`` -> slot -> ``tile_next`` ...).

Pools:

- ``verts`` (NV, 3) float32: polygon vertices [wu] (off-mesh endpoints included).
- ``poly_verts`` (NP, 6) int64: global vertex indices; entries past ``poly_vert_count``
  are padding (the tile's vertex base + the blob's value, normally 0).
- ``poly_neis`` (NP, 6) uint16: Detour's neighbour codes (0 wall, local index + 1,
  ``0x8000 | side`` portal).
- ``poly_flags`` (NP,) uint16; ``poly_area`` (NP,) uint8 (0..63); ``poly_type`` (NP,)
  uint8 (0 ground, 1 off-mesh); ``poly_vert_count`` (NP,) uint8.
- ``poly_first_link`` (NP,) int64: head of the polygon's link list.
- ``poly_tile`` (NP,) int32: owning tile slot (-1 in dead ranges of removed tiles).
- ``link_ref`` (NL,) uint64: target poly ref; ``link_poly`` (NL,) int64: target global
  poly index; ``link_next`` (NL,) int64: next link (or free-list next);
  ``link_edge``, ``link_side``, ``link_bmin``, ``link_bmax`` (NL,) uint8 (as ``dtLink``).
- ``dmesh_vert_base``, ``dmesh_tri_base`` (ND,) int64: global index of a ground polygon's
  first extra detail vertex / triangle; ``dmesh_vert_count``, ``dmesh_tri_count`` (ND,)
  uint8. Polygon ``gp`` of tile ``t`` uses ``tile_dmesh_base[t] + gp - tile_poly_base[t]``.
- ``dverts`` (NDV, 3) float32 [wu]; ``dtris`` (NDT, 4) uint8 (local indices + edge flags).
- ``bv_bmin``, ``bv_bmax`` (NB, 3) uint16; ``bv_i`` (NB,) int32 (leaf: local poly
  index; internal: -escape), as ``dtBVNode``.
- ``off_pos`` (NO, 6) float32; ``off_rad`` (NO,) float32; ``off_poly`` (NO,) int64
  (global poly); ``off_flags``, ``off_side`` (NO,) uint8; ``off_user_id`` (NO,) uint32.

Kernels validate refs with ``navkit.detour._links.poly_index_of_ref(a, ref, salt_bits,
tile_bits, poly_bits)`` (-1 = stale/invalid); the Python layer raises StaleHandleError.

Refs: ``ref = salt << (poly_bits + tile_bits) | slot << poly_bits | poly`` with
``tile_bits = ilog2(nextPow2(max_tiles))``, ``poly_bits = ilog2(nextPow2(max_polys))``,
``salt_bits = min(31, 32 - tile_bits - poly_bits)`` (32-bit refs), or Detour's
``DT_POLYREF64`` layout 16/28/20 (``ref64=True``). Refs are Python ints (uint64 in arrays).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import _check
from ..errors import ConfigError, InputError, StaleHandleError
from . import _links as L
from .tile import TileData

__all__ = ["NavMesh", "NavMeshArrays", "NavMeshParams", "MAX_TILES"]

#: Largest ``max_tiles`` (the tile table is allocated up front: ~250 bytes per slot).
MAX_TILES = 1 << 22

_POOLS = {
    "vert": ["verts"],
    "poly": [
        "poly_verts",
        "poly_neis",
        "poly_flags",
        "poly_area",
        "poly_type",
        "poly_vert_count",
        "poly_first_link",
        "poly_tile",
    ],
    "link": [
        "link_ref",
        "link_poly",
        "link_next",
        "link_edge",
        "link_side",
        "link_bmin",
        "link_bmax",
    ],
    "dmesh": ["dmesh_vert_base", "dmesh_tri_base", "dmesh_vert_count", "dmesh_tri_count"],
    "dvert": ["dverts"],
    "dtri": ["dtris"],
    "bv": ["bv_bmin", "bv_bmax", "bv_i"],
    "off": ["off_pos", "off_rad", "off_poly", "off_flags", "off_side", "off_user_id"],
}
_POOL_SPEC = {
    "verts": (np.float32, 3),
    "poly_verts": (np.int64, 6),
    "poly_neis": (np.uint16, 6),
    "poly_flags": (np.uint16, 0),
    "poly_area": (np.uint8, 0),
    "poly_type": (np.uint8, 0),
    "poly_vert_count": (np.uint8, 0),
    "poly_first_link": (np.int64, 0),
    "poly_tile": (np.int32, 0),
    "link_ref": (np.uint64, 0),
    "link_poly": (np.int64, 0),
    "link_next": (np.int64, 0),
    "link_edge": (np.uint8, 0),
    "link_side": (np.uint8, 0),
    "link_bmin": (np.uint8, 0),
    "link_bmax": (np.uint8, 0),
    "dmesh_vert_base": (np.int64, 0),
    "dmesh_tri_base": (np.int64, 0),
    "dmesh_vert_count": (np.uint8, 0),
    "dmesh_tri_count": (np.uint8, 0),
    "dverts": (np.float32, 3),
    "dtris": (np.uint8, 4),
    "bv_bmin": (np.uint16, 3),
    "bv_bmax": (np.uint16, 3),
    "bv_i": (np.int32, 0),
    "off_pos": (np.float32, 6),
    "off_rad": (np.float32, 0),
    "off_poly": (np.int64, 0),
    "off_flags": (np.uint8, 0),
    "off_side": (np.uint8, 0),
    "off_user_id": (np.uint32, 0),
}
_TILE_SPEC = {
    "tile_salt": (np.uint32, 0),
    "tile_used": (np.uint8, 0),
    "tile_x": (np.int32, 0),
    "tile_y": (np.int32, 0),
    "tile_layer": (np.int32, 0),
    "tile_user_id": (np.uint32, 0),
    "tile_bmin": (np.float32, 3),
    "tile_bmax": (np.float32, 3),
    "tile_walkable_height": (np.float32, 0),
    "tile_walkable_radius": (np.float32, 0),
    "tile_walkable_climb": (np.float32, 0),
    "tile_bv_quant": (np.float32, 0),
    "tile_off_mesh_base": (np.int32, 0),
    "tile_link_free": (np.int64, 0),
    "tile_next": (np.int32, 0),
}
#: (dx, dy) of the neighbouring tile on each side 0..7 (Detour's side order).
_SIDE_STEPS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
_FIELD_POOL = {name: pool for pool, names in _POOLS.items() for name in names}
for _p in _POOLS:
    _TILE_SPEC[f"tile_{_p}_base"] = (np.int64, 0)
    _TILE_SPEC[f"tile_{_p}_count"] = (np.int64, 0)


class NavMeshArrays(NamedTuple):
    """The navmesh's pools for kernels (see the module docstring for each field)."""

    tile_salt: np.ndarray
    tile_used: np.ndarray
    tile_x: np.ndarray
    tile_y: np.ndarray
    tile_layer: np.ndarray
    tile_user_id: np.ndarray
    tile_bmin: np.ndarray
    tile_bmax: np.ndarray
    tile_walkable_height: np.ndarray
    tile_walkable_radius: np.ndarray
    tile_walkable_climb: np.ndarray
    tile_bv_quant: np.ndarray
    tile_off_mesh_base: np.ndarray
    tile_link_free: np.ndarray
    tile_next: np.ndarray
    tile_vert_base: np.ndarray
    tile_vert_count: np.ndarray
    tile_poly_base: np.ndarray
    tile_poly_count: np.ndarray
    tile_link_base: np.ndarray
    tile_link_count: np.ndarray
    tile_dmesh_base: np.ndarray
    tile_dmesh_count: np.ndarray
    tile_dvert_base: np.ndarray
    tile_dvert_count: np.ndarray
    tile_dtri_base: np.ndarray
    tile_dtri_count: np.ndarray
    tile_bv_base: np.ndarray
    tile_bv_count: np.ndarray
    tile_off_base: np.ndarray
    tile_off_count: np.ndarray
    lut: np.ndarray
    verts: np.ndarray
    poly_verts: np.ndarray
    poly_neis: np.ndarray
    poly_flags: np.ndarray
    poly_area: np.ndarray
    poly_type: np.ndarray
    poly_vert_count: np.ndarray
    poly_first_link: np.ndarray
    poly_tile: np.ndarray
    link_ref: np.ndarray
    link_poly: np.ndarray
    link_next: np.ndarray
    link_edge: np.ndarray
    link_side: np.ndarray
    link_bmin: np.ndarray
    link_bmax: np.ndarray
    dmesh_vert_base: np.ndarray
    dmesh_tri_base: np.ndarray
    dmesh_vert_count: np.ndarray
    dmesh_tri_count: np.ndarray
    dverts: np.ndarray
    dtris: np.ndarray
    bv_bmin: np.ndarray
    bv_bmax: np.ndarray
    bv_i: np.ndarray
    off_pos: np.ndarray
    off_rad: np.ndarray
    off_poly: np.ndarray
    off_flags: np.ndarray
    off_side: np.ndarray
    off_user_id: np.ndarray


class NavMeshParams(NamedTuple):
    """``dtNavMeshParams``: origin [wu], tile size [wu], max tiles, max polys per tile."""

    orig: tuple[float, float, float]
    tile_width: float
    tile_height: float
    max_tiles: int
    max_polys: int


class _PoolCounts:
    """Per-pool counters (``used`` or ``dead``) backed by one row of ``NavMesh._cnt``,
    so that kernels update them in place; indexed by pool name like a dict."""

    __slots__ = ("row",)

    def __init__(self, row: np.ndarray) -> None:
        self.row = row

    def __getitem__(self, pool: str) -> int:
        return int(self.row[_POOL_INDEX[pool]])

    def __setitem__(self, pool: str, v: int) -> None:
        self.row[_POOL_INDEX[pool]] = v

    def __iter__(self):
        return iter(_POOLS)

    def items(self):
        return [(k, self[k]) for k in _POOLS]


_POOL_INDEX = {k: i for i, k in enumerate(_POOLS)}


def _next_pow2(v: int) -> int:
    v = int(v) & 0xFFFFFFFF
    v -= 1
    for s in (1, 2, 4, 8, 16):
        v |= v >> s
    return (v + 1) & 0xFFFFFFFF


def _ilog2(v: int) -> int:
    return max(int(v).bit_length() - 1, 0)


class PackedTiles(NamedTuple):
    """New tiles for :meth:`NavMesh._add_packed`, one array per field, the tiles' rows
    one after the other (layer 0, user id 0, no off-mesh connection, zeroed links,
    ``2 * polys`` BV nodes each): what ``create_navmesh_data``'s common case gives."""

    x: np.ndarray  #: (n,) int64
    y: np.ndarray  #: (n,) int64
    bmin: np.ndarray  #: (n, 3) float32
    bmax: np.ndarray  #: (n, 3) float32
    nverts: np.ndarray  #: (n,) int64 per tile
    polys: np.ndarray  #: (n,) int64 per tile
    links: np.ndarray  #: (n,) int64 per tile (link pool size)
    ndverts: np.ndarray  #: (n,) int64 per tile
    ndtris: np.ndarray  #: (n,) int64 per tile
    verts: np.ndarray
    poly_verts: np.ndarray
    poly_neis: np.ndarray
    poly_flags: np.ndarray
    poly_vert_count: np.ndarray
    poly_area: np.ndarray
    detail_vert_base: np.ndarray
    detail_vert_count: np.ndarray
    detail_tri_base: np.ndarray
    detail_tri_count: np.ndarray
    detail_verts: np.ndarray
    detail_tris: np.ndarray
    bv_bmin: np.ndarray
    bv_bmax: np.ndarray
    bv_i: np.ndarray
    walkable_height: float
    walkable_radius: float
    walkable_climb: float
    bv_quant_factor: float


def _tile_hash(x: int, y: int, mask: int) -> int:
    return ((0x8DA6B343 * x + 0xD8163841 * y) & 0xFFFFFFFF) & mask


class NavMesh:
    """A tiled navigation mesh (Detour's ``dtNavMesh``) over pooled arrays.

    Parameters
    ----------
    params : NavMeshParams
        Origin, tile size, ``max_tiles`` and ``max_polys`` (per tile).
    ref64 : bool
        Use Detour's 64-bit ref layout (salt/tile/poly bits 16/28/20).

    Raises
    ------
    ConfigError
        ``max_tiles``/``max_polys`` leave fewer than 10 salt bits (32-bit refs).
    """

    def __init__(self, params: NavMeshParams, *, ref64: bool = False) -> None:
        from ._validate import COORD_LIMIT

        raw = [float(v) for v in params.orig]
        if len(raw) != 3:
            raise ConfigError("orig", "origin must have 3 coordinates")
        if not all(abs(v) <= COORD_LIMIT for v in raw):
            raise ConfigError("orig", f"{raw} must be finite and within +-{COORD_LIMIT:g}")
        for name in ("tile_width", "tile_height"):
            v = float(getattr(params, name))
            if not (0.0 < v <= COORD_LIMIT and np.float32(v) > 0):
                raise ConfigError(name, f"{v} must be finite, > 0 and <= {COORD_LIMIT:g}")
        o = [float(np.float32(v)) for v in raw]
        orig = (o[0], o[1], o[2])
        max_tiles = int(params.max_tiles)
        max_polys = int(params.max_polys)
        if max_tiles < 1 or max_polys < 1:
            raise ConfigError("max_tiles", "max_tiles and max_polys must be >= 1")
        if max_polys > 1 << 30:
            raise ConfigError("max_polys", f"{max_polys} exceeds the limit {1 << 30}")
        if max_tiles > MAX_TILES:
            raise ConfigError("max_tiles", f"{max_tiles} exceeds navkit's limit {MAX_TILES}")
        self.params = NavMeshParams(
            orig,
            float(np.float32(params.tile_width)),
            float(np.float32(params.tile_height)),
            max_tiles,
            max_polys,
        )
        self.ref64 = bool(ref64)
        if ref64:
            self.salt_bits, self.tile_bits, self.poly_bits = 16, 28, 20
            if max_tiles > (1 << 28) or max_polys > (1 << 20):
                raise ConfigError("max_tiles", "too many tiles or polys for 64-bit refs")
        else:
            self.tile_bits = _ilog2(_next_pow2(max_tiles))
            self.poly_bits = _ilog2(_next_pow2(max_polys))
            if self.tile_bits + self.poly_bits > 31:
                raise ConfigError("max_tiles", "tile and poly bits exceed 31")
            self.salt_bits = min(31, 32 - self.tile_bits - self.poly_bits)
            if self.salt_bits < 10:
                raise ConfigError(
                    "max_tiles", f"only {self.salt_bits} salt bits left (Detour needs >= 10)"
                )
        lut_size = _next_pow2(max_tiles // 4) or 1
        self._lut_mask = lut_size - 1
        self._t: dict[str, np.ndarray] = {}
        for name, (dt, w) in _TILE_SPEC.items():
            self._t[name] = np.zeros((max_tiles, w) if w else max_tiles, dt)
        self._t["tile_salt"][:] = 1
        self._t["tile_next"][:] = -1
        self._t["tile_link_free"][:] = -1
        self._lut = np.full(lut_size, -1, np.int32)
        # Free slots, Detour's m_nextFree order (slot 0 first).
        self._free_slots: list[int] = list(range(max_tiles))
        self._p: dict[str, np.ndarray] = {}
        for name, (dt, w) in _POOL_SPEC.items():
            self._p[name] = np.zeros((16, w) if w else 16, dt)
        #: used (row 0) and dead (row 1) elements per pool (``_POOLS`` order)
        self._cnt = np.zeros((2, len(_POOLS)), np.int64)
        self._used = _PoolCounts(self._cnt[0])
        self._dead = _PoolCounts(self._cnt[1])
        self._desc: np.ndarray | None = None
        #: Extra bytes kept per slot for file round trips (e.g. MSET record padding).
        self._record_pad: dict[int, bytes] = {}
        #: Runtime off-mesh connections: poly ref -> (start slot, end slot); removed ones.
        self._runtime_cons: dict[int, tuple[int, int]] = {}
        self._dead_cons: set[int] = set()
        self._arrays: NavMeshArrays | None = None
        #: The bake's BuildReport when this navmesh came from navkit.bake().
        self.build_report: Any = None

    @classmethod
    def from_tile(cls, data: TileData) -> NavMesh:
        """A one-tile navmesh, as ``dtNavMesh::init(data)``: params from the tile header
        (origin = bmin, tile size = bmax - bmin in x and z, 1 tile, max_polys = poly count)."""
        params = NavMeshParams(
            (float(data.bmin[0]), float(data.bmin[1]), float(data.bmin[2])),
            float(np.float32(data.bmax[0] - data.bmin[0])),
            float(np.float32(data.bmax[2] - data.bmin[2])),
            1,
            max(data.poly_count, 1),
        )
        nm = cls(params)
        nm.add_tile(data)
        return nm

    # -- refs ------------------------------------------------------------------------------
    def encode_ref(self, salt: int, tile: int, poly: int) -> int:
        """Poly ref from (salt, tile slot, poly index)."""
        salt = _check.integer(salt, "salt", 0, (1 << self.salt_bits) - 1)
        tile = _check.integer(tile, "tile", 0, (1 << self.tile_bits) - 1)
        poly = _check.integer(poly, "poly", 0, (1 << self.poly_bits) - 1)
        return (salt << (self.poly_bits + self.tile_bits)) | (tile << self.poly_bits) | poly

    def decode_ref(self, ref: int) -> tuple[int, int, int]:
        """(salt, tile slot, poly index) of a poly ref."""
        ref = _check.ref(ref)
        salt = (ref >> (self.poly_bits + self.tile_bits)) & ((1 << self.salt_bits) - 1)
        tile = (ref >> self.poly_bits) & ((1 << self.tile_bits) - 1)
        poly = ref & ((1 << self.poly_bits) - 1)
        return salt, tile, poly

    def _tile_ref(self, slot: int) -> int:
        return self.encode_ref(int(self._t["tile_salt"][slot]), slot, 0)

    # -- arrays ----------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        """Copy/pickle state without the kernel descriptor (raw addresses of this
        object's arrays), the cached views and the counter views: a copy rebuilds them
        over its own arrays (:meth:`__setstate__`)."""
        state = self.__dict__.copy()
        for k in ("_desc", "_arrays", "_used", "_dead"):
            state.pop(k, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._desc = None
        self._arrays = None
        self._used = _PoolCounts(self._cnt[0])
        self._dead = _PoolCounts(self._cnt[1])

    def arrays(self) -> NavMeshArrays:
        """The current pools (views trimmed to the used length) for kernels."""
        if self._arrays is None:
            fields = {}
            for name in NavMeshArrays._fields:
                if name == "lut":
                    fields[name] = self._lut
                elif name in self._t:
                    fields[name] = self._t[name]
                else:
                    fields[name] = self._p[name][: self._used[_FIELD_POOL[name]]]
            self._arrays = NavMeshArrays(**fields)
        return self._arrays

    def _reserve(self, pool: str, n: int) -> int:
        """Make room for ``n`` more elements in a pool; return the first index."""
        start = self._used[pool]
        need = start + n
        for name in _POOLS[pool]:
            arr = self._p[name]
            if need > arr.shape[0]:
                cap = max(16, arr.shape[0])
                while cap < need:
                    cap *= 2
                new = np.zeros((cap, *arr.shape[1:]), arr.dtype)
                if start:
                    new[:start] = arr[:start]
                self._p[name] = new
                self._desc = None
        self._used[pool] = need
        self._arrays = None
        return start

    def _kernel_desc(self) -> np.ndarray:
        """Descriptor of the tile table, lookup table and pools at full capacity for
        :mod:`navkit.detour._swap` kernels: (3 * 63,) int64 (address, rows, columns)
        per :class:`NavMeshArrays` field; it keeps the arrays alive. Rebuilt when a
        pool is reallocated."""
        if self._desc is None:
            from ._view import Descriptor

            arrays = []
            for name in NavMeshArrays._fields:
                if name == "lut":
                    arrays.append(self._lut)
                elif name in self._t:
                    arrays.append(self._t[name])
                else:
                    arrays.append(self._p[name])
            d = np.zeros(3 * len(arrays), np.int64).view(Descriptor)
            d.owner = arrays
            for i, arr in enumerate(arrays):
                d[3 * i] = arr.ctypes.data
                d[3 * i + 1] = arr.shape[0]
                d[3 * i + 2] = int(arr.shape[-1]) if arr.ndim == 2 else 1
            self._desc = d
        return self._desc

    def _grow_pools(self, need: np.ndarray, ahead: float = 0.0) -> None:
        """Make room for ``need`` (8,) more elements per pool (``_POOLS`` order),
        capacity doubled as needed; the used counts do not change. A pool that needs
        room gets at least ``ahead`` times its used count more (a build of many tiles:
        room for the tiles left at the rate so far, so that it reallocates, and its
        callers pack their descriptors again, a few times instead of at every
        doubling of every pool)."""
        for k, pool in enumerate(_POOLS):
            n = int(need[k])
            if n:
                n = max(n, int(self._used[pool] * ahead))
                start = self._reserve(pool, n)
                self._used[pool] = start

    def _swap_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
        """(descriptor, counters, bits, first free slot) for
        :func:`navkit.detour._swap.swap_poly_mesh_tile`; None when the navmesh has
        runtime off-mesh connections (their links reach beyond the neighbours: the
        Python path handles them)."""
        if self._runtime_cons or self._dead_cons:
            return None
        bits = self.__dict__.get("_ibits")
        if bits is None:
            bits = np.array(
                [self.salt_bits, self.tile_bits, self.poly_bits, self._lut_mask, int(self.ref64)],
                np.int64,
            )
            self._ibits = bits
        return (
            self._kernel_desc(),
            self._cnt,
            bits,
            self._free_slots[0] if self._free_slots else -1,
        )

    def _swap_done(self, out: np.ndarray) -> tuple[int, int]:
        """Bookkeeping after a swap kernel (``out`` as it filled it): free list and
        caches. Returns (old tile ref or 0, its poly count)."""
        _, action, old, salt, npolys, _, compact = out[:7].tolist()
        if compact:  # the swap kernels leave the compaction to here (compiled when due)
            self._compact()
        old_ref = 0
        if action & 1:
            old_ref = (salt << (self.poly_bits + self.tile_bits)) | (old << self.poly_bits)
            if self._record_pad:
                self._record_pad.pop(old, None)
            if not action & 2:
                self._free_slots.insert(0, old)
        elif action & 2:
            self._free_slots.pop(0)
        if action:
            self._arrays = None
        return old_ref, npolys

    # -- tile storage (local <-> global) ---------------------------------------------------
    def _store(self, slot: int, td: TileData) -> None:
        """Append a tile's arrays to the pools and fill its tile-table row."""
        t, p = self._t, self._p
        counts = {
            "vert": td.vert_count,
            "poly": td.poly_count,
            "link": td.max_link_count,
            "dmesh": td.detail_mesh_count,
            "dvert": int(td.detail_verts.shape[0]),
            "dtri": int(td.detail_tris.shape[0]),
            "bv": td.bv_node_count,
            "off": td.off_mesh_con_count,
        }
        base = {k: self._reserve(k, n) for k, n in counts.items()}
        for k, n in counts.items():
            t[f"tile_{k}_base"][slot] = base[k]
            t[f"tile_{k}_count"][slot] = n
        vb, pb, lb = base["vert"], base["poly"], base["link"]
        nv, npoly, nl = counts["vert"], counts["poly"], counts["link"]
        p["verts"][vb : vb + nv] = td.verts
        p["poly_verts"][pb : pb + npoly] = td.poly_verts.astype(np.int64) + vb
        p["poly_neis"][pb : pb + npoly] = td.poly_neis
        p["poly_flags"][pb : pb + npoly] = td.poly_flags
        p["poly_area"][pb : pb + npoly] = td.poly_area
        p["poly_type"][pb : pb + npoly] = td.poly_type
        p["poly_vert_count"][pb : pb + npoly] = td.poly_vert_count
        fl = td.poly_first_link.astype(np.int64)
        p["poly_first_link"][pb : pb + npoly] = np.where(fl == 0xFFFFFFFF, -1, fl + lb)
        p["poly_tile"][pb : pb + npoly] = slot
        p["link_ref"][lb : lb + nl] = td.link_ref
        p["link_poly"][lb : lb + nl] = -1
        nx = td.link_next.astype(np.int64)
        p["link_next"][lb : lb + nl] = np.where(nx == 0xFFFFFFFF, -1, nx + lb)
        for f in ("edge", "side", "bmin", "bmax"):
            p[f"link_{f}"][lb : lb + nl] = getattr(td, f"link_{f}")
        db, nd = base["dmesh"], counts["dmesh"]
        p["dmesh_vert_base"][db : db + nd] = td.detail_vert_base.astype(np.int64) + base["dvert"]
        p["dmesh_tri_base"][db : db + nd] = td.detail_tri_base.astype(np.int64) + base["dtri"]
        p["dmesh_vert_count"][db : db + nd] = td.detail_vert_count
        p["dmesh_tri_count"][db : db + nd] = td.detail_tri_count
        if counts["dvert"]:
            p["dverts"][base["dvert"] : base["dvert"] + counts["dvert"]] = td.detail_verts
        p["dtris"][base["dtri"] : base["dtri"] + counts["dtri"]] = td.detail_tris
        bb, nb = base["bv"], counts["bv"]
        if nb:  # (empty ranges skipped: tile-cache tiles have no BV tree, no off-mesh link)
            p["bv_bmin"][bb : bb + nb] = td.bv_bmin
            p["bv_bmax"][bb : bb + nb] = td.bv_bmax
            p["bv_i"][bb : bb + nb] = td.bv_i
        ob, no = base["off"], counts["off"]
        if no:
            p["off_pos"][ob : ob + no] = td.off_pos
            p["off_rad"][ob : ob + no] = td.off_rad
            p["off_poly"][ob : ob + no] = td.off_poly.astype(np.int64) + pb
            p["off_flags"][ob : ob + no] = td.off_flags
            p["off_side"][ob : ob + no] = td.off_side
            p["off_user_id"][ob : ob + no] = td.off_user_id
        t["tile_used"][slot] = 1
        t["tile_x"][slot] = td.x
        t["tile_y"][slot] = td.y
        t["tile_layer"][slot] = td.layer
        t["tile_user_id"][slot] = td.user_id
        t["tile_bmin"][slot] = td.bmin
        t["tile_bmax"][slot] = td.bmax
        t["tile_walkable_height"][slot] = td.walkable_height
        t["tile_walkable_radius"][slot] = td.walkable_radius
        t["tile_walkable_climb"][slot] = td.walkable_climb
        t["tile_bv_quant"][slot] = td.bv_quant_factor
        t["tile_off_mesh_base"][slot] = td.off_mesh_base
        self._arrays = None

    def _store_many(self, slots: Sequence[int], datas: Sequence[TileData]) -> None:
        """:meth:`_store` of ``datas[i]`` in ``slots[i]``, i = 0, 1, ...: the same pools
        and tile-table rows, with one copy per pool field instead of one per tile."""
        t, p = self._t, self._p
        sl = np.asarray(slots, np.int64)
        cnt = {
            "vert": [td.vert_count for td in datas],
            "poly": [td.poly_count for td in datas],
            "link": [td.max_link_count for td in datas],
            "dmesh": [td.detail_mesh_count for td in datas],
            "dvert": [int(td.detail_verts.shape[0]) for td in datas],
            "dtri": [int(td.detail_tris.shape[0]) for td in datas],
            "bv": [td.bv_node_count for td in datas],
            "off": [td.off_mesh_con_count for td in datas],
        }
        n: dict[str, np.ndarray] = {k: np.asarray(v, np.int64) for k, v in cnt.items()}
        base: dict[str, np.ndarray] = {}
        lo: dict[str, int] = {}
        hi: dict[str, int] = {}
        for k, c in n.items():
            lo[k] = self._reserve(k, int(c.sum()))
            hi[k] = lo[k] + int(c.sum())
            base[k] = lo[k] + np.cumsum(c) - c
            t[f"tile_{k}_base"][sl] = base[k]
            t[f"tile_{k}_count"][sl] = c

        def cat(field: str) -> np.ndarray:
            return np.concatenate([getattr(td, field) for td in datas])

        def rep(k: str, per: str) -> np.ndarray:  # tile k-base of every element of pool per
            return np.repeat(base[k], n[per])

        def put(name: str, k: str, values: np.ndarray | int) -> None:
            p[name][lo[k] : hi[k]] = values

        put("verts", "vert", cat("verts"))
        put("poly_verts", "poly", cat("poly_verts").astype(np.int64) + rep("vert", "poly")[:, None])
        for f, name in (
            ("poly_neis", "poly_neis"),
            ("poly_flags", "poly_flags"),
            ("poly_area", "poly_area"),
            ("poly_type", "poly_type"),
            ("poly_vert_count", "poly_vert_count"),
        ):
            put(name, "poly", cat(f))
        fl = cat("poly_first_link").astype(np.int64)
        put("poly_first_link", "poly", np.where(fl == 0xFFFFFFFF, -1, fl + rep("link", "poly")))
        put("poly_tile", "poly", np.repeat(sl, n["poly"]))
        put("link_ref", "link", cat("link_ref"))
        put("link_poly", "link", -1)
        nx = cat("link_next").astype(np.int64)
        put("link_next", "link", np.where(nx == 0xFFFFFFFF, -1, nx + rep("link", "link")))
        for f in ("edge", "side", "bmin", "bmax"):
            put(f"link_{f}", "link", cat(f"link_{f}"))
        put(
            "dmesh_vert_base",
            "dmesh",
            cat("detail_vert_base").astype(np.int64) + rep("dvert", "dmesh"),
        )
        put(
            "dmesh_tri_base",
            "dmesh",
            cat("detail_tri_base").astype(np.int64) + rep("dtri", "dmesh"),
        )
        put("dmesh_vert_count", "dmesh", cat("detail_vert_count"))
        put("dmesh_tri_count", "dmesh", cat("detail_tri_count"))
        if hi["dvert"] > lo["dvert"]:
            put("dverts", "dvert", cat("detail_verts"))
        put("dtris", "dtri", cat("detail_tris"))
        if hi["bv"] > lo["bv"]:
            put("bv_bmin", "bv", cat("bv_bmin"))
            put("bv_bmax", "bv", cat("bv_bmax"))
            put("bv_i", "bv", cat("bv_i"))
        if hi["off"] > lo["off"]:
            put("off_pos", "off", cat("off_pos"))
            put("off_rad", "off", cat("off_rad"))
            put("off_poly", "off", cat("off_poly").astype(np.int64) + rep("poly", "off"))
            put("off_flags", "off", cat("off_flags"))
            put("off_side", "off", cat("off_side"))
            put("off_user_id", "off", cat("off_user_id"))
        t["tile_used"][sl] = 1
        for name, f in (
            ("tile_x", "x"),
            ("tile_y", "y"),
            ("tile_layer", "layer"),
            ("tile_user_id", "user_id"),
            ("tile_walkable_height", "walkable_height"),
            ("tile_walkable_radius", "walkable_radius"),
            ("tile_walkable_climb", "walkable_climb"),
            ("tile_bv_quant", "bv_quant_factor"),
            ("tile_off_mesh_base", "off_mesh_base"),
        ):
            t[name][sl] = [getattr(td, f) for td in datas]
        t["tile_bmin"][sl] = [td.bmin for td in datas]
        t["tile_bmax"][sl] = [td.bmax for td in datas]
        self._arrays = None

    def _store_packed(self, slots: Sequence[int], tiles: PackedTiles) -> None:
        """:meth:`_store_many` of tiles given one array per field: the same pools and
        tile-table rows."""
        t, p = self._t, self._p
        sl = np.asarray(slots, np.int64)
        npoly = tiles.polys
        n: dict[str, np.ndarray] = {
            "vert": tiles.nverts,
            "poly": npoly,
            "link": tiles.links,
            "dmesh": npoly,
            "dvert": tiles.ndverts,
            "dtri": tiles.ndtris,
            "bv": 2 * npoly,
            "off": np.zeros_like(npoly),
        }
        base: dict[str, np.ndarray] = {}
        lo: dict[str, int] = {}
        hi: dict[str, int] = {}
        for k, c in n.items():
            total = int(c.sum())
            lo[k] = self._reserve(k, total)
            hi[k] = lo[k] + total
            base[k] = lo[k] + np.cumsum(c) - c
            t[f"tile_{k}_base"][sl] = base[k]
            t[f"tile_{k}_count"][sl] = c

        def rep(k: str, per: str) -> np.ndarray:  # tile k-base of every element of pool per
            return np.repeat(base[k], n[per])

        def put(name: str, k: str, values: np.ndarray | int) -> None:
            p[name][lo[k] : hi[k]] = values

        put("verts", "vert", tiles.verts)
        put("poly_verts", "poly", tiles.poly_verts.astype(np.int64) + rep("vert", "poly")[:, None])
        put("poly_neis", "poly", tiles.poly_neis)
        put("poly_flags", "poly", tiles.poly_flags)
        put("poly_area", "poly", tiles.poly_area)
        put("poly_type", "poly", 0)
        put("poly_vert_count", "poly", tiles.poly_vert_count)
        # a new tile's first links are 0 (tile-local), as create_navmesh_data leaves them
        link_base = rep("link", "poly")
        put("poly_first_link", "poly", link_base)
        put("poly_tile", "poly", np.repeat(sl, npoly))
        put("link_ref", "link", 0)
        put("link_poly", "link", -1)
        put("link_next", "link", rep("link", "link"))
        for f in ("edge", "side", "bmin", "bmax"):
            put(f"link_{f}", "link", 0)
        put(
            "dmesh_vert_base",
            "dmesh",
            tiles.detail_vert_base.astype(np.int64) + rep("dvert", "dmesh"),
        )
        put(
            "dmesh_tri_base", "dmesh", tiles.detail_tri_base.astype(np.int64) + rep("dtri", "dmesh")
        )
        put("dmesh_vert_count", "dmesh", tiles.detail_vert_count)
        put("dmesh_tri_count", "dmesh", tiles.detail_tri_count)
        if hi["dvert"] > lo["dvert"]:
            put("dverts", "dvert", tiles.detail_verts)
        put("dtris", "dtri", tiles.detail_tris)
        if hi["bv"] > lo["bv"]:
            put("bv_bmin", "bv", tiles.bv_bmin)
            put("bv_bmax", "bv", tiles.bv_bmax)
            put("bv_i", "bv", tiles.bv_i)
        t["tile_used"][sl] = 1
        t["tile_x"][sl] = tiles.x
        t["tile_y"][sl] = tiles.y
        t["tile_layer"][sl] = 0
        t["tile_user_id"][sl] = 0
        t["tile_walkable_height"][sl] = tiles.walkable_height
        t["tile_walkable_radius"][sl] = tiles.walkable_radius
        t["tile_walkable_climb"][sl] = tiles.walkable_climb
        t["tile_bv_quant"][sl] = tiles.bv_quant_factor
        t["tile_off_mesh_base"][sl] = npoly
        t["tile_bmin"][sl] = tiles.bmin
        t["tile_bmax"][sl] = tiles.bmax
        self._arrays = None

    def tile_data(self, slot: int) -> TileData:
        """The tile in ``slot`` as a :class:`TileData` (tile-local indices, current link state)."""
        t, p = self._t, self._p
        if not (0 <= slot < self.params.max_tiles) or not t["tile_used"][slot]:
            raise InputError(f"tile slot {slot} holds no tile")

        def rng(k: str) -> slice:
            b = int(t[f"tile_{k}_base"][slot])
            return slice(b, b + int(t[f"tile_{k}_count"][slot]))

        vb, pb, lb = (
            int(t["tile_vert_base"][slot]),
            int(t["tile_poly_base"][slot]),
            int(t["tile_link_base"][slot]),
        )
        pr, lr, dr, orr = rng("poly"), rng("link"), rng("dmesh"), rng("off")
        fl = p["poly_first_link"][pr]
        nx = p["link_next"][lr]
        return TileData(
            x=int(t["tile_x"][slot]),
            y=int(t["tile_y"][slot]),
            layer=int(t["tile_layer"][slot]),
            user_id=int(t["tile_user_id"][slot]),
            walkable_height=float(t["tile_walkable_height"][slot]),
            walkable_radius=float(t["tile_walkable_radius"][slot]),
            walkable_climb=float(t["tile_walkable_climb"][slot]),
            bmin=t["tile_bmin"][slot].copy(),
            bmax=t["tile_bmax"][slot].copy(),
            bv_quant_factor=float(t["tile_bv_quant"][slot]),
            off_mesh_base=int(t["tile_off_mesh_base"][slot]),
            verts=p["verts"][rng("vert")].copy(),
            poly_first_link=np.where(fl < 0, 0xFFFFFFFF, fl - lb).astype(np.uint32),
            poly_verts=(p["poly_verts"][pr] - vb).astype(np.uint16),
            poly_neis=p["poly_neis"][pr].copy(),
            poly_flags=p["poly_flags"][pr].copy(),
            poly_vert_count=p["poly_vert_count"][pr].copy(),
            poly_area=p["poly_area"][pr].copy(),
            poly_type=p["poly_type"][pr].copy(),
            link_ref=p["link_ref"][lr].copy(),
            link_next=np.where(nx < 0, 0xFFFFFFFF, nx - lb).astype(np.uint32),
            link_edge=p["link_edge"][lr].copy(),
            link_side=p["link_side"][lr].copy(),
            link_bmin=p["link_bmin"][lr].copy(),
            link_bmax=p["link_bmax"][lr].copy(),
            detail_vert_base=(p["dmesh_vert_base"][dr] - int(t["tile_dvert_base"][slot])).astype(
                np.uint32
            ),
            detail_tri_base=(p["dmesh_tri_base"][dr] - int(t["tile_dtri_base"][slot])).astype(
                np.uint32
            ),
            detail_vert_count=p["dmesh_vert_count"][dr].copy(),
            detail_tri_count=p["dmesh_tri_count"][dr].copy(),
            detail_verts=p["dverts"][rng("dvert")].copy(),
            detail_tris=p["dtris"][rng("dtri")].copy(),
            bv_bmin=p["bv_bmin"][rng("bv")].copy(),
            bv_bmax=p["bv_bmax"][rng("bv")].copy(),
            bv_i=p["bv_i"][rng("bv")].copy(),
            off_pos=p["off_pos"][orr].copy(),
            off_rad=p["off_rad"][orr].copy(),
            off_poly=(p["off_poly"][orr] - pb).astype(np.uint16),
            off_flags=p["off_flags"][orr].copy(),
            off_side=p["off_side"][orr].copy(),
            off_user_id=p["off_user_id"][orr].copy(),
        )

    def _kill_polys(self, slot: int) -> None:
        """Mark the slot's current poly and link ranges as owned by no tile."""
        b, c = int(self._t["tile_poly_base"][slot]), int(self._t["tile_poly_count"][slot])
        self._p["poly_tile"][b : b + c] = -1
        self._p["poly_first_link"][b : b + c] = -1

    def _release(self, slot: int) -> None:
        """Mark a slot's pool ranges dead; compact when half of a pool is dead."""
        t = self._t
        self._kill_polys(slot)
        for k in _POOLS:
            self._dead[k] += int(t[f"tile_{k}_count"][slot])
            t[f"tile_{k}_count"][slot] = 0
        t["tile_used"][slot] = 0
        t["tile_link_free"][slot] = -1
        if any(self._dead[k] * 2 > self._used[k] and self._dead[k] > 0 for k in _POOLS):
            self._compact()

    def _compact(self) -> None:
        """Drop the dead ranges of every pool (in place, live ranges keep their pool
        order); refs, links and exports do not change."""
        from ._swap import compact_pools

        compact_pools(
            self._kernel_desc(), self._cnt, self.salt_bits, self.tile_bits, self.poly_bits
        )
        self._arrays = None

    # -- tile lookup -----------------------------------------------------------------------
    def _chain(self, x: int, y: int):
        s = int(self._lut[_tile_hash(x, y, self._lut_mask)])
        while s >= 0:
            yield s
            s = int(self._t["tile_next"][s])

    def _slots_at(self, x: int, y: int) -> list[int]:
        x = _check.integer(x, "x", -(1 << 31), (1 << 31) - 1)
        y = _check.integer(y, "y", -(1 << 31), (1 << 31) - 1)
        return self._slots_raw(x, y)

    def _slots_raw(self, x: int, y: int) -> list[int]:
        """:meth:`_slots_at` for checked Python ints (internal callers)."""
        t = self._t
        tx, ty, nxt = t["tile_x"], t["tile_y"], t["tile_next"]
        out = []
        s = int(self._lut[_tile_hash(x, y, self._lut_mask)])
        while s >= 0:
            if tx[s] == x and ty[s] == y:
                out.append(s)
            s = int(nxt[s])
        return out

    def _slot_at(self, x: int, y: int, layer: int) -> int:
        for s in self._slots_at(x, y):
            if self._t["tile_layer"][s] == layer:
                return s
        return -1

    def get_tile_at(self, x: int, y: int, layer: int) -> TileData | None:
        """The tile at (x, y, layer), or None."""
        s = self._slot_at(x, y, layer)
        return None if s < 0 else self.tile_data(s)

    def get_tile_ref_at(self, x: int, y: int, layer: int) -> int:
        """Tile ref at (x, y, layer), 0 when there is none."""
        s = self._slot_at(x, y, layer)
        return 0 if s < 0 else self._tile_ref(s)

    def get_tiles_at(self, x: int, y: int) -> list[int]:
        """Tile refs of every layer at (x, y), in Detour's lookup order."""
        return [self._tile_ref(s) for s in self._slots_at(x, y)]

    def _neighbour_slots(self, x: int, y: int, side: int) -> list[int]:
        dx = (1, 1, 0, -1, -1, -1, 0, 1)[side]
        dy = (0, 1, 1, 1, 0, -1, -1, -1)[side]
        return self._slots_raw(int(x) + dx, int(y) + dy)

    def calc_tile_loc(self, pos) -> tuple[int, int]:
        """Tile (x, y) holding a world position (``calcTileLoc``)."""
        pos = _check.point(pos, "pos")
        o = self.params.orig
        tx = int(
            np.floor((np.float32(pos[0]) - np.float32(o[0])) / np.float32(self.params.tile_width))
        )
        ty = int(
            np.floor((np.float32(pos[2]) - np.float32(o[2])) / np.float32(self.params.tile_height))
        )
        return tx, ty

    def poly_refs(self) -> list[int]:
        """Refs of every polygon of every live tile (slot order, then poly order)."""
        out: list[int] = []
        for s in self.tile_slots():
            base = self._tile_ref(s)
            out.extend(base | i for i in range(int(self._t["tile_poly_count"][s])))
        return [r for r in out if r not in self._dead_cons]

    def tile_slots(self) -> list[int]:
        """Slots holding a tile, in slot order."""
        return [int(s) for s in np.flatnonzero(self._t["tile_used"])]

    def tile_ref(self, slot: int) -> int:
        """Ref of the tile in ``slot`` (poly index 0)."""
        slot = _check.integer(slot, "slot", -(1 << 63), (1 << 63) - 1)
        if not (0 <= slot < self.params.max_tiles) or not self._t["tile_used"][slot]:
            raise InputError(f"tile slot {slot} holds no tile")
        return self._tile_ref(slot)

    # -- add / remove ----------------------------------------------------------------------
    def add_tile(self, data: TileData, tile_ref: int | None = None) -> int:
        """Add a tile and link it to its neighbours (``dtNavMesh::addTile``).

        Parameters
        ----------
        data : TileData
        tile_ref : int, optional
            Put the tile back in this slot with this salt (as after ``remove_tile``).

        Returns
        -------
        int
            The tile's ref.

        Raises
        ------
        InputError
            Too many polygons for the ref layout, location occupied, no free slot,
            or ``tile_ref`` naming a slot in use or out of range.
        """
        return self._add_tile(data, tile_ref, check=True)

    def _add_tile(self, data: TileData, tile_ref: int | None, check: bool) -> int:
        """:meth:`add_tile`; ``check=False`` skips the array checks of ``data`` (for
        tiles navkit's own ``create_navmesh_data`` just made)."""
        if not self.ref64 and self.poly_bits < _ilog2(_next_pow2(data.poly_count)):
            raise InputError(f"tile has {data.poly_count} polys, more than max_polys allows")
        if self._slot_at(data.x, data.y, data.layer) >= 0:
            raise InputError(f"a tile already occupies ({data.x}, {data.y}, layer {data.layer})")
        if check:
            _check_tile(data)
        if not tile_ref:
            if not self._free_slots:
                raise InputError("no free tile slot (max_tiles reached)")
            slot = self._free_slots.pop(0)
        else:
            salt, slot, _ = self.decode_ref(tile_ref)
            if slot >= self.params.max_tiles or slot not in self._free_slots:
                raise InputError(f"tile ref {tile_ref:#x}: slot {slot} is not free")
            if salt == 0:
                raise InputError(f"tile ref {tile_ref:#x}: salt 0")
            self._free_slots.remove(slot)
            self._t["tile_salt"][slot] = salt
        h = _tile_hash(data.x, data.y, self._lut_mask)
        self._t["tile_next"][slot] = self._lut[h]
        self._lut[h] = slot
        self._store(slot, data)
        same = [s for s in self._slots_raw(int(data.x), int(data.y)) if s != slot]
        nei, sides = [], []
        for side in range(8):
            for s in self._neighbour_slots(data.x, data.y, side):
                nei.append(s)
                sides.append(side)
        from ._pool_links import connect_tiles  # (one entry kernel for one or many tiles)

        connect_tiles(
            self._kernel_desc(),
            np.array([slot], np.int64),
            np.array([0, len(same)], np.int64),
            np.array(same, np.int64),
            np.array([0, len(nei)], np.int64),
            np.array(nei, np.int64),
            np.array(sides, np.int64),
            self.tile_bits,
            self.poly_bits,
        )
        return self._tile_ref(slot)

    def _add_tiles(self, datas: Sequence[TileData]) -> list[int]:
        """``_add_tile(d, None, check=False)`` for each of ``datas`` in order (tiles navkit
        just built), with one link kernel call: the same slots, refs and links as adding
        them one by one. Nothing is added when one of them cannot be.

        Raises
        ------
        InputError
            A tile with too many polygons, a location occupied (or twice in ``datas``),
            fewer free slots than tiles.
        """
        if not datas:
            return []
        keys = [(int(d.x), int(d.y), int(d.layer)) for d in datas]
        slots = self._take_slots(keys, [d.poly_count for d in datas])
        self._store_many(slots, datas)
        self._link_new(slots, keys)
        return [self._tile_ref(s) for s in slots]

    def _add_packed(self, tiles: PackedTiles) -> None:
        """:meth:`_add_tiles` of tiles at distinct ``(x, y)`` (layer 0) into a navmesh
        that holds none yet, given one array per field (:class:`PackedTiles`, the bake's
        tile kernel output): the same slots, pools and links, found with array
        operations instead of tile-by-tile lookups.

        Raises
        ------
        InputError
            A tile with too many polygons, fewer free slots than tiles.
        """
        n = int(tiles.x.shape[0])
        if n == 0:
            return
        if self._t["tile_used"].any():
            raise InputError("_add_packed: the navmesh already holds tiles")  # pragma: no cover
        if n > len(self._free_slots):
            raise InputError("no free tile slot (max_tiles reached)")
        if not self.ref64:
            big = int(tiles.polys.max())
            if self.poly_bits < _ilog2(_next_pow2(big)):
                raise InputError(f"tile has {big} polys, more than max_polys allows")
        xs, ys = tiles.x.tolist(), tiles.y.tolist()
        slots = self._free_slots[:n]
        del self._free_slots[:n]
        nxt, lut, mask = self._t["tile_next"], self._lut, self._lut_mask
        for slot, x, y in zip(slots, xs, ys, strict=True):
            h = _tile_hash(x, y, mask)
            nxt[slot] = lut[h]
            lut[h] = slot
        self._store_packed(slots, tiles)
        # tile i links to its neighbours added before it (one tile per (x, y), so no
        # tile shares its location), side by side in _SIDE_STEPS order
        x = tiles.x.astype(np.int64)
        y = tiles.y.astype(np.int64)
        x0, y0 = int(x.min()) - 1, int(y.min()) - 1
        w, h = int(x.max()) - x0 + 2, int(y.max()) - y0 + 2
        order = np.full((h, w), n, np.int64)  # position -> index in tiles (n: none)
        order[y - y0, x - x0] = np.arange(n)
        steps = np.asarray(_SIDE_STEPS, np.int64)
        k = order[(y - y0)[:, None] + steps[:, 1], (x - x0)[:, None] + steps[:, 0]]  # (n, 8)
        keep = k < np.arange(n)[:, None]
        sl = np.asarray(slots, np.int64)
        nei_start = np.zeros(n + 1, np.int64)
        np.cumsum(keep.sum(axis=1), out=nei_start[1:])
        # (no tile of this navmesh has off-mesh connections: connect_tile's off-mesh
        # steps would link nothing)
        from ._pool_links import connect_new_tiles

        connect_new_tiles(
            self._kernel_desc(),
            sl,
            nei_start,
            sl[k[keep]],
            np.nonzero(keep)[1].astype(np.int64),
            self.tile_bits,
            self.poly_bits,
        )

    def _take_slots(self, keys: list[tuple[int, int, int]], poly_counts: list[int]) -> list[int]:
        """Check and take the slots of new tiles at ``keys`` (in order); their lookup-table
        entries are linked, nothing else is stored."""
        if len(keys) > len(self._free_slots):
            raise InputError("no free tile slot (max_tiles reached)")
        seen: set[tuple[int, int, int]] = set()
        for key, npoly in zip(keys, poly_counts, strict=True):
            if not self.ref64 and self.poly_bits < _ilog2(_next_pow2(npoly)):
                raise InputError(f"tile has {npoly} polys, more than max_polys allows")
            if key in seen or self._slot_at(*key) >= 0:
                raise InputError(f"a tile already occupies ({key[0]}, {key[1]}, layer {key[2]})")
            seen.add(key)
        slots: list[int] = []
        for x, y, _layer in keys:
            slot = self._free_slots.pop(0)
            h = _tile_hash(x, y, self._lut_mask)
            self._t["tile_next"][slot] = self._lut[h]
            self._lut[h] = slot
            slots.append(slot)
        return slots

    def _link_new(self, slots: list[int], keys: list[tuple[int, int, int]]) -> None:
        """Build the links of the tiles just stored in ``slots`` (added in that order),
        with one link kernel call."""
        # what _add_tile would see: the tiles present before tile i (lookup order kept)
        order = {s: i for i, s in enumerate(slots)}
        at: dict[tuple[int, int], list[tuple[int, int]]] = {}  # (x, y) -> [(slot, order)]

        def present(x: int, y: int) -> list[tuple[int, int]]:
            if (x, y) not in at:
                at[(x, y)] = [(s, order.get(s, -1)) for s in self._slots_raw(x, y)]
            return at[(x, y)]

        same: list[int] = []
        nei: list[int] = []
        sides: list[int] = []
        same_start, nei_start = [0], [0]
        for i, (x, y, _layer) in enumerate(keys):
            same.extend(s for s, k in present(x, y) if k < i)
            for side, (dx, dy) in enumerate(_SIDE_STEPS):
                for s, k in present(x + dx, y + dy):
                    if k < i:
                        nei.append(s)
                        sides.append(side)
            same_start.append(len(same))
            nei_start.append(len(nei))
        from ._pool_links import connect_tiles

        connect_tiles(
            self._kernel_desc(),
            np.array(slots, np.int64),
            np.array(same_start, np.int64),
            np.array(same, np.int64),
            np.array(nei_start, np.int64),
            np.array(nei, np.int64),
            np.array(sides, np.int64),
            self.tile_bits,
            self.poly_bits,
        )

    def _replace_tile(self, old_ref: int, data: TileData) -> int:
        """``remove_tile(old_ref)`` then ``add_tile(data)`` (no array checks of ``data``)
        with one link kernel call; the same refs, links and free lists as the two calls.
        The tile cache's swap: ``data`` is navkit's own ``create_navmesh_data`` output."""
        if self._runtime_cons or self._dead_cons:
            self._remove_tile(old_ref, keep_data=False)
            return self._add_tile(data, None, check=False)
        if not self.ref64 and self.poly_bits < _ilog2(_next_pow2(data.poly_count)):
            raise InputError(f"tile has {data.poly_count} polys, more than max_polys allows")
        old = self._slot_of_tile_ref(old_ref)
        t = self._t
        x, y, layer = int(t["tile_x"][old]), int(t["tile_y"][old]), int(t["tile_layer"][old])
        if (int(data.x), int(data.y), int(data.layer)) != (x, y, layer):
            raise InputError("_replace_tile: the new tile must take the old tile's location")
        h = _tile_hash(x, y, self._lut_mask)
        prev, cur = -1, int(self._lut[h])
        while cur >= 0:
            if cur == old:
                if prev < 0:
                    self._lut[h] = t["tile_next"][cur]
                else:
                    t["tile_next"][prev] = t["tile_next"][cur]
                break
            prev, cur = cur, int(t["tile_next"][cur])
        others = self._slots_raw(x, y)
        for side in range(8):
            others.extend(self._neighbour_slots(x, y, side))
        self._release(old)
        salt = (int(t["tile_salt"][old]) + 1) & ((1 << self.salt_bits) - 1)
        t["tile_salt"][old] = salt or 1
        t["tile_next"][old] = -1
        self._free_slots.insert(0, old)
        self._record_pad.pop(old, None)
        # addTile
        slot = self._free_slots.pop(0)
        self._t["tile_next"][slot] = self._lut[h]
        self._lut[h] = slot
        self._store(slot, data)
        same = [s for s in self._slots_raw(x, y) if s != slot]
        nei, sides = [], []
        for side in range(8):
            for s in self._neighbour_slots(x, y, side):
                nei.append(s)
                sides.append(side)
        from ._pool_links import replace_tile

        replace_tile(
            self._kernel_desc(),
            old,
            np.array(others, np.int64),
            slot,
            np.array(same, np.int64),
            np.array(nei, np.int64),
            np.array(sides, np.int64),
            self.tile_bits,
            self.poly_bits,
        )
        return self._tile_ref(slot)

    def _slot_of_tile_ref(self, tile_ref: int) -> int:
        salt, slot, _ = self.decode_ref(tile_ref)
        if (
            not tile_ref
            or slot >= self.params.max_tiles
            or not self._t["tile_used"][slot]
            or int(self._t["tile_salt"][slot]) != salt
        ):
            raise StaleHandleError(f"tile ref {int(tile_ref):#x} names no tile")
        return slot

    def remove_tile(self, tile_ref: int) -> TileData:
        """Remove a tile (``dtNavMesh::removeTile``); returns its data for a later ``add_tile``.

        Raises
        ------
        StaleHandleError
            The ref names no tile (removed, replaced or never added).
        """
        data = self._remove_tile(tile_ref, keep_data=True)
        assert data is not None
        return data

    def _remove_tile(self, tile_ref: int, keep_data: bool) -> TileData | None:
        """:meth:`remove_tile`; ``keep_data=False`` skips copying the tile out (the
        tile cache drops the old tile)."""
        slot = self._slot_of_tile_ref(tile_ref)
        t = self._t
        x, y = int(t["tile_x"][slot]), int(t["tile_y"][slot])
        h = _tile_hash(x, y, self._lut_mask)
        prev, cur = -1, int(self._lut[h])
        while cur >= 0:
            if cur == slot:
                if prev < 0:
                    self._lut[h] = t["tile_next"][cur]
                else:
                    t["tile_next"][prev] = t["tile_next"][cur]
                break
            prev, cur = cur, int(t["tile_next"][cur])
        data = self.tile_data(slot) if keep_data else None
        others = [s for s in self._slots_raw(x, y) if s != slot]
        for side in range(8):
            others.extend(self._neighbour_slots(x, y, side))
        # Runtime off-mesh connections reach beyond the neighbours.
        for cref, (s0, s1) in list(self._runtime_cons.items()):
            if slot in (s0, s1):
                other = s1 if s0 == slot else s0
                if other != slot:
                    others.append(other)
                if s0 == slot:
                    del self._runtime_cons[cref]
        from ._pool_links import disconnect_tile

        disconnect_tile(
            self._kernel_desc(), slot, np.array(others, np.int64), self.tile_bits, self.poly_bits
        )
        self._dead_cons = {r for r in self._dead_cons if self.decode_ref(r)[1] != slot}
        # Links of the neighbours that pointed here are gone; forget the target index.
        self._release(slot)
        salt = (int(t["tile_salt"][slot]) + 1) & ((1 << self.salt_bits) - 1)
        t["tile_salt"][slot] = salt or 1
        t["tile_next"][slot] = -1
        self._free_slots.insert(0, slot)
        self._record_pad.pop(slot, None)
        return data

    # -- polygons --------------------------------------------------------------------------
    def _poly(self, ref: int) -> int:
        """Global poly index of a valid ref, else StaleHandleError."""
        salt, slot, ip = self.decode_ref(ref)
        t = self._t
        if (
            not ref
            or slot >= self.params.max_tiles
            or not t["tile_used"][slot]
            or int(t["tile_salt"][slot]) != salt
            or ip >= int(t["tile_poly_count"][slot])
            or int(ref) in self._dead_cons
        ):
            raise StaleHandleError(f"poly ref {int(ref):#x} names no polygon")
        return int(t["tile_poly_base"][slot]) + ip

    def is_valid_poly_ref(self, ref: int) -> bool:
        """Whether ``ref`` names a polygon of a live tile (``isValidPolyRef``)."""
        try:
            self._poly(ref)
        except StaleHandleError:
            return False
        return True

    def poly_index(self, ref: int) -> int:
        """Global pool index of a poly ref (raises StaleHandleError)."""
        return self._poly(ref)

    def poly_ref(self, global_index: int) -> int:
        """Poly ref of a global pool index (StaleHandleError in a dead range)."""
        n = self._p["poly_tile"].shape[0]
        global_index = _check.integer(global_index, "global_index", 0, n - 1)
        slot = int(self._p["poly_tile"][global_index])
        if slot < 0:
            raise StaleHandleError(f"pool index {global_index} belongs to no tile")
        return self.encode_ref(
            int(self._t["tile_salt"][slot]),
            slot,
            global_index - int(self._t["tile_poly_base"][slot]),
        )

    def get_poly_type(self, ref: int) -> int:
        """0 ground polygon, 1 off-mesh connection."""
        return int(self._p["poly_type"][self._poly(ref)])

    def get_poly_flags(self, ref: int) -> int:
        return int(self._p["poly_flags"][self._poly(ref)])

    def set_poly_flags(self, ref: int, flags: int) -> None:
        flags = _check.integer(flags, "flags", 0, 0xFFFF)
        self._p["poly_flags"][self._poly(ref)] = flags

    def get_poly_area(self, ref: int) -> int:
        return int(self._p["poly_area"][self._poly(ref)])

    def set_poly_area(self, ref: int, area: int) -> None:
        area = _check.integer(area, "area", 0, 63)
        self._p["poly_area"][self._poly(ref)] = area

    def get_tile_state(self, tile_ref: int) -> bytes:
        """Flags and areas of a tile's polygons (``storeTileState``'s bytes)."""
        slot = self._slot_of_tile_ref(tile_ref)
        pr = slice(
            int(self._t["tile_poly_base"][slot]),
            int(self._t["tile_poly_base"][slot] + self._t["tile_poly_count"][slot]),
        )
        n = pr.stop - pr.start
        head = np.array([0x444E4D53, 1], "<i4").tobytes()
        head += int(tile_ref).to_bytes(8 if self.ref64 else 4, "little")
        if self.ref64:
            head = head.ljust(16, b"\0")
        st = np.zeros((n, 4), np.uint8)
        st[:, 0:2] = self._p["poly_flags"][pr].astype("<u2").view(np.uint8).reshape(n, 2)
        st[:, 2] = self._p["poly_area"][pr]
        body = st.tobytes()
        return head + body + b"\0" * (-len(body) % 4)

    def restore_tile_state(self, tile_ref: int, state: bytes) -> None:
        """Restore flags and areas saved by :meth:`get_tile_state` (``restoreTileState``)."""
        slot = self._slot_of_tile_ref(tile_ref)
        n = int(self._t["tile_poly_count"][slot])
        hs = 16 if self.ref64 else 12
        if len(state) < hs + 4 * n:
            raise InputError("tile state too short")
        magic, ver = np.frombuffer(state[:8], "<i4")
        ref = int.from_bytes(state[8 : 8 + (8 if self.ref64 else 4)], "little")
        if magic != 0x444E4D53 or ver != 1:
            raise InputError("not a tile state (wrong magic or version)")
        if ref != int(tile_ref):
            raise InputError("tile state belongs to another tile ref")
        st = np.frombuffer(state[hs : hs + 4 * n], np.uint8).reshape(n, 4)
        b = int(self._t["tile_poly_base"][slot])
        self._p["poly_flags"][b : b + n] = st[:, 0:2].copy().view("<u2").ravel()
        self._p["poly_area"][b : b + n] = st[:, 2] & 0x3F

    def get_off_mesh_connection_poly_end_points(self, prev_ref: int, poly_ref: int):
        """Start and end (3,) float32 of an off-mesh polygon, entered from ``prev_ref``.

        Raises
        ------
        StaleHandleError
            ``poly_ref`` is not valid.
        InputError
            ``poly_ref`` is not an off-mesh connection.
        """
        prev_ref = _check.ref(prev_ref, "prev_ref")
        gp = self._poly(poly_ref)
        p = self._p
        if p["poly_type"][gp] != 1:
            raise InputError(f"poly ref {poly_ref:#x} is not an off-mesh connection")
        i0, i1 = 0, 1
        li = int(p["poly_first_link"][gp])
        while li >= 0:
            if p["link_edge"][li] == 0:
                if int(p["link_ref"][li]) != int(prev_ref):
                    i0, i1 = 1, 0
                break
            li = int(p["link_next"][li])
        return p["verts"][p["poly_verts"][gp, i0]].copy(), p["verts"][
            p["poly_verts"][gp, i1]
        ].copy()

    def links_of(self, ref: int) -> list[tuple[int, int, int, int, int]]:
        """A polygon's links in list order: (target ref, edge, side, bmin, bmax)."""
        gp = self._poly(ref)
        p = self._p
        out = []
        li = int(p["poly_first_link"][gp])
        while li >= 0:
            out.append(
                (
                    int(p["link_ref"][li]),
                    int(p["link_edge"][li]),
                    int(p["link_side"][li]),
                    int(p["link_bmin"][li]),
                    int(p["link_bmax"][li]),
                )
            )
            li = int(p["link_next"][li])
        return out

    # -- runtime off-mesh connections (navkit extension) -----------------------------------
    def _find_land(self, pos: np.ndarray, rad: np.float32) -> tuple[int, int, np.ndarray]:
        """(slot, global poly, snapped point) of the ground polygon an endpoint lands on."""
        t = self._t
        a = self.arrays()
        best = (-1, -1, np.zeros(3, np.float32))
        best_d = np.inf
        for s in self.tile_slots():
            if not (t["tile_bmin"][s, 0] <= pos[0] < t["tile_bmax"][s, 0]) or not (
                t["tile_bmin"][s, 2] <= pos[2] < t["tile_bmax"][s, 2]
            ):
                continue
            half = np.array([rad, t["tile_walkable_climb"][s], rad], np.float32)
            near = np.zeros(3, np.float32)
            gp = L.find_nearest_poly_in_tile(a, s, pos, half, near)
            if gp < 0:
                continue
            dx, dz = near[0] - pos[0], near[2] - pos[2]
            if dx * dx + dz * dz > rad * rad:
                continue
            d = float(abs(near[1] - pos[1]))
            if d < best_d:
                best, best_d = (s, int(gp), near), d
        return best

    def _grow_tile(self, slot: int, td: TileData, extra_links: int) -> None:
        """Re-store a tile (with ``extra_links`` more free links) at the end of the pools."""
        t = self._t
        head = int(t["tile_link_free"][slot])
        head = -1 if head < 0 else head - int(t["tile_link_base"][slot])
        nl = td.max_link_count
        if extra_links:
            z8 = np.zeros(extra_links, np.uint8)
            nxt = np.arange(nl + 1, nl + extra_links + 1, dtype=np.int64)
            nxt[-1] = head
            td = td._replace(
                link_ref=np.concatenate([td.link_ref, np.zeros(extra_links, np.uint64)]),
                link_next=np.concatenate(
                    [td.link_next, np.where(nxt < 0, 0xFFFFFFFF, nxt).astype(np.uint32)]
                ),
                link_edge=np.concatenate([td.link_edge, z8]),
                link_side=np.concatenate([td.link_side, z8]),
                link_bmin=np.concatenate([td.link_bmin, z8]),
                link_bmax=np.concatenate([td.link_bmax, z8]),
            )
            head = nl
        self._kill_polys(slot)
        for k in _POOLS:
            self._dead[k] += int(t[f"tile_{k}_count"][slot])
        self._store(slot, td)
        t["tile_link_free"][slot] = -1 if head < 0 else head + int(t["tile_link_base"][slot])
        if any(self._dead[k] * 2 > self._used[k] and self._dead[k] > 0 for k in _POOLS):
            self._compact()  # also resolves link_poly
        else:
            a = self.arrays()
            L.resolve_link_polys(
                a, self._used["link"], self.salt_bits, self.tile_bits, self.poly_bits
            )

    def _new_link(self, slot: int, gp: int, target_gp: int, edge: int, side: int) -> None:
        a = self.arrays()
        li = L.alloc_link(a, slot)
        if li < 0:  # capacity was reserved by _grow_tile; this cannot happen
            raise RuntimeError("no free link")
        p = self._p
        p["link_ref"][li] = self.poly_ref(target_gp)
        p["link_poly"][li] = target_gp
        p["link_edge"][li] = edge
        p["link_side"][li] = side
        p["link_bmin"][li] = 0
        p["link_bmax"][li] = 0
        p["link_next"][li] = p["poly_first_link"][gp]
        p["poly_first_link"][gp] = li

    def add_off_mesh_connection(
        self,
        start,
        end,
        radius: float,
        bidirectional: bool = True,
        area: int = 0,
        flags: int = 1,
        user_id: int = 0,
    ) -> int:
        """Add an off-mesh connection at runtime between any two tiles (navkit extension).

        Detour only links off-mesh connections whose end lies in the same or a
        neighbouring tile, and only when the tile is added. Here both endpoints are
        snapped to the nearest ground polygon within ``radius`` (xz) and
        ``walkable_climb`` (y) in whichever tiles contain them, and the links are made
        at once: connection -> start polygon (edge 0), connection -> end polygon
        (edge 1), start polygon -> connection, and end polygon -> connection when
        ``bidirectional``. The connection is stored in the start tile (a new off-mesh
        polygon, as ``dtCreateNavMeshData`` stores them), so ``to_recast`` exports it;
        Detour itself relinks its far end on load only if that end is in a
        neighbouring tile. Removing either tile drops the connection's links to it.

        Returns
        -------
        int
            The connection's poly ref.

        Raises
        ------
        InputError
            An endpoint has no ground polygon within ``radius``, bad area, or the
            start tile is full (``max_polys``).
        """
        p0 = _check.point(start, "start")
        p1 = _check.point(end, "end")
        rad = np.float32(_check.real(radius, "radius", 0.0, lo_open=True, unit="wu"))
        bidirectional = _check.flag(bidirectional, "bidirectional")
        area = _check.integer(area, "area", 0, 63)
        flags = _check.integer(flags, "flags", 0, 0xFFFF)
        user_id = _check.integer(user_id, "user_id", 0, (1 << 32) - 1)
        s0, g0, n0 = self._find_land(p0, rad)
        s1, g1, n1 = self._find_land(p1, rad)
        if s0 < 0 or s1 < 0:
            which = "start" if s0 < 0 else "end"
            raise InputError(
                f"off-mesh connection: no ground polygon within {radius} of the {which}"
            )
        t = self._t
        l0 = g0 - int(t["tile_poly_base"][s0])
        l1 = g1 - int(t["tile_poly_base"][s1])
        td = self.tile_data(s0)
        k = td.poly_count
        if k + 1 > (1 << self.poly_bits):
            raise InputError("start tile has no room for another polygon")
        nv = td.vert_count
        side = 0xFF
        if s1 != s0:
            from .tile import _classify_off_mesh_point

            side = _classify_off_mesh_point(p1, td.bmin, td.bmax)  # 0xFF: another layer
        pv = np.zeros((1, 6), np.uint16)
        pv[0, 0], pv[0, 1] = nv, nv + 1
        td = td._replace(
            verts=np.concatenate([td.verts, n0[None], n1[None]]).astype(np.float32),
            poly_first_link=np.concatenate([td.poly_first_link, [0xFFFFFFFF]]).astype(np.uint32),
            poly_verts=np.concatenate([td.poly_verts, pv]),
            poly_neis=np.concatenate([td.poly_neis, np.zeros((1, 6), np.uint16)]),
            poly_flags=np.concatenate([td.poly_flags, [int(flags) & 0xFFFF]]).astype(np.uint16),
            poly_vert_count=np.concatenate([td.poly_vert_count, [2]]).astype(np.uint8),
            poly_area=np.concatenate([td.poly_area, [int(area)]]).astype(np.uint8),
            poly_type=np.concatenate([td.poly_type, [1]]).astype(np.uint8),
            off_pos=np.concatenate([td.off_pos, np.concatenate([p0, p1])[None]]).astype(np.float32),
            off_rad=np.concatenate([td.off_rad, [rad]]).astype(np.float32),
            off_poly=np.concatenate([td.off_poly, [k]]).astype(np.uint16),
            off_flags=np.concatenate([td.off_flags, [1 if bidirectional else 0]]).astype(np.uint8),
            off_side=np.concatenate([td.off_side, [side]]).astype(np.uint8),
            off_user_id=np.concatenate([td.off_user_id, [int(user_id) & 0xFFFFFFFF]]).astype(
                np.uint32
            ),
        )
        same = s1 == s0
        self._grow_tile(s0, td, 3 + (1 if (bidirectional and same) else 0))
        if bidirectional and not same:
            self._grow_tile(s1, self.tile_data(s1), 1)
        # Global indices after the moves.
        con = int(t["tile_poly_base"][s0]) + k
        g0 = int(t["tile_poly_base"][s0]) + l0
        g1 = int(t["tile_poly_base"][s1]) + l1
        dir_back = 0xFF if same or side == 0xFF else (side + 4) & 7
        # Order as Detour: start link (edge 0), then end link (edge 1) at the list head.
        self._new_link(s0, con, g0, 0, 0xFF)
        self._new_link(s0, g0, con, 0xFF, 0xFF)
        self._new_link(s0, con, g1, 1, side)
        if bidirectional:
            self._new_link(s1, g1, con, 0xFF, dir_back)
        ref = self.poly_ref(con)
        self._runtime_cons[ref] = (s0, s1)
        return ref

    def remove_off_mesh_connection(self, ref: int) -> None:
        """Remove a connection made by :meth:`add_off_mesh_connection`.

        Its links are freed and its ref becomes stale; the polygon stays in the start
        tile, unlinked and with flags 0, so that the other refs keep their meaning.

        Raises
        ------
        StaleHandleError
            ``ref`` is not a live runtime connection.
        """
        ref = int(ref)
        if ref not in self._runtime_cons:
            raise StaleHandleError(f"poly ref {ref:#x} is not a runtime off-mesh connection")
        gp = self._poly(ref)
        p = self._p
        s0, _ = self._runtime_cons.pop(ref)
        a = self.arrays()
        li = int(p["poly_first_link"][gp])
        targets = []
        while li >= 0:
            targets.append(int(p["link_poly"][li]))
            nx = int(p["link_next"][li])
            L.free_link(a, s0, li)
            li = nx
        p["poly_first_link"][gp] = -1
        for tg in targets:
            if tg < 0:
                continue
            ts = int(p["poly_tile"][tg])
            prev, li = -1, int(p["poly_first_link"][tg])
            while li >= 0:
                nx = int(p["link_next"][li])
                if int(p["link_poly"][li]) == gp:
                    if prev < 0:
                        p["poly_first_link"][tg] = nx
                    else:
                        p["link_next"][prev] = nx
                    L.free_link(a, ts, li)
                else:
                    prev = li
                li = nx
        p["poly_flags"][gp] = 0
        self._dead_cons.add(ref)

    # -- summary ---------------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts over the live tiles: tiles, polys, verts, detail_verts, detail_tris,
        links (allocated), bv_nodes, offmesh; plus ``build`` (timings in ms and the
        intermediate counts: spans, compact spans, regions, contours, ...) for a
        navmesh baked in this process."""
        t = self._t
        live = t["tile_used"] != 0
        a = self.arrays()
        n_links = int(L.count_links(a)) if a.poly_first_link.shape[0] else 0
        return {
            "tiles": int(live.sum()),
            "polys": int(t["tile_poly_count"][live].sum()),
            "verts": int(t["tile_vert_count"][live].sum()),
            "detail_verts": int(t["tile_dvert_count"][live].sum()),
            "detail_tris": int(t["tile_dtri_count"][live].sum()),
            "links": n_links,
            "bv_nodes": int(t["tile_bv_count"][live].sum()),
            "offmesh": int(t["tile_off_count"][live].sum()),
        } | self._build_stats()

    def islands(self):
        """Connected components of the polygon graph (links followed both ways).

        Returns
        -------
        navkit.detour.islands.Islands
            ``poly_island`` (NP,) int32 per global polygon index, ``island_area``
            [wu^2] and ``island_polys`` per island.
        """
        from .islands import find_islands

        return find_islands(self)

    def _build_stats(self) -> dict:
        """Per-stage timings [ms] and intermediate counts of the bake, when this
        navmesh came from :func:`navkit.bake` (not kept in files)."""
        rep = getattr(self, "build_report", None)
        return {} if rep is None else {"build": rep.as_dict()}

    def __repr__(self) -> str:
        s = self.stats()
        return f"NavMesh(tiles={s['tiles']}, polys={s['polys']}, max_tiles={self.params.max_tiles})"

    # -- files ---------------------------------------------------------------------------
    @classmethod
    def from_recast(cls, src: Any) -> NavMesh:
        """Load Recast/Detour's binary navmesh: an MSET navmesh set (RecastDemo's
        ``all_tiles_navmesh.bin``, ``exportNavMesh``) or one raw ``DNAV`` tile.

        Parameters
        ----------
        src : str, PathLike or bytes

        Raises
        ------
        FormatError
            Corrupt, truncated, foreign or unsupported data.
        """
        from .recast_format import navmesh_from_recast

        return navmesh_from_recast(src)

    def to_recast(self, path: Any = None) -> bytes:
        """This navmesh as a Recast navmesh set (MSET) that Detour's importer loads.

        Parameters
        ----------
        path : str or PathLike, optional
            Also write the bytes there (atomically).

        Returns
        -------
        bytes
        """
        from .recast_format import navmesh_to_recast

        return navmesh_to_recast(self, path)

    def save(self, path: Any, *, bake_config: Any = None) -> None:
        """Save in navkit's versioned, checksummed format (atomic; see :mod:`navkit.detour.io`)."""
        from .io import save_navmesh

        save_navmesh(self, path, bake_config=bake_config)

    @classmethod
    def load(cls, path: Any) -> NavMesh:
        """Load a file written by :meth:`save`.

        Raises
        ------
        FormatError
            A corrupt, truncated or foreign file (checksum, magic, version).
        """
        from .io import load_navmesh

        return load_navmesh(path)


def _check_tile(d: TileData) -> None:
    """Index checks so that kernels never read out of bounds (see ``_validate``)."""
    from ._validate import check_tile

    check_tile(d)
