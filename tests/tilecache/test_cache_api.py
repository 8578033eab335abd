"""navkit.TileCache's API: handles, budgets, Changes, subscriptions, prisms, areas, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _oracle import poly_centers, update_calls
from _tc_cases import peer_tilecache

import navkit
from navkit.detour.query import NavMeshQuery
from navkit.errors import ConfigError, InputError, StaleHandleError
from navkit.tilecache import TileCache
from navkit.tilecache.format import read_tile_cache


@pytest.fixture(scope="module")
def tset():
    return read_tile_cache(peer_tilecache("dungeon"))


@pytest.fixture()
def tc(tset):
    return TileCache(tset)


def _floor_point(cache: TileCache, k: int = 0) -> np.ndarray:
    """A polygon centre on the ground floor of dungeon (y near the most common floor)."""
    c = poly_centers(cache.navmesh)
    ys = np.round(c[:, 1])
    common = np.bincount((ys - ys.min()).astype(int)).argmax() + ys.min()
    cand = c[ys == common]
    return cand[k % len(cand)]


def _tile_contents(nm) -> dict:
    """Per location: the tile's own arrays and its links as (target location, poly, edge,
    side, bmin, bmax) sets (slot, salt and link-slot independent)."""
    loc = {s: (int(nm._t["tile_x"][s]), int(nm._t["tile_y"][s]), int(nm._t["tile_layer"][s]))
           for s in nm.tile_slots()}  # fmt: skip
    out = {}
    for s, key in loc.items():
        td = nm.tile_data(s)
        arrays = {f: np.asarray(getattr(td, f)).tobytes() for f in td._fields
                  if f not in ("poly_first_link", "link_ref", "link_next", "link_edge",
                               "link_side", "link_bmin", "link_bmax")}  # fmt: skip
        links = []
        for i in range(td.poly_count):
            li, lst = int(td.poly_first_link[i]), []
            while li != 0xFFFFFFFF:
                _, ts, tp = nm.decode_ref(int(td.link_ref[li]))
                lst.append((loc[ts], tp, int(td.link_edge[li]), int(td.link_side[li]),
                            int(td.link_bmin[li]), int(td.link_bmax[li])))  # fmt: skip
                li = int(td.link_next[li])
            links.append(sorted(lst))
        out[key] = (arrays, links)
    return out


def test_public_name():
    assert navkit.TileCache is TileCache


def test_handles_are_generational(tc):
    p = _floor_point(tc)
    h1 = tc.add_cylinder(p - [0, 0.5, 0], 1.0, 2.0)
    assert tc.obstacle(h1).kind == 0
    tc.update()
    tc.remove(h1)
    with pytest.raises(StaleHandleError):
        tc.remove(h1)  # removing twice, before the update
    tc.update()
    with pytest.raises(StaleHandleError):
        tc.remove(h1)  # and after
    h2 = tc.add_cylinder(p - [0, 0.5, 0], 1.0, 2.0)
    assert h2 & 0xFFFF == h1 & 0xFFFF and h2 != h1  # same slot, new generation
    with pytest.raises(StaleHandleError):
        tc.obstacle(h1)
    for bad in (0, -1, 1 << 40, h2 + (1 << 16)):
        with pytest.raises(StaleHandleError):
            tc.remove(bad)
    with pytest.raises(InputError):
        tc.remove("h")  # type: ignore[arg-type]


def test_update_budget_changes_and_subscription(tc):
    nm = tc.navmesh
    seen: list = []
    unsub = tc.subscribe(seen.append)
    pts = [_floor_point(tc, k) for k in (0, 17, 33)]
    before = set(nm.poly_refs())
    for p in pts:
        tc.add_box(p - [1.0, 0.5, 1.0], p + [1.0, 1.5, 1.0])
    assert not tc.up_to_date
    ch1 = tc.update(max_tiles=1)
    assert len(ch1.rebuilt) + len(ch1.failed) == 1 and not ch1.failed
    ch2 = tc.update(budget_ms=1e-6)  # at least one step runs
    assert len(ch2.rebuilt) == 1
    ch3 = tc.update()
    assert ch3.up_to_date and tc.up_to_date
    assert seen == [c for c in (ch1, ch2, ch3) if c.rebuilt or c.failed]
    invalid = set(ch1.invalidated) | set(ch2.invalidated) | set(ch3.invalidated)
    after = set(nm.poly_refs())
    assert invalid and invalid <= before
    assert not any(nm.is_valid_poly_ref(r) for r in invalid)
    assert before - invalid <= after  # untouched tiles keep their refs
    unsub()
    ch4 = tc.update()
    assert ch4.rebuilt == () and ch4.up_to_date and len(seen) == 3


def test_add_then_remove_restores_every_tile(tc):
    """Every tile's arrays and links (by target location) come back as they were."""
    before = _tile_contents(tc.navmesh)
    hs = []
    for k in range(6):
        p = _floor_point(tc, 5 * k)
        hs.append(tc.add_cylinder(p - [0, 0.5, 0], 1.2, 2.0))
        hs.append(tc.add_oriented_box(p + [1.5, 0.5, 0], [1.0, 1.0, 0.5], 0.3 * k))
        hs.append(tc.add_prism([p + [-2, -0.5, -2], p + [-1, -0.5, -2], p + [-1.5, -0.5, -1]], 2))
    update_calls(tc)
    assert _tile_contents(tc.navmesh) != before
    for h in hs:
        tc.remove(h)
    update_calls(tc)
    assert _tile_contents(tc.navmesh) == before


def _xz_area(nm) -> float:
    a = nm.arrays()
    tot = 0.0
    for ref in nm.poly_refs():
        gp = nm.poly_index(ref)
        v = a.verts[a.poly_verts[gp, : a.poly_vert_count[gp]]].astype(np.float64)
        x, z = v[:, 0], v[:, 2]
        tot += 0.5 * abs(np.dot(x, np.roll(z, -1)) - np.dot(z, np.roll(x, -1)))
    return tot


def test_area_marks_instead_of_cutting(tset):
    hole, mark = TileCache(tset), TileCache(tset)
    base = _xz_area(hole.navmesh)
    p = _floor_point(hole, 3)
    hole.add_cylinder(p - [0, 0.5, 0], 1.5, 2.0)
    mark.add_cylinder(p - [0, 0.5, 0], 1.5, 2.0, area=5)
    update_calls(hole)
    update_calls(mark)
    cut = base - _xz_area(hole.navmesh)
    assert cut > 0.6 * math.pi * 1.5**2
    # nothing removed (the outlines around the new region simplify a little differently)
    assert abs(_xz_area(mark.navmesh) - base) < 0.1 * cut
    a = mark.navmesh.arrays()
    marked = [r for r in mark.navmesh.poly_refs() if a.poly_area[mark.navmesh.poly_index(r)] == 5]
    assert marked
    # the marked polygons cover the disc's centre
    q = NavMeshQuery(mark.navmesh)
    near = q.find_nearest_poly(p, [0.1, 2.0, 0.1])
    assert near.ref in marked


def test_prism_cuts_its_polygon(tset):
    tc = TileCache(tset)
    base = _xz_area(tc.navmesh)
    p = _floor_point(tc, 9)
    tri = [p + [-2.0, -0.5, -1.5], p + [2.0, -0.5, -1.5], p + [0.0, -0.5, 2.0]]
    tc.add_prism(tri, 2.0)
    update_calls(tc)
    cut = base - _xz_area(tc.navmesh)
    assert 0.5 * 7.0 < cut < 1.6 * 7.0  # triangle area 0.5 * 4 * 3.5 = 7


def test_move_keeps_the_handle(tset):
    tc = TileCache(tset)
    before = _tile_contents(tc.navmesh)
    p = _floor_point(tc, 2)
    h = tc.add_cylinder(p - [0, 0.5, 0], 1.0, 2.0)
    update_calls(tc)
    tc.move(h, [20.0, 0.0, 0.0])
    update_calls(tc)
    np.testing.assert_allclose(tc.obstacle(h).a, (p - [0, 0.5, 0] + [20, 0, 0]), rtol=1e-6)
    # the same as adding the cylinder at the new place
    other = TileCache(tset)
    other.add_cylinder(p - [0, 0.5, 0] + [20, 0, 0], 1.0, 2.0)
    update_calls(other)
    assert _tile_contents(tc.navmesh) == _tile_contents(other.navmesh)
    tc.remove(h)
    update_calls(tc)
    assert _tile_contents(tc.navmesh) == before


BAD_CALLS = [
    ("add_cylinder", ([np.nan, 0, 0], 1, 1), "pos"),
    ("add_cylinder", ([0, 0, 0], np.inf, 1), "radius"),
    ("add_cylinder", ([0, 0, 0], 0, 1), "radius"),
    ("add_cylinder", ([0, 0, 0], 1, -2), "height"),
    ("add_cylinder", ([0, 0, 0], 10**400, 1), "radius is out of float32 range"),
    ("add_cylinder", ([10**400, 0, 0], 1, 1), "pos is out of float32 range"),
    ("add_cylinder", ([0, 0], 1, 1), "pos"),
    ("add_cylinder", ([1e5, 0, 1e5], 1, 1), "outside"),
    ("add_cylinder", ([0, -5, -40], 200.0, 40), "layers"),
    ("add_box", ([0, 0, 0], [1, 0, 1]), "bmax > bmin"),
    ("add_box", ([0, 0, 0], [1, np.inf, 1]), "bmax"),
    ("add_oriented_box", ([0, 0, 0], [1, 0, 1], 0.0), "half_extents"),
    ("add_oriented_box", ([0, 0, 0], [1, 1, 1], np.nan), "y_radians"),
    ("add_prism", ([[0, 0, 0], [1, 0, 0]], 1), "n >= 3"),
    ("add_prism", ([[0, 0, 0], [2, 0, 0], [2, 0, 2], [1, 0, 0.5], [0, 0, 2]], 1), "convex"),
    ("add_prism", ([[0, 0, 0], [1, 0, 0], [2, 0, 0]], 1), "convex"),
    ("add_prism", ([[0, 0, 0], [0, 0, 0], [1, 0, 1]], 1), "repeat"),
    ("add_prism", ([[0, 0, 0], [1, 0, 0], [1, 0, 1]], 0), "height"),
    ("add_cylinder", ([0, 0, 0], 1, 1), "area"),  # with area=64 below
]


@pytest.mark.parametrize("k", range(len(BAD_CALLS)))
def test_bad_input_leaves_the_cache_consistent(tset, k):
    tc = TileCache(tset)
    p = _floor_point(tc)
    name, args, word = BAD_CALLS[k]
    before = tc.navmesh.to_recast()
    kwargs = {"area": 64} if word == "area" else {}
    with pytest.raises(InputError, match=word):
        getattr(tc, name)(*args, **kwargs)
    assert tc.up_to_date and tc.obstacle_count == 0
    # still usable and queryable
    h = tc.add_cylinder(p - [0, 0.5, 0], 1.0, 2.0)
    update_calls(tc)
    tc.remove(h)
    update_calls(tc)
    assert NavMeshQuery(tc.navmesh).find_nearest_poly(p, [1, 2, 1]).ref
    assert len(tc.navmesh.to_recast()) == len(before)


def test_full_table_and_full_queue(tset):
    small = tset._replace(params=tset.params._replace(max_obstacles=3))
    tc = TileCache(small)
    p = _floor_point(tc)
    hs = [tc.add_cylinder(p - [0, 0.5, 0], 0.5, 1.0) for _ in range(3)]
    with pytest.raises(InputError, match="full"):
        tc.add_cylinder(p, 0.5, 1.0)
    tc.remove(hs[0])
    update_calls(tc)
    tc.add_cylinder(p, 0.5, 1.0)  # the freed slot is reused
    big = TileCache(tset)
    for _ in range(64):
        big.add_cylinder(p - [0, 0.5, 0], 0.5, 1.0)
    with pytest.raises(InputError, match="update"):
        big.add_cylinder(p, 0.5, 1.0)
    update_calls(big)
    assert big.obstacle_count == 64


def test_update_argument_errors(tc):
    for kw in ({"budget_ms": 0}, {"budget_ms": -1}, {"budget_ms": np.nan}, {"max_tiles": 0},
               {"max_tiles": 1.5}):  # fmt: skip
        with pytest.raises(InputError):
            tc.update(**kw)
    with pytest.raises(InputError):
        tc.subscribe(3)  # type: ignore[arg-type]


def test_constructor_errors(tset, tmp_path):
    with pytest.raises(ConfigError, match="recast_compatible"):
        TileCache(tset, recast_compatible="no")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="offmesh"):
        TileCache(tset, offmesh=[{"start": [0, 0, 0], "end": [1, 0, 0], "radius": 0.5}])
    with pytest.raises(InputError):
        TileCache(b"TSET")  # type: ignore[arg-type]
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"nonsense")
    with pytest.raises(navkit.errors.FormatError):
        TileCache.from_recast(bad)


def test_bake_with_executor_equals_serial():
    from concurrent.futures import ThreadPoolExecutor

    mesh = navkit.sample_level()
    cfg = navkit.BakeConfig(tile_size=32)
    calls: list = []
    a = TileCache.bake(mesh, cfg, progress=lambda d, t: calls.append((d, t)))
    with ThreadPoolExecutor(2) as ex:
        b = TileCache.bake(mesh, cfg, executor=ex)
    assert a.navmesh.to_recast() == b.navmesh.to_recast()
    assert calls and calls[-1][0] == calls[-1][1]
    assert a.tile_cache_set == b.tile_cache_set


def test_failed_rebuild_keeps_the_old_tile(tset, monkeypatch):
    """A rebuild that overflows Detour's buffers is reported; the old tile stays."""
    from navkit.errors import BuildError
    from navkit.tilecache import update as U

    monkeypatch.setattr(U.CacheState, "keep_decoded_bytes", 0)  # (rebuilds decode)
    tc = TileCache(tset)
    before = tc.navmesh.to_recast()
    contents = _tile_contents(tc.navmesh)
    p = _floor_point(tc)

    def boom(*a, **k):
        raise BuildError("synthetic overflow")

    # the kernel steps (recast-compatible mode): every layer's stream corrupt, so each
    # rebuild fails in its first stage (the decode)
    comp = tc._state._comp
    saved = comp.copy()
    comp[:] = 0
    monkeypatch.setattr(U, "build_layer_tile", boom)
    h = tc.add_cylinder(p - [0, 0.5, 0], 1.0, 2.0)
    ch = tc.update()
    assert ch.failed and not ch.rebuilt and ch.invalidated == () and ch.up_to_date
    assert tc.navmesh.to_recast() == before
    assert tc._state.fail_stage == 1  # (_rebuild.CORRUPT)
    monkeypatch.undo()
    comp[:] = saved
    tc.remove(h)  # the obstacle was processed (Detour moves on); removing rebuilds again
    assert tc.update().rebuilt
    assert _tile_contents(tc.navmesh) == contents  # rebuilt without the obstacle


def test_to_recast_round_trip_and_bytes_source(tset, tmp_path):
    data = peer_tilecache("dungeon").read_bytes()
    tc = TileCache.from_recast(data)
    assert tc.to_recast() == data
    out = tmp_path / "tc.bin"
    tc.to_recast(out)
    assert out.read_bytes() == data
    assert TileCache.from_recast(out).navmesh.to_recast() == tc.navmesh.to_recast()


def test_too_many_obstacle_slots(tset):
    with pytest.raises(ConfigError, match="max_obstacles"):
        TileCache(tset._replace(params=tset.params._replace(max_obstacles=70000)))


@pytest.mark.parametrize("name", ["dungeon_all_tiles_tilecache.bin", "all_tiles_tilecache.bin"])
def test_recastdemo_tile_caches_load(name):
    """RecastDemo's own tile cache files (recast4j / DotRecast fixtures) load and mesh."""
    from _tc_cases import port_fixture

    data = port_fixture(name).read_bytes()
    tc = TileCache.from_recast(data)
    assert tc.to_recast() == data
    assert tc.navmesh.stats()["polys"] > 100
    p = _floor_point(tc)
    h = tc.add_cylinder(p - [0, 0.5, 0], 1.0, 2.0)
    assert tc.update().rebuilt
    tc.remove(h)
    assert tc.update().up_to_date


@pytest.mark.parametrize("keep_all", [False, True])
def test_layer_copies_follow_live_obstacles(tset, monkeypatch, keep_all):
    """The decompressed layers the cache keeps (``CacheState._raw_row``): with
    ``keep_decoded_bytes`` too small for all of them, exactly those under live obstacles
    (taken when a layer is rebuilt with obstacles, given back when it is rebuilt
    without); with room for all (the default on the sample meshes), every layer's, from
    the cache's construction on. Every export equals a cache's that decodes each layer
    every time, through adds, moves, removals (also of obstacles still being processed)
    and budgeted steps."""
    from navkit.tilecache.update import CacheState

    monkeypatch.setattr(CacheState, "keep_decoded_bytes", (32 << 20) if keep_all else 0)
    a = TileCache(tset)
    monkeypatch.setattr(CacheState, "keep_decoded_bytes", 0)
    b = TileCache(tset)
    from navkit.tilecache import _update as _U

    b._state.sc[_U.S_RAWN] = 0  # (no free row: every rebuild decodes the stream)
    rng = np.random.default_rng(5)
    live: list[tuple[int, int]] = []
    for k in range(60):
        op = rng.integers(5)
        if op <= 1 or not live:
            p = _floor_point(a, int(rng.integers(1000))) + rng.uniform(-1, 1, 3) * [1, 0, 1]
            r = float(rng.uniform(0.3, 2.5))
            live.append((a.add_cylinder(p - [0, 0.5, 0], r, 2.0),
                         b.add_cylinder(p - [0, 0.5, 0], r, 2.0)))  # fmt: skip
        elif op == 2:
            ha, hb = live[int(rng.integers(len(live)))]
            d = rng.uniform(-2, 2, 3) * [1, 0, 1]
            a.move(ha, d)
            b.move(hb, d)
        else:
            ha, hb = live.pop(int(rng.integers(len(live))))
            a.remove(ha)
            b.remove(hb)
        if rng.integers(3) == 0:
            ca, cb = a.update(max_tiles=1), b.update(max_tiles=1)
        else:
            ca, cb = a.update(), b.update()
        assert ca.rebuilt == cb.rebuilt and ca.invalidated == cb.invalidated
        assert a.navmesh.to_recast() == b.navmesh.to_recast(), k
        st = a._state
        if keep_all:
            assert (st._raw_row >= 0).all(), k
        elif st.up_to_date:
            under = {st._tix[r] for r in st.tiles if st.live_slots_on(r)}
            assert set(np.flatnonzero(st._raw_row >= 0).tolist()) == under, k
        assert (b._state._raw_row < 0).all()
        rows = st._raw_row[st._raw_row >= 0].tolist() + st._raw_free[: st.sc[_U.S_RAWN]].tolist()
        assert sorted(rows) == list(range(st._rawpool.shape[0])), k  # (no row lost or shared)
    for ha, hb in live:
        a.remove(ha)
        b.remove(hb)
    a.update()
    b.update()
    assert a.navmesh.to_recast() == b.navmesh.to_recast()
    assert (a._state._raw_row >= 0).all() if keep_all else (a._state._raw_row < 0).all()
