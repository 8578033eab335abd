"""Budgeted queue of path requests (Detour's dtPathQueue).

Eight request slots; :meth:`PathQueue.update` runs sliced A* over them
round-robin until the iteration budget is spent, on its own
:class:`~navkit.detour.query.NavMeshQuery` (4096 nodes, as dtCrowd's).
A finished result is kept for two updates, then its slot is freed.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, borrow, njit
from navkit.detour._portal import _passes
from navkit.detour._view import open_view, poly_index
from navkit.detour.query import FAILURE, IN_PROGRESS, SUCCESS, NavMeshQuery

__all__ = ["PathQueue", "PATHQ_INVALID", "path_validity_kernel"]

PATHQ_INVALID = 0
MAX_QUEUE = 8
MAX_KEEP_ALIVE = 2  # update ticks
_DETAIL_MASK = 0x0FFFFFF  # DT_STATUS_DETAIL_MASK


class PathQueue:
    """dtPathQueue over a navmesh: ``request`` / ``update`` / ``get_request_status`` / ``get_path_result``."""

    def __init__(self, navmesh, max_path: int = 256, max_nodes: int = 4096) -> None:
        self.query = NavMeshQuery(navmesh, max_nodes=max_nodes)
        self.max_path = max_path
        self.ref = np.zeros(MAX_QUEUE, np.int64)
        self.status = np.zeros(MAX_QUEUE, np.int64)
        self.keep_alive = np.zeros(MAX_QUEUE, np.int32)
        self.start_ref = np.zeros(MAX_QUEUE, np.int64)
        self.end_ref = np.zeros(MAX_QUEUE, np.int64)
        self.start_pos = np.zeros((MAX_QUEUE, 3), np.float32)
        self.end_pos = np.zeros((MAX_QUEUE, 3), np.float32)
        self.filter: list = [None] * MAX_QUEUE
        #: the crowd filter index of each request (-1: a filter given only as an object)
        self.filter_index = np.full(MAX_QUEUE, -1, np.int64)
        #: each slot's result (the first ``npaths[i]`` refs of row i)
        self.paths = np.zeros((MAX_QUEUE, max(1, max_path)), np.int64)
        self.npaths = np.zeros(MAX_QUEUE, np.int64)
        #: [next handle, queue head] (an array so that kernels advance them in place)
        self.counters = np.array([1, 0], np.int64)
        #: A* iterations done by the last update (this class's or the crowd kernel's)
        self.last_iterations = 0

    @property
    def next_handle(self) -> int:
        return int(self.counters[0])

    @property
    def queue_head(self) -> int:
        return int(self.counters[1])

    def request(
        self, start_ref: int, end_ref: int, start_pos, end_pos, flt, filter_index: int = -1
    ) -> int:
        """Queue a request; its handle, or PATHQ_INVALID when all slots are busy."""
        free = np.flatnonzero(self.ref == PATHQ_INVALID)
        if free.size == 0:
            return PATHQ_INVALID
        slot = int(free[0])
        ref = int(self.counters[0])
        nxt = (ref + 1) & 0xFFFFFFFF
        if nxt == PATHQ_INVALID:
            nxt += 1
        self.counters[0] = nxt
        self.ref[slot] = ref
        self.start_ref[slot] = start_ref
        self.end_ref[slot] = end_ref
        self.start_pos[slot] = start_pos
        self.end_pos[slot] = end_pos
        self.status[slot] = 0
        self.npaths[slot] = 0
        self.filter[slot] = flt
        self.filter_index[slot] = filter_index
        self.keep_alive[slot] = 0
        return ref

    def update(self, max_iters: int) -> int:
        """Advance the requests by up to max_iters A* iterations in total; returns the
        iterations done."""
        q = self.query
        iter_count = max_iters
        head = self.counters
        for _ in range(MAX_QUEUE):
            i = int(head[1]) % MAX_QUEUE
            if self.ref[i] == PATHQ_INVALID:
                head[1] += 1
                continue
            st = int(self.status[i])
            if st & (SUCCESS | FAILURE):
                self.keep_alive[i] += 1
                if self.keep_alive[i] > MAX_KEEP_ALIVE:
                    self.ref[i] = PATHQ_INVALID
                    self.status[i] = 0
                head[1] += 1
                continue
            if st == 0:
                st = q.init_sliced_find_path(
                    int(self.start_ref[i]), int(self.end_ref[i]), self.start_pos[i],
                    self.end_pos[i], self.filter[i],
                )  # fmt: skip
            if st & IN_PROGRESS:
                st, iters = q.update_sliced_find_path(max(iter_count, 0))
                iter_count -= iters
            if st & SUCCESS:
                res = q.finalize_sliced_find_path(self.max_path)
                st = res.status
                n = res.polys.shape[0]
                self.paths[i, :n] = res.polys
                self.npaths[i] = n
            self.status[i] = st
            if iter_count <= 0:
                break
            head[1] += 1
        self.last_iterations = max_iters - iter_count
        return self.last_iterations

    def get_request_status(self, ref: int) -> int:
        hit = np.flatnonzero(self.ref == ref)
        return int(self.status[hit[0]]) if hit.size else FAILURE

    def get_path_result(self, ref: int) -> tuple[int, np.ndarray]:
        """(status, path) of a finished request, freeing its slot."""
        hit = np.flatnonzero(self.ref == ref)
        if not hit.size:
            return FAILURE, np.zeros(0, np.int64)
        i = int(hit[0])
        details = int(self.status[i]) & _DETAIL_MASK
        self.ref[i] = PATHQ_INVALID
        self.status[i] = 0
        return details | SUCCESS, self.paths[i, : self.npaths[i]].copy()


_CHECK_LOOKAHEAD = 10
_TARGET_REPLAN_DELAY = F32(1.0)


@njit(cache=True, link=False)
def path_validity_kernel(d, flags_table, act, walking, qfilter, target_state, target_ref,
                         replan_time, c_path, c_npath, dt):  # fmt: skip
    """dtCrowd::checkPathValidity's common case for every walking agent.

    Adds dt to the replan timers and returns a per-slot code: 0 nothing to do,
    2 replan (corridor invalid within 10 polygons, or a path that ended short of
    the target for over 1 s with fewer than 10 polygons), 1 the agent's polygon
    or its target polygon is no longer valid (the caller repositions them)."""
    nav = open_view(d)
    flags_table, replan_time, c_path = borrow((flags_table, replan_time, c_path))
    code = np.zeros(c_npath.shape[0], np.int8)
    # (poly_index and passes are written out at each test: a helper wrapping both,
    # even inlined, cost ten times the test itself; and nav.poly_flags is read once:
    # inside the loop, directly or through passes(), it cost ~100 ns a polygon)
    pf = nav.poly_flags
    for i in range(act.shape[0]):
        s = act[i]
        if not walking[s]:
            continue
        replan_time[s] += dt
        flt = flags_table[qfilter[s]]
        p = poly_index(nav, c_path[s, 0])
        if p < 0 or not _passes(flt, pf, p):
            code[s] = 1
            continue
        ts = target_state[s]
        if ts == 0 or ts == 6:  # NONE, VELOCITY
            continue
        if ts != 1:  # not FAILED: the target polygon must be valid
            p = poly_index(nav, target_ref[s])
            if p < 0 or not _passes(flt, pf, p):
                code[s] = 1
                continue
        replan = False
        npath = c_npath[s]
        for j in range(min(npath, _CHECK_LOOKAHEAD)):
            p = poly_index(nav, c_path[s, j])
            if p < 0 or not _passes(flt, pf, p):
                replan = True
                break
        if ts == 2:  # VALID
            if (
                replan_time[s] > _TARGET_REPLAN_DELAY
                and npath < _CHECK_LOOKAHEAD
                and c_path[s, npath - 1] != target_ref[s]
            ):
                replan = True
        if replan:
            code[s] = 2
    return code
