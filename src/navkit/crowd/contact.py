"""Contact resolution of the navkit avoidance models (TTC, ORCA): a navkit extension.

dtCrowd's collision phase (:func:`~navkit.crowd.steering.resolve_collisions`)
moves each agent by the *average* of its push-outs, 0.7 of half of each
penetration, four Jacobi rounds: in a dense crowd (an agent pressed by five
neighbours, or against a wall) an overlap of a few tenths of a radius survives
the phase. The TTC and ORCA agents then run :func:`resolve_contacts` on top of
it: Gauss-Seidel rounds in which every overlapping pair is pushed apart at once by
the whole penetration beyond :data:`CONTACT_ALLOW` (8%) of the smaller radius
(shared equally between two TTC / ORCA agents; an agent of another model, which
keeps dtCrowd's phase bit for bit, is not moved and the navkit agent takes all of
it), until no pair overlaps by more than ``tolerance`` beyond that or ``rounds``
are done. The 8% left (under the issue's 10%) lets a pair pressed into a door's
mouth squeeze past each other: resolved to 0 the suite's bottleneck left 1 to 3
TTC agents of 10 to 20 in a standoff at the door for good (and the 50 + 50
corridor's arrival varied between 76% and 100% with it, as it does with any small
change of the TTC model: its counterflow is chaotic).

Pushes are kept on the navmesh: an agent that was on the inner side of a wall
segment of its local boundary (the eroded navmesh edge, dtLocalBoundary's
segments) at its corridor position (on the navmesh, where the last update left it)
is projected back onto the segment's line
when a push (dtCrowd's phase, or a round here) takes it across (within the
segment's span), so that two agents
pressed against a wall separate along it rather than through it (where the
move along the navmesh would put them back on top of each other). The move along
the surface that follows the phase clamps to the navmesh exactly.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import F32, njit

from .obstacles import GATHER_IDS
from .proximity import _query_items

__all__ = ["resolve_contacts", "CONTACT_ROUNDS", "CONTACT_TOLERANCE", "CONTACT_ALLOW"]

#: Gauss-Seidel rounds at most per update
CONTACT_ROUNDS = 16
#: stop when no pair overlaps by more than this fraction of the smaller radius
CONTACT_TOLERANCE = 0.01
#: overlap a pair keeps [fraction of the smaller radius] (below the issue's 10%)
CONTACT_ALLOW = 0.08
#: candidate partners per agent (within its radius + the largest radius + 0.5 wu)
_MAX_CANDIDATES = 24
#: an agent this far behind a wall's line at the start still counts as inside it (the
#: move along the surface leaves agents on the edge, a float32 hair either side) [wu]
_WALL_TOL = F32(0.05)
#: a push takes the agent this far inside a wall it was pushed across [wu]
_WALL_EPS = F32(1e-4)


@njit(cache=True)
def _keep_inside(s, npos, pos0, segs, nsegs):
    """Project agent ``s`` back across the wall segments it was inside of at ``pos0``;
    True when it did."""
    moved = False
    for k in range(nsegs[s]):
        w = segs[s, k]
        sx = w[3] - w[0]
        sz = w[5] - w[2]
        l2 = sx * sx + sz * sz
        if l2 <= F32(1e-12):
            continue
        ln = np.sqrt(l2)
        inx = sz / ln  # inward normal (the side dtCrowd's facing test keeps)
        inz = -sx / ln
        h0 = (pos0[s, 0] - w[0]) * inx + (pos0[s, 2] - w[2]) * inz
        if h0 < -_WALL_TOL:
            continue  # not inside this one at the start (behind it, or a corner's wedge)
        h = (npos[s, 0] - w[0]) * inx + (npos[s, 2] - w[2]) * inz
        if h >= F32(0.0):
            continue
        t = ((npos[s, 0] - w[0]) * sx + (npos[s, 2] - w[2]) * sz) / l2
        if t <= F32(0.0) or t >= F32(1.0):
            continue
        d = _WALL_EPS - h
        npos[s, 0] = npos[s, 0] + inx * d
        npos[s, 2] = npos[s, 2] + inz * d
        moved = True
    return moved


@njit(cache=True)
def resolve_contacts(act, mask, walking, npos, cpos, radius, height, inv, buckets, items, segs,
                     nsegs, rounds, tolerance, allow):  # fmt: skip
    """Push overlapping agents apart (module docstring): the agents ``s`` in ``act``
    with ``mask[s]`` (walking TTC / ORCA agents), against every walking agent whose
    cylinder overlaps theirs. Candidates come from the proximity grid (``inv``,
    ``buckets``, ``items``: built this update, item ids are ranks in ``act``), not
    from dtCrowd's neighbour lists, which in a dense crowd miss agents at random
    (the 32 grid ids they read). ``cpos`` the corridor positions (on the navmesh,
    from the last update: which side of each wall the agent is on), ``segs``/``nsegs``
    the local boundaries; ``allow`` the overlap left to a pair [fraction of the smaller
    radius]. Returns the rounds run."""
    n = act.shape[0]
    pos0 = cpos
    rmax = F32(0.0)
    for i in range(n):
        rmax = max(rmax, radius[act[i]])
    # candidate pairs (s, o), once: the grid is from before this update's moves, so the
    # box is widened by a step's move and push (at most 0.5 wu are assumed)
    ids = np.empty(GATHER_IDS, np.int64)
    pa = np.empty(n * _MAX_CANDIDATES, np.int64)
    pb = np.empty(n * _MAX_CANDIDATES, np.int64)
    npairs = 0
    for i in range(n):
        s = act[i]
        if not mask[s]:
            continue
        ext = radius[s] + rmax + F32(0.5)
        k = _query_items(npos[s, 0] - ext, npos[s, 2] - ext, npos[s, 0] + ext, npos[s, 2] + ext,
                         inv, buckets, items, ids)  # fmt: skip
        got = 0
        for q in range(k):
            o = act[ids[q]]
            if o == s or not walking[o] or (mask[o] and o < s):
                continue  # each pair of two masked agents once
            if npos[o, 1] >= npos[s, 1] + height[s] or npos[s, 1] >= npos[o, 1] + height[o]:
                continue
            dx = npos[s, 0] - npos[o, 0]
            dz = npos[s, 2] - npos[o, 2]
            rr = radius[s] + radius[o] + F32(0.5)
            if dx * dx + dz * dz > rr * rr or got >= _MAX_CANDIDATES:
                continue
            pa[npairs] = s
            pb[npairs] = o
            npairs += 1
            got += 1
    # first undo what dtCrowd's collision phase pushed across a wall (the move along the
    # surface would put the agent back onto a neighbour the rounds below kept it off)
    for i in range(n):
        s = act[i]
        if mask[s]:
            _keep_inside(s, npos, pos0, segs, nsegs)
    done = 0
    for _ in range(rounds):
        done += 1
        worst = F32(0.0)
        walled = False
        for q in range(npairs):
            s = pa[q]
            o = pb[q]
            dx = npos[s, 0] - npos[o, 0]
            dz = npos[s, 2] - npos[o, 2]
            rmin = min(radius[s], radius[o])
            rr = radius[s] + radius[o] - allow * rmin
            d2 = dx * dx + dz * dz
            if d2 >= rr * rr:
                continue
            d = np.sqrt(d2)
            pen = rr - d
            rel = pen / rmin
            if rel > worst:
                worst = rel
            if d < F32(1e-4):
                # on one point: apart along x, the lower slot to -x
                nx = F32(1.0) if s > o else F32(-1.0)
                nz = F32(0.0)
            else:
                nx = dx / d
                nz = dz / d
            if mask[o]:
                h = pen * F32(0.5)
                npos[s, 0] = npos[s, 0] + nx * h
                npos[s, 2] = npos[s, 2] + nz * h
                npos[o, 0] = npos[o, 0] - nx * h
                npos[o, 2] = npos[o, 2] - nz * h
                walled |= _keep_inside(o, npos, pos0, segs, nsegs)
            else:
                npos[s, 0] = npos[s, 0] + nx * pen
                npos[s, 2] = npos[s, 2] + nz * pen
            walled |= _keep_inside(s, npos, pos0, segs, nsegs)
        # a wall's projection may have made an overlap the round did not see
        if worst <= tolerance and not walled:
            break
    return done
