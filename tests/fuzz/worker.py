"""The worker process: imports navkit once, then runs cases read from stdin.

Protocol (one JSON object per line): the worker writes ``{"ready": ...}`` once its
campaigns are set up, then for each request ``{"campaign", "seed", "index"}`` one
reply ``{"cls", "detail"}``. Replies go to a private copy of the original stdout;
fd 1 is pointed at stderr so that library prints cannot corrupt the protocol.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import warnings


def limit_memory(gib: float) -> None:
    """Cap the address space (a runaway allocation becomes MemoryError, not swap)."""
    if gib > 0:
        lim = int(gib * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mem-gib", type=float, default=4.0)
    ap.add_argument("--campaigns", default="")
    a = ap.parse_args(argv)
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    warnings.simplefilter("ignore")
    limit_memory(a.mem_gib)
    from .campaigns import run_case, setup

    names = [n for n in a.campaigns.split(",") if n]
    try:
        setup(names)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        proto.write(json.dumps({"ready": False, "error": repr(exc)}) + "\n")
        return 1
    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        cls, detail = run_case(req["campaign"], int(req["seed"]), int(req["index"]))
        proto.write(json.dumps({"cls": cls, "detail": detail}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
