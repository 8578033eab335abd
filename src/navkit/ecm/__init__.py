"""navkit.ecm: the Explicit Corridor Map -- the medial axis of a 2D environment
with clearance and closest obstacle points, shortest paths with clearance for
any agent radius, and local updates when obstacles are inserted, removed or
moved (Geraerts 2010; van Toll, Cook and Geraerts 2012).

Public surface
--------------
CorridorMap.from_polygons(boundary, obstacles) / CorridorMap.from_navmesh(mesh)
    build (Boost sweep via the optional ``pyvoronoi``; own incremental build otherwise)
CorridorMap.find_path(start, goal, clearance=r, preferred_clearance=None) -> PathResult | None
CorridorMap.find_path(..., explain=True) -> PathResult | NoPath   (falsy; says why there is none)
CorridorMap.clearance_at(p), CorridorMap.nearest_medial_point(p), CorridorMap.medial_axis()
CorridorMap.min_feature   smallest accepted feature/gap [wu] (2^-16 of the boundary's extent)
CorridorMap.insert_point / insert_segment / insert_polygon / remove / move -> UpdateReport
CorridorMap.rebuilt(), map_difference(a, b)   the rebuild oracle
render(cmap, out_png, path=None, start=None, goal=None), ecm_command(level, start, goal, clearance, out)  (CLI body)
moving_obstacles_demo(out_dir)
CorridorAgents(cmap), AgentSettings   agents of any radius following their corridors (navkit.ecm.agents)
CorridorMap.subscribe(callback)   every UpdateReport, after the map changed
"""

from .agents import AgentSettings, CorridorAgents
from .compare import map_difference
from .corridor_map import CorridorMap, UpdateReport
from .navmesh import navmesh_rings
from .path import NoPath, PathResult
from .render import ecm_command, load_scene, moving_obstacles_demo, render

__all__ = [
    "CorridorMap",
    "CorridorAgents",
    "AgentSettings",
    "UpdateReport",
    "PathResult",
    "NoPath",
    "map_difference",
    "navmesh_rings",
    "render",
    "ecm_command",
    "load_scene",
    "moving_obstacles_demo",
]
