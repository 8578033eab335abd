"""Shared pieces of the campaigns: fixtures, hostile values, the query oracles."""

from __future__ import annotations

import math
import os
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


class WrongAnswer(AssertionError):
    """An oracle check failed: navkit returned a plausible but wrong answer."""


def expect(ok: bool, msg: str) -> None:
    if not ok:
        raise WrongAnswer(msg)


def shared_dir() -> Path | None:
    """The shared reference folder (``$NAVKIT_SHARED`` or ``../shared``), or None."""
    env = os.environ.get("NAVKIT_SHARED")
    for p in ([Path(env)] if env else []) + [ROOT.parent / "shared"]:
        if (p / "peer" / "results").is_dir():
            return p
    return None


# -- fixtures (built once per worker) ------------------------------------------------------
@cache
def recast_files() -> dict[str, bytes]:
    """Recast navmesh sets: the peer's exports and the port fixtures (empty without shared)."""
    sd = shared_dir()
    out: dict[str, bytes] = {}
    if sd is None:
        return out
    for name in (
        "dungeon.solo.navmesh.bin",
        "dungeon.offmesh.tiled.navmesh.bin",
        "nav_test.tiled.navmesh.bin",
        "undulating.solo.navmesh.bin",
    ):
        p = sd / "peer" / "results" / name
        if p.is_file():
            out[name] = p.read_bytes()
    pf = sd / "data" / "port_fixtures"
    for name in ("dungeon_all_tiles_navmesh.bin", "dungeon_all_tiles_navmesh_32bit.bin"):
        if (pf / name).is_file():
            out[name] = (pf / name).read_bytes()
    return out


@cache
def navmeshes() -> dict[str, object]:
    """Navmeshes to query: Recast's exports when shared is present, else own bakes."""
    import navkit
    from navkit.detour.recast_format import navmesh_from_recast

    files = recast_files()
    out: dict[str, object] = {}
    for name in ("dungeon.solo.navmesh.bin", "dungeon.offmesh.tiled.navmesh.bin",
                 "nav_test.tiled.navmesh.bin"):  # fmt: skip
        if name in files:
            out[name] = navmesh_from_recast(files[name])
    if not out:
        lvl = navkit.sample_level()
        out["sample.solo"] = navkit.bake(lvl, navkit.BakeConfig())
        out["sample.tiled"] = navkit.bake(lvl, navkit.BakeConfig(tile_size=32))
    return out


@cache
def navkit_files() -> dict[str, bytes]:
    from navkit.detour.io import navmesh_to_bytes

    return {k: navmesh_to_bytes(nm) for k, nm in navmeshes().items()}


def pick(rng: np.random.Generator, seq):
    return seq[int(rng.integers(len(seq)))]


# -- hostile values ------------------------------------------------------------------------
F32_MAX = float(np.finfo(np.float32).max)
HOSTILE_FLOATS = [
    0.0, -0.0, -1.0, 1e-45, 1e-38, 1e-30, 1e-7, 0.5, 1e7, 1e8, 1e30, 1e38, F32_MAX,
    3.5e38, 1e300, math.inf, -math.inf, math.nan, -1e30,
]  # fmt: skip
HOSTILE_INTS = [
    0, -1, 1, 2, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32, 2**53, 2**63 - 1, 2**63,
    2**64 - 1, 2**64, -(2**31), -(2**63), 10**30,
]  # fmt: skip
HOSTILE_OTHER = [None, "1", "abc", [1], (), {}, b"\x00", object(), 1.5, True, complex(1, 1)]


def hostile_scalar(rng: np.random.Generator):
    r = rng.random()
    if r < 0.4:
        return pick(rng, HOSTILE_FLOATS)
    if r < 0.75:
        return pick(rng, HOSTILE_INTS)
    if r < 0.85:
        v = pick(rng, HOSTILE_FLOATS + HOSTILE_INTS[:12])
        make = pick(rng, [np.float32, np.float64, np.int64, np.float16])
        try:
            return make(v if abs(v) < 6e4 or not math.isfinite(v) else 1.0)
        except (OverflowError, ValueError):  # np.int64(inf) / np.int64(nan)
            return v
    return pick(rng, HOSTILE_OTHER)


# -- query oracles -------------------------------------------------------------------------
def mesh_points(q, rng: np.random.Generator, n: int) -> np.ndarray:
    """n random points near the navmesh (vertices jittered), finite float32."""
    v = np.asarray(q.view.verts, np.float64)
    v = v[np.all(np.isfinite(v), axis=1)]
    v = v[np.all(np.abs(v) < 1e6, axis=1)]
    if v.shape[0] == 0:
        return rng.uniform(-10, 10, (n, 3)).astype(np.float32)
    p = v[rng.integers(v.shape[0], size=n)] + rng.normal(0, 1.5, (n, 3)) * [1, 0.3, 1]
    return p.astype(np.float32)


def check_ref(q, ref, what: str, flt=None) -> None:
    expect(q.is_valid_poly_ref(int(ref), flt), f"{what}: returned ref {int(ref):#x} is not valid")


def check_finite(a, what: str) -> None:
    a = np.asarray(a, np.float64)
    expect(bool(np.all(np.isfinite(a))), f"{what}: non-finite values {a.ravel()[:9].tolist()}")


def adjacent(nm, a: int, b: int) -> bool:
    return any(t == b for t, *_ in nm.links_of(a))


def check_corridor(q, polys, what: str) -> None:
    polys = [int(r) for r in np.asarray(polys).ravel()]
    for r in polys:
        check_ref(q, r, what)
    for a, b in zip(polys[:-1], polys[1:]):
        expect(a == b or adjacent(q.navmesh, a, b),
               f"{what}: consecutive polygons {a:#x} -> {b:#x} are not linked")  # fmt: skip


def check_on_poly(q, ref, pt, what: str, tol: float = 1e-2) -> None:
    """pt lies on polygon ref in xz (within tol, scaled by the coordinates)."""
    pt = np.asarray(pt, np.float32)
    cp = q.closest_point_on_poly_boundary(int(ref), pt)
    d = float(np.hypot(cp[0] - pt[0], cp[2] - pt[2]))
    scale = 1.0 + float(np.abs(pt).max())
    expect(d <= tol * scale, f"{what}: point {pt.tolist()} is {d:g} off polygon {int(ref):#x}")


def roundtrip_equal(nm, bake_config=None) -> None:
    """The navkit file of nm loads back to a navmesh whose file is the same (build stats aside)."""
    import json
    import struct

    from navkit.detour.io import navmesh_from_bytes, navmesh_to_bytes

    def parts(b: bytes):
        n = struct.unpack_from("<I", b, 12)[0]
        h = json.loads(b[16 : 16 + n])
        h["stats"].pop("build", None)
        return h, b[16 + n : -32]

    b1 = navmesh_to_bytes(nm, bake_config=bake_config)
    nm2 = navmesh_from_bytes(b1)
    b2 = navmesh_to_bytes(nm2, bake_config=nm2.bake_config)
    expect(parts(b1) == parts(b2), "navkit file does not round-trip equal")
