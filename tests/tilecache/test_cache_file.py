"""TileCache.save / TileCache.load: navkit's own tile-cache file (layers, obstacles, pending work)."""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
import pytest
from _oracle import add_shapes, update_calls
from _tc_cases import MESHES, peer_tilecache
from peer_support import peer_file
from test_cache_api import _tile_contents

from navkit.errors import FormatError, InputError, StaleHandleError
from navkit.tilecache import TileCache
from navkit.tilecache.format import read_tile_cache
from navkit.tilecache.io import MAGIC


def _shapes(mesh: str) -> list[dict]:
    run = json.loads(peer_file(f"{mesh}.obstacles.json").read_text())["tilecache"]
    return run["obstacles"]["shapes"]


@pytest.fixture(scope="module")
def tset():
    return read_tile_cache(peer_tilecache("dungeon"))


def _busy_cache(tset) -> tuple[TileCache, list[int]]:
    """Obstacles of every kind, some removed, some rebuilds and requests still pending."""
    tc = TileCache(tset)
    shapes = _shapes("dungeon")
    hs = add_shapes(tc, shapes[:12])
    p = np.array(shapes[20]["position"], np.float64)
    hs.append(tc.add_box(p - [1.0, 0.2, 0.7], p + [0.5, 2.0, 0.4], area=5))
    q = np.array(shapes[30]["position"], np.float64)
    tri = [q + [-1.0, 0.0, -1.0], q + [1.2, 0.0, -0.6], q + [0.1, 0.0, 1.3]]
    hs.append(tc.add_prism(tri, 1.5))
    tc.update(max_tiles=6)
    tc.remove(hs[2])
    tc.update(max_tiles=4)
    tc.remove(hs[5])
    tc.move(hs[7], [0.4, 0.0, -0.3])
    hs += add_shapes(tc, shapes[40:43])
    assert not tc.up_to_date
    return tc, hs


def test_round_trip_keeps_obstacles_handles_and_pending_work(tset, tmp_path):
    tc, hs = _busy_cache(tset)
    f = tmp_path / "c.tilecache"
    tc.save(f)
    assert f.read_bytes() == tc.to_bytes()
    back = TileCache.load(f)
    assert back.obstacle_count == tc.obstacle_count
    for h in hs:
        try:
            a = tc.obstacle(h)
        except StaleHandleError:
            with pytest.raises(StaleHandleError):
                back.obstacle(h)
            continue
        b = back.obstacle(h)
        assert a.kind == b.kind and a.area == b.area
        for x, y in zip(a[1:4], b[1:4]):
            assert np.array_equal(x, y) and y.dtype == np.float32
        assert np.array_equal(a.points, b.points)
    # the same steps remain, then the same tiles
    assert update_calls(back) == update_calls(tc)
    assert _tile_contents(back.navmesh) == _tile_contents(tc.navmesh)
    assert back.to_recast() == tc.to_recast()
    # and both go on alike
    for h in hs[:4]:
        if h != hs[2]:
            tc.remove(h)
            back.remove(h)
    update_calls(tc)
    update_calls(back)
    assert _tile_contents(back.navmesh) == _tile_contents(tc.navmesh)


def test_up_to_date_cache_loads_with_its_obstacles_in_the_navmesh(tset):
    tc = TileCache(tset)
    add_shapes(tc, _shapes("dungeon"))
    update_calls(tc)
    back = TileCache.load(tc.to_bytes())
    assert back.up_to_date
    assert _tile_contents(back.navmesh) == _tile_contents(tc.navmesh)
    assert back.navmesh.stats() == tc.navmesh.stats()


@pytest.mark.parametrize("mesh", MESHES)
def test_layers_take_fewer_bytes_than_fastlz(mesh):
    """zlib over the raw layers beats Recast's FastLZ records (the reason for the codec)."""
    tc = TileCache.from_recast(peer_tilecache(mesh))
    assert len(tc.to_bytes()) < len(tc.to_recast())
    assert TileCache.load(tc.to_bytes()).to_recast() == peer_tilecache(mesh).read_bytes()


def test_every_flipped_byte_is_a_format_error(tset):
    tc, _ = _busy_cache(tset)
    data = tc.to_bytes()
    hlen = struct.unpack_from("<I", data, 12)[0]
    spots = {0, 7, 8, 12, 16, 16 + hlen // 2, 16 + hlen, len(data) - 33, len(data) - 1}
    spots |= set(range(0, len(data), max(1, len(data) // 40)))
    for i in sorted(spots):
        bad = bytearray(data)
        bad[i] ^= 0x5A
        with pytest.raises(FormatError):
            TileCache.load(bytes(bad))


def test_truncated_and_foreign_files_are_format_errors(tset, tmp_path):
    tc, _ = _busy_cache(tset)
    data = tc.to_bytes()
    for n in (0, 7, 15, 47, 100, len(data) // 2, len(data) - 32, len(data) - 1):
        with pytest.raises(FormatError):
            TileCache.load(data[:n])
    with pytest.raises(FormatError, match="not a navkit tile-cache"):
        TileCache.load(tc.to_recast())
    with pytest.raises(FormatError):
        TileCache.load(data + b"\0")
    f = tmp_path / "bad.tilecache"
    f.write_bytes(data[:-5])
    with pytest.raises(FormatError, match="bad.tilecache"):
        TileCache.load(f)
    with pytest.raises(InputError):
        TileCache.load(tmp_path / "missing.tilecache")


def _resign(data: bytes, edit) -> bytes:
    """Rewrite the JSON header with ``edit`` and a valid checksum."""
    hlen = struct.unpack_from("<I", data, 12)[0]
    h = json.loads(data[16 : 16 + hlen])
    edit(h)
    hb = json.dumps(h).encode()
    body = data[:8] + struct.pack("<II", 1, len(hb)) + hb + data[16 + hlen : -32]
    return body + hashlib.sha256(body).digest()


def _set(path: list, value):
    def edit(h):
        d = h
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value

    return edit


def test_inconsistent_contents_with_a_valid_checksum(tset):
    tc, hs = _busy_cache(tset)
    data = tc.to_bytes()
    live = next(iter(json.loads(data[16 : 16 + struct.unpack_from("<I", data, 12)[0]])
                     ["obstacles"]["live"]))  # fmt: skip
    assert TileCache.load(_resign(data, lambda h: None)).obstacle_count == tc.obstacle_count
    edits = [
        _set(["obstacles", "state", int(live)], 0),  # a shape in an empty slot
        _set(["obstacles", "salt", 0], 0),
        _set(["obstacles", "next", 3], 999),
        _set(["obstacles", "salt"], [1, 2]),
        _set(["obstacles", "live", live, "touched"], [12345]),
        _set(["obstacles", "live", live, "shape", "kind"], "sphere"),
        _set(["obstacles", "live", live, "shape", "a"], [1.0, 2.0]),
        _set(["obstacles", "live", live, "shape", "area"], 64),
        _set(["next_free"], int(live)),
        _set(["requests"], [[7, 1]]),
        _set(["update"], [1, 1]),
        _set(["layers", 0, 2], 10),
        _set(["layers", 1, 0], 0),
        _set(["raw_size"], 5),
        _set(["codec"], "zstd-3"),
        _set(["params", "cs"], -1.0),
        _set(["params"], {}),
        _set(["payload_size"], 3),
    ]
    for e in edits:
        with pytest.raises(FormatError):
            TileCache.load(_resign(data, e))
    wrong_version = bytearray(_resign(data, lambda h: None))
    wrong_version[8] = 2
    body = bytes(wrong_version[:-32])
    with pytest.raises(FormatError, match="version 2"):
        TileCache.load(body + hashlib.sha256(body).digest())
    assert data.startswith(MAGIC)
