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

Input cleaning (all coordinates are float64 world units [wu]): coordinates are
snapped to a power-of-two grid around the boundary's centre (relative step
~2^-28 of the extent) so the integer sweep is exact; repeated and collinear
polygon corners are dropped; a polygon with two corners becomes a segment and
one with one corner a point; obstacles entirely outside the boundary are
dropped (listed in ``CorridorMap.dropped``).  Self-intersecting polygons,
obstacles that cross the boundary or touch/overlap other obstacles, zero-area
polygons and non-finite coordinates raise :class:`navkit.errors.InputError`.
"""

from __future__ import annotations

import math
import time
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


def _ring_area2(p: np.ndarray) -> float:
    x, y = p[:, 0], p[:, 1]
    return float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def _segments_cross(p: np.ndarray) -> bool:
    """Whether a closed ring has two non-adjacent edges that meet."""
    return bool(K.ring_self_touch(np.ascontiguousarray(p[:, 0]), np.ascontiguousarray(p[:, 1])))


class CorridorMap:
    """An Explicit Corridor Map over a 2D polygonal environment.

    Build with :meth:`from_polygons` or :meth:`from_navmesh`; query with
    :meth:`find_path`, :meth:`clearance_at`, :meth:`nearest_medial_point`;
    change with :meth:`insert_point`, :meth:`insert_segment`,
    :meth:`insert_polygon`, :meth:`remove`, :meth:`move`.
    """

    def __init__(self, boundary, *, _origin, _scale, _tol) -> None:
        self.origin = _origin
        self.scale = _scale
        self.sites = Sites()
        self.diagram = Diagram(self.sites, _tol)
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
        """
        rings = boundary
        arr = None
        try:
            arr = np.asarray(boundary, dtype=np.float64)
        except (ValueError, TypeError):
            arr = None
        if arr is not None and arr.ndim == 2:
            rings = [arr]
        else:
            rings = [np.asarray(r, dtype=np.float64) for r in boundary]
        outer = rings[0]
        if outer.ndim != 2 or outer.shape[1] != 2 or outer.shape[0] < 3:
            raise InputError("boundary must be a (k, 2) polygon with k >= 3")
        if not np.all(np.isfinite(outer)):
            raise InputError("boundary has non-finite coordinates")
        lo, hi = outer.min(axis=0), outer.max(axis=0)
        origin = np.floor((lo + hi) / 2.0)
        ext = float(np.max(hi - lo))
        if ext <= 0:
            raise InputError("boundary has zero extent")
        scale = 2.0 ** math.floor(math.log2(2.0**28 / ext))
        tol = ext * 1e-10
        m = cls(None, _origin=origin, _scale=scale, _tol=tol)
        b = m._clean_ring(outer, closed=True)
        if b.shape[0] < 3:
            raise InputError("boundary degenerates after removing repeated/collinear corners")
        if _segments_cross(b):
            raise InputError("boundary polygon intersects itself")
        if _ring_area2(b) < 0:
            b = b[::-1].copy()
        m.boundary = b
        m._bx, m._by = np.ascontiguousarray(b[:, 0]), np.ascontiguousarray(b[:, 1])
        corners: list = []
        m._add_polygon_sites(b, owner=0, corners=corners)
        m.obstacles[0] = {"kind": "boundary", "sites": list(range(m.sites.n)), "ring": b}
        pending = []
        for r in list(rings[1:]) + list(obstacles):
            try:
                h, new, cs = m._add_obstacle_sites(r, check=False)
            except _Outside:
                m.dropped.append(r)
                continue
            pending.append((h, new, cs))
            corners.extend(cs)
        m._check_all()
        nsite = max(1, int(np.count_nonzero(m.sites.alive[: m.sites.n])))
        blo, bhi = b.min(axis=0), b.max(axis=0)
        area = float(np.prod(bhi - blo))
        m.sites.make_grid(
            blo[0], blo[1], bhi[0], bhi[1], max(math.sqrt(area / nsite) * 2.0, ext * 1e-6)
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
        return p + self.origin

    def _clean_ring(self, pts, closed: bool) -> np.ndarray:
        p = np.asarray(pts, dtype=np.float64)
        if p.ndim == 1 and p.shape[0] == 2:
            p = p[None, :]
        if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] < 1:
            raise InputError(f"expected an (m, 2) array of points, got shape {p.shape}")
        code, out = V.snap_ring(
            np.ascontiguousarray(p), float(self.origin[0]), float(self.origin[1]),
            float(self.scale), closed,
        )  # fmt: skip
        if code == 1:
            raise InputError("non-finite coordinates")
        if code == 2:
            raise InputError("coordinates too far outside the boundary")
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
        """Bulk validation of a fresh map: no two obstacles touch, none inside another."""
        S = self.sites
        n = S.n
        seg = S.kind[:n] == 1
        lone = (S.kind[:n] == 0) & (S.inc[:n, 0] < 0)  # a point obstacle
        ids = np.nonzero(seg | lone)[0]
        x1 = np.where(seg[ids], S.bx[ids], S.ax[ids])
        y1 = np.where(seg[ids], S.by[ids], S.ay[ids])
        i, j = K.first_close_pair(S.ax[ids], S.ay[ids], x1, y1, S.owner[ids], self.diagram.tol)
        if i >= 0:
            raise InputError(
                f"obstacles {S.owner[ids[i]]} and {S.owner[ids[j]]} touch or overlap "
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

    def _add_obstacle_sites(self, pts, check: bool = True, reuse=None, handle=None):
        """Validate and add one obstacle's sites (alive); returns (handle, sites,
        corners).  ``reuse``: the ids of a just-deleted obstacle, written over
        when the new one needs as many (a move), otherwise released; ``handle``:
        the handle to give it (a move keeps its own), else a new one."""
        p = np.asarray(pts, dtype=np.float64)
        if p.ndim == 1 and p.shape[0] == 2:
            p = p[None, :]
        if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] < 1:
            raise InputError(f"expected an (m, 2) array of points, got shape {p.shape}")
        S = self.sites
        if check:
            grid = self.diagram._grid()
        else:
            grid = (np.zeros((1, 1), np.int64), np.zeros(1, np.int64), 0.0, 0.0, 1.0, 1, 1)
        code, ring = V.obstacle_ring(
            np.ascontiguousarray(p), self.origin[0], self.origin[1], self.scale,
            self._bx, self._by, self.diagram.tol, check, *grid,
            S.kind, S.ax, S.ay, S.bx, S.by, S.side, S.owner, S.alive,
        )  # fmt: skip
        if code == V.OUTSIDE:
            raise _Outside()
        if code != V.OK:
            raise InputError(_CHECK_MESSAGES[code])
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

    # ---------------------------------------------------------------- updates
    def _update(self, fn, handle=None) -> UpdateReport:
        """Run the update ``fn`` (which may change the obstacle ``handle`` and add
        new ones) and report what it touched; if it fails midway, rebuild the map
        as it was before."""
        d = self.diagram
        d.clear_touched()
        t0 = time.perf_counter()
        # what a rollback needs, in O(1): the obstacle the update may change and
        # the first handle it may create (copying every obstacle cost O(n))
        saved = self.obstacles.get(handle) if handle is not None else None
        next0 = self._next_handle
        try:
            h = fn()
        except (InputError, StaleHandleError):
            raise
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
        return rep

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
        self._polycache = {}
        self._pathflat = None
        self._estat = np.zeros((0, 2))
        self._estat_ok = np.zeros(0, np.bool_)
        self.obstacles = {0: fresh.obstacles[0]}
        for h_new, h_old in hmap.items():
            self.obstacles[h_old] = fresh.obstacles[h_new]
            self.sites.owner[np.asarray(fresh.obstacles[h_new]["sites"])] = h_old

    def _insert(self, pts, reuse=None, handle=None) -> int:
        try:
            h, new, corners = self._add_obstacle_sites(pts, reuse=reuse, handle=handle)
        except _Outside:
            raise InputError("obstacle lies outside the boundary") from None
        self.diagram.insert_sites(new, corners)
        return h

    def insert_polygon(self, points) -> UpdateReport:
        """Insert a polygon obstacle ((m, 2) [wu]); returns an :class:`UpdateReport`
        whose ``handle`` names the obstacle."""
        return self._update(lambda: self._insert(points))

    def insert_segment(self, a, b) -> UpdateReport:
        """Insert a segment obstacle from ``a`` to ``b`` ((2,) [wu] each)."""
        return self._update(lambda: self._insert(np.asarray([a, b], dtype=np.float64)))

    def insert_point(self, p) -> UpdateReport:
        """Insert a point obstacle ((2,) [wu])."""
        return self._update(lambda: self._insert(np.asarray([p], dtype=np.float64)))

    def _remove(self, handle) -> int:
        if handle == 0 or handle not in self.obstacles:
            raise StaleHandleError(f"no obstacle with handle {handle}")
        o = self.obstacles.pop(handle)
        self.diagram.delete_sites(o["sites"])
        return handle

    def remove(self, handle: int) -> UpdateReport:
        """Delete an obstacle; its former cells are filled from its neighbours."""

        def run():
            o = self.obstacles.get(handle) if handle != 0 else None
            self._remove(handle)
            self.sites.release(o["sites"])  # its ids are free for the next insertion
            return handle

        return self._update(run, handle)

    def move(self, handle: int, points=None, *, offset=None) -> UpdateReport:
        """Move an obstacle: delete, then insert at ``points`` or shifted by
        ``offset`` ((2,) [wu]). The handle stays the same."""
        if handle == 0 or handle not in self.obstacles:
            raise StaleHandleError(f"no obstacle with handle {handle}")
        o = self.obstacles[handle]
        if points is None:
            if offset is None:
                raise InputError("move needs points or offset")
            points = o["ring"] + (self.origin + np.asarray(offset, np.float64))

        def run():
            self._remove(handle)
            try:
                # the moved obstacle's site ids are reused (written over) when
                # its new ring has as many corners
                self._insert(points, reuse=o["sites"], handle=handle)
            except InputError:  # rejected before any site was written
                self.obstacles[handle] = o
                self.sites.alive[o["sites"]] = True
                for s in o["sites"]:
                    self.sites.grid_add(s)
                self.diagram.insert_sites(o["sites"], self._corners_of(o))
                raise
            return handle

        return self._update(run, handle)

    def _corners_of(self, o) -> list:
        S = self.sites
        out: list = []
        if o["kind"] != "polygon":
            return out
        k = len(o["sites"]) // 2
        pids, sids = o["sites"][:k], o["sites"][k:]
        for i in range(k):
            if S.side[pids[i]] == 0:
                out.append((sids[i - 1], pids[i], sids[i]))
        return out

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
        return v + self.origin, r, ed[:, :2].copy(), ed[:, 2:].copy()

    def closest_points(self, v: int):
        """Closest obstacle points of vertex ``v`` (compact index), one per site, [wu]."""
        from .geom import site_dist

        _, _, ids, _ = self.diagram.arrays()
        d = self.diagram
        vid = int(ids[v])
        out = []
        for s in d.vs[vid]:
            _, fx, fy, _ = site_dist(self.sites, s, d.vx[vid], d.vy[vid])
            out.append((fx + self.origin[0], fy + self.origin[1]))
        return np.asarray(out)

    def _local_point(self, p) -> np.ndarray:
        q = np.asarray(p, dtype=np.float64).reshape(-1)
        if q.shape != (2,) or not np.all(np.isfinite(q)):
            raise InputError("a point must be two finite numbers")
        return q - self.origin

    def find_path(self, start, goal, *, clearance: float = 0.0, preferred_clearance=None):
        """Shortest path with clearance from ``start`` to ``goal`` ((2,) [wu]).

        Returns a :class:`navkit.ecm.path.PathResult` (path, medial route,
        corridor disks, left/right closest points), or ``None`` when start or
        goal has less than ``clearance`` to an obstacle or no corridor of that
        clearance joins them. ``preferred_clearance`` (>= clearance) gives the
        indicative-route variant that keeps further from obstacles where it can.
        """
        from .path import find_path

        return find_path(self, start, goal, clearance, preferred_clearance)

    def clearance_at(self, p) -> float:
        """Distance [wu] from ``p`` to the nearest obstacle (0 outside free space)."""
        from .path import clearance_at

        return clearance_at(self, *self._local_point(p))

    def nearest_medial_point(self, p):
        """Nearest point of the medial axis to ``p``: (point (2,) [wu], its clearance)."""
        from .path import nearest_medial_point

        q, e = nearest_medial_point(self, *self._local_point(p))
        from .geom import site_dist

        r = site_dist(self.sites, self.diagram.edges[e][2], q[0], q[1])[0]
        return q + self.origin, float(r)

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
    V.SELF_TOUCH: "obstacle polygon intersects itself",
    V.CROSSES: "obstacle crosses the boundary",
    V.TOUCHES: "obstacle touches or overlaps another obstacle or the boundary",
    V.INSIDE: "obstacle lies inside another obstacle",
    V.CONTAINS: "obstacle contains another obstacle",
}
