"""OBJ details (tab separators, strict numbers, file:line for bad vertices) and hostile
TriMesh.from_arrays arguments."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from navkit.errors import FormatError, InputError, NavkitError
from navkit.geometry import TriMesh, parse_obj

TRI = "v 0 0 0\nv 1 0 0\nv 0 0 1\n"


def test_tab_after_keyword_is_a_separator():
    # Recast's reader takes any whitespace; a dropped 'v' would shift every later index
    m = parse_obj("v\t0 0 0\nv 1\t0 0\nv\t0\t0\t1\nv 5 5 5\nf\t1 2 3\nf 4 2\t3\n")
    assert m.n_vertices == 4
    assert m.triangles.tolist() == [[0, 1, 2], [3, 1, 2]]
    assert m.vertices[3].tolist() == [5, 5, 5]


def test_other_whitespace_and_keywords_still_ignored():
    m = parse_obj("vn\t0 1 0\nvt 0 0\n  v 0 0 0  \nv 1 0 0\nv 0 0 1\r\nf 1 2 3\n")
    assert m.n_vertices == 3 and m.n_triangles == 1


@pytest.mark.parametrize(
    "text, needle",
    [
        ("v 1_000 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", "<string>:1"),
        ("v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 0_3\n", "<string>:4"),
        ("v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 \u0663\n", "<string>:4"),  # Arabic-Indic digit 3
        ("v \u0661 0 0\n", "<string>:1"),
        ("v 0 0 0\nv 1 0 0\nv 0 nan 1\nf 1 2 3\n", "<string>:3"),
        ("v 0 0 0\nv infinity 0 0\nv 0 0 1\nf 1 2 3\n", "<string>:2"),
        ("v 0 0 0\n\n# c\nv 1 0 0\nv 0 0 1e30\nf 1 2 3\n", "<string>:5"),
    ],
)
def test_bad_numbers_name_file_and_line(text, needle):
    with pytest.raises(NavkitError, match=needle):
        parse_obj(text)


def test_nan_vertex_error_names_line_and_vertex():
    with pytest.raises(InputError, match=r"<string>:3: vertex 2 has a NaN"):
        parse_obj("v 0 0 0\nv 1 0 0\nv 0 nan 1\nf 1 2 3\n")


def test_ordinary_number_forms_parse():
    m = parse_obj("v +1 -2.5 .5\nv 1. 1e2 -1E-2\nv 0 0 1\nf 1 2 3\n")
    assert m.vertices.tolist()[0] == [1.0, -2.5, 0.5]
    assert m.vertices.tolist()[1] == pytest.approx([1.0, 100.0, -0.01])


# -- TriMesh.from_arrays -------------------------------------------------------------------------
V = [[0, 0, 0], [0, 0, 1], [1, 0, 0]]
T = [[0, 1, 2]]


@pytest.mark.parametrize(
    "kw, needle",
    [
        (dict(areas=["a"]), "areas"),
        (dict(areas=[float("nan")]), "areas"),
        (dict(areas=[1.5]), "areas"),
        (dict(areas=[None]), "areas"),
        (dict(areas=[True]), "areas"),
        (dict(name=None), "name"),
        (dict(name=5), "name"),
    ],
)
def test_from_arrays_hostile(kw, needle):
    args = {"vertices": V, "triangles": T, **kw}
    with pytest.raises(InputError, match=needle):
        TriMesh.from_arrays(**args)


_junk = st.sampled_from(
    [None, float("nan"), "1", [1.5], [float("nan")], ["a"], [True], [2**70], [-1], [64],
     np.array([1.0]), [[1]], [1, 2], object(), 5, [np.uint8(3)], (2,)]
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(which=st.sampled_from(["vertices", "triangles", "areas", "name"]), value=_junk)
def test_from_arrays_gives_mesh_or_input_error(which, value):
    args = {"vertices": V, "triangles": T, "areas": None, **{which: value}}
    try:
        m = TriMesh.from_arrays(**args)
    except InputError:
        return
    assert m.vertices.dtype == np.float32 and m.triangles.dtype == np.int32
    assert m.areas is None or (m.areas.dtype == np.uint8 and m.areas.max() <= 63)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="vf \t0123456789.-+e_/#\n", max_size=80))
def test_parse_obj_gives_mesh_or_navkit_error(text):
    try:
        parse_obj(text)
    except (FormatError, InputError):
        pass


def test_complex_vertices_are_refused():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 1]], np.complex128) + 1j
    with pytest.raises(InputError, match="vertices"):
        TriMesh.from_arrays(v, [[0, 1, 2]])
