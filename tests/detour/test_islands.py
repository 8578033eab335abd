"""Islands (connected components) against a breadth-first search over the public link API."""

from collections import deque

import numpy as np
import pytest
from peer_support import peer_file

import navkit
from navkit.detour.islands import find_islands


def _bfs_components(nm):
    refs = nm.poly_refs()
    comp = {}
    adj = {r: set() for r in refs}
    for r in refs:
        for target, *_ in nm.links_of(r):
            if target in adj:
                adj[r].add(target)
                adj[target].add(r)  # links are followed both ways
    n = 0
    for r in refs:
        if r in comp:
            continue
        comp[r] = n
        dq = deque([r])
        while dq:
            u = dq.popleft()
            for v in adj[u]:
                if v not in comp:
                    comp[v] = n
                    dq.append(v)
        n += 1
    return comp, n


def _same_partition(nm, isl):
    comp, n = _bfs_components(nm)
    assert isl.count == n
    pairs = {(comp[r], int(isl.poly_island[nm.poly_index(r)])) for r in comp}
    # a bijection between the two labelings
    assert len(pairs) == n == len({a for a, _ in pairs}) == len({b for _, b in pairs})


@pytest.mark.parametrize("name", ["dungeon.solo", "nav_test.tiled", "undulating.solo"])
def test_islands_equal_bfs_on_recast_navmeshes(name):
    nm = navkit.NavMesh.from_recast(peer_file(f"{name}.navmesh.bin"))
    isl = find_islands(nm)
    _same_partition(nm, isl)
    assert isl.island_polys.sum() == len(nm.poly_refs())


def test_island_areas_sum_to_polygon_area():
    nm = navkit.bake(navkit.sample_level())
    isl = nm.islands()
    a = nm.arrays()
    total = 0.0
    for r in nm.poly_refs():
        gp = nm.poly_index(r)
        v = a.verts[a.poly_verts[gp, : a.poly_vert_count[gp]]][:, [0, 2]].astype(float)
        x, z = v[:, 0], v[:, 1]
        total += 0.5 * abs(np.dot(x, np.roll(z, -1)) - np.dot(z, np.roll(x, -1)))
    assert isl.island_area.sum() == pytest.approx(total, rel=1e-9)
    _same_partition(nm, isl)


def test_samplers_limited_to_one_island():
    from navkit.detour.islands import find_nearest_poly_on_island, find_random_point_on_island

    nm = navkit.NavMesh.from_recast(peer_file("nav_test.solo.navmesh.bin"))
    q = navkit.NavMeshQuery(nm)
    isl = nm.islands()
    assert isl.count > 1
    small = int(np.argmin(isl.island_area))
    big = int(np.argmax(isl.island_area))
    rng = np.random.default_rng(3)
    pts = []
    for _ in range(200):
        rp = find_random_point_on_island(q, isl, small, rng=rng)
        assert isl.poly_island[nm.poly_index(rp.ref)] == small
        # the point lies on its polygon (xz), on the detail surface
        assert q.get_poly_height(rp.ref, rp.point) == pytest.approx(float(rp.point[1]), abs=1e-4)
        pts.append(rp.point)
    # nearest on the big island from a point of the small island: never a small-island poly
    for p in pts[:20]:
        near = find_nearest_poly_on_island(q, isl, big, p, half_extents=(50, 50, 50))
        if near.ref:
            assert isl.poly_island[nm.poly_index(near.ref)] == big
        own = find_nearest_poly_on_island(q, isl, small, p)
        assert own.ref and isl.poly_island[nm.poly_index(own.ref)] == small
    with pytest.raises(navkit.errors.InputError):
        find_random_point_on_island(q, isl, isl.count)
