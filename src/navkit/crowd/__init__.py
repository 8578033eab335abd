"""Crowds of agents on a navmesh (Detour's dtCrowd): see :class:`Crowd`."""

from .agents import AgentParams
from .avoidance import PRESETS, ObstacleAvoidanceParams
from .crowd import Crowd

__all__ = ["Crowd", "AgentParams", "ObstacleAvoidanceParams", "PRESETS"]
