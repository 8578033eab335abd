"""bake_grid and the Moving AI readers."""

from __future__ import annotations

import numpy as np
import pytest
from peer_support import movingai_file

import navkit
from navkit.errors import FormatError, InputError
from navkit.geometry import bake_grid, load_movingai_map, load_movingai_scenarios

ARENA = navkit.data.path("arena.map")  # ships with navkit (the scenarios need ../shared)


def _areas(nm) -> np.ndarray:
    a = nm.arrays()
    v = a.verts.astype(np.float64)
    out = []
    for p in range(a.poly_tile.shape[0]):
        if a.poly_tile[p] < 0:
            continue
        pts = v[a.poly_verts[p, : a.poly_vert_count[p]]][:, [0, 2]]
        x, z = pts[:, 0], pts[:, 1]
        out.append(0.5 * abs((x * np.roll(z, -1) - np.roll(x, -1) * z).sum()))
    return np.array(out)


def _cover(nm, pts: np.ndarray) -> np.ndarray:
    """How many polygons contain each xz point (strictly inside)."""
    a = nm.arrays()
    v = a.verts.astype(np.float64)
    cnt = np.zeros(len(pts), int)
    for p in range(a.poly_tile.shape[0]):
        poly = v[a.poly_verts[p, : a.poly_vert_count[p]]][:, [0, 2]]
        e = np.roll(poly, -1, axis=0) - poly
        d = pts[:, None, :] - poly[None]
        cr = e[None, :, 0] * d[:, :, 1] - e[None, :, 1] * d[:, :, 0]
        cnt += np.all(cr < 0, axis=1) | np.all(cr > 0, axis=1)
    return cnt


@pytest.mark.parametrize("seed", range(6))
def test_navmesh_covers_exactly_the_free_cells(seed):
    rng = np.random.default_rng(seed)
    g = rng.random((11, 14)) < 0.3  # includes double corners and single cells
    cs = 0.5 if seed % 2 else 0.7  # 0.7: cell edges not exact in float32
    nm = bake_grid(g, cs)
    assert _areas(nm).sum() == pytest.approx((~g).sum() * cs * cs, rel=1e-5)
    r, c = np.mgrid[0 : g.shape[0], 0 : g.shape[1]]
    # off-centre probes: triangulation diagonals run through cell centres
    centres = np.stack([(c.ravel() + 0.37) * cs, (r.ravel() + 0.61) * cs], 1)
    cov = _cover(nm, centres)
    assert np.array_equal(cov, (~g).ravel().astype(int))


def test_image_inputs_equal_bool_grid():
    rng = np.random.default_rng(3)
    g = rng.random((9, 10)) < 0.3
    gray = np.where(g, 0, 255).astype(np.uint8)
    rgb = np.stack([gray] * 3, -1)
    rgba = np.concatenate([rgb, np.full(g.shape + (1,), 255, np.uint8)], -1)
    ref = _areas(bake_grid(g)).sum()
    for img in (gray, rgb, rgba, g.astype(np.int32)):
        assert _areas(bake_grid(img)).sum() == pytest.approx(ref)
    assert ref == pytest.approx((~g).sum())


def test_large_grid_is_tiled_and_complete():
    g = np.zeros((40, 230), bool)
    g[10:30, 50:60] = True
    nm = bake_grid(g)
    assert nm.params.max_tiles > 1
    assert _areas(nm).sum() == pytest.approx((~g).sum(), abs=1e-4)


def test_agent_radius_erodes():
    g = np.zeros((10, 10), bool)
    g[4:6, 4:6] = True
    full = _areas(bake_grid(g)).sum()
    eroded = _areas(bake_grid(g, agent_radius=0.5)).sum()
    assert eroded < full - 10


@pytest.mark.parametrize(
    "bad",
    [np.zeros(5), np.ones((4, 4), bool), np.array([[0.0, np.nan]]), np.zeros((3, 3, 2), np.uint8)],
)
def test_bad_grids(bad):
    with pytest.raises(InputError):
        bake_grid(bad)


def test_bad_cell_size():
    with pytest.raises(InputError):
        bake_grid(np.zeros((3, 3)), -1.0)


def test_load_map_arena():
    g = load_movingai_map(ARENA)
    assert g.shape == (49, 49) and g.dtype == bool
    rows = ARENA.read_text().splitlines()[4:]
    assert int((~g).sum()) == sum(r.count(".") for r in rows)
    assert g[0, 0] == (rows[0][0] != ".")


def test_load_scenarios_arena():
    sc = load_movingai_scenarios(movingai_file("arena.map.scen"))
    assert len(sc.bucket) == 160
    assert (sc.size == [49, 49]).all()
    g = load_movingai_map(ARENA)
    assert not g[sc.start[:, 1], sc.start[:, 0]].any()
    assert not g[sc.goal[:, 1], sc.goal[:, 0]].any()
    assert np.array_equal(sc.bucket, np.floor(sc.optimal_length / 4).astype(int))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "type octile\nheight 2\nwidth 2\n..\n..\n",  # no map line
        "type octile\nheight 2\nwidth 2\nmap\n..\n",  # too few rows
        "type octile\nheight 2\nwidth 2\nmap\n..\n...\n",  # wrong width
        "type hex\nheight 1\nwidth 1\nmap\n.\n",
        "type octile\nheight x\nwidth 1\nmap\n.\n",
        "type octile\nwidth 1\nmap\n.\n",
        "type octile\nheight 1\nwidth 1\nmap\n.\n.\n",  # extra rows
    ],
)
def test_malformed_maps(tmp_path, text):
    f = tmp_path / "bad.map"
    f.write_text(text)
    with pytest.raises(FormatError):
        load_movingai_map(f)


def test_malformed_scenarios(tmp_path):
    f = tmp_path / "bad.scen"
    f.write_text("version 1\n0\ta.map\t1\t1\t0\t0\n")
    with pytest.raises(FormatError):
        load_movingai_scenarios(f)
    f.write_text("nonsense\n")
    with pytest.raises(FormatError):
        load_movingai_scenarios(f)
