"""Flatten a NavMesh into what the renderer draws: polygons, detail triangles, tiles."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["DrawData", "navmesh_draw_data"]


class DrawData(NamedTuple):
    """Arrays for drawing (ground polygons only).

    Attributes
    ----------
    polys : list of (k, 2) float64
        xz outline of each ground polygon.
    poly_y : (n,) float64
        Mean height of each polygon (draw order).
    area, tile, island : (n,) int
        Per-polygon area id, tile slot and island id.
    region : (n,) int or None
        Bake region ids when the navmesh came from :func:`navkit.bake` in this process.
    detail_verts : (m, 3) float64
    detail_tris : (t, 3) int
        Indices into ``detail_verts``.
    detail_poly : (t,) int
        Polygon (index into ``polys``) of each detail triangle.
    tile_rects : list of (x0, z0, x1, z1)
    offmesh : list of ((3,), (3,)) or None
    bmin, bmax : (3,) float64
    polys_3d : list of (k, 3) float64
        The same outlines with their heights (for the side and isometric views).
    """

    polys: list
    poly_y: np.ndarray
    area: np.ndarray
    tile: np.ndarray
    island: np.ndarray
    region: np.ndarray | None
    detail_verts: np.ndarray
    detail_tris: np.ndarray
    detail_poly: np.ndarray
    tile_rects: list
    offmesh: list | None
    bmin: np.ndarray
    bmax: np.ndarray
    polys_3d: list | None = None


def navmesh_draw_data(navmesh: Any) -> DrawData:
    """Collect a navmesh's ground polygons and detail triangles as plain arrays."""
    from ..detour.islands import find_islands

    a = navmesh.arrays()
    isl = find_islands(navmesh).poly_island
    polys: list[np.ndarray] = []
    polys3: list[np.ndarray] = []
    ys: list[float] = []
    areas: list[int] = []
    tiles: list[int] = []
    islands: list[int] = []
    gps: list[int] = []
    dverts: list[np.ndarray] = []
    dtris: list[np.ndarray] = []
    dpoly: list[np.ndarray] = []
    nv_total = 0
    rects = []
    for t in navmesh.tile_slots():
        rects.append(
            (
                float(a.tile_bmin[t, 0]),
                float(a.tile_bmin[t, 2]),
                float(a.tile_bmax[t, 0]),
                float(a.tile_bmax[t, 2]),
            )
        )
        pb, pc = int(a.tile_poly_base[t]), int(a.tile_poly_count[t])
        db = int(a.tile_dmesh_base[t])
        for gp in range(pb, pb + pc):
            if a.poly_type[gp] != 0:
                continue
            nv = int(a.poly_vert_count[gp])
            pv = a.verts[a.poly_verts[gp, :nv]].astype(np.float64)
            idx = len(polys)
            polys.append(pv[:, [0, 2]])
            polys3.append(pv)
            ys.append(float(pv[:, 1].mean()))
            areas.append(int(a.poly_area[gp]))
            tiles.append(t)
            islands.append(int(isl[gp]))
            gps.append(gp)
            dm = db + (gp - pb)
            if dm < a.dmesh_vert_base.shape[0] and a.dmesh_tri_count[dm] > 0:
                vb, vc = int(a.dmesh_vert_base[dm]), int(a.dmesh_vert_count[dm])
                tb, tc = int(a.dmesh_tri_base[dm]), int(a.dmesh_tri_count[dm])
                local = np.concatenate([pv, a.dverts[vb : vb + vc].astype(np.float64)])
                tri = a.dtris[tb : tb + tc, :3].astype(np.int64)
                dverts.append(local)
                dtris.append(tri + nv_total)
                dpoly.append(np.full(tc, idx))
                nv_total += local.shape[0]
    region = None
    rep = getattr(navmesh, "build_report", None)
    regs = getattr(rep, "poly_regions", None) if rep is not None else None
    if regs is not None and len(regs) == len(polys):
        region = np.asarray(regs)
    offmesh = None
    if a.off_pos.shape[0]:
        offmesh = []
        for t in navmesh.tile_slots():
            ob, oc = int(a.tile_off_base[t]), int(a.tile_off_count[t])
            for o in range(ob, ob + oc):
                offmesh.append((a.off_pos[o, :3].astype(float), a.off_pos[o, 3:].astype(float)))
    if polys:
        allv = np.concatenate(
            [np.column_stack([p[:, 0], np.full(len(p), y), p[:, 1]]) for p, y in zip(polys, ys)]
        )
        bmin, bmax = allv.min(axis=0), allv.max(axis=0)
    else:
        bmin = bmax = np.zeros(3)
    if dverts:
        dv = np.concatenate(dverts)
        bmin[1], bmax[1] = min(bmin[1], dv[:, 1].min()), max(bmax[1], dv[:, 1].max())
    return DrawData(
        polys,
        np.asarray(ys),
        np.asarray(areas),
        np.asarray(tiles),
        np.asarray(islands),
        region,
        np.concatenate(dverts) if dverts else np.zeros((0, 3)),
        np.concatenate(dtris) if dtris else np.zeros((0, 3), np.int64),
        np.concatenate(dpoly) if dpoly else np.zeros(0, np.int64),
        rects,
        offmesh,
        bmin,
        bmax,
        polys3,
    )
