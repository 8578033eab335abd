"""Movement requests with callbacks and pollable states for a :class:`~navkit.crowd.Crowd`.

A :class:`RequestTracker` keeps, per agent slot, the request the user made
(target, callbacks) and its status. After each :meth:`Crowd.update` (after
all phases, never inside a kernel) it compares the agents' state arrays with
what it saw last and reports events, in agent-slot order:

``"result"``
    The path query answered: the target state went from requesting/waiting to
    valid. ``on_result(handle, path)`` gets the corridor's polygon refs
    (int64 array); returning ``False`` on a *partial* path refuses it (the
    target is reset, status ``"failed"``). Replans after disturbances do not
    fire it again.
``"blocked"``
    The target state became FAILED, or the crowd dropped the target itself
    (its polygon became invalid and no polygon lies near the target): the
    disturbance cannot be fixed locally. ``on_blocked(handle)`` returning
    ``True`` re-targets the agent at the furthest reachable point (the closest
    point to the original target on the last polygon of a partial A* path
    from the agent); otherwise the target is reset (status ``"blocked"``).
``"done"``
    Arrival: the agent's target is valid, its last steering corner carries
    Detour's DT_STRAIGHTPATH_END flag (the corridor ends there) and the agent
    is within its *arrival distance* ``max(radius / 4, 0.5)`` wu of it,
    measured in xz (Detour's dtVdist2D). ``on_done(handle)`` returning
    ``True`` keeps the request alive (e.g. a moving target the caller keeps
    re-requesting); the event re-arms once the agent is farther than the
    arrival distance again. Otherwise the target is reset and the request ends.

In ``mode="navkit"`` with replanning (:mod:`navkit.crowd.replan`), a disturbance
that the replanner cannot fix (a polygon ahead became invalid and no complete
route remains) also fires ``"blocked"`` while the target stays valid: the agent
walks to the end of the valid part of its corridor and waits there, retrying.
``on_blocked`` returning ``True`` (or no ``on_blocked``) keeps it so, and when a
route opens it goes on (status back to ``"moving"``); anything else resets the
target. ``"done"`` does not fire while the agent so waits. A partial path (from the
start) still ends with ``"done"``; as long as the request lives (no ``on_done``,
or ``on_done`` returning ``True``) the replanner keeps retrying it and the agent
moves on when a route to the target opens.

Without callbacks nothing is changed in the crowd (so dtCrowd-identical runs
stay identical); statuses and :meth:`Crowd.events` are still tracked.
Statuses: ``"none"``, ``"pending"``, ``"moving"``, ``"partial"``,
``"blocked"``, ``"done"``, ``"failed"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from navkit._jit import entry_call, njit
from navkit.detour.query import STRAIGHTPATH_END
from navkit.errors import InputError, QueryError, StaleHandleError

from .agents import (
    TARGET_FAILED,
    TARGET_NONE,
    TARGET_REQUESTING,
    TARGET_VALID,
    TARGET_WAITING_FOR_PATH,
    TARGET_WAITING_FOR_QUEUE,
)  # fmt: skip
from .step import _plain_opener, pack

if TYPE_CHECKING:
    from .crowd import Crowd

__all__ = ["RequestTracker", "STATUSES", "EVENTS", "ARRIVAL_MIN", "ARRIVAL_RADIUS_FRACTION"]

STATUSES = ("none", "pending", "moving", "partial", "blocked", "done", "failed")
EVENTS = ("result", "blocked", "done")
ARRIVAL_MIN = 0.5  # [wu]
ARRIVAL_RADIUS_FRACTION = 0.25
_END = int(STRAIGHTPATH_END)

_PENDING = (TARGET_REQUESTING, TARGET_WAITING_FOR_QUEUE, TARGET_WAITING_FOR_PATH)


class _Request:
    """One request. ``prev``, ``result_fired`` and ``done_armed`` live in the tracker's
    per-slot arrays, so that :meth:`RequestTracker.after_update` can find the quiet
    slots with numpy."""

    __slots__ = (
        "handle", "on_result", "on_blocked", "on_done", "status", "ref", "pos", "fallback",
        "_t", "_s",
    )  # fmt: skip

    def __init__(
        self, tracker: RequestTracker, s: int, handle: int, ref: int, pos: np.ndarray, cbs: tuple
    ) -> None:
        self._t = tracker
        self._s = s
        self.handle = handle
        self.on_result, self.on_blocked, self.on_done = cbs
        self.status = "pending"
        self.result_fired = False
        self.done_armed = True
        self.prev = TARGET_REQUESTING
        self.ref = ref
        self.pos = pos.copy()
        self.fallback = False  # heading to the furthest valid point after on_blocked

    @property
    def prev(self) -> int:
        return int(self._t.prev[self._s])

    @prev.setter
    def prev(self, v: int) -> None:
        self._t.prev[self._s] = v

    @property
    def result_fired(self) -> bool:
        return bool(self._t.fired[self._s])

    @result_fired.setter
    def result_fired(self, v: bool) -> None:
        self._t.fired[self._s] = v

    @property
    def done_armed(self) -> bool:
        return bool(self._t.armed[self._s])

    @done_armed.setter
    def done_armed(self, v: bool) -> None:
        self._t.armed[self._s] = v


def _check_callback(cb: Any, name: str) -> Callable | None:
    if cb is not None and not callable(cb):
        raise InputError(f"{name} must be callable or None, got {type(cb).__name__}")
    return cb


class RequestTracker:
    """Per-slot request bookkeeping of one crowd (see the module docstring)."""

    def __init__(self, crowd: Crowd) -> None:
        self.crowd = crowd
        self.req: list[_Request | None] = [None] * crowd.max_agents
        self.status: list[str] = ["none"] * crowd.max_agents
        self.events: list[tuple[int, str]] = []
        n = crowd.max_agents
        self.prev = np.zeros(n, np.int8)  # target state seen at the last update
        self.fired = np.zeros(n, np.bool_)  # "result" fired
        self.armed = np.zeros(n, np.bool_)  # "done" may fire
        self._called = False  # a callback ran during this after_update
        self._out = np.zeros(n, np.int64)  # _loud's slots
        self._desc: np.ndarray | None = None  # _loud's descriptor (the arrays never change)
        self._desc_arrays: tuple = ()

    @staticmethod
    def check_callbacks(on_result, on_blocked, on_done) -> tuple:
        return (
            _check_callback(on_result, "on_result"),
            _check_callback(on_blocked, "on_blocked"),
            _check_callback(on_done, "on_done"),
        )

    # -- hooks called by Crowd -------------------------------------------------------------
    def on_target(self, s: int, ref: int, pos: np.ndarray, cbs: tuple) -> None:
        self.req[s] = _Request(self, s, self.crowd.agents.handle(s), ref, pos, cbs)
        self.status[s] = "pending"

    def on_velocity(self, s: int) -> None:
        self.req[s] = None
        self.status[s] = "moving"

    def on_reset(self, s: int) -> None:
        self.req[s] = None
        self.status[s] = "none"

    def arrival_distance(self, s: int) -> float:
        return max(float(self.crowd.agents.radius[s]) * ARRIVAL_RADIUS_FRACTION, ARRIVAL_MIN)

    def _arrived(self, s: int) -> bool:
        a = self.crowd.agents
        rp = self.crowd._replan
        if rp is not None and rp.blocked[s]:  # [replan] waiting at a blocked route's end
            return False
        n = int(a.ncorners[s])
        if n <= 0 or not (int(a.corner_flags[s, n - 1]) & STRAIGHTPATH_END):
            return False
        d = a.corner_verts[s, n - 1] - a.npos[s]
        return float(np.hypot(d[0], d[2])) <= self.arrival_distance(s)

    def _arrived_all(self) -> np.ndarray:
        """:meth:`_arrived` of every slot, (max_agents,) bool (same float32 / float64 steps)."""
        a = self.crowd.agents
        rows = np.arange(a.n)
        last = np.maximum(a.ncorners - 1, 0)
        end = (a.ncorners > 0) & ((a.corner_flags[rows, last] & STRAIGHTPATH_END) != 0)
        d = a.corner_verts[rows, last] - a.npos
        dist = np.hypot(d[:, 0], d[:, 2])
        reach = np.maximum(a.radius.astype(np.float64) * ARRIVAL_RADIUS_FRACTION, ARRIVAL_MIN)
        return end & (dist <= reach)

    def _quiet(self) -> np.ndarray:
        """Slots whose request cannot change or fire anything in this update: target
        state unchanged and pending, or valid with its result fired and its arrival
        unchanged, or any other state (no new block)."""
        a = self.crowd.agents
        quiet = np.empty(a.n, np.bool_)
        _quiet_kernel(
            a.active, a.target_state, self.prev, self.fired, self.armed, a.ncorners,
            a.corner_flags, a.corner_verts, a.npos, a.radius, quiet,
        )  # fmt: skip
        rp = self.crowd._replan
        if rp is not None:  # [replan] a blocked event to fire, or a block that ended
            quiet &= ~rp.blocked_event & (rp.blocked | ~self._blocked_status())
        return quiet

    def _blocked_status(self) -> np.ndarray:
        """(max_agents,) bool: the slots whose request status reads "blocked"."""
        return np.array([st == "blocked" for st in self.status], np.bool_)

    def _loud(self) -> list[int]:
        """The slots that are not quiet (:meth:`_quiet`), in slot order. Without the
        navkit-mode terms: one call of :func:`_loud_desc` on the tracker's descriptor
        (one array to unbox instead of eleven, no mask to allocate and invert)."""
        if self.crowd._replan is not None:
            return np.flatnonzero(~self._quiet()).tolist()
        d = self._desc
        if d is None:
            a = self.crowd.agents
            arrays = (
                a.active, a.target_state, self.prev, self.fired, self.armed, a.ncorners,
                a.corner_flags, a.corner_verts, a.npos, a.radius, self._out,
            )  # fmt: skip
            d = self._desc = pack(arrays, _LOUD_SPEC)
            self._desc_arrays = arrays  # (the descriptor holds their addresses only)
        n = entry_call(_loud_desc, d)
        return self._out[:n].tolist() if n else []

    def _slots(self):
        """The slots to visit: those holding a request and not quiet, in slot order; once
        a callback has run (it may change any agent), every later slot holding a
        request, read lazily (a request made by a callback for a later slot is seen)."""
        n = self.crowd.max_agents
        last = -1
        for s in self._loud():
            if self._called:
                break
            last = s
            if self.req[s] is not None:
                yield s
        else:
            if not self._called:
                return
        t = last + 1
        while t < n:
            if self.req[t] is not None:
                yield t
            t += 1

    # -- after update ----------------------------------------------------------------------
    def after_update(self) -> None:
        """Detect and fire this update's events in slot order (called after all phases)."""
        crowd, a = self.crowd, self.crowd.agents
        self.events = []
        self._called = False
        for s in self._slots():
            r = self.req[s]
            if r is None:
                continue
            if not a.active[s] or a.handle(s) != r.handle:
                self.req[s] = None
                self.status[s] = "none"
                continue
            ts = int(a.target_state[s])
            prev, r.prev = r.prev, ts
            if ts in _PENDING:
                continue
            if ts == TARGET_VALID and not r.result_fired:
                r.result_fired = True
                partial = bool(a.partial[s])
                self.status[s] = "partial" if partial else "moving"
                self.events.append((r.handle, "result"))
                if r.on_result is not None and not r.fallback:
                    self._called = True
                    path = a.c_path[s, : int(a.c_npath[s])].copy()
                    ok = r.on_result(r.handle, path)
                    if self.req[s] is not r:  # the callback made a new request
                        continue
                    if partial and ok is False:
                        crowd._reset(s)
                        self.req[s] = None
                        self.status[s] = "failed"
                        continue
            rp = crowd._replan
            if ts == TARGET_VALID and rp is not None and rp.take_blocked(s):  # [replan]
                self.events.append((r.handle, "blocked"))
                self.status[s] = "blocked"
                keep = r.on_blocked(r.handle) if r.on_blocked is not None else True
                if self.req[s] is not r:
                    continue
                if keep is not True:
                    crowd._reset(s)
                    self.req[s] = None
                continue
            if ts == TARGET_VALID:
                if rp is not None and self.status[s] == "blocked" and not rp.blocked[s]:
                    self.status[s] = "partial" if a.partial[s] else "moving"  # [replan]
                if self._arrived(s):
                    if r.done_armed:
                        r.done_armed = False
                        self.status[s] = "done"
                        self.events.append((r.handle, "done"))
                        if r.on_done is not None:
                            self._called = True
                            keep = r.on_done(r.handle)
                            if self.req[s] is not r:
                                continue
                            if keep is not True:
                                crowd._reset(s)
                                self.req[s] = None
                else:
                    r.done_armed = True
                    if self.status[s] == "done":
                        self.status[s] = "partial" if a.partial[s] else "moving"
                continue
            blocked = (ts == TARGET_FAILED and prev != TARGET_FAILED) or (
                ts == TARGET_NONE and prev != TARGET_NONE
            )
            if not blocked:
                continue
            self.events.append((r.handle, "blocked"))
            self.status[s] = "blocked"
            if r.fallback:  # the furthest valid point failed too: give up
                self.status[s] = "failed"
                crowd._reset(s)
                self.req[s] = None
                continue
            if r.on_blocked is not None:
                self._called = True
            keep = r.on_blocked(r.handle) if r.on_blocked is not None else None
            if self.req[s] is not r:
                continue
            if keep is True and self._retarget_furthest(s, r):
                continue
            if r.on_blocked is not None:
                crowd._reset(s)
                self.req[s] = None

    def _retarget_furthest(self, s: int, r: _Request) -> bool:
        """Send the agent to the point nearest its target that it can still reach."""
        crowd, a = self.crowd, self.crowd.agents
        q = crowd.query
        flt = crowd.filters[int(a.query_filter[s])]
        start = int(a.c_path[s, 0])
        if not q.is_valid_poly_ref(start, flt):
            return False
        try:
            pc = q.find_path(start, r.ref, a.npos[s], r.pos, flt)
        except (StaleHandleError, InputError, QueryError):  # target polygon is gone
            return False
        if pc.polys.shape[0] == 0:
            return False
        last = int(pc.polys[-1])
        point, _ = q.closest_point_on_poly(last, r.pos)
        crowd._set_target(s, last, point, False)
        r.fallback = True
        r.result_fired = False
        r.done_armed = True
        r.prev = TARGET_REQUESTING
        self.status[s] = "pending"
        return True


@njit(inline="always")
def _quiet_at(s, active, ts, prev, fired, armed, ncorners, corner_flags, corner_verts, npos,
              radius):  # fmt: skip
    """Whether slot s is quiet (:meth:`RequestTracker._quiet` without the navkit-mode
    terms): the arrival test as :meth:`RequestTracker._arrived_all` (float32
    difference, its hypot as glibc's hypotf: the double sqrt rounded to float32,
    compared in float64)."""
    t = ts[s]
    nc = ncorners[s]
    last = nc - 1 if nc > 0 else 0
    arrived = False
    if nc > 0 and (corner_flags[s, last] & _END) != 0:
        dx = np.float64(corner_verts[s, last, 0] - npos[s, 0])
        dz = np.float64(corner_verts[s, last, 2] - npos[s, 2])
        dist = np.float64(np.float32(np.sqrt(dx * dx + dz * dz)))
        reach = max(np.float64(radius[s]) * ARRIVAL_RADIUS_FRACTION, ARRIVAL_MIN)
        arrived = dist <= reach
    pending = t == 3 or t == 4 or t == 5
    valid = t == 2
    calm = fired[s] and (arrived != armed[s])
    return active[s] and t == prev[s] and (pending or (valid and calm) or not (valid or pending))


@njit
def _quiet_kernel(active, ts, prev, fired, armed, ncorners, corner_flags, corner_verts, npos,
                  radius, quiet):  # fmt: skip
    """:meth:`RequestTracker._quiet` without the navkit-mode terms, into ``quiet``."""
    for s in range(quiet.shape[0]):
        quiet[s] = _quiet_at(
            s, active, ts, prev, fired, armed, ncorners, corner_flags, corner_verts, npos, radius
        )


#: :func:`_loud_desc`'s arrays in its descriptor (:func:`navkit.crowd.step.pack`)
_LOUD_SPEC = (
    ("active", "b1", 1), ("target_state", "i1", 1), ("prev", "i1", 1), ("fired", "b1", 1),
    ("armed", "b1", 1), ("ncorners", "i4", 1), ("corner_flags", "u1", 2),
    ("corner_verts", "f4", 3), ("npos", "f4", 2), ("radius", "f4", 1), ("out", "i8", 1),
)  # fmt: skip
_open_loud = _plain_opener(_LOUD_SPEC)


@njit
def _loud_desc(d):
    """The slots that are not quiet (:func:`_quiet_kernel`'s test) into ``out`` in slot
    order; returns their count. Arrays from the descriptor ``d`` (:data:`_LOUD_SPEC`)."""
    (active, ts, prev, fired, armed, ncorners, corner_flags, corner_verts, npos, radius,
     out) = _open_loud(d)  # fmt: skip
    k = 0
    for s in range(active.shape[0]):
        if not _quiet_at(
            s, active, ts, prev, fired, armed, ncorners, corner_flags, corner_verts, npos, radius
        ):  # fmt: skip
            out[k] = s
            k += 1
    return k
