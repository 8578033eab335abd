"""The Explicit Corridor Map (ECM): the medial axis of a 2D environment,
annotated with clearance and the closest obstacle points on both sides of every
vertex (Geraerts, "Planning short paths with clearance using explicit
corridors", ICRA 2010), kept up to date under obstacle insertion and deletion
(van Toll, Cook and Geraerts, "A Navigation Mesh for Dynamic Environments",
CASA 2012).

The medial axis is the free-space part of the Voronoi diagram of the obstacle
*sites*: points and open segments (a polygon contributes its corners and its
edges).  Bisectors are line pieces (point-point, segment-segment) or parabola
pieces (point-segment); a vertex is stored where three sites are closest or
where the closest feature on one side switches between a segment and its
endpoint (a bisector vertex).  The static build is Boost.Polygon's O(n log n)
sweep (:mod:`navkit.ecm._static`); updates are navkit's own local surgery
(:mod:`navkit.ecm._diagram`).

Input (all coordinates are float64 world units [wu]; the supported range is in
the :class:`CorridorMap` docs): the map works in a private frame centred on the
boundary and scaled by a power of two, and snaps coordinates to a grid of step
~2^-28 of the boundary's extent so the integer sweep is exact; repeated polygon
corners and corners where the ring goes straight on are dropped; a polygon
with two distinct corners becomes a segment and one with one corner a point;
obstacles entirely outside the boundary are dropped at build time (listed in
``CorridorMap.dropped``) and refused by the updates.  Self-intersecting
polygons, zero-area polygons (three or more corners on one line), features or
gaps no larger than ``min_feature`` (2^-16 of the extent: short edges,
slivers, edges doubling back), obstacles that cross the boundary, touch or
overlap others or nest, and non-finite coordinates raise
:class:`navkit.errors.InputError`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from navkit.errors import BuildError, InputError, StaleHandleError

from . import _index as X
from . import _kernels as K
from . import _validate as V
from ._diagram import Diagram
from ._sites import Sites
from ._static import HAVE_PYVORONOI, build_with_boost

__all__ = ["CorridorMap", "UpdateReport"]


@dataclass
class UpdateReport:
    """What a local update changed: diagram vertex and edge ids that were
    created or deleted (paths through them need repair), and the time [s]."""

    handle: int
    touched_vertices: set = field(default_factory=set)
    touched_edges: set = field(default_factory=set)
    seconds: float = 0.0

    def affects(self, path) -> bool:
        """Whether this update deleted or replaced a diagram edge that ``path`` (a
        :class:`navkit.ecm.path.PathResult` found before it) runs along: re-plan
        then.  A path that no report affects still lies on the current medial axis.
        """
        return not self.touched_edges.isdisjoint(path.edges)


#: supported extent of the boundary (the larger side of its bounding box) [wu]
MIN_EXTENT = 1e-6
MAX_EXTENT = 1e12
#: the minimum feature size relative to the boundary's extent (see CorridorMap)
FEATURE = 2.0**-16


def _ring_area2(p: np.ndarray) -> float:
    x, y = p[:, 0], p[:, 1]
    return float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def _segments_cross(p: np.ndarray) -> bool:
    """Whether a closed ring has two non-adjacent edges that meet."""
    return bool(K.ring_self_touch(np.ascontiguousarray(p[:, 0]), np.ascontiguousarray(p[:, 1])))


def _points(pts, name: str) -> np.ndarray:
    """``pts`` as an (m, 2) float64 array (m >= 1; a (2,) point is one row), or
    InputError naming ``name``."""
    try:
        p = np.asarray(pts, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        raise InputError(f"{name} must be an (m, 2) array of numbers, got {pts!r:.60}") from None
    if p.ndim == 1 and p.shape[0] == 2:
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] < 1:
        raise InputError(f"{name} must be an (m, 2) array of points (m >= 1), got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise InputError(f"{name} has non-finite coordinates")
    return p


def _vec2(v, name: str) -> np.ndarray:
    """``v`` as a finite (2,) float64 vector, or InputError naming ``name``."""
    try:
        q = np.asarray(v, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        raise InputError(f"{name} must be two finite numbers (x, y), got {v!r:.60}") from None
    if q.shape != (2,) or not np.all(np.isfinite(q)):
        raise InputError(f"{name} must be two finite numbers (x, y), got {v!r:.60}")
    return q


class CorridorMap:
    """An Explicit Corridor Map over a 2D polygonal environment.

    Build with :meth:`from_polygons` or :meth:`from_navmesh`; query with
    :meth:`find_path`, :meth:`clearance_at`, :meth:`nearest_medial_point`;
    change with :meth:`insert_point`, :meth:`insert_segment`,
    :meth:`insert_polygon`, :meth:`remove`, :meth:`move`.

    Supported input (world units [wu], float64)
    -------------------------------------------
    * The boundary's extent ``E`` (the larger side of its bounding box) lies in
      [``MIN_EXTENT``, ``MAX_EXTENT``] = [1e-6, 1e12] wu, anywhere in the plane;
      the map works in a private frame (centred on the boundary, scaled by a
      power of two), so the result is the same at any size and offset up to
      float64's own resolution of the input.  Other extents raise InputError.
    * Coordinates are snapped to a grid of step about ``E * 2^-28``; obstacle
      corners farther than ``4 E`` from the boundary's centre count as outside
      the boundary.
    * The minimum feature size is ``min_feature = E * 2^-16`` (``FEATURE``):
      every segment is longer than it, every polygon corner is farther than it
      from every edge not ending at that corner (so no short edge, sliver,
      needle or edge doubling back), and obstacles stay more than it apart
      from each other and from the boundary.  Smaller features raise
      InputError (they made the local updates and the static build disagree).
    * Everything accepted is exact: the diagram after any sequence of updates
      equals a fresh build (``map_difference(m, m.rebuilt()) == []``).  Known
      gap: a polygon corner exactly on the normal line at the end of another
      obstacle's edge (straight across a parallel gap from another corner) can
      leave a lens of two edges about 1e-9 E long that the fresh build lacks.

    An update that raises (InputError, StaleHandleError before any change;
    BuildError after a rollback) leaves the map, its caches and every later
    answer as they were.
    """

    def __init__(self, boundary, *, _origin, _unit, _scale, _tol, _feat) -> None:
        self.origin = _origin  # world point of the private frame's origin [wu]
        self.unit = _unit  # private units per wu (a power of two)
        self.scale = _scale  # snap grid steps per private unit (a power of two)
        self.sites = Sites()
        self.diagram = Diagram(self.sites, _tol)
        self.feat = _feat  # the minimum feature size, private units
        self.boundary = boundary  # (k, 2) local coordinates, CCW
        self.obstacles: dict[int, dict] = {}
        self.dropped: list = []
        self._next_handle = 1
        self._cache: dict = {}
        self._polycache: dict = {}
        # per edge id: (length, least clearance) and whether it is current
        self._estat = np.zeros((0, 2))
        self._estat_ok = np.zeros(0, np.bool_)
        self._bx = self._by = np.zeros(0)  # the boundary ring's coordinates
        self._pathflat = None  # the path kernels' flat polyline cache (navkit.ecm.path)
        self._subscribers: list = []  # callables given every UpdateReport (subscribe)

    @property
    def min_feature(self) -> float:
        """The minimum feature size and obstacle gap [wu] (see the class docs)."""
        return self.feat / self.unit

    # ------------------------------------------------------------ construction
    @classmethod
    def from_polygons(cls, boundary, obstacles=(), *, use_library: bool = True) -> CorridorMap:
        """Build the ECM of a boundary polygon and obstacles.

        Parameters
        ----------
        boundary : (k, 2) array_like, or a list whose first ring is the outer
            boundary and the others holes (holes are added as polygon obstacles).
        obstacles : iterable of (m, 2) array_like
            Polygons (m >= 3), segments (m == 2) or points (m == 1, or shape (2,)).
        use_library : bool
            Use the Boost sweep (pyvoronoi) if installed; otherwise, or when
            False, insert obstacles one by one with navkit's local updates.

        Raises
        ------
        InputError
            Input outside the supported range (see the class docs): bad shapes,
            non-finite coordinates, an extent outside [1e-6, 1e12] wu, zero-area
            or self-intersecting polygons, features or gaps below
            ``min_feature``, nested obstacles.  Obstacles entirely outside the
            boundary are dropped (listed in ``dropped``).
        """
        if boundary is None:
            raise InputError("boundary must be a (k, 2) polygon or a list of rings, got None")
        try:
            arr = np.asarray(boundary, dtype=np.float64)
        except (ValueError, TypeError, OverflowError):
            arr = None
        if arr is not None and arr.ndim == 2:
            rings = [arr]
        else:
            try:
                rings = [np.asarray(r, dtype=np.float64) for r in boundary]
            except (ValueError, TypeError, OverflowError):
                raise InputError(
                    "boundary must be a (k, 2) polygon or a list of (k, 2) rings of numbers"
                ) from None
            if not rings:
                raise InputError("boundary must have at least one ring")
        outer = rings[0]
        if outer.ndim != 2 or outer.shape[1] != 2 or outer.shape[0] < 3:
            raise InputError(
                f"boundary must be a (k, 2) polygon with k >= 3, got shape {outer.shape}"
            )
        if not np.all(np.isfinite(outer)):
            raise InputError("boundary has non-finite coordinates")
        if obstacles is None:
            obstacles = ()
        lo, hi = outer.min(axis=0), outer.max(axis=0)
        ext = float(np.max(hi - lo))
        if not (MIN_EXTENT <= ext <= MAX_EXTENT):
            raise InputError(
                f"boundary extent {ext:.3g} wu is outside the supported range "
                f"[{MIN_EXTENT:g}, {MAX_EXTENT:g}] wu"
            )
        # the private frame: centred, scaled by a power of two to an extent in
        # (256, 512], so every tolerance and kernel sees the same numbers at
        # any size; snapped to multiples of 2^-28 of the extent
        unit = 2.0 ** (9 - math.ceil(math.log2(ext)))
        ext_l = ext * unit
        scale = 2.0 ** math.floor(math.log2(2.0**28 / ext_l))
        origin = (lo + hi) / 2.0
        m = cls(
            None,
            _origin=origin,
            _unit=unit,
            _scale=scale,
            _tol=ext_l * 1e-10,
            _feat=ext_l * FEATURE,
        )
        b = m._clean_ring(outer, closed=True)
        if b.shape[0] < 3:
            raise InputError("boundary has zero area")
        if _segments_cross(b):
            raise InputError("boundary polygon intersects itself")
        if V.ring_thin(np.ascontiguousarray(b[:, 0]), np.ascontiguousarray(b[:, 1]), m.feat):
            raise InputError(
                "boundary has an edge, sliver or spike no larger than the minimum feature "
                f"size {m.min_feature:.3g} wu (2^-16 of its extent)"
            )
        if _ring_area2(b) < 0:
            b = b[::-1].copy()
        m.boundary = b
        m._bx, m._by = np.ascontiguousarray(b[:, 0]), np.ascontiguousarray(b[:, 1])
        corners: list = []
        m._add_polygon_sites(b, owner=0, corners=corners)
        m.obstacles[0] = {"kind": "boundary", "sites": list(range(m.sites.n)), "ring": b}
        pending = []
        try:
            extra = [(f"hole {i}", r) for i, r in enumerate(rings[1:], 1)]
            extra += [(f"obstacle {i}", r) for i, r in enumerate(obstacles)]
        except TypeError:
            raise InputError("obstacles must be an iterable of (m, 2) arrays") from None
        for name, r in extra:
            try:
                ring = m._validated_ring(r, check=False, name=name)
            except _Outside:
                m.dropped.append(r)
                continue
            h, new, cs = m._write_obstacle(ring)
            pending.append((h, new, cs))
            corners.extend(cs)
        m._check_all()
        nsite = max(1, int(np.count_nonzero(m.sites.alive[: m.sites.n])))
        blo, bhi = b.min(axis=0), b.max(axis=0)
        area = float(np.prod(bhi - blo))
        m.sites.make_grid(
            blo[0], blo[1], bhi[0], bhi[1], max(math.sqrt(area / nsite) * 2.0, ext_l * 1e-6)
        )
        if use_library and HAVE_PYVORONOI:
            build_with_boost(m.diagram, corners, scale)
        else:
            bs = [s for s in range(m.sites.n) if m.sites.owner[s] == 0]
            m.sites.alive[: m.sites.n] = False
            m.sites.alive[bs] = True
            m.diagram.insert_sites(bs, [c for c in corners if m.sites.owner[c[1]] == 0])
            for _h, new, cs in pending:
                m.sites.alive[new] = True
                m.diagram.insert_sites(new, cs)
        m.diagram.clear_touched()
        return m

    @classmethod
    def from_navmesh(cls, navmesh, *, y_range=None, **kw) -> CorridorMap:
        """Build the ECM of a navmesh's walkable area in the x-z plane.

        ``navmesh``: a Recast PolyMesh or a TriMesh; ``y_range``: (lo, hi) world
        heights selecting one layer of a multi-layer level (see
        :mod:`navkit.ecm.navmesh`; overlapping layers raise InputError).
        """
        from .navmesh import navmesh_rings

        outer, holes = navmesh_rings(navmesh, y_range)
        return cls.from_polygons([outer, *holes], **kw)

    def rebuilt(self) -> CorridorMap:
        """A map built from scratch (Boost sweep) from this map's current obstacles."""
        rings = [self._world(self.boundary)]
        obs = [self._world(o["ring"]) for h, o in sorted(self.obstacles.items()) if h != 0]
        return CorridorMap.from_polygons(rings, obs)

    # ------------------------------------------------------------------ input
    def _world(self, p: np.ndarray) -> np.ndarray:
        """Private-frame points to world coordinates [wu]."""
        return p / self.unit + self.origin

    def _to_local(self, p) -> np.ndarray:
        """World points [wu] to the private frame (no validation)."""
        return (np.asarray(p, dtype=np.float64) - self.origin) * self.unit

    def _clean_ring(self, pts, closed: bool) -> np.ndarray:
        p = _points(pts, "boundary")
        code, out = V.snap_ring(
            np.ascontiguousarray(p), float(self.origin[0]), float(self.origin[1]),
            float(self.unit * self.scale), float(self.scale), closed,
        )  # fmt: skip
        if code == V.ZERO_AREA:
            raise InputError(
                "boundary has zero area (its corners lie on one line, to the snap grid)"
            )
        if code != V.OK:
            raise InputError(_CHECK_MESSAGES[code])
        return out

    def _add_polygon_sites(self, ring, owner, corners, at=None) -> list:
        S = self.sites
        pids, sids = S.add_polygon(
            np.ascontiguousarray(ring[:, 0]), np.ascontiguousarray(ring[:, 1]), owner, at
        )
        k = len(pids)
        for i in np.flatnonzero(S.side[pids[0] : pids[0] + k] == 0).tolist():
            corners.append((sids[i - 1], pids[i], sids[i]))
        return pids + sids

    def _check_all(self) -> None:
        """Bulk validation of a fresh map: no two obstacles within the minimum
        feature size, none inside another."""
        S = self.sites
        n = S.n
        seg = S.kind[:n] == 1
        lone = (S.kind[:n] == 0) & (S.inc[:n, 0] < 0)  # a point obstacle
        ids = np.nonzero(seg | lone)[0]
        x1 = np.where(seg[ids], S.bx[ids], S.ax[ids])
        y1 = np.where(seg[ids], S.by[ids], S.ay[ids])
        i, j = K.first_close_pair(S.ax[ids], S.ay[ids], x1, y1, S.owner[ids], self.feat)
        if i >= 0:
            raise InputError(
                f"obstacles {S.owner[ids[i]]} and {S.owner[ids[j]]} touch, overlap or come "
                f"within the minimum feature size {self.min_feature:.3g} wu "
                "(0 = the boundary); merge or separate them"
            )
        hs = [h for h, o in self.obstacles.items() if h != 0]
        if not hs:
            return
        rings = [self.obstacles[h]["ring"] for h in hs]
        ptr = np.zeros(len(rings) + 1, np.int64)
        ptr[1:] = np.cumsum([len(r) for r in rings])
        allr = np.concatenate(rings)
        lo = np.minimum.reduceat(allr, ptr[:-1], axis=0)
        hi = np.maximum.reduceat(allr, ptr[:-1], axis=0)
        first = allr[ptr[:-1]]
        poly = np.diff(ptr) >= 3
        k, c = K.first_nested(
            np.ascontiguousarray(first[:, 0]), np.ascontiguousarray(first[:, 1]),
            np.ascontiguousarray(lo[:, 0]), np.ascontiguousarray(lo[:, 1]),
            np.ascontiguousarray(hi[:, 0]), np.ascontiguousarray(hi[:, 1]),
            poly, ptr, np.ascontiguousarray(allr[:, 0]), np.ascontiguousarray(allr[:, 1]),
        )  # fmt: skip
        if k >= 0:
            raise InputError(f"obstacle {hs[k]} lies inside obstacle {hs[c]}")

    def _validated_ring(self, pts, check: bool = True, ignore=None, name: str = "points"):
        """Snap, clean and validate one obstacle (world (m, 2) corners) without
        changing the map: its local ring ((k, 2): 1 point, 2 segment, >= 3
        polygon, clockwise).  ``ignore``: site ids (of the obstacle a move
        replaces) that do not count.  Raises InputError, or _Outside when the
        obstacle lies entirely outside the boundary."""
        p = _points(pts, name)
        S = self.sites
        if check:
            grid = self.diagram._grid()
        else:
            grid = (np.zeros((1, 1), np.int64), np.zeros(1, np.int64), 0.0, 0.0, 1.0, 1, 1)
        if ignore is not None:
            S.alive[ignore] = False
        try:
            code, ring = V.obstacle_ring(
                np.ascontiguousarray(p), float(self.origin[0]), float(self.origin[1]),
                float(self.unit * self.scale), float(self.scale),
                self._bx, self._by, self.diagram.tol, self.feat, check, *grid,
                S.kind, S.ax, S.ay, S.bx, S.by, S.side, S.owner, S.alive,
            )  # fmt: skip
        finally:
            if ignore is not None:
                S.alive[ignore] = True
        if code in (V.OUTSIDE, V.TOO_FAR):
            raise _Outside()
        if code != V.OK:
            msg = _CHECK_MESSAGES[code]
            if code in (V.THIN, V.TOUCHES):
                msg += f" (min_feature = {self.min_feature:.3g} wu, 2^-16 of the boundary's extent)"
            raise InputError(f"{name}: {msg}")
        return ring

    def _write_obstacle(self, ring, reuse=None, handle=None):
        """Add a validated obstacle's sites (alive); returns (handle, sites,
        corners).  ``reuse``: the ids of a just-deleted obstacle, written over
        when the new one needs as many (a move), otherwise released; ``handle``:
        the handle to give it (a move keeps its own), else a new one."""
        S = self.sites
        x, y = ring[:, 0], ring[:, 1]
        k = x.shape[0]
        kind = "point" if k == 1 else "segment" if k == 2 else "polygon"
        need = 1 if k == 1 else 3 if k == 2 else 2 * k
        at = None
        if reuse is not None:
            if len(reuse) == need:
                at = reuse[0]
            else:
                S.release(reuse)
        if handle is None:
            h = self._next_handle
            self._next_handle += 1
        else:
            h = handle
        corners: list = []
        if kind == "polygon":
            new = self._add_polygon_sites(ring, h, corners, at)
        else:
            p0 = S.alloc(need) if at is None else at
            xa, ya = float(x[0]), float(y[0])
            if kind == "segment":
                xb, yb = float(x[1]), float(y[1])
                S.add(0, xa, ya, side=1, owner=h, at=p0)
                S.add(0, xb, yb, side=1, owner=h, at=p0 + 1)
                S.add(1, xa, ya, xb, yb, e0=p0, e1=p0 + 1, side=0, owner=h, at=p0 + 2)
                new = [p0, p0 + 1, p0 + 2]
            else:
                new = [S.add(0, xa, ya, side=1, owner=h, at=p0)]
            S.cvx[new[0] : new[-1] + 1] = True  # a point or a segment is convex
        self.obstacles[h] = {"kind": kind, "sites": new, "ring": ring}
        return h, new, corners

    def _handle(self, handle) -> int:
        """A live obstacle handle of this map, or InputError / StaleHandleError."""
        if isinstance(handle, (bool, np.bool_)) or not isinstance(handle, (int, np.integer)):
            raise InputError(f"handle must be an int obstacle handle, got {handle!r:.60}")
        h = int(handle)
        if h == 0:
            raise StaleHandleError("handle 0 is the boundary, which cannot be removed or moved")
        if h not in self.obstacles:
            raise StaleHandleError(
                f"no obstacle with handle {h} in this map (removed, or from another map)"
            )
        return h

    # ---------------------------------------------------------------- updates
    def _update(self, fn, handle=None) -> UpdateReport:
        """Run the update ``fn`` -- validated already, so it changes the map --
        and report what it touched; if it fails midway, rebuild the map as it
        was before and raise BuildError."""
        d = self.diagram
        d.clear_touched()
        t0 = time.perf_counter()
        # what a rollback needs, in O(1): the obstacle the update may change and
        # the first handle it may create (copying every obstacle cost O(n))
        saved = self.obstacles.get(handle) if handle is not None else None
        next0 = self._next_handle
        try:
            h = fn()
        except Exception as exc:  # roll back by rebuilding the previous state
            before = {k: v for k, v in self.obstacles.items() if k < next0 and k != handle}
            if saved is not None:
                before[handle] = saved
            self._restore(before)
            raise BuildError(f"local update failed and was rolled back: {exc}") from exc
        te = d.telog[: d.cnt[X.NTE]]
        te_list = te.tolist()
        rep = UpdateReport(h, d.touched_v, set(te_list), time.perf_counter() - t0)
        self._cache.clear()
        ok = self._estat_ok
        ok[te[te < ok.shape[0]]] = False
        if self._polycache:
            for e in te_list:
                self._polycache.pop(e, None)
        if self._pathflat is not None and self._pathflat.diagram is d:
            self._pathflat.drop(te)
        for cb in list(self._subscribers):
            cb(rep)
        return rep

    def subscribe(self, callback) -> Callable[[], None]:
        """Call ``callback(report)`` with the :class:`UpdateReport` of every
        successful local update (insert, remove, move), after the map changed.

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

    def _restore(self, obs) -> None:
        fresh = CorridorMap.from_polygons(
            [self._world(self.boundary)],
            [self._world(o["ring"]) for h, o in sorted(obs.items()) if h != 0],
        )
        # keep the caller's handles
        hmap = {}
        for (h_old, _o), h_new in zip(
            sorted((h, o) for h, o in obs.items() if h != 0), sorted(fresh.obstacles)[1:]
        ):
            hmap[h_new] = h_old
        self.sites, self.diagram = fresh.sites, fresh.diagram
        self._cache = {}
        self._polycache = {}
        self._pathflat = None
        self._estat = np.zeros((0, 2))
        self._estat_ok = np.zeros(0, np.bool_)
        self.obstacles = {0: fresh.obstacles[0]}
        for h_new, h_old in hmap.items():
            self.obstacles[h_old] = fresh.obstacles[h_new]
            self.sites.owner[np.asarray(fresh.obstacles[h_new]["sites"])] = h_old

    def _insert_ring(self, ring, reuse=None, handle=None) -> int:
        h, new, corners = self._write_obstacle(ring, reuse=reuse, handle=handle)
        self.diagram.insert_sites(new, corners)
        return h

    def _validated_new(self, pts, name: str, ignore=None):
        try:
            return self._validated_ring(pts, ignore=ignore, name=name)
        except _Outside:
            raise InputError(f"{name}: obstacle lies outside the boundary") from None

    def insert_polygon(self, points) -> UpdateReport:
        """Insert a polygon obstacle ((m, 2) [wu]); returns an :class:`UpdateReport`
        whose ``handle`` names the obstacle.  Invalid input (see the class docs)
        raises InputError before anything changes."""
        ring = self._validated_new(points, "points")
        return self._update(lambda: self._insert_ring(ring))

    def insert_segment(self, a, b) -> UpdateReport:
        """Insert a segment obstacle from ``a`` to ``b`` ((2,) [wu] each)."""
        pts = np.stack([_vec2(a, "a"), _vec2(b, "b")])
        ring = self._validated_new(pts, "segment")
        return self._update(lambda: self._insert_ring(ring))

    def insert_point(self, p) -> UpdateReport:
        """Insert a point obstacle ((2,) [wu])."""
        ring = self._validated_new(_vec2(p, "p")[None, :], "p")
        return self._update(lambda: self._insert_ring(ring))

    def _remove(self, handle) -> int:
        o = self.obstacles.pop(handle)
        self.diagram.delete_sites(o["sites"])
        return handle

    def remove(self, handle: int) -> UpdateReport:
        """Delete an obstacle; its former cells are filled from its neighbours.
        A handle that is not a live obstacle of this map raises StaleHandleError
        (0, the boundary, included)."""
        h = self._handle(handle)

        def run():
            o = self.obstacles[h]
            self._remove(h)
            self.sites.release(o["sites"])  # its ids are free for the next insertion
            return h

        return self._update(run, h)

    def move(self, handle: int, points=None, *, offset=None) -> UpdateReport:
        """Move an obstacle: delete, then insert at ``points`` ((m, 2) [wu]) or
        shifted by ``offset`` ((2,) [wu]); exactly one of the two.  The handle
        stays the same.  The new place is validated (ignoring the obstacle's
        old place) before anything changes: a refused move raises InputError
        and leaves the map as it was."""
        h = self._handle(handle)
        o = self.obstacles[h]
        if (points is None) == (offset is None):
            raise InputError("move needs exactly one of points or offset")
        if points is None:
            points = self._world(o["ring"]) + _vec2(offset, "offset")
        ring = self._validated_new(points, "points" if offset is None else "offset", o["sites"])

        def run():
            self._remove(h)
            # the moved obstacle's site ids are reused (written over) when
            # its new ring has as many corners
            self._insert_ring(ring, reuse=o["sites"], handle=h)
            return h

        return self._update(run, h)

    # ----------------------------------------------------------------- access
    def medial_axis(self):
        """Vertices and edges of the ECM in world coordinates.

        Returns
        -------
        verts : (n, 2) float64 [wu]
        clearance : (n,) float64 [wu]
        edges : (m, 2) int64 vertex indices
        edge_sites : (m, 2) int64 site ids of the two sides
        """
        v, r, _ids, ed = self.diagram.arrays()
        return self._world(v), r / self.unit, ed[:, :2].copy(), ed[:, 2:].copy()

    def closest_points(self, v: int):
        """Closest obstacle points of vertex ``v`` (compact index), one per site, [wu]."""
        from .geom import site_dist

        _, _, ids, _ = self.diagram.arrays()
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise InputError(f"v must be an int vertex index, got {v!r:.60}")
        if not 0 <= int(v) < ids.shape[0]:
            raise InputError(f"v must be a vertex index in [0, {ids.shape[0]}), got {v}")
        d = self.diagram
        vid = int(ids[int(v)])
        out = []
        for s in d.vs[vid]:
            _, fx, fy, _ = site_dist(self.sites, s, d.vx[vid], d.vy[vid])
            out.append((fx, fy))
        return self._world(np.asarray(out))

    def _local_point(self, p, name: str = "p") -> np.ndarray:
        return (_vec2(p, name) - self.origin) * self.unit

    def find_path(
        self, start, goal, *, clearance: float = 0.0, preferred_clearance=None,
        explain: bool = False,
    ):  # fmt: skip
        """Shortest path with clearance from ``start`` to ``goal`` ((2,) [wu]).

        Returns a :class:`navkit.ecm.path.PathResult` (path, medial route,
        corridor disks, left/right closest points), or -- when there is no
        path -- ``None``, or with ``explain=True`` a falsy
        :class:`navkit.ecm.path.NoPath` saying why: ``start``/``goal`` lies
        outside the boundary, inside (or on) obstacle ``obstacle``, closer than
        ``clearance`` to obstacle ``obstacle``, or no corridor of that clearance
        joins them.  ``preferred_clearance`` (>= clearance) gives the
        indicative-route variant that keeps further from obstacles where it can.
        """
        from .path import find_path

        return find_path(self, start, goal, clearance, preferred_clearance, explain)

    def clearance_at(self, p) -> float:
        """Distance [wu] from ``p`` ((2,) [wu]) to the nearest obstacle; 0.0 where
        ``p`` is not in free space (inside or on an obstacle, or outside the
        boundary, however far)."""
        from .path import clearance_at

        return clearance_at(self, *self._local_point(p)) / self.unit

    def nearest_medial_point(self, p):
        """Nearest point of the medial axis to ``p``: (point (2,) [wu], its clearance [wu])."""
        from .path import nearest_medial_point

        q, e = nearest_medial_point(self, *self._local_point(p))
        from .geom import site_dist

        r = site_dist(self.sites, self.diagram.edges[e][2], q[0], q[1])[0]
        return self._world(q), float(r) / self.unit

    def check(self) -> None:
        """Raise BuildError if the diagram's bookkeeping is inconsistent."""
        d = self.diagram
        for e, (v0, v1, a, b) in d.edges.items():
            if not (d.valive[v0] and d.valive[v1]):
                raise BuildError(f"edge {e} ends at a dead vertex")
            if not (self.sites.alive[a] and self.sites.alive[b]):
                raise BuildError(f"edge {e} borders a dead site")
            if e not in d.vert_edges[v0] or e not in d.vert_edges[v1]:
                raise BuildError(f"edge {e} missing from vertex index")
        bad = d.check_index()
        if bad:
            raise BuildError(f"diagram index inconsistent: {bad[:3]}")


class _Outside(Exception):
    pass


_CHECK_MESSAGES = {
    V.NONFINITE: "non-finite coordinates",
    V.TOO_FAR: "coordinates too far outside the boundary",
    V.ZERO_AREA: "polygon has zero area (its corners lie on one line, to the snap grid)",
    V.THIN: "obstacle has an edge, sliver or spike no larger than the minimum feature size",
    V.SELF_TOUCH: "obstacle polygon intersects itself",
    V.CROSSES: "obstacle crosses the boundary",
    V.TOUCHES: (
        "obstacle touches, overlaps or comes within the minimum feature size of "
        "another obstacle or the boundary"
    ),
    V.INSIDE: "obstacle lies inside another obstacle",
    V.CONTAINS: "obstacle contains another obstacle",
}
