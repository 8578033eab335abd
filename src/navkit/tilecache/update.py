"""The tile cache's runtime state: compressed tiles, obstacle table, requests, rebuilds.

This is ``dtTileCache`` (DetourTileCache.cpp) in recast-compatible form:

- compressed tiles keep their refs and Detour's per-position lookup order
  (``getTilesAt`` lists the layers of a position newest first);
- obstacles live in ``max_obstacles`` slots with 16-bit salts and Detour's free list
  (slot 0 first; a removed obstacle's slot goes back to the head); a handle is
  ``salt << 16 | slot`` (``dtObstacleRef``);
- add/remove/move queue a request (at most 64, ``MAX_REQUESTS``);
- :meth:`CacheState.step` is one ``dtTileCache::update`` call: when no tile is
  pending it turns every queued request into touched tiles (``queryTiles`` over the
  obstacle's bounds, at most 8 per obstacle, at most 64 pending tiles: Detour drops
  the rest), then rebuilds the first pending tile and advances the obstacle states
  (processing -> processed, removing -> empty).

With ``compatible=False`` (navkit's default mode) no request or tile is dropped:
the request and rebuild queues and the layers per obstacle are unbounded; obstacles
are rasterized and queried grown by the agent radius
(:func:`~navkit.tilecache.obstacles.expand_obstacle`); rebuilt tiles get a detail
mesh, a BV tree and the off-mesh connections that start on them.

A rebuild decompresses the layer, rasterizes every live obstacle that touches it
(slot order) and replaces the navmesh tile at that location
(:func:`~navkit.tilecache.tilemesh.build_layer_tile`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..detour.navmesh import NavMesh
from ..detour.tile import OffMeshConnections
from ..errors import BuildError
from .format import TileCacheSet
from .obstacles import Obstacle, expand_obstacle, obstacle_bounds
from .tilemesh import build_layer_tile

__all__ = ["Changes", "CacheState", "MAX_REQUESTS", "MAX_UPDATE", "MAX_TOUCHED_TILES"]

MAX_REQUESTS = 64
MAX_UPDATE = 64
MAX_TOUCHED_TILES = 8
_QUERY_MAX_TILES = 32

EMPTY, PROCESSING, PROCESSED, REMOVING = 0, 1, 2, 3
ADD, REMOVE, MOVE = 0, 1, 2
f32 = np.float32


class Changes(NamedTuple):
    """What an :meth:`navkit.TileCache.update` call changed.

    Attributes
    ----------
    rebuilt : tuple of (tx, ty, layer)
        Tile locations rebuilt, in order (a location whose layer now has no
        polygon lost its navmesh tile).
    invalidated : tuple of int
        Poly refs that no longer name a polygon (every polygon of a replaced or
        removed tile; the new tile's polygons have new refs).
    failed : tuple of (tx, ty, layer)
        Rebuilds that failed (a Detour buffer overflowed); the old tile stays.
    up_to_date : bool
        No request or rebuild left.
    """

    rebuilt: tuple[tuple[int, int, int], ...]
    invalidated: tuple[int, ...]
    failed: tuple[tuple[int, int, int], ...]
    up_to_date: bool


class _Ob:
    __slots__ = ("salt", "state", "shape", "touched", "pending", "next")

    def __init__(self) -> None:
        self.salt = 1
        self.state = EMPTY
        self.shape: Obstacle | None = None
        self.touched: list[int] = []
        self.pending: list[int] = []
        self.next = -1


class CacheState:
    """``dtTileCache``'s state over a tile cache set and a live navmesh."""

    def __init__(
        self,
        tset: TileCacheSet,
        navmesh: NavMesh,
        max_obstacles: int,
        *,
        compatible: bool = True,
        offmesh: OffMeshConnections | None = None,
    ) -> None:
        self.compatible = compatible
        self.offmesh = offmesh
        #: obstacles grow by this much [wu] when marked and queried (0 when compatible)
        self.grow = 0.0 if compatible else float(tset.params.walkable_radius)
        self.max_update = MAX_UPDATE if compatible else 1 << 62
        self.max_touched = MAX_TOUCHED_TILES if compatible else 1 << 62
        self.tset = tset
        self.params = tset.params
        self.navmesh = navmesh
        p = tset.params
        # compressed tiles by ref; positions in add order (lookup lists newest first)
        self.tiles = {t.ref: t for t in tset.tiles}
        self.by_pos: dict[tuple[int, int], list[int]] = {}
        self.tight: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        cs = f32(p.cs)
        for t in tset.tiles:
            h = t.header
            self.by_pos.setdefault((h.tx, h.ty), []).append(t.ref)
            b0 = np.array(h.bmin, np.float32)
            b1 = np.array(h.bmax, np.float32)
            tmin = np.array([b0[0] + f32(h.minx) * cs, b0[1], b0[2] + f32(h.miny) * cs], f32)
            tmax = np.array(
                [b0[0] + f32(h.maxx + 1) * cs, b1[1], b0[2] + f32(h.maxy + 1) * cs], f32
            )
            self.tight[t.ref] = (tmin, tmax)
        self.obs = [_Ob() for _ in range(max_obstacles)]
        self.max_obstacles = max_obstacles
        self.next_free = -1
        for i in range(max_obstacles - 1, -1, -1):
            self.obs[i].next = self.next_free
            self.next_free = i
        self.reqs: list[tuple[int, int]] = []
        self.removal_queued: set[int] = set()  # refs with a queued REMOVE request
        self.update: list[int] = []

    # -- lookups ---------------------------------------------------------------------------
    def tiles_at(self, tx: int, ty: int) -> list[int]:
        """``getTilesAt``: refs of the compressed tiles at (tx, ty), newest first."""
        return list(reversed(self.by_pos.get((tx, ty), [])))

    def query_tiles(self, bmin: np.ndarray, bmax: np.ndarray, max_results: int) -> list[int]:
        """``queryTiles``: compressed tiles whose tight bounds overlap [bmin, bmax]."""
        p = self.params
        tw = f32(p.width) * f32(p.cs)
        th = f32(p.height) * f32(p.cs)
        o = np.array(p.orig, np.float32)
        tx0 = int(math.floor((bmin[0] - o[0]) / tw))
        tx1 = int(math.floor((bmax[0] - o[0]) / tw))
        ty0 = int(math.floor((bmin[2] - o[2]) / th))
        ty1 = int(math.floor((bmax[2] - o[2]) / th))
        out: list[int] = []
        for ty in range(ty0, ty1 + 1):
            for tx in range(tx0, tx1 + 1):
                for ref in self.tiles_at(tx, ty)[:_QUERY_MAX_TILES]:
                    tmin, tmax = self.tight[ref]
                    if (bmin <= tmax).all() and (bmax >= tmin).all():
                        if len(out) < max_results:
                            out.append(ref)
        return out

    def effective(self, shape: Obstacle) -> Obstacle:
        """The shape as marked: a hole grown by the agent radius in the default mode
        (area-marking obstacles are not grown)."""
        return expand_obstacle(shape, self.grow) if self.grow > 0 and shape.area == 0 else shape

    def touched_by(self, shape: Obstacle) -> list[int]:
        bmin, bmax = obstacle_bounds(self.effective(shape))
        return self.query_tiles(bmin, bmax, 1 << 30)

    # -- obstacle table ----------------------------------------------------------------------
    def obstacle_ref(self, i: int) -> int:
        return (self.obs[i].salt << 16) | i

    def slot_of(self, ref: int) -> int:
        """Slot of a live obstacle handle, -1 when stale."""
        if not isinstance(ref, (int, np.integer)) or not 0 < ref <= 0xFFFFFFFF:
            return -1
        i = int(ref) & 0xFFFF
        if i >= self.max_obstacles:
            return -1
        ob = self.obs[i]
        if ob.salt != (int(ref) >> 16) & 0xFFFF or ob.state in (EMPTY, REMOVING):
            return -1
        if int(ref) in self.removal_queued:
            return -1
        return i

    def add(self, shape: Obstacle) -> int:
        i = self.next_free
        ob = self.obs[i]
        self.next_free = ob.next
        ob.next = -1
        ob.state = PROCESSING
        ob.shape = shape
        ob.touched = []
        ob.pending = []
        ref = self.obstacle_ref(i)
        self.reqs.append((ADD, ref))
        return ref

    def remove(self, ref: int) -> None:
        self.reqs.append((REMOVE, int(ref)))
        self.removal_queued.add(int(ref))

    def move(self, ref: int, shape: Obstacle) -> None:
        self.obs[int(ref) & 0xFFFF].shape = shape
        self.reqs.append((MOVE, int(ref)))

    # -- update --------------------------------------------------------------------------------
    def _queue(self, ob: _Ob, tiles: list[int]) -> None:
        for t in tiles:
            if len(self.update) < self.max_update:
                if t not in self.update:
                    self.update.append(t)
                ob.pending.append(t)

    def _process_requests(self) -> None:
        for action, ref in self.reqs:
            i = ref & 0xFFFF
            if i >= self.max_obstacles:
                continue
            ob = self.obs[i]
            if ob.salt != (ref >> 16) & 0xFFFF:
                continue
            if action == ADD:
                assert ob.shape is not None
                ob.touched = self.touched_by(ob.shape)[: self.max_touched]
                ob.pending = []
                self._queue(ob, ob.touched)
            elif action == REMOVE:
                ob.state = REMOVING
                ob.pending = []
                self._queue(ob, ob.touched)
            else:  # MOVE (navkit): the old and the new footprint are rebuilt
                assert ob.shape is not None
                old = ob.touched
                ob.touched = self.touched_by(ob.shape)[: self.max_touched]
                ob.state = PROCESSING
                ob.pending = []
                self._queue(ob, old + [t for t in ob.touched if t not in old])
        self.reqs = []
        self.removal_queued.clear()

    @property
    def up_to_date(self) -> bool:
        return not self.update and not self.reqs

    def step(self, rebuilt: list, invalidated: list, failed: list) -> None:
        """One ``dtTileCache::update`` call."""
        if not self.update:
            self._process_requests()
        if not self.update:
            return
        ref = self.update.pop(0)
        loc = self.build_tile(ref, invalidated)
        (rebuilt if loc[3] else failed).append(loc[:3])
        for i in range(self.max_obstacles):
            ob = self.obs[i]
            if ob.state in (PROCESSING, REMOVING):
                for j in range(len(ob.pending)):
                    if ob.pending[j] == ref:
                        ob.pending[j] = ob.pending[-1]
                        ob.pending.pop()
                        break
                if not ob.pending:
                    if ob.state == PROCESSING:
                        ob.state = PROCESSED
                    else:
                        ob.state = EMPTY
                        ob.shape = None
                        ob.salt = (ob.salt + 1) & 0xFFFF or 1
                        ob.next = self.next_free
                        self.next_free = i

    def live_shapes_on(self, ref: int) -> list[Obstacle]:
        out = []
        for ob in self.obs:
            if ob.state in (EMPTY, REMOVING) or ob.shape is None:
                continue
            if ref in ob.touched:
                out.append(self.effective(ob.shape))
        return out

    def build_tile(self, ref: int, invalidated: list) -> tuple[int, int, int, bool]:
        """``buildNavMeshTile``: rebuild the layer ``ref`` and swap it into the navmesh."""
        t = self.tiles[ref]
        h = t.header
        try:
            td = build_layer_tile(
                t.data,
                self.params,
                self.live_shapes_on(ref),
                t.header,
                detail=not self.compatible,
                offmesh=self.offmesh,
            )
        except BuildError:
            return h.tx, h.ty, h.tlayer, False
        nm = self.navmesh
        old = nm.get_tile_ref_at(h.tx, h.ty, h.tlayer)
        if old:
            slot = nm.decode_ref(old)[1]
            n = int(nm._t["tile_poly_count"][slot])
            invalidated.extend(old | k for k in range(n))
            if td is not None:
                nm._replace_tile(old, td)  # remove + add, one link kernel call
                return h.tx, h.ty, h.tlayer, True
            nm._remove_tile(old, keep_data=False)
        if td is not None:
            nm._add_tile(td, None, check=False)
        return h.tx, h.ty, h.tlayer, True
