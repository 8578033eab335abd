"""BakeConfig near float/int limits, bools, and bake()/bake_grid() arguments: a ConfigError or
InputError naming the setting at construction/call -- never an OverflowError or a kernel's
TypingError at bake time, and never a silently skipped erosion."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from navkit.errors import ConfigError, InputError, NavkitError
from navkit.geometry.grid import bake_grid
from navkit.geometry.trimesh import TriMesh
from navkit.pipeline import bake
from navkit.recast.config import BakeConfig

NAN = float("nan")


@pytest.mark.parametrize(
    "field, value",
    [
        ("agent_height", 1e38),
        ("agent_height", 1e300),
        ("agent_max_climb", 1e38),
        ("region_min_size", 2**63),
        ("region_min_size", 1e20),
        ("region_merge_size", 2**63),
        ("edge_max_len", 1e20),
        ("edge_max_len", 1e39),
        ("edge_max_error", 1e39),
        ("detail_sample_dist", 1e39),
        ("detail_sample_max_error", 1e39),
        ("cell_size", 5e-324),
        ("cell_size", 1e-46),
        ("cell_size", 1e39),
        ("cell_height", 5e-324),
        ("cell_height", 1e39),
        ("cell_size", True),
        ("cell_height", True),
        ("agent_radius", True),
        ("agent_radius", 1e9),
        ("agent_radius", 1e39),
        ("agent_radius", 38.4),  # 128 voxels at cell_size 0.3: Recast's byte threshold wraps to 0
        ("cell_size", 10**400),
    ],
)
def test_limits_raise_config_error_naming_field(field, value):
    with pytest.raises(ConfigError) as ei:
        BakeConfig(**{field: value})
    assert ei.value.field == field


def test_largest_erosion_radius_still_erodes():
    # 127 voxels is the largest radius Recast's one-byte threshold holds
    c = BakeConfig(agent_radius=0.3 * 126.9)
    assert c.voxel().walkable_radius == 127


_values = st.one_of(
    st.sampled_from(
        [
            None,
            NAN,
            float("inf"),
            True,
            False,
            "1",
            0,
            -1,
            2**63,
            2**64,
            10**400,
            1e38,
            1e-45,
            5e-324,
            0.5,
            np.float32(1e-45),
            np.int64(2**62),
        ]
    ),  # fmt: skip
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
)
_FIELDS = [
    "cell_size", "cell_height", "agent_height", "agent_radius", "agent_max_climb",
    "agent_max_slope", "region_min_size", "region_merge_size", "edge_max_len",
    "edge_max_error", "verts_per_poly", "detail_sample_dist", "detail_sample_max_error",
    "tile_size", "partition", "filter_ledge_spans",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(field=st.sampled_from(_FIELDS), value=_values)
def test_config_is_valid_or_config_error(field, value):
    try:
        c = BakeConfig(**{field: value})
    except ConfigError as exc:
        # the field itself, or one whose limit depends on it (agent_height on cell_height)
        assert exc.field in _FIELDS
        return
    rc = c.voxel()  # every derived quantity fits Recast's types
    for name in ("walkable_height", "walkable_climb"):
        assert 0 <= getattr(rc, name) <= 255
    assert 0 <= rc.walkable_radius <= 127
    assert 0 <= rc.max_edge_len < 2**31
    assert 0 <= rc.min_region_area < 2**31 and 0 <= rc.merge_region_area < 2**31
    for name in ("cs", "ch", "max_simplification_error", "detail_sample_dist",
                 "detail_sample_max_error"):  # fmt: skip
        assert math.isfinite(getattr(rc, name))


# -- bake() / bake_grid() arguments ---------------------------------------------------------------
_QUAD = TriMesh.from_arrays(
    [[0, 0, 0], [0, 0, 10], [10, 0, 10], [10, 0, 0]], [[0, 1, 2], [0, 2, 3]]
)


@pytest.mark.parametrize(
    "kw, arg",
    [
        (dict(config={"cell_size": 0.3}), "config"),
        (dict(config="default"), "config"),
        (dict(progress=5), "progress"),
        (dict(keep_intermediates="yes"), "keep_intermediates"),
        (dict(volumes=[1, 2]), "volumes"),
        (dict(volumes=None), "volumes"),
        (dict(offmesh=5), "offmesh"),
    ],
)
def test_bake_arguments(kw, arg):
    with pytest.raises(InputError, match=arg):
        bake(_QUAD, **kw)


def test_clockwise_quad_hints_at_winding():
    cw = TriMesh.from_arrays(
        [[0, 0, 0], [0, 0, 10], [10, 0, 10], [10, 0, 0]], [[0, 2, 1], [0, 3, 2]]
    )
    with pytest.raises(NavkitError, match="nothing is walkable.*face down.*winding"):
        bake(cw)
    # with explicit areas winding does not matter: no hint there
    tall = BakeConfig(agent_max_climb=0.0, agent_radius=6.0)
    with pytest.raises(NavkitError, match="nothing is walkable") as ei:
        bake(_QUAD, tall)
    assert "winding" not in str(ei.value)


@pytest.mark.parametrize(
    "kw, arg",
    [
        (dict(cell_size=True), "cell_size"),
        (dict(cell_size=1e39), "cell_size"),
        (dict(agent_radius=True), "agent_radius"),
        (dict(agent_radius=1e9), "agent_radius"),
        (dict(agent_radius=10**400), "agent_radius"),
        (dict(config="x"), "config"),
    ],
)
def test_bake_grid_arguments(kw, arg):
    with pytest.raises(NavkitError, match=arg):
        bake_grid(np.zeros((4, 4), bool), **kw)


def test_numpy_scalars_become_python_numbers():
    """A config built from numpy values saves as JSON and equals the plain one."""
    import json

    cfg = BakeConfig(cell_size=np.float32(0.25), region_min_size=np.int32(8),
                     filter_ledge_spans=np.bool_(False))  # fmt: skip
    d = cfg.to_dict()
    json.dumps(d)
    assert type(d["cell_size"]) is float and type(d["region_min_size"]) is int
    assert type(d["filter_ledge_spans"]) is bool
    assert cfg == BakeConfig(cell_size=0.25, region_min_size=8, filter_ledge_spans=False)
