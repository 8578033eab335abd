"""navkit: navigation meshes for dynamic 3D worlds.

Bake a navmesh from level geometry (Recast's voxel pipeline), query it (Detour's
queries plus optimal any-angle paths), and build Explicit Corridor Maps.

>>> import navkit
>>> mesh = navkit.geometry.sample_level()
>>> navmesh = navkit.bake(mesh, navkit.BakeConfig())
>>> query = navkit.NavMeshQuery(navmesh)
"""

from . import errors, geometry
from .detour.filter import QueryFilter
from .detour.navmesh import NavMesh, NavMeshParams
from .detour.query import NavMeshQuery, Path
from .detour.tile import OffMeshConnections
from .geometry import TriMesh, load_obj, sample_level, save_obj
from .recast.build import BuildReport, ConvexVolume, bake
from .recast.config import BakeConfig

__version__ = "0.1.0"

__all__ = [
    "errors",
    "geometry",
    "TriMesh",
    "load_obj",
    "save_obj",
    "sample_level",
    "BakeConfig",
    "BuildReport",
    "ConvexVolume",
    "bake",
    "NavMesh",
    "NavMeshParams",
    "NavMeshQuery",
    "QueryFilter",
    "Path",
    "OffMeshConnections",
    "__version__",
]
