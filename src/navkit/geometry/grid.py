"""2D input: occupancy grids, images and Moving AI benchmark maps.

:func:`bake_grid` turns a 2D occupancy grid (or a grayscale/RGB(A) image) into a
navmesh: the free cells are merged into rectangles (runs of free cells in a row,
then equal runs of consecutive rows), each rectangle becomes two upward-facing
triangles at y = 0, and the flat mesh is baked by Recast (:func:`navkit.bake`) with
a voxel size that divides the grid cell, no ledge filter (the map border is not a
ledge), no region size limits and ``edge_max_error`` 0, so the navmesh boundary
follows the cell edges exactly (with ``agent_radius`` 0). Grid row ``r`` is world
z in ``[r, r+1] * cell_size`` and column ``c`` is world x in ``[c, c+1] * cell_size``.

:func:`load_movingai_map` and :func:`load_movingai_scenarios` read the Moving AI
benchmark formats (https://movingai.com/benchmarks/formats.html): ``.map``
(``type octile`` / ``height`` / ``width`` / ``map`` then the rows; ``.``, ``G``,
``S`` passable, everything else blocked) and ``.scen`` (version 1, nine
tab-separated fields per line).
"""

from __future__ import annotations

import math
import os
from typing import Literal, NamedTuple

import numpy as np

from navkit import _check
from navkit.errors import FormatError, InputError

__all__ = [
    "bake_grid",
    "grid_mesh",
    "load_movingai_map",
    "load_movingai_scenarios",
    "MovingAIScenarios",
    "IMAGE_THRESHOLD",
]

#: Image pixels whose luminance (0..255) is below this are blocked (dark = blocked).
IMAGE_THRESHOLD = 128
#: Grids larger than this many voxels on a side are baked in tiles.
_TILE_ABOVE = 384
#: cell_size limits [wu] (the voxel, cell_size / 2..8, stays within BakeConfig's limits)
MIN_GRID_CELL = 1e-3
MAX_GRID_CELL = 1e4
_TILE_SIZE = 128
_PASSABLE = frozenset(".GS")


def _blocked(occupancy: object) -> np.ndarray:
    """(H, W) bool blocked mask from an occupancy grid or an image array."""
    try:
        a = np.asarray(occupancy)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"occupancy is not an array: {exc}") from None
    if a.dtype == np.uint8 and a.ndim == 3:
        if a.shape[2] not in (3, 4):
            raise InputError(f"an image needs 3 (RGB) or 4 (RGBA) channels, got {a.shape[2]}")
        rgb = a[..., :3].astype(np.float64)
        lum = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]
        blocked = lum < IMAGE_THRESHOLD
        if a.shape[2] == 4:
            blocked |= a[..., 3] < IMAGE_THRESHOLD  # transparent pixels are blocked
        return blocked
    if a.ndim != 2:
        raise InputError(f"occupancy must be 2D (rows = z, columns = x), got shape {a.shape}")
    if a.dtype == np.uint8:
        return a < IMAGE_THRESHOLD  # grayscale image: dark = blocked
    if a.dtype == bool:
        return a.copy()
    if not np.issubdtype(a.dtype, np.number):
        raise InputError(f"occupancy must be numeric or bool, got {a.dtype}")
    if not np.all(np.isfinite(a)):
        raise InputError("occupancy contains NaN or infinite values")
    return a != 0


def _rectangles(free: np.ndarray) -> np.ndarray:
    """Cover the free cells with disjoint rectangles (r0, c0, r1, c1), end exclusive."""
    h, w = free.shape
    rects: list[tuple[int, int, int, int]] = []
    open_runs: dict[tuple[int, int], int] = {}  # (c0, c1) -> first row
    for r in range(h + 1):
        runs: set[tuple[int, int]] = set()
        if r < h:
            row = free[r].astype(np.int8)
            d = np.diff(np.concatenate(([0], row, [0])))
            starts = np.flatnonzero(d == 1)
            ends = np.flatnonzero(d == -1)
            runs = set(zip(starts.tolist(), ends.tolist(), strict=True))
        for run in list(open_runs):
            if run not in runs:
                rects.append((open_runs.pop(run), run[0], r, run[1]))
        for run in runs:
            open_runs.setdefault(run, r)
    return np.array(rects, np.int64).reshape(-1, 4)


def grid_mesh(occupancy: object, cell_size: float = 1.0):
    """The flat triangle mesh (y = 0) of the free cells of an occupancy grid.

    Parameters
    ----------
    occupancy : (H, W) array_like
        See :func:`bake_grid`.
    cell_size : float
        Side of one grid cell [wu], in [1e-3, 1e4].

    Returns
    -------
    TriMesh
        Two triangles per merged rectangle of free cells.
    """
    from .trimesh import TriMesh

    cs = _cell_size(cell_size)
    free = ~_blocked(occupancy)
    if not free.any():
        raise InputError("the occupancy grid has no free cell")
    rects = _rectangles(free)
    # shrink every rectangle by 1e-3 cell: an edge lying exactly on a voxel boundary may,
    # after float32 rounding, reach into the next voxel, which Recast would then rasterize
    shrink = np.array([1, 1, -1, -1]) * 1e-3
    r0, c0, r1, c1 = ((rects[:, i] + shrink[i]) * cs for i in range(4))
    z = np.zeros_like(r0)
    # corners: (x0,z0) (x0,z1) (x1,z1) (x1,z0); triangles counter-clockwise seen from above
    v = np.stack(
        [
            np.stack([c0, z, r0], 1),
            np.stack([c0, z, r1], 1),
            np.stack([c1, z, r1], 1),
            np.stack([c1, z, r0], 1),
        ],
        1,
    ).reshape(-1, 3)
    base = np.arange(rects.shape[0], dtype=np.int64)[:, None] * 4
    tris = np.concatenate([base + [0, 1, 2], base + [0, 2, 3]], 1).reshape(-1, 3)
    # two small unwalkable triangles one cell outside opposite corners widen the bounds,
    # so walkable cells never touch the heightfield's edge (Recast's contours need it)
    h, w = free.shape
    lo, hx, hz = -cs, (w + 0.5) * cs, (h + 0.5) * cs
    pad = np.array(
        [[lo, 0, lo], [lo, 0, lo / 2], [lo / 2, 0, lo / 2],
         [hx, 0, hz], [hx, 0, hz + cs / 2], [hx + cs / 2, 0, hz + cs / 2]]
    )  # fmt: skip
    nv = v.shape[0]
    tris = np.concatenate([tris, [[nv, nv + 1, nv + 2], [nv + 3, nv + 4, nv + 5]]])
    areas = np.full(tris.shape[0], 63, np.uint8)
    areas[-2:] = 0
    return TriMesh.from_arrays(np.concatenate([v, pad]), tris, areas, name="<grid>")


def _cell_size(cell_size: object) -> float:
    return _check.real(cell_size, "cell_size", MIN_GRID_CELL, MAX_GRID_CELL, unit="wu")


def bake_grid(
    occupancy: object, cell_size: float = 1.0, *, agent_radius: float = 0.0, config=None,
    partition: Literal["watershed", "monotone", "layers"] = "watershed",
):  # fmt: skip
    """Bake a navmesh from a 2D occupancy grid or image ("feed in an image, get a navmesh").

    Parameters
    ----------
    occupancy : (H, W) array_like or (H, W, 3|4) uint8
        Row = world z, column = world x. bool/numeric: True/nonzero = blocked.
        uint8 grayscale (H, W) or RGB(A) (H, W, 3|4) image: luminance
        ``0.299 R + 0.587 G + 0.114 B`` below :data:`IMAGE_THRESHOLD` (128) is
        blocked (dark = wall, light = floor); alpha below 128 is blocked too.
    cell_size : float
        Side of one grid cell [wu], in [1e-3, 1e4].
    agent_radius : float
        Erosion of the walkable area [wu] (0 = the navmesh covers the free cells exactly),
        in [0, 127 * cell_size / 8] (127 voxels of cell_size / 8, Recast's erosion limit).
    partition : {"watershed", "monotone", "layers"}
        Region partitioning of the derived settings (ignored with ``config``).
    config : BakeConfig, optional
        Overrides the derived settings; its ``cell_size`` must divide ``cell_size``.
        By default the voxel is ``cell_size / k`` (k = 2, or larger so that
        agent_radius is resolved to a quarter cell, at least 2), grids above 384 voxels a side
        are baked in 128-voxel tiles.

    Returns
    -------
    NavMesh
        Flat navmesh at y = 0 covering the free cells.

    Raises
    ------
    InputError
        Not a 2D grid / image, no free cell, bad cell_size or agent_radius.
    """
    from navkit.pipeline import bake
    from navkit.recast.config import PARTITIONS, BakeConfig

    cs = _cell_size(cell_size)
    # at most 127 voxels of erosion (BakeConfig's limit) at the finest voxel, cell_size / 8
    radius = _check.real(agent_radius, "agent_radius", 0.0, 127 * cs / 8, unit="wu")
    if config is not None and not isinstance(config, BakeConfig):
        raise InputError(f"config must be a BakeConfig or None, got {type(config).__name__}")
    if config is None and (not isinstance(partition, str) or partition not in PARTITIONS):
        raise InputError(f"partition must be one of {PARTITIONS}, got {partition!r}")
    mesh = grid_mesh(occupancy, cs)
    h, w = np.asarray(occupancy).shape[:2]
    if config is None:
        k = 2  # one voxel per cell loses single-voxel regions (Recast drops them)
        if radius > 0:
            k = max(2, min(8, int(math.ceil(4 * radius / cs - 1e-9))))
        vcs = cs / k
        tiled = max(h, w) * k > _TILE_ABOVE
        config = BakeConfig(
            cell_size=vcs,
            cell_height=min(0.2, vcs),
            agent_height=2.0,
            agent_radius=radius,
            agent_max_climb=0.0,
            region_min_size=0,
            region_merge_size=20,
            edge_max_len=0.0,
            edge_max_error=0.0,
            detail_sample_dist=0.0,
            detail_sample_max_error=1.0,
            partition=partition,
            tile_size=_TILE_SIZE if tiled else 0,
            filter_ledge_spans=False,
        )
    else:
        ratio = cs / float(config.cell_size)
        if abs(ratio - round(ratio)) > 1e-6:
            raise InputError(f"config.cell_size {config.cell_size} must divide cell_size {cs}")
    return bake(mesh, config)


class MovingAIScenarios(NamedTuple):
    """A Moving AI ``.scen`` file; row i of each array is scenario i."""

    bucket: np.ndarray  # (n,) int64
    map: list  # n map names as written in the file
    size: np.ndarray  # (n, 2) int64 map width, height
    start: np.ndarray  # (n, 2) int64 start x (column), y (row)
    goal: np.ndarray  # (n, 2) int64 goal x, y
    optimal_length: np.ndarray  # (n,) float64 8-connected (octile) optimum


def load_movingai_map(path: str | os.PathLike) -> np.ndarray:
    """Read a Moving AI ``.map`` file.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    (height, width) bool ndarray
        True = blocked (``@ O T W`` and anything else), False = passable (``. G S``);
        row = map y (= world z of :func:`bake_grid`), column = map x.

    Raises
    ------
    FormatError
        Missing/garbled header, wrong row count or row width.
    """
    try:
        with open(path, encoding="ascii", errors="strict") as f:
            text = f.read()
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path}: not an ASCII Moving AI map ({exc})") from None
    lines = text.splitlines()
    header: dict[str, str] = {}
    i = 0
    while i < len(lines):
        ln = lines[i].strip()
        i += 1
        if not ln:
            continue
        if ln == "map":
            break
        parts = ln.split()
        if len(parts) != 2 or parts[0] not in ("type", "height", "width"):
            raise FormatError(f"{path}: line {i}: unexpected header line {ln!r}")
        header[parts[0]] = parts[1]
    else:
        raise FormatError(f"{path}: no 'map' line")
    for key in ("type", "height", "width"):
        if key not in header:
            raise FormatError(f"{path}: header lacks '{key}'")
    if header["type"] != "octile":
        raise FormatError(f"{path}: unsupported map type {header['type']!r}")
    try:
        h, w = int(header["height"]), int(header["width"])
    except ValueError:
        raise FormatError(f"{path}: height/width are not integers") from None
    if h <= 0 or w <= 0:
        raise FormatError(f"{path}: height and width must be > 0, got {h} x {w}")
    rows = [ln.rstrip("\r\n") for ln in lines[i : i + h]]
    extra = [ln for ln in lines[i + h :] if ln.strip()]
    if len(rows) != h or extra:
        raise FormatError(f"{path}: expected {h} map rows, got {len(rows) + len(extra)}")
    for r, row in enumerate(rows):
        if len(row) != w:
            raise FormatError(f"{path}: row {r} has {len(row)} characters, expected {w}")
    grid = np.frombuffer("".join(rows).encode("ascii"), np.uint8).reshape(h, w)
    passable = np.zeros(256, bool)
    for ch in _PASSABLE:
        passable[ord(ch)] = True
    return ~passable[grid]


def load_movingai_scenarios(path: str | os.PathLike) -> MovingAIScenarios:
    """Read a Moving AI ``.scen`` file (version 1).

    Returns
    -------
    MovingAIScenarios
        Coordinates are cell indices (x = column, y = row, origin top-left).

    Raises
    ------
    FormatError
        Missing version line, wrong field count, non-numeric fields.
    """
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path}: not a text scenario file ({exc})") from None
    if not lines or lines[0].split()[:1] != ["version"]:
        raise FormatError(f"{path}: first line must be 'version 1'")
    buckets, maps, size, start, goal, opt = [], [], [], [], [], []
    for n, ln in enumerate(lines[1:], start=2):
        if not ln.strip():
            continue
        fld = ln.split("\t") if "\t" in ln else ln.split()
        if len(fld) != 9:
            raise FormatError(f"{path}: line {n}: expected 9 fields, got {len(fld)}")
        try:
            buckets.append(int(fld[0]))
            maps.append(fld[1])
            size.append((int(fld[2]), int(fld[3])))
            start.append((int(fld[4]), int(fld[5])))
            goal.append((int(fld[6]), int(fld[7])))
            opt.append(float(fld[8]))
        except ValueError:
            raise FormatError(f"{path}: line {n}: non-numeric field in {ln!r}") from None
    return MovingAIScenarios(
        np.array(buckets, np.int64),
        maps,
        np.array(size, np.int64).reshape(-1, 2),
        np.array(start, np.int64).reshape(-1, 2),
        np.array(goal, np.int64).reshape(-1, 2),
        np.array(opt, np.float64),
    )
