"""navkit.ecm: the Explicit Corridor Map (medial axis with clearance) and its
local updates. See :mod:`navkit.ecm.corridor_map`."""

from .compare import map_difference
from .corridor_map import CorridorMap, UpdateReport

__all__ = ["CorridorMap", "UpdateReport", "map_difference"]
