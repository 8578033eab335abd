"""Atomic integer updates for kernels that share work between threads.

:func:`fetch_add` is one ``lock xadd``: threads that take the next item of a shared
list through it never take the same item twice, and the items spread over the
threads as they finish them (dynamic scheduling), where ``numba.prange`` splits a
loop into fixed, equal parts (a thread that is preempted or given the slower part
holds back the whole call).

:func:`claim` is the pattern on a schedule array ``work`` = ``[workers, chunks,
next]`` (int64): ``prange(work[0])`` workers each call ``claim(work)`` until it
returns -1. (The array is never called ``sched`` in a kernel: numba's parfor
gufunc has an argument of that name, and the clash fails to compile.)
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic

from ._jit import njit

__all__ = ["fetch_add", "claim", "WORKERS", "CHUNKS", "NEXT"]

#: ``work`` entries: worker count, chunk count, next chunk to hand out
WORKERS, CHUNKS, NEXT = 0, 1, 2


@intrinsic
def fetch_add(typingctx, arr, idx, val):
    """``old = arr[idx]; arr[idx] += val; return old`` as one atomic step (int64 1-d)."""
    if not (
        isinstance(arr, types.Array)
        and arr.dtype == types.int64
        and arr.ndim == 1
        and isinstance(idx, types.Integer)
        and isinstance(val, types.Integer)
    ):
        return None
    sig = types.int64(arr, idx, val)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        i = context.cast(builder, args[1], signature.args[1], types.int64)
        v = context.cast(builder, args[2], signature.args[2], types.int64)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [i])
        return builder.atomic_rmw("add", ptr, v, "seq_cst")

    return sig, codegen


@njit
def claim(work):
    """The next chunk of ``work`` for the calling worker, or -1 when all are taken."""
    c = fetch_add(work, NEXT, 1)
    return c if c < work[CHUNKS] else -1
