"""Every code block of README.md runs as written.

```python blocks run in order in one namespace, in a temporary folder; ```sh blocks
run in order with bash (``set -euo pipefail``) in another temporary folder, with
this interpreter's ``navkit`` first on PATH. The ``pip install`` lines are left
out (CI installs the package itself, and the test suite does not run itself).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(lang: str) -> list[tuple[int, str]]:
    """(line number, code) of every ```lang block of the README."""
    text = README.read_text(encoding="utf-8")
    return [
        (text[: m.start()].count("\n") + 1, m.group(2))
        for m in _BLOCK.finditer(text)
        if m.group(1) == lang
    ]


def test_readme_has_the_blocks_this_test_runs():
    text = README.read_text(encoding="utf-8")
    langs = [m.group(1) for m in _BLOCK.finditer(text)]
    assert set(langs) <= {"python", "sh"}, f"a block this test does not run: {langs}"
    assert len(blocks("python")) >= 1 and len(blocks("sh")) >= 3


def test_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for line, code in blocks("python"):
        try:
            exec(compile(code, f"README.md:{line}", "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"README.md python block at line {line}: {type(exc).__name__}: {exc}")


def _shell_lines(code: str) -> str:
    return "\n".join(ln for ln in code.splitlines() if not ln.lstrip().startswith("pip install"))


def test_sh_blocks_run(tmp_path):
    bindir = Path(sys.executable).parent
    assert (bindir / "navkit").exists(), f"no navkit console script beside {sys.executable}"
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    ran = 0
    for line, code in blocks("sh"):
        script = _shell_lines(code)
        if not script.strip():
            continue
        r = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert r.returncode == 0, (
            f"README.md sh block at line {line} exited {r.returncode}:\n{r.stdout[-2000:]}"
            f"\n{r.stderr[-2000:]}"
        )
        ran += 1
    assert ran >= 2
    assert (tmp_path / "dungeon.navmesh").exists() and (tmp_path / "ecm.png").exists()
