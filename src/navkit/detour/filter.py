"""Polygon filter and traversal costs (Detour's default ``dtQueryFilter``).

A polygon passes when ``flags & include != 0`` and ``flags & exclude == 0``
(16-bit flags; a polygon with no flags never passes). The cost of moving
between two points inside a polygon is their 3D distance times the area cost
of that polygon's area (64 areas, all 1.0 by default). Kernels receive the
filter as two arrays: ``flags`` (2,) int32 [include, exclude] and ``costs``
(64,) float32.
"""

from __future__ import annotations

import numpy as np

from navkit import _check
from navkit.errors import InputError

MAX_AREAS = 64


class QueryFilter:
    """Include/exclude flags and per-area costs.

    Parameters
    ----------
    include_flags : int
        Polygons need at least one of these 16 bits (default 0xffff).
    exclude_flags : int
        Polygons with any of these bits are rejected (default 0).
    area_costs : sequence of float, optional
        Up to 64 per-area cost multipliers (default 1.0 each).
    """

    __slots__ = ("_flags", "_costs")

    def __init__(
        self,
        include_flags: int = 0xFFFF,
        exclude_flags: int = 0,
        area_costs: object = None,
    ) -> None:
        self._flags = np.zeros(2, np.int32)
        self._costs = np.ones(MAX_AREAS, np.float32)
        self.include_flags = include_flags
        self.exclude_flags = exclude_flags
        if area_costs is not None:
            try:
                c = np.asarray(area_costs, dtype=np.float64)
            except (TypeError, ValueError, OverflowError):
                raise InputError(
                    f"area_costs must be up to {MAX_AREAS} numbers, got {area_costs!r}"[:200]
                ) from None
            if c.ndim != 1 or c.size > MAX_AREAS:
                raise InputError(f"area_costs must be up to {MAX_AREAS} numbers, shape {c.shape}")
            for i, v in enumerate(c.tolist()):
                self._costs[i] = np.float32(_check.real(v, f"area_costs[{i}]", 0.0))

    @staticmethod
    def _check_flags(v: int, name: str) -> int:
        return _check.integer(v, name, 0, 0xFFFF)

    @property
    def include_flags(self) -> int:
        return int(self._flags[0])

    @include_flags.setter
    def include_flags(self, v: int) -> None:
        self._flags[0] = self._check_flags(v, "include_flags")

    @property
    def exclude_flags(self) -> int:
        return int(self._flags[1])

    @exclude_flags.setter
    def exclude_flags(self, v: int) -> None:
        self._flags[1] = self._check_flags(v, "exclude_flags")

    def get_area_cost(self, area: int) -> float:
        """Cost multiplier of area id 0..63."""
        return float(self._costs[self._area(area)])

    def set_area_cost(self, area: int, cost: float) -> None:
        """Set the cost multiplier of area id 0..63 (finite, 0 <= cost <= float32 max)."""
        a = self._area(area)
        self._costs[a] = np.float32(_check.real(cost, "cost", 0.0))

    @staticmethod
    def _area(area: int) -> int:
        return _check.integer(area, "area", 0, MAX_AREAS - 1)

    def pass_filter(self, poly_flags: int) -> bool:
        """Whether a polygon with these flags passes."""
        f = int(poly_flags)
        return (f & self.include_flags) != 0 and (f & self.exclude_flags) == 0

    def get_cost(self, pa: object, pb: object, area: int) -> float:
        """Cost of moving from pa to pb inside a polygon of the given area (float32 as Detour)."""
        a = np.asarray(pa, np.float32)
        b = np.asarray(pb, np.float32)
        d = b - a
        dist = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        return float(np.float32(dist) * self._costs[self._area(area)])

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(flags (2,) int32, costs (64,) float32) for the kernels."""
        return self._flags, self._costs

    def __repr__(self) -> str:
        return (
            f"QueryFilter(include=0x{self.include_flags:04x}, exclude=0x{self.exclude_flags:04x})"
        )


DEFAULT_FILTER = QueryFilter()
