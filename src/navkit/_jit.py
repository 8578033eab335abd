"""The one place that decides how navkit compiles its kernels.

Every kernel uses :func:`njit` (or :func:`pnjit` for ``prange`` loops).
``cache=True`` keeps compiled machine code on disk between runs, so only the
very first import pays numba's compile time. ``fastmath`` stays off: Recast's
float32 arithmetic must be reproduced bit for bit, which forbids reassociation.
``nogil=True`` lets threads run kernels side by side (one NavMeshQuery per thread).
"""

from __future__ import annotations

import numba

__all__ = ["njit", "pnjit", "F32"]

#: numpy float32 constructor, for literals inside kernels: ``x * F32(0.5)`` keeps
#: float32 arithmetic where ``x * 0.5`` would widen to float64.
import numpy as _np

F32 = _np.float32


def njit(*args, **kwargs):
    """``numba.njit`` with navkit's policy (cache, nogil, no fastmath)."""
    kwargs.setdefault("cache", True)
    kwargs.setdefault("nogil", True)
    kwargs.setdefault("fastmath", False)
    kwargs.setdefault("error_model", "numpy")
    return numba.njit(*args, **kwargs)


def pnjit(*args, **kwargs):
    """Like :func:`njit`, with ``parallel=True`` for kernels that use ``numba.prange``."""
    kwargs.setdefault("parallel", True)
    return njit(*args, **kwargs)


def is_cached(kernel) -> bool | None:
    """Whether numba's on-disk cache already holds compiled code for ``kernel``.

    None when it cannot tell (caching off, or numba's internals changed). Used to
    warn before a first run spends minutes compiling.
    """
    import os

    try:
        return bool(os.path.exists(kernel._cache._cache_file._index_path))
    except Exception:  # noqa: BLE001 - private numba attributes; any failure means "unknown"
        return None
