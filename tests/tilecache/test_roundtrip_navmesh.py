"""A tile cache and the same cache loaded from its own bytes keep the same navmesh, through
obstacles added, rebuilt and removed on both; the one-kernel update step (``_rebuild`` +
``detour._swap``) gives the same navmesh bytes as the Python path (``build_layer_tile`` +
``NavMesh._replace_tile``).

The comparison that does not depend on history (:func:`canonical`) holds each tile's
vertices, polygons, detail mesh and, per polygon, the sorted list of its links with their
targets named by tile location; it also checks the navmesh's own consistency (link ranges,
``link_poly`` against the ref, the link free lists). Pool positions and the order of links
within a polygon's list depend on the order tiles were added and are left out of it; where
the histories are the same (a fresh load, the two update paths), the Recast export is
compared byte for byte as well.
"""

from __future__ import annotations

import numpy as np
import pytest

import navkit
import navkit.data


@pytest.fixture(scope="module")
def mesh():
    return navkit.load_obj(navkit.data.path("dungeon.obj"))


def canonical(nm) -> dict:
    a = nm.arrays()
    loc = {s: (int(a.tile_x[s]), int(a.tile_y[s]), int(a.tile_layer[s])) for s in nm.tile_slots()}
    out = {}
    for s in nm.tile_slots():
        pb, pc = int(a.tile_poly_base[s]), int(a.tile_poly_count[s])
        lb, lc = int(a.tile_link_base[s]), int(a.tile_link_count[s])
        vb, vc = int(a.tile_vert_base[s]), int(a.tile_vert_count[s])
        polys = []
        for gp in range(pb, pb + pc):
            nv = int(a.poly_vert_count[gp])
            pv = [int(v) - vb for v in a.poly_verts[gp, :nv]]
            assert all(0 <= v < vc for v in pv)
            links = []
            li = int(a.poly_first_link[gp])
            while li >= 0:
                assert lb <= li < lb + lc, f"link {li} outside its tile's range"
                ref = int(a.link_ref[li])
                ts, tp = nm.decode_ref(ref)[1:]
                assert int(a.link_poly[li]) == nm.poly_index(ref)
                links.append(
                    (loc[ts], tp)
                    + tuple(int(getattr(a, f)[li]) for f in ("link_edge", "link_side", "link_bmin", "link_bmax"))
                )  # fmt: skip
                li = int(a.link_next[li])
                assert len(links) <= lc
            polys.append(
                (
                    a.verts[[vb + v for v in pv]].tobytes(),
                    a.poly_neis[gp, :nv].tobytes(),
                    int(a.poly_flags[gp]),
                    int(a.poly_area[gp]),
                    int(a.poly_type[gp]),
                    tuple(sorted(links)),
                )
            )
        detail = []
        for m in range(
            int(a.tile_dmesh_base[s]), int(a.tile_dmesh_base[s]) + int(a.tile_dmesh_count[s])
        ):
            v0, nvd = int(a.dmesh_vert_base[m]), int(a.dmesh_vert_count[m])
            t0, ntd = int(a.dmesh_tri_base[m]), int(a.dmesh_tri_count[m])
            detail.append((a.dverts[v0 : v0 + nvd].tobytes(), a.dtris[t0 : t0 + ntd].tobytes()))
        free, n = int(a.tile_link_free[s]), 0
        while free >= 0:
            assert lb <= free < lb + lc, "link free list leaves its tile's range"
            free, n = int(a.link_next[free]), n + 1
            assert n <= lc
        out[loc[s]] = (polys, detail)
    return out


def _settle(tc) -> None:
    while not tc.update().up_to_date:
        pass


def _points(tc, n: int, seed: int) -> list[np.ndarray]:
    q = navkit.NavMeshQuery(tc.navmesh)
    return [q.find_random_point(rng=seed + i).point for i in range(n)]


@pytest.mark.parametrize("compat", [True, False])
def test_loaded_cache_has_the_same_navmesh(mesh, compat):
    """No history: the load's navmesh exports byte for byte and has the same refs."""
    tc = navkit.TileCache.bake(mesh, navkit.BakeConfig(tile_size=48), recast_compatible=compat)
    tw = navkit.TileCache.load(tc.to_bytes())
    assert tw.navmesh.to_recast() == tc.navmesh.to_recast()
    assert tw.navmesh.poly_refs() == tc.navmesh.poly_refs()
    assert canonical(tw.navmesh) == canonical(tc.navmesh)


@pytest.mark.parametrize("compat", [True, False])
def test_loaded_cache_follows_the_original_through_obstacles(mesh, compat):
    """Saved with applied and pending obstacles; then the same adds, moves and removes
    on both: the same navmesh after every update, and the bake's when all are gone."""
    tc = navkit.TileCache.bake(mesh, navkit.BakeConfig(tile_size=48), recast_compatible=compat)
    base = canonical(tc.navmesh)
    pts = _points(tc, 24, 7)
    first = [tc.add_cylinder(pts[i], 0.6 + 0.3 * i, 2.0) for i in range(4)]
    _settle(tc)
    tc.remove(first[1])
    tc.add_box(pts[4] - 1.0, pts[4] + 1.0)  # pending when saved
    tw = navkit.TileCache.load(tc.to_bytes())
    assert canonical(tw.navmesh) == canonical(tc.navmesh)
    for c in (tc, tw):
        _settle(c)
    assert canonical(tw.navmesh) == canonical(tc.navmesh)
    rng = np.random.default_rng(3)
    live = [(h, h) for h in first if h != first[1]]
    for k in range(5, 24):
        if live and rng.random() < 0.4:
            ha, hb = live.pop(int(rng.integers(len(live))))
            tc.remove(ha)
            tw.remove(hb)
        elif live and rng.random() < 0.3:
            ha, hb = live[int(rng.integers(len(live)))]
            by = [float(rng.uniform(-2, 2)), 0.0, float(rng.uniform(-2, 2))]
            tc.move(ha, by)
            tw.move(hb, by)
        else:
            r = float(rng.uniform(0.5, 2.0))
            live.append((tc.add_cylinder(pts[k], r, 2.0), tw.add_cylinder(pts[k], r, 2.0)))
        _settle(tc)
        _settle(tw)
        assert canonical(tw.navmesh) == canonical(tc.navmesh), f"step {k}"
    for c in (tc, tw):
        for h in c.obstacle_handles():
            c.remove(h)
        _settle(c)
        assert canonical(c.navmesh) == base


def test_one_kernel_step_equals_the_python_path(mesh, monkeypatch):
    """recast_compatible: the one-kernel rebuild + swap and the Python path (stage
    functions, NavMesh._replace_tile) export the same bytes after every update, and the
    same poly refs (slots, salts, free lists)."""
    tc = navkit.TileCache.bake(mesh, navkit.BakeConfig(tile_size=48), recast_compatible=True)
    data = tc.to_bytes()
    fast = navkit.TileCache.load(data)
    slow = navkit.TileCache.load(data)
    slow._state.kernel_steps = False
    f0, s0 = fast._state.fast_steps, slow._state.fast_steps

    pts = _points(tc, 30, 11)
    rng = np.random.default_rng(5)
    live = []
    for k in range(30):
        if live and rng.random() < 0.4:
            a, b = live.pop(int(rng.integers(len(live))))
            fast.remove(a)
            slow.remove(b)
        else:
            r = float(rng.uniform(0.5, 2.0))
            if k % 3:
                live.append((fast.add_cylinder(pts[k], r, 2.0), slow.add_cylinder(pts[k], r, 2.0)))
            else:
                live.append(
                    (
                        fast.add_oriented_box(pts[k], [r, 1.0, 0.5], 0.3 * k),
                        slow.add_oriented_box(pts[k], [r, 1.0, 0.5], 0.3 * k),
                    )
                )
        ch_f = [fast.update() for _ in range(64)]
        ch_s = [slow.update() for _ in range(64)]
        assert ch_f[-1].up_to_date and ch_s[-1].up_to_date
        assert [(c.rebuilt, c.invalidated) for c in ch_f] == [
            (c.rebuilt, c.invalidated) for c in ch_s
        ]
        assert fast.navmesh.to_recast() == slow.navmesh.to_recast(), f"step {k}"
        assert fast.navmesh.poly_refs() == slow.navmesh.poly_refs()
        assert fast.navmesh._free_slots == slow.navmesh._free_slots
    assert fast._state.fast_steps > f0 and slow._state.fast_steps == s0  # both paths ran


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copied_cache_updates_its_own_navmesh(mesh, how):
    """A copied cache (deepcopy, pickle) updates its own navmesh pools: the one-kernel
    step gets a descriptor of the copy's arrays and the copy's counters; the original
    is untouched, and the copy follows what the original does with the same obstacle."""
    import copy
    import pickle

    tc = navkit.TileCache.bake(mesh, navkit.BakeConfig(tile_size=48), recast_compatible=True)
    tc.navmesh._kernel_desc()  # a descriptor exists before the copy
    before = tc.navmesh.to_recast()
    base = canonical(tc.navmesh)
    cp = copy.deepcopy(tc) if how == "deepcopy" else pickle.loads(pickle.dumps(tc))
    p = _points(tc, 1, 21)[0]
    h = cp.add_cylinder(p, 1.5, 2.0)
    _settle(cp)
    assert tc.navmesh.to_recast() == before
    assert cp.navmesh.to_recast() != before
    tc.add_cylinder(p, 1.5, 2.0)
    _settle(tc)
    assert cp.navmesh.to_recast() == tc.navmesh.to_recast()
    cp.remove(h)
    _settle(cp)
    assert canonical(cp.navmesh) == base  # (the salts moved on: not the same bytes)
