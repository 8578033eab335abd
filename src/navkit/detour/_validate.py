"""Validation of tiles and navmesh state: everything the query kernels rely on.

Detour trusts its tile blobs; navkit's kernels index without bounds checks and
walk link lists and tile chains until they end, so a crafted file could make
them read out of bounds or loop forever. Every tile therefore passes
:func:`check_tile` before it is stored (``NavMesh.add_tile``, both file
loaders), and a navmesh whose links and tile chains come from a file (navkit's
own format) passes :func:`check_links` and :func:`check_tile_chains` before it
is returned. Links built by navkit itself (``add_tile``, the Recast loader,
which discards the blob's link section as Detour does) follow from validated
tiles and are not checked again.

What a tile must satisfy (tile-local indices):

- shapes and dtype ranges of every array; areas 0..63, types 0/1;
- every coordinate (vertices, detail vertices, off-mesh endpoints, bounds,
  header distances) finite and within ``COORD_LIMIT`` (so that squared
  distances and areas stay finite in float32), ``bmin <= bmax``;
- ground polygons have 3..6 distinct vertices in range, are strictly convex
  (collinear corners tolerated) and all wound the same way (Recast's tiles are
  clockwise in xz)
  and own a detail mesh with at least one triangle whose corners are in range;
  off-mesh polygons have 2 vertices and no detail mesh;
- a neighbour code is 0, ``DT_EXT_LINK | side`` (side 0..7) or ``q + 1`` for
  another ground polygon ``q`` that has the same edge (same end points,
  reversed) with the code back;
- BV leaves name ground polygons and escapes stay inside the tree; off-mesh
  connections name off-mesh polygons.

What file-supplied links must satisfy (:func:`check_links`): each list
(polygon lists and the free list) stays in its tile's link range, ends, and no
link is on two lists; a link names a live polygon other than its owner; a link
of a ground polygon on edge ``e`` follows the neighbour code of ``e`` (internal:
that polygon, side 0xFF; portal: a ground polygon of the tile on that side or
another layer of the same cell, with a matching portal edge); edge 0xFF leads
to an off-mesh polygon; an off-mesh polygon's links are on edge 0 or 1 and lead
to ground polygons.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..errors import InputError
from .tile import TILE_DTYPES, TileData

#: Largest absolute coordinate accepted [wu]: squared distances, cross products and
#: area sums of such coordinates stay finite in float32.
COORD_LIMIT = 1.0e15

#: Relative tolerance of the convexity test: a corner whose turn (cross product over
#: the product of the edge lengths, i.e. sin of the turning angle) is the wrong way
#: by more than this is reflex. Recast's polygons turn by at least ~5e-4.
CONVEX_TOL = 1.0e-5

_TILE_MESSAGES = {
    1: "poly {i}: {k} vertices (a ground polygon has 3..6)",
    2: "poly {i}: an off-mesh polygon has {k} vertices, not 2",
    3: "poly {i}: vertex index {k} of corner {j} out of range",
    4: "poly {i}: corners {j} and {k} are the same vertex",
    5: "poly {i}: neighbour code {k:#06x} of edge {j} is invalid",
    6: "poly {i}: neighbour of edge {j} is the polygon itself",
    7: "poly {i}: neighbour of edge {j} is poly {k}, which does not share that edge back",
    8: "poly {i}: not convex at corner {j}",
    9: "poly {i}: zero area, a zero-length edge or the other winding than poly 0",
    10: "poly {i}: ground polygons and detail meshes do not match (type {k})",
    11: "poly {i}: detail mesh range out of bounds",
    12: "poly {i}: detail triangle {j} has vertex index {k} out of range",
    13: "poly {i}: no detail triangles",
    14: "BV node {i}: leaf polygon {k} out of range",
    15: "BV node {i}: escape {k} leaves the tree",
    16: "off-mesh connection {i}: polygon {k} is not an off-mesh polygon",
    17: "poly {i}: neighbour of edge {j} is poly {k}, an off-mesh polygon",
    18: "poly {i}: area {k} above 63",
    19: "poly {i}: unknown polygon type {k}",
}
_COORD_NAMES = ("verts", "detail_verts", "off_pos", "off_rad")


@njit
def _tile_errors(
    verts,
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
    poly_area,
    dverts,
    off_pos,
    off_rad,
    tol,
    limit,
):  # pragma: no cover - numba
    """(code, i, j, k) of the first violation (code 0: none); see ``_TILE_MESSAGES``.

    Code -1: row ``j`` of coordinate array ``i`` (0 verts, 1 detail verts, 2 off-mesh
    endpoints, 3 off-mesh radii) is not finite or beyond ``limit``.
    """
    arrays = (verts, dverts, off_pos)
    for w in range(3):
        a = arrays[w]
        for r in range(a.shape[0]):
            for c in range(a.shape[1]):
                if not abs(a[r, c]) <= limit:
                    return -1, w, r, 0
    for r in range(off_rad.shape[0]):
        if not (off_rad[r] >= 0.0 and off_rad[r] <= limit):
            return -1, 3, r, 0
    nv = verts.shape[0]
    npoly = poly_verts.shape[0]
    wind = 0.0
    for i in range(npoly):
        if poly_area[i] > 63:
            return 18, i, 0, np.int64(poly_area[i])
        if poly_type[i] > 1:
            return 19, i, 0, np.int64(poly_type[i])
        vc = np.int64(poly_vert_count[i])
        off = poly_type[i] == 1
        if (i >= nd) != off:
            return 10, i, 0, np.int64(poly_type[i])
        if off:
            if vc != 2:
                return 2, i, 0, vc
        elif vc < 3 or vc > 6:
            return 1, i, 0, vc
        for j in range(vc):
            v = np.int64(poly_verts[i, j])
            if v >= nv:
                return 3, i, j, v
            for k in range(j):
                if np.int64(poly_verts[i, k]) == v:
                    return 4, i, k, j
        if off:
            continue
        # Neighbour codes: wall, portal to a side 0..7, or a reciprocal internal neighbour.
        for j in range(vc):
            nei = np.int64(poly_neis[i, j])
            if nei == 0:
                continue
            if nei & 0x8000:
                if nei & 0x7FF8:
                    return 5, i, j, nei
                continue
            if nei > npoly:
                return 5, i, j, nei
            q = nei - 1
            if q == i:
                return 6, i, j, q
            if poly_type[q] == 1:
                return 17, i, j, q
            a = np.int64(poly_verts[i, j])
            b = np.int64(poly_verts[i, (j + 1) % vc])
            qc = np.int64(poly_vert_count[q])
            found = False
            for k in range(qc):
                if np.int64(poly_neis[q, k]) != i + 1:
                    continue
                c = np.int64(poly_verts[q, k])
                d = np.int64(poly_verts[q, (k + 1) % qc])
                if c >= nv or d >= nv:
                    continue
                same = True
                for m in range(3):
                    if verts[c, m] != verts[b, m] or verts[d, m] != verts[a, m]:
                        same = False
                if same:
                    found = True
                    break
            if not found:
                return 7, i, j, q
        # Strictly convex, all with the winding of the tile's first ground polygon
        # (Recast's is clockwise in (x, z); hand-made tiles may use the other one).
        area = 0.0
        for j in range(vc):
            p0 = np.int64(poly_verts[i, (j + vc - 1) % vc])
            p1 = np.int64(poly_verts[i, j])
            area += np.float64(verts[p0, 0]) * np.float64(verts[p1, 2]) - np.float64(
                verts[p1, 0]
            ) * np.float64(verts[p0, 2])
        if wind == 0.0:
            wind = -1.0 if area < 0.0 else 1.0
        if not area * wind > 0.0:
            return 9, i, 0, 0
        for j in range(vc):
            p0 = np.int64(poly_verts[i, (j + vc - 1) % vc])
            p1 = np.int64(poly_verts[i, j])
            p2 = np.int64(poly_verts[i, (j + 1) % vc])
            ax = np.float64(verts[p1, 0]) - np.float64(verts[p0, 0])
            az = np.float64(verts[p1, 2]) - np.float64(verts[p0, 2])
            bx = np.float64(verts[p2, 0]) - np.float64(verts[p1, 0])
            bz = np.float64(verts[p2, 2]) - np.float64(verts[p1, 2])
            la = np.sqrt(ax * ax + az * az)
            lb = np.sqrt(bx * bx + bz * bz)
            if la == 0.0 or lb == 0.0:
                return 9, i, j, 0
            if (ax * bz - az * bx) * wind < -tol * la * lb:
                return 8, i, j, 0
    ndt = dtris.shape[0]
    for i in range(nd):
        vb = np.int64(dvb[i])
        tb = np.int64(dtb[i])
        if vb + np.int64(dvc[i]) > ndv or tb + np.int64(dtc[i]) > ndt:
            return 11, i, 0, 0
        if dtc[i] == 0:
            return 13, i, 0, 0
        lim = np.int64(poly_vert_count[i]) + np.int64(dvc[i])
        for t in range(tb, tb + np.int64(dtc[i])):
            for k in range(3):
                if np.int64(dtris[t, k]) >= lim:
                    return 12, i, t - tb, np.int64(dtris[t, k])
    nb = bv_i.shape[0]
    for k in range(nb):
        b = np.int64(bv_i[k])
        if b >= 0 and b >= nd:
            return 14, k, 0, b
        if b < 0 and k - b > nb:
            return 15, k, 0, -b
    for k in range(off_poly.shape[0]):
        p = np.int64(off_poly[k])
        if p >= npoly or poly_type[p] != 1:
            return 16, k, 0, p
    return 0, 0, 0, 0


def check_tile(d: TileData) -> None:
    """Raise InputError naming the first thing in ``d`` a kernel could not rely on.

    See the module docstring for the checks; the cost is one pass over the tile.
    """
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
        "link_ref": (nl,),
        "link_next": (nl,),
        "link_edge": (nl,),
        "link_side": (nl,),
        "link_bmin": (nl,),
        "link_bmax": (nl,),
        "detail_vert_base": (nd,),
        "detail_tri_base": (nd,),
        "detail_vert_count": (nd,),
        "detail_tri_count": (nd,),
        "detail_verts": (d.detail_verts.shape[0], 3),
        "detail_tris": (d.detail_tris.shape[0], 4),
        "bv_bmin": (d.bv_node_count, 3),
        "bv_bmax": (d.bv_node_count, 3),
        "bv_i": (d.bv_node_count,),
        "off_pos": (no, 6),
        "off_rad": (no,),
        "off_poly": (no,),
        "off_flags": (no,),
        "off_side": (no,),
        "off_user_id": (no,),
        "bmin": (3,),
        "bmax": (3,),
    }
    for name, shape in shapes.items():
        v = getattr(d, name)
        if (v.shape if isinstance(v, np.ndarray) else np.shape(v)) != shape:
            raise InputError(f"tile field {name} has shape {np.shape(v)}, expected {shape}")
    # Integer fields must hold values of the blob's types (user-made tiles may not).
    for name, dt in TILE_DTYPES.items():
        v = getattr(d, name)
        if isinstance(v, np.ndarray) and v.dtype == dt:
            continue
        a = np.asarray(v)
        if a.size == 0 or np.dtype(dt).kind not in "iu":
            continue
        info = np.iinfo(dt)
        if a.dtype.kind not in "iub" or a.min() < info.min or a.max() > info.max:
            raise InputError(f"tile field {name}: values outside {np.dtype(dt).name}")
    if nd > npoly or d.off_mesh_base != nd:
        raise InputError(
            f"off-mesh base {d.off_mesh_base} and {nd} detail meshes for {npoly} polygons: "
            "the ground polygons come first, one detail mesh each"
        )
    for name in ("bmin", "bmax"):
        if not all(abs(float(v)) <= COORD_LIMIT for v in getattr(d, name)):
            raise InputError(
                f"tile bounds {name} {list(getattr(d, name))} not finite or beyond {COORD_LIMIT:g}"
            )
    scalars = {
        "walkable_height": d.walkable_height,
        "walkable_radius": d.walkable_radius,
        "walkable_climb": d.walkable_climb,
        "bv_quant_factor": d.bv_quant_factor,
    }
    for name, v in scalars.items():
        if not 0.0 <= float(v) <= COORD_LIMIT:
            raise InputError(f"tile header {name} = {v} is not finite, >= 0 and <= {COORD_LIMIT:g}")
    if d.bv_node_count and not float(d.bv_quant_factor) > 0.0:
        raise InputError("tile header bv_quant_factor must be > 0 with a BV tree")
    if not (np.asarray(d.bmin) <= np.asarray(d.bmax)).all():
        raise InputError(f"tile bounds bmin {list(d.bmin)} exceed bmax {list(d.bmax)}")
    code, i, j, k = _tile_errors(
        np.ascontiguousarray(d.verts, np.float32),
        np.ascontiguousarray(d.poly_verts, np.uint16),
        np.ascontiguousarray(d.poly_neis, np.uint16),
        np.ascontiguousarray(d.poly_vert_count, np.uint8),
        np.ascontiguousarray(d.poly_type, np.uint8),
        nd,
        np.ascontiguousarray(d.detail_vert_base, np.uint32),
        np.ascontiguousarray(d.detail_vert_count, np.uint8),
        np.ascontiguousarray(d.detail_tri_base, np.uint32),
        np.ascontiguousarray(d.detail_tri_count, np.uint8),
        int(d.detail_verts.shape[0]),
        np.ascontiguousarray(d.detail_tris, np.uint8),
        np.ascontiguousarray(d.bv_i, np.int32),
        np.ascontiguousarray(d.off_poly, np.uint16),
        np.ascontiguousarray(d.poly_area, np.uint8),
        np.ascontiguousarray(d.detail_verts, np.float32),
        np.ascontiguousarray(d.off_pos, np.float32),
        np.ascontiguousarray(d.off_rad, np.float32),
        CONVEX_TOL,
        COORD_LIMIT,
    )
    if code == -1:
        name = _COORD_NAMES[int(i)]
        row = np.asarray(getattr(d, name))[int(j)]
        raise InputError(
            f"{name}[{int(j)}]: {np.atleast_1d(row).tolist()} is not finite, "
            f"{'negative, ' if name == 'off_rad' else ''}or beyond {COORD_LIMIT:g}"
        )
    if code:
        raise InputError(_TILE_MESSAGES[int(code)].format(i=int(i), j=int(j), k=int(k)))


# -- navmesh-level state read from a file ----------------------------------------------------
_LINK_MESSAGES = {
    1: "tile {t}: poly {p}: first link {l} outside the tile's links",
    2: "tile {t}: link {l}: next link outside the tile's links",
    3: "tile {t}: poly {p}: link {l} is on two lists or its list has a cycle",
    4: "tile {t}: free link {l} is on a polygon's list or the free list has a cycle",
    5: "tile {t}: poly {p}: link {l} names no live polygon",
    6: "tile {t}: poly {p}: link {l} names the polygon itself",
    7: "tile {t}: poly {p}: link {l} has side {x} (0..7 or 255 expected)",
    8: "tile {t}: poly {p}: link {l} is on edge {x}, which the polygon does not have",
    9: "tile {t}: poly {p}: link {l} on edge {x} does not match that edge's internal neighbour",
    10: "tile {t}: poly {p}: link {l} on wall edge {x}",
    11: "tile {t}: poly {p}: link {l} on portal edge {x} does not reach a matching "
    "polygon of the neighbouring tile",
    12: "tile {t}: poly {p}: link {l} on edge 255 does not lead to an off-mesh polygon",
    13: "tile {t}: poly {p}: off-mesh link {l} has edge {x} (0 or 1 expected)",
    14: "tile {t}: poly {p}: off-mesh link {l} does not lead to a ground polygon",
    15: "tile {t}: poly {p}: internal neighbour edge {x} has no link (Detour links every one)",
}

_DX = np.array([1, 1, 0, -1, -1, -1, 0, 1], np.int64)
_DY = np.array([0, 1, 1, 1, 0, -1, -1, -1], np.int64)


@njit
def _link_errors(a, dx, dy):  # pragma: no cover - numba
    """(code, tile, poly, link, extra) of the first bad link (code 0: none).

    ``a`` is NavMeshArrays with ``link_poly`` resolved from ``link_ref``.
    """
    nlinks = a.link_next.shape[0]
    seen = np.zeros(nlinks, np.uint8)
    for t in range(a.tile_used.shape[0]):
        if a.tile_used[t] == 0:
            continue
        lb = a.tile_link_base[t]
        le = lb + a.tile_link_count[t]
        for li in range(lb, le):
            nx = a.link_next[li]
            if nx != -1 and (nx < lb or nx >= le):
                return 2, t, -1, li - lb, 0
        pb = a.tile_poly_base[t]
        for gp in range(pb, pb + a.tile_poly_count[t]):
            li = a.poly_first_link[gp]
            if li != -1 and (li < lb or li >= le):
                return 1, t, gp - pb, li - lb, 0
            nv = np.int64(a.poly_vert_count[gp])
            off = a.poly_type[gp] == 1
            linked = 0  # bit e: edge e has its internal link
            while li != -1:
                if seen[li]:
                    return 3, t, gp - pb, li - lb, 0
                seen[li] = 1
                q = a.link_poly[li]
                e = np.int64(a.link_edge[li])
                side = np.int64(a.link_side[li])
                if q < 0:
                    return 5, t, gp - pb, li - lb, 0
                if q == gp:
                    return 6, t, gp - pb, li - lb, 0
                if side > 7 and side != 0xFF:
                    return 7, t, gp - pb, li - lb, side
                qoff = a.poly_type[q] == 1
                if off:
                    if e > 1:
                        return 13, t, gp - pb, li - lb, e
                    if qoff:
                        return 14, t, gp - pb, li - lb, 0
                elif e == 0xFF:
                    if not qoff:
                        return 12, t, gp - pb, li - lb, 0
                elif e >= nv:
                    return 8, t, gp - pb, li - lb, e
                else:
                    nei = np.int64(a.poly_neis[gp, e])
                    if nei == 0:
                        return 10, t, gp - pb, li - lb, e
                    if (nei & 0x8000) == 0:
                        if side != 0xFF or q != pb + nei - 1:
                            return 9, t, gp - pb, li - lb, e
                        linked |= 1 << e
                    else:
                        d = nei & 7
                        qt = np.int64(a.poly_tile[q])
                        ok = not qoff and side == d and qt != t
                        if ok:
                            same = a.tile_x[qt] == a.tile_x[t] and a.tile_y[qt] == a.tile_y[t]
                            beside = (
                                a.tile_x[qt] == a.tile_x[t] + dx[d]
                                and a.tile_y[qt] == a.tile_y[t] + dy[d]
                            )
                            ok = same or beside
                        if ok:
                            # q must have a portal edge facing back on the same slab.
                            opp = 0x8000 | ((d + 4) & 7)
                            va = a.poly_verts[gp, e]
                            c = 0 if (d == 0 or d == 4) else 2
                            diag = (d & 1) == 1
                            qn = np.int64(a.poly_vert_count[q])
                            ok = False
                            for k in range(qn):
                                if np.int64(a.poly_neis[q, k]) != opp:
                                    continue
                                if (
                                    diag
                                    or abs(a.verts[a.poly_verts[q, k], c] - a.verts[va, c]) <= 0.01
                                ):
                                    ok = True
                                    break
                        if not ok:
                            return 11, t, gp - pb, li - lb, e
                li = a.link_next[li]
            if not off:
                # queries that cross internal edges by their neighbour codes (as Detour's
                # moveAlongSurface does) and those that follow links must see one graph
                for e in range(nv):
                    nei = np.int64(a.poly_neis[gp, e])
                    if nei != 0 and (nei & 0x8000) == 0 and not (linked >> e) & 1:
                        return 15, t, gp - pb, -1, e
        li = a.tile_link_free[t]
        if li != -1 and (li < lb or li >= le):
            return 4, t, -1, li - lb, 0
        while li != -1:
            if seen[li]:
                return 4, t, -1, li - lb, 0
            seen[li] = 1
            li = a.link_next[li]
    return 0, 0, 0, 0, 0


def check_links(a) -> None:
    """Raise InputError if the links of ``a`` (NavMeshArrays, ``link_poly`` resolved)
    could mislead a kernel; see the module docstring."""
    if a.link_next.shape[0] == 0 and not (a.poly_first_link != -1).any():
        return
    code, t, p, li, x = _link_errors(a, _DX, _DY)
    if code:
        raise InputError(_LINK_MESSAGES[int(code)].format(t=int(t), p=int(p), l=int(li), x=int(x)))


@njit
def _chain_errors(lut, tile_next, tile_used, tile_x, tile_y):  # pragma: no cover
    """(code, slot) of the first fault of the position hash chains (code 0: none)."""
    nt = tile_next.shape[0]
    seen = np.zeros(nt, np.uint8)
    mask = lut.shape[0] - 1
    for h in range(lut.shape[0]):
        s = np.int64(lut[h])
        while s != -1:
            if s < 0 or s >= nt:
                return 1, s
            if seen[s]:
                return 2, s
            seen[s] = 1
            if tile_used[s] == 0:
                return 3, s
            hh = (np.int64(0x8DA6B343) * tile_x[s] + np.int64(0xD8163841) * tile_y[s]) & 0xFFFFFFFF
            if (hh & mask) != h:
                return 4, s
            s = np.int64(tile_next[s])
    for s in range(nt):
        if tile_used[s] != 0 and seen[s] == 0:
            return 6, s
    return 0, 0


_CHAIN_MESSAGES = {
    1: "tile lookup chain names slot {s}, outside the tile table",
    2: "tile lookup chains have a cycle (slot {s} is reached twice)",
    3: "tile lookup chain names slot {s}, which holds no tile",
    4: "tile {s} is in the lookup chain of another position",
    6: "tile {s} is missing from the lookup chains",
}


def check_tile_chains(lut, tile_next, tile_used, tile_x, tile_y, tile_layer) -> None:
    """Raise InputError unless the position lookup chains are acyclic, name live tiles
    in their own bucket, hold every live tile once and no position twice."""
    live = np.flatnonzero(np.asarray(tile_used) != 0)
    pos = np.stack(
        [np.asarray(tile_x)[live], np.asarray(tile_y)[live], np.asarray(tile_layer)[live]], 1
    )
    if live.size and np.unique(pos, axis=0).shape[0] != live.size:
        raise InputError("two tiles share one position (x, y, layer)")
    code, s = _chain_errors(
        np.ascontiguousarray(lut, np.int32),
        np.ascontiguousarray(tile_next, np.int32),
        np.ascontiguousarray(tile_used, np.uint8),
        np.ascontiguousarray(tile_x, np.int32),
        np.ascontiguousarray(tile_y, np.int32),
    )
    if code:
        raise InputError(_CHAIN_MESSAGES[int(code)].format(s=int(s)))
