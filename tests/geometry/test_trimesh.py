import numpy as np
import pytest

from navkit.errors import InputError
from navkit.geometry import TriMesh, sample_level


def test_from_arrays_validates():
    with pytest.raises(InputError, match="shape"):
        TriMesh.from_arrays(np.zeros((3, 2)), [[0, 1, 2]])
    with pytest.raises(InputError, match="outside"):
        TriMesh.from_arrays(np.zeros((3, 3)), [[0, 1, 3]])
    with pytest.raises(InputError, match="outside"):
        TriMesh.from_arrays(np.zeros((3, 3)), [[0, -1, 2]])
    with pytest.raises(InputError, match="integers"):
        TriMesh.from_arrays(np.zeros((3, 3)), [[0, 1.5, 2]])
    with pytest.raises(InputError, match="NaN"):
        TriMesh.from_arrays([[0, 0, 0], [1, np.nan, 0], [0, 0, 1]], [[0, 1, 2]])
    with pytest.raises(InputError, match="areas"):
        TriMesh.from_arrays(np.zeros((3, 3)), [[0, 1, 2]], areas=[64])
    with pytest.raises(InputError, match="not numeric"):
        TriMesh.from_arrays([["a", "b", "c"]], [[0, 0, 0]])


def test_empty_mesh_bounds_is_an_error():
    m = TriMesh.from_arrays(np.zeros((0, 3)), np.zeros((0, 3), int))
    with pytest.raises(InputError, match="empty"):
        m.bounds()


def test_degenerate_mask():
    m = TriMesh.from_arrays(
        [[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 0, 1]], [[0, 1, 2], [0, 1, 3], [0, 0, 3]]
    )
    assert m.degenerate_mask().tolist() == [True, False, True]


def test_sample_level_is_closed_and_outward():
    m = sample_level()
    v = m.vertices.astype(np.float64)
    t = m.triangles
    # every edge of a closed solid is used once in each direction
    edges = np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]])
    fwd = {tuple(e) for e in edges.tolist()}
    assert all((b, a) in fwd for a, b in fwd)
    # upward-facing triangles exist at every storey (0, 4 and 8 wu)
    n = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    up = n[:, 1] > 0.99 * np.linalg.norm(n, axis=1)
    tops = {round(float(y), 1) for y in v[t[up, 0], 1]}
    assert {0.0, 4.0, 8.0} <= tops
    assert not m.degenerate_mask().any()
