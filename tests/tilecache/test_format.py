"""TSET tile cache sets and compressed layers: byte-identical round trips, figures, corrupt input."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from _tc_cases import EXPECTED, MESHES, PORT_FIXTURES, peer_tilecache, port_fixture, raw_records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import shared_dir

from navkit.detour.navmesh import NavMeshParams
from navkit.errors import FormatError, InputError
from navkit.tilecache import format as F


@pytest.mark.peer
@pytest.mark.parametrize("mesh", MESHES)
def test_peer_file_round_trip_and_figures(mesh, tmp_path):
    data = peer_tilecache(mesh).read_bytes()
    s = F.tile_cache_from_bytes(data)
    assert F.tile_cache_to_bytes(s) == data
    exp = EXPECTED[mesh]
    assert len(s.tiles) == exp["layers"]
    assert s.raw_bytes == exp["raw"]
    assert s.compressed_bytes == exp["compressed"]
    res = shared_dir() / "peer" / "results" / f"{mesh}.json"
    if res.exists():
        tc = json.loads(res.read_text())["tilecache"]
        assert tc["layers"] == len(s.tiles)
        assert tc["compressed_layer_bytes"] == s.compressed_bytes
        assert tc["raw_layers"]["rawBytes"] == s.raw_bytes
    # refs: salt 1 above 8 slot bits (max_tiles 168 / 196 -> 256), slots in order
    assert [t.ref for t in s.tiles] == [0x100 + k for k in range(len(s.tiles))]
    assert s.params.width == s.params.height == 48
    assert s.navmesh_params.max_tiles == 256 and s.navmesh_params.max_polys == 16384
    # file on disk
    out = tmp_path / "x.bin"
    F.write_tile_cache(out, s)
    assert out.read_bytes() == data
    assert F.read_tile_cache(out) == s


@pytest.mark.parametrize("name", PORT_FIXTURES)
def test_port_fixture_round_trip(name):
    data = port_fixture(name).read_bytes()
    s = F.tile_cache_from_bytes(data)
    assert F.tile_cache_to_bytes(s) == data
    assert s.params.max_tiles == 168 and s.params.max_obstacles == 128
    assert np.float32(s.params.walkable_climb) == np.float32(0.9)  # RecastDemo's agentMaxClimb


@pytest.mark.peer
def test_layers_decompress_and_rebuild_byte_identical():
    s = F.read_tile_cache(peer_tilecache("dungeon"))
    for k, t in enumerate(s.tiles):
        layer = s.layer(k)
        assert layer.header == t.header
        assert layer.heights.shape == (t.header.height, t.header.width)
        # heights 255 exactly where there is no floor, walkable area 63 elsewhere
        empty = layer.heights == 255
        assert np.all(layer.areas[empty] == 0)
        assert np.all(layer.areas[~empty] == 63)
        assert np.all(layer.cons[empty] == 0)
        assert F.build_tile_cache_layer(t.header, layer.heights, layer.areas, layer.cons) == t.data


def _set_bytes():
    return peer_tilecache("dungeon").read_bytes()


def _patch(data: bytes, off: int, fmt: str, *vals) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, off, *vals)
    return bytes(b)


@pytest.mark.peer
def test_corrupt_sets_raise_format_error():
    data = _set_bytes()
    recs = raw_records(data)
    first_data = 92 + 8  # the first record's data
    bad = {
        "short": data[:50],
        "magic": _patch(data, 0, "<i", 0x4D534554),  # MSET
        "version": _patch(data, 4, "<i", 2),
        "ntiles_negative": _patch(data, 8, "<i", -1),
        "ntiles_huge": _patch(data, 8, "<i", 10**6),
        "ntiles_short": _patch(data, 8, "<i", len(recs) - 1),  # trailing bytes
        "truncated": data[:-1],
        "cs_nan": _patch(data, 52, "<f", float("nan")),
        "cs_zero": _patch(data, 52, "<f", 0.0),
        "width": _patch(data, 60, "<i", 300),
        "tile_width": _patch(data, 24, "<f", -1.0),
        "ref_zero": _patch(data, 92, "<I", 0),
        "ref_slot": _patch(data, 92, "<I", 0x100 | 200),
        "size_overrun": _patch(data, 96, "<i", len(data)),
        "size_zero": _patch(data, 96, "<i", 0),
        "layer_magic": _patch(data, first_data, "<i", 0),
        "layer_version": _patch(data, first_data + 4, "<i", 7),
        "layer_range": _patch(data, first_data + 50, "<BB", 40, 2),  # minx > maxx
        "layer_hrange": _patch(data, first_data + 44, "<HH", 9, 3),
        "layer_width": _patch(data, first_data + 48, "<B", 47),  # stream size mismatch
        "layer_bounds": _patch(data, first_data + 20, "<f", float("inf")),
        "stream_level": _patch(data, first_data + 56, "<B", 0x60),
    }
    # the second record a copy of the first: same ref, then same position
    r0 = struct.pack("<Ii", recs[0][0], len(recs[0][1])) + recs[0][1]
    dup = data[:92] + r0 + r0 + data[92 + len(r0) + 8 + len(recs[1][1]) :]
    bad["duplicate_ref"] = dup
    r1 = struct.pack("<Ii", recs[1][0], len(recs[0][1])) + recs[0][1]
    bad["duplicate_position"] = data[:92] + r0 + r1 + data[92 + len(r0) + 8 + len(recs[1][1]) :]
    for name, b in bad.items():
        with pytest.raises(FormatError):
            F.tile_cache_from_bytes(b)
            pytest.fail(name)


@pytest.mark.peer
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.integers(0, 255), st.integers(0, 600))
def test_random_damage_gives_format_error_or_a_valid_set(pos, value, cut):
    data = _set_bytes()
    b = bytearray(data)
    b[pos % len(b)] = value
    b = b[: len(b) - cut] if cut % 3 == 0 else b
    try:
        s = F.tile_cache_from_bytes(bytes(b))
    except FormatError:
        return
    assert F.tile_cache_to_bytes(s) == bytes(b)


def test_reader_errors_on_paths(tmp_path):
    with pytest.raises(InputError):
        F.read_tile_cache(tmp_path / "missing.bin")
    p = tmp_path / "bad.bin"
    p.write_bytes(b"TEST" + bytes(200))
    with pytest.raises(FormatError, match="bad.bin"):
        F.read_tile_cache(p)


def _header(**kw):
    h = dict(
        tx=0, ty=0, tlayer=0, bmin=(0.0, 0.0, 0.0), bmax=(1.0, 1.0, 1.0), hmin=0, hmax=3,
        width=4, height=3, minx=0, maxx=3, miny=0, maxy=2,
    )  # fmt: skip
    h.update(kw)
    return F.TileCacheLayerHeader(**h)


def test_build_layer_round_trip_and_checks():
    h = _header()
    heights = np.arange(12, dtype=np.uint8).reshape(3, 4)
    areas = np.full((3, 4), 63, np.uint8)
    cons = np.full((3, 4), 0x1F, np.uint8)
    data = F.build_tile_cache_layer(h, heights, areas, cons)
    assert len(data) > F.LAYER_HEADER_SIZE and data[:4] == b"RLTD"
    layer = F.decompress_tile_cache_layer(data)
    assert layer.header == h
    assert np.array_equal(layer.heights, heights) and np.array_equal(layer.cons, cons)
    with pytest.raises(InputError):
        F.build_tile_cache_layer(h, heights.T, areas, cons)
    with pytest.raises(InputError):
        F.build_tile_cache_layer(h, heights.astype(np.int16), areas, cons)
    with pytest.raises(InputError):
        F.build_tile_cache_layer(_header(maxx=4), heights, areas, cons)
    with pytest.raises(InputError):
        F.build_tile_cache_layer(_header(tx=2**40), heights, areas, cons)
    with pytest.raises(InputError):
        F.build_tile_cache_layer((1, 2), heights, areas, cons)  # type: ignore[arg-type]


def test_writer_checks():
    nav = NavMeshParams((0.0, 0.0, 0.0), 14.4, 14.4, 256, 16384)
    p = F.TileCacheParams((0.0, 0.0, 0.0), 0.3, 0.2, 48, 48, 2.0, 0.6, 0.8, 1.3, 2, 128)
    s = F.TileCacheSet(nav, p, ())
    b = F.tile_cache_to_bytes(s)
    assert len(b) == 92
    back = F.tile_cache_from_bytes(b)  # floats come back as float32 values
    assert back.params.max_tiles == 2 and back.params.cs == float(np.float32(0.3))
    assert F.tile_cache_to_bytes(back) == b
    with pytest.raises(InputError):
        F.tile_cache_to_bytes(s._replace(params=p._replace(cs=float("nan"))))
    with pytest.raises(InputError):
        F.tile_cache_to_bytes(s._replace(params=p._replace(max_tiles=0)))
    t = F.CompressedTile(0x101, _header(), b"x" * 10)
    with pytest.raises(InputError):
        F.tile_cache_to_bytes(s._replace(tiles=(t,)))
    with pytest.raises(InputError):
        F.tile_cache_to_bytes(s._replace(tiles=(t, t, t)))
    with pytest.raises(InputError):
        F.tile_cache_to_bytes("no")  # type: ignore[arg-type]
