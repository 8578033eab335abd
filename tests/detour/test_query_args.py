"""Hostile arguments to NavMeshQuery, QueryFilter and NavMesh: a navkit error naming the
argument, before any work -- never a raw TypeError/OverflowError/MemoryError or a kernel's
TypingError."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from navkit.detour.filter import QueryFilter
from navkit.detour.query import NavMeshQuery
from navkit.errors import InputError, NavkitError
from navkit.geometry.trimesh import TriMesh
from navkit.pipeline import bake

NAN = float("nan")
INF = float("inf")
C = (5.0, 0.0, 5.0)
E = (9.0, 0.0, 8.0)


@pytest.fixture(scope="module")
def q():
    m = TriMesh.from_arrays(
        [[0, 0, 0], [0, 0, 10], [10, 0, 10], [10, 0, 0]], [[0, 1, 2], [0, 2, 3]]
    )
    query = NavMeshQuery(bake(m))
    ref = query.find_nearest_poly(C).ref
    assert ref
    query.ref0 = ref  # type: ignore[attr-defined]
    return query


def _calls(r: int) -> dict[str, tuple[str, dict]]:
    """A valid call of every public query method (method name, keyword arguments)."""
    tri = [[4.0, 0.0, 4.0], [4.0, 0.0, 6.0], [6.0, 0.0, 6.0]]
    return {
        "find_nearest_poly": ("find_nearest_poly", dict(center=C, half_extents=(1, 1, 1))),
        "query_polygons": ("query_polygons", dict(center=C, half_extents=(1, 1, 1), max_polys=8)),
        "is_valid_poly_ref": ("is_valid_poly_ref", dict(ref=r)),
        "closest_point_on_poly": ("closest_point_on_poly", dict(ref=r, pos=C)),
        "closest_point_on_poly_boundary": ("closest_point_on_poly_boundary", dict(ref=r, pos=C)),
        "get_poly_height": ("get_poly_height", dict(ref=r, pos=C)),
        "find_path": (
            "find_path",
            dict(start_ref=r, end_ref=r, start_pos=C, end_pos=E, max_path=16),
        ),
        "find_straight_path": (
            "find_straight_path",
            dict(start_pos=C, end_pos=E, path=[r], options=0, max_points=8),
        ),
        "init_sliced_find_path": (
            "init_sliced_find_path",
            dict(start_ref=r, end_ref=r, start_pos=C, end_pos=E, options=0),
        ),
        "update_sliced_find_path": ("update_sliced_find_path", dict(max_iter=8)),
        "finalize_sliced_find_path": ("finalize_sliced_find_path", dict(max_path=8)),
        "finalize_sliced_find_path_partial": (
            "finalize_sliced_find_path_partial",
            dict(existing=[r], max_path=8),
        ),
        "raycast": (
            "raycast",
            dict(start_ref=r, start_pos=C, end_pos=E, options=0, prev_ref=0, max_path=8),
        ),
        "move_along_surface": (
            "move_along_surface",
            dict(start_ref=r, start_pos=C, end_pos=E, max_visited=8),
        ),
        "find_distance_to_wall": (
            "find_distance_to_wall",
            dict(start_ref=r, center=C, max_radius=3.0),
        ),
        "get_poly_wall_segments": (
            "get_poly_wall_segments",
            dict(ref=r, store_portals=False, max_segments=8),
        ),
        "find_polys_around_circle": (
            "find_polys_around_circle",
            dict(start_ref=r, center=C, radius=3.0, max_result=8),
        ),
        "find_polys_around_shape": (
            "find_polys_around_shape",
            dict(start_ref=r, verts=tri, max_result=8),
        ),
        "find_local_neighbourhood": (
            "find_local_neighbourhood",
            dict(start_ref=r, center=C, radius=3.0, max_result=8),
        ),
        "find_random_point": ("find_random_point", dict(rng=1)),
        "find_random_point_around_circle": (
            "find_random_point_around_circle",
            dict(start_ref=r, center=C, radius=3.0, rng=1, strict=True, max_tries=4),
        ),
        "path": ("path", dict(start=C, end=E, half_extents=(1, 1, 1), max_path=8, max_points=8)),
        "paths": (
            "paths",
            dict(starts=[C], ends=[E], half_extents=(1, 1, 1), max_path=8, max_points=8, threads=1),
        ),
    }


def _call(q, method: str, **override):
    name, kw = _calls(q.ref0)[method]
    if method in ("update_sliced_find_path", "finalize_sliced_find_path",
                  "finalize_sliced_find_path_partial"):  # fmt: skip
        q.init_sliced_find_path(q.ref0, q.ref0, C, E)
    return getattr(q, name)(**{**kw, **override})


def test_every_valid_call_works(q):
    for method in _calls(q.ref0):
        _call(q, method)


# (method, argument, hostile value): each escaped as a raw Python/numpy/numba error, or
# allocated GiBs, or was silently accepted, before the argument checks.
_HOSTILE = [
    ("find_nearest_poly", "center", (1e39, 0.0, 0.0)),  # finite float64, inf as float32
    ("find_nearest_poly", "center", (10**400, 0.0, 0.0)),  # an int float() cannot convert
    ("find_nearest_poly", "half_extents", [10**400, 1.0, 1.0]),
    ("path", "end", (0.0, 10**400, 0.0)),
    ("raycast", "end_pos", np.array([10**400, 0, 0], dtype=object)),
    ("query_polygons", "max_polys", 10**9),
    ("query_polygons", "max_polys", 2**63),
    ("query_polygons", "max_polys", None),
    ("query_polygons", "max_polys", -1),
    ("query_polygons", "half_extents", (1.0, -1.0, 1.0)),
    ("is_valid_poly_ref", "ref", None),
    ("is_valid_poly_ref", "ref", NAN),
    ("is_valid_poly_ref", "ref", "1"),
    ("is_valid_poly_ref", "ref", 1.5),
    ("is_valid_poly_ref", "ref", True),
    ("closest_point_on_poly", "ref", None),
    ("closest_point_on_poly", "ref", NAN),
    ("find_path", "start_ref", None),
    ("find_path", "end_ref", NAN),
    ("find_path", "start_ref", 1.0),
    ("find_path", "max_path", None),
    ("find_path", "max_path", NAN),
    ("find_path", "max_path", 10**9),
    ("find_path", "max_path", 2**63),
    ("find_path", "max_path", -5),
    ("find_straight_path", "path", [None]),
    ("find_straight_path", "path", [1.5]),
    ("find_straight_path", "path", [[1, 2], [3, 4]]),
    ("find_straight_path", "options", None),
    ("find_straight_path", "options", 2**63),
    ("find_straight_path", "max_points", 10**9),
    ("find_straight_path", "max_points", 2**63),
    ("init_sliced_find_path", "start_ref", None),
    ("init_sliced_find_path", "options", None),
    ("init_sliced_find_path", "options", 2**63),
    ("update_sliced_find_path", "max_iter", None),
    ("update_sliced_find_path", "max_iter", 2**63),
    ("update_sliced_find_path", "max_iter", 1.5),
    ("finalize_sliced_find_path", "max_path", 10**9),
    ("finalize_sliced_find_path", "max_path", 2**63),
    ("finalize_sliced_find_path_partial", "existing", [None]),
    ("finalize_sliced_find_path_partial", "max_path", 2**63),
    ("raycast", "start_ref", None),
    ("raycast", "start_ref", NAN),
    ("raycast", "start_ref", -1),
    ("raycast", "prev_ref", None),
    ("raycast", "options", None),
    ("raycast", "options", 2**63),
    ("raycast", "max_path", None),
    ("raycast", "max_path", 10**9),
    ("raycast", "max_path", 2**63),
    ("move_along_surface", "start_ref", None),
    ("move_along_surface", "max_visited", 10**9),
    ("move_along_surface", "max_visited", 2**63),
    ("find_distance_to_wall", "start_ref", NAN),
    ("find_distance_to_wall", "max_radius", 1e39),
    ("find_distance_to_wall", "max_radius", True),
    ("get_poly_wall_segments", "ref", None),
    ("get_poly_wall_segments", "max_segments", 10**9),
    ("get_poly_wall_segments", "max_segments", 2**63),
    ("get_poly_wall_segments", "store_portals", "yes"),
    ("find_polys_around_circle", "start_ref", None),
    ("find_polys_around_circle", "max_result", 10**9),
    ("find_polys_around_circle", "max_result", 2**63),
    ("find_polys_around_circle", "max_result", None),
    ("find_polys_around_circle", "radius", "3"),
    ("find_polys_around_shape", "start_ref", None),
    ("find_polys_around_shape", "max_result", 2**63),
    ("find_local_neighbourhood", "start_ref", None),
    ("find_local_neighbourhood", "max_result", 10**9),
    ("find_local_neighbourhood", "max_result", 2**63),
    ("find_random_point", "rng", "seed"),
    ("find_random_point", "rng", 1.5),
    ("find_random_point", "rng", -3),
    ("find_random_point", "rng", True),
    ("find_random_point_around_circle", "start_ref", None),
    ("find_random_point_around_circle", "rng", "seed"),
    ("find_random_point_around_circle", "max_tries", 2**63),
    ("find_random_point_around_circle", "max_tries", None),
    ("find_random_point_around_circle", "max_tries", 10**12),
    ("find_random_point_around_circle", "strict", "no"),
    ("path", "max_path", None),
    ("path", "max_path", 10**9),
    ("path", "max_path", 2**63),
    ("path", "max_points", 10**9),
    ("path", "max_points", 2**63),
    ("paths", "max_path", None),
    ("paths", "max_path", 10**9),
    ("paths", "max_points", 2**63),
    ("paths", "threads", "4"),
    ("paths", "threads", -2),
]


@pytest.mark.parametrize(
    "method, arg, value", _HOSTILE, ids=[f"{m}-{a}-{v!r}"[:60] for m, a, v in _HOSTILE]
)
def test_hostile_argument_names_itself(q, method, arg, value):
    with pytest.raises(NavkitError) as ei:
        _call(q, method, **{arg: value})
    assert arg in str(ei.value)


@pytest.mark.parametrize("value", [NAN, "3", True, 1.5, 0, 65536])
def test_max_nodes(q, value):  # None is the default: 2048 nodes, grown on demand by path()
    with pytest.raises(InputError, match="max_nodes"):
        NavMeshQuery(q.navmesh, max_nodes=value)


# -- QueryFilter ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kw, arg",
    [
        (dict(include_flags=None), "include_flags"),
        (dict(include_flags="7"), "include_flags"),
        (dict(include_flags=1.5), "include_flags"),
        (dict(include_flags=NAN), "include_flags"),
        (dict(exclude_flags=True), "exclude_flags"),
        (dict(area_costs=["a", "b"]), "area_costs"),
        (dict(area_costs=[None]), "area_costs"),
        (dict(area_costs=[[1.0, 2.0], [3.0]]), "area_costs"),
        (dict(area_costs=[1e39]), "area_cost"),
    ],
)
def test_filter_constructor(kw, arg):
    with pytest.raises(InputError, match=arg):
        QueryFilter(**kw)


@pytest.mark.parametrize(
    "area, cost, arg",
    [(0, None, "cost"), (0, "2", "cost"), (0, 1e39, "cost"), (None, 1.0, "area"),
     (NAN, 1.0, "area"), (1.5, 1.0, "area")],
)  # fmt: skip
def test_filter_set_area_cost(area, cost, arg):
    with pytest.raises(InputError, match=arg):
        QueryFilter().set_area_cost(area, cost)


# -- NavMesh refs --------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [None, NAN, "1", 1.5, True, -1, 2**64])
@pytest.mark.parametrize(
    "method", ["is_valid_poly_ref", "get_poly_flags", "get_poly_area", "links_of", "decode_ref"]
)
def test_navmesh_refs(q, method, value):
    with pytest.raises(InputError, match="ref"):
        getattr(q.navmesh, method)(value)


@pytest.mark.parametrize(
    "call",
    [
        lambda nm, r: nm.set_poly_flags(r, None),
        lambda nm, r: nm.set_poly_flags(r, 2**20),
        lambda nm, r: nm.set_poly_area(r, None),
        lambda nm, r: nm.set_poly_area(r, NAN),
        lambda nm, r: nm.poly_ref(None),
        lambda nm, r: nm.poly_ref(10**9),
        lambda nm, r: nm.tile_ref(None),
        lambda nm, r: nm.calc_tile_loc((NAN, 0, 0)),
        lambda nm, r: nm.get_tile_at(None, 0, 0),
    ],
)
def test_navmesh_other_arguments(q, call):
    with pytest.raises(InputError):
        call(q.navmesh, q.ref0)


# -- property: result or navkit error, nothing else ----------------------------------------------
_hostile = st.one_of(
    st.sampled_from(
        [
            None,
            NAN,
            INF,
            -INF,
            "",
            "1",
            b"1",
            True,
            False,
            0,
            -1,
            1,
            2**31,
            2**63,
            2**64,
            10**9,
            -(2**63),
            1e39,
            -1e39,
            10**400,  # an int beyond float range (float() raises OverflowError)
            (10**400, 0.0, 0.0),
            1e-45,
            0.5,
            [],
            [1.0, 2.0],
            [[1.0, 2.0, 3.0]],
            (NAN, 0.0, 0.0),
            (0.0, INF, 0.0),
            np.zeros(3),
            np.full(3, NAN, np.float32),
            np.zeros((3, 3)),
            object(),
            np.int64(-1),
            np.float64(NAN),
            np.bool_(True),
        ]
    ),  # fmt: skip
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3).map(tuple),
)


def _args(method: str) -> list[str]:
    return list(_calls(0)[method][1])


def _has_filter(method: str) -> bool:
    return "filter" in inspect.signature(getattr(NavMeshQuery, _calls(0)[method][0])).parameters


_PAIRS = [(m, a) for m in _calls(0) for a in [*_args(m), *(["filter"] if _has_filter(m) else [])]]


@settings(max_examples=300, deadline=None)
@given(pair=st.sampled_from(_PAIRS), value=_hostile)
def test_any_argument_gives_result_or_navkit_error(q, pair, value):
    method, arg = pair
    try:
        _call(q, method, **{arg: value})
    except NavkitError:
        pass
