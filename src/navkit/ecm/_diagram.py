"""The free-space part of a segment Voronoi diagram, with local updates.

Representation: a vertex is a point with its clearance and the set of sites at
that distance (three in general position, more at degenerate points); an edge
joins two vertices along the bisector of two sites.  Only the free-space part is
kept, and edges between a segment and its own endpoint (the normal lines that
separate their cells) are not stored: where they meet the medial axis they leave
a *bisector vertex*.

Local updates (navkit's own; van Toll, Cook and Geraerts 2012 describe the same
decomposition):

* insertion of new sites N: the vertices whose empty circle contains a new site
  are deleted; so are the edges touching them and every edge that a new cell
  cuts in its interior.  New vertices are circles tangent to a new site and two
  sites of a cut edge, to two new sites and an affected site, or to three new
  sites -- each validated (tangency, free side, empty circle).  Every bisector
  whose vertex set changed is then re-joined (see below).
* deletion of sites D: the vertices involving D die; new vertices are the empty
  circles tangent to three of D's former neighbours (the old cells of D are
  filled by the diagram of the neighbours only).
* re-joining a bisector (a, b): its vertices, ordered along the bisector, are
  joined where the bisector point midway between two consecutive vertices is
  equidistant from a and b with no site nearer.  This is exact: the bisector
  leaves the diagram only at a vertex.

Everything touched is reported (``touched_vertices``, ``touched_edges``).

Cost: the index is a set of flat arrays that the kernels of
:mod:`navkit.ecm._index` change in place (vertex rows with their sites, per-site
and per-vertex doubly linked lists of vertices and edge ends, free-slot stacks;
grown by doubling between kernel calls), so an update is one kernel call
(find and delete the conflicting part, solve the candidate circles, add the
vertices, re-join the bisectors; more only when an array must grow first) and
O(1) Python.  Two sites of one convex
obstacle that share no point are never paired in a candidate triple (an empty
circle outside a convex set touches it once).  The dict-like views ``edges``,
``vs``, ``site_verts``, ``vert_edges`` and ``pair_edges`` read the arrays for
the (non-hot) callers that want Python objects.
"""

from __future__ import annotations

import numpy as np

from . import _index as X
from ._tangent import _sok


class Diagram:
    """Vertices and edges of the free-space Voronoi diagram of a :class:`Sites`."""

    def __init__(self, sites, tol: float, vcap: int = 256, width: int = 8) -> None:
        self.S = sites
        self.tol = tol
        self.version = 0
        self.cnt = np.zeros(X.NCNT, np.int64)
        self.cnt[X.STAMP] = 1
        # vertices
        self.vx = np.zeros(vcap)
        self.vy = np.zeros(vcap)
        self.vr = np.zeros(vcap)
        self.valive = np.zeros(vcap, np.bool_)
        self.vdeg = np.zeros(vcap, np.int64)
        self.vsite = np.zeros((vcap, width), np.int64)
        self.vrec = np.zeros((vcap, width), np.int64)
        self.veh = np.full(vcap, -1, np.int64)
        self.vfree = np.zeros(vcap, np.int64)
        self.tvmark = np.zeros(vcap, np.int64)
        self.tvlog = np.zeros(vcap, np.int64)
        # site -> vertex incidence records
        rcap = 4 * vcap
        self.shead = np.full(max(sites.kind.shape[0], 1), -1, np.int64)
        self.rv = np.zeros(rcap, np.int64)
        self.rnext = np.full(rcap, -1, np.int64)
        self.rprev = np.full(rcap, -1, np.int64)
        self.rfree = np.arange(rcap - 1, -1, -1, dtype=np.int64)
        self.cnt[X.NRF] = rcap
        # edges
        ecap = 2 * vcap
        self.ev = np.zeros((ecap, 2), np.int64)
        self.es = np.zeros((ecap, 2), np.int64)
        self.ealive = np.zeros(ecap, np.bool_)
        self.enx = np.full(2 * ecap, -1, np.int64)
        self.epv = np.full(2 * ecap, -1, np.int64)
        self.efree = np.zeros(ecap, np.int64)
        self.temark = np.zeros(ecap, np.int64)
        self.telog = np.zeros(ecap, np.int64)

    # --------------------------------------------------------------- counters
    @property
    def nv(self) -> int:
        """Vertex slots in use (alive or free); ids are below this."""
        return int(self.cnt[X.NV])

    @property
    def next_e(self) -> int:
        """Edge slots in use (alive or free); ids are below this."""
        return int(self.cnt[X.NE])

    @property
    def touched_v(self) -> set:
        """Vertex ids created, changed or deleted since :meth:`clear_touched`."""
        return set(self.tvlog[: self.cnt[X.NTV]].tolist())

    @property
    def touched_e(self) -> set:
        """Edge ids created or deleted since :meth:`clear_touched`."""
        return set(self.telog[: self.cnt[X.NTE]].tolist())

    def clear_touched(self) -> None:
        self.cnt[X.STAMP] += 1
        self.cnt[X.NTV] = 0
        self.cnt[X.NTE] = 0

    # --------------------------------------------------------------- capacity
    @staticmethod
    def _grown(a: np.ndarray, n: int, fill=0) -> np.ndarray:
        b = np.full((n,) + a.shape[1:], fill, a.dtype)
        b[: a.shape[0]] = a
        return b

    def _reserve(self, nvert: int, nrec: int, width: int) -> None:
        """Room for ``nvert`` more vertices with ``nrec`` more site incidences, and
        rows of at least ``width`` sites; also one head per site of ``S``."""
        c = self.cnt
        ns = self.S.kind.shape[0]
        if self.shead.shape[0] < ns:
            self.shead = self._grown(self.shead, ns, -1)
        cap = self.valive.shape[0]
        if cap - c[X.NV] + c[X.NVF] < nvert:
            n = cap
            while n - c[X.NV] + c[X.NVF] < nvert:
                n *= 2
            for name in ("vx", "vy", "vr", "valive", "vdeg", "vsite", "vrec"):
                setattr(self, name, self._grown(getattr(self, name), n))
            self.veh = self._grown(self.veh, n, -1)
            for name in ("vfree", "tvmark", "tvlog"):
                setattr(self, name, self._grown(getattr(self, name), n))
        if self.vsite.shape[1] < width:
            w = self.vsite.shape[1]
            while w < width:
                w *= 2
            for name in ("vsite", "vrec"):
                a = getattr(self, name)
                b = np.zeros((a.shape[0], w), np.int64)
                b[:, : a.shape[1]] = a
                setattr(self, name, b)
        if c[X.NRF] < nrec:
            r = self.rv.shape[0]
            n = r
            while c[X.NRF] + n - r < nrec:
                n *= 2
            self.rv = self._grown(self.rv, n)
            self.rnext = self._grown(self.rnext, n, -1)
            self.rprev = self._grown(self.rprev, n, -1)
            # the new records go on the free stack
            k = int(c[X.NRF])
            fr = np.empty(n, np.int64)
            fr[:k] = self.rfree[:k]
            fr[k : k + n - r] = np.arange(n - 1, r - 1, -1)
            self.rfree = fr
            c[X.NRF] = k + n - r

    def _reserve_edges(self, nedge: int) -> None:
        c = self.cnt
        cap = self.ealive.shape[0]
        if cap - c[X.NE] + c[X.NEF] >= nedge:
            return
        n = cap
        while n - c[X.NE] + c[X.NEF] < nedge:
            n *= 2
        for name in ("ev", "es", "ealive", "efree", "temark", "telog"):
            setattr(self, name, self._grown(getattr(self, name), n))
        self.enx = self._grown(self.enx, 2 * n, -1)
        self.epv = self._grown(self.epv, 2 * n, -1)

    # ------------------------------------------------------------ kernel args
    def _vstate(self):
        return (
            self.vx, self.vy, self.vr, self.valive, self.vdeg, self.vsite, self.vrec,
            self.veh, self.vfree,
        )  # fmt: skip

    def _estate(self):
        return (self.ev, self.es, self.ealive, self.enx, self.epv, self.efree)

    def _sites_args(self):
        S = self.S
        return (S.kind, S.ax, S.ay, S.bx, S.by, S.e0, S.e1, S.side, S.alive, S.owner, S.cvx)

    # -------------------------------------------------------------- vertices
    def add_vertices(self, xyr, ptr, ids, corners=(), merge=True, pairs=None):
        """Add vertices at ``xyr[i]`` ((k, 3) [x, y, clearance]) tangent to the
        sites ``ids[ptr[i]:ptr[i+1]]``, then corner vertices ``corners``
        ((s_in, p, s_out) rows).  Returns (vertex ids (k + len(corners),), the
        ascending unique site pairs of ``pairs`` and of every vertex made)."""
        xyr = np.ascontiguousarray(xyr, np.float64).reshape(-1, 3)
        ptr = np.ascontiguousarray(ptr, np.int64)
        ids = np.ascontiguousarray(ids, np.int64)
        ok = np.ones(xyr.shape[0], np.bool_)
        return self._commit(xyr, ok, ptr, ids, corners, merge, pairs)

    def _commit(self, xyr, ok, ptr, ids, corners, merge, pairs):
        cn = np.asarray(corners, np.int64).reshape(-1, 3)
        pairs = np.zeros((0, 2), np.int64) if pairs is None else pairs
        S = self.S
        nadd = int(np.count_nonzero(ok)) + cn.shape[0]
        self._reserve(nadd, int(ids.shape[0]) + 3 * cn.shape[0], 0)
        if merge:  # a merged vertex holds the union of the site sets
            w = X.width_needed(
                xyr, ok, ptr, cn, self.tol, self.vx, self.vy, self.vdeg, ids,
                self.shead, self.rv, self.rnext, S.ax, S.ay,
            )  # fmt: skip
        else:
            w = max(int(np.diff(ptr).max(initial=0)), 3)
        self._reserve(0, 0, int(w))
        return X.commit_vertices(
            xyr, ok, ptr, ids, cn, pairs, merge, self.tol,
            self.vx, self.vy, self.vr, self.valive, self.vdeg, self.vsite, self.vrec,
            self.veh, self.vfree, self.shead, self.rv, self.rnext, self.rprev, self.rfree,
            S.ax, S.ay, self.cnt, self.tvmark, self.tvlog,
        )  # fmt: skip

    def add_edges(self, ev, es) -> None:
        """Add edges with end vertices ``ev`` ((k, 2)) and sites ``es`` ((k, 2))."""
        ev = np.ascontiguousarray(ev, np.int64).reshape(-1, 2)
        es = np.ascontiguousarray(es, np.int64).reshape(-1, 2)
        self._reserve_edges(ev.shape[0])
        X.add_edges(ev, es, *self._estate(), self.veh, self.cnt, self.temark, self.telog)

    def add_edge(self, v0, v1, a, b) -> None:
        self.add_edges([[v0, v1]], [[a, b]])

    # --------------------------------------------------------------- predicates
    def side_ok(self, s, x, y, rho) -> bool:
        """Whether site ``s`` sees the circle (x, y, rho) on its free side (the
        kernels' test, :func:`navkit.ecm._tangent._sok`)."""
        S = self.S
        # kind and side as the arrays' int8 scalars: the kernels' signature of _sok
        return bool(
            _sok(S.kind[int(s)], S.ax[s], S.ay[s], S.bx[s], S.by[s], S.side[int(s)],
                 float(x), float(y), float(rho), self.tol)
        )  # fmt: skip

    # ------------------------------------------------------------- edge joining
    def _rejoin(self, pr) -> None:
        """Re-join the edges of every bisector in ``pr`` ((k, 2) site ids, a < b,
        C-contiguous int64; kernel output) with
        :func:`navkit.ecm._index.rejoin_pairs`, growing the edge arrays first when
        it reports too little room."""
        S = self.S
        while True:
            k = X.rejoin_pairs(
                pr, self.tol, self.vx, self.vy, self.vr, self.vdeg, self.vsite, self.veh,
                self.shead, self.rv, self.rnext, *self._estate(),
                self.cnt, self.temark, self.telog,
                S.kind, S.ax, S.ay, S.bx, S.by, S.e0, S.e1, S.side, S.alive, *self._grid(),
            )  # fmt: skip
            if k >= 0:
                return
            # the kernel reports the shortfall: ask for that many slots more
            # than are free now (asking for -k alone grows nothing when -k is
            # less than the free slots, and the loop never ends)
            c = self.cnt
            self._reserve_edges(int(self.ealive.shape[0] - c[X.NE] + c[X.NEF]) - k)

    def _grid(self):
        """The site grid's arguments (cells, counts, gx0, gy0, h, nx, ny); one
        cell over the sites' box if the sites have no grid yet."""
        S = self.S
        if not hasattr(S, "cells"):
            n = S.n
            xs = np.concatenate([S.ax[:n], S.bx[:n]]) if n else np.zeros(1)
            ys = np.concatenate([S.ay[:n], S.by[:n]]) if n else np.zeros(1)
            ext = max(float(np.ptp(xs)), float(np.ptp(ys)), 1.0)
            S.make_grid(xs.min(), ys.min(), xs.max(), ys.max(), ext)
        return S.grid_args()

    # ------------------------------------------------------------------ updates
    def insert_sites(self, new, corners) -> None:
        """Insert the alive sites ``new`` (already in ``S`` and its grid);
        ``corners`` are (s_in, p, s_out) zero-clearance corner vertices of the
        new polygon."""
        S = self.S
        grid = self._grid()
        self._reserve(64, 512, int(self.cnt[X.MAXDEG]) + 4)
        nw = np.asarray(new, np.int64)
        cn = np.asarray(corners, np.int64).reshape(-1, 3)
        done, joined, pairs, xyr, ok, ptr, ids = X.insert_prepare(
            nw, cn, self.tol, *self._vstate(), self.shead, self.rv, self.rnext, self.rprev,
            self.rfree, *self._estate(), self.cnt, self.tvmark, self.tvlog, self.temark,
            self.telog, *self._sites_args(), S.inc, *grid,
        )  # fmt: skip
        if not done:  # the arrays had no room: grow them, then add
            _, pairs = self._commit(xyr, ok, ptr, ids, cn, True, pairs)
        if not done or joined < 0:  # (the kernel re-joins when it has the room)
            self._rejoin(pairs)
        self.version += 1

    def delete_sites(self, dead) -> None:
        """Delete the sites ``dead`` (marks them dead and drops them from the grid)."""
        grid = self._grid()
        self._reserve(64, 512, int(self.cnt[X.MAXDEG]) + 4)
        dd = np.asarray(dead, np.int64)  # distinct ids (any order)
        done, joined, pairs, xyr, ok, ptr, ids = X.delete_prepare(
            dd, self.tol, *self._vstate(), self.shead, self.rv, self.rnext, self.rprev,
            self.rfree, *self._estate(), self.cnt, self.tvmark, self.tvlog, self.temark,
            self.telog, *self._sites_args(), *grid,
        )  # fmt: skip
        if not done:
            _, pairs = self._commit(xyr, ok, ptr, ids, (), True, pairs)
        if not done or joined < 0:
            self._rejoin(pairs)
        self.version += 1

    # ----------------------------------------------------------------- exports
    def arrays(self):
        """(verts (n,2), clearance (n,), vertex ids (n,), edges (m,4) int64 as
        [v0, v1, site_a, site_b] in compact vertex numbering)."""
        nv = self.nv
        ids = np.nonzero(self.valive[:nv])[0].astype(np.int64)
        remap = np.full(nv, -1, np.int64)
        remap[ids] = np.arange(ids.shape[0])
        vx = self.vx[ids]
        vy = self.vy[ids]
        vr = self.vr[ids]
        eids = np.nonzero(self.ealive[: self.next_e])[0]
        ed = np.concatenate([self.ev[eids], self.es[eids]], axis=1).astype(np.int64)
        if ed.size:
            ed[:, 0] = remap[ed[:, 0]]
            ed[:, 1] = remap[ed[:, 1]]
        return np.stack([vx, vy], axis=1), vr, ids, ed.reshape(-1, 4)

    def check_index(self) -> list:
        """Inconsistencies of the array index (empty list = consistent): every
        alive vertex is in the list of each of its sites and nowhere else,
        every alive edge end in the list of its vertex, and the free stacks
        hold exactly the dead slots (a slow, test-only scan)."""
        out = []
        nv, ne = self.nv, self.next_e
        c = self.cnt
        alive_v = set(np.nonzero(self.valive[:nv])[0].tolist())
        seen: dict = {}
        for s in range(self.shead.shape[0]):
            for v in self.vertices_of(s):
                if v not in alive_v or s not in self.sites_of(v):
                    out.append(f"site {s} lists vertex {v}")
                seen[v] = seen.get(v, 0) + 1
        for v in alive_v:
            if seen.get(v, 0) != self.vdeg[v]:
                out.append(
                    f"vertex {v} is in {seen.get(v, 0)} site lists, has {self.vdeg[v]} sites"
                )
            if list(self.sites_of(v)) != sorted(set(self.sites_of(v))):
                out.append(f"vertex {v} sites not ascending/unique")
        alive_e = set(np.nonzero(self.ealive[:ne])[0].tolist())
        for v in alive_v:
            for e in self.edges_of(v):
                if e not in alive_e or v not in (self.ev[e, 0], self.ev[e, 1]):
                    out.append(f"vertex {v} lists edge {e}")
        for e in alive_e:
            v0, v1 = self.ev[e]
            if e not in self.edges_of(int(v0)) or e not in self.edges_of(int(v1)):
                out.append(f"edge {e} missing from its vertices' lists")
        if sorted(self.vfree[: c[X.NVF]].tolist()) != sorted(set(range(nv)) - alive_v):
            out.append("free vertex stack differs from the dead vertex slots")
        if sorted(self.efree[: c[X.NEF]].tolist()) != sorted(set(range(ne)) - alive_e):
            out.append("free edge stack differs from the dead edge slots")
        used = int(self.vdeg[list(alive_v)].sum()) if alive_v else 0
        if used + int(c[X.NRF]) != self.rv.shape[0]:
            out.append("incidence records lost or duplicated")
        return out

    # --------------------------------------------------- dict-like read views
    def sites_of(self, v: int) -> tuple:
        """Sites of vertex ``v``, ascending."""
        return tuple(self.vsite[v, : self.vdeg[v]].tolist())

    def vertices_of(self, s: int) -> set:
        """Alive vertices tangent to site ``s``."""
        out: set[int] = set()
        if s < 0 or s >= self.shead.shape[0]:
            return out
        r = int(self.shead[s])
        while r >= 0:
            out.add(int(self.rv[r]))
            r = int(self.rnext[r])
        return out

    def edges_of(self, v: int) -> set:
        """Edges ending at vertex ``v``."""
        out: set[int] = set()
        if v < 0 or v >= self.veh.shape[0] or not self.valive[v]:
            return out
        q = int(self.veh[v])
        while q >= 0:
            out.add(q >> 1)
            q = int(self.enx[q])
        return out

    @property
    def edges(self) -> _Edges:
        """Alive edges as a read-only mapping edge id -> (v0, v1, site_a, site_b)."""
        return _Edges(self)

    @property
    def vs(self) -> _Rows:
        return _Rows(self.sites_of)

    @property
    def site_verts(self) -> _Rows:
        return _Rows(self.vertices_of)

    @property
    def vert_edges(self) -> _Rows:
        return _Rows(self.edges_of)

    @property
    def pair_edges(self) -> _Rows:
        def of(key):
            a, b = min(key), max(key)
            return {
                e
                for v in self.vertices_of(a)
                for e in self.edges_of(v)
                if self.es[e, 0] == a and self.es[e, 1] == b
            }

        return _Rows(of)


class _Rows:
    """``get``/``[]`` access through a function (empty results read as missing)."""

    def __init__(self, fn) -> None:
        self._fn = fn

    def __getitem__(self, k):
        return self._fn(k)

    def get(self, k, default=None):
        out = self._fn(k)
        return out if out else default


class _Edges:
    def __init__(self, d: Diagram) -> None:
        self._d = d

    def _ids(self):
        return np.nonzero(self._d.ealive[: self._d.next_e])[0].tolist()

    def __getitem__(self, e):
        d = self._d
        if not (0 <= e < d.next_e and d.ealive[e]):
            raise KeyError(e)
        return (int(d.ev[e, 0]), int(d.ev[e, 1]), int(d.es[e, 0]), int(d.es[e, 1]))

    def __contains__(self, e) -> bool:
        d = self._d
        return 0 <= e < d.next_e and bool(d.ealive[e])

    def __iter__(self):
        return iter(self._ids())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._d.ealive[: self._d.next_e]))

    def keys(self):
        return self._ids()

    def values(self):
        return [self[e] for e in self._ids()]

    def items(self):
        return [(e, self[e]) for e in self._ids()]
