"""navkit._jit's cuts of numba's per-compile overheads keep numba's behaviour."""

from __future__ import annotations

import numpy as np
import pytest

import navkit._jit as j


def _reference_values(cfg):
    # numba's own definition of TargetConfig.values()
    return {k: getattr(cfg, k) for k in cfg.options}


def test_patches_applied():
    assert all(j.NUMBA_PATCHES.values()), j.NUMBA_PATCHES


def test_flags_values_hash_eq_match_numba():
    from numba.core.compiler import Flags
    from numba.core.cpu import ParallelOptions

    a, b = Flags(), Flags()
    assert a.values() == _reference_values(a)
    assert a == b and hash(a) == hash(b)
    b.nrt = True
    assert b.values() == _reference_values(b)
    assert a != b
    a.nrt = True
    assert a == b and hash(a) == hash(b)
    # explicitly set to the default value: equal to unset, as in numba
    c = Flags()
    c.nrt = Flags.options["nrt"].default
    assert c == Flags() and hash(c) == hash(Flags())
    c.auto_parallel = ParallelOptions(True)
    assert c != Flags()
    assert c.values() == _reference_values(c)
    assert {a: 1}[b] == 1  # usable as dict keys, as numba's overload cache does


def test_llvm_lock_callbacks_gone_lock_kept():
    from llvmlite.binding import ffi

    assert not [
        a for a, _ in ffi.lib._lock._cblist if "llvm_lock_event" in getattr(a, "__qualname__", "")
    ]
    with ffi.lib._lock:  # still a working (reentrant) lock
        with ffi.lib._lock:
            pass


def test_overload_impls_compile_without_cfunc_wrapper():
    import numba

    @numba.njit(cache=False)
    def f(n):
        return np.zeros(n, np.float32).sum() + np.empty((n, 2), np.int32).shape[0]

    assert f(3) == 3
    from numba.core.typing.templates import _OverloadFunctionTemplate

    seen = []
    for sub in _all_subclasses(_OverloadFunctionTemplate):
        for disp, _args in getattr(sub, "_impl_cache", {}).values():
            if disp is not None and getattr(disp, "py_func", None) is not None:
                seen.append(disp.targetoptions.get("no_cfunc_wrapper"))
    assert seen and all(seen)


def _all_subclasses(cls):
    out = []
    for s in cls.__subclasses__():
        out.append(s)
        out.extend(_all_subclasses(s))
    return out


@pytest.mark.parametrize("n", [0, 5])
def test_kernels_still_right(n):
    import numba

    @numba.njit(cache=False)
    def g(n):
        a = np.zeros(n, np.int64)
        for i in range(n):
            a[i] = min(i, 3)
        return a

    assert g(n).tolist() == [min(i, 3) for i in range(n)]


def test_overload_impl_compiled_once_for_callers_with_other_flags():
    import numba
    from numba.core import event

    from navkit._jit import njit

    seen = []

    class _L(event.Listener):
        def on_start(self, ev):
            pass

        def on_end(self, ev):
            f = getattr(ev.data["dispatcher"], "py_func", None)
            if f is not None and "ol_np_empty" in f.__qualname__:
                seen.append(str(ev.data["args"]))

    # a 4-d uint16 array: a signature nothing else in the test process allocates
    @njit(cache=False)
    def a(n):  # navkit's flags (nogil, no C wrapper, numpy error model)
        return np.empty((n, n, n, n), np.uint16).size

    @numba.njit(cache=False, nogil=False, error_model="numpy")
    def b(n):  # other flags, same inherited ones (nrt, fastmath, error model)
        return np.empty((n, n, n, n), np.uint16).size

    lis = _L()
    event.register("numba:compile", lis)
    try:
        assert a(2) == b(2) == 16
    finally:
        event.unregister("numba:compile", lis)
    assert len(seen) == 1, seen

    @numba.njit(cache=False, error_model="python")
    def d(n):  # another inherited flag: its own compile
        return np.empty((n, n, n, n), np.uint16).size

    event.register("numba:compile", lis)
    try:
        assert d(2) == 16
    finally:
        event.unregister("numba:compile", lis)
    assert len(seen) == 2, seen


def test_function_typing_memo_repeats_no_resolution():
    import numba
    from numba.core.types import functions as fmod

    memo = fmod.BaseFunction.get_call_type._memo

    def body(a, k):
        s = np.float32(0)
        for i in range(a.shape[0]):
            s += a[i] * np.float32(k) + min(i, k)
        return s

    a = np.arange(7, dtype=np.float32)
    want = body(a, 3)
    f = j.njit(cache=False)(body)
    assert f(a, 3) == want
    keys = set(memo)
    funcs = {k[0] for k in keys}  # (np.float32(x) makes a new function type per call)
    g = j.njit(cache=False)(body)  # same calls, same types: every resolution is a repeat
    assert g(a, 3) == want
    assert not [k for k in set(memo) - keys if k[0] in funcs]
    # other flags the calls' implementations inherit (error model): resolved again
    h = numba.njit(cache=False, error_model="python")(body)
    assert h(a, 3) == want
    assert [k for k in set(memo) - keys if k[0] in funcs]


def test_function_typing_memo_keeps_typing_errors():
    import numba
    from numba.core.errors import TypingError

    @j.njit(cache=False)
    def bad(x):
        return len(x)  # len of an int: no template accepts it

    for _ in range(2):  # a failed resolution is not remembered: the same error again
        with pytest.raises(TypingError):
            bad(3)
    assert numba.njit(cache=False)(lambda x: len(x))(np.zeros(4)) == 4


def test_thread_count_helpers_track_numbas_own():
    """navkit._jit.get_threads / set_threads (the threading layer's own calls) read and set
    the count numba.get_num_threads / set_num_threads see, per calling thread."""
    import threading

    import numba

    from navkit._jit import get_threads, set_threads

    prev = numba.get_num_threads()
    try:
        for n in range(1, numba.config.NUMBA_NUM_THREADS + 1):
            numba.set_num_threads(n)
            assert get_threads() == n
            set_threads(1)
            assert numba.get_num_threads() == 1
            set_threads(n)
            assert numba.get_num_threads() == n
        seen = []
        set_threads(1)
        t = threading.Thread(target=lambda: seen.append(get_threads()))
        t.start()
        t.join()
        assert seen == [numba.config.NUMBA_NUM_THREADS]  # another thread keeps its own count
    finally:
        numba.set_num_threads(prev)
