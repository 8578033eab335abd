"""The contact resolution of the TTC / ORCA agents (navkit.crowd.contact), on its own."""

from __future__ import annotations

import numpy as np

from navkit.crowd.contact import resolve_contacts
from navkit.crowd.proximity import ProximityGrid, build_grid

F = np.float32
R = 0.3


def _run(pos, mask, segs=None, cpos=None, allow=0.0, rounds=64):
    n = pos.shape[0]
    npos = np.array(pos, F)
    act = np.arange(n, dtype=np.int64)
    radius = np.full(n, R, F)
    height = np.full(n, 1.8, F)
    g = ProximityGrid(n * 4, F(3 * R))
    build_grid(act, npos, radius, g.inv_cell_size, g.buckets, g.items, g.lo)
    if segs is None:
        segs = np.zeros((n, 8, 6), F)
        nsegs = np.zeros(n, np.int32)
    else:
        nsegs = np.full(n, segs.shape[1], np.int32)
        segs = np.ascontiguousarray(np.broadcast_to(segs, (n,) + segs.shape[1:]), F)
    cpos = npos.copy() if cpos is None else np.array(cpos, F)
    resolve_contacts(act, np.asarray(mask, np.bool_), np.ones(n, np.bool_), npos, cpos, radius,
                     height, g.inv_cell_size, g.buckets, g.items, segs, nsegs, rounds, F(0.001),
                     F(allow))  # fmt: skip
    return npos


def _worst(p):
    d = np.linalg.norm(p[:, None, [0, 2]] - p[None, :, [0, 2]], axis=2) + np.eye(len(p)) * 9
    return (2 * R - d.min()) / R


def test_a_packed_cluster_is_separated_to_the_allowance():
    rng = np.random.default_rng(3)
    pos = np.zeros((30, 3), F)
    pos[:, [0, 2]] = rng.uniform(-1.2, 1.2, (30, 2))  # 30 discs of r 0.3 in 2.4 m x 2.4 m
    assert _worst(pos) > 0.5
    got = _run(pos, np.ones(30, bool), allow=0.08)
    assert _worst(got) <= 0.08 + 0.01
    got = _run(pos, np.ones(30, bool), allow=0.0)
    assert _worst(got) <= 0.01


def test_an_agent_of_another_model_is_not_moved():
    pos = np.array([[0, 0, 0], [0.4, 0, 0]], F)
    got = _run(pos, [True, False])
    assert np.array_equal(got[1], pos[1])  # the dtCrowd agent stays (bit for bit)
    assert abs(float(got[0, 0]) - (0.4 - 2 * R)) < 1e-5  # the TTC agent takes it all


def test_a_wall_is_not_crossed_and_the_pair_separates_along_it():
    # wall along z at x = 0 (segment from z=+5 to z=-5: inward normal -x), two agents
    # pressed onto it, overlapping along a slant
    wall = np.array([[[0.0, 0, 5.0, 0.0, 0, -5.0]] + [[0] * 6] * 7], F)[:, :1]
    pos = np.array([[-0.05, 0, 0.0], [-0.4, 0, 0.3]], F)
    got = _run(pos, [True, True], segs=wall)
    assert got[0, 0] <= 1e-6 and got[1, 0] <= 1e-6  # still on the inner side
    assert _worst(got) <= 0.01
    # pushed across by another phase (the start is behind the corridor position): back
    pos = np.array([[0.06, 0, 0.0], [-2.0, 0, 0.0]], F)
    got = _run(pos, [True, True], segs=wall, cpos=np.array([[-0.01, 0, 0], [-2, 0, 0]], F))
    assert got[0, 0] <= 1e-6
