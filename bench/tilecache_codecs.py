"""Codecs for tile-cache layers: sizes and times on the three sample meshes.

Each layer (heights | areas | cons, 3 * 48 * 48 bytes with the peer's settings) is
compressed on its own, as the tile cache stores and decompresses tiles one at a
time (an obstacle update decompresses only the touched tiles). Reports per mesh the
raw bytes, the compressed stream bytes (the 56-byte layer headers excluded; add
``56 * layers`` for a file) and the total compress / decompress time over all
layers (median of a few repeats), for FastLZ (navkit's, Recast's choice), zlib,
lzma (stdlib), and lz4 / zstd when installed (``pip install lz4 zstandard``).

    python bench/tilecache_codecs.py            # table on stdout
    python bench/tilecache_codecs.py --json     # the same as JSON
"""

from __future__ import annotations

import json
import lzma
import os
import statistics
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NAVKIT_SHARED", ROOT.parent / "shared"))
MESHES = ("dungeon", "nav_test", "undulating")


def layers_of(mesh: str) -> list[bytes]:
    from navkit.tilecache import fastlz
    from navkit.tilecache.format import LAYER_HEADER_SIZE, read_tile_cache

    s = read_tile_cache(SHARED / "peer" / "results" / f"{mesh}.tilecache.bin")
    out = []
    for t in s.tiles:
        n = 3 * t.header.width * t.header.height
        out.append(fastlz.decompress(t.data[LAYER_HEADER_SIZE:], n))
    return out


def codecs() -> dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes, int], bytes]]]:
    from navkit.tilecache import fastlz

    c: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes, int], bytes]]] = {
        "fastlz1": (fastlz.compress, fastlz.decompress),
        "zlib-1": (lambda b: zlib.compress(b, 1), lambda b, n: zlib.decompress(b)),
        "zlib-6": (lambda b: zlib.compress(b, 6), lambda b, n: zlib.decompress(b)),
        "zlib-9": (lambda b: zlib.compress(b, 9), lambda b, n: zlib.decompress(b)),
        "lzma-raw": (
            lambda b: lzma.compress(b, format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA2}]),
            lambda b, n: lzma.decompress(
                b, format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA2}]
            ),
        ),
    }
    try:
        import lz4.block as lz4b

        c["lz4"] = (
            lambda b: lz4b.compress(b, store_size=False),
            lambda b, n: lz4b.decompress(b, uncompressed_size=n),
        )
        c["lz4hc-9"] = (
            lambda b: lz4b.compress(b, mode="high_compression", compression=9, store_size=False),
            lambda b, n: lz4b.decompress(b, uncompressed_size=n),
        )
    except ImportError:
        pass
    try:
        import zstandard as zstd

        for lvl in (1, 3, 9, 19):
            cc = zstd.ZstdCompressor(
                level=lvl, write_content_size=False, write_checksum=False, write_dict_id=False
            )
            dc = zstd.ZstdDecompressor()
            c[f"zstd-{lvl}"] = (
                cc.compress,
                lambda b, n, dc=dc: dc.decompress(b, max_output_size=n),
            )
    except ImportError:
        pass
    return c


def timed(fn: Callable[[], object], repeat: int = 5) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def main() -> None:
    rows = []
    cs = codecs()
    for mesh in MESHES:
        layers = layers_of(mesh)
        raw = sum(len(b) for b in layers)
        for name, (comp, decomp) in cs.items():
            streams = [comp(b) for b in layers]
            assert all(decomp(s, len(b)) == b for s, b in zip(streams, layers))
            rows.append(
                {
                    "mesh": mesh,
                    "codec": name,
                    "layers": len(layers),
                    "raw": raw,
                    "compressed": sum(len(s) for s in streams),
                    "compress_ms": round(timed(lambda c=comp, ls=layers: [c(b) for b in ls]), 3),
                    "decompress_ms": round(
                        timed(
                            lambda d=decomp, ss=streams, ls=layers: [
                                d(s, len(b)) for s, b in zip(ss, ls)
                            ]
                        ),
                        3,
                    ),
                }
            )
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'mesh':<11}{'codec':<10}{'raw':>8}{'bytes':>8}{'ratio':>7}{'comp ms':>9}{'dec ms':>8}")
    for r in rows:
        ratio = r["raw"] / r["compressed"]
        print(
            f"{r['mesh']:<11}{r['codec']:<10}{r['raw']:>8}{r['compressed']:>8}{ratio:>7.1f}"
            f"{r['compress_ms']:>9.2f}{r['decompress_ms']:>8.2f}"
        )


if __name__ == "__main__":
    main()
