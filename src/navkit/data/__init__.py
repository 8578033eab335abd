"""Small sample inputs shipped with navkit, to try every part of it without other files.

========================  ===============================================================
``dungeon.obj``           RecastDemo's dungeon: stairs, bridges, a two-level castle (zlib)
``nav_test.obj``          RecastDemo's test level: several storeys, ramps, overhangs (zlib)
``undulating.obj``        RecastDemo's rolling terrain (zlib)
``arena.map``             Moving AI grid benchmark map (Dragon Age: Origins, 49 x 49)
``scene.json``            a 2D scene for the Explicit Corridor Map: boundary and obstacles
========================  ===============================================================

The three levels are RecastDemo's sample meshes, unchanged, under recastnavigation's
zlib licence (``LICENSE-recastnavigation.txt`` beside them); ``arena.map`` is free
for research use (``ATTRIBUTION-movingai.txt``).

>>> import navkit
>>> mesh = navkit.load_obj(navkit.data.path("dungeon.obj"))
>>> mesh = navkit.data.load_mesh("dungeon")  # the same

On the command line, ``navkit data`` lists the files and ``navkit data path NAME``
prints where one is.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["path", "names", "load_mesh", "load_scene", "load_grid", "DESCRIPTIONS"]

#: file name -> one line saying what it is
DESCRIPTIONS: dict[str, str] = {
    "dungeon.obj": "RecastDemo's dungeon level (stairs, bridges, a castle; 3D)",
    "nav_test.obj": "RecastDemo's multi-storey test level (ramps, overhangs; 3D)",
    "undulating.obj": "RecastDemo's rolling terrain (3D)",
    "arena.map": "Moving AI grid map, Dragon Age: Origins 'arena' (49 x 49 cells)",
    "scene.json": "2D scene for the corridor map: a boundary and three obstacles",
}


def names() -> list[str]:
    """The names of the sample files, e.g. ``["arena.map", "dungeon.obj", ...]``."""
    return sorted(DESCRIPTIONS)


def _resolve(name: str) -> str:
    if not isinstance(name, str):
        raise InputError(f"sample name must be a string, got {type(name).__name__}")
    if name in DESCRIPTIONS:
        return name
    stems = [n for n in DESCRIPTIONS if n.rsplit(".", 1)[0] == name]
    if len(stems) == 1:
        return stems[0]
    raise InputError(f"no sample named {name!r}; the samples are: {', '.join(names())}")


def path(name: str) -> Path:
    """The file of a sample on disk.

    Parameters
    ----------
    name : str
        A name from :func:`names`, with or without its suffix (``"dungeon"``
        is ``"dungeon.obj"``).

    Returns
    -------
    pathlib.Path
        An existing file inside the installed package (read it, do not write it).

    Raises
    ------
    InputError
        No sample has that name (the message lists them).
    """
    fname = _resolve(name)
    ref = resources.files(__name__).joinpath(fname)
    p = Path(str(ref))
    if not p.is_file():  # pragma: no cover - a broken install (package data left out)
        raise InputError(f"sample {fname} is missing from the installed package at {p}")
    return p


def load_mesh(name: str):
    """Read a sample level (``"dungeon"``, ``"nav_test"``, ``"undulating"``) as a TriMesh."""
    from ..geometry import load_obj

    fname = _resolve(name)
    if not fname.endswith(".obj"):
        raise InputError(f"{fname} is not a level (.obj); the levels are: "
                         f"{', '.join(n for n in names() if n.endswith('.obj'))}")  # fmt: skip
    return load_obj(path(fname))


def load_grid(name: str = "arena"):
    """Read the sample Moving AI map as an (H, W) bool array, True = blocked."""
    from ..geometry import load_movingai_map

    return load_movingai_map(path(name))


def load_scene(name: str = "scene") -> dict[str, Any]:
    """Read the sample 2D scene: ``{"boundary": [[x, y], ...], "obstacles": [[[x, y], ...], ...]}``."""
    return json.loads(path(name).read_text())
