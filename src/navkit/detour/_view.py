"""The flat array view of a navmesh that the query kernels read.

``NavView`` holds every tile's data in global struct-of-arrays pools (integer
arrays for indices and codes -- the navmesh's own dtypes where they are safe,
int64 for polygon refs -- float32 for coordinates) plus the ref bit layout. The kernels in this package take a
``NavView`` and never touch Python objects. :func:`view_from_navmesh` builds it
from a :class:`navkit.detour.navmesh.NavMesh`; it is rebuilt when the navmesh
changes (tiles added/removed, flags or areas set).

Ref decoding follows Detour (FORMAT.md §3)::

    poly = ref & (2**poly_bits - 1)
    slot = (ref >> poly_bits) & (2**tile_bits - 1)
    salt = (ref >> (poly_bits + tile_bits)) & (2**salt_bits - 1)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from navkit._jit import njit

EXT_LINK = 0x8000
NULL_LINK = -1
POLYTYPE_GROUND = 0
POLYTYPE_OFFMESH = 1


class NavView(NamedTuple):
    """Global pools of a navmesh, as numba-friendly arrays (see module docstring)."""

    verts: np.ndarray  # (V, 3) float32 polygon vertices [wu]
    poly_verts: np.ndarray  # (P, 6) int32 global vertex index per corner
    poly_neis: np.ndarray  # (P, 6) int32 Detour neighbour code per edge
    poly_nverts: np.ndarray  # (P,) int32 corner count
    poly_area: np.ndarray  # (P,) int32 area id 0..63
    poly_type: np.ndarray  # (P,) int32 0 ground, 1 off-mesh connection
    poly_flags: np.ndarray  # (P,) int32 16-bit user flags
    poly_link: np.ndarray  # (P,) int32 first link (global), -1 = none
    poly_tile: np.ndarray  # (P,) int32 owning tile slot
    poly_ref: np.ndarray  # (P,) int64 ref of each polygon
    link_ref: np.ndarray  # (L,) int64 target poly ref
    link_next: np.ndarray  # (L,) int32 next link (global), -1 = end
    link_edge: np.ndarray  # (L,) int32 edge index (0xff onto off-mesh)
    link_side: np.ndarray  # (L,) int32 0xff internal, else tile side 0..7
    link_bmin: np.ndarray  # (L,) int32 portal sub-range start 0..255
    link_bmax: np.ndarray  # (L,) int32 portal sub-range end 0..255
    dm_vbase: np.ndarray  # (P,) int32 first extra detail vertex (global)
    dm_tbase: np.ndarray  # (P,) int32 first detail triangle (global)
    dm_ntris: np.ndarray  # (P,) int32 detail triangle count (0 for off-mesh polys)
    dverts: np.ndarray  # (DV, 3) float32 extra detail vertices [wu]
    dtris: np.ndarray  # (DT, 4) int32 detail triangles (3 local indices + edge flags)
    bv_min: np.ndarray  # (B, 3) int32 quantised node bounds
    bv_max: np.ndarray  # (B, 3) int32
    bv_i: np.ndarray  # (B,) int32 leaf poly (tile-local) or -escape
    tile_salt: np.ndarray  # (T,) int64
    tile_used: np.ndarray  # (T,) int32 1 when the slot holds a tile
    tile_pbase: np.ndarray  # (T,) int32 first polygon of the tile (global)
    tile_pcount: np.ndarray  # (T,) int32
    tile_bvbase: np.ndarray  # (T,) int32
    tile_bvcount: np.ndarray  # (T,) int32 (0 = no BV tree)
    tile_x: np.ndarray  # (T,) int32 grid location
    tile_y: np.ndarray  # (T,) int32
    tile_layer: np.ndarray  # (T,) int32
    tile_bmin: np.ndarray  # (T, 3) float32
    tile_bmax: np.ndarray  # (T, 3) float32
    tile_climb: np.ndarray  # (T,) float32 walkable climb [wu]
    tile_radius: np.ndarray  # (T,) float32 walkable radius [wu]
    tile_qfac: np.ndarray  # (T,) float32 BV quantisation factor
    lut: np.ndarray  # (H,) int32 first slot per position-hash bucket (power of two), -1 = none
    tile_next: np.ndarray  # (T,) int32 next slot in the same bucket, -1 = end
    bits: np.ndarray  # (3,) int64 poly_bits, tile_bits, salt_bits
    grid: np.ndarray  # (5,) float32 orig x, y, z, tile width, tile height


@njit(inline="always")
def decode(nav, ref):
    """(salt, slot, poly) of a ref."""
    pb = nav.bits[0]
    tb = nav.bits[1]
    sb = nav.bits[2]
    poly = ref & ((np.int64(1) << pb) - 1)
    slot = (ref >> pb) & ((np.int64(1) << tb) - 1)
    salt = (ref >> (pb + tb)) & ((np.int64(1) << sb) - 1)
    return salt, slot, poly


@njit(inline="always")
def poly_index(nav, ref):
    """Global polygon index of a ref, or -1 when the ref is stale or invalid."""
    if ref == 0:
        return -1
    salt, slot, poly = decode(nav, ref)
    if slot >= nav.tile_salt.shape[0]:
        return -1
    if nav.tile_used[slot] == 0 or nav.tile_salt[slot] != salt:
        return -1
    if poly >= nav.tile_pcount[slot]:
        return -1
    return nav.tile_pbase[slot] + poly


@njit(inline="always")
def poly_index_unsafe(nav, ref):
    """Global polygon index of a ref known to be valid."""
    pb = nav.bits[0]
    tb = nav.bits[1]
    slot = (ref >> pb) & ((np.int64(1) << tb) - 1)
    return nav.tile_pbase[slot] + (ref & ((np.int64(1) << pb) - 1))


@njit(inline="always")
def load_poly(nav, p, out):
    """Copy polygon p's corners into out (6, 3); returns the corner count."""
    n = nav.poly_nverts[p]
    for k in range(n):
        v = nav.poly_verts[p, k]
        out[k, 0] = nav.verts[v, 0]
        out[k, 1] = nav.verts[v, 1]
        out[k, 2] = nav.verts[v, 2]
    return n


@njit(inline="always")
def detail_vertex(nav, p, local, out):
    """Copy vertex ``local`` of polygon p's detail mesh into out (3,)."""
    nv = nav.poly_nverts[p]
    if local < nv:
        v = nav.poly_verts[p, local]
        out[0] = nav.verts[v, 0]
        out[1] = nav.verts[v, 1]
        out[2] = nav.verts[v, 2]
    else:
        d = nav.dm_vbase[p] + local - nv
        out[0] = nav.dverts[d, 0]
        out[1] = nav.dverts[d, 1]
        out[2] = nav.dverts[d, 2]


@njit(inline="always")
def tile_hash(nav, x, y):
    """Detour's position hash bucket of tile cell (x, y)."""
    h = (np.int64(0x8DA6B343) * x + np.int64(0xD8163841) * y) & 0xFFFFFFFF
    return h & (nav.lut.shape[0] - 1)


def view_from_navmesh(nm) -> NavView:
    """Build the kernels' view of a :class:`~navkit.detour.navmesh.NavMesh`.

    Polygon flags and areas are shared with the navmesh (live); everything else
    must be rebuilt after tiles are added or removed.
    """
    a = nm.arrays()
    npoly = a.poly_tile.shape[0]
    slots = a.poly_tile.astype(np.int64)
    local = np.arange(npoly, dtype=np.int64) - a.tile_poly_base[slots]
    salt = a.tile_salt.astype(np.int64)[slots]
    poly_ref = (salt << (nm.poly_bits + nm.tile_bits)) | (slots << nm.poly_bits) | local
    if nm.ref64:
        poly_ref = poly_ref.astype(np.uint64).view(np.int64)
    dm = a.tile_dmesh_base[slots] + local
    ground = (a.poly_type == POLYTYPE_GROUND) & (local < a.tile_dmesh_count[slots])
    dm_safe = np.where(ground, dm, 0)
    nd = a.dmesh_vert_base.shape[0]
    if nd:
        dm_vbase = np.where(ground, a.dmesh_vert_base[np.minimum(dm_safe, nd - 1)], 0)
        dm_tbase = np.where(ground, a.dmesh_tri_base[np.minimum(dm_safe, nd - 1)], 0)
        dm_ntris = np.where(ground, a.dmesh_tri_count[np.minimum(dm_safe, nd - 1)], 0)
    else:
        dm_vbase = dm_tbase = dm_ntris = np.zeros(npoly, np.int64)
    p = nm.params
    return NavView(
        verts=a.verts, poly_verts=a.poly_verts, poly_neis=a.poly_neis.astype(np.int32),
        poly_nverts=a.poly_vert_count.astype(np.int64), poly_area=a.poly_area,
        poly_type=a.poly_type.astype(np.int32),
        poly_flags=a.poly_flags, poly_link=a.poly_first_link, poly_tile=a.poly_tile,
        poly_ref=poly_ref.astype(np.int64),
        link_ref=a.link_ref.view(np.int64), link_next=a.link_next,
        link_edge=a.link_edge.astype(np.int64), link_side=a.link_side.astype(np.int64),
        link_bmin=a.link_bmin.astype(np.int64), link_bmax=a.link_bmax.astype(np.int64),
        dm_vbase=dm_vbase.astype(np.int64), dm_tbase=dm_tbase.astype(np.int64),
        dm_ntris=dm_ntris.astype(np.int64), dverts=a.dverts, dtris=a.dtris.astype(np.int64),
        bv_min=a.bv_bmin.astype(np.int64), bv_max=a.bv_bmax.astype(np.int64), bv_i=a.bv_i,
        tile_salt=a.tile_salt.astype(np.int64), tile_used=a.tile_used,
        tile_pbase=a.tile_poly_base, tile_pcount=a.tile_poly_count,
        tile_bvbase=a.tile_bv_base, tile_bvcount=a.tile_bv_count,
        tile_x=a.tile_x, tile_y=a.tile_y, tile_layer=a.tile_layer,
        tile_bmin=a.tile_bmin, tile_bmax=a.tile_bmax, tile_climb=a.tile_walkable_climb,
        tile_radius=a.tile_walkable_radius, tile_qfac=a.tile_bv_quant,
        lut=a.lut, tile_next=a.tile_next,
        bits=np.array([nm.poly_bits, nm.tile_bits, nm.salt_bits], np.int64),
        grid=np.array([*p.orig, p.tile_width, p.tile_height], np.float32),
    )  # fmt: skip
