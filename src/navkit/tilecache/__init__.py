"""Recast's tile cache (``dtTileCache``): heightfield layers, compressed tiles, TSET files."""
