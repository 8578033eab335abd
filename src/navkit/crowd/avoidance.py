"""Sampled velocity planning (Detour's dtObstacleAvoidanceQuery, adaptive sampling).

:func:`sample_velocity_adaptive` scores candidate velocities on a polar pattern
aligned with the desired velocity, refines around the best one ``adaptive_depth``
times, and returns the best; the penalty mixes distance to the desired and the
current velocity, side bias and time to impact with neighbour circles (RVO,
swept) and wall segments, with Detour's early out. float32 throughout.
:class:`ObstacleAvoidanceParams`, dtCrowd's defaults and RecastDemo's presets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numba import prange

from navkit._jit import F32, borrow, njit
from navkit.errors import ConfigError

from ._par import keep, twins
from .agents import _finite, _int

__all__ = [
    "ObstacleAvoidanceParams", "DEFAULT_PARAMS", "PRESETS", "MAX_PARAMS", "MAX_CIRCLES",
    "MAX_SEGMENTS", "sample_velocity_adaptive", "plan_velocities", "plan_velocities_par",
]  # fmt: skip

MAX_CIRCLES = 6  # dtCrowd: m_obstacleQuery->init(6, 8)
MAX_SEGMENTS = 8
_MAX_PATTERN_DIVS = 32
_MAX_PATTERN_RINGS = 4
_SV = _MAX_PATTERN_DIVS * _MAX_PATTERN_RINGS + 8  # samples (129) rounded up to 8s
_DT_PI = F32(3.14159265)
_FLT_MAX = F32(np.finfo(np.float32).max)
_FLT_EPS = F32(np.finfo(np.float32).eps)

MAX_PARAMS = 8  # DT_CROWD_MAX_OBSTAVOIDANCE_PARAMS


@dataclass(frozen=True)
class ObstacleAvoidanceParams:
    """dtObstacleAvoidanceParams (dtCrowd::init's defaults)."""

    vel_bias: float = 0.4
    weight_des_vel: float = 2.0
    weight_cur_vel: float = 0.75
    weight_side: float = 0.75
    weight_toi: float = 2.5
    horiz_time: float = 2.5
    grid_size: int = 33
    adaptive_divs: int = 7
    adaptive_rings: int = 2
    adaptive_depth: int = 5

    def __post_init__(self) -> None:
        for f in ("vel_bias", "weight_des_vel", "weight_cur_vel", "weight_side", "weight_toi",
                  "horiz_time"):  # fmt: skip
            object.__setattr__(self, f, _finite(getattr(self, f), f, 0.0, 1e30))
        object.__setattr__(self, "grid_size", _int(self.grid_size, "grid_size", 1, 255))
        object.__setattr__(self, "adaptive_divs", _int(self.adaptive_divs, "adaptive_divs", 1, 32))
        if self.adaptive_divs % 2 == 0:
            # Detour's pattern for an even count reads an unset sample (no defined result)
            raise ConfigError("adaptive_divs", f"must be odd, got {self.adaptive_divs}")
        object.__setattr__(
            self, "adaptive_rings", _int(self.adaptive_rings, "adaptive_rings", 1, 4)
        )
        object.__setattr__(
            self, "adaptive_depth", _int(self.adaptive_depth, "adaptive_depth", 0, 255)
        )

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(float32 [vel_bias, weight_des_vel, weight_cur_vel, weight_side, weight_toi,
        horiz_time, cos(da), sin(da), cos(da/2), sin(da/2)], int32 [divs, rings, depth])."""
        nd = min(max(self.adaptive_divs, 1), _MAX_PATTERN_DIVS)
        da = (F32(1.0) / F32(nd)) * _DT_PI * F32(2.0)
        half = da * F32(0.5)
        f = np.array(
            [self.vel_bias, self.weight_des_vel, self.weight_cur_vel, self.weight_side,
             self.weight_toi, self.horiz_time, math.cos(da), math.sin(da), math.cos(half),
             math.sin(half)], np.float32,
        )  # fmt: skip
        i = np.array([self.adaptive_divs, self.adaptive_rings, self.adaptive_depth], np.int32)
        return f, i


DEFAULT_PARAMS = ObstacleAvoidanceParams()
#: RecastDemo CrowdTool's four presets (low, medium, good, high quality).
PRESETS = (
    replace(DEFAULT_PARAMS, vel_bias=0.5, adaptive_divs=5, adaptive_rings=2, adaptive_depth=1),
    replace(DEFAULT_PARAMS, vel_bias=0.5, adaptive_divs=5, adaptive_rings=2, adaptive_depth=2),
    replace(DEFAULT_PARAMS, vel_bias=0.5, adaptive_divs=7, adaptive_rings=2, adaptive_depth=3),
    replace(DEFAULT_PARAMS, vel_bias=0.5, adaptive_divs=7, adaptive_rings=3, adaptive_depth=3),
)


@njit(inline="always")
def _vdist2d(ax, az, bx, bz):
    dx = bx - ax
    dz = bz - az
    return np.sqrt(dx * dx + dz * dz)


@njit(inline="always")
def _dist_pt_seg_sqr_2d(px, pz, ax, az, bx, bz):
    sx = bx - ax
    sz = bz - az
    dx = px - ax
    dz = pz - az
    d = sx * sx + sz * sz
    t = sx * dx + sz * dz
    if d > F32(0.0):
        t = t / d
    if t < F32(0.0):
        t = F32(0.0)
    elif t > F32(1.0):
        t = F32(1.0)
    ex = ax + t * sx - px
    ez = az + t * sz - pz
    return ex * ex + ez * ez


@njit(cache=True)
def sample_velocity_adaptive(pos, rad, vmax, vel, dvel, cir, ncir, segs, nseg, fp, ip, nvel):
    """dtObstacleAvoidanceQuery::sampleVelocityAdaptive; writes nvel, returns the sample count.

    cir : (>= ncir, 16) float32 rows ``p(3) rad vel(3) dvel(3)`` (the rest is scratch);
    segs : (>= nseg, 6) float32; fp, ip : :meth:`ObstacleAvoidanceParams.arrays`.
    """
    return _sample_core(
        pos, rad, vmax, vel, dvel, cir, ncir, segs, nseg, fp, ip, nvel,
        np.zeros(max(nseg, 1), np.bool_),
        np.zeros((_MAX_PATTERN_DIVS * _MAX_PATTERN_RINGS + 1, 2), np.float32),
        np.zeros((max(ncir, 1), 9), np.float32), np.zeros((max(nseg, 1), 5), np.float32),
        np.zeros((6, _SV), np.float32),
    )  # fmt: skip


@njit(cache=True)
def _sample_core(pos, rad, vmax, vel, dvel, cir, ncir, segs, nseg, fp, ip, nvel, touch, pat,
                 ct, st, sv):  # fmt: skip
    """:func:`sample_velocity_adaptive` with caller scratch ``touch`` (>= nseg,) bool,
    ``pat`` (129, 2) float32, the per-agent tables ``ct`` (>= ncir, 9) and ``st``
    (>= nseg, 5) float32 and ``sv`` (6, 136) float32 (per sample: velocity x, z, the
    relative velocity 2 v - vel, tmin, side).

    Each refinement scores its samples in two passes with dtObstacleAvoidanceQuery::
    processSample's float32 operations: first, for all samples within reach and one
    circle or segment at a time (a loop over samples, which LLVM vectorises), the
    time of impact ``tmin`` and the side term, then (vectorised too) each sample's
    penalty; then, in pattern order, Detour's comparison with its early outs. An early out returns the current minimum penalty
    when the sample cannot beat it: before any circle when ``t_thr >= horiz``, and
    as soon as ``tmin`` falls below ``t_thr`` (tmin only decreases, so exactly when
    the final ``tmin`` is below ``t_thr``). Either way the minimum is kept, so the
    early outs are only evaluated for a sample whose penalty is below it. The chosen
    velocity, the penalties compared and the sample count are Detour's."""
    # prepare(pos, dvel)
    for i in range(ncir):
        c = cir[i]
        dx = c[0] - pos[0]
        dy = c[1] - pos[1]
        dz = c[2] - pos[2]
        inv = F32(1.0) / np.sqrt(dx * dx + dy * dy + dz * dz)
        dx, dy, dz = dx * inv, dy * inv, dz * inv
        c[10], c[11], c[12] = dx, dy, dz
        dvx = c[7] - dvel[0]
        dvz = c[9] - dvel[2]
        # dtTriArea2D(orig, dp, dv) = dv.x * dp.z - dp.x * dv.z
        a = dvx * dz - dx * dvz
        if a < F32(0.01):
            c[13] = -dz
            c[15] = dx
        else:
            c[13] = dz
            c[15] = -dx
        t = ct[i]
        t[0] = c[4]
        t[1] = c[6]
        t[2] = c[10]
        t[3] = c[12]
        t[4] = c[13]
        t[5] = c[15]
        sx = c[0] - pos[0]
        sz = c[2] - pos[2]
        r = rad + c[3]
        t[6] = sx
        t[7] = sz
        t[8] = (sx * sx + sz * sz) - r * r
    for i in range(nseg):
        sg = segs[i]
        d2 = _dist_pt_seg_sqr_2d(pos[0], pos[2], sg[0], sg[2], sg[3], sg[5])
        touch[i] = d2 < F32(0.01) * F32(0.01)
        g = st[i]
        qx = sg[3] - sg[0]
        qz = sg[5] - sg[2]
        wx = pos[0] - sg[0]
        wz = pos[2] - sg[2]
        g[0] = qx
        g[1] = qz
        g[2] = wx
        g[3] = wz
        g[4] = qz * wx - qx * wz
    vel_bias = fp[0]
    w_des, w_cur, w_side, w_toi, horiz = fp[1], fp[2], fp[3], fp[4], fp[5]
    vel0, vel2, dvel0, dvel2 = vel[0], vel[2], dvel[0], dvel[2]
    inv_horiz = F32(1.0) / fp[5]
    inv_vmax = F32(1.0) / vmax if vmax > F32(0.0) else _FLT_MAX
    ncf = F32(max(ncir, 1))
    nvel[0] = F32(0.0)
    nvel[1] = F32(0.0)
    nvel[2] = F32(0.0)
    nd = min(max(ip[0], 1), _MAX_PATTERN_DIVS)
    nr = min(max(ip[1], 1), _MAX_PATTERN_RINGS)
    depth = ip[2]
    ca, sa, ch, sh = fp[6], fp[7], fp[8], fp[9]
    # desired direction and its rotation by da/2
    d0x, d0z = dvel[0], dvel[2]
    dd = np.sqrt(d0x * d0x + d0z * d0z)
    if dd != F32(0.0):
        dd = F32(1.0) / dd
        d0x = d0x * dd
        d0z = d0z * dd
    d1x = d0x * ch - d0z * sh
    d1z = d0x * sh + d0z * ch
    pat[0, 0] = F32(0.0)
    pat[0, 1] = F32(0.0)
    npat = 1
    for j in range(nr):
        r = F32(nr - j) / F32(nr)
        if j % 2 == 0:
            pat[npat, 0] = d0x * r
            pat[npat, 1] = d0z * r
        else:
            pat[npat, 0] = d1x * r
            pat[npat, 1] = d1z * r
        l1 = npat
        l2 = npat
        npat += 1
        for _ in range(1, nd - 1, 2):
            pat[npat, 0] = pat[l1, 0] * ca + pat[l1, 1] * sa
            pat[npat, 1] = -pat[l1, 0] * sa + pat[l1, 1] * ca
            pat[npat + 1, 0] = pat[l2, 0] * ca - pat[l2, 1] * sa
            pat[npat + 1, 1] = pat[l2, 0] * sa + pat[l2, 1] * ca
            l1 = npat
            l2 = npat + 1
            npat += 2
    cr = vmax * (F32(1.0) - vel_bias)
    rx = dvel[0] * vel_bias
    rz = dvel[2] * vel_bias
    ns = 0
    lim = vmax + F32(0.001)
    lim = lim * lim
    sx_ = sv[0]  # (rows of the caller's scratch: no allocation per agent)
    sz_ = sv[1]
    axs = sv[2]
    azs = sv[3]
    tmins = sv[4]
    sides = sv[5]
    for _ in range(depth):
        nv = 0
        for i in range(npat):  # the samples within reach, in pattern order
            vx = rx + pat[i, 0] * cr
            vz = rz + pat[i, 1] * cr
            if vx * vx + vz * vz > lim:
                continue
            sx_[nv] = vx
            sz_[nv] = vz
            axs[nv] = vx * F32(2.0) - vel0
            azs[nv] = vz * F32(2.0) - vel2
            tmins[nv] = horiz
            sides[nv] = F32(0.0)
            nv += 1
        # whole vectors of 8: LLVM's loops below then run no scalar remainder (the
        # padding rows are scored and never read)
        nvp = (nv + 7) & ~7
        for i in range(nv, nvp):
            sx_[i] = F32(0.0)
            sz_[i] = F32(0.0)
            axs[i] = F32(0.0)
            azs[i] = F32(0.0)
            tmins[i] = horiz
            sides[i] = F32(0.0)
        for j in range(ncir):  # the circles (sweepCircleCircle, side), all samples
            c0, c1, c2, c3, c4, c5, c6, c7, c8 = (
                ct[j, 0], ct[j, 1], ct[j, 2], ct[j, 3], ct[j, 4], ct[j, 5], ct[j, 6], ct[j, 7],
                ct[j, 8],
            )
            for i in range(nvp):
                abx = axs[i] - c0
                abz = azs[i] - c1
                d1 = (c2 * abx + c3 * abz) * F32(0.5) + F32(0.5)
                d2 = (c4 * abx + c5 * abz) * F32(2.0)
                v = min(d1, d2)
                if v < F32(0.0):
                    v = F32(0.0)
                elif v > F32(1.0):
                    v = F32(1.0)
                sides[i] += v
                a = abx * abx + abz * abz
                b = abx * c6 + abz * c7
                d = b * b - a * c8
                ia = F32(1.0) / a
                rd = np.sqrt(d)
                htmin = (b - rd) * ia
                htmax = (b + rd) * ia
                if htmin < F32(0.0) and htmax > F32(0.0):
                    htmin = -htmin * F32(0.5)
                tm = tmins[i]
                ok = not (a < F32(0.0001)) and not (d < F32(0.0)) and htmin >= F32(0.0)
                tmins[i] = htmin if ok and htmin < tm else tm
        for j in range(nseg):
            qx = st[j, 0]
            qz = st[j, 1]
            if touch[j]:
                for i in range(nvp):
                    vx = sx_[i]
                    vz = sz_[i]
                    if not (-qz * vx + qx * vz < F32(0.0)):
                        if F32(0.0) < tmins[i]:
                            tmins[i] = F32(0.0)
            else:
                g2 = st[j, 2]
                g3 = st[j, 3]
                g4 = st[j, 4]
                for i in range(nvp):
                    vx = sx_[i]
                    vz = sz_[i]
                    d = vz * qx - vx * qz
                    ok = not (abs(d) < F32(1e-6))
                    d = F32(1.0) / d
                    t = g4 * d
                    ok = ok and not (t < F32(0.0) or t > F32(1.0))
                    s = (vz * g2 - vx * g3) * d
                    ok = ok and not (s < F32(0.0) or s > F32(1.0))
                    h2 = t * F32(2.0)
                    tm = tmins[i]
                    tmins[i] = h2 if ok and h2 < tm else tm
        # the penalty of every sample (a loop over samples, vectorised): Detour's float32
        # operations; none of them depends on the running minimum
        for i in range(nvp):
            vx = sx_[i]
            vz = sz_[i]
            vpen = w_des * (_vdist2d(vx, vz, dvel0, dvel2) * inv_vmax)
            vcpen = w_cur * (_vdist2d(vx, vz, vel0, vel2) * inv_vmax)
            side = sides[i] / ncf  # (x / 1 is x: no circles, Detour's undivided side)
            spen = w_side * side
            tpen = w_toi * (F32(1.0) / (F32(0.1) + tmins[i] * inv_horiz))
            axs[i] = vpen
            azs[i] = vcpen
            sides[i] = vpen + vcpen + spen + tpen
        # then Detour's ordered pass: a sample is taken only when its penalty is below
        # the minimum and no early out fires; an early out (the minimum returned) can
        # only matter then, so its threshold (a division) is computed for those only
        ns += nv
        min_penalty = _FLT_MAX
        bx = F32(0.0)
        bz = F32(0.0)
        for i in range(nv):
            pen = sides[i]
            if not pen < min_penalty:
                continue
            min_pen = min_penalty - axs[i] - azs[i]
            t_thr = (w_toi / min_pen - F32(0.1)) * horiz
            if t_thr - horiz > -_FLT_EPS:
                continue
            if tmins[i] < t_thr:
                continue
            min_penalty = pen
            bx = sx_[i]
            bz = sz_[i]
        rx = bx
        rz = bz
        cr = cr * F32(0.5)
    nvel[0] = rx
    nvel[1] = F32(0.0)
    nvel[2] = rz
    return ns


def _plan_impl(act, nchunk, walking, update_flags, npos, radius, vel, dvel, desired_speed,
               neis, nneis, segs, nsegs, avoid_type, fp_table, ip_table, nvel, nsamples):  # fmt: skip
    """dtCrowd's velocity planning over all agents; ``nsamples[s]`` gets each agent's
    number of scored samples.

    Agents with OBSTACLE_AVOIDANCE sample around their desired velocity against
    their neighbours (as moving circles) and the wall segments of their local
    boundary that face them; the others take ``nvel = dvel``."""
    npos, radius, vel, dvel, desired_speed, neis, nneis, segs, nsegs, nvel = borrow(
        (npos, radius, vel, dvel, desired_speed, neis, nneis, segs, nsegs, nvel)
    )
    fp_table, ip_table = borrow((fp_table, ip_table))
    n_act = act.shape[0]
    for c in prange(nchunk):
        cir_o = np.zeros((MAX_CIRCLES, 16), np.float32)
        sg_o = np.zeros((MAX_SEGMENTS, 6), np.float32)
        touch_o = np.zeros(MAX_SEGMENTS, np.bool_)
        pat_o = np.zeros((_MAX_PATTERN_DIVS * _MAX_PATTERN_RINGS + 1, 2), np.float32)
        ct_o = np.zeros((MAX_CIRCLES, 9), np.float32)
        st_o = np.zeros((MAX_SEGMENTS, 5), np.float32)
        sv_o = np.zeros((6, _SV), np.float32)
        cir, sg, touch, pat, ct, st, sv = borrow((cir_o, sg_o, touch_o, pat_o, ct_o, st_o, sv_o))
        for i in range((n_act * c) // nchunk, (n_act * (c + 1)) // nchunk):
            s = act[i]
            if not walking[s]:
                continue
            if not update_flags[s] & 2:  # OBSTACLE_AVOIDANCE
                nvel[s, 0] = dvel[s, 0]
                nvel[s, 1] = dvel[s, 1]
                nvel[s, 2] = dvel[s, 2]
                nsamples[s] = 0
                continue
            nc = 0
            for j in range(min(nneis[s], MAX_CIRCLES)):
                o = neis[s, j]
                cir[nc, 0] = npos[o, 0]
                cir[nc, 1] = npos[o, 1]
                cir[nc, 2] = npos[o, 2]
                cir[nc, 3] = radius[o]
                cir[nc, 4] = vel[o, 0]
                cir[nc, 5] = vel[o, 1]
                cir[nc, 6] = vel[o, 2]
                cir[nc, 7] = dvel[o, 0]
                cir[nc, 8] = dvel[o, 1]
                cir[nc, 9] = dvel[o, 2]
                nc += 1
            ns = 0
            px, pz = npos[s, 0], npos[s, 2]
            for j in range(nsegs[s]):
                w = segs[s, j]
                # dtTriArea2D(npos, seg.p, seg.q) < 0: the wall faces away
                if (w[3] - px) * (w[2] - pz) - (w[0] - px) * (w[5] - pz) < F32(0.0):
                    continue
                if ns < MAX_SEGMENTS:
                    for q in range(6):
                        sg[ns, q] = w[q]
                    ns += 1
            t = avoid_type[s]
            nsamples[s] = _sample_core(
                npos[s], radius[s], desired_speed[s], vel[s], dvel[s], cir, nc, sg, ns,
                fp_table[t], ip_table[t], nvel[s], touch, pat, ct, st, sv,
            )  # fmt: skip
        keep((cir_o, sg_o, touch_o, pat_o, ct_o, st_o, sv_o))


plan_velocities, plan_velocities_par = twins(_plan_impl)
