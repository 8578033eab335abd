"""Pictures of a corridor map (matplotlib, Agg backend: no screen needed).

``render`` draws the obstacles, the medial axis (colour = clearance), and for a
path its corridor disks, left/right closest points and the path itself.
``ecm_command`` is the body of the ``navkit ecm`` CLI; ``moving_obstacles_demo``
writes a sequence of frames with an obstacle moving through a scene while the
path is re-planned after every local update.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from navkit._io import atomic_write_bytes
from navkit.errors import InputError

__all__ = ["render", "render_agents", "ecm_command", "load_scene", "moving_obstacles_demo"]


def _polyline_world(cmap, e):
    from .path import edge_polyline

    pts, clr = edge_polyline(cmap, e)
    return cmap._world(pts), clr / cmap.unit


def render(
    cmap, out, path=None, *, show_disks: bool = True, title: str | None = None, dpi: int = 120,
    start=None, goal=None,
):  # fmt: skip
    """Draw ``cmap`` (and optionally a :class:`~navkit.ecm.path.PathResult`) to a PNG
    (written atomically).

    Parameters
    ----------
    cmap : CorridorMap
    out : str or Path -- PNG file to write.
    path : PathResult or None (a falsy :class:`~navkit.ecm.path.NoPath` draws no path)
    show_disks : bool -- draw the corridor's clearance disks along the path.
    start, goal : (2,) [wu] or None -- marked (green circle, red square) whether
        or not there is a path; default: the path's ends.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, Polygon

    fig, ax = plt.subplots(figsize=(10, 10 * _aspect(cmap)))
    b = cmap._world(cmap.boundary)
    ax.add_patch(Polygon(b, closed=True, fill=False, ec="black", lw=1.5))
    for h, o in cmap.obstacles.items():
        if h == 0:
            continue
        ring = cmap._world(o["ring"])
        if o["kind"] == "polygon":
            ax.add_patch(Polygon(ring, closed=True, fc="0.55", ec="black", lw=0.8,
                                 label="obstacle"))  # fmt: skip
        elif o["kind"] == "segment":
            ax.plot(ring[:, 0], ring[:, 1], color="black", lw=2)
        else:
            ax.plot(ring[:, 0], ring[:, 1], "ko", ms=3)
    segs, cols = [], []
    for e in cmap.diagram.edges:
        pts, clr = _polyline_world(cmap, e)
        segs += [pts[i : i + 2] for i in range(len(pts) - 1)]
        cols += list(0.5 * (clr[:-1] + clr[1:]))
    if segs:
        lc = LineCollection(segs, array=np.asarray(cols), cmap="viridis", lw=1.2)
        ax.add_collection(lc)
        fig.colorbar(lc, ax=ax, shrink=0.7, label="clearance [wu]")
    if not path:
        path = None
    if path is not None:
        if show_disks:
            step = max(1, len(path.centers) // 60)
            for c, r in zip(path.centers[::step], path.radii[::step]):
                ax.add_patch(
                    Circle(c, r, fc=(0.3, 0.6, 1.0, 0.08), ec=(0.3, 0.6, 1.0, 0.4), lw=0.5,
                           label="corridor disk (free space around the medial axis)")
                )  # fmt: skip
            ax.plot(path.left[:, 0], path.left[:, 1], ".", color="tab:green", ms=2,
                    label="closest obstacle point, left")  # fmt: skip
            ax.plot(path.right[:, 0], path.right[:, 1], ".", color="tab:red", ms=2,
                    label="closest obstacle point, right")  # fmt: skip
        ax.plot(path.route[:, 0], path.route[:, 1], "--", color="tab:blue", lw=1,
                label="route along the medial axis")  # fmt: skip
        ax.plot(path.points[:, 0], path.points[:, 1], "-", color="tab:orange", lw=2.2,
                label="path (keeps the clearance)")  # fmt: skip
        if start is None:
            start = path.points[0]
        if goal is None:
            goal = path.points[-1]
    xlo, xhi = b[:, 0].min(), b[:, 0].max()
    ylo, yhi = b[:, 1].min(), b[:, 1].max()
    for p, style, name in ((start, "go", "start"), (goal, "rs", "goal")):
        if p is None:
            continue
        q = np.asarray(p, np.float64).reshape(2)
        ax.plot(q[0], q[1], style, ms=8, mec="black", label=name)
        xlo, xhi = min(xlo, q[0]), max(xhi, q[0])  # keep a point outside the boundary in view
        ylo, yhi = min(ylo, q[1]), max(yhi, q[1])
    handles, labels = ax.get_legend_handles_labels()
    entries = dict(zip(labels, handles))  # one entry per label (every disk has one)
    entries["medial axis (colour = clearance)"] = Line2D([], [], lw=1.2,
                                                         color=plt.get_cmap("viridis")(0.6))  # fmt: skip
    ax.legend(list(entries.values()), list(entries), loc="upper center", ncol=3,
              bbox_to_anchor=(0.5, -0.06), fontsize=8, frameon=False)  # fmt: skip
    ax.set_aspect("equal")
    pad = 0.02 * float(max(xhi - xlo, yhi - ylo))
    ax.set_xlim(xlo - pad, xhi + pad)
    ax.set_ylim(ylo - pad, yhi + pad)
    ax.set_title(title or "Explicit Corridor Map")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(out, buf.getvalue())


def _aspect(cmap) -> float:
    b = cmap.boundary
    w, h = np.ptp(b[:, 0]), np.ptp(b[:, 1])
    return float(min(max(h / w, 0.3), 2.0))


def load_scene(level):
    """Load a 2D scene for the CLI.

    ``level`` is a JSON file ``{"boundary": [[x, y], ...], "obstacles": [[[x, y], ...], ...]}``
    (a boundary may also be a list of rings: outer first, then holes), or a
    mesh file (``.obj``) whose walkable area is taken as the triangles' union
    projected onto the x-z plane (see :func:`navkit.ecm.navmesh.navmesh_rings`).
    Returns a :class:`~navkit.ecm.CorridorMap`.
    """
    from .corridor_map import CorridorMap

    p = Path(level)
    if not p.exists():
        raise InputError(f"no such level file: {level}")
    if p.suffix.lower() == ".json":
        d = json.loads(p.read_text())
        if "boundary" not in d:
            raise InputError("scene JSON needs a 'boundary' key")
        return CorridorMap.from_polygons(d["boundary"], d.get("obstacles", []))
    from navkit.geometry import load_obj

    return CorridorMap.from_navmesh(load_obj(p))


def ecm_command(
    level, start, goal, clearance: float = 0.0, out="ecm.png", preferred_clearance=None,
    *, _before_path=None,
):  # fmt: skip
    """Body of ``navkit ecm LEVEL --from x,y --to x,y --clearance r -o out.png``.

    Builds the corridor map of ``level`` (see :func:`load_scene`), plans a path
    from ``start`` to ``goal`` ((2,) [wu]; ``None`` = only draw the map) for an
    agent of radius ``clearance`` and writes a PNG to ``out`` with start and
    goal marked. Returns the :class:`~navkit.ecm.path.PathResult`, a falsy
    :class:`~navkit.ecm.path.NoPath` saying why there is none (start or goal
    outside the boundary, inside an obstacle, too close to one, or no corridor
    wide enough), or ``None`` when no query was asked (the PNG is written
    either way).
    """
    cmap = load_scene(level)
    path = None
    if _before_path is not None:  # (the CLI: wait for its side process's path kernels)
        _before_path()
    if start is not None and goal is not None:
        path = cmap.find_path(
            start, goal, clearance=clearance, preferred_clearance=preferred_clearance,
            explain=True,
        )  # fmt: skip
    title = "ECM"
    if path is not None:
        title += (
            f": path length {path.length:.3f} (clearance {clearance})"
            if path
            else f": {path.message}"
        )
    render(cmap, out, path, title=title, start=start, goal=goal)
    return path


def moving_obstacles_demo(out_dir, frames: int = 12, seed: int = 0):
    """Frames of a polygon moving across a scene; after each local ``move`` the
    path is re-planned only if the update report says the move touched its route
    (:meth:`UpdateReport.affects`). Writes ``frame_000.png`` ... to ``out_dir``;
    returns the update times [s]."""
    from .corridor_map import CorridorMap

    rng = np.random.default_rng(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    obs = []
    for cx in (8, 16, 24, 32):
        for cy in (8, 22):
            a = rng.uniform(0, np.pi)
            obs.append(
                np.array([[cx, cy], [cx + 2.5, cy + 0.4], [cx + 2.0, cy + 3.0]])
                + 0.3 * np.array([np.cos(a), np.sin(a)])
            )
    cmap = CorridorMap.from_polygons([[0, 0], [40, 0], [40, 30], [0, 30]], obs)
    mover = cmap.insert_polygon([[3, 14], [6, 14], [6, 16], [3, 16]]).handle
    times = []
    path = None
    for f in range(frames):
        fresh = path is None
        if fresh:
            path = cmap.find_path([1.5, 2], [38, 28], clearance=0.6)
        render(
            cmap,
            out / f"frame_{f:03d}.png",
            path,
            title=f"frame {f}: moving obstacle, clearance 0.6"
            + (" (path re-planned)" if fresh else " (path still valid)"),
        )
        rep = cmap.move(mover, offset=[30.0 / frames, 0.0])
        times.append(rep.seconds)
        if path is not None and rep.affects(path):
            path = None
    return times


def render_agents(cmap, trails, radii, out, *, title: str | None = None, dpi: int = 110) -> None:
    """Draw corridor agents' trajectories over ``cmap`` to a PNG (atomically).

    Parameters
    ----------
    cmap : CorridorMap
    trails : (frames, n, 2) float64 [wu] -- every agent's position per frame.
    radii : (n,) float64 [wu] -- drawn as disks at the first and last frame.
    out : str or Path -- PNG file to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, Polygon

    trails = np.asarray(trails, np.float64)
    radii = np.asarray(radii, np.float64)
    if trails.ndim != 3 or trails.shape[2] != 2 or radii.shape != (trails.shape[1],):
        raise InputError("trails must be (frames, n, 2) and radii (n,)")
    fig, ax = plt.subplots(figsize=(10, 10 * _aspect(cmap)))
    b = cmap._world(cmap.boundary)
    ax.add_patch(Polygon(b, closed=True, fill=False, ec="black", lw=1.5))
    for h, o in cmap.obstacles.items():
        if h != 0 and o["kind"] == "polygon":
            ax.add_patch(Polygon(cmap._world(o["ring"]), closed=True, fc="0.55", ec="black", lw=0.8))
    colours = plt.get_cmap("tab10")
    for i in range(trails.shape[1]):
        c = colours(i % 10)
        ax.plot(trails[:, i, 0], trails[:, i, 1], "-", color=c, lw=1.0, alpha=0.8)
        ax.add_patch(Circle(trails[0, i], radii[i], fc="none", ec=c, lw=0.8, ls=":"))
        ax.add_patch(Circle(trails[-1, i], radii[i], fc=c, ec="black", lw=0.5, alpha=0.7))
    ax.legend(
        [Line2D([], [], color="0.3"), Line2D([], [], ls=":", marker="o", mfc="none", color="0.3", lw=0),
         Line2D([], [], marker="o", color="0.3", lw=0)],
        ["trajectory", "start (agent's radius)", "end"],
        loc="upper center", ncol=3, bbox_to_anchor=(0.5, -0.04), fontsize=8, frameon=False,
    )  # fmt: skip
    ax.set_aspect("equal")
    ax.set_xlim(b[:, 0].min() - 0.3, b[:, 0].max() + 0.3)
    ax.set_ylim(b[:, 1].min() - 0.3, b[:, 1].max() + 0.3)
    ax.set_title(title or "corridor agents")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(out, buf.getvalue())
