"""Bake settings: world units for people, voxel units for kernels.

:class:`BakeConfig` holds RecastDemo's settings in world units (wu) with
RecastDemo's defaults. :meth:`BakeConfig.voxel` derives the voxel-unit
:class:`RcConfig` the pipeline stages take, with float32 arithmetic exactly as
RecastDemo (and the Recast peer) derive it, so both bake from the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, NamedTuple

import numpy as np

from ..errors import ConfigError

__all__ = ["BakeConfig", "RcConfig", "PARTITIONS"]

PARTITIONS = ("watershed", "monotone", "layers")

#: Limits that keep every derived voxel quantity within Recast's types.
MIN_CELL = 1e-4  #: smallest cell_size / cell_height [wu]
MAX_CELL = 1e4  #: largest cell_size / cell_height [wu]
MAX_RADIUS_VX = 127  #: erosion radius [vx]: Recast's threshold (2 * radius) is one byte
MAX_EDGE_VX = 1 << 15  #: max_edge_len [vx] (its square stays an int32)
MAX_REGION_SIDE = 46340  #: region sizes [vx]: the square (area) stays below 2**31
MAX_ERROR = 1e6  #: edge_max_error, detail_sample_dist, detail_sample_max_error

f32 = np.float32


class RcConfig(NamedTuple):
    """Recast's ``rcConfig``: the voxel-unit settings the pipeline kernels take.

    Fields mirror Recast's names in snake_case. ``cs``, ``ch`` and the float
    fields are float32 values, as Recast stores them.
    """

    cs: float  #: xz cell size [wu], float32
    ch: float  #: y cell height [wu], float32
    walkable_slope_angle: float  #: max walkable slope [degrees]
    walkable_height: int  #: min ceiling height [vx]
    walkable_climb: int  #: max ledge climb [vx]
    walkable_radius: int  #: erosion radius [vx]
    max_edge_len: int  #: max contour edge length [vx]
    max_simplification_error: float  #: contour max deviation [vx], float32
    min_region_area: int  #: min isolated region size [vx^2]
    merge_region_area: int  #: regions smaller than this merge [vx^2]
    max_verts_per_poly: int  #: max vertices per polygon
    detail_sample_dist: float  #: detail sample spacing [wu], float32 (0 = off)
    detail_sample_max_error: float  #: detail max height error [wu], float32
    border_size: int  #: non-navigable border around the heightfield [vx]
    tile_size: int  #: tile width/depth without border [vx] (0 = solo)


@dataclass(frozen=True)
class BakeConfig:
    """How to bake a navmesh, in world units (wu). Defaults are RecastDemo's.

    Every field states its limit and unit. Invalid values (out of range, NaN,
    infinite, not a number, or a bool where a number is expected) raise
    :class:`~navkit.errors.ConfigError` naming the field, when the config is made;
    the limits keep every derived voxel quantity within the type Recast stores it in.

    Attributes
    ----------
    cell_size : float
        The xz-plane voxel size. [Limit: 1e-4 <= value <= 1e4] [Units: wu]
    cell_height : float
        The y-axis voxel size. [Limit: 1e-4 <= value <= 1e4] [Units: wu]
    agent_height : float
        Minimum floor-to-ceiling height the agent passes under.
        [Limit: 3 to 255 voxels: 3 * cell_height <= value <= 255 * cell_height] [Units: wu]
    agent_radius : float
        Distance kept from walls; the walkable area is eroded by it.
        [Limit: 0 to 127 voxels: 0 <= value <= 127 * cell_size; Recast keeps the erosion
        threshold in one byte, a larger radius would not erode at all] [Units: wu]
    agent_max_climb : float
        Maximum ledge height the agent steps up.
        [Limit: 0 <= value <= 255 * cell_height] [Units: wu]
    agent_max_slope : float
        Maximum walkable slope. [Limit: 0 <= value < 90] [Units: degrees]
    region_min_size : float
        Regions smaller than this (side of a square) are removed.
        [Limit: 0 <= value <= 46340] [Units: vx, area = value^2]
    region_merge_size : float
        Regions smaller than this (side of a square) merge into neighbours.
        [Limit: 0 <= value <= 46340] [Units: vx, area = value^2]
    edge_max_len : float
        Maximum contour edge length along walls.
        [Limit: 0 <= value <= 32768 * cell_size, 0 = no limit] [Units: wu]
    edge_max_error : float
        Maximum distance of a simplified contour from the raw one.
        [Limit: 0 <= value <= 1e6] [Units: vx]
    verts_per_poly : int
        Maximum vertices per polygon. [Limit: 3 <= value <= 6]
    detail_sample_dist : float
        Detail mesh sampling distance in cells; below 0.9 the detail mesh only
        follows polygon edges. [Limit: 0 <= value <= 1e6] [Units: cells (x cell_size = wu)]
    detail_sample_max_error : float
        Maximum detail surface deviation from the heightfield, in cell heights.
        [Limit: 0 <= value <= 1e6] [Units: cells (x cell_height = wu)]
    partition : {"watershed", "monotone", "layers"}
        Region partitioning. Watershed gives the nicest polygons; monotone is the
        fastest; layers suits tile caches.
    tile_size : int
        Tile width and depth in voxels; 0 bakes one solo navmesh.
        [Limit: 0 or 16 <= value <= 4096] [Units: vx]
    filter_low_hanging_obstacles, filter_ledge_spans, filter_walkable_low_height_spans : bool
        Recast's three heightfield filters (all on, as in RecastDemo).
    """

    cell_size: float = 0.3
    cell_height: float = 0.2
    agent_height: float = 2.0
    agent_radius: float = 0.6
    agent_max_climb: float = 0.9
    agent_max_slope: float = 45.0
    region_min_size: float = 8
    region_merge_size: float = 20
    edge_max_len: float = 12.0
    edge_max_error: float = 1.3
    verts_per_poly: int = 6
    detail_sample_dist: float = 6.0
    detail_sample_max_error: float = 1.0
    partition: Literal["watershed", "monotone", "layers"] = "watershed"
    tile_size: int = 0
    filter_low_hanging_obstacles: bool = True
    filter_ledge_spans: bool = True
    filter_walkable_low_height_spans: bool = True

    def __post_init__(self) -> None:
        self.validate()
        # numpy scalars become Python numbers, so that to_dict() is JSON-ready and
        # equal configs compare and hash equal whatever type their values came in.
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.bool_):
                object.__setattr__(self, f.name, bool(v))
            elif isinstance(v, np.integer):
                object.__setattr__(self, f.name, int(v))
            elif isinstance(v, np.floating):
                object.__setattr__(self, f.name, float(v))

    # -- validation -----------------------------------------------------------------
    def validate(self) -> None:
        """Check every field against its limit.

        Raises
        ------
        ConfigError
            Naming the first field outside its limit.
        """
        nums: dict[str, float] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "partition":
                if not isinstance(v, str) or v not in PARTITIONS:
                    raise ConfigError("partition", f"must be one of {PARTITIONS}, got {v!r}")
                continue
            if f.name.startswith("filter_"):
                if not isinstance(v, bool | np.bool_):
                    raise ConfigError(f.name, f"must be True or False, got {v!r}")
                continue
            if isinstance(v, bool | np.bool_) or not isinstance(
                v, int | float | np.integer | np.floating
            ):
                raise ConfigError(f.name, f"must be a number, got {v!r}")
            try:
                x = float(v)
            except OverflowError:  # an int beyond float's range
                x = math.inf
            if not math.isfinite(x):
                raise ConfigError(f.name, f"must be finite, got {v!r}")
            nums[f.name] = x

        def need(name: str, ok: bool, limit: str) -> None:
            if not ok:
                raise ConfigError(name, f"{limit} (got {getattr(self, name)!r})")

        # Ranges are checked in float64 first, so that the float32 derivation below
        # stays finite and every voxel quantity fits the type Recast stores it in.
        cs, ch = nums["cell_size"], nums["cell_height"]
        for name, x in (("cell_size", cs), ("cell_height", ch)):
            need(
                name, MIN_CELL <= x <= MAX_CELL, f"must be > 0: in [{MIN_CELL:g}, {MAX_CELL:g}] wu"
            )
        need(
            "agent_height",
            0 <= nums["agent_height"] <= 256 * ch,
            f"must be in [3 * cell_height, 255 * cell_height] = "
            f"[{3 * ch:g}, {255 * ch:g}] wu (Recast stores it in 8 bits of voxels)",
        )
        need(
            "agent_height",
            math.ceil(f32(f32(self.agent_height) / f32(ch))) >= 3,
            f"must span >= 3 voxels: >= 3 * cell_height = {3 * ch:g} wu",
        )
        need(
            "agent_radius",
            0 <= nums["agent_radius"] <= MAX_RADIUS_VX * cs,
            f"must be >= 0 and <= {MAX_RADIUS_VX} * cell_size = {MAX_RADIUS_VX * cs:g} wu "
            "(Recast's erosion threshold is one byte: a larger radius would not erode at all)",
        )
        need(
            "agent_max_climb",
            0 <= nums["agent_max_climb"] <= 256 * ch,
            f"must be >= 0 and <= 255 * cell_height = {255 * ch:g} wu",
        )
        need("agent_max_slope", 0 <= nums["agent_max_slope"] < 90, "must be in [0, 90) degrees")
        for name in ("region_min_size", "region_merge_size"):
            need(
                name,
                0 <= nums[name] <= MAX_REGION_SIDE,
                f"must be >= 0 and <= {MAX_REGION_SIDE} vx (its square is an int32 area)",
            )
        need(
            "edge_max_len",
            0 <= nums["edge_max_len"] <= MAX_EDGE_VX * cs,
            f"must be >= 0 and <= {MAX_EDGE_VX} * cell_size = {MAX_EDGE_VX * cs:g} wu "
            "(0 = no limit)",
        )
        need(
            "edge_max_error",
            0 <= nums["edge_max_error"] <= MAX_ERROR,
            f"must be >= 0 and <= {MAX_ERROR:g} vx",
        )
        need(
            "verts_per_poly",
            nums["verts_per_poly"].is_integer() and 3 <= nums["verts_per_poly"] <= 6,
            "must be an integer in 3..6",
        )
        need(
            "detail_sample_dist",
            0 <= nums["detail_sample_dist"] <= MAX_ERROR,
            f"must be >= 0 and <= {MAX_ERROR:g} cells",
        )
        need(
            "detail_sample_max_error",
            0 <= nums["detail_sample_max_error"] <= MAX_ERROR,
            f"must be >= 0 and <= {MAX_ERROR:g} cells",
        )
        ts = nums["tile_size"]
        need(
            "tile_size",
            ts.is_integer() and (ts == 0 or 16 <= ts <= 4096),
            "must be 0 (solo) or an integer in 16..4096 vx",
        )
        # Derived voxel values must fit Recast's bit fields (exact float32 derivation).
        vx = self.voxel()
        need("agent_height", vx.walkable_height <= 255, "gives more than 255 voxels of height")
        need("agent_max_climb", vx.walkable_climb <= 255, "gives more than 255 voxels of climb")
        need(
            "agent_radius",
            vx.walkable_radius <= MAX_RADIUS_VX,
            f"gives more than {MAX_RADIUS_VX} voxels of radius",
        )
        need("edge_max_len", vx.max_edge_len <= MAX_EDGE_VX, f"gives more than {MAX_EDGE_VX} vx")

    # -- derivation -----------------------------------------------------------------
    def voxel(self) -> RcConfig:
        """Derive Recast's voxel-unit settings the way RecastDemo does (float32 math).

        Returns
        -------
        RcConfig
            For solo builds ``border_size`` is 0; for tiled builds it is
            ``walkable_radius + 3`` as in RecastDemo's Sample_TileMesh.
        """
        # derived once per config (frozen), as a bake asks for it every time
        rc = self.__dict__.get("_voxel")
        if rc is None:
            rc = self._derive_voxel()
            object.__setattr__(self, "_voxel", rc)
        return rc

    def _derive_voxel(self) -> RcConfig:
        cs, ch = f32(self.cell_size), f32(self.cell_height)
        walkable_radius = int(math.ceil(f32(f32(self.agent_radius) / cs)))
        tiled = self.tile_size > 0
        dsd = f32(self.detail_sample_dist)
        return RcConfig(
            cs=float(cs),
            ch=float(ch),
            walkable_slope_angle=float(self.agent_max_slope),
            walkable_height=int(math.ceil(f32(f32(self.agent_height) / ch))),
            walkable_climb=int(math.floor(f32(f32(self.agent_max_climb) / ch))),
            walkable_radius=walkable_radius,
            max_edge_len=int(f32(f32(self.edge_max_len) / cs)),
            max_simplification_error=float(f32(self.edge_max_error)),
            min_region_area=int(f32(self.region_min_size) * f32(self.region_min_size)),
            merge_region_area=int(f32(self.region_merge_size) * f32(self.region_merge_size)),
            max_verts_per_poly=int(self.verts_per_poly),
            detail_sample_dist=0.0 if dsd < f32(0.9) else float(f32(cs * dsd)),
            detail_sample_max_error=float(f32(ch * f32(self.detail_sample_max_error))),
            border_size=walkable_radius + 3 if tiled else 0,
            tile_size=int(self.tile_size),
        )

    # -- conveniences ---------------------------------------------------------------
    def replace(self, **changes: Any) -> BakeConfig:
        """A copy with some fields changed (validated)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON-ready)."""
        # every field is a plain number, bool or str (__post_init__): a shallow copy
        # of the dict made once per config is asdict()'s result
        d = self.__dict__.get("_dict")
        if d is None:
            d = {f.name: getattr(self, f.name) for f in fields(self)}
            object.__setattr__(self, "_dict", d)
        return dict(d)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BakeConfig:
        """Build from a dict, rejecting unknown keys with :class:`ConfigError`."""
        names = {f.name for f in fields(cls)}
        for k in d:
            if k not in names:
                raise ConfigError(k, f"unknown setting; known: {sorted(names)}")
        return cls(**d)
