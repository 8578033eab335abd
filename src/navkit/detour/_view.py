"""The flat array view of a navmesh that the query kernels read.

``NavView`` holds every tile's data in global struct-of-arrays pools (integer
arrays for indices and codes -- the navmesh's own dtypes where they are safe,
int64 for polygon refs -- float32 for coordinates) plus the ref bit layout. The kernels in this package take a
``NavView`` and never touch Python objects.

The integer pools are as narrow as their values allow, in *signed* types (int16 / int32;
numba widens signed arithmetic to int64, where uint8 + uint8 gives uint64 and uint64
mixed with int64 gives float64); only the BV bounds are uint16, as Detour's, because
they are only ever compared with int64 values. The A* link walk, the BV-tree walk and
closestPointOnPoly's detail triangles read these pools on every query: at int64 the
view was 2-4x Detour's bytes, and inside the pair flow (nearest x2, A*, funnel) the
parts evicted each other's lines (qnative7 in docs/benchmarks.md). :func:`view_from_navmesh` builds it
from a :class:`navkit.detour.navmesh.NavMesh`; it is rebuilt when the navmesh
changes (tiles added/removed, flags or areas set).

Entry kernels do not take the ``NavView`` itself but its *descriptor*
(:func:`pack_view`): one small int64 array holding each pool's address and shape.
:func:`open_view` turns it inside the kernel into a reference to the view
(:class:`navkit._jit.ArraysRef`: one pointer to the descriptor's words, whose
attributes are lent arrays -- no memory-manager handle, a type without reference
counting); the descriptor (a :class:`Descriptor`) owns the arrays it points into, so
it cannot dangle. Helpers take the reference as ``nav`` and read ``nav.verts`` etc.
as from the named tuple; passing it to a non-inlined helper passes one pointer, where
the named tuple of 42 arrays was flattened into ~320 scalar arguments stored to the
stack on every call (a third of a raycast's time in a batch loop). This matters for speed: numba unboxes every array of
a tuple argument on each call from Python (~0.1 us each, 42 arrays), and it
increments and decrements the reference count of every array of a tuple each
time the tuple is passed to a non-inlined helper -- atomic operations that cost
two thirds of the kernel time and serialised the batch threads. Borrowed arrays
have no reference count, so helpers can take the whole view freely.

Ref decoding follows Detour (FORMAT.md §3)::

    poly = ref & (2**poly_bits - 1)
    slot = (ref >> poly_bits) & (2**tile_bits - 1)
    salt = (ref >> (poly_bits + tile_bits)) & (2**salt_bits - 1)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

from navkit._jit import njit, ref_opener

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
    poly_area: np.ndarray  # (P,) uint8 area id 0..63
    poly_type: np.ndarray  # (P,) int32 0 ground, 1 off-mesh connection
    poly_flags: np.ndarray  # (P,) uint16 16-bit user flags
    poly_link: np.ndarray  # (P,) int32 first link (global), -1 = none
    poly_tile: np.ndarray  # (P,) int32 owning tile slot
    poly_ref: np.ndarray  # (P,) int64 ref of each polygon
    link_ref: np.ndarray  # (L,) int64 target poly ref
    link_next: np.ndarray  # (L,) int32 next link (global), -1 = end
    link_edge: np.ndarray  # (L,) int16 edge index (0xff onto off-mesh)
    link_side: np.ndarray  # (L,) int16 0xff internal, else tile side 0..7
    link_bmin: np.ndarray  # (L,) int16 portal sub-range start 0..255
    link_bmax: np.ndarray  # (L,) int16 portal sub-range end 0..255
    dm_vbase: np.ndarray  # (P,) int32 first extra detail vertex (global)
    dm_tbase: np.ndarray  # (P,) int32 first detail triangle (global)
    dm_ntris: np.ndarray  # (P,) int32 detail triangle count (0 for off-mesh polys)
    dverts: np.ndarray  # (DV, 3) float32 extra detail vertices [wu]
    dtris: np.ndarray  # (DT, 4) int16 detail triangles (3 local indices + edge flags)
    bv_min: np.ndarray  # (B, 3) uint16 quantised node bounds (only compared with int64)
    bv_max: np.ndarray  # (B, 3) uint16
    bv_i: np.ndarray  # (B,) int32 leaf poly (tile-local) or -escape
    tile_salt: np.ndarray  # (T,) int64
    tile_used: np.ndarray  # (T,) uint8 1 when the slot holds a tile
    tile_pbase: np.ndarray  # (T,) int64 first polygon of the tile (global)
    tile_pcount: np.ndarray  # (T,) int64
    tile_bvbase: np.ndarray  # (T,) int64
    tile_bvcount: np.ndarray  # (T,) int64 (0 = no BV tree)
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


@njit
def poly_index_entry(d, ref):
    """:func:`poly_index` on the view described by ``d`` (see :func:`pack_view`)."""
    return poly_index(open_view(d), ref)


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
    view = NavView(
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
    # One dtype per pool whatever the navmesh's storage (no copy when it already matches,
    # so poly_flags / poly_area stay live).
    return NavView(*(np.ascontiguousarray(a, dt) for a, (_, dt, _) in zip(view, VIEW_SPEC)))


# Field order, dtype and rank of every NavView pool (the kernels are compiled for these).
VIEW_SPEC = (
    ("verts", np.float32, 2),
    ("poly_verts", np.int32, 2),
    ("poly_neis", np.int32, 2),
    ("poly_nverts", np.int32, 1),
    ("poly_area", np.uint8, 1),
    ("poly_type", np.int32, 1),
    ("poly_flags", np.uint16, 1),
    ("poly_link", np.int32, 1),
    ("poly_tile", np.int32, 1),
    ("poly_ref", np.int64, 1),
    ("link_ref", np.int64, 1),
    ("link_next", np.int32, 1),
    ("link_edge", np.int16, 1),
    ("link_side", np.int16, 1),
    ("link_bmin", np.int16, 1),
    ("link_bmax", np.int16, 1),
    ("dm_vbase", np.int32, 1),
    ("dm_tbase", np.int32, 1),
    ("dm_ntris", np.int32, 1),
    ("dverts", np.float32, 2),
    ("dtris", np.int16, 2),
    ("bv_min", np.uint16, 2),
    ("bv_max", np.uint16, 2),
    ("bv_i", np.int32, 1),
    ("tile_salt", np.int64, 1),
    ("tile_used", np.uint8, 1),
    ("tile_pbase", np.int64, 1),
    ("tile_pcount", np.int64, 1),
    ("tile_bvbase", np.int64, 1),
    ("tile_bvcount", np.int64, 1),
    ("tile_x", np.int32, 1),
    ("tile_y", np.int32, 1),
    ("tile_layer", np.int32, 1),
    ("tile_bmin", np.float32, 2),
    ("tile_bmax", np.float32, 2),
    ("tile_climb", np.float32, 1),
    ("tile_radius", np.float32, 1),
    ("tile_qfac", np.float32, 1),
    ("lut", np.int32, 1),
    ("tile_next", np.int32, 1),
    ("bits", np.int64, 1),
    ("grid", np.float32, 1),
)


class ViewHandle:
    """A NavView together with its descriptor; the view owns the arrays."""

    __slots__ = ("view", "desc")

    def __init__(self, view: NavView) -> None:
        self.view = view
        self.desc = pack_view(view)


def pack_view(nav: NavView) -> Descriptor:
    """Descriptor of a NavView: (3 * 42,) int64 of (address, shape0, shape1) per pool.

    Every pool must be C-contiguous with the dtype and rank of ``VIEW_SPEC``; the
    descriptor keeps ``nav`` alive.
    """
    return pack_arrays(nav, VIEW_SPEC)


class Descriptor(np.ndarray):
    """An int64 array of array addresses and shapes that keeps those arrays alive.

    ``owner`` references what the addresses point into, so a descriptor passed to a
    kernel can never outlive its arrays (numba takes it as a plain int64 array).
    Slices and copies do not carry the owner.
    """

    owner: object = None


def pack_arrays(arrays, spec) -> Descriptor:
    """(3 * len(spec),) int64 (address, shape0, shape1) of each array of ``arrays``.

    ``spec`` gives (name, dtype, ndim) per array, in order; arrays must match it and
    be C-contiguous. The result owns ``arrays``.
    """
    d = np.zeros(3 * len(spec), np.int64).view(Descriptor)
    d.owner = arrays
    for i, (name, dtype, ndim) in enumerate(spec):
        a = getattr(arrays, name)
        if a.dtype != dtype or a.ndim != ndim or not a.flags.c_contiguous:
            raise TypeError(f"{name}: {a.dtype}{a.shape} is not C-contiguous {dtype} rank {ndim}")
        d[3 * i] = a.ctypes.data
        d[3 * i + 1] = a.shape[0]
        d[3 * i + 2] = a.shape[1] if ndim == 2 else 1
    return d


@intrinsic
def _ptr(typingctx, addr):
    """The integer address ``addr`` as a void pointer."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(addr), codegen


#: The NavView described by ``d`` (see :func:`pack_view`), as a reference whose attributes
#: are lent arrays (:func:`navkit._jit.ref_opener`: one pointer, no reference counting, so
#: helpers take the view for free).
#: A numba intrinsic, for kernels only: nothing to compile per call site.
open_view = ref_opener(NavView, VIEW_SPEC)
