"""Recast's tile cache (``dtTileCache``): heightfield layers, compressed tiles, TSET files.

- :mod:`.layers` -- ``build_heightfield_layers`` (``rcBuildHeightfieldLayers``).
- :mod:`.fastlz` -- FastLZ levels 1 and 2, byte for byte as Recast's compressor.
- :mod:`.format` -- compressed layers (``dtBuildTileCacheLayer``) and "TSET" tile
  cache sets (``exportTileCache`` / ``importTileCache``).
- :mod:`.build` -- the tile cache build of a mesh (RecastDemo's Sample_TempObstacles).
- :mod:`.obstacles` -- obstacle shapes and their rasterization onto a layer.
- :mod:`.regions`, :mod:`.contours`, :mod:`.polymesh` -- the tile cache's own layer
  meshing (``dtBuildTileCacheRegions/Contours/PolyMesh``); :mod:`.tilemesh` -- a layer
  to a Detour tile (``buildNavMeshTile``).
- :mod:`.update` -- requests, obstacle states and rebuilds (``dtTileCache::update``).
- :mod:`.cache` -- :class:`TileCache`, the public runtime cache (``navkit.TileCache``).
- :mod:`.io` -- navkit's own cache file (``TileCache.save`` / ``TileCache.load``).
"""

from .build import TileLayers, build_tile_cache, build_tile_layers
from .cache import TileCache
from .format import (
    CompressedTile,
    TileCacheLayer,
    TileCacheLayerHeader,
    TileCacheParams,
    TileCacheSet,
    build_tile_cache_layer,
    decompress_tile_cache_layer,
    read_tile_cache,
    tile_cache_from_bytes,
    tile_cache_to_bytes,
    write_tile_cache,
)
from .layers import HeightfieldLayer, HeightfieldLayerSet, build_heightfield_layers
from .update import Changes

__all__ = [
    "TileCache",
    "Changes",
    "TileLayers",
    "build_tile_cache",
    "build_tile_layers",
    "CompressedTile",
    "TileCacheLayer",
    "TileCacheLayerHeader",
    "TileCacheParams",
    "TileCacheSet",
    "build_tile_cache_layer",
    "decompress_tile_cache_layer",
    "read_tile_cache",
    "tile_cache_from_bytes",
    "tile_cache_to_bytes",
    "write_tile_cache",
    "HeightfieldLayer",
    "HeightfieldLayerSet",
    "build_heightfield_layers",
]
