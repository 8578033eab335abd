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
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from . import _kernels as K
from ._tangent import solve_triples
from .geom import pair_param, pair_point, site_dist, tangent_circles


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
        gx, gy = self._gkey(x, y)
        t = self.tol * 10
        for i in (gx - 1, gx, gx + 1):
            for j in (gy - 1, gy, gy + 1):
                for v in self.vgrid.get((i, j), ()):
                    if self.valive[v] and abs(self.vx[v] - x) <= t and abs(self.vy[v] - y) <= t:
                        return v
        return -1

    def add_vertex(self, x, y, r, sites) -> int:
        v = self.find_vertex(x, y)
        if v >= 0:
            new = tuple(sorted(set(self.vs[v]) | set(sites)))
            for s in new:
                self.site_verts.setdefault(s, set()).add(v)
            self.vs[v] = new
            self.touched_v.add(v)
            return v
        if self.free_v:
            v = self.free_v.pop()
            self.vx[v], self.vy[v], self.vr[v] = x, y, r
            self.vs[v] = tuple(sorted(sites))
            self.valive[v] = True
        else:
            v = self.nv
            if v == self.vx.shape[0]:
                for name in ("vx", "vy", "vr", "valive"):
                    a = getattr(self, name)
                    b = np.zeros(2 * a.shape[0], a.dtype)
                    b[: a.shape[0]] = a
                    setattr(self, name, b)
            self.nv += 1
            self.vx[v], self.vy[v], self.vr[v] = x, y, r
            self.vs.append(tuple(sorted(sites)))
            self.valive[v] = True
        self.vgrid.setdefault(self._gkey(x, y), []).append(v)
        for s in self.vs[v]:
            self.site_verts.setdefault(s, set()).add(v)
        self.vert_edges[v] = set()
        self.touched_v.add(v)
        return v

    def kill_vertex(self, v) -> None:
        for e in list(self.vert_edges.get(v, ())):
            self.kill_edge(e)
        for s in self.vs[v]:
            sv = self.site_verts.get(s)
            if sv is not None:
                sv.discard(v)
        lst = self.vgrid.get(self._gkey(self.vx[v], self.vy[v]))
        if lst is not None and v in lst:
            lst.remove(v)
        self.valive[v] = False
        self.vert_edges.pop(v, None)
        self.free_v.append(v)
        self.touched_v.add(v)

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
            ea = np.zeros(2 * e, np.bool_)
            ea[:e] = self.ealive
            self.ev, self.ealive = ev, ea
        self.ev[e] = (v0, v1)
        self.ealive[e] = True
        self.edges[e] = (v0, v1, a, b)
        self.pair_edges.setdefault((a, b), set()).add(e)
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
        for v in (v0, v1):
            ve = self.vert_edges.get(v)
            if ve is not None:
                ve.discard(e)
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

    def _tangent_rho(self, ids, x, y):
        """Common distance of (x, y) to the sites ``ids`` if it is tangent to all
        of them on their free side, else None."""
        rs = []
        for s in ids:
            d, _, _, ok = site_dist(self.S, s, x, y)
            if not ok:
                return None
            rs.append(d)
        rho = sum(rs) / len(rs)
        if max(rs) - min(rs) > self.tol:
            return None
        for s in ids:
            if not self.side_ok(s, x, y, rho):
                return None
        return rho

    def _empty(self, xs, ys, rhos, excl) -> np.ndarray:
        if not xs:
            return np.zeros(0, np.bool_)
        ex = np.full((len(xs), 4), -1, np.int64)
        for i, t in enumerate(excl):
            ex[i, : len(t)] = t[:4]
        md = self._min_dist(
            np.asarray(xs, np.float64), np.asarray(ys, np.float64), np.asarray(rhos), ex
        )
        return md >= np.asarray(rhos) - self.tol

    def _min_dist(self, qx, qy, rho, ex):
        """Nearest-site distance per query, exact where it is below ``rho``."""
        S = self.S
        if hasattr(S, "cells"):
            return K.grid_min_dist(
                qx,
                qy,
                rho + 2 * self.tol,
                ex,
                *S.grid_args(),
                S.kind,
                S.ax,
                S.ay,
                S.bx,
                S.by,
                S.alive,
            )
        return K.min_dist_excluding(qx, qy, ex, *S.kernel_args())

    def _site_set(self, x, y, rho):
        S = self.S
        if hasattr(S, "cells"):
            ids = K.grid_sites_within(
                x, y, rho + self.tol, 1e-9, *S.grid_args(), S.kind, S.ax, S.ay, S.bx, S.by, S.alive
            )
        else:
            ids = K.sites_within(x, y, rho + self.tol, 1e-9, *S.kernel_args())
        return [int(s) for s in ids]

    # ---------------------------------------------------------- vertex creation
    def add_candidates(self, triples, local=None) -> list:
        """Validate candidate triples; add the valid, empty, free circles as vertices.
        ``local``: site ids to test emptiness against first (a cheap pre-filter)."""
        if len(triples) == 0:
            return []
        S = self.S
        tri = np.asarray(triples, np.int64).reshape(-1, 3)
        res = solve_triples(tri, S.kind, S.ax, S.ay, S.bx, S.by, S.e0, S.e1, S.side, self.tol)
        if res.shape[0] == 0:
            return []
        ex = np.full((res.shape[0], 4), -1, np.int64)
        ex[:, :3] = tri[res[:, 3].astype(np.int64)]
        if local is not None and res.shape[0] > 8:
            sub = np.asarray(sorted(local), np.int64)
            md = K.min_dist_subset(
                np.ascontiguousarray(res[:, 0]),
                np.ascontiguousarray(res[:, 1]),
                ex,
                sub,
                *S.kernel_args(),
            )
            keep = md >= res[:, 2] - self.tol
            res, ex = res[keep], ex[keep]
            if res.shape[0] == 0:
                return []
        md = self._min_dist(
            np.ascontiguousarray(res[:, 0]), np.ascontiguousarray(res[:, 1]), res[:, 2].copy(), ex
        )
        out = []
        for i in np.nonzero(md >= res[:, 2] - self.tol)[0]:
            x, y, rho = float(res[i, 0]), float(res[i, 1]), float(res[i, 2])
            sset = self._site_set(x, y, rho)
            if any(not self.side_ok(s, x, y, rho) for s in sset):
                continue
            out.append(self.add_vertex(x, y, rho, sset))
        return out

    def add_corner(self, s_in, p, s_out) -> int:
        S = self.S
        return self.add_vertex(float(S.ax[p]), float(S.ay[p]), 0.0, (s_in, p, s_out))

    # ------------------------------------------------------------- edge joining
    def rejoin(self, pairs) -> None:
        """Re-join the edges of every bisector in ``pairs``."""
        S = self.S
        cand = []  # (a, b, v0, v1, mx, my, rho)
        for a, b in pairs:
            if a > b:
                a, b = b, a
            for e in list(self.pair_edges.get((a, b), ())):
                self.kill_edge(e)
            if self.is_secondary(a, b) or not (S.alive[a] and S.alive[b]):
                continue
            vs = self.site_verts.get(a, set()) & self.site_verts.get(b, set())
            if len(vs) < 2:
                continue
            branches: dict[int, list] = {}
            for v in vs:
                br, t = pair_param(S, a, b, self.vx[v], self.vy[v])
                if self.vr[v] <= self.tol:
                    # a corner vertex lies on both branches of two segments
                    for bb in (1, -1) if S.kind[a] == 1 and S.kind[b] == 1 else (br,):
                        branches.setdefault(bb, []).append((t, v))
                else:
                    branches.setdefault(br, []).append((t, v))
            for lst in branches.values():
                lst.sort()
                for (t0, v0), (t1, v1) in zip(lst, lst[1:]):
                    if t1 - t0 <= 0.0 and self.vr[v0] > self.tol and self.vr[v1] > self.tol:
                        continue
                    mx, my = pair_point(
                        S, a, b, (self.vx[v0], self.vy[v0]), (self.vx[v1], self.vy[v1])
                    )
                    rho = self._tangent_rho((a, b), mx, my)
                    if rho is None or rho <= self.tol:
                        continue
                    cand.append((a, b, v0, v1, mx, my, rho))
        ok = self._empty(
            [c[4] for c in cand], [c[5] for c in cand], [c[6] for c in cand], [c[:2] for c in cand]
        )
        for c, good in zip(cand, ok):
            if good:
                self.add_edge(c[2], c[3], c[0], c[1])

    # ------------------------------------------------------------------ updates
    def insert_sites(self, new, corners) -> None:
        """Insert the alive sites ``new`` (already in ``S``); ``corners`` are
        (s_in, p, s_out) zero-clearance corner vertices of the new polygon."""
        S = self.S
        new = list(new)
        newset = set(new)
        # 1. vertices in conflict
        nv = self.nv
        vx = self.vx[:nv]
        vy = self.vy[:nv]
        vr = self.vr[:nv]
        alive = self.valive[:nv]
        xs = np.concatenate([S.ax[new], S.bx[new][S.kind[new] == 1]])
        ys = np.concatenate([S.ay[new], S.by[new][S.kind[new] == 1]])
        x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
        killed = []
        affected_e: set = set()
        if nv:
            dbx = np.maximum(np.maximum(x0 - vx, vx - x1), 0.0)
            dby = np.maximum(np.maximum(y0 - vy, vy - y1), 0.0)
            near = alive & (np.hypot(dbx, dby) < vr - self.tol)
            for v in np.nonzero(near)[0].tolist():
                rho = vr[v]
                for s in new:
                    d, _, _, _ = site_dist(S, s, vx[v], vy[v])
                    if d < rho - self.tol:
                        killed.append(v)
                        break
        # 2. edges cut in their interior (both ends alive): candidates by box test
        killed_set = set(killed)
        for v in killed:
            affected_e.update(self.vert_edges.get(v, ()))
        ne = self.next_e
        eids = np.nonzero(self.ealive[:ne])[0]
        if eids.size:
            a0, a1 = self.ev[eids, 0], self.ev[eids, 1]
            r = np.maximum(self.vr[a0], self.vr[a1])
            ex0 = np.minimum(self.vx[a0], self.vx[a1]) - r
            ex1 = np.maximum(self.vx[a0], self.vx[a1]) + r
            ey0 = np.minimum(self.vy[a0], self.vy[a1]) - r
            ey1 = np.maximum(self.vy[a0], self.vy[a1]) + r
            near = ~((x1 < ex0) | (x0 > ex1) | (y1 < ey0) | (y0 > ey1))
            cand = [
                e
                for e in eids[near].tolist()
                if self.edges[e][0] not in killed_set and self.edges[e][1] not in killed_set
            ]
            affected_e.update(self._edges_cut(cand, new))
        pairs: set = set()
        aff_sites: set = set()
        for e in affected_e:
            _, _, a, b = self.edges[e]
            pairs.add((a, b))
            aff_sites.update((a, b))
        for v in killed:
            aff_sites.update(self.vs[v])
        # sites whose cells contain the new obstacle
        args = S.kernel_args()
        S.alive[new] = False
        for s in new:
            if S.kind[s] == 0:
                ns, _ = K.nearest_site(S.ax[s], S.ay[s], *args)
                if ns >= 0:
                    aff_sites.add(int(ns))
        S.alive[new] = True
        aff_sites -= newset
        for e in affected_e:
            self.kill_edge(e)
        for v in killed:
            self.kill_vertex(v)
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
        if len(nw) >= 2:
            pr = np.asarray(list(combinations(new, 2)), np.int64)
            af = np.asarray(list(aff_sites), np.int64)
            if af.size:
                parts.append(
                    np.column_stack([np.repeat(pr, len(af), axis=0), np.tile(af, len(pr))])
                )
        if len(nw) >= 3:
            parts.append(np.asarray(list(combinations(new, 3)), np.int64))
        triples = np.vstack(parts) if parts else np.zeros((0, 3), np.int64)
        made = self.add_candidates(triples, local=aff_sites | newset)
        for c in corners:
            made.append(self.add_corner(*c))
        for v in made:
            for a, b in combinations(self.vs[v], 2):
                pairs.add((min(a, b), max(a, b)))
        self.rejoin(pairs)
        self.version += 1

    def _edges_cut(self, cand, new) -> set:
        """The edges of ``cand`` that a new site cuts (nearer than the edge's own
        sites somewhere inside the edge): midpoint test, then the tangent circles
        of (new site, a, b) strictly inside the edge's parameter range."""
        S = self.S
        out = set()
        rest = []
        for e in cand:
            v0, v1, a, b = self.edges[e]
            mx, my = pair_point(S, a, b, (self.vx[v0], self.vy[v0]), (self.vx[v1], self.vy[v1]))
            rho_m = site_dist(S, a, mx, my)[0]
            if any(site_dist(S, s, mx, my)[0] < rho_m - self.tol for s in new):
                out.add(e)
            else:
                rest.append(e)
        if not rest:
            return out
        tri = np.array(
            [(s, self.edges[e][2], self.edges[e][3]) for e in rest for s in new], np.int64
        )
        res = solve_triples(tri, S.kind, S.ax, S.ay, S.bx, S.by, S.e0, S.e1, S.side, self.tol)
        nn = len(new)
        for row in res:
            e = rest[int(row[3]) // nn]
            if e in out:
                continue
            v0, v1, a, b = self.edges[e]
            br0, t0 = pair_param(S, a, b, self.vx[v0], self.vy[v0])
            br1, t1 = pair_param(S, a, b, self.vx[v1], self.vy[v1])
            br = br0 if self.vr[v0] > self.tol else br1
            b2, t = pair_param(S, a, b, row[0], row[1])
            if b2 == br and min(t0, t1) + self.tol < t < max(t0, t1) - self.tol:
                out.add(e)
        return out

    def _edge_cut(self, e, new) -> bool:
        """Whether a new site is nearer than the edge's sites somewhere inside edge e."""
        S = self.S
        v0, v1, a, b = self.edges[e]
        br0, t0 = pair_param(S, a, b, self.vx[v0], self.vy[v0])
        br1, t1 = pair_param(S, a, b, self.vx[v1], self.vy[v1])
        lo, hi = min(t0, t1), max(t0, t1)
        br = br0 if self.vr[v0] > self.tol else br1
        mx, my = pair_point(S, a, b, (self.vx[v0], self.vy[v0]), (self.vx[v1], self.vy[v1]))
        rho_m, _, _, _ = site_dist(S, a, mx, my)
        for s in new:
            d, _, _, _ = site_dist(S, s, mx, my)
            if d < rho_m - self.tol:
                return True
            for x, y in tangent_circles(S, s, a, b):
                if not (math.isfinite(x) and math.isfinite(y)):
                    continue
                b2, t = pair_param(S, a, b, x, y)
                if b2 != br or not (lo + self.tol < t < hi - self.tol):
                    continue
                if self._tangent_rho((s, a, b), x, y) is not None:
                    return True
        return False

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
        for v in list(killed):
            self.kill_vertex(v)
        for s in dead:
            S.alive[s] = False
            self.site_verts.pop(s, None)
        pairs = {p for p in pairs if p[0] not in dead and p[1] not in dead}
        made = self.add_candidates(list(combinations(sorted(nb), 3)), local=nb)
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
