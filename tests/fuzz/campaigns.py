"""The campaign registry and the per-case driver (seeding and classification)."""

from __future__ import annotations

import traceback
import zlib

import numpy as np

from . import c_ecm, c_files, c_geometry, c_query
from .common import WrongAnswer, navkit_files, navmeshes, recast_files

CASES = {
    "obj_text": c_geometry.obj_text_case,
    "arrays": c_geometry.arrays_case,
    "configs": c_geometry.configs_case,
    "navkit_file": c_files.navkit_file_case,
    "recast_file": c_files.recast_file_case,
    "query_args": c_query.query_args_case,
    "ecm_ops": c_ecm.ecm_ops_case,
    "optimal": c_ecm.optimal_case,
}
NAMES = list(CASES)


def _selftest_case(rng: np.random.Generator, index: int) -> None:
    """Index i produces class CLASSES[i] (checks the runner's classification)."""
    import os
    import signal
    import time

    from navkit.errors import InputError

    k = index % 7
    if k == 1:
        raise InputError("refused")
    if k == 2:
        raise TypeError("escaped")
    if k == 3:
        os.kill(os.getpid(), signal.SIGSEGV)
    if k == 4:
        time.sleep(3600)
    if k == 5:
        np.ones(1 << 40, np.uint8)
    if k == 6:
        raise WrongAnswer("wrong")


CASES["_selftest"] = _selftest_case  # not in NAMES: run only by the runner's own test


def case_rng(campaign: str, seed: int, index: int) -> np.random.Generator:
    """The case's generator: a pure function of (campaign, seed, index)."""
    return np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(campaign.encode()), index])


def setup(names: list[str]) -> None:
    """Build the fixtures the campaigns use and compile their kernels, once per worker.

    Only benign calls here (no fuzz case: a case that hangs must not stall start-up).
    """
    import navkit

    names = [n for n in (names or NAMES) if n in NAMES]
    if any(n in names for n in ("navkit_file", "recast_file", "query_args", "arrays")):
        recast_files()
        navkit_files()
        rng = np.random.default_rng(0)
        for nm in navmeshes().values():
            c_query.exercise(nm, rng, 3)
    if any(n in names for n in ("configs", "arrays")):
        navkit.bake(c_geometry._tiny_mesh(), navkit.BakeConfig())
        navkit.bake(c_geometry._tiny_mesh(), navkit.BakeConfig(tile_size=16))
    if "obj_text" in names:
        navkit.geometry.obj.parse_obj("v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n")
    if "ecm_ops" in names:
        from navkit.ecm import CorridorMap, map_difference

        m = CorridorMap.from_polygons(
            [[0, 0], [10, 0], [10, 6], [0, 6]], [[[4, 2], [5, 2], [5, 3]]]
        )
        h = m.insert_polygon([[1, 1], [2, 1], [1.5, 2]]).handle
        m.move(h, offset=[0.5, 0.5])
        m.insert_point([8, 4])
        m.remove(h)
        m.find_path([0.5, 0.5], [9.5, 5.5], clearance=0.1)
        map_difference(m, m.rebuilt())
    if "optimal" in names:
        from navkit.detour.optimal import find_optimal_path

        q, _ = c_ecm._grid_query(c_ecm._MAPS[0])
        find_optimal_path(q, q.find_random_point(rng=1).point, q.find_random_point(rng=2).point)


def run_case(campaign: str, seed: int, index: int, trace: bool = False) -> tuple[str, str]:
    """(class, detail) of one case; see the package docstring for the classes."""
    from navkit.errors import NavkitError

    rng = case_rng(campaign, seed, index)
    try:
        CASES[campaign](rng, index)
    except WrongAnswer:
        return "wrong", traceback.format_exc()
    except MemoryError:
        return "memory", traceback.format_exc()
    except NavkitError as exc:
        return "navkit_error", (
            traceback.format_exc() if trace else f"{type(exc).__name__}: {exc}"[:300]
        )
    except RecursionError:
        return "exception", traceback.format_exc()[-4000:]
    except Exception:  # noqa: BLE001 - that is what we count
        return "exception", traceback.format_exc()
    return "ok", ""
