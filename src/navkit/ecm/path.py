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

Cost: Python validates the input, finds the two nearest sites and fetches the
cached route graph (with the Dijkstra weights of each clearance asked for);
everything else -- retraction, Dijkstra, route samples, portals, funnel -- is
one kernel call (:func:`navkit.ecm._path_kernels.query`) over a flat cache of
edge polylines (sampled on first use, dropped per edge when an update touches
the edge).  The pure-Python version it replaced is kept as the reference in
``tests/ecm/path_reference.py``.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from navkit.errors import InputError

from . import _kernels as K
from . import _path_kernels as PK
from . import _update_kernels as U

ARC_SLACK = PK.ARC_SLACK
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


@dataclass(frozen=True)
class NoPath:
    """Why :meth:`CorridorMap.find_path` (with ``explain=True``) found no path.
    Falsy, so ``if not result`` works as with ``None``.

    Attributes
    ----------
    reason : str -- ``"outside"`` (``which`` lies outside the boundary),
        ``"inside"`` (inside or on obstacle ``obstacle``; 0 = on the boundary),
        ``"too_close"`` (within ``clearance`` of obstacle ``obstacle``) or
        ``"no_corridor"`` (no corridor of that clearance joins start and goal).
    which : str -- ``"start"``, ``"goal"`` or ``""`` (no_corridor).
    obstacle : int -- the obstacle's handle (0 = the boundary), -1 if none.
    clearance : float -- the agent radius asked for [wu].
    """

    reason: str
    which: str
    obstacle: int
    clearance: float

    def __bool__(self) -> bool:
        return False

    @property
    def message(self) -> str:
        """One line for people."""
        if self.reason == "outside":
            return f"the {self.which} lies outside the boundary"
        if self.reason == "inside":
            if self.obstacle == 0:
                return f"the {self.which} lies on the boundary"
            return f"the {self.which} lies inside obstacle {self.obstacle}"
        if self.reason == "too_close":
            what = "the boundary" if self.obstacle == 0 else f"obstacle {self.obstacle}"
            return f"the {self.which} is closer than {self.clearance:g} to {what}"
        return f"no corridor with clearance {self.clearance:g} joins the two points"


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


_GRAPH_LOCK = threading.Lock()


def _graph(cmap):
    """The route graph over alive edges (CSR, both directions) with each edge's
    exact length and least clearance (closed form, cached per edge until an
    update touches it; no edge is sampled here)."""
    g = cmap._cache.get("graph")
    if g is not None:
        return g
    with _GRAPH_LOCK:  # threads that query a fresh map build it once, not together
        g = cmap._cache.get("graph")
        if g is None:
            g = _build_graph(cmap)
            cmap._cache["graph"] = g
    return g


def _build_graph(cmap):
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
        st = getattr(cmap, "_pathflat", None)
        if st is not None and st.diagram is d:
            with st.lock:  # another thread's query may be reading the cache
                st.drop(miss)  # new or touched by an update since last sampled
        ln, mc = K.edge_stats(miss, d.ev, d.es, d.vx, d.vy, S.kind, S.ax, S.ay, S.bx, S.by)
        cmap._estat[miss, 0] = ln
        cmap._estat[miss, 1] = mc
        cmap._estat_ok[miss] = True
    length = cmap._estat[eids, 0]
    minclr = cmap._estat[eids, 1]
    indptr, nbr, src, eidx = K.route_csr(np.ascontiguousarray(ev, np.int64), nv)
    g = {
        "eids": eids,
        "length": length,
        "minclr": minclr,
        "indptr": indptr,
        "nbr": nbr,
        "from": src,
        "eidx": eidx,
        "nv": nv,
    }
    return g


def _nearest(cmap, x, y):
    """Nearest alive site to a local point: (site id, distance [wu]); over the
    site grid (same answer and tie-break as a scan in id order)."""
    S = cmap.sites
    if not hasattr(S, "cells"):
        return K.nearest_site(x, y, *S.kernel_args())
    return U.grid_nearest(x, y, *S.grid_args(), S.kind, S.ax, S.ay, S.bx, S.by, S.alive)


_FLAT_LOCK = threading.Lock()


class _Flat:
    """Flat cache of edge polylines for the query kernels (layout: see
    :mod:`navkit.ecm._path_kernels`), with the kernels' scratch arrays."""

    def __init__(self, d, ne: int, cap: int = 1 << 15) -> None:
        self.diagram = d
        n = max(2 * ne, 64)
        self.off = np.full(n, -1, np.int64)
        self.cnt = np.zeros(n, np.int64)
        self.emark = np.zeros(n, np.int64)
        self.cbuf = np.zeros(n, np.int64)
        self.P = np.empty((cap, 2))
        self.used = np.zeros(1, np.int64)
        self.stamp = np.zeros(1, np.int64)
        self.lock = threading.Lock()

    def reserve(self, ne: int) -> None:
        """Room for edge ids below ``ne``."""
        n = self.off.shape[0]
        if n >= ne:
            return
        m = 2 * ne
        self.off = np.concatenate([self.off, np.full(m - n, -1, np.int64)])
        self.cnt = np.concatenate([self.cnt, np.zeros(m - n, np.int64)])
        self.emark = np.zeros(m, np.int64)
        self.stamp[0] = 0
        self.cbuf = np.zeros(m, np.int64)

    def drop(self, eids) -> None:
        """Forget the samples of edges ``eids`` (int64 array)."""
        self.off[eids[eids < self.off.shape[0]]] = -1

    def grow(self) -> None:
        """More room for points: twice as much, or start afresh when at least
        half of the rows belong to dropped edges."""
        live = int(self.cnt[self.off >= 0].sum())
        u = int(self.used[0])
        if 2 * live < u:
            self.off[:] = -1
            self.used[0] = 0
            self.P = np.empty_like(self.P)
            return
        P = np.empty((2 * self.P.shape[0], 2))
        P[:u] = self.P[:u]
        self.P = P


def _flat(cmap) -> _Flat:
    """The map's flat polyline cache (created on first use and anew when the
    diagram is replaced; :func:`_graph` drops the edges an update touched).
    Use it under its ``lock``, after ``reserve(diagram.next_e)``."""
    d = cmap.diagram
    st = getattr(cmap, "_pathflat", None)
    if st is None or st.diagram is not d:
        with _FLAT_LOCK:  # one cache per map even when threads start together
            st = getattr(cmap, "_pathflat", None)
            if st is None or st.diagram is not d:
                st = _Flat(d, d.next_e)
                cmap._pathflat = st
    return st


def _weights(g, r):
    """Dijkstra weight per adjacency of route graph ``g`` for radius ``r``: the
    edge length, inf where the edge is narrower (cached per radius)."""
    wd = g.setdefault("wgt", {})
    w = wd.get(r)
    if w is None:
        w = g["length"][g["eidx"]].copy()
        w[g["minclr"][g["eidx"]] < r] = np.inf
        if len(wd) >= 16:
            wd.clear()
        wd[r] = w
    return w


def _clearance(cmap, s, x, y, dist):
    if s < 0:
        return math.inf
    if not cmap.diagram.side_ok(s, x, y, dist) or dist <= 0.0:
        return 0.0
    return float(dist)


def _inside_boundary(cmap, x, y) -> bool:
    return bool(K.point_in_ring(x, y, cmap._bx, cmap._by))


def clearance_at(cmap, x, y):
    """Distance from a local point to the nearest obstacle (local units); 0 outside
    free space (inside or on an obstacle, or outside the boundary)."""
    if not _inside_boundary(cmap, x, y):
        return 0.0
    s, dist = _nearest(cmap, x, y)
    return _clearance(cmap, s, x, y, dist)


def _retract_into(cmap, st, x, y, s, dist, hit):
    d = cmap.diagram
    S = cmap.sites
    return PK.retract(
        x, y, s, dist,
        d.ev, d.es, d.vx, d.vy, S.kind, S.ax, S.ay, S.bx, S.by,
        d.shead, d.rv, d.rnext, d.valive, d.veh, d.enx,
        st.off, st.cnt, st.P, st.used, st.emark, st.stamp, st.cbuf, _MAX_STEP, hit,
    )  # fmt: skip


def _retract(cmap, x, y):
    """(edge id, polyline index, fraction, point (2,)) where the ray from the
    nearest obstacle point through local (x, y) first meets the medial axis;
    None if it does not (:func:`navkit.ecm._path_kernels.retract`)."""
    s, dist = _nearest(cmap, x, y)
    if s < 0:
        return None
    hit = np.zeros(5)
    _graph(cmap)  # drops the edges an update touched from the flat cache
    st = _flat(cmap)
    with st.lock:
        st.reserve(cmap.diagram.next_e)
        while (status := _retract_into(cmap, st, x, y, s, dist, hit)) == PK.NEED_ROOM:
            st.grow()
    if status != PK.OK:
        return None
    return int(hit[0]), int(hit[1]), float(hit[2]), hit[3:5].copy()


def _blocked(cmap, which, x, y, r, near):
    """Why a local point cannot be a path end for radius ``r`` (a NoPath), or None."""
    if not _inside_boundary(cmap, x, y):
        return NoPath("outside", which, -1, r / cmap.unit)
    s, dist = near
    if s < 0:  # no site at all (cannot happen: the boundary always has sites)
        return None
    owner = int(cmap.sites.owner[s])
    c = _clearance(cmap, s, x, y, dist)
    if c <= 0.0:
        return NoPath("inside", which, owner, r / cmap.unit)
    if c < r:
        return NoPath("too_close", which, owner, r / cmap.unit)
    return None


def find_path(
    cmap, start, goal, clearance: float = 0.0, preferred_clearance: float | None = None,
    explain: bool = False,
) -> PathResult | NoPath | None:  # fmt: skip
    """See :meth:`navkit.ecm.CorridorMap.find_path`."""
    try:
        r = float(clearance)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"clearance must be a finite number >= 0, got {clearance!r:.60}") from None
    if not (math.isfinite(r) and r >= 0):
        raise InputError(f"clearance must be a finite number >= 0, got {clearance!r:.60}")
    pc = 0.0
    if preferred_clearance is not None:
        try:
            pc = float(preferred_clearance)
        except (TypeError, ValueError, OverflowError):
            pc = math.nan
        if not (math.isfinite(pc) and pc >= r):
            raise InputError(
                "preferred_clearance must be None or a finite number >= clearance "
                f"({r:g}), got {preferred_clearance!r:.60}"
            )
    u = cmap.unit
    xs = cmap._local_point(start, "start")
    xg = cmap._local_point(goal, "goal")
    rl = r * u
    near = []
    for which, q in (("start", xs), ("goal", xg)):
        nq = _nearest(cmap, q[0], q[1])
        why = _blocked(cmap, which, q[0], q[1], rl, nq)
        if why is not None:
            return why if explain else None
        near.append(nq)
    g = _graph(cmap)  # first: it drops the edges an update touched from the flat cache
    wgt = _weights(g, rl)
    st = _flat(cmap)
    use_pref = preferred_clearance is not None
    pref = pc * u
    d = cmap.diagram
    S = cmap.sites
    with st.lock:  # the kernel appends to the shared cache without the GIL
        st.reserve(d.next_e)
        while True:
            status, pw, _length, route, centers, radii, left, right, edges = PK.query(
                xs[0], xs[1], xg[0], xg[1], near[0][0], near[0][1], near[1][0], near[1][1],
                rl, pref, use_pref, 0.0, 0.0,
                g["indptr"], g["nbr"], g["from"], g["eidx"], g["eids"], wgt, g["nv"],
                d.ev, d.es, d.vx, d.vy, S.kind, S.ax, S.ay, S.bx, S.by,
                d.shead, d.rv, d.rnext, d.valive, d.veh, d.enx,
                st.off, st.cnt, st.P, st.used, st.emark, st.stamp, st.cbuf, _MAX_STEP,
            )  # fmt: skip
            if status != PK.NEED_ROOM:
                break
            st.grow()
    if status != PK.OK:
        return NoPath("no_corridor", "", -1, r) if explain else None
    w = cmap._world
    pw = w(pw)
    return PathResult(
        points=pw,
        length=float(PK.plen(pw)),
        route=w(route),
        centers=w(centers),
        radii=radii / u,
        left=w(left),
        right=w(right),
        clearance=r,
        edges=edges.tolist(),
    )


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
