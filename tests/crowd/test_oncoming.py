"""navkit.crowd.ttc.oncoming_ahead: how far ahead an agent sees people coming the other
way down its line, through the proximity grid (not only its nearest neighbours).

Hand-placed agents; agent 0 at the origin walks +x. The expected distances follow
from the rule in the kernel's docstring (walking the other way, more than 120 degrees
off, centre within the summed radii of the line, within the sight), not from a run.
"""

from __future__ import annotations

import numpy as np

from navkit.crowd.proximity import ProximityGrid, build_grid
from navkit.crowd.ttc import oncoming_ahead

F = np.float32
R = 0.3
VMAX = 1.4


def ahead(others, sight=7.2, me=(1.4, 0.0), cell=0.9, height=1.8):
    """others: rows (x, z, dvx, dvz[, y]); returns agent 0's distance."""
    n = 1 + len(others)
    npos = np.zeros((n, 3), F)
    dvel = np.zeros((n, 3), F)
    dvel[0] = (me[0], 0.0, me[1])
    for i, o in enumerate(others, 1):
        npos[i] = (o[0], o[4] if len(o) > 4 else 0.0, o[1])
        dvel[i] = (o[2], 0.0, o[3])
    radius = np.full(n, R, F)
    hgt = np.full(n, height, F)
    vmax = np.full(n, VMAX, F)
    act = np.arange(n, dtype=np.int64)
    g = ProximityGrid(n * 4, F(cell))
    build_grid(act, npos, radius, g.inv_cell_size, g.buckets, g.items, g.lo)
    out = np.zeros(n, F)
    oncoming_ahead(act, np.ones(n, np.bool_), npos, dvel, vmax, radius, hgt, g.inv_cell_size,
                   g.buckets, g.items, np.full(n, sight, F), out)  # fmt: skip
    return float(out[0])


def test_the_nearest_oncoming_agent_on_the_line():
    assert np.isclose(ahead([(5.0, 0.2, -1.4, 0.0)]), 5.0, atol=1e-5)
    # the nearest of two, whatever their order in the grid
    assert np.isclose(ahead([(6.5, -0.3, -1.4, 0.0), (3.2, 0.1, -1.2, 0.3)]), 3.2, atol=1e-5)
    # behind a dense block of its own flow (which the 16 nearest neighbours would be)
    own = [(0.8 * i, 0.8 * j, 1.4, 0.0) for i in range(1, 7) for j in (-1, 0, 1)]
    assert np.isclose(ahead(own + [(6.9, 0.0, -1.4, 0.0)]), 6.9, atol=1e-5)


def test_nobody_counts_off_the_line_beyond_the_sight_or_going_its_way():
    assert ahead([]) == np.inf
    # lateral offset at and beyond the summed radii (0.6)
    assert ahead([(4.0, 0.61, -1.4, 0.0), (4.0, -0.7, -1.4, 0.0)]) == np.inf
    assert ahead([(4.0, 0.59, -1.4, 0.0)]) < np.inf
    # beyond the sight; behind
    assert ahead([(7.5, 0.0, -1.4, 0.0)]) == np.inf
    assert ahead([(7.5, 0.0, -1.4, 0.0)], sight=8.0) < np.inf
    assert ahead([(-2.0, 0.0, 1.4, 0.0), (-2.0, 0.0, -1.4, 0.0)]) == np.inf
    # going the same way, crossing square (90 degrees), standing (desired speed under half)
    assert ahead([(3.0, 0.0, 1.4, 0.0), (4.0, 0.0, 0.0, -1.4), (5.0, 0.0, -0.6, 0.0)]) == np.inf
    # 130 degrees off counts, 110 does not
    a, b = np.radians(130.0), np.radians(110.0)
    assert ahead([(4.0, 0.0, 1.4 * np.cos(a), 1.4 * np.sin(a))]) < np.inf
    assert ahead([(4.0, 0.0, 1.4 * np.cos(b), 1.4 * np.sin(b))]) == np.inf
    # another storey
    assert ahead([(4.0, 0.0, -1.4, 0.0, 3.0)]) == np.inf


def test_a_line_across_the_grid_and_an_agent_that_stands():
    # walking diagonally: found at its distance along the line
    d = ahead([(3.0, 3.0, -1.0, -1.0)], me=(1.0, 1.0))
    assert np.isclose(d, np.hypot(3.0, 3.0), atol=1e-5)
    # an agent that does not walk sees nothing
    assert ahead([(3.0, 0.0, -1.4, 0.0)], me=(0.5, 0.0)) == np.inf
