"""NavMeshQuery against Detour's own per-pair results (the peer's ``<mesh>.pairs.json``).

For each of the 1000 pairs per mesh, on Detour's exported solo navmesh, the
peer ran RecastDemo's NavMeshTester flow: findNearestPoly (half extents
2,4,2) for both ends, findPath (2048 nodes, 256 polys), closestPointOnPoly of
the end on the last corridor polygon when the path is partial,
findStraightPath (options 0), and raycast (options 0, prevRef 0, no path
buffer: status carries BUFFER_TOO_SMALL) from the start poly to the end.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from peer_support import peer_file

from navkit.detour.navmesh import NavMesh
from navkit.detour.query import NavMeshQuery

MESHES = ("dungeon", "nav_test", "undulating")


@pytest.fixture(scope="module", params=MESHES)
def case(request):
    mesh = request.param
    nm = NavMesh.from_recast(peer_file(f"{mesh}.solo.navmesh.bin"))
    pairs = json.loads(peer_file(f"{mesh}.pairs.json").read_text())
    assert pairs["navmesh"] == "solo" and pairs["halfExtents"] == [2, 4, 2]
    return mesh, nm, NavMeshQuery(nm, max_nodes=2048), pairs["pairs"]


def _xyz(v):
    return np.asarray(v, np.float32)


@pytest.mark.peer
def test_every_pair_matches_detour(case):
    mesh, nm, q, pairs = case
    bad: list[str] = []
    for p in pairs:
        i = p["i"]
        s, e = _xyz(p["start"]), _xyz(p["end"])
        ns, ne = q.find_nearest_poly(s), q.find_nearest_poly(e)
        if (ns.ref, ne.ref) != (p["startRef"], p["endRef"]):
            bad.append(f"{i}: nearest {ns.ref},{ne.ref} != {p['startRef']},{p['endRef']}")
            continue
        fp = q.find_path(ns.ref, ne.ref, s, e, max_path=256)
        idx = [list(nm.decode_ref(int(r))[1:]) for r in fp.polys]
        if idx != p["pathPolyIndices"] or fp.status != p["findPathStatus"]:
            bad.append(f"{i}: corridor/status differs ({fp.status:#x} vs {p['findPathStatus']:#x})")
            continue
        complete = int(fp.polys[-1]) == ne.ref
        if complete != p["complete"] or (not complete) != p["partial"]:
            bad.append(f"{i}: complete flag")
        endp = e
        if not complete:
            endp, _ = q.closest_point_on_poly(int(fp.polys[-1]), e)
        sp = q.find_straight_path(s, endp, fp.polys, max_points=256)
        exp = np.asarray(p["straightPath"], np.float32)
        if sp.points.shape != exp.shape or np.abs(sp.points - exp).max() > 1e-4:
            bad.append(f"{i}: straight path points")
        elif sp.flags.tolist() != p["straightPathFlags"] or sp.status != p["straightStatus"]:
            bad.append(f"{i}: straight path flags/status")
        elif sp.refs[-1] != 0 or sp.refs[0] != ns.ref:
            bad.append(f"{i}: straight path refs")
        rc = q.raycast(ns.ref, s, e, max_path=0)
        r = p["raycast"]
        t_exp = np.inf if r["t"] == "FLT_MAX" else r["t"]
        if not (rc.t == t_exp or abs(rc.t - t_exp) <= 1e-5):
            bad.append(f"{i}: raycast t {rc.t} vs {t_exp}")
        elif (rc.status, rc.hit_edge_index) != (r["status"], r["hitEdgeIndex"]):
            bad.append(f"{i}: raycast status/edge")
        elif not np.allclose(rc.hit_normal, r["hitNormal"], atol=1e-6):
            bad.append(f"{i}: raycast normal")
    assert not bad, f"{mesh}: {len(bad)} of {len(pairs)} pairs differ: {bad[:10]}"


@pytest.mark.peer
def test_batch_paths_match_detour(case):
    mesh, nm, q, pairs = case
    S = np.array([p["start"] for p in pairs], np.float32)
    E = np.array([p["end"] for p in pairs], np.float32)
    b = q.paths(S, E)
    assert b.ok.all()
    assert b.start_refs.tolist() == [p["startRef"] for p in pairs]
    assert b.end_refs.tolist() == [p["endRef"] for p in pairs]
    assert b.complete.tolist() == [p["complete"] for p in pairs]
    for i, p in enumerate(pairs):
        n = int(b.n_polys[i])
        assert [list(nm.decode_ref(int(r))[1:]) for r in b.polys[i, :n]] == p["pathPolyIndices"]
        m = int(b.n_points[i])
        assert np.abs(b.points[i, :m] - np.asarray(p["straightPath"], np.float32)).max() <= 1e-4
        assert b.flags[i, :m].tolist() == p["straightPathFlags"]
        assert b.lengths[i] == pytest.approx(p["length"], abs=1e-3)
    # the one-pair convenience agrees with the batch
    for i in range(0, len(pairs), 97):
        one = q.path(S[i], E[i])
        assert np.array_equal(one.points, b.points[i, : b.n_points[i]])
        assert one.complete == bool(b.complete[i])


@pytest.mark.peer
def test_batch_blocks_threads_and_padding(case):
    """More pairs than one block (1024), reversed order, one or two threads: the same rows;
    entries past each pair's counts are zero even though the scratch held older results."""
    mesh, nm, q, pairs = case
    S = np.array([p["start"] for p in pairs], np.float32)
    E = np.array([p["end"] for p in pairs], np.float32)
    one = q.paths(S, E)
    big = q.paths(np.concatenate([S, S[::-1], S[:300]]), np.concatenate([E, E[::-1], E[:300]]))
    rows = np.concatenate([np.arange(len(S)), np.arange(len(S))[::-1], np.arange(300)])
    for name in ("ok", "complete", "start_refs", "end_refs", "n_polys", "n_points", "status"):
        assert np.array_equal(getattr(big, name), getattr(one, name)[rows]), name
    assert np.array_equal(big.lengths, one.lengths[rows], equal_nan=True)
    assert big.polys.shape[1] == one.n_polys.max() and big.points.shape[1] == one.n_points.max()
    w = one.polys.shape[1]
    assert np.array_equal(big.polys[:, :w], one.polys[rows]) and not big.polys[:, w:].any()
    k = one.points.shape[1]
    assert np.array_equal(big.points[:, :k], one.points[rows]) and not big.points[:, k:].any()
    assert np.array_equal(big.flags[:, :k], one.flags[rows])
    for i in range(len(S)):
        assert (
            not one.polys[i, one.n_polys[i] :].any() and not one.points[i, one.n_points[i] :].any()
        )
    single = q.paths(S[:200], E[:200], threads=1)
    assert np.array_equal(single.polys, one.polys[:200, : single.polys.shape[1]])


@pytest.mark.peer
def test_sliced_search_equals_find_path(case):
    mesh, nm, q, pairs = case
    for p in pairs[:150]:
        s, e = _xyz(p["start"]), _xyz(p["end"])
        st = q.init_sliced_find_path(p["startRef"], p["endRef"], s, e)
        while st & (1 << 29):
            st, _ = q.update_sliced_find_path(7)
        sl = q.finalize_sliced_find_path(256)
        fp = q.find_path(p["startRef"], p["endRef"], s, e)
        assert sl.polys.tolist() == fp.polys.tolist()
        assert sl.partial == fp.partial


@pytest.mark.peer
def test_tiled_paths_complete_where_solo(case):
    """The pairs file holds solo results only: on the tiled export the same pairs must
    be found and reach their end polygon wherever the solo corridor does."""
    mesh, _, _, pairs = case
    nm = NavMesh.from_recast(peer_file(f"{mesh}.tiled.navmesh.bin"))
    q = NavMeshQuery(nm)
    S = np.array([p["start"] for p in pairs], np.float32)
    E = np.array([p["end"] for p in pairs], np.float32)
    b = q.paths(S, E)
    solo_complete = np.array([p["complete"] for p in pairs])
    found = b.ok
    assert found.mean() > 0.99
    missing = np.flatnonzero(solo_complete & ~b.complete)
    assert missing.size == 0, (
        f"{mesh}: {missing.size} pairs complete on solo but not tiled: {missing[:10]}"
    )
