import numpy as np
import pytest

import navkit
from navkit.debug.draw_data import navmesh_draw_data
from navkit.debug.render import render_geometry, render_navmesh
from navkit.errors import InputError

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def tiled():
    return navkit.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=32))


def test_draw_data_covers_every_ground_polygon(tiled):
    d = navmesh_draw_data(tiled)
    assert len(d.polys) == tiled.stats()["polys"]
    assert d.region is not None and len(d.region) == len(d.polys)
    # every detail triangle belongs to a polygon and every polygon has triangles
    assert set(np.unique(d.detail_poly)) == set(range(len(d.polys)))
    assert len(d.tile_rects) == tiled.stats()["tiles"]


@pytest.mark.parametrize("color_by", ["region", "area", "tile", "island"])
def test_render_navmesh_writes_png(tiled, tmp_path, color_by):
    out = tmp_path / f"{color_by}.png"
    render_navmesh(tiled, out, color_by=color_by, path=np.array([[1, 0, 1], [10, 0, 10.0]]))
    assert out.read_bytes()[:8] == PNG


def test_render_geometry_and_errors(tmp_path):
    render_geometry(navkit.sample_level(), tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == PNG
    with pytest.raises(InputError):
        render_navmesh(navkit.bake(navkit.sample_level()), tmp_path / "x.png", color_by="nope")
    assert not (tmp_path / "x.png").exists()


def test_region_colours_need_region_ids(tiled, tmp_path):
    tiled.save(tmp_path / "t.navmesh")
    loaded = navkit.NavMesh.load(tmp_path / "t.navmesh")
    assert navmesh_draw_data(loaded).region is None
    with pytest.raises(InputError, match="area, tile or island"):
        render_navmesh(loaded, tmp_path / "r.png", color_by="region")
    assert not (tmp_path / "r.png").exists()
    render_navmesh(loaded, tmp_path / "auto.png")  # auto: islands for a loaded navmesh
    assert (tmp_path / "auto.png").read_bytes()[:8] == PNG


@pytest.mark.parametrize("view", ["side", "iso"])
def test_projected_views(tiled, tmp_path, view):
    d = navmesh_draw_data(tiled)
    assert [p.shape[1] for p in d.polys_3d] == [3] * len(d.polys)
    render_navmesh(tiled, tmp_path / "n.png", view=view, path=np.array([[1, 0, 1], [10, 0, 10.0]]))
    render_geometry(navkit.sample_level(), tmp_path / "g.pdf", view=view)
    assert (tmp_path / "n.png").read_bytes()[:8] == PNG
    assert (tmp_path / "g.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(InputError, match="view"):
        render_navmesh(tiled, tmp_path / "x.png", view="front")
    with pytest.raises(InputError, match=".png"):
        render_geometry(navkit.sample_level(), tmp_path / "x.bmp")
