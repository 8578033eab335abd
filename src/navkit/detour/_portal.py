"""Status codes, filter tests and portals between neighbouring polygons.

The portal between polygon A and its neighbour B is the shared edge as seen
from A (Detour's ``getPortalPoints``): found through A's link to B, it is
A's edge ``link.edge`` from corner ``edge`` (left) to ``edge + 1`` (right),
narrowed to the link's [bmin, bmax]/255 sub-range on tile borders. A portal
onto or off an off-mesh connection degenerates to the connection endpoint.
The A* node position is the portal midpoint.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

from ._view import POLYTYPE_OFFMESH

FAILURE = np.int64(1 << 31)
SUCCESS = np.int64(1 << 30)
IN_PROGRESS = np.int64(1 << 29)
DETAIL_MASK = np.int64(0x0FFFFFF)
INVALID_PARAM = np.int64(1 << 3)
BUFFER_TOO_SMALL = np.int64(1 << 4)
OUT_OF_NODES = np.int64(1 << 5)
PARTIAL_RESULT = np.int64(1 << 6)
EXT_LINK_MASK = 0x8000

_INV255 = F32(1.0) / F32(255.0)


@njit(inline="always")
def _passes(flt, poly_flags, p):
    f = poly_flags[p]
    return (f & flt[0]) != 0 and (f & flt[1]) == 0


@njit(inline="always")
def passes(flt, p, nav):
    """Detour's default filter: some include flag set and no exclude flag set.

    ``flt`` is (2,) int32 [include, exclude].
    """
    return _passes(flt, nav.poly_flags, p)


@njit(inline="always")
def _find_link(poly_link, link_ref, link_next, p, ref):
    # unsigned subscripts: a signed one costs a wraparound fix (sar/and/add) on every hop
    # of this dependent load chain
    k = poly_link[p]
    while k != -1:
        if link_ref[np.uint64(k)] == ref:
            return k
        k = link_next[np.uint64(k)]
    return -1


@njit(inline="always")
def find_link(nav, p, ref):
    """First link of polygon p pointing at ref, or -1."""
    return _find_link(nav.poly_link, nav.link_ref, nav.link_next, p, ref)


@njit(lent=True)
def _portal_core(nav, fp, to_ref, tp, from_ref, left, right):
    """Portal (left, right) from polygon fp to polygon tp (refs to_ref/from_ref); False if
    unlinked. Takes the view itself: one pointer (see ``_view``)."""
    poly_link = nav.poly_link
    link_ref = nav.link_ref
    link_next = nav.link_next
    link_edge = nav.link_edge
    poly_type = nav.poly_type
    poly_verts = nav.poly_verts
    verts = nav.verts
    k = _find_link(poly_link, link_ref, link_next, fp, to_ref)
    if k == -1:
        return False
    if poly_type[fp] == POLYTYPE_OFFMESH or poly_type[tp] == POLYTYPE_OFFMESH:
        if poly_type[fp] == POLYTYPE_OFFMESH:
            i0 = poly_verts[fp, link_edge[k]]
        else:
            kk = _find_link(poly_link, link_ref, link_next, tp, from_ref)
            if kk == -1:
                return False
            i0 = poly_verts[tp, link_edge[kk]]
        for c in range(3):
            left[c] = verts[i0, c]
            right[c] = verts[i0, c]
        return True
    uk = np.uint64(k)
    e = link_edge[uk]
    e1 = e + 1
    if e1 >= nav.poly_nverts[fp]:  # (e + 1) % nverts without a division
        e1 = 0
    i0 = poly_verts[fp, e]
    i1 = poly_verts[fp, e1]
    for c in range(3):
        left[c] = verts[i0, c]
        right[c] = verts[i1, c]
    if nav.link_side[uk] != 0xFF:
        bmin = nav.link_bmin[uk]
        bmax = nav.link_bmax[uk]
        if bmin != 0 or bmax != 255:
            tmin = F32(bmin) * _INV255
            tmax = F32(bmax) * _INV255
            for c in range(3):
                left[c] = verts[i0, c] + (verts[i1, c] - verts[i0, c]) * tmin
                right[c] = verts[i0, c] + (verts[i1, c] - verts[i0, c]) * tmax
    return True


@njit(lent=True)
def portal_midpoint(nav, fp, to_ref, tp, from_ref):
    """(found, x, y, z): the midpoint of the portal from polygon fp to polygon tp, as
    :func:`edge_midpoint` computes it (the same float32 operations), returned as scalars:
    A* calls this for every node it creates, and scratch arrays passed to a called
    kernel travel as seven words each."""
    poly_link = nav.poly_link
    link_ref = nav.link_ref
    link_next = nav.link_next
    link_edge = nav.link_edge
    poly_type = nav.poly_type
    poly_verts = nav.poly_verts
    verts = nav.verts
    h = F32(0.5)
    k = _find_link(poly_link, link_ref, link_next, fp, to_ref)
    if k == -1:
        return False, F32(0.0), F32(0.0), F32(0.0)
    if poly_type[fp] == POLYTYPE_OFFMESH or poly_type[tp] == POLYTYPE_OFFMESH:
        if poly_type[fp] == POLYTYPE_OFFMESH:
            i0 = poly_verts[fp, link_edge[k]]
        else:
            kk = _find_link(poly_link, link_ref, link_next, tp, from_ref)
            if kk == -1:
                return False, F32(0.0), F32(0.0), F32(0.0)
            i0 = poly_verts[tp, link_edge[kk]]
        x, y, z = verts[i0, 0], verts[i0, 1], verts[i0, 2]
        return True, (x + x) * h, (y + y) * h, (z + z) * h
    uk = np.uint64(k)
    e = link_edge[uk]
    e1 = e + 1
    if e1 >= nav.poly_nverts[fp]:  # (e + 1) % nverts without a division
        e1 = 0
    i0 = poly_verts[fp, e]
    i1 = poly_verts[fp, e1]
    ax, ay, az = verts[i0, 0], verts[i0, 1], verts[i0, 2]
    bx, by, bz = verts[i1, 0], verts[i1, 1], verts[i1, 2]
    if nav.link_side[uk] != 0xFF:
        bmin = nav.link_bmin[uk]
        bmax = nav.link_bmax[uk]
        if bmin != 0 or bmax != 255:
            tmin = F32(bmin) * _INV255
            tmax = F32(bmax) * _INV255
            lx = ax + (bx - ax) * tmin
            ly = ay + (by - ay) * tmin
            lz = az + (bz - az) * tmin
            rx = ax + (bx - ax) * tmax
            ry = ay + (by - ay) * tmax
            rz = az + (bz - az) * tmax
            return True, (lx + rx) * h, (ly + ry) * h, (lz + rz) * h
    return True, (ax + bx) * h, (ay + by) * h, (az + bz) * h


@njit(inline="always")
def portal_points(nav, fp, to_ref, tp, from_ref, left, right):
    """Portal (left, right) from polygon fp to polygon tp (refs to_ref/from_ref); False if unlinked."""
    return _portal_core(nav, fp, to_ref, tp, from_ref, left, right)


@njit(inline="always")
def edge_midpoint(nav, fp, to_ref, tp, from_ref, mid, left, right):
    """Midpoint of the portal from fp to tp into mid (3,), using scratch left/right (3,)."""
    if not portal_points(nav, fp, to_ref, tp, from_ref, left, right):
        return False
    h = F32(0.5)
    for c in range(3):
        mid[c] = (left[c] + right[c]) * h
    return True
