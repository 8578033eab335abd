"""The one place that decides how navkit compiles its kernels.

Every kernel uses :func:`njit` (or :func:`pnjit` for ``prange`` loops).
``cache=True`` keeps compiled machine code on disk between runs, so only the
very first import pays numba's compile time. ``fastmath`` stays off: Recast's
float32 arithmetic must be reproduced bit for bit, which forbids reassociation.
``nogil=True`` lets threads run kernels side by side (one NavMeshQuery per thread).
"""

from __future__ import annotations

import numba

__all__ = ["njit", "pnjit", "borrow", "F32"]

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


def _borrow_intrinsic():
    from numba.core import types
    from numba.extending import intrinsic
    from numba.np.arrayobj import populate_array

    def _one(context, builder, ty, val):
        src = context.make_array(ty)(context, builder, value=val)
        out = context.make_array(ty)(context, builder)
        populate_array(
            out, data=src.data, shape=src.shape, strides=src.strides, itemsize=src.itemsize,
            meminfo=None,
        )  # fmt: skip
        return out._getvalue()

    @intrinsic
    def borrow(typingctx, arr):
        """The same array without its memory-manager handle (a borrowed view); given
        a tuple of arrays, the tuple of their borrowed views.

        Reference counting on a borrowed array is a no-op. numba increments and
        decrements (atomically) the count of every array argument each time a
        non-inlined helper is called, which can cost more than the helper's own
        arithmetic; entry kernels borrow their arguments once, so their helpers
        pass them around for free, and threads do not contend for one shared
        counter. The caller must keep the originals alive while the borrowed
        arrays are used (a kernel's arguments are), and a kernel must never
        return a borrowed array.
        """
        if isinstance(arr, types.Array):

            def codegen(context, builder, signature, args):
                return _one(context, builder, arr, args[0])

            return arr(arr), codegen
        if isinstance(arr, types.BaseTuple) and all(isinstance(t, types.Array) for t in arr):

            def codegen_t(context, builder, signature, args):
                vals = [
                    _one(context, builder, t, builder.extract_value(args[0], i))
                    for i, t in enumerate(arr)
                ]
                return context.make_tuple(builder, arr, vals)

            return arr(arr), codegen_t
        return None

    return borrow


borrow = _borrow_intrinsic()
