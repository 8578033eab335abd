"""navkit's own navmesh file: the exact runtime state, a JSON header and a checksum.

Layout (little-endian)::

    offset  size  field
    0       8     magic b"NAVKITNM"
    8       4     u32 format version (FORMAT_VERSION)
    12      4     u32 header length H
    16      H     header: UTF-8 JSON
    16+H    P     payload: the tile blobs, one after another (Detour tile layout,
                  links included, see recast_format.tile_to_bytes)
    end-32  32    SHA-256 of every byte before it

The JSON header holds the navmesh params and ref layout, the navkit version,
``stats()``, the bake config if one was given, and the tile table: per live
slot its ref, (x, y, layer), blob offset and size and its free-link head; plus
every slot's salt, the free-slot order and the position-lookup chains. Loading
puts each tile back in its slot without rebuilding links, so refs, links and
free lists are exactly as saved (a Recast export after a reload gives the same
bytes). Files are written atomically (``navkit._io.atomic_write_bytes``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from .._io import atomic_write_bytes, pack_container, unpack_container
from ..errors import FormatError, InputError, NavkitError
from . import _links as L
from ._validate import check_links, check_tile, check_tile_chains
from .navmesh import NavMesh, NavMeshParams
from .recast_format import tile_from_bytes, tile_to_bytes

__all__ = ["MAGIC", "FORMAT_VERSION", "save_navmesh", "load_navmesh"]

MAGIC = b"NAVKITNM"
FORMAT_VERSION = 1


def _config_dict(cfg: Any) -> Any:
    if cfg is None:
        return None
    if hasattr(cfg, "to_dict"):
        return cfg.to_dict()
    if isinstance(cfg, dict):
        return cfg
    raise InputError("bake_config must be a BakeConfig or a dict")


def navmesh_to_bytes(nm: NavMesh, *, bake_config: Any = None) -> bytes:
    """The navkit file image of ``nm`` (see the module docstring)."""
    from .. import __version__

    slots = nm.tile_slots()
    blobs = []
    table = []
    off = 0
    t = nm._t
    for s in slots:
        b = tile_to_bytes(nm.tile_data(s), ref64=nm.ref64)
        head = int(t["tile_link_free"][s])
        table.append(
            {
                "slot": s,
                "ref": nm.tile_ref(s),
                "x": int(t["tile_x"][s]),
                "y": int(t["tile_y"][s]),
                "layer": int(t["tile_layer"][s]),
                "offset": off,
                "size": len(b),
                "link_free": -1 if head < 0 else head - int(t["tile_link_base"][s]),
                "record_pad": nm._record_pad.get(s, b"").hex(),
            }
        )
        blobs.append(b)
        off += len(b)
    p = nm.params
    header = {
        "navkit_version": __version__,
        "params": {
            "orig": list(p.orig),
            "tile_width": p.tile_width,
            "tile_height": p.tile_height,
            "max_tiles": p.max_tiles,
            "max_polys": p.max_polys,
        },
        "ref64": nm.ref64,
        "ref_bits": {"salt": nm.salt_bits, "tile": nm.tile_bits, "poly": nm.poly_bits},
        "stats": nm.stats(),
        "bake_config": _config_dict(bake_config),
        "tiles": table,
        "salts": [int(v) for v in t["tile_salt"]],
        "free_slots": list(nm._free_slots),
        "lut": [int(v) for v in nm._lut],
        "tile_next": [int(v) for v in t["tile_next"]],
        "payload_size": off,
        "runtime_cons": [[r, s0, s1] for r, (s0, s1) in nm._runtime_cons.items()],
        "dead_cons": sorted(nm._dead_cons),
    }
    return pack_container(MAGIC, FORMAT_VERSION, header, b"".join(blobs))


def save_navmesh(nm: NavMesh, path: str | os.PathLike[str], *, bake_config: Any = None) -> None:
    """Write ``nm`` to ``path`` atomically in navkit's format."""
    atomic_write_bytes(path, navmesh_to_bytes(nm, bake_config=bake_config))


def navmesh_from_bytes(data: bytes, what: str = "data") -> NavMesh:
    """Rebuild a :class:`NavMesh` from a navkit file image.

    Raises
    ------
    FormatError
        Not a navkit navmesh, unsupported version, truncated, checksum mismatch
        or inconsistent contents.
    """
    h, payload = unpack_container(data, MAGIC, FORMAT_VERSION, "navmesh", what)
    try:
        pp = h["params"]
        params = NavMeshParams(
            tuple(pp["orig"]), pp["tile_width"], pp["tile_height"], pp["max_tiles"], pp["max_polys"]
        )
        nm = NavMesh(params, ref64=bool(h["ref64"]))
        t = nm._t
        salts = np.asarray(h["salts"], np.int64)
        nxt = np.asarray(h["tile_next"], np.int64)
        lut = np.asarray(h["lut"], np.int64)
        mt = params.max_tiles
        if salts.shape != (mt,) or nxt.shape != (mt,) or lut.shape != nm._lut.shape:
            raise FormatError(f"{what}: tile table sizes do not match max_tiles")
        if ((nxt < -1) | (nxt >= mt)).any() or ((lut < -1) | (lut >= mt)).any():
            raise FormatError(f"{what}: tile lookup chain out of range")
        if (salts < 1).any() or (salts >= (1 << nm.salt_bits)).any():
            raise FormatError(f"{what}: salt out of range")
        t["tile_salt"][:] = salts
        t["tile_next"][:] = nxt
        nm._lut[:] = lut
        free = [int(s) for s in h["free_slots"]]
        live = set()
        positions: set[tuple[int, int, int]] = set()
        for e in h["tiles"]:
            s, o, n = int(e["slot"]), int(e["offset"]), int(e["size"])
            if not 0 <= s < mt or s in live or o < 0 or n < 0 or o + n > len(payload):
                raise FormatError(f"{what}: bad tile table entry {e}")
            td = tile_from_bytes(payload[o : o + n], ref64=nm.ref64, what=f"{what}: tile {s}")
            try:
                check_tile(td)
            except InputError as exc:
                raise FormatError(f"{what}: tile {s}: {exc}") from None
            if (td.x, td.y, td.layer) in positions:
                raise FormatError(
                    f"{what}: tile {s}: a second tile at ({td.x}, {td.y}, {td.layer})"
                )
            positions.add((td.x, td.y, td.layer))
            if nm.decode_ref(int(e["ref"])) != (int(salts[s]), s, 0):
                raise FormatError(f"{what}: tile {s} ref does not match its slot and salt")
            nm._store(s, td)
            head = int(e["link_free"])
            if not -1 <= head < td.max_link_count:
                raise FormatError(f"{what}: tile {s} free-link head out of range")
            t["tile_link_free"][s] = -1 if head < 0 else head + int(t["tile_link_base"][s])
            if e.get("record_pad"):
                nm._record_pad[s] = bytes.fromhex(e["record_pad"])
            live.add(s)
        if sorted(free + sorted(live)) != list(range(mt)):
            raise FormatError(f"{what}: free slots and tiles do not partition the tile table")
        nm._free_slots = free
        nm._runtime_cons = {int(r): (int(a), int(b)) for r, a, b in h.get("runtime_cons", [])}
        nm._dead_cons = {int(r) for r in h.get("dead_cons", [])}
        for r, (s0, s1) in nm._runtime_cons.items():
            # remove_tile / remove_off_mesh_connection index the tile table with these.
            if (
                not nm.is_valid_poly_ref(r)
                or nm.get_poly_type(r) != 1
                or nm.decode_ref(r)[1] != s0
                or s1 not in live
            ):
                raise FormatError(f"{what}: runtime off-mesh connection {r:#x} is inconsistent")
        try:
            check_tile_chains(
                nm._lut, t["tile_next"], t["tile_used"], t["tile_x"], t["tile_y"], t["tile_layer"]
            )
        except InputError as exc:
            raise FormatError(f"{what}: {exc}") from None
        a = nm.arrays()
        L.resolve_link_polys(a, nm._used["link"], nm.salt_bits, nm.tile_bits, nm.poly_bits)
        try:
            check_links(a)
        except InputError as exc:
            raise FormatError(f"{what}: {exc}") from None
        nm.bake_config = h.get("bake_config")  # type: ignore[attr-defined]
        nm.file_header = h  # type: ignore[attr-defined]
        return nm
    except FormatError:
        raise
    except (
        NavkitError,
        KeyError,
        TypeError,
        ValueError,
        OverflowError,
        UnicodeDecodeError,
        RecursionError,
        AttributeError,
        IndexError,
    ) as exc:
        raise FormatError(f"{what}: inconsistent navkit navmesh: {exc}") from None


def load_navmesh(path: str | os.PathLike[str]) -> NavMesh:
    """Read a navmesh written by :func:`save_navmesh`."""
    p = Path(os.fspath(path))
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return navmesh_from_bytes(data, str(p))
