"""A kernel taking lent arrays, compiled and cached by one process, is loaded (not
compiled again) when a new caller in another process needs it: the lent array type
pickles by reference (navkit._jit._by_reference), so the cache index keys written by
one process equal the types another process infers."""

from __future__ import annotations

import textwrap
from pathlib import Path

from subproc import run_snippet

_MOD = """
import numpy as np
from navkit._jit import njit

@njit(lent=True)
def lent_callee(a, k):
    for i in range(a.shape[0]):
        a[i] += k

@njit
def caller_one(a):
    lent_callee(a, 1.0)
    return a.sum()

@njit
def caller_two(a):
    lent_callee(a, 2.0)
    return a.sum()
"""

_RUN = """
import sys
import numpy as np
from numba.core import event
import lent_cache_mod as m

compiled = []

class L(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__name__)

event.register("numba:compile", L())
f = getattr(m, sys.argv[1])
print(f(np.zeros(4)))
print(",".join(sorted(c for c in compiled if c.startswith(("lent_", "caller_")))))
"""


def _run(tmp: Path, which: str) -> list[str]:
    return run_snippet(_RUN, which, tmp, tmp / "cache")


def test_lent_callee_cached_by_one_process_loads_in_another(tmp_path: Path) -> None:
    (tmp_path / "lent_cache_mod.py").write_text(textwrap.dedent(_MOD))
    assert _run(tmp_path, "caller_one")[:2] == ["4.0", "caller_one,lent_callee"]
    # a new caller in a new process: the callee comes from the cache
    assert _run(tmp_path, "caller_two")[:2] == ["8.0", "caller_two"]
