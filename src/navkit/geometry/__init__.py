"""Geometry input: triangle meshes, OBJ files and procedural sample levels."""

from .grid import bake_grid, load_movingai_map, load_movingai_scenarios
from .obj import load_obj, parse_obj, save_obj
from .sample import sample_level
from .trimesh import TriMesh

__all__ = [
    "TriMesh", "load_obj", "parse_obj", "save_obj", "sample_level", "bake_grid",
    "load_movingai_map", "load_movingai_scenarios",
]  # fmt: skip
