"""Local grid planner: a detour around circles that block an agent's corridor.

Mononen's "very temporary obstacle" prototype for DetourCrowd: when moving
circles (temporary obstacles, or agents that do not move out of the way) block
the corridor, velocity avoidance alone can stall in front of them (a symmetric
head-on block is a local minimum of every local model). The planner then looks
at a small grid around the agent and finds the way around.

Per update, for walking agents with the LOCAL_GRID flag and a valid target:

1. :func:`track_progress` (kernel over all agents): an agent that has not moved
   ``stall_distance * radius`` (xz) from its anchor position for ``stall_time``
   seconds while it wants to move, and whose way ahead (the segment to its first
   corner, up to ``lookahead * radius``) is crossed by a temporary obstacle or
   another agent, is *blocked*.
2. For a blocked agent, :func:`rasterize` marks the cells of a ``size x size``
   grid of ``cell * radius`` cells centred on the agent: a cell is blocked when
   its centre is within the agent's radius of a wall segment of the agent's local
   boundary (the navmesh border) or of a blocking circle (radii summed);
   :func:`goal_cell` walks the corner polyline (the corridor's straight path) to
   the farthest free cell inside the grid; :func:`astar` (8-connected, no corner
   cutting, octile heuristic, a binary heap over arrays) finds the cell path;
   :func:`smooth` keeps the cells where grid line of sight breaks.
3. While detouring, the agent's desired velocity (after dtCrowd's steering)
   points at its current waypoint at the agent's max speed; reaching a waypoint
   (within ``radius``) moves to the next. Reaching the last one (a point of the
   straight path, on the corridor) ends the detour, and the agent steers along
   its corridor again: the corridor followed the agent throughout (dtCrowd's
   move-along-surface keeps it rooted at the agent's polygon). A detour older
   than ``timeout`` seconds is dropped, and replanned if still blocked.

The avoidance models still run on top of the detour's velocity, so the agent
keeps avoiding what moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from navkit._jit import F32, njit

from .agents import _finite, _int

__all__ = [
    "LocalGridParams", "LocalGridPlanner", "track_progress", "rasterize", "goal_cell", "astar",
    "smooth",
]  # fmt: skip

MAX_WAYPOINTS = 32
_SQRT2 = np.sqrt(2.0)


@dataclass(frozen=True)
class LocalGridParams:
    """Local grid planner settings (lengths in agent radii, times in s).

    Attributes
    ----------
    size : int
        Cells per grid side, 8..128.
    cell : float
        Cell side [radii] (> 0).
    stall_time : float
        Time without progress before a blocked agent plans a detour [s].
    stall_distance : float
        Distance that counts as progress [radii].
    lookahead : float
        How far ahead a blocker is looked for [radii].
    timeout : float
        Age at which a detour is dropped [s].
    """

    size: int = 32
    cell: float = 0.5
    stall_time: float = 1.0
    stall_distance: float = 0.5
    lookahead: float = 4.0
    timeout: float = 8.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", _int(self.size, "size", 8, 128))
        for f in ("cell", "stall_time", "stall_distance", "lookahead", "timeout"):
            object.__setattr__(self, f, _finite(getattr(self, f), f, 1e-6, 1e30))


@njit(cache=True)
def track_progress(act, mask, npos, radius, desired_speed, ncorners, corner_verts, vel, neis,
                   nneis, obs, anchor, anchor_time, stall_time, stall_dist, lookahead, dt,
                   blocked):  # fmt: skip
    """Update each masked agent's progress anchor; set ``blocked[s]`` for stalled agents
    whose way ahead a circle crosses. Returns the number of blocked agents."""
    nb = 0
    for i in range(act.shape[0]):
        s = act[i]
        blocked[s] = False
        if not mask[s]:
            continue
        r = radius[s]
        dx = npos[s, 0] - anchor[s, 0]
        dz = npos[s, 2] - anchor[s, 2]
        lim = stall_dist * r
        if dx * dx + dz * dz > lim * lim or desired_speed[s] < F32(1e-3) or ncorners[s] == 0:
            anchor[s, 0] = npos[s, 0]
            anchor[s, 1] = npos[s, 1]
            anchor[s, 2] = npos[s, 2]
            anchor_time[s] = F32(0.0)
            continue
        anchor_time[s] += dt
        if anchor_time[s] < stall_time:
            continue
        # the way ahead: toward the first corner, at most lookahead radii
        px, pz = npos[s, 0], npos[s, 2]
        ax = corner_verts[s, 0, 0] - px
        az = corner_verts[s, 0, 2] - pz
        al = np.sqrt(ax * ax + az * az)
        if al < F32(1e-4):
            continue
        ux, uz = ax / al, az / al
        reach = min(al, lookahead * r)
        hit = False
        for k in range(nneis[s] + obs.shape[0]):
            if k < nneis[s]:
                o = neis[s, k]
                cx, cz, cr = npos[o, 0], npos[o, 2], radius[o]
            else:
                b = obs[k - nneis[s]]
                cx, cz, cr = b[0], b[2], b[3]
            qx = cx - px
            qz = cz - pz
            t = qx * ux + qz * uz
            if t < F32(0.0) or t > reach + cr:
                continue
            ex = qx - t * ux
            ez = qz - t * uz
            w = r + cr
            if ex * ex + ez * ez < w * w:
                hit = True
                break
        if hit:
            blocked[s] = True
            nb += 1
    return nb


@njit(cache=True)
def rasterize(grid, ox, oz, cs, r, circles, ncir, segs, nseg):
    """Mark the blocked cells of ``grid`` (size, size) uint8 (1 blocked) whose cell (i, j)
    spans x in ox + [j, j+1) cs, z in oz + [i, i+1) cs: centres within ``r`` of a
    segment (rows x0 y0 z0 x1 y1 z1) or within ``r + radius`` of a circle (rows x z
    radius)."""
    n = grid.shape[0]
    grid[:, :] = 0
    for c in range(ncir):
        cx, cz, rr = circles[c, 0], circles[c, 1], circles[c, 2] + r
        i0 = max(int(np.floor((cz - rr - oz) / cs)), 0)
        i1 = min(int(np.floor((cz + rr - oz) / cs)), n - 1)
        j0 = max(int(np.floor((cx - rr - ox) / cs)), 0)
        j1 = min(int(np.floor((cx + rr - ox) / cs)), n - 1)
        for i in range(i0, i1 + 1):
            zc = oz + (i + F32(0.5)) * cs - cz
            for j in range(j0, j1 + 1):
                xc = ox + (j + F32(0.5)) * cs - cx
                if xc * xc + zc * zc < rr * rr:
                    grid[i, j] = 1
    for k in range(nseg):
        ax, az, bx, bz = segs[k, 0], segs[k, 2], segs[k, 3], segs[k, 5]
        i0 = max(int(np.floor((min(az, bz) - r - oz) / cs)), 0)
        i1 = min(int(np.floor((max(az, bz) + r - oz) / cs)), n - 1)
        j0 = max(int(np.floor((min(ax, bx) - r - ox) / cs)), 0)
        j1 = min(int(np.floor((max(ax, bx) + r - ox) / cs)), n - 1)
        sx, sz = bx - ax, bz - az
        l2 = sx * sx + sz * sz
        for i in range(i0, i1 + 1):
            zc = oz + (i + F32(0.5)) * cs
            for j in range(j0, j1 + 1):
                xc = ox + (j + F32(0.5)) * cs
                t = F32(0.0)
                if l2 > F32(0.0):
                    t = min(max(((xc - ax) * sx + (zc - az) * sz) / l2, F32(0.0)), F32(1.0))
                ex = ax + t * sx - xc
                ez = az + t * sz - zc
                if ex * ex + ez * ez < r * r:
                    grid[i, j] = 1


@njit(cache=True)
def goal_cell(grid, ox, oz, cs, px, pz, poly, npoly):
    """The farthest free cell along the polyline ``poly[:npoly]`` (rows x z) from (px, pz)
    that lies inside the grid, sampled every half cell; returns (i, j, x, z), i = -1
    when none."""
    n = grid.shape[0]
    bi, bj, bx, bz = -1, -1, F32(0.0), F32(0.0)
    ax, az = px, pz
    step = cs * F32(0.5)
    for k in range(npoly):
        qx, qz = poly[k, 0], poly[k, 1]
        sx, sz = qx - ax, qz - az
        ln = np.sqrt(sx * sx + sz * sz)
        m = int(ln / step) + 1
        for t in range(1, m + 1):
            f = min(F32(t) * step / ln, F32(1.0)) if ln > F32(0.0) else F32(1.0)
            x = ax + f * sx
            z = az + f * sz
            j = int(np.floor((x - ox) / cs))
            i = int(np.floor((z - oz) / cs))
            if i < 1 or j < 1 or i >= n - 1 or j >= n - 1:
                return bi, bj, bx, bz
            if grid[i, j] == 0:
                bi, bj, bx, bz = i, j, x, z
        ax, az = qx, qz
    return bi, bj, bx, bz


@njit(inline="always")
def _push(heap, hn, key, node):
    k = hn
    heap[k, 0] = key
    heap[k, 1] = node
    while k > 0:
        p = (k - 1) // 2
        if heap[p, 0] <= heap[k, 0]:
            break
        a0, a1 = heap[p, 0], heap[p, 1]
        heap[p, 0], heap[p, 1] = heap[k, 0], heap[k, 1]
        heap[k, 0], heap[k, 1] = a0, a1
        k = p
    return hn + 1


@njit(inline="always")
def _pop(heap, hn):
    node = heap[0, 1]
    hn -= 1
    heap[0, 0], heap[0, 1] = heap[hn, 0], heap[hn, 1]
    k = 0
    while True:
        a = 2 * k + 1
        if a >= hn:
            break
        b = a + 1
        c = b if b < hn and heap[b, 0] < heap[a, 0] else a
        if heap[k, 0] <= heap[c, 0]:
            break
        t0, t1 = heap[k, 0], heap[k, 1]
        heap[k, 0], heap[k, 1] = heap[c, 0], heap[c, 1]
        heap[c, 0], heap[c, 1] = t0, t1
        k = c
    return node, hn


@njit(cache=True)
def astar(grid, si, sj, gi, gj, out):
    """8-connected A* on free cells (the start cell counts as free; a diagonal step
    needs both side cells free). Writes the cell path start..goal as rows (i, j) to
    ``out`` and returns its length; 0 when the goal is unreachable or the path is
    longer than ``out``."""
    n = grid.shape[0]
    nn = n * n
    g = np.full(nn, np.inf)
    parent = np.full(nn, -1, np.int64)
    closed = np.zeros(nn, np.bool_)
    heap = np.zeros((8 * nn + 1, 2))
    start = si * n + sj
    goal = gi * n + gj
    g[start] = 0.0
    hn = _push(heap, 0, 0.0, start)
    found = False
    while hn > 0:
        fnode, hn = _pop(heap, hn)
        u = int(fnode)
        if closed[u]:
            continue
        closed[u] = True
        if u == goal:
            found = True
            break
        ui, uj = u // n, u % n
        for di in range(-1, 2):
            for dj in range(-1, 2):
                if di == 0 and dj == 0:
                    continue
                vi, vj = ui + di, uj + dj
                if vi < 0 or vj < 0 or vi >= n or vj >= n or grid[vi, vj]:
                    continue
                if di != 0 and dj != 0 and (grid[ui + di, uj] or grid[ui, uj + dj]):
                    continue
                v = vi * n + vj
                if closed[v]:
                    continue
                ng = g[u] + (_SQRT2 if di != 0 and dj != 0 else 1.0)
                if ng < g[v]:
                    g[v] = ng
                    parent[v] = u
                    ai, aj = abs(vi - gi), abs(vj - gj)
                    h = max(ai, aj) + (_SQRT2 - 1.0) * min(ai, aj)
                    hn = _push(heap, hn, ng + h, v)
    if not found:
        return 0
    m = 0
    v = goal
    while v != -1:
        m += 1
        v = parent[v]
    if m > out.shape[0]:
        return 0
    v = goal
    for k in range(m - 1, -1, -1):
        out[k, 0] = v // n
        out[k, 1] = v % n
        v = parent[v]
    return m


@njit(inline="always")
def _los(grid, ai, aj, bi, bj):
    """Grid line of sight between cell centres (every cell the segment crosses is free),
    sampled at quarter cells."""
    di = bi - ai
    dj = bj - aj
    m = 4 * max(abs(di), abs(dj)) + 1
    for k in range(m + 1):
        t = k / m
        fi = ai + 0.5 + t * di
        fj = aj + 0.5 + t * dj
        # the cells around the sample point within 0.3 cell: a fat line
        for oi in (-0.3, 0.3):
            for oj in (-0.3, 0.3):
                ci = int(np.floor(fi + oi))
                cj = int(np.floor(fj + oj))
                if ci < 0 or cj < 0 or ci >= grid.shape[0] or cj >= grid.shape[1]:
                    return False
                if grid[ci, cj] and not (ci == ai and cj == aj):
                    return False
    return True


@njit(cache=True)
def smooth(grid, cells, m, out):
    """String-pull the cell path ``cells[:m]``: keep the farthest cell visible from the
    last kept one; returns the count of kept cells (the start excluded) in ``out``."""
    k = 0
    a = 0
    while a < m - 1:
        b = m - 1
        while b > a + 1 and not _los(grid, cells[a, 0], cells[a, 1], cells[b, 0], cells[b, 1]):
            b -= 1
        out[k, 0] = cells[b, 0]
        out[k, 1] = cells[b, 1]
        k += 1
        a = b
        if k >= out.shape[0]:
            break
    return k


class LocalGridPlanner:
    """Detour state of every agent slot (see the module docstring).

    Attributes
    ----------
    detouring : (n,) bool
        Agents following a detour.
    waypoints : (n, MAX_WAYPOINTS, 2) float32
        Detour waypoints (x, z) [wu]; ``nwaypoints``, ``current`` index them.
    detours : int
        Detours planned so far (all agents).
    """

    def __init__(self, n: int, params: LocalGridParams | None = None) -> None:
        self.params = params or LocalGridParams()
        self.anchor = np.zeros((n, 3), np.float32)
        self.anchor_time = np.zeros(n, np.float32)
        self.blocked = np.zeros(n, np.bool_)
        self.detouring = np.zeros(n, np.bool_)
        self.waypoints = np.zeros((n, MAX_WAYPOINTS, 2), np.float32)
        self.nwaypoints = np.zeros(n, np.int32)
        self.current = np.zeros(n, np.int32)
        self.age = np.zeros(n, np.float32)
        self.detours = 0
        self.last_grid: np.ndarray | None = None  # the last rasterized grid (debugging)

    def reset(self, s: int) -> None:
        self.detouring[s] = False
        self.anchor_time[s] = 0
        self.anchor[s] = np.inf

    def plan(self, s: int, a, b, obs: np.ndarray) -> bool:
        """Rasterize and search a detour for agent slot ``s``; True when one was found."""
        p = self.params
        r = np.float32(a.radius[s])
        cs = np.float32(p.cell) * r
        n = p.size
        px, pz = np.float32(a.npos[s, 0]), np.float32(a.npos[s, 2])
        half = cs * np.float32(n) * np.float32(0.5)
        ox, oz = px - half, pz - half
        rows = [
            (a.npos[o, 0], a.npos[o, 2], a.radius[o])
            for o in a.neis[s, : a.nneis[s]]
            if abs(a.npos[o, 1] - a.npos[s, 1]) < (a.height[s] + a.height[o]) / 2
        ]
        rows += [(c[0], c[2], c[3]) for c in obs if abs(c[1] - a.npos[s, 1]) < a.height[s]]
        circles = np.array(rows, np.float32).reshape(-1, 3)
        grid = np.zeros((n, n), np.uint8)
        nseg = int(b.nsegs[s])
        rasterize(grid, ox, oz, cs, r, circles, circles.shape[0], b.segs[s], nseg)
        self.last_grid = grid
        nc = int(a.ncorners[s])
        poly = np.ascontiguousarray(a.corner_verts[s, :nc][:, [0, 2]])
        gi, gj, _, _ = goal_cell(grid, ox, oz, cs, px, pz, poly, nc)
        si = int(np.floor((pz - oz) / cs))
        sj = int(np.floor((px - ox) / cs))
        if gi < 0 or (gi == si and gj == sj):
            return False
        grid[si, sj] = 0
        cells = np.zeros((4 * n * n, 2), np.int64)
        m = astar(grid, si, sj, gi, gj, cells)
        if m < 2:
            return False
        kept = np.zeros((MAX_WAYPOINTS, 2), np.int64)
        k = smooth(grid, cells, m, kept)
        self.waypoints[s, :k, 0] = ox + (kept[:k, 1] + 0.5) * cs
        self.waypoints[s, :k, 1] = oz + (kept[:k, 0] + 0.5) * cs
        self.nwaypoints[s] = k
        self.current[s] = 0
        self.age[s] = 0
        self.detouring[s] = True
        self.detours += 1
        return True

    def steer(self, s: int, a, dt: float) -> None:
        """Point agent ``s``'s desired velocity at its current waypoint (ends the detour
        at the last one, or when too old)."""
        self.age[s] += dt
        if self.age[s] > self.params.timeout:
            self.detouring[s] = False
            return
        r = a.radius[s]
        while True:
            w = self.waypoints[s, self.current[s]]
            dx = w[0] - a.npos[s, 0]
            dz = w[1] - a.npos[s, 2]
            d = float(np.hypot(dx, dz))
            if d > r:
                break
            self.current[s] += 1
            if self.current[s] >= self.nwaypoints[s]:
                self.detouring[s] = False  # back on the corridor
                self.anchor[s] = a.npos[s]
                self.anchor_time[s] = 0
                return
        speed = a.max_speed[s]
        a.dvel[s] = (dx / d * speed, 0.0, dz / d * speed)
        a.desired_speed[s] = speed
