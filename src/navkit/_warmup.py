"""``navkit warmup``: compile every kernel ahead of time, on every core.

numba compiles a kernel the first time it is called and keeps the machine code in
its on-disk cache. Warm-up calls each feature once on a tiny input, so the very
signatures that real calls use are compiled and cached; later runs load them.
Each feature group runs in its own process (a process pool as wide as the
machine); the query groups need a navmesh, so they start once the bake group
has written one.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

__all__ = ["GROUPS", "warmup"]

_START = (5.0, 0.0, 5.0)
_END = (43.0, 8.0, 38.0)


def _bake(tmp: str) -> None:
    """Bake (solo, tiled, every partition, grids) and save/load a navmesh."""
    import numpy as np

    import navkit
    from navkit.detour.navmesh import NavMesh

    mesh = navkit.sample_level()
    nm = navkit.bake(mesh, navkit.BakeConfig())
    nm.save(Path(tmp) / "solo.navmesh")
    nm.to_recast(Path(tmp) / "solo.bin")
    NavMesh.load(Path(tmp) / "solo.navmesh")
    NavMesh.from_recast(Path(tmp) / "solo.bin")
    navkit.bake(mesh, navkit.BakeConfig(tile_size=32))
    grid = np.zeros((24, 24), dtype=bool)
    grid[8:12, 8:16] = True
    for part in ("watershed", "monotone", "layers"):
        navkit.bake_grid(grid, 1.0, partition=part)
    (Path(tmp) / "solo.ready").write_text("ok")


def _query(tmp: str) -> None:
    """Every NavMeshQuery method once (errors from odd inputs are ignored)."""
    import numpy as np

    from navkit.detour.navmesh import NavMesh
    from navkit.detour.query import NavMeshQuery
    from navkit.errors import NavkitError

    nm = NavMesh.load(Path(tmp) / "solo.navmesh")
    q = NavMeshQuery(nm)
    near = q.find_nearest_poly(_START)
    end = q.find_nearest_poly(_END)
    ref, p = near.ref, near.point
    c = (5.0, 0.0, 5.0)
    calls: list[Callable[[], object]] = [
        lambda: q.is_valid_poly_ref(ref),
        lambda: q.query_polygons(c, (2.0, 2.0, 2.0)),
        lambda: q.closest_point_on_poly(ref, c),
        lambda: q.closest_point_on_poly_boundary(ref, c),
        lambda: q.get_poly_height(ref, c),
        lambda: q.find_straight_path(p, end.point, q.find_path(ref, end.ref, p, end.point).polys),
        lambda: q.raycast(ref, p, (40.0, 0.0, 5.0)),
        lambda: q.move_along_surface(ref, p, (8.0, 0.0, 6.0)),
        lambda: q.find_distance_to_wall(ref, p, 5.0),
        lambda: q.get_poly_wall_segments(ref),
        lambda: q.get_poly_wall_segments(ref, store_portals=True),
        lambda: q.find_polys_around_circle(ref, p, 3.0),
        lambda: q.find_polys_around_shape(
            ref, np.array([[4, 0, 4], [6, 0, 4], [6, 0, 6], [4, 0, 6]], np.float32)
        ),
        lambda: q.find_local_neighbourhood(ref, p, 3.0),
        lambda: q.find_random_point(rng=0),
        lambda: q.find_random_point_around_circle(ref, p, 3.0, rng=0),
        lambda: q.path(_START, _END),
    ]
    for call in calls:
        try:
            call()
        except NavkitError:
            pass
    try:
        q.init_sliced_find_path(ref, end.ref, p, end.point)
        q.update_sliced_find_path(8)
        q.finalize_sliced_find_path()
        q.init_sliced_find_path(ref, end.ref, p, end.point)
        q.update_sliced_find_path(2)
        q.finalize_sliced_find_path_partial(np.array([ref], np.int64))
    except NavkitError:
        pass


def _optimal(tmp: str) -> None:
    """The optimal (any-angle) path."""
    import numpy as np

    from navkit.detour import _polyanya
    from navkit.detour.navmesh import NavMesh
    from navkit.detour.optimal import _planner
    from navkit.detour.query import NavMeshQuery

    q = NavMeshQuery(NavMesh.load(Path(tmp) / "solo.navmesh"))
    q.path(_START, _END, optimal=True)
    # the goal-unreachable branch (start and end in different components)
    pl = _planner(q, NavMeshQuery._filter(None)[0])
    _polyanya.closest_reachable_entry(pl.handle.desc, pl.comp, pl.comp[0], np.zeros(3, np.float32))


def _batch(tmp: str) -> None:
    """The parallel batch of paths."""
    import numpy as np

    from navkit.detour.navmesh import NavMesh
    from navkit.detour.query import NavMeshQuery

    q = NavMeshQuery(NavMesh.load(Path(tmp) / "solo.navmesh"))
    q.paths(np.array([_START] * 4), np.array([_END] * 4))


def _ecm(tmp: str) -> None:
    """Corridor map: both static builds, a path, local updates."""
    from navkit.ecm import CorridorMap

    boundary = [[0, 0], [20, 0], [20, 12], [0, 12]]
    obstacles = [[[4, 3], [7, 3], [7, 8], [4, 8]], [[10, 5], [13, 2], [15, 6]]]
    maps = [CorridorMap.from_polygons(boundary, obstacles, use_library=False)]
    try:
        maps.append(CorridorMap.from_polygons(boundary, obstacles))
    except ImportError:  # pragma: no cover - pyvoronoi is optional
        pass
    for cm in maps:
        cm.find_path((1.0, 1.0), (19.0, 11.0), clearance=0.5)
        cm.find_path((1.0, 1.0), (19.0, 11.0), clearance=0.3, preferred_clearance=1.0)
        cm.clearance_at((1.0, 1.0))
        cm.nearest_medial_point((1.0, 1.0))
        rep = cm.insert_polygon([[1.5, 9.5], [2.5, 9.5], [2.5, 10.5], [1.5, 10.5]])
        cm.move(rep.handle, offset=(0.5, 0.0))
        cm.insert_segment((16.0, 1.0), (18.0, 2.0))
        h = cm.insert_point((17.0, 10.0)).handle
        cm.remove(h)


def compile_path_kernels() -> None:
    """Compile the kernels of :meth:`NavMeshQuery.path` without a navmesh.

    ``path()`` calls one entry kernel (``_single.path_single``) compiled for one
    explicit signature; compiling it here (nothing runs) puts it in numba's cache.
    """
    from navkit.detour import _single

    _single.path_single.compile(_single.signatures()[_single.path_single])


def compile_picture_kernels() -> None:
    """Compile the kernel the demo's picture runs (the navmesh's islands, which colour
    it when no region is known) on an empty navmesh: the argument types are the
    navmesh arrays' own."""
    from navkit.detour import navmesh as _nm

    params = _nm.NavMeshParams(
        orig=(0.0, 0.0, 0.0), tile_width=1.0, tile_height=1.0, max_tiles=1, max_polys=1
    )
    _nm.NavMesh(params).islands()


def _tile_cache(tmp: str) -> None:
    """A tile cache: bake, every obstacle kind, update, save (the demo's calls)."""
    import navkit
    from navkit.cli import _DEMO_OBSTACLES
    from navkit.errors import InputError
    from navkit.tilecache import TileCache

    tc = TileCache.bake(navkit.sample_level(), navkit.BakeConfig(tile_size=32))
    for kind, a in _DEMO_OBSTACLES:
        try:
            getattr(tc, "add_" + kind)(*a)
        except InputError:
            pass
    while not tc.up_to_date:
        tc.update()
    tc.to_bytes()


def _crowd(tmp: str) -> None:
    """Crowds: agents with move targets, a few updates, in dtCrowd mode (its one-kernel
    step, crowd/step.py) and in navkit mode (phase by phase, with replanning)."""
    import navkit
    from navkit.detour.navmesh import NavMesh
    from navkit.detour.query import NavMeshQuery

    nm = NavMesh.load(Path(tmp) / "solo.navmesh")
    q = NavMeshQuery(nm)
    goal = q.find_nearest_poly(_END)
    for mode in ("dtcrowd", "navkit"):
        crowd = navkit.Crowd(nm, max_agents=8, max_agent_radius=0.6, mode=mode)
        for i in range(4):
            a = crowd.add_agent(q.find_random_point(rng=i).point, navkit.AgentParams(radius=0.4))
            crowd.request_move_target(a, goal.ref, goal.point)
        for _ in range(3):
            crowd.update(1 / 60)


#: Feature groups: name -> (function, needs the bake group's navmesh).
GROUPS: dict[str, tuple[Callable[[str], None], bool]] = {
    "bake": (_bake, False),
    "corridor-map": (_ecm, False),
    "tile-cache": (_tile_cache, False),
    "crowd": (_crowd, True),
    "query": (_query, True),
    "optimal-path": (_optimal, True),
    "batch-path": (_batch, True),
}


def _run_group(name: str, tmp: str) -> tuple[str, float, int]:
    """Worker: run one group; (name, seconds, kernels compiled)."""
    from numba.core import event

    count = [0]

    class _Count(event.Listener):
        depth = 0

        def on_start(self, ev) -> None:
            self.depth += 1

        def on_end(self, ev) -> None:
            self.depth -= 1
            count[0] += 1

    event.register("numba:compile", _Count())
    t0 = time.perf_counter()
    GROUPS[name][0](tmp)
    return name, time.perf_counter() - t0, count[0]


def warmup(
    workers: int | None = None, groups: list[str] | None = None, out=sys.stderr
) -> dict[str, tuple[float, int]]:
    """Compile (or load from the cache) every kernel of the given groups.

    Parameters
    ----------
    workers : int or None -- processes (default: the CPU count).
    groups : list of str or None -- names from :data:`GROUPS` (default: all).
    out : text stream for progress lines, or None.

    Returns
    -------
    dict -- group name -> (seconds, signatures compiled in that group's process).
    """
    import multiprocessing

    from navkit.errors import InputError

    names = list(GROUPS) if groups is None else list(groups)
    for n in names:
        if n not in GROUPS:
            raise InputError(f"warmup group {n!r}: expected one of {', '.join(GROUPS)}")
    if any(GROUPS[n][1] for n in names) and "bake" not in names:
        names.insert(0, "bake")
    n_workers = max(1, min(workers or os.cpu_count() or 1, len(names)))
    done: dict[str, tuple[float, int]] = {}
    t0 = time.perf_counter()

    def say(msg: str) -> None:
        if out is not None:
            print(msg, file=out, flush=True)

    with (
        tempfile.TemporaryDirectory() as tmp,
        ProcessPoolExecutor(n_workers, mp_context=multiprocessing.get_context("spawn")) as ex,
    ):
        pending: dict[Future, str] = {}
        later = [n for n in names if GROUPS[n][1]]
        for n in names:
            if not GROUPS[n][1]:
                pending[ex.submit(_run_group, n, tmp)] = n
        while pending:
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in finished:
                pending.pop(fut)
                name, secs, count = fut.result()
                done[name] = (secs, count)
                say(
                    f"  [{len(done)}/{len(names)}] {name}: {secs:.1f} s, "
                    f"{count} kernel signatures compiled ({time.perf_counter() - t0:.0f} s)"
                )
                if name == "bake":
                    for n in later:
                        pending[ex.submit(_run_group, n, tmp)] = n
    return done


# --- a cold bake on two cores ----------------------------------------------------------------
# A bake compiles ~200 kernels, nearly all of them while numba types the tile kernel
# (navkit._bake_tiles.tiles_kernel): it compiles each stage kernel the first time its
# call is typed. On a cold cache, :func:`start_bake_side` starts a second Python
# process that compiles half of the stages (distance field, watershed, contours, polygon
# mesh: :data:`BAKE_SIDE_KERNELS`) into numba's on-disk cache, printing each kernel's
# name once it is cached, then the navmesh's link kernels; meanwhile the bake's own
# process compiles the detail mesh, Detour's tile data and the BV tree
# (:func:`compile_bake_front`) and then bakes: its compile of the tile kernel types the
# front stages (rasterize to erode) itself, waits at each kernel of the side's half
# until the side printed that kernel's name (:meth:`BakeSide.hold`) and loads it from
# the cache instead of compiling it. The tile kernel's own
# compile (~4 s) comes after both halves; the two chain kernels it calls
# (``recast._chain``: the front stages' and the back stages') are compiled on their
# own (``link=False``), the back chain by the side process.
# A cold ``navkit demo`` runs its bake with a side process in ``mode="demo"``: the
# side's half is smaller, and the side then compiles the link kernels and the path
# query's kernels, which the demo needs after its bake (two processes on two cores; a
# third one for the path left the demo's process alone at the end), while the demo's
# process compiles the picture's kernel after its bake.


def _bake_types() -> dict:
    """The argument types the tile kernel (and the bake after it) passes to the kernels
    compiled ahead of it, by kernel: {name: (dispatcher, argument types)}. The types
    are the tile kernel's (tests/test_cli.py checks that a bake adds no signature)."""
    from numba.core import types as T

    from navkit.detour import _bvtree, tile
    from navkit.recast import _chain, contours, detail, distance, polymesh, regions_watershed

    def a(dt, nd=1):
        return T.Array(dt, nd, "C")

    i64, f32, u8, u16, u32 = T.int64, T.float32, T.uint8, T.uint16, T.uint32
    # a compact heightfield as the tile kernel passes it: flat cell index and count,
    # connections, heights, regions, areas
    ci, cc, con, ys, reg, ar = a(u32), a(u8), a(u32), a(u16), a(u16), a(u8)
    det = (
        a(u16, 2), a(u16, 2), a(u16), i64, f32, f32, a(f32), i64, ci, cc, i64, i64, ys, con,
        reg, f32, f32, f32, f32, i64,
    )  # fmt: skip
    back = (
        i64, i64, i64, ci, cc, con, ys, reg, ar, i64, f32, i64, i64, i64, f32, f32, a(f32), f32,
        f32, i64, f32, f32, a(i64), a(i64),
    )  # fmt: skip
    tdata = (
        a(u16, 2), a(u16, 2), i64, a(f32), f32, f32, a(u8), a(u16), a(u32, 2), a(f32, 2),
        a(u8, 2),
    )  # fmt: skip
    return {
        "distance": (distance._kernel, (ci, cc, con, ar, i64, i64)),
        "watershed": (
            regions_watershed._kernel,
            (ci, cc, con, ar, a(u16), i64, i64, i64, i64, i64, i64),
        ),
        "boundary_flags": (contours._boundary_flags_linked, (i64, i64, ci, cc, con, reg)),
        "trace": (
            contours._trace_kernel,
            (i64, i64, ci, cc, con, ys, reg, ar, a(u8), f32, i64, i64),
        ),
        "merge_holes": (contours._merge_holes_kernel, (a(i64), a(i64), a(i64, 2), i64)),
        "polymesh": (
            polymesh._build_kernel,
            (a(i64, 2), a(i64), a(i64), a(i64), a(i64), i64, i64, i64, i64),
        ),
        "detail": (detail._detail_kernel, det),
        "tile_data": (tile._tile_kernel, tdata),
        "bv_tree": (
            _bvtree._subdivide,
            (a(i64, 2), a(i64, 2), i64, a(u16, 2), a(u16, 2), a(T.int32)),
        ),
        # contours, polygon mesh and detail mesh chained (the detail mesh's kernel is
        # the bake's own process's, compiled first there: this loads it from the cache)
        "back_chain": (_chain.back_kernel, back),
    }


#: The kernels the side process of a cold bake compiles (:func:`bake_side`), in order.
#: (The side tags each kernel, and the bake's process waits only for the one it needs
#: next: the side takes the watershed, the bake's process the tile data and the BV
#: tree, which the tile kernel types after the back chain, the side's last kernel;
#: the bake's process was the longer of the two by ~5 CPU s with the halves swapped.)
BAKE_SIDE_KERNELS = (
    "distance", "watershed", "trace", "boundary_flags", "merge_holes", "polymesh", "back_chain",
)  # fmt: skip
#: The kernels the bake's own process compiles ahead of its bake (:func:`compile_bake_front`).
BAKE_FRONT_KERNELS = ("detail", "tile_data", "bv_tree")
#: The same two lists for a cold ``navkit demo`` (``mode="demo"``), whose side process
#: compiles the link and the path's kernels after its half of the bake: the distance
#: field, the tile data and the BV tree are the demo's own process's instead (~4 CPU s),
#: which balances the two processes.
DEMO_SIDE_KERNELS = ("trace", "boundary_flags", "merge_holes", "polymesh", "back_chain")
DEMO_FRONT_KERNELS = ("detail", "watershed", "distance", "tile_data", "bv_tree")
#: ``navkit demo --obstacles`` on two processes (``mode="demo-tc"``): the side process
#: compiles the plain demo's half (the bake's back stages, the links, the path), then
#: the tile cache's layer-to-polygon-mesh kernel (of :func:`_tile_cache_types`) and
#: the tile cache's update kernel itself (:func:`_compile_demo_update`); the demo's
#: process compiles the plain demo's half, the tile cache's swap kernel
#: (:data:`DEMO_TC_FRONT_KERNELS`, while the side finishes the path's kernels; the
#: side's update kernel waits for it and loads it), then builds the tile cache's layers
#: and loads the side's update kernel.
DEMO_TC_SIDE_KERNELS = ("raw_mesh",)
DEMO_TC_FRONT_KERNELS = ("swap_tile_data",)


def _tile_cache_types() -> dict:
    """As :func:`_bake_types`, for the kernels a cold :meth:`TileCache.bake
    <navkit.tilecache.TileCache.bake>` leaves to its side process: the argument types
    the tile cache's update kernel (``_update.update_call_detail``, which builds the
    initial navmesh tiles) passes to them (tests/test_cold_side.py checks that a tile
    cache bake adds no signature)."""
    from numba.core import types as T

    from navkit.detour import _swap
    from navkit.tilecache import _rebuild

    def a(dt, nd=1):
        return T.Array(dt, nd, "C")

    i64, f32, u8, u16, u32 = T.int64, T.float32, T.uint8, T.uint16, T.uint32
    f2 = a(f32, 2)
    raw_mesh = (
        a(u8), T.boolean, a(i64), a(f32), a(i64), a(i64), f2, f2, f2, a(u8), a(i64), a(i64), f2,
        i64, f32, a(f32), a(i64),
    )  # fmt: skip
    # the tile's arrays (rebuild_swap_detail's) and the off-mesh connections
    tile = T.Tuple(
        (
            f2, a(u16, 2), a(u16, 2), a(u16), a(u8), a(u8), a(u32), a(u32), a(u8), a(u8), f2,
            a(u8, 2), a(u16, 2), a(u16, 2), a(T.int32),
        )
    )  # fmt: skip
    offmesh = T.Tuple((f2, a(f32), a(u8), a(u8), a(u16), a(u32)))
    swap = (
        a(i64), a(i64, 2), a(i64), i64, i64, i64, a(f32), a(f32), a(f32), i64, tile, offmesh,
        a(i64), a(i64), i64, a(i64),
    )  # fmt: skip
    # recast-compatible mode (update_call): the polygon mesh alone into the navmesh
    poly_swap = (
        a(i64), a(i64, 2), a(i64), i64, i64, i64, a(f32), a(f32), a(f32), i64, a(i64, 2),
        a(i64, 2), a(i64), a(i64),
    )  # fmt: skip
    return {
        # decompressed layer to polygon mesh (obstacles, regions, contours, polygons)
        "raw_mesh": (_rebuild._raw_mesh, raw_mesh),
        # the tile into the navmesh, its links
        "swap_tile_data": (_swap.swap_tile_data, swap),
        "swap_poly_mesh_tile": (_swap.swap_poly_mesh_tile, poly_swap),
    }


#: The kernels the side process of a cold tile cache bake compiles (``mode="tilecache"``,
#: of :func:`_tile_cache_types`), and those its own process compiles ahead (of
#: :func:`_bake_types`: the ones the tile cache shares with the bake) before it builds
#: the layers.
TILECACHE_SIDE_KERNELS = ("raw_mesh", "swap_tile_data")
TILECACHE_FRONT_KERNELS = ("detail", "tile_data", "bv_tree")
#: A cold tile cache built from its layers alone (:meth:`TileCache.from_recast
#: <navkit.tilecache.TileCache.from_recast>`, :meth:`~navkit.tilecache.TileCache.load`:
#: no layer build to fill the calling process), by side mode: (the side's kernels, the
#: calling process's), of :func:`_tile_cache_kinds`. ``tcload``: recast-compatible mode
#: (``_update.update_call``: the polygon mesh ~14 CPU s to the side, the swap and its
#: links ~9 here, then the update kernel's own ~5); ``tcload-detail``: navkit's mode
#: (``update_call_detail``: the polygon mesh, tile data and BV tree ~20 to the side,
#: the detail mesh and the swap ~16 here, then the update kernel's own ~7).
TILECACHE_LOAD_SPLITS = {
    "tcload": (("raw_mesh",), ("swap_poly_mesh_tile",)),
    "tcload-detail": (("raw_mesh", "tile_data", "bv_tree"), ("detail", "swap_tile_data")),
}


def _tile_cache_kinds() -> dict:
    """:func:`_bake_types` and :func:`_tile_cache_types` in one."""
    return {**_bake_types(), **_tile_cache_types()}


def _compile_as_callee(names, kinds=None, tags: bool = False) -> None:
    """Compile the kernels ``names`` of ``kinds`` (default :func:`_bake_types`) as the
    tile kernel's typing would: for calls from other kernels (no CPython wrapper).
    ``tags`` (the side process): print each kernel's name on stdout once it is
    compiled (or failed: the caller then compiles it itself), for :meth:`BakeSide.hold`."""
    from navkit._jit import _as_callee

    kinds = _bake_types() if kinds is None else kinds
    for name in names:
        disp, sig = kinds[name]
        try:
            with _as_callee():
                disp.compile(sig)
        except Exception:  # noqa: BLE001
            if not tags:
                raise
        if tags:
            print(name, flush=True)


def compile_bake_front(mode: str = "bake") -> None:
    """The bake's own process's part ahead of its bake: the detail mesh (first: the
    side's back chain loads it from the cache), the tile data and the BV tree, and in
    ``mode="demo"`` also the watershed regions and the distance field (the front
    stages it compiles in the bake, ahead of the first kernel of the side's half)."""
    _compile_as_callee(DEMO_FRONT_KERNELS if mode in ("demo", "demo-tc") else BAKE_FRONT_KERNELS)


def compile_demo_tile_front(side: BakeSide) -> None:
    """``navkit demo --obstacles``'s process, done with its bake and picture while its
    ``side`` process (``mode="demo-tc"``) finishes the path's kernels: compile the tile
    cache's swap kernel (:data:`DEMO_TC_FRONT_KERNELS`) for its update kernel's call,
    then tell the side (``swap``), whose compile of the update kernel loads it. A
    failure only means that the side compiles it itself."""
    try:  # (the demo announced its compile already)
        with _unannounced():
            _compile_as_callee(DEMO_TC_FRONT_KERNELS, _tile_cache_types())
    except Exception:  # noqa: BLE001
        pass
    finally:
        side.signal("swap")


def _compile_demo_update() -> None:
    """The side process of ``navkit demo --obstacles``: compile the tile cache's update
    kernel (``_update.update_call_detail``, with the argument types the tile cache's
    Python call passes), whose swap kernel the demo's process compiles meanwhile
    (:func:`compile_demo_tile_front`): the side waits for the demo's ``swap`` line on
    its stdin (or its end) before it types that call, then loads it from the cache."""
    from numba.core import types as T

    from navkit.tilecache import _update

    swap = _tile_cache_types()["swap_tile_data"][0]
    orig = type(swap).compile
    told = [False]

    def compile(sig):  # (numba may ask more than once while it types the call)
        while not told[0]:
            line = sys.stdin.readline()
            told[0] = not line or line.strip() == "swap"
        return orig(swap, sig)

    swap.compile = compile
    try:
        _update.update_call_detail.compile(
            (T.int64, T.int64, T.int64, T.float32, T.Array(T.int64, 1, "C"))
        )
    finally:
        swap.__dict__.pop("compile", None)


def _bake_link_kernels() -> None:
    """The kernels a bake runs after its tile kernel: the bulk link kernel (with the
    argument types ``NavMesh._add_packed`` passes, on no tile) and the link count of
    ``NavMesh.stats``."""
    import numba
    import numpy as np

    from navkit.detour import _links
    from navkit.detour import navmesh as _nm
    from navkit.detour._pool_links import connect_new_tiles

    nm = _nm.NavMesh(
        _nm.NavMeshParams(
            orig=(0.0, 0.0, 0.0), tile_width=1.0, tile_height=1.0, max_tiles=4, max_polys=8
        )
    )
    none = np.zeros(0, np.int64)
    connect_new_tiles(
        nm._kernel_desc(), none, np.zeros(1, np.int64), none, none, nm.tile_bits, nm.poly_bits
    )
    _links.count_links.compile((numba.typeof(nm.arrays()),))


def bake_side(mode: str = "bake") -> None:
    """The side process of a cold bake (``python -m navkit._warmup``): compile
    :data:`BAKE_SIDE_KERNELS` (printing each one's name on stdout once it is cached)
    and print ``back``, then the navmesh's link
    kernels and print ``links``. In ``mode="demo"`` (:data:`DEMO_SIDE_KERNELS`) then
    also the path query's kernels, and print ``path``; in ``mode="demo-tc"`` (``navkit
    demo --obstacles``) then also the tile cache's layer-to-polygon-mesh kernel
    (:data:`DEMO_TC_SIDE_KERNELS`), and print ``tilecache``. Any failure
    only means the bake (or the demo) compiles that part itself."""
    demo = mode in ("demo", "demo-tc")

    def back() -> None:
        _compile_as_callee(DEMO_SIDE_KERNELS if demo else BAKE_SIDE_KERNELS, tags=True)

    def path() -> None:
        compile_path_kernels()

    def tile_cache() -> None:
        _compile_as_callee(TILECACHE_SIDE_KERNELS, _tile_cache_types(), tags=True)

    steps: list[tuple[Callable[[], None], str]] = [(back, "back"), (_bake_link_kernels, "links")]
    if demo:
        steps.append((path, "path"))
    if mode == "demo-tc":

        def demo_tile_cache() -> None:
            _compile_as_callee(DEMO_TC_SIDE_KERNELS, _tile_cache_types(), tags=True)
            _compile_demo_update()
            print("update", flush=True)

        steps.append((demo_tile_cache, "tilecache"))
    if mode == "tilecache":
        steps = [(tile_cache, "tilecache")]
    if mode in TILECACHE_LOAD_SPLITS:

        def tile_cache_load() -> None:
            _compile_as_callee(TILECACHE_LOAD_SPLITS[mode][0], _tile_cache_kinds(), tags=True)

        steps = [(tile_cache_load, "tilecache")]
    if mode == "crowd":

        def crowd() -> None:
            _compile_as_callee(CROWD_SIDE_KERNELS, _crowd_types(), tags=True)

        steps = [(crowd, "crowd")]
    for step, tag in steps:
        try:
            step()
        except Exception:  # noqa: BLE001
            pass
        print(tag, flush=True)


class BakeSide:
    """The running :func:`bake_side` process (a plain ``python -m navkit._warmup``
    subprocess: nothing of the caller's ``__main__`` is imported again). While
    :meth:`hold` is active, a compile of one of the side's kernels in this process
    first waits for the side to have cached it (then numba loads it from the cache).
    ``mode``: "bake" or "demo" (:func:`bake_side`); the caller compiles its own part
    with :func:`compile_bake_front` of the same mode."""

    mode = "bake"
    last = "links"  #: the side's last tag

    def __init__(self, mode: str = "bake") -> None:
        import subprocess

        import navkit

        # this navkit on the side's path when it is not installed (a source tree put on
        # sys.path some other way); an installed one the side finds as this process did
        env = dict(os.environ)
        # the path as this process imported it, symbolic links kept: numba keys a
        # kernel's cache entries to its source file's path, so a side that imported the
        # resolved path would write entries this process never finds
        here = os.path.dirname(os.path.dirname(os.path.abspath(navkit.__file__)))
        if str(Path(here).resolve()) not in _site_dirs():
            env["PYTHONPATH"] = os.pathsep.join(filter(None, (here, env.get("PYTHONPATH"))))
        # (demo-tc: the side waits for the demo's swap kernel: a line on its stdin)
        stdin = subprocess.PIPE if mode == "demo-tc" else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [sys.executable, "-m", "navkit._warmup", "bake-side", mode],
            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )  # fmt: skip
        self.seen: set[str] = set()
        self.mode = mode
        self.last = {
            "demo": "path", "demo-tc": "tilecache", "tilecache": "tilecache", "crowd": "crowd"
        }.get(mode, "links")  # fmt: skip
        if mode in TILECACHE_LOAD_SPLITS:
            self.last = "tilecache"

    def wait(self, tag: str) -> None:
        """Until the side printed ``tag`` (or ended)."""
        import threading

        # (one reader of the side's output at a time: compiles of other threads)
        lock = self.__dict__.setdefault("_lock", threading.Lock())
        with lock:
            out = self.process.stdout
            while tag not in self.seen and out is not None:
                line = out.readline()
                if not line:
                    break
                self.seen.add(line.strip())

    def hold(self, tile_cache: bool = False):
        """A context: the side's kernels compile here only once the side is past them.
        ``tile_cache`` (``mode="demo-tc"``): the tile cache's kernels of the side
        (:data:`DEMO_TC_SIDE_KERNELS`) instead of the bake's."""
        import contextlib

        from navkit.detour import _links, _pool_links

        if tile_cache:
            from navkit.tilecache import _update

            kinds = _tile_cache_types()
            waits = [(kinds[n][0], n) for n in DEMO_TC_SIDE_KERNELS]
            waits.append((_update.update_call_detail, "update"))
        elif self.mode == "tilecache":
            kinds = _tile_cache_types()
            waits = [(kinds[n][0], n) for n in TILECACHE_SIDE_KERNELS]
        elif self.mode == "crowd":
            kinds = _crowd_types()
            waits = [(kinds[n][0], n) for n in CROWD_SIDE_KERNELS]
            waits += [(disp, "requests") for disp in _crowd_requests_callees()]
        elif self.mode in TILECACHE_LOAD_SPLITS:
            kinds = _tile_cache_kinds()
            waits = [(kinds[n][0], n) for n in TILECACHE_LOAD_SPLITS[self.mode][0]]
        else:
            kinds = _bake_types()
            demo = self.mode in ("demo", "demo-tc")
            side = DEMO_SIDE_KERNELS if demo else BAKE_SIDE_KERNELS
            waits = [(kinds[n][0], n) for n in side]  # (each kernel's own tag)
            waits += [(_pool_links.connect_new_tiles, "links"), (_links.count_links, "links")]

        @contextlib.contextmanager
        def held():
            for disp, tag in waits:
                disp.compile = self._waiting(disp, tag)
            _held[0] += 1
            try:
                yield
            finally:
                _held[0] -= 1
                for disp, _tag in waits:
                    disp.__dict__.pop("compile", None)

        return held()

    def _waiting(self, disp, tag: str):
        orig = type(disp).compile

        def compile(sig):
            self.wait(tag)
            return orig(disp, sig)

        return compile

    def signal(self, line: str) -> None:
        """Write ``line`` to the side's stdin (``mode="demo-tc"``: ``swap`` once the
        tile cache's swap kernel is cached); nothing if the side has gone."""
        try:
            if self.process.stdin is not None:
                self.process.stdin.write(line + "\n")
                self.process.stdin.flush()
        except (OSError, ValueError):
            pass

    def close(self, finish: bool = True) -> None:
        """Wait for the side to end (it has nothing left once it printed its last tag,
        ``links``, or ``path`` in demo mode); ``finish=False`` (the bake failed): stop
        it now (numba replaces a cache file in one step, so no entry is left half
        written)."""
        if self.process.stdin is not None:  # (a side waiting for a line: it has none)
            with contextlib.suppress(OSError, ValueError):
                self.process.stdin.close()
        if finish:
            self.wait(self.last)
        try:
            self.process.wait(timeout=60 if finish else 0)
        except Exception:  # noqa: BLE001 - stuck, or not to be waited for
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def _site_dirs() -> set[str]:
    import site

    dirs = [*getattr(site, "getsitepackages", list)(), site.getusersitepackages()]
    return {str(Path(d).resolve()) for d in dirs}


#: Environment variable: ``0`` (or ``off``, ``no``, ``false``) keeps a cold bake's (or
#: tile cache's) compile in the calling process: no side process is started.
SIDE_ENV = "NAVKIT_SIDE_PROCESS"
_held = [0]  #: side holds active in this process (a bake inside one starts no other side)


def _loaded(kernel) -> bool:
    """Whether ``kernel`` is compiled or loaded from the cache in this process already
    (then no side process can help, and nothing else needs checking)."""
    return bool(kernel.overloads)


def side_process_allowed() -> bool:
    """Whether a cold compile may start a side process here: not opted out
    (:data:`SIDE_ENV`), no side of this process already running, a second core, a
    Python interpreter to start (not a frozen application), and not a worker process
    of :mod:`multiprocessing` (a pool already spreads its work over the cores)."""
    import multiprocessing

    if os.environ.get(SIDE_ENV, "").strip().lower() in ("0", "off", "no", "false"):
        return False
    if _held[0] or (os.cpu_count() or 1) < 2 or getattr(sys, "frozen", False):
        return False
    if not sys.executable or not os.path.exists(sys.executable):
        return False
    return multiprocessing.parent_process() is None


def start_bake_side(mode: str = "bake") -> BakeSide | None:
    """Start :func:`bake_side` when the bake's kernels are not cached yet and this
    machine has a second core (None otherwise: a warm bake starts nothing; nor when
    :func:`side_process_allowed` says no)."""
    from navkit import _bake_tiles
    from navkit._jit import is_cached

    if _loaded(_bake_tiles.tiles_kernel):  # warm
        return None
    if not side_process_allowed() or is_cached(_bake_tiles.tiles_kernel) is not False:
        return None
    try:
        return BakeSide(mode)
    except OSError:  # no processes here: the bake compiles everything itself
        return None


# --- navkit ecm: the corridor map's path kernels in a side process ----------------


def ecm_path_signatures() -> list:
    """(kernel, argument types) of the corridor map's path kernels as
    :meth:`CorridorMap.find_path <navkit.ecm.CorridorMap.find_path>` and its picture
    call them (``navkit ecm``): the types of empty arrays of the dtypes the map keeps
    (nothing is compiled or run here). ``tests/test_cli.py`` checks that a real
    ``navkit ecm`` compiles nothing more of these kernels after them."""
    import numba
    import numpy as np

    from navkit.ecm import _kernels as K
    from navkit.ecm import _path_kernels as PK
    from navkit.ecm._diagram import Diagram
    from navkit.ecm._sites import Sites
    from navkit.ecm.path import _MAX_STEP, _Flat

    S = Sites()
    d = Diagram(S, 1e-9)
    st = _Flat(d, 4)
    i1 = np.zeros(1, np.int64)
    f1 = np.zeros(1)
    geo = (d.ev, d.es, d.vx, d.vy, S.kind, S.ax, S.ay, S.bx, S.by)
    flat = (d.shead, d.rv, d.rnext, d.valive, d.veh, d.enx,
            st.off, st.cnt, st.P, st.used, st.emark, st.stamp, st.cbuf, _MAX_STEP)  # fmt: skip
    # start x, y, goal x, y, nearest site and distance of each, radius, preferred
    # radius, use it, two zeros; the route graph (4 CSR arrays, edge ids, weights, nv)
    ends = (0.0, 0.0, 0.0, 0.0, 0, 0.0, 0, 0.0, 0.0, 0.0, False, 0.0, 0.0)
    graph = (i1, i1, i1, i1, i1, f1, 0)

    def types(args) -> tuple:
        return tuple(numba.typeof(a) for a in args)

    return [
        (PK.query, types((*ends, *graph, *geo, *flat))),
        (K.edge_stats, types((i1, *geo))),
        (K.route_csr, types((np.zeros((1, 2), np.int64), 0))),
        (PK.plen, types((np.zeros((1, 2)),))),
        (K.sample_edge, types((0, *geo, _MAX_STEP))),
    ]


def ecm_side() -> None:
    """The side process of a cold ``navkit ecm`` (``python -m navkit._warmup
    ecm-side``): compile :func:`ecm_path_signatures` (into numba's cache) and print
    ``path``. A failure only means that ``navkit ecm`` compiles them itself."""
    for disp, sig in ecm_path_signatures():
        try:
            disp.compile(sig)
        except Exception:  # noqa: BLE001
            pass
    print("path", flush=True)


class EcmSide(BakeSide):
    """The running :func:`ecm_side` process: ``wait("path")`` before the map's first
    path query, then the query loads the side's kernels from numba's cache;
    :meth:`close` as :class:`BakeSide`'s."""

    mode = "ecm"
    last = "path"

    def __init__(self) -> None:  # (BakeSide's start, another command)
        import subprocess

        import navkit

        env = dict(os.environ)
        here = os.path.dirname(os.path.dirname(os.path.abspath(navkit.__file__)))
        if str(Path(here).resolve()) not in _site_dirs():
            env["PYTHONPATH"] = os.pathsep.join(filter(None, (here, env.get("PYTHONPATH"))))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "navkit._warmup", "ecm-side"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env=env,
        )  # fmt: skip
        self.seen: set[str] = set()


def start_ecm_side() -> EcmSide | None:
    """Start :func:`ecm_side` when the path kernels are not cached yet and this
    machine has a second core (None otherwise: a warm ``navkit ecm`` starts nothing; nor
    when :func:`side_process_allowed` says no, e.g. ``NAVKIT_SIDE_PROCESS=0``)."""
    from navkit._jit import is_cached
    from navkit.ecm import _path_kernels as PK

    if not side_process_allowed() or is_cached(PK.query) is not False:
        return None
    try:
        return EcmSide()
    except OSError:  # no processes here: the map's first query compiles them itself
        return None


if __name__ == "__main__" and sys.argv[1:2] == ["ecm-side"]:
    ecm_side()
    sys.stdout.flush()
    os._exit(0)


@contextlib.contextmanager
def _announced_alone(group: str, estimate: str) -> Iterator[None]:
    """Announce ``group``'s compile with ``estimate`` now, and no other group's within
    (the bake's and the navmesh's kernels of a tile cache bake are part of that
    estimate); the groups' compile times then count as before the context."""
    from navkit._jit import announcer

    announcer.announce(group, estimate)
    with _unannounced():
        yield


@contextlib.contextmanager
def _unannounced() -> Iterator[None]:
    """No compile announced within (one was already); the groups' compile times then
    count as before the context."""
    from navkit._jit import announcer

    was, spent = announcer.enabled, dict(announcer.spent)
    announcer.enabled = False
    try:
        yield
    finally:
        announcer.enabled = was
        announcer.spent = spent


@contextlib.contextmanager
def cold_bake() -> Iterator[BakeSide | None]:
    """The context of a library bake through the tile kernel (:func:`navkit.bake`):
    on a cold cache, a :class:`BakeSide` compiles half of the bake's kernels in a
    side process while this one compiles its own half (:func:`compile_bake_front`)
    and bakes (as ``navkit bake`` does). Yields the side, or None (warm cache, one
    core, opted out: :func:`side_process_allowed`), in which case nothing is
    started and nothing is announced. The side is stopped if the body fails, and
    waited for (its link kernels) otherwise."""
    side = start_bake_side()
    if side is None:
        yield None
        return
    try:
        with side.hold(), _announced_alone("bake", "~30 s on two cores"):
            compile_bake_front()
            yield side
    except BaseException:
        side.close(finish=False)
        raise
    side.close()


@contextlib.contextmanager
def cold_tile_cache() -> Iterator[BakeSide | None]:
    """:func:`cold_bake` for :meth:`TileCache.bake <navkit.tilecache.TileCache.bake>`
    (navkit's default mode, no executor): on a cold cache a side process compiles the
    update kernel's layer-to-polygon-mesh and tile-swap kernels
    (:data:`TILECACHE_SIDE_KERNELS`) while this one compiles the detail mesh, the tile
    data and the BV tree, builds the layers (their kernels), then types the update
    kernel, which loads the side's kernels from the cache."""
    from navkit.tilecache import _update

    side = _cold_side(_update.update_call_detail, "tilecache")
    if side is None:
        yield None
        return
    try:
        with side.hold(), _announced_alone("tile-cache", "~30 s on two cores"):
            _compile_as_callee(TILECACHE_FRONT_KERNELS)
            yield side
    except BaseException:
        side.close(finish=False)
        raise
    side.close()


def _cold_side(kernel, mode: str) -> BakeSide | None:
    """A side process in ``mode`` when ``kernel`` is neither loaded nor cached and a side
    may start here (:func:`side_process_allowed`); else None."""
    from navkit._jit import is_cached

    if _loaded(kernel) or not side_process_allowed() or is_cached(kernel) is not False:
        return None
    try:
        return BakeSide(mode)
    except OSError:
        return None


@contextlib.contextmanager
def cold_tile_cache_load(compatible: bool) -> Iterator[BakeSide | None]:
    """:func:`cold_tile_cache` for a tile cache whose navmesh is built from layers it
    has already (:meth:`TileCache.from_recast <navkit.tilecache.TileCache.from_recast>`,
    :meth:`~navkit.tilecache.TileCache.load`, a ``TileCache(tset)``): on a cold cache
    a side process compiles part of the update kernel's callees
    (:data:`TILECACHE_LOAD_SPLITS`, by mode: ``compatible`` is the cache's
    ``recast_compatible``) while this one compiles the rest, then types the update
    kernel, which loads the side's kernels from the cache. Yields the side or None
    (warm, one core, opted out, inside another side's hold: a ``TileCache.bake``
    has its own); the side is stopped if the body fails."""
    from navkit.tilecache import _update

    kernel = _update.update_call if compatible else _update.update_call_detail
    mode = "tcload" if compatible else "tcload-detail"
    side = _cold_side(kernel, mode)
    if side is None:
        yield None
        return
    try:
        with side.hold(), _announced_alone("tile-cache", "~20 s on two cores"):
            _compile_as_callee(TILECACHE_LOAD_SPLITS[mode][1], _tile_cache_kinds())
            yield side
    except BaseException:
        side.close(finish=False)
        raise
    side.close()


# --- a crowd's first update on two cores ------------------------------------------------
# A dtcrowd-mode crowd's update is one kernel (navkit.crowd.step.step_desc), whose
# compile is ~27 CPU s: numba compiles the step's phase kernels (link=False) as it types
# the step's calls of them. On a cold cache a ``Crowd`` starts a side process when it
# is made (:func:`start_crowd_side`), which compiles the move requests and path queue
# (``requests_desc``, with the sliced A* kernels) and the corners phase
# (:data:`CROWD_SIDE_KERNELS`); the crowd's first update (:func:`cold_crowd`) compiles
# the other large phases (:data:`CROWD_FRONT_KERNELS`) and then types the step, which
# loads the side's kernels from the cache. The argument types are the step's: every
# array is one of :data:`navkit.crowd.step.STEP_SPEC`'s (C-contiguous), the scalars are
# the step's (tests/test_cold_side.py checks that an update adds no signature).


def _crowd_types() -> dict:
    """As :func:`_bake_types`, for the phase kernels the crowd's step kernel
    (``navkit.crowd.step.step``) calls: {name: (dispatcher, argument types)}."""
    import numpy as np
    from numba.core import types as T
    from numba.np import numpy_support

    from navkit.crowd import step as S

    arr = {n: T.Array(numpy_support.from_dtype(np.dtype(dt)), nd, "C") for n, dt, nd in S.STEP_SPEC}
    i64, f32 = T.int64, T.float32

    def args(*names) -> tuple:
        return tuple(arr[n] if isinstance(n, str) else n for n in names)

    validity = (
        "d", "flags_table", "act", "walking", "query_filter", "target_state", "target_ref",
        "target_replan_time", "c_path", "c_npath",
    )  # fmt: skip
    # nch, ..., inv_cell, ..., the grid's pool head, ...
    neighbours = (
        i64, "d", "tiny_ds", "flags_table", "act", "walking", "c_path", "npos", "height",
        "collision_query_range", "radius", "query_filter", "b_center", "b_segs", "b_seg_d",
        "b_nsegs", "b_polys", "b_npolys", f32, "buckets", "items", "lo", i64, "neis",
        "nei_dist", "nneis", "costs_table", "target_state", "update_flags",
        "path_optimization_range", "c_pos", "c_target", "c_npath", "corner_verts",
        "corner_flags", "corner_polys", "ncorners",
    )  # fmt: skip
    corners = (
        "d", "flags_table", "costs_table", "act", i64, "walking", "target_state",
        "update_flags", "query_filter", "path_optimization_range", "c_pos", "c_target",
        "c_path", "c_npath", "corner_verts", "corner_flags", "corner_polys", "ncorners",
    )  # fmt: skip
    plan = (
        "act", i64, "walking", "update_flags", "npos", "radius", "vel", "dvel",
        "desired_speed", "neis", "nneis", "b_segs", "b_nsegs", "avoidance_type", "fp", "ip",
        "nvel", "nsamples",
    )  # fmt: skip
    move = (
        "d", "tiny_ds", "flags_table", "act", i64, "walking", "target_state", "query_filter",
        "npos", "c_pos", "c_target", "c_path", "c_npath",
    )  # fmt: skip
    return {
        "validity": (S.path_validity_kernel, args(*validity, f32)),  # (dt: float32)
        # move requests and the path queue: requests_desc(rd, max_iters, queue_cap, 3)
        "requests": (S.requests_desc, (arr["d"], i64, i64, i64)),
        "neighbours": (S._neighbours_s, args(*neighbours)),
        "corners": (S.corners_kernel, args(*corners)),
        "plan": (S.plan_velocities, args(*plan)),
        "move": (S.move_kernel, args(*move)),
    }


def _crowd_requests_callees() -> list:
    """The kernels ``requests_desc`` compiles on its own (link=False) that the step
    also calls (its topology optimisation's sliced search): while the crowd's side is
    held, they load once the side printed ``requests``."""
    from navkit.crowd import step as S
    from navkit.detour import _search

    return [
        S.requests_kernel, _search.sliced_init, _search.sliced_update,
        _search.sliced_finalize, _search.sliced_finalize_partial,
    ]  # fmt: skip


#: The phase kernels the side process of a crowd's cold first update compiles
#: (``mode="crowd"``, of :func:`_crowd_types`; ~13 CPU s with the sliced A* kernels
#: ``requests_desc`` links) and those the crowd's own process compiles ahead of the step
#: in its first update (~11 CPU s; then the step's own typing and its small phases, ~4).
#: The side starts when the crowd is made, so it has a head start.
CROWD_SIDE_KERNELS = ("requests", "corners")
CROWD_FRONT_KERNELS = ("validity", "neighbours", "move", "plan")


def start_crowd_side() -> BakeSide | None:
    """A side process for a crowd's first update (``mode="crowd"``) when the step kernel
    is neither loaded nor cached and :func:`side_process_allowed`; else None."""
    from navkit.crowd import step

    return _cold_side(step.step_desc, "crowd")


@contextlib.contextmanager
def cold_crowd(side: BakeSide | None, fused: bool = True) -> Iterator[None]:
    """The context of a crowd's first update with the ``side`` its constructor started
    (:func:`start_crowd_side`; None: nothing to do): hold the side, compile
    :data:`CROWD_FRONT_KERNELS` here, run the update (whose step loads the side's
    kernels), then wait for the side's end. The side is stopped if the update fails,
    or at once when the update does not run the step (``fused`` False: its phases are
    called from Python, with other signatures)."""
    if side is None:
        yield
        return
    if not fused:
        side.close(finish=False)
        yield
        return
    try:
        with side.hold(), _announced_alone("crowd", "~15 s on two cores"):
            _compile_as_callee(CROWD_FRONT_KERNELS, _crowd_types())
            yield
    except BaseException:
        side.close(finish=False)
        raise
    side.close()


if __name__ == "__main__" and sys.argv[1:2] == ["bake-side"]:
    bake_side(*sys.argv[2:3])
    # every cache file is written: skip the interpreter's teardown of the compiled
    # kernels (seconds under load), which the bake's process would wait for
    sys.stdout.flush()
    os._exit(0)
