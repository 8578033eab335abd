"""navkit: navigation meshes for dynamic 3D worlds.

Bake a navmesh from level geometry (Recast's voxel pipeline), query it (Detour's
queries plus optimal any-angle paths), and build Explicit Corridor Maps.

>>> import navkit
>>> mesh = navkit.geometry.sample_level()
>>> navmesh = navkit.bake(mesh, navkit.BakeConfig())
>>> query = navkit.NavMeshQuery(navmesh)

The public names below are imported on first use (module ``__getattr__``), so
``import navkit`` stays cheap and a command only loads the stages it runs.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from . import errors

# numba's parallel kernels run on GNU OpenMP here, whose idle threads spin at full
# speed between parallel regions. With other busy processes on the machine that
# made a prange kernel of 1,000 agents take 200 ms instead of 1.5 ms (measured on
# this project's 2-core CI machine under load); sleeping idle threads cost a few
# microseconds per region instead. A user's own setting wins; it only takes effect
# if OpenMP was not loaded before navkit.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

#: public name -> (module, attribute or None for the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "geometry": (".geometry", None),
    "TriMesh": (".geometry", "TriMesh"),
    "load_obj": (".geometry", "load_obj"),
    "save_obj": (".geometry", "save_obj"),
    "sample_level": (".geometry", "sample_level"),
    "BakeConfig": (".recast.config", "BakeConfig"),
    "BuildReport": (".pipeline", "BuildReport"),
    "ConvexVolume": (".recast.build", "ConvexVolume"),
    "bake": (".pipeline", "bake"),
    "NavMesh": (".detour", "NavMesh"),
    "NavMeshParams": (".detour", "NavMeshParams"),
    "NavMeshQuery": (".detour.query", "NavMeshQuery"),
    "QueryFilter": (".detour.filter", "QueryFilter"),
    "Path": (".detour.query", "Path"),
    "OffMeshConnections": (".detour.tile", "OffMeshConnections"),
    "find_optimal_path": (".detour.optimal", "find_optimal_path"),
    "bake_grid": (".geometry.grid", "bake_grid"),
    "load_movingai_map": (".geometry.grid", "load_movingai_map"),
    "load_movingai_scenarios": (".geometry.grid", "load_movingai_scenarios"),
    "ecm": (".ecm", None),
    "data": (".data", None),
    "TileCache": (".tilecache.cache", "TileCache"),
    "Crowd": (".crowd", "Crowd"),
    "AgentParams": (".crowd", "AgentParams"),
    "Follower": (".crowd.follower", "Follower"),
    "FollowerParams": (".crowd.follower", "FollowerParams"),
    "scenarios": (".scenarios", None),
}

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
    "find_optimal_path",
    "bake_grid",
    "load_movingai_map",
    "load_movingai_scenarios",
    "ecm",
    "data",
    "TileCache",
    "Crowd",
    "AgentParams",
    "Follower",
    "FollowerParams",
    "scenarios",
    "__version__",
]


def __getattr__(name: str) -> Any:
    try:
        mod, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'navkit' has no attribute {name!r}") from None
    m = importlib.import_module(mod, __name__)
    value = m if attr is None else getattr(m, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from . import data, geometry
    from .detour.filter import QueryFilter
    from .detour.navmesh import NavMesh, NavMeshParams
    from .detour.query import NavMeshQuery, Path
    from .detour.tile import OffMeshConnections
    from .geometry import TriMesh, load_obj, sample_level, save_obj
    from .pipeline import BuildReport, bake
    from .recast.build import ConvexVolume
    from .recast.config import BakeConfig
    from .tilecache.cache import TileCache
