"""``njit(link=False)``: callers call the kernel's own machine code, in process and
from numba's cache (navkit._jit._unlinked_call, _Need)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from subproc import run_snippet

_MOD = """
import numpy as np
from navkit._jit import njit

@njit(link=False)
def callee(a, k):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * k
    if s < -1e300:
        raise ValueError("negative")
    return s, np.ones(3)

@njit
def caller(a):
    s, o = callee(a, 2.0)
    return s + o.sum()

@njit
def top(a):
    return caller(a) + 1.0

@njit
def raising(a):
    s, o = callee(a, -1e300)
    return s
"""

_RUN = """
import sys
import numpy as np
import numba
import unlinked_mod as m

@numba.njit(cache=False)
def other(x):  # compiled first: numba numbers later ABI tags differently
    return np.sum(np.arange(x)) + len(str(x))

if sys.argv[1] == "shift":
    other(3)
a = np.arange(5.0)
print(m.top(a))
try:
    m.raising(np.ones(3))
except ValueError as e:
    print("raised", e)
sig = list(m.top.overloads)[0]
ir = m.top.inspect_llvm(sig) if m.top._cache_hits[sig] == 0 else ""
print("declares callee" if any(
    line.startswith("declare") and "6callee" in line for line in ir.splitlines()) else "links callee")
print("hits", sum(m.top._cache_hits.values()))
"""


def _run(tmp: Path, cache: Path, mode: str) -> list[str]:
    return run_snippet(_RUN, mode, tmp, cache)


@pytest.mark.parametrize("shift", [False, True])
def test_unlinked_callee_is_called_not_linked_in_process_and_from_the_cache(
    tmp_path: Path, shift: bool
) -> None:
    (tmp_path / "unlinked_mod.py").write_text(textwrap.dedent(_MOD))
    cache = tmp_path / "cache"
    out = _run(tmp_path, cache, "plain")
    assert out[:4] == ["24.0", "raised negative", "declares callee", "hits 0"]
    # the callee's cache entry gone: the cached caller makes this process compile it
    # again (under another symbol name when ``shift``: it is aliased) before loading
    for f in cache.rglob("unlinked_mod.callee*"):
        f.unlink()
    out = _run(tmp_path, cache, "shift" if shift else "plain")
    assert out[0] == "24.0" and out[1] == "raised negative"
    assert out[3] == "hits 1"
