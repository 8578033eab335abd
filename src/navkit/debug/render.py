"""Pictures of level geometry, navmeshes and paths (matplotlib, Agg).

Every function takes whole arrays (never one call per vertex) and writes the
picture atomically, in the format its file name says (``.png``, ``.jpg``,
``.svg`` or ``.pdf``). Three views: ``top`` (x to the right, z down, as
RecastDemo's top view), ``side`` (from +z looking along -z: x to the right,
height up) and ``iso`` (isometric, from above the +x, +z corner: the top view
turned by 45 degrees and tilted), which shows the storeys
of a multi-level building one above the other. Each picture has a legend. The
colour schemes:

- geometry: walkable triangles (slope within the agent's limit) from yellow
  (low) to green (high), the rest in grey;
- navmesh: each polygon filled by region / area / tile / island, detail
  triangles shaded by height underneath (brighter = higher), tile borders
  dashed, off-mesh links as purple arrows, a path in red from a disk (start)
  to a square (end).
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._io import atomic_write_bytes
from ..errors import InputError

__all__ = [
    "render_geometry",
    "render_navmesh",
    "render_tile_cache",
    "draw_polygons",
    "draw_path",
    "figure",
    "picture_format",
    "VIEWS",
    "COLOR_BY",
]

#: The views :func:`render_geometry` and :func:`render_navmesh` draw.
VIEWS = ("top", "side", "iso")
#: How :func:`render_navmesh` colours polygons ("auto": regions when known, else islands).
COLOR_BY = ("auto", "region", "area", "tile", "island")
#: File suffix -> matplotlib format.
_FORMATS = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".svg": "svg", ".pdf": "pdf"}
#: Viewer directions (unit vectors from the scene towards the eye) of the projected views.
_EYE = {
    "side": np.array([0.0, 0.0, 1.0]),
    "iso": np.array([1.0, 1.0, 1.0]) / np.sqrt(3.0),
}


def picture_format(out: str | os.PathLike[str]) -> str:
    """The matplotlib format for a picture file name, from its suffix.

    Raises
    ------
    InputError
        The suffix is not one of .png, .jpg, .jpeg, .svg, .pdf.
    """
    suffix = Path(out).suffix.lower()
    fmt = _FORMATS.get(suffix)
    if fmt is None:
        raise InputError(
            f"{out}: cannot tell the picture format from {suffix or 'no suffix'!r}; "
            f"use one of {', '.join(_FORMATS)}"
        )
    return fmt


def _check_view(view: str) -> None:
    if view not in VIEWS:
        raise InputError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")


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
    return _frame(float(bmin[0]), float(bmax[0]), float(bmin[2]), float(bmax[2]),
                  flip=True, title=title, size=size, labels=("x [wu]", "z [wu]"))  # fmt: skip


def _frame(u0: float, u1: float, v0: float, v1: float, *, flip: bool, title: str,
           size: float = 9.0, labels: tuple[str, str] | None = None):  # fmt: skip
    plt = _plt()
    w = (u1 - u0) or 1.0
    h = (v1 - v0) or 1.0
    fig, ax = plt.subplots(figsize=(size, max(3.0, min(size * h / w, 2.2 * size))), dpi=110)
    ax.set_aspect("equal")
    pad = 0.02 * max(w, h)
    ax.set_xlim(u0 - pad, u1 + pad)
    if flip:
        ax.set_ylim(v1 + pad, v0 - pad)
    else:
        ax.set_ylim(v0 - pad, v1 + pad)
    if labels is None:
        ax.set_xticks([])
        ax.set_yticks([])
    else:
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
    if title:
        ax.set_title(title)
    ax.set_facecolor("#f4f4f0")
    return fig, ax


def _basis(view: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(right, up, eye) unit vectors of a projected view."""
    eye = _EYE[view]
    right = np.cross([0.0, 1.0, 0.0], eye)  # right x up = eye: a view, not its mirror image
    right /= np.linalg.norm(right)
    up = np.cross(eye, right)
    return right, up, eye


def _project(points: np.ndarray, view: str) -> tuple[np.ndarray, np.ndarray]:
    """((..., 2) screen points, (...) depth, larger = nearer the eye) of (..., 3) world points."""
    right, up, eye = _basis(view)
    p = np.asarray(points, dtype=np.float64)
    return np.stack([p @ right, p @ up], axis=-1), p @ eye


def _projected_frame(points: np.ndarray, view: str, title: str):
    scr, _ = _project(points, view)
    labels = ("x [wu]", "y (height) [wu]") if view == "side" else None
    sub = " (side view, looking along -z)" if view == "side" else " (isometric view)"
    return _frame(float(scr[:, 0].min()), float(scr[:, 0].max()), float(scr[:, 1].min()),
                  float(scr[:, 1].max()), flip=False, title=(title or "") + sub,
                  labels=labels)  # fmt: skip


def _save(fig: Any, out: str | os.PathLike[str]) -> None:
    fmt = picture_format(out)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format=fmt, bbox_inches="tight")
    except (ImportError, ValueError) as exc:  # pragma: no cover - Pillow missing for JPEG
        raise InputError(f"{out}: cannot write {fmt}: {exc}") from None
    finally:
        _plt().close(fig)
    atomic_write_bytes(out, buf.getvalue())


def _legend(ax: Any, handles: list, title: str | None = None, inside: bool = False) -> None:
    """The legend right of the axes, or inside them (when a colour bar takes the right)."""
    if not handles:
        return
    if inside:
        ax.legend(handles=handles, title=title, loc="best", fontsize=8, title_fontsize=8,
                  framealpha=0.85)  # fmt: skip
        return
    leg = ax.legend(handles=handles, title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                    fontsize=8, title_fontsize=8, frameon=False)  # fmt: skip
    leg._legend_box.align = "left"


def draw_polygons(
    ax: Any,
    polys: Sequence[np.ndarray],
    facecolors: Any,
    *,
    edgecolor: Any = "#1d3557",
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
    ax: Any, points: np.ndarray, *, color: str = "#d62828", label: str | None = None,
    view: str = "top",
) -> None:  # fmt: skip
    """Draw a polyline of (k, 3) points with a disk at the start and a square at the end."""
    p = np.asarray(points, dtype=float)
    if p.size == 0:
        return
    q = p[:, [0, 2]] if view == "top" else _project(p, view)[0]
    ax.plot(q[:, 0], q[:, 1], "-", color=color, lw=2.2, zorder=6, label=label)
    ax.plot(q[0, 0], q[0, 1], "o", color=color, ms=7, zorder=7)
    ax.plot(q[-1, 0], q[-1, 1], "s", color=color, ms=7, zorder=7)


def _path_handles(color: str = "#d62828") -> list:
    from matplotlib.lines import Line2D

    return [
        Line2D([], [], color=color, lw=2.2, label="path"),
        Line2D([], [], color=color, marker="o", ls="none", ms=7, label="start"),
        Line2D([], [], color=color, marker="s", ls="none", ms=7, label="end"),
    ]


def _categorical(ids: np.ndarray) -> np.ndarray:
    """Distinct pastel colours for integer ids (stable: the same id, the same colour)."""
    ids = np.asarray(ids, dtype=np.int64)
    golden = 0.61803398875
    hue = (ids * golden) % 1.0
    import matplotlib.colors as mcolors

    hsv = np.stack([hue, np.full_like(hue, 0.35), np.full_like(hue, 0.97)], axis=1)
    return mcolors.hsv_to_rgb(hsv)


def _draw_projected(ax: Any, faces: np.ndarray, colors: np.ndarray, view: str, *,
                    edgecolor: Any = "none", linewidth: float = 0.0, zorder: int = 2) -> None:  # fmt: skip
    """Painter's algorithm: (n, k, 3) faces drawn far to near, back faces left out."""
    if faces.shape[0] == 0:
        return
    scr, depth = _project(faces, view)
    order = np.argsort(depth.mean(axis=1))
    draw_polygons(ax, list(scr[order]), np.asarray(colors)[order], edgecolor=edgecolor,
                  linewidth=linewidth, zorder=zorder)  # fmt: skip


def render_geometry(
    mesh: Any, out: str | os.PathLike[str], *, title: str = "", max_slope: float = 45.0,
    view: str = "top",
) -> None:  # fmt: skip
    """Draw a :class:`~navkit.geometry.TriMesh`: walkable triangles yellow (low) to green (high).

    Parameters
    ----------
    mesh : TriMesh
    out : path of the picture to write (.png, .jpg, .svg or .pdf)
    max_slope : float
        Walkable slope limit [degrees] used for the colouring.
    view : {"top", "side", "iso"}
        Top down, from the side (looking along -z) or isometric.
    obstacles : sequence of (k, 2) float
        Obstacle footprints (x, z polygons [wu]) outlined on top (top view only).
    highlight_tiles : sequence of (x0, z0, x1, z1)
        Tile rectangles [wu] to highlight, e.g. the tiles a tile cache rebuilt (top view only).

    Raises
    ------
    InputError
        No triangles, an unknown view or picture format.
    """
    _check_view(view)
    picture_format(out)
    v = mesh.vertices.astype(np.float64)
    t = mesh.triangles
    if t.shape[0] == 0:
        raise InputError(f"{mesh.name}: nothing to draw (no triangles)")
    bmin, bmax = v.min(axis=0), v.max(axis=0)
    n = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    ln = np.linalg.norm(n, axis=1)
    ok = ln > 0
    cosang = np.zeros(len(t))
    cosang[ok] = n[ok, 1] / ln[ok]
    walk = cosang > np.cos(np.radians(max_slope))
    y = v[t].mean(axis=1)[:, 1]
    import matplotlib
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.patches import Patch

    span = max(float(bmax[1] - bmin[1]), 1e-6)
    cmap = matplotlib.colormaps["summer_r"]
    greens = cmap((y - bmin[1]) / span)
    grey = np.array([0.72, 0.72, 0.72, 1.0])
    colors = np.where(walk[:, None], greens, grey)
    if view == "top":
        fig, ax = figure(bmin, bmax, title=title or mesh.name)
        # only faces seen from above, drawn low to high so upper storeys cover lower ones
        order = np.argsort(y)
        order = order[cosang[order] > 1e-6]
        tri2 = v[t][:, :, [0, 2]]
        draw_polygons(ax, list(tri2[order]), colors[order], edgecolor="#555555", linewidth=0.2)
    else:
        fig, ax = _projected_frame(v[np.unique(t)], view, title or mesh.name)
        # light from above and the eye's side: faces turned away from it are darker
        unit = np.zeros_like(n)
        unit[ok] = n[ok] / ln[ok, None]
        light = np.abs(unit @ (np.array([0.3, 1.0, -0.5]) / np.linalg.norm([0.3, 1.0, -0.5])))
        lit = colors.copy()
        lit[:, :3] *= (0.55 + 0.45 * light)[:, None]
        _draw_projected(ax, v[t], lit, view, edgecolor="#55555540", linewidth=0.1)
    fig.colorbar(ScalarMappable(Normalize(float(bmin[1]), float(bmax[1])), cmap), ax=ax,
                 shrink=0.6, pad=0.02, label="height y of walkable triangles [wu]")  # fmt: skip
    _legend(ax, [
        Patch(fc=cmap(0.6), ec="#555555", label=f"walkable (slope <= {max_slope:g} deg)"),
        Patch(fc=grey, ec="#555555", label="too steep to walk"),
    ], inside=True)  # fmt: skip
    _save(fig, out)


def render_navmesh(
    navmesh: Any,
    out: str | os.PathLike[str],
    *,
    color_by: str = "auto",
    path: np.ndarray | None = None,
    title: str = "",
    detail: bool = True,
    tile_borders: bool = True,
    view: str = "top",
    obstacles: Sequence[np.ndarray] = (),
    highlight_tiles: Sequence[tuple[float, float, float, float]] = (),
) -> None:
    """Draw a navmesh.

    Parameters
    ----------
    navmesh : NavMesh
    out : path of the picture to write (.png, .jpg, .svg or .pdf)
    color_by : {"auto", "region", "area", "tile", "island"}
        How polygons are coloured. "region" needs the bake's region ids, which
        only a navmesh baked in this process has (files do not store them);
        "auto" uses them when known and connectivity islands otherwise.
    path : (k, 3) float, optional
        A path to draw on top.
    detail : bool
        Shade the detail triangles by height under the polygon outlines.
    tile_borders : bool
        Dash the tile grid (top view).
    view : {"top", "side", "iso"}
        Top down, from the side (looking along -z) or isometric.
    obstacles : sequence of (k, 2) float
        Obstacle footprints (x, z polygons [wu]) outlined on top (top view only).
    highlight_tiles : sequence of (x0, z0, x1, z1)
        Tile rectangles [wu] to highlight, e.g. the tiles a tile cache rebuilt (top view only).

    Raises
    ------
    InputError
        An unknown ``color_by``, view or picture format; "region" for a navmesh
        without region ids; a navmesh without polygons.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from .draw_data import navmesh_draw_data

    if color_by not in COLOR_BY:
        raise InputError(f"color_by must be one of {', '.join(COLOR_BY)}, got {color_by!r}")
    _check_view(view)
    picture_format(out)
    d = navmesh_draw_data(navmesh)
    if not d.polys:
        raise InputError("nothing to draw: the navmesh has no polygons")
    if color_by == "region" and d.region is None:
        raise InputError(
            "color_by='region' needs the bake's region ids, which navmesh files do not "
            "store (only a navmesh baked in this process has them); choose area, tile or "
            "island (or auto)"
        )
    if color_by == "auto":
        color_by = "region" if d.region is not None else "island"
    by = {"region": d.region, "island": d.island, "area": d.area, "tile": d.tile}[color_by]
    ids = np.asarray(by if by is not None else d.island)
    base = _categorical(ids)
    n_ids = len(np.unique(ids))
    handles: list = []
    shade_note = ""
    if view == "top":
        fig, ax = figure(d.bmin, d.bmax, title=title)
        order = np.argsort(d.poly_y)
        if detail and d.detail_tris.shape[0]:
            tv = d.detail_verts[d.detail_tris]
            ty = tv[:, :, 1].mean(axis=1)
            span = max(float(d.bmax[1] - d.bmin[1]), 1e-6)
            shade = 0.8 + 0.2 * (ty - d.bmin[1]) / span
            col = base[d.detail_poly] * shade[:, None]
            tord = np.argsort(ty)
            draw_polygons(ax, list(tv[tord][:, :, [0, 2]]), np.clip(col[tord], 0, 1),
                          edgecolor="none", linewidth=0.0, zorder=2)  # fmt: skip
            draw_polygons(ax, [d.polys[i] for i in order], "none", edgecolor="#1d3557",
                          linewidth=0.7, zorder=3)  # fmt: skip
            shade_note = ", brighter = higher"
        else:
            draw_polygons(ax, [d.polys[i] for i in order], base[order], zorder=2)
        if tile_borders and d.tile_rects is not None and len(d.tile_rects) > 1:
            for x0, z0, x1, z1 in d.tile_rects:
                ax.plot([x0, x1, x1, x0, x0], [z0, z0, z1, z1, z0], "--", color="#6c757d",
                        lw=0.6, zorder=4)  # fmt: skip
            handles.append(Line2D([], [], color="#6c757d", ls="--", lw=0.8, label="tile border"))
    else:
        pts = [*(d.polys_3d or []), d.detail_verts]
        if path is not None:
            pts.append(np.asarray(path, dtype=np.float64).reshape(-1, 3))
        fig, ax = _projected_frame(np.concatenate(pts), view, title)
        if detail and d.detail_tris.shape[0]:
            tv = d.detail_verts[d.detail_tris]
            ty = tv[:, :, 1].mean(axis=1)
            span = max(float(d.bmax[1] - d.bmin[1]), 1e-6)
            shade = 0.7 + 0.3 * (ty - d.bmin[1]) / span
            col = np.clip(base[d.detail_poly] * shade[:, None], 0, 1)
            _draw_projected(ax, tv, col, view, zorder=2)
            shade_note = ", brighter = higher"
        polys3 = d.polys_3d or []
        scr = [_project(p, view)[0] for p in polys3]
        depth = np.array([_project(p, view)[1].mean() for p in polys3])
        order = np.argsort(depth)
        if view == "side":  # floors are seen edge-on: lines in the polygon's colour
            draw_polygons(ax, [scr[i] for i in order], base[order], zorder=3,
                          edgecolor=np.clip(base[order] * 0.6, 0, 1), linewidth=1.4)  # fmt: skip
        else:
            fill = "none" if detail and d.detail_tris.shape[0] else base[order]
            draw_polygons(ax, [scr[i] for i in order], fill, edgecolor="#1d3557",
                          linewidth=0.5, zorder=3)  # fmt: skip
    handles.insert(0, Patch(fc=_categorical(np.array([1]))[0], ec="#1d3557",
                            label=f"polygon, colour = {color_by} ({n_ids}){shade_note}"))  # fmt: skip
    if d.offmesh is not None:
        for a, b in d.offmesh:
            if view == "top":
                pa, pb = (a[0], a[2]), (b[0], b[2])
            else:
                pa, pb = (tuple(q) for q in _project(np.array([a, b]), view)[0])
            ax.annotate("", xy=pb, xytext=pa, zorder=5,
                        arrowprops=dict(arrowstyle="->", color="#7b2cbf", lw=1.5))  # fmt: skip
        handles.append(Line2D([], [], color="#7b2cbf", marker=">", lw=1.5, label="off-mesh link"))
    if view == "top" and len(highlight_tiles):
        from matplotlib.patches import Rectangle

        for x0, z0, x1, z1 in highlight_tiles:
            ax.add_patch(Rectangle((x0, z0), x1 - x0, z1 - z0, fc="#ffd166", ec="#e85d04",
                                   alpha=0.35, lw=1.6, zorder=4))  # fmt: skip
        handles.append(Patch(fc="#ffd166", ec="#e85d04", alpha=0.6,
                             label=f"rebuilt tile ({len(highlight_tiles)})"))  # fmt: skip
    if view == "top" and len(obstacles):
        for o in obstacles:
            o = np.asarray(o, dtype=np.float64).reshape(-1, 2)
            ring = np.vstack([o, o[:1]])
            ax.plot(ring[:, 0], ring[:, 1], "-", color="#d00000", lw=1.8, zorder=6)
        handles.append(Line2D([], [], color="#d00000", lw=1.8,
                              label=f"obstacle ({len(obstacles)})"))  # fmt: skip
    if path is not None:
        draw_path(ax, np.asarray(path), view=view)
        handles += _path_handles()
    _legend(ax, handles)
    _save(fig, out)


def render_tile_cache(
    cache: Any,
    out: str | os.PathLike[str],
    *,
    highlight: Sequence[tuple[int, int, int]] | None = None,
    title: str = "",
    color_by: str = "auto",
    view: str = "top",
) -> None:
    """Draw a tile cache's navmesh with its obstacles outlined and rebuilt tiles highlighted.

    Parameters
    ----------
    cache : navkit.TileCache
    out : path of the picture to write (.png, .jpg, .svg or .pdf)
    highlight : sequence of (tx, ty, layer), optional
        Tiles to highlight (e.g. ``Changes.rebuilt``); by default the tiles under the
        obstacles (:meth:`~navkit.TileCache.touched_tiles`). ``[]`` highlights none.
    title, color_by, view
        As :func:`render_navmesh` (obstacles and highlights are drawn in the top view).
    """
    from ..tilecache.obstacles import obstacle_outline

    nm = cache.navmesh
    p = nm.params
    tiles = cache.touched_tiles() if highlight is None else list(highlight)
    rects: list[tuple[float, float, float, float, int, int]] = []
    for tx, ty, _layer in dict.fromkeys((int(a), int(b), int(c)) for a, b, c in tiles):
        if (tx, ty) in [(r[4], r[5]) for r in rects]:
            continue
        x0 = p.orig[0] + tx * p.tile_width
        z0 = p.orig[2] + ty * p.tile_height
        rects.append((x0, z0, x0 + p.tile_width, z0 + p.tile_height, tx, ty))
    outlines = [obstacle_outline(cache.obstacle(h)) for h in cache.obstacle_handles()]
    render_navmesh(nm, out, color_by=color_by, title=title, view=view, obstacles=outlines,
                   highlight_tiles=[r[:4] for r in rects])  # fmt: skip
