"""navkit.recast.detail: rcBuildPolyMeshDetail against Recast's dumps, hand oracles,
geometric properties on a real mesh, and rcMergePolyMeshDetails."""

from __future__ import annotations

import functools
import json
import subprocess

import numpy as np
import pytest
from chf_grid import grid_chf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import (
    MESHES,
    PARTITIONS,
    SCRATCH,
    _read_stages_module,
    border_stage_dump,
    chf_from_dump,
    mesh_path,
    peer_workdir,
    polymesh_from_dump,
    stage_dump,
)

from navkit.errors import InputError
from navkit.recast.detail import build_poly_mesh_detail, merge_poly_mesh_details
from navkit.recast.types import MESH_NULL_IDX, PolyMesh, PolyMeshDetail

f32 = np.float32


def _inputs(mesh: str, partition: str):
    man, stages = stage_dump(mesh, partition)
    pm = polymesh_from_dump(man, stages)
    chf = chf_from_dump(man, stages, "compact_regions")
    return man, stages, pm, chf


# -- Recast's own output ----------------------------------------------------------------


@pytest.mark.peer
@pytest.mark.parametrize("partition", PARTITIONS)
@pytest.mark.parametrize("mesh", MESHES)
def test_equals_recast_detail_stage(mesh, partition):
    manifest, stages = stage_dump(mesh, partition)
    _, _, d = _check_against(manifest, stages)
    assert d.meshes.dtype == np.uint32 and d.verts.dtype == np.float32 and d.tris.dtype == np.uint8


def _check_against(manifest, stages):
    pm = polymesh_from_dump(manifest, stages)
    chf = chf_from_dump(manifest, stages, "compact_regions")
    cfg = manifest["rcConfig"]
    d = build_poly_mesh_detail(
        pm,
        chf,
        sample_dist=cfg["detailSampleDist"],
        sample_max_error=cfg["detailSampleMaxError"],
    )
    ref = stages["detail"]
    np.testing.assert_array_equal(d.meshes, ref["meshes"])
    assert d.verts.shape == ref["verts"].shape
    np.testing.assert_array_equal(d.verts.view(np.uint32), ref["verts"].view(np.uint32))
    np.testing.assert_array_equal(d.tris, ref["tris"])
    return pm, chf, d


@functools.cache
def _settings_dump(mesh: str, partition: str, config: str):
    """Recast's stage dump of a solo build with other detail settings (made once, cached)."""
    work = peer_workdir()
    tag = "".join(ch for ch in config if ch.isalnum() or ch in "._")
    out = SCRATCH / "peer" / "stages_detail" / f"{mesh}.{partition}.{tag}"
    if not (out / "manifest.json").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        cfg = dict(json.loads(config), partition=partition)
        r = subprocess.run(
            ["node", "recast_peer.mjs", str(mesh_path(mesh)), json.dumps(cfg), "--sections", "",
             "--dump-stages", str(out)],
            cwd=work, capture_output=True, text=True,
        )  # fmt: skip
        if r.returncode != 0 or not (out / "manifest.json").exists():
            pytest.skip(f"peer stage dump failed: {r.stderr[-300:]}")
    return _read_stages_module().load_stages(str(out))


# RecastDemo units: sampleDist = cs * detailSampleDist, sampleMaxError = ch * detailSampleMaxError.
# (detailSampleDist < 0.9 means 0 in RecastDemo, where Recast never returns: issue #650.)
SETTINGS = [
    ("nav_test", "monotone", '{"detailSampleDist": 3}'),
    ("undulating", "layers", '{"detailSampleDist": 4, "detailSampleMaxError": 2}'),
    ("dungeon", "watershed", '{"detailSampleDist": 12, "detailSampleMaxError": 0.5}'),
]


@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "partition", "config"), SETTINGS)
def test_equals_recast_with_other_settings(mesh, partition, config):
    manifest, stages = _settings_dump(mesh, partition, config)
    cfg = manifest["rcConfig"]
    want = json.loads(config)
    assert cfg["detailSampleDist"] == pytest.approx(want["detailSampleDist"] * cfg["cs"])
    _check_against(manifest, stages)


@pytest.mark.peer
@pytest.mark.parametrize("partition", PARTITIONS)
@pytest.mark.parametrize("mesh", MESHES)
def test_equals_recast_with_border_size(mesh, partition):
    """Solo builds forced to borderSize 5 (dumps made by test_regions' patched peer, if present)."""
    manifest, stages = border_stage_dump(mesh, partition)
    pm, _, _ = _check_against(manifest, stages)
    assert pm.border_size > 0


@pytest.mark.peer
def test_merge_reassembles_recast_detail():
    _, stages, _, _ = _inputs("nav_test", "watershed")
    ref = stages["detail"]
    meshes, verts, tris = ref["meshes"], ref["verts"], ref["tris"]
    k = len(meshes) // 3
    vb, tb = int(meshes[k, 0]), int(meshes[k, 2])
    a = PolyMeshDetail(meshes[:k].copy(), verts[:vb], tris[:tb])
    b_m = meshes[k:].copy()
    b_m[:, 0] -= vb
    b_m[:, 2] -= tb
    b = PolyMeshDetail(b_m, verts[vb:], tris[tb:])
    m = merge_poly_mesh_details([a, None, b])
    np.testing.assert_array_equal(m.meshes, meshes)
    np.testing.assert_array_equal(m.verts.view(np.uint32), verts.view(np.uint32))
    np.testing.assert_array_equal(m.tris, tris)
    assert merge_poly_mesh_details([]).nmeshes == 0


# -- properties on a real mesh ----------------------------------------------------------


def _poly_world(pm: PolyMesh, i: int) -> np.ndarray:
    idx = pm.polys[i, : pm.nvp]
    v = pm.verts[idx[idx != MESH_NULL_IDX]].astype(np.float64)
    return np.stack([v[:, 0] * pm.cs + pm.bmin[0], v[:, 2] * pm.cs + pm.bmin[2]], 1)


def _area2(p: np.ndarray) -> float:
    x, z = p[:, 0], p[:, 1]
    return 0.5 * abs(float(np.sum(x * np.roll(z, -1) - np.roll(x, -1) * z)))


def _inside(poly: np.ndarray, pts: np.ndarray, tol: float) -> np.ndarray:
    """Points within ``tol`` of the convex polygon (any winding), in xz."""
    e = np.roll(poly, -1, 0) - poly
    sgn = np.sign(np.sum(e[:, 0] * np.roll(e[:, 1], -1) - e[:, 1] * np.roll(e[:, 0], -1)))
    rel = pts[:, None, :] - poly[None, :, :]
    cross = (e[None, :, 0] * rel[..., 1] - e[None, :, 1] * rel[..., 0]) * sgn
    dist = cross / np.hypot(e[:, 0], e[:, 1])[None, :]
    return np.all(dist >= -tol, axis=1)


def _check_properties(pm, chf, d, sme):
    cs, ch = float(pm.cs), float(pm.ch)
    assert d.nmeshes == pm.npolys
    tot_v = tot_t = 0
    for i in range(pm.npolys):
        vb, nv, tb, nt = (int(x) for x in d.meshes[i])
        assert vb == tot_v and tb == tot_t
        tot_v += nv
        tot_t += nt
        poly = _poly_world(pm, i)
        vv = d.verts[vb : vb + nv].astype(np.float64)
        tt = d.tris[tb : tb + nt].astype(np.int64)
        assert np.all(tt[:, :3] < nv)
        assert np.all((tt[:, 3] & ~0b010101) == 0)
        assert np.all(_inside(poly, vv[:, [0, 2]], 1e-3)), f"poly {i}: vertex outside"
        a, b, c = (vv[tt[:, k]][:, [0, 2]] for k in range(3))
        areas = 0.5 * np.abs(
            (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
        )
        assert areas.sum() == pytest.approx(_area2(poly), rel=1e-3), f"poly {i}: coverage"
        # Each vertex height is a sampled floor: within tolerance of a span near it.
        for x, y, z in vv:
            cx = int(np.floor((x - pm.bmin[0]) / cs))
            cz = int(np.floor((z - pm.bmin[2]) / cs))
            local = y - float(pm.bmin[1]) - ch
            best = np.inf
            for zz in range(max(cz - 2, 0), min(cz + 3, chf.height)):
                for xx in range(max(cx - 2, 0), min(cx + 3, chf.width)):
                    s = int(chf.cells_index[zz, xx])
                    for k in range(s, s + int(chf.cells_count[zz, xx])):
                        best = min(best, abs(float(chf.y[k]) * ch - local))
            assert best <= sme + ch + 1e-4, f"poly {i}: height {y} off the surface by {best}"
    assert tot_v == d.nverts and tot_t == d.ntris


def test_sample_dist_zero_is_polygon_triangulation():
    man, _, pm, chf = _inputs("dungeon", "watershed")
    sme = man["rcConfig"]["detailSampleMaxError"]
    d = build_poly_mesh_detail(pm, chf, sample_dist=0.0, sample_max_error=sme)
    npoly = np.sum(pm.polys[:, : pm.nvp] != MESH_NULL_IDX, axis=1)
    np.testing.assert_array_equal(d.meshes[:, 1], npoly)
    np.testing.assert_array_equal(d.meshes[:, 3], npoly - 2)
    # The vertices are the polygon's own, in world units (y raised by one cell height).
    idx = pm.polys[:, : pm.nvp]
    v = pm.verts[idx[idx != MESH_NULL_IDX]]
    exp = np.stack(
        [
            v[:, 0].astype(f32) * f32(pm.cs) + pm.bmin[0],
            v[:, 1].astype(f32) * f32(pm.ch) + (pm.bmin[1] + f32(chf.ch)),
            v[:, 2].astype(f32) * f32(pm.cs) + pm.bmin[2],
        ],
        1,
    )
    np.testing.assert_array_equal(d.verts, exp)
    _check_properties(pm, chf, d, sme)


def test_properties_with_finer_sampling():
    # Only on dungeon: Recast's own output breaks the coverage property elsewhere, e.g.
    # overlapping Delaunay faces on nav_test/monotone polygon 1 at 0.9 wu (equal to
    # Recast there, see test_equals_recast_with_other_settings), and float32 slivers
    # on undulating whose xz area is below the coordinate rounding.
    man, _, pm, chf = _inputs("dungeon", "watershed")
    sme = man["rcConfig"]["detailSampleMaxError"]
    d = build_poly_mesh_detail(pm, chf, sample_dist=3 * pm.cs, sample_max_error=sme)
    assert d.nverts > pm.nverts  # some edge or interior samples were kept
    assert np.all(d.meshes[:, 1] <= 127) and np.all(d.meshes[:, 3] <= 255)
    _check_properties(pm, chf, d, sme)


# -- hand oracles -----------------------------------------------------------------------

CS, CH = f32(0.3), f32(0.2)


def _flat_chf(w: int, h: int, y: int, reg: int = 1):
    chf = grid_chf([[[(y, 63)] for _ in range(w)] for _ in range(h)])
    bmin = np.array([-1.5, 2.0, 4.25], np.float32)
    return chf._replace(
        cs=float(CS),
        ch=float(CH),
        bmin=bmin,
        bmax=bmin + np.array([w * CS, 50 * CH, h * CS], np.float32),
        reg=np.full(chf.span_count, reg, np.uint16),
    )


def _polymesh(chf, corners, y, reg: int = 1) -> PolyMesh:
    """One polygon; ``y`` is the floor of every corner or a list of per-corner floors."""
    nvp = 6
    ys = [y] * len(corners) if np.isscalar(y) else y
    verts = np.array([[x, yy, z] for (x, z), yy in zip(corners, ys)], np.uint16)
    polys = np.full((1, 2 * nvp), MESH_NULL_IDX, np.uint16)
    polys[0, : len(corners)] = np.arange(len(corners))
    return PolyMesh(
        verts, polys, np.array([reg], np.uint16), np.ones(1, np.uint16), np.full(1, 63, np.uint8),
        nvp, chf.bmin.copy(), chf.bmax.copy(), chf.cs, chf.ch, 0, 1.3,
    )  # fmt: skip


def _world(chf, x, y, z):
    return [
        f32(x) * CS + chf.bmin[0],
        f32(y) * CH + (chf.bmin[1] + CH),
        f32(z) * CS + chf.bmin[2],
    ]


@pytest.mark.parametrize("reg", [1, 0])  # 0 = RC_MULTIPLE_REGS: seeded from the centre
@pytest.mark.parametrize("sample_dist", [0.0, 0.9, 1.8])
def test_flat_square_gives_two_triangles(sample_dist, reg):
    chf = _flat_chf(12, 12, 7, reg=1)
    corners = [(1, 1), (1, 10), (10, 10), (10, 1)]
    pm = _polymesh(chf, corners, 7, reg=reg)
    d = build_poly_mesh_detail(pm, chf, sample_dist=sample_dist, sample_max_error=0.2)
    np.testing.assert_array_equal(d.meshes, [[0, 4, 0, 2]])
    np.testing.assert_array_equal(d.verts, np.array([_world(chf, x, 7, z) for x, z in corners]))
    # Two triangles sharing one diagonal, each with its two outline edges flagged.
    assert sorted(sorted(t[:3]) for t in d.tris.tolist()) in (
        [[0, 1, 2], [0, 2, 3]],
        [[0, 1, 3], [1, 2, 3]],
    )
    assert all(bin(int(f)).count("1") == 2 for f in d.tris[:, 3])


def test_step_under_polygon_adds_vertices():
    """A floor 10 voxels higher under half the square must show in the detail mesh."""
    w = 16
    floors = [[[(5 if x < 8 else 15, 63)] for x in range(w)] for _ in range(w)]
    chf = grid_chf(floors, climb=20)
    bmin = np.zeros(3, np.float32)
    chf = chf._replace(
        cs=float(CS), ch=float(CH), bmin=bmin, reg=np.ones(chf.span_count, np.uint16)
    )
    pm = _polymesh(chf, [(1, 1), (1, 14), (14, 14), (14, 1)], [5, 5, 15, 15])
    d = build_poly_mesh_detail(pm, chf, sample_dist=0.6, sample_max_error=0.2)
    assert d.nverts > 4
    hi = d.verts[:, 1] > 2.0
    # Every raised vertex lies over the raised half, every low one over the low half (+- a cell).
    assert np.all(d.verts[hi, 0] >= 7 * CS) and np.all(d.verts[~hi, 0] <= 9 * CS)
    np.testing.assert_allclose(np.unique(d.verts[:, 1]), [6 * CH, 16 * CH], rtol=1e-6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    w=st.integers(6, 24),
    h=st.integers(6, 24),
    y=st.integers(0, 200),
    data=st.data(),
    sample_dist=st.sampled_from([0.0, 0.3, 0.6, 1.2, 1.8, 3.0]),
)
def test_flat_convex_polygons(w, h, y, data, sample_dist):
    x0 = data.draw(st.integers(0, w - 3))
    x1 = data.draw(st.integers(x0 + 2, w - 1))
    z0 = data.draw(st.integers(0, h - 3))
    z1 = data.draw(st.integers(z0 + 2, h - 1))
    shape = data.draw(st.sampled_from(["rect", "tri", "hex"]))
    if shape == "rect":
        corners = [(x0, z0), (x0, z1), (x1, z1), (x1, z0)]
    elif shape == "tri":
        corners = [(x0, z0), (x0, z1), (x1, z0)]
    else:
        mx, mz = (x0 + x1) // 2, (z0 + z1) // 2
        corners = [(x0, mz), (mx, z1), (x1, z1), (x1, mz), (mx, z0), (x0, z0)]
        if len(set(corners)) < 6:
            corners = [(x0, z0), (x0, z1), (x1, z1), (x1, z0)]
    chf = _flat_chf(w, h, y)
    pm = _polymesh(chf, corners, y)
    d = build_poly_mesh_detail(pm, chf, sample_dist=sample_dist, sample_max_error=0.2)
    n = len(corners)
    assert int(d.meshes[0, 1]) == n and int(d.meshes[0, 3]) == n - 2  # flat: nothing to add
    np.testing.assert_array_equal(d.verts[:n], np.array([_world(chf, x, y, z) for x, z in corners]))
    _check_properties(pm, chf, d, 0.2)


# -- bad input --------------------------------------------------------------------------


def test_bad_input_raises():
    chf = _flat_chf(8, 8, 3)
    pm = _polymesh(chf, [(1, 1), (1, 6), (6, 6)], 3)
    with pytest.raises(InputError):
        build_poly_mesh_detail(pm, chf, sample_dist=-1.0, sample_max_error=0.2)
    with pytest.raises(InputError):
        build_poly_mesh_detail(pm, chf, sample_dist=1.0, sample_max_error=float("nan"))
    out = pm._replace(verts=np.array([[1, 3, 1], [1, 3, 6], [9, 3, 6]], np.uint16))
    with pytest.raises(InputError):
        build_poly_mesh_detail(out, chf, sample_dist=1.0, sample_max_error=0.2)
    bad_idx = pm.polys.copy()
    bad_idx[0, 2] = 7
    with pytest.raises(InputError):
        build_poly_mesh_detail(
            pm._replace(polys=bad_idx), chf, sample_dist=1.0, sample_max_error=0.2
        )
    two = pm.polys.copy()
    two[0, 2] = MESH_NULL_IDX
    with pytest.raises(InputError):
        build_poly_mesh_detail(pm._replace(polys=two), chf, sample_dist=1.0, sample_max_error=0.2)
    with pytest.raises(InputError):
        build_poly_mesh_detail(
            pm, chf._replace(cells_count=chf.cells_count + 1), sample_dist=1.0, sample_max_error=0.2
        )
    empty = pm._replace(polys=pm.polys[:0], regs=pm.regs[:0])
    d = build_poly_mesh_detail(empty, chf, sample_dist=1.0, sample_max_error=0.2)
    assert d.nmeshes == 0 and d.nverts == 0 and d.ntris == 0


def test_tiny_sample_dist_is_refused():
    chf = _flat_chf(8, 8, 3)
    pm = _polymesh(chf, [(1, 1), (1, 6), (6, 6)], 3)
    with pytest.raises(InputError, match="too small"):
        build_poly_mesh_detail(pm, chf, sample_dist=1e-6, sample_max_error=0.2)


@pytest.mark.parametrize(("level", "poly_reg"), [(5, 1), (40, 2), (5, 0), (40, 0)])
def test_two_floors_sample_the_polygons_floor(level, poly_reg):
    """Two unlinked floors over the same cells (regions 1 at y=5, 2 at y=40).

    With its own region the patch holds that region's floor; with region 0
    (RC_MULTIPLE_REGS) the seed is the span nearest a vertex's height, walked to the
    centre, and the flood stays on that floor. Either way the detail mesh is flat.
    """
    w = 14
    floors = [[[(5, 63), (40, 63)] for _ in range(w)] for _ in range(w)]
    chf = grid_chf(floors, climb=1)
    reg = np.tile(np.array([1, 2], np.uint16), chf.span_count // 2)
    chf = chf._replace(cs=float(CS), ch=float(CH), bmin=np.zeros(3, np.float32), reg=reg)
    corners = [(1, 2), (2, 12), (12, 11), (11, 1)]
    pm = _polymesh(chf, corners, level, reg=poly_reg)
    d = build_poly_mesh_detail(pm, chf, sample_dist=0.6, sample_max_error=0.2)
    np.testing.assert_array_equal(d.meshes, [[0, 4, 0, 2]])
    np.testing.assert_array_equal(d.verts[:, 1], np.full(4, f32(level) * CH + CH))
