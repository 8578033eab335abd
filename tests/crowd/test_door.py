"""navkit.crowd.door: TTC and ORCA agents queue at a door narrower than a body.

Hand-built local boundaries and neighbourhoods; the expected gaps, ranks and held
velocities follow from the rules in the module docstring (not from a crowd run).
The door is the scenario suite's bottleneck as baked: a wall face at x = -0.45 with
jambs at z = +-0.3, narrowing to 0.3 m at x = 0 and widening again to x = 0.45.
"""

from __future__ import annotations

import numpy as np
import pytest

from navkit.crowd.door import FOLLOW, HEADWAY, door_queue, find_gaps
from navkit.crowd.obstacles import MAX_NEAR

F = np.float32
R = F(0.3)
VMAX = F(1.4)
WAIT = F(0.9)

#: the bottleneck's door as local boundary segments (x0 y0 z0 x1 y1 z1)
DOOR = [
    (-0.45, 0, 4.65, -0.45, 0, 0.3), (-0.45, 0, 0.3, 0.0, 0, 0.15), (0.0, 0, 0.15, 0.45, 0, 0.3),
    (0.45, 0, 0.3, 0.45, 0, 4.65), (0.0, 0, -0.15, -0.45, 0, -0.3), (-0.45, 0, -0.3, -0.45, 0, -4.65),
    (0.45, 0, -0.3, 0.0, 0, -0.15), (0.45, 0, -4.65, 0.45, 0, -0.3),
]  # fmt: skip


def gaps(pos, corners, segs=DOOR, radius=R):
    """find_gaps for one agent per row of ``pos`` (x, z) with its corners (x, z)."""
    n = len(pos)
    npos = np.zeros((n, 3), F)
    npos[:, 0] = [p[0] for p in pos]
    npos[:, 2] = [p[1] for p in pos]
    sg = np.zeros((n, 8, 6), F)
    ns = np.zeros(n, np.int32)
    cv = np.zeros((n, 4, 3), F)
    nc = np.zeros(n, np.int32)
    for i in range(n):
        sg[i, : len(segs)] = segs
        ns[i] = len(segs)
        for k, c in enumerate(corners[i]):
            cv[i, k] = (c[0], 0.0, c[1])
        nc[i] = len(corners[i])
    g = np.zeros((n, 6), F)
    find_gaps(np.arange(n), np.ones(n, np.bool_), npos, np.full(n, radius, F), sg, ns, nc, cv, g)
    return g


def test_the_door_on_the_path_is_found():
    g = gaps([(-2.0, 0.5), (-0.47, 1.2), (0.2, 0.0), (-2.0, 0.5)],
             [[(0.0, 0.15), (5.0, 0.0)],  # through the door
              [(-0.45, 0.3), (0.0, 0.15), (5.0, 1.0)],  # down the wall, then in
              [(5.0, 0.0)],  # past the mouth: the door's far side is ahead
              [(-2.0, 3.0)]])  # fmt: skip  # not going through
    # the mouth (jambs 0.6 m apart: one body) is the first gap on the way in
    assert g[0].tolist() == pytest.approx([-0.45, 0.0, 1.0, 1.0, 0.0, 0.6], abs=1e-6)
    assert g[1].tolist() == pytest.approx([-0.45, 0.0, 1.0, 1.0, 0.0, 0.6], abs=1e-6)
    assert g[2].tolist() == pytest.approx([0.45, 0.0, 1.0, 1.0, 0.0, 0.6], abs=1e-6)
    assert g[3, 2] == 0.0


def test_no_gap_wider_than_a_body_or_along_a_wall():
    # the same door for agents of radius 0.1: even its 0.3 m middle lets two through
    g = gaps([(-2.0, 0.5)], [[(0.0, 0.15), (5.0, 0.0)]], radius=F(0.1))
    assert g[0, 2] == 0.0
    # for agents of radius 0.2 the middle is the gap (the 0.6 m mouth is not)
    g = gaps([(-2.0, 0.5)], [[(0.0, 0.15), (5.0, 0.0)]], radius=F(0.2))
    assert g[0, :3].tolist() == pytest.approx([0.0, 0.0, 1.0], abs=1e-6)
    # a straight wall split into short pieces: end points 0.3 apart, but no opening
    wall = [(-0.45, 0, 0.6, -0.45, 0, 0.3), (-0.45, 0, 0.3, -0.45, 0, 0.0),
            (-0.45, 0, 0.0, -0.45, 0, -0.3)]  # fmt: skip
    g = gaps([(-2.0, 0.2)], [[(-0.45, 0.45), (-0.45, 5.0)]], segs=wall)
    assert g[0, 2] == 0.0


def queue(rows, s=0, pref=(1.4, 0.0)):
    """door_queue for agent ``s`` of agents at ``rows`` (x, z), all bound for the gap
    at the origin (passage +x, 0.3 m wide); returns (prefx, prefz, skip)."""
    n = len(rows)
    gap = np.zeros((n, 6), F)
    gap[:] = (0.0, 0.0, 1.0, 1.0, 0.0, 0.3)
    near = np.zeros((MAX_NEAR, 7), F)
    k = 0
    for o, (x, z) in enumerate(rows):
        if o != s:
            near[k] = (x, z, 0.0, 0.0, R, 0.0, o)
            k += 1
    skip = np.zeros(MAX_NEAR, np.bool_)
    px, pz, first = door_queue(s, F(rows[s][0]), F(rows[s][1]), F(pref[0]), F(pref[1]), gap,
                               near, k, R, WAIT, VMAX, skip)  # fmt: skip
    assert first == all(skip[:k])  # the first has the way over all the others
    return float(px), float(pz), skip[:k].tolist()


ROWS = [(-0.5, 0.0), (-0.3, -0.8), (-1.2, 0.3), (-1.1, 1.4)]


def test_the_first_goes_into_the_door_with_the_way():
    px, pz, skip = queue(ROWS, 0, pref=(0.0, 1.4))
    # toward a point half the door's width inside it, at the preferred speed
    assert (px, pz) == pytest.approx((1.4, 0.0), abs=1e-5)
    assert skip == [True, True, True]


def test_the_second_follows_the_first():
    # 0.854 m out, the first 0.5 m out: it may come to min(0.5 + FOLLOW r, WAIT)
    d = np.hypot(0.3, 0.8)
    allow = min(0.5 + FOLLOW * 0.3, 0.9)
    u = np.array([0.3, 0.8]) / d
    px, pz, skip = queue(ROWS, 1, pref=(0.0, 1.4))
    assert np.dot((px, pz), u) == pytest.approx((d - allow) / HEADWAY, abs=1e-5)
    assert skip == [False, False, False]


def test_the_others_wait_off_the_mouth():
    # 1.237 m out: toward the door at most (1.237 - 0.9) / HEADWAY
    d = np.hypot(1.2, 0.3)
    u = np.array([1.2, -0.3]) / d
    px, pz, _ = queue(ROWS, 2)
    assert np.dot((px, pz), u) <= (d - 0.9) / HEADWAY + 1e-5
    # an agent standing inside the waiting distance backs off (at most half its speed)
    rows = [(-0.2, 0.0), (-0.3, -0.8), (-0.5, 0.6)]
    px, pz, _ = queue(rows, 2)
    u = np.array([0.5, -0.6]) / np.hypot(0.5, 0.6)
    assert np.dot((px, pz), u) < 0.0
    assert np.hypot(px, pz) <= 1.4 + 1e-5


def test_off_without_a_gap_or_with_wait_zero():
    n = 2
    gap = np.zeros((n, 6), F)
    near = np.zeros((MAX_NEAR, 7), F)
    near[0] = (-0.5, 0.0, 0.0, 0.0, R, 0.0, 1)
    skip = np.zeros(MAX_NEAR, np.bool_)
    assert door_queue(0, F(-1.0), F(0.0), F(1.4), F(0.0), gap, near, 1, R, WAIT, VMAX, skip) == (
        pytest.approx(1.4), pytest.approx(0.0), False)
    gap[:] = (0.0, 0.0, 1.0, 1.0, 0.0, 0.3)
    assert door_queue(0, F(-1.0), F(0.0), F(1.4), F(0.0), gap, near, 1, R, F(0.0), VMAX,
                      skip) == (pytest.approx(1.4), pytest.approx(0.0), False)  # fmt: skip
    assert not skip.any()


def _gap_inputs(pos, corners):
    """find_gaps' arrays for agents at ``pos`` (x, z) beside DOOR, with ``corners``."""
    n = len(pos)
    npos = np.zeros((n, 3), F)
    npos[:, 0] = [p[0] for p in pos]
    npos[:, 2] = [p[1] for p in pos]
    sg = np.zeros((n, 8, 6), F)
    sg[:, : len(DOOR)] = DOOR
    ns = np.full(n, len(DOOR), np.int32)
    cv = np.zeros((n, 4, 3), F)
    nc = np.zeros(n, np.int32)
    for i in range(n):
        for k, c in enumerate(corners[i]):
            cv[i, k] = (c[0], 0.0, c[1])
        nc[i] = len(corners[i])
    return npos, sg, ns, cv, nc


def test_the_queue_is_ranked_over_every_agent_bound_for_the_door():
    # with 8-wide rows find_gaps ranks by distance to the door's middle over all the
    # agents (not only those within a neighbour's query range), each door apart
    pos = [(-4.0, 0.0), (-1.0, 0.2), (-2.0, 0.0), (-3.0, 1.0), (-2.0, 3.0)]
    corners = [[(0.0, 0.15), (5.0, 0.0)]] * 4 + [[(-2.0, 6.0)]]  # the last: not through
    n = len(pos)
    npos, sg, ns, cv, nc = _gap_inputs(pos, corners)
    g = np.zeros((n, 8), F)
    find_gaps(np.arange(n), np.ones(n, np.bool_), npos, np.full(n, R, F), sg, ns, nc, cv, g)
    # distances to the mouth (-0.45, 0): 3.55, 0.58, 1.55, 2.73 -> ranks 3, 0, 1, 2
    assert g[:4, 6].tolist() == [3.0, 0.0, 1.0, 2.0]
    assert g[:4, 7].tolist() == [3.0, -1.0, 1.0, 2.0]  # the slot just ahead
    assert g[4, 6] == -1.0 and g[4, 7] == -1.0


def test_the_second_keeps_its_following_distance():
    # the first 0.1 m out (the second may come to 0.1 + FOLLOW r < WAIT): standing, the
    # second closes the free distance over HEADWAY; with the first walking into the
    # door at 1 m/s, that walk's closing speed is added to the second's hold
    d = np.hypot(0.3, 0.8)
    allow = 0.1 + FOLLOW * 0.3
    assert allow < 0.9
    u = np.array([0.3, 0.8]) / d
    inward = []
    for vx in (0.0, 1.0):
        gap = np.zeros((2, 8), F)
        gap[:] = (0.0, 0.0, 1.0, 1.0, 0.0, 0.3, 0.0, -1.0)
        gap[1, 6:] = (1.0, 0.0)
        near = np.zeros((MAX_NEAR, 7), F)
        near[0] = (-0.1, 0.0, vx, 0.0, R, 0.0, 0)
        skip = np.zeros(MAX_NEAR, np.bool_)
        px, pz, first = door_queue(1, F(-0.3), F(-0.8), F(0.0), F(1.4), gap, near, 1, R,
                                   WAIT, VMAX, skip)  # fmt: skip
        assert not first and not skip[0]
        inward.append(float(np.dot((px, pz), u)))
    assert inward[0] == pytest.approx((d - allow) / HEADWAY, abs=1e-5)
    assert inward[1] > inward[0] + 0.5


def test_a_waiting_agent_times_its_approach():
    # rank 3 (two ahead of it besides the first), 2.5 m out: with a pace of 0.8 s per
    # pass it reaches the waiting distance when its turn comes, (2.5 - WAIT) / (2 * 0.8)
    # m/s toward the door, unless the funnel's hold is tighter; never under the creep
    n = 4
    rows = [(-0.5, 0.0), (-0.3, -0.8), (-1.2, 0.3), (-2.5, 0.0)]
    gap = np.zeros((n, 8), F)
    gap[:] = (0.0, 0.0, 1.0, 1.0, 0.0, 0.3, 0.0, -1.0)
    gap[:, 6] = (0.0, 1.0, 2.0, 3.0)
    near = np.zeros((MAX_NEAR, 7), F)
    for k, o in enumerate(range(3)):
        near[k] = (rows[o][0], rows[o][1], 0.0, 0.0, R, 0.0, o)
    skip = np.zeros(MAX_NEAR, np.bool_)
    out = []
    for pace, creep in ((0.0, 0.0), (0.8, 0.15), (100.0, 0.15)):
        px, pz, first = door_queue(3, F(-2.5), F(0.0), VMAX, F(0.0), gap, near, 3, R, WAIT, VMAX,
                                   skip, pace, creep)  # fmt: skip
        assert not first
        out.append(float(px))
    hold = out[0]  # the funnel's hold alone
    assert hold > (2.5 - 0.9) / (2 * 0.8)
    assert out[1] == pytest.approx((2.5 - 0.9) / (2 * 0.8), abs=1e-5)
    assert out[2] == pytest.approx(0.15, abs=1e-6)  # the creep


def test_the_queue_credits_the_time_an_agent_has_waited():
    # 9-wide rows: column 8 counts the time bound for the door (reset without a gap),
    # and the order is the distance less QUEUE_CREDIT times that time
    from navkit.crowd.door import QUEUE_CREDIT

    pos = [(-1.5, 0.5), (-1.4, 0.0), (-2.0, 6.0)]  # 1.16, 0.95 m from the mouth; off the door
    corners = [[(0.0, 0.15), (5.0, 0.0)]] * 2 + [[(-2.0, 7.0)]]
    n = len(pos)
    npos, sg, ns, cv, nc = _gap_inputs(pos, corners)
    g = np.zeros((n, 9), F)
    g[0, 8] = 0.0
    g[1, 8] = 0.0
    g[2, 8] = 7.0  # no door any more: reset
    find_gaps(np.arange(n), np.ones(n, np.bool_), npos, np.full(n, R, F), sg, ns, nc, cv, g, 0.05)
    assert g[:2, 6].tolist() == [1.0, 0.0]
    assert g[:, 8].tolist() == pytest.approx([0.05, 0.05, 0.0])
    # agent 0 has waited long enough to make up the 0.21 m it is farther out
    d0 = np.hypot(-1.5 + 0.45, 0.5)
    d1 = np.hypot(-1.4 + 0.45, 0.0)
    g[0, 8] = (d0 - d1) / QUEUE_CREDIT + 1.0
    find_gaps(np.arange(n), np.ones(n, np.bool_), npos, np.full(n, R, F), sg, ns, nc, cv, g, 0.05)
    assert g[:2, 6].tolist() == [0.0, 1.0]


def test_agents_whose_path_crosses_a_door_another_found_join_its_queue():
    # agent 0 sees the door among its walls; agents 1-3 have none of its walls (8 m
    # out): 1 and 2 walk through it, 3 walks elsewhere
    pos = [(-1.0, 0.2), (-8.0, 0.0), (-8.0, 1.0), (-8.0, 3.0)]
    corners = [[(0.0, 0.15), (5.0, 0.0)], [(0.0, 0.15), (5.0, 0.0)],
               [(-0.45, 0.3), (5.0, 1.0)], [(-8.0, 9.0)]]  # fmt: skip
    n = len(pos)
    npos, sg, ns, cv, nc = _gap_inputs(pos, corners)
    ns[1:] = 0
    for sight, joined in ((10.0, [True, True, False]), (5.0, [False, False, False])):
        g = np.zeros((n, 9), F)
        find_gaps(np.arange(n), np.ones(n, np.bool_), npos, np.full(n, R, F), sg, ns, nc, cv, g,
                  0.5, np.full(n, sight, F))  # fmt: skip
        assert g[0, :6].tolist() == pytest.approx([-0.45, 0.0, 1.0, 1.0, 0.0, 0.6], abs=1e-6)
        for i in (1, 2, 3):
            if joined[i - 1]:
                # the same door, crossed the same way: ranked behind agent 0
                assert g[i, :6].tolist() == pytest.approx([-0.45, 0.0, 1.0, 1.0, 0.0, 0.6],
                                                          abs=1e-6)  # fmt: skip
                assert g[i, 6] >= 1.0
            else:
                assert g[i, 2] == 0.0 and g[i, 6] == -1.0
        # the queue's credit counts only the time a door was among the agent's own walls
        assert g[0, 8] == pytest.approx(0.5) and (g[1:, 8] == 0.0).all()
    # without a door found by anybody, nobody joins
    ns[0] = 0
    g = np.zeros((n, 9), F)
    find_gaps(np.arange(n), np.ones(n, np.bool_), npos, np.full(n, R, F), sg, ns, nc, cv, g,
              0.5, np.full(n, 10.0, F))  # fmt: skip
    assert (g[:, 2] == 0.0).all()
