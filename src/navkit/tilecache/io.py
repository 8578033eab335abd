"""navkit's own tile-cache file: the layers, the obstacles and their pending work, a checksum.

Layout (little-endian)::

    offset  size  field
    0       8     magic b"NAVKITTC"
    8       4     u32 format version (FORMAT_VERSION)
    12      4     u32 header length H
    16      H     header: UTF-8 JSON
    16+H    P     payload: zlib (level 6) of every layer, one after another:
                  the 56-byte ``dtTileCacheLayerHeader`` then the raw
                  ``heights | areas | cons`` grids (``3 * width * height`` bytes)
    end-32  32    SHA-256 of every byte before it

The JSON header holds the navmesh and cache params, the layer table (ref and
payload offset/size of each layer, in the set's order) and the obstacle table
exactly as :class:`~navkit.tilecache.update.CacheState` keeps it: every slot's
salt, state, free-list link, shape, touched and pending layers, the free-list
head, the queued requests and the pending rebuilds, the mode (``recast_compatible``;
true when absent) and the off-mesh connections of the default mode. Handles stay valid across a
save and a load, and the next :meth:`~navkit.TileCache.update` does what it would
have done. Layers are stored raw under zlib, not as FastLZ streams: zlib-6 takes
about half of FastLZ's bytes (``bench/tilecache.py``); loading recompresses them
with FastLZ, which gives Recast's bytes again (``to_recast`` is unchanged).

The navmesh is not stored: loading builds every layer with the obstacles applied
to it, so poly refs differ from the saved cache's (the polygons are the same).
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .._io import atomic_write_bytes, pack_container, unpack_container
from ..detour.navmesh import NavMeshParams
from ..detour.tile import OffMeshConnections
from ..errors import FormatError, InputError, NavkitError
from . import fastlz
from .format import (
    LAYER_HEADER_SIZE,
    CompressedTile,
    TileCacheParams,
    TileCacheSet,
    _header_from_bytes,
    _header_to_bytes,
    tile_cache_from_bytes,
    tile_cache_to_bytes,
)
from .obstacles import BOX, CYLINDER, ORIENTED_BOX, PRISM, Obstacle
from .update import ADD, EMPTY, MAX_REQUESTS, MAX_UPDATE, MOVE, REMOVE, REMOVING

if TYPE_CHECKING:
    from .cache import TileCache

__all__ = [
    "MAGIC",
    "FORMAT_VERSION",
    "cache_to_bytes",
    "cache_from_bytes",
    "save_cache",
    "load_cache",
    "is_cache_file",
]

MAGIC = b"NAVKITTC"
FORMAT_VERSION = 1
ZLIB_LEVEL = 6
_KINDS = {CYLINDER: "cylinder", BOX: "box", ORIENTED_BOX: "oriented_box", PRISM: "prism"}
_KIND_OF = {v: k for k, v in _KINDS.items()}


def _f32list(a: np.ndarray) -> list:
    return np.asarray(a, np.float32).astype(np.float64).tolist()


def _shape_dict(s: Obstacle) -> dict:
    return {
        "kind": _KINDS[int(s.kind)],
        "a": _f32list(s.a),
        "b": _f32list(s.b),
        "rot": _f32list(s.rot),
        "points": _f32list(s.points),
        "area": int(s.area),
    }


def _shape_from(d: dict) -> Obstacle:
    pts = np.asarray(d["points"], np.float32).reshape(-1, 2)
    a = np.asarray(d["a"], np.float32)
    b = np.asarray(d["b"], np.float32)
    rot = np.asarray(d["rot"], np.float32)
    if a.shape != (3,) or b.shape != (3,) or rot.shape != (2,):
        raise FormatError("obstacle shape arrays have the wrong size")
    if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(rot).all()):
        raise FormatError("obstacle shape is not finite")
    area = int(d["area"])
    if not 0 <= area <= 63:
        raise FormatError(f"obstacle area {area} outside 0..63")
    kind = _KIND_OF[d["kind"]]
    if kind == PRISM and pts.shape[0] < 3:
        raise FormatError("prism obstacle with fewer than 3 points")
    return Obstacle(kind, a, b, rot, pts, area)


def _offmesh_dict(cons: OffMeshConnections | None) -> list[dict] | None:
    if cons is None:
        return None
    return [
        {
            "start": [float(v) for v in cons.verts[i, :3]],
            "end": [float(v) for v in cons.verts[i, 3:]],
            "radius": float(cons.rad[i]),
            "bidirectional": bool(cons.bidirectional[i]),
            "area": int(cons.area[i]),
            "flags": int(cons.flags[i]),
            "userId": int(cons.user_id[i]),
        }
        for i in range(len(cons.rad))
    ]


def cache_to_bytes(cache: TileCache) -> bytes:
    """The navkit file image of ``cache`` (see the module docstring)."""
    from .. import __version__

    st = cache._state
    tset = st.tset
    raw_parts = []
    table = []
    off = 0
    for t in tset.tiles:
        h = t.header
        raw = fastlz.decompress(t.data[LAYER_HEADER_SIZE:], 3 * h.width * h.height)
        rec = bytes(t.data[:LAYER_HEADER_SIZE]) + bytes(raw)
        table.append([int(t.ref), off, len(rec)])
        raw_parts.append(rec)
        off += len(rec)
    payload = zlib.compress(b"".join(raw_parts), ZLIB_LEVEL)
    nav, p = tset.navmesh_params, tset.params
    # the slot table as columns; shapes and layer lists of the non-empty slots only
    obs = {
        "salt": [ob.salt for ob in st.obs],
        "state": [ob.state for ob in st.obs],
        "next": [ob.next for ob in st.obs],
        "live": {
            str(i): {
                "shape": _shape_dict(ob.shape),
                "touched": list(ob.touched),
                "pending": list(ob.pending),
            }
            for i, ob in enumerate(st.obs)
            if ob.shape is not None
        },
    }
    header = {
        "navkit_version": __version__,
        "codec": f"zlib-{ZLIB_LEVEL}",
        "navmesh_params": {
            "orig": list(nav.orig),
            "tile_width": nav.tile_width,
            "tile_height": nav.tile_height,
            "max_tiles": nav.max_tiles,
            "max_polys": nav.max_polys,
        },
        "params": p._asdict(),
        "layers": table,
        "raw_size": off,
        "payload_size": len(payload),
        "obstacles": obs,
        "next_free": st.next_free,
        "requests": [list(r) for r in st.reqs],
        "update": list(st.update),
        "recast_compatible": bool(st.compatible),
        "offmesh": _offmesh_dict(st.offmesh),
    }
    return pack_container(MAGIC, FORMAT_VERSION, header, payload)


def save_cache(cache: TileCache, path: str | os.PathLike[str]) -> None:
    """Write ``cache`` to ``path`` atomically in navkit's tile-cache format."""
    atomic_write_bytes(path, cache_to_bytes(cache))


def _tset_from(h: dict, payload: bytes, what: str) -> TileCacheSet:
    raw = zlib.decompress(payload)
    if len(raw) != h["raw_size"]:
        raise FormatError(f"{what}: layers are {len(raw)} bytes, header says {h['raw_size']}")
    pp = h["navmesh_params"]
    nav = NavMeshParams(
        tuple(pp["orig"]), pp["tile_width"], pp["tile_height"], pp["max_tiles"], pp["max_polys"]
    )
    cp = dict(h["params"])
    cp["orig"] = tuple(cp["orig"])
    params = TileCacheParams(**cp)
    tiles = []
    for k, (ref, off, size) in enumerate(h["layers"]):
        if not (0 <= off and LAYER_HEADER_SIZE <= size and off + size <= len(raw)):
            raise FormatError(f"{what}: layer {k} range {off}+{size} outside the layers")
        rec = raw[off : off + size]
        hd = _header_from_bytes(rec, f"{what}: layer {k}")
        if size != LAYER_HEADER_SIZE + 3 * hd.width * hd.height:
            raise FormatError(f"{what}: layer {k} is {size} bytes, its header needs more or less")
        data = _header_to_bytes(hd) + fastlz.compress(rec[LAYER_HEADER_SIZE:])
        tiles.append(CompressedTile(int(ref), hd, data))
    # the TSET reader checks params, refs, positions and streams
    return tile_cache_from_bytes(tile_cache_to_bytes(TileCacheSet(nav, params, tuple(tiles))))


def _restore(cache: TileCache, h: dict, what: str) -> None:
    st = cache._state
    refs = set(st.tiles)
    obs = h["obstacles"]
    n = st.max_obstacles
    if not len(obs["salt"]) == len(obs["state"]) == len(obs["next"]) == n:
        raise FormatError(f"{what}: the obstacle table does not have {n} slots (max_obstacles)")
    live = {int(k): v for k, v in obs["live"].items()}
    for i in range(n):
        ob = st.obs[i]
        salt, state, nxt = int(obs["salt"][i]), int(obs["state"][i]), int(obs["next"][i])
        if not (1 <= salt <= 0xFFFF and EMPTY <= state <= REMOVING and -1 <= nxt < n):
            raise FormatError(f"{what}: obstacle slot {i}: salt/state/next out of range")
        d = live.get(i)
        if (d is None) != (state == EMPTY):
            raise FormatError(f"{what}: obstacle slot {i}: shape and state disagree")
        ob.salt, ob.state, ob.next = salt, state, nxt
        ob.shape, ob.touched, ob.pending = None, [], []
        if d is not None:
            touched = [int(r) for r in d["touched"]]
            pending = [int(r) for r in d["pending"]]
            if not set(touched) <= refs or not set(pending) <= refs:
                raise FormatError(f"{what}: obstacle slot {i} names unknown layers")
            ob.shape = _shape_from(d["shape"])
            ob.touched, ob.pending = touched, pending
    if not set(live) <= set(range(n)):
        raise FormatError(f"{what}: obstacle slots outside 0..{n - 1}")
    nf = int(h["next_free"])
    if not -1 <= nf < n:
        raise FormatError(f"{what}: free-list head {nf} out of range")
    seen = set()
    i = nf
    while i >= 0:  # the free list visits empty slots only, once each
        if i in seen or st.obs[i].state != EMPTY:
            raise FormatError(f"{what}: the obstacle free list is broken at slot {i}")
        seen.add(i)
        i = st.obs[i].next
    st.next_free = nf
    reqs = [(int(a), int(r)) for a, r in h["requests"]]
    upd = [int(r) for r in h["update"]]
    if (st.compatible and len(reqs) > MAX_REQUESTS) or any(
        a not in (ADD, REMOVE, MOVE) for a, _ in reqs
    ):
        raise FormatError(f"{what}: bad request queue")
    if (
        (st.compatible and len(upd) > MAX_UPDATE)
        or not set(upd) <= refs
        or len(set(upd)) != len(upd)
    ):
        raise FormatError(f"{what}: bad rebuild queue")
    st.reqs, st.update = reqs, upd
    st.removal_queued = {r for a, r in reqs if a == REMOVE}
    st.reindex()
    # the navmesh: every layer with an applied obstacle is rebuilt with it
    applied = sorted(
        {r for ob in st.obs if ob.state not in (EMPTY, REMOVING) for r in ob.touched},
        key=list(st.tiles).index,
    )
    for ref in applied:
        st.build_tile(ref, [])


def cache_from_bytes(data: bytes, what: str = "data") -> TileCache:
    """A :class:`~navkit.TileCache` from a navkit file image.

    Raises
    ------
    FormatError
        Not a navkit tile-cache file, unsupported version, truncated, checksum
        mismatch or inconsistent contents.
    """
    from .cache import TileCache

    data = bytes(data)
    h, payload = unpack_container(data, MAGIC, FORMAT_VERSION, "tile-cache", what)
    try:
        if h.get("codec") != f"zlib-{ZLIB_LEVEL}":
            raise FormatError(f"{what}: unknown codec {h.get('codec')!r}")
        tset = _tset_from(h, payload, what)
        compat = h.get("recast_compatible", True)
        if not isinstance(compat, bool):
            raise FormatError(f"{what}: recast_compatible must be true or false")
        cache = TileCache(tset, recast_compatible=compat, offmesh=h.get("offmesh"))
        _restore(cache, h, what)
        return cache
    except FormatError:
        raise
    except (NavkitError, KeyError, TypeError, ValueError, IndexError, zlib.error) as exc:
        raise FormatError(f"{what}: inconsistent navkit tile cache: {exc}") from None


def load_cache(path: str | os.PathLike[str]) -> TileCache:
    """Read a navkit tile-cache file (see :func:`cache_from_bytes`)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return cache_from_bytes(data, str(p))


def is_cache_file(data: bytes) -> bool:
    """Whether ``data`` starts with the navkit tile-cache magic."""
    return data[:8] == MAGIC
