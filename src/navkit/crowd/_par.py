"""Serial and parallel twins of the crowd's per-agent kernels.

A per-agent phase is written once, as a loop ``for c in numba.prange(nchunk)`` over
contiguous chunks of the active agents (each chunk allocates its own scratch and
uses its own tiny node pool ``tiny_ds[c]``) or over the agents themselves, and
compiled serially (prange runs as range; ``nchunk = 1``) for the dtCrowd-identical
crowd. A crowd built with ``parallel=True`` runs its chunk driver (:func:`twins`): a
``prange`` over contiguous parts of the agents calling the serial kernel on each.
Each agent's arithmetic is the same in both, and no agent reads what another writes
in the same phase, so the two give the same float32 results.
"""

from __future__ import annotations

import types

import numpy as np
from numba import prange

from navkit._jit import njit, pnjit
from navkit.detour._nodes import PoolHandle

__all__ = ["twins", "chunks", "keep", "TinyPools", "MAX_CHUNKS"]

MAX_CHUNKS = 16
_MIN_CHUNK = 32  # agents per chunk in parallel kernels


def twins(fn, *, returns: bool = False, driver: bool = True):
    """(serial, parallel) numba dispatchers of ``fn`` (distinct names: distinct caches).

    The parallel one is a chunk driver (:func:`_driver_source`): a ``prange`` over
    contiguous parts of the agent selection (``sel``, else ``act``) that calls the
    serial kernel on each part (``nchunk`` 1, chunk c's tiny pool ``tiny_ds[c]``), so
    the per-agent code is compiled once, serially, and the driver is a few lines.
    ``returns``: the kernel returns a count, summed over the chunks. ``driver=False``:
    ``fn`` itself compiled with ``parallel=True`` (a kernel whose agents are not
    independent over the whole call, e.g. several passes).

    Both are ``link=False`` (:func:`navkit._jit.njit`): a phase kernel is called once
    per update (or per chunk), so a calling kernel calls its machine code instead of
    linking and compiling a copy of it."""
    ser_d = njit(fn, link=False)
    if driver:
        g = {"_ser": ser_d, "prange": prange, "np": np}
        name = fn.__name__ + "_par"
        # (compiled against fn's own file: numba's cache keeps it beside fn's)
        exec(compile(_driver_source(fn, name, returns), fn.__code__.co_filename, "exec"), g)
        par = g[name]
    else:
        par = types.FunctionType(
            fn.__code__, fn.__globals__, fn.__name__ + "_par", fn.__defaults__, fn.__closure__
        )
    par.__qualname__ = fn.__qualname__ + "_par"
    par.__module__ = fn.__module__
    par.__doc__ = fn.__doc__
    par_d = pnjit(par, link=False)
    # a cached caller finds a link=False callee again by its module and qualname
    # (navkit._jit._Need): both names are bound to the dispatchers
    fn.__globals__[fn.__qualname__] = ser_d
    fn.__globals__[par.__qualname__] = par_d
    return ser_d, par_d


def _driver_source(fn, name: str, returns: bool) -> str:
    """Source of the chunk driver of ``fn`` (see :func:`twins`)."""
    args = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    sel = "sel" if "sel" in args else "act"
    nch = "nchunk" if "nchunk" in args else f"max(1, min({MAX_CHUNKS}, n_ // {_MIN_CHUNK}))"
    sub = {sel: "part_", "nchunk": "1", "tiny_ds": "tiny_ds[c_ : c_ + 1].copy()"}
    call = "_ser(" + ", ".join(sub.get(a, a) for a in args) + ")"
    lines = [
        f"def {name}({', '.join(args)}):",
        f"    n_ = {sel}.shape[0]",
        f"    nch_ = {nch}",
        "    out_ = np.zeros(nch_, np.int64)",
        "    for c_ in prange(nch_):",
        f"        part_ = {sel}[(n_ * c_) // nch_ : (n_ * (c_ + 1)) // nch_].copy()",
        f"        {'out_[c_] = ' if returns else ''}{call}",
        "    return out_.sum()" if returns else "    return",
    ]
    return "\n".join(lines) + "\n"


def chunks(n: int, parallel: bool) -> int:
    """Chunk count for n agents: 1 serially, else up to MAX_CHUNKS of >= 32 agents."""
    if not parallel:
        return 1
    return max(1, min(MAX_CHUNKS, n // _MIN_CHUNK))


class TinyPools:
    """MAX_CHUNKS tiny node pools (64 nodes, Detour's m_tinyNodePool), one per chunk;
    ``desc`` is the (MAX_CHUNKS, k) int64 array of their descriptors."""

    def __init__(self) -> None:
        self.handles = [PoolHandle(64) for _ in range(MAX_CHUNKS)]
        self.desc = np.stack([np.asarray(h.desc) for h in self.handles]).astype(np.int64)


@njit
def keep(arrays) -> int:
    """Keep a kernel's local scratch arrays alive up to this call.

    numba frees a local array after the last statement that names it; a borrowed
    view (:func:`navkit._jit.borrow`) does not count, so a chunk that borrows its
    scratch calls this at its end (not inlined, so the use survives)."""
    return len(arrays)
