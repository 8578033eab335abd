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
(:func:`~navkit.tilecache._rebuild.rebuild_swap`, or
:func:`~navkit.tilecache._rebuild.rebuild_swap_detail` in the default mode). The
rebuilds of one round of requests run in one kernel call
(:func:`~navkit.tilecache._rebuild.rebuild_swap_many`: :meth:`CacheState.run`, an
update without budget), a budgeted update calls it once per step, and a new cache
adds its initial tiles through it (:meth:`CacheState.build_initial`), so the first
update compiles nothing the cache's construction did not. The Python path
(:func:`~navkit.tilecache.tilemesh.build_layer_tile` and the NavMesh's tile swap)
takes over when the navmesh has runtime off-mesh connections.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._jit import entry_call
from ..detour import _swap
from ..detour.navmesh import NavMesh
from ..detour.tile import OffMeshConnections
from ..errors import BuildError, InputError
from . import _rebuild as _rb
from ._rebuild import BUILD_FAILED, rebuild_swap_detail_many, rebuild_swap_many
from .format import LAYER_HEADER_SIZE, TileCacheSet
from .obstacles import PRISM, Obstacle, bounds_lists, expand_obstacle, r32
from .tilemesh import (
    DETAIL_SAMPLE_DIST_CELLS,
    DETAIL_SAMPLE_MAX_ERROR_CH,
    build_layer_tile,
    walkable_climb_vx,
)

__all__ = ["Changes", "CacheState", "MAX_REQUESTS", "MAX_UPDATE", "MAX_TOUCHED_TILES"]

MAX_REQUESTS = 64
MAX_UPDATE = 64
MAX_TOUCHED_TILES = 8
_QUERY_MAX_TILES = 32

EMPTY, PROCESSING, PROCESSED, REMOVING = 0, 1, 2, 3
ADD, REMOVE, MOVE = 0, 1, 2
f32 = np.float32


_call = entry_call  # same argument types on every step: the compiled entry point


_SWAP_ERRORS = {
    _swap.TOO_MANY_POLYS: "tile has more polys than max_polys allows",
    _swap.NO_FREE_SLOT: "no free tile slot (max_tiles reached)",
    _swap.BAD_POLY: "polygon with fewer than 3 vertices",
    _swap.BAD_VERTEX: "polygon vertex index out of range",
    _swap.TOO_MANY_VERTS: "Detour tiles hold fewer than 65535 vertices",
}


_BUILD_ERRORS = {
    _rb.CORRUPT: "corrupt layer (decompression)",
    _rb.TOO_MANY_REGIONS: "more than 255 regions",
    _rb.CONTOUR_OVERFLOW: "a contour overflows the trace buffer",
    _rb.MESH_OVERFLOW: "polygon mesh buffer overflow",
    _rb.TILE_DATA: "Detour's tile data could not be made (65535 or more vertices)",
}


def _tile_floor(d: float, t: float) -> int:
    """``floor((a - o) / t)`` in float32 (Detour's tile coordinate), ``d = a - o`` taken
    in double: the double quotient's floor when it lies clear of an integer (the
    float32 one is within 2 float32 ulps of it), else the float32 arithmetic (r32)."""
    q = d / t
    f = math.floor(q)
    m = abs(q) * 1e-6 + 1e-30
    if q - f > m and f + 1 - q > m:
        return f
    return math.floor(r32(r32(d) / t))


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
        #: by_pos's lists newest first (getTilesAt's order; the layers never change)
        self._rev_pos = {xy: refs[::-1] for xy, refs in self.by_pos.items()}
        self._qgrid: tuple | None = None
        #: the last shape grown by ``effective`` and the grown shape
        self._grown: tuple[Obstacle, Obstacle] | None = None
        self._tight_l: dict[int, tuple[list[float], list[float]]] = {}
        self._touch_memo: dict[int, tuple[Obstacle, list[int]]] = {}
        self.obs = [_Ob() for _ in range(max_obstacles)]
        self.max_obstacles = max_obstacles
        self.next_free = -1
        for i in range(max_obstacles - 1, -1, -1):
            self.obs[i].next = self.next_free
            self.next_free = i
        self.reqs: list[tuple[int, int]] = []
        self.removal_queued: set[int] = set()  # refs with a queued REMOVE request
        self.update: list[int] = []
        # -- indexes for the one-kernel rebuild (kept in step with ``obs``; reindex()
        # rebuilds them after the table was written directly) --
        #: layer ref -> slots whose ``touched`` holds it
        self.on_tile: dict[int, set[int]] = {}
        #: slots in state PROCESSING or REMOVING
        self.busy: set[int] = set()
        n = max_obstacles
        self.ob_kind = np.zeros(n, np.int64)
        self.ob_a = np.zeros((n, 3), np.float32)
        self.ob_b = np.zeros((n, 3), np.float32)
        self.ob_rot = np.zeros((n, 2), np.float32)
        self.ob_area = np.zeros(n, np.uint8)
        self.ob_pstart = np.zeros(n, np.int64)
        self.ob_pcount = np.zeros(n, np.int64)
        self.ob_pts = np.zeros((0, 2), np.float32)
        # every layer's stream and header, for the rebuild kernels (layer i: tset.tiles[i])
        self._tix = {t.ref: i for i, t in enumerate(tset.tiles)}
        #: layer ref -> (tx, ty, tlayer), as Changes lists it
        self._loc = {t.ref: (t.header.tx, t.header.ty, t.header.tlayer) for t in tset.tiles}
        streams = [np.frombuffer(t.data, np.uint8)[LAYER_HEADER_SIZE:] for t in tset.tiles]
        self._coff = np.zeros(len(streams) + 1, np.int64)
        np.cumsum([len(c) for c in streams], out=self._coff[1:])
        self._comp = np.concatenate(streams) if streams else np.zeros(0, np.uint8)
        hds = [t.header for t in tset.tiles]
        self._hdrs = np.array(
            [[h.width, h.height, h.tx, h.ty, h.tlayer] for h in hds], np.int64
        ).reshape(-1, 5)
        self._bmins = np.array([h.bmin for h in hds], np.float32).reshape(-1, 3)
        self._bmaxs = np.array([h.bmax for h in hds], np.float32).reshape(-1, 3)
        self._climb = walkable_climb_vx(p)
        self._max_error = np.float32(p.max_simplification_error)
        self._wp = np.array(
            [p.cs, p.ch, p.walkable_height, p.walkable_radius, p.walkable_climb], np.float32
        )
        #: the stage (``_rebuild`` CORRUPT ... TILE_DATA) of the last layer that failed
        self.fail_stage = 0
        self._nosel = np.zeros(0, np.int64)
        #: todo, soff, outs, free, rrows of a one-layer round (every step writes its out row)
        self._one = (
            np.zeros(1, np.int64),
            np.zeros(2, np.int64),
            np.zeros((1, 16), np.int64),
            np.zeros(2, np.int64),
            np.zeros((1, 2), np.int64),
        )
        # decompressed copies of the layers under live obstacles (each is rebuilt again
        # when its obstacles go: the copy spares that rebuild, and those of other
        # obstacles added on it, the FastLZ decode); rows of ``_rawpool``, taken when a
        # layer is rebuilt with obstacles and given back when it is rebuilt without
        self._rawpool = np.zeros(
            (0, max([3 * h.width * h.height for h in hds], default=1)), np.uint8
        )
        self._raw_row: dict[int, int] = {}
        self._raw_free: list[int] = []
        # the default mode's detail settings and off-mesh connections, as
        # build_layer_tile passes them (rebuild_swap_detail)
        self._dparams = np.array(
            [
                f32(DETAIL_SAMPLE_DIST_CELLS) * f32(p.cs),
                f32(DETAIL_SAMPLE_MAX_ERROR_CH) * f32(p.ch),
                max(1, math.ceil(f32(p.max_simplification_error))),
            ],
            np.float32,
        )
        om = offmesh
        self._offmesh = (
            np.ascontiguousarray(om.verts, np.float32).reshape(-1, 6),
            np.ascontiguousarray(om.rad, np.float32),
            np.ascontiguousarray(om.bidirectional, np.uint8),
            np.ascontiguousarray(om.area, np.uint8),
            np.ascontiguousarray(om.flags, np.uint16),
            np.ascontiguousarray(om.user_id, np.uint32),
        ) if om is not None else (
            np.zeros((0, 6), np.float32), np.zeros(0, np.float32), np.zeros(0, np.uint8),
            np.zeros(0, np.uint8), np.zeros(0, np.uint16), np.zeros(0, np.uint32),
        )  # fmt: skip
        #: the one-kernel default-mode step (False: build_layer_tile and the Python swap)
        self.fast_detail = True
        #: update steps done in one kernel call
        self.fast_steps = 0

    # -- lookups ---------------------------------------------------------------------------
    def tiles_at(self, tx: int, ty: int) -> list[int]:
        """``getTilesAt``: refs of the compressed tiles at (tx, ty), newest first."""
        return list(self._rev_pos.get((tx, ty), ()))

    def query_tiles(self, bmin: Any, bmax: Any, max_results: int) -> list[int]:
        """``queryTiles``: compressed tiles whose tight bounds overlap [bmin, bmax]
        ((3,) float32 arrays or lists of their values as Python floats)."""
        g = self._qgrid
        if g is None:
            p = self.params
            o = np.array(p.orig, np.float32)
            g = self._qgrid = (
                float(o[0]), float(o[2]), float(f32(p.width) * f32(p.cs)),
                float(f32(p.height) * f32(p.cs)),
            )  # fmt: skip
            self._tight_l = {r: (a.tolist(), b.tolist()) for r, (a, b) in self.tight.items()}
        o0, o2, tw, th = g
        if isinstance(bmin, np.ndarray):
            bmin = bmin.tolist()
        if isinstance(bmax, np.ndarray):
            bmax = bmax.tolist()
        a0, a1, a2 = bmin
        b0, b1, b2 = bmax
        # float32 arithmetic as Detour (r32: each operation rounded to float32); the
        # comparisons on exact (float64) copies
        tx0 = _tile_floor(a0 - o0, tw)
        tx1 = _tile_floor(b0 - o0, tw)
        ty0 = _tile_floor(a2 - o2, th)
        ty1 = _tile_floor(b2 - o2, th)
        tight = self._tight_l
        rev = self._rev_pos
        out: list[int] = []
        for ty in range(ty0, ty1 + 1):
            for tx in range(tx0, tx1 + 1):
                at = rev.get((tx, ty))
                if not at:
                    continue
                for ref in at[:_QUERY_MAX_TILES]:
                    tmin, tmax = tight[ref]
                    if (
                        a0 <= tmax[0]
                        and a1 <= tmax[1]
                        and a2 <= tmax[2]
                        and b0 >= tmin[0]
                        and b1 >= tmin[1]
                        and b2 >= tmin[2]
                    ):
                        if len(out) < max_results:
                            out.append(ref)
        return out

    def effective(self, shape: Obstacle) -> Obstacle:
        """The shape as marked: a hole grown by the agent radius in the default mode
        (area-marking obstacles are not grown)."""
        if self.grow <= 0 or shape.area:
            return shape
        last = self._grown
        if last is not None and last[0] is shape:  # (an add packs it, then queries it)
            return last[1]
        e = expand_obstacle(shape, self.grow)
        self._grown = (shape, e)
        return e

    def touched_by(self, shape: Obstacle, bounds: tuple[Any, Any] | None = None) -> list[int]:
        """Layers under ``shape`` (as marked); the last few answers are kept (an added
        obstacle is queried when checked and again when its request is processed).
        ``bounds``: ``obstacle_bounds(shape)`` (or :func:`.obstacles.bounds_lists`) when
        the caller has it."""
        memo = self._touch_memo
        hit = memo.get(id(shape))
        if hit is not None and hit[0] is shape:
            return list(hit[1])
        e = shape if self.grow <= 0 or shape.area else self.effective(shape)
        bmin, bmax = bounds if bounds is not None and e is shape else bounds_lists(e)
        res = self.query_tiles(bmin, bmax, 1 << 30)
        if len(memo) >= 8:
            memo.clear()
        memo[id(shape)] = (shape, res)
        return list(res)

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

    def _set_touched(self, i: int, tiles: list[int]) -> None:
        ob = self.obs[i]
        for t in ob.touched:
            self.on_tile[t].discard(i)
        ob.touched = tiles
        for t in tiles:
            self.on_tile.setdefault(t, set()).add(i)

    def _pack(self, i: int, shape: Obstacle) -> None:
        """Store slot ``i``'s shape as marked (:meth:`effective`) for the rebuild kernel."""
        e = shape if self.grow <= 0 or shape.area else self.effective(shape)
        self.ob_kind[i] = e.kind
        self.ob_a[i] = e.a
        self.ob_b[i] = e.b
        self.ob_rot[i] = e.rot
        self.ob_area[i] = e.area
        if e.kind == PRISM:
            pts = np.asarray(e.points, np.float32).reshape(-1, 2)
            self.ob_pstart[i] = self.ob_pts.shape[0]
            self.ob_pcount[i] = pts.shape[0]
            self.ob_pts = np.concatenate([self.ob_pts, pts])
            if self.ob_pts.shape[0] > 64 * (self.max_obstacles + 16):
                self._repack_points()

    def _repack_points(self) -> None:
        pts = [np.zeros((0, 2), np.float32)]
        k = 0
        for i in range(self.max_obstacles):
            if self.ob_kind[i] == PRISM and self.obs[i].shape is not None:
                s0, n = int(self.ob_pstart[i]), int(self.ob_pcount[i])
                pts.append(self.ob_pts[s0 : s0 + n])
                self.ob_pstart[i] = k
                k += n
        self.ob_pts = np.concatenate(pts)

    def reindex(self) -> None:
        """Rebuild the rebuild kernel's obstacle arrays and the slot indexes from ``obs``
        (after the obstacle table was written directly, e.g. by a file load)."""
        self.on_tile = {}
        self.busy = set()
        self.ob_pts = np.zeros((0, 2), np.float32)
        for i, ob in enumerate(self.obs):
            for t in ob.touched:
                self.on_tile.setdefault(t, set()).add(i)
            if ob.state in (PROCESSING, REMOVING):
                self.busy.add(i)
            if ob.shape is not None:
                self._pack(i, ob.shape)

    def add(self, shape: Obstacle) -> int:
        i = self.next_free
        ob = self.obs[i]
        self.next_free = ob.next
        ob.next = -1
        ob.state = PROCESSING
        self.busy.add(i)
        ob.shape = shape
        self._pack(i, shape)
        if ob.touched:
            self._set_touched(i, [])
        ob.pending = []
        ref = (ob.salt << 16) | i
        self.reqs.append((ADD, ref))
        return ref

    def remove(self, ref: int) -> None:
        self.reqs.append((REMOVE, int(ref)))
        self.removal_queued.add(int(ref))

    def move(self, ref: int, shape: Obstacle) -> None:
        self.obs[int(ref) & 0xFFFF].shape = shape
        self._pack(int(ref) & 0xFFFF, shape)
        self.reqs.append((MOVE, int(ref)))

    # -- update --------------------------------------------------------------------------------
    def _queue(self, ob: _Ob, tiles: list[int]) -> None:
        update = self.update
        pending = ob.pending
        for t in tiles:
            if len(update) < self.max_update:
                if t not in update:
                    update.append(t)
                pending.append(t)

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
                touched = self.touched_by(ob.shape)
                if len(touched) > self.max_touched:
                    del touched[self.max_touched :]
                self._set_touched(i, touched)
                ob.pending = []
                self._queue(ob, touched)
            elif action == REMOVE:
                ob.state = REMOVING
                self.busy.add(i)
                ob.pending = []
                self._queue(ob, ob.touched)
            else:  # MOVE (navkit): the old and the new footprint are rebuilt
                assert ob.shape is not None
                old = ob.touched
                self._set_touched(i, self.touched_by(ob.shape)[: self.max_touched])
                ob.state = PROCESSING
                self.busy.add(i)
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
        self._advance(ref)

    def run(self, rebuilt: list, invalidated: list, failed: list) -> None:
        """``step`` until up to date: the layers each round of requests queues are
        rebuilt in one kernel call (:func:`._rebuild.rebuild_swap_many`); the same
        tiles, order and obstacle states as one step after the other."""
        while self.reqs or self.update:
            if not self.update:
                self._process_requests()
                if not self.update:
                    continue
            refs, self.update = self.update, []
            if not (
                (self.compatible or self.fast_detail)
                and self._run_round(refs, rebuilt, invalidated, failed)
            ):
                self.update = refs  # the Python path, step by step
                self.step(rebuilt, invalidated, failed)

    def _run_round(self, refs: list[int], rebuilt: list, invalidated: list, failed: list) -> bool:
        loc = self._loc
        advance = self._advance
        pos = 0

        def done(j: int, ok: bool) -> None:
            nonlocal pos
            ref = refs[j]
            (rebuilt if ok else failed).append(loc[ref])
            if self.busy:
                advance(ref)
            pos = j + 1

        try:
            return self._rebuild_many(refs, invalidated, done)
        except BaseException:
            self.update[:0] = refs[pos + 1 :]  # (the failing step is dropped, as step's)
            raise

    def _advance(self, ref: int) -> None:
        """The obstacle states after layer ``ref`` was rebuilt."""
        for i in sorted(self.busy):  # (slot order: freed slots join the free list so)
            ob = self.obs[i]
            pending = ob.pending
            for j in range(len(pending)):
                if pending[j] == ref:
                    pending[j] = pending[-1]
                    pending.pop()
                    break
            if not pending:
                self.busy.discard(i)
                if ob.state == PROCESSING:
                    ob.state = PROCESSED
                else:
                    ob.state = EMPTY
                    ob.shape = None
                    ob.salt = (ob.salt + 1) & 0xFFFF or 1
                    ob.next = self.next_free
                    self.next_free = i

    def live_slots_on(self, ref: int) -> list[int]:
        """Slots of the obstacles marked on layer ``ref``, in slot order."""
        obs = self.obs
        out = []
        for i in self.on_tile.get(ref, ()):
            ob = obs[i]
            if (ob.state == PROCESSING or ob.state == PROCESSED) and ob.shape is not None:
                out.append(i)
        out.sort()
        return out

    def live_shapes_on(self, ref: int) -> list[Obstacle]:
        return [self.effective(self.obs[i].shape) for i in self.live_slots_on(ref)]  # type: ignore[arg-type]

    def _rebuild_many(
        self, refs: list[int], invalidated: list, done: Callable[[int, bool], None]
    ) -> bool:
        """Rebuild the layers ``refs`` in order and swap them into the navmesh, in one
        kernel call (:func:`._rebuild.rebuild_swap_many`, or
        :func:`._rebuild.rebuild_swap_detail_many` in the default mode; another when the
        pools must grow); ``done(j, ok)`` after step ``j`` (ok False: the layer could not
        be built, the old tile stays). False (nothing done) when the navmesh needs the
        Python path (runtime off-mesh connections).

        Raises
        ------
        InputError
            A swap failed (Detour's limits); the steps before it are done.
        """
        nm = self.navmesh
        args = nm._swap_args()
        if args is None:
            return False
        k = len(refs)
        on = self.on_tile
        raw_row = self._raw_row
        if k == 1:  # (one layer, the usual round of one add: the arrays are kept)
            todo, soff, outs, free, rrows = self._one
            ref = refs[0]
            todo[0] = self._tix[ref]
            flat = self.live_slots_on(ref) if on.get(ref) else []
            soff[1] = len(flat)
            nf = 1 if nm._free_slots else 0
            if nf:
                free[0] = nm._free_slots[0]
            row = raw_row.get(ref)
            if row is not None:
                rrows[0, 0] = row
                rrows[0, 1] = 0
                fills = [False]
            elif flat:
                rrows[0, 0] = self._raw_take(ref)
                rrows[0, 1] = 1
                fills = [True]
            else:
                rrows[0, 0] = -1
                rrows[0, 1] = 0
                fills = [False]
            empties = [not flat]
        else:
            tix = self._tix
            todo = np.array([tix[r] for r in refs], np.int64)
            flat = []
            offs = [0]
            rr = []
            for r in refs:
                n0 = len(flat)
                if on.get(r):
                    flat += self.live_slots_on(r)
                offs.append(len(flat))
                row = raw_row.get(r)
                if row is not None:
                    rr.append((row, 0))
                elif len(flat) > n0:
                    rr.append((self._raw_take(r), 1))
                else:
                    rr.append((-1, 0))
            soff = np.array(offs, np.int64)
            rrows = np.array(rr, np.int64)
            fills = [f == 1 for _, f in rr]
            empties = [offs[i] == offs[i + 1] for i in range(k)]
            outs = np.zeros((k, 16), np.int64)
            # the free list's first k slots (k steps take at most k), head last; room for k
            nf = min(len(nm._free_slots), k)
            free = np.array(nm._free_slots[nf - 1 :: -1] + [0] * k if nf else [0] * k, np.int64)
        sel = np.array(flat, np.int64) if flat else self._nosel
        rawpool = self._rawpool
        j = nxt = 0
        try:
            while j < k:
                assert args is not None  # (no off-mesh connection appears between calls)
                desc, cnt, bits, _ = args
                if self.compatible:
                    n, nf = _call(
                        rebuild_swap_many,
                        self._comp, self._coff, self._hdrs, self._bmins, self._bmaxs, todo, sel,
                        soff, self.ob_kind, self.ob_a, self.ob_b, self.ob_rot, self.ob_area,
                        self.ob_pstart, self.ob_pcount, self.ob_pts, self._climb, self._max_error,
                        desc, cnt, bits, self._wp, rawpool, rrows, free, nf, j, outs,
                    )  # fmt: skip
                else:
                    n, nf = _call(
                        rebuild_swap_detail_many,
                        self._comp, self._coff, self._hdrs, self._bmins, self._bmaxs, todo, sel,
                        soff, self.ob_kind, self.ob_a, self.ob_b, self.ob_rot, self.ob_area,
                        self.ob_pstart, self.ob_pcount, self.ob_pts, self._climb, self._max_error,
                        self._dparams, self._offmesh, desc, cnt, bits, self._wp, rawpool, rrows, free,
                        nf, j, outs,
                    )  # fmt: skip
                self.fast_steps += n - j
                for r in range(j, n):
                    nxt = r
                    out = outs[r]
                    failed = out[0] == BUILD_FAILED
                    if raw_row:
                        # a layer rebuilt without obstacles gives its copy back, and so does
                        # one whose first decode failed (the row was not filled)
                        ref = refs[r]
                        if ref in raw_row and (empties[r] or (fills[r] and failed)):
                            self._raw_free.append(raw_row.pop(ref))
                    if failed:
                        self.fail_stage = int(out[6])
                        done(r, False)
                        continue
                    old_ref, npolys = nm._swap_done(out)
                    if old_ref:
                        invalidated.extend(range(old_ref, old_ref + npolys))
                    done(r, True)
                nxt = n
                j = n
                if j < k:
                    st = int(outs[j, 0])
                    if st != _swap.NEED_GROW:
                        raise InputError(_SWAP_ERRORS.get(st, f"tile swap failed ({st})"))
                    nm._grow_pools(outs[j, 8:16])
                    args = nm._swap_args()
        except BaseException:
            # rows taken for steps that did not run (or whose outcome was not
            # recorded) may not hold their layer: give them back
            for r in range(nxt, k):
                if fills[r] and refs[r] in raw_row:
                    self._raw_free.append(raw_row.pop(refs[r]))
            raise
        return True

    def _raw_take(self, ref: int) -> int:
        """A free row of ``_rawpool`` for layer ``ref``'s decompressed copy (the pool
        doubles when full)."""
        free = self._raw_free
        if not free:
            pool = self._rawpool
            n = pool.shape[0]
            grown = np.empty((max(8, 2 * n), pool.shape[1]), np.uint8)
            grown[:n] = pool
            self._rawpool = grown
            free.extend(range(grown.shape[0] - 1, n - 1, -1))
        row = free.pop()
        self._raw_row[ref] = row
        return row

    def build_initial(
        self,
        coords: list[tuple[int, int]],
        progress: Callable[[int, int], None] | None = None,
    ) -> bool:
        """Add the navmesh tiles of every layer (no obstacle), position by position in
        ``coords`` order and newest layer first (as ``build_layer_tile`` and ``add_tiles``
        would), with the update step's kernel: a cache's first update then compiles
        nothing new. False (and nothing added) when the kernel cannot serve this
        navmesh (runtime off-mesh connections, the default mode's Python path).

        Raises
        ------
        BuildError
            A layer overflows one of Detour's buffers (the tiles added before it stay).
        """
        if not (self.compatible or self.fast_detail) or self.navmesh._swap_args() is None:
            return False
        refs: list[int] = []
        last: list[int] = []  # index in refs of each position's last layer
        for tx, ty in coords:
            refs += self.tiles_at(tx, ty)
            last.append(len(refs) - 1)
        total = len(coords)
        tiles = self.tiles
        ends: dict[int, list[int]] = {}
        for k, j in enumerate(last):
            ends.setdefault(j, []).append(k + 1)  # (positions without layers end here too)
        if progress is not None:
            for d in ends.pop(-1, []):
                progress(d, total)

        def done(j: int, ok: bool) -> None:
            if not ok:
                h = tiles[refs[j]].header
                why = _BUILD_ERRORS.get(self.fail_stage, "build failed")
                raise BuildError(f"layer ({h.tx}, {h.ty}, {h.tlayer}): {why}")
            if progress is not None:
                for d in ends.get(j, ()):
                    progress(d, total)

        self._rebuild_many(refs, [], done)
        return True

    def build_tile(self, ref: int, invalidated: list) -> tuple[int, int, int, bool]:
        """``buildNavMeshTile``: rebuild the layer ``ref`` and swap it into the navmesh."""
        t = self.tiles[ref]
        h = t.header
        if self.compatible or self.fast_detail:
            res: list[bool] = []
            if self._rebuild_many([ref], invalidated, lambda j, ok: res.append(ok)):
                return h.tx, h.ty, h.tlayer, res[0]
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
