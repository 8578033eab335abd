"""Random 2D scenes for the ECM tests and benchmark (non-overlapping obstacles)."""

from __future__ import annotations

import numpy as np


def random_obstacle(rng, cx, cy, size, kind=None):
    kind = kind or rng.choice(["poly", "poly", "poly", "seg", "point"])
    if kind == "point":
        return np.array([[cx, cy]])
    if kind == "seg":
        a = rng.uniform(0, np.pi)
        d = np.array([np.cos(a), np.sin(a)]) * size
        return np.array([[cx, cy] - d, [cx, cy] + d])
    k = int(rng.integers(3, 7))
    ang = (np.arange(k) + rng.uniform(-0.3, 0.3, k)) * (2 * np.pi / k) + rng.uniform(0, 2 * np.pi)
    rad = size * rng.uniform(0.5, 1.0, k)
    return np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], axis=1)


def random_scene(seed, n_obstacles, width=100.0, height=60.0, size=2.0):
    """Boundary rectangle and obstacles on a jittered grid (never touching)."""
    rng = np.random.default_rng(seed)
    boundary = np.array([[0, 0], [width, 0], [width, height], [0, height]], float)
    cols = max(1, int(np.ceil(np.sqrt(n_obstacles * width / height))))
    rows = max(1, int(np.ceil(n_obstacles / cols)))
    cw, ch = width / cols, height / rows
    s = min(size, 0.3 * min(cw, ch))
    cells = rng.permutation(cols * rows)[:n_obstacles]
    obs = []
    for c in cells:
        i, j = c % cols, c // cols
        cx = (i + 0.5) * cw + rng.uniform(-0.1, 0.1) * cw
        cy = (j + 0.5) * ch + rng.uniform(-0.1, 0.1) * ch
        obs.append(random_obstacle(rng, cx, cy, s))
    return boundary, obs, (cw, ch, s)
