"""Wavefront OBJ reading and writing (geometry only: ``v`` and ``f`` records).

Reading follows RecastDemo's conventions so that navkit bakes exactly the
triangles Recast bakes: fields are separated by any whitespace (spaces or tabs);
vertex coordinates are plain decimal numbers (``1e3``, ``-.5``; not ``1_000``),
parsed as doubles and stored as float32; faces may use the ``a``, ``a/b``, ``a/b/c`` and ``a//c`` forms and
negative (relative) indices; polygons are fanned into triangles
``(v0, v[i-1], v[i])``. Other records (``vn``, ``vt``, ``o``, ``g``, ``usemtl``...)
are ignored.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import FormatError, InputError
from .trimesh import MAX_COORD, TriMesh

__all__ = ["load_obj", "save_obj", "parse_obj"]

_INF = float("inf")


def parse_obj(text: str, *, name: str = "<string>") -> TriMesh:
    """Parse OBJ text into a :class:`TriMesh`.

    Parameters
    ----------
    text : str
        The file's contents.
    name : str
        Used in error messages and as the mesh's name.

    Raises
    ------
    FormatError
        A malformed ``v`` or ``f`` record (non-numeric field, too few values,
        index 0 or outside the vertices defined so far), or no geometry at all.
        Numbers are read as C reads them: ``1_000`` and non-ASCII digits are not
        numbers.
    InputError
        A NaN, infinite or out-of-range (beyond 1e7) coordinate; the message
        gives ``name:line`` and the vertex index.
    """
    verts: list[float] = []
    vline: list[int] = []  # the line of each vertex, for error messages
    tris: list[int] = []
    n_records = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        parts = raw.split(None, 1)  # any whitespace separates, as in Recast's reader
        if not parts:
            continue
        tag = parts[0]
        rest = parts[1] if len(parts) > 1 else ""
        if tag == "v":
            n_records += 1
            fields = rest.split()
            if len(fields) < 3:
                raise FormatError(f"{name}:{lineno}: vertex needs 3 coordinates: {raw.strip()!r}")
            xyz = []
            for tok in fields[:3]:
                try:
                    c = float(tok)
                except ValueError:
                    c = None
                if c is None or "_" in tok or not tok.isascii():  # Python-only forms
                    raise FormatError(
                        f"{name}:{lineno}: non-numeric vertex coordinate {tok!r}: {raw.strip()!r}"
                    )
                if c != c or c in (_INF, -_INF):
                    kind = "a NaN" if c != c else "an infinite"
                    raise InputError(
                        f"{name}:{lineno}: vertex {len(vline)} has {kind} coordinate: {tok!r}"
                    )
                if not -MAX_COORD <= c <= MAX_COORD:
                    raise InputError(
                        f"{name}:{lineno}: vertex {len(vline)} lies beyond +-{MAX_COORD:g} wu; "
                        "float32 cannot bake it precisely"
                    )
                xyz.append(c)
            verts.extend(xyz)
            vline.append(lineno)
        elif tag == "f":
            n_records += 1
            nv = len(vline)
            idx: list[int] = []
            for tok in rest.split():
                head = tok.split("/", 1)[0]
                try:
                    vi = int(head)
                except ValueError:
                    vi = None
                if vi is None or "_" in head or not head.isascii():
                    raise FormatError(f"{name}:{lineno}: non-numeric face index {tok!r}")
                if vi == 0:
                    raise FormatError(f"{name}:{lineno}: face index 0 (OBJ indices start at 1)")
                vi = vi + nv if vi < 0 else vi - 1
                if vi < 0 or vi >= nv:
                    raise FormatError(
                        f"{name}:{lineno}: face index {head} out of range "
                        f"({nv} vertices defined so far)"
                    )
                idx.append(vi)
            if len(idx) < 3:
                raise FormatError(
                    f"{name}:{lineno}: a face needs at least 3 vertices: {raw.strip()!r}"
                )
            a = idx[0]
            for i in range(2, len(idx)):
                tris.extend((a, idx[i - 1], idx[i]))
    if n_records == 0:
        raise FormatError(f"{name}: not an OBJ mesh (no 'v' or 'f' records)")
    v = np.asarray(verts, dtype=np.float64).reshape(-1, 3)
    t = np.asarray(tris, dtype=np.int64).reshape(-1, 3)
    try:
        return TriMesh.from_arrays(v, t, name=name)
    except InputError as exc:
        raise InputError(f"{name}: {exc}") from None


def load_obj(path: str | os.PathLike[str]) -> TriMesh:
    """Read a Wavefront OBJ file into a :class:`TriMesh`.

    Parameters
    ----------
    path : str or PathLike
        The ``.obj`` file.

    Returns
    -------
    TriMesh
        float32 vertices, int32 triangles, in file order.

    Raises
    ------
    InputError
        The file is missing or unreadable, or its coordinates are NaN/infinite.
    FormatError
        The file is not an OBJ mesh or has malformed records.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, not an OBJ file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if b"\x00" in data[:4096]:
        raise FormatError(f"{p}: not an OBJ file (binary data)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_obj(text, name=p.name)


def save_obj(mesh: TriMesh, path: str | os.PathLike[str]) -> None:
    """Write a mesh as OBJ, atomically (a temporary file renamed into place).

    Vertices are written with 9 significant digits, enough to round-trip float32.
    """
    from .._io import atomic_write_bytes

    lines = [f"# {mesh.name}: {mesh.n_vertices} vertices, {mesh.n_triangles} triangles"]
    lines += [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in mesh.vertices.tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in mesh.triangles.tolist()]
    atomic_write_bytes(path, ("\n".join(lines) + "\n").encode())
