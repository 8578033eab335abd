"""NavMesh (dtNavMesh): refs, tiles, links, runtime changes, on Recast's files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _detour_cases import MESHES, link_sets, peer_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import shared_dir

from navkit.detour import NavMesh, NavMeshArrays, NavMeshParams
from navkit.detour.recast_format import tile_to_bytes
from navkit.errors import ConfigError, InputError, StaleHandleError

TILED = [f"{m}.tiled.navmesh.bin" for m in MESHES] + ["dungeon.offmesh.tiled.navmesh.bin"]


def _load(name: str) -> NavMesh:
    return NavMesh.from_recast(peer_bytes(name))


# -- refs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "max_tiles,max_polys,bits",
    [
        (1, 118, (25, 0, 7)),
        (1, 155, (24, 0, 8)),
        (64, 65536, (10, 6, 16)),
        (256, 16384, (10, 8, 14)),
    ],
)
def test_ref_bits_as_format_md(max_tiles, max_polys, bits):
    nm = NavMesh(NavMeshParams((0, 0, 0), 1, 1, max_tiles, max_polys))
    assert (nm.salt_bits, nm.tile_bits, nm.poly_bits) == bits


def test_too_few_salt_bits():
    with pytest.raises(ConfigError):
        NavMesh(NavMeshParams((0, 0, 0), 1, 1, 1 << 12, 1 << 12))


@given(st.integers(1, (1 << 10) - 1), st.integers(0, 63), st.integers(0, 65535))
def test_encode_decode_round_trip(salt, tile, poly):
    nm = _encode_nm()
    ref = nm.encode_ref(salt, tile, poly)
    assert ref < 1 << 32
    assert nm.decode_ref(ref) == (salt, tile, poly)


_NM = {}


def _encode_nm():
    if "nm" not in _NM:
        _NM["nm"] = NavMesh(NavMeshParams((0, 0, 0), 1, 1, 64, 65536))
    return _NM["nm"]


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_pair_refs_decode_to_valid_polys(mesh):
    p = shared_dir() / "peer" / "results" / f"{mesh}.pairs.json"
    if not p.exists():
        pytest.skip(f"{p} not available")
    d = json.loads(p.read_text())
    nm = _load(f"{mesh}.{d['navmesh']}.navmesh.bin")
    for pair in d["pairs"][:200]:
        for key, poly in (("startRef", "startPoly"), ("endRef", "endPoly")):
            ref = pair[key]
            if not ref:
                continue
            salt, tile, ip = nm.decode_ref(ref)
            assert salt == 1 and [tile, ip] == pair[poly]
            assert nm.is_valid_poly_ref(ref)


# -- figures ---------------------------------------------------------------------------------


@pytest.mark.peer
@pytest.mark.parametrize(
    "name,tiles,polys,verts,dverts,dtris",
    [
        ("dungeon.solo.navmesh.bin", 1, 118, 223, 60, 291),
        ("dungeon.tiled.navmesh.bin", 24, 129, 314, 74, 330),
        ("dungeon.offmesh.tiled.navmesh.bin", 24, 130, 316, 74, 330),
        ("nav_test.tiled.navmesh.bin", 34, 220, 577, 183, 656),
        ("undulating.tiled.navmesh.bin", 49, 284, 571, 2110, 3353),
    ],
)
def test_stats_match_format_md(name, tiles, polys, verts, dverts, dtris):
    s = _load(name).stats()
    assert (s["tiles"], s["polys"], s["verts"], s["detail_verts"], s["detail_tris"]) == (
        tiles,
        polys,
        verts,
        dverts,
        dtris,
    )


@pytest.mark.peer
def test_arrays_layout():
    nm = _load("dungeon.tiled.navmesh.bin")
    a = nm.arrays()
    assert isinstance(a, NavMeshArrays)
    n = nm.stats()["polys"]
    assert a.poly_verts.shape == (n, 6) and a.poly_verts.dtype == np.int64
    assert a.verts.dtype == np.float32 and a.link_ref.dtype == np.uint64
    # Every live link's target index agrees with its ref.
    for r in nm.poly_refs()[:60]:
        gp = nm.poly_index(r)
        li = int(a.poly_first_link[gp])
        while li >= 0:
            assert nm.poly_ref(int(a.link_poly[li])) == int(a.link_ref[li])
            li = int(a.link_next[li])


# -- runtime changes ---------------------------------------------------------------------------


@pytest.mark.peer
@pytest.mark.parametrize("name", TILED[:3])
def test_remove_and_add_back(name):
    nm = _load(name)
    before = link_sets(nm)
    slots = nm.tile_slots()
    slot = slots[len(slots) // 2]
    tref = nm.tile_ref(slot)
    blob = tile_to_bytes(nm.tile_data(slot))
    poly_ref = tref | 0
    data = nm.remove_tile(tref)
    assert tile_to_bytes(data) == blob  # the returned data is the tile as it was
    assert not nm.is_valid_poly_ref(poly_ref)
    with pytest.raises(StaleHandleError):
        nm.get_poly_flags(poly_ref)
    with pytest.raises(StaleHandleError):
        nm.remove_tile(tref)
    # No live link points into the removed tile.
    a = nm.arrays()
    for r in nm.poly_refs():
        assert all(nm.decode_ref(t)[1] != slot for t, *_ in nm.links_of(r))
    assert nm.add_tile(data, tile_ref=tref) == tref
    assert link_sets(nm) == before
    # Its own links are rebuilt exactly as a fresh load would build them when added last.
    fresh = NavMesh(nm.params)
    orig = _load(name)
    for s in [s for s in slots if s != slot] + [slot]:
        fresh.add_tile(orig.tile_data(s), tile_ref=nm.tile_ref(s))
    assert tile_to_bytes(nm.tile_data(slot)) == tile_to_bytes(fresh.tile_data(slot))
    del a


@pytest.mark.peer
def test_remove_without_ref_gives_new_salt():
    nm = _load("dungeon.tiled.navmesh.bin")
    tref = nm.tile_ref(nm.tile_slots()[0])
    data = nm.remove_tile(tref)
    new = nm.add_tile(data)
    salt_old, slot_old, _ = nm.decode_ref(tref)
    assert nm.decode_ref(new) == (salt_old + 1, slot_old, 0)  # freed slot reused first
    assert not nm.is_valid_poly_ref(tref) and nm.is_valid_poly_ref(new)


@pytest.mark.peer
def test_remove_all_tiles_compacts_and_keeps_refs():
    nm = _load("nav_test.tiled.navmesh.bin")
    slots = nm.tile_slots()
    keep = slots[::5]
    kept = {s: tile_to_bytes(nm.tile_data(s)) for s in keep}
    for s in slots:
        if s not in keep:
            nm.remove_tile(nm.tile_ref(s))
    # Dead ranges never exceed half of a pool.
    assert nm.arrays().poly_tile.shape[0] <= 2 * nm.stats()["polys"]
    exported = nm.to_recast()
    nm._compact()
    assert nm.arrays().poly_tile.shape[0] == nm.stats()["polys"]
    assert nm.to_recast() == exported  # compaction changes no ref, link or byte
    for s in keep:
        # Links to removed neighbours are gone; everything else is unchanged.
        td = nm.tile_data(s)
        assert (
            td.verts.tobytes()
            == NavMesh.from_recast(peer_bytes("nav_test.tiled.navmesh.bin"))
            .tile_data(s)
            .verts.tobytes()
        )
        assert len(kept[s]) == len(tile_to_bytes(td))
    for r in nm.poly_refs():
        for t, *_ in nm.links_of(r):
            assert nm.is_valid_poly_ref(t)


@pytest.mark.peer
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TILED), st.integers(0, 10_000))
def test_links_symmetric_across_tile_borders(name, k):
    """Every portal link A -> B (side != 0xFF) has a partner B -> A on the opposite side."""
    nm = _load_cached(name)
    refs = nm.poly_refs()
    r = refs[k % len(refs)]
    for target, _edge, side, _b0, _b1 in nm.links_of(r):
        if side == 0xFF or nm.get_poly_type(target) == 1 or nm.get_poly_type(r) == 1:
            continue
        back = [lk for lk in nm.links_of(target) if lk[0] == r]
        assert back and back[0][2] == (side + 4) & 7


_CACHE: dict = {}


def _load_cached(name):
    if name not in _CACHE:
        _CACHE[name] = _load(name)
    return _CACHE[name]


@pytest.mark.peer
def test_flags_areas_and_tile_state():
    nm = _load("dungeon.tiled.navmesh.bin")
    r = nm.poly_refs()[5]
    assert nm.get_poly_flags(r) == 1 and nm.get_poly_area(r) == 0
    tref = nm.tile_ref(nm.decode_ref(r)[1])
    state = nm.get_tile_state(tref)
    nm.set_poly_flags(r, 0x55)
    nm.set_poly_area(r, 7)
    assert (nm.get_poly_flags(r), nm.get_poly_area(r)) == (0x55, 7)
    with pytest.raises(InputError):
        nm.set_poly_area(r, 64)
    nm.restore_tile_state(tref, state)
    assert (nm.get_poly_flags(r), nm.get_poly_area(r)) == (1, 0)
    with pytest.raises(InputError):
        nm.restore_tile_state(
            nm.tile_ref(nm.tile_slots()[0])
            if nm.decode_ref(r)[1] != nm.tile_slots()[0]
            else nm.tile_ref(nm.tile_slots()[1]),
            state,
        )


@pytest.mark.peer
def test_get_tiles_at_and_tile_refs():
    nm = _load("undulating.tiled.navmesh.bin")
    for s in nm.tile_slots():
        td = nm.tile_data(s)
        assert nm.get_tile_ref_at(td.x, td.y, td.layer) == nm.tile_ref(s)
        assert nm.get_tiles_at(td.x, td.y) == [nm.tile_ref(s)]
        assert nm.get_tile_at(td.x, td.y, td.layer).poly_count == td.poly_count
    assert nm.get_tile_ref_at(999, 999, 0) == 0 and nm.get_tile_at(999, 999, 0) is None
    with pytest.raises(InputError):
        s = nm.tile_slots()[0]
        nm.add_tile(nm.tile_data(s))  # location occupied


@pytest.mark.peer
def test_offmesh_end_points_of_unlinked_connection():
    nm = _load("dungeon.offmesh.solo.navmesh.bin")
    cref = nm.poly_refs()[-1]
    a, b = nm.get_off_mesh_connection_poly_end_points(0, cref)
    assert a.tolist() == pytest.approx([0.1, 0.2, 0.3]) and b.tolist() == pytest.approx(
        [0.4, 0.5, 0.6]
    )
    with pytest.raises(InputError):
        nm.get_off_mesh_connection_poly_end_points(0, nm.poly_refs()[0])


@pytest.mark.peer
def test_runtime_offmesh_between_far_tiles():
    nm = _load("nav_test.tiled.navmesh.bin")
    refs = nm.poly_refs()

    def center(r):
        a = nm.arrays()  # pools move when tiles grow
        g = nm.poly_index(r)
        return a.verts[a.poly_verts[g, : a.poly_vert_count[g]]].mean(0)

    ra, rb = refs[0], refs[-1]
    ta, tb = nm.decode_ref(ra)[1], nm.decode_ref(rb)[1]
    xa, ya = nm.tile_data(ta).x, nm.tile_data(ta).y
    xb, yb = nm.tile_data(tb).x, nm.tile_data(tb).y
    assert max(abs(xa - xb), abs(ya - yb)) > 1  # not neighbours
    before = link_sets(nm)
    c = nm.add_off_mesh_connection(center(ra), center(rb), 0.5, area=2, flags=4)
    assert nm.get_poly_type(c) == 1 and nm.get_poly_area(c) == 2 and nm.get_poly_flags(c) == 4
    targets = {(t, e) for t, e, *_ in nm.links_of(c)}
    assert targets == {(ra, 0), (rb, 1)}
    assert any(t == c for t, *_ in nm.links_of(ra)) and any(t == c for t, *_ in nm.links_of(rb))
    s, e = nm.get_off_mesh_connection_poly_end_points(ra, c)
    assert np.allclose(s[[0, 2]], center(ra)[[0, 2]]) and np.allclose(e[[0, 2]], center(rb)[[0, 2]])
    # Exported as an ordinary connection of the start tile; Detour's loader accepts it.
    nm2 = NavMesh.from_recast(nm.to_recast())
    assert nm2.stats()["offmesh"] == 1
    nm.remove_off_mesh_connection(c)
    assert not nm.is_valid_poly_ref(c)
    after = link_sets(nm)
    assert after == before
    with pytest.raises(StaleHandleError):
        nm.remove_off_mesh_connection(c)
    with pytest.raises(InputError):
        nm.add_off_mesh_connection([1e6, 0, 1e6], center(rb), 0.5)


@pytest.mark.peer
def test_runtime_offmesh_dropped_when_end_tile_removed():
    nm = _load("dungeon.tiled.navmesh.bin")
    refs = nm.poly_refs()

    def center(r):
        a = nm.arrays()  # pools move when tiles grow
        g = nm.poly_index(r)
        return a.verts[a.poly_verts[g, : a.poly_vert_count[g]]].mean(0)

    ra, rb = refs[0], refs[-1]
    c = nm.add_off_mesh_connection(center(ra), center(rb), 0.5)
    nm.remove_tile(nm.tile_ref(nm.decode_ref(rb)[1]))
    assert {e for _t, e, *_ in nm.links_of(c)} == {0}
    for r in nm.poly_refs():
        for t, *_ in nm.links_of(r):
            assert nm.is_valid_poly_ref(t)


@pytest.mark.peer
@pytest.mark.parametrize("kind", ["solo", "tiled"])
def test_runtime_offmesh_agrees_with_baked_connections(kind):
    """Adding Detour-linkable connections at runtime gives the links and snapped endpoints
    that Detour makes when they are baked into the tiles."""
    from _detour_cases import LINKED_OFFMESH, linked_offmesh_exports

    baked = NavMesh.from_recast(linked_offmesh_exports()[kind == "tiled"])
    nm = _load(f"dungeon.{kind}.navmesh.bin")

    def summary(m, refs):
        out = set()
        for r in refs:
            lk = sorted((t, e) for t, e, *_ in m.links_of(r))
            start_poly = next(t for t, e in lk if e == 0)
            s, e = m.get_off_mesh_connection_poly_end_points(start_poly, r)
            out.add((tuple(lk), tuple(s.tolist()), tuple(e.tolist())))
        return out

    mine = [
        nm.add_off_mesh_connection(
            c["start"], c["end"], c["radius"], c["bidirectional"], c["area"], c["flags"]
        )
        for c in LINKED_OFFMESH
    ]
    theirs = [r for r in baked.poly_refs() if baked.get_poly_type(r) == 1]
    assert summary(nm, mine) == summary(baked, theirs)
    # The ground polygons link back to the bidirectional connections only.
    for c, r in zip(LINKED_OFFMESH, mine):
        end_poly = next(t for t, e, *_ in nm.links_of(r) if e == 1)
        assert any(t == r for t, *_ in nm.links_of(end_poly)) == c["bidirectional"]


@pytest.mark.peer
def test_add_tile_refuses_bad_tiles():
    src = _load("dungeon.solo.navmesh.bin")
    td = src.tile_data(0)
    nm = NavMesh(src.params)
    with pytest.raises(InputError, match="shape"):
        nm.add_tile(td._replace(poly_flags=td.poly_flags[:-1]))
    bad = td.detail_tris.copy()
    bad[0, 0] = 200
    with pytest.raises(InputError, match="detail triangle"):
        nm.add_tile(td._replace(detail_tris=bad))
    small = NavMesh(src.params._replace(max_polys=16))
    with pytest.raises(InputError, match="max_polys"):
        small.add_tile(td)
    nm.add_tile(td)
    with pytest.raises(InputError, match="no free tile slot"):
        nm.add_tile(td._replace(x=1))
    assert nm.stats()["tiles"] == 1


@pytest.mark.peer
def test_kernel_ref_validation_agrees_with_python():
    from navkit.detour._links import poly_index_of_ref

    nm = _load("dungeon.tiled.navmesh.bin")
    refs = nm.poly_refs()
    stale = nm.remove_tile(nm.tile_ref(nm.decode_ref(refs[0])[1]))
    del stale
    a = nm.arrays()
    bits = (nm.salt_bits, nm.tile_bits, nm.poly_bits)
    for r in refs[:40] + [0, 1 << 31, nm.encode_ref(5, 3, 2)]:
        k = poly_index_of_ref(a, np.uint64(r), *bits)
        if nm.is_valid_poly_ref(r):
            assert k == nm.poly_index(r)
        else:
            assert k == -1


@pytest.mark.peer
def test_many_runtime_connections_keep_pools_bounded():
    nm = _load("dungeon.solo.navmesh.bin")
    refs = nm.poly_refs()

    def center(r):
        a = nm.arrays()
        g = nm.poly_index(r)
        return a.verts[a.poly_verts[g, : a.poly_vert_count[g]]].mean(0)

    # 118 polys and 7 poly bits: room for 10 more.
    cons = [
        nm.add_off_mesh_connection(center(refs[i]), center(refs[i + 1]), 0.3) for i in range(10)
    ]
    with pytest.raises(InputError, match="no room"):
        nm.add_off_mesh_connection(center(refs[20]), center(refs[21]), 0.3)
    assert nm.arrays().poly_tile.shape[0] <= 2 * nm.stats()["polys"]
    for c in cons:
        assert {e for _t, e, *_ in nm.links_of(c)} == {0, 1}
    exported = nm.to_recast()
    assert NavMesh.from_recast(exported).stats()["offmesh"] == 10
