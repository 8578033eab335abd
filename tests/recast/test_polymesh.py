"""Tests of navkit.recast.polymesh (rcBuildPolyMesh, rcMergePolyMeshes)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import (
    MESHES,
    PARTITIONS,
    border_stage_dump,
    contours_from_dump,
    peer_file,
    polymesh_from_dump,
    stage_dump,
)

from navkit.errors import BuildError, ConfigError, InputError
from navkit.recast.polymesh import build_poly_mesh, merge_poly_meshes
from navkit.recast.types import BORDER_VERTEX, MESH_NULL_IDX, ContourSet, PolyMesh

NULL = MESH_NULL_IDX
CASES = [(m, p) for m in MESHES for p in PARTITIONS]


# -- helpers ------------------------------------------------------------------------------
def make_cset(
    contours, *, regs=None, areas=None, border_size=0, width=64, height=64, flags=None
) -> ContourSet:
    """A ContourSet from lists of (x, z) [or (x, y, z)] outlines, y = 0 by default."""
    rows = []
    for ci, c in enumerate(contours):
        for vi, p in enumerate(c):
            x, y, z = (p[0], 0, p[1]) if len(p) == 2 else p
            f = 0 if flags is None else flags[ci][vi]
            rows.append((x, y, z, f))
    n = len(contours)
    verts = np.array(rows, np.int32).reshape(-1, 4)
    nverts = np.array([len(c) for c in contours], np.int32)
    return ContourSet(
        reg=np.array(regs if regs is not None else range(1, n + 1), np.uint16),
        area=np.array(areas if areas is not None else [63] * n, np.uint8),
        nverts=nverts,
        nrverts=nverts.copy(),
        verts=verts,
        rverts=verts.copy(),
        bmin=np.zeros(3, np.float32),
        bmax=np.array([width * 0.3, 10, height * 0.3], np.float32),
        cs=float(np.float32(0.3)),
        ch=float(np.float32(0.2)),
        width=width,
        height=height,
        border_size=border_size,
        max_error=float(np.float32(1.3)),
    )


def poly_list(pm: PolyMesh, i: int) -> list[int]:
    row = pm.polys[i, : pm.nvp]
    return [int(v) for v in row if v != NULL]


def signed_area2(pts) -> int:
    """Twice the shoelace area over (x, z); negative for Recast's winding."""
    s = 0
    for i in range(len(pts)):
        x0, z0 = pts[i]
        x1, z1 = pts[(i + 1) % len(pts)]
        s += int(x0) * int(z1) - int(x1) * int(z0)
    return s


def poly_xz(pm: PolyMesh, i: int):
    return [(int(pm.verts[v, 0]), int(pm.verts[v, 2])) for v in poly_list(pm, i)]


def check_invariants(pm: PolyMesh, nvp: int) -> None:
    """Convex (collinear allowed), <= nvp verts, padding, symmetric links."""
    assert pm.polys.shape[1] == 2 * nvp
    assert pm.polys.dtype == np.uint16 and pm.verts.dtype == np.uint16
    for i in range(pm.npolys):
        row = pm.polys[i, :nvp]
        n = int(np.count_nonzero(row != NULL))
        assert 3 <= n <= nvp
        assert np.all(row[:n] != NULL) and np.all(row[n:] == NULL)
        assert np.all(pm.polys[i, nvp + n :] == NULL)
        assert len(set(row[:n].tolist())) == n
        assert np.all(row[:n] < pm.nverts)
        pts = poly_xz(pm, i)
        for j in range(n):
            (ax, az), (bx, bz), (cx, cz) = pts[j - 1], pts[j], pts[(j + 1) % n]
            assert (bx - ax) * (cz - az) - (cx - ax) * (bz - az) <= 0, (i, pts)
        assert signed_area2(pts) < 0
        verts = poly_list(pm, i)
        for e in range(n):
            q = int(pm.polys[i, nvp + e])
            if q == NULL or q & 0x8000:
                continue
            assert q < pm.npolys
            a, b = verts[e], verts[(e + 1) % n]
            other = poly_list(pm, q)
            m = len(other)
            back = [k for k in range(m) if other[k] == b and other[(k + 1) % m] == a]
            assert len(back) == 1, (i, q)
            assert int(pm.polys[q, nvp + back[0]]) == i


# -- Recast's own output ------------------------------------------------------------------
@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "partition"), CASES)
def test_matches_recast_polymesh_stage(mesh, partition):
    manifest, stages = stage_dump(mesh, partition)
    nvp = int(manifest["rcConfig"]["maxVertsPerPoly"])
    pm = build_poly_mesh(contours_from_dump(manifest, stages), nvp=nvp)
    ref = polymesh_from_dump(manifest, stages)
    for name in ("verts", "polys", "regs", "areas", "flags"):
        got, want = getattr(pm, name), getattr(ref, name)
        assert got.dtype == want.dtype, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert pm.nvp == ref.nvp and pm.border_size == ref.border_size
    np.testing.assert_array_equal(pm.bmin, ref.bmin)
    np.testing.assert_array_equal(pm.bmax, ref.bmax)
    assert np.float32(pm.cs) == np.float32(ref.cs) and np.float32(pm.ch) == np.float32(ref.ch)
    assert np.float32(pm.max_edge_error) == np.float32(ref.max_edge_error)


@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "partition"), CASES)
def test_matches_recast_solo_polymesh_json(mesh, partition):
    suffix = "" if partition == "watershed" else f".{partition}"
    doc = json.loads(peer_file(f"{mesh}{suffix}.solo_polymesh.json").read_text())
    ref = doc["polyMesh"]
    manifest, stages = stage_dump(mesh, partition)
    nvp = int(ref["nvp"])
    pm = build_poly_mesh(contours_from_dump(manifest, stages), nvp=nvp)
    np.testing.assert_array_equal(pm.verts, np.array(ref["verts"], np.uint16))
    assert pm.npolys == len(ref["polys"])
    for i in range(pm.npolys):
        n = len(ref["polys"][i])
        assert poly_list(pm, i) == ref["polys"][i]
        assert pm.polys[i, nvp : nvp + n].tolist() == ref["neis"][i]
    np.testing.assert_array_equal(pm.regs, np.array(ref["regs"], np.uint16))
    # the peer's JSON holds the areas after the generator's remap 63 -> 0
    remapped = np.where(pm.areas == 63, 0, pm.areas)
    np.testing.assert_array_equal(remapped, np.array(ref["areas"], np.uint8))
    np.testing.assert_array_equal(np.float32(ref["bmin"]), pm.bmin)


@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "partition"), CASES)
def test_matches_recast_with_border_size(mesh, partition):
    """Recast's solo build run with ``borderSize = 5`` (tile-style contours).

    The shared peer always builds solo meshes with borderSize 0; these dumps come
    from a local copy of the peer that takes ``borderSize`` from the environment
    (``NAVKIT_PEER_BORDER``), so they are used when present. They exercise the
    removal of BORDER_VERTEX vertices (hole re-triangulation and re-merging).
    """
    manifest, stages = border_stage_dump(mesh, partition)
    cset = contours_from_dump(manifest, stages)
    assert cset.border_size > 0
    pm = build_poly_mesh(cset, nvp=int(manifest["rcConfig"]["maxVertsPerPoly"]))
    ref = polymesh_from_dump(manifest, stages)
    for name in ("verts", "polys", "regs", "areas", "flags"):
        np.testing.assert_array_equal(getattr(pm, name), getattr(ref, name), err_msg=name)
    assert pm.border_size == ref.border_size


# -- other nvp on Recast's contours: invariants --------------------------------------------
@pytest.mark.peer
@pytest.mark.parametrize("nvp", [3, 4, 5])
@pytest.mark.parametrize(("mesh", "partition"), [(m, p) for m in MESHES for p in PARTITIONS[:2]])
def test_invariants_for_other_nvp(mesh, partition, nvp):
    manifest, stages = stage_dump(mesh, partition)
    cset = contours_from_dump(manifest, stages)
    pm = build_poly_mesh(cset, nvp=nvp)
    check_invariants(pm, nvp)
    if nvp == 3:
        # no merging: one triangle per ear, i.e. nverts - 2 per contour
        assert pm.npolys == int(sum(n - 2 for n in cset.nverts if n >= 3))
    # every (non-border) contour vertex is a mesh vertex, and every mesh vertex is used
    mv = pm.verts.astype(np.int64)
    for x, y, z, f in cset.verts[np.repeat(cset.nverts, cset.nverts) >= 3]:
        if f & BORDER_VERTEX:
            continue
        hit = (mv[:, 0] == x) & (mv[:, 2] == z) & (np.abs(mv[:, 1] - y) <= 2)
        assert hit.any(), (x, y, z)
    used = np.unique(pm.polys[:, :nvp][pm.polys[:, :nvp] != NULL])
    np.testing.assert_array_equal(used, np.arange(pm.nverts))
    # fewer vertices per polygon never gives fewer polygons
    ref = polymesh_from_dump(manifest, stages)
    assert pm.npolys >= ref.npolys


# -- small oracles --------------------------------------------------------------------------
SQUARE = [(0, 0), (0, 10), (10, 10), (10, 0)]


def test_square_is_one_quad():
    pm = build_poly_mesh(make_cset([SQUARE]), nvp=6)
    assert pm.npolys == 1 and pm.nverts == 4
    assert sorted(poly_xz(pm, 0)) == sorted(SQUARE)
    assert signed_area2(poly_xz(pm, 0)) == signed_area2(SQUARE)
    assert np.all(pm.polys[0, 6:] == NULL)
    assert pm.regs.tolist() == [1] and pm.areas.tolist() == [63]
    assert pm.flags.tolist() == [0]


def test_square_with_nvp3_is_two_triangles():
    pm = build_poly_mesh(make_cset([SQUARE]), nvp=3)
    assert pm.npolys == 2
    check_invariants(pm, 3)
    # the two triangles are each other's neighbours across the diagonal
    assert sorted(int(v) for v in pm.polys[:, 3:].ravel() if v != NULL) == [0, 1]


def test_l_shape_is_two_convex_polygons():
    ell = [(0, 0), (0, 8), (4, 8), (4, 4), (8, 4), (8, 0)]
    pm = build_poly_mesh(make_cset([ell]), nvp=6)
    assert pm.npolys == 2 and pm.nverts == 6
    check_invariants(pm, 6)
    assert sum(signed_area2(poly_xz(pm, i)) for i in range(2)) == signed_area2(ell)
    # the reflex corner (4, 4) must be on the cut between the two
    cut = set(poly_xz(pm, 0)) & set(poly_xz(pm, 1))
    assert (4, 4) in cut and len(cut) == 2
    assert sorted(int(v) for v in pm.polys[:, 6:].ravel() if v != NULL) == [0, 1]


def test_vertices_weld_within_two_voxels_of_height():
    a = [(0, 5, 0), (0, 5, 10), (10, 5, 10), (10, 5, 0)]
    b = [(10, 7, 0), (10, 7, 10), (20, 8, 10), (20, 8, 0)]  # shares x=10 with y+2
    c = [(20, 11, 0), (20, 11, 10), (30, 11, 10), (30, 11, 0)]  # y+3 from b: no weld
    pm = build_poly_mesh(make_cset([a, b, c]), nvp=6)
    assert pm.nverts == 4 + 2 + 4
    # the first vertex added wins: the shared edge keeps y = 5
    assert pm.verts[:, 1].tolist().count(5) == 4
    # a and b are neighbours, b and c are not (different vertices)
    assert pm.polys[0, 6:].tolist().count(1) == 1
    assert pm.polys[1, 6:].tolist().count(0) == 1
    assert 2 not in pm.polys[1, 6:].tolist() and 1 not in pm.polys[2, 6:].tolist()


def test_short_contours_are_skipped():
    pm = build_poly_mesh(make_cset([[(0, 0), (0, 5)], SQUARE]), nvp=6)
    assert pm.npolys == 1 and pm.regs.tolist() == [2]


def test_untriangulable_contour_warns():
    # a contour doubling back on a repeated vertex has no ear: Recast logs and skips it
    bad = [(3, 1), (1, 3), (1, 3), (1, 0)]
    with pytest.warns(RuntimeWarning, match="triangulated"):
        pm = build_poly_mesh(make_cset([bad, SQUARE]), nvp=6)
    assert pm.regs.tolist() == [2]


def test_empty_contour_set():
    pm = build_poly_mesh(make_cset([]), nvp=6)
    assert pm.verts.shape == (0, 3) and pm.polys.shape == (0, 12)


# -- tile borders ------------------------------------------------------------------------------
def test_border_vertices_removed_and_portals_marked():
    # a 10x10 tile fully covered; midpoints of the four sides are border vertices
    ring = [(0, 0), (0, 5), (0, 10), (5, 10), (10, 10), (10, 5), (10, 0), (5, 0)]
    flags = [[BORDER_VERTEX if (x, z) not in SQUARE else 0 for x, z in ring]]
    cset = make_cset([ring], border_size=3, width=10, height=10, flags=flags)
    pm = build_poly_mesh(cset, nvp=6)
    assert pm.border_size == 3
    assert pm.nverts == 4 and sorted(map(tuple, pm.verts[:, [0, 2]].tolist())) == sorted(SQUARE)
    assert pm.npolys == 1
    pts = poly_xz(pm, 0)
    for e in range(4):
        (ax, az), (bx, bz) = pts[e], pts[(e + 1) % 4]
        want = (
            0x8000
            if ax == bx == 0
            else 0x8001
            if az == bz == 10
            else 0x8002
            if ax == bx == 10
            else 0x8003
        )
        assert int(pm.polys[0, 6 + e]) == want


def test_border_vertex_shared_by_two_regions():
    # two regions side by side; (5, 0) and (5, 10) lie on the tile border
    left = [(0, 0), (0, 10), (5, 10), (5, 0)]
    right = [(5, 0), (5, 10), (10, 10), (10, 0)]
    fl = [[BORDER_VERTEX if p in [(5, 0), (5, 10)] else 0 for p in c] for c in (left, right)]
    cset = make_cset([left, right], border_size=2, width=10, height=10, flags=fl)
    pm = build_poly_mesh(cset, nvp=6)
    check_invariants(pm, 6)
    xz = set(map(tuple, pm.verts[:, [0, 2]].tolist()))
    assert (5, 0) not in xz and (5, 10) not in xz
    assert sum(signed_area2(poly_xz(pm, i)) for i in range(pm.npolys)) == -200
    # the filled hole spans both regions: region 0 (RC_MULTIPLE_REGS)
    assert 0 in pm.regs.tolist()
    for i in range(pm.npolys):
        pts = poly_xz(pm, i)
        n = len(pts)
        for e in range(n):
            (ax, az), (bx, bz) = pts[e], pts[(e + 1) % n]
            nei = int(pm.polys[i, 6 + e])
            on_side = ax == bx in (0, 10) or az == bz in (0, 10)
            assert (nei & 0x8000 != 0 and nei != NULL) == on_side


def test_border_vertex_at_lone_tip_is_kept():
    # a triangle whose flagged tip touches nothing else cannot be removed
    tri = [(0, 0), (5, 10), (10, 0)]
    cset = make_cset([tri], border_size=1, width=10, height=10, flags=[[0, BORDER_VERTEX, 0]])
    pm = build_poly_mesh(cset, nvp=6)
    assert pm.nverts == 3 and pm.npolys == 1


def test_border_vertex_at_quad_corner_is_kept():
    # removing a lone quad's corner would leave only 2 of its edges: Recast keeps it
    flags = [[0, 0, BORDER_VERTEX, 0]]
    cset = make_cset([SQUARE], border_size=1, width=10, height=10, flags=flags)
    pm = build_poly_mesh(cset, nvp=6)
    assert pm.nverts == 4 and pm.npolys == 1
    assert sorted(poly_xz(pm, 0)) == sorted(SQUARE)


def test_no_portals_without_border():
    pm = build_poly_mesh(make_cset([SQUARE], width=10, height=10), nvp=6)
    assert np.all(pm.polys[0, 6:] == NULL)


# -- property tests --------------------------------------------------------------------------
@st.composite
def star_polygons(draw):
    """Star-shaped simple polygons on the voxel grid, wound as Recast's contours."""
    n = draw(st.integers(3, 24))
    angles = sorted(draw(st.lists(st.integers(0, 359), min_size=n, max_size=n, unique=True)))
    radii = draw(st.lists(st.integers(2, 40), min_size=n, max_size=n))
    pts = []
    for a, r in zip(angles, radii, strict=True):
        t = np.deg2rad(a)
        p = (int(round(50 + r * np.cos(t))), int(round(50 + r * np.sin(t))))
        if not pts or p != pts[-1]:
            pts.append(p)
    if len(pts) > 1 and pts[0] == pts[-1]:
        pts.pop()
    if signed_area2(pts) > 0:
        pts.reverse()
    return pts


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(star_polygons(), st.sampled_from([3, 4, 5, 6]))
def test_property_star_polygons(pts, nvp):
    cset = make_cset([pts], width=100, height=100)
    pm = build_poly_mesh(cset, nvp=nvp)
    if len(pts) < 3:
        assert pm.npolys == 0
        return
    assert pm.npolys <= len(pts) - 2
    # welded vertices: every contour point is a mesh vertex
    assert set(map(tuple, pm.verts[:, [0, 2]].tolist())) == set(pts)
    for i in range(pm.npolys):
        assert 3 <= len(poly_list(pm, i)) <= nvp
    if _is_simple(pts):
        # a simple outline is fully triangulated: convex pieces that tile it exactly
        check_invariants(pm, nvp)
        total = sum(signed_area2(poly_xz(pm, i)) for i in range(pm.npolys))
        assert total == signed_area2(pts)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), min_size=0, max_size=14),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([3, 4, 6, 9]),
    st.integers(0, 2),
)
def test_property_arbitrary_outlines_never_crash(contours, nvp, border):
    """Self-intersecting, repeated or degenerate outlines: a well-formed mesh, no crash."""
    flags = [[BORDER_VERTEX if (x + z) % 3 == 0 else 0 for x, z in c] for c in contours]
    cset = make_cset(contours, border_size=border, width=12, height=12, flags=flags)
    pm = build_poly_mesh(cset, nvp=nvp)
    assert pm.polys.shape == (pm.npolys, 2 * nvp)
    assert pm.npolys <= sum(max(len(c) - 2, 0) for c in contours)
    for i in range(pm.npolys):
        n = len(poly_list(pm, i))
        assert 3 <= n <= nvp
        assert all(v < pm.nverts for v in poly_list(pm, i))
        for q in pm.polys[i, nvp : nvp + n].tolist():
            assert q == NULL or q < pm.npolys or (border and q in (0x8000, 0x8001, 0x8002, 0x8003))


def _is_simple(pts) -> bool:
    """No two non-adjacent edges touch and no three consecutive points are collinear."""
    n = len(pts)

    def a2(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])

    def on(a, b, c):
        return (
            a2(a, b, c) == 0
            and min(a[0], b[0]) <= c[0] <= max(a[0], b[0])
            and min(a[1], b[1]) <= c[1] <= max(a[1], b[1])
        )

    def meet(a, b, c, d):
        d1, d2, d3, d4 = a2(a, b, c), a2(a, b, d), a2(c, d, a), a2(c, d, b)
        if ((d1 > 0) != (d2 > 0)) and ((d3 > 0) != (d4 > 0)) and 0 not in (d1, d2, d3, d4):
            return True
        return on(a, b, c) or on(a, b, d) or on(c, d, a) or on(c, d, b)

    if len(set(pts)) != n:
        return False
    for i in range(n):
        if a2(pts[i - 1], pts[i], pts[(i + 1) % n]) == 0:
            return False
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue
            if meet(pts[i], pts[(i + 1) % n], pts[j], pts[(j + 1) % n]):
                return False
    return True


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(1, 4), st.integers(1, 4)),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([3, 4, 6]),
)
def test_property_rectangles_neighbours(rects, nvp):
    """Rectangles on a grid: shared edges between exact copies of one edge link both ways."""
    contours = [[(x, z), (x, z + h), (x + w, z + h), (x + w, z)] for x, z, w, h in rects]
    pm = build_poly_mesh(make_cset(contours, width=16, height=16), nvp=nvp)
    check_invariants(pm, nvp)
    assert pm.regs.tolist() == sorted(pm.regs.tolist())
    assert len(pm.regs) == (len(rects) if nvp >= 4 else 2 * len(rects))


# -- errors ------------------------------------------------------------------------------------
def test_bad_nvp():
    with pytest.raises(ConfigError):
        build_poly_mesh(make_cset([SQUARE]), nvp=2)
    with pytest.raises(ConfigError):
        build_poly_mesh(make_cset([SQUARE]), nvp=2.5)  # type: ignore[arg-type]


def test_bad_contour_arrays():
    good = make_cset([SQUARE])
    with pytest.raises(InputError):
        build_poly_mesh(good._replace(verts=good.verts[:3]), nvp=6)
    with pytest.raises(InputError):
        build_poly_mesh(good._replace(reg=np.zeros(2, np.uint16)), nvp=6)
    with pytest.raises(InputError):
        build_poly_mesh(good._replace(verts=good.verts.astype(np.float32)), nvp=6)
    with pytest.raises(InputError):
        build_poly_mesh(good._replace(nverts=np.array([-4], np.int32)), nvp=6)


def test_too_many_vertices():
    n = 0xFFFE
    t = np.arange(n)
    verts = np.zeros((n, 4), np.int32)
    verts[:, 0] = t % 1000
    verts[:, 2] = t // 1000
    cset = make_cset([SQUARE])._replace(
        nverts=np.array([n], np.int32), nrverts=np.array([n], np.int32), verts=verts
    )
    with pytest.raises(BuildError):
        build_poly_mesh(cset, nvp=6)


# -- merging -----------------------------------------------------------------------------------
@pytest.mark.peer
def test_merge_single_mesh_is_identity():
    manifest, stages = stage_dump("dungeon", "watershed")
    ref = polymesh_from_dump(manifest, stages)
    out = merge_poly_meshes([ref])
    for name in ("verts", "polys", "regs", "areas", "flags"):
        np.testing.assert_array_equal(getattr(out, name), getattr(ref, name), err_msg=name)


def test_merge_two_tiles_links_across_the_seam():
    tile = make_cset([SQUARE], border_size=2, width=10, height=10)
    a = build_poly_mesh(tile, nvp=6)
    cs = np.float32(0.3)
    b = a._replace(
        bmin=a.bmin + np.array([10 * cs, 0, 0], np.float32),
        bmax=a.bmax + np.array([10 * cs, 0, 0], np.float32),
        regs=np.array([7], np.uint16),
        flags=np.array([3], np.uint16),
    )
    # each tile alone: four portal sides
    assert sorted(a.polys[0, 6:10].tolist()) == [0x8000, 0x8001, 0x8002, 0x8003]
    m = merge_poly_meshes([a, b])
    assert m.nverts == 6 and m.npolys == 2
    assert m.regs.tolist() == [1, 7] and m.flags.tolist() == [0, 3]
    np.testing.assert_array_equal(m.bmin, a.bmin)
    np.testing.assert_array_equal(m.bmax, b.bmax)
    xs = sorted({int(v) for v in m.verts[:, 0]})
    assert xs == [0, 10, 20]
    nei_a = m.polys[0, 6:10].tolist()
    nei_b = m.polys[1, 6:10].tolist()
    # the seam is an ordinary link now; the outer sides stay portals
    assert 1 in nei_a and 0x8002 not in nei_a and 0x8000 in nei_a
    assert 0 in nei_b and 0x8000 not in nei_b and 0x8002 in nei_b
    assert 0x8001 in nei_a and 0x8003 in nei_b


def test_merge_rejects_mixed_nvp():
    a = build_poly_mesh(make_cset([SQUARE]), nvp=6)
    b = build_poly_mesh(make_cset([SQUARE]), nvp=4)
    with pytest.raises(InputError):
        merge_poly_meshes([a, b])
    with pytest.raises(InputError):
        merge_poly_meshes([])


def test_merge_too_many_vertices():
    base = build_poly_mesh(make_cset([SQUARE]), nvp=6)
    n = 40000
    t = np.arange(n)
    verts = np.stack([t % 200, np.zeros(n, int), t // 200], axis=1).astype(np.uint16)
    empty = base._replace(
        verts=verts,
        polys=np.zeros((0, 12), np.uint16),
        regs=np.zeros(0, np.uint16),
        flags=np.zeros(0, np.uint16),
        areas=np.zeros(0, np.uint8),
    )
    far = empty._replace(verts=verts + np.array([0, 10, 0], np.uint16))  # no welding
    with pytest.raises(BuildError):
        merge_poly_meshes([empty, far])


# -- a tile of Recast's tiled navmesh: border vertices and portals ----------------------------
_DT_DIR = {0: 4, 1: 2, 2: 0, 3: 6}  #: dtCreateNavMeshData's portal side codes per Recast dir


@pytest.mark.peer
@pytest.mark.parametrize("mesh_name", MESHES)
def test_tile_matches_recast_tiled_export(mesh_name):
    """One interior tile of Recast's tiled bake (borderSize = walkableRadius + 3).

    Runs navkit's whole tile pipeline, so it also depends on the earlier stages;
    the polygon mesh is compared with the tile's Detour polygons (same vertex and
    polygon order; neighbours stored as ``p + 1`` and portals as
    ``0x8000 | side``).
    """
    from peer_support import mesh_path, peer_tool

    rre = peer_tool("read_recast_export")

    from navkit.geometry.obj import load_obj
    from navkit.pipeline import build_tile, mesh_bounds, tile_grid
    from navkit.recast.config import BakeConfig

    data = peer_file(f"{mesh_name}.tiled.navmesh.bin").read_bytes()
    tiles = [rec["tile"] for rec in rre.read_navmesh_set(data)["tiles"]]

    # the tile whose polygons have portals on the most sides (then the most portals)
    def portal_sides(t):
        n = t["polys"]["neis"]
        ext = n[(n & 0x8000) != 0]
        return (len(set((ext & 0xFF).tolist())), len(ext))

    tile = max(tiles, key=portal_sides)
    assert portal_sides(tile)[0] >= 2
    h = tile["header"]
    mesh = load_obj(mesh_path(mesh_name))
    cfg = BakeConfig(tile_size=48)
    bmin, bmax = mesh_bounds(mesh)
    grid = tile_grid(bmin, bmax, cfg.voxel())
    pm = build_tile(mesh.vertices, mesh.triangles, mesh.areas, cfg, grid, h["x"], h["y"]).pmesh
    assert pm is not None and pm.border_size > 0
    polys = tile["polys"]
    assert (pm.npolys, pm.nverts) == (len(polys), h["vertCount"])
    # Detour's vertices: bmin + v * cs (y: * ch) in float32
    f = np.float32
    world = np.stack(
        [
            f(pm.bmin[0]) + pm.verts[:, 0].astype(f) * f(pm.cs),
            f(pm.bmin[1]) + pm.verts[:, 1].astype(f) * f(pm.ch),
            f(pm.bmin[2]) + pm.verts[:, 2].astype(f) * f(pm.cs),
        ],
        axis=1,
    )
    np.testing.assert_array_equal(world, np.asarray(tile["verts"], np.float32).reshape(-1, 3))
    nvp = pm.nvp
    for i in range(pm.npolys):
        n = int(polys["vertCount"][i])
        assert poly_list(pm, i) == polys["verts"][i, :n].tolist()
        got = []
        for s in pm.polys[i, nvp : nvp + n].tolist():
            got.append(0 if s == NULL else 0x8000 | _DT_DIR[s & 0xF] if s & 0x8000 else s + 1)
        assert got == polys["neis"][i, :n].tolist(), i
