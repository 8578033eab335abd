"""Top-down pictures of level geometry, navmeshes and paths (matplotlib, Agg).

Every function takes whole arrays (never one call per vertex) and writes a PNG
atomically. The colour schemes:

- geometry: walkable triangles (slope within the agent's limit) in shades of
  green by height, the rest in grey;
- navmesh: each polygon filled by region / area / tile / island, detail
  triangles shaded by height underneath, tile borders dashed, a path in red.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._io import atomic_write_bytes
from ..errors import InputError

__all__ = ["render_geometry", "render_navmesh", "draw_polygons", "draw_path", "figure"]


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise InputError("drawing needs matplotlib: pip install 'navkit[render]'") from None
    return plt


def figure(bmin: np.ndarray, bmax: np.ndarray, *, title: str = "", size: float = 9.0):
    """A figure and axes framing the xz extent, x to the right and z down (as RecastDemo's top view)."""
    plt = _plt()
    w = float(bmax[0] - bmin[0]) or 1.0
    h = float(bmax[2] - bmin[2]) or 1.0
    aspect = h / w
    fig, ax = plt.subplots(figsize=(size, max(3.0, min(size * aspect, 2.2 * size))), dpi=110)
    ax.set_aspect("equal")
    pad = 0.02 * max(w, h)
    ax.set_xlim(float(bmin[0]) - pad, float(bmax[0]) + pad)
    ax.set_ylim(float(bmax[2]) + pad, float(bmin[2]) - pad)
    ax.set_xlabel("x [wu]")
    ax.set_ylabel("z [wu]")
    if title:
        ax.set_title(title)
    ax.set_facecolor("#f4f4f0")
    return fig, ax


def _save(fig: Any, out: str | os.PathLike[str]) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    _plt().close(fig)
    atomic_write_bytes(out, buf.getvalue())


def draw_polygons(
    ax: Any,
    polys: Sequence[np.ndarray],
    facecolors: Any,
    *,
    edgecolor: str = "#1d3557",
    linewidth: float = 0.6,
    alpha: float = 1.0,
    zorder: int = 2,
) -> None:
    """Fill polygons given as (k, 2) arrays of (x, z) points."""
    from matplotlib.collections import PolyCollection

    pc = PolyCollection(
        [np.asarray(p, dtype=float) for p in polys],
        facecolors=facecolors,
        edgecolors=edgecolor,
        linewidths=linewidth,
        alpha=alpha,
        zorder=zorder,
    )
    ax.add_collection(pc)


def draw_path(
    ax: Any, points: np.ndarray, *, color: str = "#d62828", label: str | None = None
) -> None:
    """Draw a polyline of (k, 3) points with start and end markers."""
    p = np.asarray(points, dtype=float)
    if p.size == 0:
        return
    ax.plot(p[:, 0], p[:, 2], "-", color=color, lw=2.2, zorder=6, label=label)
    ax.plot(p[0, 0], p[0, 2], "o", color=color, ms=7, zorder=7)
    ax.plot(p[-1, 0], p[-1, 2], "s", color=color, ms=7, zorder=7)


def _categorical(ids: np.ndarray) -> np.ndarray:
    """Distinct pastel colours for integer ids (stable: the same id, the same colour)."""
    ids = np.asarray(ids, dtype=np.int64)
    golden = 0.61803398875
    hue = (ids * golden) % 1.0
    import matplotlib.colors as mcolors

    hsv = np.stack([hue, np.full_like(hue, 0.35), np.full_like(hue, 0.97)], axis=1)
    return mcolors.hsv_to_rgb(hsv)


def render_geometry(
    mesh: Any, out: str | os.PathLike[str], *, title: str = "", max_slope: float = 45.0
) -> None:
    """Draw a :class:`~navkit.geometry.TriMesh` top down: walkable triangles green by height.

    Parameters
    ----------
    mesh : TriMesh
    out : path of the PNG to write
    max_slope : float
        Walkable slope limit [degrees] used for the colouring.
    """
    v = mesh.vertices.astype(np.float64)
    t = mesh.triangles
    if t.shape[0] == 0:
        raise InputError(f"{mesh.name}: nothing to draw (no triangles)")
    bmin, bmax = v.min(axis=0), v.max(axis=0)
    fig, ax = figure(bmin, bmax, title=title or mesh.name)
    n = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    ln = np.linalg.norm(n, axis=1)
    ok = ln > 0
    cosang = np.zeros(len(t))
    cosang[ok] = n[ok, 1] / ln[ok]
    walk = cosang > np.cos(np.radians(max_slope))
    y = v[t].mean(axis=1)[:, 1]
    # only faces seen from above, drawn low to high so upper storeys cover lower ones
    order = np.argsort(y)
    order = order[cosang[order] > 1e-6]
    import matplotlib

    span = max(float(bmax[1] - bmin[1]), 1e-6)
    greens = matplotlib.colormaps["summer_r"]((y - bmin[1]) / span)
    colors = np.where(walk[:, None], greens, np.array([0.72, 0.72, 0.72, 1.0]))
    tri2 = v[t][:, :, [0, 2]]
    draw_polygons(ax, list(tri2[order]), colors[order], edgecolor="#555555", linewidth=0.2)
    _save(fig, out)


def render_navmesh(
    navmesh: Any,
    out: str | os.PathLike[str],
    *,
    color_by: str = "region",
    path: np.ndarray | None = None,
    title: str = "",
    detail: bool = True,
    tile_borders: bool = True,
) -> None:
    """Draw a navmesh top down.

    Parameters
    ----------
    navmesh : NavMesh
    out : path of the PNG to write
    color_by : {"region", "area", "tile", "island"}
        How polygons are coloured. "region" uses the bake's region ids when the
        navmesh keeps them, and falls back to polygon connectivity islands.
    path : (k, 3) float, optional
        A path to draw on top.
    detail : bool
        Shade the detail triangles by height under the polygon outlines.
    tile_borders : bool
        Dash the tile grid.
    """
    from .draw_data import navmesh_draw_data

    d = navmesh_draw_data(navmesh)
    if not d.polys:
        raise InputError("nothing to draw: the navmesh has no polygons")
    fig, ax = figure(d.bmin, d.bmax, title=title)
    if color_by == "region" and d.region is not None:
        ids = d.region
    elif color_by in ("region", "island"):
        ids = d.island
    elif color_by == "area":
        ids = d.area
    elif color_by == "tile":
        ids = d.tile
    else:
        raise InputError(f"color_by must be region, area, tile or island, got {color_by!r}")
    base = _categorical(ids)
    order = np.argsort(d.poly_y)
    if detail and d.detail_tris.shape[0]:
        tv = d.detail_verts[d.detail_tris]
        ty = tv[:, :, 1].mean(axis=1)
        span = max(float(d.bmax[1] - d.bmin[1]), 1e-6)
        shade = 0.8 + 0.2 * (ty - d.bmin[1]) / span
        col = base[d.detail_poly] * shade[:, None]
        tord = np.argsort(ty)
        draw_polygons(
            ax,
            list(tv[tord][:, :, [0, 2]]),
            np.clip(col[tord], 0, 1),
            edgecolor="none",
            linewidth=0.0,
            zorder=2,
        )
        draw_polygons(
            ax, [d.polys[i] for i in order], "none", edgecolor="#1d3557", linewidth=0.7, zorder=3
        )
    else:
        draw_polygons(ax, [d.polys[i] for i in order], base[order], zorder=2)
    if tile_borders and d.tile_rects is not None and len(d.tile_rects) > 1:
        for x0, z0, x1, z1 in d.tile_rects:
            ax.plot(
                [x0, x1, x1, x0, x0], [z0, z0, z1, z1, z0], "--", color="#6c757d", lw=0.6, zorder=4
            )
    if d.offmesh is not None:
        for a, b in d.offmesh:
            ax.annotate(
                "",
                xy=(b[0], b[2]),
                xytext=(a[0], a[2]),
                arrowprops=dict(arrowstyle="->", color="#7b2cbf", lw=1.5),
                zorder=5,
            )
    if path is not None:
        draw_path(ax, np.asarray(path))
    _save(fig, out)
