"""Tests of the region partitions: watershed, monotone and layers.

Reference tests compare with Recast's own ``reg`` arrays: the solo stage dumps
(border 0), and dumps made by the same peer with ``borderSize`` forced to 5 in
the solo build (``border_dump``: a copy of the peer script in ``.scratch`` with
one line changed, so Recast itself paints and partitions a tile-like border).
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from chf_grid import grid_chf, mask_chf, neighbours, span_cells
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import (
    MESHES,
    border_stage_dump,
    chf_from_dump,
    stage_dump,
)

from navkit.errors import InputError
from navkit.recast.distance import build_distance_field
from navkit.recast.regions_layers import build_layer_regions
from navkit.recast.regions_monotone import build_regions_monotone
from navkit.recast.regions_watershed import build_regions
from navkit.recast.types import BORDER_REG

PEER_BORDER = 5


def partition(chf, kind, *, border_size=0, min_area=0, merge_area=0):
    """Run one partition; watershed builds its distance field first."""
    if kind == "watershed":
        chf = build_distance_field(chf)
        return build_regions(
            chf, border_size=border_size, min_region_area=min_area, merge_region_area=merge_area
        )
    if kind == "monotone":
        return build_regions_monotone(
            chf, border_size=border_size, min_region_area=min_area, merge_region_area=merge_area
        )
    return build_layer_regions(chf, border_size=border_size, min_region_area=min_area)


def run_recast(chf, kind, cfg, border_size):
    kw = dict(border_size=border_size, min_region_area=cfg["minRegionArea"])
    if kind == "watershed":
        return build_regions(chf, merge_region_area=cfg["mergeRegionArea"], **kw)
    if kind == "monotone":
        return build_regions_monotone(chf, merge_region_area=cfg["mergeRegionArea"], **kw)
    return build_layer_regions(chf, **kw)


def border_dump(mesh: str, kind: str):
    return border_stage_dump(mesh, kind)


# -- Recast's own output ----------------------------------------------------------------
CASES = [(m, k) for m in MESHES for k in ("watershed", "monotone", "layers")]


@pytest.mark.peer
@pytest.mark.parametrize("name,kind", CASES)
def test_regions_equal_recast(name, kind):
    manifest, stages = stage_dump(name, kind)
    src = "compact_distance" if kind == "watershed" else "compact_eroded"
    chf = chf_from_dump(manifest, stages, src)
    out = run_recast(chf, kind, manifest["rcConfig"], 0)
    ref = stages["compact_regions"]["reg"]
    assert out.reg.dtype == np.uint16
    np.testing.assert_array_equal(out.reg, ref)
    assert out.max_regions == manifest["stages"]["compact_regions"]["fields"]["maxRegions"]
    assert out.border_size == 0
    np.testing.assert_array_equal(out.dist, chf.dist)


@pytest.mark.peer
@pytest.mark.parametrize("name,kind", CASES)
def test_regions_with_border_equal_recast(name, kind):
    manifest, stages = border_dump(name, kind)
    src = "compact_distance" if kind == "watershed" else "compact_eroded"
    chf = chf_from_dump(manifest, stages, src)
    out = run_recast(chf, kind, manifest["rcConfig"], PEER_BORDER)
    ref = stages["compact_regions"]["reg"]
    np.testing.assert_array_equal(out.reg, ref)
    assert out.max_regions == manifest["stages"]["compact_regions"]["fields"]["maxRegions"]
    assert out.border_size == PEER_BORDER
    # border strips carry ids 1..4 | BORDER_REG; interior ids start after the 4 border ids
    xs, zs = span_cells(chf)
    w, h, b = chf.width, chf.height, PEER_BORDER
    in_border = (xs < b) | (xs >= w - b) | (zs < b) | (zs >= h - b)
    walk = chf.areas != 0
    assert ((out.reg[in_border & walk] & BORDER_REG) != 0).all()
    assert ((out.reg[~in_border] & BORDER_REG) == 0).all()
    inner = np.unique(out.reg[~in_border & (out.reg != 0)])
    np.testing.assert_array_equal(inner, np.arange(5, out.max_regions))


# -- hand-made oracles -------------------------------------------------------------------
KINDS = ["watershed", "monotone", "layers"]


@pytest.mark.parametrize("kind", KINDS)
def test_two_separate_rectangles_make_two_regions(kind):
    m = np.zeros((12, 25), int)
    m[1:11, 1:11] = 63
    m[1:11, 14:24] = 63
    out = partition(mask_chf(m), kind, min_area=8, merge_area=20)
    r = out.reg.reshape(-1)
    chf_mask = m.reshape(-1)[m.reshape(-1) != 0]
    assert chf_mask.size == r.size
    grid = np.zeros_like(m)
    grid[m != 0] = r
    left, right = np.unique(grid[1:11, 1:11]), np.unique(grid[1:11, 14:24])
    assert left.size == 1 and right.size == 1
    assert {int(left[0]), int(right[0])} == {1, 2}
    assert out.max_regions == 3  # ids 1, 2 plus Recast's trailing unused id


@pytest.mark.parametrize("kind", KINDS)
def test_small_region_is_removed(kind):
    m = np.zeros((16, 16), int)
    m[1:11, 1:11] = 63  # 100 spans: kept
    m[13:16, 13:16] = 63  # 9 spans: below min_region_area
    out = partition(mask_chf(m), kind, min_area=20, merge_area=0)
    grid = np.zeros_like(m)
    grid[m != 0] = out.reg
    assert (grid[13:16, 13:16] == 0).all()
    assert (grid[1:11, 1:11] == 1).all()


@pytest.mark.parametrize("kind", ["watershed", "monotone"])
def test_region_area_counts_connected_groups(kind):
    # Two touching 4x4 squares of different area ids: each is a region of 16
    # spans, together 32 >= min_region_area 20, so neither is removed.
    m = np.zeros((6, 10), int)
    m[1:5, 1:5] = 63
    m[1:5, 5:9] = 9
    out = partition(mask_chf(m), kind, min_area=20, merge_area=0)
    assert (out.reg != 0).all()
    assert np.unique(out.reg).size == 2  # different areas never merge


@pytest.mark.parametrize("merge_area,expected", [(0, 3), (20, 1)])
def test_small_monotone_regions_merge_into_neighbour(merge_area, expected):
    # A "U" upside down: two 3x4 prongs (12 spans each) below a 12x10 bar. The
    # sweep gives each prong its own region and the bar a third one (its first
    # row touches both prongs). With merge_region_area 20 the prongs merge
    # into the bar; with 0 they stay (they touch the null border).
    m = np.zeros((15, 14), int)
    m[1:5, 1:4] = 63
    m[1:5, 10:13] = 63
    m[5:15, 1:13] = 63
    out = partition(mask_chf(m), "monotone", min_area=0, merge_area=merge_area)
    assert np.unique(out.reg).size == expected
    assert (out.reg != 0).all()


def test_small_watershed_region_merges():
    # A big square with a thin 2-wide corridor leading to a small 3x3 room: the
    # watershed gives the room (and corridor) their own region(s); with a large
    # merge_region_area they all end up in the square's region.
    m = np.zeros((14, 24), int)
    m[1:13, 1:13] = 63
    m[6:8, 13:18] = 63
    m[5:10, 18:23] = 63
    chf = mask_chf(m)
    split = partition(chf, "watershed", min_area=0, merge_area=0)
    assert np.unique(split.reg).size >= 2
    merged = partition(chf, "watershed", min_area=0, merge_area=200)
    assert np.unique(merged.reg).size == 1
    assert (merged.reg == 1).all()


def test_layers_split_overlapping_floors():
    # Two full floors above each other (y 0 and y 20), linked by nothing: layer
    # partitioning must give them different ids (one per floor).
    fl = [[[(0, 63), (20, 63)] for _ in range(10)] for _ in range(10)]
    out = partition(grid_chf(fl), "layers", min_area=0)
    lower, upper = out.reg[0::2], out.reg[1::2]
    assert np.unique(lower).size == 1 and np.unique(upper).size == 1
    assert lower[0] != upper[0]


@pytest.mark.parametrize("kind", KINDS)
def test_border_painting_by_hand(kind):
    # 12x12 walkable square, border 2: strips x<2 -> 1, x>=10 -> 2, then z<2 -> 3
    # and z>=10 -> 4 painted over (corners end up 3 or 4), all | BORDER_REG. The
    # 8x8 interior becomes region 5: ids 1..4 stay reserved by the border.
    m = np.full((12, 12), 63)
    out = partition(mask_chf(m), kind, border_size=2, min_area=0, merge_area=0)
    g = out.reg.reshape(12, 12).astype(int)
    B = BORDER_REG
    assert (g[2:10, 0:2] == (1 | B)).all()
    assert (g[2:10, 10:12] == (2 | B)).all()
    assert (g[0:2, :] == (3 | B)).all()
    assert (g[10:12, :] == (4 | B)).all()
    assert (g[2:10, 2:10] == 5).all()
    assert out.max_regions == 6
    assert out.border_size == 2


@pytest.mark.parametrize("kind", KINDS)
def test_small_region_at_tile_border_is_kept(kind):
    # A 3x3 patch touching the painted border is not removed even when smaller
    # than min_region_area: its real size is unknown (it continues in the next tile).
    m = np.zeros((12, 12), int)
    m[0:5, 4:7] = 63  # rows 0..1 are border, rows 2..4 interior (9 spans)
    out = partition(mask_chf(m), kind, border_size=2, min_area=50, merge_area=0)
    g = np.zeros((12, 12), int)
    g[m != 0] = out.reg
    assert (g[2:5, 4:7] != 0).all()
    assert (g[0:2, 4:7] == (3 | BORDER_REG)).all()


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_raises(kind):
    chf = mask_chf(np.full((4, 4), 63))
    with pytest.raises(InputError):
        partition(chf, kind, border_size=-1)
    with pytest.raises(InputError):
        partition(chf, kind, min_area=-3)
    con = chf.con.copy()
    con[5] = (int(con[5]) & 0xFFFFFFC0) | 7  # neighbour cell has 1 span, not 8
    with pytest.raises(InputError):
        partition(chf._replace(con=con), kind)
    with pytest.raises(InputError):
        partition(chf._replace(cells_count=chf.cells_count[:, :3]), kind)


def test_watershed_needs_matching_dist():
    chf = build_distance_field(mask_chf(np.full((4, 4), 63)))
    with pytest.raises(InputError):
        build_regions(
            chf._replace(dist=chf.dist[:3]), border_size=0, min_region_area=0, merge_region_area=0
        )


def test_empty_and_unwalkable_grids():
    for kind in KINDS:
        out = partition(mask_chf(np.zeros((3, 3), int)), kind)
        assert out.reg.size == 0 and out.max_regions == 1
        fl = [[[(0, 0)] for _ in range(3)] for _ in range(3)]  # spans with null area
        out = partition(grid_chf(fl), kind)
        assert (out.reg == 0).all()
        empty = mask_chf(np.zeros((1, 1), int))._replace(
            width=0,
            height=0,
            cells_index=np.zeros((0, 0), np.uint32),
            cells_count=np.zeros((0, 0), np.uint8),
        )
        out = partition(empty, kind, border_size=3)
        assert (
            out.reg.size == 0 and out.max_regions == 5
        )  # 4 reserved border ids + Recast's trailing id


# -- properties on random multi-level grids -----------------------------------------------
@st.composite
def grids(draw):
    w = draw(st.integers(2, 11))
    h = draw(st.integers(2, 11))
    rows = []
    for _ in range(h):
        row = []
        for _ in range(w):
            cell = []
            lo = draw(st.sampled_from([None, 0, 0, 1, 2]))
            if lo is not None:
                cell.append((lo, draw(st.sampled_from([63, 63, 63, 5, 0]))))
            hi = draw(st.sampled_from([None, None, 20, 21]))
            if hi is not None:
                cell.append((hi, draw(st.sampled_from([63, 63, 5]))))
            row.append(cell)
        rows.append(row)
    return rows


def components(chf, keep):
    """Connected components (over links) of the spans where ``keep``; list of index arrays."""
    xs, zs = span_cells(chf)
    seen = np.zeros(chf.span_count, bool)
    comps = []
    for s in range(chf.span_count):
        if seen[s] or not keep[s]:
            continue
        q = deque([s])
        seen[s] = True
        comp = []
        while q:
            i = q.popleft()
            comp.append(i)
            for a in neighbours(chf, i, xs[i], zs[i]):
                if keep[a] and not seen[a]:
                    seen[a] = True
                    q.append(a)
        comps.append(np.array(comp))
    return comps


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fl=grids(), kind=st.sampled_from(KINDS), min_area=st.integers(0, 12), merge=st.integers(0, 30)
)
def test_partition_invariants(fl, kind, min_area, merge):
    chf = grid_chf(fl)
    out = partition(chf, kind, min_area=min_area, merge_area=merge)
    reg = out.reg.astype(np.int64)
    walk = chf.areas != 0
    # null-area spans never get a region; no border ids without a border
    assert (reg[~walk] == 0).all()
    assert (reg & BORDER_REG == 0).all()
    # ids are 1..max_regions-1, all used (Recast's count includes one unused trailing id)
    np.testing.assert_array_equal(np.unique(reg[reg != 0]), np.arange(1, out.max_regions))
    for r in np.unique(reg[reg != 0]):
        members = reg == r
        # one area per region
        assert np.unique(chf.areas[members]).size == 1
        # each region is connected through links between its own spans
        assert len(components(chf, members)) == 1
    # every connected group of surviving spans holds at least min_area spans
    for comp in components(chf, reg != 0):
        assert comp.size >= min_area
    if kind == "watershed" and build_distance_field(chf).max_distance == 0:
        # Recast's level loop starts at (max_distance + 1) & ~1 = 0: no region is seeded
        assert (reg == 0).all()
    elif min_area == 0:
        # nothing is removed: every walkable span has a region
        assert (reg[walk] != 0).all()
    if kind == "layers":
        # a layer never covers two spans of one column
        for z in range(chf.height):
            for x in range(chf.width):
                s, c = int(chf.cells_index[z, x]), int(chf.cells_count[z, x])
                ids = reg[s : s + c]
                ids = ids[ids != 0]
                assert np.unique(ids).size == ids.size
    # deterministic, and independent of the reg array passed in
    again = partition(out, kind, min_area=min_area, merge_area=merge)
    np.testing.assert_array_equal(again.reg, out.reg)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fl=grids(), kind=st.sampled_from(KINDS), border=st.integers(1, 3), min_area=st.integers(0, 12)
)
def test_border_invariants(fl, kind, border, min_area):
    chf = grid_chf(fl)
    out = partition(chf, kind, border_size=border, min_area=min_area, merge_area=10)
    reg = out.reg.astype(np.int64)
    xs, zs = span_cells(chf)
    w, h = chf.width, chf.height
    bw, bh = min(w, border), min(h, border)
    walk = chf.areas != 0
    # painting order: x strips, then z strips over them
    expect = np.zeros(chf.span_count, np.int64)
    expect[xs < bw] = 1 | BORDER_REG
    expect[xs >= w - bw] = 2 | BORDER_REG
    expect[zs < bh] = 3 | BORDER_REG
    expect[zs >= h - bh] = 4 | BORDER_REG
    in_border = expect != 0
    np.testing.assert_array_equal(reg[in_border & walk], expect[in_border & walk])
    assert (reg[~walk] == 0).all()
    inner = reg[~in_border]
    assert (inner & BORDER_REG == 0).all()
    # ids 1..4 stay reserved for the strips; interior ids are 5..max_regions-1, all used
    np.testing.assert_array_equal(
        np.unique(inner[inner != 0]), np.arange(5, max(out.max_regions, 5))
    )
    for r in np.unique(inner[inner != 0]):
        members = reg == r
        assert np.unique(chf.areas[members]).size == 1
        assert len(components(chf, members)) == 1
