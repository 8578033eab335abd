"""One actor chasing a target on the navmesh with steering behaviours (:class:`Follower`).

The follower of the "navmesh path following with steering behaviours" log
(a developer's Unreal AI plugin), on a navkit navmesh:

1. **Raycast first.** Every update casts a walkability ray from the follower to
   the target (Detour's raycast, in xz). When it is clear the follower *seeks*
   the target directly and needs no path.
2. **Otherwise follow path points.** A path query (A* corridor + funnel) gives
   corner points; the follower seeks them one by one, dropping each when it is
   within ``waypoint_radius`` (xz), and *arrives* at the last one (slows down
   inside ``arrive_distance``).
3. **Replan sparingly.** The follower keeps the target's position at the last
   path query and that query's time; a new query is made only when the target
   has moved (more than ``move_tolerance``) *and* ``replan_interval`` seconds
   (default 0.5) have passed since the last one. The first query is immediate.
   :attr:`Follower.path_queries` and :attr:`Follower.query_times` count them.
4. **Stop and catch up.** Following stops when the target is within
   ``stop_distance`` (3D) and resumes only when it is farther than
   ``catch_up_distance`` (hysteresis, so the follower does not jitter at its
   stop distance).
5. **Ignoring height** (``ignore_height=True``). On a navmesh a ledge is a wall
   edge: the platform's polygons and the floor below are not linked, and the
   bake's erosion leaves a gap of about two agent radii between them in xz. The
   height-ignoring raycast continues past such an edge: it looks along the ray,
   up to ``ledge_gap`` beyond the hit, for a polygon surface *below* the
   current one by ``min_drop`` .. ``max_drop`` and casts on from there; walls
   between rooms at the same level (no drop) still block. When the ray is clear
   the follower seeks the target, reaches the edge, and drops onto the landing
   point in one update (the fall is instantaneous). It never climbs a ledge
   this way: a target above is reached by the path (the stairs).

Movement (standalone): the steering velocity changes by at most
``max_acceleration * dt`` per update and never exceeds ``max_speed``; the
position then follows :meth:`NavMeshQuery.move_along_surface` (so it never
leaves the navmesh) and takes the detail-surface height.

As a crowd agent (:meth:`Follower.attach`), the same decisions produce a
desired velocity that is handed to ``crowd.request_move_velocity`` each update;
the crowd then does avoidance, acceleration and the surface move (ledge drops
are not available there: the crowd keeps its agents on linked polygons).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from navkit import _check
from navkit.detour.filter import QueryFilter
from navkit.detour.query import NavMeshQuery
from navkit.errors import ConfigError, InputError

from .agents import _finite

__all__ = ["Follower", "FollowerParams", "FollowerStep"]


@dataclass(frozen=True)
class FollowerParams:
    """A follower's settings; lengths in wu, times in s.

    Attributes
    ----------
    max_speed : float
        [wu/s], > 0.
    max_acceleration : float
        [wu/s^2], > 0 (standalone movement; a crowd agent uses its own).
    stop_distance : float
        Following stops within this 3D distance of the target (>= 0).
    catch_up_distance : float
        Following resumes beyond this distance (>= stop_distance).
    arrive_distance : float
        Slow-down radius of the arrive behaviour (> 0).
    waypoint_radius : float
        A path point counts as reached within this xz distance (> 0).
    replan_interval : float
        Least time between two path queries [s] (>= 0; the post's 0.5 s).
    move_tolerance : float
        The target "moved" when it is farther than this from where it was at the
        last path query (>= 0).
    ignore_height : bool
        Raycast in xz across ledges (drops only; see the module docstring).
    min_drop, max_drop : float
        A ledge crossing lands this much lower than the edge (0 < min <= max).
    ledge_gap : float
        How far past a ledge edge (xz) the landing is searched (> 0).
    half_extents : tuple of 3 floats
        Box for locating the follower and the target on the navmesh.
    """

    max_speed: float = 3.5
    max_acceleration: float = 8.0
    stop_distance: float = 1.0
    catch_up_distance: float = 2.0
    arrive_distance: float = 2.0
    waypoint_radius: float = 0.3
    replan_interval: float = 0.5
    move_tolerance: float = 0.1
    ignore_height: bool = False
    min_drop: float = 0.5
    max_drop: float = 4.0
    ledge_gap: float = 2.0
    half_extents: tuple[float, float, float] = (2.0, 4.0, 2.0)

    def __post_init__(self) -> None:
        for name, lo in (
            ("max_speed", 1e-6), ("max_acceleration", 1e-6), ("stop_distance", 0.0),
            ("catch_up_distance", 0.0), ("arrive_distance", 1e-6), ("waypoint_radius", 1e-6),
            ("replan_interval", 0.0), ("move_tolerance", 0.0), ("min_drop", 1e-6),
            ("max_drop", 1e-6), ("ledge_gap", 1e-6),
        ):  # fmt: skip
            object.__setattr__(self, name, _finite(getattr(self, name), name, lo, 1e30))
        if self.catch_up_distance < self.stop_distance:
            raise ConfigError("catch_up_distance", "must be >= stop_distance")
        if self.max_drop < self.min_drop:
            raise ConfigError("max_drop", "must be >= min_drop")
        if not isinstance(self.ignore_height, bool | np.bool_):
            raise ConfigError("ignore_height", "must be True or False")
        h = tuple(self.half_extents)
        if len(h) != 3:
            raise ConfigError("half_extents", "must be 3 numbers")
        object.__setattr__(
            self, "half_extents", tuple(_finite(v, "half_extents", 0.0, 1e30) for v in h)
        )


class FollowerStep(NamedTuple):
    """What :meth:`Follower.update` returns."""

    position: np.ndarray  # (3,) float32 [wu] the follower after the update
    velocity: np.ndarray  # (3,) float32 [wu/s] steering velocity (y = 0)
    mode: str  # "direct", "path", "idle" or "lost" (target not on the navmesh)


class _Drop(NamedTuple):
    edge: np.ndarray  # (3,) where the ray left the upper polygon
    ref: int  # landing polygon
    landing: np.ndarray  # (3,) landing point


def _xz(a: np.ndarray, b: np.ndarray) -> float:
    dx = float(b[0]) - float(a[0])
    dz = float(b[2]) - float(a[2])
    return math.sqrt(dx * dx + dz * dz)


class Follower:
    """One actor chasing a (moving) target on a navmesh (see the module docstring).

    Parameters
    ----------
    navmesh : NavMesh or NavMeshQuery
        The navmesh (a query object of its own is made from a NavMesh).
    position : (3,) array_like of float
        Start [wu]; snapped to the nearest polygon within ``params.half_extents``.
    params : FollowerParams, optional
    filter : QueryFilter, optional

    Examples
    --------
    >>> f = Follower(navmesh, start)                       # doctest: +SKIP
    >>> step = f.update(1 / 60, target_position)           # doctest: +SKIP
    >>> step.position, step.velocity, step.mode            # doctest: +SKIP
    """

    def __init__(
        self, navmesh, position, params: FollowerParams | None = None, *,
        filter: QueryFilter | None = None,
    ) -> None:  # fmt: skip
        if isinstance(navmesh, NavMeshQuery):
            self.query = navmesh
        elif hasattr(navmesh, "arrays"):
            self.query = NavMeshQuery(navmesh)
        else:
            raise InputError("navmesh must be a navkit NavMesh or NavMeshQuery")
        if params is None:
            params = FollowerParams()
        if not isinstance(params, FollowerParams):
            raise InputError("params must be a FollowerParams")
        if filter is not None and not isinstance(filter, QueryFilter):
            raise InputError("filter must be a QueryFilter")
        self.params = params
        self.filter = filter
        self._ext = np.array(params.half_extents, np.float32)
        p = _check.point(position, "position")
        near = self.query.find_nearest_poly(p, self._ext, filter)
        if not near.ref:
            raise InputError(f"position {p.tolist()} is not on the navmesh")
        self.ref: int = int(near.ref)
        self.position: np.ndarray = near.point.astype(np.float32)
        self.velocity: np.ndarray = np.zeros(3, np.float32)
        self.time = 0.0
        self.following = True
        self.points: np.ndarray = np.zeros((0, 3), np.float32)  # path points still ahead
        self.path_queries = 0
        self.query_times: list[float] = []
        self.drops = 0  # ledge drops taken
        self._query_target: np.ndarray | None = None
        self._last_query: float | None = None
        self._seen: np.ndarray | None = None  # target position when the ray was last clear
        self._crowd = None
        self._handle = -1

    # -- crowd -----------------------------------------------------------------------------
    def attach(self, crowd, handle: int) -> Follower:
        """Drive crowd agent ``handle`` instead of moving by itself; returns self.

        From then on :meth:`update` reads the agent's position and polygon, makes
        the same decisions, and calls ``crowd.request_move_velocity(handle, v)``
        with the desired velocity; call ``crowd.update(dt)`` after it. The
        crowd's own max speed and acceleration apply to the agent.
        """
        s = crowd.slot(handle)  # StaleHandleError for a dead handle
        self._crowd = crowd
        self._handle = int(handle)
        self.position = crowd.positions[s].copy()
        self.ref = int(crowd.agents.c_path[s, 0])
        return self

    @property
    def attached(self) -> bool:
        return self._crowd is not None

    # -- update ----------------------------------------------------------------------------
    def update(self, dt: float, target_position) -> FollowerStep:
        """Advance by ``dt`` [s] chasing ``target_position`` (3,) [wu].

        Returns the new position (standalone) or the agent's current position
        (attached: the crowd moves it on its next update), the steering velocity
        and the mode used: "direct" (seek, the ray was clear), "path" (path
        points), "idle" (within the stop distance) or "lost" (the target is not
        on the navmesh; the follower slows to a stop).
        """
        dt = _check.real(dt, "dt", 0.0, 3600.0, lo_open=True, unit="s")
        tgt = _check.point(target_position, "target_position")
        self.time += dt
        pr = self.params
        if self._crowd is not None:
            s = self._crowd.slot(self._handle)
            self.position = self._crowd.positions[s].copy()
            self.ref = int(self._crowd.agents.c_path[s, 0])
            self.velocity = self._crowd.velocities[s].copy()
        near = self.query.find_nearest_poly(tgt, self._ext, self.filter)
        drop: _Drop | None = None
        if not near.ref:
            mode, desired = "lost", np.zeros(3, np.float32)
        else:
            tpos = near.point
            d = float(np.linalg.norm(tpos.astype(np.float64) - self.position))
            if self.following and d <= pr.stop_distance:
                self.following = False
            elif not self.following and d > pr.catch_up_distance:
                self.following = True
            if not self.following:
                mode, desired = "idle", np.zeros(3, np.float32)
            else:
                mode, desired, drop = self._decide(tpos, int(near.ref), d)
        if self._crowd is not None:
            self._crowd.request_move_velocity(self._handle, desired)
            return FollowerStep(self.position.copy(), desired, mode)
        self._steer(desired, dt)
        self._move(dt, drop)
        return FollowerStep(self.position.copy(), self.velocity.copy(), mode)

    def _decide(self, tpos: np.ndarray, tref: int, dist: float):
        """(mode, desired velocity, ledge drop or None) while following."""
        pr = self.params
        clear, drops = self._ray(self.ref, self.position, tpos)
        if clear:
            self._seen = tpos.copy()
            return (
                "direct",
                self._arrive(tpos, dist - self._stop_at()),
                (drops[0] if drops else None),
            )
        qt = self._query_target
        moved = (
            qt is None
            or _xz(qt, tpos) > pr.move_tolerance
            or abs(float(qt[1]) - float(tpos[1])) > pr.move_tolerance
        )
        due = self._last_query is None or self.time - self._last_query >= pr.replan_interval - 1e-9
        if due and (moved or self.points.shape[0] == 0):
            self._replan(tpos, tref)
        # drop the points already reached
        pts = self.points
        while pts.shape[0] and _xz(self.position, pts[0]) <= pr.waypoint_radius:
            pts = pts[1:]
        self.points = pts
        if pts.shape[0] > 1:
            return "path", self._seek(pts[0]), None
        if pts.shape[0] == 1:
            last = pts[0]
            # the last point is the target's position at the query: arrive there
            slack = self._stop_at() if _xz(last, tpos) <= pr.move_tolerance else 0.0
            return "path", self._arrive(last, _xz(self.position, last) - slack), None
        if self._seen is not None:  # nothing to follow yet: go where the target was seen
            return "path", self._arrive(self._seen, _xz(self.position, self._seen)), None
        return "path", np.zeros(3, np.float32), None

    def _replan(self, tpos: np.ndarray, tref: int) -> None:
        q = self.query
        self.path_queries += 1
        self.query_times.append(self.time)
        self._last_query = self.time
        self._query_target = tpos.copy()
        cor = q.find_path(self.ref, tref, self.position, tpos, self.filter, max_path=1024)
        if not cor.ok or cor.polys.shape[0] == 0:
            self.points = np.zeros((0, 3), np.float32)
            return
        end = tpos
        if int(cor.polys[-1]) != tref:  # partial: go to the nearest reachable point
            end, _ = q.closest_point_on_poly(int(cor.polys[-1]), tpos)
        sp = q.find_straight_path(self.position, end, cor.polys, max_points=1024)
        pts = sp.points
        if pts.shape[0] and _xz(pts[0], self.position) <= 1e-4:
            pts = pts[1:]  # the start point itself
        self.points = pts.astype(np.float32)

    def _stop_at(self) -> float:
        """Where the arrive behaviour aims: a little inside the stop distance, so
        that the slowing follower crosses it (and stops) in finite time."""
        return max(0.0, self.params.stop_distance - 0.5 * self.params.waypoint_radius)

    def _seek(self, goal: np.ndarray) -> np.ndarray:
        d = _xz(self.position, goal)
        v = np.zeros(3, np.float32)
        if d > 1e-6:
            k = self.params.max_speed / d
            v[0] = (float(goal[0]) - float(self.position[0])) * k
            v[2] = (float(goal[2]) - float(self.position[2])) * k
        return v

    def _arrive(self, goal: np.ndarray, remaining: float) -> np.ndarray:
        """Seek ``goal`` at a speed scaled down linearly inside ``arrive_distance``
        of the point where the follower should stop (``remaining`` ahead)."""
        v = self._seek(goal)
        scale = min(1.0, max(0.0, remaining) / self.params.arrive_distance)
        return (v * np.float32(scale)).astype(np.float32)

    # -- movement (standalone) -------------------------------------------------------------
    def _steer(self, desired: np.ndarray, dt: float) -> None:
        pr = self.params
        dv = desired.astype(np.float64) - self.velocity
        dv[1] = 0.0
        n = float(np.linalg.norm(dv))
        cap = pr.max_acceleration * dt
        if n > cap:
            dv *= cap / n
        v = self.velocity + dv
        v[1] = 0.0
        sp = float(np.linalg.norm(v))
        if sp > pr.max_speed:
            v *= pr.max_speed / sp
        self.velocity = v.astype(np.float32)

    def _move(self, dt: float, drop: _Drop | None) -> None:
        q = self.query
        want = (self.position + self.velocity * np.float32(dt)).astype(np.float32)
        res = q.move_along_surface(self.ref, self.position, want, self.filter, max_visited=32)
        pos = res.position
        ref = int(res.visited[-1]) if res.visited.shape[0] else self.ref
        if (
            drop is not None
            and _xz(pos, want) > 1e-4
            and _xz(pos, drop.edge) <= _xz(self.position, want) + 0.05
        ):
            # blocked at the ledge the clear height-ignoring ray goes over: drop
            self.ref, self.position = drop.ref, drop.landing.astype(np.float32)
            self.drops += 1
            return
        h = q.get_poly_height(ref, pos)
        if h is not None:
            pos[1] = h
        self.ref, self.position = ref, pos

    # -- the raycast -----------------------------------------------------------------------
    def _ray(self, ref: int, start: np.ndarray, end: np.ndarray) -> tuple[bool, list[_Drop]]:
        """Whether the walkability ray start -> end is clear, and the ledges it drops
        over (with ``ignore_height``; otherwise Detour's raycast as is)."""
        q, pr = self.query, self.params
        drops: list[_Drop] = []
        cur_ref, cur = ref, start.astype(np.float32)
        e = end.astype(np.float32)
        for _ in range(8):
            hit = q.raycast(cur_ref, cur, e, self.filter)
            if not hit.hit:
                return True, drops
            if not pr.ignore_height:
                return False, drops
            land = self._landing(cur, e, float(hit.t), float(cur[1]))
            if land is None:
                return False, drops
            drops.append(land)
            cur_ref, cur = land.ref, land.landing
        return False, drops

    def _landing(self, s: np.ndarray, e: np.ndarray, t: float, y: float) -> _Drop | None:
        """The first polygon surface past the ray's wall hit (within ``ledge_gap``,
        xz) that lies ``min_drop`` .. ``max_drop`` below height ``y``."""
        q, pr = self.query, self.params
        dx, dz = float(e[0]) - float(s[0]), float(e[2]) - float(s[2])
        length = math.sqrt(dx * dx + dz * dz)
        if length <= 1e-6:
            return None
        ux, uz = dx / length, dz / length
        hx, hz = float(s[0]) + dx * t, float(s[2]) + dz * t
        edge = np.array([hx, y, hz], np.float32)
        half = 0.5 * (pr.max_drop - pr.min_drop)
        mid = y - pr.min_drop - half
        step = 0.1
        k = 1
        while k * step <= pr.ledge_gap and k * step <= length * (1.0 - t) + step:
            px, pz = hx + ux * k * step, hz + uz * k * step
            refs, _ = q.query_polygons(
                (px, mid, pz), (0.01, half + 0.01, 0.01), self.filter, max_polys=16
            )
            best, best_h = 0, -math.inf
            probe = np.array([px, mid, pz], np.float32)
            for r in refs.tolist():
                h = q.get_poly_height(int(r), probe)
                if h is not None and y - pr.max_drop <= h <= y - pr.min_drop and h > best_h:
                    best, best_h = int(r), h
            if best:
                return _Drop(edge, best, np.array([px, best_h, pz], np.float32))
            k += 1
        return None

    # -- info ------------------------------------------------------------------------------
    def reset_path(self) -> None:
        """Forget the path points (the next blocked update may query at once if due)."""
        self.points = np.zeros((0, 3), np.float32)

    def __repr__(self) -> str:
        where = "attached" if self._crowd is not None else "standalone"
        return (
            f"Follower({where}, position={self.position.round(2).tolist()}, "
            f"path_queries={self.path_queries}, drops={self.drops})"
        )
