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
@given(st.binary(min_size=0, max_size=600), st.integers(0, 3), st.sampled_from([1, 2]))
def test_round_trip_and_slow_decoder_agree(data, pattern, level):
    x = _structured(data, pattern)
    c = fastlz.compress(x, level)
    assert len(c) <= fastlz.max_compressed_size(len(x))
    assert fastlz.decompress(c, len(x)) == x
    assert slow_decode(c) == x
    if len(x) >= 4:
        assert fastlz.stream_level(c) == level


def test_level_choice_follows_fastlz_compress():
    rng = np.random.default_rng(3)
    small = rng.integers(0, 4, 65535, dtype=np.uint8)
    big = rng.integers(0, 4, 65536, dtype=np.uint8)
    assert fastlz.stream_level(fastlz.compress(small)) == 1
    assert fastlz.stream_level(fastlz.compress(big)) == 2
    # far references (beyond 8191 bytes) only exist at level 2
    far = np.concatenate([rng.integers(0, 256, 20000, dtype=np.uint8)] * 4)
    c2 = fastlz.compress(far, 2)
    assert len(c2) < len(fastlz.compress(far, 1)) // 2
    assert fastlz.decompress(c2, far.size) == far.tobytes() == slow_decode(c2)
    with pytest.raises(InputError):
        fastlz.compress(far, 3)


def _oracle_cases(seed: int) -> list[tuple[int, int, bytes]]:
    rng = np.random.default_rng(seed)
    out = []
    for w, h in [(48, 48), (7, 5), (148, 148), (255, 255), (150, 160)]:
        n = 3 * w * h
        rep = rng.integers(0, 256, n, dtype=np.uint8)
        rep[n // 2 :] = rep[: n - n // 2]  # a repeat half the input back
        near = rng.integers(0, 256, n, dtype=np.uint8)
        for dist in (8190, 8191, 8192, 8193, 73724, 73725, 73726, 73727):
            if 2 * dist + 200 < n:  # 40-byte repeats at the levels' distance limits
                near[dist + 100 : dist + 140] = near[100:140]
        for b in (
            rng.integers(0, 256, n, dtype=np.uint8),  # incompressible
            rng.integers(0, 3, n, dtype=np.uint8),  # small alphabet
            np.repeat(rng.integers(0, 4, n // 50 + 1, dtype=np.uint8), 50)[:n],  # runs
            rep,
            near,
        ):
            out.append((w, h, b.tobytes()))
    return out


@pytest.mark.peer
def test_recast_compresses_any_grid_the_same():
    """Recast's own dtBuildTileCacheLayer (FastLZ) on inputs the sample meshes never give:
    incompressible data, long runs, far repeats, level 2 (grids of 65536+ bytes)."""
    import base64
    import json
    import os
    import shutil
    import subprocess
    from pathlib import Path

    from peer_support import ROOT

    work = ROOT / ".scratch" / "peer"
    if shutil.which("node") is None or not (work / "node_modules" / "@recast-navigation").is_dir():
        pytest.skip("node or the installed peer (.scratch/peer) is not available")
    cases = _oracle_cases(11)
    payload = [{"w": w, "h": h, "data": base64.b64encode(b).decode()} for w, h, b in cases]
    r = subprocess.run(
        ["node", str(Path(__file__).with_name("fastlz_oracle.mjs"))],
        input=json.dumps(payload), capture_output=True, text=True, timeout=600,
        env={**os.environ, "PEER_DIR": str(work)},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    streams = [base64.b64decode(s) for s in json.loads(r.stdout)]
    assert {fastlz.stream_level(s) for s in streams} == {1, 2}
    for (w, h, raw), s in zip(cases, streams):
        assert fastlz.compress(raw) == s, (w, h)
        assert fastlz.decompress(s, len(raw)) == raw


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


def test_bytes_reach_the_kernels_as_writable_arrays():
    """Bytes (a file's layers) are passed to the FastLZ kernels as the writable arrays
    the bake and the tile cache's update kernel pass: one signature each, not a second
    read-only one compiled on a cache's first load."""
    for data in (b"\x00\x01abc", bytearray(b"xyz"), memoryview(b"12345")):
        a = fastlz._as_bytes(data, "stream")
        assert a.flags.writeable and a.dtype == np.uint8 and a.tobytes() == bytes(data)


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
