"""The issue's correctness criteria on the suite's four people scenarios, at full size.

Per navkit mode (``ttc``, ``orca``, ``ecm-corridor``) in crossing (24 agents),
bottleneck (20 agents, a 1 m door), corridor (50 + 50) and circle (16): every
agent arrives within a bound, nobody is stuck (the suite's measure: moved less than
0.5 m in some 5 s window before arriving), and no two agents overlap by more than
10% of a radius in any frame. The time-to-collision mode against dtCrowd's four
presets in crossing and circle: fewer or equally few overlaps, smoother (mean
|acceleration| and |jerk|), and arriving at least as early (mean and last arrival)
as every preset whose agents all arrive (a preset that deadlocks is "smooth"; it is
beaten on arrival).

Every criterion must hold on :data:`SEEDS`: seed 0 is the scenario as laid out,
seeds 1 and 2 move every start by up to 0.1 m (``run_scenario(seed=)``). The
outcomes of counterflow and doors are chaotic in the initial conditions (one seed
passing says little), and the laid-out seed 0 is degenerate in the circle (exactly
symmetric: dtcrowd-high deadlocks there and nowhere else).

The dtCrowd presets reproduce Detour's dtCrowd and are not held to these criteria
(docs/scenarios.md: they overlap, and agents queue or deadlock, in bottleneck and
corridor).

Known failures, marked ``xfail(strict=True)`` (so that a fix shows up), figures
for seeds 0 / 1 / 2 (the tables of docs/scenarios.md are seed 0):

- bottleneck, every navkit mode: fixed. The TTC and ORCA agents queue at the door
  (``navkit.crowd.door``, ``door_queue``): ranked over everybody bound for the door,
  the first goes with the way, the second keeps its following distance behind it, and
  the others wait on a funnel around the door's mouth whose radius grows with their
  place, timing their approach to it (``door_pace``: no faster than needed to reach
  the funnel when their turn comes), walking to it without the models' turn to one
  hand (``door_straight``), ranked by their distance less 0.1 m/s times the time they
  have seen the door among their own walls (``door.QUEUE_CREDIT``), and -- the last
  step -- bound for the door from as far as ``door.SIGHT`` (3) collision query ranges
  along their path once another agent has found it (``door._join``). Before it, an
  agent found the door only when its jambs were among the 8 nearest walls of its local
  boundary, 2.7-3 m out: the block walked at full speed, untimed, into the door's
  crowd, stood closer than its place on the funnel and backed off (the agents left
  stuck gained 0.24-0.49 m in their worst 5 s, windows at 4-6 s); now the block
  slows from the start and walks on at 0.3-0.45 m/s. Stuck ttc 0 / 3 / 2 -> 0 / 0 /
  0, orca 0 / 4 / 3 -> 0 / 0 / 0; seeds 0-15 in all: ttc 31 -> 0, orca 55 -> 0. Beyond the door, agents within 1 m of their goal ignore the
  walkers crossing the block of goals (``hold_ground``), and walkers go up to the
  agents settled or holding their ground at their goals, who make way (``squeeze``).
  ttc: last 19.1 / 18.4 / 19.3 s (bound 30 s; seeds 0-15 17.8-21.0 s); orca: 20.1 /
  17.9 / 18.4 s (seeds 0-15 17.4-20.1 s). The corridor agents (ecm-corridor) had no
  queue (8 / 6 / 4 stuck, two at the jambs pinned to the wall on either side of the
  door): they now queue the same way (``navkit.ecm.AgentSettings.door_queue``, the
  door found on their own corridor, where its clearance falls below two radii and
  rises again; ``navkit.crowd.door.door_queue`` on their desired velocity), the one
  whose turn it is relaxing to it in 0.1 s (``_agent_kernels.FIRST_RELAX``): stuck
  0 / 0 / 0 (seeds 0-7 53 -> 0, seeds 8-15 0), last 22.2 / 22.6 / 22.4 s (was 29.1 /
  26.7 / 24.5; seeds 0-15 21.8-22.7 s).
- corridor, ttc: arrival fixed, stuck not yet. 100% / 100% / 100% arrive (the last
  at 25.6 / 34.8 / 34.8 s: 0.2 s inside the bound on seeds 1 and 2); agents stand 5 s
  0 / 4 / 5 (seeds 0-15: 28 in all, every seed arriving in full within 35 s, 5 of
  16 meeting both criteria; seeds 16-31: 83, 11 of 16 arriving, 3 meeting both).
  Walkers that see people coming the other way down their line within 7.2 m keep
  to their hand harder (``oncoming_sight``, ``oncoming_turn``: the proximity grid
  along the line, beyond the 16 nearest neighbours, which in a dense group are all
  of its own): the column that started on the wrong side for the lanes (each flow
  keeps to its right) falls into its flow's lane before the flows meet instead of
  meeting the oncoming column head-on in the middle (before it: 100% / 100% / 96%,
  the last at 28.3 / 29.8 / 37.3 s, stuck 1 / 2 / 12; seeds 0-15 86 stuck, 8 of 16
  arriving, 6 meeting both; seeds 16-31 85, 11, 4). Left: agents in the blocks of
  goals standing 5 s 0.5-1.6 m from their goals at 22-33 s (seed 1: agents 20, 22,
  27, 40; seed 2: 60, 64, 65, 69, 92), most of those counted over seeds 0-31 at
  0.50-0.55 m (jostled by the last walkers; the measure's boundary is 0.5 m); on some
  seeds (23: four agents) the wrong-side column still stands where the flows meet. Walkers bound deep into a block of goals take
  the aisle between its files or along a wall (``aisle``: the direction within 1 rad
  of their way whose next 1.6 m overlaps the standing agents least; before it: 100% /
  100% / 97%, the last at 30.3 / 28.8 / 37.2 s, stuck 1 / 4 / 12, seeds 0-15 125 stuck
  and 3 of 16 seeds). In the blocks of goals (0.8 m apart: 0.2 m between two
  bodies), two agents can each stand in the other's way, one 0.3 m from its goal
  and one 1 m from its own (a swap). Walkers go up to
  the agents settled or holding their ground at their goals, who make way
  (``squeeze``; before it: 100% / 97% / 95%, the last at 42.1 s on seed 0, stuck 12
  / 7 / 17, seeds 0-7 98 stuck and 2 of 8 seeds meeting both criteria; before
  ``hold_ground``: 100% / 100% / 94%, the last at 33.8 / 33.3 s on seeds 0
  and 1, stuck 19 / 10 / 30). orca: fixed by ``squeeze`` (was 100% / 98% / 100%,
  stuck 2 / 3 / 2; before ``hold_ground`` 100% / 100% / 99%, stuck 3 / 9 / 14): 100%,
  the last at 24.0 / 26.4 / 24.3 s, nobody stuck (seeds 0-7: 1 agent in all, every
  seed within 35 s). ecm-corridor: fixed (seed 1
  had 98% arrive and 4 agents stand 5 s: walkers avoided arrived agents and stood in
  front of the other group's block of goals; with walkers walking into them -- they
  step aside -- everybody arrived but the last after 43.1 s: an agent on the wrong
  side for the lanes, crossing the oncoming flow where it met it, was swept 5 m
  back. The suite's corridor agents now see 8 m (``ecm_mode.SENSE``; the library's
  default is 4 m), so that the lanes form before the flows meet: 25-26 s on seeds
  0-2).
- crossing, ecm-corridor: fixed (arrived agents pushed by a walker step aside off
  its line: before, an agent pushed along the line past its goal walked back into
  the walker, a head-on standoff on a straight line that lasted 5 s; seeds 1 and 2:
  2 agents stood 5 s, the last arrived after 26.4 s).
- crossing, ttc against the presets: fixed. Its agents kept to the right
  (``pref_turn`` 0.25) across the junction too, into the far corner of their exit,
  where the flow entering there pushed the outer agents into its way (loops of 3 s):
  mean arrival 19.2 / 19.0 / 19.2 s against the best preset's 18.85 / 18.97 / 19.06
  s, last 21.8 / 21.6 / 21.5 s against 19.95 / 21.3 / 22.2 s. Now the turn holds
  along a way, not across an opening on its hand (``TTCParams.turn_along_walls``):
  mean 18.34 / 18.34 / 18.38 s, last 18.85 / 18.90 / 19.65 s (seeds 0-15: 15 pass
  the whole test; seed 11 fails it on a 0.0005 r worst overlap against dtcrowd-low's
  0). Turning less everywhere (``pref_turn`` 0.1: 18.2 s) jammed the 50 + 50
  corridor (72-78% arrive); the corridor is unchanged by the new rule.
"""

from __future__ import annotations

import functools

import pytest

from navkit.scenarios import DEFAULT_MODES, run_scenario

#: scenario -> bound on the last arrival [s] (the scenarios' shortest paths: crossing
#: 24 m, bottleneck ~11 m, corridor 28 m, circle 20 m, at 1.4 m/s)
BOUND = {"crossing": 25.0, "bottleneck": 30.0, "corridor": 35.0, "circle": 20.0}
NAVKIT_MODES = ("ttc", "orca", "ecm-corridor")


#: seed 0: the scenario as laid out; 1, 2: starts moved by up to 0.1 m
SEEDS = (0, 1, 2)


@functools.cache
def run(name: str, mode: str, seed: int):
    return run_scenario(name, mode, seed=seed)


def each_seed(name: str, mode: str):
    for seed in SEEDS:
        yield seed, run(name, mode, seed).metrics


#: (scenario, mode) -> reason, per criterion (module docstring)
NOT_YET = {
    "stuck": {
        ("corridor", "ttc"): "seeds 1, 2: 4 and 5 agents stand 5 s 0.5-1.6 m off their goals",
    },
}


def cases(criterion: str):
    out = []
    for n in BOUND:
        for m in NAVKIT_MODES:
            why = NOT_YET.get(criterion, {}).get((n, m))
            marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
            out.append(pytest.param(n, m, marks=marks, id=f"{n}-{m}"))
    return out


@pytest.mark.parametrize("name,mode", cases("arrival"))
def test_everybody_arrives_within_the_bound(name, mode):
    for seed, m in each_seed(name, mode):
        assert m.arrival_fraction == 1.0, (seed, m)
        assert m.arrival_time_max is not None and m.arrival_time_max <= BOUND[name], (seed, m)


@pytest.mark.parametrize("name,mode", cases("stuck"))
def test_nobody_stuck(name, mode):
    for seed, m in each_seed(name, mode):
        assert m.stuck == 0, (seed, m)


@pytest.mark.parametrize("name,mode", cases("overlap"))
def test_no_overlap_beyond_a_tenth_of_a_radius_in_any_frame(name, mode):
    for seed, m in each_seed(name, mode):
        assert m.overlap_worst <= 0.10, (seed, m)


@pytest.mark.parametrize("name", ["crossing", "circle"])
@pytest.mark.parametrize("seed", SEEDS)
def test_ttc_beats_every_dtcrowd_preset(name, seed):
    ttc = run(name, "ttc", seed).metrics
    assert ttc.arrival_fraction == 1.0
    for preset in DEFAULT_MODES:
        p = run(name, preset, seed).metrics
        assert ttc.overlap_worst <= p.overlap_worst, (preset, ttc, p)
        assert ttc.overlap_mean <= p.overlap_mean, (preset, ttc, p)
        if p.arrival_fraction < 1.0:
            assert p.arrival_time_max is None or p.arrival_fraction < ttc.arrival_fraction
            continue
        assert ttc.accel_mean < p.accel_mean, (preset, ttc, p)
        assert ttc.jerk_mean < p.jerk_mean, (preset, ttc, p)
        assert ttc.arrival_time_mean <= p.arrival_time_mean, (preset, ttc, p)
        assert ttc.arrival_time_max <= p.arrival_time_max, (preset, ttc, p)
