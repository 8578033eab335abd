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

The state lives in numpy arrays (``obi``/``obt``/``obp``/``obq``: the obstacle table,
touched and pending layers, query bounds; ``upd`` the rebuild queue; ``_req`` the
request queue; ``sc`` counters) that the kernels of :mod:`~navkit.tilecache._update`
update themselves: an add is one kernel call (:func:`~navkit.tilecache._update.add_call`:
slot, shape, Detour's touched-layer limit, ADD request) and an update is one kernel
call per batch of steps (:func:`~navkit.tilecache._update.update_call`: the requests,
each rebuild (decode or copy of the layer, the live obstacles in slot order, regions,
contours, polygons; :func:`~navkit.tilecache._rebuild.rebuild_swap`, or
:func:`~navkit.tilecache._rebuild.rebuild_swap_detail` in the default mode), the
navmesh swap, the navmesh's free slots, the obstacle states, one record per step).
The kernels take the arrays as one descriptor (:func:`~navkit.tilecache._update.pack`).
Python keeps the shapes (:class:`~navkit.tilecache.obstacles.Obstacle`), grows the
pools or compacts them between calls and builds :class:`Changes` from the records. A
new cache adds its initial tiles through the same kernel
(:meth:`CacheState.build_initial`), so the first update compiles nothing the cache's
construction did not. The Python path (:func:`~navkit.tilecache.tilemesh.build_layer_tile`
and the NavMesh's tile swap, the same state kernels deciding) takes over when the
navmesh has runtime off-mesh connections.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._jit import ENTRY_POINTS as _ENTRY_POINTS
from .._jit import entry_call
from ..detour import _swap
from ..detour.navmesh import NavMesh
from ..detour.tile import OffMeshConnections
from ..errors import BuildError, InputError
from . import _rebuild as _rb
from . import _update as _U
from .format import LAYER_HEADER_SIZE, TileCacheSet
from .obstacles import CYLINDER, ORIENTED_BOX, PRISM, Obstacle, bounds_lists, expand_obstacle, r32
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
#: steps recorded per kernel call
_REC = 64

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


#: a slot's shape not made yet (a cylinder added by numbers: :meth:`CacheState.shape_of`)
_LAZY_CYLINDER = object()
_LAZY_ORIENTED_BOX = object()
_Z2 = np.zeros(2, np.float32)
_NOPTS = np.zeros((0, 2), np.float32)


class _Ob:
    """One obstacle slot, a view of the cache's arrays (``obi``, ``obt``, ``obp``) and
    its shape: salt, state, free-list next, touched and pending layers (as refs)."""

    __slots__ = ("_st", "_i")

    def __init__(self, st: CacheState, i: int) -> None:
        self._st = st
        self._i = i

    def _get(col: int) -> Any:  # type: ignore[misc]
        def get(self: _Ob) -> int:
            return int(self._st.obi[self._i, col])

        def put(self: _Ob, v: int) -> None:
            self._st.obi[self._i, col] = v

        return property(get, put)

    salt = _get(_U.SALT)
    state = _get(_U.STATE)
    next = _get(_U.NEXT)
    del _get

    @property
    def shape(self) -> Obstacle | None:
        st = self._st
        return st.shape_of(self._i) if st.obi[self._i, _U.STATE] != EMPTY else None

    @shape.setter
    def shape(self, v: Obstacle | None) -> None:
        self._st.shapes[self._i] = v

    @property
    def touched(self) -> list[int]:
        st = self._st
        refs = st._refs
        return [refs[t] for t in st.obt[self._i, : st.obi[self._i, _U.NT]].tolist()]

    @touched.setter
    def touched(self, v: list[int]) -> None:
        st = self._st
        st._room(len(v))
        st.obt[self._i, : len(v)] = [st._tix[r] for r in v]
        st.obi[self._i, _U.NT] = len(v)

    @property
    def pending(self) -> list[int]:
        st = self._st
        refs = st._refs
        return [refs[t] for t in st.obp[self._i, : st.obi[self._i, _U.NP]].tolist()]

    @pending.setter
    def pending(self, v: list[int]) -> None:
        st = self._st
        st._room((len(v) + 1) // 2)
        st.obp[self._i, : len(v)] = [st._tix[r] for r in v]
        st.obi[self._i, _U.NP] = len(v)


class CacheState:
    """``dtTileCache``'s state over a tile cache set and a live navmesh."""

    #: every layer keeps its decompressed bytes once decoded (rebuilds copy them
    #: instead of decoding FastLZ) when all of them take at most this many bytes;
    #: beyond, only the layers under live obstacles keep theirs
    keep_decoded_bytes = 32 << 20

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
        self.max_obstacles = max_obstacles
        n = max_obstacles
        nl = len(tset.tiles)
        # -- the obstacle table as arrays (the update kernel runs over them; ``obs``
        # gives a view per slot) --
        #: salt, state, free-list next, touched count, pending count per slot
        self.obi = np.zeros((n, _U.OBI_COLS), np.int64)
        self.obi[:, _U.SALT] = 1
        self.obi[:, _U.NEXT] = np.arange(1, n + 1)
        if n:
            self.obi[n - 1, _U.NEXT] = -1
        cap = max(1, min(nl, MAX_TOUCHED_TILES if compatible else 16))
        #: touched layers (layer indices), pending layers (room for a move's two sets)
        self.obt = np.zeros((n, cap), np.int64)
        self.obp = np.zeros((n, 2 * cap), np.int64)
        #: the query bounds (as marked: grown in the default mode) per slot
        self.obq = np.zeros((n, 6), np.float32)
        self.shapes: list[Any] = [None] * n
        self.obs = [_Ob(self, i) for i in range(n)]
        #: next free slot, rebuild count, request count, limits, grid, free slots ...
        self.sc = np.zeros(_U.SC_SIZE, np.int64)
        self.sc[_U.S_NEXT_FREE] = 0 if n else -1
        self.sc[_U.S_MAXT] = MAX_TOUCHED_TILES if compatible else 1 << 62
        self.sc[_U.S_MAXU] = MAX_UPDATE if compatible else 1 << 62
        #: the rebuild queue (layer indices; at most one entry per layer)
        self.upd = np.zeros(max(nl, 1), np.int64)
        #: the world's bounds (min, max [wu]) for the kernel's cylinder add (the cache sets them)
        self._world = np.zeros(6, np.float64)
        #: the request queue (action, obstacle ref) of ``sc[S_NREQ]`` requests
        self._req = np.zeros((MAX_REQUESTS, 2), np.int64)
        self.removal_queued: set[int] = set()  # refs with a queued REMOVE request
        n = max_obstacles
        self.ob_kind = np.zeros(n, np.int64)
        self.ob_a = np.zeros((n, 3), np.float32)
        self.ob_b = np.zeros((n, 3), np.float32)
        self.ob_rot = np.zeros((n, 2), np.float32)
        self.ob_area = np.zeros(n, np.uint8)
        self.ob_pstart = np.zeros(n, np.int64)
        self.ob_pcount = np.zeros(n, np.int64)
        self.ob_pts = np.zeros((0, 2), np.float32)
        #: the update kernels' descriptor of the arrays (None: pack again)
        self._sd: np.ndarray | None = None
        #: the navmesh descriptor ``_sd`` was packed with
        self._sd_nm: np.ndarray | None = None
        # every layer's stream and header, for the rebuild kernels (layer i: tset.tiles[i])
        self._tix = {t.ref: i for i, t in enumerate(tset.tiles)}
        self._refs = [t.ref for t in tset.tiles]
        # queryTiles' grid: layers per position newest first, tight bounds
        txs = [t.header.tx for t in tset.tiles] or [0]
        tys = [t.header.ty for t in tset.tiles] or [0]
        gx0, gy0 = min(txs), min(tys)
        gnx, gny = max(txs) - gx0 + 1, max(tys) - gy0 + 1
        self.sc[[_U.S_GX0, _U.S_GY0, _U.S_GNX, _U.S_GNY]] = gx0, gy0, gnx, gny
        self._pos_off = np.zeros(gnx * gny + 1, np.int64)
        lay = []
        for k in range(gnx * gny):
            refs = self._rev_pos.get((gx0 + k % gnx, gy0 + k // gnx), [])
            lay += [self._tix[r] for r in refs]
            self._pos_off[k + 1] = len(lay)
        self._pos_lay = np.array(lay, np.int64)
        self._tight = np.array(
            [np.concatenate(self.tight[t.ref]) for t in tset.tiles], np.float32
        ).reshape(-1, 6)
        o = np.array(p.orig, np.float32)
        self._gf = np.array([o[0], o[2], f32(p.width) * f32(p.cs), f32(p.height) * f32(p.cs)], f32)
        self._scratch = np.zeros(2 * nl + 16, np.int64)
        self._sel = np.zeros(max(n, 1), np.int64)
        self._rec = np.zeros((_REC, _U.REC_COLS), np.int64)
        self._outs = np.zeros((_REC, 16), np.int64)
        self._free = np.zeros(2 * _REC, np.int64)
        self._free_seen: list[int] | None = None
        #: rebuilds and requests left (``up_to_date`` when 0), as the last call left them
        self._left = 0
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
        # one row per layer: every layer keeps its row once decoded when all rows fit in
        # ``keep_decoded_bytes`` (no rebuild decodes FastLZ again), else a layer under
        # obstacles keeps its row while they last (the pages of rows never used are
        # never touched)
        rowsize = max([3 * h.width * h.height for h in hds], default=1)
        self._rawpool = np.zeros((max(nl, 1), rowsize), np.uint8)
        self._raw_row = np.full(max(nl, 1), -1, np.int64)
        self._raw_free = np.arange(max(nl, 1) - 1, -1, -1, dtype=np.int64)
        self.sc[_U.S_RAWN] = max(nl, 1)
        self.sc[_U.S_KEEPALL] = int(nl * rowsize <= self.keep_decoded_bytes)
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
        #: update steps in kernel calls (False: the Python path: build_layer_tile and the
        #: NavMesh's Python swap, the state kernels deciding)
        self.kernel_steps = True
        #: update steps done in one kernel call
        self.fast_steps = 0

    def __getstate__(self) -> dict:
        d = self.__dict__.copy()
        d["_sd"] = None  # (addresses of this state's arrays: a copy packs its own)
        d["_sd_nm"] = None
        return d

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
    @property
    def next_free(self) -> int:
        """Head of the obstacle free list (-1: the table is full)."""
        return int(self.sc[_U.S_NEXT_FREE])

    @next_free.setter
    def next_free(self, v: int) -> None:
        self.sc[_U.S_NEXT_FREE] = v

    @property
    def update(self) -> list[int]:
        """The layers (refs) queued for rebuild, in order."""
        refs = self._refs
        return [refs[t] for t in self.upd[: self.sc[_U.S_NUPD]].tolist()]

    @update.setter
    def update(self, v: list[int]) -> None:
        self.upd[: len(v)] = [self._tix[r] for r in v]
        self.sc[_U.S_NUPD] = len(v)
        self._recount()

    def obstacle_ref(self, i: int) -> int:
        return (int(self.obi[i, _U.SALT]) << 16) | i

    def slot_of(self, ref: int) -> int:
        """Slot of a live obstacle handle, -1 when stale."""
        if not isinstance(ref, (int, np.integer)) or not 0 < ref <= 0xFFFFFFFF:
            return -1
        i = int(ref) & 0xFFFF
        if i >= self.max_obstacles:
            return -1
        salt, state = self.obi[i, :2].tolist()  # (SALT, STATE)
        if salt != (int(ref) >> 16) & 0xFFFF or state == EMPTY or state == REMOVING:
            return -1
        if self.removal_queued and int(ref) in self.removal_queued:
            return -1
        return i

    def _room(self, need: int) -> None:
        """Widen the touched (and pending) arrays to hold ``need`` layers per slot."""
        cap = self.obt.shape[1]
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        n = self.max_obstacles
        obt = np.zeros((n, cap), np.int64)
        obt[:, : self.obt.shape[1]] = self.obt
        obp = np.zeros((n, 2 * cap), np.int64)
        obp[:, : self.obp.shape[1]] = self.obp
        self.obt, self.obp = obt, obp
        self._sd = None

    def _pack(self, i: int, shape: Obstacle, bounds: tuple[Any, Any] | None = None) -> None:
        """Store slot ``i``'s shape as marked (:meth:`effective`) for the kernels: the
        rebuild's fields and the query bounds (``bounds``: the bare shape's, when the
        caller has them)."""
        e = shape if self.grow <= 0 or shape.area else self.effective(shape)
        b0, b1 = bounds if bounds is not None and e is shape else bounds_lists(e)
        self.obq[i] = b0 + b1
        self.ob_kind[i] = e.kind
        self.ob_a[i] = e.a
        self.ob_b[i] = e.b
        self.ob_rot[i] = e.rot
        self.ob_area[i] = e.area
        if e.kind == PRISM:
            self._pack_points(i, e)

    def _pack_points(self, i: int, e: Obstacle) -> None:
        """Store a prism's corners (``e`` as marked) for slot ``i``."""
        pts = np.asarray(e.points, np.float32).reshape(-1, 2)
        self.ob_pstart[i] = self.ob_pts.shape[0]
        self.ob_pcount[i] = pts.shape[0]
        self.ob_pts = np.concatenate([self.ob_pts, pts])
        self._sd = None
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
        self._sd = None

    def reindex(self) -> None:
        """Rebuild the rebuild kernel's obstacle arrays from ``obs`` (after the obstacle
        table was written directly, e.g. by a file load)."""
        self.ob_pts = np.zeros((0, 2), np.float32)
        self._sd = None
        for i, ob in enumerate(self.obs):
            if ob.shape is not None:
                self._pack(i, ob.shape)

    def add(self, shape: Obstacle, bounds: tuple[Any, Any] | None = None) -> int:
        """Take a slot for ``shape`` and queue its ADD request (:func:`._update.add_call`);
        ``bounds``: the bare shape's (:func:`.obstacles.bounds_lists`) when the caller has
        them.

        Raises
        ------
        InputError
            The table is full; in the compatible mode, the obstacle touches more than
            ``MAX_TOUCHED_TILES`` layers (nothing is changed).
        """
        e = shape if self.grow <= 0 or shape.area else self.effective(shape)
        b0, b1 = bounds if bounds is not None and e is shape else bounds_lists(e)
        check = MAX_TOUCHED_TILES if self.compatible else -1
        while True:
            sd = self._sd
            if sd is None:
                sd = self._sd = self._pack_desc()
            ref = _call(_U.add_call, sd, check, e.kind, e.area, e.a, e.b, e.rot, *b0, *b1)
            if ref >= 0:
                break
            if ref == _U.ADD_NO_ROOM:
                self._grow_req()
            elif ref == _U.ADD_FULL:
                raise InputError(f"the obstacle table is full ({self.max_obstacles} obstacles)")
            else:
                raise InputError(
                    f"the obstacle touches {-4 - ref} layers; recast_compatible mode handles at "
                    f"most {MAX_TOUCHED_TILES} (Detour's DT_MAX_TOUCHED_TILES)"
                )
        self._left = 1
        i = ref & 0xFFFF
        self.shapes[i] = shape
        if e.kind == PRISM:
            self._pack_points(i, e)
        return ref

    def add_cylinder(self, x: float, y: float, z: float, r: float, h: float) -> int:
        """:meth:`add` for a hole-cutting cylinder of plain numbers in the compatible mode
        (:func:`._update.add_cylinder_call`: bounds and world check in the kernel, the
        shape made when asked for). Returns the ref, or < 0 when the kernel refused (the
        caller takes :meth:`add`'s path, which says why)."""
        sd = self._sd
        if sd is None:
            sd = self._sd = self._pack_desc()
        ref = _call(_U.add_cylinder_call, sd, MAX_TOUCHED_TILES, x, y, z, r, h)
        if ref >= 0:
            self._left = 1
            self.shapes[ref & 0xFFFF] = _LAZY_CYLINDER
        return ref

    def add_oriented_box(
        self, x: float, y: float, z: float, hx: float, hy: float, hz: float, yr: float
    ) -> int:
        """:meth:`add_cylinder` for a hole-cutting box rotated about +y
        (:func:`._update.add_oriented_box_call`)."""
        sd = self._sd
        if sd is None:
            sd = self._sd = self._pack_desc()
        ref = _call(_U.add_oriented_box_call, sd, MAX_TOUCHED_TILES, x, y, z, hx, hy, hz, yr)
        if ref >= 0:
            self._left = 1
            self.shapes[ref & 0xFFFF] = _LAZY_ORIENTED_BOX
        return ref

    def shape_of(self, i: int) -> Obstacle | None:
        """Slot ``i``'s shape (as added; None for an empty slot's)."""
        s = self.shapes[i]
        if s is _LAZY_CYLINDER:
            s = self.shapes[i] = Obstacle(
                CYLINDER, self.ob_a[i].copy(), self.ob_b[i].copy(), _Z2, _NOPTS, 0
            )
        elif s is _LAZY_ORIENTED_BOX:
            s = self.shapes[i] = Obstacle(
                ORIENTED_BOX, self.ob_a[i].copy(), self.ob_b[i].copy(), self.ob_rot[i].copy(),
                _NOPTS, 0,
            )  # fmt: skip
        return s  # type: ignore[return-value]

    def remove_fast(self, ref: int) -> bool:
        """Queue the removal of a live obstacle in one kernel call
        (:func:`._update.remove_call`); False (nothing done) when the handle is stale or
        the queue is full (the caller's general path says why, or grows it)."""
        sd = self._sd
        if sd is None:
            sd = self._sd = self._pack_desc()
        if _call(_U.remove_call, sd, ref, MAX_REQUESTS if self.compatible else -1):
            return False
        self.removal_queued.add(ref)
        self._left = 1
        return True

    def remove(self, ref: int) -> None:
        self._push_req(REMOVE, int(ref))
        self.removal_queued.add(int(ref))

    def move(self, ref: int, shape: Obstacle) -> None:
        self.shapes[int(ref) & 0xFFFF] = shape
        self._pack(int(ref) & 0xFFFF, shape)
        self._push_req(MOVE, int(ref))

    # -- requests ------------------------------------------------------------------------------
    @property
    def nreq(self) -> int:
        """Queued requests."""
        return int(self.sc[_U.S_NREQ])

    @property
    def reqs(self) -> list[tuple[int, int]]:
        """The queued requests (action, obstacle ref), in order."""
        return [(a, r) for a, r in self._req[: self.sc[_U.S_NREQ]].tolist()]

    @reqs.setter
    def reqs(self, v: list[tuple[int, int]]) -> None:
        while len(v) > self._req.shape[0]:
            self._grow_req()
        if v:
            self._req[: len(v)] = v
        self.sc[_U.S_NREQ] = len(v)
        self._recount()

    def _grow_req(self) -> None:
        req = np.zeros((2 * self._req.shape[0], 2), np.int64)
        req[: self._req.shape[0]] = self._req
        self._req = req
        self._sd = None

    def _push_req(self, action: int, ref: int) -> None:
        n = int(self.sc[_U.S_NREQ]) if self._left else 0
        if n >= self._req.shape[0]:
            self._grow_req()
        self._req[n] = (action, ref)
        self.sc[_U.S_NREQ] = n + 1
        self._left = 1

    # -- update --------------------------------------------------------------------------------
    @property
    def up_to_date(self) -> bool:
        return not self._left

    def _recount(self) -> None:
        sc = self.sc
        self._left = int(sc[_U.S_NUPD] + sc[_U.S_NREQ])

    def step(self, rebuilt: list, invalidated: list, failed: list) -> None:
        """One ``dtTileCache::update`` call."""
        self.steps(1, rebuilt, invalidated, failed)

    def run(self, rebuilt: list, invalidated: list, failed: list) -> None:
        """``step`` until up to date (each kernel call runs as many steps as it can)."""
        self.steps(1 << 62, rebuilt, invalidated, failed)

    def _kernel_ok(self) -> bool:
        """Whether the update steps run in the kernel (not with runtime off-mesh
        connections, whose links the navmesh's Python path makes, nor in the default
        mode without ``fast_detail``)."""
        nm = self.navmesh
        return bool(
            self.kernel_steps
            and (self.compatible or self.fast_detail)
            and not nm._runtime_cons
            and not nm._dead_cons
        )

    def steps(self, max_steps: int, rebuilt: list, invalidated: list, failed: list) -> None:
        """Up to ``max_steps`` update steps (until up to date): in kernel calls
        (:func:`._update.run_steps`), or on the Python path (runtime off-mesh
        connections, ``fast_detail`` off)."""
        if not self._kernel_ok():
            done = 0
            while done < max_steps and not self.up_to_date:
                self._py_step(rebuilt, invalidated, failed)
                done += 1
            return
        self._kernel_steps(max_steps, -1, rebuilt, invalidated, failed)

    def _kernel_steps(
        self,
        max_steps: int,
        only: int,
        rebuilt: list,
        invalidated: list,
        failed: list,
        total: int = 0,
    ) -> int:
        """Kernel calls until ``max_steps`` steps were done or nothing is left; returns
        the steps done. ``total``: the steps expected in all (the initial build's
        layers), to grow the navmesh's pools for the rest at once. (The common call,
        one kernel call and a record or two, runs little Python: this sits between two
        rebuilds, whose code and data evict the interpreter's from the caches.)

        Raises
        ------
        InputError
            A swap failed (Detour's limits); the steps before it are done.
        """
        nm = self.navmesh
        kernel = _U.update_call if self.compatible else _U.update_call_detail
        ep = _ENTRY_POINTS.get(kernel)
        done = 0
        while True:
            # the free list's first slots, head last (written again only when the list
            # changed since: free[:sc[S_NFREE]] holds _free_seen reversed)
            lst = nm._free_slots
            head = lst[:_REC]
            if head != self._free_seen:
                m = len(head)
                if m:
                    self._free[:m] = head[::-1]
                self.sc[9] = m  # (_U.S_NFREE)
                self._free_seen = head
            sd = self._sd
            desc = nm._desc
            if sd is None or desc is None or desc is not self._sd_nm:
                sd = self._sd = self._pack_desc()  # (the navmesh's arrays too)
            a = (max_steps - done, only, self._climb, self._max_error, sd)
            if ep is not None:
                try:
                    res = ep(*a)
                except TypeError:
                    res = _call(kernel, *a)
            else:
                res = _call(kernel, *a)
                ep = _ENTRY_POINTS.get(kernel)
            nrec, code, k, nupd, nreq, freechg = res
            self._left = nupd + nreq
            if not nreq and self.removal_queued:  # (the requests were processed)
                self.removal_queued.clear()
            done += k
            if nrec:
                self._records(nrec, freechg, rebuilt, invalidated, failed)
            if code == 0:  # (_U.DONE)
                return done
            if code == _U.COMPACT:
                nm._compact()
            elif code == _U.GROW:
                ahead = (total - done) / done if total > done > 0 else 0.0
                nm._grow_pools(self._outs[nrec, 8:16], ahead)  # (packed again: a new _desc)
            elif code == _U.ROOM:
                self._room(int(self.sc[_U.S_NEED]))
            elif code == _U.SWAP_ERROR:
                st = int(self._outs[nrec, 0])
                raise InputError(_SWAP_ERRORS.get(st, f"tile swap failed ({st})"))
            # FULL: call again

    def _records(
        self, nrec: int, freechg: int, rebuilt: list, invalidated: list, failed: list
    ) -> None:
        """A kernel call's ``nrec`` step records into the lists; the navmesh's free
        list and caches after the swaps."""
        nm = self.navmesh
        self.fast_steps += nrec
        if freechg:
            m = len(self._free_seen)  # type: ignore[arg-type]
            nm._free_slots[:m] = self._free[: self.sc[9]][::-1].tolist()
            self._free_seen = None
        nm._arrays = None
        pad = nm._record_pad
        loc = self._loc
        refs = self._refs
        for layer, ok, old_ref, npolys, oslot in self._rec[:nrec].tolist():
            if ok:
                rebuilt.append(loc[refs[layer]])
                if old_ref:
                    invalidated.extend(range(old_ref, old_ref + npolys))
                    if pad:
                        pad.pop(oslot, None)
            else:
                failed.append(loc[refs[layer]])
                self.fail_stage = int(self.sc[_U.S_FAIL])

    def _pack_desc(self) -> np.ndarray:
        """The update kernels' descriptor of the state's arrays (:func:`._update.pack`),
        then of the navmesh's (its pools' descriptor, counters and ref bits: the update
        kernels read them at ``_U.NM_OFFSET``; packed again when the navmesh's
        descriptor changes, ``_sd_nm``)."""
        nm = self.navmesh
        desc = nm._kernel_desc()
        bits = nm.__dict__.get("_ibits")
        if bits is None:
            nm._swap_args()
            bits = nm.__dict__.get("_ibits")
        if bits is None:  # (runtime off-mesh connections: the kernel steps do not run)
            bits = np.zeros(5, np.int64)
        self._sd_nm = desc
        return np.concatenate((self._pack_state(), _U.pack((desc, nm._cnt, bits), _U.NM_SPEC)))

    def _pack_state(self) -> np.ndarray:
        return _U.pack(
            (
                self.obi, self.obq, self.obt, self.obp, self.sc, self.upd, self._req,
                self._pos_off, self._pos_lay, self._tight, self._gf, self._scratch, self._sel,
                self._comp, self._coff, self._hdrs, self._bmins, self._bmaxs, self.ob_kind,
                self.ob_a, self.ob_b, self.ob_rot, self.ob_area, self.ob_pstart, self.ob_pcount,
                self.ob_pts, self._wp, self._rawpool, self._raw_row, self._raw_free, self._free,
                self._rec, self._outs, self._dparams, *self._offmesh, self._world,
            )
        )  # fmt: skip

    def _py_step(self, rebuilt: list, invalidated: list, failed: list) -> None:
        """One update step on the Python path (the state kernels decide, the navmesh's
        Python swap builds)."""
        try:
            while True:
                layer = _call(
                    _U.begin_step, self.obi, self.obq, self.obt, self.obp, self.sc, self.upd,
                    self._req, self._pos_off, self._pos_lay, self._tight, self._gf, self._scratch,
                )  # fmt: skip
                if layer != -2:
                    break
                self._room(int(self.sc[_U.S_NEED]))
        finally:
            self._recount()
            if self.removal_queued and not self.sc[_U.S_NREQ]:
                self.removal_queued.clear()
        if layer < 0:
            return
        loc = self._py_build(self._refs[layer], invalidated)
        (rebuilt if loc[3] else failed).append(loc[:3])
        _call(_U.advance, self.obi, self.obp, self.sc, layer)

    def live_slots_on(self, ref: int) -> list[int]:
        """Slots of the obstacles marked on layer ``ref``, in slot order."""
        layer = self._tix[ref]
        obi, obt = self.obi, self.obt
        return [
            i
            for i in range(self.max_obstacles)
            if obi[i, _U.STATE] in (PROCESSING, PROCESSED)
            and layer in obt[i, : obi[i, _U.NT]].tolist()
        ]

    def live_shapes_on(self, ref: int) -> list[Obstacle]:
        return [self.effective(self.shape_of(i)) for i in self.live_slots_on(ref)]  # type: ignore[arg-type]

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
        if not self._kernel_ok():
            return False
        refs: list[int] = []
        last: list[int] = []  # index in refs of each position's last layer
        for tx, ty in coords:
            refs += self.tiles_at(tx, ty)
            last.append(len(refs) - 1)
        total = len(coords)
        ends: dict[int, list[int]] = {}
        for k, j in enumerate(last):
            ends.setdefault(j, []).append(k + 1)  # (positions without layers end here too)
        if progress is not None:
            for d in ends.pop(-1, []):
                progress(d, total)
        saved = self.update
        self.update = refs
        rebuilt: list = []
        failed: list = []
        try:
            self._kernel_steps(len(refs), -1, rebuilt, [], failed, total=len(refs))
        finally:
            self.update = saved
        if failed:
            bad = failed[0]
            j = next(k for k, r in enumerate(refs) if self._loc[r] == bad)
            if progress is not None:
                for k in range(j):
                    for d in ends.get(k, ()):
                        progress(d, total)
            why = _BUILD_ERRORS.get(self.fail_stage, "build failed")
            raise BuildError(f"layer ({bad[0]}, {bad[1]}, {bad[2]}): {why}")
        if progress is not None:
            for j in range(len(refs)):
                for d in ends.get(j, ()):
                    progress(d, total)
        if self._tight.shape[0] and self.max_obstacles:
            # the first add's kernel too (compiled or loaded now, not at the first add): a
            # call it refuses (the first layer's bounds, no touched layer allowed)
            q = self._tight[0].tolist()
            z = self.ob_a[0]
            _call(_U.add_call, self._sd, 0, CYLINDER, 0, z, z, self.ob_rot[0], *q)
            _call(_U.remove_call, self._sd, 0, -1)  # (refused: not a handle)
            if self.compatible:
                c = [(q[k] + q[k + 3]) * 0.5 for k in range(3)]
                _call(_U.add_cylinder_call, self._sd, 0, c[0], c[1], c[2], 1e-3, 1e-3)
                _call(
                    _U.add_oriented_box_call, self._sd, 0, c[0], c[1], c[2], 1e-3, 1e-3, 1e-3, 0.0
                )
        return True

    def build_tile(self, ref: int, invalidated: list) -> tuple[int, int, int, bool]:
        """``buildNavMeshTile``: rebuild the layer ``ref`` and swap it into the navmesh."""
        if self._kernel_ok():
            rebuilt: list = []
            self._kernel_steps(1, self._tix[ref], rebuilt, invalidated, [])
            return (*self._loc[ref], bool(rebuilt))
        return self._py_build(ref, invalidated)

    def _py_build(self, ref: int, invalidated: list) -> tuple[int, int, int, bool]:
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
