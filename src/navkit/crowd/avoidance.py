"""Obstacle avoidance parameters (dtObstacleAvoidanceParams) and RecastDemo's presets.

The sampled adaptive velocity planner itself (dtObstacleAvoidanceQuery) is not
implemented yet: :class:`~navkit.crowd.Crowd` rejects agents that ask for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .agents import _finite, _int

__all__ = ["ObstacleAvoidanceParams", "DEFAULT_PARAMS", "PRESETS", "MAX_PARAMS"]

MAX_PARAMS = 8  # DT_CROWD_MAX_OBSTAVOIDANCE_PARAMS


@dataclass(frozen=True)
class ObstacleAvoidanceParams:
    """dtObstacleAvoidanceParams (dtCrowd::init's defaults)."""

    vel_bias: float = 0.4
    weight_des_vel: float = 2.0
    weight_cur_vel: float = 0.75
    weight_side: float = 0.75
    weight_toi: float = 2.5
    horiz_time: float = 2.5
    grid_size: int = 33
    adaptive_divs: int = 7
    adaptive_rings: int = 2
    adaptive_depth: int = 5

    def __post_init__(self) -> None:
        for f in ("vel_bias", "weight_des_vel", "weight_cur_vel", "weight_side", "weight_toi",
                  "horiz_time"):  # fmt: skip
            object.__setattr__(self, f, _finite(getattr(self, f), f, 0.0, 1e30))
        object.__setattr__(self, "grid_size", _int(self.grid_size, "grid_size", 1, 255))
        object.__setattr__(self, "adaptive_divs", _int(self.adaptive_divs, "adaptive_divs", 1, 32))
        object.__setattr__(
            self, "adaptive_rings", _int(self.adaptive_rings, "adaptive_rings", 1, 4)
        )
        object.__setattr__(
            self, "adaptive_depth", _int(self.adaptive_depth, "adaptive_depth", 0, 255)
        )


DEFAULT_PARAMS = ObstacleAvoidanceParams()
#: RecastDemo CrowdTool's four presets (low, medium, good, high quality).
PRESETS = (
    replace(DEFAULT_PARAMS, vel_bias=0.5, adaptive_divs=5, adaptive_rings=2, adaptive_depth=1),
    replace(DEFAULT_PARAMS, vel_bias=0.5, adaptive_divs=5, adaptive_rings=2, adaptive_depth=2),
    replace(DEFAULT_PARAMS, vel_bias=0.5, adaptive_divs=7, adaptive_rings=2, adaptive_depth=3),
    replace(DEFAULT_PARAMS, vel_bias=0.5, adaptive_divs=7, adaptive_rings=3, adaptive_depth=3),
)
