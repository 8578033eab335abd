"""Paths on the Explicit Corridor Map.

``find_path`` retracts start and goal onto the medial axis (along the ray from
the nearest obstacle point, which stays inside one Voronoi cell), runs Dijkstra
over the medial-axis edges whose minimum clearance is at least the agent radius
``r``, and returns the route, its corridor (the maximum-clearance disks along
the route, with the closest obstacle points on the left and right) and the
shortest path inside the corridor for radius ``r``: a funnel (string pulling)
over portals that join the left and right closest points shrunk by ``r`` toward
the medial axis (Geraerts 2010, "shortest paths with clearance in a corridor").

The exact result wraps around obstacle corners on circular arcs of radius ``r``;
here each arc is replaced by chords of a slightly larger circle
(``r * (1 + ARC_SLACK)``), sampled finely enough that every chord stays at least
``r`` from the corner.  The path therefore never comes closer than ``r`` to an
obstacle and is at most about ``ARC_SLACK`` (relative) longer than the arc path.
A preferred clearance ``c >= r`` gives the *indicative route* variant: portals
are shrunk by ``min(c, local clearance)`` instead, keeping the agent further
from obstacles where the corridor is wide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from navkit.errors import InputError

from . import _kernels as K
from . import _update_kernels as U
from .geom import pair_param, site_dist

ARC_SLACK = 1e-3
_MAX_STEP = 2.0 * math.acos(1.0 / (1.0 + ARC_SLACK)) * 0.9


@dataclass
class PathResult:
    """A path on the ECM (all world coordinates [wu]).

    Attributes
    ----------
    points : (k, 2) float64 -- the path for the agent (start ... goal).
    length : float -- its length.
    route : (m, 2) float64 -- the medial-axis route (start, retraction, ..., goal).
    centers, radii : (m', 2), (m',) -- corridor disks along the route.
    left, right : (m', 2) -- closest obstacle points on the left/right of the route.
    clearance : float -- the agent radius it was planned for.
    edges : list[int] -- diagram edge ids the route uses.
    """

    points: np.ndarray
    length: float
    route: np.ndarray
    centers: np.ndarray
    radii: np.ndarray
    left: np.ndarray
    right: np.ndarray
    clearance: float
    edges: list


def _pair_points(S, a, b, p0, p1, fr):
    """Vectorised :func:`navkit.ecm.geom.pair_point` over fractions ``fr`` (k,)."""
    ka, kb = S.kind[a], S.kind[b]
    x0, y0 = p0
    x1, y1 = p1
    if ka + kb != 1:
        # point-point and segment-segment bisectors are straight
        return np.column_stack([x0 + fr * (x1 - x0), y0 + fr * (y1 - y0)])
    _, t0 = pair_param(S, a, b, x0, y0)
    _, t1 = pair_param(S, a, b, x1, y1)
    tm = t0 + fr * (t1 - t0)
    sg, pt = (a, b) if ka == 1 else (b, a)
    dx, dy = S.bx[sg] - S.ax[sg], S.by[sg] - S.ay[sg]
    ln = math.hypot(dx, dy)
    ux, uy = dx / ln, dy / ln
    nx, ny = -uy, ux
    rx, ry = S.ax[pt] - S.ax[sg], S.ay[pt] - S.ay[sg]
    pu, pv = rx * ux + ry * uy, rx * nx + ry * ny
    if pv == 0.0:
        return np.column_stack([x0 + fr * (x1 - x0), y0 + fr * (y1 - y0)])
    yv = ((tm - pu) ** 2 + pv * pv) / (2.0 * pv)
    return np.column_stack([S.ax[sg] + tm * ux + yv * nx, S.ay[sg] + tm * uy + yv * ny])


def edge_polyline(cmap, e):
    """Samples of diagram edge ``e`` (local frame): points (k, 2) and clearance (k,).
    Sampled on first use (one kernel call) and cached until an update touches it."""
    cache = cmap._polycache
    hit = cache.get(e)
    if hit is not None:
        return hit
    d = cmap.diagram
    S = cmap.sites
    out = K.sample_edge(int(e), d.ev, d.es, d.vx, d.vy, S.kind, S.ax, S.ay, S.bx, S.by, _MAX_STEP)
    cache[e] = out
    return out


def _graph(cmap):
    """The route graph over alive edges (CSR, both directions) with each edge's
    exact length and least clearance (closed form, cached per edge until an
    update touches it; no edge is sampled here)."""
    g = cmap._cache.get("graph")
    if g is not None:
        return g
    d = cmap.diagram
    S = cmap.sites
    nv = d.nv
    eids = np.nonzero(d.ealive[: d.next_e])[0].astype(np.int64)
    ev = d.ev[eids]
    ne = d.next_e
    if cmap._estat_ok.shape[0] < ne:  # room for every edge id (new ones not current)
        st = np.zeros((2 * ne, 2))
        ok = np.zeros(2 * ne, np.bool_)
        st[: cmap._estat.shape[0]] = cmap._estat
        ok[: cmap._estat_ok.shape[0]] = cmap._estat_ok
        cmap._estat, cmap._estat_ok = st, ok
    miss = eids[~cmap._estat_ok[eids]]
    if miss.size:
        ln, mc = K.edge_stats(miss, d.ev, d.es, d.vx, d.vy, S.kind, S.ax, S.ay, S.bx, S.by)
        cmap._estat[miss, 0] = ln
        cmap._estat[miss, 1] = mc
        cmap._estat_ok[miss] = True
    length = cmap._estat[eids, 0]
    minclr = cmap._estat[eids, 1]
    src = np.concatenate([ev[:, 0], ev[:, 1]])
    dst = np.concatenate([ev[:, 1], ev[:, 0]])
    eof = np.concatenate([np.arange(eids.shape[0]), np.arange(eids.shape[0])])
    order = np.argsort(src, kind="stable")
    indptr = np.zeros(nv + 1, np.int64)
    np.add.at(indptr, src + 1, 1)
    indptr = np.cumsum(indptr)
    g = {
        "eids": eids,
        "length": length,
        "minclr": minclr,
        "indptr": indptr,
        "nbr": dst[order],
        "from": src[order],
        "eidx": eof[order],
        "nv": nv,
    }
    cmap._cache["graph"] = g
    return g


def _nearest(cmap, x, y):
    """Nearest alive site to a local point: (site id, distance [wu]); over the
    site grid (same answer and tie-break as a scan in id order)."""
    S = cmap.sites
    if not hasattr(S, "cells"):
        return K.nearest_site(x, y, *S.kernel_args())
    return U.grid_nearest(x, y, *S.grid_args(), S.kind, S.ax, S.ay, S.bx, S.by, S.alive)


def clearance_at(cmap, x, y):
    """Distance from a local point to the nearest obstacle; 0 outside free space."""
    s, dist = _nearest(cmap, x, y)
    if s < 0:
        return math.inf
    if not cmap.diagram.side_ok(s, x, y, dist) or dist <= 0.0:
        return 0.0
    return float(dist)


def _retract(cmap, x, y):
    """(edge id, polyline index, fraction, point) where the ray from the nearest
    obstacle point through (x, y) first meets the medial axis."""
    S = cmap.sites
    d = cmap.diagram
    s, dist = _nearest(cmap, x, y)
    _, fx, fy, _ = site_dist(S, s, x, y)
    ux, uy = (x - fx) / dist, (y - fy) / dist
    cand = set()
    for v in d.site_verts.get(int(s), ()):
        for e in d.vert_edges.get(v, ()):
            cand.add(e)
    hit = None
    if S.kind[s] == 1 and len(cand) > 8:
        # a long segment (a boundary wall) has many vertices; the ray leaves its
        # cell through the edge above the foot, and the foot moves monotonically
        # along each edge of the cell: only edges whose ends' feet bracket this
        # foot are sampled (all of them if none of those is hit)
        ce = np.fromiter(cand, np.int64, len(cand))
        dx, dy = S.bx[s] - S.ax[s], S.by[s] - S.ay[s]
        ln2 = dx * dx + dy * dy
        v0, v1 = d.ev[ce, 0], d.ev[ce, 1]
        t0 = ((d.vx[v0] - S.ax[s]) * dx + (d.vy[v0] - S.ay[s]) * dy) / ln2
        t1 = ((d.vx[v1] - S.ax[s]) * dx + (d.vy[v1] - S.ay[s]) * dy) / ln2
        tx = ((x - S.ax[s]) * dx + (y - S.ay[s]) * dy) / ln2
        keep = (np.minimum(t0, t1) <= tx + 1e-6) & (np.maximum(t0, t1) >= tx - 1e-6)
        hit = _first_hit(cmap, ce[keep].tolist(), x, y, ux, uy, dist)
    if hit is None:
        hit = _first_hit(cmap, cand, x, y, ux, uy, dist)
    if hit is None:
        return None
    e, i, f = hit
    pts, _ = edge_polyline(cmap, e)
    p = pts[i] + f * (pts[i + 1] - pts[i])
    return e, i, f, p


def _first_hit(cmap, cand, x, y, ux, uy, dist):
    """(edge, polyline index, fraction) of the first crossing of the ray from
    (x, y) along (ux, uy) with the polylines of the edges ``cand``; None if none
    (ties go to the first edge of ``cand``, then the first piece)."""
    cand = list(cand)
    if not cand:
        return None
    polys = [edge_polyline(cmap, e)[0] for e in cand]
    a = np.concatenate([p[:-1] for p in polys])
    b = np.concatenate([p[1:] for p in polys])
    ex, ey = b[:, 0] - a[:, 0], b[:, 1] - a[:, 1]
    den = ux * ey - uy * ex
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = ((a[:, 0] - x) * ey - (a[:, 1] - y) * ex) / den
        mu = ((a[:, 0] - x) * uy - (a[:, 1] - y) * ux) / den
    ok = (den != 0) & (mu >= -1e-12) & (mu <= 1 + 1e-12) & (lam >= -1e-9 * (1 + dist))
    if not ok.any():
        return None
    j = int(np.argmin(np.where(ok, lam, np.inf)))
    ends = np.cumsum([len(p) - 1 for p in polys])
    k = int(np.searchsorted(ends, j, side="right"))
    i = j - (int(ends[k - 1]) if k else 0)
    return cand[k], i, float(min(max(mu[j], 0.0), 1.0))


def _split(cmap, hit):
    """Polyline pieces from a retraction point to each end vertex of its edge."""
    e, i, f, p = hit
    pts, clr = edge_polyline(cmap, e)
    to_v0 = np.vstack([p[None], pts[i::-1]])
    to_v1 = np.vstack([p[None], pts[i + 1 :]])
    return to_v0, to_v1


def _clr_ok(cmap, pts, a, r):
    """Whether every point of ``pts`` ((k, 2) local) is at least ``r`` from site ``a``."""
    S = cmap.sites
    px, py = pts[:, 0] - S.ax[a], pts[:, 1] - S.ay[a]
    if S.kind[a] == 1:
        dx, dy = S.bx[a] - S.ax[a], S.by[a] - S.ay[a]
        t = np.clip((px * dx + py * dy) / (dx * dx + dy * dy), 0.0, 1.0)
        px, py = px - t * dx, py - t * dy
    return bool(np.min(np.hypot(px, py)) >= r)


def _plen(p):
    return float(np.sum(np.hypot(*np.diff(p, axis=0).T))) if len(p) > 1 else 0.0


def find_path(cmap, start, goal, clearance=0.0, preferred_clearance=None):
    """See :meth:`navkit.ecm.CorridorMap.find_path`."""
    r = float(clearance)
    if not (math.isfinite(r) and r >= 0):
        raise InputError("clearance must be a finite number >= 0")
    xs = cmap._local_point(start)
    xg = cmap._local_point(goal)
    if clearance_at(cmap, *xs) < r or clearance_at(cmap, *xg) < r:
        return None
    hs = _retract(cmap, *xs)
    hg = _retract(cmap, *xg)
    if hs is None or hg is None:
        return None
    d = cmap.diagram
    g = _graph(cmap)
    s0, s1 = _split(cmap, hs)
    g0, g1 = _split(cmap, hg)
    es, eg = hs[0], hg[0]
    ev, esites = d.ev, d.es
    a_s, a_g = int(esites[es, 0]), int(esites[eg, 0])
    vs = (int(ev[es, 0]), int(ev[es, 1]))
    vg = (int(ev[eg, 0]), int(ev[eg, 1]))
    src, scost, spieces = [], [], {}
    for v, piece in ((vs[0], s0), (vs[1], s1)):
        if _clr_ok(cmap, piece, a_s, r):
            src.append(v)
            scost.append(_plen(piece))
            spieces[v] = piece
    dst, dcost, gpieces = [], [], {}
    for v, piece in ((vg[0], g0), (vg[1], g1)):
        if _clr_ok(cmap, piece, a_g, r):
            dst.append(v)
            dcost.append(_plen(piece))
            gpieces[v] = piece[::-1]
    best_cost = math.inf
    route_parts = None
    if src and dst:
        wgt = g["length"][g["eidx"]].copy()
        wgt[g["minclr"][g["eidx"]] < r] = np.inf
        prev, bv, cost = K.dijkstra(
            g["indptr"],
            g["nbr"],
            wgt,
            g["nv"],
            np.array(src, np.int64),
            np.array(scost),
            np.array(dst, np.int64),
            np.array(dcost),
        )
        if bv >= 0 and math.isfinite(cost):
            chain = []
            v = bv
            while prev[v] >= 0:
                adj = prev[v]
                chain.append((int(g["eids"][g["eidx"][adj]]), int(g["from"][adj]), v))
                v = int(g["from"][adj])
            chain.reverse()
            best_cost = cost
            route_parts = (spieces[v], chain, gpieces[bv])
    if es == eg:
        # both on one edge: walk along it directly
        pts, _ = edge_polyline(cmap, es)
        i0, i1 = hs[1] + hs[2], hg[1] + hg[2]
        lo, hi = sorted((i0, i1))
        mid = pts[int(math.floor(lo)) + 1 : int(math.ceil(hi))]
        seg = np.vstack([hs[3][None], mid if i0 <= i1 else mid[::-1], hg[3][None]])
        if _clr_ok(cmap, seg, a_s, r) and _plen(seg) <= best_cost:
            best_cost = _plen(seg)
            route_parts = ("direct", seg, es)
    if route_parts is None:
        return None
    parts: list = []  # polyline pieces along the route ...
    pe: list = []  # ... and the edge each lies on

    def piece(pts, e):
        parts.append(pts)
        pe.append(e)

    edges = []
    if isinstance(route_parts[0], str):
        _, seg, e = route_parts
        piece(seg, e)
        edges = [e]
    else:
        first, chain, last = route_parts
        piece(first, es)
        edges.append(es)
        for e, u, _w in chain:
            pts, _ = edge_polyline(cmap, e)
            piece(pts if ev[e, 0] == u else pts[::-1], e)
            edges.append(e)
        piece(last, eg)
        if eg != edges[-1]:
            edges.append(eg)
    samples = np.empty((sum(len(p) for p in parts), 4))  # (x, y, site_a, site_b) rows
    samples[:, :2] = np.concatenate(parts)
    samples[:, 2:] = np.repeat(esites[pe], [len(p) for p in parts], axis=0)
    return _corridor_path(cmap, xs, xg, samples, r, preferred_clearance, edges)


def _corridor_path(cmap, xs, xg, samples, r, pref, edges):
    S = cmap.sites
    arr = np.asarray(samples, dtype=np.float64)
    m = np.ascontiguousarray(arr[:, :2])
    sa = arr[:, 2].astype(np.int64)
    sb = arr[:, 3].astype(np.int64)
    fa = K.feet(m[:, 0], m[:, 1], sa, S.kind, S.ax, S.ay, S.bx, S.by)
    fb = K.feet(m[:, 0], m[:, 1], sb, S.kind, S.ax, S.ay, S.bx, S.by)
    n = m.shape[0]
    nxt = m[np.minimum(np.arange(n) + 1, n - 1)]
    prv = m[np.maximum(np.arange(n) - 1, 0)]
    dvec = nxt - prv
    a_left = dvec[:, 0] * (fa[:, 1] - m[:, 1]) - dvec[:, 1] * (fa[:, 0] - m[:, 0]) > 0
    fl = np.where(a_left[:, None], fa, fb)
    fr = np.where(a_left[:, None], fb, fa)
    rho = np.hypot(m[:, 0] - fa[:, 0], m[:, 1] - fa[:, 1])
    rr = np.full(n, r) if pref is None else np.maximum(r, np.minimum(float(pref), rho))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(rho > 0, np.minimum(rr * (1.0 + ARC_SLACK) / rho, 1.0), 1.0)
    Lp = fl + (m - fl) * t[:, None]
    Rp = fr + (m - fr) * t[:, None]
    # drop portals that the start has already passed or the goal has not reached
    # (start and goal lie inside their corridor disks, beside the medial axis)
    i0, i1 = 0, n
    while i0 < i1 and _cross(xs, Rp[i0], Lp[i0]) <= 0.0:
        i0 += 1
    while i1 > i0 and _cross(xg, Lp[i1 - 1], Rp[i1 - 1]) <= 0.0:
        i1 -= 1
    L = np.vstack([xs[None], Lp[i0:i1], xg[None]])
    R = np.vstack([xs[None], Rp[i0:i1], xg[None]])
    pts = K.funnel(L, R)
    o = cmap.origin
    route = np.vstack([xs[None], m, xg[None]]) + o
    pw = pts + o
    return PathResult(
        points=pw,
        length=_plen(pw),
        route=route,
        centers=m + o,
        radii=rho,
        left=fl + o,
        right=fr + o,
        clearance=r,
        edges=edges,
    )


def _cross(a, b, c):
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _funnel(portals):
    """String pulling through portals [(left, right), ...] (left = counter-clockwise side)."""
    path = [portals[0][0]]
    apex = portals[0][0]
    pl, pr = portals[0]
    il = ir = ia = 0
    i = 1
    n = len(portals)
    while i < n:
        L, R = portals[i]
        # right side
        if _cross(apex, pr, R) >= 0.0:
            if (apex[0] == pr[0] and apex[1] == pr[1]) or _cross(apex, pl, R) < 0.0:
                pr, ir = R, i
            else:
                apex = pl
                path.append(apex)
                ia = il
                pl = pr = apex
                il = ir = ia
                i = ia + 1
                continue
        if _cross(apex, pl, L) <= 0.0:
            if (apex[0] == pl[0] and apex[1] == pl[1]) or _cross(apex, pr, L) > 0.0:
                pl, il = L, i
            else:
                apex = pr
                path.append(apex)
                ia = ir
                pl = pr = apex
                il = ir = ia
                i = ia + 1
                continue
        i += 1
    last = portals[-1][0]
    if not (path[-1][0] == last[0] and path[-1][1] == last[1]):
        path.append(last)
    return np.asarray(path, dtype=np.float64)


def nearest_medial_point(cmap, x, y):
    """Nearest point of the medial axis to a local point: (point (2,), edge id)."""
    segs = cmap._cache.get("segs")
    if segs is None:
        a_l, b_l, e_l = [], [], []
        for e in cmap.diagram.edges:
            pts, _ = edge_polyline(cmap, e)
            a_l.append(pts[:-1])
            b_l.append(pts[1:])
            e_l.append(np.full(len(pts) - 1, e))
        segs = (np.vstack(a_l), np.vstack(b_l), np.concatenate(e_l))
        cmap._cache["segs"] = segs
    A, B, E = segs
    D = B - A
    t = np.clip(
        ((x - A[:, 0]) * D[:, 0] + (y - A[:, 1]) * D[:, 1]) / np.maximum((D * D).sum(1), 1e-300),
        0,
        1,
    )
    P = A + t[:, None] * D
    i = int(np.argmin(np.hypot(P[:, 0] - x, P[:, 1] - y)))
    return P[i], int(E[i])
