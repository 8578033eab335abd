"""Load navmesh files and run every query on them; run as a subprocess by
``test_crafted_files.py`` so that a crash or a hang fails the test instead of pytest.

Usage: ``python _crafted_runner.py FILE...``. For each file it prints one line:
``<file> FORMAT <message>`` (the load raised FormatError), ``<file> OK`` (loaded, and
every query returned or raised a navkit error) or ``<file> BAD <what>`` (another
exception). ``NAVKIT_CRAFTED_SRC`` puts another navkit source tree first on the path
(to check that a case fails on older code).
"""

from __future__ import annotations

import os
import sys

if os.environ.get("NAVKIT_CRAFTED_SRC"):
    sys.path.insert(0, os.environ["NAVKIT_CRAFTED_SRC"])

import numpy as np  # noqa: E402

from navkit.detour.navmesh import NavMesh  # noqa: E402
from navkit.detour.query import NavMeshQuery  # noqa: E402
from navkit.errors import FormatError, NavkitError  # noqa: E402


def _centre(nm: NavMesh, ref: int) -> list[float]:
    a = nm.arrays()
    gp = nm.poly_index(ref)
    n = int(a.poly_vert_count[gp])
    v = a.verts[a.poly_verts[gp, :n]].astype(np.float64)
    return [float(x) for x in v.mean(axis=0)]


def _queries(nm: NavMesh) -> None:
    q = NavMeshQuery(nm)
    refs = nm.poly_refs()
    if not refs:
        return
    picks = sorted({refs[0], refs[len(refs) // 2], refs[-1]})
    far = refs[len(refs) // 3]

    def run(name, fn, *args, **kw):
        sys.stdout.write(f"  {name}\n")
        sys.stdout.flush()
        try:
            fn(*args, **kw)
        except NavkitError:
            pass

    try:
        cf = _centre(nm, far)
    except NavkitError:
        cf = [0.0, 0.0, 0.0]
    for r in picks:
        try:
            c = _centre(nm, r)
        except NavkitError:
            continue
        run("find_nearest_poly", q.find_nearest_poly, c)
        run("find_nearest_poly huge", q.find_nearest_poly, c, (1e8, 1e8, 1e8))
        run("query_polygons", q.query_polygons, c, (5.0, 5.0, 5.0))
        run("raycast", q.raycast, r, c, cf)
        run("raycast far", q.raycast, r, c, [c[0] + 50.0, c[1], c[2] + 31.0])
        run("move_along_surface", q.move_along_surface, r, c, cf)
        run("find_distance_to_wall", q.find_distance_to_wall, r, c, 5.0)
        run("get_poly_wall_segments", q.get_poly_wall_segments, r, store_portals=True)
        run("find_polys_around_circle", q.find_polys_around_circle, r, c, 10.0)
        run("find_local_neighbourhood", q.find_local_neighbourhood, r, c, 5.0)
        run("find_random_point_around_circle", q.find_random_point_around_circle, r, c, 5.0, rng=1)
        run("closest_point_on_poly", q.closest_point_on_poly, r, c)
        run("get_poly_height", q.get_poly_height, r, c)
        try:
            corridor = q.find_path(r, far, c, cf)
            run("find_straight_path", q.find_straight_path, c, cf, corridor.polys)
        except NavkitError:
            pass
        run("path", q.path, c, cf)
        run("path optimal", q.path, c, cf, optimal=True)
    run("find_random_point", q.find_random_point, rng=1)
    # Every polygon: a ray across each edge, a circle search and a nearest query.
    a = nm.arrays()
    sys.stdout.write("  sweep\n")
    sys.stdout.flush()
    for r in refs:
        try:
            gp = nm.poly_index(r)
            c = _centre(nm, r)
        except NavkitError:
            continue
        n = int(a.poly_vert_count[gp])
        v = a.verts[a.poly_verts[gp, :n]].astype(np.float64)
        for j in range(n):
            mid = (v[j] + v[(j + 1) % n]) / 2
            end = [float(x) for x in np.asarray(c) + 2.0 * (mid - np.asarray(c))]
            try:
                q.raycast(r, c, end)
            except NavkitError:
                pass
        for fn, args in (
            (q.find_polys_around_circle, (r, c, 3.0)),
            (q.find_nearest_poly, (c,)),
            (q.move_along_surface, (r, c, [c[0] + 3.0, c[1], c[2] + 1.0])),
        ):
            try:
                fn(*args)
            except NavkitError:
                pass


def main(paths: list[str]) -> None:
    for p in paths:
        sys.stdout.write(f"{p} START\n")
        sys.stdout.flush()
        try:
            nm = NavMesh.from_recast(p) if p.endswith(".bin") else NavMesh.load(p)
        except FormatError as exc:
            sys.stdout.write(f"{p} FORMAT {exc}\n")
            continue
        except Exception as exc:  # noqa: BLE001 - reported, the test fails on it
            sys.stdout.write(f"{p} BAD load {type(exc).__name__}: {exc}\n")
            continue
        try:
            _queries(nm)
        except Exception as exc:  # noqa: BLE001
            sys.stdout.write(f"{p} BAD query {type(exc).__name__}: {exc}\n")
            continue
        sys.stdout.write(f"{p} OK\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
