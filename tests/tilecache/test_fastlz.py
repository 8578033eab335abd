"""FastLZ: byte equality with Recast's compressed layers, round trips, corrupt streams."""

from __future__ import annotations

import numpy as np
import pytest
from _tc_cases import all_files, raw_records, slow_decode
from hypothesis import given, settings
from hypothesis import strategies as st

from navkit.errors import FormatError, InputError
from navkit.tilecache import fastlz

HEADER = 56


def _blocks():
    out = []
    for p in all_files():
        for k, (_ref, rec) in enumerate(raw_records(p.read_bytes())):
            w, h = rec[48], rec[49]
            out.append((f"{p.name}#{k}", rec[HEADER:], 3 * w * h))
    return out


def test_every_recast_block_recompresses_to_the_same_bytes():
    blocks = _blocks()
    assert len(blocks) == 30 + 60 + 55 + 30 + 60
    for name, stream, size in blocks:
        assert fastlz.stream_level(stream) == 1, name
        raw = fastlz.decompress(stream, size)
        assert raw == slow_decode(stream), name
        assert fastlz.compress(raw) == stream, name


def _structured(draw_bytes: bytes, pattern: int) -> bytes:
    """Inputs with the features FastLZ's encoder branches on: runs, repeats, far matches."""
    base = np.frombuffer(draw_bytes, np.uint8)
    if pattern == 0 or base.size == 0:
        return bytes(base)
    if pattern == 1:  # long runs (match lengths beyond 264 are split)
        return bytes(np.repeat(base, 300)[:20000])
    if pattern == 2:  # the same block repeated (distance = block length)
        return bytes(np.tile(base, 20000 // base.size + 1)[:20000])
    # blocks repeated about 8192 bytes apart: distances right at the level-1 limit
    gap = np.zeros(8190, np.uint8)
    gap[::7] = 1
    return bytes(np.concatenate([base, gap, base, gap[:3], base]))


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=0, max_size=600), st.integers(0, 3))
def test_round_trip_and_slow_decoder_agree(data, pattern):
    x = _structured(data, pattern)
    c = fastlz.compress(x)
    assert len(c) <= fastlz.max_compressed_size(len(x))
    assert fastlz.decompress(c, len(x)) == x
    assert slow_decode(c) == x


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 12, 13, 14, 31, 32, 33, 64, 65])
def test_short_inputs(n):
    x = bytes((i * 37) & 0xFF for i in range(n))
    assert fastlz.decompress(fastlz.compress(x), n) == x
    z = bytes(n)
    assert fastlz.decompress(fastlz.compress(z), n) == z
    if 0 < n < 4:
        assert fastlz.compress(x) == bytes([n - 1]) + x  # one literal run


def test_runs_compress_to_back_references():
    x = bytes(6912)  # an empty 48 x 48 layer's areas + cons
    c = fastlz.compress(x)
    assert len(c) < 100
    assert fastlz.decompress(c, len(x)) == x


def test_numpy_input():
    x = np.arange(5000, dtype=np.uint8)
    assert fastlz.compress(x) == fastlz.compress(x.tobytes())
    with pytest.raises(InputError):
        fastlz.compress(np.zeros(4, np.int32))
    with pytest.raises(InputError):
        fastlz.compress("text")  # type: ignore[arg-type]


def test_corrupt_streams():
    x = bytes(range(256)) * 8
    c = fastlz.compress(x)
    with pytest.raises(FormatError, match="expected"):
        fastlz.decompress(c, len(x) + 1)  # wrong size
    with pytest.raises(FormatError):
        fastlz.decompress(c, len(x) - 1)  # overflows the output
    with pytest.raises(FormatError):
        fastlz.decompress(c[:-5], len(x))  # truncated literal run
    with pytest.raises(FormatError):
        fastlz.decompress(bytes([0x40]) + c[1:], len(x))  # level 3
    with pytest.raises(FormatError):
        fastlz.decompress(bytes([0, 7, 0x20, 0x50]), 100)  # reference before the start
    with pytest.raises(InputError):
        fastlz.decompress(c, -1)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 3000))
def test_garbage_gives_format_error_or_bytes(data, size):
    try:
        out = fastlz.decompress(data, size)
    except FormatError:
        return
    assert len(out) == size


def test_level2_stream_is_read():
    # level 2 marker, literal run of 3, then a match of length 3 at distance 3
    s = bytes([0x20 | 2, 1, 2, 3, (1 << 5) | 0, 2])
    assert fastlz.stream_level(s) == 2
    assert fastlz.decompress(s, 6) == bytes([1, 2, 3, 1, 2, 3])
