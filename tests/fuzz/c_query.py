"""Queries: a checked battery for any loaded navmesh, and hostile query arguments."""

from __future__ import annotations

import math

import numpy as np

from .common import (
    HOSTILE_FLOATS,
    HOSTILE_INTS,
    HOSTILE_OTHER,
    check_corridor,
    check_finite,
    check_on_poly,
    check_ref,
    expect,
    hostile_scalar,
    mesh_points,
    navmeshes,
    pick,
    roundtrip_equal,
)

_SUCCESS = 1 << 30
_FAILURE = 1 << 31


def _nk_error():
    from navkit.errors import NavkitError

    return NavkitError


def attempt(fn, *a, **k):
    """fn(*a, **k), or None when navkit refuses (NavkitError)."""
    try:
        return fn(*a, **k)
    except _nk_error():
        return None


def _xz(a, b) -> float:
    return float(np.hypot(float(a[0]) - float(b[0]), float(a[2]) - float(b[2])))


# -- the battery: valid queries with oracle checks ------------------------------------------
def exercise(
    nm, rng: np.random.Generator, n: int = 6, *, roundtrip: bool = True, geometry: bool = True
) -> None:
    """Run every query kind on ``nm`` with plausible arguments and check the answers.

    ``geometry=False`` (crafted files) skips the checks that assume sane geometry
    (path endpoints at the snapped points); refs, links, finiteness and ranges are
    always checked.
    """
    import navkit

    nm.stats()
    refs = nm.poly_refs()
    for r in refs[: 4 * n]:
        nm.links_of(r)
    q = navkit.NavMeshQuery(nm, max_nodes=int(pick(rng, [64, 2048])))
    pts = mesh_points(q, rng, 2 * n)
    ext = (2.0, 4.0, 2.0)
    for i in range(n):
        s, e = pts[2 * i], pts[2 * i + 1]
        near = attempt(q.find_nearest_poly, s, ext)
        if near is not None and near.ref:
            check_ref(q, near.ref, "find_nearest_poly")
            check_finite(near.point, "find_nearest_poly")
            if geometry:
                check_on_poly(q, near.ref, near.point, "find_nearest_poly")
            sref, sp = near.ref, near.point
            ray = attempt(q.raycast, sref, sp, e)
            if ray is not None:
                expect(ray.t >= 0 and (ray.t <= 1 or ray.t == math.inf),
                       f"raycast t = {ray.t} outside [0, 1] and not inf")  # fmt: skip
                if ray.path.size:
                    check_corridor(q, ray.path, "raycast path")
                    expect(
                        int(ray.path[0]) == int(sref), "raycast path does not start at start_ref"
                    )
            mv = attempt(q.move_along_surface, sref, sp, e)
            if mv is not None and mv.status & _SUCCESS:
                check_finite(mv.position, "move_along_surface")
                if mv.visited.size:
                    check_corridor(q, mv.visited, "move_along_surface visited")
            w = attempt(q.find_distance_to_wall, sref, sp, 5.0)
            if w is not None and w.status & _SUCCESS:
                expect(
                    0 <= w.distance <= 5.0 + 1e-4, f"distance to wall {w.distance} not in [0, 5]"
                )
            ar = attempt(q.find_polys_around_circle, sref, sp, 3.0, max_result=32)
            if ar is not None and ar.refs.size:
                for r, par in zip(ar.refs, ar.parents):
                    check_ref(q, r, "find_polys_around_circle")
                    if par:
                        check_corridor(q, [par, r], "find_polys_around_circle parent")
            ws = attempt(q.get_poly_wall_segments, sref, store_portals=bool(i % 2))
            if ws is not None:
                check_finite(ws.segments, "get_poly_wall_segments")
            h = attempt(q.get_poly_height, sref, sp)
            if h is not None:
                expect(math.isfinite(h), f"get_poly_height {h}")
            ln = attempt(q.find_local_neighbourhood, sref, sp, 2.0)
            if ln is not None:
                for r in ln.refs:
                    check_ref(q, r, "find_local_neighbourhood")
            rp = attempt(
                q.find_random_point_around_circle, sref, sp, 2.0, rng=int(rng.integers(1 << 30))
            )
            if rp is not None and rp.ref:
                check_ref(q, rp.ref, "find_random_point_around_circle")
                check_finite(rp.point, "find_random_point_around_circle")
        p = attempt(q.path, s, e, half_extents=ext)
        if p is not None:
            check_finite(p.points, "path points")
            expect(p.points.shape[0] >= 1, "path without points")
            check_corridor(q, p.polys, "path corridor")
            expect(math.isfinite(p.length) and p.length >= 0, f"path length {p.length}")
            a = q.find_nearest_poly(s, ext)
        if p is not None and geometry:
            expect(int(p.polys[0]) == int(a.ref), "path does not start on the nearest polygon")
            expect(_xz(p.points[0], a.point) < 1e-3 * (1 + float(np.abs(a.point).max())),
                   f"path starts at {p.points[0].tolist()}, nearest point {a.point.tolist()}")  # fmt: skip
            if p.complete and p.points.shape[0] >= 2:
                b = q.find_nearest_poly(e, ext)
                expect(_xz(p.points[-1], b.point) < 1e-3 * (1 + float(np.abs(b.point).max())),
                       f"complete path ends at {p.points[-1].tolist()}, not {b.point.tolist()}")  # fmt: skip
        if i == 0:
            a = attempt(q.find_nearest_poly, s, ext)
            b = attempt(q.find_nearest_poly, e, ext)
            if a is not None and b is not None and a.ref and b.ref:
                c = attempt(q.find_path, a.ref, b.ref, a.point, b.point)
                if c is not None and c.polys.size:
                    check_corridor(q, c.polys, "find_path")
                    sp = attempt(
                        q.find_straight_path,
                        a.point,
                        b.point,
                        c.polys,
                        options=int(rng.integers(4)),
                    )
                    if sp is not None:
                        check_finite(sp.points, "find_straight_path")
                st = attempt(q.init_sliced_find_path, a.ref, b.ref, a.point, b.point)
                if st is not None:
                    for _ in range(50):
                        r = attempt(q.update_sliced_find_path, 10)
                        if r is None or not r[0] & (1 << 29):
                            break
                    c2 = attempt(q.finalize_sliced_find_path)
                    if c2 is not None and c2.polys.size:
                        check_corridor(q, c2.polys, "sliced find path")
        if i == 1:
            rp = attempt(q.find_random_point, rng=int(rng.integers(1 << 30)))
            if rp is not None and rp.ref:
                check_ref(q, rp.ref, "find_random_point")
                if geometry:
                    check_on_poly(q, rp.ref, rp.point, "find_random_point")
            b = attempt(q.paths, pts[:4], pts[4:8], max_path=64)
            if b is not None:
                for k in range(b.ok.shape[0]):
                    if b.ok[k]:
                        check_corridor(q, b.polys[k, : b.n_polys[k]], "paths corridor")
                        check_finite(b.points[k, : b.n_points[k]], "paths points")
            poly = attempt(q.query_polygons, s, ext)
            if poly is not None:
                for r in poly[0]:
                    check_ref(q, r, "query_polygons")
        if i == 2:
            attempt(nm.islands)
    if roundtrip:
        roundtrip_equal(nm)
        r1 = attempt(nm.to_recast)
        if r1 is not None:
            from navkit.detour.recast_format import navmesh_from_recast

            r2 = attempt(navmesh_from_recast, r1)
            expect(r2 is not None, "navkit's own Recast export does not load")
            # Recast files do not keep links (they are rebuilt on load), so the first
            # export may differ from the second; from then on it must be stable
            e2 = r2.to_recast()  # type: ignore[union-attr]
            expect(
                navmesh_from_recast(e2).to_recast() == e2, "Recast export does not round-trip equal"
            )


# -- hostile arguments ----------------------------------------------------------------------
def _ref(q, rng, valid):
    r = rng.random()
    if r < 0.45:
        return valid
    if r < 0.6:  # the same tile and poly with another salt: stale
        nm = q.navmesh
        salt, tile, poly = nm.decode_ref(valid)
        return nm.encode_ref(
            (salt % ((1 << nm.salt_bits) - 1)) + 1 if salt + 1 >= (1 << nm.salt_bits) else salt + 1,
            tile,
            poly,
        )
    if r < 0.7:
        nm = q.navmesh
        salt, tile, poly = nm.decode_ref(valid)
        return nm.encode_ref(salt, tile, int(rng.integers(0, 1 << min(nm.poly_bits, 20))))
    if r < 0.85:
        return pick(rng, HOSTILE_INTS)
    return pick(rng, HOSTILE_OTHER + [math.nan, math.inf, np.uint64(2**64 - 1), np.int64(-1)])


def _point(rng, valid):
    r = rng.random()
    if r < 0.5:
        return valid
    if r < 0.65:
        v = valid.astype(np.float64).copy()
        v[int(rng.integers(3))] = pick(rng, HOSTILE_FLOATS)
        return v if rng.random() < 0.5 else v.tolist()
    if r < 0.75:
        return pick(rng, [valid[:2], np.append(valid, 1.0), valid.reshape(3, 1), valid.reshape(1, 3),
                          valid.astype(np.float16), valid.astype(np.int8), valid.astype(complex),
                          np.full(3, np.nan, np.float32), valid[::-1].copy()[::-1]])  # fmt: skip
    if r < 0.85:
        return (valid * pick(rng, [1e6, 1e9, 1e30, -1e30])).astype(np.float64)
    return pick(rng, HOSTILE_OTHER + [[1, 2, "x"], [None] * 3, "1 2 3"])


def _extent(rng):
    r = rng.random()
    if r < 0.4:
        return (2.0, 4.0, 2.0)
    if r < 0.75:
        v = [2.0, 4.0, 2.0]
        v[int(rng.integers(3))] = pick(rng, HOSTILE_FLOATS)
        if rng.random() < 0.4:
            v = [pick(rng, [1e8, 1e6, 1e30, 1e38])] * 3
        return tuple(v)
    return pick(rng, [(0, 0, 0), [1, 2], None, "x", np.array([1e8, 1e8, 1e8]), (-1, 4, 2)])


def _count(rng, default):
    r = rng.random()
    if r < 0.5:
        return default
    if r < 0.85:
        return pick(rng, HOSTILE_INTS + [0, 1, 3, 2**40])
    return pick(rng, HOSTILE_OTHER + [math.nan, math.inf, 1e9, -5.5, np.int64(2**62)])


def _radius(rng):
    r = rng.random()
    if r < 0.4:
        return float(rng.uniform(0.1, 5))
    return hostile_scalar(rng)


def _filter(rng):
    import navkit

    r = rng.random()
    if r < 0.6:
        return None
    if r < 0.8:
        return navkit.QueryFilter(include_flags=int(rng.integers(0, 0x10000)),
                                  exclude_flags=int(rng.integers(0, 4)))  # fmt: skip
    return pick(rng, ["x", 1, object(), np.zeros(2, np.int32)])


def _check_result(q, name, res, args) -> None:
    """Cheap oracles on whatever a query returned for hostile arguments."""
    if name == "find_nearest_poly":
        if res.ref:
            check_ref(q, res.ref, name)
            check_finite(res.point, name)
    elif name in ("path", "path_optimal"):
        check_finite(res.points, name)
        check_corridor(q, res.polys, name)
        expect(math.isfinite(res.length) and res.length >= 0, f"{name}: length {res.length}")
    elif name == "raycast":
        expect(res.t >= 0 and (res.t <= 1 or res.t == math.inf), f"raycast t = {res.t}")
        if res.path.size:
            check_corridor(q, res.path, name)
    elif name in ("find_path", "finalize"):
        if res.polys.size:
            check_corridor(q, res.polys, name)
    elif name == "move_along_surface":
        if res.status & _SUCCESS:
            check_finite(res.position, name)
    elif name == "paths":
        for k in range(res.ok.shape[0]):
            if res.ok[k]:
                check_corridor(q, res.polys[k, : res.n_polys[k]], name)
                check_finite(res.points[k, : res.n_points[k]], name)
    elif name in (
        "find_polys_around_circle",
        "find_polys_around_shape",
        "find_local_neighbourhood",
    ):
        for r in res.refs:
            check_ref(q, r, name)
    elif name in ("find_random_point", "find_random_point_around_circle"):
        if res.ref:
            check_ref(q, res.ref, name)
            check_finite(res.point, name)
    elif name == "closest_point_on_poly":
        check_finite(res[0], name)
    elif name == "find_distance_to_wall":
        if res.status & _SUCCESS:
            expect(math.isfinite(res.distance) and res.distance >= 0, f"{name}: {res.distance}")


def query_args_case(rng: np.random.Generator, index: int) -> None:
    import navkit

    nms = navmeshes()
    q = navkit.NavMeshQuery(nms[pick(rng, sorted(nms))])  # fresh: no state from earlier cases
    pts = mesh_points(q, rng, 4)
    a = q.find_nearest_poly(pts[0])
    b = q.find_nearest_poly(pts[1])
    vref = a.ref or q.navmesh.poly_refs()[0]
    eref = b.ref or vref
    s = _point(rng, pts[0])
    e = _point(rng, pts[1])
    flt = _filter(rng)
    name = pick(rng, [
        "find_nearest_poly", "query_polygons", "closest_point_on_poly", "closest_point_on_poly_boundary",
        "get_poly_height", "find_path", "find_straight_path", "sliced", "raycast",
        "move_along_surface", "find_distance_to_wall", "get_poly_wall_segments",
        "find_polys_around_circle", "find_polys_around_shape", "find_local_neighbourhood",
        "find_random_point", "find_random_point_around_circle", "path", "path_optimal", "paths",
        "is_valid_poly_ref", "query_ctor",
    ])  # fmt: skip
    sref = _ref(q, rng, vref)
    if name == "find_nearest_poly":
        res = q.find_nearest_poly(s, _extent(rng), flt)
    elif name == "query_polygons":
        res = q.query_polygons(s, _extent(rng), flt, _count(rng, 256))
        for r in res[0]:
            check_ref(q, r, name)
    elif name == "closest_point_on_poly":
        res = q.closest_point_on_poly(sref, s)
    elif name == "closest_point_on_poly_boundary":
        res = q.closest_point_on_poly_boundary(sref, s)
        check_finite(res, name)
    elif name == "get_poly_height":
        res = q.get_poly_height(sref, s)
        expect(res is None or math.isfinite(res), f"{name}: {res}")
    elif name == "find_path":
        res = q.find_path(sref, _ref(q, rng, eref), s, e, flt, _count(rng, 256))
    elif name == "find_straight_path":
        c = attempt(q.find_path, vref, eref, pts[0], pts[1])
        corridor = c.polys if c is not None and c.polys.size else np.array([vref], np.int64)
        r = rng.random()
        if r < 0.3:
            corridor = rng.permutation(corridor)
        elif r < 0.5:
            corridor = np.array(
                [_ref(q, rng, vref) for _ in range(int(rng.integers(0, 5)))], dtype=object
            )
        res = q.find_straight_path(s, e, corridor, _count(rng, 0), _count(rng, 256))
        check_finite(res.points, name)
    elif name == "sliced":
        q.init_sliced_find_path(sref, _ref(q, rng, eref), s, e, flt, _count(rng, 0))
        for _ in range(int(rng.integers(1, 6))):
            st, _ = q.update_sliced_find_path(_count(rng, 20))
        name = "finalize"
        if rng.random() < 0.5:
            res = q.finalize_sliced_find_path(_count(rng, 256))
        else:
            ex = [_ref(q, rng, vref) for _ in range(int(rng.integers(0, 4)))]
            res = q.finalize_sliced_find_path_partial(ex, _count(rng, 256))
    elif name == "raycast":
        res = q.raycast(sref, s, e, flt, _count(rng, 0), _ref(q, rng, 0), _count(rng, 256))
    elif name == "move_along_surface":
        res = q.move_along_surface(sref, s, e, flt, _count(rng, 16))
    elif name == "find_distance_to_wall":
        res = q.find_distance_to_wall(sref, s, _radius(rng), flt)
    elif name == "get_poly_wall_segments":
        res = q.get_poly_wall_segments(
            sref, flt, pick(rng, [True, False, None, 2]), _count(rng, 64)
        )
    elif name == "find_polys_around_circle":
        res = q.find_polys_around_circle(sref, s, _radius(rng), flt, _count(rng, 256))
    elif name == "find_polys_around_shape":
        k = int(rng.integers(0, 8))
        verts = np.asarray(pts[0], np.float64) + rng.normal(0, 3, (k, 3))
        if rng.random() < 0.4 and k:
            verts[int(rng.integers(k)), int(rng.integers(3))] = pick(rng, HOSTILE_FLOATS)
        res = q.find_polys_around_shape(sref, verts, flt, _count(rng, 256))
    elif name == "find_local_neighbourhood":
        res = q.find_local_neighbourhood(sref, s, _radius(rng), flt, _count(rng, 32))
    elif name == "find_random_point":
        res = q.find_random_point(
            flt, pick(rng, [None, 1, -1, "x", 2**70, np.random.default_rng(3)])
        )
    elif name == "find_random_point_around_circle":
        res = q.find_random_point_around_circle(
            sref, s, _radius(rng), flt, pick(rng, [None, 5, -1, "x"]),
            pick(rng, [False, True]), _count(rng, 64),
        )  # fmt: skip
    elif name == "path":
        res = q.path(s, e, half_extents=_extent(rng), filter=flt, max_path=_count(rng, 256),
                     max_points=_count(rng, 256))  # fmt: skip
    elif name == "path_optimal":
        res = q.path(s, e, half_extents=_extent(rng), filter=flt, optimal=True)
    elif name == "paths":
        k = int(rng.integers(0, 6))
        ss = mesh_points(q, rng, k).astype(np.float64)
        ee = mesh_points(q, rng, k).astype(np.float64)
        if k and rng.random() < 0.5:
            ss[int(rng.integers(k)), int(rng.integers(3))] = pick(rng, HOSTILE_FLOATS)
        res = q.paths(ss, ee if rng.random() < 0.9 else ee[:-1], half_extents=_extent(rng),
                      filter=flt, max_path=_count(rng, 256), max_points=_count(rng, 256),
                      threads=pick(rng, [None, 1, 0, -1, 1000, "x"]))  # fmt: skip
    elif name == "is_valid_poly_ref":
        res = q.is_valid_poly_ref(sref, flt)
        expect(isinstance(res, bool), f"is_valid_poly_ref returned {res!r}")
    else:
        import navkit

        res = navkit.NavMeshQuery(pick(rng, [q.navmesh, None, "x"]), _count(rng, 2048))
        return
    _check_result(q, name, res, None)
