"""Corridor agents queue at a door narrower than two bodies (navkit.ecm.agents'
``door_queue``, :func:`navkit.ecm._agent_kernels.find_doors`).

The doors are found on the agents' own corridors: where the clearance along the
route falls below two radii. The expected mouths follow from the geometry (a 1 m
door in a 0.2 m wall: on the door's axis the clearance is the distance to a jamb
corner, ``sqrt((x + 0.1)^2 + 0.5^2)``, which is 0.6 at ``x = -0.1 - sqrt(0.11)``),
not from a run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from navkit.ecm import CorridorMap
from navkit.ecm.agents import AgentSettings, CorridorAgents
from navkit.errors import InputError

DT = 0.05
#: two 10 x 10 rooms, a 0.2 m wall with a 1 m door at z = 0 (the suite's bottleneck)
ROOMS = [(-10, -5), (-0.1, -5), (-0.1, -0.5), (0.1, -0.5), (0.1, -5), (10, -5),
         (10, 5), (0.1, 5), (0.1, 0.5), (-0.1, 0.5), (-0.1, 5), (-10, 5)]  # fmt: skip
MOUTH = -0.1 - math.sqrt(0.6**2 - 0.5**2)


def _agents(starts, goals, radius=0.3, **kw):
    ag = CorridorAgents(CorridorMap.from_polygons(ROOMS), settings=AgentSettings(sense=8.0, **kw))
    hs = [ag.add_agent(s, g, radius=radius) for s, g in zip(starts, goals)]
    return ag, [ag._slot(h) for h in hs]


def test_agents_bound_through_the_door_queue_for_its_mouth():
    starts = [(-2.0, 0.3), (-4.0, -1.0), (-1.2, 1.5), (-6.0, 2.0), (-5.0, 3.0)]
    goals = [(5.0, 0.0), (5.0, 1.0), (4.0, -2.0), (6.0, 2.0), (-8.0, 3.0)]  # the last stays
    ag, sl = _agents(starts, goals)
    ag.update(DT)
    g = ag._gaps
    for s in sl[:4]:
        assert g[s, 2] == 1.0
        assert g[s, 0] == pytest.approx(MOUTH, abs=0.03) and g[s, 1] == pytest.approx(0.0, abs=0.03)
        assert (g[s, 3], g[s, 4]) == (pytest.approx(1.0, abs=0.01), pytest.approx(0.0, abs=0.15))
        assert g[s, 5] == pytest.approx(0.6)
    # ranked by the distance to the mouth: 1.2 / 1.57, 1.68, 3.7, 5.9 m
    d = [math.hypot(starts[i][0] - MOUTH, starts[i][1]) for i in range(4)]
    assert [int(g[s, 6]) for s in sl[:4]] == list(np.argsort(np.argsort(d)))
    assert g[sl[4], 2] == 0.0 and g[sl[4], 6] == -1.0  # not through the door


def test_a_goal_in_a_nook_narrower_than_two_bodies_is_no_door():
    # beyond the door, bound 0.4 m from the far wall: the corridor narrows below two
    # bodies to its end (clearance 0.4 m) and never widens again
    ag, sl = _agents([(5.0, 0.0), (-2.0, 0.3)], [(9.6, 0.0), (9.6, 0.0)])
    ag.update(DT)
    assert ag._gaps[sl[0], 2] == 0.0
    assert ag._gaps[sl[1], 2] == 1.0  # the door on the way still is one
    assert ag._gaps[sl[1], 0] == pytest.approx(MOUTH, abs=0.03)


def test_a_corridor_two_bodies_wide_is_no_door():
    # the door is 1 m: a 0.2 m agent (two bodies 0.8 m) passes beside another
    ag, sl = _agents([(-2.0, 0.3), (-4.0, -1.0)], [(5.0, 0.0), (5.0, 1.0)], radius=0.2)
    ag.update(DT)
    assert (ag._gaps[sl, 2] == 0.0).all()


def test_the_queue_can_be_turned_off():
    ag, sl = _agents([(-2.0, 0.3), (-4.0, -1.0)], [(5.0, 0.0), (5.0, 1.0)], door_queue=0.0)
    ag.update(DT)
    assert (ag._gaps[sl, 2] == 0.0).all()
    with pytest.raises(InputError):
        AgentSettings(door_queue=-1.0)


def test_the_queue_passes_a_crowd_through_the_door_one_at_a_time():
    # 12 agents in a block before the door: with the queue nobody stands 5 s before
    # passing (moved < 0.5 m in a 5 s window), without it the two at the jambs block
    # each other and the crowd behind them
    starts = [(-5.0 + 0.9 * (i % 4), -1.35 + 0.9 * (i // 4)) for i in range(12)]
    goals = [(4.0 + 1.5 * (i % 4), -1.5 + 1.5 * (i // 4)) for i in range(12)]
    stood = []
    for dq in (3.0, 0.0):
        ag, sl = _agents(starts, goals, door_queue=dq, arrive_distance=0.1)
        traj = []
        for _ in range(int(30 / DT)):
            ag.update(DT)
            traj.append(ag.positions[sl].copy())
        tr = np.array(traj)
        w = int(5 / DT)
        moved = np.hypot(*(tr[w:] - tr[:-w]).transpose(2, 0, 1))
        left = np.hypot(*(tr[w:] - np.array(goals)[None]).transpose(2, 0, 1)) > 0.5
        stood.append(int(((moved < 0.5) & left).any(axis=0).sum()))
        if dq > 0:
            assert (tr[-1, :, 0] > 0.5).all()  # everybody through
    assert stood[0] == 0 and stood[1] > 0, stood
