"""Kernels compiled only for other kernels' calls get no CPython wrapper
(navkit._jit._install_callee_compiles): in process, and from numba's cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from subproc import SRC, run_snippet

import navkit._jit as j


@pytest.fixture
def kernels():
    """A callee and its caller, fresh (compiled on first use, not cached)."""
    if not j._CALLEES_OK:
        pytest.skip("numba's dispatcher differs: callees keep their wrapper")

    @j.njit(cache=False)
    def callee(a, k):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * k
        if s < 0:
            raise ValueError("negative sum")
        return s

    @j.njit(cache=False)
    def caller(a):
        return callee(a, 2.0) + 1.0

    return callee, caller


def test_callee_compiled_without_wrapper_then_with_one_for_python(kernels):
    callee, caller = kernels
    a = np.arange(4.0)
    assert caller(a) == 13.0
    (cres,) = callee.overloads.values()
    assert not j._has_wrapper(cres)  # compiled for caller only
    (top,) = caller.overloads.values()
    assert j._has_wrapper(top)
    with pytest.raises(ValueError, match="negative sum"):
        caller(-a)  # the callee's exception reaches Python through the caller
    assert callee(a, 3.0) == 18.0  # a Python call: compiled again, with a wrapper
    (cres2,) = callee.overloads.values()
    assert cres2 is not cres and j._has_wrapper(cres2)
    assert caller(a) == 13.0  # the caller still calls the first compile's code
    with pytest.raises(ValueError, match="negative sum"):
        callee(-a, 1.0)


def test_explicit_compile_gives_a_python_callable_entry_point(kernels):
    callee, caller = kernels
    a = np.arange(3.0)
    assert caller(a) == 7.0
    sig = next(iter(callee.overloads))
    ep = callee.compile(sig)  # as navkit.detour.query does for its single-call kernels
    assert ep(a, 1.0) == 3.0


_MOD = """
from navkit._jit import njit

@njit
def callee(a, k):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * k
    return s

@njit
def caller(a):
    return callee(a, 2.0) + 1.0
"""

_RUN = """
import sys
import numpy as np
import navkit._jit as j
import callee_mod as m

a = np.arange(4.0)
if sys.argv[1] == "callee-first":
    print(m.callee(a, 2.0))
print(m.caller(a))
print(m.callee(a, 3.0))
print("wrapper", [j._has_wrapper(c) for c in m.callee.overloads.values()])
print("compiled", sum(m.caller._cache_misses.values()), sum(m.callee._cache_misses.values()))
"""


def _run(tmp: Path, cache: Path, mode: str) -> list[str]:
    return run_snippet(_RUN, mode, tmp, cache)


def test_cached_callee_only_compile_called_from_python_in_a_new_process(tmp_path: Path) -> None:
    if not j._CALLEES_OK:
        pytest.skip("numba's dispatcher differs")
    (tmp_path / "callee_mod.py").write_text(textwrap.dedent(_MOD))
    cache = tmp_path / "cache"
    # 1: the callee compiled for the caller (no wrapper), then again for Python
    assert _run(tmp_path, cache, "caller-first")[:5] == [
        "13.0", "18.0", "wrapper [True]", "compiled 1 2", ""
    ]  # fmt: skip
    # 2: everything from the cache (the callee's entry is the one with a wrapper)
    assert _run(tmp_path, cache, "callee-first")[:5] == [
        "12.0", "13.0", "18.0", "wrapper [True]", "compiled 0 0"
    ]  # fmt: skip
    # 3: a cache holding only the callee-only compile: the Python call compiles again
    cache2 = tmp_path / "cache2"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache2))
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(SRC)])
    code = "import numpy as np, callee_mod as m; print(m.caller(np.arange(4.0)))"
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.strip() == "13.0", p.stderr
    out = _run(tmp_path, cache2, "caller-first")
    assert out[:5] == ["13.0", "18.0", "wrapper [True]", "compiled 0 1", ""]


_RACE = """
import sys
import numpy as np
import callee_mod as m

a = np.arange(4.0)
if sys.argv[1] == "python-call":
    print(m.callee(a, 3.0), sum(m.callee._cache_misses.values()))
else:  # the callee's entry appears only after this process looked (another process)
    m.callee._cache.load_overload = lambda *args, **kws: None
    print(m.caller(a), sum(m.callee._cache_misses.values()))
"""


def test_callee_only_compile_keeps_an_entry_another_process_saved(tmp_path: Path) -> None:
    if not j._CALLEES_OK:
        pytest.skip("numba's dispatcher differs")
    (tmp_path / "callee_mod.py").write_text(textwrap.dedent(_MOD))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(SRC)])

    def run(mode: str) -> str:
        p = subprocess.run(
            [sys.executable, "-c", _RACE, mode], env=env, capture_output=True, text=True
        )
        assert p.returncode == 0, p.stderr
        return p.stdout.strip()

    assert run("python-call") == "18.0 1"  # saved with a wrapper
    assert run("caller") == "13.0 1"  # compiled for the caller only: not saved over it
    assert run("python-call") == "18.0 0"  # still loads the entry with a wrapper
