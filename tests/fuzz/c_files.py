"""navkit and Recast navmesh files: byte flips and crafted field edits.

navkit files carry a SHA-256: a byte flip must be refused (FormatError); crafted
edits recompute the checksum so that they reach the parser. Recast files have no
checksum: whatever loads must be safe to query (``c_query.exercise``).
"""

from __future__ import annotations

import hashlib
import json
import math
import struct

import numpy as np

from .c_query import exercise
from .common import (
    HOSTILE_FLOATS,
    HOSTILE_INTS,
    HOSTILE_OTHER,
    WrongAnswer,
    expect,
    navkit_files,
    pick,
    recast_files,
)


def _layout():
    from navkit.detour import recast_format as R

    return R


def _tile_sections(blob: bytes, pos: int, ref64: bool) -> dict | None:
    """Section offsets (absolute) of the Detour tile blob at ``pos``, or None."""
    R = _layout()
    if pos + 100 > len(blob):
        return None
    h = np.frombuffer(blob, R._HEADER, count=1, offset=pos)[0]
    names = ["vertCount", "polyCount", "maxLinkCount", "detailMeshCount", "detailVertCount",
             "detailTriCount", "bvNodeCount", "offMeshConCount"]  # fmt: skip
    counts = {n: int(h[n]) for n in names}
    if any(v < 0 or v > len(blob) for v in counts.values()):
        return None
    link = (R._LINK64 if ref64 else R._LINK32).itemsize
    sizes = R._section_sizes(counts, link)
    offs = np.cumsum([pos, *sizes]).tolist()
    return {"counts": counts, "offs": offs, "link": link}


def _put(buf: bytearray, off: int, fmt: str, value) -> None:
    size = struct.calcsize(fmt)
    if 0 <= off and off + size <= len(buf):
        try:
            struct.pack_into(fmt, buf, off, value)
        except (struct.error, OverflowError, TypeError):
            struct.pack_into(fmt, buf, off, 0)


def _rand_int_for(fmt: str, rng, ref_like=None):
    lo, hi = {"<B": (0, 255), "<H": (0, 65535), "<I": (0, 2**32 - 1), "<i": (-(2**31), 2**31 - 1),
              "<Q": (0, 2**64 - 1)}[fmt]  # fmt: skip
    r = rng.random()
    if r < 0.3:
        return pick(rng, [lo, hi, 0, 1, hi // 2 + 1, hi - 1])
    if r < 0.6 and ref_like is not None:
        return max(lo, min(hi, int(ref_like) + int(rng.integers(-3, 4))))
    if hi >= 2**63:  # numpy's int64 draws stop short of 2^64
        return (int(rng.integers(0, 2**32)) << 32) | int(rng.integers(0, 2**32))
    return int(rng.integers(lo, hi, endpoint=True))


def _rand_float(rng):
    if rng.random() < 0.6:
        return pick(rng, HOSTILE_FLOATS)
    return float(rng.normal(0, 100))


def edit_tile(buf: bytearray, pos: int, ref64: bool, rng, n_edits: int) -> list[str]:
    """Crafted edits inside the tile blob at ``pos`` (counts kept, so the sizes stay valid)."""
    R = _layout()
    t = _tile_sections(bytes(buf), pos, ref64)
    if t is None:
        return []
    c, o = t["counts"], t["offs"]
    done = []
    hf = R._HEADER.fields
    pf = R._POLY.fields
    lf = (R._LINK64 if ref64 else R._LINK32).fields
    for _ in range(n_edits):
        kind = pick(rng, ["header", "bounds", "vert", "poly_vert", "poly_nei", "poly_nei", "poly_misc",
                          "link", "link", "detail", "dvert", "dtri", "bv", "offmesh"])  # fmt: skip
        if kind == "header":
            name = pick(rng, ["x", "y", "layer", "offMeshBase", "walkableHeight", "walkableClimb",
                              "walkableRadius", "bvQuantFactor", "userId"])  # fmt: skip
            off = pos + hf[name][1]
            if name.startswith("walkable") or name == "bvQuantFactor":
                _put(buf, off, "<f", _rand_float(rng))
            else:
                _put(buf, off, "<i", _rand_int_for("<i", rng, 0))
        elif kind == "bounds":
            name = pick(rng, ["bmin", "bmax"])
            _put(buf, pos + hf[name][1] + 4 * int(rng.integers(3)), "<f", _rand_float(rng))
        elif kind == "vert" and c["vertCount"]:
            i = int(rng.integers(c["vertCount"]))
            _put(buf, o[1] + 12 * i + 4 * int(rng.integers(3)), "<f", _rand_float(rng))
        elif kind in ("poly_vert", "poly_nei", "poly_misc") and c["polyCount"]:
            i = int(rng.integers(c["polyCount"]))
            base = o[2] + 32 * i
            j = int(rng.integers(6))
            if kind == "poly_vert":
                _put(buf, base + pf["verts"][1] + 2 * j, "<H",
                     pick(rng, [c["vertCount"], c["vertCount"] - 1, 65535, int(rng.integers(65536))]))  # fmt: skip
            elif kind == "poly_nei":
                v = pick(rng, [i + 1, c["polyCount"] + 1, c["polyCount"], 0x8000 | int(rng.integers(16)),
                               0xFFFF, int(rng.integers(1, c["polyCount"] + 1)), 0])  # fmt: skip
                _put(buf, base + pf["neis"][1] + 2 * j, "<H", v)
            else:
                name = pick(rng, ["firstLink", "flags", "vertCount", "areaAndtype"])
                fmt = {"firstLink": "<I", "flags": "<H", "vertCount": "<B", "areaAndtype": "<B"}[
                    name
                ]
                _put(buf, base + pf[name][1], fmt, _rand_int_for(fmt, rng, 3))
        elif kind == "link" and c["maxLinkCount"]:
            i = int(rng.integers(c["maxLinkCount"]))
            base = o[3] + t["link"] * i
            name = pick(rng, ["ref", "next", "next", "edge", "side", "bmin", "bmax"])
            if name == "next":
                v = pick(rng, [i, max(0, i - 1), c["maxLinkCount"], 0xFFFFFFFF, 0])
                _put(buf, base + lf[name][1], "<I", v)
            elif name == "ref":
                fmt = "<Q" if ref64 else "<I"
                old = struct.unpack_from(fmt, buf, base + lf[name][1])[0]
                _put(buf, base + lf[name][1], fmt, _rand_int_for(fmt, rng, old))
            else:
                _put(buf, base + lf[name][1], "<B", _rand_int_for("<B", rng, 0))
        elif kind == "detail" and c["detailMeshCount"]:
            i = int(rng.integers(c["detailMeshCount"]))
            base = o[4] + 12 * i
            j = int(rng.integers(4))
            fmt, off = [("<I", 0), ("<I", 4), ("<B", 8), ("<B", 9)][j]
            _put(buf, base + off, fmt, _rand_int_for(fmt, rng, 2))
        elif kind == "dvert" and c["detailVertCount"]:
            i = int(rng.integers(c["detailVertCount"]))
            _put(buf, o[5] + 12 * i + 4 * int(rng.integers(3)), "<f", _rand_float(rng))
        elif kind == "dtri" and c["detailTriCount"]:
            i = int(rng.integers(c["detailTriCount"]))
            _put(buf, o[6] + 4 * i + int(rng.integers(4)), "<B", int(rng.integers(256)))
        elif kind == "bv" and c["bvNodeCount"]:
            i = int(rng.integers(c["bvNodeCount"]))
            base = o[7] + 16 * i
            if rng.random() < 0.5:
                _put(buf, base + 12, "<i", pick(rng, [-(2**31), -1, 0, c["polyCount"], 2**31 - 1,
                                                       -c["bvNodeCount"] - 1, -2]))  # fmt: skip
            else:
                _put(buf, base + 2 * int(rng.integers(6)), "<H", int(rng.integers(65536)))
        elif kind == "offmesh" and c["offMeshConCount"]:
            i = int(rng.integers(c["offMeshConCount"]))
            base = o[8] + 36 * i
            j = int(rng.integers(5))
            if j == 0:
                _put(buf, base + 4 * int(rng.integers(7)), "<f", _rand_float(rng))
            elif j == 1:
                _put(buf, base + 28, "<H", _rand_int_for("<H", rng, c["polyCount"]))
            else:
                _put(buf, base + 29 + j, "<B", int(rng.integers(256)))
        else:
            continue
        done.append(kind)
    return done


# -- navkit files --------------------------------------------------------------------------
def _split(data: bytes):
    hlen = struct.unpack_from("<I", data, 12)[0]
    header = json.loads(data[16 : 16 + hlen])
    return header, bytearray(data[16 + hlen : -32])


def _join(header, payload: bytes, version: int = 1, raw_header: bytes | None = None) -> bytes:
    from navkit.detour.io import MAGIC

    hb = raw_header if raw_header is not None else json.dumps(header).encode()
    body = MAGIC + struct.pack("<II", version, len(hb)) + hb + bytes(payload)
    return body + hashlib.sha256(body).digest()


def _hostile_json(rng, like=None):
    r = rng.random()
    if r < 0.5 and isinstance(like, int) and not isinstance(like, bool):
        return like + pick(rng, [-1, 1, -like - 1, 1 << 20, 1 << 40, -(1 << 40)])
    if r < 0.7:
        return pick(rng, HOSTILE_INTS)
    if r < 0.8:
        return pick(rng, [1.5, -0.0, 1e300, "1", None, True, [], {}, [1, 2]])
    return pick(rng, ["NaN", "Infinity", "-Infinity"])  # replaced by bare JSON tokens below


def _edit_header(h: dict, rng) -> str:
    """One crafted edit of the JSON header; returns what was edited."""
    keys = ["tiles", "tiles", "tiles", "salts", "lut", "tile_next", "free_slots", "params",
            "ref_bits", "ref64", "payload_size", "runtime_cons", "dead_cons", "bake_config", "drop"]  # fmt: skip
    k = pick(rng, keys)
    if k == "tiles" and h["tiles"]:
        e = pick(rng, h["tiles"])
        f = pick(
            rng, ["slot", "offset", "size", "link_free", "ref", "x", "y", "layer", "record_pad"]
        )
        if f == "record_pad":
            e[f] = pick(rng, ["zz", "00" * 4, "0", None, 5])
        elif rng.random() < 0.3 and len(h["tiles"]) > 1:  # swap two tiles' values
            e2 = pick(rng, h["tiles"])
            e[f], e2[f] = e2[f], e[f]
        else:
            e[f] = _hostile_json(rng, e[f])
        return f"tiles.{f}"
    if k in ("salts", "lut", "tile_next", "free_slots") and h[k]:
        i = int(rng.integers(len(h[k])))
        if k == "tile_next" and rng.random() < 0.5:  # a cycle in the lookup chain
            h[k][i] = i if rng.random() < 0.5 else int(rng.integers(len(h[k])))
        elif rng.random() < 0.2:
            h[k] = h[k][:-1] if rng.random() < 0.5 else h[k] + [h[k][-1]]
        else:
            h[k][i] = _hostile_json(rng, h[k][i])
        return k
    if k == "params":
        f = pick(rng, ["orig", "tile_width", "tile_height", "max_tiles", "max_polys"])
        if f == "orig":
            h["params"]["orig"][int(rng.integers(3))] = pick(rng, ["NaN", 1e300, None, 1e30, -1e30])
        elif f in ("tile_width", "tile_height"):
            h["params"][f] = pick(rng, [0, -1.0, "NaN", 1e-30, 1e38, "Infinity", None])
        else:
            h["params"][f] = _hostile_json(rng, h["params"][f])
        return f"params.{f}"
    if k == "ref_bits":
        f = pick(rng, ["salt", "tile", "poly"])
        h["ref_bits"][f] = _hostile_json(rng, h["ref_bits"][f])
        return f"ref_bits.{f}"
    if k == "ref64":
        h["ref64"] = pick(rng, [not h["ref64"], None, "yes", 2])
        return "ref64"
    if k == "payload_size":
        h[k] = _hostile_json(rng, h[k])
        return k
    if k in ("runtime_cons", "dead_cons"):
        refs = [t["ref"] for t in h["tiles"]] or [1]
        if k == "runtime_cons":
            h[k] = [
                [
                    pick(rng, refs + [0, -1, 2**64]),
                    int(rng.integers(-2, 50)),
                    int(rng.integers(-2, 50)),
                ]
            ]
        else:
            h[k] = [pick(rng, refs + [0, -1, 2**70, "x"])]
        return k
    if k == "bake_config":
        h[k] = pick(rng, [{"cell_size": -1}, {"nope": 1}, "x", [1], {"tile_size": 1e300}])
        return k
    drop = pick(rng, ["tiles", "salts", "params", "lut", "payload_size"])
    h.pop(drop, None)
    return f"drop.{drop}"


def navkit_file_case(rng: np.random.Generator, index: int) -> None:
    from navkit.detour.io import navmesh_from_bytes
    from navkit.errors import FormatError

    files = navkit_files()
    data = files[pick(rng, sorted(files))]
    mode = rng.random()
    if mode < 0.25:  # byte flips, truncation, appended bytes: the checksum must catch them
        buf = bytearray(data)
        how = pick(rng, ["flip", "flip", "truncate", "append"])
        if how == "flip":
            for _ in range(int(rng.integers(1, 4))):
                buf[int(rng.integers(len(buf)))] ^= 1 << int(rng.integers(8))
        elif how == "truncate":
            buf = buf[: int(rng.integers(len(buf)))]
        else:
            buf += bytes(rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8))
        if bytes(buf) == data:
            return
        try:
            navmesh_from_bytes(bytes(buf))
        except FormatError:
            return
        raise WrongAnswer(f"a corrupted navkit file ({how}) loaded without FormatError")
    header, payload = _split(data)
    edits = []
    if mode < 0.65:
        for _ in range(int(rng.integers(1, 3))):
            try:
                edits.append(_edit_header(header, rng))
            except (KeyError, IndexError, TypeError):  # an earlier edit removed what this one needs
                continue
        hb = json.dumps(header).encode()
        for tok in ("NaN", "Infinity", "-Infinity"):
            hb = hb.replace(f'"{tok}"'.encode(), tok.encode())
        blob = _join(header, payload, raw_header=hb)
    else:
        ref64 = bool(header["ref64"])
        if header["tiles"]:
            e = pick(rng, header["tiles"])
            edits = edit_tile(payload, int(e["offset"]), ref64, rng, int(rng.integers(1, 4)))
        blob = _join(header, payload)
    nm = navmesh_from_bytes(blob)  # FormatError ends the case (a clean refusal)
    exercise(nm, rng, 4, geometry=False)


# -- Recast files --------------------------------------------------------------------------
def recast_file_case(rng: np.random.Generator, index: int) -> None:
    from navkit.detour.recast_format import navmesh_from_recast

    files = recast_files()
    if not files:
        from navkit.detour.recast_format import navmesh_to_recast

        from .common import navmeshes

        files = {k: navmesh_to_recast(nm) for k, nm in navmeshes().items()}
    data = files[pick(rng, sorted(files))]
    buf = bytearray(data)
    mode = rng.random()
    ref64 = len(buf) >= 60 and buf[56:60] == b"VAND"
    rec = 16 if ref64 else 8
    if mode < 0.3:
        for _ in range(int(rng.integers(1, 6))):
            buf[int(rng.integers(len(buf)))] ^= 1 << int(rng.integers(8))
    elif mode < 0.4:
        buf = buf[: int(rng.integers(len(buf)))]
    elif mode < 0.55:  # set header fields
        f = pick(rng, ["numTiles", "orig", "tw", "th", "maxTiles", "maxPolys", "recref", "recsize"])
        if f in ("numTiles", "maxTiles", "maxPolys"):
            _put(
                buf,
                {"numTiles": 8, "maxTiles": 32, "maxPolys": 36}[f],
                "<i",
                _rand_int_for("<i", rng, 1),
            )
        elif f in ("orig", "tw", "th"):
            _put(
                buf,
                {"orig": 12 + 4 * int(rng.integers(3)), "tw": 24, "th": 28}[f],
                "<f",
                _rand_float(rng),
            )
        elif f == "recref":
            _put(buf, 40, "<I", _rand_int_for("<I", rng, struct.unpack_from("<I", buf, 40)[0]))
        else:
            _put(
                buf,
                44 if not ref64 else 48,
                "<i",
                _rand_int_for("<i", rng, struct.unpack_from("<i", buf, 44)[0]),
            )
    else:  # crafted edits inside tile blobs (sizes kept)
        pos = 40
        n = struct.unpack_from("<i", buf, 8)[0]
        starts = []
        for _ in range(max(0, n)):
            if pos + rec > len(buf):
                break
            size = struct.unpack_from("<i", buf, pos + (12 if ref64 else 4))[0]
            starts.append(pos + rec)
            pos += rec + max(0, size)
        if starts:
            for _ in range(int(rng.integers(1, 3))):
                edit_tile(buf, pick(rng, starts), ref64, rng, int(rng.integers(1, 4)))
    nm = navmesh_from_recast(bytes(buf))
    exercise(nm, rng, 4, geometry=False)


# keep the hostile constants referenced (they are part of the module's vocabulary)
_ = (HOSTILE_OTHER, math, expect)
