import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from peer_support import mesh_path, stage_dump

import navkit
from navkit.errors import FormatError, InputError
from navkit.geometry import TriMesh, load_obj, parse_obj, save_obj


def test_face_forms_and_fan():
    text = """# comment

v 0 0 0
v 1 0 0
v 1 0 1
v 0 0 1
vt 0 0
vn 0 1 0
f 1/1/1 2//1 3/1 4
f -4 -3 -2
"""
    m = parse_obj(text)
    # the quad fans into (v0, v[i-1], v[i]) as RecastDemo does
    assert m.triangles.tolist() == [[0, 1, 2], [0, 2, 3], [0, 1, 2]]
    assert m.vertices.dtype == np.float32 and m.triangles.dtype == np.int32


def test_relative_indices_resolve_against_vertices_so_far():
    m = parse_obj("v 0 0 0\nv 1 0 0\nv 0 0 1\nf -3 -2 -1\nv 5 5 5\nv 6 5 5\nv 5 5 6\nf -3 -2 -1\n")
    assert m.triangles.tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize(
    "text, exc, needle",
    [
        ("v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 4\n", FormatError, "out of range"),
        ("v 0 0 0\nv 1 0 0\nv 0 0 1\nf 0 1 2\n", FormatError, "index 0"),
        ("v 0 0 zero\n", FormatError, "non-numeric"),
        ("v 0 0\n", FormatError, "3 coordinates"),
        ("v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 a 3\n", FormatError, "non-numeric"),
        ("v 0 0 0\nv 1 0 0\nf 1 2\n", FormatError, "at least 3"),
        ("hello world\nthis is text\n", FormatError, "not an OBJ"),
        ("", FormatError, "not an OBJ"),
        ("v 0 nan 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", InputError, "NaN"),
        ("v 0 inf 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", InputError, "infinite"),
        ("v 1e30 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", InputError, "beyond"),
    ],
)
def test_bad_obj_gives_clear_errors(text, exc, needle):
    with pytest.raises(exc, match=needle):
        parse_obj(text)


def test_missing_directory_and_binary_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_obj(tmp_path / "nope.obj")
    with pytest.raises(InputError, match="directory"):
        load_obj(tmp_path)
    b = tmp_path / "x.obj"
    b.write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(FormatError, match="binary"):
        load_obj(b)


@pytest.mark.peer
@pytest.mark.parametrize("name", ["dungeon", "nav_test", "undulating"])
def test_loads_exactly_what_recast_loads(name):
    manifest, stages = stage_dump(name, "watershed")
    m = load_obj(mesh_path(name))
    np.testing.assert_array_equal(m.vertices, stages["input"]["verts"])
    np.testing.assert_array_equal(m.triangles, stages["input"]["tris"])


def test_save_round_trip(tmp_path):
    m = navkit.geometry.sample_level()
    p = tmp_path / "level.obj"
    save_obj(m, p)
    back = load_obj(p)
    np.testing.assert_array_equal(back.vertices, m.vertices)
    np.testing.assert_array_equal(back.triangles, m.triangles)
    assert not list(tmp_path.glob(".*.tmp"))


coords = st.floats(-1e4, 1e4, allow_nan=False, width=32)


@given(st.lists(st.tuples(coords, coords, coords), min_size=3, max_size=12))
def test_arrays_round_trip_through_obj_text(pts):
    v = np.array(pts, dtype=np.float32)
    t = np.array([[0, i - 1, i] for i in range(2, len(pts))], dtype=np.int32)
    m = TriMesh.from_arrays(v, t)
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in v.astype(float).tolist()]
    lines.append("f " + " ".join(str(i + 1) for i in range(len(pts))))
    back = parse_obj("\n".join(lines))
    np.testing.assert_array_equal(back.vertices, m.vertices)
    np.testing.assert_array_equal(back.triangles, m.triangles)
