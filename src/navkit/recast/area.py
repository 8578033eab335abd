"""Area marking on the compact heightfield (Recast's ``RecastArea.cpp``).

- :func:`erode_walkable_area` (``rcErodeWalkableArea``): a chamfer distance to the
  nearest boundary (a null-area span, or a walkable span missing a walkable
  neighbour in one of the four directions, which gets distance 0). Two raster
  passes propagate it, 2 per straight step and 3 per diagonal step: forward
  (z up, x up) looking at (-1,0), (-1,-1), (0,-1), (1,-1), then backward looking
  at (1,0), (1,1), (0,1), (-1,1); diagonals are reached through the straight
  neighbour's link. Spans with distance < ``2 * radius`` become unwalkable.
- :func:`median_filter_walkable_area` (``rcMedianFilterWalkableArea``): each walkable
  span takes the median of its own area and its eight linked neighbours' (null
  neighbours count as its own area).
- :func:`mark_box_area`, :func:`mark_convex_poly_area`, :func:`mark_cylinder_area`
  (``rcMarkBoxArea`` / ``rcMarkConvexPolyArea`` / ``rcMarkCylinderArea``): set the
  area of walkable spans whose floor lies in a volume, with Recast's float32 grid
  snapping (truncation toward zero).
- :func:`offset_poly` (``rcOffsetPoly``): grow a convex polygon, bevelling sharp
  corners.

Every function but :func:`offset_poly` returns a new :class:`CompactHeightfield` in
which only ``areas`` is new; inputs are never modified.
"""

from __future__ import annotations

import numpy as np

from .._jit import F32, njit
from ..errors import InputError
from .types import DIR_OFFSET_X, DIR_OFFSET_Z, NOT_CONNECTED, WALKABLE_AREA, CompactHeightfield

__all__ = [
    "erode_walkable_area",
    "median_filter_walkable_area",
    "mark_box_area",
    "mark_convex_poly_area",
    "mark_cylinder_area",
    "offset_poly",
]


# -- input checks ------------------------------------------------------------------------------
def _check_chf(chf: CompactHeightfield) -> None:
    if not isinstance(chf, CompactHeightfield):
        raise InputError(f"expected a CompactHeightfield, got {type(chf).__name__}")
    w, h = int(chf.width), int(chf.height)
    n = chf.y.shape[0]
    for name, arr, shape, dt in (
        ("cells_index", chf.cells_index, (h, w), np.uint32),
        ("cells_count", chf.cells_count, (h, w), np.uint8),
        ("y", chf.y, (n,), np.uint16),
        ("con", chf.con, (n,), np.uint32),
        ("areas", chf.areas, (n,), np.uint8),
    ):
        if not isinstance(arr, np.ndarray) or arr.shape != shape or arr.dtype != dt:
            raise InputError(
                f"compact heightfield {name} must be a {shape} {np.dtype(dt).name} array"
            )
    if n and int((chf.cells_index.astype(np.int64) + chf.cells_count).max()) > n:
        raise InputError("compact heightfield cells point past the span arrays")


def _area_id(area) -> int:
    a = int(area)
    if a != area or not 0 <= a <= WALKABLE_AREA:
        raise InputError(f"area must be an integer in [0, {WALKABLE_AREA}], got {area!r}")
    return a


def _vec3(v, name: str) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise InputError(f"{name} must be 3 finite numbers, got {v!r}")
    return a.astype(np.float32)


def _finite_f32(v, name: str) -> np.float32:
    f = np.float32(v)
    if not np.isfinite(f):
        raise InputError(f"{name} must be finite, got {v!r}")
    return f


# -- erosion -------------------------------------------------------------------------------------
@njit(link=False)
def _neighbour_kernel(cells_index, cells_count, con):
    """Linked neighbour span of each span per direction (-1 = none), and raster order.

    Returns ``(nb, order, ok)``: ``order`` lists span indices in Recast's raster
    order (z, then x, then layer); ``ok`` is False when a link points outside the
    grid or past its neighbour cell's spans (a corrupt compact heightfield).
    """
    height, width = cells_index.shape
    n = con.shape[0]
    nb = np.full((n, 4), -1, np.int32)
    order = np.empty(n, np.int32)
    t = 0
    for z in range(height):
        for x in range(width):
            first = np.int64(cells_index[z, x])
            for i in range(first, first + np.int64(cells_count[z, x])):
                if t < n:
                    order[t] = i
                t += 1
                c = con[i]
                for d in range(4):
                    k = np.int64((c >> np.uint32(6 * d)) & np.uint32(0x3F))
                    if k == NOT_CONNECTED:
                        continue
                    nx = x + DIR_OFFSET_X[d]
                    nz = z + DIR_OFFSET_Z[d]
                    if nx < 0 or nz < 0 or nx >= width or nz >= height:
                        return nb, order, False
                    if k >= np.int64(cells_count[nz, nx]):
                        return nb, order, False
                    nb[i, d] = np.int64(cells_index[nz, nx]) + k
    return nb, order[: min(t, n)], t <= n


def _neighbours(chf: CompactHeightfield) -> tuple[np.ndarray, np.ndarray]:
    nb, order, ok = _neighbour_kernel(chf.cells_index, chf.cells_count, chf.con)
    if not ok:
        raise InputError("compact heightfield has a neighbour link outside its grid or cells")
    return nb, order


@njit(link=False)
def _erode_kernel(nb, order, areas, thr):
    n = areas.shape[0]
    dist = np.empty(n, np.int32)
    for i in range(n):
        dist[i] = 255
        if areas[i] == 0:
            dist[i] = 0
            continue
        for d in range(4):
            j = nb[i, d]
            if j < 0 or areas[j] == 0:
                dist[i] = 0
                break
    # Chamfer passes in Recast's raster order: forward looking at (-1,0) then its
    # (0,-1) neighbour, and (0,-1) then its (+1,0); backward mirrored.
    for t in range(order.shape[0]):
        i = order[t]
        best = dist[i]
        a = nb[i, 0]
        if a >= 0:
            best = min(best, dist[a] + 2)
            b = nb[a, 3]
            if b >= 0:
                best = min(best, dist[b] + 3)
        a = nb[i, 3]
        if a >= 0:
            best = min(best, dist[a] + 2)
            b = nb[a, 2]
            if b >= 0:
                best = min(best, dist[b] + 3)
        dist[i] = min(best, 255)
    for t in range(order.shape[0] - 1, -1, -1):
        i = order[t]
        best = dist[i]
        a = nb[i, 2]
        if a >= 0:
            best = min(best, dist[a] + 2)
            b = nb[a, 1]
            if b >= 0:
                best = min(best, dist[b] + 3)
        a = nb[i, 1]
        if a >= 0:
            best = min(best, dist[a] + 2)
            b = nb[a, 0]
            if b >= 0:
                best = min(best, dist[b] + 3)
        dist[i] = min(best, 255)
    out = areas.copy()
    for i in range(n):
        if dist[i] < thr:
            out[i] = 0
    return out


def erode_walkable_area(chf: CompactHeightfield, radius: int) -> CompactHeightfield:
    """Shrink the walkable area by ``radius`` voxels (``rcErodeWalkableArea``).

    Parameters
    ----------
    chf : CompactHeightfield
    radius : int
        Erosion radius [vx] (RecastDemo: ``walkable_radius``); distances are in
        half voxels, so spans closer than ``2 * radius`` to a boundary are cleared.

    Returns
    -------
    CompactHeightfield
        ``chf`` with a new ``areas`` (uint8) array.
    """
    _check_chf(chf)
    r = int(radius)
    if r != radius or r < 0:
        raise InputError(f"radius must be an integer >= 0 [vx], got {radius!r}")
    return _erode_run(chf, r)


def _erode_run(chf: CompactHeightfield, r: int) -> CompactHeightfield:
    """:func:`erode_walkable_area` on a checked compact heightfield and radius."""
    thr = (r * 2) & 0xFF  # Recast stores the threshold in an unsigned char
    nb, order = _neighbours(chf)
    areas = _erode_kernel(nb, order, chf.areas, thr)
    return chf._replace(areas=areas)


# -- median filter -------------------------------------------------------------------------------
@njit
def _median_kernel(nb, areas):
    n = areas.shape[0]
    out = areas.copy()
    vals = np.empty(9, np.uint8)
    for i in range(n):
        if areas[i] == 0:
            continue
        for k in range(9):
            vals[k] = areas[i]
        for d in range(4):
            a = nb[i, d]
            if a < 0:
                continue
            if areas[a] != 0:
                vals[d * 2] = areas[a]
            b = nb[a, (d + 1) & 3]
            if b >= 0 and areas[b] != 0:
                vals[d * 2 + 1] = areas[b]
        # insertion sort of 9 values; the median is the fifth
        for a in range(1, 9):
            v = vals[a]
            b = a - 1
            while b >= 0 and vals[b] > v:
                vals[b + 1] = vals[b]
                b -= 1
            vals[b + 1] = v
        out[i] = vals[4]
    return out


def median_filter_walkable_area(chf: CompactHeightfield) -> CompactHeightfield:
    """Smooth area ids with a 3x3 median (``rcMedianFilterWalkableArea``).

    Returns
    -------
    CompactHeightfield
        ``chf`` with a new ``areas`` (uint8) array; null spans stay null.
    """
    _check_chf(chf)
    return chf._replace(areas=_median_kernel(_neighbours(chf)[0], chf.areas))


# -- volume marking ------------------------------------------------------------------------------
def _footprint(chf: CompactHeightfield, lo: np.ndarray, hi: np.ndarray):
    """Grid range (x0, x1, z0, z1, y0, y1) of world bounds, or None if off the grid.

    Float32 ``(v - bmin) / cs`` truncated toward zero, as Recast's ``(int)`` cast.
    """
    bmin = np.asarray(chf.bmin, dtype=np.float32)
    cs, ch = np.float32(chf.cs), np.float32(chf.ch)

    def cell(v, b, s):
        q = np.float32(np.float32(v - b) / s)
        if not np.isfinite(q) or abs(float(q)) > 2**30:
            return -(2**30) if q < 0 else 2**30
        return int(q)

    x0, x1 = cell(lo[0], bmin[0], cs), cell(hi[0], bmin[0], cs)
    y0, y1 = cell(lo[1], bmin[1], ch), cell(hi[1], bmin[1], ch)
    z0, z1 = cell(lo[2], bmin[2], cs), cell(hi[2], bmin[2], cs)
    w, h = int(chf.width), int(chf.height)
    if x1 < 0 or x0 >= w or z1 < 0 or z0 >= h:
        return None
    return max(x0, 0), min(x1, w - 1), max(z0, 0), min(z1, h - 1), y0, y1


@njit
def _mark_box_kernel(cells_index, cells_count, y, areas, x0, x1, z0, z1, y0, y1, area):
    out = areas.copy()
    for z in range(z0, z1 + 1):
        for x in range(x0, x1 + 1):
            first = np.int32(cells_index[z, x])
            for i in range(first, first + np.int32(cells_count[z, x])):
                sy = np.int32(y[i])
                if sy < y0 or sy > y1 or areas[i] == 0:
                    continue
                out[i] = area
    return out


def mark_box_area(chf: CompactHeightfield, bmin, bmax, area: int) -> CompactHeightfield:
    """Set the area of walkable spans inside an axis-aligned box (``rcMarkBoxArea``).

    Parameters
    ----------
    chf : CompactHeightfield
    bmin, bmax : (3,) float
        Box bounds [wu]; a span is inside when its cell's grid index lies in the
        truncated range and its floor ``y`` [vx] in the truncated y range.
    area : int
        Area id 0..63.

    Returns
    -------
    CompactHeightfield
        ``chf`` with a new ``areas`` array (unchanged copy when the box misses the grid).
    """
    _check_chf(chf)
    a = _area_id(area)
    fp = _footprint(chf, _vec3(bmin, "bmin"), _vec3(bmax, "bmax"))
    if fp is None:
        return chf._replace(areas=chf.areas.copy())
    x0, x1, z0, z1, y0, y1 = fp
    areas = _mark_box_kernel(
        chf.cells_index, chf.cells_count, chf.y, chf.areas, x0, x1, z0, z1, y0, y1, np.uint8(a)
    )
    return chf._replace(areas=areas)


@njit
def _point_in_poly(verts, px, pz):
    inside = False
    n = verts.shape[0]
    j = n - 1
    for i in range(n):
        xi = verts[i, 0]
        zi = verts[i, 2]
        xj = verts[j, 0]
        zj = verts[j, 2]
        if (zi > pz) != (zj > pz):
            if px < (xj - xi) * (pz - zi) / (zj - zi) + xi:
                inside = not inside
        j = i
    return inside


@njit
def _mark_poly_kernel(
    cells_index, cells_count, y, areas, bmin, cs, verts, x0, x1, z0, z1, y0, y1, area
):
    out = areas.copy()
    for z in range(z0, z1 + 1):
        for x in range(x0, x1 + 1):
            first = np.int32(cells_index[z, x])
            for i in range(first, first + np.int32(cells_count[z, x])):
                if areas[i] == 0:
                    continue
                sy = np.int32(y[i])
                if sy < y0 or sy > y1:
                    continue
                px = bmin[0] + (np.float32(x) + F32(0.5)) * cs
                pz = bmin[2] + (np.float32(z) + F32(0.5)) * cs
                if _point_in_poly(verts, px, pz):
                    out[i] = area
    return out


def mark_convex_poly_area(
    chf: CompactHeightfield, verts: np.ndarray, hmin: float, hmax: float, area: int
) -> CompactHeightfield:
    """Set the area of walkable spans inside a prism (``rcMarkConvexPolyArea``).

    Parameters
    ----------
    chf : CompactHeightfield
    verts : (n, 3) float32
        Polygon vertices [wu] (xz used; n >= 3).
    hmin, hmax : float
        Prism floor and top [wu].
    area : int
        Area id 0..63.

    Returns
    -------
    CompactHeightfield
        ``chf`` with a new ``areas`` array: spans whose floor lies in the y range and
        whose cell centre lies inside the polygon (crossing test) get ``area``.
    """
    _check_chf(chf)
    a = _area_id(area)
    v = np.asarray(verts)
    if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 3:
        raise InputError(f"verts must have shape (n >= 3, 3), got {v.shape}")
    v = np.ascontiguousarray(v, dtype=np.float32)
    if not np.all(np.isfinite(v)):
        raise InputError("verts contain NaN or infinite values")
    lo = v.min(axis=0)
    hi = v.max(axis=0)
    lo[1] = _finite_f32(hmin, "hmin")
    hi[1] = _finite_f32(hmax, "hmax")
    fp = _footprint(chf, lo, hi)
    if fp is None:
        return chf._replace(areas=chf.areas.copy())
    x0, x1, z0, z1, y0, y1 = fp
    bmin = np.asarray(chf.bmin, dtype=np.float32)
    areas = _mark_poly_kernel(
        chf.cells_index, chf.cells_count, chf.y, chf.areas, bmin, np.float32(chf.cs), v,
        x0, x1, z0, z1, y0, y1, np.uint8(a),
    )  # fmt: skip
    return chf._replace(areas=areas)


@njit
def _mark_cylinder_kernel(
    cells_index, cells_count, y, areas, bmin, cs, px, pz, r2, x0, x1, z0, z1, y0, y1, area
):
    out = areas.copy()
    for z in range(z0, z1 + 1):
        for x in range(x0, x1 + 1):
            cx = bmin[0] + (np.float32(x) + F32(0.5)) * cs
            cz = bmin[2] + (np.float32(z) + F32(0.5)) * cs
            dx = cx - px
            dz = cz - pz
            if dx * dx + dz * dz >= r2:
                continue
            first = np.int32(cells_index[z, x])
            for i in range(first, first + np.int32(cells_count[z, x])):
                if areas[i] == 0:
                    continue
                sy = np.int32(y[i])
                if sy >= y0 and sy <= y1:
                    out[i] = area
    return out


def mark_cylinder_area(
    chf: CompactHeightfield, pos, radius: float, height: float, area: int
) -> CompactHeightfield:
    """Set the area of walkable spans inside an upright cylinder (``rcMarkCylinderArea``).

    Parameters
    ----------
    chf : CompactHeightfield
    pos : (3,) float
        Centre of the cylinder's base [wu].
    radius, height : float
        [wu]; a column is inside when its centre is strictly closer than ``radius``.
    area : int
        Area id 0..63.

    Returns
    -------
    CompactHeightfield
        ``chf`` with a new ``areas`` array.
    """
    _check_chf(chf)
    a = _area_id(area)
    p = _vec3(pos, "pos")
    r = _finite_f32(radius, "radius")
    hgt = _finite_f32(height, "height")
    lo = np.array([p[0] - r, p[1], p[2] - r], dtype=np.float32)
    hi = np.array([p[0] + r, p[1] + hgt, p[2] + r], dtype=np.float32)
    fp = _footprint(chf, lo, hi)
    if fp is None:
        return chf._replace(areas=chf.areas.copy())
    x0, x1, z0, z1, y0, y1 = fp
    bmin = np.asarray(chf.bmin, dtype=np.float32)
    areas = _mark_cylinder_kernel(
        chf.cells_index, chf.cells_count, chf.y, chf.areas, bmin, np.float32(chf.cs),
        p[0], p[2], np.float32(r * r), x0, x1, z0, z1, y0, y1, np.uint8(a),
    )  # fmt: skip
    return chf._replace(areas=areas)


# -- polygon offset ------------------------------------------------------------------------------
_EPS = np.float32(1e-6)
_MITER_LIMIT = np.float32(1.20)


@njit
def _safe_normalize_xz(dx, dz):
    sq = dx * dx + F32(0.0) * F32(0.0) + dz * dz
    if sq > _EPS:
        inv = F32(1.0) / np.sqrt(sq)
        return dx * inv, dz * inv
    return dx, dz


@njit
def _offset_poly_kernel(verts, offset):
    n = verts.shape[0]
    out = np.empty((2 * n, 3), np.float32)
    m = 0
    for b in range(n):
        a = (b + n - 1) % n
        c = (b + 1) % n
        pdx, pdz = _safe_normalize_xz(verts[b, 0] - verts[a, 0], verts[b, 2] - verts[a, 2])
        cdx, cdz = _safe_normalize_xz(verts[c, 0] - verts[b, 0], verts[c, 2] - verts[b, 2])
        cross = cdx * pdz - pdx * cdz
        pnx = -pdz
        pnz = pdx
        cnx = -cdz
        cnz = cdx
        mx = (pnx + cnx) * F32(0.5)
        mz = (pnz + cnz) * F32(0.5)
        msq = mx * mx + mz * mz
        bevel = msq * _MITER_LIMIT * _MITER_LIMIT < F32(1.0)
        if msq > _EPS:
            scale = F32(1.0) / msq
            mx = mx * scale
            mz = mz * scale
        if bevel and cross < F32(0.0):
            d = (F32(1.0) - (pdx * cdx + pdz * cdz)) * F32(0.5)
            out[m, 0] = verts[b, 0] + (-pnx + pdx * d) * offset
            out[m, 1] = verts[b, 1]
            out[m, 2] = verts[b, 2] + (-pnz + pdz * d) * offset
            m += 1
            out[m, 0] = verts[b, 0] + (-cnx - cdx * d) * offset
            out[m, 1] = verts[b, 1]
            out[m, 2] = verts[b, 2] + (-cnz - cdz * d) * offset
            m += 1
        else:
            out[m, 0] = verts[b, 0] - mx * offset
            out[m, 1] = verts[b, 1]
            out[m, 2] = verts[b, 2] - mz * offset
            m += 1
    return out[:m].copy()


def offset_poly(verts: np.ndarray, offset: float) -> np.ndarray:
    """Offset a convex polygon outward, bevelling acute corners (``rcOffsetPoly``).

    Parameters
    ----------
    verts : (n, 3) float32
        Polygon [wu], counter-clockwise in Recast's xz convention.
    offset : float
        Distance [wu].

    Returns
    -------
    (k, 3) float32
        The offset polygon, ``n <= k <= 2n`` (Recast's caller gives room for 2n).
    """
    v = np.asarray(verts)
    if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 3:
        raise InputError(f"verts must have shape (n >= 3, 3), got {v.shape}")
    v = np.ascontiguousarray(v, dtype=np.float32)
    if not np.all(np.isfinite(v)):
        raise InputError("verts contain NaN or infinite values")
    return _offset_poly_kernel(v, _finite_f32(offset, "offset"))
