"""Serial and parallel twins of the crowd's per-agent kernels.

A per-agent phase is written once, as a loop ``for c in numba.prange(nchunk)`` over
contiguous chunks of the active agents (each chunk allocates its own scratch and
uses its own tiny node pool ``tiny_ds[c]``), and compiled twice: serially (prange
runs as range; ``nchunk = 1``) for the dtCrowd-identical crowd, and with
``parallel=True`` for a crowd built with ``parallel=True``. Each agent's
arithmetic is the same in both, and no agent reads what another writes in the
same phase, so the two give the same float32 results.
"""

from __future__ import annotations

import types

import numpy as np

from navkit._jit import njit, pnjit
from navkit.detour._nodes import PoolHandle

__all__ = ["twins", "chunks", "keep", "TinyPools", "MAX_CHUNKS"]

MAX_CHUNKS = 16
_MIN_CHUNK = 32  # agents per chunk in parallel kernels


def twins(fn):
    """(serial, parallel) numba dispatchers of ``fn`` (distinct names: distinct caches).

    Both are ``link=False`` (:func:`navkit._jit.njit`): a phase kernel is called once
    per update (or per chunk), so a calling kernel (the one-kernel step) calls its
    machine code instead of linking and compiling a copy of it."""
    par = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__ + "_par", fn.__defaults__, fn.__closure__
    )
    par.__qualname__ = fn.__qualname__ + "_par"
    par.__module__ = fn.__module__
    par.__doc__ = fn.__doc__
    ser_d, par_d = njit(fn, link=False), pnjit(par, link=False)
    # a cached caller finds a link=False callee again by its module and qualname
    # (navkit._jit._Need): both names are bound to the dispatchers
    fn.__globals__[fn.__qualname__] = ser_d
    fn.__globals__[par.__qualname__] = par_d
    return ser_d, par_d


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
