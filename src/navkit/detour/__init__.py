"""Detour's runtime data: tiles, the tiled NavMesh over pooled arrays, and file formats.

- :mod:`.tile` -- :class:`TileData` and :func:`create_navmesh_data` (``dtCreateNavMeshData``).
- :mod:`.navmesh` -- :class:`NavMesh` (``dtNavMesh``) and :class:`NavMeshArrays` for kernels.
- :mod:`.recast_format` -- Recast's binary navmesh sets and tile blobs.
- :mod:`.io` -- navkit's own checksummed navmesh file.
"""

from .navmesh import NavMesh, NavMeshArrays, NavMeshParams
from .recast_format import navmesh_from_recast, navmesh_to_recast, tile_from_bytes, tile_to_bytes
from .tile import OffMeshConnections, TileData, create_navmesh_data

__all__ = [
    "NavMesh",
    "NavMeshArrays",
    "NavMeshParams",
    "TileData",
    "OffMeshConnections",
    "create_navmesh_data",
    "navmesh_from_recast",
    "navmesh_to_recast",
    "tile_from_bytes",
    "tile_to_bytes",
]
