"""Recast's voxel pipeline: one module per stage, each a public function over numba kernels."""

from .config import PARTITIONS, BakeConfig, RcConfig
from .types import CompactHeightfield, ContourSet, Heightfield, PolyMesh, PolyMeshDetail

__all__ = [
    "PARTITIONS",
    "BakeConfig",
    "RcConfig",
    "CompactHeightfield",
    "ContourSet",
    "Heightfield",
    "PolyMesh",
    "PolyMeshDetail",
]
