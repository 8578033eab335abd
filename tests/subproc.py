"""A Python snippet run in a fresh process with its own numba cache directory (the
tests of :mod:`navkit._jit`'s cache behaviour across processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def run_snippet(code: str, arg: str, modules: Path, cache: Path) -> list[str]:
    """Run ``code`` with ``sys.argv[1] == arg``, ``modules`` and navkit's sources on
    ``PYTHONPATH`` and ``NUMBA_CACHE_DIR=cache``; its stdout's lines (it must exit 0)."""
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(modules), str(SRC)])
    p = subprocess.run(
        [sys.executable, "-c", code, arg], env=env, capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.split("\n")
