"""The data each bake stage hands to the next: numpy struct-of-arrays.

Layouts follow Recast's structures (and the Recast peer's stage dumps) so that
every stage can be compared with Recast's state array for array:

- :class:`Heightfield` -- ``rcHeightfield`` as compressed columns (CSR): the
  spans of column ``c = x + z * width`` are ``[col_start[c], col_start[c+1])``,
  bottom to top, sorted and merged. Unwalkable spans (area 0) are kept.
- :class:`CompactHeightfield` -- ``rcCompactHeightfield``: cells ``(height, width)``
  indexed ``[z, x]``, spans with packed 4 x 6-bit neighbour links.
- :class:`ContourSet` -- ``rcContourSet`` with contours concatenated.
- :class:`PolyMesh` -- ``rcPolyMesh``.
- :class:`PolyMeshDetail` -- ``rcPolyMeshDetail``.

Constants mirror Recast's.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = [
    "NULL_AREA",
    "WALKABLE_AREA",
    "NOT_CONNECTED",
    "BORDER_REG",
    "BORDER_VERTEX",
    "AREA_BORDER",
    "CONTOUR_REG_MASK",
    "MESH_NULL_IDX",
    "SPAN_MAX_HEIGHT",
    "DIR_OFFSET_X",
    "DIR_OFFSET_Z",
    "Heightfield",
    "CompactHeightfield",
    "ContourSet",
    "PolyMesh",
    "PolyMeshDetail",
]

NULL_AREA = 0  #: RC_NULL_AREA: not walkable
WALKABLE_AREA = 63  #: RC_WALKABLE_AREA: the default walkable area id
NOT_CONNECTED = 0x3F  #: RC_NOT_CONNECTED: no neighbour in a direction
BORDER_REG = 0x8000  #: RC_BORDER_REG: region flag of tile-border spans
BORDER_VERTEX = 0x10000  #: RC_BORDER_VERTEX: contour vertex on the tile border
AREA_BORDER = 0x20000  #: RC_AREA_BORDER: contour vertex between areas
CONTOUR_REG_MASK = 0xFFFF  #: RC_CONTOUR_REG_MASK
MESH_NULL_IDX = 0xFFFF  #: RC_MESH_NULL_IDX
SPAN_HEIGHT_BITS = 13  #: RC_SPAN_HEIGHT_BITS
SPAN_MAX_HEIGHT = (1 << SPAN_HEIGHT_BITS) - 1  #: RC_SPAN_MAX_HEIGHT = 8191

#: Direction offsets, Recast's rcGetDirOffsetX/Y: dir 0..3 = (-1,0), (0,+1), (+1,0), (0,-1) in (x, z).
DIR_OFFSET_X = np.array([-1, 0, 1, 0], dtype=np.int32)
DIR_OFFSET_Z = np.array([0, 1, 0, -1], dtype=np.int32)


class Heightfield(NamedTuple):
    """Solid spans per column (Recast's ``rcHeightfield``), in CSR form.

    Attributes
    ----------
    width, height : int
        Columns along x and z [vx].
    bmin, bmax : (3,) float32
        World bounds [wu].
    cs, ch : float
        Cell size and height [wu] (float32 values).
    col_start : (width*height + 1,) int32
        Spans of column ``c = x + z*width`` are ``col_start[c]:col_start[c+1]``.
    smin, smax : (n,) uint16
        Span floor and top [vx], bottom to top, ``smin[i+1] > smax[i]`` in a column.
    area : (n,) uint8
        Area id, 0 = not walkable.
    """

    width: int
    height: int
    bmin: np.ndarray
    bmax: np.ndarray
    cs: float
    ch: float
    col_start: np.ndarray
    smin: np.ndarray
    smax: np.ndarray
    area: np.ndarray

    @property
    def span_count(self) -> int:
        """All spans, walkable or not."""
        return int(self.smin.shape[0])

    @property
    def walkable_span_count(self) -> int:
        """Spans with a non-null area (Recast's ``rcGetHeightFieldSpanCount``)."""
        return int(np.count_nonzero(self.area))


class CompactHeightfield(NamedTuple):
    """Open space above walkable spans (Recast's ``rcCompactHeightfield``).

    Attributes
    ----------
    width, height : int
        Cells along x and z [vx].
    walkable_height, walkable_climb : int
        The settings it was built with [vx].
    border_size : int
        Non-navigable border [vx].
    max_distance : int
        Largest distance-field value (0 until the distance field is built).
    max_regions : int
        Highest region id + 1 (0 until regions are built).
    bmin, bmax : (3,) float32
        Bounds [wu]; ``bmax[1]`` is raised by ``walkable_height * ch``.
    cs, ch : float
        Cell size and height [wu].
    cells_index : (height, width) uint32
        First span of each cell.
    cells_count : (height, width) uint8
        Number of spans of each cell.
    y : (n,) uint16
        Floor of the open space (the solid span's top) [vx].
    h : (n,) uint8
        Height of the open space, capped at 255 [vx].
    con : (n,) uint32
        Neighbour links, 6 bits per direction: ``(con >> (6*dir)) & 0x3F`` is the
        layer index in the neighbour cell, or ``NOT_CONNECTED``.
    reg : (n,) uint16
        Region id (0 = none; ``BORDER_REG`` flag on tile borders).
    areas : (n,) uint8
        Area id (0 = not walkable).
    dist : (n,) uint16
        Distance field (zeros until built).
    """

    width: int
    height: int
    walkable_height: int
    walkable_climb: int
    border_size: int
    max_distance: int
    max_regions: int
    bmin: np.ndarray
    bmax: np.ndarray
    cs: float
    ch: float
    cells_index: np.ndarray
    cells_count: np.ndarray
    y: np.ndarray
    h: np.ndarray
    con: np.ndarray
    reg: np.ndarray
    areas: np.ndarray
    dist: np.ndarray

    @property
    def span_count(self) -> int:
        """Number of compact spans."""
        return int(self.y.shape[0])


class ContourSet(NamedTuple):
    """Simplified region outlines (Recast's ``rcContourSet``), concatenated.

    Contour ``i`` owns ``verts[vstart[i] : vstart[i] + nverts[i]]`` where
    ``vstart = concatenate([[0], cumsum(nverts)[:-1]])``; likewise ``rverts``.

    Attributes
    ----------
    reg : (nc,) uint16
        Region id of each contour.
    area : (nc,) uint8
        Area id of each contour.
    nverts, nrverts : (nc,) int32
        Simplified and raw vertex counts.
    verts, rverts : (sum, 4) int32
        (x, y, z, flags) in voxels; ``flags & 0xFFFF`` is the neighbouring region,
        plus ``BORDER_VERTEX`` / ``AREA_BORDER``. With ``border_size > 0`` the
        coordinates are already shifted to exclude the border, as Recast does.
    bmin, bmax : (3,) float32
        Bounds [wu] (shifted inward by the border, as Recast does).
    cs, ch : float
    width, height : int
        Grid size without the border [vx].
    border_size : int
    max_error : float
        The simplification error it was built with [vx].
    """

    reg: np.ndarray
    area: np.ndarray
    nverts: np.ndarray
    nrverts: np.ndarray
    verts: np.ndarray
    rverts: np.ndarray
    bmin: np.ndarray
    bmax: np.ndarray
    cs: float
    ch: float
    width: int
    height: int
    border_size: int
    max_error: float

    @property
    def count(self) -> int:  # type: ignore[override]
        """Number of contours."""
        return int(self.reg.shape[0])


class PolyMesh(NamedTuple):
    """Convex polygons (Recast's ``rcPolyMesh``).

    Attributes
    ----------
    verts : (nv, 3) uint16
        Vertex positions in voxels (x, y, z), relative to ``bmin``.
    polys : (np, 2*nvp) uint16
        Per polygon, ``nvp`` vertex indices then ``nvp`` neighbour entries, padded
        with ``MESH_NULL_IDX``. A neighbour entry is a polygon index, or for tile
        portals ``0x8000 | dir`` (dir 0..3).
    regs : (np,) uint16
    flags : (np,) uint16
    areas : (np,) uint8
    nvp : int
        Max vertices per polygon.
    bmin, bmax : (3,) float32
    cs, ch : float
    border_size : int
    max_edge_error : float
    """

    verts: np.ndarray
    polys: np.ndarray
    regs: np.ndarray
    flags: np.ndarray
    areas: np.ndarray
    nvp: int
    bmin: np.ndarray
    bmax: np.ndarray
    cs: float
    ch: float
    border_size: int
    max_edge_error: float

    @property
    def npolys(self) -> int:
        """Number of polygons."""
        return int(self.polys.shape[0])

    @property
    def nverts(self) -> int:
        """Number of vertices."""
        return int(self.verts.shape[0])


class PolyMeshDetail(NamedTuple):
    """Height detail triangles per polygon (Recast's ``rcPolyMeshDetail``).

    Attributes
    ----------
    meshes : (np, 4) uint32
        Per polygon (vert_base, vert_count, tri_base, tri_count).
    verts : (nv, 3) float32
        Detail vertices in world units.
    tris : (nt, 4) uint8
        Local vertex indices (into the polygon's detail verts) and edge flags.
    """

    meshes: np.ndarray
    verts: np.ndarray
    tris: np.ndarray

    @property
    def nmeshes(self) -> int:
        return int(self.meshes.shape[0])

    @property
    def nverts(self) -> int:
        return int(self.verts.shape[0])

    @property
    def ntris(self) -> int:
        return int(self.tris.shape[0])
