"""Why a path is partial (Path.status / partial_reason), and the one-call path()'s node pool.

An explicit ``max_nodes`` keeps Detour's behaviour (a search that runs out of nodes
returns a partial corridor flagged OUT_OF_NODES); without it, path()/paths() retry such
a search with a pool holding every node of the navmesh, which is Detour's own result
for a larger ``maxNodes`` (compared here with an explicit 65535-node query).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from peer_support import shared_dir

import navkit
import navkit.detour.query as query_mod
from navkit.cli import main
from navkit.detour.query import OUT_OF_NODES, PARTIAL_RESULT, NavMeshQuery
from navkit.geometry import bake_grid, load_movingai_map, load_movingai_scenarios


def serpentine(h: int = 21, w: int = 30) -> np.ndarray:
    """A corridor that winds through the whole grid: long paths over many polygons."""
    g = np.zeros((h, w), bool)
    for r in range(1, h, 2):
        g[r, :] = True
        g[r, w - 1 if (r // 2) % 2 == 0 else 0] = False
    return g


def islands() -> np.ndarray:
    g = np.zeros((5, 9), bool)
    g[:, 4] = True  # a wall splits the map in two
    return g


@pytest.fixture(scope="module")
def snake() -> navkit.NavMesh:
    return bake_grid(serpentine())


S, E = (0.5, 0.0, 0.5), (0.5, 0.0, 20.5)


def test_explicit_small_pool_is_partial_out_of_nodes(snake):
    p = NavMeshQuery(snake, max_nodes=8).path(S, E)
    assert not p.complete
    assert p.status & PARTIAL_RESULT and p.status & OUT_OF_NODES
    assert p.partial_reason == "out_of_nodes"
    full = NavMeshQuery(snake, max_nodes=65535).path(S, E)
    assert full.complete and full.partial_reason is None
    assert not full.status & PARTIAL_RESULT
    assert len(p.polys) < len(full.polys)


def test_default_pool_grows_to_a_complete_path(snake, monkeypatch):
    monkeypatch.setattr(query_mod, "_AUTO_NODES", 8)  # the default pool runs out here
    q = NavMeshQuery(snake)
    assert q.auto_nodes and q.max_nodes == 8
    p = q.path(S, E)
    ref = NavMeshQuery(snake, max_nodes=65535).path(S, E)
    assert p.complete and p.partial_reason is None
    assert np.array_equal(p.polys, ref.polys)
    assert np.array_equal(p.points, ref.points)
    assert p.length == ref.length
    # Detour's own API keeps the default pool: find_path is partial, out of nodes
    sref = q.find_nearest_poly(S).ref
    eref = q.find_nearest_poly(E).ref
    c = q.find_path(sref, eref, S, E)
    assert c.partial and c.status & OUT_OF_NODES


@pytest.mark.parametrize("threads", [None, 1])
def test_paths_batch_grows_per_pair(snake, monkeypatch, threads):
    # threads=1: the rerun takes one full pool (its descriptor block stays 2-D)
    monkeypatch.setattr(query_mod, "_AUTO_NODES", 8)
    starts = np.array([S, (3.5, 0, 0.5), (10.5, 0, 4.5), S], float)
    ends = np.array([E, (5.5, 0, 0.5), (20.5, 0, 16.5), (1.5, 0, 0.5)], float)
    auto = NavMeshQuery(snake).paths(starts, ends, threads=threads)
    fixed = NavMeshQuery(snake, max_nodes=8).paths(starts, ends, threads=threads)
    ref = NavMeshQuery(snake, max_nodes=65535)
    assert auto.complete.all()
    assert not fixed.complete.all()
    short = fixed.complete
    assert ((fixed.status[~short] & OUT_OF_NODES) != 0).all()
    for i in range(len(starts)):
        r = ref.path(starts[i], ends[i])
        assert np.array_equal(auto.polys[i, : auto.n_polys[i]], r.polys)
        assert np.array_equal(auto.points[i, : auto.n_points[i]], r.points)
        assert auto.lengths[i] == r.length
        assert not auto.polys[i, auto.n_polys[i] :].any()
        if short[i]:  # pairs that fit the small pool are Detour's result, untouched
            assert np.array_equal(fixed.polys[i, : fixed.n_polys[i]], r.polys)


@pytest.mark.parametrize("max_nodes", [None, 2048])
def test_unreachable_goal(max_nodes):
    q = NavMeshQuery(bake_grid(islands()), max_nodes=max_nodes)
    p = q.path((0.5, 0, 2.5), (8.5, 0, 2.5))
    assert not p.complete
    assert p.status & PARTIAL_RESULT and not p.status & OUT_OF_NODES
    assert p.partial_reason == "unreachable"
    o = q.path((0.5, 0, 2.5), (8.5, 0, 2.5), optimal=True)
    assert not o.complete and o.partial_reason == "unreachable"
    assert q.path((0.5, 0, 2.5), (3.5, 0, 0.5), optimal=True).partial_reason is None


def test_corridor_cut_at_max_path(snake):
    p = NavMeshQuery(snake).path(S, E, max_path=3)
    assert not p.complete and len(p.polys) == 3
    assert p.partial_reason == "max_path"


def test_bad_max_nodes():
    nm = bake_grid(islands())
    for bad in (0, 65536, -1):
        with pytest.raises(navkit.errors.InputError):
            NavMeshQuery(nm, max_nodes=bad)


def test_cli_says_why(tmp_path, capsys):
    f = tmp_path / "islands.navmesh"
    bake_grid(islands()).save(f)
    args = ["path", str(f), "--from", "0.5,0,2.5", "--to", "8.5,0,2.5"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "partial (the goal is not reachable from the start)" in out
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["complete"] is False and doc["partial_reason"] == "unreachable"
    assert doc["status"] & PARTIAL_RESULT
    assert main([*args[:-1], "3.5,0,0.5"]) == 0
    assert capsys.readouterr().out.startswith("complete path")


# -- Moving AI maps: Detour's default pool of 2048 nodes runs out on most scenarios ----------
@pytest.mark.slow
@pytest.mark.parametrize("name", ["maze512-2-5", "Aurora", "orz900d"])
def test_movingai_scenarios_complete_by_default(name):
    mai = shared_dir() / "data" / "movingai"
    if not (mai / f"{name}.map.scen").exists():
        pytest.skip(f"{mai} not available")
    nm = bake_grid(load_movingai_map(mai / f"{name}.map"), cell_size=1)
    sc = load_movingai_scenarios(mai / f"{name}.map.scen")
    idx = np.random.default_rng(7).choice(len(sc.bucket), min(200, len(sc.bucket)), replace=False)
    z = np.zeros((len(idx), 1))
    s = np.hstack([sc.start[idx, :1], z, sc.start[idx, 1:]]).astype(float)
    e = np.hstack([sc.goal[idx, :1], z, sc.goal[idx, 1:]]).astype(float)
    kw = dict(half_extents=(0.1, 2, 0.1), max_path=65535, max_points=65535)
    auto = NavMeshQuery(nm).paths(s, e, **kw)
    assert auto.complete.all()  # every scenario is solvable (the 8-connected optimum exists)
    fixed = NavMeshQuery(nm, max_nodes=2048).paths(s, e, **kw)
    partial = ~fixed.complete
    assert partial.sum() > len(idx) // 10  # the issue: most paths were partial
    assert ((fixed.status[partial] & OUT_OF_NODES) != 0).all()
    q = NavMeshQuery(nm)
    for i in range(0, len(idx), 25):  # the one-call path() agrees with the batch
        p = q.path(s[i], e[i], **kw)
        assert p.complete and np.array_equal(p.polys, auto.polys[i, : auto.n_polys[i]])
