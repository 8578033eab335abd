"""Triangle rasterization into a solid heightfield (Recast's ``RecastRasterization.cpp``).

Each triangle is cut into the grid's columns by repeatedly splitting a convex
polygon along axis-aligned lines: first along z into one row strip and the
remainder, then the strip along x into one cell piece and the remainder (Recast's
``rasterizeTri`` / ``dividePoly``). The y-range of each cell piece, relative to the
heightfield's floor, is snapped down/up to whole voxels and added to the column's
span list; overlapping spans merge, and the merged span keeps the higher area id
of the two when their tops lie within ``flag_merge_threshold`` voxels
(``addSpan``). All geometry is done in float32 in Recast's order, so spans match
Recast's voxel for voxel. Span lists live in a pool of arrays (next index + free
list, grown by doubling) and are converted to the CSR :class:`Heightfield` at the
end.

Also here: ``rcMarkWalkableTriangles`` / ``rcClearUnwalkableTriangles`` (slope test
on float32 triangle normals) and ``rcCalcGridSize``.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import F32, njit
from ..errors import BuildError, InputError
from .types import SPAN_MAX_HEIGHT, WALKABLE_AREA, Heightfield

__all__ = [
    "calc_grid_size",
    "create_heightfield_grid",
    "mark_walkable_triangles",
    "clear_unwalkable_triangles",
    "rasterize_triangles",
    "MAX_GRID_CELLS",
]

#: Largest number of columns one heightfield may have (beyond it, bake with tiles).
MAX_GRID_CELLS = 2**31 // 4

_RC_PI = np.float32(3.14159265)


# -- input checks ------------------------------------------------------------------------------
def _as_vertices(vertices: np.ndarray) -> np.ndarray:
    v = np.asarray(vertices)
    if v.ndim != 2 or v.shape[1] != 3:
        raise InputError(f"vertices must have shape (n, 3), got {v.shape}")
    if not (np.issubdtype(v.dtype, np.floating) or np.issubdtype(v.dtype, np.integer)):
        raise InputError(f"vertices must be numeric, got dtype {v.dtype}")
    v = np.ascontiguousarray(v, dtype=np.float32)
    if not np.all(np.isfinite(v)):
        raise InputError("vertices contain NaN or infinite values (after conversion to float32)")
    return v


def _as_triangles(triangles: np.ndarray, nverts: int) -> np.ndarray:
    t = np.asarray(triangles)
    if t.ndim != 2 or t.shape[1] != 3:
        raise InputError(f"triangles must have shape (m, 3), got {t.shape}")
    if t.size and not np.issubdtype(t.dtype, np.integer):
        raise InputError(f"triangles must be integer vertex indices, got dtype {t.dtype}")
    if t.size and (t.min() < 0 or t.max() >= nverts):
        raise InputError(
            f"triangle vertex indices must lie in [0, {nverts}), got [{t.min()}, {t.max()}]"
        )
    return np.ascontiguousarray(t, dtype=np.int32)


def _as_areas(areas: np.ndarray, ntris: int, name: str = "areas") -> np.ndarray:
    a = np.asarray(areas)
    if a.shape != (ntris,):
        raise InputError(f"{name} must have shape ({ntris},), got {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"{name} must be integer area ids, got dtype {a.dtype}")
    if a.size and (a.min() < 0 or a.max() > WALKABLE_AREA):
        raise InputError(f"{name} must lie in [0, {WALKABLE_AREA}], got [{a.min()}, {a.max()}]")
    return np.ascontiguousarray(a, dtype=np.uint8)


def _as_vec3(v, name: str) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    if a.shape != (3,):
        raise InputError(f"{name} must have shape (3,), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} must be finite, got {a}")
    return a.astype(np.float32)


def _positive_f32(v, name: str) -> np.float32:
    f = np.float32(v)
    if not (np.isfinite(f) and f > 0):
        raise InputError(f"{name} must be a finite number > 0, got {v!r}")
    return f


# -- grid size -----------------------------------------------------------------------------------
def calc_grid_size(bmin, bmax, cs: float) -> tuple[int, int]:
    """Number of columns covering the bounds (Recast's ``rcCalcGridSize``).

    Parameters
    ----------
    bmin, bmax : (3,) float
        Bounds [wu].
    cs : float
        Cell size [wu].

    Returns
    -------
    (width, height) : tuple of int
        Columns along x and z [vx]: ``(int)((bmax - bmin) / cs + 0.5)`` in float32.
    """
    lo, hi = _as_vec3(bmin, "bmin"), _as_vec3(bmax, "bmax")
    c = _positive_f32(cs, "cs")
    half = np.float32(0.5)
    w = int(np.float32(np.float32(hi[0] - lo[0]) / c) + half)
    h = int(np.float32(np.float32(hi[2] - lo[2]) / c) + half)
    return w, h


def create_heightfield_grid(bmin, bmax, cs: float) -> tuple[int, int]:
    """Alias of :func:`calc_grid_size`: the (width, height) Recast gives a heightfield."""
    return calc_grid_size(bmin, bmax, cs)


# -- walkable triangles --------------------------------------------------------------------------
def _walkable_threshold(walkable_slope_angle: float) -> np.float32:
    """``cosf(angle / 180 * RC_PI)`` in float32 (cos evaluated in double, rounded once)."""
    ang = np.float32(walkable_slope_angle)
    if not np.isfinite(ang):
        raise InputError(f"walkable_slope_angle must be finite, got {walkable_slope_angle!r}")
    rad = np.float32(np.float32(ang / np.float32(180.0)) * _RC_PI)
    return np.float32(math.cos(float(rad)))


@njit
def _tri_normal_y_kernel(verts, tris):
    """y component of each triangle's unit normal, in Recast's float32 arithmetic."""
    m = tris.shape[0]
    out = np.empty(m, dtype=np.float32)
    for i in range(m):
        a = tris[i, 0]
        b = tris[i, 1]
        c = tris[i, 2]
        e0x = verts[b, 0] - verts[a, 0]
        e0y = verts[b, 1] - verts[a, 1]
        e0z = verts[b, 2] - verts[a, 2]
        e1x = verts[c, 0] - verts[a, 0]
        e1y = verts[c, 1] - verts[a, 1]
        e1z = verts[c, 2] - verts[a, 2]
        nx = e0y * e1z - e0z * e1y
        ny = e0z * e1x - e0x * e1z
        nz = e0x * e1y - e0y * e1x
        sq = nx * nx + ny * ny + nz * nz
        inv = F32(1.0) / np.sqrt(sq)
        out[i] = ny * inv
    return out


def _normal_y(vertices, triangles):
    v = _as_vertices(vertices)
    t = _as_triangles(triangles, v.shape[0])
    return _tri_normal_y_kernel(v, t), t.shape[0]


def mark_walkable_triangles(
    vertices: np.ndarray,
    triangles: np.ndarray,
    walkable_slope_angle: float,
    areas: np.ndarray | None = None,
) -> np.ndarray:
    """Area ids per triangle: 63 where the slope is walkable (``rcMarkWalkableTriangles``).

    Parameters
    ----------
    vertices : (n, 3) float32
        Positions [wu].
    triangles : (m, 3) int
        Vertex indices.
    walkable_slope_angle : float
        Max walkable slope [degrees].
    areas : (m,) uint8, optional
        Starting area ids (default all 0). Not modified.

    Returns
    -------
    (m,) uint8
        ``WALKABLE_AREA`` (63) where the unit normal's y exceeds ``cos(slope)``
        (float32), elsewhere the given area (or 0). Degenerate triangles keep theirs.
    """
    thr = _walkable_threshold(walkable_slope_angle)
    ny, m = _normal_y(vertices, triangles)
    out = np.zeros(m, np.uint8) if areas is None else _as_areas(areas, m).copy()
    out[ny > thr] = WALKABLE_AREA
    return out


def clear_unwalkable_triangles(
    vertices: np.ndarray, triangles: np.ndarray, walkable_slope_angle: float, areas: np.ndarray
) -> np.ndarray:
    """Set too-steep triangles to area 0 (``rcClearUnwalkableTriangles``).

    Parameters
    ----------
    vertices : (n, 3) float32
    triangles : (m, 3) int
    walkable_slope_angle : float
        [degrees]
    areas : (m,) uint8
        Area ids; not modified.

    Returns
    -------
    (m,) uint8
        A copy of ``areas`` with 0 where the normal's y is ``<= cos(slope)``.
    """
    thr = _walkable_threshold(walkable_slope_angle)
    ny, m = _normal_y(vertices, triangles)
    out = _as_areas(areas, m).copy()
    out[ny <= thr] = 0  # NaN normals (degenerate triangles) compare False, as in Recast
    return out


# -- rasterization kernels -----------------------------------------------------------------------
@njit(inline="always")
def _divide_poly(buf, src, n, dst1, dst2, offset, axis, delta):
    """Split convex polygon ``buf[src, :n]`` along ``coord[axis] == offset``.

    ``buf[dst1]`` receives the part with ``coord <= offset`` (delta >= 0),
    ``buf[dst2]`` the rest; vertices on the line go to both. ``delta`` is scratch
    space. Returns the two vertex counts.
    """
    for k in range(n):
        delta[k] = offset - buf[src, k, axis]
    n1 = 0
    n2 = 0
    prev = n - 1
    for cur in range(n):
        dc = delta[cur]
        dp = delta[prev]
        if (dc >= F32(0.0)) != (dp >= F32(0.0)):
            s = dp / (dp - dc)
            for c in range(3):
                p = buf[src, prev, c] + (buf[src, cur, c] - buf[src, prev, c]) * s
                buf[dst1, n1, c] = p
                buf[dst2, n2, c] = p
            n1 += 1
            n2 += 1
            if dc > F32(0.0):
                for c in range(3):
                    buf[dst1, n1, c] = buf[src, cur, c]
                n1 += 1
            elif dc < F32(0.0):
                for c in range(3):
                    buf[dst2, n2, c] = buf[src, cur, c]
                n2 += 1
        else:
            if dc >= F32(0.0):
                for c in range(3):
                    buf[dst1, n1, c] = buf[src, cur, c]
                n1 += 1
                if dc != F32(0.0):
                    prev = cur
                    continue
            for c in range(3):
                buf[dst2, n2, c] = buf[src, cur, c]
            n2 += 1
        prev = cur
    return n1, n2


@njit(inline="always")
def _divide_row(buf, src, n, dst2, offset, delta):
    """:func:`_divide_poly` of a row piece along x (``axis`` 0) for the cell loop:
    only what the loop reads afterwards is computed -- x and y of the rest
    (``buf[dst2]``) and the y range of the cell's piece (the same vertices, in the
    same order, as ``buf[dst1]`` would hold). Returns ``(n1, n2, ymin, ymax)``."""
    for k in range(n):
        delta[k] = offset - buf[src, k, 0]
    n1 = 0
    n2 = 0
    ymin = F32(0.0)
    ymax = F32(0.0)
    prev = n - 1
    for cur in range(n):
        dc = delta[cur]
        dp = delta[prev]
        if (dc >= F32(0.0)) != (dp >= F32(0.0)):
            s = dp / (dp - dc)
            px = buf[src, prev, 0]
            py = buf[src, prev, 1]
            y = py + (buf[src, cur, 1] - py) * s
            if n1 == 0:
                ymin = y
                ymax = y
            else:
                ymin = min(ymin, y)
                ymax = max(ymax, y)
            buf[dst2, n2, 0] = px + (buf[src, cur, 0] - px) * s
            buf[dst2, n2, 1] = y
            n1 += 1
            n2 += 1
            if dc > F32(0.0):
                y = buf[src, cur, 1]
                ymin = min(ymin, y)
                ymax = max(ymax, y)
                n1 += 1
            elif dc < F32(0.0):
                buf[dst2, n2, 0] = buf[src, cur, 0]
                buf[dst2, n2, 1] = buf[src, cur, 1]
                n2 += 1
        else:
            if dc >= F32(0.0):
                y = buf[src, cur, 1]
                if n1 == 0:
                    ymin = y
                    ymax = y
                else:
                    ymin = min(ymin, y)
                    ymax = max(ymax, y)
                n1 += 1
                if dc != F32(0.0):
                    prev = cur
                    continue
            buf[dst2, n2, 0] = buf[src, cur, 0]
            buf[dst2, n2, 1] = buf[src, cur, 1]
            n2 += 1
        prev = cur
    return n1, n2, ymin, ymax


@njit
def _cell(offset, inv_cs, n):
    """C's ``(int)(offset * inv_cs)`` for results that are then clamped to [-1, n-1].

    The product is limited to [-2, n+1] first, so huge triangles cannot overflow
    the conversion; in-range values truncate exactly as C does.
    """
    v = offset * inv_cs
    return int(min(max(v, np.float32(-2.0)), np.float32(n + 1)))


@njit
def _pool_grow(pool, need):
    """The span pool with at least ``need`` rows, doubling (rows: smin, smax, area, next)."""
    bigger = np.empty((max(pool.shape[0] * 2, need), 4), np.int32)
    bigger[: pool.shape[0]] = pool
    return bigger


@njit(link=False)
def _rasterize_kernel(verts, tris, tri_areas, width, height, bmin, bmax, cs, ch, merge_thr):
    ics = F32(1.0) / cs
    ich = F32(1.0) / ch
    by = bmax[1] - bmin[1]

    ncols = width * height
    head = np.full(ncols, -1, np.int32)
    # Span pool, one row per span (smin, smax, area, next) so a list step touches one
    # cache line; slots are reused through a free list and the pool grows by doubling.
    # Its first size is the triangles' summed cell footprints (capped), which a bake's
    # pool rarely outgrows: no doubling copies, and the untouched rows cost nothing.
    foot = 0
    for t in range(tris.shape[0]):
        i0 = tris[t, 0]
        i1 = tris[t, 1]
        i2 = tris[t, 2]
        fx0 = _cell(min(verts[i0, 0], min(verts[i1, 0], verts[i2, 0])) - bmin[0], ics, width)
        fx1 = _cell(max(verts[i0, 0], max(verts[i1, 0], verts[i2, 0])) - bmin[0], ics, width)
        fz0 = _cell(min(verts[i0, 2], min(verts[i1, 2], verts[i2, 2])) - bmin[2], ics, height)
        fz1 = _cell(max(verts[i0, 2], max(verts[i1, 2], verts[i2, 2])) - bmin[2], ics, height)
        fx0 = min(max(fx0, 0), width - 1)
        fx1 = min(max(fx1, 0), width - 1)
        fz0 = min(max(fz0, 0), height - 1)
        fz1 = min(max(fz1, 0), height - 1)
        if fx1 >= fx0 and fz1 >= fz0:
            foot += (fx1 - fx0 + 1) * (fz1 - fz0 + 1)
    pool = np.empty((max(1024, 2 * tris.shape[0], min(foot, 4 * ncols)), 4), np.int32)
    used = 0  # pool slots ever handed out
    overflow = False
    free_head = -1  # freed rows, linked through their next field
    nspans = 0  # spans in the columns' lists

    # Four polygon buffers; roles are swapped by index, as the algorithm swaps pointers.
    buf = np.empty((4, 32, 3), np.float32)  # a cell piece has <= 11 vertices
    delta = np.empty(32, np.float32)

    for t in range(tris.shape[0]):
        area = tri_areas[t]
        i0 = tris[t, 0]
        i1 = tris[t, 1]
        i2 = tris[t, 2]
        # Triangle bounds, rejected if they miss the heightfield bounds.
        skip = False
        for a in range(3):
            lo = min(verts[i0, a], min(verts[i1, a], verts[i2, a]))
            hi = max(verts[i0, a], max(verts[i1, a], verts[i2, a]))
            if lo > bmax[a] or hi < bmin[a]:
                skip = True
        if skip:
            continue
        tmin_z = min(verts[i0, 2], min(verts[i1, 2], verts[i2, 2]))
        tmax_z = max(verts[i0, 2], max(verts[i1, 2], verts[i2, 2]))
        tmin_x = min(verts[i0, 0], min(verts[i1, 0], verts[i2, 0]))
        tmax_x = max(verts[i0, 0], max(verts[i1, 0], verts[i2, 0]))

        z0 = _cell(tmin_z - bmin[2], ics, height)
        z1 = _cell(tmax_z - bmin[2], ics, height)
        # Start one row early so the first cut happens at the grid's edge.
        z0 = min(max(z0, -1), height - 1)
        z1 = min(max(z1, 0), height - 1)
        # Room for one new span per cell of the footprint (plus a margin for rounding
        # at the footprint's edges), so the pool never grows inside the cell loops.
        fx0 = min(max(_cell(tmin_x - bmin[0], ics, width), 0), width - 1)
        fx1 = min(max(_cell(tmax_x - bmin[0], ics, width), 0), width - 1)
        need = used + (z1 - max(z0, 0) + 2) * (fx1 - fx0 + 3)
        if need > pool.shape[0]:
            pool = _pool_grow(pool, need)

        b_in = 0
        b_row = 1
        b_p1 = 2
        b_p2 = 3
        for c in range(3):
            buf[b_in, 0, c] = verts[i0, c]
            buf[b_in, 1, c] = verts[i1, c]
            buf[b_in, 2, c] = verts[i2, c]
        n_in = 3

        for z in range(z0, z1 + 1):
            cell_z = bmin[2] + np.float32(z) * cs
            n_row, n_in = _divide_poly(buf, b_in, n_in, b_row, b_p1, cell_z + cs, 2, delta)
            b_in, b_p1 = b_p1, b_in
            if n_row < 3 or z < 0:
                continue
            min_x = buf[b_row, 0, 0]
            max_x = buf[b_row, 0, 0]
            for k in range(1, n_row):
                vx = buf[b_row, k, 0]
                if min_x > vx:
                    min_x = vx
                if max_x < vx:
                    max_x = vx
            x0 = _cell(min_x - bmin[0], ics, width)
            x1 = _cell(max_x - bmin[0], ics, width)
            if x1 < 0 or x0 >= width:
                continue
            x0 = min(max(x0, -1), width - 1)
            x1 = min(max(x1, 0), width - 1)

            n_rest = n_row
            for x in range(x0, x1 + 1):
                cell_x = bmin[0] + np.float32(x) * cs
                # the cell's piece is only needed for its y range (_divide_row)
                n_cell, n_rest, smin_f, smax_f = _divide_row(
                    buf, b_row, n_rest, b_p2, cell_x + cs, delta
                )
                b_row, b_p2 = b_p2, b_row
                if n_cell < 3 or x < 0:
                    continue
                smin_f = smin_f - bmin[1]
                smax_f = smax_f - bmin[1]
                if smax_f < F32(0.0) or smin_f > by:
                    continue
                if smin_f < F32(0.0):
                    smin_f = F32(0.0)
                if smax_f > by:
                    smax_f = by
                lo_i = min(max(int(np.floor(smin_f * ich)), 0), SPAN_MAX_HEIGHT)
                hi_i = min(max(int(np.ceil(smax_f * ich)), lo_i + 1), SPAN_MAX_HEIGHT)

                # -- add the span to column (x, z), merging overlaps --------------
                col = x + z * width
                new_min = lo_i
                new_max = hi_i
                new_area = np.int32(area)
                prev = -1
                cur = head[col]
                while cur != -1:
                    if pool[cur, 0] > new_max:
                        break
                    if pool[cur, 1] < new_min:
                        prev = cur
                        cur = pool[cur, 3]
                        continue
                    if pool[cur, 0] < new_min:
                        new_min = pool[cur, 0]
                    if pool[cur, 1] > new_max:
                        new_max = pool[cur, 1]
                    if abs(new_max - pool[cur, 1]) <= merge_thr and pool[cur, 2] > new_area:
                        new_area = pool[cur, 2]
                    nxt = pool[cur, 3]
                    pool[cur, 3] = free_head
                    free_head = cur
                    nspans -= 1
                    if prev == -1:
                        head[col] = nxt
                    else:
                        pool[prev, 3] = nxt
                    cur = nxt
                if free_head != -1:
                    s = free_head
                    free_head = pool[s, 3]
                elif used < pool.shape[0]:
                    s = used
                    used += 1
                else:  # cannot happen with the reservation above; fail loudly, not wildly
                    overflow = True
                    continue
                nspans += 1
                pool[s, 0] = new_min
                pool[s, 1] = new_max
                pool[s, 2] = new_area
                if prev == -1:
                    pool[s, 3] = head[col]
                    head[col] = s
                else:
                    pool[s, 3] = pool[prev, 3]
                    pool[prev, 3] = s

    # -- span lists -> CSR (one walk: the span count was kept while adding) ----------------
    col_start = np.empty(ncols + 1, np.int32)
    smin = np.empty(nspans, np.uint16)
    smax = np.empty(nspans, np.uint16)
    sarea = np.empty(nspans, np.uint8)
    k = 0
    for col in range(ncols):
        col_start[col] = k
        s = head[col]
        while s != -1:
            smin[k] = pool[s, 0]
            smax[k] = pool[s, 1]
            sarea[k] = pool[s, 2]
            k += 1
            s = pool[s, 3]
    col_start[ncols] = k
    return col_start, smin, smax, sarea, overflow


def check_grid(width: int, height: int, bmin: np.ndarray, bmax: np.ndarray, ch) -> None:
    """Raise :class:`BuildError` when a heightfield grid is too large for one piece."""
    if width <= 0 or height <= 0:
        raise BuildError(
            f"heightfield grid is empty ({width} x {height} cells): the bounds are smaller "
            "than one cell"
        )
    if width * height > MAX_GRID_CELLS:
        raise BuildError(
            f"heightfield grid of {width} x {height} = {width * height} cells exceeds "
            f"{MAX_GRID_CELLS}; bake with tiles (set tile_size, e.g. 128) or a larger cell_size"
        )
    vy = float(np.float32(bmax[1] - bmin[1])) / float(np.float32(ch))
    if vy > SPAN_MAX_HEIGHT:
        raise BuildError(
            f"heightfield is {vy:.0f} voxels tall, more than Recast's {SPAN_MAX_HEIGHT}; "
            "raise cell_height or bake with tiles (set tile_size) over a smaller height range"
        )


def rasterize_triangles(
    vertices: np.ndarray,
    triangles: np.ndarray,
    tri_areas: np.ndarray,
    *,
    width: int,
    height: int,
    bmin,
    bmax,
    cs: float,
    ch: float,
    flag_merge_threshold: int,
) -> Heightfield:
    """Voxelize triangles into a solid heightfield (Recast's ``rcRasterizeTriangles``).

    Parameters
    ----------
    vertices : (n, 3) float32
        Positions [wu].
    triangles : (m, 3) int
        Vertex indices. Triangles outside the bounds are skipped, triangles
        crossing them are clipped (tiled builds pass the whole mesh).
    tri_areas : (m,) uint8
        Area id per triangle (0..63); 0 gives unwalkable solid spans.
    width, height : int
        Columns along x and z [vx].
    bmin, bmax : (3,) float
        Heightfield bounds [wu].
    cs, ch : float
        Cell size and height [wu].
    flag_merge_threshold : int
        Merging spans whose tops lie within this many voxels keep the larger area
        id [vx] (RecastDemo passes ``walkable_climb``).

    Returns
    -------
    Heightfield
        CSR columns, spans bottom to top.

    Raises
    ------
    InputError
        Bad shapes, dtypes, indices, NaN.
    BuildError
        Grid too large for one heightfield (use tiles).
    """
    v = _as_vertices(vertices)
    t = _as_triangles(triangles, v.shape[0])
    a = _as_areas(tri_areas, t.shape[0], "tri_areas")
    lo, hi = _as_vec3(bmin, "bmin"), _as_vec3(bmax, "bmax")
    if np.any(hi < lo):
        raise InputError(f"bmax {hi} must not be below bmin {lo}")
    cs32, ch32 = _positive_f32(cs, "cs"), _positive_f32(ch, "ch")
    w, h = int(width), int(height)
    if w != width or h != height:
        raise InputError(f"width and height must be integers [vx], got {width!r}, {height!r}")
    check_grid(w, h, lo, hi, ch32)
    thr = int(flag_merge_threshold)
    if thr != flag_merge_threshold or thr < 0:
        raise InputError(f"flag_merge_threshold must be >= 0, got {flag_merge_threshold!r}")
    return _rasterize_run(v, t, a, w, h, lo, hi, cs32, ch32, thr)


def _rasterize_run(v, t, a, w, h, lo, hi, cs32, ch32, thr) -> Heightfield:
    """:func:`rasterize_triangles` on validated arrays: (n, 3) float32 finite vertices,
    (m, 3) int32 in-range triangles, (m,) uint8 areas, float32 bounds, a checked grid."""
    col_start, smin, smax, area, overflow = _rasterize_kernel(
        v, t, a, w, h, lo, hi, cs32, ch32, thr
    )
    if overflow:  # pragma: no cover - guarded by the per-triangle reservation
        raise BuildError("internal error: the span pool reservation was too small")
    return Heightfield(w, h, lo, hi, float(cs32), float(ch32), col_start, smin, smax, area)
