"""navkit.crowd.make_way: settled agents step aside for the walkers coming through.

Hand-built neighbourhoods of agent 0 at the origin; the expected steps follow from
the rule in the module docstring (not from a run of the crowd).
"""

from __future__ import annotations

import numpy as np
import pytest

from navkit.crowd.make_way import make_way
from navkit.crowd.obstacles import MAX_NEAR

F = np.float32
R = F(0.3)
VMAX = 1.4


def step(own_dvel, rows, ahead=1.0):
    """``rows``: (x, z, desired vx, desired vz, kind) of the neighbours (agents 1..)."""
    near = np.zeros((MAX_NEAR, 7), F)
    dvel = np.zeros((len(rows) + 1, 3), F)
    dvel[0] = (own_dvel[0], 0.0, own_dvel[1])
    for i, (x, z, dx, dz, kind) in enumerate(rows):
        near[i] = (x, z, dx, dz, R, kind, -1.0 if kind else i + 1)
        dvel[i + 1] = (dx, 0.0, dz)
    vmax = np.full(len(rows) + 1, VMAX, F)
    mx, mz = make_way(0, F(0.0), F(0.0), dvel, vmax, near, len(rows), R, F(ahead))
    return float(mx), float(mz)


def test_steps_aside_away_from_the_walkers_line():
    # a walker 1 m to -x heading +x, 0.2 m to -z of the settled agent: step to +z, by
    # (0.6 - 0.2) / 0.6 of a full step
    mx, mz = step((0.0, 0.0), [(-1.0, -0.2, 1.4, 0.0, 0)])
    assert mx == pytest.approx(0.0, abs=1e-6) and mz == pytest.approx(2 / 3, abs=1e-5)
    mx, mz = step((0.0, 0.0), [(-1.0, 0.2, 1.4, 0.0, 0)])
    assert mz == pytest.approx(-2 / 3, abs=1e-5)


def test_only_when_settled_and_someone_walks_into_it():
    walker = (-1.0, -0.2, 1.4, 0.0, 0)
    assert step((1.0, 0.0), [walker]) == (0.0, 0.0)  # walking itself (over half speed)
    assert step((0.0, 0.0), [walker], ahead=0.0) == (0.0, 0.0)  # off
    assert step((0.0, 0.0), [(-1.0, -0.2, 0.5, 0.0, 0)]) == (0.0, 0.0)  # walker settling
    assert step((0.0, 0.0), [(-1.0, -0.7, 1.4, 0.0, 0)]) == (0.0, 0.0)  # passes by
    assert step((0.0, 0.0), [(1.0, -0.2, 1.4, 0.0, 0)]) == (0.0, 0.0)  # walks away
    assert step((0.0, 0.0), [(-2.0, -0.2, 1.4, 0.0, 0)]) == (0.0, 0.0)  # not yet close
    assert step((0.0, 0.0), [(-1.0, -0.2, 1.4, 0.0, 1)]) == (0.0, 0.0)  # an obstacle


def test_steps_add_up_to_at_most_one():
    rows = [(-1.0, -0.05, 1.4, 0.0, 0), (0.0, -1.0, 0.0, 1.4, 0)]
    mx, mz = step((0.0, 0.0), rows)
    assert np.hypot(mx, mz) == pytest.approx(1.0, abs=1e-5)
    assert mx < 0.0 and mz > 0.0  # away from both lines: -x of the second, +z of the first



def _neighbours(rows):
    """(near, dvel, fin, vmax) for agent 0 with the neighbours ``rows`` (x, z, desired
    vx, vz, kind, distance of the neighbour to its own target): agent i + 1 is row i."""
    near = np.zeros((MAX_NEAR, 7), F)
    dvel = np.zeros((len(rows) + 1, 3), F)
    fin = np.zeros(len(rows) + 1, F)
    for i, (x, z, dx, dz, kind, f) in enumerate(rows):
        near[i] = (x, z, dx, dz, R, kind, -1.0 if kind else i + 1)
        dvel[i + 1] = (dx, 0.0, dz)
        fin[i + 1] = f
    return near, dvel, fin, np.full(len(rows) + 1, VMAX, F)


def test_an_arriving_agent_holds_its_ground_against_walkers():
    # ttc._hold_ground: within `within` of its target, agent 0 ignores the energies of
    # walking neighbours that are not arriving themselves; nothing when it is farther
    from navkit.crowd.ttc import _hold_ground

    rows = [  # x, z, desired vx, vz, kind, distance of the neighbour to its own target
        (-1.0, 0.0, 1.4, 0.0, 0, 5.0),  # a walker: ignored
        (1.0, 0.0, 0.2, 0.0, 0, 5.0),  # slow (desired under half its maximum): kept
        (0.0, 1.0, 1.4, 0.0, 0, 0.5),  # walking but arriving too: kept
        (0.0, -1.0, 1.4, 0.0, 1, 5.0),  # a temporary obstacle: kept
    ]
    near, dvel, fin, vmax = _neighbours(rows)
    for own, expect in ((0.4, [True, False, False, False]), (1.5, [False] * 4)):
        fin[0] = own
        skip = np.zeros(MAX_NEAR, np.bool_)
        _hold_ground(0, dvel, vmax, fin, near, len(rows), F(1.0), skip)
        assert skip[: len(rows)].tolist() == expect


def test_a_walker_goes_up_to_the_agents_at_their_goals():
    # ttc._squeeze: a walking agent 0 ignores the energies of settled neighbours and,
    # when it is not within `within` of its own target, of the ones that are (they hold
    # their ground against it); nothing when agent 0 itself is settled
    from navkit.crowd.ttc import _squeeze

    rows = [  # x, z, desired vx, vz, kind, distance of the neighbour to its own target
        (1.0, 0.0, 0.2, 0.0, 0, 0.1),  # settled (desired under half its maximum)
        (0.0, 1.0, 1.4, 0.0, 0, 0.8),  # walking, within `within` of its target
        (-1.0, 0.0, 1.4, 0.0, 0, 5.0),  # a walker
        (0.0, -1.0, 0.0, 0.0, 1, 5.0),  # a temporary obstacle (standing)
    ]
    near, dvel, fin, vmax = _neighbours(rows)
    cases = (  # agent 0's desired speed, its distance to its target -> skipped
        (1.4, 5.0, [True, True, False, False]),
        (1.4, 0.5, [True, False, False, False]),
        (0.2, 5.0, [False] * 4),
    )
    for speed, own, expect in cases:
        dvel[0] = (speed, 0.0, 0.0)
        fin[0] = own
        skip = np.zeros(MAX_NEAR, np.bool_)
        _squeeze(0, dvel, vmax, near, len(rows), skip, fin, F(1.0))
        assert skip[: len(rows)].tolist() == expect


def _aisle_turn(rows, own=(1.4, 0.0), fin0=5.0, walls=()):
    """ttc._aisle's turn (angle [rad]) for agent 0 at the origin with desired velocity
    ``own`` among ``rows`` (as :func:`_neighbours`) and wall segments ``walls`` ((x0, z0,
    x1, z1), the inside where (x - x0) (z1 - z0) - (z - z0) (x1 - x0) > 0, as ttc's cost);
    look 1.6 m, turns up to 1 rad, 0.2 m per rad of turn, neighbours moving on at
    over 0.5 of the maximum speed not in the way."""
    from navkit.crowd.ttc import _aisle

    near, dvel, fin, vmax = _neighbours(rows)
    dvel[0] = (own[0], 0.0, own[1])
    fin[0] = fin0
    segs = np.zeros((1, 8, 6), F)
    for i, (x0, z0, x1, z1) in enumerate(walls):
        segs[0, i] = (x0, 0.0, z0, x1, 0.0, z1)
    idx = np.zeros(MAX_NEAR, np.int64)
    c, s = _aisle(0, F(0.0), F(0.0), dvel, vmax, fin, F(1.0), near, len(rows), segs,
                  len(walls), R, F(1.6), F(1.0), F(0.2), F(0.5), idx)  # fmt: skip
    assert c * c + s * s == pytest.approx(1.0, abs=1e-5)
    return float(np.arctan2(s, c))


def test_a_walker_takes_the_aisle_past_the_people_standing_ahead():
    settled = (0.8, 0.0, 0.0, 0.0, 0, 0.1)  # standing at its goal, dead ahead
    # the straight walk runs into it: the walker turns to pass it (its line at least a
    # summed radius, 0.6 m, from the agent's centre within the look: sin >= 0.6 / 0.8)
    th = _aisle_turn([settled])
    assert abs(np.sin(th)) >= 0.6 / 0.8 - 0.05
    # nobody ahead, or the one ahead is a walker that moves on: no turn
    assert _aisle_turn([(-0.8, 0.0, 0.0, 0.0, 0, 0.1)]) == 0.0  # behind
    assert _aisle_turn([(0.8, 0.0, 1.4, 0.0, 0, 5.0)]) == 0.0
    # one arriving (within 1 m of its goal) that moves on along the walker's way at
    # over half the walker's maximum speed (rows give the velocity the desired one)
    assert _aisle_turn([(0.8, 0.0, 1.0, 0.0, 0, 0.5)]) == 0.0
    assert _aisle_turn([(0.8, 0.0, 0.5, 0.0, 0, 0.5)]) != 0.0  # slower: in the way
    assert _aisle_turn([(0.8, 0.6, 0.0, 0.0, 0, 0.1)]) == 0.0  # clear of the line
    # the walker itself settling, or within 1 m of its own target: no turn
    assert _aisle_turn([settled], own=(0.2, 0.0)) == 0.0
    assert _aisle_turn([settled], fin0=0.5) == 0.0
    # a wall 0.3 m to its right (-z; the inside +z) closes that side: it turns left
    wall = (2.0, -0.3, -2.0, -0.3)
    assert _aisle_turn([settled], walls=[wall]) > 0.5
    wall = (-2.0, 0.3, 2.0, 0.3)  # and 0.3 m to its left: it turns right
    assert _aisle_turn([settled], walls=[wall]) < -0.5
