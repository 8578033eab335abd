"""Detail mesh: height-accurate triangles inside each polygon (Recast's rcBuildPolyMeshDetail).

The polygon mesh only knows its vertices' heights. For each polygon this stage:

1. Builds a *height patch* over the polygon's xz bounds (+1 cell): the floor
   height of the polygon's region spans, then a breadth-first flood (FIFO,
   directions 0..3) from the region's border spans fills the rest of the patch
   (Recast's ``getHeightData``). When the polygon covers no span of its region, a
   depth-first walk from the span nearest a polygon vertex towards the polygon
   centre finds a single seed instead (``seedArrayWithPolyCenter``).
2. Samples every polygon edge every ``sample_dist`` (edges always walked in a
   canonical direction, lowest x then lowest z first, so the shared edge of two
   polygons gets identical samples), reads heights from the patch (``getHeight``,
   with a ring-by-ring search when a cell is unset) and keeps only the samples that
   deviate more than ``sample_max_error`` from the simplified edge (iterative
   split at the farthest sample).
3. Triangulates the resulting hull (``triangulateHull``). If the polygon is wide
   enough (min extent >= 2 * sample_dist), grid samples every ``sample_dist``
   inside the polygon (at least sample_dist/2 from the outline) are added one at a
   time, the one with the largest height error first (positions jittered by
   Recast's hash functions), re-triangulating with ``delaunayHull`` after each,
   until the error is below ``sample_max_error`` or 127 vertices are reached.
4. Moves vertices to world space (y raised by one cell height, as Recast does),
   flags triangle edges lying on the polygon outline (``getTriFlags``) and
   concatenates all polygons' vertices and triangles.

All arithmetic is float32 in Recast's order, so the output equals Recast's
bit for bit. One deliberate difference: with ``sample_dist == 0`` Recast builds an
empty hull and never terminates (recastnavigation issue #650); navkit uses the
polygon's own vertices as the hull there, giving each polygon a plain
triangulation of its vertices.

:func:`merge_poly_mesh_details` is Recast's ``rcMergePolyMeshDetails``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from navkit._jit import F32, lend, njit
from navkit.errors import InputError

from ._detail_tri import (
    FLT_MAX,
    delaunay_hull,
    dist_pt_seg3,
    dist_to_poly,
    dist_to_tri_mesh,
    poly_min_extent,
    tri_cache,
    tri_edge_flags,
    triangulate_hull,
)
from .types import (
    DIR_OFFSET_X,
    DIR_OFFSET_Z,
    MESH_NULL_IDX,
    NOT_CONNECTED,
    CompactHeightfield,
    PolyMesh,
    PolyMeshDetail,
)

__all__ = ["build_poly_mesh_detail", "merge_poly_mesh_details"]

UNSET_HEIGHT = 0xFFFF  #: RC_UNSET_HEIGHT: patch cell without a height
MULTIPLE_REGS = 0  #: RC_MULTIPLE_REGS: polygon region id meaning "no single region"
MAX_VERTS = 127  #: most detail vertices per polygon
MAX_TRIS = 255  #: most detail triangles per polygon
MAX_VERTS_PER_EDGE = 32  #: most samples along one polygon edge

_MAX_GRID_SAMPLES = 1 << 22  # per polygon; guards against a tiny sample_dist

_ZERO = F32(0.0)
_HALF = F32(0.5)
_TWO = F32(2.0)
_TENTH = F32(0.1)
_CELL_BIAS = F32(0.01)
_SAME_X = F32(1e-6)
_JITTER_SCALE = F32(65535.0)
_ONE = F32(1.0)


# -- height patch ---------------------------------------------------------------------------


@njit(lent=True)
def _patch_height(fx, fy, fz, ics, ch, radius, hp, xmin, zmin, pw, ph):
    """Recast's ``getHeight``: the patch height under (fx, fz) [vx, uint16 semantics].

    An unset cell is replaced by the set cell of the nearest ring around it (up
    to ``radius`` cells) whose height is closest to ``fy``; 0xFFFF if none.
    """
    ix = int(math.floor(fx * ics + _CELL_BIAS))
    iz = int(math.floor(fz * ics + _CELL_BIAS))
    ix = min(max(ix - xmin, 0), pw - 1)
    iz = min(max(iz - zmin, 0), ph - 1)
    h = int(hp[ix + iz * pw])
    if h != UNSET_HEIGHT:
        return h
    # Spiral outwards ring by ring; stop at the end of the first ring holding a height.
    x = 1
    z = 0
    dx = 1
    dz = 0
    size = radius * 2 + 1
    ring_end = 8
    ring_len = 16
    dmin = FLT_MAX
    for i in range(size * size - 1):
        nx = ix + x
        nz = iz + z
        if 0 <= nx < pw and 0 <= nz < ph:
            nh = int(hp[nx + nz * pw])
            if nh != UNSET_HEIGHT:
                d = abs(F32(nh) * ch - fy)
                if d < dmin:
                    h = nh
                    dmin = d
        if i + 1 == ring_end:
            if h != UNSET_HEIGHT:
                break
            ring_end += ring_len
            ring_len += 8
        if x == z or (x < 0 and x == -z) or (x > 0 and x == 1 - z):
            t = dx
            dx = -dz
            dz = t
        x += dx
        z += dz
    return h


@njit(lent=True)
def _seed_from_center(
    pverts, poly, npoly, bs, hp, xmin, zmin, pw, ph, cidx, ccnt, cw, sy, con, queue
):
    """Recast's ``seedArrayWithPolyCenter``: one seed near the polygon centre.

    Writes the seed (x, z, span) in chf cells to ``queue[0]``, sets its patch
    height and returns the queue length (0 if no span lies near any vertex).
    """
    # Span closest in height to a polygon vertex, among the vertex's 3x3 cells.
    offs = ((0, 0), (-1, -1), (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0))
    sx = 0
    sz = 0
    si = -1
    dmin = UNSET_HEIGHT
    for j in range(npoly):
        if dmin <= 0:
            break
        v = poly[j]
        for k in range(9):
            if dmin <= 0:
                break
            ax = int(pverts[v, 0]) + offs[k][0]
            ay = int(pverts[v, 1])
            az = int(pverts[v, 2]) + offs[k][1]
            if ax < xmin or ax >= xmin + pw or az < zmin or az >= zmin + ph:
                continue
            c = (ax + bs) + (az + bs) * cw
            for i in range(int(cidx[c]), int(cidx[c]) + int(ccnt[c])):
                if dmin <= 0:
                    break
                d = abs(ay - int(sy[i]))
                if d < dmin:
                    sx = ax
                    sz = az
                    si = i
                    dmin = d
    if si < 0:
        return 0
    pcx = 0
    pcz = 0
    for j in range(npoly):
        pcx += int(pverts[poly[j], 0])
        pcz += int(pverts[poly[j], 2])
    pcx //= npoly
    pcz //= npoly
    # Depth-first walk towards the centre; hp doubles as the visited mark.
    hp[: pw * ph] = 0
    top = 1
    queue[0, 0] = sx
    queue[0, 1] = sz
    queue[0, 2] = si
    cx = -1
    cz = -1
    ci = -1
    order = np.empty(4, np.int64)
    while top > 0:
        top -= 1
        cx = queue[top, 0]
        cz = queue[top, 1]
        ci = queue[top, 2]
        if cx == pcx and cz == pcz:
            break
        # Directions 0..3 with the one heading to the centre moved last (popped first).
        if cx == pcx:
            direct = 1 if pcz > cz else 3
        else:
            direct = 2 if pcx > cx else 0
        for k in range(4):
            order[k] = k
        order[direct] = 3
        order[3] = direct
        for k in range(4):
            d = order[k]
            n = (int(con[ci]) >> (6 * d)) & 0x3F
            if n == NOT_CONNECTED:
                continue
            nx = cx + DIR_OFFSET_X[d]
            nz = cz + DIR_OFFSET_Z[d]
            hx = nx - xmin
            hz = nz - zmin
            if hx < 0 or hx >= pw or hz < 0 or hz >= ph:
                continue
            if hp[hx + hz * pw] != 0:
                continue
            hp[hx + hz * pw] = 1
            queue[top, 0] = nx
            queue[top, 1] = nz
            queue[top, 2] = int(cidx[(nx + bs) + (nz + bs) * cw]) + n
            top += 1
    hp[: pw * ph] = UNSET_HEIGHT
    queue[0, 0] = cx + bs
    queue[0, 1] = cz + bs
    queue[0, 2] = ci
    hp[(cx - xmin) + (cz - zmin) * pw] = sy[ci]
    return 1


@njit(lent=True)
def _fill_height_patch(
    pverts, poly, npoly, region, bs, hp, xmin, zmin, pw, ph, cidx, ccnt, cw, sy, con, sreg, queue
):
    """Recast's ``getHeightData``: fill ``hp[:pw*ph]`` with floor heights [vx] around a polygon."""
    hp[: pw * ph] = UNSET_HEIGHT
    qn = 0
    empty = True
    if region != MULTIPLE_REGS:
        for hz in range(ph):
            z = zmin + hz + bs
            for hx in range(pw):
                x = xmin + hx + bs
                c = x + z * cw
                for i in range(int(cidx[c]), int(cidx[c]) + int(ccnt[c])):
                    if int(sreg[i]) != region:
                        continue
                    hp[hx + hz * pw] = sy[i]
                    empty = False
                    border = False
                    for d in range(4):
                        n = (int(con[i]) >> (6 * d)) & 0x3F
                        if n != NOT_CONNECTED:
                            ax = x + DIR_OFFSET_X[d]
                            az = z + DIR_OFFSET_Z[d]
                            ai = int(cidx[ax + az * cw]) + n
                            if int(sreg[ai]) != region:
                                border = True
                                break
                    if border:
                        queue[qn, 0] = x
                        queue[qn, 1] = z
                        queue[qn, 2] = i
                        qn += 1
                    break
    if empty:
        qn = _seed_from_center(
            pverts, poly, npoly, bs, hp, xmin, zmin, pw, ph, cidx, ccnt, cw, sy, con, queue
        )
    # Breadth-first flood from the seeds over unset cells.
    head = 0
    while head < qn:
        cx = queue[head, 0]
        cz = queue[head, 1]
        ci = queue[head, 2]
        head += 1
        for d in range(4):
            n = (int(con[ci]) >> (6 * d)) & 0x3F
            if n == NOT_CONNECTED:
                continue
            ax = cx + DIR_OFFSET_X[d]
            az = cz + DIR_OFFSET_Z[d]
            hx = ax - xmin - bs
            hz = az - zmin - bs
            if hx < 0 or hx >= pw or hz < 0 or hz >= ph:
                continue
            if hp[hx + hz * pw] != UNSET_HEIGHT:
                continue
            ai = int(cidx[ax + az * cw]) + n
            hp[hx + hz * pw] = sy[ai]
            queue[qn, 0] = ax
            queue[qn, 1] = az
            queue[qn, 2] = ai
            qn += 1


# -- one polygon ----------------------------------------------------------------------------


@njit
def _jitter(i, mul):
    """Recast's ``getJitterX/Y``: a hash of the sample index in [-1, 1], float32."""
    return F32((i * mul) & 0xFFFF) / _JITTER_SCALE * _TWO - _ONE


@njit(lent=True)
def _sample_edges(inp, nin, sd, sme, ics, ch, radius, hp, xmin, zmin, pw, ph, verts, hull, epts):
    """Tessellate the outline; append kept samples to ``verts``; return (nverts, nhull)."""
    nverts = nin
    nhull = 0
    idx = np.empty(MAX_VERTS_PER_EDGE, np.int64)
    j = nin - 1
    for i in range(nin):
        if abs(inp[j, 0] - inp[i, 0]) < _SAME_X:
            swapped = inp[j, 2] > inp[i, 2]
        else:
            swapped = inp[j, 0] > inp[i, 0]
        a = i if swapped else j
        b = j if swapped else i
        dx = inp[b, 0] - inp[a, 0]
        dy = inp[b, 1] - inp[a, 1]
        dz = inp[b, 2] - inp[a, 2]
        d = F32(np.sqrt(dx * dx + dz * dz))
        nn = 1 + int(math.floor(d / sd))
        if nn >= MAX_VERTS_PER_EDGE:
            nn = MAX_VERTS_PER_EDGE - 1
        if nverts + nn >= MAX_VERTS:
            nn = MAX_VERTS - 1 - nverts
        for k in range(nn + 1):
            u = F32(k) / F32(nn)
            px = inp[a, 0] + dx * u
            py = inp[a, 1] + dy * u
            pz = inp[a, 2] + dz * u
            h = _patch_height(px, py, pz, ics, ch, radius, hp, xmin, zmin, pw, ph)
            epts[k, 0] = px
            epts[k, 1] = F32(h) * ch
            epts[k, 2] = pz
        # Split at the farthest sample until every piece is within the error.
        idx[0] = 0
        idx[1] = nn
        nidx = 2
        k = 0
        thr = sme * sme
        while k < nidx - 1:
            ia = idx[k]
            ib = idx[k + 1]
            maxd = _ZERO
            maxi = -1
            for m in range(ia + 1, ib):
                dev = dist_pt_seg3(epts, m, ia, ib)
                if dev > maxd:
                    maxd = dev
                    maxi = m
            if maxi != -1 and maxd > thr:
                for m in range(nidx, k + 1, -1):
                    idx[m] = idx[m - 1]
                idx[k + 1] = maxi
                nidx += 1
            else:
                k += 1
        hull[nhull] = j
        nhull += 1
        for q in range(1, nidx - 1):
            k = nidx - 1 - q if swapped else q
            verts[nverts, 0] = epts[idx[k], 0]
            verts[nverts, 1] = epts[idx[k], 1]
            verts[nverts, 2] = epts[idx[k], 2]
            hull[nhull] = nverts
            nhull += 1
            nverts += 1
        j = i
    return nverts, nhull


@njit(lent=True, link=False)
def _build_poly_detail(
    inp,
    nin,
    sd,
    sme,
    radius,
    cs,
    ch,
    hp,
    xmin,
    zmin,
    pw,
    ph,
    verts,
    hull,
    epts,
    edges,
    tris,
    tc,
):
    """Recast's ``buildPolyDetail`` for one polygon in local coordinates.

    Returns ``(nverts, ntris)``: rows of ``verts`` and ``tris`` written.
    """
    for i in range(nin):
        verts[i, 0] = inp[i, 0]
        verts[i, 1] = inp[i, 1]
        verts[i, 2] = inp[i, 2]
    ics = _ONE / cs
    min_extent = poly_min_extent(verts, nin)
    if sd > _ZERO:
        nverts, nhull = _sample_edges(
            inp, nin, sd, sme, ics, ch, radius, hp, xmin, zmin, pw, ph, verts, hull, epts
        )
    else:
        # navkit: Recast would loop forever on an empty hull; use the polygon itself.
        nverts = nin
        nhull = nin
        for i in range(nin):
            hull[i] = i
    ntris = triangulate_hull(verts, hull, nhull, nin, tris)
    if min_extent < sd * _TWO or ntris == 0 or not (sd > _ZERO):
        return nverts, ntris

    # Interior samples on the sample_dist grid, not too close to the outline.
    bminx = inp[0, 0]
    bminy = inp[0, 1]
    bminz = inp[0, 2]
    bmaxx = bminx
    bmaxy = bminy
    bmaxz = bminz
    for i in range(1, nin):
        bminx = min(bminx, inp[i, 0])
        bminy = min(bminy, inp[i, 1])
        bminz = min(bminz, inp[i, 2])
        bmaxx = max(bmaxx, inp[i, 0])
        bmaxy = max(bmaxy, inp[i, 1])
        bmaxz = max(bmaxz, inp[i, 2])
    x0 = int(math.floor(bminx / sd))
    x1 = int(math.ceil(bmaxx / sd))
    z0 = int(math.floor(bminz / sd))
    z1 = int(math.ceil(bmaxz / sd))
    need = max(x1 - x0, 0) * max(z1 - z0, 0)
    # Each sample's jittered position is fixed (the jitter hashes its index), so it
    # is computed once here rather than on every pass as Recast does: same values.
    spos = np.empty((need, 3), np.float32)
    added = np.zeros(need, np.bool_)
    py = (bmaxy + bminy) * _HALF
    margin = -sd / _TWO
    ns = 0
    for z in range(z0, z1):
        for x in range(x0, x1):
            px = F32(x) * sd
            pz = F32(z) * sd
            if dist_to_poly(inp, nin, px, pz) > margin:
                continue
            h = _patch_height(px, py, pz, ics, ch, radius, hp, xmin, zmin, pw, ph)
            spos[ns, 0] = F32(x) * sd + _jitter(ns, 0x8DA6B343) * cs * _TENTH
            spos[ns, 1] = F32(h) * ch
            spos[ns, 2] = F32(z) * sd + _jitter(ns, 0xD8163841) * cs * _TENTH
            ns += 1

    # Add the worst sample until all are within the error or the vertex budget is spent.
    tri_cache(verts, tris, ntris, tc)
    for _ in range(ns):
        if nverts >= MAX_VERTS:
            break
        bestd = _ZERO
        besti = -1
        for i in range(ns):
            if added[i]:
                continue
            d = dist_to_tri_mesh(spos[i, 0], spos[i, 1], spos[i, 2], tc, ntris)
            if d > bestd:  # d < 0: the sample hit no triangle
                bestd = d
                besti = i
        if bestd <= sme or besti == -1:
            break
        added[besti] = True
        verts[nverts, 0] = spos[besti, 0]
        verts[nverts, 1] = spos[besti, 1]
        verts[nverts, 2] = spos[besti, 2]
        nverts += 1
        ntris = delaunay_hull(verts, nverts, hull, nhull, edges, tris)
        tri_cache(verts, tris, ntris, tc)
    if ntris > MAX_TRIS:
        ntris = MAX_TRIS
    return nverts, ntris


# -- whole mesh -----------------------------------------------------------------------------


@njit
def _grow_rows(a, need):
    if a.shape[0] >= need:
        return a
    cap = max(need, 2 * a.shape[0])
    b = np.empty((cap, a.shape[1]), a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(link=False)
def _detail_kernel(
    pverts, polys, regs, nvp, mcs, mch, orig, bs,
    cidx, ccnt, cw, chh, sy, con, sreg, ccs, cch,
    sd, sme, radius,
):  # fmt: skip
    """All polygons: bounds and scratch buffers, then per polygon height patch,
    detail triangulation, world offset and concatenation (``rcBuildPolyMeshDetail``)."""
    npolys = polys.shape[0]
    bounds = np.empty((npolys, 4), np.int64)
    maxhw = 0
    maxhh = 0
    npv = 0
    for i in range(npolys):
        xmin = cw
        xmax = 0
        zmin = chh
        zmax = 0
        for j in range(nvp):
            v = polys[i, j]
            if v == MESH_NULL_IDX:
                break
            xmin = min(xmin, int(pverts[v, 0]))
            xmax = max(xmax, int(pverts[v, 0]))
            zmin = min(zmin, int(pverts[v, 2]))
            zmax = max(zmax, int(pverts[v, 2]))
            npv += 1
        xmin = max(0, xmin - 1)
        xmax = min(cw, xmax + 1)
        zmin = max(0, zmin - 1)
        zmax = min(chh, zmax + 1)
        bounds[i, 0] = xmin
        bounds[i, 1] = xmax
        bounds[i, 2] = zmin
        bounds[i, 3] = zmax
        if xmin >= xmax or zmin >= zmax:
            continue
        maxhw = max(maxhw, xmax - xmin)
        maxhh = max(maxhh, zmax - zmin)

    cells = maxhw * maxhh
    hp = np.empty(max(cells, 1), np.uint16)
    queue = np.empty((cells + 2, 3), np.int64)
    poly = np.empty(nvp, np.int64)
    inp = np.empty((nvp, 3), np.float32)
    verts = np.empty((256, 3), np.float32)
    hull = np.empty(MAX_VERTS + 1, np.int64)
    epts = np.empty((MAX_VERTS_PER_EDGE + 1, 3), np.float32)
    edges = np.empty((MAX_VERTS * 10, 4), np.int64)
    tris = np.empty((MAX_VERTS * 20, 4), np.int64)
    tc = np.empty((MAX_VERTS * 20, 13), np.float32)
    # The per-polygon helpers (and theirs, per sample) get borrowed views of the scratch
    # buffers: no reference counting in their calls (docs/architecture.md, Kernels).
    # ``scratch`` keeps the owners; it is used after the loop.
    scratch = (hp, queue, poly, inp, verts, hull, epts, edges, tris, tc)
    hp, queue, poly, inp, verts, hull, epts, edges, tris, tc = lend(scratch)

    meshes = np.empty((npolys, 4), np.uint32)
    vcap = npv + npv // 2
    out_v = np.empty((max(vcap, 16), 3), np.float32)
    out_t = np.empty((max(vcap * 2, 16), 4), np.uint8)
    nv_all = 0
    nt_all = 0
    yoff = orig[1] + cch
    for i in range(npolys):
        npoly = 0
        for j in range(nvp):
            v = polys[i, j]
            if v == MESH_NULL_IDX:
                break
            poly[j] = v
            inp[j, 0] = F32(pverts[v, 0]) * mcs
            inp[j, 1] = F32(pverts[v, 1]) * mch
            inp[j, 2] = F32(pverts[v, 2]) * mcs
            npoly += 1
        xmin = bounds[i, 0]
        zmin = bounds[i, 2]
        pw = bounds[i, 1] - xmin
        ph = bounds[i, 3] - zmin
        _fill_height_patch(
            pverts, poly, npoly, int(regs[i]), bs, hp, xmin, zmin, pw, ph,
            cidx, ccnt, cw, sy, con, sreg, queue,
        )  # fmt: skip
        nverts, ntris = _build_poly_detail(
            inp, npoly, sd, sme, radius, ccs, cch, hp, xmin, zmin, pw, ph,
            verts, hull, epts, edges, tris, tc,
        )  # fmt: skip
        for j in range(nverts):
            verts[j, 0] += orig[0]
            verts[j, 1] += yoff
            verts[j, 2] += orig[2]
        for j in range(npoly):
            inp[j, 0] += orig[0]
            inp[j, 1] += orig[1]
            inp[j, 2] += orig[2]
        meshes[i, 0] = nv_all
        meshes[i, 1] = nverts
        meshes[i, 2] = nt_all
        meshes[i, 3] = ntris
        out_v = _grow_rows(out_v, nv_all + nverts)
        out_v[nv_all : nv_all + nverts] = verts[:nverts]
        nv_all += nverts
        out_t = _grow_rows(out_t, nt_all + ntris)
        for j in range(ntris):
            a = tris[j, 0]
            b = tris[j, 1]
            c = tris[j, 2]
            out_t[nt_all, 0] = a
            out_t[nt_all, 1] = b
            out_t[nt_all, 2] = c
            out_t[nt_all, 3] = tri_edge_flags(verts, a, b, c, inp, npoly)
            nt_all += 1
    _keep_alive(scratch)
    return meshes, out_v[:nv_all].copy(), out_t[:nt_all].copy()


@njit
def _keep_alive(arrays):
    """A use of ``arrays``: their owner lives until here (see :func:`navkit._jit.borrow`)."""
    return len(arrays)


# -- public API -----------------------------------------------------------------------------


def _empty_detail() -> PolyMeshDetail:
    return PolyMeshDetail(
        np.zeros((0, 4), np.uint32), np.zeros((0, 3), np.float32), np.zeros((0, 4), np.uint8)
    )


@njit
def _cells_in_range(cidx, ccnt, nspans):
    for c in range(cidx.shape[0]):
        if int(cidx[c]) + int(ccnt[c]) > nspans:
            return False
    return True


def _as_u16(a: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype != np.uint16:
        if a.size and (a.min() < 0 or a.max() > 0xFFFF):
            raise InputError(f"{what} must lie in [0, 65535]")
        a = a.astype(np.uint16)
    return np.ascontiguousarray(a)


@njit
def _max_sample_grid(verts, polys, nvp, cs, sd):  # pragma: no cover - numba
    """Largest interior sample grid over the polygons, ``(ex * cs / sd + 2) * (ez * cs / sd + 2)``
    in double for each polygon's xz extent (ex, ez) [vx]; also the widest extents."""
    best = 0.0
    mx = 0
    mz = 0
    for i in range(polys.shape[0]):
        x0 = 1 << 30
        x1 = -(1 << 30)
        z0 = 1 << 30
        z1 = -(1 << 30)
        for j in range(nvp):
            v = polys[i, j]
            if v == MESH_NULL_IDX:
                continue
            x = np.int64(verts[v, 0])
            z = np.int64(verts[v, 2])
            x0 = min(x0, x)
            x1 = max(x1, x)
            z0 = min(z0, z)
            z1 = max(z1, z)
        ex = x1 - x0
        ez = z1 - z0
        best = max(best, (ex * cs / sd + 2) * (ez * cs / sd + 2))
        mx = max(mx, ex)
        mz = max(mz, ez)
    return best, mx, mz


def _check_inputs(pmesh: PolyMesh, chf: CompactHeightfield) -> tuple[np.ndarray, ...]:
    """Validate shapes, index ranges and bounds; return kernel-ready arrays (no copies
    when the dtypes are already Recast's)."""
    nvp = int(pmesh.nvp)
    verts = _as_u16(pmesh.verts, "pmesh.verts")
    polys = _as_u16(pmesh.polys, "pmesh.polys")
    regs = _as_u16(pmesh.regs, "pmesh.regs")
    if verts.ndim != 2 or verts.shape[1] != 3:
        raise InputError(f"pmesh.verts must be (nv, 3), got shape {verts.shape}")
    if nvp < 3 or polys.ndim != 2 or polys.shape[1] != 2 * nvp:
        raise InputError(
            f"pmesh.polys must be (np, 2*nvp) with nvp >= 3, got {polys.shape}, nvp={nvp}"
        )
    if regs.shape != (polys.shape[0],):
        raise InputError(f"pmesh.regs must be ({polys.shape[0]},), got {regs.shape}")
    vidx = polys[:, :nvp]
    used = vidx != MESH_NULL_IDX
    if not np.all(used[:, :3]) or np.any(~used[:, :-1] & used[:, 1:]):
        raise InputError("every polygon needs at least 3 leading vertex slots")
    vused = vidx[used]
    if vused.max() >= verts.shape[0]:
        raise InputError("pmesh.polys references a vertex that does not exist")
    bs = int(pmesh.border_size)
    w, h = int(chf.width), int(chf.height)
    cidx = np.ascontiguousarray(chf.cells_index).reshape(-1)
    ccnt = np.ascontiguousarray(chf.cells_count).reshape(-1)
    if cidx.shape[0] != w * h or ccnt.shape[0] != w * h:
        raise InputError(f"chf cells must hold width*height = {w * h} entries")
    n = int(chf.y.shape[0])
    for name in ("h", "con", "reg"):
        if getattr(chf, name).shape != (n,):
            raise InputError(f"chf.{name} must have one entry per span ({n})")
    if not _cells_in_range(cidx, ccnt, n):
        raise InputError("chf cells reference spans that do not exist")
    pv = verts[vused]
    if bs < 0 or int(pv[:, 0].max()) + bs >= w or int(pv[:, 2].max()) + bs >= h:
        raise InputError("polygon vertices lie outside the compact heightfield")
    return verts, polys, regs, cidx, ccnt


def build_poly_mesh_detail(
    pmesh: PolyMesh,
    chf: CompactHeightfield,
    *,
    sample_dist: float,
    sample_max_error: float,
) -> PolyMeshDetail:
    """Build the detail mesh of a polygon mesh (Recast's ``rcBuildPolyMeshDetail``).

    Parameters
    ----------
    pmesh : PolyMesh
        The polygon mesh (vertices in voxels relative to ``pmesh.bmin``).
    chf : CompactHeightfield
        The compact heightfield the polygons were built from, with regions.
    sample_dist : float
        Sampling distance along edges and over the interior [wu] (float32);
        0 = no extra samples (polygon vertices only).
    sample_max_error : float
        Largest allowed height deviation from the heightfield [wu] (float32).

    Returns
    -------
    PolyMeshDetail
        ``meshes`` (np, 4) uint32 (vert_base, vert_count, tri_base, tri_count),
        ``verts`` (nv, 3) float32 [wu], ``tris`` (nt, 4) uint8 (three local vertex
        indices and edge flags: bit 2*k when edge k lies on the polygon outline).

    Raises
    ------
    InputError
        Negative or non-finite settings, malformed arrays, polygons with fewer
        than 3 vertices or outside the heightfield.
    """
    sd = np.float32(sample_dist)
    sme = np.float32(sample_max_error)
    if not (np.isfinite(sd) and sd >= 0):
        raise InputError(f"sample_dist must be finite and >= 0, got {sample_dist!r}")
    if not (np.isfinite(sme) and sme >= 0):
        raise InputError(f"sample_max_error must be finite and >= 0, got {sample_max_error!r}")
    if pmesh.nverts == 0 or pmesh.npolys == 0:
        return _empty_detail()
    verts, polys, regs, cidx, ccnt = _check_inputs(pmesh, chf)
    return _detail_run(pmesh, chf, verts, polys, regs, cidx, ccnt, sd, sme)


def _detail_run(
    pmesh: PolyMesh,
    chf: CompactHeightfield,
    verts: np.ndarray,
    polys: np.ndarray,
    regs: np.ndarray,
    cidx: np.ndarray,
    ccnt: np.ndarray,
    sd: np.float32,
    sme: np.float32,
) -> PolyMeshDetail:
    """:func:`build_poly_mesh_detail` on checked inputs: uint16 ``verts`` / ``polys`` /
    ``regs`` of a non-empty ``pmesh`` built from ``chf``, flat ``cidx`` / ``ccnt``."""
    if sd > 0:
        # The interior sample grid of the widest polygon must stay reasonable.
        cells, ext_x, ext_z = _max_sample_grid(
            verts, polys, int(pmesh.nvp), float(pmesh.cs), float(sd)
        )
        if cells > _MAX_GRID_SAMPLES:
            raise InputError(
                f"sample_dist {float(sd)!r} is too small for polygons {ext_x} x "
                f"{ext_z} voxels wide (> {_MAX_GRID_SAMPLES} grid samples)"
            )
    radius = max(1, int(math.ceil(np.float32(pmesh.max_edge_error))))
    meshes, dverts, dtris = _detail_kernel(
        verts, polys, regs, int(pmesh.nvp), np.float32(pmesh.cs), np.float32(pmesh.ch),
        np.asarray(pmesh.bmin, np.float32), int(pmesh.border_size),
        cidx, ccnt, int(chf.width), int(chf.height),
        np.ascontiguousarray(chf.y, np.uint16), np.ascontiguousarray(chf.con, np.uint32),
        np.ascontiguousarray(chf.reg, np.uint16), np.float32(chf.cs), np.float32(chf.ch),
        sd, sme, radius,
    )  # fmt: skip
    return PolyMeshDetail(meshes, dverts, dtris)


def merge_poly_mesh_details(meshes: Sequence[PolyMeshDetail | None]) -> PolyMeshDetail:
    """Concatenate detail meshes (Recast's ``rcMergePolyMeshDetails``); ``None`` entries are skipped.

    Vertex and triangle bases are shifted by the vertices and triangles of the
    meshes before; local triangle indices and flags are unchanged.
    """
    parts = [m for m in meshes if m is not None]
    if not parts:
        return _empty_detail()
    out_m = []
    nv = 0
    nt = 0
    for m in parts:
        mm = np.asarray(m.meshes, np.uint32).reshape(-1, 4).copy()
        mm[:, 0] += np.uint32(nv)
        mm[:, 2] += np.uint32(nt)
        out_m.append(mm)
        nv += m.nverts
        nt += m.ntris
    return PolyMeshDetail(
        np.concatenate(out_m).astype(np.uint32),
        np.concatenate([np.asarray(m.verts, np.float32).reshape(-1, 3) for m in parts]),
        np.concatenate([np.asarray(m.tris, np.uint8).reshape(-1, 4) for m in parts]),
    )
