"""End-to-end bakes compared with Recast's own figures (the peer's results)."""

import json
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from peer_support import MESHES, mesh_path, peer_file, peer_results

import navkit
from navkit import BakeConfig
from navkit.errors import BuildError, InputError
from navkit.pipeline import bake


@pytest.fixture(scope="module")
def meshes():
    return {m: navkit.load_obj(mesh_path(m)) for m in MESHES}


def _counts(nm):
    s = nm.stats()
    return s["tiles"], s["polys"], s["verts"], s["detail_tris"]


@pytest.mark.peer
@pytest.mark.parametrize("name", MESHES)
@pytest.mark.parametrize("partition", ["watershed", "monotone", "layers"])
def test_solo_counts_equal_recast(meshes, name, partition):
    ref = peer_results(name if partition == "watershed" else f"{name}.{partition}")["solo"]
    nm = bake(meshes[name], BakeConfig(partition=partition))
    inter = ref["intermediates"]
    rep = nm.build_report
    assert rep.counts["regions"] == inter["compactHeightfield"]["maxRegions"]
    assert rep.counts["contours"] == inter["contourSet"]["contours"]
    assert rep.counts["compact_spans"] == inter["compactHeightfield"]["spanCount"]
    assert _counts(nm) == (1, ref["polygons"], ref["vertices"], ref["detail_triangles"])


@pytest.mark.peer
@pytest.mark.parametrize("name", MESHES)
def test_solo_polymesh_equals_recast_dump(meshes, name):
    dump = json.loads(peer_file(f"{name}.solo_polymesh.json").read_text())
    nm = bake(meshes[name], BakeConfig(), keep_intermediates=True)
    pm = nm.build_report.intermediates["polymesh"]
    ref = dump["polyMesh"]
    np.testing.assert_array_equal(pm.verts, np.asarray(ref["verts"], dtype=np.uint16))
    nvp = pm.nvp
    assert pm.npolys == len(ref["polys"])
    for i, (vs, ns) in enumerate(zip(ref["polys"], ref["neis"])):
        k = len(vs)
        assert pm.polys[i, :k].tolist() == vs, i
        assert pm.polys[i, nvp : nvp + k].tolist() == ns, i
    np.testing.assert_array_equal(pm.regs, ref["regs"])
    dm = nm.build_report.intermediates["detail"]
    dref = dump["polyMeshDetail"]
    np.testing.assert_array_equal(dm.meshes, np.asarray(dref["meshes"], dtype=np.uint32))
    np.testing.assert_array_equal(dm.verts, np.asarray(dref["verts"], dtype=np.float32))
    np.testing.assert_array_equal(dm.tris, np.asarray(dref["tris"], dtype=np.uint8))


@pytest.mark.peer
@pytest.mark.parametrize("name", MESHES)
def test_tiled_counts_equal_recast(meshes, name):
    ref = peer_results(name)["tiled"]
    nm = bake(meshes[name], BakeConfig(tile_size=48))
    assert _counts(nm) == (ref["tiles"], ref["polygons"], ref["vertices"], ref["detail_triangles"])


@pytest.mark.peer
def test_solo_export_bytes_equal_recast(meshes):
    nm = bake(meshes["dungeon"], BakeConfig())
    assert nm.to_recast() == peer_file("dungeon.solo.navmesh.bin").read_bytes()


@pytest.mark.peer
def test_tiled_export_bytes_equal_recast(meshes):
    nm = bake(meshes["dungeon"], BakeConfig(tile_size=48))
    assert nm.to_recast() == peer_file("dungeon.tiled.navmesh.bin").read_bytes()


def test_parallel_bake_equals_serial_bake():
    mesh = navkit.geometry.sample_level()
    cfg = BakeConfig(tile_size=32)
    serial = bake(mesh, cfg)
    calls = []
    with ProcessPoolExecutor(max_workers=2) as ex:
        par = bake(mesh, cfg, executor=ex, progress=lambda d, t: calls.append((d, t)))
    assert par.to_recast() == serial.to_recast()
    assert calls[-1][0] == calls[-1][1] == len(calls)


def test_dask_local_cluster_bake_equals_serial_bake():
    distributed = pytest.importorskip("distributed")
    mesh = navkit.geometry.sample_level()
    cfg = BakeConfig(tile_size=32)
    serial = bake(mesh, cfg)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        par = bake(mesh, cfg, executor=client.get_executor())
    assert par.to_recast() == serial.to_recast()


def test_sample_level_bakes_every_storey():
    nm = bake(navkit.geometry.sample_level(), BakeConfig(), keep_intermediates=True)
    pm = nm.build_report.intermediates["polymesh"]
    heights = pm.bmin[1] + pm.verts[:, 1].astype(np.float64) * pm.ch
    # ground, first floor (4 wu) and second floor (8 wu) are all walkable
    for y in (0.0, 4.0, 8.0):
        assert np.any(np.abs(heights - y) < 0.5), y


def test_progress_is_reported_for_solo_bakes():
    calls = []
    bake(navkit.geometry.sample_level(), BakeConfig(), progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 1)]


def test_bad_input():
    with pytest.raises(InputError):
        bake("not a mesh")  # type: ignore[arg-type]
    empty = navkit.TriMesh.from_arrays(np.zeros((0, 3)), np.zeros((0, 3), int))
    with pytest.raises(InputError, match="no triangles"):
        bake(empty)
    # a vertical wall only: nothing walkable
    wall = navkit.TriMesh.from_arrays([[0, 0, 0], [0, 5, 0], [0, 0, 5]], [[0, 1, 2]])
    with pytest.raises(BuildError):
        bake(wall)
    # a level far too large for one heightfield suggests tiles
    big = navkit.TriMesh.from_arrays([[0, 0, 0], [0, 0, 9e4], [9e4, 0, 0]], [[0, 1, 2]])
    with pytest.raises(BuildError, match="tile"):
        bake(big)


def test_degenerate_triangles_are_counted_not_fatal():
    m = navkit.geometry.sample_level()
    v = np.concatenate([m.vertices, [[1, 0, 1], [2, 0, 2], [3, 0, 3]]])
    n = m.n_vertices
    t = np.concatenate([m.triangles, [[n, n + 1, n + 2], [n, n, n + 1]]])
    nm = bake(navkit.TriMesh.from_arrays(v, t), BakeConfig())
    assert nm.build_report.degenerate_triangles == 2
    assert nm.stats()["polys"] == bake(m, BakeConfig()).stats()["polys"]


@pytest.mark.parametrize("cfg", [BakeConfig(), BakeConfig(verts_per_poly=4, partition="monotone")])
def test_polygon_vertices_lie_on_the_walkable_surface(cfg):
    """Every polygon vertex is within the climb tolerance of a walkable span's floor."""
    nm = bake(navkit.sample_level(), cfg, keep_intermediates=True)
    inter = nm.build_report.intermediates
    pm, chf = inter["polymesh"], inter["compact_regions"]
    climb = cfg.voxel().walkable_climb
    for x, y, z in pm.verts.astype(np.int64):
        best = None
        # a contour vertex sits on a cell corner: look at the 4 cells around it
        for cx, cz in ((x - 1, z - 1), (x, z - 1), (x - 1, z), (x, z)):
            if 0 <= cx < chf.width and 0 <= cz < chf.height:
                i0 = int(chf.cells_index[cz, cx])
                for i in range(i0, i0 + int(chf.cells_count[cz, cx])):
                    if chf.areas[i]:
                        d = abs(int(chf.y[i]) - y)
                        best = d if best is None else min(best, d)
        assert best is not None and best <= climb, (x, y, z, best)


@pytest.mark.parametrize("nvp", [3, 4, 6])
def test_polygons_convex_bounded_and_links_symmetric(nvp):
    nm = bake(navkit.sample_level(), BakeConfig(verts_per_poly=nvp, tile_size=32))
    a = nm.arrays()
    refs = set(nm.poly_refs())
    for r in refs:
        gp = nm.poly_index(r)
        n = int(a.poly_vert_count[gp])
        assert 3 <= n <= nvp
        p = a.verts[a.poly_verts[gp, :n]][:, [0, 2]].astype(np.float64)
        e = np.roll(p, -1, axis=0) - p
        cross = e[:, 0] * np.roll(e, -1, axis=0)[:, 1] - e[:, 1] * np.roll(e, -1, axis=0)[:, 0]
        assert np.all(cross >= -1e-6) or np.all(cross <= 1e-6), r  # convex (collinear allowed)
        for target, *_ in nm.links_of(r):
            assert target in refs
            assert any(t == r for t, *_ in nm.links_of(target)), (r, target)
