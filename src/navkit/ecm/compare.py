"""Compare two corridor maps: the rebuild oracle of the local updates."""

from __future__ import annotations

import numpy as np

__all__ = ["map_difference"]


def _canon(m):
    v, r, ed, es = m.medial_axis()
    S = m.sites

    def skey(s):
        k = S.key(int(s))
        return (k[0],) + tuple(float(c) for c in k[1:])

    edges = []
    for (a, b), (sa, sb) in zip(ed, es):
        ka, kb = sorted([skey(sa), skey(sb)])
        edges.append((int(a), int(b), ka, kb))
    return v, r, edges


def map_difference(m1, m2, rel: float = 1e-9) -> list[str]:
    """Differences between two maps' medial axes (empty list = equal).

    Vertices are matched by position within ``rel`` times the scene extent
    (of any size: the tolerance is relative); edges by their matched end
    vertices and the geometry of their two sites.
    """
    v1, r1, e1 = _canon(m1)
    v2, r2, e2 = _canon(m2)
    ext = float(np.max(np.ptp(np.vstack([v1, v2]), axis=0))) if len(v1) + len(v2) > 1 else 0.0
    if ext <= 0.0:
        ext = float(np.max(np.ptp(m1._world(m1.boundary), axis=0)))
    tol = rel * ext
    out = []
    match = np.full(len(v1), -1, np.int64)
    used = np.zeros(len(v2), bool)
    if len(v2):
        for i in range(len(v1)):
            d = np.max(np.abs(v2 - v1[i]), axis=1)
            j = int(np.argmin(d))
            if d[j] <= tol and not used[j]:
                if abs(r1[i] - r2[j]) > tol:
                    out.append(f"vertex {v1[i]} clearance {r1[i]} vs {r2[j]}")
                match[i] = j
                used[j] = True
    for i in np.nonzero(match < 0)[0].tolist():
        out.append(f"vertex only in first: {v1[i]} r={r1[i]:.6g}")
    for j in np.nonzero(~used)[0].tolist():
        out.append(f"vertex only in second: {v2[j]} r={r2[j]:.6g}")

    # site keys are in each map's private frame; to world, on a grid of ``tol``
    def wkey(k, m):
        c = np.asarray(k[1:], np.float64).reshape(-1, 2)
        w = np.round(m._world(c) / tol).astype(np.int64).reshape(-1)
        return (k[0], *w.tolist())

    s1: dict = {}
    for a, b, ka, kb in e1:
        if match[a] < 0 or match[b] < 0:
            out.append(f"edge of first at unmatched vertex {v1[a]} - {v1[b]}")
            continue
        key = (
            frozenset((int(match[a]), int(match[b]))),
            frozenset((wkey(ka, m1), wkey(kb, m1))),
        )
        s1[key] = s1.get(key, 0) + 1
    s2: dict = {}
    for a, b, ka, kb in e2:
        key = (frozenset((a, b)), frozenset((wkey(ka, m2), wkey(kb, m2))))
        s2[key] = s2.get(key, 0) + 1
    for k in s1.keys() - s2.keys():
        ids = sorted(k[0])
        out.append(f"edge only in first: {[v2[i].tolist() for i in ids]} sites {sorted(k[1])}")
    for k in s2.keys() - s1.keys():
        ids = sorted(k[0])
        out.append(f"edge only in second: {[v2[i].tolist() for i in ids]} sites {sorted(k[1])}")
    return out
