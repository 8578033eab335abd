"""Compile-cost policies of navkit._jit that change what numba compiles."""

from __future__ import annotations

import numpy as np
import pytest
from numba.core import event

from navkit._jit import njit


class _Names(event.Listener):
    def __init__(self) -> None:
        self.names: list[str] = []

    def on_start(self, ev) -> None:
        pass

    def on_end(self, ev) -> None:
        d = ev.data["dispatcher"]
        fn = getattr(d, "py_func", d)
        self.names.append(f"{fn.__module__}.{fn.__qualname__}")


def _copy_prefix(a, b, k):
    a[:k] = b[:k]
    return a[0]


def test_slice_assignment_compiles_no_string_formatting() -> None:
    # numba's own message formats both shapes (str, join, f-strings: ~36 functions
    # compiled); navkit's stub raises a constant message instead.
    kernel = njit(cache=False)(_copy_prefix)
    listener = _Names()
    with event.install_listener("numba:compile", listener):
        assert kernel(np.zeros(5), np.ones(5), 3) == 1.0
    assert listener.names, "the kernel compiled"
    formatting = [n for n in listener.names if "unicode" in n or "str_generic" in n]
    assert formatting == []
    assert not any("ol_raise_with_shape_context_cpu" in n for n in listener.names)


def test_slice_assignment_mismatch_still_raises() -> None:
    kernel = njit(cache=False)(_copy_prefix)
    with pytest.raises(ValueError, match="cannot assign slice"):
        kernel(np.zeros(5), np.ones(2), 3)


def test_kernels_have_no_cfunc_wrapper() -> None:
    kernel = njit(cache=False)(_copy_prefix)
    kernel(np.zeros(3), np.ones(3), 1)
    assert kernel.targetoptions.get("no_cfunc_wrapper") is True


def _twice(x):
    return 2 * x


def test_an_entry_kernel_compiles_once_for_kernels_and_python() -> None:
    """``njit(entry=True)``: a kernel that a feature calls from another kernel and then
    from Python compiles once (with its CPython wrapper); a plain kernel compiles a
    second time on its first Python call (``tests/test_jit_callee.py``)."""
    from navkit._jit import NUMBA_PATCHES

    if not NUMBA_PATCHES.get("callee_compiles_without_wrapper"):
        pytest.skip("numba's dispatcher is not the one navkit's compile hook expects")
    for entry, compiles in ((True, 1), (False, 2)):
        callee = njit(cache=False, entry=entry)(_twice)
        caller = njit(cache=False)(lambda x, f=callee: f(x) + 1)  # noqa: B023
        listener = _Names()
        with event.install_listener("numba:compile", listener):
            assert caller(3) == 7 and callee(3) == 6
        assert sum(n.endswith("._twice") for n in listener.names) == compiles, listener.names


def test_layout_files_are_every_file_that_defines_a_descriptor_layout() -> None:
    """Every navkit file with a ``*_SPEC`` table or a :func:`desc_opener` call is in
    ``LAYOUT_FILES`` (their contents stamp every kernel's cache entries)."""
    import re
    from pathlib import Path

    import navkit
    from navkit._jit import LAYOUT_FILES

    root = Path(navkit.__file__).resolve().parent
    pattern = re.compile(r"^\w*_SPEC\s*=|desc_opener\(", re.M)
    found = {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.py")
        if pattern.search(p.read_text(encoding="utf-8"))
    }
    assert found == set(LAYOUT_FILES)


def test_source_stamp_follows_the_modules_a_kernel_module_imports(monkeypatch) -> None:
    """A kernel's cache stamp covers its module's navkit imports, transitively (their
    kernels are compiled into it, their constants frozen in it): changing a callee's
    source changes its callers' stamps, and only theirs."""
    from pathlib import Path

    from navkit import _jit

    srcs = {
        "navkit.fk": b"from . import _fa\nfrom ._fb import g as h, K  # callee\n",
        "navkit._fa": b"import numpy as np\nfrom navkit._fc import (\n    x,\n    y,\n)\n",
        "navkit._fb": b"def g(): pass\n",
        "navkit._fc": b"x = y = 1\n",
        "navkit._fd": b"def unrelated(): pass\n",
    }
    for cache in ("_SOURCES", "_IMPORTS", "_STAMPS", "_DIGESTS", "_FILES"):
        monkeypatch.setattr(_jit, cache, {})
    for m, src in srcs.items():
        _jit._SOURCES[m] = src
        _jit._FILES[m] = Path(m.replace(".", "/") + ".py")
    assert _jit._imports("navkit.fk") == {"navkit._fa", "navkit._fb"}
    assert _jit._imports("navkit._fa") == {"navkit._fc"}
    before = {m: _jit.source_stamp(m) for m in ("navkit.fk", "navkit._fa", "navkit._fd")}
    for cache in ("_STAMPS", "_DIGESTS"):
        getattr(_jit, cache).clear()
    _jit._SOURCES["navkit._fc"] = b"x = y = 2\n"  # the callee of a callee changed
    after = {m: _jit.source_stamp(m) for m in before}
    assert after["navkit.fk"] != before["navkit.fk"]
    assert after["navkit._fa"] != before["navkit._fa"]
    assert after["navkit._fd"] == before["navkit._fd"]


def test_query_kernels_are_stamped_with_the_files_they_compile_in() -> None:
    """The single-call kernels compile the raycast, nearest and move cores of other
    files (qnative8 changed _raycast.py alone; numba's own stamp would have kept the
    callers' old machine code)."""
    from navkit import _jit

    deps = set()
    todo = ["navkit.detour._single"]
    while todo:
        for d in _jit._imports(todo.pop()):
            if d not in deps:
                deps.add(d)
                todo.append(d)
    assert {"navkit.detour._raycast", "navkit.detour._poly", "navkit.detour._view",
            "navkit.detour._search", "navkit.detour._funnel"} <= deps  # fmt: skip


def test_a_cache_entry_saved_with_other_layouts_is_not_loaded(tmp_path) -> None:
    """A kernel's cache index carries the layouts' stamp: an index saved with
    another stamp (an older ``VIEW_SPEC``, say) is ignored and the kernel compiles."""
    from tests.subproc import run_snippet

    (tmp_path / "layoutmod.py").write_text(
        "from navkit._jit import njit\n\n@njit\ndef k(x):\n    return x + 1\n"
    )
    code = (
        "import sys\n"
        "from navkit import _jit\n"
        "if sys.argv[1] == 'other':\n"
        "    _jit._LAYOUT_STAMP.append('an older layout')\n"
        "import layoutmod\n"
        "n = []\n"
        "from numba.core import event\n"
        "class L(event.Listener):\n"
        "    def on_start(self, ev): n.append(1)\n"
        "    def on_end(self, ev): pass\n"
        "with event.install_listener('numba:compile', L()):\n"
        "    layoutmod.k(1)\n"
        "print(len(n))\n"
    )
    cache = tmp_path / "cache"
    assert run_snippet(code, "now", tmp_path, cache)[0] == "1"  # cold: compiles
    assert run_snippet(code, "now", tmp_path, cache)[0] == "0"  # warm: loads
    assert run_snippet(code, "other", tmp_path, cache)[0] == "1"  # other layouts
    assert run_snippet(code, "now", tmp_path, cache)[0] == "1"  # (it overwrote it)
