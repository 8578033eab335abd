"""from_navmesh, rendering and the CLI body."""

import json

import numpy as np
import pytest

from navkit.ecm import CorridorMap, map_difference
from navkit.ecm.render import ecm_command, moving_obstacles_demo
from navkit.errors import InputError
from navkit.geometry import TriMesh


def _grid_mesh(holes=()):
    """A 10x6 floor of unit squares (two triangles each), minus the cells in ``holes``."""
    verts = [(x, 0.0, z) for z in range(7) for x in range(11)]
    tris = []
    for z in range(6):
        for x in range(10):
            if (x, z) in holes:
                continue
            a, b, c, d = z * 11 + x, z * 11 + x + 1, (z + 1) * 11 + x + 1, (z + 1) * 11 + x
            # counter-clockwise seen from above (+y) in x-z means normal y > 0
            tris += [(a, c, b), (a, d, c)]
    return TriMesh(np.asarray(verts, np.float32), np.asarray(tris, np.int32))


def test_from_navmesh_equals_polygons():
    m = CorridorMap.from_navmesh(_grid_mesh(holes={(4, 2), (5, 2), (4, 3), (5, 3)}))
    ref = CorridorMap.from_polygons(
        [[0, 0], [10, 0], [10, 6], [0, 6]], [[[4, 2], [6, 2], [6, 4], [4, 4]]]
    )
    assert map_difference(m, ref) == []


def test_from_navmesh_layer_overlap_is_an_error():
    a = _grid_mesh()
    v = np.vstack([a.vertices, a.vertices + [2.0, 3.0, 1.5]]).astype(np.float32)
    t = np.vstack([a.triangles, a.triangles + len(a.vertices)]).astype(np.int32)
    with pytest.raises(InputError):
        CorridorMap.from_navmesh(TriMesh(v, t))
    m = CorridorMap.from_navmesh(TriMesh(v, t), y_range=(-1, 1))  # one layer
    assert m.find_path([1, 1], [9, 5], clearance=0.5) is not None


def test_cli_body_and_demo(tmp_path):
    scene = tmp_path / "s.json"
    scene.write_text(
        json.dumps(
            {
                "boundary": [[0, 0], [20, 0], [20, 12], [0, 12]],
                "obstacles": [[[4, 3], [7, 3], [6, 6]], [[10, 8]]],
            }
        )
    )
    out = tmp_path / "o.png"
    p = ecm_command(scene, [1, 1], [19, 11], 0.5, out)
    assert p and out.stat().st_size > 1000
    # no path: a falsy NoPath says why, and the picture is written anyway
    why = ecm_command(scene, [1, 1], [19, 11], 9.0, tmp_path / "none.png")
    assert not why and why.reason == "too_close" and why.which == "start" and why.obstacle == 0
    assert (tmp_path / "none.png").stat().st_size > 1000
    why = ecm_command(scene, [5.5, 4], [19, 11], 0.5, tmp_path / "in.png")
    assert (why.reason, why.which, why.obstacle) == ("inside", "start", 1)
    assert "inside obstacle 1" in why.message
    why = ecm_command(scene, [1, 1], [25, 11], 0.5, tmp_path / "out.png")
    assert (why.reason, why.which) == ("outside", "goal")
    assert "outside the boundary" in why.message
    why = ecm_command(scene, [3, 9], [17, 6], 2.5, tmp_path / "narrow.png")
    assert why.reason == "no_corridor" and "no corridor with clearance 2.5" in why.message
    times = moving_obstacles_demo(tmp_path / "demo", frames=2)
    assert len(times) == 2 and (tmp_path / "demo" / "frame_001.png").exists()


def test_cli_ecm_says_why(tmp_path, capsys):
    """``navkit ecm`` names the reason there is no path (issue 10 item 6)."""
    from navkit.cli import main

    scene = tmp_path / "s.json"
    scene.write_text(
        json.dumps(
            {
                "boundary": [[0, 0], [20, 0], [20, 12], [0, 12]],
                "obstacles": [[[4, 3], [7, 3], [7, 8], [4, 8]]],
            }
        )
    )
    out = str(tmp_path / "o.png")
    cases = [
        (["--from", "5,5", "--to", "19,11"], 1, "the start lies inside obstacle 1"),
        (["--from", "1,1", "--to", "30,11"], 1, "the goal lies outside the boundary"),
        (
            ["--from", "1,1", "--to", "19,11", "--clearance", "2"],
            1,
            "closer than 2 to the boundary",
        ),
        (["--from", "1,1", "--to", "19,11"], 0, "path length"),
        (["--from", "1,1"], 2, "--from and --to go together"),
    ]
    for args, rc, text in cases:
        assert main(["ecm", str(scene), *args, "-o", out]) == rc, args
        cap = capsys.readouterr()
        assert text in cap.out + cap.err, (args, cap)
