"""navkit's command line: ``navkit bake | info | render | path | demo | ecm``.

Every command prints one line and exits non-zero on bad input (a navkit error),
writes its outputs atomically, and shows a progress bar on stderr for long work.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import errors

__all__ = ["main"]


class _Progress:
    """A one-line progress bar on stderr (only when stderr is a terminal, or forced)."""

    def __init__(self, label: str, enabled: bool | None = None) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.t0 = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 1:
            return
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "-" * (width - filled)
        el = time.perf_counter() - self.t0
        sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total} tiles {el:5.1f}s")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _floats(text: str, n: int, what: str) -> tuple[float, ...]:
    try:
        vals = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise errors.InputError(
            f"{what}: expected {n} comma-separated numbers, got {text!r}"
        ) from None
    if len(vals) != n:
        raise errors.InputError(f"{what}: expected {n} comma-separated numbers, got {text!r}")
    return vals


def _load_geometry(path: str):
    from .geometry import load_obj

    return load_obj(path)


def _load_navmesh(path: str):
    from .detour.navmesh import NavMesh

    p = Path(path)
    if not p.exists():
        raise errors.InputError(f"{p}: no such file")
    data = p.read_bytes()[:4]
    if data in (b"TESM", b"VAND"):  # Recast's MSET / DNAV magics, little-endian
        return NavMesh.from_recast(p)
    return NavMesh.load(p)


def _config_from_args(args: argparse.Namespace):
    from .recast.config import BakeConfig

    changes: dict[str, Any] = {}
    for name in (
        "cell_size",
        "cell_height",
        "agent_height",
        "agent_radius",
        "agent_max_climb",
        "agent_max_slope",
        "region_min_size",
        "region_merge_size",
        "edge_max_len",
        "edge_max_error",
        "verts_per_poly",
        "detail_sample_dist",
        "detail_sample_max_error",
        "partition",
        "tile_size",
    ):
        v = getattr(args, name, None)
        if v is not None:
            changes[name] = v
    return BakeConfig(**changes)


def _add_bake_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("bake settings (world units; defaults are RecastDemo's)")
    g.add_argument("--tile-size", type=int, help="tile size in voxels (0 = solo, default)")
    g.add_argument("--cell-size", type=float)
    g.add_argument("--cell-height", type=float)
    g.add_argument("--agent-height", type=float)
    g.add_argument("--agent-radius", type=float)
    g.add_argument("--agent-max-climb", type=float)
    g.add_argument("--agent-max-slope", type=float)
    g.add_argument("--region-min-size", type=float)
    g.add_argument("--region-merge-size", type=float)
    g.add_argument("--edge-max-len", type=float)
    g.add_argument("--edge-max-error", type=float)
    g.add_argument("--verts-per-poly", type=int)
    g.add_argument("--detail-sample-dist", type=float)
    g.add_argument("--detail-sample-max-error", type=float)
    g.add_argument("--partition", choices=("watershed", "monotone", "layers"))
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes for tiled bakes (default: CPU count; 1 = in-process)",
    )


def _warn_if_cold() -> None:
    """A tiled bake compiles in its worker processes, which stay quiet: announce
    the compile here when the bake's kernels are not in the cache yet. (In-process
    compiles announce themselves: navkit._jit.announcer.)"""
    from ._jit import announcer, is_cached
    from .recast import detail, rasterize

    if is_cached(rasterize._rasterize_kernel) is False or is_cached(detail._detail_kernel) is False:
        announcer.announce("bake")


def _bake(mesh, config, workers: int | None, progress):
    from .recast.build import bake

    if config.tile_size and (workers is None or workers > 1):
        from concurrent.futures import ProcessPoolExecutor

        n = workers or os.cpu_count() or 1
        if n > 1:
            _warn_if_cold()
            with ProcessPoolExecutor(max_workers=n) as ex:
                return bake(mesh, config, executor=ex, progress=progress)
    return bake(mesh, config, progress=progress)


def _summary(nm) -> str:
    s = nm.stats()
    line = (
        f"{s['tiles']} tile{'s' if s['tiles'] != 1 else ''}, {s['polys']} polys, "
        f"{s['verts']} verts, {s['detail_tris']} detail tris"
    )
    rep = getattr(nm, "build_report", None)
    if rep is not None:
        line += f" in {rep.total_ms:.0f} ms"
    return line


def cmd_bake(args: argparse.Namespace) -> int:
    mesh = _load_geometry(args.level)
    config = _config_from_args(args)
    nm = _bake(mesh, config, args.workers, _Progress(f"baking {Path(args.level).name}"))
    out = Path(args.output)
    if out.suffix == ".bin" or args.recast:
        nm.to_recast(out)
    else:
        nm.save(out)
    if args.json:
        print(json.dumps({"output": str(out), **nm.stats()}, indent=2, default=float))
    else:
        print(f"{out}: {_summary(nm)}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    nm = _load_navmesh(args.file)
    s = nm.stats()
    if args.json:
        print(json.dumps(s, indent=2, default=float))
    else:
        print(f"{args.file}: {_summary(nm)}")
        for k, v in s.items():
            if not isinstance(v, dict):
                print(f"  {k}: {v}")
    return 0


def _parse_path_arg(text: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    if ":" not in text:
        raise errors.InputError(f"--path: expected x,y,z:x,y,z, got {text!r}")
    a, b = text.split(":", 1)
    return _floats(a, 3, "--path start"), _floats(b, 3, "--path end")


def cmd_render(args: argparse.Namespace) -> int:
    from .debug import render

    src = Path(args.file)
    path_pts = None
    if src.suffix.lower() == ".obj":
        mesh = _load_geometry(args.file)
        render.render_geometry(mesh, args.output, title=src.name)
        print(f"{args.output}: {mesh.n_triangles} triangles drawn")
        return 0
    nm = _load_navmesh(args.file)
    if args.path:
        from .detour.query import NavMeshQuery

        a, b = _parse_path_arg(args.path)
        path_pts = NavMeshQuery(nm).path(a, b, optimal=args.optimal).points
    render.render_navmesh(nm, args.output, color_by=args.color_by, path=path_pts, title=src.name)
    print(f"{args.output}: {_summary(nm)}")
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    from .detour.query import NavMeshQuery

    nm = _load_navmesh(args.file)
    q = NavMeshQuery(nm)
    a = _floats(args.start, 3, "--from")
    b = _floats(args.end, 3, "--to")
    p = q.path(a, b, optimal=args.optimal)
    if args.json:
        print(
            json.dumps(
                {
                    "complete": bool(p.complete),
                    "length": float(p.length),
                    "points": [[float(c) for c in pt] for pt in p.points],
                    "polys": [int(r) for r in p.polys],
                },
                indent=2,
            )
        )
    else:
        state = "complete" if p.complete else "partial (goal unreachable)"
        print(f"{state} path, {len(p.points)} corners, length {p.length:.3f} wu")
        for pt in p.points:
            print(f"  {pt[0]:.3f},{pt[1]:.3f},{pt[2]:.3f}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .debug import render
    from .geometry import sample_level
    from .recast.config import BakeConfig

    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    mesh = sample_level()
    print(f"sample level: {mesh.n_vertices} vertices, {mesh.n_triangles} triangles")
    t0 = time.perf_counter()
    nm = _bake(mesh, BakeConfig(), 1, None)
    print(f"baked solo navmesh: {_summary(nm)} ({time.perf_counter() - t0:.1f} s)")
    nm.save(out / "sample_level.navmesh")
    png = out / "sample_level.png"
    path_pts = None
    try:
        from .detour.query import NavMeshQuery

        p = NavMeshQuery(nm).path((5.0, 0.0, 5.0), (43.0, 8.0, 38.0))
        path_pts = p.points
        print(
            f"path from the west wing to the second floor: {len(p.points)} corners, "
            f"length {p.length:.1f} wu, {'complete' if p.complete else 'partial'}"
        )
    except (ImportError, errors.NavkitError) as exc:
        print(f"(no path drawn: {exc})")
    render.render_navmesh(nm, png, color_by="region", path=path_pts, title="navkit sample level")
    print(f"wrote {out / 'sample_level.navmesh'} and {png}")
    return 0


def cmd_ecm(args: argparse.Namespace) -> int:
    from .ecm import ecm_command

    start = _floats(args.start, 2, "--from") if args.start else None
    goal = _floats(args.end, 2, "--to") if args.end else None
    path = ecm_command(
        args.level, start, goal, clearance=args.clearance, out=args.output,
        preferred_clearance=args.preferred_clearance,
    )  # fmt: skip
    if start is None:
        print(f"{args.output}: corridor map drawn")
    elif path is None:
        print(f"{args.output}: no corridor with clearance {args.clearance} joins the two points")
        return 1
    else:
        print(f"{args.output}: path length {path.length:.3f} wu with clearance {args.clearance}")
    return 0


def cmd_warmup(args: argparse.Namespace) -> int:
    from ._warmup import warmup

    t0 = time.perf_counter()
    print("navkit warmup: compiling every kernel (all cores)...", file=sys.stderr, flush=True)
    done = warmup(args.workers, args.groups.split(",") if args.groups else None)
    n = sum(c for _, c in done.values())
    print(f"warmed up {', '.join(done)}: {n} kernel signatures compiled "
          f"in {time.perf_counter() - t0:.1f} s")  # fmt: skip
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    ap = argparse.ArgumentParser(prog="navkit", description="Bake and query navigation meshes.")
    ap.add_argument("--version", action="version", version=f"navkit {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("bake", help="bake a navmesh from an OBJ level")
    p.add_argument("level", help="level geometry (.obj)")
    p.add_argument(
        "-o", "--output", required=True, help="output file (.navmesh; .bin = Recast's format)"
    )
    p.add_argument("--recast", action="store_true", help="write Recast's binary navmesh set format")
    p.add_argument("--json", action="store_true", help="print stats as JSON")
    _add_bake_options(p)
    p.set_defaults(func=cmd_bake)

    p = sub.add_parser("info", help="describe a navmesh file (navkit or Recast format)")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("render", help="draw a navmesh or an OBJ level, top down, to PNG")
    p.add_argument("file", help=".navmesh, Recast .bin, or .obj")
    p.add_argument("-o", "--output", required=True, help="output .png")
    p.add_argument("--color-by", choices=("region", "area", "tile", "island"), default="region")
    p.add_argument("--path", help="draw the path x,y,z:x,y,z")
    p.add_argument("--optimal", action="store_true", help="draw the optimal (any-angle) path")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("path", help="find a path on a navmesh")
    p.add_argument("file")
    p.add_argument("--from", dest="start", required=True, metavar="X,Y,Z")
    p.add_argument("--to", dest="end", required=True, metavar="X,Y,Z")
    p.add_argument("--optimal", action="store_true", help="true Euclidean shortest path")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_path)

    p = sub.add_parser("demo", help="bake the built-in sample level and draw it")
    p.add_argument("-o", "--output-dir", default="navkit-demo", help="folder for the outputs")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("ecm", help="explicit corridor map: path with clearance, drawn to PNG")
    p.add_argument(
        "level", help='2D scene JSON {"boundary": [[x,y],...], "obstacles": [...]} or .obj'
    )
    p.add_argument("--from", dest="start", metavar="X,Y", help="start (omit to draw the map only)")
    p.add_argument("--to", dest="end", metavar="X,Y")
    p.add_argument("--clearance", type=float, default=0.5, help="agent radius [wu]")
    p.add_argument(
        "--preferred-clearance",
        type=float,
        default=None,
        help="indicative route: keep this much clearance where the corridor allows",
    )
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_ecm)

    p = sub.add_parser("warmup", help="compile every kernel ahead of time (all cores)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: CPU count)")
    p.add_argument("--groups", help="comma-separated subset: bake,corridor-map,query,...")
    p.set_defaults(func=cmd_warmup)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except errors.NavkitError as exc:
        print(f"navkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            f"navkit {args.command}: error: out of memory (try tiles: --tile-size 64)",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print(f"navkit {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
