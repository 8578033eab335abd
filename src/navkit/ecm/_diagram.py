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

Cost: each step's geometry runs as one numba kernel over the arrays of sites,
vertices, edges and the site grid (:mod:`navkit.ecm._update_kernels`:
conflict vertices, cut edges, candidate circles with their emptiness test and
site sets, bisector re-joining); Python keeps the vertex/edge index (dicts of
sets keyed by site, vertex and bisector) and calls a handful of kernels per
update.  Two sites of one convex obstacle that share no point are never paired
in a candidate triple (an empty circle outside a convex set touches it once).
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from . import _update_kernels as U


class Diagram:
    """Vertices and edges of the free-space Voronoi diagram of a :class:`Sites`."""

    def __init__(self, sites, tol: float) -> None:
        self.S = sites
        self.tol = tol
        self.nv = 0
        self.vx = np.zeros(64)
        self.vy = np.zeros(64)
        self.vr = np.zeros(64)
        self.valive = np.zeros(64, np.bool_)
        self.vs: list[tuple] = []  # sites of each vertex (sorted tuple)
        self.ev = np.zeros((64, 2), np.int64)  # edge end vertices by edge id
        self.es = np.zeros((64, 2), np.int64)  # edge sites (a < b) by edge id
        self.ealive = np.zeros(64, np.bool_)
        self.free_v: list[int] = []
        self.site_verts: dict[int, set] = {}
        self.edges: dict[int, tuple] = {}  # eid -> (v0, v1, a, b)
        self.pair_edges: dict[tuple, set] = {}
        self.vert_edges: dict[int, set] = {}
        self.next_e = 0
        self.free_e: list[int] = []
        self.vgrid: dict[tuple, list] = {}
        self.cell = max(tol * 1e3, 1e-300)
        self.touched_v: set = set()
        self.touched_e: set = set()
        self.version = 0

    # ----------------------------------------------------------------- vertices
    def _gkey(self, x, y):
        return (math.floor(x / self.cell), math.floor(y / self.cell))

    def find_vertex(self, x, y):
        """An alive vertex within 10 tol of (x, y) (per coordinate), or -1.
        Neighbouring grid cells are looked at only when (x, y) lies within
        twice that distance of its cell's side (cells are 100x wider)."""
        c = self.cell
        fx, fy = x / c, y / c
        gx, gy = math.floor(fx), math.floor(fy)
        fx -= gx
        fy -= gy
        t = self.tol * 10
        m = 2.0 * t / c
        ii = (gx - 1, gx, gx + 1) if fx < m or fx > 1.0 - m else (gx,)
        jj = (gy - 1, gy, gy + 1) if fy < m or fy > 1.0 - m else (gy,)
        vg = self.vgrid
        for i in ii:
            for j in jj:
                lst = vg.get((i, j))
                if lst:
                    for v in lst:
                        if (
                            self.valive[v]
                            and abs(float(self.vx[v]) - x) <= t
                            and abs(float(self.vy[v]) - y) <= t
                        ):
                            return v
        return -1

    def _grow_vertices(self) -> None:
        for name in ("vx", "vy", "vr", "valive"):
            a = getattr(self, name)
            b = np.zeros(2 * a.shape[0], a.dtype)
            b[: a.shape[0]] = a
            setattr(self, name, b)

    def add_vertex(self, x, y, r, sites) -> int:
        """Add a vertex at (x, y) with clearance r tangent to ``sites`` (sorted
        tuple), or merge the sites into an existing vertex at that point."""
        sv = self.site_verts
        v = self.find_vertex(x, y)
        if v >= 0:
            new = tuple(sorted(set(self.vs[v]) | set(sites)))
            for s in new:
                q = sv.get(s)
                if q is None:
                    sv[s] = {v}
                else:
                    q.add(v)
            self.vs[v] = new
            self.touched_v.add(v)
            return v
        sites = tuple(sorted(sites))
        if self.free_v:
            v = self.free_v.pop()
            self.vs[v] = sites
        else:
            v = self.nv
            if v == self.vx.shape[0]:
                self._grow_vertices()
            self.nv += 1
            self.vs.append(sites)
        self.vx[v] = x
        self.vy[v] = y
        self.vr[v] = r
        self.valive[v] = True
        c = self.cell
        key = (math.floor(x / c), math.floor(y / c))
        lst = self.vgrid.get(key)
        if lst is None:
            self.vgrid[key] = [v]
        else:
            lst.append(v)
        for s in sites:
            q = sv.get(s)
            if q is None:
                sv[s] = {v}
            else:
                q.add(v)
        self.vert_edges[v] = set()
        self.touched_v.add(v)
        return v

    def kill_vertex(self, v) -> None:
        self.kill_vertices((v,))

    def kill_vertices(self, vs) -> None:
        """Delete vertices and their edges; their slots are reused."""
        sv = self.site_verts
        ve = self.vert_edges
        vg = self.vgrid
        c = self.cell
        vs = list(vs)
        if not vs:
            return
        xs = self.vx[vs].tolist()
        ys = self.vy[vs].tolist()
        for v, x, y in zip(vs, xs, ys):
            es = ve.pop(v, None)
            if es:
                for e in list(es):
                    self.kill_edge(e)
            for s in self.vs[v]:
                q = sv.get(s)
                if q is not None:
                    q.discard(v)
            lst = vg.get((math.floor(x / c), math.floor(y / c)))
            if lst is not None and v in lst:
                lst.remove(v)
        self.valive[vs] = False
        self.free_v.extend(vs)
        self.touched_v.update(vs)

    # -------------------------------------------------------------------- edges
    def add_edge(self, v0, v1, a, b) -> int:
        if a > b:
            a, b = b, a
        if self.free_e:
            e = self.free_e.pop()
        else:
            e = self.next_e
            self.next_e += 1
        if e == self.ealive.shape[0]:
            ev = np.zeros((2 * e, 2), np.int64)
            ev[:e] = self.ev
            es = np.zeros((2 * e, 2), np.int64)
            es[:e] = self.es
            ea = np.zeros(2 * e, np.bool_)
            ea[:e] = self.ealive
            self.ev, self.es, self.ealive = ev, es, ea
        self.ev[e] = (v0, v1)
        self.es[e] = (a, b)
        self.ealive[e] = True
        self.edges[e] = (v0, v1, a, b)
        q = self.pair_edges.get((a, b))
        if q is None:
            self.pair_edges[(a, b)] = {e}
        else:
            q.add(e)
        self.vert_edges[v0].add(e)
        self.vert_edges[v1].add(e)
        self.touched_e.add(e)
        return e

    def kill_edge(self, e) -> None:
        v0, v1, a, b = self.edges.pop(e)
        self.ealive[e] = False
        self.free_e.append(e)
        pe = self.pair_edges.get((a, b))
        if pe is not None:
            pe.discard(e)
            if not pe:
                del self.pair_edges[(a, b)]
        ve = self.vert_edges
        q = ve.get(v0)
        if q is not None:
            q.discard(e)
        q = ve.get(v1)
        if q is not None:
            q.discard(e)
        self.touched_e.add(e)

    # --------------------------------------------------------------- predicates
    def is_secondary(self, a, b) -> bool:
        S = self.S
        if S.kind[a] == 1 and S.kind[b] == 0:
            a, b = b, a
        return S.kind[a] == 0 and S.kind[b] == 1 and a in (S.e0[b], S.e1[b])

    def side_ok(self, s, x, y, rho) -> bool:
        S = self.S
        if S.kind[s] == 0:
            return S.side[s] == 1 or rho <= self.tol
        if S.side[s] == 0:
            return True
        dx, dy = S.bx[s] - S.ax[s], S.by[s] - S.ay[s]
        cr = (dx * (y - S.ay[s]) - dy * (x - S.ax[s])) / math.hypot(dx, dy)
        return cr >= -self.tol

    # ---------------------------------------------------------- vertex creation
    def add_candidates(self, triples) -> list:
        """Validate candidate triples ((m, 3) site ids); add the valid, empty, free
        circles as vertices (one kernel call:
        :func:`navkit.ecm._update_kernels.candidate_vertices`)."""
        if len(triples) == 0:
            return []
        S = self.S
        tri = np.ascontiguousarray(np.asarray(triples, np.int64).reshape(-1, 3))
        xyr, ok, ptr, ids = U.candidate_vertices(
            tri, S.kind, S.ax, S.ay, S.bx, S.by, S.e0, S.e1, S.side, S.alive, S.owner, S.cvx,
            self.tol, *self._grid(),
        )  # fmt: skip
        out = []
        rl = xyr.tolist()
        pl = ptr.tolist()
        il = ids.tolist()
        for i in np.nonzero(ok)[0].tolist():
            x, y, rho = rl[i]
            out.append(self.add_vertex(x, y, rho, tuple(il[pl[i] : pl[i + 1]])))
        return out

    def add_corner(self, s_in, p, s_out) -> int:
        S = self.S
        return self.add_vertex(float(S.ax[p]), float(S.ay[p]), 0.0, (s_in, p, s_out))

    # ------------------------------------------------------------- edge joining
    def rejoin(self, pairs) -> None:
        """Re-join the edges of every bisector in ``pairs`` (one kernel call:
        :func:`navkit.ecm._update_kernels.rejoin_candidates`)."""
        S = self.S
        alive = S.alive
        sv = self.site_verts
        pe = self.pair_edges
        pa: list = []
        pb: list = []
        ptr = [0]
        vids: list = []
        for a, b in pairs:
            if a > b:
                a, b = b, a
            old = pe.get((a, b))
            if old:
                for e in list(old):
                    self.kill_edge(e)
            if not (alive[a] and alive[b]) or self.is_secondary(a, b):
                continue
            va = sv.get(a)
            vb = sv.get(b)
            if not va or not vb:
                continue
            vs = va & vb
            if len(vs) < 2:
                continue
            pa.append(a)
            pb.append(b)
            vids.extend(vs)
            ptr.append(len(vids))
        if not pa:
            return
        pa_a = np.asarray(pa, np.int64)
        pb_a = np.asarray(pb, np.int64)
        kp, k0, k1 = U.rejoin_candidates(
            pa_a,
            pb_a,
            np.asarray(ptr, np.int64),
            np.asarray(vids, np.int64),
            self.vx,
            self.vy,
            self.vr,
            self.tol,
            *self._grid(),
            S.kind,
            S.ax,
            S.ay,
            S.bx,
            S.by,
            S.side,
            S.alive,
        )
        for p, v0, v1 in zip(kp.tolist(), k0.tolist(), k1.tolist()):
            self.add_edge(v0, v1, pa[p], pb[p])

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
        """Insert the alive sites ``new`` (already in ``S``); ``corners`` are
        (s_in, p, s_out) zero-clearance corner vertices of the new polygon."""
        S = self.S
        new = list(new)
        newset = set(new)
        # 1. vertices in conflict
        nw = np.asarray(new, np.int64)
        sk = S.kind[nw] == 1
        x0 = min(float(S.ax[nw].min()), float(S.bx[nw[sk]].min()) if sk.any() else np.inf)
        x1 = max(float(S.ax[nw].max()), float(S.bx[nw[sk]].max()) if sk.any() else -np.inf)
        y0 = min(float(S.ay[nw].min()), float(S.by[nw[sk]].min()) if sk.any() else np.inf)
        y1 = max(float(S.ay[nw].max()), float(S.by[nw[sk]].max()) if sk.any() else -np.inf)
        kv = U.conflict_vertices(
            nw, x0, x1, y0, y1, self.vx, self.vy, self.vr, self.valive, self.nv, self.tol,
            S.kind, S.ax, S.ay, S.bx, S.by,
        )  # fmt: skip
        killed = kv.tolist()
        affected_e: set = set()
        # 2. edges cut in their interior (both ends alive): midpoint test in the
        # kernel, the exact tangent-circle test for the rest
        for v in killed:
            affected_e.update(self.vert_edges.get(v, ()))
        vkill = np.zeros(max(self.nv, 1), np.bool_)
        vkill[kv] = True
        cut, rest = U.cut_edge_candidates(
            nw, x0, x1, y0, y1, self.ev, self.es, self.ealive, self.next_e, vkill,
            self.vx, self.vy, self.vr, self.tol, S.kind, S.ax, S.ay, S.bx, S.by,
        )  # fmt: skip
        affected_e.update(cut.tolist())
        if rest.shape[0]:
            hit = U.cut_edges_exact(
                rest, nw, self.ev, self.es, self.vx, self.vy, self.vr, self.tol,
                S.kind, S.ax, S.ay, S.bx, S.by, S.e0, S.e1, S.side,
            )  # fmt: skip
            affected_e.update(rest[hit].tolist())
        pairs: set = set()
        aff_sites: set = set()
        for e in affected_e:
            _, _, a, b = self.edges[e]
            pairs.add((a, b))
            aff_sites.update((a, b))
        for v in killed:
            aff_sites.update(self.vs[v])
        # sites whose cells contain the new obstacle
        grid = self._grid()
        S.alive[nw] = False
        for s in nw[S.kind[nw] == 0].tolist():
            ns, _ = U.grid_nearest(S.ax[s], S.ay[s], *grid, S.kind, S.ax, S.ay, S.bx, S.by, S.alive)
            if ns >= 0:
                aff_sites.add(int(ns))
        S.alive[nw] = True
        aff_sites -= newset
        for e in affected_e:
            self.kill_edge(e)
        self.kill_vertices(killed)
        # 3. candidates; a segment and its endpoint bound each other's cells along
        # a normal line that is not stored as an edge but can be cut too
        cpairs = set(pairs)
        for a in aff_sites:
            if S.kind[a] == 1:
                cpairs.add((a, int(S.e0[a])))
                cpairs.add((a, int(S.e1[a])))
            else:
                for sg in S.incident.get(a, ()):
                    if S.alive[sg]:
                        cpairs.add((a, sg))
        nw = np.asarray(new, np.int64)
        parts = []
        if cpairs:
            cp = np.asarray(list(cpairs), np.int64)
            parts.append(np.column_stack([np.repeat(nw, len(cp)), np.tile(cp, (len(nw), 1))]))
        # A convex obstacle (every corner's cell in free space; a segment or a
        # point) is touched by an empty circle outside it at one point only, so
        # two of its sites share a vertex only if they share that point (a
        # segment and its endpoint, or the two segments at a corner), and no
        # circle outside it touches three of its sites with positive radius.
        pts_new = nw[S.kind[nw] == 0]
        convex = bool(np.all(S.side[pts_new] == 1))
        if len(nw) >= 2:
            if convex:
                prs = []
                for sg in nw[S.kind[nw] == 1].tolist():
                    prs.append((sg, int(S.e0[sg])))
                    prs.append((sg, int(S.e1[sg])))
                for p in pts_new.tolist():
                    inc = [sg for sg in S.incident.get(p, ()) if sg in newset]
                    prs.extend(combinations(inc, 2))
                pr = np.asarray(prs, np.int64).reshape(-1, 2)
            else:
                pr = np.asarray(list(combinations(new, 2)), np.int64)
            af = np.asarray(list(aff_sites), np.int64)
            if af.size and pr.size:
                parts.append(
                    np.column_stack([np.repeat(pr, len(af), axis=0), np.tile(af, len(pr))])
                )
        if len(nw) >= 3 and not convex:
            parts.append(np.asarray(list(combinations(new, 3)), np.int64))
        triples = np.vstack(parts) if parts else np.zeros((0, 3), np.int64)
        made = self.add_candidates(triples)
        for c in corners:
            made.append(self.add_corner(*c))
        for v in made:
            for a, b in combinations(self.vs[v], 2):
                pairs.add((min(a, b), max(a, b)))
        self.rejoin(pairs)
        self.version += 1

    def delete_sites(self, dead) -> None:
        S = self.S
        dead = set(dead)
        killed = set()
        for s in dead:
            killed |= self.site_verts.get(s, set())
        nb = set()
        pairs = set()
        for v in killed:
            nb.update(self.vs[v])
            for e in self.vert_edges.get(v, ()):
                _, _, a, b = self.edges[e]
                pairs.add((a, b))
        nb -= dead
        self.kill_vertices(killed)
        for s in dead:
            S.alive[s] = False
            self.site_verts.pop(s, None)
        S.grid_drop(sorted(dead))
        pairs = {p for p in pairs if p[0] not in dead and p[1] not in dead}
        made = self.add_candidates(list(combinations(sorted(nb), 3)))
        for v in made:
            for a, b in combinations(self.vs[v], 2):
                pairs.add((min(a, b), max(a, b)))
        self.rejoin(pairs)
        self.version += 1

    # ----------------------------------------------------------------- exports
    def arrays(self):
        """(verts (n,2), clearance (n,), vertex ids (n,), edges (m,4) int64 as
        [v0, v1, site_a, site_b] in compact vertex numbering)."""
        ids = np.nonzero(self.valive[: self.nv])[0].astype(np.int64)
        remap = np.full(self.nv, -1, np.int64)
        remap[ids] = np.arange(ids.shape[0])
        vx = self.vx[ids]
        vy = self.vy[ids]
        vr = self.vr[ids]
        ed = np.array(list(self.edges.values()), np.int64).reshape(-1, 4)
        if ed.size:
            ed[:, 0] = remap[ed[:, 0]]
            ed[:, 1] = remap[ed[:, 1]]
        return np.stack([vx, vy], axis=1), vr, ids, ed
