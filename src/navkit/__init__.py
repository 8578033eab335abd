"""navkit: navigation meshes for dynamic 3D worlds.

Bake a navmesh from level geometry (Recast's voxel pipeline), query it (Detour's
queries plus optimal any-angle paths), change it at runtime, move crowds on it,
and build Explicit Corridor Maps.
"""

from . import errors
from .geometry import TriMesh, load_obj, save_obj
from .recast.config import BakeConfig

__version__ = "0.1.0"

__all__ = ["errors", "TriMesh", "load_obj", "save_obj", "BakeConfig", "__version__"]
