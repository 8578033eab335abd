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


# -- the untyped IR of an inline="always" kernel, once per process --------------------


def _inline_fixture():
    import numba

    @numba.njit(inline="always", cache=False)
    def inner(a, i):  # a branch, a loop and a local: blocks and variables to copy
        s = 0
        for k in range(i + 1):
            if a[k] > 2:
                s += a[k]
            else:
                s -= 1
        return s

    @numba.njit(inline="always", cache=False)
    def outer(a, i):  # inlines inner itself (its kept IR has inner's inlined)
        return inner(a, i) * 10 + inner(a, 0)

    def caller(a):
        t = 0
        for i in range(a.shape[0]):
            t += inner(a, i) + outer(a, i)  # two sites of inner, one of outer
        return t + inner(a, a.shape[0] - 1)

    return inner, outer, caller


def _caller_ref(a):
    def inner(i):
        return sum(int(x) if x > 2 else -1 for x in a[: i + 1])

    return sum(inner(i) + inner(i) * 10 + inner(0) for i in range(a.shape[0])) + inner(
        a.shape[0] - 1
    )


def test_inline_callees_untyped_once_and_copied_per_site():
    import numba
    from numba.core.inline_closurecall import InlineWorker

    fn = InlineWorker.inline_function
    inner, outer, caller = _inline_fixture()
    a = np.array([1, 5, 3, 0, 7], np.int64)
    want = _caller_ref(a)
    h0, m0 = fn._stats["hits"], fn._stats["misses"]
    f = numba.njit(cache=False)(caller)
    assert f(a) == want
    mine = {k: v for k, v in fn._memo.items() if k[0] in (inner.py_func, outer.py_func)}
    assert sorted(k[0].__name__ for k in mine) == ["inner", "outer"]  # one IR per function
    assert fn._stats["misses"] - m0 == 2
    assert fn._stats["hits"] - h0 >= 2  # inner's later sites in caller (outer's kept IR holds its own)
    dumps = {k: _dump(v) for k, v in mine.items()}
    # another caller with the same flags: every site from the kept IR, which no inlining changed
    g = numba.njit(cache=False)(caller)
    h1, m1 = fn._stats["hits"], fn._stats["misses"]
    b = np.array([4, 0, 9], np.int64)
    assert g(b) == _caller_ref(b)
    assert fn._stats["misses"] == m1 and fn._stats["hits"] - h1 == 3
    assert {k: _dump(v) for k, v in mine.items()} == dumps
    # numba's own path (patch bypassed) gives the same results
    try:
        InlineWorker.inline_function = fn._orig
        s = numba.njit(cache=False)(caller)
        assert s(a) == f(a) and s(b) == g(b)
    finally:
        InlineWorker.inline_function = fn


def test_inline_callees_kept_per_compile_flags():
    import numba
    from numba.core.inline_closurecall import InlineWorker

    fn = InlineWorker.inline_function
    inner, outer, caller = _inline_fixture()
    a = np.array([3, 1, 4], np.int64)
    assert numba.njit(cache=False)(caller)(a) == _caller_ref(a)
    # no_rewrites changes the untyped pipeline: its own IR
    n = len(fn._memo)
    assert numba.njit(cache=False, no_rewrites=True)(caller)(a) == _caller_ref(a)
    assert len(fn._memo) == n + 2
    # a kernel's CPython wrapper is not part of the key (lowering builds it): a compile
    # for other kernels only (navkit's callee compiles) finds the IR the first one kept
    from numba.core import types

    h = fn._stats["hits"]
    d = numba.njit(cache=False, no_cpython_wrapper=True)(caller)
    d.compile((types.Array(types.int64, 1, "C"),))
    assert len(fn._memo) == n + 2 and fn._stats["hits"] - h == 3


def _dump(func_ir):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        func_ir.dump()
    return buf.getvalue()


def test_inline_callee_with_a_with_block_takes_numbas_own_path():
    def plain(a):
        return a + 1

    def lifted(a):
        with open(a):  # (never run: only its bytecode is read)
            return 1

    assert not j._has_with(plain) and j._has_with(lifted)


# --- SSA rebuilt only where a variable is assigned or read (_ssa_where_needed) ---------


def _ir_text(blocks):
    """Everything SSA reconstruction decides: each block's statements (text and place),
    and the scope's variables in the order they were defined, with their renamings."""
    out = []
    for label, blk in blocks.items():
        out.append(f"block {label} {blk.loc}")
        out.extend(f"  {type(st).__name__}: {st} @ {st.loc}" for st in blk.body)
    if blocks:
        scope = next(iter(blocks.values())).scope
        out.append("vars " + " ".join(scope.localvars._con))
        out.append("renamed " + repr(sorted((k, sorted(v)) for k, v in scope.var_redefinitions.items())))
    return out


def _both_ways(blocks, mine=None):
    import copy

    from numba.core import ssa

    mine = mine or ssa._run_ssa
    a, b = copy.deepcopy(blocks), copy.deepcopy(blocks)
    return _ir_text(mine._orig(a)), _ir_text(mine(b))


def _ssa_torture(n, a):  # pragma: no cover - only its IR is used
    x = 0
    y = 1.0
    t = a[0]
    for i in range(n):
        if a[i] > 0:
            x = x + a[i]
            y = y * 2.0
        elif a[i] < -5:
            t = x
            continue
        else:
            x, y = y, x  # two violators in one statement
        while x > 10:
            x -= 3
            if x == 4:
                break
        if i == 3:
            u = x
    return x + y + t + u  # u: not assigned on every path


def test_ssa_where_needed_is_installed():
    from numba.core import ssa

    assert j.NUMBA_PATCHES["ssa_where_needed"]
    assert ssa._run_ssa._navkit and ssa._run_ssa._orig is not ssa._run_ssa


@pytest.mark.parametrize(
    "where",
    [
        "navkit.recast.rasterize:_rasterize_kernel",
        "navkit.recast.regions_common:_merge_and_filter",
        "navkit.recast.distance:_chamfer",
        "navkit.recast.contours:_merge_holes_kernel",
        "navkit.recast.polymesh:_build_kernel",
        "navkit.recast.detail:_detail_kernel",
        "tests.test_jit_numba_patches:_ssa_torture",
    ],
)
def test_ssa_where_needed_gives_numbas_ir(where):
    import importlib
    import warnings

    from numba.core.compiler import run_frontend

    mod, name = where.split(":")
    fn = getattr(importlib.import_module(mod), name)
    fn = getattr(fn, "py_func", fn)
    blocks = run_frontend(fn).blocks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stock, ours = _both_ways(blocks)
    assert any(".1 = " in line for line in stock)  # there was something to rename
    assert ours == stock


def test_ssa_where_needed_in_numbas_pipeline():
    # every SSA reconstruction of a compile (inlined callees, overloads) both ways
    import numba
    from numba.core import ssa

    mine = ssa._run_ssa
    seen = []

    def compare(blocks):
        stock, ours = _both_ways(blocks, mine)
        seen.append(stock == ours)
        return mine(blocks)

    ssa._run_ssa = compare
    try:
        f = numba.njit(cache=False)(_ssa_torture)
        a = np.array([3, -7, 0, 2, 9, 1], np.int64)
        assert f(6, a) == _ssa_torture(6, a)
    finally:
        ssa._run_ssa = mine
    assert seen and all(seen), seen


def test_ssa_where_needed_results():
    import numba
    from numba.core import ssa

    a = np.array([3, -7, 0, 2, 9, 1, -1, 12], np.int64)
    f = numba.njit(cache=False)(_ssa_torture)
    mine = ssa._run_ssa
    try:
        ssa._run_ssa = mine._orig
        g = numba.njit(cache=False)(_ssa_torture)
        want = g(8, a)
    finally:
        ssa._run_ssa = mine
    assert f(8, a) == want == _ssa_torture(8, a)


# --- ABI sizes of LLVM types remembered (_abi_sizes_once) ------------------------------


def test_abi_sizes_match_llvm():
    from llvmlite import ir
    from numba.core.registry import cpu_target

    ctx = cpu_target.target_context
    BC = type(ctx)
    assert j.NUMBA_PATCHES["abi_sizes_once"]
    size0, align0 = BC.get_abi_sizeof._orig, BC.get_abi_alignment._orig
    i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    tys = [
        i8, i32, i64, ir.DoubleType(), ir.FloatType(), i8.as_pointer(),
        ir.ArrayType(i32, 3), ir.LiteralStructType([i8, i64]),
        ir.LiteralStructType([i8.as_pointer(), i64, ir.ArrayType(i64, 2), ir.ArrayType(i64, 2)]),
        ir.LiteralStructType([i8, i8, i32], packed=True), ir.VectorType(i32, 4),
    ]  # fmt: skip
    for t in tys:
        for _ in range(2):  # asked, then remembered
            assert ctx.get_abi_sizeof(t) == size0(ctx, t), t
            assert ctx.get_abi_alignment(t) == align0(ctx, t), t
    memo = BC.get_abi_sizeof._memo
    assert ("size", "{i8, i64}", id(ctx.target_data)) in memo
    assert memo[("size", "{i8, i64}", id(ctx.target_data))] == 16
    # an identified struct's text does not say what it holds: asked every time
    named = ir.global_context.get_identified_type("navkit_test_named")
    if named.is_opaque:
        named.set_body(i64, i64, i8)
    n = len(memo)
    assert ctx.get_abi_sizeof(named) == size0(ctx, named) == 24
    assert len(memo) == n


# --- block entry variables worked out when read (_block_entry_vars_when_read) ----------


def _gen(n):  # pragma: no cover - numba compiles it
    i = 0
    while i < n:
        yield i * 2
        i += 1


def test_block_entry_vars_deferred_in_nopython_and_the_same_when_read():
    import copy

    from numba.core import postproc, targetconfig
    from numba.core.compiler import Flags, run_frontend

    run = postproc.PostProcessor.run
    assert j.NUMBA_PATCHES["block_entry_vars_when_read"] and run._navkit
    fir = run_frontend(_ssa_torture)
    ref = copy.deepcopy(fir)
    run._orig(postproc.PostProcessor(ref))  # numba's own, eager
    want = {label: ref.get_block_entry_vars(b) for label, b in ref.blocks.items()}
    assert any(want.values())
    flags = Flags()  # (a nopython compile's)
    objmode = Flags()
    objmode.enable_pyobject = True
    d0, c0 = run._stats["deferred"], run._stats["computed"]
    with targetconfig.ConfigStack().enter(flags):
        postproc.PostProcessor(fir).run()
    assert run._stats["deferred"] == d0 + 1 and run._stats["computed"] == c0
    assert list(fir.blocks) == list(ref.blocks)  # the CFG canonicalised as numba does
    got = {label: fir.get_block_entry_vars(b) for label, b in fir.blocks.items()}
    assert got == want and run._stats["computed"] == c0 + 1
    assert fir.variable_lifetime.livemap == ref.variable_lifetime.livemap
    # object mode allowed, no compile on the stack, a generator, dels asked for:
    # numba's own eager run
    for fn, fl, dels in ((_ssa_torture, objmode, False), (_ssa_torture, None, False),
                         (_gen, flags, False), (_ssa_torture, flags, True)):  # fmt: skip
        f2 = run_frontend(fn)
        d0 = run._stats["deferred"]
        if fl is None:
            postproc.PostProcessor(f2).run(dels)
        else:
            fl = copy.copy(fl)
            with targetconfig.ConfigStack().enter(fl):
                postproc.PostProcessor(f2).run(dels)
        assert run._stats["deferred"] == d0
        assert type(f2.block_entry_vars) is dict and len(f2.block_entry_vars) >= len(f2.blocks)


def test_block_entry_vars_deferred_in_real_compiles():
    import numba
    from numba.core import postproc

    run = postproc.PostProcessor.run
    d0 = run._stats["deferred"]
    f = numba.njit(cache=False)(_ssa_torture)
    a = np.array([3, -7, 0, 2, 9, 1, -1, 12], np.int64)
    assert f(8, a) == _ssa_torture(8, a)
    assert run._stats["deferred"] > d0
    g = numba.njit(cache=False)(_gen)  # a generator: numba's own path, still right
    assert list(g(4)) == [0, 2, 4, 6]
