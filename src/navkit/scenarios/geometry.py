"""Small synthetic levels for the scenarios, built in code and baked with :func:`navkit.bake`.

Every level is axis-aligned boxes (floors, walls, platforms) and optional ramps,
y up, in metres. :func:`level` bakes one by name with :data:`HUMAN_BAKE` (people-
sized agents: radius 0.3 m, height 1.8 m, on a 0.15 m grid) and keeps the result
for the life of the process.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from navkit.errors import InputError
from navkit.geometry import TriMesh
from navkit.recast.config import BakeConfig

__all__ = ["box_mesh", "level", "LEVELS", "HUMAN_BAKE"]

#: bake settings of the synthetic levels: people (r 0.3 m, h 1.8 m), 0.15 m cells
HUMAN_BAKE = BakeConfig(
    cell_size=0.15, cell_height=0.1, agent_radius=0.3, agent_height=1.8, agent_max_climb=0.4,
    region_min_size=2, edge_max_error=1.1,
)  # fmt: skip

_BOX_TRIS = np.array(
    [[4, 6, 5], [4, 7, 6], [0, 1, 2], [0, 2, 3], [0, 4, 5], [0, 5, 1],
     [1, 5, 6], [1, 6, 2], [2, 6, 7], [2, 7, 3], [3, 7, 4], [3, 4, 0]], np.int32,
)  # fmt: skip


def box_mesh(
    boxes: Sequence[Sequence[float]],
    ramps: Sequence[Sequence[float]] = (),
    *,
    name: str = "<boxes>",
) -> TriMesh:
    """A triangle mesh of solid boxes and ramp surfaces.

    Parameters
    ----------
    boxes : sequence of (x0, y0, z0, x1, y1, z1[, walkable])
        Axis-aligned boxes [m] (min corner, max corner). A box's top is walkable
        when ``walkable`` is true (default False: walls and blocks).
    ramps : sequence of (x0, z0, x1, z1, y_at_x0, y_at_x1)
        Rectangles in xz whose height goes linearly from ``y_at_x0`` at ``x = x0``
        to ``y_at_x1`` at ``x = x1`` (one upward-facing quad each).
    """
    verts, tris, areas = [], [], []
    n = 0
    for b in boxes:
        x0, y0, z0, x1, y1, z1 = (float(v) for v in b[:6])
        top = 63 if len(b) > 6 and b[6] else 0  # Recast's walkable area id
        if not (x0 < x1 and y0 < y1 and z0 < z1):
            raise InputError(f"box {tuple(b)} must have min < max on every axis")
        v = np.array(
            [[x0, y0, z0], [x1, y0, z0], [x1, y0, z1], [x0, y0, z1],
             [x0, y1, z0], [x1, y1, z0], [x1, y1, z1], [x0, y1, z1]], np.float32,
        )  # fmt: skip
        verts.append(v)
        tris.append(_BOX_TRIS + n)
        areas.append(np.array([top, top] + [0] * 10, np.uint8))
        n += 8
    for r in ramps:
        x0, z0, x1, z1, ya, yb = (float(v) for v in r)
        v = np.array([[x0, ya, z0], [x1, yb, z0], [x1, yb, z1], [x0, ya, z1]], np.float32)
        verts.append(v)
        tris.append(np.array([[0, 2, 1], [0, 3, 2]], np.int32) + n)
        areas.append(np.array([63, 63], np.uint8))
        n += 4
    return TriMesh.from_arrays(
        np.concatenate(verts), np.concatenate(tris), np.concatenate(areas), name=name
    )


def _walls_around(
    x0: float,
    z0: float,
    x1: float,
    z1: float,
    t: float = 0.2,
    h: float = 2.0,
    tz: float | None = None,
):
    # t: the west and east walls' thickness; tz: the south and north walls' (default t)
    tz = t if tz is None else tz
    return [
        (x0 - t, 0, z0 - tz, x1 + t, h, z0), (x0 - t, 0, z1, x1 + t, h, z1 + tz),
        (x0 - t, 0, z0, x0, h, z1), (x1, 0, z0, x1 + t, h, z1),
    ]  # fmt: skip


def _floor(x0: float, z0: float, x1: float, z1: float):
    return (x0, -0.2, z0, x1, 0.0, z1, True)


def _crossing():
    # two 5 m wide corridors, 30 m long, crossing at the origin (a plus)
    w, L = 2.5, 15.0
    boxes = [_floor(-L, -L, L, L)]
    for sx in (-1, 1):  # the four solid corner blocks
        for sz in (-1, 1):
            xa, xb = sorted((sx * w, sx * L))
            za, zb = sorted((sz * w, sz * L))
            boxes.append((xa, 0, za, xb, 2.0, zb))
    boxes += _walls_around(-L, -L, L, L)
    return box_mesh(boxes, name="crossing")


def _bottleneck():
    # a 10 x 10 m room on each side of a 0.2 m wall with a 1 m door at z = 0
    boxes = [_floor(-10, -5, 10, 5), (-0.1, 0, -5, 0.1, 2.0, -0.5), (-0.1, 0, 0.5, 0.1, 2.0, 5)]
    # The voxel grid starts at the level's min corner. Recast's rasterization marks a
    # cell solid when a wall touches it, even along the cell's edge: with 0.2 m outer
    # walls the 0.15 m cells' edges fall at z = -0.55, -0.4, ..., 0.35, 0.5, so only 5
    # cells (0.75 m) of the 1 m door stay open, and 0.15 m of navmesh after the 0.3 m
    # erosion on each side. 0.25 m south and north walls put the cell edges at
    # z = +-0.45: 6 cells (0.9 m) open, 0.3 m of navmesh (the exact figure for a 1 m
    # door and 0.3 m agents is 0.4 m; a cell is the bake's resolution).
    boxes += _walls_around(-10, -5, 10, 5, tz=0.25)
    return box_mesh(boxes, name="bottleneck")


def _corridor():
    # a 40 m x 4 m corridor along x
    boxes = [_floor(-20, -2, 20, 2)] + _walls_around(-20, -2, 20, 2)
    return box_mesh(boxes, name="corridor")


def _open():
    # a 24 x 24 m open square
    boxes = [_floor(-12, -12, 12, 12)] + _walls_around(-12, -12, 12, 12)
    return box_mesh(boxes, name="open")


def _wide_corridor():
    # a 30 m x 6 m corridor along x (the moving-obstacle scenario)
    boxes = [_floor(-15, -3, 15, 3)] + _walls_around(-15, -3, 15, 3)
    return box_mesh(boxes, name="wide_corridor")


def _ledge():
    # a 1.5 m high platform (x < 0) above a floor (x > 0), joined by a ramp at z in [6, 10]
    boxes = [_floor(-10, -10, 10, 10), (-10, 0, -10, 0, 1.5, 10, True)]
    boxes += _walls_around(-10, -10, 10, 10, h=3.0)
    return box_mesh(boxes, [(0, 6, 6, 10, 1.5, 0.0)], name="ledge")


#: name -> builder of the synthetic levels
LEVELS = {
    "crossing": _crossing,
    "bottleneck": _bottleneck,
    "corridor": _corridor,
    "open": _open,
    "wide_corridor": _wide_corridor,
    "ledge": _ledge,
}


@cache
def level(name: str):
    """The baked navmesh of a synthetic level (:data:`LEVELS`) or of a sample level
    (``"dungeon"``, ``"nav_test"``, ``"undulating"``: RecastDemo's defaults); cached."""
    from navkit.pipeline import bake

    if name in LEVELS:
        return bake(LEVELS[name](), HUMAN_BAKE)
    from navkit import data

    if name in ("dungeon", "nav_test", "undulating"):
        return bake(data.load_mesh(name), BakeConfig())
    raise InputError(
        f"no level named {name!r}; levels: {', '.join([*LEVELS, 'dungeon', 'nav_test', 'undulating'])}"
    )
