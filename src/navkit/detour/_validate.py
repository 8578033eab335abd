"""Checks that a :class:`~navkit.detour.tile.TileData` is safe for the link kernels.

Detour trusts its tile blobs; navkit refuses a tile whose shapes or indices would
make a kernel read out of bounds (polygon vertices and neighbours, detail ranges
and triangle corners, BV leaves and escapes, off-mesh polygons). Shapes are checked
in Python, indices in one numba pass.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..errors import InputError
from .tile import TileData

_MESSAGES = {
    1: "polygon vertex count outside 1..6",
    2: "polygon vertex index out of range",
    3: "polygon neighbour index out of range",
    4: "an off-mesh polygon has a detail mesh, or a ground polygon has none",
    5: "an off-mesh polygon does not have 2 vertices",
    6: "detail mesh range out of bounds",
    7: "detail triangle vertex index out of range",
    8: "BV tree node out of range",
    9: "off-mesh connection polygon invalid",
}


@njit
def _index_errors(
    nv,
    poly_verts,
    poly_neis,
    poly_vert_count,
    poly_type,
    nd,
    dvb,
    dvc,
    dtb,
    dtc,
    ndv,
    dtris,
    bv_i,
    off_poly,
):
    npoly = poly_verts.shape[0]
    for i in range(npoly):
        vc = np.int64(poly_vert_count[i])
        if vc < 1 or vc > 6:
            return 1
        for j in range(vc):
            if np.int64(poly_verts[i, j]) >= nv:
                return 2
            nei = np.int64(poly_neis[i, j])
            if nei != 0 and (nei & 0x8000) == 0 and nei > npoly:
                return 3
        if (poly_type[i] == 1) != (i >= nd):
            return 4
        if poly_type[i] == 1 and vc != 2:
            return 5
    ndt = dtris.shape[0]
    for i in range(nd):
        vb = np.int64(dvb[i])
        tb = np.int64(dtb[i])
        if vb + np.int64(dvc[i]) > ndv or tb + np.int64(dtc[i]) > ndt:
            return 6
        lim = np.int64(poly_vert_count[i]) + np.int64(dvc[i])
        for t in range(tb, tb + np.int64(dtc[i])):
            for k in range(3):
                if np.int64(dtris[t, k]) >= lim:
                    return 7
    nb = bv_i.shape[0]
    for k in range(nb):
        b = np.int64(bv_i[k])
        if (b >= 0 and b >= max(nd, 1)) or (b < 0 and k - b > nb):
            return 8
    for k in range(off_poly.shape[0]):
        p = np.int64(off_poly[k])
        if p >= npoly or poly_type[p] != 1:
            return 9
    return 0


def check_tile(d: TileData) -> None:
    """Raise InputError if ``d`` has inconsistent shapes or out-of-range indices."""
    npoly, nl, nd = d.poly_count, d.max_link_count, d.detail_mesh_count
    nv, no = d.vert_count, d.off_mesh_con_count
    shapes = {
        "verts": (nv, 3),
        "poly_first_link": (npoly,),
        "poly_verts": (npoly, 6),
        "poly_neis": (npoly, 6),
        "poly_flags": (npoly,),
        "poly_vert_count": (npoly,),
        "poly_area": (npoly,),
        "poly_type": (npoly,),
        "link_next": (nl,),
        "link_edge": (nl,),
        "link_side": (nl,),
        "link_bmin": (nl,),
        "link_bmax": (nl,),
        "detail_tri_base": (nd,),
        "detail_vert_count": (nd,),
        "detail_tri_count": (nd,),
        "detail_verts": (d.detail_verts.shape[0], 3),
        "detail_tris": (d.detail_tris.shape[0], 4),
        "bv_bmin": (d.bv_node_count, 3),
        "bv_bmax": (d.bv_node_count, 3),
        "off_pos": (no, 6),
        "off_poly": (no,),
        "off_flags": (no,),
        "off_side": (no,),
        "off_user_id": (no,),
        "bmin": (3,),
        "bmax": (3,),
    }
    for name, shape in shapes.items():
        if np.shape(getattr(d, name)) != shape:
            raise InputError(
                f"tile field {name} has shape {np.shape(getattr(d, name))}, expected {shape}"
            )
    if nd > npoly or not 0 <= d.off_mesh_base <= npoly:
        raise InputError("detail mesh / off-mesh base count exceeds polygons")
    code = _index_errors(
        nv,
        d.poly_verts,
        d.poly_neis,
        d.poly_vert_count,
        d.poly_type,
        nd,
        d.detail_vert_base,
        d.detail_vert_count,
        d.detail_tri_base,
        d.detail_tri_count,
        d.detail_verts.shape[0],
        d.detail_tris,
        d.bv_i,
        d.off_poly,
    )
    if code:
        raise InputError(_MESSAGES[code])
