"""build_contours (Recast's rcBuildContours): Recast's dumps, hand-made oracles, invariants."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from peer_support import (
    MESHES,
    PARTITIONS,
    _read_stages_module,
    border_stage_dump,
    chf_from_dump,
    peer_workdir,
    stage_dump,
)

from navkit.errors import ConfigError, InputError
from navkit.recast.contours import (
    CONTOUR_TESS_AREA_EDGES,
    CONTOUR_TESS_WALL_EDGES,
    _smoothsort,
    build_contours,
)
from navkit.recast.types import (
    AREA_BORDER,
    BORDER_REG,
    BORDER_VERTEX,
    CONTOUR_REG_MASK,
    NOT_CONNECTED,
    WALKABLE_AREA,
    CompactHeightfield,
)

ARRAYS = ("reg", "area", "nverts", "nrverts", "verts", "rverts")


# -- Recast's own contours -------------------------------------------------------------------
@pytest.mark.peer
@pytest.mark.parametrize("partition", PARTITIONS)
@pytest.mark.parametrize("mesh", MESHES)
def test_equals_recast_dump(mesh, partition):
    manifest, stages = stage_dump(mesh, partition)
    chf = chf_from_dump(manifest, stages, "compact_regions")
    _assert_equals_dump(chf, manifest, stages)


def _assert_equals_dump(chf, manifest, stages):
    cfg = manifest["rcConfig"]
    cset = build_contours(
        chf, max_error=cfg["maxSimplificationError"], max_edge_len=cfg["maxEdgeLen"]
    )
    ref = stages["contours"]
    for name in ARRAYS:
        ours = getattr(cset, name)
        assert ours.shape == ref[name].shape, name
        assert np.array_equal(ours, ref[name]), name
    fields = manifest["stages"]["contours"]["fields"]
    assert np.array_equal(cset.bmin, np.float32(fields["bmin"]))
    assert np.array_equal(cset.bmax, np.float32(fields["bmax"]))
    assert (cset.width, cset.height, cset.border_size) == (
        fields["width"],
        fields["height"],
        fields["borderSize"],
    )
    assert cset.max_error == np.float32(fields["maxError"])


@pytest.mark.peer
@pytest.mark.parametrize("partition", PARTITIONS)
@pytest.mark.parametrize("mesh", MESHES)
def test_equals_recast_dump_with_border(mesh, partition):
    """Recast's solo build with its partition run at ``borderSize = 5`` (tile-style).

    The shared peer always builds solo meshes with borderSize 0; these dumps come from a
    local copy of the peer that takes the border from ``NAVKIT_PEER_BORDER`` (made by
    ``tests/recast/test_regions.py``), so they are used when present.
    """
    manifest, stages = border_stage_dump(mesh, partition)
    chf = chf_from_dump(manifest, stages, "compact_regions")
    assert chf.border_size > 0
    _assert_equals_dump(chf, manifest, stages)


def _pillars_obj(path: Path) -> None:
    """A 30 x 30 floor with a 3 x 3 grid of 2 x 2 pillars, 5 high: one layer region, 9 holes."""
    vs = [(0, 0, 0), (30, 0, 0), (30, 0, 30), (0, 0, 30)]
    fs = [(0, 2, 1), (0, 3, 2)]
    for i in range(3):
        for j in range(3):
            x, z = 6.5 + 7.5 * i, 6.5 + 7.5 * j
            b = len(vs)
            for y in (0, 5):
                vs += [(x, y, z), (x + 2, y, z), (x + 2, y, z + 2), (x, y, z + 2)]
            for q in ((4, 7, 6, 5), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)):
                fs += [(b + q[0], b + q[1], b + q[2]), (b + q[0], b + q[2], b + q[3])]
    lines = [f"v {x:g} {y:g} {z:g}" for x, y, z in vs]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in fs]
    path.write_text("\n".join(lines) + "\n")


@functools.cache
def _pillars_dump(partition: str):
    work = peer_workdir()
    obj = work / "custom" / "pillars.obj"
    out = work / "stages_custom" / f"pillars.{partition}"
    if not (out / "manifest.json").exists():
        obj.parent.mkdir(parents=True, exist_ok=True)
        _pillars_obj(obj)
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = ["node", "recast_peer.mjs", str(obj), "{}", "--sections", "", "--partition"]
        r = subprocess.run(
            [*cmd, partition, "--dump-stages", str(out)], cwd=work, capture_output=True, text=True
        )
        if r.returncode != 0 or not (out / "manifest.json").exists():
            pytest.skip(f"peer stage dump failed: {r.stderr[-300:]}")
    return _read_stages_module().load_stages(str(out))


@pytest.mark.peer
@pytest.mark.parametrize("partition", ["layers", "watershed"])
def test_equals_recast_on_pillars(partition):
    """Nine holes in one region, symmetric: several outline vertices are equally far from a
    hole corner, so the merge depends on the order qsort leaves them in (a stable sort
    gives a different outline here; Recast's wasm build sorts with musl's smoothsort)."""
    manifest, stages = _pillars_dump(partition)
    chf = chf_from_dump(manifest, stages, "compact_regions")
    if partition == "layers":
        assert np.count_nonzero(stages["contours"]["nverts"] == 0) == 9
    _assert_equals_dump(chf, manifest, stages)


# -- hand-made compact heightfields ----------------------------------------------------------
def grid_chf(regs, areas=None, border=0, max_regions=None, cs=0.5, ch=0.25):
    """One-layer chf from a (h, w) grid of region ids; -1 = no span. Neighbours all linked."""
    regs = np.asarray(regs, dtype=np.int64)
    h, w = regs.shape
    if areas is None:
        areas = np.where(regs >= 0, WALKABLE_AREA, 0)
    areas = np.asarray(areas)
    present = regs >= 0
    counts = present.astype(np.uint8)
    index = np.zeros((h, w), np.uint32)
    index.reshape(-1)[1:] = np.cumsum(counts.reshape(-1))[:-1]
    n = int(counts.sum())
    con = np.zeros(n, np.uint32)
    reg = np.zeros(n, np.uint16)
    area = np.zeros(n, np.uint8)
    for z in range(h):
        for x in range(w):
            if not present[z, x]:
                continue
            i = int(index[z, x])
            reg[i] = regs[z, x]
            area[i] = areas[z, x]
            c = 0
            for d, (dx, dz) in enumerate(((-1, 0), (0, 1), (1, 0), (0, -1))):
                nx, nz = x + dx, z + dz
                ok = 0 <= nx < w and 0 <= nz < h and present[nz, nx]
                c |= (0 if ok else NOT_CONNECTED) << (6 * d)
            con[i] = c
    if max_regions is None:
        low = reg & ~np.uint16(BORDER_REG)
        max_regions = int(low.max()) + 1 if n else 0
    bmin = np.array([1.0, 2.0, 3.0], np.float32)
    bmax = bmin + np.array([w * cs, 5.0, h * cs], np.float32)
    return CompactHeightfield(
        w, h, 10, 4, border, 0, max_regions, bmin, bmax, cs, ch,
        index, counts, np.zeros(n, np.uint16), np.full(n, 255, np.uint8), con, reg, area,
        np.zeros(n, np.uint16),
    )  # fmt: skip


def contour(cset, c, raw=False):
    n = cset.nrverts if raw else cset.nverts
    v = cset.rverts if raw else cset.verts
    s = int(n[:c].sum())
    return v[s : s + int(n[c])]


def corners_xz(v):
    return {(int(a), int(b)) for a, b in v[:, [0, 2]]}


def twice_area(v):
    x, z = v[:, 0].astype(np.int64), v[:, 2].astype(np.int64)
    return int(np.sum(x * np.roll(z, 1) - np.roll(x, 1) * z))


def test_single_square_region_gives_its_four_corners():
    regs = np.full((6, 6), -1)
    regs[1:5, 1:5] = 1
    cset = build_contours(grid_chf(regs), max_error=1.3, max_edge_len=12)
    assert cset.count == 1 and cset.reg[0] == 1 and cset.area[0] == WALKABLE_AREA
    v = contour(cset, 0)
    assert cset.nverts[0] == 4
    assert corners_xz(v) == {(1, 1), (5, 1), (5, 5), (1, 5)}
    assert np.all(v[:, 1] == 0)
    assert np.all(v[:, 3] == 0)  # walls all round: no neighbour, no flags
    assert twice_area(v) > 0  # Recast's outline winding
    raw = contour(cset, 0, raw=True)
    assert cset.nrverts[0] == 16  # one raw vertex per boundary edge
    assert corners_xz(raw) == {(x, z) for x in range(1, 6) for z in range(1, 6)} - {
        (x, z) for x in range(2, 5) for z in range(2, 5)
    }


def test_single_cell_region_is_skipped_like_recast():
    regs = np.full((3, 3), -1)
    regs[1, 1] = 1  # all four edges are boundaries: Recast does not walk it
    cset = build_contours(grid_chf(regs), max_error=1.3, max_edge_len=12)
    assert cset.count == 0
    assert cset.verts.shape == (0, 4) and cset.rverts.shape == (0, 4)


def test_hole_is_merged_into_the_outline():
    # region 1: 8x8 ring around an empty 2x2 hole; region 2: nothing touches it
    regs = np.full((8, 8), 1)
    regs[3:5, 3:5] = -1
    cset = build_contours(grid_chf(regs), max_error=1.3, max_edge_len=0)
    assert cset.count == 2 and list(cset.reg) == [1, 1]
    assert list(cset.nverts) == [10, 0]  # outline 4 + hole 4 + the diagonal's 2 repeats
    assert list(cset.nrverts) == [32, 8]  # raw outlines stay as walked
    v = contour(cset, 0)
    # the hole's lowest-leftmost corner (3, 3) joins its nearest outline corner (0, 0);
    # both ends of the diagonal appear twice: outline 0..4, hole 5..9
    assert tuple(v[0, [0, 2]]) == (0, 0) and tuple(v[4, [0, 2]]) == (0, 0)
    assert tuple(v[5, [0, 2]]) == (3, 3) and tuple(v[9, [0, 2]]) == (3, 3)
    assert corners_xz(v[:4]) == {(0, 0), (8, 0), (8, 8), (0, 8)}
    assert corners_xz(v[5:9]) == {(3, 3), (5, 3), (5, 5), (3, 5)}
    hole_raw = contour(cset, 1, raw=True)
    assert twice_area(hole_raw) < 0  # holes are wound the other way


def test_hole_with_an_island_of_another_region():
    regs = np.full((10, 10), 1)
    regs[2:8, 2:8] = -1
    regs[4:6, 4:7] = 2  # island of region 2 inside the hole, walls all round
    cset = build_contours(grid_chf(regs), max_error=1.3, max_edge_len=0)
    assert list(cset.reg) == [1, 1, 2]  # scan order: outline, hole, island
    assert list(cset.nverts) == [10, 0, 4]
    assert corners_xz(contour(cset, 2)) == {(4, 4), (7, 4), (7, 6), (4, 6)}
    v = contour(cset, 0)
    assert corners_xz(v[5:9]) == {(2, 2), (8, 2), (8, 8), (2, 8)}
    assert tuple(v[0, [0, 2]]) == (0, 0) and tuple(v[5, [0, 2]]) == (2, 2)


def test_long_wall_edges_are_split():
    regs = np.full((5, 32), -1)
    regs[1:4, 1:31] = 1  # 30 x 3 region
    plain = build_contours(grid_chf(regs), max_error=1.3, max_edge_len=0)
    assert plain.nverts[0] == 4
    cset = build_contours(grid_chf(regs), max_error=1.3, max_edge_len=8)
    v = contour(cset, 0)
    # each long side: 30 -> 15 + 15 -> 7/8-long pieces; the short sides stay
    assert cset.nverts[0] == 10
    e = np.roll(v, -1, axis=0) - v
    assert np.all(e[:, 0] ** 2 + e[:, 2] ** 2 <= 64)
    for z in (1, 4):
        xs = sorted(int(x) for x, zz in v[:, [0, 2]] if zz == z)
        assert xs[0] == 1 and xs[-1] == 31 and 16 in xs and len(xs) == 5
    # wall-edge splitting only: a region border of the same length is left alone
    regs2 = regs.copy()
    regs2[0, 1:31] = 2
    cset2 = build_contours(
        grid_chf(regs2), max_error=1.3, max_edge_len=8, build_flags=CONTOUR_TESS_WALL_EDGES
    )
    v2 = contour(cset2, list(cset2.reg).index(1))
    assert sorted(int(x) for x, zz in v2[:, [0, 2]] if zz == 1) == [1, 31]


def test_area_edges_split_only_with_area_flag():
    regs = np.full((5, 32), -1)
    regs[1:4, 1:31] = 1  # 30 x 3 region, z in [1, 4]
    regs[0, 1:31] = 0  # null-area spans below it: an area border without a region
    areas = np.where(regs >= 1, WALKABLE_AREA, 0)
    chf = grid_chf(regs, areas=areas, max_regions=2)
    kw = dict(max_error=1.3, max_edge_len=8)
    cset = build_contours(chf, **kw, build_flags=CONTOUR_TESS_AREA_EDGES)
    v = contour(cset, 0)
    bottom = sorted(int(x) for x, z in v[:, [0, 2]] if z == 1)
    top = sorted(int(x) for x, z in v[:, [0, 2]] if z == 4)
    assert len(bottom) == 5 and 16 in bottom  # the area edge is split
    assert top == [1, 31]  # the wall edge is not
    assert np.any((v[:, 3] & AREA_BORDER) != 0)
    assert build_contours(chf, **kw, build_flags=0).nverts[0] == 4
    walls = build_contours(chf, **kw, build_flags=CONTOUR_TESS_WALL_EDGES)
    assert walls.nverts[0] == 10  # both long edges have no neighbour region: walls


def test_border_shifts_vertices_and_flags_border_vertices():
    b, n = 2, 8
    size = n + 2 * b
    regs = np.full((size, size), 5)
    # Recast's rcBuildRegions paints the border strips in this order (later ones win)
    regs[:, :b] = 1 | BORDER_REG
    regs[:, size - b :] = 2 | BORDER_REG
    regs[:b, :] = 3 | BORDER_REG
    regs[size - b :, :] = 4 | BORDER_REG
    chf = grid_chf(regs, border=b, max_regions=6)
    cset = build_contours(chf, max_error=1.3, max_edge_len=12)
    assert cset.count == 1 and cset.reg[0] == 5
    assert (cset.width, cset.height, cset.border_size) == (n, n, b)
    pad = np.float32(b) * np.float32(chf.cs)
    assert np.array_equal(cset.bmin, chf.bmin + np.array([pad, 0, pad], np.float32))
    assert np.array_equal(cset.bmax, chf.bmax - np.array([pad, 0, pad], np.float32))
    v = contour(cset, 0)
    assert corners_xz(v) == {(0, 0), (n, 0), (n, n), (0, n)}
    raw = contour(cset, 0, raw=True)
    assert len(raw) == 4 * n
    on_corner = np.isin(raw[:, 0], (0, n)) & np.isin(raw[:, 2], (0, n))
    assert raw[:, [0, 2]].min() == 0 and raw[:, [0, 2]].max() == n
    # edge vertices have two equal border cells outside and two interior cells inside
    assert np.all((raw[~on_corner, 3] & BORDER_VERTEX) != 0)
    assert np.all((raw[on_corner, 3] & BORDER_VERTEX) == 0)
    assert np.all((raw[:, 3] & CONTOUR_REG_MASK & BORDER_REG) != 0)  # neighbours: border
    # the same grid without a border keeps the coordinates
    cset0 = build_contours(chf._replace(border_size=0), max_error=1.3, max_edge_len=12)
    assert np.array_equal(contour(cset0, 0)[:, [0, 2]], v[:, [0, 2]] + b)


# -- bad input -------------------------------------------------------------------------------
def test_bad_input_raises():
    chf = grid_chf(np.ones((4, 4), int))
    with pytest.raises(ConfigError):
        build_contours(chf, max_error=-1.0, max_edge_len=12)
    with pytest.raises(ConfigError):
        build_contours(chf, max_error=float("nan"), max_edge_len=12)
    with pytest.raises(ConfigError):
        build_contours(chf, max_error=1.3, max_edge_len=-2)
    with pytest.raises(ConfigError):
        build_contours(chf, max_error=1.3, max_edge_len=12, build_flags=8)
    with pytest.raises(InputError):
        build_contours(chf._replace(reg=chf.reg[:-1]), max_error=1.3, max_edge_len=12)
    with pytest.raises(InputError):
        build_contours(
            chf._replace(cells_index=chf.cells_index[:2]), max_error=1.3, max_edge_len=12
        )
    bad = chf.con.copy()
    bad[0] = 0  # span at x=0 linked to the left, off the grid
    with pytest.raises(InputError):
        build_contours(chf._replace(con=bad), max_error=1.3, max_edge_len=12)
    idx = chf.cells_index.copy()
    idx[-1, -1] = 10_000
    with pytest.raises(InputError):
        build_contours(chf._replace(cells_index=idx), max_error=1.3, max_edge_len=12)
    with pytest.raises(InputError):
        build_contours("chf", max_error=1.3, max_edge_len=12)


def test_empty_grid():
    cset = build_contours(grid_chf(np.full((3, 4), -1)), max_error=1.3, max_edge_len=12)
    assert cset.count == 0 and cset.nverts.dtype == np.int32 and cset.verts.shape == (0, 4)


# -- invariants ------------------------------------------------------------------------------
def test_smoothsort_sorts():
    rng = np.random.default_rng(1)
    for n in (0, 1, 2, 3, 7, 40, 333):
        k1 = rng.integers(0, 6, n).astype(np.int64)
        k2 = rng.integers(0, 3, n).astype(np.int64)
        rows = list(zip(k1.tolist(), k2.tolist(), range(n)))
        pl = np.arange(n, dtype=np.int64)
        _smoothsort(k1, k2, pl, n)
        assert sorted(pl.tolist()) == list(range(n))
        keys = list(zip(k1.tolist(), k2.tolist()))
        assert keys == sorted(keys)
        assert [rows[i][:2] for i in pl.tolist()] == keys  # payload moved with its keys


def _is_cyclic_subsequence(sub, seq):
    """Whether rows ``sub`` appear in ``seq`` in order, starting anywhere, wrapping once."""
    n = len(seq)
    for s in range(n):
        if tuple(seq[s]) != tuple(sub[0]):
            continue
        k = 1
        for t in range(1, n):
            if k == len(sub):
                break
            if tuple(seq[(s + t) % n]) == tuple(sub[k]):
                k += 1
        if k == len(sub):
            return True
    return False


grids = st.integers(2, 9).flatmap(
    lambda w: st.integers(2, 9).flatmap(
        lambda h: st.lists(st.integers(-1, 3), min_size=w * h, max_size=w * h).map(
            lambda v: np.array(v).reshape(h, w)
        )
    )
)


@settings(max_examples=150, deadline=None)
@given(
    regs=grids,
    max_error=st.sampled_from([0.0, 0.5, 1.3, 3.0]),
    max_edge_len=st.integers(0, 6),
)
def test_contours_are_closed_simplified_outlines(regs, max_error, max_edge_len):
    cset = build_contours(grid_chf(regs), max_error=max_error, max_edge_len=max_edge_len)
    merged = {int(r) for r, n in zip(cset.reg, cset.nverts) if n == 0}
    for c in range(cset.count):
        raw = contour(cset, c, raw=True)
        # the raw outline is a closed walk of unit steps along the grid lines
        step = np.abs(np.roll(raw[:, [0, 2]], -1, axis=0) - raw[:, [0, 2]]).sum(axis=1)
        assert np.all(step == 1)
        assert np.all((raw[:, 3] & CONTOUR_REG_MASK) < 4)
        if cset.nverts[c] == 0:
            continue
        v = contour(cset, c)
        assert len(v) >= 3
        if int(cset.reg[c]) in merged:
            continue  # outline with a hole merged in
        xz = v[:, [0, 2]]
        assert np.all(np.any(xz != np.roll(xz, -1, axis=0), axis=1))  # no zero-length edge
        assert _is_cyclic_subsequence(xz, raw[:, [0, 2]])
