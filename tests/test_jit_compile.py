"""Compile-cost policies of navkit._jit that change what numba compiles."""

from __future__ import annotations

import numpy as np
import pytest
from numba.core import event

from navkit._jit import njit


class _Names(event.Listener):
    def __init__(self) -> None:
        self.names: list[str] = []

    def on_start(self, ev) -> None:
        pass

    def on_end(self, ev) -> None:
        d = ev.data["dispatcher"]
        fn = getattr(d, "py_func", d)
        self.names.append(f"{fn.__module__}.{fn.__qualname__}")


def _copy_prefix(a, b, k):
    a[:k] = b[:k]
    return a[0]


def test_slice_assignment_compiles_no_string_formatting() -> None:
    # numba's own message formats both shapes (str, join, f-strings: ~36 functions
    # compiled); navkit's stub raises a constant message instead.
    kernel = njit(cache=False)(_copy_prefix)
    listener = _Names()
    with event.install_listener("numba:compile", listener):
        assert kernel(np.zeros(5), np.ones(5), 3) == 1.0
    assert listener.names, "the kernel compiled"
    formatting = [n for n in listener.names if "unicode" in n or "str_generic" in n]
    assert formatting == []
    assert not any("ol_raise_with_shape_context_cpu" in n for n in listener.names)


def test_slice_assignment_mismatch_still_raises() -> None:
    kernel = njit(cache=False)(_copy_prefix)
    with pytest.raises(ValueError, match="cannot assign slice"):
        kernel(np.zeros(5), np.ones(2), 3)


def test_kernels_have_no_cfunc_wrapper() -> None:
    kernel = njit(cache=False)(_copy_prefix)
    kernel(np.zeros(3), np.ones(3), 1)
    assert kernel.targetoptions.get("no_cfunc_wrapper") is True


def _inner(a, i):
    return a[i] + 1.0


def _outer(a):
    return _inner_k(a, 0) + _inner_k(a, 1)


_inner_k = njit(cache=False)(_inner)
_outer_k = njit(cache=False)(_outer)


def test_callee_compiles_without_python_wrapper_and_python_calls_still_work() -> None:
    from navkit._jit import _has_wrapper

    a = np.arange(4.0)
    assert _outer_k(a) == 3.0
    (cres,) = _inner_k.overloads.values()
    assert not _has_wrapper(cres)  # compiled for _outer only: its native function alone
    # a Python call of the same signature compiles it with the wrapper and uses it
    assert _inner_k(a, 2) == 3.0
    (cres,) = _inner_k.overloads.values()
    assert _has_wrapper(cres)
    assert _inner_k(a, 3) == 4.0 and _outer_k(a + 1.0) == 5.0


_CACHED_MODULE = """
from navkit._jit import njit

@njit
def inner(a, i):
    return a[i] + 1.0

@njit
def outer(a):
    return inner(a, 0)
"""

_RUN = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import kmod
from navkit._jit import _has_wrapper
a = np.arange(3.0)
if sys.argv[2] == "outer":
    print(kmod.outer(a), [_has_wrapper(c) for c in kmod.inner.overloads.values()])
else:
    print(kmod.inner(a, 1), [_has_wrapper(c) for c in kmod.inner.overloads.values()])
"""


def test_wrapperless_callee_from_the_cache_is_recompiled_for_python(tmp_path) -> None:
    """A callee cached without its wrapper (by a process that only called its caller)
    is compiled again, with the wrapper, by a process that calls it from Python; the
    next process loads that version."""
    import os
    import subprocess
    import sys

    (tmp_path / "kmod.py").write_text(_CACHED_MODULE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run(which: str) -> str:
        r = subprocess.run(
            [sys.executable, "-c", _RUN, str(tmp_path), which],
            capture_output=True, text=True, env=env, timeout=600,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout.strip()

    assert run("outer") == "1.0 [False]"
    assert run("inner") == "2.0 [True]"
    assert run("inner") == "2.0 [True]"
    assert run("outer") == "1.0 []"  # outer loads from the cache: inner is not needed
