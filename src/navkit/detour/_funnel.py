"""String pulling along a polygon corridor (Detour's ``findStraightPath``).

The simple stupid funnel algorithm: an apex and a left/right funnel edge are
narrowed portal by portal (portals in corridor order, the end point as a final
zero-width portal); when a side would cross the other, the other side's point
becomes a corner, is emitted and the scan restarts from the portal after it.
Start and end points are first clamped onto the first/last polygon's outline.
Corners carry flags (START 1, END 2, OFF-MESH 4) and the ref of the polygon
entered there; a corner equal (within 1/16384 wu) to the previous one only
updates its flags/ref. With ``AREA_CROSSINGS`` / ``ALL_CROSSINGS`` the points
where each straight segment crosses a portal (between differing areas, or
every portal) are inserted too. A portal within 0.001 wu of the start is
skipped. Output stops at ``max_points`` with ``BUFFER_TOO_SMALL``; a corridor
with a broken link ends at the last good polygon with ``PARTIAL_RESULT``.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

from ._geom import (
    EQUAL_EPS_SQR,
    dist_pt_seg_sqr_2d,
    intersect_seg_seg_2d,
    vdist_sqr,
    vequal,
)
from ._poly import closest_point_on_boundary_s
from ._portal import (
    BUFFER_TOO_SMALL,
    FAILURE,
    IN_PROGRESS,
    INVALID_PARAM,
    PARTIAL_RESULT,
    SUCCESS,
    _portal_core,
    portal_points,
)
from ._view import POLYTYPE_OFFMESH, open_view, poly_index

START = 1
END = 2
OFFMESH = 4
AREA_CROSSINGS = 1
ALL_CROSSINGS = 2
_PORTAL_CHUNK = 8


@njit(inline="always")
def _cp3(dst, x, y, z):
    """dst[:] = (x, y, z) without a temporary row view (views of local arrays cost two
    atomic reference-count updates each in this loop)."""
    dst[0] = x
    dst[1] = y
    dst[2] = z


@njit(inline="always")
def _tri2(ax, az, bx, bz, cx, cz):
    """:func:`tri_area_2d` of points given as scalars (the same float32 operations)."""
    abx = bx - ax
    abz = bz - az
    acx = cx - ax
    acz = cz - az
    return acx * abz - abx * acz


@njit(inline="always")
def _veq(ax, ay, az, bx, by, bz):
    """:func:`vequal` of points given as scalars."""
    return vdist_sqr(ax, ay, az, bx, by, bz) < EQUAL_EPS_SQR


@njit(lent=True)
def _append(pos, flag, ref, pts, flags, refs, cnt, max_pts):
    n = cnt[0]
    if n > 0 and vequal(pts[n - 1], pos):
        flags[n - 1] = flag
        refs[n - 1] = ref
        return IN_PROGRESS
    pts[n, 0] = pos[0]
    pts[n, 1] = pos[1]
    pts[n, 2] = pos[2]
    flags[n] = flag
    refs[n] = ref
    cnt[0] = n + 1
    if n + 1 >= max_pts:
        return SUCCESS | BUFFER_TOO_SMALL
    if flag == END:
        return SUCCESS
    return IN_PROGRESS


@njit(lent=True)
def _portal_pairs(nav, path, lo, hi, lefts, rights, types, valid):
    """Portals path[i] -> path[i+1] for lo <= i < hi, validating refs (valid[i] False on
    failure)."""
    poly_type = nav.poly_type
    b = poly_index(nav, path[lo])
    for i in range(lo, hi):
        a = b
        b = poly_index(nav, path[i + 1])
        if a < 0 or b < 0:
            valid[i] = False
            continue
        valid[i] = _portal_core(nav, a, path[i + 1], b, path[i], lefts[i], rights[i])
        types[i] = poly_type[b]


@njit(lent=True)
def _append_portals(nav, i0, i1, endp, path, pts, flags, refs, cnt, max_pts, options):
    n = cnt[0]
    start = pts[n - 1].copy()
    left = np.empty(3, np.float32)
    right = np.empty(3, np.float32)
    pt = np.empty(3, np.float32)
    for i in range(i0, i1):
        a = poly_index(nav, path[i])
        b = poly_index(nav, path[i + 1])
        if a < 0 or b < 0:
            return FAILURE | INVALID_PARAM
        if not portal_points(nav, a, path[i + 1], b, path[i], left, right):
            break
        if (options & AREA_CROSSINGS) != 0:
            if nav.poly_area[a] == nav.poly_area[b]:
                continue
        ok, s, t = intersect_seg_seg_2d(start, endp, left, right)
        if ok:
            for c in range(3):
                pt[c] = left[c] + (right[c] - left[c]) * t
            st = _append(pt, 0, path[i + 1], pts, flags, refs, cnt, max_pts)
            if st != IN_PROGRESS:
                return st
    return IN_PROGRESS


@njit(lent=True)
def straight_path_kernel(nav, path, npath, spos, epos, options, max_pts, pts, flags, refs):
    """Funnel over path[:npath]; returns (status, corner count)."""
    n = max(npath, 1)
    return straight_path_core(
        nav, path, npath, spos, epos, options, max_pts, pts, flags, refs,
        np.empty((2, n, 3), np.float32), np.empty(n, np.int64), np.empty(n, np.bool_),
        np.empty((16, 3), np.float32), np.empty((2, 6), np.float32), np.empty(1, np.int64),
    )  # fmt: skip


@njit(lent=True, link=False)
def straight_path_core(nav, path, npath, spos, epos, options, max_pts, pts, flags, refs,
                       ports, types, valid, fs, fe, cnt):  # fmt: skip
    """:func:`straight_path_kernel` with caller scratch (hot loops pass borrowed arrays):
    ports (2, >= npath, 3) float32, types (>= npath,) int64, valid (>= npath,) bool,
    fs (16, 3) float32, fe (2, 6) float32, cnt (1,) int64."""
    cnt[0] = 0
    if max_pts <= 0 or npath <= 0 or path[0] == 0:
        return FAILURE | INVALID_PARAM, 0
    p0 = poly_index(nav, path[0])
    pl = poly_index(nav, path[npath - 1])
    if p0 < 0 or pl < 0:
        return FAILURE | INVALID_PARAM, 0
    cstart = fs[0]
    cend = fs[1]
    pv = fs[8:14]
    closest_point_on_boundary_s(nav, p0, spos, cstart, pv, fe[0], fe[1])
    closest_point_on_boundary_s(nav, pl, epos, cend, pv, fe[0], fe[1])
    st = _append(cstart, START, path[0], pts, flags, refs, cnt, max_pts)
    if st != IN_PROGRESS:
        return st, cnt[0]
    crossings = (options & (AREA_CROSSINGS | ALL_CROSSINGS)) != 0
    if npath > 1:
        # The funnel (apex, left and right points) lives in scalars: kept in rows of fs,
        # every test reloaded what the step before had just stored. The rows are written
        # only for the calls that take points as arrays (a corner, crossings).
        apex = fs[2]
        pleft = fs[3]
        pright = fs[4]
        ax, ay, az = cstart[0], cstart[1], cstart[2]
        plx, ply, plz = ax, ay, az
        prx, pry, prz = ax, ay, az
        apex_i = 0
        left_i = 0
        right_i = 0
        left_type = 0
        right_type = 0
        left_ref = path[0]
        right_ref = path[0]
        lefts = ports[0]
        rights = ports[1]
        # portals are computed on demand, a chunk at a time: a capped straight path
        # (a crowd's 4 corners) reads only the corridor's first few portals
        nport = 0
        i = 0
        while i < npath:
            to_type = 0
            if i + 1 < npath:
                if i >= nport:
                    hi = min(i + _PORTAL_CHUNK, npath - 1)
                    _portal_pairs(nav, path, nport, hi, lefts, rights, types, valid)
                    nport = hi
                ok = valid[i]
                to_type = types[i]
                lx, ly, lz = lefts[i, 0], lefts[i, 1], lefts[i, 2]
                rx, ry, rz = rights[i, 0], rights[i, 1], rights[i, 2]
                if not ok:
                    pi = poly_index(nav, path[i])
                    if pi < 0:
                        return FAILURE | INVALID_PARAM, cnt[0]
                    closest_point_on_boundary_s(nav, pi, epos, cend, pv, fe[0], fe[1])
                    if crossings:
                        _append_portals(
                            nav, apex_i, i, cend, path, pts, flags, refs, cnt, max_pts, options
                        )
                    _append(cend, 0, path[i], pts, flags, refs, cnt, max_pts)
                    st = SUCCESS | PARTIAL_RESULT
                    if cnt[0] >= max_pts:
                        st |= BUFFER_TOO_SMALL
                    return st, cnt[0]
                if i == 0:
                    d, tt = dist_pt_seg_sqr_2d(ax, az, lx, lz, rx, rz)
                    if d < F32(0.001) * F32(0.001):
                        i += 1
                        continue
            else:
                lx, ly, lz = cend[0], cend[1], cend[2]
                rx, ry, rz = lx, ly, lz
                to_type = 0
            restarted = False
            # right side
            if _tri2(ax, az, prx, prz, rx, rz) <= F32(0.0):
                if _veq(ax, ay, az, prx, pry, prz) or _tri2(ax, az, plx, plz, rx, rz) > F32(0.0):
                    prx, pry, prz = rx, ry, rz
                    right_ref = path[i + 1] if i + 1 < npath else np.int64(0)
                    right_type = to_type
                    right_i = i
                else:
                    if crossings:
                        _cp3(pleft, plx, ply, plz)
                        st = _append_portals(
                            nav, apex_i, left_i, pleft, path, pts, flags, refs, cnt, max_pts,
                            options,
                        )  # fmt: skip
                        if st != IN_PROGRESS:
                            return st, cnt[0]
                    ax, ay, az = plx, ply, plz
                    apex_i = left_i
                    fl = 0
                    if left_ref == 0:
                        fl = END
                    elif left_type == POLYTYPE_OFFMESH:
                        fl = OFFMESH
                    _cp3(apex, ax, ay, az)
                    st = _append(apex, fl, left_ref, pts, flags, refs, cnt, max_pts)
                    if st != IN_PROGRESS:
                        return st, cnt[0]
                    plx, ply, plz = ax, ay, az
                    prx, pry, prz = ax, ay, az
                    left_i = apex_i
                    right_i = apex_i
                    i = apex_i
                    restarted = True
            # left side
            if not restarted and _tri2(ax, az, plx, plz, lx, lz) >= F32(0.0):
                if _veq(ax, ay, az, plx, ply, plz) or _tri2(ax, az, prx, prz, lx, lz) < F32(0.0):
                    plx, ply, plz = lx, ly, lz
                    left_ref = path[i + 1] if i + 1 < npath else np.int64(0)
                    left_type = to_type
                    left_i = i
                else:
                    if crossings:
                        _cp3(pright, prx, pry, prz)
                        st = _append_portals(
                            nav, apex_i, right_i, pright, path, pts, flags, refs, cnt, max_pts,
                            options,
                        )  # fmt: skip
                        if st != IN_PROGRESS:
                            return st, cnt[0]
                    ax, ay, az = prx, pry, prz
                    apex_i = right_i
                    fl = 0
                    if right_ref == 0:
                        fl = END
                    elif right_type == POLYTYPE_OFFMESH:
                        fl = OFFMESH
                    _cp3(apex, ax, ay, az)
                    st = _append(apex, fl, right_ref, pts, flags, refs, cnt, max_pts)
                    if st != IN_PROGRESS:
                        return st, cnt[0]
                    plx, ply, plz = ax, ay, az
                    prx, pry, prz = ax, ay, az
                    left_i = apex_i
                    right_i = apex_i
                    i = apex_i
            i += 1
        if crossings:
            st = _append_portals(
                nav, apex_i, npath - 1, cend, path, pts, flags, refs, cnt, max_pts, options
            )
            if st != IN_PROGRESS:
                return st, cnt[0]
    _append(cend, END, 0, pts, flags, refs, cnt, max_pts)
    st = SUCCESS
    if cnt[0] >= max_pts:
        st |= BUFFER_TOO_SMALL
    return st, cnt[0]


# -- entry points: the same kernels on a packed view descriptor (see _view.pack_view) --
@njit
def straight_path_entry(d, path, npath, spos, epos, options, max_pts, pts, flags, refs):
    """:func:`straight_path_kernel` on the view described by ``d``."""
    return straight_path_kernel(
        open_view(d), path, npath, spos, epos, options, max_pts, pts, flags, refs
    )
