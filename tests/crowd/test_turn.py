"""navkit.crowd.ttc._turn_room: the preferred velocity's turn to one hand is kept along
a way and dropped across an opening on that hand.

Hand-built walls around agent 0 at the origin walking +x with the turn to +z (a
positive sine); the expected answers follow from the rule in ``TTCParams``'s
docstring (``turn_along_walls``), not from a run of the crowd.
"""

from __future__ import annotations

import numpy as np

from navkit.crowd.ttc import _turn_room

F = np.float32


def room(walls, dvel=(1.4, 0.0), pss=0.25, far=7.2):
    segs = np.zeros((1, 8, 6), F)
    for j, (x0, z0, x1, z1) in enumerate(walls):
        segs[0, j] = (x0, 0.0, z0, x1, 0.0, z1)
    dv = np.array([[dvel[0], 0.0, dvel[1]]], F)
    return bool(_turn_room(0, F(0.0), F(0.0), dv, F(pss), segs, len(walls), F(far)))


def test_turn_kept_along_a_way():
    # a wall beside the agent on the turn's hand (+z), and one on the other hand
    assert room([(-5.0, 1.5, 5.0, 1.5), (-5.0, -1.5, 5.0, -1.5)])
    # only the wall on the turn's hand, 3 m away (within `far`)
    assert room([(-5.0, 3.0, 5.0, 3.0)])


def test_turn_kept_in_the_open():
    assert room([])
    # walls only on the other hand: nothing to walk into on the turn's hand
    assert room([(-5.0, -1.5, 5.0, -1.5)])


def test_turn_dropped_across_an_opening():
    # the side way of a junction: the turn's hand has walls ending before (x < -1) and
    # starting after (x > 1) the agent, and the ray to +z passes between them
    walls = [(-5.0, 1.5, -1.0, 1.5), (-1.0, 1.5, -1.0, 6.0), (1.0, 6.0, 1.0, 1.5),
             (1.0, 1.5, 5.0, 1.5)]  # fmt: skip
    assert not room(walls)
    # the same walls with the turn to the other hand (-z): nothing on that hand, kept
    assert room(walls, pss=-0.25)
    # a wall met only beyond `far` counts as none
    assert not room([(-5.0, 1.5, -1.0, 1.5), (-3.0, 9.0, 3.0, 9.0)], far=7.2)
    assert room([(-5.0, 1.5, -1.0, 1.5), (-3.0, 9.0, 3.0, 9.0)], far=10.0)


def test_the_hand_follows_the_desired_direction():
    # walking +z with the turn to its hand: the ray goes to -x (the hand of +x walking
    # to +z, rotated): a wall at x = -1.5 is beside it, a wall at x = +1.5 is not
    assert room([(-1.5, -5.0, -1.5, 5.0)], dvel=(0.0, 1.4))
    assert not room([(-1.5, -5.0, -1.5, -1.0), (-1.5, 1.0, -1.5, 5.0)], dvel=(0.0, 1.4))
