"""``navkit.TileCache``: a navmesh whose tiles are rebuilt around temporary obstacles.

The cache keeps every tile's heightfield layers compressed (a "TSET" tile cache
set, :mod:`navkit.tilecache.format`) and a live :class:`~navkit.detour.navmesh.NavMesh`
built from them. Obstacles are queued; :meth:`TileCache.update` rebuilds the layers
they touch and swaps the new tiles into the navmesh, within a time or tile budget.

``recast_compatible=True`` reproduces Recast's ``dtTileCache`` exactly: the same
obstacle rasterization, no detail mesh, the same request and tile order (one
``update(max_tiles=1)`` is one ``dtTileCache::update`` call), Detour's limits
(64 queued requests, 64 pending tiles, 8 layers per obstacle), so that the navmesh
exports byte for byte as Recast's.

``recast_compatible=False``, :meth:`TileCache.bake`'s default, goes beyond it:

- shapes: hole-cutting obstacles are marked grown by the agent radius
  (``walkable_radius``, :func:`~navkit.tilecache.obstacles.expand_obstacle`: cylinder
  radius + r, other shapes a conservative polygon offset), so agents' centres keep a
  radius away from them (Detour cuts the bare footprint); the touched layers are
  found from the grown bounds. Area-marking obstacles (``area=``) are **not** grown, in
  either mode: they label the ground agents may still walk on (water, mud, a door only
  some agents pass), so the marked polygons cover the bare footprint, as Recast's
  convex volumes do;
- meshing: every tile (the initial ones and the rebuilt ones) gets a detail mesh
  sampled from the layer's heights, a BV tree and the off-mesh connections that start
  on it (:func:`~navkit.tilecache.tilemesh.build_layer_tile`);
- scheduling: no request is dropped: the request queue, the pending rebuilds and the
  layers per obstacle are unbounded (:class:`~navkit.tilecache.update.CacheState`);
  :meth:`TileCache.update`'s budget loop is the same.

:class:`TileCache` itself and :meth:`TileCache.from_recast` default to
``recast_compatible=True`` (they take Recast's files).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np

from .._io import atomic_write_bytes
from ..detour.navmesh import NavMesh
from ..detour.tile import OffMeshConnections, TileData
from ..errors import ConfigError, InputError, StaleHandleError
from ..pipeline import add_tiles, run_tiles, tile_coords
from .build import build_tile_cache
from .format import (
    CompressedTile,
    TileCacheParams,
    TileCacheSet,
    read_tile_cache,
    tile_cache_from_bytes,
    tile_cache_to_bytes,
)
from .obstacles import BOX, CYLINDER, ORIENTED_BOX, PRISM, Obstacle, bounds_lists, rot_aux
from .tilemesh import build_layer_tile
from .update import MAX_REQUESTS, MAX_TOUCHED_TILES, CacheState, Changes

__all__ = ["TileCache", "Changes"]

f32 = np.float32
_Z3 = np.zeros(3, np.float32)
_Z2 = np.zeros(2, np.float32)
_NOPTS = np.zeros((0, 2), np.float32)


def _build_position(
    tiles: Sequence[CompressedTile],
    params: TileCacheParams,
    detail: bool = False,
    offmesh: OffMeshConnections | None = None,
) -> list[TileData | None]:
    """The navmesh tiles of one tile position (its layers, newest first; their headers
    are parsed and checked already)."""
    return [
        build_layer_tile(t.data, params, (), t.header, detail=detail, offmesh=offmesh)
        for t in tiles
    ]


def _offmesh(offmesh: Any) -> OffMeshConnections | None:
    if offmesh is None:
        return None
    if isinstance(offmesh, OffMeshConnections):
        cons = offmesh
    else:
        if isinstance(offmesh, (str, bytes)) or not hasattr(offmesh, "__iter__"):
            raise InputError(f"offmesh must be a sequence of off-mesh connections, got {offmesh!r}")
        items = [c._asdict() if hasattr(c, "_asdict") else c for c in offmesh]
        if not all(isinstance(c, dict) for c in items):
            raise InputError("offmesh items must be dicts (start, end, radius, ...)")
        cons = OffMeshConnections.from_dicts(items)
    v = np.asarray(cons.verts, np.float32)
    if v.ndim != 2 or v.shape[1] != 6 or not np.isfinite(v).all():
        raise InputError("offmesh endpoints must be finite (n, 6) start/end coordinates")
    return cons if len(cons.rad) else None


_ALL = 1 << 62  # (update steps: until up to date)
_new_tuple = tuple.__new__
_NUM = (float, int)  # (``type(x) in``: bool and numpy scalars take the checked path)


def _vec3(v: Any, name: str) -> np.ndarray:
    if type(v) in (list, tuple) and len(v) == 3:  # fast path: three plain numbers
        x, y, z = v
        if type(x) in _NUM and type(y) in _NUM and type(z) in _NUM:
            if abs(x) <= 1e30 and abs(y) <= 1e30 and abs(z) <= 1e30:  # (False for nan)
                return np.array(v, np.float32)
    try:
        a = np.asarray(v, dtype=np.float64)
    except OverflowError:  # an int beyond float range
        raise InputError(f"{name} is out of float32 range: {v!r}") from None
    except (TypeError, ValueError):
        raise InputError(f"{name} must be 3 numbers, got {v!r}") from None
    if a.shape != (3,):
        raise InputError(f"{name} must be 3 numbers (x, y, z), got shape {a.shape}")
    if not np.isfinite(a).all():
        raise InputError(f"{name} must be finite, got {a.tolist()}")
    if (np.abs(a) > 1e30).any():
        raise InputError(f"{name} is out of float32 range: {a.tolist()}")
    return a.astype(np.float32)


def _positive(v: Any, name: str) -> np.float32:
    try:
        x = float(v)
    except OverflowError:  # an int beyond float range
        raise InputError(f"{name} is out of float32 range: {v!r}") from None
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {v!r}") from None
    if not math.isfinite(x) or x <= 0 or x > 1e30:
        raise InputError(f"{name} must be finite and > 0, got {v!r}")
    return f32(x)


def _area(area: Any) -> int:
    if area is None:
        return 0
    if isinstance(area, bool) or not isinstance(area, (int, np.integer)) or not 1 <= area <= 63:
        raise InputError(f"area must be an int in 1..63 (None cuts a hole), got {area!r}")
    return int(area)


class TileCache:
    """A tile cache with temporary obstacles (Recast's ``dtTileCache``).

    Build one with :meth:`bake` or :meth:`from_recast`; query :attr:`navmesh`.

    Parameters
    ----------
    tset : TileCacheSet
        The compressed layers and params (:func:`~navkit.tilecache.build_tile_cache`).
    recast_compatible : bool
        ``True``: reproduce ``dtTileCache`` exactly; ``False``: navkit's default mode
        (grown obstacles, detail meshes, no dropped request; see the module doc).
    offmesh : sequence of off-mesh connections, optional
        Dicts as :func:`navkit.bake` takes (``start``, ``end``, ``radius``, ...) or
        :class:`~navkit.detour.tile.OffMeshConnections`; every tile (re)built stores those
        that start on it. Only with ``recast_compatible=False``.
    executor : concurrent.futures.Executor, optional
        Builds the initial navmesh tiles in parallel (results are added in Recast's order).
    progress : callable(done, total), optional

    Raises
    ------
    ConfigError
        ``max_obstacles`` of the set exceeds 65535; ``offmesh`` in compatible mode.
    """

    #: build the initial navmesh tiles (without an executor) with the update step's
    #: kernel, one tile after the other (False: ``build_layer_tile`` and ``add_tiles``,
    #: the path an executor takes; the same tiles and links)
    _kernel_tiles = True

    def __init__(
        self,
        tset: TileCacheSet,
        *,
        recast_compatible: bool = True,
        offmesh: Any = None,
        executor: Executor | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        if not isinstance(tset, TileCacheSet):
            raise InputError(f"expected a TileCacheSet, got {type(tset).__name__}")
        if not isinstance(recast_compatible, (bool, np.bool_)):
            raise ConfigError(
                "recast_compatible", f"must be True or False, got {recast_compatible!r}"
            )
        cons = _offmesh(offmesh)
        if recast_compatible and cons is not None:
            raise ConfigError(
                "offmesh",
                "Recast's tile cache drops off-mesh connections on rebuilt tiles; "
                "use recast_compatible=False to keep them",
            )
        if tset.params.max_obstacles > 0xFFFF:
            raise ConfigError(
                "max_obstacles",
                f"{tset.params.max_obstacles} exceeds 65535 (obstacle handles hold a 16-bit slot)",
            )
        self.recast_compatible = bool(recast_compatible)
        self.params = tset.params
        nm = NavMesh(tset.navmesh_params)
        self._state = CacheState(
            tset,
            nm,
            int(tset.params.max_obstacles),
            compatible=self.recast_compatible,
            offmesh=cons,
        )
        st = self._state
        if st.by_pos:
            nx = max(x for x, _ in st.by_pos) + 1
            ny = max(y for _, y in st.by_pos) + 1
        else:
            nx = ny = 0
        self._grid = (nx, ny)
        coords = tile_coords(nx, ny)
        p = tset.params

        kernel = executor is None and self._kernel_tiles
        cold: Any = contextlib.nullcontext()
        if kernel and tset.tiles and st._kernel_ok():
            # a cold cache: a side process compiles part of the update kernel meanwhile
            # (none inside TileCache.bake's own side, nor when warm)
            from .._warmup import cold_tile_cache_load

            cold = cold_tile_cache_load(self.recast_compatible)
        with cold:
            if not kernel or not st.build_initial(coords, progress):

                def args(x: int, y: int) -> tuple:
                    return ([st.tiles[r] for r in st.tiles_at(x, y)], p, not st.compatible, cons)

                built = run_tiles(_build_position, coords, args, executor, progress)
                add_tiles(nm, [td for xy in coords for td in built[xy] if td is not None])
        # world extent (xz of the grid, y of the layers) for input checks
        o = np.array(p.orig, np.float32)
        tw = f32(p.width) * f32(p.cs)
        ys = [t.header.bmin[1] for t in tset.tiles] + [t.header.bmax[1] for t in tset.tiles]
        self._world_min = np.array([o[0], min(ys, default=o[1]), o[2]], np.float64)
        self._world_max = np.array(
            [o[0] + nx * tw, max(ys, default=o[1]), o[2] + ny * tw], np.float64
        )
        self._world_lists = (self._world_min.tolist(), self._world_max.tolist())
        st._world[:3] = self._world_min
        st._world[3:] = self._world_max
        self._subscribers: list[Callable[[Changes], None]] = []

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def bake(
        cls,
        mesh: Any,
        config: Any,
        executor: Executor | None = None,
        progress: Callable[[int, int], None] | None = None,
        *,
        recast_compatible: bool = False,
        offmesh: Any = None,
        max_obstacles: int = 128,
        expected_layers_per_tile: int = 4,
    ) -> TileCache:
        """Build the tile cache of ``mesh`` (RecastDemo's Sample_TempObstacles) and its navmesh.

        Parameters
        ----------
        mesh : TriMesh
        config : BakeConfig
            Needs ``tile_size`` (1..255 voxels; Recast's sample uses 48).
        executor : Executor, optional
            Tiles are pure functions of (mesh, config, tile): built in parallel, added in order.
        progress : callable(done, total), optional
            Called after each tile of the layer build.
        recast_compatible : bool
            False (default): navkit's mode (obstacles grown by the agent radius, detail
            meshes, off-mesh connections, no dropped request); True: ``dtTileCache``'s.
        offmesh : sequence of off-mesh connections, optional
            As :func:`navkit.bake` takes them (default mode only).
        max_obstacles, expected_layers_per_tile : int
            Obstacle slots; cache slots per tile.
        """
        if not isinstance(recast_compatible, (bool, np.bool_)):
            raise ConfigError(
                "recast_compatible", f"must be True or False, got {recast_compatible!r}"
            )
        cons = _offmesh(offmesh)
        if recast_compatible and cons is not None:
            raise ConfigError("offmesh", "needs recast_compatible=False")
        side: Any = contextlib.nullcontext()
        if executor is None and not recast_compatible:
            # a cold cache: a side process compiles half of the kernels meanwhile
            from .._warmup import cold_tile_cache

            side = cold_tile_cache()
        with side:
            tset = build_tile_cache(
                mesh,
                config,
                expected_layers_per_tile=expected_layers_per_tile,
                max_obstacles=max_obstacles,
                executor=executor,
                progress=progress,
            )
            return cls(tset, recast_compatible=recast_compatible, offmesh=cons, executor=executor)

    @classmethod
    def from_recast(
        cls, src: str | os.PathLike[str] | bytes, *, recast_compatible: bool = True
    ) -> TileCache:
        """Load a Recast "TSET" tile cache set (``exportTileCache``, RecastDemo's
        ``all_tiles_tilecache.bin``) from a path or bytes and build its navmesh.

        Raises
        ------
        FormatError
            A corrupt or foreign file.
        InputError
            An unreadable path.
        """
        if isinstance(src, (bytes, bytearray, memoryview)):
            tset = tile_cache_from_bytes(src)
        else:
            tset = read_tile_cache(src)
        return cls(tset, recast_compatible=recast_compatible)

    def to_recast(self, path: str | os.PathLike[str] | None = None) -> bytes:
        """The compressed layers as a Recast "TSET" file (what ``exportTileCache`` writes;
        obstacles are not part of it).

        Parameters
        ----------
        path : str or PathLike, optional
            Also write the bytes there (atomically).
        """
        data = tile_cache_to_bytes(self._state.tset)
        if path is not None:
            atomic_write_bytes(path, data)
        return data

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the cache with its obstacles and pending work to ``path`` (atomically) in
        navkit's own format (:mod:`navkit.tilecache.io`: zlib-compressed layers, JSON
        header, SHA-256). :meth:`load` gives a cache whose handles stay valid.
        """
        from .io import save_cache

        save_cache(self, path)

    def to_bytes(self) -> bytes:
        """The bytes :meth:`save` writes."""
        from .io import cache_to_bytes

        return cache_to_bytes(self)

    @classmethod
    def load(cls, src: str | os.PathLike[str] | bytes) -> TileCache:
        """Read a cache written by :meth:`save` (a path or its bytes).

        The navmesh is rebuilt from the layers with the obstacles applied: same
        polygons as the saved cache's, new poly refs.

        Raises
        ------
        FormatError
            Not a navkit tile-cache file, another format version, a corrupt or
            truncated file (checksum), inconsistent contents.
        InputError
            An unreadable path.
        """
        from .io import cache_from_bytes, load_cache

        if isinstance(src, (bytes, bytearray, memoryview)):
            return cache_from_bytes(bytes(src))
        return load_cache(src)

    # -- state -------------------------------------------------------------------------------
    @property
    def navmesh(self) -> NavMesh:
        """The live navmesh (its tiles are replaced by :meth:`update`)."""
        return self._state.navmesh

    @property
    def tile_cache_set(self) -> TileCacheSet:
        """The compressed layers (unchanged by obstacles)."""
        return self._state.tset

    @property
    def up_to_date(self) -> bool:
        """No queued request and no pending rebuild."""
        return not self._state._left  # (CacheState.up_to_date, one call less)

    @property
    def obstacle_count(self) -> int:
        """Obstacles added and not (yet fully) removed."""
        return sum(1 for ob in self._state.obs if ob.state != 0)

    def obstacle_handles(self) -> list[int]:
        """Handles of the obstacles added and not removed, in slot order."""
        st = self._state
        return [
            st.obstacle_ref(i)
            for i in range(st.max_obstacles)
            if st.slot_of(st.obstacle_ref(i)) >= 0
        ]

    def touched_tiles(self, handle: int | None = None) -> list[tuple[int, int, int]]:
        """(tx, ty, layer) of the layers under one obstacle (or under every obstacle
        when ``handle`` is None): the tiles its add or removal rebuilds."""
        st = self._state
        handles = self.obstacle_handles() if handle is None else [handle]
        out: list[tuple[int, int, int]] = []
        for hd in handles:
            i, shape = self._live(hd)
            ob = st.obs[i]
            refs = ob.touched if ob.touched else st.touched_by(shape)[: st.max_touched]
            for r in refs:
                h = st.tiles[r].header
                if (h.tx, h.ty, h.tlayer) not in out:
                    out.append((h.tx, h.ty, h.tlayer))
        return out

    def obstacle(self, handle: int) -> Obstacle:
        """The shape behind a live handle (StaleHandleError otherwise)."""
        return self._live(handle)[1]

    def _live(self, handle: Any) -> tuple[int, Obstacle]:
        if isinstance(handle, bool) or not isinstance(handle, (int, np.integer)):
            raise InputError(f"an obstacle handle is an int, got {type(handle).__name__}")
        i = self._state.slot_of(int(handle))
        if i < 0:
            raise StaleHandleError(f"obstacle handle {handle!r} is stale, removed or unknown")
        shape = self._state.shape_of(i)  # (a live slot's)
        assert shape is not None
        return i, shape

    # -- obstacles -----------------------------------------------------------------------------
    def _check_room(self) -> None:
        st = self._state
        if st.compatible and not st.up_to_date and st.nreq >= MAX_REQUESTS:
            raise InputError(
                f"{MAX_REQUESTS} requests are queued (Recast's limit): call update() first"
            )

    def _check_shape(
        self, shape: Obstacle, touched: bool = True
    ) -> tuple[list[float], list[float]]:
        """The world check (and with ``touched``, in the compatible mode, Detour's limit
        on the layers an obstacle touches); returns the shape's bounds."""
        b0, b1 = bounds_lists(shape)
        lo, hi = self._world_lists
        if (
            b1[0] < lo[0] or b1[1] < lo[1] or b1[2] < lo[2]
            or b0[0] > hi[0] or b0[1] > hi[1] or b0[2] > hi[2]
        ):  # fmt: skip
            raise InputError(
                f"obstacle bounds {b0}..{b1} lie outside the cache's "
                f"world {self._world_min.tolist()}..{self._world_max.tolist()}"
            )
        if not (touched and self._state.compatible):
            return b0, b1
        n = len(self._state.touched_by(shape, (b0, b1)))
        if n > MAX_TOUCHED_TILES:
            raise InputError(
                f"the obstacle touches {n} layers; recast_compatible mode handles at most "
                f"{MAX_TOUCHED_TILES} (Detour's DT_MAX_TOUCHED_TILES)"
            )
        return b0, b1

    def _add(self, shape: Obstacle) -> int:
        st = self._state
        self._check_room()
        if st.next_free < 0:
            raise InputError(f"the obstacle table is full ({self._state.max_obstacles} obstacles)")
        # (the kernel add checks Detour's limit on touched layers)
        return st.add(shape, self._check_shape(shape, touched=False))

    def add_cylinder(
        self, pos: Any, radius: float, height: float, *, area: int | None = None
    ) -> int:
        """Add a vertical cylinder (``addObstacle``): base centre ``pos`` (3,) [wu].

        Parameters
        ----------
        pos : (3,) float
            Centre of the bottom disc [wu].
        radius, height : float
            > 0 [wu].
        area : int, optional
            Mark this area id (1..63) instead of cutting a hole. An area marks the
            obstacle's bare footprint in every mode: it is **not** grown by the agent
            radius (agents may walk into water or mud, so its polygons start where the
            ground changes, as Recast's convex volumes do); only holes are grown, in the
            default mode.

        Returns
        -------
        int
            A generational handle (``salt << 16 | slot``); stale once removed.

        Raises
        ------
        InputError
            Non-finite or non-positive values, an obstacle outside the world, a full
            obstacle table; in ``recast_compatible`` mode also an obstacle over more than
            8 layers or a full request queue (64).
        """
        st = self._state
        if (
            st.compatible
            and area is None
            and type(pos) in (list, tuple)
            and len(pos) == 3
            and type(radius) in _NUM
            and type(height) in _NUM
            and 0.0 < radius <= 1e30  # (False for nan)
            and 0.0 < height <= 1e30
        ):  # the kernel's add of plain numbers (bounds, world check, Detour's limits)
            x, y, z = pos
            if (
                type(x) in _NUM and type(y) in _NUM and type(z) in _NUM
                and abs(x) <= 1e30 and abs(y) <= 1e30 and abs(z) <= 1e30
            ):  # fmt: skip
                if st._left:  # (up to date: no request queued, room for one)
                    self._check_room()
                ref = st.add_cylinder(float(x), float(y), float(z), float(radius), float(height))
                if ref >= 0:
                    return ref
                # refused: the general path below says why (or grows the request array)
        p = _vec3(pos, "pos")
        if (
            type(radius) in _NUM
            and type(height) in _NUM
            and 0.0 < radius <= 1e30  # (_positive's checks, for plain numbers; False for nan)
            and 0.0 < height <= 1e30
        ):
            rh = np.array([radius, height, 0.0], np.float32)
        else:
            rh = np.array([_positive(radius, "radius"), _positive(height, "height"), 0], np.float32)
        shape = Obstacle(CYLINDER, p, rh, _Z2, _NOPTS, 0 if area is None else _area(area))
        return self._add(shape)

    def add_box(self, bmin: Any, bmax: Any, *, area: int | None = None) -> int:
        """Add an axis-aligned box (``addBoxObstacle(bmin, bmax)``) [wu].

        Parameters
        ----------
        bmin, bmax : (3,) float
            Opposite corners [wu], ``bmax > bmin`` on every axis.
        area : int, optional
            Mark this area id (1..63) instead of cutting a hole. An area marks the
            obstacle's bare footprint in every mode: it is **not** grown by the agent
            radius (agents may walk into water or mud, so its polygons start where the
            ground changes, as Recast's convex volumes do); only holes are grown, in the
            default mode.

        Returns
        -------
        int
            A generational handle, as :meth:`add_cylinder`'s.

        Raises
        ------
        InputError
            Non-finite values, ``bmax <= bmin`` on an axis, outside the world, ...
        """
        b0 = _vec3(bmin, "bmin")
        b1 = _vec3(bmax, "bmax")
        if (b1 <= b0).any():
            raise InputError(f"box must have bmax > bmin on every axis, got {b0} {b1}")
        return self._add(Obstacle(BOX, b0, b1, _Z2, _NOPTS, _area(area)))

    def add_oriented_box(
        self, center: Any, half_extents: Any, y_radians: float, *, area: int | None = None
    ) -> int:
        """Add a box rotated about +y (``addBoxObstacle(center, halfExtents, yRadians)``).

        Parameters
        ----------
        center : (3,) float
            Centre of the box [wu].
        half_extents : (3,) float
            Half sizes along the box's own axes, > 0 [wu].
        y_radians : float
            Rotation about +y [rad].
        area : int, optional
            Mark this area id (1..63) instead of cutting a hole. An area marks the
            obstacle's bare footprint in every mode: it is **not** grown by the agent
            radius (agents may walk into water or mud, so its polygons start where the
            ground changes, as Recast's convex volumes do); only holes are grown, in the
            default mode.

        Returns
        -------
        int
            A generational handle, as :meth:`add_cylinder`'s.

        Raises
        ------
        InputError
            Non-finite values, a half extent <= 0, outside the world, ...
        """
        st = self._state
        if (
            st.compatible
            and area is None
            and type(center) in (list, tuple)
            and type(half_extents) in (list, tuple)
            and len(center) == 3
            and len(half_extents) == 3
            and type(y_radians) in _NUM
            and abs(y_radians) <= 1e6  # (False for nan)
        ):  # the kernel's add of plain numbers (bounds, world check, Detour's limits)
            x, y, z = center
            hx, hy, hz = half_extents
            if (
                type(x) in _NUM
                and type(y) in _NUM
                and type(z) in _NUM
                and type(hx) in _NUM
                and type(hy) in _NUM
                and type(hz) in _NUM
                and abs(x) <= 1e30
                and abs(y) <= 1e30
                and abs(z) <= 1e30
                and 1e-44 < hx <= 1e30
                and 1e-44 < hy <= 1e30
                and 1e-44 < hz <= 1e30
            ):  # (1e-44: > 0 in float32 too)
                if st._left:  # (up to date: no request queued, room for one)
                    self._check_room()
                ref = st.add_oriented_box(
                    float(x), float(y), float(z), float(hx), float(hy), float(hz),
                    float(y_radians),
                )  # fmt: skip
                if ref >= 0:
                    return ref
                # refused: the general path below says why (or grows the request array)
        c = _vec3(center, "center")
        he = _vec3(half_extents, "half_extents")
        if (he <= 0).any():
            raise InputError(f"half_extents must all be > 0, got {he.tolist()}")
        try:
            a = float(y_radians)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"y_radians must be a number, got {y_radians!r}") from None
        if not math.isfinite(a) or abs(a) > 1e6:
            raise InputError(f"y_radians must be finite (|a| <= 1e6), got {y_radians!r}")
        return self._add(Obstacle(ORIENTED_BOX, c, he, rot_aux(a), _NOPTS, _area(area)))

    def add_prism(self, points: Any, height: float, *, area: int | None = None) -> int:
        """Add an extruded convex polygon (navkit).

        Parameters
        ----------
        points : (n, 3) float
            The base polygon's corners [wu], n >= 3, convex in xz (either winding, no
            repeated or collinear corner); the prism spans ``min(y) .. max(y) + height``.
        height : float
            > 0 [wu].
        area : int, optional
            Mark this area id (1..63) instead of cutting a hole. An area marks the
            obstacle's bare footprint in every mode: it is **not** grown by the agent
            radius (agents may walk into water or mud, so its polygons start where the
            ground changes, as Recast's convex volumes do); only holes are grown, in the
            default mode.

        Returns
        -------
        int
            A generational handle, as :meth:`add_cylinder`'s.

        Raises
        ------
        InputError
            Fewer than 3 points, non-finite values, a non-convex or degenerate polygon, ...
        """
        try:
            pts = np.asarray(points, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise InputError("points must be an (n, 3) array of numbers") from None
        if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] < 3:
            raise InputError(f"points must be (n >= 3, 3), got shape {pts.shape}")
        if not np.isfinite(pts).all() or (np.abs(pts) > 1e30).any():
            raise InputError("points must be finite")
        h = _positive(height, "height")
        xz = pts[:, [0, 2]]
        n = xz.shape[0]
        d = np.roll(xz, -1, axis=0) - xz
        cross = d[:, 0] * np.roll(d, -1, axis=0)[:, 1] - d[:, 1] * np.roll(d, -1, axis=0)[:, 0]
        if (np.hypot(d[:, 0], d[:, 1]) == 0).any():
            raise InputError("prism points repeat a corner")
        if not ((cross > 0).all() or (cross < 0).all()):
            raise InputError(
                "prism polygon must be convex with no collinear corners (in xz); "
                f"turns: {np.sign(cross).astype(int).tolist()}"
            )
        # a convex polygon turns once: the edge directions' angles must not wrap twice
        ang = np.arctan2(d[:, 1], d[:, 0])
        turn = np.diff(np.concatenate([ang, ang[:1]]))
        turn = (turn + np.pi) % (2 * np.pi) - np.pi
        if abs(abs(turn.sum()) - 2 * np.pi) > 1e-6 * n:
            raise InputError("prism polygon must be convex (it winds more than once)")
        y0 = f32(pts[:, 1].min())
        y1 = f32(f32(pts[:, 1].max()) + h)
        shape = Obstacle(
            PRISM,
            np.array([0, y0, 0], np.float32),
            np.array([0, y1, 0], np.float32),
            _Z2,
            xz.astype(np.float32),
            _area(area),
        )
        return self._add(shape)

    def remove(self, handle: int) -> None:
        """Queue the removal of an obstacle (``removeObstacle``).

        Raises
        ------
        StaleHandleError
            The handle was removed already (or never named an obstacle).
        InputError
            The request queue is full.
        """
        st = self._state
        if (
            type(handle) is int
            and 0 < handle <= 0xFFFFFFFF
            and handle not in st.removal_queued
            and st.remove_fast(handle)
        ):
            return
        self._live(handle)  # (raises, or converts a numpy integer)
        self._check_room()
        st.remove(int(handle))

    def move(self, handle: int, by: Any) -> None:
        """Translate an obstacle by ``by`` (3,) [wu]; the handle stays valid.

        The layers under the old and the new footprint are rebuilt at the next update.

        Raises
        ------
        StaleHandleError, InputError
        """
        _, shape = self._live(handle)
        d = _vec3(by, "by")
        if shape.kind == PRISM:
            moved = shape._replace(
                a=shape.a + np.array([0, d[1], 0], np.float32),
                b=shape.b + np.array([0, d[1], 0], np.float32),
                points=(shape.points + d[[0, 2]]).astype(np.float32),
            )
        elif shape.kind == BOX:
            moved = shape._replace(a=shape.a + d, b=shape.b + d)
        else:
            moved = shape._replace(a=(shape.a + d).astype(np.float32))
        if not (np.isfinite(moved.a).all() and np.isfinite(moved.b).all()):
            raise InputError("moved obstacle has non-finite coordinates")
        self._check_room()
        self._check_shape(moved)
        self._state.move(int(handle), moved)

    # -- update --------------------------------------------------------------------------------
    def update(self, budget_ms: float | None = None, max_tiles: int | None = None) -> Changes:
        """Rebuild touched tiles and swap them into the navmesh, within a budget.

        Each step is one ``dtTileCache::update`` call (pending requests become tile
        rebuilds; one tile is rebuilt). Steps continue until up to date, until
        ``max_tiles`` tiles were rebuilt, or until ``budget_ms`` has elapsed (at least
        one step runs).

        Returns
        -------
        Changes
            The rebuilt tiles and the poly refs that became invalid; also passed to
            every :meth:`subscribe` callback when something changed.

        Raises
        ------
        InputError
            ``budget_ms`` not > 0, ``max_tiles`` not >= 1.
        """
        if budget_ms is None and max_tiles is None:  # (the common call: no checks)
            st = self._state
            rb: list = []
            fl: list = []
            inv: list = []
            st.steps(_ALL, rb, inv, fl)
            # (tuple.__new__: the NamedTuple without its Python-level __new__)
            ch = _new_tuple(Changes, (tuple(rb), tuple(inv), tuple(fl), not st._left))
            if (rb or fl) and self._subscribers:
                for cb in list(self._subscribers):
                    cb(ch)
            return ch
        if budget_ms is not None:
            budget_ms = float(_positive(budget_ms, "budget_ms"))
        if max_tiles is not None:
            if isinstance(max_tiles, bool) or not isinstance(max_tiles, (int, np.integer)):
                raise InputError(f"max_tiles must be an int >= 1, got {max_tiles!r}")
            if max_tiles < 1:
                raise InputError(f"max_tiles must be >= 1, got {max_tiles}")
        st = self._state
        rebuilt: list = []
        failed: list = []
        invalidated: list = []
        if budget_ms is None:  # (the steps in as few kernel calls as can do them)
            st.steps(1 << 62 if max_tiles is None else int(max_tiles), rebuilt, invalidated, failed)
        else:
            t0 = time.perf_counter()
            steps = 0
            while not st.up_to_date:
                st.step(rebuilt, invalidated, failed)
                steps += 1
                if max_tiles is not None and steps >= max_tiles:
                    break
                if (time.perf_counter() - t0) * 1000.0 >= budget_ms:
                    break
        ch = Changes(tuple(rebuilt), tuple(invalidated), tuple(failed), st.up_to_date)
        if rebuilt or failed:
            for cb in list(self._subscribers):
                cb(ch)
        return ch

    def subscribe(self, callback: Callable[[Changes], None]) -> Callable[[], None]:
        """Call ``callback(changes)`` after every update that rebuilt tiles.

        Returns
        -------
        callable
            Unsubscribes when called.
        """
        if not callable(callback):
            raise InputError("callback must be callable")
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def __repr__(self) -> str:
        return (
            f"TileCache(layers={len(self._state.tiles)}, obstacles={self.obstacle_count}, "
            f"up_to_date={self.up_to_date}, recast_compatible={self.recast_compatible})"
        )
