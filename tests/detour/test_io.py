"""navkit's own navmesh file: exact state round trips, checksum, corrupt input, atomic writes."""

from __future__ import annotations

import os
import struct

import pytest
from _detour_cases import link_sets, port_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import navkit._io
from navkit.detour import NavMesh
from navkit.detour.io import FORMAT_VERSION, MAGIC, navmesh_from_bytes, navmesh_to_bytes
from navkit.errors import FormatError, InputError
from navkit.recast.config import BakeConfig

FIXTURE = "dungeon_all_tiles_navmesh_32bit.bin"


def _nm() -> NavMesh:
    return NavMesh.from_recast(port_fixture(FIXTURE))


def test_save_load_round_trip(tmp_path):
    nm = _nm()
    path = tmp_path / "a.navkit"
    cfg = BakeConfig()
    nm.save(path, bake_config=cfg)
    back = NavMesh.load(path)
    assert back.to_recast() == nm.to_recast() == port_fixture(FIXTURE).read_bytes()
    assert back.stats() == nm.stats()
    assert back.bake_config == cfg.to_dict()
    assert BakeConfig.from_dict(back.bake_config) == cfg
    assert back.file_header["navkit_version"]
    for r in nm.poly_refs()[:50]:
        assert back.is_valid_poly_ref(r)


def test_exact_runtime_state_survives(tmp_path):
    """After removals, re-adds, flag edits and a runtime connection, the saved file gives
    back the same refs, links, salts and free lists (so exports are identical)."""
    nm = _nm()
    slots = nm.tile_slots()
    for s in slots[3:9]:
        nm.remove_tile(nm.tile_ref(s))
    td = nm.remove_tile(nm.tile_ref(slots[10]))
    nm.add_tile(td)
    r = nm.poly_refs()[4]
    nm.set_poly_flags(r, 9)
    refs = nm.poly_refs()
    a = nm.arrays()

    def center(ref):
        a = nm.arrays()
        g = nm.poly_index(ref)
        return a.verts[a.poly_verts[g, : a.poly_vert_count[g]]].mean(0)

    c = nm.add_off_mesh_connection(center(refs[0]), center(refs[-1]), 0.4)
    path = tmp_path / "b.navkit"
    nm.save(path)
    back = NavMesh.load(path)
    assert back.to_recast() == nm.to_recast()
    assert link_sets(back) == link_sets(nm)
    assert back.get_poly_flags(r) == 9
    assert list(back._free_slots) == list(nm._free_slots)
    # The same future: adding a tile gets the same ref in both.
    assert back.add_tile(td._replace(x=99)) == nm.add_tile(td._replace(x=99))
    back.remove_off_mesh_connection(c)
    assert not back.is_valid_poly_ref(c)
    del a


@pytest.mark.parametrize("name", ["all_tiles_navmesh.bin", "dungeon_all_tiles_navmesh.bin"])
def test_64bit_ref_navmesh_round_trip(name):
    nm = NavMesh.from_recast(port_fixture(name))
    back = navmesh_from_bytes(navmesh_to_bytes(nm))
    assert back.ref64 and back.to_recast() == nm.to_recast()


def test_checksum_mismatch(tmp_path):
    data = bytearray(navmesh_to_bytes(_nm()))
    data[len(data) // 2] ^= 0x01
    with pytest.raises(FormatError, match="checksum"):
        navmesh_from_bytes(bytes(data))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_truncated_navkit_files(data):
    raw = _raw()
    n = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(FormatError):
        navmesh_from_bytes(raw[:n])


_RAW: list[bytes] = []


def _raw() -> bytes:
    if not _RAW:
        _RAW.append(navmesh_to_bytes(_nm()))
    return _RAW[0]


def test_foreign_and_wrong_version(tmp_path):
    raw = _raw()
    with pytest.raises(FormatError, match="not a navkit"):
        navmesh_from_bytes(b"MSET" + raw[4:])
    wrong = bytearray(raw)
    struct.pack_into("<I", wrong, 8, FORMAT_VERSION + 1)
    with pytest.raises(FormatError, match="version"):
        navmesh_from_bytes(bytes(wrong))
    with pytest.raises(FormatError):
        NavMesh.load(_write(tmp_path / "f", port_fixture(FIXTURE).read_bytes()))
    with pytest.raises(InputError):
        NavMesh.load(tmp_path / "missing.navkit")
    assert raw[:8] == MAGIC


def test_consistent_checksum_but_bad_content():
    """A file with a valid checksum but an inconsistent header is still refused."""
    import hashlib
    import json

    raw = _raw()
    hlen = struct.unpack_from("<I", raw, 12)[0]
    h = json.loads(raw[16 : 16 + hlen])
    h["tiles"][0]["slot"] = 10_000
    hb = json.dumps(h).encode()
    body = raw[:8] + struct.pack("<II", FORMAT_VERSION, len(hb)) + hb + raw[16 + hlen : -32]
    with pytest.raises(FormatError):
        navmesh_from_bytes(body + hashlib.sha256(body).digest())


def _write(p, data):
    p.write_bytes(data)
    return p


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    nm = _nm()
    target = tmp_path / "nm.navkit"
    nm.save(target)
    good = target.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(navkit._io.os, "replace", boom)
    with pytest.raises(OSError):
        nm.save(target)
    assert target.read_bytes() == good
    assert sorted(os.listdir(tmp_path)) == ["nm.navkit"]
    with pytest.raises(OSError):
        nm.save(tmp_path / "new.navkit")
    assert sorted(os.listdir(tmp_path)) == ["nm.navkit"]
