"""One Detour tile as numpy arrays, and its creation from Recast's meshes.

:class:`TileData` mirrors the sections of a Detour tile blob (``dtMeshHeader``,
verts, ``dtPoly``, ``dtLink``, ``dtPolyDetail``, detail verts and tris,
``dtBVNode``, ``dtOffMeshConnection``; see ``shared/peer/FORMAT.md`` section 4)
with tile-local indices, exactly as stored in the blob.

:func:`create_navmesh_data` is Detour's ``dtCreateNavMeshData``: it converts the
``rcPolyMesh`` voxel vertices to world units (``bmin + v * (cs, ch, cs)`` in
float32), turns Recast's portal neighbour codes into ``DT_EXT_LINK | side``,
keeps only the *extra* detail vertices of each polygon (the first ``nverts`` of
every ``rcPolyMeshDetail`` sub-mesh repeat the polygon's corners), builds the
bounding-volume tree (median split along the longest axis, sorted with the
same ``qsort`` as the Recast peer, musl's smoothsort, so ties fall the same
way) and classifies and stores the off-mesh connections whose start point lies
inside the tile. The link section is left empty (``NavMesh.add_tile`` builds
the links) but sized as Detour sizes it:
``edges + 2 * portal_edges + 2 * off_mesh_endpoints_inside``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from ..errors import InputError
from ..recast.types import PolyMesh, PolyMeshDetail
from ._bvtree import _quantize_detail, _subdivide
from ._bvtree import build_bv_tree as _build_bv_tree

__all__ = [
    "TileData",
    "OffMeshConnections",
    "create_navmesh_data",
    "VERTS_PER_POLYGON",
    "EXT_LINK",
    "NULL_LINK",
    "POLYTYPE_GROUND",
    "POLYTYPE_OFFMESH",
    "OFFMESH_CON_BIDIR",
]

VERTS_PER_POLYGON = 6  #: DT_VERTS_PER_POLYGON
EXT_LINK = 0x8000  #: DT_EXT_LINK: neighbour code flag of a tile-border portal edge
NULL_LINK = 0xFFFFFFFF  #: DT_NULL_LINK
POLYTYPE_GROUND = 0  #: DT_POLYTYPE_GROUND
POLYTYPE_OFFMESH = 1  #: DT_POLYTYPE_OFFMESH_CONNECTION
OFFMESH_CON_BIDIR = 1  #: DT_OFFMESH_CON_BIDIR


class TileData(NamedTuple):
    """One Detour tile (``dtCreateNavMeshData`` output), tile-local indices.

    Attributes
    ----------
    x, y, layer : int
        Tile grid location (``y`` is along world z) and layer.
    user_id : int
        ``dtMeshHeader::userId``.
    walkable_height, walkable_radius, walkable_climb : float
        Agent settings stored in the header [wu] (float32 values).
    bmin, bmax : (3,) float32
        Tile bounds [wu].
    bv_quant_factor : float
        ``1 / cs``: world units -> BV-tree quantised units.
    off_mesh_base : int
        Index of the first off-mesh polygon (= number of ground polygons).
    verts : (nv, 3) float32
        Polygon vertices [wu]; the last ``2 * n_offmesh`` are off-mesh endpoints.
    poly_first_link : (np,) uint32
        ``dtPoly::firstLink`` (runtime state; ``NULL_LINK`` = none).
    poly_verts : (np, 6) uint16
        Vertex indices; entries past ``poly_vert_count`` are padding (0).
    poly_neis : (np, 6) uint16
        Per edge: 0 wall, ``i + 1`` internal neighbour ``i``, ``EXT_LINK | side`` portal.
    poly_flags : (np,) uint16
    poly_vert_count : (np,) uint8
    poly_area : (np,) uint8
        Area id, 0..63.
    poly_type : (np,) uint8
        ``POLYTYPE_GROUND`` or ``POLYTYPE_OFFMESH``.
    link_ref : (nl,) uint64
        ``dtLink::ref`` (runtime state; ``nl`` = ``maxLinkCount``, the capacity).
    link_next : (nl,) uint32
    link_edge, link_side, link_bmin, link_bmax : (nl,) uint8
    detail_vert_base, detail_tri_base : (nd,) uint32
        ``dtPolyDetail`` per ground polygon: first extra detail vertex / triangle.
    detail_vert_count, detail_tri_count : (nd,) uint8
    detail_verts : (ndv, 3) float32
        Extra detail vertices [wu].
    detail_tris : (ndt, 4) uint8
        Local vertex indices (``< poly_vert_count``: polygon vertex, else extra
        detail vertex) and edge flags.
    bv_bmin, bv_bmax : (nb, 3) uint16
        Quantised node bounds.
    bv_i : (nb,) int32
        ``>= 0`` leaf (ground polygon index), ``< 0`` minus the escape offset.
    off_pos : (no, 6) float32
        Off-mesh connection start and end [wu].
    off_rad : (no,) float32
        Endpoint radius [wu].
    off_poly : (no,) uint16
        The connection's polygon index.
    off_flags : (no,) uint8
        ``OFFMESH_CON_BIDIR`` or 0.
    off_side : (no,) uint8
        Side of the end point (0xFF inside this tile, else 0..7).
    off_user_id : (no,) uint32
    """

    x: int
    y: int
    layer: int
    user_id: int
    walkable_height: float
    walkable_radius: float
    walkable_climb: float
    bmin: np.ndarray
    bmax: np.ndarray
    bv_quant_factor: float
    off_mesh_base: int
    verts: np.ndarray
    poly_first_link: np.ndarray
    poly_verts: np.ndarray
    poly_neis: np.ndarray
    poly_flags: np.ndarray
    poly_vert_count: np.ndarray
    poly_area: np.ndarray
    poly_type: np.ndarray
    link_ref: np.ndarray
    link_next: np.ndarray
    link_edge: np.ndarray
    link_side: np.ndarray
    link_bmin: np.ndarray
    link_bmax: np.ndarray
    detail_vert_base: np.ndarray
    detail_tri_base: np.ndarray
    detail_vert_count: np.ndarray
    detail_tri_count: np.ndarray
    detail_verts: np.ndarray
    detail_tris: np.ndarray
    bv_bmin: np.ndarray
    bv_bmax: np.ndarray
    bv_i: np.ndarray
    off_pos: np.ndarray
    off_rad: np.ndarray
    off_poly: np.ndarray
    off_flags: np.ndarray
    off_side: np.ndarray
    off_user_id: np.ndarray

    @property
    def poly_count(self) -> int:
        return int(self.poly_verts.shape[0])

    @property
    def vert_count(self) -> int:
        return int(self.verts.shape[0])

    @property
    def max_link_count(self) -> int:
        return int(self.link_ref.shape[0])

    @property
    def detail_mesh_count(self) -> int:
        return int(self.detail_vert_base.shape[0])

    @property
    def bv_node_count(self) -> int:
        return int(self.bv_i.shape[0])

    @property
    def off_mesh_con_count(self) -> int:
        return int(self.off_rad.shape[0])

    def equals(self, other: TileData) -> bool:
        """Field-by-field equality (arrays compared exactly, including float bits)."""
        return first_difference(self, other) is None


#: dtype of every array field of :class:`TileData`.
TILE_DTYPES: dict[str, Any] = {
    "bmin": np.float32,
    "bmax": np.float32,
    "verts": np.float32,
    "poly_first_link": np.uint32,
    "poly_verts": np.uint16,
    "poly_neis": np.uint16,
    "poly_flags": np.uint16,
    "poly_vert_count": np.uint8,
    "poly_area": np.uint8,
    "poly_type": np.uint8,
    "link_ref": np.uint64,
    "link_next": np.uint32,
    "link_edge": np.uint8,
    "link_side": np.uint8,
    "link_bmin": np.uint8,
    "link_bmax": np.uint8,
    "detail_vert_base": np.uint32,
    "detail_tri_base": np.uint32,
    "detail_vert_count": np.uint8,
    "detail_tri_count": np.uint8,
    "detail_verts": np.float32,
    "detail_tris": np.uint8,
    "bv_bmin": np.uint16,
    "bv_bmax": np.uint16,
    "bv_i": np.int32,
    "off_pos": np.float32,
    "off_rad": np.float32,
    "off_poly": np.uint16,
    "off_flags": np.uint8,
    "off_side": np.uint8,
    "off_user_id": np.uint32,
}


def _zero_links(n: int) -> dict[str, np.ndarray]:
    """A new tile's link pool: ``n`` unused links (addTile links them)."""
    return {
        "link_ref": np.zeros(n, np.uint64),
        "link_next": np.zeros(n, np.uint32),
        "link_edge": np.zeros(n, np.uint8),
        "link_side": np.zeros(n, np.uint8),
        "link_bmin": np.zeros(n, np.uint8),
        "link_bmax": np.zeros(n, np.uint8),
    }


def first_difference(a: TileData, b: TileData) -> str | None:
    """Name of the first field where two tiles differ (with the first row), or None.

    Float arrays are compared bit for bit.
    """
    for name in TileData._fields:
        va, vb = getattr(a, name), getattr(b, name)
        if isinstance(va, np.ndarray) or isinstance(vb, np.ndarray):
            va, vb = np.asarray(va), np.asarray(vb)
            if va.shape != vb.shape:
                return f"{name}: shape {va.shape} != {vb.shape}"
            if va.size == 0:
                continue
            if va.dtype.kind == "f":
                va = va.astype(np.float32).view(np.uint32)
                vb = vb.astype(np.float32).view(np.uint32)
            rows = (va != vb).reshape(va.shape[0], -1).any(axis=1)
            if rows.any():
                i = int(np.argmax(rows))
                return f"{name}[{i}]: {getattr(a, name)[i]} != {getattr(b, name)[i]}"
        elif isinstance(va, float) or isinstance(vb, float):
            if np.float32(va).view(np.uint32) != np.float32(vb).view(np.uint32):
                return f"{name}: {va} != {vb}"
        elif va != vb:
            return f"{name}: {va} != {vb}"
    return None


class OffMeshConnections(NamedTuple):
    """Off-mesh connections given to :func:`create_navmesh_data` (Detour's create params).

    Attributes
    ----------
    verts : (n, 6) float32
        Start xyz, end xyz [wu].
    rad : (n,) float32
        Endpoint radius [wu].
    bidirectional : (n,) bool
    area : (n,) uint8
    flags : (n,) uint16
    user_id : (n,) uint32
    """

    verts: np.ndarray
    rad: np.ndarray
    bidirectional: np.ndarray
    area: np.ndarray
    flags: np.ndarray
    user_id: np.ndarray

    @classmethod
    def from_dicts(cls, items: list[dict]) -> OffMeshConnections:
        """From the peer's JSON form: ``{"start", "end", "radius", "bidirectional",
        "area", "flags", "userId"?}`` (``userId`` defaults to ``1000 + i``)."""
        n = len(items)
        verts = np.zeros((n, 6), np.float32)
        rad = np.zeros(n, np.float32)
        bidir = np.zeros(n, bool)
        area = np.zeros(n, np.uint8)
        flags = np.zeros(n, np.uint16)
        uid = np.zeros(n, np.uint32)
        try:
            for i, c in enumerate(items):
                verts[i, :3] = c["start"]
                verts[i, 3:] = c["end"]
                rad[i] = c["radius"]
                bidir[i] = bool(c.get("bidirectional", True))
                area[i] = int(c.get("area", 0))
                flags[i] = int(c.get("flags", 0))
                uid[i] = int(c.get("userId", c.get("user_id", 1000 + i)))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"off-mesh connection {i}: {exc}") from None
        return cls(verts, rad, bidir, area, flags, uid)


def _classify_off_mesh_point(p: np.ndarray, bmin: np.ndarray, bmax: np.ndarray) -> int:
    """Side of a point outside the tile's xz bounds (0..7), 0xFF when inside."""
    code = 0
    if p[0] >= bmax[0]:
        code |= 1
    if p[2] >= bmax[2]:
        code |= 2
    if p[0] < bmin[0]:
        code |= 4
    if p[2] < bmin[2]:
        code |= 8
    return {1: 0, 3: 1, 2: 2, 6: 3, 4: 4, 12: 5, 8: 6, 9: 7}.get(code, 0xFF)


@njit
def _poly_core_kernel(pverts, polys, nvp, bmin, cs, ch, tot_verts, tot_polys):  # pragma: no cover
    """Vertices [wu], Detour polygon rows and counts of a tile, in one pass.

    Returns ``verts (tot_verts, 3) float32``, ``poly_verts`` / ``poly_neis``
    ``(tot_polys, 6) uint16``, ``nv_per (np,) int64`` (leading non-null indices),
    ``portal_count`` and an error code (1: a polygon with fewer than 3 vertices,
    2: a vertex index out of range).
    """
    nverts = pverts.shape[0]
    npolys = polys.shape[0]
    verts = np.zeros((tot_verts, 3), np.float32)
    for i in range(nverts):
        verts[i, 0] = bmin[0] + np.float32(pverts[i, 0]) * cs
        verts[i, 1] = bmin[1] + np.float32(pverts[i, 1]) * ch
        verts[i, 2] = bmin[2] + np.float32(pverts[i, 2]) * cs
    poly_verts = np.zeros((tot_polys, 6), np.uint16)
    poly_neis = np.zeros((tot_polys, 6), np.uint16)
    nv_per = np.zeros(npolys, np.int64)
    portal_count = 0
    err = 0
    for i in range(npolys):
        n = 0
        while n < nvp and polys[i, n] != 0xFFFF:
            n += 1
        nv_per[i] = n
        if n < 3:
            err = 1
        for j in range(n):
            v = polys[i, j]
            if v >= nverts and err == 0:
                err = 2
            poly_verts[i, j] = v
            raw = np.int64(polys[i, nvp + j])
            if raw & 0x8000:
                d = raw & 0xF
                if d != 0xF:
                    portal_count += 1
                    side = 6 if d >= 3 else (4, 2, 0)[d]
                    poly_neis[i, j] = 0x8000 | side
            else:
                poly_neis[i, j] = (raw + 1) & 0xFFFF
    return verts, poly_verts, poly_neis, nv_per, portal_count, err


@njit
def _detail_extra_kernel(first, extra, dv):  # pragma: no cover - numba
    """The extra (non-corner) detail vertices of every sub-mesh, in polygon order."""
    out = np.empty((extra.sum(), 3), np.float32)
    k = 0
    for i in range(first.shape[0]):
        for j in range(extra[i]):
            out[k, 0] = dv[first[i] + j, 0]
            out[k, 1] = dv[first[i] + j, 1]
            out[k, 2] = dv[first[i] + j, 2]
            k += 1
    return out


@njit(link=False)
def _tile_kernel(pverts, polys, nvp, bmin, cs, ch, pareas, pflags, dm, dv, dt):  # pragma: no cover
    """:func:`create_navmesh_data`'s common case in one call: default area remap and
    flags, a detail mesh, a BV tree, no off-mesh connection.

    Returns the tile's arrays (as :func:`create_navmesh_data` stores them), the
    link count and an error code (1, 2: :func:`_poly_core_kernel`'s; 3: an area
    above 63; 4: a sub-mesh range out of bounds; 5: a sub-mesh with fewer verts
    than its polygon).
    """
    nverts = pverts.shape[0]
    npolys = polys.shape[0]
    verts, poly_verts, poly_neis, nv_per, portal_count, err = _poly_core_kernel(
        pverts, polys, nvp, bmin, cs, ch, nverts, npolys
    )
    areas = np.empty(npolys, np.uint8)
    flags = np.empty(npolys, np.uint16)
    vcount = np.empty(npolys, np.uint8)
    edges = 0
    ndv = dv.shape[0]
    ndt = dt.shape[0]
    dmi = np.empty((npolys, 4), np.int64)
    d_vert_base = np.zeros(npolys, np.uint32)
    d_vert_count = np.empty(npolys, np.uint8)
    d_tri_base = np.empty(npolys, np.uint32)
    d_tri_count = np.empty(npolys, np.uint8)
    first = np.empty(npolys, np.int64)
    extra = np.empty(npolys, np.int64)
    acc = 0
    bad_area = False
    bad_range = False
    bad_few = False
    for i in range(npolys):
        a = pareas[i]
        if a == 63:
            a = np.uint8(0)
        if a > 63:
            bad_area = True
        areas[i] = a
        flags[i] = 1 if a == 0 else pflags[i]
        n = nv_per[i]
        vcount[i] = n
        edges += n
        for k in range(4):
            dmi[i, k] = np.int64(dm[i, k])
        if dmi[i, 0] + dmi[i, 1] > ndv or dmi[i, 2] + dmi[i, 3] > ndt:
            bad_range = True
        if dmi[i, 1] < n:
            bad_few = True
        e = dmi[i, 1] - n
        extra[i] = e
        first[i] = dmi[i, 0] + n
        d_vert_base[i] = acc & 0xFFFF
        acc += e
        d_vert_count[i] = e
        d_tri_base[i] = dmi[i, 2]
        d_tri_count[i] = dmi[i, 3]
    if err == 0:
        if bad_area:
            err = 3
        elif bad_range:
            err = 4
        elif bad_few:
            err = 5
    if err != 0:
        detail_verts = np.zeros((0, 3), np.float32)
    else:
        detail_verts = _detail_extra_kernel(first, extra, dv)
    detail_tris = dt.copy()
    qf = np.float32(np.float32(1.0) / cs)
    ibmin = np.zeros((npolys, 3), np.int64)
    ibmax = np.zeros((npolys, 3), np.int64)
    if err == 0 and npolys > 0:
        _quantize_detail(dmi, dv, bmin, qf, ibmin, ibmax)
    links = edges + 2 * portal_count
    # the BV tree itself is the caller's _subdivide call: linked in here, its sort
    # would be compiled a second time (cold compile)
    return (
        verts, poly_verts, poly_neis, areas, flags, vcount, d_vert_base, d_vert_count,
        d_tri_base, d_tri_count, detail_verts, detail_tris, ibmin, ibmax, links, err,
    )  # fmt: skip


_TILE_ERRORS = {
    1: "polygon with fewer than 3 vertices",
    2: "polygon vertex index out of range",
    3: "areas must be (np,) values 0..63",
    4: "detail mesh: sub-mesh ranges out of bounds",
    5: "detail mesh: a sub-mesh has fewer verts than its polygon",
}


def _no_offmesh(offmesh: Any) -> bool:
    if offmesh is None:
        return True
    if isinstance(offmesh, OffMeshConnections):
        return len(offmesh.rad) == 0
    return isinstance(offmesh, list | tuple) and len(offmesh) == 0


def _common_arrays(pmesh: PolyMesh, dmesh: PolyMeshDetail, npolys: int) -> bool:
    """The arrays :func:`_tile_kernel` is compiled for (what the bake produces)."""
    a, f = pmesh.areas, pmesh.flags
    dm, dv, dt = dmesh.meshes, dmesh.verts, dmesh.tris
    return (
        isinstance(a, np.ndarray) and a.dtype == np.uint8 and a.shape == (npolys,)
        and isinstance(f, np.ndarray) and f.dtype == np.uint16 and f.shape == (npolys,)
        and isinstance(dm, np.ndarray) and dm.dtype == np.uint32 and dm.shape == (npolys, 4)
        and isinstance(dv, np.ndarray) and dv.dtype == np.float32 and dv.ndim == 2
        and dv.shape[1] == 3 and dv.flags.c_contiguous
        and isinstance(dt, np.ndarray) and dt.dtype == np.uint8 and dt.ndim == 2
        and dt.shape[1] == 4 and dt.flags.c_contiguous
    )  # fmt: skip


def _create_common(
    pverts, polys, pmesh, dmesh, nvp, wh, wr, wc, tile_x, tile_y, layer, user_id
) -> TileData:
    """:func:`create_navmesh_data` through :func:`_tile_kernel` (checked arrays)."""
    wh, wr, wc = np.float32(wh), np.float32(wr), np.float32(wc)
    cs = np.float32(pmesh.cs)
    ch = np.float32(pmesh.ch)
    bmin = np.asarray(pmesh.bmin, np.float32).copy()
    bmax = np.asarray(pmesh.bmax, np.float32).copy()
    (
        verts, poly_verts, poly_neis, areas, pflags, vcount, d_vert_base, d_vert_count,
        d_tri_base, d_tri_count, detail_verts, detail_tris, ibmin, ibmax, links, err,
    ) = _tile_kernel(
        pverts, polys, nvp, bmin, cs, ch, pmesh.areas, pmesh.flags, dmesh.meshes, dmesh.verts,
        dmesh.tris,
    )  # fmt: skip
    if err:
        raise InputError(_TILE_ERRORS[int(err)])
    npolys = polys.shape[0]
    bv_bmin = np.zeros((2 * npolys, 3), np.uint16)
    bv_bmax = np.zeros((2 * npolys, 3), np.uint16)
    bv_i = np.zeros(2 * npolys, np.int32)
    _subdivide(ibmin, ibmax, npolys, bv_bmin, bv_bmax, bv_i)
    links = int(links)
    return TileData(
        x=int(tile_x),
        y=int(tile_y),
        layer=int(layer),
        user_id=int(user_id) & 0xFFFFFFFF,
        walkable_height=float(wh),
        walkable_radius=float(wr),
        walkable_climb=float(wc),
        bmin=bmin,
        bmax=bmax,
        bv_quant_factor=float(np.float32(np.float32(1.0) / cs)),
        off_mesh_base=npolys,
        verts=verts,
        poly_first_link=np.zeros(npolys, np.uint32),
        poly_verts=poly_verts,
        poly_neis=poly_neis,
        poly_flags=pflags,
        poly_vert_count=vcount,
        poly_area=areas,
        poly_type=np.zeros(npolys, np.uint8),
        **_zero_links(links),
        detail_vert_base=d_vert_base,
        detail_tri_base=d_tri_base,
        detail_vert_count=d_vert_count,
        detail_tri_count=d_tri_count,
        detail_verts=detail_verts,
        detail_tris=detail_tris,
        bv_bmin=bv_bmin,
        bv_bmax=bv_bmax,
        bv_i=bv_i,
        off_pos=np.zeros((0, 6), np.float32),
        off_rad=np.zeros(0, np.float32),
        off_poly=np.zeros(0, np.uint16),
        off_flags=np.zeros(0, np.uint8),
        off_side=np.zeros(0, np.uint8),
        off_user_id=np.zeros(0, np.uint32),
    )


def _area_remap_default(areas: np.ndarray) -> np.ndarray:
    """The Recast generators' remap: RC_WALKABLE_AREA (63) becomes area 0."""
    out = areas.astype(np.uint8).copy()
    out[out == 63] = 0
    return out


def create_navmesh_data(
    pmesh: PolyMesh,
    dmesh: PolyMeshDetail | None,
    *,
    walkable_height: float,
    walkable_radius: float,
    walkable_climb: float,
    tile_x: int = 0,
    tile_y: int = 0,
    layer: int = 0,
    user_id: int = 0,
    offmesh: OffMeshConnections | list[dict] | None = None,
    build_bv_tree: bool = True,
    area_remap: Any = "recast",
    flags: Any = "recast",
) -> TileData:
    """Detour's ``dtCreateNavMeshData``: one tile from Recast's polygon and detail meshes.

    Parameters
    ----------
    pmesh : PolyMesh
        Recast's polygon mesh (voxel vertices, ``nvp <= 6``).
    dmesh : PolyMeshDetail or None
        Recast's detail mesh; None gives Detour's fan triangulation.
    walkable_height, walkable_radius, walkable_climb : float
        Stored in the header [wu]; ``walkable_climb`` also widens the height range
        for off-mesh start points.
    tile_x, tile_y, layer, user_id : int
        Header fields.
    offmesh : OffMeshConnections or list of dict, optional
        All off-mesh connections; those whose start lies in this tile are stored.
    build_bv_tree : bool
        Build the BV tree (``2 * npolys`` nodes).
    area_remap : "recast", None, callable or (64,) array
        Polygon areas. ``"recast"`` (default) is the Recast generators' remap
        (63 -> 0, see the peer README "Differences from RecastDemo"); None keeps
        ``pmesh.areas``; a callable maps the area array; an array is a lookup table.
    flags : "recast", None, int or (np,) array
        Polygon flags. ``"recast"`` (default) is the generators' rule: 1 where the
        (remapped) area is 0, else ``pmesh.flags``; None keeps ``pmesh.flags``.

    Returns
    -------
    TileData
    """
    nvp = int(pmesh.nvp)
    if nvp > VERTS_PER_POLYGON or nvp < 3:
        raise InputError(f"nvp {nvp}: Detour supports 3..{VERTS_PER_POLYGON} verts per polygon")
    pverts = np.asarray(pmesh.verts)
    polys = np.asarray(pmesh.polys)
    nverts = int(pverts.shape[0])
    npolys = int(polys.shape[0])
    if nverts == 0 or npolys == 0:
        raise InputError("empty polygon mesh")
    if nverts >= 0xFFFF:
        raise InputError(f"{nverts} vertices: Detour tiles hold fewer than 65535")
    if pverts.ndim != 2 or pverts.shape[1] != 3 or polys.shape != (npolys, 2 * nvp):
        raise InputError("polymesh verts must be (nv, 3) and polys (np, 2*nvp)")
    polys = np.ascontiguousarray(polys, np.uint16)
    pverts = np.ascontiguousarray(pverts, np.uint16)
    if (
        dmesh is not None
        and build_bv_tree
        and _no_offmesh(offmesh)
        and isinstance(area_remap, str)
        and area_remap == "recast"
        and isinstance(flags, str)
        and flags == "recast"
        and _common_arrays(pmesh, dmesh, npolys)
    ):
        return _create_common(
            pverts, polys, pmesh, dmesh, nvp, walkable_height, walkable_radius, walkable_climb,
            tile_x, tile_y, layer, user_id,
        )  # fmt: skip
    cs = np.float32(pmesh.cs)
    ch = np.float32(pmesh.ch)
    bmin = np.asarray(pmesh.bmin, np.float32).copy()
    bmax = np.asarray(pmesh.bmax, np.float32).copy()
    # Detour stops at the first null index of each polygon.
    verts, poly_verts, poly_neis, nv_per, portal_count, err = _poly_core_kernel(
        pverts, polys, nvp, bmin, cs, ch, nverts, npolys
    )
    if err == 1:
        raise InputError("polygon with fewer than 3 vertices")
    if err == 2:
        raise InputError("polygon vertex index out of range")
    wh, wr, wc = (
        np.float32(walkable_height),
        np.float32(walkable_radius),
        np.float32(walkable_climb),
    )

    # Areas and flags.
    areas_in = np.asarray(pmesh.areas, np.uint8)
    if isinstance(area_remap, str) and area_remap == "recast":
        areas = _area_remap_default(areas_in)
    elif area_remap is None:
        areas = areas_in.copy()
    elif callable(area_remap):
        areas = np.asarray(area_remap(areas_in.copy()), np.uint8)
    else:
        lut = np.asarray(area_remap, np.uint8)
        if lut.shape != (64,):
            raise InputError("area_remap array must be a (64,) lookup table")
        areas = lut[areas_in & 0x3F]
    if isinstance(flags, str) and flags == "recast":
        pflags = np.asarray(pmesh.flags, np.uint16).copy()
        pflags[areas == 0] = 1
    elif flags is None:
        pflags = np.asarray(pmesh.flags, np.uint16).copy()
    elif np.ndim(flags) == 0:
        pflags = np.full(npolys, int(flags), np.uint16)
    else:
        pflags = np.asarray(flags, np.uint16)
        if pflags.shape != (npolys,):
            raise InputError("flags must have one entry per polygon")
    if areas.shape != (npolys,) or (areas > 63).any():
        raise InputError("areas must be (np,) values 0..63")

    # Detail mesh checks.
    if dmesh is not None:
        dm = np.asarray(dmesh.meshes).astype(np.int64)
        dv = np.asarray(dmesh.verts, np.float32)
        dt = np.asarray(dmesh.tris, np.uint8)
        if (
            dm.shape != (npolys, 4)
            or dv.ndim != 2
            or dv.shape[1] != 3
            or dt.ndim != 2
            or dt.shape[1] != 4
        ):
            raise InputError("detail mesh: meshes (np, 4), verts (n, 3), tris (n, 4) expected")
        if (dm[:, 0] + dm[:, 1] > dv.shape[0]).any() or (dm[:, 2] + dm[:, 3] > dt.shape[0]).any():
            raise InputError("detail mesh: sub-mesh ranges out of bounds")
        if (dm[:, 1] < nv_per).any():
            raise InputError("detail mesh: a sub-mesh has fewer verts than its polygon")
    else:
        dm = dv = dt = None  # type: ignore[assignment]

    # Off-mesh connections.
    if offmesh is not None and not isinstance(offmesh, OffMeshConnections):
        offmesh = OffMeshConnections.from_dicts(list(offmesh))
    stored: list[int] = []
    end_side: list[int] = []
    link_endpoints = 0
    if offmesh is not None and len(offmesh.rad):
        if dv is not None and dv.shape[0]:
            hmin = np.float32(dv[:, 1].min())
            hmax = np.float32(dv[:, 1].max())
        else:
            hs = bmin[1] + pverts[:, 1].astype(np.float32) * ch
            hmin, hmax = np.float32(hs.min()), np.float32(hs.max())
        hmin = np.float32(hmin - wc)
        hmax = np.float32(hmax + wc)
        ov = np.asarray(offmesh.verts, np.float32)
        for i in range(ov.shape[0]):
            p0, p1 = ov[i, :3], ov[i, 3:]
            c0 = _classify_off_mesh_point(p0, bmin, bmax)
            c1 = _classify_off_mesh_point(p1, bmin, bmax)
            if c0 == 0xFF and (p0[1] < hmin or p0[1] > hmax):
                c0 = 0
            link_endpoints += (c0 == 0xFF) + (c1 == 0xFF)
            if c0 == 0xFF:
                stored.append(i)
                end_side.append(c1)
    nstored = len(stored)

    # Counts.
    edge_count = int(nv_per.sum())
    max_link_count = edge_count + 2 * portal_count + 2 * link_endpoints
    tot_polys = npolys + nstored
    if nstored:  # room for the off-mesh connections' vertices and polygons
        verts = np.concatenate([verts, np.zeros((2 * nstored, 3), np.float32)])
        poly_verts = np.concatenate([poly_verts, np.zeros((nstored, 6), np.uint16)])
        poly_neis = np.concatenate([poly_neis, np.zeros((nstored, 6), np.uint16)])
    poly_flags = np.zeros(tot_polys, np.uint16)
    poly_flags[:npolys] = pflags
    poly_area = np.zeros(tot_polys, np.uint8)
    poly_area[:npolys] = areas
    poly_type = np.zeros(tot_polys, np.uint8)
    poly_vcount = np.zeros(tot_polys, np.uint8)
    poly_vcount[:npolys] = nv_per

    off_pos = np.zeros((nstored, 6), np.float32)
    off_rad = np.zeros(nstored, np.float32)
    off_poly = np.zeros(nstored, np.uint16)
    off_flags = np.zeros(nstored, np.uint8)
    off_side = np.zeros(nstored, np.uint8)
    off_uid = np.zeros(nstored, np.uint32)
    for n, i in enumerate(stored):
        assert offmesh is not None
        ov = np.asarray(offmesh.verts, np.float32)[i]
        verts[nverts + 2 * n] = ov[:3]
        verts[nverts + 2 * n + 1] = ov[3:]
        k = npolys + n
        poly_vcount[k] = 2
        poly_verts[k, 0] = nverts + 2 * n
        poly_verts[k, 1] = nverts + 2 * n + 1
        poly_flags[k] = int(offmesh.flags[i])
        poly_area[k] = int(offmesh.area[i]) & 0x3F
        poly_type[k] = POLYTYPE_OFFMESH
        off_poly[n] = k
        off_pos[n] = ov
        off_rad[n] = offmesh.rad[i]
        off_flags[n] = OFFMESH_CON_BIDIR if offmesh.bidirectional[i] else 0
        off_side[n] = end_side[n]
        off_uid[n] = int(offmesh.user_id[i])

    # Detail mesh.
    if dm is not None:
        extra = dm[:, 1] - nv_per
        d_vert_base = np.zeros(npolys, np.uint32)
        d_vert_base[1:] = (np.cumsum(extra)[:-1] & 0xFFFF).astype(np.uint32)
        d_vert_count = extra.astype(np.uint8)
        d_tri_base = dm[:, 2].astype(np.uint32)
        d_tri_count = dm[:, 3].astype(np.uint8)
        # The extra verts of each sub-mesh (after its corner copies), in polygon order.
        detail_verts = _detail_extra_kernel(dm[:, 0] + nv_per, extra, dv)
        detail_tris = np.asarray(dt).copy()
    else:
        d_vert_base = np.zeros(npolys, np.uint32)
        d_vert_count = np.zeros(npolys, np.uint8)
        d_tri_count = (nv_per - 2).astype(np.uint8)
        d_tri_base = np.zeros(npolys, np.uint32)
        d_tri_base[1:] = np.cumsum(nv_per - 2)[:-1]
        tris = []
        for i in range(npolys):
            nv = int(nv_per[i])
            for j in range(2, nv):
                f = 1 << 2
                if j == 2:
                    f |= 1
                if j == nv - 1:
                    f |= 1 << 4
                tris.append((0, j - 1, j, f))
        detail_verts = np.zeros((0, 3), np.float32)
        detail_tris = np.array(tris, np.uint8).reshape(-1, 4)

    # BV tree.
    if build_bv_tree:
        bv_bmin, bv_bmax, bv_i = _build_bv_tree(
            pverts,
            polys,
            nvp,
            nv_per,
            bmin,
            cs,
            ch,
            None if dm is None else dm,
            None if dv is None else dv,
        )
    else:
        bv_bmin = np.zeros((0, 3), np.uint16)
        bv_bmax = np.zeros((0, 3), np.uint16)
        bv_i = np.zeros(0, np.int32)

    return TileData(
        x=int(tile_x),
        y=int(tile_y),
        layer=int(layer),
        user_id=int(user_id) & 0xFFFFFFFF,
        walkable_height=float(wh),
        walkable_radius=float(wr),
        walkable_climb=float(wc),
        bmin=bmin,
        bmax=bmax,
        bv_quant_factor=float(np.float32(np.float32(1.0) / cs)),
        off_mesh_base=npolys,
        verts=verts,
        poly_first_link=np.zeros(tot_polys, np.uint32),
        poly_verts=poly_verts,
        poly_neis=poly_neis,
        poly_flags=poly_flags,
        poly_vert_count=poly_vcount,
        poly_area=poly_area,
        poly_type=poly_type,
        **_zero_links(max_link_count),
        detail_vert_base=d_vert_base,
        detail_tri_base=d_tri_base,
        detail_vert_count=d_vert_count,
        detail_tri_count=d_tri_count,
        detail_verts=detail_verts,
        detail_tris=detail_tris,
        bv_bmin=bv_bmin,
        bv_bmax=bv_bmax,
        bv_i=bv_i,
        off_pos=off_pos,
        off_rad=off_rad,
        off_poly=off_poly,
        off_flags=off_flags,
        off_side=off_side,
        off_user_id=off_uid,
    )
