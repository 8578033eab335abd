"""Recast's tile-cache files: compressed layers and "TSET" tile cache sets.

A compressed tile (``dtBuildTileCacheLayer``) is a 56-byte ``dtTileCacheLayerHeader``
followed by one FastLZ stream of the layer's ``heights | areas | cons`` grids
(``width * height`` bytes each). A tile cache set (``exportTileCache`` of
@recast-navigation, RecastDemo's ``all_tiles_tilecache.bin``) is, little-endian::

    offset  size  field
    0       4     i32 magic 'TSET' (bytes "TEST")
    4       4     i32 version 1
    8       4     i32 numTiles
    12      28    dtNavMeshParams: orig f32[3], tileWidth, tileHeight f32, maxTiles, maxPolys i32
    40      52    dtTileCacheParams: orig f32[3], cs, ch f32, width, height i32,
                  walkableHeight, walkableRadius, walkableClimb, maxSimplificationError f32,
                  maxTiles, maxObstacles i32
    92      ...   numTiles records: u32 compressed tile ref, i32 dataSize, u8[dataSize]

Layer header (56 bytes): i32 magic 'DTLR', i32 version 1, i32 tx, ty, tlayer,
f32 bmin[3], bmax[3], u16 hmin, hmax, u8 width, height, minx, maxx, miny, maxy,
2 padding bytes. See ``../shared/peer/FORMAT.md`` section 5.

Reading keeps every record's bytes as they are, so ``write(read(file))`` gives the
file back byte for byte; every record is still checked (header, sizes, the stream
decompresses to exactly ``width * height * 3`` bytes).
"""

from __future__ import annotations

import math
import os
import struct
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._io import atomic_write_bytes
from ..detour.navmesh import NavMeshParams
from ..errors import FormatError, InputError
from . import fastlz

__all__ = [
    "TSET_MAGIC",
    "TSET_VERSION",
    "LAYER_MAGIC",
    "LAYER_VERSION",
    "LAYER_HEADER_SIZE",
    "TileCacheParams",
    "TileCacheLayerHeader",
    "TileCacheLayer",
    "CompressedTile",
    "TileCacheSet",
    "build_tile_cache_layer",
    "decompress_tile_cache_layer",
    "tile_cache_from_bytes",
    "tile_cache_to_bytes",
    "read_tile_cache",
    "write_tile_cache",
]


def _magic(s: str) -> int:
    return (ord(s[0]) << 24) | (ord(s[1]) << 16) | (ord(s[2]) << 8) | ord(s[3])


TSET_MAGIC = _magic("TSET")
TSET_VERSION = 1
LAYER_MAGIC = _magic("DTLR")
LAYER_VERSION = 1
LAYER_HEADER_SIZE = 56

_SET_HEAD = struct.Struct("<iii")
_NAV_PARAMS = struct.Struct("<3f2f2i")
_CACHE_PARAMS = struct.Struct("<3f2f2i4f2i")
_RECORD = struct.Struct("<Ii")
_LAYER_HEAD = struct.Struct("<5i6f2H6B2x")
_SET_HEADER_SIZE = _SET_HEAD.size + _NAV_PARAMS.size + _CACHE_PARAMS.size  # 92
assert _LAYER_HEAD.size == LAYER_HEADER_SIZE and _SET_HEADER_SIZE == 92

_I32_MAX = 0x7FFFFFFF


class TileCacheParams(NamedTuple):
    """``dtTileCacheParams``.

    Attributes
    ----------
    orig : (3,) float
        World origin of tile (0, 0) [wu] (float32 values).
    cs, ch : float
        Cell size and height [wu].
    width, height : int
        Layer grid size without border [vx] (the tile size).
    walkable_height, walkable_radius, walkable_climb : float
        Agent settings [wu] the navmesh tiles are rebuilt with.
    max_simplification_error : float
        Contour simplification error [vx].
    max_tiles : int
        Compressed tile slots.
    max_obstacles : int
        Obstacle slots.
    """

    orig: tuple[float, float, float]
    cs: float
    ch: float
    width: int
    height: int
    walkable_height: float
    walkable_radius: float
    walkable_climb: float
    max_simplification_error: float
    max_tiles: int
    max_obstacles: int


class TileCacheLayerHeader(NamedTuple):
    """``dtTileCacheLayerHeader``: where a layer sits and its used cell range.

    ``bmin``/``bmax`` are float32 values [wu]; ``hmin``/``hmax`` [vx] are the layer's
    height range (cell heights are stored relative to ``hmin``); ``minx..maxy`` the
    cells that hold data (all 0 when none do).
    """

    tx: int
    ty: int
    tlayer: int
    bmin: tuple[float, float, float]
    bmax: tuple[float, float, float]
    hmin: int
    hmax: int
    width: int
    height: int
    minx: int
    maxx: int
    miny: int
    maxy: int


class TileCacheLayer(NamedTuple):
    """An uncompressed tile-cache layer (``dtTileCacheLayer``).

    Attributes
    ----------
    header : TileCacheLayerHeader
    heights : (height, width) uint8
        Floor height relative to ``header.hmin`` [vx]; 255 = no floor.
    areas : (height, width) uint8
        Area id (0 = not walkable).
    cons : (height, width) uint8
        Low nibble: connected to the neighbour in direction 0..3 ((-1,0), (0,+1),
        (+1,0), (0,-1) in (x, z)) within this layer; high nibble: portal to another
        layer in that direction.
    """

    header: TileCacheLayerHeader
    heights: np.ndarray
    areas: np.ndarray
    cons: np.ndarray


class CompressedTile(NamedTuple):
    """One record of a tile cache set.

    Attributes
    ----------
    ref : int
        ``dtCompressedTileRef`` (salt and slot).
    header : TileCacheLayerHeader
        The parsed header (the first 56 bytes of ``data``).
    data : bytes
        The record as stored: layer header followed by the FastLZ stream.
    """

    ref: int
    header: TileCacheLayerHeader
    data: bytes


class TileCacheSet(NamedTuple):
    """A tile cache set ("TSET"): navmesh params, cache params, compressed tiles in slot order."""

    navmesh_params: NavMeshParams
    params: TileCacheParams
    tiles: tuple[CompressedTile, ...]

    @property
    def compressed_bytes(self) -> int:
        """Sum of the records' data sizes (what Recast's ``addTile`` calls receive)."""
        return sum(len(t.data) for t in self.tiles)

    @property
    def raw_bytes(self) -> int:
        """Sum of ``56 + width * height * 3`` over the tiles (RecastDemo's cacheRawSize)."""
        return sum(LAYER_HEADER_SIZE + 3 * t.header.width * t.header.height for t in self.tiles)

    def layer(self, i: int) -> TileCacheLayer:
        """Tile ``i`` decompressed."""
        return decompress_tile_cache_layer(self.tiles[i].data)


# -- layer headers -----------------------------------------------------------------------


def _header_from_bytes(b: bytes, where: str) -> TileCacheLayerHeader:
    if len(b) < LAYER_HEADER_SIZE:
        raise FormatError(f"{where}: {len(b)} bytes, shorter than a layer header (56)")
    f = _LAYER_HEAD.unpack_from(b, 0)
    if f[0] != LAYER_MAGIC:
        raise FormatError(f"{where}: layer magic 0x{f[0] & 0xFFFFFFFF:08x}, expected 'DTLR'")
    if f[1] != LAYER_VERSION:
        raise FormatError(f"{where}: layer version {f[1]}, expected {LAYER_VERSION}")
    h = TileCacheLayerHeader(
        tx=f[2], ty=f[3], tlayer=f[4], bmin=(f[5], f[6], f[7]), bmax=(f[8], f[9], f[10]),
        hmin=f[11], hmax=f[12], width=f[13], height=f[14],
        minx=f[15], maxx=f[16], miny=f[17], maxy=f[18],
    )  # fmt: skip
    _check_header(h, where, FormatError)
    return h


def _check_header(h: TileCacheLayerHeader, where: str, err: type[Exception]) -> None:
    b0, b1 = h.bmin, h.bmax
    isfinite = math.isfinite
    if len(b0) != 3 or len(b1) != 3:
        raise err(f"{where}: layer bounds must be 3 numbers each, got {b0} {b1}")
    if not (
        isfinite(b0[0]) and isfinite(b0[1]) and isfinite(b0[2])
        and isfinite(b1[0]) and isfinite(b1[1]) and isfinite(b1[2])
    ):  # fmt: skip
        raise err(f"{where}: layer bounds must be finite, got {h.bmin} {h.bmax}")
    if h.width < 1 or h.height < 1:
        raise err(f"{where}: layer size {h.width} x {h.height} must be at least 1 x 1")
    if not (h.minx <= h.maxx < h.width and h.miny <= h.maxy < h.height):
        raise err(
            f"{where}: used cell range x {h.minx}..{h.maxx}, y {h.miny}..{h.maxy} "
            f"must lie within the {h.width} x {h.height} layer"
        )
    if h.hmin > h.hmax:
        raise err(f"{where}: hmin {h.hmin} above hmax {h.hmax}")
    if h.tlayer < 0:
        raise err(f"{where}: tlayer {h.tlayer} must be >= 0")


def _header_to_bytes(h: TileCacheLayerHeader) -> bytes:
    try:
        return _LAYER_HEAD.pack(
            LAYER_MAGIC, LAYER_VERSION, h.tx, h.ty, h.tlayer, *h.bmin, *h.bmax,
            h.hmin, h.hmax, h.width, h.height, h.minx, h.maxx, h.miny, h.maxy,
        )  # fmt: skip
    except (struct.error, TypeError) as exc:
        raise InputError(f"layer header field out of range: {exc}") from None


def build_tile_cache_layer(
    header: TileCacheLayerHeader, heights: np.ndarray, areas: np.ndarray, cons: np.ndarray
) -> bytes:
    """A compressed tile, byte for byte as ``dtBuildTileCacheLayer`` with FastLZ makes it.

    Parameters
    ----------
    header : TileCacheLayerHeader
    heights, areas, cons : (header.height, header.width) uint8

    Returns
    -------
    bytes
        The 56-byte header followed by the FastLZ stream of heights | areas | cons.
    """
    if not isinstance(header, TileCacheLayerHeader):
        raise InputError(f"header must be a TileCacheLayerHeader, got {type(header).__name__}")
    _check_header(header, "header", InputError)
    grids = []
    for name, g in (("heights", heights), ("areas", areas), ("cons", cons)):
        a = np.asarray(g)
        if a.dtype != np.uint8 or a.shape != (header.height, header.width):
            raise InputError(
                f"{name} must be uint8 of shape ({header.height}, {header.width}), "
                f"got {a.dtype} {a.shape}"
            )
        grids.append(np.ascontiguousarray(a).reshape(-1))
    raw = np.concatenate(grids)
    return _header_to_bytes(header) + fastlz.compress(raw)


def _compress_layer(header: TileCacheLayerHeader, raw: np.ndarray) -> bytes:
    """:func:`build_tile_cache_layer` of a checked header and its grids already
    concatenated (``raw``: (3 * width * height,) uint8, heights | areas | cons)."""
    return _header_to_bytes(header) + fastlz.compress(raw)


def decompress_tile_cache_layer(data: bytes | bytearray | memoryview) -> TileCacheLayer:
    """Parse and decompress a compressed tile (``dtDecompressTileCacheLayer``).

    Raises
    ------
    FormatError
        Bad header, or a stream that does not decode to ``width * height * 3`` bytes.
    """
    b = bytes(data)
    h = _header_from_bytes(b, "compressed tile")
    n = h.width * h.height
    raw = np.frombuffer(fastlz.decompress(b[LAYER_HEADER_SIZE:], 3 * n), np.uint8)
    shape = (h.height, h.width)
    return TileCacheLayer(
        h, raw[:n].reshape(shape).copy(), raw[n : 2 * n].reshape(shape).copy(),
        raw[2 * n :].reshape(shape).copy(),
    )  # fmt: skip


# -- tile cache sets ---------------------------------------------------------------------


def _tile_bits(max_tiles: int) -> int:
    v = 1
    while v < max_tiles:
        v <<= 1
    return v.bit_length() - 1


def _check_params(nav: NavMeshParams, p: TileCacheParams, err: type[Exception]) -> None:
    fl = [*nav.orig, nav.tile_width, nav.tile_height, *p.orig, p.cs, p.ch]
    fl += [p.walkable_height, p.walkable_radius, p.walkable_climb, p.max_simplification_error]
    if not all(math.isfinite(v) for v in fl):
        raise err(f"tile cache params must be finite, got {nav} {p}")
    if not (nav.tile_width > 0 and nav.tile_height > 0):
        raise err(f"navmesh tile size must be > 0, got {nav.tile_width} x {nav.tile_height}")
    if not (0 < nav.max_tiles <= 1 << 22 and 0 < nav.max_polys <= 1 << 22):
        raise err(
            f"navmesh max_tiles {nav.max_tiles} / max_polys {nav.max_polys} must be in 1..2^22"
        )
    if not (p.cs > 0 and p.ch > 0):
        raise err(f"cs {p.cs} and ch {p.ch} must be > 0")
    if not (1 <= p.width <= 255 and 1 <= p.height <= 255):
        raise err(f"tile cache layer size {p.width} x {p.height} must be within 1..255")
    if not (0 < p.max_tiles <= 1 << 22):
        raise err(f"tile cache max_tiles {p.max_tiles} must be in 1..2^22")
    if not (0 <= p.max_obstacles <= 1 << 22):
        raise err(f"max_obstacles {p.max_obstacles} must be in 0..2^22")


def tile_cache_from_bytes(data: bytes | bytearray | memoryview) -> TileCacheSet:
    """Parse a "TSET" tile cache set, checking every record.

    Raises
    ------
    FormatError
        Foreign or truncated data, an unsupported version, out-of-range params,
        records that overrun the data, duplicate refs or tile positions, bad layer
        headers, streams that do not decode to their layer's size, trailing bytes.
    """
    b = bytes(data)
    if len(b) < _SET_HEADER_SIZE:
        raise FormatError(f"{len(b)} bytes: too short for a tile cache set (92-byte header)")
    magic, version, ntiles = _SET_HEAD.unpack_from(b, 0)
    if magic != TSET_MAGIC:
        raise FormatError(f"magic 0x{magic & 0xFFFFFFFF:08x} is not 'TSET' (not a tile cache set)")
    if version != TSET_VERSION:
        raise FormatError(f"tile cache set version {version}, expected {TSET_VERSION}")
    nv = _NAV_PARAMS.unpack_from(b, 12)
    nav = NavMeshParams(
        orig=(nv[0], nv[1], nv[2]), tile_width=nv[3], tile_height=nv[4],
        max_tiles=nv[5], max_polys=nv[6],
    )  # fmt: skip
    cp = _CACHE_PARAMS.unpack_from(b, 40)
    params = TileCacheParams(
        orig=(cp[0], cp[1], cp[2]), cs=cp[3], ch=cp[4], width=cp[5], height=cp[6],
        walkable_height=cp[7], walkable_radius=cp[8], walkable_climb=cp[9],
        max_simplification_error=cp[10], max_tiles=cp[11], max_obstacles=cp[12],
    )  # fmt: skip
    _check_params(nav, params, FormatError)
    min_record = _RECORD.size + LAYER_HEADER_SIZE
    if ntiles < 0 or ntiles > params.max_tiles or ntiles * min_record > len(b) - _SET_HEADER_SIZE:
        raise FormatError(
            f"numTiles {ntiles} is impossible: max_tiles {params.max_tiles}, "
            f"{len(b) - _SET_HEADER_SIZE} bytes of records"
        )
    tile_bits = _tile_bits(params.max_tiles)
    salt_bits = min(31, 32 - tile_bits)
    off = _SET_HEADER_SIZE
    tiles = []
    seen_refs: set[int] = set()
    seen_pos: set[tuple[int, int, int]] = set()
    for k in range(ntiles):
        where = f"record {k} (offset {off})"
        if off + _RECORD.size > len(b):
            raise FormatError(f"{where}: truncated record head")
        ref, size = _RECORD.unpack_from(b, off)
        off += _RECORD.size
        if ref == 0 or size <= 0:
            raise FormatError(f"{where}: ref {ref} / dataSize {size} (Detour stops reading here)")
        if size > len(b) - off:
            raise FormatError(f"{where}: dataSize {size} overruns the data ({len(b) - off} left)")
        slot = ref & ((1 << tile_bits) - 1)
        salt = (ref >> tile_bits) & ((1 << salt_bits) - 1)
        if slot >= params.max_tiles or salt == 0:
            raise FormatError(f"{where}: ref 0x{ref:08x} names slot {slot}, salt {salt}")
        if ref in seen_refs:
            raise FormatError(f"{where}: ref 0x{ref:08x} appears twice")
        rec = b[off : off + size]
        off += size
        header = _header_from_bytes(rec, where)
        pos = (header.tx, header.ty, header.tlayer)
        if pos in seen_pos:
            raise FormatError(f"{where}: a second layer at tile {pos}")
        fastlz.decompress(rec[LAYER_HEADER_SIZE:], 3 * header.width * header.height)
        seen_refs.add(ref)
        seen_pos.add(pos)
        tiles.append(CompressedTile(ref, header, rec))
    if off != len(b):
        raise FormatError(f"{len(b) - off} trailing bytes after the last record")
    return TileCacheSet(nav, params, tuple(tiles))


def tile_cache_to_bytes(tset: TileCacheSet) -> bytes:
    """The "TSET" bytes of ``tset`` (what ``exportTileCache`` writes)."""
    if not isinstance(tset, TileCacheSet):
        raise InputError(f"expected a TileCacheSet, got {type(tset).__name__}")
    nav, p = tset.navmesh_params, tset.params
    _check_params(nav, p, InputError)
    if len(tset.tiles) > p.max_tiles:
        raise InputError(f"{len(tset.tiles)} tiles exceed max_tiles {p.max_tiles}")
    try:
        parts = [
            _SET_HEAD.pack(TSET_MAGIC, TSET_VERSION, len(tset.tiles)),
            _NAV_PARAMS.pack(
                *nav.orig, nav.tile_width, nav.tile_height, nav.max_tiles, nav.max_polys
            ),
            _CACHE_PARAMS.pack(
                *p.orig,
                p.cs,
                p.ch,
                p.width,
                p.height,
                p.walkable_height,
                p.walkable_radius,
                p.walkable_climb,
                p.max_simplification_error,
                p.max_tiles,
                p.max_obstacles,
            ),  # fmt: skip
        ]
        for k, t in enumerate(tset.tiles):
            if len(t.data) < LAYER_HEADER_SIZE or len(t.data) > _I32_MAX:
                raise InputError(f"tile {k}: {len(t.data)} bytes of data")
            parts.append(_RECORD.pack(t.ref, len(t.data)))
            parts.append(bytes(t.data))
    except (struct.error, TypeError) as exc:
        raise InputError(f"tile cache set field out of range: {exc}") from None
    return b"".join(parts)


def read_tile_cache(path: str | os.PathLike[str]) -> TileCacheSet:
    """Read a "TSET" file (see :func:`tile_cache_from_bytes`)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        return tile_cache_from_bytes(data)
    except FormatError as exc:
        raise FormatError(f"{p}: {exc}") from None


def write_tile_cache(path: str | os.PathLike[str], tset: TileCacheSet) -> None:
    """Write ``tset`` as a "TSET" file, atomically."""
    atomic_write_bytes(path, tile_cache_to_bytes(tset))
