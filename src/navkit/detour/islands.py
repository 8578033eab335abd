"""Connected components ("islands") of a navmesh's polygon graph.

Two polygons are in the same island when a chain of links joins them (shared
edges, tile portals and off-mesh connections, followed in either direction).
Islands let samplers and nearest-point look-ups stay on the part of the mesh an
agent can actually reach.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit

__all__ = ["Islands", "find_islands", "find_random_point_on_island", "find_nearest_poly_on_island"]


class Islands(NamedTuple):
    """Island labels of a navmesh.

    Attributes
    ----------
    poly_island : (NP,) int32
        Island id per global polygon index (``-1`` for polygons of dead pool ranges).
    island_area : (n_islands,) float64
        Walkable xz area of each island [wu^2] (off-mesh polygons count 0).
    island_polys : (n_islands,) int32
        Number of polygons in each island.
    """

    poly_island: np.ndarray
    island_area: np.ndarray
    island_polys: np.ndarray

    @property
    def count(self) -> int:  # type: ignore[override]
        """Number of islands."""
        return int(self.island_area.shape[0])


@njit
def _find(parent: np.ndarray, i: int) -> int:
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:  # path compression
        nxt = parent[i]
        parent[i] = root
        i = nxt
    return root


@njit
def _label_kernel(
    poly_tile, poly_first_link, link_poly, link_next, poly_type, poly_vert_count, poly_verts, verts
):
    n = poly_tile.shape[0]
    parent = np.arange(n, dtype=np.int64)
    for p in range(n):
        if poly_tile[p] < 0:
            continue
        li = poly_first_link[p]
        while li >= 0:
            q = link_poly[li]
            if q >= 0 and poly_tile[q] >= 0:
                a = _find(parent, p)
                b = _find(parent, q)
                if a != b:
                    if a < b:
                        parent[b] = a
                    else:
                        parent[a] = b
            li = link_next[li]
    label = np.full(n, -1, dtype=np.int32)
    root_label = np.full(n, -1, dtype=np.int32)
    count = 0
    for p in range(n):
        if poly_tile[p] < 0:
            continue
        r = _find(parent, p)
        if root_label[r] < 0:
            root_label[r] = count
            count += 1
        label[p] = root_label[r]
    area = np.zeros(count, dtype=np.float64)
    npolys = np.zeros(count, dtype=np.int32)
    for p in range(n):
        k = label[p]
        if k < 0:
            continue
        npolys[k] += 1
        if poly_type[p] != 0:
            continue
        nv = poly_vert_count[p]
        a2 = 0.0
        x0 = np.float64(verts[poly_verts[p, 0], 0])
        z0 = np.float64(verts[poly_verts[p, 0], 2])
        for j in range(1, nv - 1):
            x1 = np.float64(verts[poly_verts[p, j], 0]) - x0
            z1 = np.float64(verts[poly_verts[p, j], 2]) - z0
            x2 = np.float64(verts[poly_verts[p, j + 1], 0]) - x0
            z2 = np.float64(verts[poly_verts[p, j + 1], 2]) - z0
            a2 += abs(x1 * z2 - x2 * z1)
        area[k] += 0.5 * a2
    return label, area, npolys


def find_islands(navmesh) -> Islands:
    """Label every polygon of ``navmesh`` with its connected component.

    Parameters
    ----------
    navmesh : NavMesh

    Returns
    -------
    Islands
    """
    a = navmesh.arrays()
    label, area, npolys = _label_kernel(
        a.poly_tile,
        a.poly_first_link,
        a.link_poly,
        a.link_next,
        a.poly_type,
        a.poly_vert_count,
        a.poly_verts,
        a.verts,
    )
    return Islands(label, area, npolys)


def _island_polys(navmesh, islands: Islands, island: int) -> np.ndarray:
    if not 0 <= int(island) < islands.count:
        from ..errors import InputError

        raise InputError(f"island {island} does not exist (0..{islands.count - 1})")
    a = navmesh.arrays()
    gp = np.flatnonzero(islands.poly_island == int(island))
    return gp[a.poly_type[gp] == 0]


def find_random_point_on_island(query, islands: Islands, island: int, *, rng=None):
    """A random point on one island, uniform by xz area.

    Parameters
    ----------
    query : NavMeshQuery
    islands : Islands
        From ``navmesh.islands()`` (recompute after tiles change).
    island : int
        Island id.
    rng : numpy.random.Generator or int, optional

    Returns
    -------
    RandomPoint
        ``ref`` and ``point`` (3,) float32 on the detail surface.
    """
    from .query import RandomPoint

    nm = query.navmesh
    a = nm.arrays()
    gps = _island_polys(nm, islands, island)
    g = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    # xz area of every fan triangle of every polygon of the island
    tri_poly, tri_v = [], []
    for gp in gps:
        n = int(a.poly_vert_count[gp])
        vv = a.poly_verts[gp, :n]
        for j in range(1, n - 1):
            tri_poly.append(gp)
            tri_v.append((vv[0], vv[j], vv[j + 1]))
    tv = a.verts[np.asarray(tri_v, dtype=np.int64)].astype(np.float64)  # (t, 3, 3)
    e1 = tv[:, 1, [0, 2]] - tv[:, 0, [0, 2]]
    e2 = tv[:, 2, [0, 2]] - tv[:, 0, [0, 2]]
    area = 0.5 * np.abs(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0])
    k = int(g.choice(len(area), p=area / area.sum()))
    r1, r2 = g.random(2)
    s = np.sqrt(r1)
    p = (1 - s) * tv[k, 0] + s * (1 - r2) * tv[k, 1] + s * r2 * tv[k, 2]
    ref = nm.poly_ref(int(tri_poly[k]))
    pt = p.astype(np.float32)
    h = query.get_poly_height(ref, pt)
    if h is not None:
        pt[1] = h
    return RandomPoint(ref, pt)


def find_nearest_poly_on_island(query, islands: Islands, island: int, center,
                                half_extents=(2.0, 4.0, 2.0)):  # fmt: skip
    """The nearest polygon of one island within the box ``center +- half_extents``.

    Like :meth:`NavMeshQuery.find_nearest_poly` restricted to the island's
    polygons; the nearest is chosen by 3D distance to each polygon's closest
    point.

    Returns
    -------
    NearestPoly
        ``ref`` 0 when no polygon of the island is in the box.
    """
    from .query import NearestPoly

    nm = query.navmesh
    c = np.asarray(center, dtype=np.float32)
    refs, st = query.query_polygons(c, half_extents, max_polys=4096)
    best = (np.inf, 0, c.copy(), False)
    for r in refs:
        gp = nm.poly_index(int(r))
        if islands.poly_island[gp] != int(island):
            continue
        pt, over = query.closest_point_on_poly(int(r), c)
        d = float(np.sum((pt.astype(np.float64) - c) ** 2))
        if d < best[0]:
            best = (d, int(r), pt, over)
    return NearestPoly(best[1], best[2], bool(best[3]), int(st))
