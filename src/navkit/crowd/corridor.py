"""Path corridors of the agents (Detour's dtPathCorridor), over :class:`AgentArrays`.

Each agent's corridor is ``c_pos`` (its position on the navmesh), ``c_target``
and the polygon path ``c_path[:c_npath]``. The functions take the agent arrays,
the slot and a :class:`~navkit.detour.query.NavMeshQuery`, and do what the
dtPathCorridor method of the same name does, with Detour's float32 arithmetic.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from navkit._jit import borrow, njit
from navkit.detour._funnel import OFFMESH, straight_path_core
from navkit.detour._geom import point_in_poly
from navkit.detour._local import MAX_STACK, move_along_surface_core
from navkit.detour._nodes import open_pool
from navkit.detour._poly import closest_point_nav, poly_height_core
from navkit.detour._raycast import raycast_core
from navkit.detour._view import POLYTYPE_OFFMESH, load_poly, open_view, poly_index
from navkit.detour.query import FAILURE, STRAIGHTPATH_OFFMESH_CONNECTION, NavMeshQuery
from navkit.errors import InputError, StaleHandleError

from ._par import keep, twins
from .agents import MAX_CORNERS, AgentArrays

__all__ = [
    "reset", "set_corridor", "find_corners", "move_position", "is_valid", "fix_path_start",
    "merge_corridor_start_moved", "merge_corridor_start_shortcut", "optimize_path_visibility",
    "move_over_offmesh_connection", "corners_kernel", "corners_kernel_par", "move_kernel",
    "move_kernel_par",
]  # fmt: skip

_MIN_TARGET_DIST = np.float32(0.01)
_MAX_VISITED = 16


def reset(a: AgentArrays, s: int, ref: int, pos) -> None:
    """dtPathCorridor::reset: a one-polygon corridor at pos (target = pos)."""
    a.c_path[s, 0] = ref
    a.c_npath[s] = 1
    a.c_pos[s] = pos
    a.c_target[s] = pos


def set_corridor(a: AgentArrays, s: int, target, path: np.ndarray) -> None:
    """dtPathCorridor::setCorridor: new target and path (path non-empty, <= capacity)."""
    n = path.shape[0]
    a.c_target[s] = target
    a.c_path[s, :n] = path
    a.c_npath[s] = n


def fix_path_start(a: AgentArrays, s: int, safe_ref: int, safe_pos) -> None:
    """dtPathCorridor::fixPathStart."""
    a.c_pos[s] = safe_pos
    npath = int(a.c_npath[s])
    if npath < 3 and npath > 0:
        a.c_path[s, 2] = a.c_path[s, npath - 1]
        a.c_path[s, 0] = safe_ref
        a.c_path[s, 1] = 0
        a.c_npath[s] = 3
    else:
        a.c_path[s, 0] = safe_ref
        a.c_path[s, 1] = 0


def is_valid(a: AgentArrays, s: int, max_look_ahead: int, q: NavMeshQuery, flt) -> bool:
    """dtPathCorridor::isValid: the first max_look_ahead polygons are valid refs."""
    n = min(int(a.c_npath[s]), max_look_ahead)
    return all(q.is_valid_poly_ref(int(a.c_path[s, i]), flt) for i in range(n))


def find_corners(a: AgentArrays, s: int, q: NavMeshQuery) -> int:
    """dtPathCorridor::findCorners into the agent's corner arrays; returns the count.

    Straight path of at most MAX_CORNERS points from c_pos to c_target, corners
    closer than 0.01 wu (xz) at the start dropped, cut after an off-mesh link.
    """
    npath = int(a.c_npath[s])
    sp = q.find_straight_path(a.c_pos[s], a.c_target[s], a.c_path[s, :npath], 0, MAX_CORNERS)
    pts, fl, rf = sp.points, sp.flags, sp.refs
    n = pts.shape[0]
    i0 = 0
    pos = a.c_pos[s]
    while i0 < n:
        if fl[i0] & STRAIGHTPATH_OFFMESH_CONNECTION:
            break
        dx = pts[i0, 0] - pos[0]
        dz = pts[i0, 2] - pos[2]
        if dx * dx + dz * dz > _MIN_TARGET_DIST * _MIN_TARGET_DIST:
            break
        i0 += 1
    k = n - i0
    for i in range(i0, n):
        if fl[i] & STRAIGHTPATH_OFFMESH_CONNECTION:
            k = i - i0 + 1
            break
    a.corner_verts[s, :k] = pts[i0 : i0 + k]
    a.corner_flags[s, :k] = fl[i0 : i0 + k]
    a.corner_polys[s, :k] = rf[i0 : i0 + k]
    a.ncorners[s] = k
    return k


@njit(cache=True)
def merge_corridor_start_moved(path, npath, max_path, visited, nvisited):
    """dtMergeCorridorStartMoved: splice the visited polygons in front; returns the new count."""
    furthest_path = -1
    furthest_visited = -1
    for i in range(npath - 1, -1, -1):
        found = False
        for j in range(nvisited - 1, -1, -1):
            if path[i] == visited[j]:
                furthest_path = i
                furthest_visited = j
                found = True
        if found:
            break
    if furthest_path == -1 or furthest_visited == -1:
        return npath
    req = nvisited - furthest_visited
    orig = min(furthest_path + 1, npath)
    size = max(0, npath - orig)
    if req + size > max_path:
        size = max_path - req
    if size > 0:
        path[req : req + size] = path[orig : orig + size].copy()
    for i in range(req):
        path[i] = visited[(nvisited - 1) - i]
    return req + size


def move_position(a: AgentArrays, s: int, npos, q: NavMeshQuery, flt) -> bool:
    """dtPathCorridor::movePosition: slide c_pos toward npos, merge the visited polygons."""
    r = q.move_along_surface(int(a.c_path[s, 0]), a.c_pos[s], npos, flt, _MAX_VISITED)
    if r.status & FAILURE:
        return False
    vis = r.visited
    a.c_npath[s] = merge_corridor_start_moved(
        a.c_path[s], int(a.c_npath[s]), a.c_path.shape[1], vis, vis.shape[0]
    )
    res = r.position.copy()
    h = q.get_poly_height(int(a.c_path[s, 0]), res)
    res[1] = a.c_pos[s, 1] if h is None else np.float32(h)
    a.c_pos[s] = res
    return True


@njit(cache=True)
def merge_corridor_start_shortcut(path, npath, max_path, visited, nvisited):
    """dtMergeCorridorStartShortcut: replace the path's start by a shortcut; returns the count."""
    furthest_path = -1
    furthest_visited = -1
    for i in range(npath - 1, -1, -1):
        found = False
        for j in range(nvisited - 1, -1, -1):
            if path[i] == visited[j]:
                furthest_path = i
                furthest_visited = j
                found = True
        if found:
            break
    if furthest_path == -1 or furthest_visited == -1:
        return npath
    req = furthest_visited
    if req <= 0:
        return npath
    orig = furthest_path
    size = max(0, npath - orig)
    if req + size > max_path:
        size = max_path - req
    if size > 0:
        path[req : req + size] = path[orig : orig + size].copy()
    for i in range(req):
        path[i] = visited[i]
    return req + size


def optimize_path_visibility(
    a: AgentArrays, s: int, nxt: np.ndarray, opt_range: np.float32, q: NavMeshQuery, flt
) -> None:
    """dtPathCorridor::optimizePathVisibility: raycast toward nxt (stretched to opt_range)
    and shortcut the corridor's start when the ray gets (almost) there."""
    pos = a.c_pos[s]
    dx = nxt[0] - pos[0]
    dz = nxt[2] - pos[2]
    dist = np.sqrt(dx * dx + dz * dz)
    if dist < np.float32(0.01):
        return
    dist = min(dist + np.float32(0.01), opt_range)
    k = opt_range / dist
    goal = np.empty(3, np.float32)
    for i in range(3):
        goal[i] = pos[i] + (nxt[i] - pos[i]) * k
    hit = q.raycast(int(a.c_path[s, 0]), pos.copy(), goal, flt, 0, 0, 32)
    n = hit.path.shape[0]
    if n > 1 and hit.t > np.float32(0.99):
        a.c_npath[s] = merge_corridor_start_shortcut(
            a.c_path[s], int(a.c_npath[s]), a.c_path.shape[1], hit.path, n
        )


def move_over_offmesh_connection(a: AgentArrays, s: int, offmesh_ref: int, navmesh):
    """dtPathCorridor::moveOverOffmeshConnection: advance the path over the link.

    Returns ``(prev_ref, link_ref, start_pos, end_pos)`` (c_pos moved to end_pos),
    or None when the link is not on the path or has no end points.
    """
    npath = int(a.c_npath[s])
    path = a.c_path[s]
    prev_ref = 0
    poly_ref = int(path[0])
    k = 0
    while k < npath and poly_ref != offmesh_ref:
        prev_ref = poly_ref
        poly_ref = int(path[k])
        k += 1
    if k == npath:
        return None
    path[: npath - k] = path[k:npath].copy()
    a.c_npath[s] = npath - k
    if not poly_ref:
        return None
    try:
        start, end = navmesh.get_off_mesh_connection_poly_end_points(prev_ref, poly_ref)
    except (StaleHandleError, InputError):  # Detour: the call fails
        return None
    a.c_pos[s] = end
    return prev_ref, poly_ref, np.asarray(start, np.float32), np.asarray(end, np.float32)


# -- kernels over all agents ----------------------------------------------------------------
_TARGET_NONE = 0
_TARGET_VELOCITY = 6
_OPTIMIZE_VIS = 8
_MAX_RES = 32  # optimizePathVisibility's raycast path capacity
_F0_01 = np.float32(0.01)
_F0_99 = np.float32(0.99)


def _corners_impl(d, flags_table, costs_table, act, nchunk, walking, target_state, update_flags,
                  qfilter, opt_range, c_pos, c_target, c_path, c_npath, corner_verts,
                  corner_flags, corner_polys, ncorners):  # fmt: skip
    """dtCrowd's corner phase for every walking agent with a path target:
    dtPathCorridor::findCorners (straight path of <= MAX_CORNERS points, near
    corners dropped, cut after an off-mesh link) and, with OPTIMIZE_VIS,
    optimizePathVisibility toward the second corner (raycast + shortcut)."""
    (c_pos, c_target, c_path, c_npath, corner_verts, corner_flags, corner_polys,
     ncorners) = borrow((c_pos, c_target, c_path, c_npath, corner_verts, corner_flags,
                         corner_polys, ncorners))  # fmt: skip
    # (row views of owned tables count references atomically: threads would contend)
    flags_table, costs_table = borrow((flags_table, costs_table))
    cap = c_path.shape[1]
    n_act = act.shape[0]
    min_d2 = _F0_01 * _F0_01
    for c in prange(nchunk):
        nav = open_view(d)  # (inside: a parfor cannot capture the NamedTuple)
        pts_o = np.empty((MAX_CORNERS, 3), np.float32)
        fl_o = np.empty(MAX_CORNERS, np.uint8)
        rf_o = np.empty(MAX_CORNERS, np.int64)
        ray_path_o = np.zeros(_MAX_RES, np.int64)
        fv_o = np.empty((24, 3), np.float32)
        ports_o = np.empty((2, cap, 3), np.float32)
        types_o = np.empty(cap, np.int64)
        valid_o = np.empty(cap, np.bool_)
        fe_o = np.empty((2, 6), np.float32)
        cnt_o = np.empty(1, np.int64)
        pts, fl, rf, ray_path, fv, ports, types_, valid, fe, cnt = borrow(
            (pts_o, fl_o, rf_o, ray_path_o, fv_o, ports_o, types_o, valid_o, fe_o, cnt_o)
        )
        normal = fv[16]
        goal = fv[17]
        cur = fv[18]
        pv = fv[0:6]
        fs = fv[8:24]
        for i in range((n_act * c) // nchunk, (n_act * (c + 1)) // nchunk):
            s = act[i]
            if not walking[s]:
                continue
            ts = target_state[s]
            if ts == _TARGET_NONE or ts == _TARGET_VELOCITY:
                continue
            pos = c_pos[s]
            _, n = straight_path_core(
                nav, c_path[s], c_npath[s], pos, c_target[s], 0, MAX_CORNERS, pts, fl, rf,
                ports, types_, valid, fs, fe, cnt,
            )  # fmt: skip
            i0 = 0
            while i0 < n:
                if fl[i0] & OFFMESH:
                    break
                dx = pts[i0, 0] - pos[0]
                dz = pts[i0, 2] - pos[2]
                if dx * dx + dz * dz > min_d2:
                    break
                i0 += 1
            k = n - i0
            for j in range(i0, n):
                if fl[j] & OFFMESH:
                    k = j - i0 + 1
                    break
            for j in range(k):
                corner_verts[s, j, 0] = pts[i0 + j, 0]
                corner_verts[s, j, 1] = pts[i0 + j, 1]
                corner_verts[s, j, 2] = pts[i0 + j, 2]
                corner_flags[s, j] = fl[i0 + j]
                corner_polys[s, j] = rf[i0 + j]
            ncorners[s] = k
            if not (update_flags[s] & _OPTIMIZE_VIS) or k == 0:
                continue
            # optimizePathVisibility(corner[min(1, k-1)], range)
            nxt = corner_verts[s, min(1, k - 1)]
            gx = nxt[0] - pos[0]
            gz = nxt[2] - pos[2]
            dist = np.sqrt(gx * gx + gz * gz)
            if dist < _F0_01:
                continue
            dist = min(dist + _F0_01, opt_range[s])
            sc = opt_range[s] / dist
            for q in range(3):
                goal[q] = pos[q] + (nxt[q] - pos[q]) * sc
            f = qfilter[s]
            _, t, _, nres, _ = raycast_core(
                nav, flags_table[f], costs_table[f], c_path[s, 0], pos, goal, 0, 0, ray_path,
                _MAX_RES, normal, pv, cur,
            )  # fmt: skip
            if nres > 1 and t > _F0_99:
                c_npath[s] = merge_corridor_start_shortcut(
                    c_path[s], c_npath[s], cap, ray_path, nres
                )
        keep((pts_o, fl_o, rf_o, ray_path_o, fv_o, ports_o, types_o, valid_o, fe_o, cnt_o))


corners_kernel, corners_kernel_par = twins(_corners_impl)


def _move_impl(d, tiny_ds, flags_table, act, nchunk, walking, target_state, qfilter, npos,
               c_pos, c_target, c_path, c_npath):  # fmt: skip
    """dtCrowd's move phase: dtPathCorridor::movePosition toward npos for every walking
    agent (moveAlongSurface, merge the visited polygons, height from the first
    polygon), npos = the corridor's position; a corridor without a path target is
    cut to its first polygon.

    When npos lies inside the corridor's first polygon (moveAlongSurface's first
    test), the result is npos itself and the visited list that polygon alone: that
    case is done here without the search (same float32 result), merging only when
    the polygon recurs further along the corridor."""
    npos, c_pos, c_target, c_path, c_npath = borrow((npos, c_pos, c_target, c_path, c_npath))
    flags_table = borrow(flags_table)  # (its row views: no shared reference count)
    n_act = act.shape[0]
    cap = c_path.shape[1]
    for c in prange(nchunk):
        nav = open_view(d)  # (inside: a parfor cannot capture the NamedTuple)
        tiny = open_pool(tiny_ds[c])
        res_o = np.empty(3, np.float32)
        epos_o = np.empty(3, np.float32)
        visited_o = np.zeros(_MAX_VISITED, np.int64)
        si_o = np.empty(MAX_STACK + 8, np.int64)
        fs_o = np.empty((8, 3), np.float32)
        pv_o = np.empty((6, 3), np.float32)
        tri_o = np.zeros((5, 3), np.float32)
        hout_o = np.empty(3, np.float32)
        res, epos, visited, si, fs, pv, tri, hout = borrow(
            (res_o, epos_o, visited_o, si_o, fs_o, pv_o, tri_o, hout_o)
        )
        for i in range((n_act * c) // nchunk, (n_act * (c + 1)) // nchunk):
            s = act[i]
            if not walking[s]:
                continue
            p0 = poly_index(nav, c_path[s, 0])
            if p0 >= 0:
                epos[0] = npos[s, 0]
                epos[1] = npos[s, 1]
                epos[2] = npos[s, 2]
                inside = False
                if nav.poly_type[p0] != POLYTYPE_OFFMESH:
                    nv = load_poly(nav, p0, pv)
                    inside = point_in_poly(epos[0], epos[2], pv, nv)
                if inside:  # moveAlongSurface ends at once: epos, visited = [path[0]]
                    ref0 = c_path[s, 0]
                    again = False
                    for j in range(1, c_npath[s]):
                        if c_path[s, j] == ref0:
                            again = True
                    if again:
                        visited[0] = ref0
                        c_npath[s] = merge_corridor_start_moved(
                            c_path[s], c_npath[s], cap, visited, 1
                        )
                    tri[:] = 0
                    h = c_pos[s, 1]
                    if closest_point_nav(nav, p0, epos, hout, pv, tri):
                        h = hout[1]
                    c_pos[s, 0] = epos[0]
                    c_pos[s, 1] = h
                    c_pos[s, 2] = epos[2]
                    st = FAILURE  # done (nothing left to merge)
                    nvis = 1
                else:
                    st, nvis = move_along_surface_core(
                        nav, tiny, flags_table[qfilter[s]], p0, c_pos[s], epos, res, visited,
                        si, fs,
                    )  # fmt: skip
                if (st & FAILURE) == 0:
                    c_npath[s] = merge_corridor_start_moved(
                        c_path[s], c_npath[s], cap, visited, nvis
                    )
                    h = c_pos[s, 1]
                    q0 = poly_index(nav, c_path[s, 0])
                    if q0 >= 0:
                        ok, hh = poly_height_core(nav, q0, res, hout, pv, tri)
                        if ok:
                            h = hh
                    c_pos[s, 0] = res[0]
                    c_pos[s, 1] = h
                    c_pos[s, 2] = res[2]
            npos[s, 0] = c_pos[s, 0]
            npos[s, 1] = c_pos[s, 1]
            npos[s, 2] = c_pos[s, 2]
            ts = target_state[s]
            if ts == _TARGET_NONE or ts == _TARGET_VELOCITY:
                c_npath[s] = 1
                c_target[s, 0] = c_pos[s, 0]
                c_target[s, 1] = c_pos[s, 1]
                c_target[s, 2] = c_pos[s, 2]
        keep((res_o, epos_o, visited_o, si_o, fs_o, pv_o, tri_o, hout_o))


move_kernel, move_kernel_par = twins(_move_impl)
