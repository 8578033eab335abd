import numpy as np
import pytest
from peer_support import peer_results

from navkit import BakeConfig
from navkit.errors import ConfigError


@pytest.mark.peer
@pytest.mark.parametrize("name", ["dungeon", "nav_test", "undulating"])
def test_voxel_settings_equal_recasts(name):
    eff = peer_results(name)["config"]["effective"]
    solo = BakeConfig().voxel()
    assert solo.cs == eff["cs"] and solo.ch == eff["ch"]
    for ours, theirs in [
        ("walkable_height", "walkableHeight"),
        ("walkable_climb", "walkableClimb"),
        ("walkable_radius", "walkableRadius"),
        ("max_edge_len", "maxEdgeLen"),
        ("max_simplification_error", "maxSimplificationError"),
        ("min_region_area", "minRegionArea"),
        ("merge_region_area", "mergeRegionArea"),
        ("max_verts_per_poly", "maxVertsPerPoly"),
        ("detail_sample_dist", "detailSampleDist"),
        ("detail_sample_max_error", "detailSampleMaxError"),
    ]:
        assert getattr(solo, ours) == eff[theirs], ours
    tiled = BakeConfig(tile_size=48).voxel()
    assert tiled.border_size == eff["tiled"]["borderSize"]
    assert tiled.tile_size + 2 * tiled.border_size == eff["tiled"]["width"]


def test_detail_sample_dist_below_threshold_disables_sampling():
    assert BakeConfig(detail_sample_dist=0.5).voxel().detail_sample_dist == 0.0
    assert BakeConfig(detail_sample_dist=0.9).voxel().detail_sample_dist == pytest.approx(0.27)


@pytest.mark.parametrize(
    "field, value, needle",
    [
        ("cell_size", 0, "> 0"),
        ("cell_size", -1, "> 0"),
        ("cell_height", float("nan"), "finite"),
        ("agent_height", 0.1, "3 voxels"),
        ("agent_radius", -0.1, ">= 0"),
        ("agent_max_slope", 90, "\\[0, 90\\)"),
        ("verts_per_poly", 7, "3..6"),
        ("verts_per_poly", 2, "3..6"),
        ("tile_size", 8, "16..4096"),
        ("tile_size", 10000, "16..4096"),
        ("partition", "voronoi", "watershed"),
        ("detail_sample_dist", -1, ">= 0"),
        ("edge_max_len", "long", "number"),
        ("agent_height", 100.0, "255"),
    ],
)
def test_invalid_settings_name_field_and_limit(field, value, needle):
    with pytest.raises(ConfigError, match=needle) as ei:
        BakeConfig(**{field: value})
    assert ei.value.field == field


def test_from_dict_rejects_unknown_keys():
    with pytest.raises(ConfigError, match="unknown"):
        BakeConfig.from_dict({"cellsize": 0.3})
    c = BakeConfig.from_dict({"cell_size": 0.2})
    assert c.cell_size == 0.2 and BakeConfig.from_dict(c.to_dict()) == c


def test_voxel_math_is_float32():
    c = BakeConfig(cell_size=0.1, cell_height=0.1, agent_height=0.3)
    # float32(0.3)/float32(0.1) = 3.0000001 -> ceil 4 in float32 arithmetic, as RecastDemo
    expected = int(np.ceil(np.float32(np.float32(0.3) / np.float32(0.1))))
    assert c.voxel().walkable_height == expected
