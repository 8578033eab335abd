"""Recast/Detour binary files: navmesh sets (``'MSET'``) and raw Detour tile blobs (``'DNAV'``).

Layouts follow ``shared/peer/FORMAT.md``: an MSET file is a 40-byte header (magic,
version 1, tile count, ``dtNavMeshParams``) followed by one record per tile
(tile ref, data size, Detour tile blob), as written by RecastDemo's / the
@recast-navigation ``exportNavMesh``. A tile blob is ``dtMeshHeader`` then the
verts, polys, links, detail meshes, detail verts, detail tris, BV nodes and
off-mesh connections, little-endian, each section padded to 4 bytes.

Loading mirrors ``importNavMesh``: ``dtNavMesh::init(params)`` then
``addTile(data, tileRef)`` per record (stopping at a record whose ref or size is
0), so links are rebuilt by Detour's rules. Writing mirrors ``exportNavMesh``:
every live tile slot in slot order with its current state, links included.
Files written with ``DT_POLYREF64`` (64-bit refs: 8-byte tile refs plus 4 bytes
of record padding, 16-byte ``dtLink``) are detected and written back the same way.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

from .._io import atomic_write_bytes
from ..errors import ConfigError, FormatError, InputError
from .navmesh import NavMesh, NavMeshParams
from .tile import TileData

__all__ = [
    "MSET_MAGIC",
    "NAVMESH_MAGIC",
    "NAVMESH_VERSION",
    "tile_from_bytes",
    "tile_to_bytes",
    "navmesh_from_recast",
    "navmesh_to_recast",
]

MSET_MAGIC = 0x4D534554  # 'MSET'
MSET_VERSION = 1
NAVMESH_MAGIC = 0x444E4156  # 'DNAV'
NAVMESH_VERSION = 7
MAX_FILE_TILES = 1 << 16  #: largest maxTiles accepted from a file (RecastDemo uses <= 2^14)

_HEADER = np.dtype(
    [
        ("magic", "<i4"),
        ("version", "<i4"),
        ("x", "<i4"),
        ("y", "<i4"),
        ("layer", "<i4"),
        ("userId", "<u4"),
        ("polyCount", "<i4"),
        ("vertCount", "<i4"),
        ("maxLinkCount", "<i4"),
        ("detailMeshCount", "<i4"),
        ("detailVertCount", "<i4"),
        ("detailTriCount", "<i4"),
        ("bvNodeCount", "<i4"),
        ("offMeshConCount", "<i4"),
        ("offMeshBase", "<i4"),
        ("walkableHeight", "<f4"),
        ("walkableRadius", "<f4"),
        ("walkableClimb", "<f4"),
        ("bmin", "<f4", 3),
        ("bmax", "<f4", 3),
        ("bvQuantFactor", "<f4"),
    ]
)
_POLY = np.dtype(
    [
        ("firstLink", "<u4"),
        ("verts", "<u2", 6),
        ("neis", "<u2", 6),
        ("flags", "<u2"),
        ("vertCount", "u1"),
        ("areaAndtype", "u1"),
    ]
)
_LINK32 = np.dtype(
    [
        ("ref", "<u4"),
        ("next", "<u4"),
        ("edge", "u1"),
        ("side", "u1"),
        ("bmin", "u1"),
        ("bmax", "u1"),
    ]
)
_LINK64 = np.dtype(
    [
        ("ref", "<u8"),
        ("next", "<u4"),
        ("edge", "u1"),
        ("side", "u1"),
        ("bmin", "u1"),
        ("bmax", "u1"),
    ]
)
_DETAIL = np.dtype(
    [
        ("vertBase", "<u4"),
        ("triBase", "<u4"),
        ("vertCount", "u1"),
        ("triCount", "u1"),
        ("pad", "u1", 2),
    ]
)
_BV = np.dtype([("bmin", "<u2", 3), ("bmax", "<u2", 3), ("i", "<i4")])
_OFFMESH = np.dtype(
    [
        ("pos", "<f4", 6),
        ("rad", "<f4"),
        ("poly", "<u2"),
        ("flags", "u1"),
        ("side", "u1"),
        ("userId", "<u4"),
    ]
)
assert _HEADER.itemsize == 100 and _POLY.itemsize == 32 and _LINK32.itemsize == 12
assert _LINK64.itemsize == 16 and _DETAIL.itemsize == 12 and _BV.itemsize == 16
assert _OFFMESH.itemsize == 36


def _align4(n: int) -> int:
    return (n + 3) & ~3


def _section_sizes(h: dict, link_size: int) -> list[int]:
    return [
        100,
        _align4(12 * h["vertCount"]),
        _align4(32 * h["polyCount"]),
        _align4(link_size * h["maxLinkCount"]),
        _align4(12 * h["detailMeshCount"]),
        _align4(12 * h["detailVertCount"]),
        _align4(4 * h["detailTriCount"]),
        _align4(16 * h["bvNodeCount"]),
        _align4(36 * h["offMeshConCount"]),
    ]


def tile_from_bytes(data: bytes, *, ref64: bool = False, what: str = "tile") -> TileData:
    """Parse one Detour tile blob (``'DNAV'`` version 7).

    Raises
    ------
    FormatError
        Wrong magic or version, negative or inconsistent counts, or a size that
        does not match the sections.
    """
    buf = memoryview(data).cast("B")
    if len(buf) < 100:
        raise FormatError(f"{what}: {len(buf)} bytes, shorter than a Detour tile header (100)")
    h = np.frombuffer(buf, _HEADER, count=1)[0]
    if int(h["magic"]) != NAVMESH_MAGIC:
        raise FormatError(f"{what}: not a Detour tile (magic {int(h['magic']) & 0xFFFFFFFF:#010x})")
    if int(h["version"]) != NAVMESH_VERSION:
        raise FormatError(
            f"{what}: Detour tile version {int(h['version'])}, expected {NAVMESH_VERSION}"
        )
    names = [
        "vertCount",
        "polyCount",
        "maxLinkCount",
        "detailMeshCount",
        "detailVertCount",
        "detailTriCount",
        "bvNodeCount",
        "offMeshConCount",
        "offMeshBase",
    ]
    counts = {n: int(h[n]) for n in names}
    for n, v in counts.items():
        if v < 0 or v > len(buf):
            raise FormatError(f"{what}: {n} = {v} is impossible")
    link_dt = _LINK64 if ref64 else _LINK32
    sizes = _section_sizes(counts, link_dt.itemsize)
    if sum(sizes) != len(buf):
        raise FormatError(f"{what}: sections need {sum(sizes)} bytes but the tile has {len(buf)}")
    offs = np.cumsum([0, *sizes]).tolist()

    def sec(i: int, dt: np.dtype, count: int) -> np.ndarray:
        return np.frombuffer(buf, dt, count=count, offset=offs[i])

    nv, npoly = counts["vertCount"], counts["polyCount"]
    verts = sec(1, np.dtype("<f4"), 3 * nv).reshape(nv, 3)
    polys = sec(2, _POLY, npoly)
    links = sec(3, link_dt, counts["maxLinkCount"])
    det = sec(4, _DETAIL, counts["detailMeshCount"])
    ndv = counts["detailVertCount"]
    dverts = sec(5, np.dtype("<f4"), 3 * ndv).reshape(ndv, 3)
    ndt = counts["detailTriCount"]
    dtris = sec(6, np.dtype("u1"), 4 * ndt).reshape(ndt, 4)
    bv = sec(7, _BV, counts["bvNodeCount"])
    off = sec(8, _OFFMESH, counts["offMeshConCount"])
    at = polys["areaAndtype"]
    td = TileData(
        x=int(h["x"]),
        y=int(h["y"]),
        layer=int(h["layer"]),
        user_id=int(h["userId"]),
        walkable_height=float(h["walkableHeight"]),
        walkable_radius=float(h["walkableRadius"]),
        walkable_climb=float(h["walkableClimb"]),
        bmin=np.array(h["bmin"], np.float32),
        bmax=np.array(h["bmax"], np.float32),
        bv_quant_factor=float(h["bvQuantFactor"]),
        off_mesh_base=int(h["offMeshBase"]),
        verts=verts.astype(np.float32),
        poly_first_link=polys["firstLink"].astype(np.uint32),
        poly_verts=polys["verts"].astype(np.uint16),
        poly_neis=polys["neis"].astype(np.uint16),
        poly_flags=polys["flags"].astype(np.uint16),
        poly_vert_count=polys["vertCount"].copy(),
        poly_area=(at & 0x3F).astype(np.uint8),
        poly_type=(at >> 6).astype(np.uint8),
        link_ref=links["ref"].astype(np.uint64),
        link_next=links["next"].astype(np.uint32),
        link_edge=links["edge"].copy(),
        link_side=links["side"].copy(),
        link_bmin=links["bmin"].copy(),
        link_bmax=links["bmax"].copy(),
        detail_vert_base=det["vertBase"].astype(np.uint32),
        detail_tri_base=det["triBase"].astype(np.uint32),
        detail_vert_count=det["vertCount"].copy(),
        detail_tri_count=det["triCount"].copy(),
        detail_verts=dverts.astype(np.float32),
        detail_tris=dtris.copy(),
        bv_bmin=bv["bmin"].astype(np.uint16),
        bv_bmax=bv["bmax"].astype(np.uint16),
        bv_i=bv["i"].astype(np.int32),
        off_pos=off["pos"].astype(np.float32),
        off_rad=off["rad"].astype(np.float32),
        off_poly=off["poly"].astype(np.uint16),
        off_flags=off["flags"].copy(),
        off_side=off["side"].copy(),
        off_user_id=off["userId"].astype(np.uint32),
    )
    if (td.poly_type > 1).any():
        raise FormatError(f"{what}: unknown polygon type")
    return td


def tile_to_bytes(td: TileData, *, ref64: bool = False) -> bytes:
    """Serialise a :class:`TileData` as a Detour tile blob (``dtCreateNavMeshData`` layout)."""
    h = np.zeros(1, _HEADER)
    h["magic"] = NAVMESH_MAGIC
    h["version"] = NAVMESH_VERSION
    h["x"], h["y"], h["layer"], h["userId"] = td.x, td.y, td.layer, td.user_id
    h["polyCount"], h["vertCount"], h["maxLinkCount"] = (
        td.poly_count,
        td.vert_count,
        td.max_link_count,
    )
    h["detailMeshCount"] = td.detail_mesh_count
    h["detailVertCount"] = int(td.detail_verts.shape[0])
    h["detailTriCount"] = int(td.detail_tris.shape[0])
    h["bvNodeCount"], h["offMeshConCount"] = td.bv_node_count, td.off_mesh_con_count
    h["offMeshBase"] = td.off_mesh_base
    h["walkableHeight"], h["walkableRadius"] = td.walkable_height, td.walkable_radius
    h["walkableClimb"] = td.walkable_climb
    h["bmin"], h["bmax"], h["bvQuantFactor"] = td.bmin, td.bmax, td.bv_quant_factor
    polys = np.zeros(td.poly_count, _POLY)
    polys["firstLink"] = td.poly_first_link
    polys["verts"] = td.poly_verts
    polys["neis"] = td.poly_neis
    polys["flags"] = td.poly_flags
    polys["vertCount"] = td.poly_vert_count
    polys["areaAndtype"] = (td.poly_area & 0x3F) | (td.poly_type.astype(np.uint8) << 6)
    links = np.zeros(td.max_link_count, _LINK64 if ref64 else _LINK32)
    links["ref"] = td.link_ref
    links["next"] = td.link_next
    for f in ("edge", "side", "bmin", "bmax"):
        links[f] = getattr(td, f"link_{f}")
    det = np.zeros(td.detail_mesh_count, _DETAIL)
    det["vertBase"], det["triBase"] = td.detail_vert_base, td.detail_tri_base
    det["vertCount"], det["triCount"] = td.detail_vert_count, td.detail_tri_count
    bv = np.zeros(td.bv_node_count, _BV)
    bv["bmin"], bv["bmax"], bv["i"] = td.bv_bmin, td.bv_bmax, td.bv_i
    off = np.zeros(td.off_mesh_con_count, _OFFMESH)
    off["pos"], off["rad"], off["poly"] = td.off_pos, td.off_rad, td.off_poly
    off["flags"], off["side"], off["userId"] = td.off_flags, td.off_side, td.off_user_id
    parts = [
        h.tobytes(),
        np.asarray(td.verts, "<f4").tobytes(),
        polys.tobytes(),
        links.tobytes(),
        det.tobytes(),
        np.asarray(td.detail_verts, "<f4").tobytes(),
        np.asarray(td.detail_tris, "u1").tobytes(),
        bv.tobytes(),
        off.tobytes(),
    ]
    return b"".join(p + b"\0" * (-len(p) % 4) for p in parts)


def _read_source(src) -> tuple[bytes, str]:
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src), "data"
    p = Path(os.fspath(src))
    try:
        return p.read_bytes(), str(p)
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None


def navmesh_from_recast(src) -> NavMesh:
    """Load a navmesh set (``'MSET'`` v1, 32- or 64-bit refs) or one Detour tile blob.

    Parameters
    ----------
    src : path or bytes

    Raises
    ------
    FormatError
        Corrupt, truncated, foreign or unsupported data.
    """
    data, what = _read_source(src)
    if len(data) < 4:
        raise FormatError(f"{what}: {len(data)} bytes is too short for a navmesh file")
    magic = struct.unpack_from("<i", data, 0)[0]
    if magic == NAVMESH_MAGIC:
        td = tile_from_bytes(data, what=what)
        params = NavMeshParams(
            (float(td.bmin[0]), float(td.bmin[1]), float(td.bmin[2])),
            float(np.float32(td.bmax[0] - td.bmin[0])),
            float(np.float32(td.bmax[2] - td.bmin[2])),
            1,
            max(td.poly_count, 1),
        )
        nm = _new_navmesh(params, False, what)
        _add(nm, td, 0, what)
        nm._source_kind = "tile"  # type: ignore[attr-defined]
        return nm
    if magic == 0x54534554:  # 'TSET'
        raise FormatError(
            f"{what}: a tile cache set (TSET), not a navmesh set; use navkit.tilecache"
        )
    if magic != MSET_MAGIC:
        raise FormatError(f"{what}: not a Recast navmesh set (magic {magic & 0xFFFFFFFF:#010x})")
    if len(data) < 40:
        raise FormatError(f"{what}: truncated navmesh set header ({len(data)} of 40 bytes)")
    _, version, ntiles = struct.unpack_from("<3i", data, 0)
    if version != MSET_VERSION:
        raise FormatError(f"{what}: navmesh set version {version}, expected {MSET_VERSION}")
    ox, oy, oz, tw, th = struct.unpack_from("<5f", data, 12)
    max_tiles, max_polys = struct.unpack_from("<2i", data, 32)
    if ntiles < 0 or ntiles > max(max_tiles, 0):
        raise FormatError(f"{what}: {ntiles} tiles for maxTiles {max_tiles}")
    if not (1 <= max_tiles <= MAX_FILE_TILES) or max_polys < 1:
        raise FormatError(f"{what}: impossible params maxTiles={max_tiles} maxPolys={max_polys}")
    if not all(np.isfinite([ox, oy, oz, tw, th])):
        raise FormatError(f"{what}: non-finite navmesh params")
    ref64 = _detect_ref64(data, ntiles)
    params = NavMeshParams((ox, oy, oz), tw, th, max_tiles, max_polys)
    nm = _new_navmesh(params, ref64, what)
    pos = 40
    rec = 16 if ref64 else 8
    for i in range(ntiles):
        if pos + rec > len(data):
            raise FormatError(f"{what}: truncated at tile record {i} (offset {pos})")
        if ref64:
            ref, size = struct.unpack_from("<Qi", data, pos)
            pad = data[pos + 12 : pos + 16]
        else:
            ref, size = struct.unpack_from("<Ii", data, pos)
            pad = b""
        pos += rec
        if not ref or not size:
            break
        if size < 0 or pos + size > len(data):
            raise FormatError(
                f"{what}: tile record {i} claims {size} bytes, {len(data) - pos} left"
            )
        td = tile_from_bytes(data[pos : pos + size], ref64=ref64, what=f"{what}: tile {i}")
        pos += size
        slot = _add(nm, td, ref, f"{what}: tile {i}")
        if ref64:
            nm._record_pad[slot] = pad
    if pos != len(data):
        raise FormatError(f"{what}: {len(data) - pos} unexpected bytes after the last tile")
    nm._source_kind = "set"  # type: ignore[attr-defined]
    return nm


def _detect_ref64(data: bytes, ntiles: int) -> bool:
    if ntiles == 0 or len(data) < 60:
        return False
    m32 = struct.unpack_from("<i", data, 48)[0]
    m64 = struct.unpack_from("<i", data, 56)[0]
    if m32 == NAVMESH_MAGIC:
        return False
    if m64 == NAVMESH_MAGIC:
        return True
    return False


def _new_navmesh(params: NavMeshParams, ref64: bool, what: str) -> NavMesh:
    try:
        return NavMesh(params, ref64=ref64)
    except ConfigError as exc:
        raise FormatError(f"{what}: {exc}") from None


def _add(nm: NavMesh, td: TileData, ref: int, what: str) -> int:
    try:
        tref = nm.add_tile(td, tile_ref=ref or None)
    except InputError as exc:
        raise FormatError(f"{what}: {exc}") from None
    return nm.decode_ref(tref)[1]


def navmesh_to_recast(nm: NavMesh, path=None) -> bytes:
    """Serialise as a navmesh set (``exportNavMesh``); written atomically when ``path`` is given."""
    slots = nm.tile_slots()
    p = nm.params
    out = [
        struct.pack("<3i", MSET_MAGIC, MSET_VERSION, len(slots)),
        struct.pack("<5f2i", *p.orig, p.tile_width, p.tile_height, p.max_tiles, p.max_polys),
    ]
    for s in slots:
        blob = tile_to_bytes(nm.tile_data(s), ref64=nm.ref64)
        ref = nm.tile_ref(s)
        if nm.ref64:
            out.append(struct.pack("<Qi", ref, len(blob)) + nm._record_pad.get(s, b"\0\0\0\0"))
        else:
            out.append(struct.pack("<Ii", ref, len(blob)))
        out.append(blob)
    data = b"".join(out)
    if path is not None:
        atomic_write_bytes(path, data)
    return data
