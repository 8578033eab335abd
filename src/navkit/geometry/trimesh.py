"""Triangle meshes: the geometry every bake starts from."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

__all__ = ["TriMesh"]

#: Largest coordinate magnitude accepted (world units). Beyond this float32 loses
#: centimetre precision, and voxel indices would overflow.
MAX_COORD = 1.0e7


@dataclass(frozen=True, eq=False)
class TriMesh:
    """An indexed triangle mesh in world units, y up.

    Attributes
    ----------
    vertices : (n, 3) float32
        Vertex positions (x, y, z), world units (wu).
    triangles : (m, 3) int32
        Vertex indices of each triangle, counter-clockwise seen from above for
        walkable (upward-facing) surfaces, as Recast expects.
    areas : (m,) uint8 or None
        Optional per-triangle area id (0 = not walkable, 1..63 walkable areas).
        ``None`` lets the bake mark walkable triangles by slope.
    name : str
        Where the mesh came from (a file name, or ``"<arrays>"``).
    skipped : int
        Faces dropped on load (out-of-range indices), for reporting.
    """

    vertices: np.ndarray
    triangles: np.ndarray
    areas: np.ndarray | None = None
    name: str = "<arrays>"
    skipped: int = 0
    _bounds: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def from_arrays(
        cls,
        vertices: np.ndarray,
        triangles: np.ndarray,
        areas: np.ndarray | None = None,
        *,
        name: str = "<arrays>",
    ) -> TriMesh:
        """Build a mesh from arrays already in memory, validating them.

        Parameters
        ----------
        vertices : (n, 3) array_like of float
            Positions in world units; converted to float32.
        triangles : (m, 3) array_like of int
            Zero-based vertex indices; converted to int32.
        areas : (m,) array_like of int, optional
            Per-triangle area ids in 0..63.

        Raises
        ------
        InputError
            Wrong shapes, NaN or infinite coordinates, coordinates beyond 1e7,
            indices out of range, or areas outside 0..63.

        Examples
        --------
        >>> m = TriMesh.from_arrays([[0, 0, 0], [0, 0, 1], [1, 0, 0]], [[0, 1, 2]])
        >>> m.vertices.dtype, m.triangles.shape
        (dtype('float32'), (1, 3))
        """
        if not isinstance(name, str):
            raise InputError(f"name must be a str, got {type(name).__name__}")
        try:
            is_complex = np.iscomplexobj(vertices)
            v64 = np.zeros((0, 3)) if is_complex else np.asarray(vertices, dtype=np.float64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"vertices are not numeric: {exc}") from None
        if is_complex:
            raise InputError("vertices must be real numbers, got complex values")
        if v64.size == 0:
            v64 = v64.reshape(0, 3)
        if v64.ndim != 2 or v64.shape[1] != 3:
            raise InputError(f"vertices must have shape (n, 3), got {v64.shape}")
        if not np.all(np.isfinite(v64)):
            bad = int(np.argwhere(~np.isfinite(v64))[0][0])
            raise InputError(f"vertex {bad} has a NaN or infinite coordinate")
        if v64.size and np.abs(v64).max() > MAX_COORD:
            bad = int(np.argwhere(np.abs(v64) > MAX_COORD)[0][0])
            raise InputError(
                f"vertex {bad} lies beyond +-{MAX_COORD:g} wu; float32 cannot bake it precisely"
            )
        try:
            t = np.asarray(triangles)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"triangles are not integer indices: {exc}") from None
        if t.size == 0:
            t = t.reshape(0, 3)
        if t.ndim != 2 or t.shape[1] != 3:
            raise InputError(f"triangles must have shape (m, 3), got {t.shape}")
        if t.dtype.kind == "f":
            if not np.all(np.isfinite(t)) or np.any(t != np.round(t)):
                raise InputError("triangle indices must be integers")
        elif t.dtype.kind not in "iu":
            raise InputError(f"triangle indices must be integers, got dtype {t.dtype}")
        n = v64.shape[0]
        if t.size and (t.min() < 0 or t.max() >= n):
            bad = int(np.argwhere((t < 0) | (t >= n))[0][0])
            raise InputError(
                f"triangle {bad} has a vertex index outside 0..{n - 1}: {t[bad].tolist()}"
            )
        a = None
        if areas is not None:
            try:
                a = np.asarray(areas)
            except (TypeError, ValueError, OverflowError) as exc:
                raise InputError(f"areas are not integer area ids: {exc}") from None
            if a.shape != (t.shape[0],):
                raise InputError(f"areas must have shape ({t.shape[0]},), got {a.shape}")
            if a.dtype.kind == "f":
                if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
                    raise InputError("areas must be integer area ids in 0..63 (got NaN/fractions)")
            elif a.dtype.kind not in "iu":
                raise InputError(f"areas must be integer area ids in 0..63, got dtype {a.dtype}")
            if a.size and (a.min() < 0 or a.max() > 63):
                raise InputError("areas must lie in 0..63")
            a = np.ascontiguousarray(a, dtype=np.uint8)
        return cls(
            np.ascontiguousarray(v64, dtype=np.float32),
            np.ascontiguousarray(t, dtype=np.int32),
            a,
            name,
        )

    @property
    def n_vertices(self) -> int:
        """Number of vertices."""
        return int(self.vertices.shape[0])

    @property
    def n_triangles(self) -> int:
        """Number of triangles."""
        return int(self.triangles.shape[0])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounds of all vertices, as Recast's ``rcCalcBounds``.

        Returns
        -------
        bmin, bmax : (3,) float32
            Component-wise minimum and maximum (wu).

        Raises
        ------
        InputError
            If the mesh has no vertices.
        """
        if self.vertices.shape[0] == 0:
            raise InputError("the mesh is empty: it has no vertices")
        return self.vertices.min(axis=0), self.vertices.max(axis=0)

    def degenerate_mask(self) -> np.ndarray:
        """Triangles with zero area (repeated indices or collinear points).

        Returns
        -------
        (m,) bool
        """
        v = self.vertices.astype(np.float64)
        t = self.triangles
        if t.shape[0] == 0:
            return np.zeros(0, dtype=bool)
        e0 = v[t[:, 1]] - v[t[:, 0]]
        e1 = v[t[:, 2]] - v[t[:, 0]]
        cross = np.cross(e0, e1)
        return np.einsum("ij,ij->i", cross, cross) == 0.0

    def winding_hint(self) -> str:
        """A hint for "nothing is walkable": ``""``, or a sentence when (almost) every
        non-degenerate triangle faces down (normal y < 0), i.e. the mesh is wound
        clockwise seen from above or is not y-up. Only meaningful without ``areas``
        (explicit areas make winding irrelevant), so it is ``""`` then."""
        if self.areas is not None or self.triangles.shape[0] == 0:
            return ""
        v = self.vertices.astype(np.float64)
        t = self.triangles
        n = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
        ny = n[:, 1]
        up, down = int(np.count_nonzero(ny > 0)), int(np.count_nonzero(ny < 0))
        if down == 0 or up > 0.05 * (up + down):
            return ""
        return (
            f"; {down} of {up + down} triangles face down: check the winding "
            "(counter-clockwise seen from above) or the up axis (y)"
        )

    def __repr__(self) -> str:
        return f"TriMesh({self.name!r}, {self.n_vertices} vertices, {self.n_triangles} triangles)"
