"""Temporary obstacles: shapes, bounds and their rasterization onto a layer.

Recast's three shapes are marked exactly as ``dtTileCache`` does (float32 all the
way, in the layer's own frame: origin = the layer header's ``bmin``, heights in
cells above it):

- cylinder (``dtMarkCylinderArea``): cells whose centre lies within
  ``radius / cs + 0.5`` cells of the axis;
- axis-aligned box (``dtMarkBoxArea``): cells whose floor lies in the box's cell range;
- oriented box (``dtMarkBoxArea`` with ``rotAux``): cells whose corner, rotated into
  the box frame, lies within ``half_extent / cs + 0.5`` cells (in Detour's doubled
  coordinates, a quirk kept as is);

and navkit's prism (a convex polygon extruded upwards) marks the cells whose centre
lies inside the polygon. In all cases the cell's floor height must lie within the
shape's vertical cell range. A mark writes ``area`` (0 = cut a hole).
"""

from __future__ import annotations

import math
from array import array
from typing import NamedTuple

import numpy as np

from .._jit import F32, njit

__all__ = [
    "CYLINDER",
    "BOX",
    "ORIENTED_BOX",
    "PRISM",
    "Obstacle",
    "obstacle_bounds",
    "bounds_lists",
    "obstacle_outline",
    "rot_aux",
    "mark_obstacle",
    "expand_obstacle",
]

CYLINDER, BOX, ORIENTED_BOX, PRISM = 0, 1, 2, 3
f32 = np.float32


class Obstacle(NamedTuple):
    """One obstacle's shape (all values float32).

    Attributes
    ----------
    kind : int
        :data:`CYLINDER`, :data:`BOX`, :data:`ORIENTED_BOX` or :data:`PRISM`.
    a, b : (3,) float32
        cylinder: position (bottom centre) and (radius, height, 0); box: bmin, bmax;
        oriented box: centre and half extents; prism: (0, ymin, 0) and (0, ymax, 0).
    rot : (2,) float32
        Oriented box: Detour's ``rotAux`` (see :func:`rot_aux`).
    points : (n, 2) float32
        Prism: the convex polygon's corners (x, z) [wu], either winding.
    area : int
        Area id written (0 = hole).
    """

    kind: int
    a: np.ndarray
    b: np.ndarray
    rot: np.ndarray
    points: np.ndarray
    area: int


def rot_aux(y_radians: float) -> np.ndarray:
    """``addBoxObstacle``'s ``rotAux``: (cos(a/2) sin(-a/2), cos(a/2)^2 - 1/2) in float32.

    ``cosf``/``sinf`` are taken as the float32 rounding of the double results (what
    Emscripten's musl gives for these arguments).
    """
    a = f32(y_radians)
    coshalf = f32(math.cos(float(f32(0.5) * a)))
    sinhalf = f32(math.sin(float(f32(-0.5) * a)))
    return np.array([coshalf * sinhalf, coshalf * coshalf - f32(0.5)], np.float32)


def obstacle_bounds(ob: Obstacle) -> tuple[np.ndarray, np.ndarray]:
    """``getObstacleBounds``: the (3,) float32 bmin, bmax used to find touched tiles."""
    a, b = ob.a, ob.b
    if ob.kind == CYLINDER:
        r, h = b[0], b[1]
        bmin = np.array([a[0] - r, a[1], a[2] - r], np.float32)
        bmax = np.array([a[0] + r, a[1] + h, a[2] + r], np.float32)
    elif ob.kind == BOX:
        bmin, bmax = a.copy(), b.copy()
    elif ob.kind == ORIENTED_BOX:
        maxr = f32(1.41) * max(b[0], b[2])
        bmin = np.array([a[0] - maxr, a[1] - b[1], a[2] - maxr], np.float32)
        bmax = np.array([a[0] + maxr, a[1] + b[1], a[2] + maxr], np.float32)
    else:
        p = ob.points
        bmin = np.array([p[:, 0].min(), a[1], p[:, 1].min()], np.float32)
        bmax = np.array([p[:, 0].max(), b[1], p[:, 1].max()], np.float32)
    return bmin, bmax


_F32 = array("f", [0.0])


def r32(x: float) -> float:
    """``x`` rounded to float32, as a Python float. An operation (+, -, *, /) on two
    float32 values done in double and rounded so equals the float32 operation (double
    has more than 2 * 24 + 2 bits), so Python-float arithmetic followed by ``r32``
    reproduces numpy's / C's float32 results exactly, without numpy scalar overhead."""
    _F32[0] = x
    return _F32[0]


def bounds_lists(ob: Obstacle) -> tuple[list[float], list[float]]:
    """:func:`obstacle_bounds` as two lists of Python floats (the same float32 values),
    computed without numpy for a cylinder (the common case; a few microseconds less
    per add)."""
    if ob.kind == CYLINDER:
        x, y, z = ob.a.tolist()
        r, h, _ = ob.b.tolist()
        return [r32(x - r), y, r32(z - r)], [r32(x + r), r32(y + h), r32(z + r)]
    bmin, bmax = obstacle_bounds(ob)
    return bmin.tolist(), bmax.tolist()


def obstacle_outline(ob: Obstacle, segments: int = 32) -> np.ndarray:
    """The footprint of ``ob`` as a closed (k, 2) float64 xz polygon [wu] (for drawing).

    Cylinders give ``segments`` points on the circle; oriented boxes are rotated as
    ``dtMarkBoxArea`` rotates them (by ``rot``, Detour's ``rotAux``).
    """
    a, b = ob.a.astype(np.float64), ob.b.astype(np.float64)
    if ob.kind == CYLINDER:
        t = np.linspace(0.0, 2.0 * math.pi, segments, endpoint=False)
        return np.stack([a[0] + b[0] * np.cos(t), a[2] + b[0] * np.sin(t)], axis=1)
    if ob.kind == BOX:
        return np.array([[a[0], a[2]], [b[0], a[2]], [b[0], b[2]], [a[0], b[2]]])
    if ob.kind == ORIENTED_BOX:
        # dtMarkBoxArea tests u = c dx - s dz, v = s dx + c dz (c = 2 rot[1], s = -2 rot[0])
        c, s = 2.0 * float(ob.rot[1]), -2.0 * float(ob.rot[0])
        uv = np.array([[-b[0], -b[2]], [b[0], -b[2]], [b[0], b[2]], [-b[0], b[2]]])
        dx = c * uv[:, 0] + s * uv[:, 1]
        dz = -s * uv[:, 0] + c * uv[:, 1]
        return np.stack([a[0] + dx, a[2] + dz], axis=1)
    return ob.points.astype(np.float64)


def _offset_convex(poly: np.ndarray, r: float) -> np.ndarray:
    """A convex polygon (k, 2) grown by ``r`` [wu]: a polygon that contains its Minkowski
    sum with a disk of radius ``r`` (each round corner is replaced by tangent lines at
    most 45 degrees apart, so it overshoots the arc by at most ``r (1/cos(22.5) - 1)``,
    8 % of ``r``). Counter-clockwise (x right, z up) output."""
    p = np.asarray(poly, np.float64)
    d = np.roll(p, -1, axis=0) - p
    area2 = float((p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]).sum())
    if area2 < 0:  # make it counter-clockwise
        p = p[::-1]
        d = np.roll(p, -1, axis=0) - p
    k = p.shape[0]
    # outward normal of edge i (p[i] -> p[i+1]) of a counter-clockwise polygon
    nrm = np.stack([d[:, 1], -d[:, 0]], axis=1) / np.hypot(d[:, 0], d[:, 1])[:, None]
    out: list[np.ndarray] = []
    for i in range(k):
        a0 = math.atan2(nrm[i - 1, 1], nrm[i - 1, 0])  # normal of the edge ending at p[i]
        a1 = math.atan2(nrm[i, 1], nrm[i, 0])
        turn = (a1 - a0) % (2.0 * math.pi)
        if turn > math.pi:  # a reflex corner cannot occur in a convex polygon
            turn = 0.0
        m = max(1, math.ceil(turn / (math.pi / 4) - 1e-9))
        step = turn / m
        # tangent lines at angles a0, a0 + step, ..., a1; corners between consecutive ones
        for j in range(m):
            mid = a0 + (j + 0.5) * step
            dist = r / math.cos(step / 2.0)
            out.append(p[i] + dist * np.array([math.cos(mid), math.sin(mid)]))
    return np.array(out, np.float64)


def expand_obstacle(ob: Obstacle, r: float) -> Obstacle:
    """``ob``'s footprint grown by ``r`` [wu] in xz (navkit's default mode, ``r`` = the
    agent radius): a cylinder gets radius + r; boxes, oriented boxes and prisms become a
    prism over a conservative offset of their outline (:func:`obstacle_outline`; the
    box's vertical range is kept). ``r <= 0`` returns ``ob``."""
    if r <= 0:
        return ob
    if ob.kind == CYLINDER:
        b = np.array([f32(ob.b[0] + f32(r)), ob.b[1], ob.b[2]], np.float32)
        return ob._replace(b=b)
    bmin, bmax = obstacle_bounds(ob)
    if ob.kind == ORIENTED_BOX:  # obstacle_bounds pads y as Detour does; use the box's own
        y0, y1 = f32(ob.a[1] - ob.b[1]), f32(ob.a[1] + ob.b[1])
    else:
        y0, y1 = bmin[1], bmax[1]
    pts = _offset_convex(obstacle_outline(ob), float(r)).astype(np.float32)
    return Obstacle(
        PRISM,
        np.array([0, y0, 0], np.float32),
        np.array([0, y1, 0], np.float32),
        np.zeros(2, np.float32),
        pts,
        ob.area,
    )


@njit
def _clamp_range(minx, maxx, minz, maxz, w, h):
    if maxx < 0 or minx >= w or maxz < 0 or minz >= h:
        return False, 0, 0, 0, 0
    return True, max(minx, 0), min(maxx, w - 1), max(minz, 0), min(maxz, h - 1)


@njit
def _mark_cylinder(heights, areas, orig, cs, ch, pos, radius, height, area_id):  # pragma: no cover
    h, w = heights.shape
    bmin0 = pos[0] - radius
    bmin1 = pos[1]
    bmin2 = pos[2] - radius
    bmax0 = pos[0] + radius
    bmax1 = pos[1] + height
    bmax2 = pos[2] + radius
    r = radius / cs + F32(0.5)
    r2 = r * r
    ics = F32(1.0) / cs
    ich = F32(1.0) / ch
    px = (pos[0] - orig[0]) * ics
    pz = (pos[2] - orig[2]) * ics
    minx = np.int64(math.floor((bmin0 - orig[0]) * ics))
    miny = np.int64(math.floor((bmin1 - orig[1]) * ich))
    minz = np.int64(math.floor((bmin2 - orig[2]) * ics))
    maxx = np.int64(math.floor((bmax0 - orig[0]) * ics))
    maxy = np.int64(math.floor((bmax1 - orig[1]) * ich))
    maxz = np.int64(math.floor((bmax2 - orig[2]) * ics))
    ok, minx, maxx, minz, maxz = _clamp_range(minx, maxx, minz, maxz, w, h)
    if not ok:
        return
    for z in range(minz, maxz + 1):
        for x in range(minx, maxx + 1):
            dx = F32(x) + F32(0.5) - px
            dz = F32(z) + F32(0.5) - pz
            if dx * dx + dz * dz > r2:
                continue
            y = np.int64(heights[z, x])
            if y < miny or y > maxy:
                continue
            areas[z, x] = area_id


@njit
def _mark_box(heights, areas, orig, cs, ch, bmin, bmax, area_id):  # pragma: no cover
    h, w = heights.shape
    ics = F32(1.0) / cs
    ich = F32(1.0) / ch
    minx = np.int64(math.floor((bmin[0] - orig[0]) * ics))
    miny = np.int64(math.floor((bmin[1] - orig[1]) * ich))
    minz = np.int64(math.floor((bmin[2] - orig[2]) * ics))
    maxx = np.int64(math.floor((bmax[0] - orig[0]) * ics))
    maxy = np.int64(math.floor((bmax[1] - orig[1]) * ich))
    maxz = np.int64(math.floor((bmax[2] - orig[2]) * ics))
    ok, minx, maxx, minz, maxz = _clamp_range(minx, maxx, minz, maxz, w, h)
    if not ok:
        return
    for z in range(minz, maxz + 1):
        for x in range(minx, maxx + 1):
            y = np.int64(heights[z, x])
            if y < miny or y > maxy:
                continue
            areas[z, x] = area_id


@njit
def _mark_oriented_box(
    heights, areas, orig, cs, ch, center, half, rot, area_id
):  # pragma: no cover
    h, w = heights.shape
    ics = F32(1.0) / cs
    ich = F32(1.0) / ch
    cx = (center[0] - orig[0]) * ics
    cz = (center[2] - orig[2]) * ics
    maxr = F32(1.41) * max(half[0], half[2])
    minx = np.int64(math.floor(cx - maxr * ics))
    maxx = np.int64(math.floor(cx + maxr * ics))
    minz = np.int64(math.floor(cz - maxr * ics))
    maxz = np.int64(math.floor(cz + maxr * ics))
    miny = np.int64(math.floor((center[1] - half[1] - orig[1]) * ich))
    maxy = np.int64(math.floor((center[1] + half[1] - orig[1]) * ich))
    ok, minx, maxx, minz, maxz = _clamp_range(minx, maxx, minz, maxz, w, h)
    if not ok:
        return
    xhalf = half[0] * ics + F32(0.5)
    zhalf = half[2] * ics + F32(0.5)
    for z in range(minz, maxz + 1):
        for x in range(minx, maxx + 1):
            x2 = F32(2.0) * (F32(x) - cx)
            z2 = F32(2.0) * (F32(z) - cz)
            xrot = rot[1] * x2 + rot[0] * z2
            if xrot > xhalf or xrot < -xhalf:
                continue
            zrot = rot[1] * z2 - rot[0] * x2
            if zrot > zhalf or zrot < -zhalf:
                continue
            y = np.int64(heights[z, x])
            if y < miny or y > maxy:
                continue
            areas[z, x] = area_id


@njit
def _mark_prism(heights, areas, orig, cs, ch, pts, ymin, ymax, area_id):  # pragma: no cover
    """Cells whose centre lies inside the convex polygon ``pts`` (n, 2) [wu] (either
    winding; boundary included) and whose floor is within [ymin, ymax]."""
    h, w = heights.shape
    ics = F32(1.0) / cs
    ich = F32(1.0) / ch
    n = pts.shape[0]
    minx = np.int64(math.floor((pts[:, 0].min() - orig[0]) * ics))
    maxx = np.int64(math.floor((pts[:, 0].max() - orig[0]) * ics))
    minz = np.int64(math.floor((pts[:, 1].min() - orig[2]) * ics))
    maxz = np.int64(math.floor((pts[:, 1].max() - orig[2]) * ics))
    miny = np.int64(math.floor((ymin - orig[1]) * ich))
    maxy = np.int64(math.floor((ymax - orig[1]) * ich))
    ok, minx, maxx, minz, maxz = _clamp_range(minx, maxx, minz, maxz, w, h)
    if not ok:
        return
    for z in range(minz, maxz + 1):
        for x in range(minx, maxx + 1):
            # cell centre in world units (double: only navkit's own shape uses this)
            wx = np.float64(orig[0]) + (x + 0.5) * np.float64(cs)
            wz = np.float64(orig[2]) + (z + 0.5) * np.float64(cs)
            pos = 0
            neg = 0
            for i in range(n):
                j = (i + 1) % n
                ax = np.float64(pts[i, 0])
                az = np.float64(pts[i, 1])
                c = (np.float64(pts[j, 0]) - ax) * (wz - az) - (np.float64(pts[j, 1]) - az) * (
                    wx - ax
                )
                if c > 0:
                    pos += 1
                elif c < 0:
                    neg += 1
            if pos > 0 and neg > 0:
                continue
            y = np.int64(heights[z, x])
            if y < miny or y > maxy:
                continue
            areas[z, x] = area_id


def mark_obstacle(
    heights: np.ndarray,
    areas: np.ndarray,
    orig: np.ndarray,
    cs: float,
    ch: float,
    ob: Obstacle,
) -> None:
    """Rasterize ``ob`` onto a layer, writing ``ob.area`` into ``areas`` in place.

    ``heights``/``areas`` (h, w) uint8; ``orig`` the layer header's bmin (3,) float32.
    """
    cs32, ch32 = f32(cs), f32(ch)
    o = np.asarray(orig, np.float32)
    aid = np.uint8(ob.area)
    if ob.kind == CYLINDER:
        _mark_cylinder(heights, areas, o, cs32, ch32, ob.a, ob.b[0], ob.b[1], aid)
    elif ob.kind == BOX:
        _mark_box(heights, areas, o, cs32, ch32, ob.a, ob.b, aid)
    elif ob.kind == ORIENTED_BOX:
        _mark_oriented_box(heights, areas, o, cs32, ch32, ob.a, ob.b, ob.rot, aid)
    else:
        _mark_prism(heights, areas, o, cs32, ch32, ob.points, ob.a[1], ob.b[1], aid)
