"""Recast's binary navmesh files: byte-identical round trips and corrupt input."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest
from _detour_cases import peer_bytes, peer_navmesh_files, port_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import navkit._io
from navkit.detour import NavMesh, navmesh_from_recast, tile_from_bytes, tile_to_bytes
from navkit.detour.tile import first_difference
from navkit.errors import FormatError

PEER_FILES = peer_navmesh_files()


# dtTileCache's navmesh saved after obstacles were added and removed: its tiles were
# rebuilt in place, so their link slots carry that history (see
# test_port_fixture_64bit_dungeon_same_links_other_slots); Detour's own import re-lays them.
HISTORY_FILES = [n for n in PEER_FILES if n.endswith(".obstacles.navmesh.bin")]


@pytest.mark.peer
@pytest.mark.parametrize("name", [n for n in PEER_FILES if n not in HISTORY_FILES])
def test_peer_file_round_trip_is_byte_identical(name):
    data = peer_bytes(name)
    assert NavMesh.from_recast(data).to_recast() == data


@pytest.mark.peer
@pytest.mark.parametrize("name", HISTORY_FILES)
def test_peer_tilecache_navmesh_same_links_other_slots(name):
    _assert_same_but_link_slots(peer_bytes(name))


@pytest.mark.parametrize("name", ["dungeon_all_tiles_navmesh_32bit.bin", "all_tiles_navmesh.bin"])
def test_port_fixture_round_trip_is_byte_identical(name):
    data = port_fixture(name).read_bytes()
    nm = NavMesh.from_recast(data)
    assert nm.ref64 == (name == "all_tiles_navmesh.bin")
    assert nm.to_recast() == data


def _file_links(td):
    """Per poly, the sorted (ref, edge, side, bmin, bmax) of the link lists stored in a blob."""
    out = []
    for i in range(td.poly_count):
        li, lst = int(td.poly_first_link[i]), []
        while li != 0xFFFFFFFF:
            lst.append(
                (
                    int(td.link_ref[li]),
                    int(td.link_edge[li]),
                    int(td.link_side[li]),
                    int(td.link_bmin[li]),
                    int(td.link_bmax[li]),
                )
            )
            li = int(td.link_next[li])
        out.append(sorted(lst))
    return out


def test_port_fixture_64bit_dungeon_same_links_other_slots():
    """dungeon_all_tiles_navmesh.bin (64-bit refs, salt 2) was saved after RecastDemo had
    rebuilt its tiles: its link *slots* and free lists carry that history, which a fresh
    load cannot know. Everything else is byte-identical and every polygon has the same links."""
    data = port_fixture("dungeon_all_tiles_navmesh.bin").read_bytes()
    nm = _assert_same_but_link_slots(data)
    assert nm.ref64 and nm.salt_bits == 16


def _assert_same_but_link_slots(data: bytes) -> NavMesh:
    """A navmesh set file whose tiles were rebuilt in place loads and saves again with
    every byte equal except the link slots; every polygon keeps the same set of links."""
    nm = NavMesh.from_recast(data)
    out = nm.to_recast()
    assert len(out) == len(data) and out[:40] == data[:40]
    pos = 40
    for s in nm.tile_slots():
        if nm.ref64:
            ref, size = struct.unpack_from("<Qi", data, pos)
            head = 16
        else:
            ref, size = struct.unpack_from("<Ii", data, pos)
            head = 8
        assert ref == nm.tile_ref(s) and data[pos : pos + head] == out[pos : pos + head]
        theirs = tile_from_bytes(data[pos + head : pos + head + size], ref64=nm.ref64)
        mine = nm.tile_data(s)
        strip = dict.fromkeys(
            [
                "poly_first_link",
                "link_ref",
                "link_next",
                "link_edge",
                "link_side",
                "link_bmin",
                "link_bmax",
            ]
        )
        assert (
            first_difference(
                mine._replace(**{k: np.zeros(1) for k in strip}),
                theirs._replace(**{k: np.zeros(1) for k in strip}),
            )
            is None
        )
        assert _file_links(mine) == _file_links(theirs)
        pos += head + size
    return nm


@pytest.mark.parametrize(
    "name,checks",
    [
        (
            "dungeon_all_tiles_navmesh.bin",
            {(6, 9): (2, 7), (2, 9): (2, 9), (4, 3): (3, 6), (2, 8): (5, 17)},
        ),
        (
            "dungeon_all_tiles_navmesh_32bit.bin",
            {(6, 9): (2, 7), (2, 9): (2, 9), (4, 3): (3, 6), (2, 8): (5, 17)},
        ),
        (
            "all_tiles_navmesh.bin",
            {(4, 7): (7, 22), (1, 6): (7, 26), (6, 2): (1, 4), (7, 6): (8, 24)},
        ),
    ],
)
def test_port_fixture_figures(name, checks):
    """The counts the recast4j / DotRecast MeshSetReader tests expect."""
    nm = NavMesh.from_recast(port_fixture(name))
    assert nm.params.max_tiles == 128 and nm.params.max_polys == 0x8000
    assert nm.params.tile_width == pytest.approx(9.6)
    for (x, y), (polys, verts) in checks.items():
        refs = nm.get_tiles_at(x, y)
        assert len(refs) == 1
        td = nm.get_tile_at(x, y, 0)
        assert (td.poly_count, td.vert_count) == (polys, verts)


@pytest.mark.peer
@pytest.mark.parametrize("name", ["dungeon.solo.navmesh.bin", "undulating.tiled.navmesh.bin"])
def test_raw_tile_blobs_round_trip(name):
    data = peer_bytes(name)
    nm = NavMesh.from_recast(data)
    pos = 40
    for _s in nm.tile_slots():
        _, size = struct.unpack_from("<Ii", data, pos)
        blob = data[pos + 8 : pos + 8 + size]
        assert tile_to_bytes(tile_from_bytes(blob)) == blob
        pos += 8 + size
    if name.endswith("solo.navmesh.bin"):
        # A raw 'DNAV' tile loads as dtNavMesh::init(data): params from its header.
        one = NavMesh.from_recast(blob)
        assert one.params.max_tiles == 1 and one.params.max_polys == 118
        assert one.to_recast() == data


def test_to_recast_writes_atomically(tmp_path, monkeypatch):
    data = port_fixture("dungeon_all_tiles_navmesh_32bit.bin").read_bytes()
    nm = NavMesh.from_recast(data)
    target = tmp_path / "out.bin"
    assert nm.to_recast(target) == data and target.read_bytes() == data
    target.write_bytes(b"old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(navkit._io.os, "replace", boom)
    with pytest.raises(OSError):
        nm.to_recast(target)
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["out.bin"]


# -- corrupt input -------------------------------------------------------------------------------

SMALL = "dungeon_all_tiles_navmesh_32bit.bin"
_SMALLER: list[bytes] = []


def _small_set() -> bytes:
    """A 3-tile navmesh set cut from the 32-bit dungeon fixture (quick to load)."""
    if not _SMALLER:
        nm = NavMesh.from_recast(port_fixture(SMALL))
        for s in nm.tile_slots()[3:]:
            nm.remove_tile(nm.tile_ref(s))
        _SMALLER.append(nm.to_recast())
    return _SMALLER[0]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_truncated_files_raise_format_error(data):
    raw = _small_set()
    n = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(FormatError):
        NavMesh.from_recast(raw[:n])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_byte_damage_never_crashes(data):
    raw = bytearray(_small_set())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    try:
        nm = NavMesh.from_recast(bytes(raw))
    except FormatError:
        return
    nm.to_recast()  # what loads must also export


def _patch(raw: bytes, off: int, fmt: str, *vals) -> bytes:
    b = bytearray(raw)
    struct.pack_into(fmt, b, off, *vals)
    return bytes(b)


@pytest.mark.parametrize(
    "off,fmt,val,msg",
    [
        (0, "<i", 0x12345678, "not a Recast navmesh set"),
        (4, "<i", 2, "version 2"),
        (8, "<i", 1 << 30, "tiles"),
        (32, "<i", 0, "maxTiles 0"),
        (32, "<i", 1 << 30, "impossible params"),
        (48, "<i", 0x11111111, "not a Detour tile"),
        (52, "<i", 6, "version 6"),
        (48 + 24, "<i", 1 << 30, "impossible"),
        (48 + 24, "<i", -5, "impossible"),
        (48 + 24, "<i", 3, "bytes"),
        (44, "<i", 1 << 30, "claims"),
        (44, "<i", -8, "claims"),
    ],
)
def test_specific_corruptions(off, fmt, val, msg):
    raw = port_fixture(SMALL).read_bytes()
    with pytest.raises(FormatError, match=msg):
        NavMesh.from_recast(_patch(raw, off, fmt, val))


def test_foreign_and_trailing_data():
    raw = port_fixture(SMALL).read_bytes()
    with pytest.raises(FormatError):
        navmesh_from_recast(b"")
    with pytest.raises(FormatError):
        navmesh_from_recast(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    with pytest.raises(FormatError, match="tile cache"):
        navmesh_from_recast(b"TEST" + raw[4:])
    with pytest.raises(FormatError, match="unexpected bytes"):
        navmesh_from_recast(raw + b"junk")
    # Two tiles at the same location.
    dup = bytearray(raw)
    first = 40 + 8
    size = struct.unpack_from("<i", raw, 44)[0]
    second = 40 + 8 + size + 8
    dup[second + 8 : second + 20] = raw[first + 8 : first + 20]  # copy x, y, layer
    with pytest.raises(FormatError):
        navmesh_from_recast(bytes(dup))


def test_bad_poly_indices_are_format_errors():
    raw = bytearray(port_fixture(SMALL).read_bytes())
    blob0 = 48
    nv = struct.unpack_from("<i", raw, blob0 + 28)[0]
    poly0 = blob0 + 100 + 12 * nv
    struct.pack_into("<H", raw, poly0 + 4, 60000)  # vertex index far out of range
    with pytest.raises(FormatError, match="vertex index"):
        navmesh_from_recast(bytes(raw))


@pytest.mark.peer
def test_linked_offmesh_exports_round_trip():
    """Loading rebuilds off-mesh links across tiles (connectExtOffMeshLinks) as Detour did."""
    from _detour_cases import linked_offmesh_exports

    for data in linked_offmesh_exports():
        nm = NavMesh.from_recast(data)
        assert nm.stats()["offmesh"] == 3
        assert nm.to_recast() == data
