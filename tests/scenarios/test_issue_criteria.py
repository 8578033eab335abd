"""The issue's correctness criteria on the suite's four people scenarios, at full size.

Per navkit mode (``ttc``, ``orca``, ``ecm-corridor``) in crossing (24 agents),
bottleneck (20 agents, a 1 m door), corridor (50 + 50) and circle (16): every
agent arrives within a bound, nobody is stuck (the suite's measure: moved less than
0.5 m in some 5 s window before arriving), and no two agents overlap by more than
10% of a radius in any frame. The time-to-collision mode against dtCrowd's four
presets in crossing and circle: fewer or equally few overlaps, smoother (mean
|acceleration| and |jerk|), and arriving at least as early (mean and last arrival)
as every preset whose agents all arrive (dtcrowd-high deadlocks in the circle:
nobody arrives, which is "smooth"; it is beaten on arrival).

The dtCrowd presets reproduce Detour's dtCrowd and are not held to these criteria
(docs/scenarios.md: they overlap, and agents queue or deadlock, in bottleneck and
corridor).

Known failures, marked ``xfail(strict=True)`` (so that a fix shows up) with the
figures of docs/scenarios.md:

- bottleneck, every navkit mode: 9 to 14 agents wait at the 1 m door longer than
  5 s. The door passes 0.74 (ttc), 0.68 (orca), 0.89 (ecm-corridor) agents/s;
  dtcrowd-low passes 1.35/s with nobody stuck, by pushing through (overlaps of 0.14
  of a radius). ttc's last agent arrives after 45 s; one orca agent of 20 ends 1.8 m
  from its target, blocked against the far wall by an agent standing at its own
  target (orca's last arrival 34 s). With the door's former navmesh (0.15 m wide
  through it: docs/scenarios.md) the waiting agents' navmesh path distance to the
  target did not shrink over their worst 5 s window (it grew by up to 1-2 m: the
  crowd at the door pushed them back), so they were waiting, not a moving queue the
  metric misreads.
- corridor, ttc and orca: 98% and 99% arrive; 18 and 4 agents stand 5 s where the
  flows meet.
- crossing, ttc against the presets: smoother and without overlaps, but its mean
  arrival (19.2 s) is later than dtcrowd-good's (18.8 s): its agents keep to the
  right (path over shortest 1.06 against 1.02). Turning less (``pref_turn`` 0.15,
  ``force_turn`` -0.5: 18.3 s mean, 19.4 s last) jams the 50 + 50 corridor.
"""

from __future__ import annotations

import functools

import pytest

from navkit.scenarios import DEFAULT_MODES, run_scenario

#: scenario -> bound on the last arrival [s] (the scenarios' shortest paths: crossing
#: 24 m, bottleneck ~11 m, corridor 28 m, circle 20 m, at 1.4 m/s)
BOUND = {"crossing": 25.0, "bottleneck": 30.0, "corridor": 35.0, "circle": 20.0}
NAVKIT_MODES = ("ttc", "orca", "ecm-corridor")


@functools.cache
def run(name: str, mode: str):
    return run_scenario(name, mode)


#: (scenario, mode) -> reason, per criterion (module docstring)
NOT_YET = {
    "arrival": {
        ("bottleneck", "ttc"): "the door passes 0.74 agents/s: the last arrives after 45 s",
        ("bottleneck", "orca"): "95% arrive (one blocked at the far wall); the door passes 0.68/s",
        ("corridor", "ttc"): "98% arrive",
        ("corridor", "orca"): "99% arrive",
    },
    "stuck": {
        ("bottleneck", "ttc"): "agents wait at the door (no path progress for 5 s)",
        ("bottleneck", "orca"): "agents wait at the door (no path progress for 5 s)",
        ("bottleneck", "ecm-corridor"): "agents wait at the door (no path progress for 5 s)",
        ("corridor", "ttc"): "agents stand where the flows meet",
        ("corridor", "orca"): "agents stand where the flows meet",
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
    m = run(name, mode).metrics
    assert m.arrival_fraction == 1.0, m
    assert m.arrival_time_max is not None and m.arrival_time_max <= BOUND[name], m


@pytest.mark.parametrize("name,mode", cases("stuck"))
def test_nobody_stuck(name, mode):
    m = run(name, mode).metrics
    assert m.stuck == 0, m


@pytest.mark.parametrize("name,mode", cases("overlap"))
def test_no_overlap_beyond_a_tenth_of_a_radius_in_any_frame(name, mode):
    m = run(name, mode).metrics
    assert m.overlap_worst <= 0.10, m


@pytest.mark.parametrize("name", [
    pytest.param("crossing", marks=pytest.mark.xfail(
        reason="mean arrival 19.2 s against dtcrowd-good's 18.8 s", strict=True)),
    "circle",
])  # fmt: skip
def test_ttc_beats_every_dtcrowd_preset(name):
    ttc = run(name, "ttc").metrics
    assert ttc.arrival_fraction == 1.0
    for preset in DEFAULT_MODES:
        p = run(name, preset).metrics
        assert ttc.overlap_worst <= p.overlap_worst, (preset, ttc, p)
        assert ttc.overlap_mean <= p.overlap_mean, (preset, ttc, p)
        if p.arrival_fraction < 1.0:
            assert p.arrival_time_max is None or p.arrival_fraction < ttc.arrival_fraction
            continue
        assert ttc.accel_mean < p.accel_mean, (preset, ttc, p)
        assert ttc.jerk_mean < p.jerk_mean, (preset, ttc, p)
        assert ttc.arrival_time_mean <= p.arrival_time_mean, (preset, ttc, p)
        assert ttc.arrival_time_max <= p.arrival_time_max, (preset, ttc, p)
