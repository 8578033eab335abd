"""Convex polygon mesh from region contours (Recast's ``rcBuildPolyMesh``).

Each contour of a :class:`ContourSet` becomes a handful of convex polygons:

1. **Triangulation** by ear clipping in the xz plane, on integer voxel
   coordinates. A vertex is an ear when the diagonal joining its two neighbours
   lies inside the polygon (cone test) and crosses or touches no other edge.
   Of all current ears the one with the shortest diagonal is clipped first
   (first in contour order on ties). When no ear exists (overlapping contour
   segments), a looser test (closed cone, only proper crossings) is tried; as in
   Recast, the length it ranks by is measured to the vertex *after* the
   diagonal's end.
2. **Welding**: contour vertices go into a shared vertex table through a
   4096-bucket hash of (x, z); a vertex is reused when x and z agree and y is
   within 2 voxels, otherwise appended.
3. **Merging**: pairs of polygons sharing an edge are merged while the result
   stays convex and has at most ``nvp`` vertices, always taking the pair whose
   shared edge is longest (first pair in (j, k) order on ties); the merged
   polygon walks A from the vertex after the shared edge, then B likewise, and
   the last polygon moves into B's slot.
4. **Border vertex removal** (tiled builds): vertices flagged
   ``BORDER_VERTEX`` are removed when that leaves a valid polygon fan; the
   polygons around them are deleted (last polygon moves into the gap), the hole
   outline is rebuilt from their remaining edges, re-triangulated and
   re-merged; polygons spanning several regions get region 0
   (``RC_MULTIPLE_REGS``).
5. **Adjacency**: each edge is matched to the same edge walked the other way in
   another polygon (Eric Lengyel's edge list, as ``buildMeshAdjacency``);
   with ``border_size > 0``, unmatched edges lying on the tile boundary become
   portals ``0x8000 | dir`` (0: x = 0, 1: z = height, 2: x = width, 3: z = 0).

:func:`merge_poly_meshes` joins tile meshes into one (``rcMergePolyMeshes``).
All coordinates are voxel units [vx] relative to ``bmin``. The kernels of steps
1, 2, 3 and 5 live in :mod:`navkit.recast._polymesh_kernels`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from navkit._jit import lend, njit
from navkit.errors import BuildError, ConfigError, InputError
from navkit.recast._polymesh_kernels import (
    _BUCKETS,
    _MULTIPLE_REGS,
    _NULL,
    _link_neighbours,
    _mark_portals,
    _merge_greedily,
    _nverts_of,
    _triangulate,
    _weld_vertex,
)
from navkit.recast.types import BORDER_VERTEX, ContourSet, PolyMesh

__all__ = ["build_poly_mesh", "merge_poly_meshes"]

_MAX_INPUT_VERTS = 0xFFFE  #: Recast refuses contour sets with this many vertices or more
_MAX_NVP = 255
_MAX_INDEX = 0xFFFF  #: vertex/polygon counts a uint16 mesh can index

# kernel status codes
_OK = 0
_ERR_TOO_MANY_POLYS = 1


# -- border vertex removal ------------------------------------------------------------------
@njit(lent=True)
def _removable(polys, npolys, nvp, rem):
    """Whether removing vertex ``rem`` leaves a single hole that can be re-filled."""
    touched = 0
    remaining_edges = 0
    for i in range(npolys):
        nv = _nverts_of(polys, i, nvp)
        hits = 0
        for j in range(nv):
            if polys[i, j] == rem:
                hits += 1
        if hits:
            touched += hits
            remaining_edges += nv - (hits + 1)
    if remaining_edges <= 2:
        return False
    # the edges at rem: each should be shared by two polygons except the two open ones
    other = np.empty(touched * 2, np.int64)
    uses = np.empty(touched * 2, np.int64)
    ne = 0
    for i in range(npolys):
        nv = _nverts_of(polys, i, nvp)
        k = nv - 1
        for j in range(nv):
            if polys[i, j] == rem or polys[i, k] == rem:
                b = polys[i, k] if polys[i, j] == rem else polys[i, j]
                found = False
                for m in range(ne):
                    if other[m] == b:
                        uses[m] += 1
                        found = True
                if not found:
                    other[ne] = b
                    uses[ne] = 1
                    ne += 1
            k = j
    open_edges = 0
    for m in range(ne):
        if uses[m] < 2:
            open_edges += 1
    return open_edges <= 2


@njit(lent=True, link=False)
def _remove_vertex(verts, nv, polys, npolys, regs, areas, nvp, rem, max_polys):
    """Remove vertex ``rem`` and re-fill the hole it leaves. Returns ``(nv, npolys, bad)``;
    ``bad`` is 1 when the hole could not be fully triangulated."""
    count = 0
    for i in range(npolys):
        for j in range(_nverts_of(polys, i, nvp)):
            if polys[i, j] == rem:
                count += 1
    cap = count * nvp + 2
    e_a = np.empty(cap, np.int64)
    e_b = np.empty(cap, np.int64)
    e_reg = np.empty(cap, np.int64)
    e_area = np.empty(cap, np.int64)
    ne = 0
    # delete the polygons around rem, keeping their outer edges
    i = 0
    while i < npolys:
        nvi = _nverts_of(polys, i, nvp)
        has = False
        for j in range(nvi):
            if polys[i, j] == rem:
                has = True
        if not has:
            i += 1
            continue
        k = nvi - 1
        for j in range(nvi):
            if polys[i, j] != rem and polys[i, k] != rem:
                e_a[ne] = polys[i, k]
                e_b[ne] = polys[i, j]
                e_reg[ne] = regs[i]
                e_area[ne] = areas[i]
                ne += 1
            k = j
        last = npolys - 1
        for j in range(nvp):
            polys[i, j] = polys[last, j]
            polys[i, nvp + j] = _NULL
        regs[i] = regs[last]
        areas[i] = areas[last]
        npolys -= 1
    # drop the vertex and renumber
    for i in range(rem, nv - 1):
        verts[i, 0] = verts[i + 1, 0]
        verts[i, 1] = verts[i + 1, 1]
        verts[i, 2] = verts[i + 1, 2]
    nv -= 1
    for i in range(npolys):
        for j in range(_nverts_of(polys, i, nvp)):
            if polys[i, j] > rem:
                polys[i, j] -= 1
    for m in range(ne):
        if e_a[m] > rem:
            e_a[m] -= 1
        if e_b[m] > rem:
            e_b[m] -= 1
    if ne == 0:
        return nv, npolys, 0
    # chain the kept edges into the hole outline, growing at both ends
    hcap = ne + 2
    hole = np.empty(hcap, np.int64)
    hreg = np.empty(hcap, np.int64)
    harea = np.empty(hcap, np.int64)
    hole[0] = e_a[0]
    hreg[0] = e_reg[0]
    harea[0] = e_area[0]
    nh = 1
    while ne > 0:
        progressed = False
        m = 0
        while m < ne:
            at_front = hole[0] == e_b[m]
            at_back = (not at_front) and hole[nh - 1] == e_a[m]
            if at_front or at_back:
                if nh >= hcap:
                    break
                if at_front:
                    for q in range(nh, 0, -1):
                        hole[q] = hole[q - 1]
                        hreg[q] = hreg[q - 1]
                        harea[q] = harea[q - 1]
                    hole[0] = e_a[m]
                    hreg[0] = e_reg[m]
                    harea[0] = e_area[m]
                else:
                    hole[nh] = e_b[m]
                    hreg[nh] = e_reg[m]
                    harea[nh] = e_area[m]
                nh += 1
                ne -= 1
                e_a[m] = e_a[ne]
                e_b[m] = e_b[ne]
                e_reg[m] = e_reg[ne]
                e_area[m] = e_area[ne]
                progressed = True
            else:
                m += 1
        if not progressed:
            break
    # triangulate the hole on the mesh's vertices
    hx = np.empty(nh, np.int64)
    hz = np.empty(nh, np.int64)
    ring = np.empty(nh, np.int64)
    for q in range(nh):
        hx[q] = verts[hole[q], 0]
        hz[q] = verts[hole[q], 2]
        ring[q] = q
    ear = np.zeros(nh, np.bool_)
    tris = np.empty((max(nh, 1), 3), np.int64)
    nt = _triangulate(nh, hx, hz, ring, ear, tris)
    bad = 0
    if nt < 0:
        nt = -nt
        bad = 1
    tp = np.full((nt + 1, nvp), _NULL, np.int64)
    treg = np.empty(nt + 1, np.int64)
    tarea = np.empty(nt + 1, np.int64)
    ntp = 0
    for t in range(nt):
        a = tris[t, 0]
        b = tris[t, 1]
        c = tris[t, 2]
        if a == b or a == c or b == c:
            continue
        tp[ntp, 0] = hole[a]
        tp[ntp, 1] = hole[b]
        tp[ntp, 2] = hole[c]
        if hreg[a] != hreg[b] or hreg[b] != hreg[c]:
            treg[ntp] = _MULTIPLE_REGS
        else:
            treg[ntp] = hreg[a]
        tarea[ntp] = harea[a]
        ntp += 1
    if ntp == 0:
        return nv, npolys, bad
    if nvp > 3:
        row = np.empty(nvp, np.int64)
        ntp = _merge_greedily(tp, ntp, treg, tarea, verts, nvp, row)
    for t in range(ntp):
        if npolys >= max_polys:
            break
        for j in range(nvp):
            polys[npolys, j] = tp[t, j]
            polys[npolys, nvp + j] = _NULL
        regs[npolys] = treg[t]
        areas[npolys] = tarea[t]
        npolys += 1
    return nv, npolys, bad


# -- the stage kernel -----------------------------------------------------------------------
@njit
def _keep_alive(arrays):
    """A use of ``arrays``: their owner lives until here (see :func:`navkit._jit.borrow`)."""
    return len(arrays)


@njit(link=False)
def _build_kernel(cverts, cstart, ccount, creg, carea, nvp, border_size, width, height):
    """Polygon mesh of all contours; see the module docstring.

    Returns ``(verts, nv, polys, npolys, regs, areas, status, bad_contours, bad_holes)``.
    """
    cverts, cstart, ccount, creg, carea = lend((cverts, cstart, ccount, creg, carea))
    nc = ccount.shape[0]
    max_verts = 0
    max_polys = 0
    longest = 0
    for c in range(nc):
        n = ccount[c]
        if n < 3:
            continue
        max_verts += n
        max_polys += n - 2
        longest = max(longest, n)
    verts = np.zeros((max(max_verts, 1), 3), np.int64)
    polys = np.full((max(max_polys, 1), 2 * nvp), _NULL, np.int64)
    regs = np.zeros(max(max_polys, 1), np.int64)
    areas = np.zeros(max(max_polys, 1), np.int64)
    remove_me = np.zeros(max(max_verts, 1) + 1, np.uint8)
    first = np.full(_BUCKETS, -1, np.int64)
    chain = np.zeros(max(max_verts, 1), np.int64)

    m = max(longest, 3)
    px = np.empty(m, np.int64)
    pz = np.empty(m, np.int64)
    ring = np.empty(m, np.int64)
    ear = np.zeros(m, np.bool_)
    tris = np.empty((m, 3), np.int64)
    vid = np.empty(m, np.int64)
    tp = np.full((m + 1, nvp), _NULL, np.int64)
    treg = np.empty(m + 1, np.int64)
    tarea = np.empty(m + 1, np.int64)
    row = np.empty(nvp, np.int64)
    # The helpers get borrowed views: no reference counting in their calls (about one
    # per vertex; docs/architecture.md, Kernels). ``owners`` is returned and ``scratch``
    # is used last at the end, so the memory outlives every view.
    owners = (verts, polys, regs, areas)
    scratch = (px, pz, ring, ear, tris, vid, tp, treg, tarea, row, first, chain, remove_me)
    verts, polys, regs, areas = lend(owners)
    px, pz, ring, ear, tris, vid, tp, treg, tarea, row, first, chain, remove_me = lend(scratch)

    nv = 0
    npolys = 0
    bad_contours = 0
    bad_holes = 0
    for c in range(nc):
        n = ccount[c]
        if n < 3:
            continue
        base = cstart[c]
        for j in range(n):
            px[j] = cverts[base + j, 0]
            pz[j] = cverts[base + j, 2]
            ring[j] = j
        nt = _triangulate(n, px, pz, ring, ear, tris)
        if nt <= 0:
            bad_contours += 1
            nt = -nt
        for j in range(n):
            x = cverts[base + j, 0] & 0xFFFF
            y = cverts[base + j, 1] & 0xFFFF
            z = cverts[base + j, 2] & 0xFFFF
            w, nv = _weld_vertex(x, y, z, verts, first, chain, nv)
            vid[j] = w
            if cverts[base + j, 3] & BORDER_VERTEX:
                remove_me[vid[j]] = 1
        ntp = 0
        for t in range(nt):
            a = tris[t, 0]
            b = tris[t, 1]
            d = tris[t, 2]
            if a == b or a == d or b == d:
                continue
            for k in range(nvp):
                tp[ntp, k] = _NULL
            tp[ntp, 0] = vid[a]
            tp[ntp, 1] = vid[b]
            tp[ntp, 2] = vid[d]
            treg[ntp] = creg[c]
            tarea[ntp] = carea[c]
            ntp += 1
        if ntp == 0:
            continue
        if nvp > 3:
            ntp = _merge_greedily(tp, ntp, treg, tarea, verts, nvp, row)
        if npolys + ntp > max_polys:
            vo, po, ro, ao = owners
            return vo, nv, po, npolys, ro, ao, _ERR_TOO_MANY_POLYS, bad_contours, 0
        for t in range(ntp):
            for k in range(nvp):
                polys[npolys, k] = tp[t, k]
            regs[npolys] = creg[c]
            areas[npolys] = carea[c]
            npolys += 1

    i = 0
    while i < nv:
        if remove_me[i] and _removable(polys, npolys, nvp, i):
            nv, npolys, bad = _remove_vertex(
                verts, nv, polys, npolys, regs, areas, nvp, i, max_polys
            )
            bad_holes += bad
            for j in range(i, nv):
                remove_me[j] = remove_me[j + 1]
        else:
            i += 1

    _link_neighbours(polys, npolys, nv, nvp)
    if border_size > 0:
        _mark_portals(polys, npolys, verts, nvp, width, height)
    _keep_alive(scratch)
    vo, po, ro, ao = owners
    return vo, nv, po, npolys, ro, ao, _OK, bad_contours, bad_holes


# -- public API -------------------------------------------------------------------------------
def _warn_bad(bad_contours: int, bad_holes: int, stacklevel: int = 2) -> None:
    """Recast logs these as warnings and keeps the triangles it found."""
    warnings.warn(
        f"build_poly_mesh: {bad_contours} contour(s) and {bad_holes} border-vertex "
        "hole(s) could not be fully triangulated (self-overlapping outline); "
        "their partial triangulation was kept, as Recast does",
        RuntimeWarning,
        stacklevel=stacklevel,
    )


def _check_nvp(nvp: int) -> int:
    if isinstance(nvp, bool) or not float(nvp).is_integer() or not 3 <= int(nvp) <= _MAX_NVP:
        raise ConfigError("nvp", f"must be an integer in [3, {_MAX_NVP}], got {nvp!r}")
    return int(nvp)


def build_poly_mesh(cset: ContourSet, *, nvp: int) -> PolyMesh:
    """Convex polygons of at most ``nvp`` vertices covering the contours (``rcBuildPolyMesh``).

    Parameters
    ----------
    cset : ContourSet
        Region contours; ``verts`` (sum, 4) int32 (x, y, z, flags) [vx]. Contours
        with fewer than 3 vertices are skipped.
    nvp : int
        Maximum vertices per polygon (3 or more; Detour needs at most 6).

    Returns
    -------
    PolyMesh
        ``verts`` (nv, 3) uint16 [vx], ``polys`` (np, 2*nvp) uint16 (vertex indices,
        then neighbour polygon or ``0x8000 | dir`` portal, padded with 0xFFFF),
        ``regs`` (np,) uint16, ``areas`` (np,) uint8 (the contours'), ``flags`` zeros.

    Raises
    ------
    ConfigError
        ``nvp`` out of range.
    InputError
        Inconsistent contour arrays.
    BuildError
        0xFFFE or more contour vertices (Recast's limit), or more polygons than
        Recast's budget (sum of ``nverts - 2``).
    """
    nvp = _check_nvp(nvp)
    counts = np.asarray(cset.nverts)
    verts = np.asarray(cset.verts)
    nc = counts.shape[0] if counts.ndim == 1 else -1
    if (
        counts.ndim != 1
        or np.asarray(cset.reg).shape != (nc,)
        or np.asarray(cset.area).shape != (nc,)
    ):
        raise InputError("ContourSet: reg, area and nverts must be 1-D arrays of one length")
    if nc and (counts.dtype.kind not in "iu" or counts.min() < 0):
        raise InputError("ContourSet.nverts must be non-negative integers")
    total = int(counts.sum()) if nc else 0
    if verts.ndim != 2 or verts.shape[1] != 4 or verts.shape[0] != total:
        raise InputError(f"ContourSet.verts must be (sum(nverts)={total}, 4), got {verts.shape}")
    if total and verts.dtype.kind not in "iu":
        raise InputError("ContourSet.verts must be integers (voxel coordinates)")
    counts64 = counts.astype(np.int64)
    used = int(counts64[counts64 >= 3].sum())
    if used >= _MAX_INPUT_VERTS:
        raise BuildError(
            f"rcBuildPolyMesh: too many vertices {used} (limit {_MAX_INPUT_VERTS - 1})"
        )
    starts = np.zeros(nc, np.int64)
    if nc:
        starts[1:] = np.cumsum(counts64)[:-1]
    out = _build_kernel(
        verts.astype(np.int64),
        starts,
        counts64,
        np.asarray(cset.reg).astype(np.int64),
        np.asarray(cset.area).astype(np.int64),
        nvp,
        int(cset.border_size),
        int(cset.width),
        int(cset.height),
    )
    mverts, nv, polys, npolys, regs, areas, status, bad_contours, bad_holes = out
    if status == _ERR_TOO_MANY_POLYS:
        raise BuildError("rcBuildPolyMesh: too many polygons")
    if bad_contours or bad_holes:
        _warn_bad(bad_contours, bad_holes, stacklevel=3)
    return PolyMesh(
        verts=mverts[:nv].astype(np.uint16),
        polys=polys[:npolys].astype(np.uint16),
        regs=regs[:npolys].astype(np.uint16),
        flags=np.zeros(npolys, np.uint16),
        areas=areas[:npolys].astype(np.uint8),
        nvp=nvp,
        bmin=np.asarray(cset.bmin, np.float32).copy(),
        bmax=np.asarray(cset.bmax, np.float32).copy(),
        cs=float(cset.cs),
        ch=float(cset.ch),
        border_size=int(cset.border_size),
        max_edge_error=float(cset.max_error),
    )


# -- merging tile meshes ------------------------------------------------------------------
@njit
def _merge_kernel(mverts, vstart, vcount, polys_in, pstart, pcount, offs, sides, nvp):
    """Weld the meshes' vertices (shifted by ``offs``) and copy their polygons.

    ``sides[m]`` says which of x-, z+, x+, z- (portal dirs 0..3) mesh ``m`` touches
    on the merged bounds; portals on those sides are kept. Returns
    ``(verts, nv, polys)``.
    """
    total_v = 0
    for m in range(vcount.shape[0]):
        total_v += vcount[m]
    verts = np.zeros((max(total_v, 1), 3), np.int64)
    first = np.full(_BUCKETS, -1, np.int64)
    chain = np.zeros(max(total_v, 1), np.int64)
    polys = np.full((polys_in.shape[0], 2 * nvp), _NULL, np.int64)
    nv = 0
    remap = np.zeros(max(total_v, 1), np.int64)
    out = 0
    for m in range(vcount.shape[0]):
        for j in range(vcount[m]):
            r = vstart[m] + j
            x = (mverts[r, 0] + offs[m, 0]) & 0xFFFF
            z = (mverts[r, 2] + offs[m, 1]) & 0xFFFF
            w, nv = _weld_vertex(x, mverts[r, 1], z, verts, first, chain, nv)
            remap[j] = w
        on_border = sides[m, 0] or sides[m, 1] or sides[m, 2] or sides[m, 3]
        for p in range(pstart[m], pstart[m] + pcount[m]):
            for k in range(nvp):
                v = polys_in[p, k]
                if v == _NULL:
                    break
                polys[out, k] = remap[v]
            if on_border:
                for k in range(nvp, 2 * nvp):
                    s = polys_in[p, k]
                    if (s & 0x8000) and s != _NULL and (s & 0xF) < 4 and sides[m, s & 0xF]:
                        polys[out, k] = s
            out += 1
    _link_neighbours(polys, out, nv, nvp)
    return verts, nv, polys


def _snap(a: np.float32, b: np.float32, cs: np.float32) -> int:
    """``(unsigned short)floorf((a - b) / cs + 0.5f)`` in float32."""
    with np.errstate(all="ignore"):
        v = np.floor(np.float32(np.float32(a - b) / cs) + np.float32(0.5))
    return int(v) & 0xFFFF if np.isfinite(v) else 0


def merge_poly_meshes(meshes: Sequence[PolyMesh]) -> PolyMesh:
    """Join tile meshes into one mesh (``rcMergePolyMeshes``).

    Vertices are shifted by each tile's offset from the merged ``bmin`` (rounded to
    cells) and welded as in :func:`build_poly_mesh`; polygons keep their order,
    regions, areas and flags. Portal entries survive only on sides of a tile that
    lie on the merged bounds; adjacency is rebuilt across tiles.

    Parameters
    ----------
    meshes : sequence of PolyMesh
        Meshes with one ``nvp``; ``cs``, ``ch`` are taken from the first.

    Returns
    -------
    PolyMesh
        ``verts`` (nv, 3) uint16 [vx] relative to the merged ``bmin``;
        ``border_size`` and ``max_edge_error`` are 0 as in Recast.

    Raises
    ------
    InputError
        Empty sequence, differing ``nvp`` or malformed arrays.
    BuildError
        More than 0xFFFF vertices or polygons in the result (Recast only logs this).
    """
    meshes = list(meshes)
    if not meshes:
        raise InputError("merge_poly_meshes: no meshes given")
    nvp = int(meshes[0].nvp)
    for i, m in enumerate(meshes):
        if int(m.nvp) != nvp:
            raise InputError(f"merge_poly_meshes: mesh {i} has nvp {m.nvp}, mesh 0 has {nvp}")
        npi = np.asarray(m.polys).shape[0]
        if np.asarray(m.verts).ndim != 2 or np.asarray(m.verts).shape[1] != 3:
            raise InputError(f"merge_poly_meshes: mesh {i} verts must be (nv, 3)")
        if np.asarray(m.polys).shape != (npi, 2 * nvp):
            raise InputError(f"merge_poly_meshes: mesh {i} polys must be (np, {2 * nvp})")
        for name in ("regs", "areas", "flags"):
            if np.asarray(getattr(m, name)).shape != (npi,):
                raise InputError(f"merge_poly_meshes: mesh {i} {name} must be ({npi},)")
        pv = np.asarray(m.polys)[:, :nvp]
        if np.any((pv != _NULL) & (pv >= np.asarray(m.verts).shape[0])):
            raise InputError(f"merge_poly_meshes: mesh {i} has vertex indices out of range")
    cs = np.float32(meshes[0].cs)
    bmin = np.asarray(meshes[0].bmin, np.float32).copy()
    bmax = np.asarray(meshes[0].bmax, np.float32).copy()
    for m in meshes:
        bmin = np.minimum(bmin, np.asarray(m.bmin, np.float32))
        bmax = np.maximum(bmax, np.asarray(m.bmax, np.float32))
    nm = len(meshes)
    offs = np.zeros((nm, 2), np.int64)
    sides = np.zeros((nm, 4), np.bool_)
    for i, m in enumerate(meshes):
        mb0 = np.asarray(m.bmin, np.float32)
        mb1 = np.asarray(m.bmax, np.float32)
        offs[i] = (_snap(mb0[0], bmin[0], cs), _snap(mb0[2], bmin[2], cs))
        sides[i] = (
            offs[i, 0] == 0,
            _snap(bmax[2], mb1[2], cs) == 0,
            _snap(bmax[0], mb1[0], cs) == 0,
            offs[i, 1] == 0,
        )
    vcount = np.array([np.asarray(m.verts).shape[0] for m in meshes], np.int64)
    pcount = np.array([np.asarray(m.polys).shape[0] for m in meshes], np.int64)
    vstart = np.concatenate([[0], np.cumsum(vcount)[:-1]]).astype(np.int64)
    pstart = np.concatenate([[0], np.cumsum(pcount)[:-1]]).astype(np.int64)
    allv = np.concatenate([np.asarray(m.verts, np.int64).reshape(-1, 3) for m in meshes])
    allp = np.concatenate([np.asarray(m.polys, np.int64).reshape(-1, 2 * nvp) for m in meshes])
    verts, nv, polys = _merge_kernel(allv, vstart, vcount, allp, pstart, pcount, offs, sides, nvp)
    if nv > _MAX_INDEX or polys.shape[0] > _MAX_INDEX:
        # Recast only logs "data can be corrupted"; uint16 indices cannot hold these
        raise BuildError(
            f"rcMergePolyMeshes: {nv} vertices / {polys.shape[0]} polygons (max {_MAX_INDEX})"
        )
    return PolyMesh(
        verts=verts[:nv].astype(np.uint16),
        polys=polys.astype(np.uint16),
        regs=np.concatenate([np.asarray(m.regs) for m in meshes]).astype(np.uint16),
        flags=np.concatenate([np.asarray(m.flags) for m in meshes]).astype(np.uint16),
        areas=np.concatenate([np.asarray(m.areas) for m in meshes]).astype(np.uint8),
        nvp=nvp,
        bmin=bmin,
        bmax=bmax,
        cs=float(cs),
        ch=float(np.float32(meshes[0].ch)),
        border_size=0,
        max_edge_error=0.0,
    )
