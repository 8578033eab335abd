"""The pure-Python path query that navkit.ecm.path.find_path replaced (kept
verbatim as the reference its kernels must equal, bit for bit): retraction by a
search over every candidate polyline piece, numpy pieces, Dijkstra weights built
per query, portals and funnel.  Uses navkit.ecm.path's dict polyline cache
(``edge_polyline``), route graph and nearest-site search, not the flat cache."""

from __future__ import annotations

import math

import numpy as np

from navkit.ecm import _kernels as K
from navkit.ecm.geom import site_dist
from navkit.ecm.path import ARC_SLACK, PathResult, _graph, _nearest, clearance_at, edge_polyline
from navkit.errors import InputError


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
    world_r = r
    r = r * cmap.unit  # the map's private frame
    if preferred_clearance is not None:
        preferred_clearance = float(preferred_clearance) * cmap.unit
    for q in (xs, xg):  # start and goal in free space, at least r from obstacles
        c = clearance_at(cmap, *q)
        if c <= 0.0 or c < r:
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
    return _corridor_path(cmap, xs, xg, samples, r, preferred_clearance, edges, world_r)


def _corridor_path(cmap, xs, xg, samples, r, pref, edges, world_r):
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
    w = cmap._world
    route = np.vstack([xs[None], m, xg[None]])
    pw = w(pts)
    return PathResult(
        points=pw,
        length=_plen(pw),
        route=w(route),
        centers=w(m),
        radii=rho / cmap.unit,
        left=w(fl),
        right=w(fr),
        clearance=world_r,
        edges=edges,
    )


def _cross(a, b, c):
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
