"""dtCrowd's update in one kernel call (the dtCrowd-identical mode's steady state).

:func:`step` runs :attr:`Crowd.PHASES` in dtCrowd::update's order by calling the
very kernels the phase-by-phase update calls (same argument types, so no extra
compiled copies), and stamps the CPU's time-stamp counter around each phase
(``ticks[0, i]`` start, ``ticks[1, i]`` end of phase i; 0 = not run here). It
stops and returns to Python only where Python must run:

- ``STOP_FALLBACK`` (before anything): an active agent uses a navkit extension
  (TTC / ORCA avoidance, the local grid planner); the caller runs the phases.
- ``STOP_REQUESTS`` after check_path_validity: an agent needs the slow validity
  path (its polygon or its target's is gone; listed in ``slow``), or move requests
  or the path queue have work that :func:`requests_kernel` declines (a request
  without a filter index). The caller does them and calls again from
  ``STAGE_TOPOLOGY``. Otherwise move requests and the path queue run here
  (:func:`requests_desc` on the descriptor ``rd``; ``info[I_QITERS]`` gets the
  queue's A* iterations).
- ``STOP_OFFMESH`` after corners: an agent reached an off-mesh link's start; the
  caller runs offmesh_triggers and calls again from ``STAGE_STEERING``.
- ``DONE``: all kernel phases ran; ``info[I_ANIM]`` says whether an off-mesh
  animation is running (offmesh_animation is Python).

Topology optimisation (one agent per update: a 32-iteration sliced A* toward the
corridor's end, on the crowd's query) runs here through the query's sliced-search
entry kernels. Replanning requests found by the validity check (code 2) are set
here (dtCrowd's requestMoveTargetReplan).

:func:`step_par` is the same update (the same source, compiled a second time) whose
heavy per-agent phases run as three ``prange`` regions over ``nch`` chunks of agents
(:func:`threads_for`; one chunk: serial): local boundaries + neighbours + corners (one
region: its time is the neighbours phase's, the corners phase reads ~0), velocity
planning, move along surface; the cheap ones (steering, separation, integration,
collisions) and everything order-dependent stay serial. No agent reads in a phase
what another agent writes in it (dtCrowd's phases are the same loops), so the results
are the serial step's float32 values.

Move requests and the path queue (the ``STOP_REQUESTS`` stop) run in one call of
:func:`requests_kernel`, which the phase-by-phase update also calls.

The crowd calls them through :func:`step_desc` / :func:`step_par_desc` /
:func:`requests_desc`: the arrays packed once into one int64 descriptor (:func:`pack`,
:data:`STEP_SPEC`, :data:`REQUESTS_SPEC`), opened inside the kernel as the same array
types, so that the call unboxes one array instead of 64 (or 37).
"""

from __future__ import annotations

import types

import numba
import numpy as np
from numba import prange

from navkit._jit import F32, desc_opener, njit, pnjit
from navkit.detour._nodes import open_pool
from navkit.detour._poly import closest_point_nav
from navkit.detour._search import (
    sliced_finalize,
    sliced_finalize_partial,
    sliced_init,
    sliced_update,
)
from navkit.detour._view import open_view, poly_index
from navkit.detour.query import (
    FAILURE,
    IN_PROGRESS,
    PARTIAL_RESULT,
    STRAIGHTPATH_OFFMESH_CONNECTION,
    SUCCESS,
)
from navkit.recast._chain import _tsc

from ._par import MAX_CHUNKS
from .avoidance import plan_velocities
from .boundary import update_boundaries
from .corridor import corners_kernel, merge_corridor_start_shortcut, move_kernel
from .path_queue import _DETAIL_MASK, path_validity_kernel
from .path_queue import MAX_KEEP_ALIVE as _MAX_KEEP_ALIVE
from .proximity import (
    build_grid,
    dense_cells,
    find_neighbours,
    find_neighbours_dense,
)
from .steering import integrate, resolve_collisions, separate, steer

__all__ = [
    "step", "step_par", "step_desc", "step_par_desc", "pack", "STEP_SPEC", "threads_for",
    "path_queue_order", "requests_kernel", "requests_desc", "REQUESTS_SPEC", "STOP_FALLBACK",
    "STOP_REQUESTS", "STOP_OFFMESH", "DONE",
]  # fmt: skip

STOP_FALLBACK = -1
STOP_REQUESTS = 1
STOP_OFFMESH = 2
DONE = 3
STAGE_START, STAGE_TOPOLOGY, STAGE_STEERING = 0, 1, 2
#: info slots
I_POOL_HEAD, I_BOUNDARY_UPDATES, I_SAMPLES, I_ANIM, I_NSLOW = 0, 1, 2, 3, 4
#: info slot set by the caller: active agents from which all per-agent phases run on the
#: nch threads (fewer: velocity planning only; :data:`PAR_ALL_MIN`)
I_PAR_ALL = 5
#: info slot: the path queue's A* iterations when the step ran requests_kernel, else -1
I_QITERS = 6
#: phase indices (Crowd.PHASES)
(P_VALIDITY, P_REQUESTS, P_QUEUE, P_TOPOLOGY, P_GRID, P_NEIGHBOURS, P_CORNERS, P_OFFMESH,
 P_STEERING, P_SEPARATION, P_VELOCITY, P_INTEGRATION, P_COLLISIONS, P_MOVE,
 P_ANIMATION) = range(15)  # fmt: skip

_LOCAL_GRID = 32
_OPTIMIZE_TOPO = 16
_OPT_TIME_THR = F32(0.5)
_F2_25 = F32(2.25)


def _step_impl(stage, nch, ticks, info, slow, d, tiny_ds, pool_d, qi, qf, flags_table, costs_table,
               pq_ref,
         act, dt, walking, nsamples, fp, ip,
         active, state, target_state, target_ref, target_pos, target_pathq_ref, target_replan,
         target_replan_time, update_flags, query_filter, avoidance_model, avoidance_type,
         radius, height, max_speed, max_acceleration, collision_query_range,
         path_optimization_range, separation_weight, desired_speed, npos, vel, dvel, nvel,
         disp, c_pos, c_target, c_path, c_npath, corner_verts, corner_flags, corner_polys,
         ncorners, neis, nei_dist, nneis, topology_opt_time, partial, anim_active,
         b_center, b_segs, b_seg_d, b_nsegs, b_polys, b_npolys,
         inv_cell, buckets, items, lo, rd, max_iters, queue_cap):  # fmt: skip
    """dtCrowd::update from ``stage`` on (see the module docstring); returns the stop code."""
    n_act = act.shape[0]
    # fewer agents than info[I_PAR_ALL]: only velocity planning on nch threads (PAR_ALL_MIN)
    nch_all = nch if n_act >= info[I_PAR_ALL] else 1
    for i in range(n_act):  # the walking mask, as of this call (only Python changes states)
        s = act[i]
        walking[s] = state[s] == 1
    if stage == STAGE_START:
        for i in range(n_act):
            s = act[i]
            if avoidance_model[s] != 0 or (update_flags[s] & _LOCAL_GRID) != 0:
                return STOP_FALLBACK
        # -- check_path_validity
        ticks[0, P_VALIDITY] = _tsc()
        code = path_validity_kernel(
            d, flags_table, act, walking, query_filter, target_state, target_ref,
            target_replan_time, c_path, c_npath, dt,
        )  # fmt: skip
        nslow = 0
        for i in range(n_act):
            s = act[i]
            if code[s] == 2:  # requestMoveTargetReplan(target_ref, target_pos)
                target_pathq_ref[s] = 0
                target_replan[s] = True
                target_state[s] = 3 if target_ref[s] != 0 else 1
            elif code[s] == 1:
                slow[nslow] = s
                nslow += 1
        info[I_NSLOW] = nslow
        ticks[1, P_VALIDITY] = _tsc()
        busy = nslow > 0
        for k in range(pq_ref.shape[0]):
            busy |= pq_ref[k] != 0
        for i in range(n_act):
            s = act[i]
            ts = target_state[s]
            busy |= ts == 5 or (state[s] != 0 and (ts == 3 or ts == 4))
        info[I_QITERS] = -1
        if busy:
            if nslow > 0:
                return STOP_REQUESTS
            # -- move_requests and path_queue: requests_kernel here (saves a return to
            # Python and a second step call); -1: a request without a filter index,
            # nothing done (the caller runs the Python phases)
            ticks[0, P_REQUESTS] = _tsc()
            its = requests_desc(rd, max_iters, queue_cap, 3)
            ticks[1, P_REQUESTS] = _tsc()
            if its < 0:
                return STOP_REQUESTS
            info[I_QITERS] = its
        stage = STAGE_TOPOLOGY
    if stage == STAGE_TOPOLOGY:
        # -- topology_optimization: dtCrowd's opt queue of one place
        t = _tsc()
        ticks[0, P_TOPOLOGY] = t
        best = -1
        bt = F32(0.0)
        for i in range(n_act):
            s = act[i]
            ts = target_state[s]
            if walking[s] and ts != 0 and ts != 6 and (update_flags[s] & _OPTIMIZE_TOPO) != 0:
                topology_opt_time[s] += dt
                tt = topology_opt_time[s]
                if tt >= _OPT_TIME_THR and (best < 0 or tt > bt):
                    best, bt = s, tt
        if best >= 0:
            s = best
            npath = np.int64(c_npath[s])
            if npath >= 3:
                qfi = query_filter[s]
                # the search kernels themselves, not their _entry wrappers: each wrapper
                # level is one more compile of all the code below it
                nav, pool = open_view(d), open_pool(pool_d)
                sliced_init(
                    nav, pool, flags_table[qfi], qi, qf, c_path[s, 0], c_path[s, npath - 1],
                    c_pos[s], c_target[s], 0,
                )  # fmt: skip
                sliced_update(nav, pool, flags_table[qfi], costs_table[qfi], qi, qf, 32)
                existing = c_path[s, :npath].copy()
                out = np.zeros(32, np.int64)
                st, nres = sliced_finalize_partial(
                    nav, pool, flags_table[qfi], costs_table[qfi], qi, existing, out, 32
                )
                if (st & SUCCESS) != 0 and nres > 0:
                    c_npath[s] = merge_corridor_start_shortcut(  # (corners' signature)
                        c_path[s], c_npath[s], c_path.shape[1], out, nres
                    )
            topology_opt_time[s] = 0
        t = _tsc()
        ticks[1, P_TOPOLOGY] = t
        # -- proximity_grid
        ticks[0, P_GRID] = t
        info[I_POOL_HEAD] = build_grid(act, npos, radius, inv_cell, buckets, items, lo)
        t = _tsc()
        ticks[1, P_GRID] = t
        # -- neighbours: local boundaries, then getNeighbours
        ticks[0, P_NEIGHBOURS] = t
        info[I_BOUNDARY_UPDATES] = _neighbours(
            nch_all, d, tiny_ds, flags_table, act, walking, c_path, npos, height,
            collision_query_range, radius, query_filter, b_center, b_segs, b_seg_d, b_nsegs,
            b_polys, b_npolys, inv_cell, buckets, items, lo, info[I_POOL_HEAD], neis, nei_dist,
            nneis, costs_table, target_state, update_flags, path_optimization_range, c_pos, c_target,
            c_npath, corner_verts, corner_flags, corner_polys, ncorners,
        )  # fmt: skip
        t = _tsc()
        ticks[1, P_NEIGHBOURS] = t
        # -- corners
        ticks[0, P_CORNERS] = t
        _corners(
            d, flags_table, costs_table, act, nch_all, walking, target_state, update_flags,
            query_filter, path_optimization_range, c_pos, c_target, c_path, c_npath,
            corner_verts, corner_flags, corner_polys, ncorners,
        )  # fmt: skip
        t = _tsc()
        ticks[1, P_CORNERS] = t
        # -- offmesh_triggers: only the test here (the trigger itself is Python)
        for i in range(n_act):
            s = act[i]
            ts = target_state[s]
            nc = ncorners[s]
            if not walking[s] or ts == 0 or ts == 6 or nc <= 0:
                continue
            if (corner_flags[s, nc - 1] & STRAIGHTPATH_OFFMESH_CONNECTION) == 0:
                continue
            r = radius[s] * _F2_25
            dx = corner_verts[s, nc - 1, 0] - npos[s, 0]
            dz = corner_verts[s, nc - 1, 2] - npos[s, 2]
            if dx * dx + dz * dz < r * r:
                return STOP_OFFMESH
        stage = STAGE_STEERING
    # -- steering
    t = _tsc()
    ticks[0, P_STEERING] = t
    steer(
        act, walking, target_state, target_pos, update_flags, ncorners, corner_verts,
        corner_flags, npos, radius, max_speed, desired_speed, dvel,
    )  # fmt: skip
    t = _tsc()
    ticks[1, P_STEERING] = t
    # -- separation
    ticks[0, P_SEPARATION] = t
    separate(
        act, walking, target_state, update_flags, npos, neis, nneis, collision_query_range,
        separation_weight, desired_speed, dvel,
    )  # fmt: skip
    t = _tsc()
    ticks[1, P_SEPARATION] = t
    # -- velocity_planning
    ticks[0, P_VELOCITY] = t
    for i in range(n_act):
        nsamples[act[i]] = 0
    _plan(
        act, nch, walking, update_flags, npos, radius, vel, dvel, desired_speed, neis, nneis,
        b_segs, b_nsegs, avoidance_type, fp, ip, nvel, nsamples,
    )  # fmt: skip
    tot = 0
    for i in range(n_act):
        tot += nsamples[act[i]]
    info[I_SAMPLES] = tot
    t = _tsc()
    ticks[1, P_VELOCITY] = t
    # -- integration
    ticks[0, P_INTEGRATION] = t
    integrate(act, walking, max_acceleration, dt, nvel, vel, npos)
    t = _tsc()
    ticks[1, P_INTEGRATION] = t
    # -- collisions
    ticks[0, P_COLLISIONS] = t
    resolve_collisions(act, walking, npos, radius, dvel, neis, nneis, disp)
    t = _tsc()
    ticks[1, P_COLLISIONS] = t
    # -- move_along_surface
    ticks[0, P_MOVE] = t
    _move(
        d, tiny_ds, flags_table, act, nch_all, walking, target_state, query_filter, npos, c_pos,
        c_target, c_path, c_npath,
    )  # fmt: skip
    anim = 0
    for i in range(n_act):
        s = act[i]
        ts = target_state[s]
        if walking[s] and (ts == 0 or ts == 6):
            partial[s] = False
        if anim_active[s]:
            anim = 1
    info[I_ANIM] = anim
    ticks[1, P_MOVE] = _tsc()
    return DONE


# -- the per-agent phases: serially over all agents, or on nch threads ---------------------
# The parallel helpers split the active agents into blocks of _BLOCK ranks dealt round
# robin to nch chunks (balanced work, each block's slots contiguous) and run the serial
# kernel on each chunk's slots; each agent's arithmetic is the serial one and no agent
# reads what another writes in the phase, so the results are the same float32 values.
_BLOCK = 16
#: fewer active agents than this: the parallel step runs only velocity planning on its
#: threads, the other per-agent phases on one. Their regions did not pay at 100 agents:
#: each thread's chunk reads the agent data the serial phases just wrote on the other
#: core (nav_test, 100 agents, two threads with real-time priority on the loaded 2-core
#: machine, in-situ medians: neighbours + corners 137-152 us against 108 serially, move
#: 31-34 against 16, velocity planning 71-75 against 103-106)
PAR_ALL_MIN = 256
#: fewer active agents per thread than this: fewer threads. 40: at 100 agents the update
#: takes 0.57-0.87x WASM dtCrowd's on two threads against 0.85-1.26x on one
#: (bench/crowd.py, 2026-12-02 evening, quiet machine, OpenMP's default wait policy);
#: the earlier 128 was chosen under load average 12, with no core for a second thread
PAR_MIN = 40


def threads_for(n: int) -> int:
    """Threads (chunks) for the parallel step over n active agents."""
    return max(1, min(numba.get_num_threads(), MAX_CHUNKS, n // PAR_MIN))


#: a parallel crowd times the serial step against the parallel one now and then and
#: runs the faster (:class:`ThreadChooser`); False: always the parallel step
AUTO_SERIAL = True


class ThreadChooser:
    """Whether a parallel crowd's next update runs the serial step or the parallel one.

    Both give the same float32 results (the parallel step's agents do the serial
    arithmetic), so the choice is only one of speed. On a machine whose other cores are
    busy, or with few agents per thread, the parallel step's regions (a wake-up and a
    barrier each, and the agent data moving between the cores' caches) can cost more
    than they save. A probe window of ``PROBES`` updates runs the two steps in turns of
    two updates (parallel first); the second update of each turn is timed (the first
    wakes the threads up or lets them fall asleep). The step with the smaller median
    kernel wall time over the last ``KEEP`` timed updates of each (two windows' probes:
    four samples are too few on a shared machine) runs until the next window; a serial
    crowd goes parallel only when that median is below ``ENTER`` times the serial one
    (the parallel step's cost varies more with the machine's load, and a wrong switch
    costs more than a missed gain).

    Windows start every ``PERIOD`` updates. While the parallel step keeps losing
    outright (its median not below the serial one), the gap between windows doubles, up
    to ``MAX_GAP`` periods: its probes are the slow updates of a crowd that stays
    serial (at 100 agents on a busy 2-core machine they cost 2-10% of the mean update).
    Any other outcome brings the gap back to one period."""

    PERIOD = 64
    PROBES = 16
    KEEP = 8
    ENTER = 0.9
    MAX_GAP = 8

    def __init__(self) -> None:
        self.k = 0
        self.serial = True
        self._t: tuple[list[float], list[float]] = ([], [])
        self._start = 0  # update count at which the current window starts
        self._gap = 1  # periods from this window to the next

    def _pos(self) -> int:
        """The update's place after the current window's start (rolled forward)."""
        span = self._gap * self.PERIOD
        k = self.k - self._start
        if k >= span:
            self._start += k - k % span
            k %= span
        return k

    def serial_now(self) -> bool:
        if not AUTO_SERIAL:
            return False
        k = self._pos()
        return (k // 2) % 2 == 1 if k < self.PROBES else self.serial

    def record(self, serial: bool, seconds: float) -> None:
        """The update's step took ``seconds`` (kernel calls only), serial or not."""
        k = self._pos()
        self.k += 1
        if k >= self.PROBES or k % 2 == 0:
            return
        t = self._t[serial]
        t.append(seconds)
        del t[: -self.KEEP]
        if k == self.PROBES - 1:
            par, ser = sorted(self._t[0]), sorted(self._t[1])
            if par and ser:
                mp = par[len(par) // 2] + par[(len(par) - 1) // 2]  # (medians, doubled)
                ms = ser[len(ser) // 2] + ser[(len(ser) - 1) // 2]
                self.serial = not mp < (ms * self.ENTER if self.serial else ms)
                lost = self.serial and not mp < ms
                # (the window that just ended starts the next span)
                self._gap = min(self._gap * 2, self.MAX_GAP) if lost else 1


@njit
def _chunk(act, c, nch):
    """The slots of chunk c of nch (blocks of _BLOCK ranks, round robin), in rank order."""
    n = act.shape[0]
    cnt = 0
    for b in range(c * _BLOCK, n, nch * _BLOCK):
        cnt += min(_BLOCK, n - b)
    out = np.empty(cnt, np.int64)
    k = 0
    for b in range(c * _BLOCK, n, nch * _BLOCK):
        for i in range(b, min(b + _BLOCK, n)):
            out[k] = act[i]
            k += 1
    return out


@njit(link=False)
def _neighbours_s(nch, d, tiny_ds, flags_table, act, walking, c_path, npos, height, qrange,
                  radius, query_filter, b_center, b_segs, b_seg_d, b_nsegs, b_polys, b_npolys,
                  inv_cell, buckets, items, lo, head, neis, nei_dist, nneis, costs_table,
                  target_state, update_flags, opt_range, c_pos, c_target, c_npath, corner_verts,
                  corner_flags, corner_polys, ncorners):  # fmt: skip
    """Local boundaries, then getNeighbours (on the grid's items by cell; agents far
    apart on the hash grid: the same neighbours); returns the boundaries rebuilt. (The corner phase's arguments are
    for :func:`_neighbours_p`, which runs that phase too; here the step runs it next.)"""
    nb = update_boundaries(
        d, tiny_ds, flags_table, act, 1, walking, c_path, npos, qrange, query_filter, b_center,
        b_segs, b_seg_d, b_nsegs, b_polys, b_npolys,
    )  # fmt: skip
    x0, y0, w, h, start, ids = dense_cells(items, lo, head)
    if w > 0:
        find_neighbours_dense(
            act, act, walking, npos, height, qrange, inv_cell, x0, y0, w, h, start, ids, neis,
            nei_dist, nneis,
        )  # fmt: skip
    else:
        find_neighbours(
            act, act, walking, npos, height, qrange, inv_cell, buckets, items, lo, neis,
            nei_dist, nneis,
        )  # fmt: skip
    return nb


@pnjit(link=False)
def _neighbours_p(nch, d, tiny_ds, flags_table, act, walking, c_path, npos, height, qrange,
                  radius, query_filter, b_center, b_segs, b_seg_d, b_nsegs, b_polys, b_npolys,
                  inv_cell, buckets, items, lo, head, neis, nei_dist, nneis, costs_table,
                  target_state, update_flags, opt_range, c_pos, c_target, c_npath, corner_verts,
                  corner_flags, corner_polys, ncorners):  # fmt: skip
    """The neighbours phase and the corners phase in one parallel region: each chunk's
    agents get their local boundary and neighbours, then their corners (no agent reads
    in these phases what another writes in them, so the order across agents does not
    matter); the step's corners phase is then :func:`_corners_after` (which runs it when
    there is one chunk)."""
    if nch <= 1:
        nb = _neighbours_s(
            nch, d, tiny_ds, flags_table, act, walking, c_path, npos, height, qrange, radius,
            query_filter, b_center, b_segs, b_seg_d, b_nsegs, b_polys, b_npolys, inv_cell,
            buckets, items, lo, head, neis, nei_dist, nneis, costs_table, target_state,
            update_flags, opt_range, c_pos, c_target, c_npath, corner_verts, corner_flags,
            corner_polys, ncorners,
        )  # fmt: skip
        return nb  # (the corners phase runs next: _corners_after)
    x0, y0, w, h, start, ids = dense_cells(items, lo, head)
    dense = w > 0  # (chosen outside the prange body)
    counts = np.zeros(nch, np.int64)
    for c in prange(nch):
        sub = _chunk(act, c, nch)
        counts[c] = update_boundaries(
            d, tiny_ds[c : c + 1].copy(), flags_table, sub, 1, walking, c_path, npos, qrange,
            query_filter, b_center, b_segs, b_seg_d, b_nsegs, b_polys, b_npolys,
        )  # fmt: skip
        if dense:
            find_neighbours_dense(
                sub, act, walking, npos, height, qrange, inv_cell, x0, y0, w, h, start, ids,
                neis, nei_dist, nneis,
            )  # fmt: skip
        else:
            find_neighbours(
                sub, act, walking, npos, height, qrange, inv_cell, buckets, items, lo, neis,
                nei_dist, nneis,
            )  # fmt: skip
        corners_kernel(
            d, flags_table, costs_table, sub, 1, walking, target_state, update_flags,
            query_filter, opt_range, c_pos, c_target, c_path, c_npath, corner_verts,
            corner_flags, corner_polys, ncorners,
        )  # fmt: skip
    return counts.sum()


@njit(link=False)
def _corners_after(d, flags_table, costs_table, act, nch, walking, target_state, update_flags,
                   query_filter, opt_range, c_pos, c_target, c_path, c_npath, corner_verts,
                   corner_flags, corner_polys, ncorners):  # fmt: skip
    """The parallel step's corners phase: on one thread corners_kernel, on more nothing
    (:func:`_neighbours_p`'s region did it)."""
    if nch <= 1:
        corners_kernel(
            d, flags_table, costs_table, act, 1, walking, target_state, update_flags,
            query_filter, opt_range, c_pos, c_target, c_path, c_npath, corner_verts,
            corner_flags, corner_polys, ncorners,
        )  # fmt: skip


@pnjit(link=False)
def _plan_p(act, nch, walking, update_flags, npos, radius, vel, dvel, desired_speed, neis,
            nneis, b_segs, b_nsegs, avoidance_type, fp, ip, nvel, nsamples):  # fmt: skip
    """plan_velocities (same arguments) on nch threads."""
    if nch <= 1:
        plan_velocities(
            act, 1, walking, update_flags, npos, radius, vel, dvel, desired_speed, neis, nneis,
            b_segs, b_nsegs, avoidance_type, fp, ip, nvel, nsamples,
        )  # fmt: skip
        return
    for c in prange(nch):
        plan_velocities(
            _chunk(act, c, nch), 1, walking, update_flags, npos, radius, vel, dvel,
            desired_speed, neis, nneis, b_segs, b_nsegs, avoidance_type, fp, ip, nvel, nsamples,
        )  # fmt: skip


@pnjit(link=False)
def _move_p(d, tiny_ds, flags_table, act, nch, walking, target_state, query_filter, npos, c_pos,
            c_target, c_path, c_npath):  # fmt: skip
    """move_kernel (same arguments) on nch threads, chunk c on tiny pool c."""
    if nch <= 1:
        move_kernel(
            d, tiny_ds, flags_table, act, 1, walking, target_state, query_filter, npos, c_pos,
            c_target, c_path, c_npath,
        )  # fmt: skip
        return
    for c in prange(nch):
        move_kernel(
            d, tiny_ds[c : c + 1].copy(), flags_table, _chunk(act, c, nch), 1, walking,
            target_state, query_filter, npos, c_pos, c_target, c_path, c_npath,
        )  # fmt: skip


def _twin(fn, name: str, link: bool = True, **names):
    """``fn`` compiled as ``name`` with some of its global names bound to other objects."""
    g = dict(fn.__globals__)
    g.update(names)
    f = types.FunctionType(fn.__code__, g, name, fn.__defaults__, fn.__closure__)
    f.__qualname__ = name
    f.__module__ = fn.__module__
    f.__doc__ = fn.__doc__
    return njit(f, link=link)


# -- the step's arrays as one descriptor ----------------------------------------------------
# A kernel called from Python unboxes each array argument (~0.2-0.45 us each: the step's 64
# arrays cost more than some of its phases at 100 agents). The crowd packs them once into
# one int64 descriptor (address and shape of each, :func:`pack`) and calls
# :func:`step_desc` / :func:`step_par_desc`, which rebuild the arrays (no reference count:
# the crowd owns them) and call the very same compiled step.


def _plain_opener(spec):
    """An intrinsic ``open(d)`` -> tuple of C-contiguous arrays (numba's plain array
    types, so callees keep their signatures) described by ``d``: 4 int64 words per
    array of ``spec`` ((name, dtype, ndim)): address, then up to 3 extents
    (:func:`navkit._jit.desc_opener`)."""
    from numba.core import types
    from numba.np import numpy_support

    members = [types.Array(numpy_support.from_dtype(np.dtype(dt)), nd, "C") for _, dt, nd in spec]
    return desc_opener(members, types.Tuple(members), 4)


def pack(arrays, spec) -> np.ndarray:
    """The (4 * len(spec),) int64 descriptor of ``arrays`` (address and extents of each;
    they must match ``spec``'s dtype and rank, be C-contiguous and writable). The caller
    keeps the arrays alive (and never reallocates them) while the descriptor is used."""
    out = np.zeros(4 * len(spec), np.int64)
    if len(arrays) != len(spec):
        raise TypeError(f"{len(arrays)} arrays for {len(spec)} descriptor entries")
    for i, ((name, dt, nd), a) in enumerate(zip(spec, arrays)):
        if (
            not isinstance(a, np.ndarray) or a.dtype != np.dtype(dt) or a.ndim != nd
            or not a.flags.c_contiguous or not a.flags.writeable
        ):  # fmt: skip
            raise TypeError(f"{name}: not a writable C-contiguous {dt} array of rank {nd}")
        out[4 * i] = a.ctypes.data
        out[4 * i + 1 : 4 * i + 1 + nd] = a.shape
    return out


#: the step kernel's arrays in its descriptor (:func:`pack`), in order: (name, dtype, ndim)
STEP_SPEC = (
    ("ticks", "i8", 2), ("info", "i8", 1), ("slow", "i8", 1), ("d", "i8", 1),
    ("tiny_ds", "i8", 2), ("pool_d", "i8", 1), ("qi", "i8", 1), ("qf", "f4", 1),
    ("flags_table", "i4", 2), ("costs_table", "f4", 2), ("pq_ref", "i8", 1), ("act", "i8", 1),
    ("walking", "b1", 1), ("nsamples", "i8", 1), ("fp", "f4", 2), ("ip", "i4", 2),
    ("active", "b1", 1), ("state", "i1", 1), ("target_state", "i1", 1), ("target_ref", "i8", 1),
    ("target_pos", "f4", 2), ("target_pathq_ref", "i8", 1), ("target_replan", "b1", 1),
    ("target_replan_time", "f4", 1), ("update_flags", "i4", 1), ("query_filter", "i4", 1),
    ("avoidance_model", "i1", 1), ("avoidance_type", "i4", 1), ("radius", "f4", 1),
    ("height", "f4", 1), ("max_speed", "f4", 1), ("max_acceleration", "f4", 1),
    ("collision_query_range", "f4", 1), ("path_optimization_range", "f4", 1),
    ("separation_weight", "f4", 1), ("desired_speed", "f4", 1), ("npos", "f4", 2),
    ("vel", "f4", 2), ("dvel", "f4", 2), ("nvel", "f4", 2), ("disp", "f4", 2),
    ("c_pos", "f4", 2), ("c_target", "f4", 2), ("c_path", "i8", 2), ("c_npath", "i4", 1),
    ("corner_verts", "f4", 3), ("corner_flags", "u1", 2), ("corner_polys", "i8", 2),
    ("ncorners", "i4", 1), ("neis", "i4", 2), ("nei_dist", "f4", 2), ("nneis", "i4", 1),
    ("topology_opt_time", "f4", 1), ("partial", "b1", 1), ("anim_active", "b1", 1),
    ("b_center", "f4", 2), ("b_segs", "f4", 3), ("b_seg_d", "f4", 2), ("b_nsegs", "i4", 1),
    ("b_polys", "i8", 2), ("b_npolys", "i4", 1), ("buckets", "i8", 1), ("items", "i8", 2),
    ("lo", "i8", 2),
)  # fmt: skip


def _step_desc_impl(stage, nch, dt, inv_cell, sd, rd, max_iters, queue_cap):
    """:func:`step` (or, compiled as ``step_par_desc``, :func:`step_par`) with its arrays
    from the descriptor ``sd`` (:data:`STEP_SPEC`, :func:`pack`): one argument to unbox
    instead of 64 (~0.2-0.45 us each from Python); the same compiled step is called."""
    (ticks, info, slow, d, tiny_ds, pool_d, qi, qf, flags_table, costs_table, pq_ref, act,
     walking, nsamples, fp, ip, active, state, target_state, target_ref, target_pos,
     target_pathq_ref, target_replan, target_replan_time, update_flags, query_filter,
     avoidance_model, avoidance_type, radius, height, max_speed, max_acceleration,
     collision_query_range, path_optimization_range, separation_weight, desired_speed, npos,
     vel, dvel, nvel, disp, c_pos, c_target, c_path, c_npath, corner_verts, corner_flags,
     corner_polys, ncorners, neis, nei_dist, nneis, topology_opt_time, partial, anim_active,
     b_center, b_segs, b_seg_d, b_nsegs, b_polys, b_npolys, buckets, items, lo) = _open_step(sd)  # fmt: skip
    return _step(stage, nch, ticks, info, slow, d, tiny_ds, pool_d, qi, qf, flags_table,
        costs_table, pq_ref, act, dt, walking, nsamples, fp, ip, active, state, target_state,
        target_ref, target_pos, target_pathq_ref, target_replan, target_replan_time,
        update_flags, query_filter, avoidance_model, avoidance_type, radius, height, max_speed,
        max_acceleration, collision_query_range, path_optimization_range, separation_weight,
        desired_speed, npos, vel, dvel, nvel, disp, c_pos, c_target, c_path, c_npath,
        corner_verts, corner_flags, corner_polys, ncorners, neis, nei_dist, nneis,
        topology_opt_time, partial, anim_active, b_center, b_segs, b_seg_d, b_nsegs, b_polys,
        b_npolys, inv_cell, buckets, items, lo, rd, max_iters, queue_cap)  # fmt: skip


@njit
def path_queue_order(todo, target_state, replan_time, queue):
    """dtCrowd's addToPathQueue over ``todo`` (slots in order) for the agents waiting
    for the queue: greatest ``replan_time`` first, capped at ``queue.shape[0]``; an
    agent no greater than the last is appended, otherwise inserted before the first
    it is not below. Returns the count written to ``queue``."""
    cap = queue.shape[0]
    n = 0
    for i in range(todo.shape[0]):
        s = todo[i]
        if target_state[s] != 4:  # WAITING_FOR_QUEUE
            continue
        t = replan_time[s]
        if n == 0 or t <= replan_time[queue[n - 1]]:
            if n < cap:
                queue[n] = s
                n += 1
            continue
        j = 0
        while j < n and not t >= replan_time[queue[j]]:
            j += 1
        m = min(n, cap - 1)  # shift [j, m) one place right (the last one falls off when full)
        for k in range(m, j, -1):
            queue[k] = queue[k - 1]
        queue[j] = s
        if n < cap:
            n += 1
    return n


# -- move requests and the path queue (dtCrowd::updateMoveRequest) -------------------------
_MAX_QUICK = 20  # dtCrowd's quick search: MAX_ITER
_MAX_RES = 32  # dtCrowd's quick search: MAX_RES
_FLT_MAX = F32(np.finfo(np.float32).max)


@njit
def _closest_on_poly(nav, ref, pos, out) -> bool:
    """closestPointOnPoly(ref, pos) into out; False when ref names no polygon."""
    p = poly_index(nav, ref)
    if p < 0:
        return False
    pv = np.empty((6, 3), np.float32)
    tri = np.zeros((5, 3), np.float32)
    closest_point_nav(nav, p, pos, out, pv, tri)
    return True


@njit
def _set_corridor(s, pos, path, n, c_target, c_path, c_npath, b_center, b_npolys, b_nsegs):
    """setCorridor(pos, path[:n]) and the local boundary's reset."""
    c_target[s, 0] = pos[0]
    c_target[s, 1] = pos[1]
    c_target[s, 2] = pos[2]
    for j in range(n):
        c_path[s, j] = path[j]
    c_npath[s] = n
    b_center[s, 0] = _FLT_MAX
    b_center[s, 1] = _FLT_MAX
    b_center[s, 2] = _FLT_MAX
    b_npolys[s] = 0
    b_nsegs[s] = 0


@njit(link=False)
def requests_kernel(d, pool_d, qi, qf, flags_table, costs_table, active, state, target_state,
                    target_ref, target_pos, target_pathq_ref, target_replan, target_replan_time,
                    query_filter, npos, partial, c_target, c_path, c_npath, b_center, b_npolys,
                    b_nsegs, pq_pool_d, pq_qi, pq_qf, pq_ref, pq_status, pq_keep, pq_sref,
                    pq_eref, pq_spos, pq_epos, pq_fidx, pq_paths, pq_npaths, pq_counters,
                    max_iters, queue_cap, which):  # fmt: skip
    """dtCrowd's move requests then its path queue (Crowd._move_requests and
    Crowd._path_queue in the dtCrowd-identical mode): the quick 20-iteration searches
    of the requesting agents, the queue's requests (:func:`path_queue_order`),
    ``max_iters`` iterations of the queue's sliced searches (dtPathQueue::update) and
    the finished paths merged into their agents' corridors. ``which``: 1 the move
    requests, 2 the path queue, 3 both. Returns -1 when a queued request has no filter
    index (a request made from Python without one; nothing done: the caller runs the
    Python phases), else the queue's A* iterations done (0 without ``which & 2``). The
    same float32 values and order as the Python phases."""
    nav = open_view(d)
    # the search kernels themselves, not their _entry wrappers (one compile level less)
    pool = open_pool(pool_d)
    pq_pool = open_pool(pq_pool_d)
    n = active.shape[0]
    nq_slots = pq_ref.shape[0]
    for i in range(nq_slots):
        if pq_ref[i] != 0 and pq_fidx[i] < 0:
            return -1
    cap = c_path.shape[1]
    if (which & 1) != 0:
        # -- move requests: the quick searches first, then the queue's requests, in slot
        # order (a search changes only its own agent: dtCrowd's one pass)
        todo = np.empty(n, np.int64)
        ntodo = 0
        for s in range(n):
            ts = target_state[s]
            if active[s] and state[s] != 0 and (ts == 3 or ts == 4):
                todo[ntodo] = s
                ntodo += 1
        out = np.zeros(_MAX_RES, np.int64)
        one = np.zeros(1, np.int64)
        req_pos = np.empty(3, np.float32)
        for k in range(ntodo):
            s = todo[k]
            if target_state[s] != 3:
                continue
            fi = query_filter[s]
            npath = np.int64(c_npath[s])
            tref = target_ref[s]
            sliced_init(
                nav, pool, flags_table[fi], qi, qf, c_path[s, 0], tref, npos[s], target_pos[s], 0
            )  # fmt: skip
            sliced_update(nav, pool, flags_table[fi], costs_table[fi], qi, qf, _MAX_QUICK)
            out[:] = 0
            if target_replan[s]:
                existing = c_path[s, :npath].copy()
                st, nres = sliced_finalize_partial(
                    nav, pool, flags_table[fi], costs_table[fi], qi, existing, out, _MAX_RES
                )  # fmt: skip
            else:
                st, nres = sliced_finalize(
                    nav, pool, flags_table[fi], costs_table[fi], qi, out, _MAX_RES
                )  # fmt: skip
            if (st & FAILURE) != 0 or nres <= 0:
                nres = 0
            elif out[nres - 1] != tref:
                if not _closest_on_poly(nav, out[nres - 1], target_pos[s], req_pos):
                    nres = 0
            else:
                req_pos[:] = target_pos[s]
            if nres == 0:
                req_pos[:] = npos[s]
                one[0] = c_path[s, 0]
                _set_corridor(s, req_pos, one, 1, c_target, c_path, c_npath, b_center, b_npolys,
                              b_nsegs)  # fmt: skip
                last = one[0]
            else:
                _set_corridor(s, req_pos, out, nres, c_target, c_path, c_npath, b_center, b_npolys,
                              b_nsegs)  # fmt: skip
                last = out[nres - 1]
            partial[s] = False
            if last == tref:
                target_state[s] = 2
                target_replan_time[s] = 0
            else:
                target_state[s] = 4
        # -- the queue's requests
        qbuf = np.empty(queue_cap, np.int64)
        nq = path_queue_order(todo[:ntodo], target_state, target_replan_time, qbuf)
        for k in range(nq):
            s = qbuf[k]
            npath = c_npath[s]
            slot = -1
            for i in range(nq_slots):
                if pq_ref[i] == 0:
                    slot = i
                    break
            if slot < 0:
                target_pathq_ref[s] = 0
                continue
            ref = pq_counters[0]
            nxt = (ref + 1) & 0xFFFFFFFF
            if nxt == 0:
                nxt += 1
            pq_counters[0] = nxt
            pq_ref[slot] = ref
            pq_sref[slot] = c_path[s, npath - 1]
            pq_eref[slot] = target_ref[s]
            pq_spos[slot, :] = c_target[s]
            pq_epos[slot, :] = target_pos[s]
            pq_status[slot] = 0
            pq_npaths[slot] = 0
            pq_fidx[slot] = query_filter[s]
            pq_keep[slot] = 0
            target_pathq_ref[s] = ref
            target_state[s] = 5
    if (which & 2) == 0:
        return 0
    # -- dtPathQueue::update
    it_left = max_iters
    for _ in range(nq_slots):
        i = pq_counters[1] % nq_slots
        if pq_ref[i] == 0:
            pq_counters[1] += 1
            continue
        st = pq_status[i]
        if (st & (SUCCESS | FAILURE)) != 0:
            pq_keep[i] += 1
            if pq_keep[i] > _MAX_KEEP_ALIVE:
                pq_ref[i] = 0
                pq_status[i] = 0
            pq_counters[1] += 1
            continue
        fi = pq_fidx[i]
        if st == 0:
            st = sliced_init(
                nav, pq_pool, flags_table[fi], pq_qi, pq_qf, pq_sref[i], pq_eref[i], pq_spos[i],
                pq_epos[i], 0,
            )  # fmt: skip
        if (st & IN_PROGRESS) != 0:
            st, iters = sliced_update(
                nav, pq_pool, flags_table[fi], costs_table[fi], pq_qi, pq_qf, max(it_left, 0)
            )  # fmt: skip
            it_left -= iters
        if (st & SUCCESS) != 0:
            row = pq_paths[i]
            row[:] = 0
            st, nres = sliced_finalize(
                nav, pq_pool, flags_table[fi], costs_table[fi], pq_qi, row, row.shape[0]
            )  # fmt: skip
            pq_npaths[i] = nres
        pq_status[i] = st
        if it_left <= 0:
            break
        pq_counters[1] += 1
    # -- finished paths into the corridors (Crowd._path_queue)
    merged = np.empty(cap + pq_paths.shape[1], np.int64)
    tpos = np.empty(3, np.float32)
    for s in range(n):
        if not active[s] or target_state[s] != 5:
            continue
        hit = -1
        for i in range(nq_slots):
            if pq_ref[i] == target_pathq_ref[s]:
                hit = i
                break
        st = pq_status[hit] if hit >= 0 else FAILURE
        if (st & FAILURE) != 0:
            target_pathq_ref[s] = 0
            target_state[s] = 3 if target_ref[s] != 0 else 1
            target_replan_time[s] = 0
        elif (st & SUCCESS) != 0:
            npath = np.int64(c_npath[s])
            tpos[:] = target_pos[s]
            # getPathResult: the details and SUCCESS, the slot freed
            st = (st & _DETAIL_MASK) | SUCCESS
            nres = np.int64(pq_npaths[hit])
            pq_ref[hit] = 0
            pq_status[hit] = 0
            valid = nres > 0
            partial[s] = (st & PARTIAL_RESULT) != 0
            res = pq_paths[hit]
            if valid and c_path[s, npath - 1] != res[0]:
                valid = False
            m = 0
            if valid:
                if npath > 1:
                    if (npath - 1) + nres > cap:
                        nres = cap - (npath - 1)
                    for j in range(npath - 1):
                        merged[j] = c_path[s, j]
                    for j in range(nres):
                        merged[npath - 1 + j] = res[j]
                    m = npath - 1 + nres
                    # remove trackbacks (a, b, a -> a)
                    j = 0
                    while j < m:
                        if j - 1 >= 0 and j + 1 < m and merged[j - 1] == merged[j + 1]:
                            for q in range(j - 1, m - 2):
                                merged[q] = merged[q + 2]
                            m -= 2
                            j -= 2
                        j += 1
                else:
                    for j in range(nres):
                        merged[j] = res[j]
                    m = nres
                if merged[m - 1] != target_ref[s]:
                    if not _closest_on_poly(nav, merged[m - 1], target_pos[s], tpos):
                        valid = False
            if valid:
                _set_corridor(s, tpos, merged, m, c_target, c_path, c_npath, b_center, b_npolys,
                              b_nsegs)  # fmt: skip
                target_state[s] = 2
            else:
                target_state[s] = 1
            target_replan_time[s] = 0
    return max_iters - it_left


#: :func:`requests_kernel`'s arrays in its descriptor, in order: (name, dtype, ndim)
REQUESTS_SPEC = (
    ("d", "i8", 1), ("pool_d", "i8", 1), ("qi", "i8", 1), ("qf", "f4", 1),
    ("flags_table", "i4", 2), ("costs_table", "f4", 2), ("active", "b1", 1), ("state", "i1", 1),
    ("target_state", "i1", 1), ("target_ref", "i8", 1), ("target_pos", "f4", 2),
    ("target_pathq_ref", "i8", 1), ("target_replan", "b1", 1), ("target_replan_time", "f4", 1),
    ("query_filter", "i4", 1), ("npos", "f4", 2), ("partial", "b1", 1), ("c_target", "f4", 2),
    ("c_path", "i8", 2), ("c_npath", "i4", 1), ("b_center", "f4", 2), ("b_npolys", "i4", 1),
    ("b_nsegs", "i4", 1), ("pq_pool_d", "i8", 1), ("pq_qi", "i8", 1), ("pq_qf", "f4", 1),
    ("pq_ref", "i8", 1), ("pq_status", "i8", 1), ("pq_keep", "i4", 1), ("pq_sref", "i8", 1),
    ("pq_eref", "i8", 1), ("pq_spos", "f4", 2), ("pq_epos", "f4", 2), ("pq_fidx", "i8", 1),
    ("pq_paths", "i8", 2), ("pq_npaths", "i8", 1), ("pq_counters", "i8", 1),
)  # fmt: skip
_open_requests = _plain_opener(REQUESTS_SPEC)


@njit(link=False)
def requests_desc(rd, max_iters, queue_cap, which):
    """:func:`requests_kernel` with its arrays from the descriptor ``rd``
    (:data:`REQUESTS_SPEC`, :func:`pack`)."""
    (d, pool_d, qi, qf, flags_table, costs_table, active, state, target_state, target_ref,
     target_pos, target_pathq_ref, target_replan, target_replan_time, query_filter, npos,
     partial, c_target, c_path, c_npath, b_center, b_npolys, b_nsegs, pq_pool_d, pq_qi, pq_qf,
     pq_ref, pq_status, pq_keep, pq_sref, pq_eref, pq_spos, pq_epos, pq_fidx, pq_paths,
     pq_npaths, pq_counters) = _open_requests(rd)  # fmt: skip
    return requests_kernel(d, pool_d, qi, qf, flags_table, costs_table, active, state,
        target_state, target_ref, target_pos, target_pathq_ref, target_replan,
        target_replan_time, query_filter, npos, partial, c_target, c_path, c_npath, b_center,
        b_npolys, b_nsegs, pq_pool_d, pq_qi, pq_qf, pq_ref, pq_status, pq_keep, pq_sref,
        pq_eref, pq_spos, pq_epos, pq_fidx, pq_paths, pq_npaths, pq_counters, max_iters,
        queue_cap, which)  # fmt: skip


# -- the steps (at the end: _twin copies the module's globals, requests_desc included)
# the serial step calls the serial kernels themselves (nch is 1 there)
_neighbours, _corners, _plan, _move = _neighbours_s, corners_kernel, plan_velocities, move_kernel
#: the serial step, and the one whose per-agent phases run on ``nch`` threads
#: (link=False: step_desc / step_par_desc call them; see :func:`navkit._jit.njit`)
step = _twin(_step_impl, "step", link=False)
step_par = _twin(
    _step_impl, "step_par", link=False, _neighbours=_neighbours_p, _corners=_corners_after, _plan=_plan_p,
    _move=_move_p,
)  # fmt: skip

_open_step = _plain_opener(STEP_SPEC)
#: index of ``act`` in :data:`STEP_SPEC` (its length is the descriptor's word 4 * i + 1)
STEP_ACT = [n for n, _, _ in STEP_SPEC].index("act")
_step = step
step_desc = _twin(_step_desc_impl, "step_desc")
step_par_desc = _twin(_step_desc_impl, "step_par_desc", _step=step_par)
