"""Animations of a crowd run over its navmesh, top down (xz): GIF or self-contained HTML.

:func:`write_gif` draws with matplotlib (Pillow writer); :func:`write_html` writes
one HTML file with the navmesh as SVG and the agents drawn on a canvas by a few
lines of JavaScript (no external resources). Both take the trajectory as
``(T + 1, N, 3)`` positions and keep at most ``max_frames`` evenly spaced frames.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from navkit._io import atomic_write_bytes
from navkit.errors import InputError

from .draw_data import navmesh_draw_data
from .render import _plt

__all__ = ["write_gif", "write_html"]


def _frames(traj: np.ndarray, max_frames: int) -> np.ndarray:
    t = np.asarray(traj)
    if t.ndim != 3 or t.shape[2] != 3 or t.shape[0] < 1:
        raise InputError(f"trajectory must have shape (T + 1, N, 3), got {t.shape}")
    if not isinstance(max_frames, int) or max_frames < 1:
        raise InputError(f"max_frames must be an int >= 1, got {max_frames!r}")
    return np.unique(
        np.linspace(0, t.shape[0] - 1, min(max_frames, t.shape[0])).round().astype(int)
    )


def write_gif(
    navmesh,
    trajectory,
    targets,
    radius: float,
    out: str | os.PathLike[str],
    *,
    dt: float = 1 / 60,
    max_frames: int = 60,
    fps: int = 10,
    title: str = "",
) -> int:
    """Write an animated GIF of the agents (discs of ``radius``) walking; returns the frame count.

    Parameters
    ----------
    trajectory : (T + 1, N, 3) float array
        Positions [wu] after every step (row 0: the start).
    targets : (N, 3) float array
        Drawn as small crosses.
    """
    plt = _plt()
    from matplotlib.animation import FuncAnimation, PillowWriter
    from matplotlib.collections import EllipseCollection, PolyCollection

    traj = np.asarray(trajectory, np.float64)
    idx = _frames(traj, max_frames)
    dd = navmesh_draw_data(navmesh)
    x0, z0, x1, z1 = dd.bmin[0], dd.bmin[2], dd.bmax[0], dd.bmax[2]
    w = 6.0
    fig, ax = plt.subplots(figsize=(w, w * max(0.3, min(3.0, (z1 - z0) / max(x1 - x0, 1e-9)))))
    ax.add_collection(
        PolyCollection(dd.polys, facecolors="#cfe3f3", edgecolors="#7aa6c8", linewidths=0.4)
    )
    tg = np.asarray(targets, np.float64)
    ax.plot(tg[:, 0], tg[:, 2], "x", color="#999999", markersize=3, linewidth=0.5)
    n = traj.shape[1]
    colors = _plt().get_cmap("tab10")(np.arange(n) % 10)
    d = 2.0 * float(radius)
    discs = EllipseCollection(
        np.full(n, d), np.full(n, d), np.zeros(n), units="xy", offsets=traj[0][:, [0, 2]],
        offset_transform=ax.transData, facecolors=colors, edgecolors="black", linewidths=0.3,
    )  # fmt: skip
    ax.add_collection(discs)
    ax.set_xlim(x0, x1)
    ax.set_ylim(z1, z0)  # z grows downward, as navkit's top view draws it
    ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("z")
    label = ax.set_title(title)

    def draw(k: int):
        discs.set_offsets(traj[idx[k]][:, [0, 2]])
        label.set_text(f"{title}  t = {idx[k] * dt:.1f} s".strip())
        return (discs, label)

    anim = FuncAnimation(fig, draw, frames=len(idx), blit=False)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "anim.gif"
        try:
            anim.save(f, writer=PillowWriter(fps=fps), dpi=72)
        except (ImportError, ValueError) as exc:  # pragma: no cover - Pillow missing
            raise InputError(f"{out}: cannot write a GIF: {exc}") from None
        finally:
            plt.close(fig)
        atomic_write_bytes(out, f.read_bytes())
    return len(idx)


_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:1em}} #v{{position:relative}}
#v svg,#v canvas{{position:absolute;left:0;top:0}}</style></head>
<body><h3>{title}</h3>
<div><button id="play">pause</button> <input id="t" type="range" min="0" max="{last}" value="0"
 style="width:400px"> <span id="lbl"></span></div>
<div id="v" style="width:{w}px;height:{h}px">
<svg width="{w}" height="{h}" viewBox="{vb}">{polys}</svg>
<canvas id="c" width="{w}" height="{h}"></canvas></div>
<script>
const D = {data};
const c = document.getElementById('c'), g = c.getContext('2d');
const s = D.scale, ox = D.x0, oz = D.z0;
let k = 0, playing = true;
function draw() {{
  g.clearRect(0, 0, c.width, c.height);
  const f = D.frames[k];
  for (let i = 0; i < f.length; i += 2) {{
    const x = (f[i] - ox) * s, z = (f[i + 1] - oz) * s;
    g.beginPath(); g.arc(x, z, Math.max(1, D.r * s), 0, 2 * Math.PI);
    g.fillStyle = 'hsl(' + ((i / 2 * 47) % 360) + ',70%,50%)'; g.fill();
    g.strokeStyle = '#000'; g.lineWidth = 0.5; g.stroke();
  }}
  document.getElementById('t').value = k;
  document.getElementById('lbl').textContent = 't = ' + D.times[k].toFixed(1) + ' s';
}}
document.getElementById('play').onclick = (e) => {{
  playing = !playing; e.target.textContent = playing ? 'pause' : 'play';
}};
document.getElementById('t').oninput = (e) => {{ k = +e.target.value; draw(); }};
setInterval(() => {{ if (playing) {{ k = (k + 1) % D.frames.length; draw(); }} }}, 1000 / D.fps);
draw();
</script></body></html>
"""


def write_html(
    navmesh,
    trajectory,
    radius: float,
    out: str | os.PathLike[str],
    *,
    dt: float = 1 / 60,
    max_frames: int = 300,
    fps: int = 20,
    title: str = "navkit crowd",
    width: int = 800,
) -> int:
    """Write a self-contained HTML animation (SVG navmesh + canvas agents); returns the frame count."""
    traj = np.asarray(trajectory, np.float64)
    idx = _frames(traj, max_frames)
    dd = navmesh_draw_data(navmesh)
    x0, z0, x1, z1 = (float(v) for v in (dd.bmin[0], dd.bmin[2], dd.bmax[0], dd.bmax[2]))
    scale = width / max(x1 - x0, 1e-9)
    h = max(1, int(round((z1 - z0) * scale)))
    polys = "".join(
        '<polygon points="{}" fill="#cfe3f3" stroke="#7aa6c8" stroke-width="{:.3g}"/>'.format(
            " ".join(f"{(x - x0) * scale:.1f},{(z - z0) * scale:.1f}" for x, z in p), 0.5
        )
        for p in dd.polys
    )
    data = {
        "x0": x0, "z0": z0, "scale": scale, "r": float(radius), "fps": int(fps),
        "times": [round(float(i * dt), 3) for i in idx],
        "frames": [np.round(traj[i][:, [0, 2]], 2).ravel().tolist() for i in idx],
    }  # fmt: skip
    text = _HTML.format(
        title=title.replace("<", "&lt;"), last=len(idx) - 1, w=width, h=h,
        vb=f"0 0 {width} {h}", polys=polys, data=json.dumps(data, separators=(",", ":")),
    )  # fmt: skip
    buf = io.BytesIO(text.encode())
    atomic_write_bytes(out, buf.getvalue())
    return len(idx)
