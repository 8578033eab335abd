"""NavMeshQuery's local queries and straight-path options against the real Detour.

``detour_queries.mjs`` (beside this file) runs the same list of queries with Detour
(``@recast-navigation/core`` 0.43.1, WebAssembly, the peer's ``node_modules``) on
Recast's own exported navmeshes (``<mesh>.solo.navmesh.bin`` and
``<mesh>.tiled.navmesh.bin`` for dungeon, nav_test and undulating); this module runs
them with navkit and compares result by result: refs, parents, counts, flags and
status words exactly, positions within 1e-4 [wu], t / costs / heights within 1e-5
(relative for costs). Detour's answers are cached under ``.scratch/detour_local``
(keyed by the script, the queries and the navmesh bytes).

Before the queries both sides change the polygons' areas and flags the same way
(``dtNavMesh::setPolyArea`` / ``setPolyFlags``: areas 0..4, some polygons with flag
4), since Recast's bakes give every polygon area 0 and flags 1, which would leave
area crossings and filters untested. Inputs come from the peer's ``<mesh>.pairs.json``
start/end points (the first :data:`N_PAIRS`), deterministic per pair index. Two more
cases: dungeon's solo and tiled exports with linked off-mesh connections (pairs across
each connection, so corners carry DT_STRAIGHTPATH_OFFMESH_CONNECTION), and nav_test's
path, move and circle searches again with a 24-node pool (DT_OUT_OF_NODES, partial
corridors).

Compared (Detour function: what is compared):

- findNearestPoly: ref, point, over-poly flag (default and filtering filter, small box);
- the pair flow findNearestPoly x2 -> findPath -> closestPointOnPoly (partial) ->
  findStraightPath with options 0, DT_STRAIGHTPATH_AREA_CROSSINGS and
  DT_STRAIGHTPATH_ALL_CROSSINGS, with ``maxStraightPath`` limits (2..7 points) and
  ``maxPath`` limits, with the default filter and with a non-default one (exclude
  flag 4, area costs 1, 1.5, 3, 0.75, 10): corridor, status, points, flags, refs;
- findPath alone with the non-default filter from refs found without it (the start
  polygon may fail the filter), maxPath 64..256: corridor and status;
- findStraightPath from/to points 1.6..4.8 m off the corridor's end polygons (Detour
  clamps them with closestPointOnPolyBoundary, which is thereby compared too);
- moveAlongSurface: result position, visited refs (maxVisitedSize 16 and 4..8), status;
- findPolysAroundCircle: refs, parents, costs, status (max 256 and 3);
- queryPolygons: refs in order, status (max 256 and 1..5);
- closestPointOnPoly: point, over-poly flag (own polygon and unrelated polygons);
- getPolyHeight: height, or failure outside the polygon;
- raycast with options 0 and DT_RAYCAST_USE_COSTS (with prevRef): t, hit edge,
  hit normal, path cost, status.

Outputs Detour leaves unwritten are not compared as values: findNearestPoly's point and
over flag when no polygon is found (navkit gives the center and False), and the
raycast's hitEdgeIndex when the ray misses the start polygon (the script presets -1,
navkit's value for "no edge"). At the time of writing every compared value is
bit-identical to Detour's, well inside the tolerances.

Random points: the binding hands Detour its own ``FastRand`` (an LCG whose seed
``setRandomSeed`` sets), so :class:`_FastRand` gives navkit the same sequence through
the public ``rng`` argument. findRandomPointAroundCircle is compared on every case;
findRandomPoint only on the solo exports (Detour draws one number per tile to pick a
tile uniformly, then one per polygon of that tile; navkit deliberately picks
area-weighted over the whole mesh, which equals Detour's draw sequence, minus the
first number, only when there is one tile). :data:`OUTLINE_SEEDS` add draws that land
on a polygon's outline.

Not exposed by the binding (``NavMeshQuery`` in ``@recast-navigation/wasm``'s IDL has
only findPath, closestPointOnPoly, findClosestPoint, findStraightPath, findNearestPoly,
findPolysAroundCircle, queryPolygons, raycast, findRandomPoint(AroundCircle),
moveAlongSurface, getPolyHeight; ``dtLocalBoundary`` only ``reset``), so not compared
here: findDistanceToWall, getPolyWallSegments, findPolysAroundShape,
findLocalNeighbourhood, closestPointOnPolyBoundary on its own (it is compared through
findStraightPath's clamping, above), the sliced find-path and the raycast's visited
path (``dtRaycastHit`` is created with no path buffer and JS cannot attach one, so only
its status bit BUFFER_TOO_SMALL is compared, with navkit's ``max_path=0``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from _detour_cases import LINKED_OFFMESH, linked_offmesh_exports
from peer_support import SCRATCH, peer_file, peer_workdir

from navkit.detour.filter import QueryFilter
from navkit.detour.navmesh import NavMesh
from navkit.detour.query import FAILURE, NavMeshQuery

MESHES = ("dungeon", "nav_test", "undulating")
KINDS = ("solo", "tiled")
N_PAIRS = 150
HE = [2.0, 4.0, 2.0]
SCRIPT = Path(__file__).with_name("detour_queries.mjs")
#: Per-area costs of the non-default filter (areas 0..4), which also excludes flag 4.
COSTS = [1.0, 1.5, 3.0, 0.75, 10.0]
FILTERS = {"costly": {"include": 0xFFFF, "exclude": 4, "costs": COSTS}}
#: FastRand seeds whose findRandomPoint draw lands on the chosen polygon's outline on the
#: solo exports (getPolyHeight fails there; Detour keeps the point, projected with
#: closestPointOnPoly).
OUTLINE_SEEDS = {"dungeon": [5119, 12761, 16586], "nav_test": [374, 7374],
                 "undulating": [19155, 28699]}  # fmt: skip
POS_TOL = 1e-4
VAL_TOL = 1e-5


def _navkit_filter(name: str | None) -> QueryFilter | None:
    if name is None:
        return None
    f = FILTERS[name]
    return QueryFilter(f["include"], f["exclude"], f["costs"])


def _poly_setup(nm: NavMesh) -> list[list[int]]:
    """Areas 0..4 and flags (1, plus 2 on area 2, plus 4 on every 9th polygon) by index."""
    out = []
    for k, ref in enumerate(nm.poly_refs()):
        area = (k * 7 + k // 5) % 5
        flags = 1 | (2 if area == 2 else 0) | (4 if k % 9 == 4 else 0)
        out.append([int(ref), flags, area])
    return out


def _f32(v) -> list[float]:
    return [float(x) for x in np.asarray(v, np.float32)]


def _toward(s: np.ndarray, e: np.ndarray, dist: float) -> list[float]:
    d = (e - s).astype(np.float64)
    n = float(np.hypot(d[0], d[2]))
    t = 1.0 if n <= dist else dist / n
    return _f32(s + d * t)


class _FastRand(np.random.Generator):
    """A numpy Generator whose ``random`` yields the binding's ``FastRand`` sequence: the
    LCG seed = 214013 * seed + 2531011 (32-bit), value ((seed >> 16) & 0x7fff) / 32767.0f
    (``FastRand::r01``, the frand the binding hands to Detour's random queries)."""

    def __init__(self, seed: int, skip: int = 0) -> None:
        super().__init__(np.random.PCG64(0))
        self._state = seed & 0xFFFFFFFF
        for _ in range(skip):
            self._next()

    def _next(self) -> np.float32:
        self._state = (214013 * self._state + 2531011) & 0xFFFFFFFF
        return np.float32((self._state >> 16) & 0x7FFF) / np.float32(32767.0)

    def random(self, size=None, dtype=np.float64, out=None):  # type: ignore[override]
        n = 1 if size is None else int(size)
        return np.array([self._next() for _ in range(n)], np.float32)


def _offmesh_pairs() -> list[dict]:
    """Pairs across each linked off-mesh connection of dungeon (both ways), a little off its
    end points, so that corridors take the connection."""
    out = []
    for c in LINKED_OFFMESH:
        a, b = np.asarray(c["start"], np.float32), np.asarray(c["end"], np.float32)
        for k, (dx, dz) in enumerate([(0.0, 0.0), (0.4, -0.3), (-0.5, 0.2), (0.2, 0.5)]):
            off = np.array([dx, 0.0, dz], np.float32)
            out.append({"start": (a + off).tolist(), "end": (b - off).tolist()})
            if c["bidirectional"] or k % 2:
                out.append({"start": (b + off).tolist(), "end": (a - off).tolist()})
    return out


def _queries(
    nm: NavMesh, q: NavMeshQuery, pairs: list[dict], *, small: bool, solo: bool
) -> list[dict]:
    """The query list; with ``small`` (a query object with a tiny node pool) only the
    searches that use the pool: paths, moves and circle searches."""
    refs = nm.poly_refs()
    out: list[dict] = []
    for i, p in enumerate(pairs):
        s = np.asarray(p["start"], np.float32)
        e = np.asarray(p["end"], np.float32)
        sl, el = _f32(s), _f32(e)
        sref = q.find_nearest_poly(s, HE).ref
        other = int(refs[(i * 13) % len(refs)])
        flt = "costly" if i % 2 else None
        out += [
            {"op": "nearest", "c": sl, "he": HE},
            {"op": "nearest", "c": el, "he": HE, "f": "costly"},
            {"op": "nearest", "c": el, "he": [0.3, 0.5, 0.3]},
        ]
        for opts in (0, 1, 2):
            out.append({"op": "path", "s": sl, "e": el, "he": HE, "maxPath": 256,
                        "opts": opts, "maxPts": 256})  # fmt: skip
        out += [
            {"op": "path", "s": sl, "e": el, "he": HE, "maxPath": 256, "opts": i % 3,
             "maxPts": 2 + i % 6},
            {"op": "path", "s": sl, "e": el, "he": HE, "maxPath": 256, "opts": i % 3,
             "maxPts": 256, "f": "costly"},
            {"op": "path", "s": sl, "e": el, "he": HE, "maxPath": 3 + i % 8, "opts": 2 - i % 3,
             "maxPts": 3 + i % 4, "f": flt},
        ]  # fmt: skip
        if not sref:
            continue
        short = _toward(s, e, 1.0 + (i % 10) * 1.5)
        eref = q.find_nearest_poly(e, HE).ref
        if eref and not small:
            # start and end off the corridor's end polygons: findStraightPath clamps them
            # with closestPointOnPolyBoundary
            corridor = [int(r) for r in q.find_path(sref, eref, s, e).polys]
            shift = np.array([1.3, 0.4, -0.9], np.float32) * np.float32(1 + i % 3)
            out.append({"op": "straight", "s": _f32(s + shift), "e": _f32(e - shift),
                        "polys": corridor, "opts": i % 3, "maxPts": 256})  # fmt: skip
            # refs found without the filter, searched with it (the start may fail it)
            out.append({"op": "findPath", "sref": sref, "eref": eref, "s": sl, "e": el,
                        "f": "costly", "maxPath": 64 + i % 3 * 96})  # fmt: skip
        if small:
            out += [
                {"op": "move", "ref": sref, "s": sl, "e": el, "maxVisited": 16, "f": flt},
                {"op": "circle", "ref": sref, "c": sl, "r": 2.0 + i % 12, "max": 256, "f": flt},
            ]  # fmt: skip
            continue
        out += [
            {"op": "move", "ref": sref, "s": sl, "e": short, "maxVisited": 16, "f": flt},
            {"op": "move", "ref": sref, "s": sl, "e": el, "maxVisited": 4 + i % 5},
            {"op": "move", "ref": sref, "s": short, "e": el, "maxVisited": 16},
            {"op": "circle", "ref": sref, "c": sl, "r": 1.0 + i % 8, "max": 256, "f": flt},
            {"op": "circle", "ref": sref, "c": short, "r": 4.5, "max": 3},
            {"op": "qpolys", "c": sl, "he": HE, "max": 256, "f": flt},
            {"op": "qpolys", "c": el, "he": [6.0, 6.0, 6.0], "max": 1 + i % 5},
            {"op": "cpop", "ref": sref, "p": el},
            {"op": "cpop", "ref": sref, "p": sl},
            {"op": "cpop", "ref": other, "p": sl},
            {"op": "height", "ref": sref, "p": sl},
            {"op": "height", "ref": sref, "p": short},
            {"op": "height", "ref": other, "p": el},
            {"op": "raycast", "ref": sref, "s": sl, "e": el, "opts": 0, "prev": 0, "f": flt},
            {"op": "raycast", "ref": sref, "s": sl, "e": short, "opts": 1, "prev": 0},
            {"op": "raycast", "ref": sref, "s": sl, "e": el, "opts": 1, "prev": other,
             "f": "costly"},
            {"op": "randomCircle", "seed": 5000 + 7 * i, "ref": sref, "c": sl,
             "r": 1.0 + i % 9, "f": flt},
        ]  # fmt: skip
        if solo:
            out.append({"op": "random", "seed": 1000 + 7 * i, "f": flt})
    return out


def _detour(navfile: Path, spec: dict) -> list[dict]:
    """Detour's results for ``spec`` on ``navfile`` (cached under .scratch/detour_local)."""
    text = json.dumps(spec, sort_keys=True)
    h = hashlib.sha1()
    for part in (SCRIPT.read_bytes(), text.encode(), navfile.read_bytes()):
        h.update(hashlib.sha1(part).digest())
    cache = SCRATCH / "detour_local" / f"{navfile.stem}.{h.hexdigest()[:16]}.json"
    if not cache.exists():
        if shutil.which("node") is None:
            pytest.skip("node is not available to run Detour")
        work = peer_workdir()
        cache.parent.mkdir(parents=True, exist_ok=True)
        qfile = cache.with_suffix(".queries.json")
        qfile.write_text(text)
        r = subprocess.run(["node", str(SCRIPT), str(navfile), str(qfile)], cwd=work,
                           capture_output=True, text=True)  # fmt: skip
        qfile.unlink()
        if r.returncode != 0:
            pytest.fail(f"detour_queries.mjs failed: {r.stderr[-500:]}")
        cache.write_text(r.stdout)
    return json.loads(cache.read_text())["results"]


@functools.cache
def _case(mesh: str, kind: str):
    """(navkit query, queries, Detour's results) for a case: ``<mesh>``, ``<mesh>+offmesh``
    (Recast's export with :data:`LINKED_OFFMESH`) or ``<mesh>+nodes<N>`` (maxNodes N)."""
    name, _, variant = mesh.partition("+")
    pairs = json.loads(peer_file(f"{name}.pairs.json").read_text())["pairs"][:N_PAIRS]
    max_nodes = 2048
    if variant == "offmesh":
        solo, tiled = linked_offmesh_exports()
        navfile = SCRATCH / "detour_offmesh" / f"{name}.linked.{kind}.bin"
        assert navfile.read_bytes() == (solo if kind == "solo" else tiled)
        pairs = _offmesh_pairs() + pairs[:40]
    else:
        navfile = peer_file(f"{name}.{kind}.navmesh.bin")
        if variant:
            max_nodes = int(variant.removeprefix("nodes"))
    nm = NavMesh.from_recast(navfile)
    setup = _poly_setup(nm)
    for ref, flags, area in setup:
        nm.set_poly_flags(ref, flags)
        nm.set_poly_area(ref, area)
    q = NavMeshQuery(nm, max_nodes=max_nodes)
    queries = _queries(nm, q, pairs, small=max_nodes < 2048, solo=kind == "solo")
    if kind == "solo" and not variant:
        queries += [{"op": "random", "seed": sd} for sd in OUTLINE_SEEDS[name]]
    spec = {"maxNodes": max_nodes, "polys": setup, "filters": FILTERS, "queries": queries}
    return q, queries, _detour(navfile, spec)


# -- navkit's side of each op, in Detour's output shape --------------------------------------
def _nearest(q, c, he, f):
    r = q.find_nearest_poly(c, he, _navkit_filter(f))
    return {"status": r.status, "ref": r.ref, "point": r.point, "over": r.over_poly}


def _path(q, x):
    f = _navkit_filter(x.get("f"))
    ns, ne = _nearest(q, x["s"], x["he"], x.get("f")), _nearest(q, x["e"], x["he"], x.get("f"))
    res: dict = {"start": ns, "end": ne}
    if not ns["ref"] or not ne["ref"]:
        return res
    fp = q.find_path(ns["ref"], ne["ref"], x["s"], x["e"], f, max_path=x["maxPath"])
    polys = [int(r) for r in fp.polys]
    res["findPath"] = {"status": fp.status, "polys": polys}
    if not polys:
        return res
    endp = np.asarray(x["e"], np.float32)
    if polys[-1] != ne["ref"]:
        endp, _ = q.closest_point_on_poly(polys[-1], endp)
    res["endPos"] = endp
    sp = q.find_straight_path(x["s"], endp, fp.polys, options=x["opts"], max_points=x["maxPts"])
    res["straight"] = {"status": sp.status, "points": sp.points, "flags": sp.flags.tolist(),
                       "refs": [int(r) for r in sp.refs]}  # fmt: skip
    return res


def _navkit(q: NavMeshQuery, x: dict) -> dict:
    op, f = x["op"], _navkit_filter(x.get("f"))
    if op == "nearest":
        return _nearest(q, x["c"], x["he"], x.get("f"))
    if op == "path":
        return _path(q, x)
    if op == "straight":
        sp = q.find_straight_path(x["s"], x["e"], x["polys"], x["opts"], x["maxPts"])
        return {"status": sp.status, "points": sp.points, "flags": sp.flags.tolist(),
                "refs": [int(r) for r in sp.refs]}  # fmt: skip
    if op == "findPath":
        fp = q.find_path(x["sref"], x["eref"], x["s"], x["e"], f, max_path=x["maxPath"])
        return {"status": fp.status, "polys": [int(r) for r in fp.polys]}
    if op == "move":
        m = q.move_along_surface(x["ref"], x["s"], x["e"], f, max_visited=x["maxVisited"])
        return {"status": m.status, "pos": m.position, "visited": [int(r) for r in m.visited]}
    if op == "circle":
        c = q.find_polys_around_circle(x["ref"], x["c"], x["r"], f, max_result=x["max"])
        return {"status": c.status, "refs": [int(r) for r in c.refs],
                "parents": [int(r) for r in c.parents], "costs": c.costs}  # fmt: skip
    if op == "qpolys":
        refs, st = q.query_polygons(x["c"], x["he"], f, max_polys=x["max"])
        return {"status": st, "refs": [int(r) for r in refs]}
    if op == "cpop":
        pt, over = q.closest_point_on_poly(x["ref"], x["p"])
        return {"point": pt, "over": over}
    if op == "height":
        return {"height": q.get_poly_height(x["ref"], x["p"])}
    if op == "random":
        # Detour first draws one number to pick a tile (one tile here), then one per polygon
        rp = q.find_random_point(f, rng=_FastRand(x["seed"], skip=1))
        return {"ref": rp.ref, "point": rp.point}
    if op == "randomCircle":
        rp = q.find_random_point_around_circle(x["ref"], x["c"], x["r"], f,
                                               rng=_FastRand(x["seed"]))  # fmt: skip
        return {"ref": rp.ref, "point": rp.point}
    if op == "raycast":
        r = q.raycast(x["ref"], x["s"], x["e"], f, options=x["opts"], prev_ref=x["prev"],
                      max_path=0)  # fmt: skip
        return {"status": r.status, "t": r.t, "edge": r.hit_edge_index, "cost": r.path_cost,
                "normal": r.hit_normal}  # fmt: skip
    raise AssertionError(op)


# -- comparison ------------------------------------------------------------------------------
def _close_pts(a, b) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and (a.size == 0 or float(np.abs(a - b).max()) <= POS_TOL)


def _close_val(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= VAL_TOL * max(1.0, abs(b))


def _diff(x: dict, ours: dict, det: dict) -> str | None:
    """A description of the first difference, or None when navkit gives Detour's result."""
    op = x["op"]
    if op == "nearest":
        if ours["ref"] != det["ref"]:
            return f"ref {ours['ref']} vs {det['ref']}"
        if not det["ref"]:  # Detour leaves the point and the over flag unwritten
            return None
        if ours["over"] != det["over"]:
            return f"ref/over {ours['ref']},{ours['over']} vs {det['ref']},{det['over']}"
        return None if _close_pts(ours["point"], det["point"]) else "nearest point"
    if op == "path":
        for k in ("start", "end"):
            d = _diff({"op": "nearest"}, ours[k], det[k])
            if d:
                return f"{k} {d}"
        if ("findPath" in ours) != ("findPath" in det):
            return "findPath ran on one side only"
        if "findPath" not in det:
            return None
        if ours["findPath"] != det["findPath"]:
            a, b = ours["findPath"], det["findPath"]
            return f"corridor ({len(a['polys'])} vs {len(b['polys'])}, "\
                   f"status {a['status']:#x} vs {b['status']:#x})"  # fmt: skip
        if "straight" not in det:
            return None
        if not _close_pts(ours["endPos"], det["endPos"]):
            return "end position"
        return _diff({"op": "straight"}, ours["straight"], det["straight"])
    if op == "straight":
        a, b = ours, det
        if a["status"] != b["status"]:
            return f"straight status {a['status']:#x} vs {b['status']:#x}"
        if not _close_pts(a["points"], b["points"]):
            return f"straight points ({len(a['points'])} vs {len(b['points'])})"
        if a["flags"] != b["flags"] or a["refs"] != b["refs"]:
            return f"straight flags/refs {a['flags']} {a['refs']} vs {b['flags']} {b['refs']}"
        return None
    if op == "move":
        if (ours["status"], ours["visited"]) != (det["status"], det["visited"]):
            return f"status/visited {ours['status']:#x} {ours['visited']} vs "\
                   f"{det['status']:#x} {det['visited']}"  # fmt: skip
        return None if _close_pts(ours["pos"], det["pos"]) else "position"
    if op == "circle":
        if (ours["status"], ours["refs"], ours["parents"]) != (
            det["status"], det["refs"], det["parents"]
        ):  # fmt: skip
            return f"status/refs/parents {ours['status']:#x} {ours['refs']} {ours['parents']} "\
                   f"vs {det['status']:#x} {det['refs']} {det['parents']}"  # fmt: skip
        ok = all(_close_val(float(a), b) for a, b in zip(ours["costs"], det["costs"]))
        return None if ok else "costs"
    if op in ("qpolys", "findPath"):
        if ours == det:
            return None
        key = "polys" if op == "findPath" else "refs"
        return (
            f"status {ours['status']:#x} vs {det['status']:#x}, "
            f"refs {ours[key][:8]}... vs {det[key][:8]}..."
        )
    if op == "cpop":
        if det["status"] & FAILURE or ours["over"] != det["over"]:
            return f"over {ours['over']} vs {det['over']} (status {det['status']:#x})"
        return None if _close_pts(ours["point"], det["point"]) else "closest point"
    if op == "height":
        h = ours["height"]
        if det["status"] & FAILURE:
            return None if h is None else f"height {h} where Detour fails"
        return None if h is not None and _close_val(h, det["height"]) else f"height {h}"
    if op in ("random", "randomCircle"):
        if det["status"] & FAILURE:  # Detour leaves the ref and point unwritten
            return None if ours["ref"] == 0 else f"ref {ours['ref']} where Detour fails"
        if ours["ref"] != det["ref"]:
            return f"ref {ours['ref']} vs {det['ref']}"
        return None if _close_pts(ours["point"], det["point"]) else "random point"
    if op == "raycast":
        t = det["t"]
        t = np.inf if t >= 3.4e38 else t
        if (ours["status"], ours["edge"]) != (det["status"], det["edge"]):
            return f"status/edge {ours['status']:#x},{ours['edge']} vs "\
                   f"{det['status']:#x},{det['edge']}"  # fmt: skip
        if not (ours["t"] == t or abs(ours["t"] - t) <= VAL_TOL):
            return f"t {ours['t']} vs {t}"
        if not _close_val(ours["cost"], det["cost"]):
            return f"cost {ours['cost']} vs {det['cost']}"
        return None if _close_pts(ours["normal"], det["normal"]) else "normal"
    raise AssertionError(op)


def _compare(mesh: str, kind: str, ops: tuple[str, ...]) -> int:
    q, queries, results = _case(mesh, kind)
    assert len(results) == len(queries)
    bad: list[str] = []
    n = 0
    for k, (x, det) in enumerate(zip(queries, results)):
        if x["op"] not in ops:
            continue
        n += 1
        d = _diff(x, _navkit(q, x), det)
        if d:
            bad.append(f"#{k} {x['op']}{'/' + x['f'] if x.get('f') else ''}: {d}")
    assert n > 0
    assert not bad, f"{mesh}.{kind}: {len(bad)} of {n} differ:\n" + "\n".join(bad[:12])
    return n


#: Recast's exports of the three meshes, dungeon with linked off-mesh connections, and the
#: searches again with a 24-node pool (OUT_OF_NODES, partial corridors).
CASES = [(m, k) for m in (*MESHES, "dungeon+offmesh") for k in KINDS]
SEARCH_CASES = CASES + [("nav_test+nodes24", k) for k in KINDS]


@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "kind"), SEARCH_CASES)
def test_nearest_and_paths_with_straight_path_options_match_detour(mesh, kind):
    _compare(mesh, kind, ("nearest", "path", "straight", "findPath"))


@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "kind"), SEARCH_CASES)
def test_move_along_surface_matches_detour(mesh, kind):
    _compare(mesh, kind, ("move",))


@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "kind"), SEARCH_CASES)
def test_polys_around_circle_and_query_polygons_match_detour(mesh, kind):
    _compare(mesh, kind, ("circle", "qpolys"))


@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "kind"), CASES)
def test_closest_point_and_height_match_detour(mesh, kind):
    _compare(mesh, kind, ("cpop", "height"))


@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "kind"), CASES)
def test_raycast_with_costs_matches_detour(mesh, kind):
    _compare(mesh, kind, ("raycast",))


@pytest.mark.peer
@pytest.mark.parametrize(("mesh", "kind"), CASES)
def test_random_points_with_the_bindings_generator_match_detour(mesh, kind):
    _compare(mesh, kind, ("random", "randomCircle"))


@pytest.mark.peer
def test_inputs_exercise_the_options():
    """The inputs reach the cases they are meant to test (on dungeon's solo navmesh)."""
    _, queries, results = _case("dungeon", "solo")
    paths = [(x, r) for x, r in zip(queries, results) if x["op"] == "path" and "straight" in r]
    n_pts = {o: [len(r["straight"]["points"]) for x, r in paths
                 if x["opts"] == o and x["maxPts"] == 256 and not x.get("f")]
             for o in (0, 1, 2)}  # fmt: skip
    assert sum(n_pts[1]) > sum(n_pts[0]) and sum(n_pts[2]) > sum(n_pts[1])
    assert any(r["straight"]["status"] & 0x10 for _, r in paths)  # BUFFER_TOO_SMALL
    assert any(r["findPath"]["status"] & 0x40 for _, r in paths)  # PARTIAL_RESULT
    costly = [r for x, r in paths if x.get("f") == "costly" and x["maxPath"] == 256]
    plain = [r for x, r in paths if not x.get("f") and x["maxPath"] == 256 and x["opts"] == 0]
    assert {tuple(r["findPath"]["polys"]) for r in costly} != {
        tuple(r["findPath"]["polys"]) for r in plain
    }
    moves = [r for x, r in zip(queries, results) if x["op"] == "move"]
    assert any(len(r["visited"]) > 3 for r in moves)
    heights = [r for x, r in zip(queries, results) if x["op"] == "height"]
    assert any(r["status"] & FAILURE for r in heights)
    assert any(not r["status"] & FAILURE for r in heights)
    circles = [r for x, r in zip(queries, results) if x["op"] == "circle"]
    assert any(r["status"] & 0x10 for r in circles) and any(len(r["refs"]) > 5 for r in circles)
    clamped = [r["points"][0] != x["s"] for x, r in zip(queries, results)
               if x["op"] == "straight" and r["points"]]  # fmt: skip
    assert sum(clamped) > len(clamped) // 4


@pytest.mark.peer
@pytest.mark.parametrize("kind", KINDS)
def test_variant_inputs_exercise_offmesh_and_node_limits(kind):
    """Off-mesh corners appear in the off-mesh case; the small pool runs out of nodes."""
    _, queries, results = _case("dungeon+offmesh", kind)
    flags = [f for x, r in zip(queries, results) if "straight" in r for f in r["straight"]["flags"]]
    assert 4 in flags  # DT_STRAIGHTPATH_OFFMESH_CONNECTION
    _, queries, results = _case("nav_test+nodes24", kind)
    fp = [r["findPath"]["status"] for r in results if "findPath" in r]
    assert any(st & 0x20 for st in fp)  # DT_OUT_OF_NODES
    assert any(r["status"] & 0x20 for x, r in zip(queries, results) if x["op"] == "circle")


def test_fastrand_is_the_msvc_rand_sequence():
    """The binding's FastRand is the classic MSVC ``rand()`` LCG: seed 1 gives 41, 18467,
    6334, 26500, 19169 (as 0..32767 integers)."""
    vals = _FastRand(1).random(5) * np.float32(32767.0)
    assert np.rint(vals).astype(int).tolist() == [41, 18467, 6334, 26500, 19169]
    assert _FastRand(1, skip=2).random(1)[0] == _FastRand(1).random(3)[2]
