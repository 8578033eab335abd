"""Shared inputs of the tile-cache tests: Recast's tile cache files and a slow FastLZ decoder."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from peer_support import shared_dir

MESHES = ("dungeon", "nav_test", "undulating")
#: Recast's figures for the peer's tile-cache settings (issue 11; peer/README.md section 6).
EXPECTED = {
    "dungeon": {"layers": 30, "raw": 209040, "compressed": 18447},
    "nav_test": {"layers": 60, "raw": 418080, "compressed": 47237},
    "undulating": {"layers": 55, "raw": 383240, "compressed": 72848},
}
PORT_FIXTURES = ("dungeon_all_tiles_tilecache.bin", "all_tiles_tilecache.bin")


def peer_tilecache(mesh: str) -> Path:
    p = shared_dir() / "peer" / "results" / f"{mesh}.tilecache.bin"
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


def port_fixture(name: str) -> Path:
    p = shared_dir() / "data" / "port_fixtures" / name
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


def all_files() -> list[Path]:
    return [peer_tilecache(m) for m in MESHES] + [port_fixture(n) for n in PORT_FIXTURES]


def raw_records(data: bytes) -> list[tuple[int, bytes]]:
    """(ref, data) of every record of a TSET file, parsed with nothing but struct."""
    n = struct.unpack_from("<i", data, 8)[0]
    off = 92
    out = []
    for _ in range(n):
        ref, size = struct.unpack_from("<Ii", data, off)
        off += 8
        out.append((ref, data[off : off + size]))
        off += size
    assert off == len(data)
    return out


def slow_decode(stream: bytes) -> bytes:
    """FastLZ decoder straight from the format's description (levels 1 and 2, no tricks)."""
    out = bytearray()
    if not stream:
        return bytes(out)
    level = (stream[0] >> 5) + 1
    assert level in (1, 2)
    ip = 0
    first = True
    while ip < len(stream):
        c = stream[ip] & 31 if first else stream[ip]
        first = False
        ip += 1
        if c < 32:
            assert ip + c + 1 <= len(stream), "truncated literal run"
            out += stream[ip : ip + c + 1]
            ip += c + 1
            continue
        ln = (c >> 5) - 1
        if ln == 6:
            while True:
                ln += stream[ip]
                ip += 1
                if level == 1 or stream[ip - 1] != 255:
                    break
        code = stream[ip]
        ip += 1
        dist = ((c & 31) << 8) + code + 1
        if level == 2 and code == 255 and c & 31 == 31:
            dist = (stream[ip] << 8) + stream[ip + 1] + 8192
            ip += 2
        assert dist <= len(out), "reference before the start"
        for _ in range(ln + 3):
            out.append(out[-dist])
    return bytes(out)
