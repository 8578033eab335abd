"""navkit's command line: ``navkit bake | info | render | path | demo | ecm | crowd | data``.

Every command prints one line and exits non-zero on bad input (a navkit error),
writes its outputs atomically, and shows a progress bar on stderr for long work.
Coordinates are comma lists and may be negative: ``--from -19.2,2.8,0.2`` works
as well as ``--from=-19.2,2.8,0.2``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import errors

__all__ = ["main"]


#: Options whose value is a comma list of numbers that may start with '-'.
_COORD_OPTIONS = frozenset({"--from", "--to", "--path", "--half-extents"})
_NEGATIVE = re.compile(r"-[0-9.]")
#: Inputs `navkit bake` reads as 2D grids (through navkit.bake_grid).
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff")


def _attach_negative_values(argv: Sequence[str]) -> list[str]:
    """``--from -1,2,3`` -> ``--from=-1,2,3``.

    argparse takes an argument that starts with '-' for an option unless it is a
    single negative number, so a comma list such as ``-19.2,2.8,0.2`` after
    ``--from`` would be refused ("expected one argument"). Nothing after ``--`` changes.
    """
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            out.extend(argv[i:])
            break
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if a in _COORD_OPTIONS and nxt is not None and _NEGATIVE.match(nxt):
            out.append(f"{a}={nxt}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


class _Progress:
    """A one-line progress bar on stderr (when stderr is a terminal, NAVKIT_PROGRESS=1, or forced).

    It counts the tiles of the bake's grid, as the bake's summary line does
    ("24 tiles (18 of the 42 grid tiles empty)").
    """

    def __init__(self, label: str, enabled: bool | None = None) -> None:
        self.label = label
        if enabled is None:
            enabled = sys.stderr.isatty() or os.environ.get("NAVKIT_PROGRESS") == "1"
        self.enabled = enabled
        self.t0 = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 1:
            return
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "-" * (width - filled)
        el = time.perf_counter() - self.t0
        sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total} grid tiles {el:5.1f}s")
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


def _half_extents(args: argparse.Namespace) -> tuple[float, ...]:
    """The nearest-polygon search box of ``--half-extents`` (Detour's default 2,4,2)."""
    text = getattr(args, "half_extents", None)
    return _floats(text, 3, "--half-extents") if text else (2.0, 4.0, 2.0)


def _load_geometry(path: str):
    from .geometry import load_obj

    return load_obj(path)


def _load_tile_cache(path: str):
    """A tile cache file (navkit's NAVKITTC or Recast's TSET) as a TileCache, else None."""
    from .tilecache import TileCache
    from .tilecache.io import MAGIC

    p = Path(path)
    if not p.exists():
        raise errors.InputError(f"{p}: no such file")
    with p.open("rb") as f:
        head = f.read(8)
    if head == MAGIC:
        return TileCache.load(p)
    if head[:4] == b"TEST":  # Recast's TSET magic, little-endian
        return TileCache.from_recast(p)
    return None


def _load_navmesh(path: str):
    from .detour.navmesh import NavMesh

    p = Path(path)
    if not p.exists():
        raise errors.InputError(f"{p}: no such file")
    data = p.read_bytes()[:4]
    if data in (b"TESM", b"VAND"):  # Recast's MSET / DNAV magics, little-endian
        return NavMesh.from_recast(p)
    cache = _load_tile_cache(path)
    if cache is not None:
        return cache.navmesh
    return NavMesh.load(p)


#: BakeConfig field -> (type, help). The help shows BakeConfig's default.
_BAKE_FLAGS: dict[str, tuple[type, str]] = {
    "tile_size": (int, "tile width and depth [voxels]; 0 bakes one solo tile, 32-128 suits "
                       "large levels"),
    "cell_size": (float, "voxel size along x and z [wu]"),
    "cell_height": (float, "voxel height [wu]"),
    "agent_height": (float, "lowest ceiling the agent walks under [wu]"),
    "agent_radius": (float, "distance kept from walls [wu]"),
    "agent_max_climb": (float, "highest ledge the agent steps up [wu]"),
    "agent_max_slope": (float, "steepest walkable slope [degrees]"),
    "region_min_size": (float, "regions smaller than this squared are removed [voxels]"),
    "region_merge_size": (float, "regions smaller than this squared merge into a neighbour "
                                 "[voxels]"),
    "edge_max_len": (float, "longest polygon edge along walls [wu]; 0 = no limit"),
    "edge_max_error": (float, "farthest a simplified wall strays from the voxels [voxels]"),
    "verts_per_poly": (int, "most vertices per polygon (3..6)"),
    "detail_sample_dist": (float, "detail mesh sample spacing [cells]; 0 = polygon edges only"),
    "detail_sample_max_error": (float, "largest height error of the detail mesh [cell heights]"),
}  # fmt: skip
#: The bake settings that also apply to grid and image inputs.
_GRID_FLAGS = ("agent_radius", "partition")


def _config_from_args(args: argparse.Namespace):
    from .recast.config import BakeConfig

    changes: dict[str, Any] = {}
    for name in (*_BAKE_FLAGS, "partition"):
        v = getattr(args, name, None)
        if v is not None:
            changes[name] = v
    return BakeConfig(**changes)


def _add_bake_options(p: argparse.ArgumentParser) -> None:
    from .recast.config import PARTITIONS, BakeConfig

    default = BakeConfig()
    g = p.add_argument_group("bake settings (world units, wu; defaults are RecastDemo's)")
    for name, (typ, text) in _BAKE_FLAGS.items():
        g.add_argument(
            "--" + name.replace("_", "-"),
            type=typ,
            metavar="N" if typ is int else "X",
            help=f"{text} (default: {getattr(default, name)}"
            + ("; 0 for grid and image inputs)" if name == "agent_radius" else ")"),
        )
    g.add_argument(
        "--partition",
        choices=PARTITIONS,
        help="how the walkable area is cut into regions: watershed gives the nicest polygons, "
        f"monotone is the fastest, layers suits tile caches (default: {default.partition})",
    )
    g = p.add_argument_group("grid and image inputs (.map, .png, ...)")
    g.add_argument(
        "--grid-cell",
        type=float,
        default=1.0,
        metavar="X",
        help="side of one map cell or image pixel [wu] (default: %(default)s)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="threads for tiled bakes; 1 = on the main thread only (default: the CPU count)",
    )


def _warn_if_cold() -> None:
    """Announce the compile up front when the chain kernels of a grid's (or the tile
    cache's) bake are not in the cache yet. (In-process compiles also announce
    themselves after ~2 s: navkit._jit.announcer.)"""
    from ._jit import announcer, is_cached
    from .recast import _chain

    # a grid's stages run in the two chain kernels (which link the stage kernels)
    if is_cached(_chain.front_kernel) is False or is_cached(_chain.back_kernel) is False:
        announcer.announce("bake")


def _bake(mesh, config, workers: int | None, progress):
    from .pipeline import bake

    # a tiled bake's threads run the tile kernel without the GIL over one shared tile
    # list (the same kernel as a solo bake: one compile, in this process)
    n = workers or os.cpu_count() or 1
    return bake(mesh, config, progress=progress, threads=max(1, n))


def _bake_level(mesh, config, workers: int | None, progress, side=None):
    """:func:`_bake` of ``navkit bake``: on a cold cache (and a second core), a side
    process compiles half of the bake's kernels meanwhile (navkit._warmup.BakeSide).
    ``side``: one the caller started (the demo's, which goes on with the path: the
    caller closes it); None: start one here if cold, and wait for its end."""

    from ._jit import announcer
    from ._warmup import compile_bake_front, start_bake_side

    own = side is None
    if own and config.partition == "watershed":
        side = start_bake_side()
    if side is None:
        return _bake(mesh, config, workers, progress)
    announcer.announce("bake", "~40 s on two cores")
    try:
        with side.hold():
            compile_bake_front(side.mode)
            nm = _bake(mesh, config, workers, progress)
    except BaseException:
        side.close(finish=False)
        raise
    if own:
        side.close()
    return nm


def _summary(nm) -> str:
    s = nm.stats()
    line = (
        f"{s['tiles']} tile{'s' if s['tiles'] != 1 else ''}, {s['polys']} polys, "
        f"{s['verts']} verts, {s['detail_tris']} detail tris"
    )
    rep = getattr(nm, "build_report", None)
    if rep is not None:
        empty = int(getattr(rep, "tiles_empty", 0))
        if empty:
            line += f" ({empty} of the {rep.grid_tiles} grid tiles empty)"
        line += f" in {rep.total_ms:.0f} ms"
    return line


def _grid_kind(path: Path) -> str | None:
    """Return "map" for a Moving AI map, "image" for a picture, None for level geometry."""
    suffix = path.suffix.lower()
    if suffix == ".map":
        return "map"
    if suffix in _IMAGE_SUFFIXES:
        return "image"
    return None


def _load_image(path: Path) -> Any:
    """An image file as a uint8 (H, W) or (H, W, 3|4) array (matplotlib reads it)."""
    import numpy as np

    try:
        import matplotlib.image as mpimg
    except ImportError:
        raise errors.InputError(
            f"{path}: reading images needs matplotlib: pip install 'navkit[render]'"
        ) from None
    try:
        a = np.asarray(mpimg.imread(path))
    except (OSError, ValueError, SyntaxError) as exc:
        raise errors.FormatError(f"{path}: cannot read the image: {exc}") from None
    if a.dtype != np.uint8:  # PNGs come as floats in [0, 1]
        a = np.clip(np.round(a.astype(np.float64) * 255.0), 0, 255).astype(np.uint8)
    if a.ndim == 3 and a.shape[2] == 2:  # grey + alpha
        a = np.concatenate([a[..., :1].repeat(3, axis=2), a[..., 1:]], axis=2)
    return a


def _bake_grid_input(src: Path, kind: str, args: argparse.Namespace):
    from .geometry.grid import bake_grid, load_movingai_map

    unused = [
        "--" + n.replace("_", "-")
        for n in (*_BAKE_FLAGS, "partition")
        if getattr(args, n, None) is not None and n not in _GRID_FLAGS
    ]
    if unused:
        raise errors.InputError(
            f"{', '.join(unused)} do not apply to grid and image inputs: the voxel settings "
            "come from --grid-cell and --agent-radius (see navkit.bake_grid)"
        )
    if kind == "map":
        grid = load_movingai_map(src)
    else:
        grid = _load_image(src)
    _warn_if_cold()
    return bake_grid(
        grid,
        cell_size=args.grid_cell,
        agent_radius=args.agent_radius if args.agent_radius is not None else 0.0,
        partition=args.partition or "watershed",
    )


def _check_output(out: Path) -> None:
    """Refuse an output whose folder does not exist before any work is done."""
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise errors.InputError(f"{out}: folder {folder} does not exist")


def _note_suffix(out: Path, usual: str, what: str) -> None:
    """Say which format an output with an unexpected suffix gets (the format follows
    the suffix: ``.bin`` is Recast's, anything else navkit's own)."""
    if out.suffix.lower() != usual:
        print(
            f"navkit bake: note: {out.name} gets {what} format ({usual}; "
            f"name it .bin or pass --recast for Recast's)",
            file=sys.stderr,
        )


def _check_workers(workers: int | None) -> None:
    if workers is not None and workers < 1:
        raise errors.InputError(f"--workers must be at least 1, got {workers}")


def cmd_bake(args: argparse.Namespace) -> int:
    _check_workers(args.workers)
    src = Path(args.level)
    out = Path(args.output)
    _check_output(out)
    kind = _grid_kind(src)
    if args.tile_cache:
        return _bake_tile_cache(args, src, out, kind)
    if args.recast_compatible:
        raise errors.InputError("--recast-compatible is a tile-cache mode: add --tile-cache")
    if kind is None:
        mesh = _load_geometry(args.level)
        config = _config_from_args(args)
        nm = _bake_level(mesh, config, args.workers, _Progress(f"baking {src.name}"))
    else:
        if not src.is_file():
            raise errors.InputError(f"{src}: no such file")
        nm = _bake_grid_input(src, kind, args)
    if out.suffix.lower() == ".bin" or args.recast:
        nm.to_recast(out)
    else:
        _note_suffix(out, ".navmesh", "navkit's navmesh")
        nm.save(out)
    if args.json:
        print(json.dumps({"output": str(out), **nm.stats()}, indent=2, default=float))
    else:
        print(f"{out}: {_summary(nm)}")
    return 0


def _bake_tile_cache(args: argparse.Namespace, src: Path, out: Path, kind: str | None) -> int:
    """``navkit bake --tile-cache``: RecastDemo's Sample_TempObstacles build."""
    import dataclasses

    from .tilecache import TileCache

    if kind is not None:
        raise errors.InputError(f"--tile-cache needs level geometry (.obj), not a {kind} file")
    mesh = _load_geometry(args.level)
    config = _config_from_args(args)
    if not config.tile_size:  # the cache is tiled: RecastDemo's Sample_TempObstacles uses 48
        config = dataclasses.replace(config, tile_size=48)
    _warn_if_cold()
    tc = TileCache.bake(
        mesh,
        config,
        progress=_Progress(f"baking {src.name} (tile cache)"),
        recast_compatible=args.recast_compatible,
    )
    if out.suffix.lower() == ".bin" or args.recast:
        tc.to_recast(out)
        fmt = "Recast TSET"
    else:
        _note_suffix(out, ".tilecache", "navkit's tile cache")
        tc.save(out)
        fmt = "navkit tile cache"
    ts = tc.tile_cache_set
    info = {
        "output": str(out),
        "format": fmt,
        "layers": len(ts.tiles),
        "raw_bytes": ts.raw_bytes,
        "fastlz_bytes": ts.compressed_bytes,
        "file_bytes": out.stat().st_size,
        "tile_size": config.tile_size,
        "mode": "recast" if tc.recast_compatible else "navkit",
        **tc.navmesh.stats(),
    }
    if args.json:
        print(json.dumps(info, indent=2, default=float))
    else:
        print(
            f"{out}: {fmt} ({info['mode']} mode), {info['layers']} layers "
            f"({info['raw_bytes']} bytes raw, "
            f"{info['file_bytes']} in the file); navmesh {_summary(tc.navmesh)}"
        )
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
    out = Path(args.output)
    render.picture_format(out)
    _check_output(out)
    path_pts = None
    cache = None if src.suffix.lower() == ".obj" else _load_tile_cache(args.file)
    if cache is not None:
        if args.path or args.color_by == "region":
            raise errors.InputError(
                "a tile cache is drawn with its obstacles and rebuilt tiles; --path and "
                "--color-by region apply to navmesh files"
            )
        render.render_tile_cache(cache, out, title=src.name, color_by=args.color_by,
                                 view=args.view)  # fmt: skip
        print(
            f"{out}: {_summary(cache.navmesh)}, {cache.obstacle_count} obstacles, "
            f"{len(cache.touched_tiles())} layers under them ({args.view} view)"
        )
        return 0
    if src.suffix.lower() == ".obj":
        mesh = _load_geometry(args.file)
        render.render_geometry(mesh, out, title=src.name, view=args.view)
        print(f"{out}: {mesh.n_triangles} triangles drawn ({args.view} view)")
        return 0
    nm = _load_navmesh(args.file)
    if args.color_by == "region" and getattr(nm, "build_report", None) is None:
        raise errors.InputError(
            f"--color-by region: {src.name} has no region ids (navmesh files do not store "
            "them; only `navkit demo` and Python's navkit.bake keep them); choose one of "
            "auto, area, tile, island"
        )
    if args.path:
        from .detour.query import NavMeshQuery

        a, b = _parse_path_arg(args.path)
        path_pts = (
            NavMeshQuery(nm)
            .path(a, b, optimal=args.optimal, half_extents=_half_extents(args))
            .points
        )
    render.render_navmesh(
        nm, out, color_by=args.color_by, path=path_pts, title=src.name, view=args.view
    )
    print(f"{out}: {_summary(nm)} ({args.view} view)")
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    from .detour.query import NavMeshQuery

    nm = _load_navmesh(args.file)
    q = NavMeshQuery(nm)
    a = _floats(args.start, 3, "--from")
    b = _floats(args.end, 3, "--to")
    p = q.path(a, b, optimal=args.optimal, half_extents=_half_extents(args))
    if args.json:
        print(
            json.dumps(
                {
                    "complete": bool(p.complete),
                    "partial_reason": p.partial_reason,
                    "status": int(p.status),
                    "length": float(p.length),
                    "points": [[float(c) for c in pt] for pt in p.points],
                    "polys": [int(r) for r in p.polys],
                },
                indent=2,
            )
        )
    else:
        why = {
            "out_of_nodes": "the search ran out of nodes before reaching the goal",
            "unreachable": "the goal is not reachable from the start",
            "max_path": "the corridor is longer than max_path",
        }
        state = "complete" if p.complete else f"partial ({why[p.partial_reason or 'unreachable']})"
        print(f"{state} path, {len(p.points)} corners, length {p.length:.3f} wu")
        for pt in p.points:
            print(f"  {pt[0]:.3f},{pt[1]:.3f},{pt[2]:.3f}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    obstacles = bool(args.obstacles)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    from ._warmup import start_bake_side

    # cold cache: one side process compiles half of the bake, then the path's kernels
    # (and with the obstacles the tile cache's polygon-mesh kernel) while this one
    # compiles the other half and bakes, then the picture's kernel (and the tile
    # cache's swap kernel): two processes balance better on two cores than three did
    bake_side = start_bake_side("demo-tc" if obstacles else "demo")
    if bake_side is not None:
        what = "path and tile-cache" if obstacles else "path"
        print(
            f"navkit: first run: compiling the {what} kernels in a second process meanwhile",
            file=sys.stderr,
            flush=True,
        )
    try:
        _demo_steps(out, obstacles, bake_side)
    except BaseException:
        if bake_side is not None:
            bake_side.close(finish=False)
        raise
    if bake_side is not None:
        bake_side.close()
    return 0


def _demo_steps(out: Path, obstacles: bool, bake_side) -> None:
    """:func:`cmd_demo`'s work, with the side process it started (or None)."""
    from .debug import render
    from .geometry import sample_level
    from .recast.config import BakeConfig

    mesh = sample_level()
    print(f"sample level: {mesh.n_vertices} vertices, {mesh.n_triangles} triangles")
    # (cold: half of it in a side process)
    nm = _bake_level(mesh, BakeConfig(), 1, None, side=bake_side)
    print(f"baked solo navmesh: {_summary(nm)}")
    nm.save(out / "sample_level.navmesh")
    png = out / "sample_level.png"
    path_pts = None
    try:
        from .detour.query import NavMeshQuery

        if bake_side is not None:
            from ._warmup import compile_demo_tile_front, compile_picture_kernels

            compile_picture_kernels()  # here, while the side ends with the path's kernels
            if obstacles:
                compile_demo_tile_front(bake_side)
            bake_side.wait("path")  # then load those
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
    if obstacles:
        held = contextlib.nullcontext() if bake_side is None else bake_side.hold(tile_cache=True)
        if bake_side is not None:  # (the side's update kernel must not wait for us: said
            bake_side.signal("swap")  # once the swap kernel is compiled; again if skipped)
        with held:  # (the tile cache's update kernel loads the side's kernel)
            _demo_tile_cache(mesh, out)
    else:
        print(
            "next: `navkit demo --obstacles` adds temporary obstacles to a tile cache of the "
            "level and draws it before and after"
        )


#: The demo's obstacles on the sample level: (kind, arguments), world units.
_DEMO_OBSTACLES = (
    ("cylinder", ((12.0, 0.0, 12.0), 1.5, 2.0)),
    ("box", ((20.0, -0.5, 3.0), (23.0, 2.0, 9.0))),
    ("oriented_box", ((30.0, 0.5, 20.0), (3.0, 1.0, 0.6), 0.6)),
    ("cylinder", ((8.0, 0.0, 30.0), 1.0, 2.0)),
)


def _demo_tile_cache(mesh, out: Path) -> None:
    """The demo's dynamic part: a tile cache of the sample level, a few obstacles."""
    from .debug import render
    from .recast.config import BakeConfig
    from .tilecache import TileCache

    t0 = time.perf_counter()
    tc = TileCache.bake(mesh, BakeConfig(tile_size=32))
    print(
        f"tile cache: {len(tc.tile_cache_set.tiles)} layers, navmesh {_summary(tc.navmesh)} "
        f"({time.perf_counter() - t0:.1f} s)"
    )
    before = out / "tilecache_before.png"
    render.render_tile_cache(tc, before, title="tile cache, no obstacle")
    for kind, a in _DEMO_OBSTACLES:
        try:
            if kind == "cylinder":
                tc.add_cylinder(*a)
            elif kind == "box":
                tc.add_box(*a)
            else:
                tc.add_oriented_box(*a)
        except errors.InputError as exc:  # outside this level: skip it
            print(f"(obstacle {kind} {a} skipped: {exc})")
    t0 = time.perf_counter()
    rebuilt: list = []
    while not tc.up_to_date:
        rebuilt += tc.update().rebuilt
    ms = (time.perf_counter() - t0) * 1e3
    print(
        f"{tc.obstacle_count} obstacles added: {len(rebuilt)} tiles rebuilt in {ms:.1f} ms; "
        f"navmesh {_summary(tc.navmesh)}"
    )
    after = out / "tilecache_after.png"
    render.render_tile_cache(tc, after, highlight=rebuilt,
                             title=f"tile cache, {tc.obstacle_count} obstacles")  # fmt: skip
    tc.save(out / "sample_level.tilecache")
    print(f"wrote {before}, {after} and {out / 'sample_level.tilecache'}")


def _start_ecm_side():
    """On a cold cache (and a second core), a side process compiles the corridor map's
    path kernels while this one builds the map (navkit._warmup.EcmSide); else None."""
    from ._jit import announcer
    from ._warmup import start_ecm_side

    side = start_ecm_side()
    if side is not None:
        announcer.announce("corridor-map", "~15 s on two cores")
    return side


def cmd_ecm(args: argparse.Namespace) -> int:
    from .ecm import ecm_command

    start = _floats(args.start, 2, "--from") if args.start else None
    goal = _floats(args.end, 2, "--to") if args.end else None
    if (start is None) != (goal is None):
        raise errors.InputError(
            "--from and --to go together (give both, or neither to draw the map)"
        )
    side = _start_ecm_side()
    try:
        path = ecm_command(
            args.level, start, goal, clearance=args.clearance, out=args.output,
            preferred_clearance=args.preferred_clearance,
            _before_path=None if side is None else lambda: side.wait("path"),
        )  # fmt: skip
    except BaseException:
        if side is not None:
            side.close(finish=False)
        raise
    if side is not None:
        side.close()
    if path is None:
        print(f"{args.output}: corridor map drawn")
    elif not path:  # a NoPath: say why (start/goal outside, inside an obstacle, too narrow)
        print(f"{args.output}: no path: {path.message}")
        return 1
    else:
        print(f"{args.output}: path length {path.length:.3f} wu with clearance {args.clearance}")
    return 0


def cmd_data(args: argparse.Namespace) -> int:
    from . import data

    if args.action == "list" or args.action is None:
        if args.names:
            raise errors.InputError("`navkit data list` takes no names")
        for name in data.names():
            print(f"{name:16s} {data.DESCRIPTIONS[name]}")
        print("(navkit data copy NAME... copies files here; navkit data path NAME prints where)")
        return 0
    if not args.names:
        raise errors.InputError(f"`navkit data {args.action}` needs sample names: "
                                f"{', '.join(data.names())}")  # fmt: skip
    paths = [data.path(n) for n in args.names]  # every name checked before any copy
    if args.action == "path":
        for p in paths:
            print(p)
        return 0
    dest = Path(args.dir)
    if not dest.is_dir():
        raise errors.InputError(f"--dir {dest}: no such folder")
    for p in paths:
        target = dest / p.name
        shutil.copyfile(p, target)
        print(f"{target}")
    return 0


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows defaults (where an option has one worth showing) and keeps line breaks."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        h = action.help or ""
        if "%(default)" in h or "(default:" in h or action.default in (None, False):
            return h
        return super()._get_help_string(action)


def cmd_crowd(args: argparse.Namespace) -> int:
    from . import _check
    from .crowd.metrics import random_crowd_run

    _check.integer(args.agents, "--agents", 1, 65535)
    if args.seconds is not None:
        _check.real(args.seconds, "--seconds", 0.0, 3600.0, lo_open=True, unit="s")
    _check.integer(args.seed, "--seed", 0, 2**63 - 1)
    _check.integer(args.frames, "--frames", 1, 10000)
    if args.scenario is not None:
        return _crowd_scenario(args)
    if args.level is None:
        raise errors.InputError("give a level (.obj or navmesh) or --scenario NAME")
    if args.seconds is None:
        args.seconds = 10.0
    modes = args.mode or ["dtcrowd"]
    if len(modes) != 1 or modes[0] not in ("dtcrowd", "navkit"):
        raise errors.InputError(
            f"--mode {' '.join(modes)}: a random run takes one of dtcrowd, navkit "
            "(scenario modes go with --scenario)"
        )
    args.mode = modes[0]
    _check.integer(args.level_of_detail, "--level-of-detail", 1, 16)
    if args.level_of_detail > 1 and args.mode != "navkit":
        raise errors.InputError(
            "--level-of-detail needs --mode navkit (dtCrowd updates every agent every step)"
        )
    src = Path(args.level)
    if src.suffix.lower() == ".obj":
        from .recast.config import BakeConfig

        nm = _bake(_load_geometry(str(src)), BakeConfig(), 1, None)
    else:
        nm = _load_navmesh(str(src))
    for opt in ("gif", "html"):
        out = getattr(args, opt)
        if out and not Path(out).resolve().parent.is_dir():
            raise errors.InputError(f"--{opt} {out}: no such folder")
    run = random_crowd_run(
        nm, args.agents, args.seconds, seed=args.seed, mode=args.mode,
        level_of_detail=args.level_of_detail,
    )  # fmt: skip
    m = run.metrics
    ms = float(sorted(run.update_ms)[len(run.update_ms) // 2])
    anims = {}
    if args.gif:
        from .debug.crowd_anim import write_gif

        anims["gif"] = write_gif(
            nm, run.trajectory, run.targets, run.radius, args.gif, dt=run.dt,
            max_frames=args.frames, title=f"{src.name}: {args.agents} agents",
        )  # fmt: skip
    if args.html:
        from .debug.crowd_anim import write_html

        anims["html"] = write_html(
            nm, run.trajectory, run.radius, args.html, dt=run.dt,
            max_frames=args.frames * 5, title=f"{src.name}: {args.agents} agents",
        )  # fmt: skip
    if args.json:
        out = {"level": src.name, "seed": args.seed, "seconds": args.seconds, "hz": 60}
        out["mode"] = args.mode
        out["level_of_detail"] = args.level_of_detail
        out.update(m.as_dict())
        out["update_ms_median"] = ms
        out["frames"] = anims
        print(json.dumps(out, indent=2))
    else:
        pr = "n/a" if m.path_ratio_mean is None else f"{m.path_ratio_mean:.3f}"
        print(
            f"{m.agents} agents, {m.steps} steps of 1/60 s on {src.name}: "
            f"arrived {m.arrival_fraction:.1%}, overlap mean {m.mean_overlap:.3f} "
            f"worst {m.worst_overlap:.3f} (of a radius), stuck {m.stuck} "
            f"(of {m.reachable} with a reachable target), path/straight {pr}, "
            f"{ms:.2f} ms per update (median)"
        )
        for k, v in anims.items():
            print(f"{getattr(args, k)}: {v} frames")
    return 0


def _crowd_scenario(args: argparse.Namespace) -> int:
    """``navkit crowd --scenario NAME``: one scenario of navkit.scenarios with one mode."""
    from . import _check
    from .scenarios import get_mode, get_scenario, run_scenario
    from .scenarios.report import text_table, write_animation

    get_scenario(args.scenario)
    modes = args.mode or ["dtcrowd-good"]
    for m in modes:
        get_mode(m)
    scale = _check.real(args.scale, "--scale", 0.0, 100.0, lo_open=True)
    for opt in ("gif", "html"):
        out = getattr(args, opt)
        if out and not Path(out).resolve().parent.is_dir():
            raise errors.InputError(f"--{opt} {out}: no such folder")
    results = [
        run_scenario(args.scenario, m, scale=scale, seed=args.seed, seconds=args.seconds)
        for m in modes
    ]
    anims = {}
    for opt in ("gif", "html"):
        out = getattr(args, opt)
        if out:
            anims[opt] = write_animation(results[0], out, max_frames=args.frames)
    if args.json:
        rows = []
        for r in results:
            row = {"scenario": r.scenario, "mode": r.mode, **r.metrics.as_dict()}
            row.update({k: v for k, v in r.info.items() if k != "query_times"})
            rows.append(row)
        print(json.dumps({"results": rows, "frames": anims}, indent=2))
    else:
        print(text_table(results).rstrip())
        for k, v in anims.items():
            print(f"{getattr(args, k)}: {v} frames")
    return 0


def cmd_warmup(args: argparse.Namespace) -> int:
    from ._warmup import warmup

    _check_workers(args.workers)
    t0 = time.perf_counter()
    print("navkit warmup: compiling every kernel (all cores)...", file=sys.stderr, flush=True)
    done = warmup(args.workers, args.groups.split(",") if args.groups else None)
    n = sum(c for _, c in done.values())
    print(f"warmed up {', '.join(done)}: {n} kernel signatures compiled "
          f"in {time.perf_counter() - t0:.1f} s")  # fmt: skip
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    ap = argparse.ArgumentParser(
        prog="navkit",
        description="Bake and query navigation meshes. Try `navkit data` for sample inputs.",
    )
    ap.add_argument("--version", action="version", version=f"navkit {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "bake",
        help="bake a navmesh from a level (.obj), a Moving AI map (.map) or an image",
        formatter_class=_Help,
        description="Bake a navmesh. Level geometry (.obj) goes through Recast's voxel "
        "pipeline with the bake settings below; a Moving AI map (.map) or an image (.png, "
        ".jpg, ...: dark = blocked) is baked as a 2D grid (navkit.bake_grid).",
    )
    p.add_argument("level", help="level geometry (.obj), Moving AI map (.map) or image")
    p.add_argument(
        "-o", "--output", required=True, help="output file (.navmesh; .bin = Recast's format)"
    )
    p.add_argument("--recast", action="store_true", help="write Recast's binary navmesh set format")
    p.add_argument(
        "--tile-cache",
        action="store_true",
        help="bake a tile cache for temporary obstacles (RecastDemo's Sample_TempObstacles; "
        "--tile-size defaults to 48): -o X.tilecache writes navkit's format, X.bin (or "
        "--recast) Recast's TSET",
    )
    p.add_argument(
        "--recast-compatible",
        action="store_true",
        help="with --tile-cache: the cache behaves as Recast's dtTileCache (obstacles cut "
        "their bare footprint, rebuilt tiles have no detail mesh, at most 64 queued "
        "requests), so its navmesh after obstacles matches Recast's byte for byte; the mode "
        "is saved in the .tilecache file. Default: navkit's mode (holes grown by the agent "
        "radius, detail meshes, no request dropped)",
    )
    p.add_argument("--json", action="store_true", help="print stats as JSON")
    _add_bake_options(p)
    p.set_defaults(func=cmd_bake)

    p = sub.add_parser("info", help="describe a navmesh file (navkit or Recast format)")
    p.add_argument("file", help=".navmesh, .tilecache, or Recast .bin (navmesh or tile cache set)")
    p.add_argument("--json", action="store_true", help="print stats as JSON")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser(
        "render",
        help="draw a navmesh, a tile cache (obstacles outlined) or an OBJ level (.png, .jpg, .svg or .pdf)",
        formatter_class=_Help,
    )
    p.add_argument(
        "file", help=".navmesh, .tilecache, Recast .bin (navmesh or tile cache set), or .obj"
    )
    p.add_argument("-o", "--output", required=True, help="picture: .png, .jpg, .svg or .pdf")
    p.add_argument(
        "--color-by",
        choices=("auto", "region", "area", "tile", "island"),
        default="auto",
        help="polygon colours; region needs a navmesh baked in this process (files do not "
        "store region ids); auto = region when known, else island",
    )
    p.add_argument(
        "--view",
        choices=("top", "side", "iso"),
        default="top",
        help="top down; side (looking along -z); iso (isometric: the storeys of a "
        "multi-level building one above the other)",
    )
    p.add_argument("--path", metavar="X,Y,Z:X,Y,Z", help="draw the path between two points")
    p.add_argument("--optimal", action="store_true", help="draw the optimal (any-angle) path")
    p.add_argument(
        "--half-extents",
        metavar="X,Y,Z",
        help="search box for the path's nearest polygons [wu] (default: 2,4,2)",
    )
    p.set_defaults(func=cmd_render)

    p = sub.add_parser(
        "path",
        help="find a path on a navmesh",
        description="Print the straight path (corner points) between two points, as Detour's "
        "findPath + findStraightPath give it; a partial path says why (out of nodes, or the "
        "goal is unreachable). Negative coordinates work as written: --from -19.2,2.8,0.2.",
    )
    p.add_argument("file", help=".navmesh, .tilecache, or Recast .bin")
    p.add_argument("--from", dest="start", required=True, metavar="X,Y,Z", help="start point [wu]")
    p.add_argument("--to", dest="end", required=True, metavar="X,Y,Z", help="goal point [wu]")
    p.add_argument(
        "--half-extents",
        metavar="X,Y,Z",
        help="search box for the nearest polygons of the two points [wu] (default: 2,4,2)",
    )
    p.add_argument(
        "--optimal",
        action="store_true",
        help="any-angle path, shortest in the xz plane (Polyanya); it can be longer in 3D "
        "than Detour's on slopes",
    )
    p.add_argument("--json", action="store_true", help="print the path as JSON")
    p.set_defaults(func=cmd_path)

    p = sub.add_parser(
        "demo",
        help="bake the built-in sample level and draw it",
        description="Bake the built-in sample level, find a path across it (from the west "
        "wing to the second floor) and write the navmesh and a picture into the output "
        "folder; a first run compiles the kernels (cached on disk) and says so.",
    )
    p.add_argument("-o", "--output-dir", default="navkit-demo", help="folder for the outputs")
    p.add_argument(
        "--obstacles",
        action="store_true",
        help="also build a tile cache of the level, add four temporary obstacles and draw "
        "it before and after (a first run compiles the tile cache's kernels too)",
    )
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "ecm",
        help="explicit corridor map: path with clearance, drawn to PNG",
        formatter_class=_Help,
    )
    p.add_argument(
        "level", help='2D scene JSON {"boundary": [[x,y],...], "obstacles": [...]} or .obj'
    )
    p.add_argument("--from", dest="start", metavar="X,Y", help="start (omit to draw the map only)")
    p.add_argument("--to", dest="end", metavar="X,Y", help="goal (with --from)")
    p.add_argument("--clearance", type=float, default=0.5, help="agent radius [wu]")
    p.add_argument(
        "--preferred-clearance",
        type=float,
        default=None,
        help="indicative route: keep this much clearance where the corridor allows",
    )
    p.add_argument("-o", "--output", required=True, help="picture (.png)")
    p.set_defaults(func=cmd_ecm)

    p = sub.add_parser(
        "data",
        help="sample inputs shipped with navkit (RecastDemo levels, a Moving AI map, a 2D scene)",
        description="`navkit data` lists the samples; `navkit data copy dungeon.obj arena.map` "
        "copies them into the current folder; `navkit data path dungeon.obj` prints where "
        "one is installed.",
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=("list", "copy", "path"),
        default="list",
        help="list the samples (default), copy them here (or to --dir), or print their paths",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="sample names (see `navkit data`)")
    p.add_argument("-d", "--dir", default=".", help="folder to copy into (default: .)")
    p.set_defaults(func=cmd_data)
    p = sub.add_parser(
        "crowd",
        help="run a crowd of agents with random targets and measure it (animation optional)",
        description="Place N agents at random navmesh points with random reachable targets "
        "(RecastDemo CrowdTool's agent), run S seconds at 60 Hz and print: arrival fraction "
        "(within 1 m), mean and worst overlap between agents (fraction of a radius), stuck "
        "agents (moved < 0.5 m in some 5 s window, not arrived), walked / straight-line "
        "distance, ms per update.",
    )
    p.add_argument(
        "level", nargs="?",
        help="level geometry (.obj, baked with the default settings) or navmesh",
    )  # fmt: skip
    p.add_argument(
        "--scenario", metavar="NAME",
        help="run a standard scenario instead (navkit.scenarios: crossing, bottleneck, "
        "corridor, circle, random_dungeon, random_nav_test, random_undulating, "
        "moving_obstacle, follower)",
    )  # fmt: skip
    p.add_argument(
        "--mode", nargs="+", metavar="MODE",
        help="random run: dtcrowd (Detour's dtCrowd step for step, the default) or navkit "
        "(replanning and an iteration budget for path requests); with --scenario: the "
        "scenario modes to compare (default: dtcrowd-good; the animation shows the first)",
    )  # fmt: skip
    p.add_argument(
        "--level-of-detail", type=int, default=1, metavar="K",
        help="random run in navkit mode: each agent's corridor check, boundary, neighbours "
        "and avoidance run every K-th update, staggered (1-16; default: 1, every update)",
    )  # fmt: skip
    p.add_argument(
        "--scale", type=float, default=1.0,
        help="with --scenario: agent count factor (default: 1, the scenario at full size)",
    )  # fmt: skip
    p.add_argument("--agents", type=int, default=50, help="number of agents (default: 50)")
    p.add_argument(
        "--seconds", type=float, default=None,
        help="simulated time [s] (default: 10; a scenario's own without --seconds)",
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.add_argument("--gif", metavar="OUT", help="write an animated GIF (matplotlib + Pillow)")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML animation")
    p.add_argument(
        "--frames", type=int, default=60, help="GIF frames (the HTML gets 5x; default: 60)"
    )
    p.set_defaults(func=cmd_crowd)

    p = sub.add_parser("warmup", help="compile every kernel ahead of time (all cores)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: CPU count)")
    from ._warmup import GROUPS  # standard library only at import: no numba here

    p.add_argument(
        "--groups",
        help="comma-separated subset of: " + ",".join(GROUPS) + " (default: all)",
    )
    p.set_defaults(func=cmd_warmup)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    ap = build_parser()
    args = ap.parse_args(_attach_negative_values(sys.argv[1:] if argv is None else list(argv)))
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
