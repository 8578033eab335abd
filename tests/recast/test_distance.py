"""Tests of navkit.recast.distance (rcBuildDistanceField)."""

from __future__ import annotations

import numpy as np
import pytest
from chf_grid import mask_chf, neighbours, span_cells
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import MESHES, chf_from_dump, stage_dump

from navkit.errors import InputError
from navkit.recast.distance import build_distance_field


@pytest.mark.peer
@pytest.mark.parametrize("name", MESHES)
def test_distance_field_equals_recast(name):
    manifest, stages = stage_dump(name, "watershed")
    chf = chf_from_dump(manifest, stages, "compact_eroded")
    out = build_distance_field(chf)
    np.testing.assert_array_equal(out.dist, stages["compact_distance"]["dist"])
    assert out.dist.dtype == np.uint16
    assert out.max_distance == manifest["stages"]["compact_distance"]["fields"]["maxDistance"]
    # maxDistance is taken before the blur (dungeon: 52 while max(dist) is 51)
    assert out.max_distance >= int(out.dist.max())
    # everything else is passed through untouched
    np.testing.assert_array_equal(out.con, chf.con)
    np.testing.assert_array_equal(out.reg, chf.reg)


def test_square_by_hand():
    # 5x5 square: the outer ring touches the outside (0), the next ring is one
    # straight step in (2), the centre two (4). The blur keeps values <= 2 and
    # turns the centre into (4 + 8*2 + 5) // 9 = 2.
    chf = mask_chf(np.full((5, 5), 63))
    out = build_distance_field(chf)
    d = out.dist.reshape(5, 5)
    assert out.max_distance == 4
    ring = np.ones((5, 5), bool)
    ring[1:4, 1:4] = False
    assert (d[ring] == 0).all()
    assert (d[1:4, 1:4][[0, 0, 0, 1, 1, 2, 2, 2], [0, 1, 2, 0, 2, 0, 1, 2]] == 2).all()
    assert d[2, 2] == 2


def test_blur_of_larger_square():
    # 7x7: chamfer centre is 6 (three straight steps), its 8 neighbours 4; blur:
    # (6 + 8*4 + 5) // 9 = 4. Ring-1 spans (value 2) stay 2.
    out = build_distance_field(mask_chf(np.full((7, 7), 63)))
    d = out.dist.reshape(7, 7)
    assert out.max_distance == 6
    assert d[3, 3] == 4
    assert d[1, 1] == 2 and d[1, 3] == 2


def test_area_change_is_a_boundary():
    m = np.full((7, 7), 63)
    m[:, 3] = 5  # a column of another area splits the square
    out = build_distance_field(mask_chf(m))
    d = out.dist.reshape(7, 7)
    assert (d[:, 2:5] == 0).all()


def test_bad_links_raise():
    chf = mask_chf(np.full((3, 3), 63))
    con = chf.con.copy()
    con[0] = (int(con[0]) & 0xFFFFFFC0) | 5  # a link to layer 5 of the cell at x=-1
    with pytest.raises(InputError):
        build_distance_field(chf._replace(con=con))
    with pytest.raises(InputError):
        build_distance_field(chf._replace(areas=chf.areas[:-1]))
    with pytest.raises(InputError):
        build_distance_field(chf._replace(cells_index=chf.cells_index.ravel()))


masks = st.integers(2, 10).flatmap(
    lambda w: st.lists(
        st.lists(st.sampled_from([0, 63, 63, 63, 7]), min_size=w, max_size=w),
        min_size=2,
        max_size=10,
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(masks)
def test_properties(mask):
    chf = mask_chf(np.array(mask))
    out = build_distance_field(chf)
    xs, zs = span_cells(chf)
    for i in range(chf.span_count):
        same = sum(chf.areas[a] == chf.areas[i] for a in neighbours(chf, i, xs[i], zs[i]))
        if same != 4:  # boundary spans keep distance 0 through the blur
            assert out.dist[i] == 0
    assert int(out.dist.max(initial=0)) <= out.max_distance
    # the field is deterministic and does not depend on chf.dist's old content
    again = build_distance_field(out)
    np.testing.assert_array_equal(again.dist, out.dist)
