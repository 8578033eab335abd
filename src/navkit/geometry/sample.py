"""A procedural sample level, so the demo and the tests need no external file.

:func:`sample_level` builds a small multi-storey level out of boxes and ramps:

- a ground floor (60 x 60 wu) split by walls into rooms, with a wide door and a
  narrow door (wide enough for the default agent only just) and one gap too
  narrow to pass;
- a row of pillars;
- a first floor (y = 4) reached by a gentle ramp and by a staircase
  (steps of 0.3 wu, within the default climb of 0.9 wu);
- a bridge at y = 4 over a ground-floor walkway, to a second platform;
- a small second floor (y = 8) on a ramp from the first floor;
- a steep slope (55 degrees, not walkable) and a flat slope (8 degrees, walkable).

Every solid is closed and outward-facing, so walkable tops wind counter-clockwise
seen from above, as Recast expects.
"""

from __future__ import annotations

import numpy as np

from .trimesh import TriMesh

__all__ = ["sample_level", "box", "ramp"]

# Corner order of a hexahedron: bottom face (y0) then top face, each x0z0, x1z0, x1z1, x0z1.
_FACES = ((0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7))


def _hexahedron(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Triangles of a convex hexahedron with outward-facing winding."""
    center = corners.mean(axis=0)
    tris = []
    for f in _FACES:
        q = [f[0], f[1], f[2], f[3]]
        n = np.cross(corners[q[1]] - corners[q[0]], corners[q[2]] - corners[q[0]])
        face_center = corners[q].mean(axis=0)
        if np.dot(n, face_center - center) < 0:
            q = q[::-1]
        tris.append((q[0], q[1], q[2]))
        tris.append((q[0], q[2], q[3]))
    return corners, np.asarray(tris, dtype=np.int32)


def box(x0: float, y0: float, z0: float, x1: float, y1: float, z1: float):
    """An axis-aligned box from (x0, y0, z0) to (x1, y1, z1): ``(vertices, triangles)``."""
    c = np.array(
        [
            [x0, y0, z0],
            [x1, y0, z0],
            [x1, y0, z1],
            [x0, y0, z1],
            [x0, y1, z0],
            [x1, y1, z0],
            [x1, y1, z1],
            [x0, y1, z1],
        ],
        dtype=np.float64,
    )
    return _hexahedron(c)


def ramp(
    x0: float,
    z0: float,
    x1: float,
    z1: float,
    y_low: float,
    y_high: float,
    axis: str = "x",
    thickness: float = 0.3,
):
    """A slab rising from ``y_low`` to ``y_high`` along +x (``axis="x"``) or +z.

    Returns ``(vertices, triangles)``; the top surface is walkable when its slope
    is below the agent's maximum slope.
    """

    def top(x: float, z: float) -> float:
        t = (x - x0) / (x1 - x0) if axis == "x" else (z - z0) / (z1 - z0)
        return y_low + t * (y_high - y_low)

    xz = [(x0, z0), (x1, z0), (x1, z1), (x0, z1)]
    bottom = [[x, top(x, z) - thickness, z] for x, z in xz]
    upper = [[x, top(x, z), z] for x, z in xz]
    return _hexahedron(np.array(bottom + upper, dtype=np.float64))


def sample_level() -> TriMesh:
    """Build navkit's sample level (about 60 x 60 wu, three storeys).

    Returns
    -------
    TriMesh
        float32 vertices, int32 triangles; name ``"sample_level"``.

    Examples
    --------
    >>> m = sample_level()
    >>> m.n_triangles > 100
    True
    """
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    add = parts.append
    # Ground floor slab.
    add(box(0, -0.5, 0, 60, 0, 60))
    # Walls (height 3) splitting the ground floor: a west wing x < 20.
    wall_h, t = 3.0, 0.4
    # Wall along x = 20 from z = 0 to 60 with a wide door (z 8..11) and a narrow door (z 30..32).
    add(box(20, 0, 0, 20 + t, wall_h, 8))
    add(box(20, 0, 11, 20 + t, wall_h, 30))
    add(box(20, 0, 32, 20 + t, wall_h, 60))
    # Wall along z = 40 in the west wing with a gap too narrow to pass (0.8 wu).
    add(box(0, 0, 40, 9.6, wall_h, 40 + t))
    add(box(10.4, 0, 40, 20, wall_h, 40 + t))
    # Pillars in the west wing.
    for i in range(4):
        add(box(4 + 4 * i, 0, 20, 5 + 4 * i, wall_h, 21))
    # First floor platform (y = 4) over the north-east, on four legs.
    add(box(26, 3.6, 34, 46, 4.0, 56))
    for lx, lz in ((26, 34), (45, 34), (26, 55), (45, 55)):
        add(box(lx, 0, lz, lx + 1, 3.6, lz + 1))
    # Gentle ramp (about 14 degrees) up to the platform along +z.
    add(ramp(40, 18, 44, 34, 0.0, 4.0, axis="z"))
    # Staircase along +x up to the platform's west edge: 13 steps of 0.3 wu rise.
    steps = 13
    for s in range(steps):
        y = 0.3 * (s + 1)
        add(box(22 + 0.3 * s, 0, 44, 22 + 0.3 * (s + 1), min(y, 4.0), 48))
    # Bridge (3 wu wide) at y = 4 from the platform to a second platform, over a walkway.
    add(box(46, 3.7, 44, 54, 4.0, 47))
    add(box(54, 3.6, 38, 60, 4.0, 56))
    for lx, lz in ((54, 38), (59, 38), (54, 55), (59, 55)):
        add(box(lx, 0, lz, lx + 1, 3.6, lz + 1))
    # Second floor (y = 8) reached by a ramp from the first floor.
    add(ramp(28, 36, 40, 40, 4.0, 8.0, axis="x"))
    add(box(40, 7.6, 35, 46, 8.0, 41))
    # A steep slope (55 degrees, too steep) and a flat slope (8 degrees) in the south-east.
    add(ramp(26, 2, 30, 10, 0.0, 4.0 * np.tan(np.radians(55)), axis="x"))
    add(ramp(34, 2, 54, 10, 0.0, 20.0 * np.tan(np.radians(8)), axis="x"))

    verts, tris, base = [], [], 0
    for v, tr in parts:
        verts.append(v)
        tris.append(tr + base)
        base += v.shape[0]
    return TriMesh.from_arrays(np.concatenate(verts), np.concatenate(tris), name="sample_level")
