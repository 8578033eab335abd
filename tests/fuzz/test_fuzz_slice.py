"""CI's bounded slice of the fuzz campaigns: every campaign, a few dozen cases, zero defects.

``NAVKIT_FUZZ_CASES`` sets the cases per campaign (default 200, about two minutes on two idle cores); ``NAVKIT_FUZZ_SKIP=1``
skips the slice. A failure lists each defect with its one-line repro
(``python -m tests.fuzz --campaign NAME --seed S --index I``).
"""

from __future__ import annotations

import os

import pytest

from .campaigns import NAMES
from .runner import CLASSES, repro, run

CASES = int(os.environ.get("NAVKIT_FUZZ_CASES", "200"))
SEED = int(os.environ.get("NAVKIT_FUZZ_SEED", "0"))


@pytest.mark.skipif(os.environ.get("NAVKIT_FUZZ_SKIP") == "1", reason="NAVKIT_FUZZ_SKIP=1")
def test_fuzz_slice():
    s = run(NAMES, CASES, seed=SEED, jobs=2, timeout=60.0)
    print(s.table())
    assert sum(sum(c.values()) for c in s.counts.values()) == CASES * len(NAMES)
    lines = [f"{sig}  ({n}x)  {repro(d.campaign, d.seed, d.index)}" for sig, n, d in s.signatures()]
    assert s.n_defects() == 0, "fuzz defects:\n" + "\n".join(lines) + "\n" + s.table()


def test_runner_classifies_each_outcome():
    s = run(["_selftest"], 7, seed=0, jobs=1, timeout=10.0, mem_gib=2.0)
    got = {k: v for k, v in s.counts["_selftest"].items() if v}
    assert got == {c: 1 for c in CLASSES}
    assert s.restarts == 2  # after the segfault and the hang
