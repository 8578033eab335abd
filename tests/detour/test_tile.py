"""create_navmesh_data (dtCreateNavMeshData) against Recast's exports, plus oracles."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _detour_cases import (
    MESHES,
    PARTITIONS,
    build_solo_tile,
    peer_bytes,
    solo_name,
    solo_navmesh,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from peer_support import shared_dir

from navkit.detour import create_navmesh_data, navmesh_from_recast
from navkit.detour._bvtree import _smoothsort, build_bv_tree
from navkit.detour.tile import EXT_LINK, OffMeshConnections, first_difference
from navkit.errors import InputError
from navkit.recast.types import MESH_NULL_IDX, PolyMesh, PolyMeshDetail


def _first_byte_diff(a: bytes, b: bytes) -> str:
    if len(a) != len(b):
        return f"length {len(a)} != {len(b)}"
    x = np.frombuffer(a, np.uint8) != np.frombuffer(b, np.uint8)
    return f"first differing byte {int(np.argmax(x))}" if x.any() else "equal"


@pytest.mark.peer
@pytest.mark.parametrize("partition", PARTITIONS)
@pytest.mark.parametrize("mesh", MESHES)
def test_solo_tile_matches_recast_bytes(mesh, partition):
    """Recast's polymesh + detail mesh -> tile -> NavMesh -> export == Recast's export."""
    td = build_solo_tile(mesh, partition)
    nm = solo_navmesh(td)
    ref = peer_bytes(solo_name(mesh, partition))
    out = nm.to_recast()
    if out != ref:
        theirs = navmesh_from_recast(ref).tile_data(0)
        pytest.fail(
            f"{_first_byte_diff(out, ref)}; first differing field: "
            f"{first_difference(nm.tile_data(0), theirs)}"
        )


@pytest.mark.peer
def test_offmesh_solo_tile_matches_recast_bytes():
    p = shared_dir() / "peer" / "results" / "dungeon.offmesh.json"
    if not p.exists():
        pytest.skip("dungeon.offmesh.json not available")
    cons = json.loads(p.read_text())["config"]["offmesh"]
    td = build_solo_tile("dungeon", "watershed", offmesh=cons)
    assert td.off_mesh_con_count == 1 and td.poly_count == 119
    nm = solo_navmesh(td)
    assert nm.to_recast() == peer_bytes("dungeon.offmesh.solo.navmesh.bin")
    # Detour links it to nothing: no ground poly within 0.1 of either end.
    cref = nm.poly_refs()[-1]
    assert nm.links_of(cref) == []


# -- hand-made oracles -------------------------------------------------------------------


def _square_mesh(portal_dir=None):
    """Two triangles making a 2x2-voxel square; edge 0 of poly 0 may be a portal."""
    verts = np.array([[0, 0, 0], [2, 0, 0], [2, 0, 2], [0, 0, 2]], np.uint16)
    N = MESH_NULL_IDX
    polys = np.full((2, 12), N, np.uint16)
    polys[0, :3] = [0, 1, 2]
    polys[0, 6:9] = [N, N, 1]  # edge 2 (2->0) is shared with poly 1
    polys[1, :3] = [0, 2, 3]
    polys[1, 6:9] = [0, N, N]
    if portal_dir is not None:
        polys[0, 6] = 0x8000 | portal_dir
    return PolyMesh(
        verts,
        polys,
        np.zeros(2, np.uint16),
        np.zeros(2, np.uint16),
        np.array([63, 5], np.uint8),
        6,
        np.array([10.0, 1.0, 20.0], np.float32),
        np.array([10.6, 3.0, 20.6], np.float32),
        0.3,
        0.2,
        0,
        1.3,
    )


def test_square_oracle_without_detail():
    td = create_navmesh_data(
        _square_mesh(), None, walkable_height=2.0, walkable_radius=0.6, walkable_climb=0.9
    )
    # World verts: bmin + v * (cs, ch, cs) in float32.
    assert td.verts[1].tolist() == [np.float32(10.0) + np.float32(2) * np.float32(0.3), 1.0, 20.0]
    assert td.poly_neis[0, :3].tolist() == [0, 0, 2]  # neighbour index + 1
    assert td.poly_neis[1, :3].tolist() == [1, 0, 0]
    assert td.poly_area.tolist() == [0, 5]  # 63 -> 0 (the generators' remap)
    assert td.poly_flags.tolist() == [1, 0]  # flag 1 where the area became 0
    assert td.max_link_count == 6  # 6 edges, no portals
    # Fan triangulation: one triangle per poly, all three edges on the boundary.
    assert td.detail_tris.tolist() == [[0, 1, 2, 1 | 4 | 16], [0, 1, 2, 1 | 4 | 16]]
    assert td.detail_tri_base.tolist() == [0, 1]
    # BV tree: root + 2 leaves, then one zero node.
    assert td.bv_node_count == 4
    assert td.bv_i.tolist()[:3] == [-3, 0, 1] or td.bv_i.tolist()[:3] == [-3, 1, 0]
    assert td.bv_i[3] == 0 and td.bv_bmax[3].tolist() == [0, 0, 0]
    nm = solo_navmesh(td)
    r0, r1 = nm.poly_refs()
    assert nm.links_of(r0) == [(r1, 2, 0xFF, 0, 0)]
    assert nm.links_of(r1) == [(r0, 0, 0xFF, 0, 0)]


@pytest.mark.parametrize("d,side", [(0, 4), (1, 2), (2, 0), (3, 6)])
def test_portal_codes(d, side):
    td = create_navmesh_data(
        _square_mesh(portal_dir=d), None, walkable_height=2, walkable_radius=0.6, walkable_climb=0.9
    )
    assert td.poly_neis[0, 0] == EXT_LINK | side
    assert td.max_link_count == 6 + 2


def test_detail_mesh_keeps_only_extra_verts():
    pm = _square_mesh()
    # Poly 0: 3 corners + 1 extra vertex; poly 1: 3 corners.
    dv = np.array(
        [
            [10, 1.2, 20],
            [10.6, 1.2, 20],
            [10.6, 1.2, 20.6],
            [10.4, 1.5, 20.1],
            [10, 1.2, 20],
            [10.6, 1.2, 20.6],
            [10, 1.2, 20.6],
        ],
        np.float32,
    )
    meshes = np.array([[0, 4, 0, 3], [4, 3, 3, 1]], np.uint32)
    tris = np.array([[0, 1, 3, 1], [1, 2, 3, 1], [2, 0, 3, 1], [0, 1, 2, 21]], np.uint8)
    td = create_navmesh_data(
        pm,
        PolyMeshDetail(meshes, dv, tris),
        walkable_height=2,
        walkable_radius=0.6,
        walkable_climb=0.9,
    )
    assert td.detail_verts.tolist() == [dv[3].tolist()]
    assert td.detail_vert_base.tolist() == [0, 1]
    assert td.detail_vert_count.tolist() == [1, 0]
    assert td.detail_tris.tolist() == tris.tolist()
    # BV leaf bounds from all detail verts (corner copies included), quantised by 1/cs.
    leaf = int(np.flatnonzero(td.bv_i[1:3] == 0)[0]) + 1
    qf = np.float32(1) / np.float32(0.3)
    assert td.bv_bmax[leaf, 1] == int((np.float32(1.5) - np.float32(1.0)) * qf)


def test_offmesh_classification():
    cons = [
        {
            "start": [10.1, 1.0, 20.1],
            "end": [10.5, 1.0, 20.5],
            "radius": 0.2,
            "area": 3,
            "flags": 7,
        },
        {
            "start": [10.1, 1.0, 20.1],
            "end": [12.0, 1.0, 20.3],
            "radius": 0.2,
            "bidirectional": False,
        },
        {"start": [30.0, 1.0, 20.1], "end": [10.1, 1.0, 20.1], "radius": 0.2},  # start outside
        {"start": [10.1, 9.0, 20.1], "end": [10.1, 1.0, 20.1], "radius": 0.2},  # too high
    ]
    td = create_navmesh_data(
        _square_mesh(),
        None,
        walkable_height=2,
        walkable_radius=0.6,
        walkable_climb=0.9,
        offmesh=cons,
    )
    assert td.off_mesh_con_count == 2
    assert td.off_side.tolist() == [0xFF, 0]  # second ends at +x
    assert td.off_flags.tolist() == [1, 0]
    assert td.off_user_id.tolist() == [1000, 1001]
    assert td.poly_type.tolist() == [0, 0, 1, 1]
    assert td.poly_area[2] == 3 and td.poly_flags[2] == 7
    assert td.vert_count == 4 + 4
    # links: 6 edges + 2 * endpoints inside (con0 start+end, con1 start, con2 end,
    # con3 end: only start points are culled by height)
    assert td.max_link_count == 6 + 2 * 5
    assert OffMeshConnections.from_dicts(cons).verts.shape == (4, 6)


def test_bad_input():
    pm = _square_mesh()
    kw = dict(walkable_height=2, walkable_radius=0.6, walkable_climb=0.9)
    with pytest.raises(InputError):
        create_navmesh_data(pm._replace(nvp=7, polys=np.zeros((2, 14), np.uint16)), None, **kw)
    with pytest.raises(InputError):
        create_navmesh_data(pm._replace(verts=np.zeros((0, 3), np.uint16)), None, **kw)
    bad = pm.polys.copy()
    bad[0, 1] = 99
    with pytest.raises(InputError):
        create_navmesh_data(pm._replace(polys=bad), None, **kw)
    with pytest.raises(InputError):
        create_navmesh_data(
            pm,
            PolyMeshDetail(
                np.zeros((1, 4), np.uint32),
                np.zeros((0, 3), np.float32),
                np.zeros((0, 4), np.uint8),
            ),
            **kw,
        )
    with pytest.raises(InputError):
        create_navmesh_data(pm, None, offmesh=[{"start": [0, 0, 0]}], **kw)


# -- properties ------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=80), st.data())
def test_smoothsort_sorts_a_range(keys, data):
    n = len(keys)
    lo = data.draw(st.integers(0, n - 1))
    hi = data.draw(st.integers(lo + 1, n))
    order = np.arange(n)
    k = np.asarray(keys, np.int64)
    _smoothsort(order, k, lo, hi)
    assert sorted(order.tolist()) == list(range(n))
    assert order[:lo].tolist() == list(range(lo)) and order[hi:].tolist() == list(range(hi, n))
    assert np.all(np.diff(k[order[lo:hi]]) >= 0)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50)),
        min_size=1,
        max_size=40,
    )
)
def test_bv_tree_invariants(points):
    """Pre-order tree: escapes consistent, every poly a leaf once, parents cover children."""
    n = len(points)
    pverts = np.array(points, np.uint16)
    polys = np.full((n, 12), MESH_NULL_IDX, np.uint16)
    polys[:, 0] = np.arange(n)
    polys[:, 1] = np.arange(n)
    polys[:, 2] = np.arange(n)
    nv = np.full(n, 3)
    bmin, bmax, bi = build_bv_tree(pverts, polys, 6, nv, np.zeros(3, np.float32), 0.3, 0.2)
    assert bmin.shape == (2 * n, 3)
    used = 2 * n - 1
    assert bi[0] == (-used if n > 1 else 0)
    assert sorted(int(i) for i in bi[:used] if i >= 0) == list(range(n))
    assert not bi[used:].any() and not bmax[used:].any()
    for node in range(used):
        if bi[node] < 0:
            end = node - int(bi[node])
            sub = range(node + 1, end)
            assert all((bmin[c] >= bmin[node]).all() and (bmax[c] <= bmax[node]).all() for c in sub)


def test_options_no_bv_tree_keep_areas_and_flags():
    pm = _square_mesh()
    td = create_navmesh_data(
        pm,
        None,
        walkable_height=2,
        walkable_radius=0.6,
        walkable_climb=0.9,
        build_bv_tree=False,
        area_remap=None,
        flags=None,
        tile_x=3,
        tile_y=-2,
        layer=1,
        user_id=77,
    )
    assert td.bv_node_count == 0
    assert td.poly_area.tolist() == [63, 5] and td.poly_flags.tolist() == [0, 0]
    assert (td.x, td.y, td.layer, td.user_id) == (3, -2, 1, 77)
    lut = np.arange(64, dtype=np.uint8)[::-1]
    td2 = create_navmesh_data(
        pm,
        None,
        walkable_height=2,
        walkable_radius=0.6,
        walkable_climb=0.9,
        area_remap=lut,
        flags=5,
    )
    assert td2.poly_area.tolist() == [0, 58] and td2.poly_flags.tolist() == [5, 5]
    # Without a BV tree the navmesh still finds polygons (linear scan) for off-mesh links.
    cons = [{"start": [10.1, 1.0, 20.1], "end": [10.5, 1.0, 20.5], "radius": 0.3}]
    td3 = create_navmesh_data(
        pm,
        None,
        walkable_height=2,
        walkable_radius=0.6,
        walkable_climb=0.9,
        build_bv_tree=False,
        offmesh=cons,
    )
    nm = solo_navmesh(td3)
    con = nm.poly_refs()[-1]
    assert {e for _t, e, *_ in nm.links_of(con)} == {0, 1}


@pytest.mark.peer
def test_linked_offmesh_solo_tile_matches_recast_bytes():
    """Connections that Detour links: nearest-poly search, endpoint snapping, link order."""
    from _detour_cases import LINKED_OFFMESH, linked_offmesh_exports

    solo, _ = linked_offmesh_exports()
    nm = solo_navmesh(build_solo_tile("dungeon", "watershed", offmesh=LINKED_OFFMESH))
    out = nm.to_recast()
    if out != solo:
        theirs = navmesh_from_recast(solo).tile_data(0)
        pytest.fail(f"{_first_byte_diff(out, solo)}; {first_difference(nm.tile_data(0), theirs)}")
    cons = [r for r in nm.poly_refs() if nm.get_poly_type(r) == 1]
    assert len(cons) == 3 and all({e for _t, e, *_ in nm.links_of(c)} == {0, 1} for c in cons)


@pytest.mark.peer
def test_from_tile_is_detour_init_data():
    from navkit.detour import NavMesh

    td = build_solo_tile("nav_test", "watershed")
    assert NavMesh.from_tile(td).to_recast() == peer_bytes(solo_name("nav_test", "watershed"))


# -- the one-kernel path (_tile_kernel) against the general one -------------------------------


def _general(pm, dm, **kw):
    """create_navmesh_data forced onto its general path (int64 sub-mesh table)."""
    return create_navmesh_data(pm, dm._replace(meshes=dm.meshes.astype(np.int64)), **kw)


def _same_tile(a, b) -> str | None:
    for name in a._fields:
        va, vb = getattr(a, name), getattr(b, name)
        if isinstance(va, np.ndarray) and va.dtype != np.asarray(vb).dtype:
            return f"{name}: dtype {va.dtype} != {np.asarray(vb).dtype}"
    return first_difference(a, b)


def _mesh_arrays(mesh):
    import navkit
    from navkit.recast.rasterize import _as_triangles, _as_vertices

    path = shared_dir() / "data" / "meshes" / f"{mesh}.obj"
    if not path.exists():
        pytest.skip(f"{path} not available")
    m = navkit.load_obj(str(path))
    v = _as_vertices(m.vertices)
    t = _as_triangles(m.triangles, v.shape[0])
    used = v[np.unique(t)]
    return v, t, used.min(axis=0), used.max(axis=0)


def _tile_kw(rc):
    f = np.float32
    return dict(
        walkable_height=float(f(rc.walkable_height) * f(rc.ch)),
        walkable_radius=float(f(rc.walkable_radius) * f(rc.cs)),
        walkable_climb=float(f(rc.walkable_climb) * f(rc.ch)),
    )


@pytest.mark.parametrize("tile_size", [0, 48, 24])
@pytest.mark.parametrize("mesh", MESHES)
def test_one_kernel_tile_equals_general_path(mesh, tile_size):
    """The bake's tiles (one _tile_kernel call each) equal the general path's, dtypes too."""
    from navkit.pipeline import build_tile, tile_grid
    from navkit.recast.build import _build_polymesh_run, grid_size
    from navkit.recast.config import BakeConfig

    v, t, bmin, bmax = _mesh_arrays(mesh)
    cfg = BakeConfig(tile_size=tile_size)
    rc = cfg.voxel()
    if tile_size == 0:
        w, h = grid_size(bmin, bmax, rc.cs)
        results = [_build_polymesh_run(v, t, None, rc, bmin=bmin, bmax=bmax, width=w, height=h)]
    else:
        grid = tile_grid(bmin, bmax, rc)
        results = [
            build_tile(v, t, None, cfg, grid, x, y)
            for y in range(grid.tiles_z)
            for x in range(grid.tiles_x)
        ]
    n = 0
    for r in results:
        if r.pmesh is None:
            continue
        fast = create_navmesh_data(r.pmesh, r.dmesh, tile_x=r.tx, tile_y=r.ty, **_tile_kw(rc))
        slow = _general(r.pmesh, r.dmesh, tile_x=r.tx, tile_y=r.ty, **_tile_kw(rc))
        assert _same_tile(fast, slow) is None, (r.tx, r.ty, _same_tile(fast, slow))
        n += 1
    assert n >= 1


def test_one_kernel_tile_errors_equal_general_path():
    r = _solo_result()
    pm, dm = r.pmesh, r.dmesh
    kw = dict(walkable_height=2.0, walkable_radius=0.6, walkable_climb=0.9)
    cases = []
    a = pm.areas.copy()
    a[1] = 70
    cases.append((pm._replace(areas=a), dm))
    m = dm.meshes.copy()
    m[-1, 1] += 1000
    cases.append((pm, dm._replace(meshes=m)))
    m = dm.meshes.copy()
    m[0, 1] = 2
    cases.append((pm, dm._replace(meshes=m)))
    p = pm.polys.copy()
    p[0, 1] = 0xFFFE
    cases.append((pm._replace(polys=p), dm))
    for pm_, dm_ in cases:
        with pytest.raises(InputError) as fast:
            create_navmesh_data(pm_, dm_, **kw)
        with pytest.raises(InputError) as slow:
            _general(pm_, dm_, **kw)
        assert str(fast.value) == str(slow.value)


def _solo_result():
    from navkit.recast.build import _build_polymesh_run, grid_size
    from navkit.recast.config import BakeConfig

    v, t, bmin, bmax = _mesh_arrays("dungeon")
    rc = BakeConfig().voxel()
    w, h = grid_size(bmin, bmax, rc.cs)
    return _build_polymesh_run(v, t, None, rc, bmin=bmin, bmax=bmax, width=w, height=h)
