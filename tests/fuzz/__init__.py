"""Robustness fuzzing of navkit (issue 9, "make it permanent").

Every case runs in a long-lived worker subprocess (``worker.py``); the parent
(``runner.py``) hands out cases, kills a worker whose case exceeds the timeout
and restarts it after a crash. Each case is classified as

- ``ok`` -- returned, and the cheap oracles found nothing wrong;
- ``navkit_error`` -- raised a :class:`navkit.errors.NavkitError` (a refusal);
- ``exception`` -- raised anything else (a defect: the traceback is kept);
- ``segfault`` -- the worker died from a signal (a defect);
- ``hang`` -- the case did not finish within the timeout (a defect);
- ``memory`` -- ``MemoryError`` under the worker's address-space limit (a defect);
- ``wrong`` -- an oracle check failed (a defect: a plausible wrong answer).

A case is a pure function of (campaign, seed, index), so every defect has a
one-line repro: ``python -m tests.fuzz --campaign NAME --seed S --index I``.

Run ``python -m tests.fuzz --cases N`` (N cases per campaign); see ``--help``.
"""
