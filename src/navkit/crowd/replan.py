"""Replanning and budgeted path requests: the crowd's ``mode="navkit"``.

dtCrowd (``mode="dtcrowd"``) checks the first 10 polygons of each corridor every
update and, when one is no longer valid, throws the corridor away and plans again
from the agent (a 20-iteration quick search, then the path queue). A path that
ended short of its target is retried only in its last 10 polygons, after 1 s.
Every requesting agent gets its quick search in the same update, however many.

:class:`Replanner` does what Mikko Mononen's posts on path replanning and
movement requests (2011-2012) argue for instead:

Look ahead
    Every update, each walking agent's corridor is checked ``lookahead`` polygons
    ahead (default 10): a polygon is invalid when its ref no longer names a
    polygon (its tile was rebuilt or removed: the salt changed) or its flags no
    longer pass the agent's filter. The agent's own polygon only needs to exist
    (someone standing in a doorway when the door closes walks out of it).
    Agents marked by :meth:`Replanner.mark` (tile-cache change events,
    :meth:`navkit.Crowd.attach`) have their whole corridor checked.
Local repair, favouring the corridor
    For the first invalid polygon ``path[k]``, a small A* (``repair_iterations``,
    default 64) runs from the last valid polygon before it to the first valid
    corridor polygon after the invalid run (or to the target). When it arrives,
    the detour is spliced into the corridor and everything else is kept: a change
    near the agent is fixed at once, a change far ahead changes nothing the agent
    steers by (its next corners lie in the untouched prefix).
Full replan, and "blocked"
    When the local search fails, the corridor is cut to its valid prefix (the
    agent keeps walking to the furthest valid position) and the path queue plans
    from the prefix's end to the target. A complete route is spliced in. A
    partial one means the disturbance cannot be fixed: the agent keeps the valid
    prefix (it does not switch to a partial route elsewhere), the request is
    reported ``blocked`` (``on_blocked``; see :mod:`navkit.crowd.requests`) and
    the agent waits at the end of the prefix, retrying.
Partial paths retry
    A corridor that ends short of the target is replanned from the agent every
    ``retry_interval`` s (default 1.5, +- ``retry_jitter`` 0.5 s, seeded so runs
    repeat), and immediately after any :meth:`mark` (a tile changed somewhere).
    A retry is taken only when it reaches the target.
No flicker
    Routes are left only when forced (a polygon ahead became invalid) or for a
    complete route replacing a partial one, never for a "better" partial one;
    an agent blocked at a closed door therefore waits at the door instead of
    flickering between the door and the point nearest the goal. After each route
    switch the agent's topology optimisation is held off for ``commit_time`` s
    (default 3) so that a door that opens and closes does not pull it back and
    forth either. :attr:`Replanner.route_switches` counts the switches.
Iteration budget
    All A* iterations of one update (local repairs, the quick searches of new
    requests, the path queue) share ``max_iterations_per_update`` (default 1000).
    Repairs and quick searches may use all but a quarter of it, the path queue
    gets the rest; a quick search is charged at least ``quick_iterations`` (20),
    so at most ``3/4 * budget / quick_iterations`` new requests start per update
    and the others wait, whatever their number. :attr:`Replanner.iterations`
    holds the last update's count per kind. (dtCrowd's topology optimisation,
    one 32-iteration search per update, is outside the budget, as in dtCrowd.)

With ``replanning=False`` in ``mode="navkit"`` only the budget applies and the
validity checks are dtCrowd's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from navkit import _check
from navkit._jit import borrow, njit
from navkit.detour._portal import _passes, passes
from navkit.detour._view import open_view, poly_index
from navkit.detour.query import FAILURE, PARTIAL_RESULT, SUCCESS
from navkit.errors import InputError, StaleHandleError

from . import corridor as cor
from .agents import (
    MAX_PATH,
    STATE_INVALID,
    STATE_WALKING,
    TARGET_FAILED,
    TARGET_NONE,
    TARGET_REQUESTING,
    TARGET_VALID,
    TARGET_VELOCITY,
    TARGET_WAITING_FOR_PATH,
    TARGET_WAITING_FOR_QUEUE,
)  # fmt: skip
from .path_queue import PATHQ_INVALID

if TYPE_CHECKING:
    from .crowd import Crowd

__all__ = ["Replanner", "MODES", "NONE", "REPAIR", "RETRY"]

MODES = ("dtcrowd", "navkit")
F = np.float32

# pending work of an agent (Replanner.pending)
NONE = 0
REPAIR = 1  # the corridor was cut at an invalid polygon; the queue plans the rest
RETRY = 2  # a partial corridor asks the queue for a complete route

# scan codes
_OK = 0
_SLOW = 1  # the agent's polygon is gone or the target polygon is invalid
_BROKEN = 2  # a polygon ahead is invalid (first_bad holds its index)
_PARTIAL = 3  # valid corridor ending short of the target
_RESTART = 4  # a request in progress whose corridor broke: dtCrowd's replan

_QUICK_RESULT = 32  # dtCrowd's quick-search path length
_PATH_MAX_AGENTS = 8


@njit(inline="always")
def _valid(nav, flt, ref):
    p = poly_index(nav, ref)
    return p >= 0 and passes(flt, p, nav)


@njit(cache=True)
def scan_kernel(d, flags_table, act, walking, qfilter, target_state, target_ref, replan_time,
                c_path, c_npath, lookahead, marked, dt, code, first_bad):  # fmt: skip
    """Check every walking agent's corridor (see the module docstring); fills
    ``code`` (int8) and ``first_bad`` (int32) per slot and adds dt to the
    agents' replan timers."""
    nav = open_view(d)
    (flags_table, act, walking, qfilter, target_state, target_ref, replan_time, c_path, c_npath,
     marked, code, first_bad) = borrow((flags_table, act, walking, qfilter, target_state,
                                        target_ref, replan_time, c_path, c_npath, marked, code,
                                        first_bad))  # fmt: skip
    # the flags array read once: nav.poly_flags inside the loop (directly or through
    # passes()) costs ~100 ns a polygon, 30x the check itself (measured)
    pf = nav.poly_flags
    for i in range(act.shape[0]):
        s = act[i]
        code[s] = _OK
        first_bad[s] = -1
        if not walking[s]:
            continue
        replan_time[s] += dt
        flt = flags_table[qfilter[s]]
        if poly_index(nav, c_path[s, 0]) < 0:
            code[s] = _SLOW
            continue
        ts = target_state[s]
        if ts == 0 or ts == 6 or ts == 1:  # NONE, VELOCITY, FAILED
            continue
        p = poly_index(nav, target_ref[s])
        if p < 0 or not _passes(flt, pf, p):
            code[s] = _SLOW
            continue
        npath = c_npath[s]
        n = npath if marked[s] else min(npath, lookahead)
        for j in range(1, n):
            p = poly_index(nav, c_path[s, j])
            if p < 0 or not _passes(flt, pf, p):
                first_bad[s] = j
                break
        if first_bad[s] >= 0:
            code[s] = _BROKEN if ts == 2 else _RESTART
        elif ts == 2 and c_path[s, npath - 1] != target_ref[s]:
            code[s] = _PARTIAL


@njit(cache=True)
def _first_valid(d, flt, path, npath, k):
    """Index of the first valid polygon of path[k:npath] (npath when none)."""
    nav = open_view(d)
    j = k
    while j < npath and not _valid(nav, flt, path[j]):
        j += 1
    return j


@njit(cache=True)
def _first_invalid(d, flt, path, npath, k):
    """Index of the first invalid polygon of path[k:npath] (npath when none)."""
    nav = open_view(d)
    j = k
    while j < npath and _valid(nav, flt, path[j]):
        j += 1
    return j


def _deloop(res: list[int]) -> list[int]:
    """Remove A-B-A back-and-forths, as dtCrowd does when it merges a queue result."""
    j = 0
    while j < len(res):
        if j - 1 >= 0 and j + 1 < len(res) and res[j - 1] == res[j + 1]:
            del res[j - 1 : j + 1]
            j -= 2
        j += 1
    return res


class Replanner:
    """navkit's replanning and request budget for one :class:`~navkit.crowd.Crowd`.

    Created by ``Crowd(..., mode="navkit")``; see the module docstring for what it
    does and :class:`navkit.Crowd` for the parameters.

    Attributes
    ----------
    pending : (max_agents,) int8
        NONE, REPAIR (waiting for the queue after a failed local repair) or RETRY.
    replans : (max_agents,) int64
        Replans per slot since the agent was added: local repairs and full
        replans after a disturbance (not retries of partial paths).
    local_fixes : (max_agents,) int64
        Of which fixed by the local search.
    route_switches : (max_agents,) int64
        Corridors replaced by a replan (repair or retry) since the agent was added.
    blocked : (max_agents,) bool
        The agent waits at the end of its valid prefix after an unfixable disturbance.
    iterations : dict of str to int
        A* iterations of the last update: "repair", "quick", "queue".
    requests_started : int
        Quick searches run in the last update.
    """

    def __init__(
        self,
        crowd: Crowd,
        *,
        replanning: bool = True,
        lookahead: int = 10,
        max_iterations_per_update: int = 1000,
        quick_iterations: int = 20,
        repair_iterations: int = 64,
        retry_interval: float = 1.5,
        retry_jitter: float = 0.5,
        commit_time: float = 3.0,
        seed: int = 0,
    ) -> None:
        if not isinstance(replanning, (bool, np.bool_)):
            raise InputError(f"replanning must be True or False, got {replanning!r}")
        self.crowd = crowd
        self.replanning = bool(replanning)
        self.lookahead = _check.integer(lookahead, "lookahead", 1, MAX_PATH)
        self.budget = _check.integer(
            max_iterations_per_update, "max_iterations_per_update", 8, 1 << 30
        )
        self.quick_iterations = _check.integer(quick_iterations, "quick_iterations", 1, 1 << 20)
        self.repair_iterations = _check.integer(repair_iterations, "repair_iterations", 1, 1 << 20)
        self.retry_interval = F(_check.real(retry_interval, "retry_interval", 0.0, unit="s"))
        self.retry_jitter = F(
            _check.real(retry_jitter, "retry_jitter", 0.0, float(self.retry_interval), unit="s")
        )
        self.commit_time = F(_check.real(commit_time, "commit_time", 0.0, unit="s"))
        self.reserve = max(1, self.budget // 4)  # iterations kept for the path queue
        n = crowd.max_agents
        self._rng = np.random.default_rng(_check.integer(seed, "seed", 0, 2**63 - 1))
        self.pending = np.zeros(n, np.int8)
        self.pq_ref = np.zeros(n, np.int64)
        self.was_complete = np.zeros(n, np.bool_)
        self.marked = np.zeros(n, np.bool_)
        self.retry_timer = np.zeros(n, np.float32)
        self.retry_at = np.zeros(n, np.float32)
        self.blocked = np.zeros(n, np.bool_)
        self.blocked_event = np.zeros(n, np.bool_)
        self.replans = np.zeros(n, np.int64)
        self.local_fixes = np.zeros(n, np.int64)
        self.route_switches = np.zeros(n, np.int64)
        self._owner = np.full(n, -1, np.int64)  # handle the per-slot state belongs to
        self._code = np.zeros(n, np.int8)
        self._first_bad = np.zeros(n, np.int32)
        self.iterations = {"repair": 0, "quick": 0, "queue": 0}
        self.requests_started = 0
        self._spent = 0

    # -- events ---------------------------------------------------------------------------
    def mark(self, refs: Any) -> np.ndarray:
        """Mark the agents whose corridor or target holds one of ``refs`` (poly refs
        that changed: rebuilt or removed tiles, changed flags): their whole corridor
        is checked in the next update. Partial corridors retry soon after any mark.

        Returns
        -------
        (k,) int64
            The marked slots.
        """
        try:
            r = np.asarray(refs, dtype=np.int64).ravel()
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"polys must be poly refs (ints), got {refs!r}") from None
        a = self.crowd.agents
        if r.size == 0:
            return np.zeros(0, np.int64)
        act = np.flatnonzero(a.active)
        cols = np.arange(a.c_path.shape[1])
        rows = a.c_path[act]
        inside = cols[None, :] < a.c_npath[act, None]
        hit = (np.isin(rows, r) & inside).any(axis=1) | np.isin(a.target_ref[act], r)
        slots = act[hit]
        self.marked[slots] = True
        if self.replanning:  # something changed: partial corridors try again soon
            soon = self.retry_timer + F(0.1)
            self.retry_at[:] = np.minimum(self.retry_at, soon)
        return slots.astype(np.int64)

    def take_blocked(self, s: int) -> bool:
        """True once after the agent's disturbance could not be fixed (for the request
        tracker)."""
        if self.blocked_event[s]:
            self.blocked_event[s] = False
            return True
        return False

    # -- per-slot bookkeeping -------------------------------------------------------------
    def _sync_owners(self) -> None:
        """Forget per-slot state of removed agents, reused slots and ended requests."""
        a = self.crowd.agents
        handles = np.where(a.active, (a.generation << 32) | np.arange(a.n), -1)
        new = handles != self._owner
        if new.any():
            for arr in (self.replans, self.local_fixes, self.route_switches):
                arr[new] = 0
            self._owner[:] = handles
        stale = new | (a.target_state != TARGET_VALID)
        if stale.any():  # a new request or none: the retry clock starts again
            self.retry_timer[stale] = 0
            u = self._rng.random(int(stale.sum())).astype(np.float32)
            self.retry_at[stale] = self.retry_interval + self.retry_jitter * (F(2.0) * u - F(1.0))
        self.pending[stale] = NONE
        self.pq_ref[stale] = 0
        self.blocked[stale] = False
        self.was_complete[stale] = False
        self.blocked_event[stale] = False

    def _next_retry(self, s: int) -> None:
        self.retry_timer[s] = 0
        u = F(self._rng.random())
        self.retry_at[s] = self.retry_interval + self.retry_jitter * (F(2.0) * u - F(1.0))

    def _left(self) -> int:
        return self.budget - self.reserve - self._spent

    # -- phases ---------------------------------------------------------------------------
    def check_path_validity(self, dt) -> bool:
        """Phase 1: look ahead, repair locally or cut and queue, schedule retries.

        Returns False when replanning is off (the crowd then runs dtCrowd's phase)."""
        crowd, a = self.crowd, self.crowd.agents
        self._spent = 0
        self.iterations = {"repair": 0, "quick": 0, "queue": 0}
        self.requests_started = 0
        self._sync_owners()
        if not self.replanning:
            return False
        flags = crowd._filter_tables()[0]
        code, first_bad = self._code, self._first_bad
        # level of detail: only the due (and marked) agents, with the time since their last check
        act, kdt = crowd._scan_act(self.marked)
        dt = dt * kdt
        scan_kernel(
            crowd.query._vh().desc, flags, act, a.state == STATE_WALKING,
            a.query_filter, a.target_state, a.target_ref, a.target_replan_time, a.c_path,
            a.c_npath, self.lookahead, self.marked, dt, code, first_bad,
        )  # fmt: skip
        c = code[act]
        whole = self.marked.copy()
        self.marked[act] = False
        broken: list[tuple[int, int]] = []
        for s in act[c == _SLOW].tolist():
            k = self._slow(s)
            if k > 0:
                broken.append((k, s))
        for s in act[c == _RESTART].tolist():  # a request waiting for the queue: restart it
            if a.target_state[s] in (TARGET_WAITING_FOR_QUEUE, TARGET_WAITING_FOR_PATH):
                crowd._set_target(s, int(a.target_ref[s]), a.target_pos[s].copy(), True)
        broken += [(int(first_bad[s]), s) for s in act[c == _BROKEN].tolist()]
        broken.sort()  # the nearest break first
        desc = crowd.query._vh().desc
        for k, s in broken:
            for _ in range(8):  # the corridor may cross the change more than once
                if self._left() <= 0:
                    self.marked[s] = True  # no budget left: next update, whole corridor
                    break
                self._repair(s, k)
                if self.pending[s] != NONE:  # cut at k and queued
                    break
                npath = int(a.c_npath[s])
                n = npath if whole[s] else min(npath, self.lookahead)
                k = _first_invalid(desc, flags[a.query_filter[s]], a.c_path[s], n, 1)
                if k >= n:
                    break
        for s in act[c == _PARTIAL].tolist():
            if self.pending[s] != NONE:
                continue
            self.retry_timer[s] += dt
            if self.retry_timer[s] >= self.retry_at[s]:
                self._request(s, RETRY)
        return True

    def _slow(self, s: int) -> int:
        """The agent's polygon is gone or its target polygon is invalid (dtCrowd's
        checkPathValidity, but keeping the corridor): returns the index from which
        the corridor must be repaired (0: nothing to repair)."""
        crowd, a, q = self.crowd, self.crowd.agents, self.crowd.query
        flt = crowd.filters[int(a.query_filter[s])]
        k = 0
        if q._poly(int(a.c_path[s, 0])) < 0:
            near = q.find_nearest_poly(a.npos[s], crowd.half_extents, flt)
            if not near.ref:  # dtCrowd: nowhere to stand
                cor.reset(a, s, 0, a.npos[s].copy())
                a.partial[s] = False
                crowd.boundary.reset(s)
                a.state[s] = STATE_INVALID
                return 0
            a.c_path[s, 0] = near.ref
            a.c_pos[s] = near.point
            a.npos[s] = near.point
            crowd.boundary.reset(s)
            k = 1 if a.c_npath[s] > 1 else 0  # rejoin the rest of the corridor
        ts = a.target_state[s]
        if ts in (TARGET_NONE, TARGET_VELOCITY, TARGET_FAILED):
            return 0
        if not q.is_valid_poly_ref(int(a.target_ref[s]), flt):
            near = q.find_nearest_poly(a.target_pos[s], crowd.half_extents, flt)
            if not near.ref:  # dtCrowd: the target is gone, stop
                cor.reset(a, s, int(a.c_path[s, 0]), a.c_pos[s].copy())
                a.partial[s] = False
                a.target_ref[s] = 0
                a.target_state[s] = TARGET_NONE
                return 0
            a.target_ref[s] = near.ref
            a.target_pos[s] = near.point
            if k == 0:  # repair from the first invalid polygon (at worst the old target)
                npath = int(a.c_npath[s])
                k = _first_invalid(crowd.query._vh().desc, flt.arrays[0], a.c_path[s], npath, 1)
                if k == npath and a.c_path[s, npath - 1] == near.ref:
                    k = 0
        if ts != TARGET_VALID:
            crowd._set_target(s, int(a.target_ref[s]), a.target_pos[s].copy(), True)
            return 0
        return max(k, 0)

    def _repair(self, s: int, k: int) -> None:
        """Fix the corridor from path[k] on (1 <= k <= npath; the polygons from k to the
        next valid one are replaced): local search, else cut and queue."""
        crowd, a, q = self.crowd, self.crowd.agents, self.crowd.query
        self.replans[s] += 1
        if self.pending[s] == NONE:
            self.was_complete[s] = a.c_path[s, a.c_npath[s] - 1] == a.target_ref[s]
        self.pending[s] = NONE
        self.pq_ref[s] = 0
        flt = crowd.filters[int(a.query_filter[s])]
        npath = int(a.c_npath[s])
        path = a.c_path[s, :npath].copy()
        tref = int(a.target_ref[s])
        k = min(max(k, 1), npath)
        j = _first_valid(crowd.query._vh().desc, flt.arrays[0], path, npath, k)
        goal = int(path[j]) if j < npath else tref
        start = int(path[k - 1])
        if goal == tref:
            gpos = a.target_pos[s].copy()
        else:
            gpos, _ = q.closest_point_on_poly(goal, a.c_target[s])
        q.init_sliced_find_path(start, goal, a.c_pos[s], gpos, flt)
        _, it = q.update_sliced_find_path(min(self.repair_iterations, max(self._left(), 1)))
        self._charge("repair", max(it, 1))
        res = q.finalize_sliced_find_path(MAX_PATH)
        polys = res.polys
        if not (res.status & FAILURE) and polys.shape[0] and int(polys[-1]) == goal:
            new = [int(r) for r in path[: k - 1]] + [int(r) for r in polys]
            if j < npath:
                new += [int(r) for r in path[j + 1 :]]
            new = _deloop(new)[:MAX_PATH]
            complete = new[-1] == tref
            target = a.c_target[s].copy() if j < npath else a.target_pos[s].copy()
            if new[-1] != (int(path[-1]) if j < npath else tref):  # cut by the capacity
                target, _ = q.closest_point_on_poly(new[-1], a.target_pos[s])
            cor.set_corridor(a, s, target, np.array(new, np.int64))
            self.local_fixes[s] += 1
            self._switched(s)
            a.partial[s] = not complete
            return
        # cut at the last valid polygon and let the queue plan the rest
        prefix = path[:k]
        try:
            end, _ = q.closest_point_on_poly(int(prefix[-1]), a.target_pos[s])
        except StaleHandleError:
            end = a.c_pos[s].copy()
        cor.set_corridor(a, s, end, prefix.copy())
        a.partial[s] = True
        self._request(s, REPAIR)

    def _request(self, s: int, kind: int) -> None:
        """Queue a path for a repair (from the corridor's end) or a retry (from the agent)."""
        crowd, a = self.crowd, self.crowd.agents
        flt = crowd.filters[int(a.query_filter[s])]
        npath = int(a.c_npath[s])
        if kind == REPAIR:
            start, spos = int(a.c_path[s, npath - 1]), a.c_target[s]
        else:
            start, spos = int(a.c_path[s, 0]), a.c_pos[s]
        ref = crowd.path_queue.request(start, int(a.target_ref[s]), spos, a.target_pos[s], flt)
        self.pending[s] = kind
        self.pq_ref[s] = ref  # PATHQ_INVALID (queue full): asked again next update
        if kind == RETRY:
            self._next_retry(s)

    def _charge(self, kind: str, n: int) -> None:
        self._spent += n
        self.iterations[kind] += n

    def _switched(self, s: int) -> None:
        a = self.crowd.agents
        self.route_switches[s] += 1
        a.topology_opt_time[s] = -self.commit_time  # hold off the topology optimisation
        self.blocked[s] = False
        self.crowd.boundary.reset(s)  # walls seen while the route was shut may be open now

    def move_requests(self, dt) -> None:
        """Phase 2: dtCrowd's updateMoveRequest within the budget (quick search first)."""
        crowd, a, q = self.crowd, self.crowd.agents, self.crowd.query
        queue: list[int] = []
        act = crowd._act
        ts_act = a.target_state[act]
        todo = (a.state[act] != STATE_INVALID) & (
            (ts_act == TARGET_REQUESTING) | (ts_act == TARGET_WAITING_FOR_QUEUE)
        )
        for s in act[todo].tolist():  # the others have nothing to do here
            ts = a.target_state[s]
            if ts == TARGET_NONE or ts == TARGET_VELOCITY:
                continue
            if ts == TARGET_REQUESTING:
                if self._left() < self.quick_iterations:
                    continue  # over budget: this request starts in a later update
                flt = crowd.filters[a.query_filter[s]]
                npath = int(a.c_npath[s])
                path = a.c_path[s, :npath]
                tref = int(a.target_ref[s])
                q.init_sliced_find_path(int(path[0]), tref, a.npos[s], a.target_pos[s], flt)
                _, it = q.update_sliced_find_path(self.quick_iterations)
                self._spent += max(it, self.quick_iterations)  # charged a whole slice
                self.iterations["quick"] += it
                self.requests_started += 1
                if a.target_replan[s]:
                    res = q.finalize_sliced_find_path_partial(path.copy(), _QUICK_RESULT)
                else:
                    res = q.finalize_sliced_find_path(_QUICK_RESULT)
                crowd._take_quick_result(s, res, path, tref)
            if a.target_state[s] == TARGET_WAITING_FOR_QUEUE:
                _insert_by_time(s, a.target_replan_time, queue, _PATH_MAX_AGENTS)
        pq = crowd.path_queue
        for s in queue:
            npath = int(a.c_npath[s])
            a.target_pathq_ref[s] = pq.request(
                int(a.c_path[s, npath - 1]), int(a.target_ref[s]), a.c_target[s],
                a.target_pos[s], crowd.filters[a.query_filter[s]],
            )  # fmt: skip
            if a.target_pathq_ref[s] != PATHQ_INVALID:
                a.target_state[s] = TARGET_WAITING_FOR_PATH

    def path_queue(self, dt) -> None:
        """Phase 3: serve the queue with what is left of the budget; merge results."""
        crowd, a, pq = self.crowd, self.crowd.agents, self.crowd.path_queue
        if self.replanning:  # repairs and retries that found the queue full ask again
            for s in np.flatnonzero((self.pending != NONE) & (self.pq_ref == 0)).tolist():
                self._request(s, int(self.pending[s]))
        used = pq.update(max(self.budget - self._spent, 0))
        self.iterations["queue"] += used
        self._spent += used
        act = crowd._act
        for s in act[a.target_state[act] == TARGET_WAITING_FOR_PATH].tolist():
            st = pq.get_request_status(int(a.target_pathq_ref[s]))
            if st & FAILURE:
                a.target_pathq_ref[s] = PATHQ_INVALID
                a.target_state[s] = TARGET_REQUESTING if a.target_ref[s] else TARGET_FAILED
                a.target_replan_time[s] = 0
            elif st & SUCCESS:
                self._merge_request(s)
        if self.replanning:
            for s in np.flatnonzero((self.pending != NONE) & (self.pq_ref != 0)).tolist():
                self._merge_replan(s)

    def _merge_request(self, s: int) -> None:
        """dtCrowd's merge of a queue result into the corridor of a new request."""
        crowd, a, q, pq = self.crowd, self.crowd.agents, self.crowd.query, self.crowd.path_queue
        npath = int(a.c_npath[s])
        path = a.c_path[s, :npath]
        target_pos = a.target_pos[s].copy()
        st, res_arr = pq.get_path_result(int(a.target_pathq_ref[s]))
        valid = not (st & FAILURE) and res_arr.shape[0] > 0
        a.partial[s] = bool(st & PARTIAL_RESULT)
        if valid and path[npath - 1] != res_arr[0]:
            valid = False
        res: list[int] = []
        if valid:
            res = [int(r) for r in res_arr]
            if npath > 1:
                res = _deloop([int(r) for r in path[: npath - 1]] + res)[:MAX_PATH]
            if res[-1] != a.target_ref[s]:
                try:
                    target_pos, _ = q.closest_point_on_poly(res[-1], target_pos)
                except StaleHandleError:
                    valid = False
        if valid:
            cor.set_corridor(a, s, target_pos, np.array(res, np.int64))
            crowd.boundary.reset(s)
            a.target_state[s] = TARGET_VALID
        else:
            a.target_state[s] = TARGET_FAILED
        a.target_replan_time[s] = 0

    def _merge_replan(self, s: int) -> None:
        """A repair's or a retry's queue result: splice a complete route, else keep the
        corridor (a repair that cannot reach the target reports the agent blocked)."""
        a, q, pq = self.crowd.agents, self.crowd.query, self.crowd.path_queue
        ref = int(self.pq_ref[s])
        st = pq.get_request_status(ref)
        if not st & (SUCCESS | FAILURE):
            return
        kind = int(self.pending[s])
        self.pending[s] = NONE
        self.pq_ref[s] = 0
        res_arr = np.zeros(0, np.int64)
        if st & SUCCESS:
            st, res_arr = pq.get_path_result(ref)
        tref = int(a.target_ref[s])
        npath = int(a.c_npath[s])
        path = a.c_path[s, :npath]
        ok = not (st & FAILURE) and res_arr.shape[0] > 0
        complete = ok and int(res_arr[-1]) == tref
        if complete:
            res = [int(r) for r in res_arr]
            if kind == REPAIR:  # planned from the corridor's end
                if path[npath - 1] == res[0]:
                    res = _deloop([int(r) for r in path[: npath - 1]] + res)[:MAX_PATH]
                else:
                    res = []
            else:  # planned from the agent, which may have moved on since
                i = res.index(int(path[0])) if int(path[0]) in res else -1
                res = res[i:] if i >= 0 else []
            if res and res[-1] != tref:  # cut by the capacity
                try:
                    target, _ = q.closest_point_on_poly(res[-1], a.target_pos[s])
                except StaleHandleError:  # a tile changed during the search
                    res = []
            else:
                target = a.target_pos[s].copy()
            if res:
                cor.set_corridor(a, s, target, np.array(res, np.int64))
                a.partial[s] = res[-1] != tref
                self._switched(s)
                return
            if kind == REPAIR:  # the corridor moved under the request: ask again
                self._request(s, REPAIR)
                return
        if kind == REPAIR:
            # the disturbance cannot be fixed: keep walking to the end of the valid prefix
            if self.was_complete[s] and not self.blocked[s]:
                self.blocked[s] = True
                self.blocked_event[s] = True
            a.partial[s] = True
            self._next_retry(s)


def _insert_by_time(ag: int, times: np.ndarray, queue: list, cap: int) -> None:
    """dtCrowd's addToPathQueue: greatest time first, capped."""
    n = len(queue)
    t = times[ag]
    if n == 0 or t <= times[queue[n - 1]]:
        if n >= cap:
            return
        queue.append(ag)
        return
    i = 0
    while i < n and not t >= times[queue[i]]:
        i += 1
    queue.insert(i, ag)
    del queue[cap:]
