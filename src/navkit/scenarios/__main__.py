"""``python -m navkit.scenarios``: run the scenario suite, print (or write) the comparison.

Examples::

    python -m navkit.scenarios                                 # every scenario x mode
    python -m navkit.scenarios --table docs/scenarios.md --gif docs/img/scenarios
    python -m navkit.scenarios --scenarios circle crossing --modes dtcrowd-good --scale 0.5
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from navkit import errors

from .modes import MODES
from .report import kept_notes, markdown_table, run_suite, text_table, write_animation, write_text
from .suite import SCENARIOS


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m navkit.scenarios",
        description="Run the standard crowd scenarios with every mode and compare them.",
    )
    ap.add_argument("--scenarios", nargs="+", metavar="NAME", choices=list(SCENARIOS),
                    help=f"subset of: {', '.join(SCENARIOS)}")  # fmt: skip
    ap.add_argument("--modes", nargs="+", metavar="MODE",
                    help=f"subset of the registered modes: {', '.join(MODES)}")  # fmt: skip
    ap.add_argument("--scale", type=float, default=1.0, help="agent count factor (default: 1)")
    ap.add_argument("--hz", type=float, default=20.0, help="crowd updates per second (default: 20)")
    ap.add_argument("--seed", type=int, default=0,
                    help="random scenarios' seed; > 0 also moves the starts of crossing, "
                    "bottleneck, corridor and circle by up to 0.1 m (default: 0)")  # fmt: skip
    ap.add_argument("--table", metavar="OUT.md", help="write the markdown comparison here")
    ap.add_argument("--gif", metavar="DIR",
                    help="write DIR/<scenario>.gif (the first mode's run) per scenario")  # fmt: skip
    ap.add_argument("--frames", type=int, default=40, help="GIF frames (default: 40)")
    ap.add_argument("--json", action="store_true", help="print the metrics as JSON")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        for opt in ("table",):
            out = getattr(args, opt)
            if out and not Path(out).resolve().parent.is_dir():
                raise errors.InputError(f"--{opt} {out}: no such folder")
        if args.gif and not Path(args.gif).is_dir():
            raise errors.InputError(f"--gif {args.gif}: no such folder")
        results = run_suite(
            args.scenarios, args.modes, scale=args.scale, seed=args.seed, hz=args.hz,
            progress=lambda s: print(s, file=sys.stderr, flush=True),
        )  # fmt: skip
        gif_rel = ""
        if args.gif:
            done = set()
            for r in results:
                if r.scenario not in done:
                    done.add(r.scenario)
                    write_animation(r, Path(args.gif) / f"{r.scenario}.gif", max_frames=args.frames)
            if args.table:
                try:
                    gif_rel = Path(args.gif).resolve().relative_to(
                        Path(args.table).resolve().parent).as_posix()  # fmt: skip
                except ValueError:
                    gif_rel = Path(args.gif).resolve().as_posix()
        if args.json:
            print(json.dumps([{"scenario": r.scenario, "mode": r.mode, **r.metrics.as_dict(),
                               **{k: v for k, v in r.info.items() if k != "query_times"}}
                              for r in results], indent=2))  # fmt: skip
        else:
            print(text_table(results))
        if args.table:
            cmd = "python -m navkit.scenarios " + " ".join(
                argv if argv is not None else sys.argv[1:]
            )
            old = Path(args.table)
            notes = kept_notes(old.read_text(encoding="utf-8")) if old.is_file() else ""
            write_text(args.table, markdown_table(results, command=cmd.strip(), gifs=gif_rel,
                                                  notes=notes))  # fmt: skip
            print(f"wrote {args.table}", file=sys.stderr)
    except errors.NavkitError as exc:
        print(f"navkit.scenarios: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
