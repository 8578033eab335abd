"""``python -m tests.fuzz --cases N [--campaign NAME] [--seed S] [--jobs J] [--timeout T]``.

With ``--index I`` one case is run in this process (full traceback), which is the
repro printed for every defect.
"""

from __future__ import annotations

import argparse
import sys

from .campaigns import NAMES


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    ap.add_argument("--cases", type=int, default=200, help="cases per campaign")
    ap.add_argument("--campaign", action="append", choices=NAMES,
                    help="campaign to run (repeatable; default all)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per case (hang)")
    ap.add_argument("--mem-gib", type=float, default=4.0, help="worker address-space cap")
    ap.add_argument("--json", help="write the summary (and every defect) as JSON here")
    ap.add_argument("--index", type=int, help="run this one case here and print its outcome")
    a = ap.parse_args(argv)
    campaigns = a.campaign or list(NAMES)
    if a.index is not None:
        from .campaigns import run_case, setup
        from .worker import limit_memory

        limit_memory(a.mem_gib)
        setup(campaigns)
        for c in campaigns:
            cls, detail = run_case(c, a.seed, a.index, trace=True)
            print(f"{c} seed {a.seed} index {a.index}: {cls}")
            if detail:
                print(detail)
        return 0
    from .runner import DEFECTS, repro, run, write_json

    s = run(campaigns, a.cases, seed=a.seed, jobs=a.jobs, timeout=a.timeout,
            mem_gib=a.mem_gib, start=a.start, log=lambda m: print(m, flush=True))  # fmt: skip
    print()
    print(s.table())
    print(f"{s.seconds:.0f} s, {s.restarts} worker restarts")
    sigs = s.signatures()
    if sigs:
        print(f"\n{len(sigs)} distinct defects ({', '.join(DEFECTS)}):")
        for sig, n, d in sigs:
            print(f"  {n:5d}  {sig}\n         {repro(d.campaign, d.seed, d.index)}")
    if a.json:
        write_json(s, a.json)
    return 1 if s.n_defects() else 0


if __name__ == "__main__":
    sys.exit(main())
