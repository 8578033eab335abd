"""Crowds of agents on a navmesh (Detour's dtCrowd): see :class:`Crowd`."""

from .agents import AVOIDANCE_MODELS, LOCAL_GRID, AgentParams
from .avoidance import PRESETS, ObstacleAvoidanceParams
from .crowd import Crowd
from .local_grid import LocalGridParams
from .orca import ORCAParams
from .ttc import TTCParams

__all__ = [
    "Crowd", "AgentParams", "ObstacleAvoidanceParams", "PRESETS", "TTCParams", "ORCAParams",
    "LocalGridParams", "LOCAL_GRID", "AVOIDANCE_MODELS",
]  # fmt: skip
