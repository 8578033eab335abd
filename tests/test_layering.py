"""The layering of docs/architecture.md: a lower layer never imports a higher one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "navkit"


def _imports(path: Path) -> set[str]:
    """Absolute names of the navkit modules ``path`` imports (at any depth, lazily or not)."""
    pkg = ["navkit", *path.relative_to(SRC).parent.parts]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg[: len(pkg) - node.level + 1] if node.level else []
            mod = ".".join([*base, node.module] if node.module else base)
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return {m for m in out if m.startswith("navkit")}


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("recast", ("navkit.detour", "navkit.pipeline", "navkit.tilecache", "navkit.crowd")),
        ("detour", ("navkit.pipeline", "navkit.tilecache", "navkit.crowd", "navkit.recast.build")),
    ],
)
def test_lower_layers_do_not_import_higher_ones(package, forbidden):
    bad = [
        f"{p.relative_to(SRC)} imports {m}"
        for p in sorted((SRC / package).rglob("*.py"))
        for m in sorted(_imports(p))
        if m.startswith(forbidden)
    ]
    assert not bad, bad


def test_the_checker_sees_relative_imports(tmp_path):
    assert "navkit.detour.navmesh" in _imports(SRC / "pipeline.py")
    assert "navkit.recast.build" in _imports(SRC / "tilecache" / "build.py")
