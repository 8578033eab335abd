"""The one place that decides how navkit compiles its kernels.

Every kernel uses :func:`njit` (or :func:`pnjit` for ``prange`` loops).
``cache=True`` keeps compiled machine code on disk between runs, so only the
very first import pays numba's compile time. ``fastmath`` stays off: Recast's
float32 arithmetic must be reproduced bit for bit, which forbids reassociation.
``nogil=True`` lets threads run kernels side by side (one NavMeshQuery per thread).
"""

from __future__ import annotations

import inspect
import re
import threading
from typing import Any

import numba
from numba.core import event as _event

__all__ = ["njit", "pnjit", "borrow", "lend", "F32", "get_threads", "set_threads"]

#: numpy float32 constructor, for literals inside kernels: ``x * F32(0.5)`` keeps
#: float32 arithmetic where ``x * 0.5`` would widen to float64.
import numpy as _np

F32 = _np.float32


def _one_signature(disp, lent=False, entry=False):
    """Make calls from other kernels type ``disp``'s arguments without literals.

    numba types a constant argument of a call between kernels as a literal
    (``f(x, -1)`` gives ``Literal[int](-1)``, ``g(True)`` ``Literal[bool](True)``)
    and compiles the callee once per distinct literal: a helper called with
    different constants compiled 2 to 5 times, each copy optimised again by LLVM.
    Here the callee is compiled for the plain types (int64, bool) instead, and
    every call site shares that one signature. The cost is that a constant flag no
    longer prunes the callee's dead branch (one predictable branch at run time).
    """
    orig = disp.get_call_template

    def get_call_template(args, kws):
        args = tuple(_unliteral(a) for a in args)
        kws = {k: _unliteral(v) for k, v in kws.items()}
        if lent:
            args = tuple(_lent_arg(a) for a in args)
            kws = {k: _lent_arg(v) for k, v in kws.items()}
        with _as_callee():
            return orig(args, kws)

    disp.get_call_template = get_call_template
    _stamp_layouts(disp)
    if _CALLEES_OK and not entry:
        disp._navkit_callee = True
    return disp


#: navkit's files that define the memory layout of what kernels read through a
#: descriptor (``*_SPEC`` tables, :func:`desc_opener`): a kernel's machine code has
#: the layout built in while its argument types (int64 descriptor arrays) do not
#: change with it. ``tests/test_jit_compile.py`` checks that the list is complete.
LAYOUT_FILES = (
    "_jit.py",
    "crowd/requests.py",
    "crowd/step.py",
    "detour/_nodes.py",
    "detour/_single.py",
    "detour/_view.py",
    "detour/navmesh.py",
    "tilecache/_update.py",
)
_LAYOUT_STAMP: list[str] = []
_ROOT: list = []  # the package's folder (a Path), found once
_SOURCES: dict[str, bytes] = {}  # navkit module name -> its source ("" when not found)
_IMPORTS: dict[str, frozenset[str]] = {}  # module -> the navkit modules it imports
_STAMPS: dict[str, str] = {}  # module -> source_stamp(module)
#: an import statement: (from-module, names) or (import-list,)
_IMPORT_LINE = re.compile(
    r"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+(navkit[^\n]*))",
    re.M,
)


def _root():
    if not _ROOT:
        from pathlib import Path

        _ROOT.append(Path(__file__).resolve().parent)
    return _ROOT[0]


def layout_stamp() -> str:
    """A hash of the contents of :data:`LAYOUT_FILES` (computed once per process)."""
    if not _LAYOUT_STAMP:
        import hashlib

        root = _root()
        h = hashlib.blake2b(digest_size=16)
        for name in LAYOUT_FILES:
            try:
                h.update((root / name).read_bytes())
            except OSError:  # pragma: no cover - a file missing from an install
                h.update(name.encode())
        _LAYOUT_STAMP.append(h.hexdigest())
    return _LAYOUT_STAMP[0]


_FILES: dict[str, Any] = {}  # module -> its file (None: no such navkit module)
_DIGESTS: dict[str, bytes] = {}  # module -> hash of its source


def _module_file(mod: str):
    """The source file of navkit module ``mod`` (a package: its ``__init__.py``), or None."""
    if mod in _FILES:
        return _FILES[mod]
    parts = mod.split(".")[1:]
    base = _root().joinpath(*parts)
    found = None
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            found = f
            break
    _FILES[mod] = found
    return found


def _source(mod: str) -> bytes:
    src = _SOURCES.get(mod)
    if src is None:
        f = _module_file(mod)
        try:
            src = f.read_bytes() if f is not None else b""
        except OSError:  # pragma: no cover - unreadable: stamped by name only
            src = b""
        _SOURCES[mod] = src
    return src


def _digest(mod: str) -> bytes:
    d = _DIGESTS.get(mod)
    if d is None:
        import hashlib

        d = _DIGESTS[mod] = hashlib.blake2b(_source(mod), digest_size=16).digest()
    return d


def _imports(mod: str) -> frozenset[str]:
    """The navkit modules ``mod``'s source imports (``import navkit.x``, ``from navkit.x
    import ...``, ``from .x import ...``; a name imported from a package that is one of
    its submodules counts as that submodule), read from the text, imports inside
    functions included."""
    got = _IMPORTS.get(mod)
    if got is not None:
        return got
    f = _module_file(mod)
    pkg = mod if f is not None and f.name == "__init__.py" else mod.rpartition(".")[0]
    out: set[str] = set()
    for m in _IMPORT_LINE.finditer(_source(mod).decode("utf-8", "replace")):
        if m.group(3):  # import navkit.x[, ...]
            out.update(x.split("#")[0].split(" as ")[0].strip() for x in m.group(3).split(","))
            continue
        target = m.group(1)
        names = ",".join(x.split("#")[0] for x in m.group(2).split("\n"))
        if target.startswith("."):
            dots = len(target) - len(target.lstrip("."))
            base = pkg.split(".")
            if dots > 1:
                base = base[: len(base) - (dots - 1)]
            rest = target[dots:]
            target = ".".join(base + ([rest] if rest else []))
        if not (target == "navkit" or target.startswith("navkit.")):
            continue
        subs = [n.split(" as ")[0].strip() for n in names.strip("() ").split(",")]
        subs = [n for n in subs if n]
        named = [f"{target}.{n}" for n in subs if _module_file(f"{target}.{n}") is not None]
        out.update(named)
        if len(named) < len(subs):  # names defined in the module (or package) itself
            out.add(target)
    out.discard(mod)
    got = _IMPORTS[mod] = frozenset(x for x in out if _module_file(x) is not None)
    return got


def source_stamp(mod: str) -> str:
    """A hash of the sources of navkit module ``mod`` and of every navkit module it
    imports, directly or through others (computed once per module and process)."""
    st = _STAMPS.get(mod)
    if st is None:
        import hashlib

        seen = {mod}
        todo = [mod]
        while todo:
            for dep in _imports(todo.pop()):
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        h = hashlib.blake2b(digest_size=16)
        for m in sorted(seen):
            h.update(m.encode())
            h.update(_digest(m))
        st = _STAMPS[mod] = h.hexdigest()
    return st


def _stamp_layouts(disp) -> None:
    """Make numba's on-disk cache of ``disp`` valid only with today's sources.

    numba keys a kernel's cache entries to its own source file (modification time
    and size) alone. A kernel that calls a kernel of another file, uses a constant of
    another file or reads a descriptor laid out in another file (``detour/_view.py``'s
    ``VIEW_SPEC``, say) would load stale machine code after only that other file
    changed -- an editable install after ``git pull`` -- and run the old callee or
    read its arrays with the old dtypes. The cache index's stamp gets, beside
    numba's own, :func:`layout_stamp` and :func:`source_stamp` of the kernel's module
    (its source and every navkit module it imports, transitively): an entry saved
    with other sources is not loaded; the kernel compiles again and overwrites it."""
    cf = getattr(getattr(disp, "_cache", None), "_cache_file", None)
    stamp = getattr(cf, "_source_stamp", None)
    if stamp is not None:
        mod = getattr(getattr(disp, "py_func", None), "__module__", None) or ""
        cf._source_stamp = _Stamp(stamp, mod)  # type: ignore[union-attr]


class _Stamp:
    """A kernel's cache stamp: numba's (its file's modification time and size),
    :func:`layout_stamp` and :func:`source_stamp` of its module. The last two are
    computed when numba first compares or saves the stamp (a kernel that is never
    called costs nothing); it is pickled as the plain tuple."""

    __slots__ = ("_numba", "_mod", "_value")

    def __init__(self, numba_stamp, mod: str) -> None:
        self._numba = numba_stamp
        self._mod = mod
        self._value: tuple | None = None

    def value(self) -> tuple:
        if self._value is None:
            deps = source_stamp(self._mod) if self._mod.startswith("navkit") else ""
            self._value = (self._numba, layout_stamp(), deps)
        return self._value

    def __eq__(self, other: object) -> bool:
        return self.value() == (other.value() if isinstance(other, _Stamp) else other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.value())

    def __reduce__(self):
        return (tuple, (self.value(),))


def _unliteral(t):
    from numba.core import types

    return types.unliteral(t) if isinstance(t, types.Literal) else t


def njit(*args, lent=False, link=True, entry=False, **kwargs):
    """``numba.njit`` with navkit's policy (cache, nogil, no fastmath, one
    signature per kernel for calls between kernels: see :func:`_one_signature`).

    ``lent=True``: called from another kernel, the kernel takes its (writable) array
    arguments, alone or in tuples, as lent arrays (:data:`LentArray`): no reference
    counting on the way in or inside, and one signature whether the caller passes
    owned, borrowed or lent arrays. Only for kernels that return no array argument
    (nor a view of one) and keep none: the caller's reference is all that keeps a
    lent array alive.

    ``link=False``: other kernels call this one's own compiled code instead of
    linking a copy of its module into theirs (see :func:`_unlinked_call`). For large
    kernels called a few times per call of their caller (a bake's stages): each
    caller's compile then optimises and emits only its own code.

    ``entry=True``: the kernel is called both from Python and from other kernels in
    one feature; every compile includes the CPython wrapper, so a kernel's compile
    reaching it first does not leave it to be compiled a second time, with the
    wrapper, on its first Python call (see :func:`_install_callee_compiles`)."""
    link = link or not _UNLINK_OK  # (numba without the hook: link as numba does)
    if len(args) == 1 and callable(args[0]) and not link:
        _UNLINKED.add((args[0].__module__, args[0].__qualname__))
    elif not link:

        def unlinked(fn):
            _UNLINKED.add((fn.__module__, fn.__qualname__))
            return njit(*args, lent=lent, entry=entry, **kwargs)(fn)

        return unlinked
    kwargs.setdefault("cache", True)
    kwargs.setdefault("nogil", True)
    kwargs.setdefault("fastmath", False)
    kwargs.setdefault("error_model", "numpy")
    # No C-callable wrapper: navkit never takes a kernel's address (cfunc / first-class
    # function); numba otherwise builds and optimises one per compile (~3% of compile CPU).
    kwargs.setdefault("no_cfunc_wrapper", True)
    if len(args) == 1 and callable(args[0]) and not kwargs.get("inline"):
        return _one_signature(numba.njit(**kwargs)(args[0]), lent, entry)
    dec = numba.njit(*args, **kwargs)
    if kwargs.get("inline") or args:
        return dec

    def wrap(fn):
        return _one_signature(dec(fn), lent, entry)

    return wrap


#: (module, qualname) of the kernels compiled with ``link=False``
_UNLINKED: set[tuple[str, str]] = set()


class _Need:
    """Run before a cached kernel that calls a ``link=False`` kernel is loaded (numba's
    ``reload_init``): compile or load the callee in this process, so that the
    caller's machine code finds its symbol. The callee's symbol may carry another
    name in this process (numba numbers its ABI tags in compile order): the name the
    caller was compiled against is then added as an alias of the callee's code."""

    def __init__(self, mod: str, qual: str, argtypes: tuple, restype: Any, name: str) -> None:
        self.mod, self.qual, self.argtypes = mod, qual, tuple(argtypes)
        self.restype, self.name = restype, name

    def __reduce__(self):
        return (_Need, (self.mod, self.qual, self.argtypes, self.restype, self.name))

    def _key(self) -> tuple:
        return (self.mod, self.qual, self.argtypes, self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Need) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.mod, self.qual, self.name))

    def __call__(self) -> None:
        import importlib

        obj: Any = importlib.import_module(self.mod)
        for part in self.qual.split("."):
            obj = getattr(obj, part)
        argtypes = tuple(_live_type(t) for t in self.argtypes)
        with _as_callee():  # (for a caller's machine code: no CPython wrapper needed)
            obj.compile(argtypes)
        cres = obj.overloads[argtypes]
        if cres.signature.return_type != _live_type(self.restype):
            # a kernel's cached caller predates a change of this kernel: its call
            # would not match; numba's cache of the caller must be rebuilt
            raise RuntimeError(
                f"navkit: numba's cache is stale ({self.mod}.{self.qual} changed its "
                "return type): delete the *.nbi / *.nbc files under navkit's __pycache__ "
                "folders (or NUMBA_CACHE_DIR)"
            )
        if cres.fndesc.llvm_func_name != self.name:
            import llvmlite.binding as ll

            ll.add_symbol(
                self.name, cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
            )


def _live_type(t):
    """``t`` with navkit's lent array and array reference types of this process.

    A cache entry written before these types pickled by reference (see
    :func:`_by_reference`) holds copies of their classes made by cloudpickle, which
    numba's attribute and cast templates (registered for the real classes) do not
    match: compiling a callee for those types fails to type. Rebuilt here with the real
    classes (containers of them too); any other type is returned as it is."""
    from numba.core import types

    cls = type(t)
    if cls.__name__ == "LentArray" and cls is not LentArray and cls.__module__ == __name__:
        return LentArray(t.dtype, t.ndim, t.layout)
    if cls.__name__ == "ArraysRef" and cls is not ArraysRef and cls.__module__ == __name__:
        return ArraysRef(t.tuple_class, t.fields, [_live_type(m) for m in t.members])
    if isinstance(t, types.BaseTuple) and hasattr(t, "types"):
        members = [_live_type(m) for m in t.types]
        if all(a is b for a, b in zip(members, t.types, strict=True)):
            return t  # (nothing of ours inside: as it is)
        if isinstance(t, types.BaseNamedTuple):
            return types.NamedTuple(members, t.instance_class)
        return types.Tuple(members)
    return t


def _unlinked_call(fndesc):
    """numba's call of a compiled kernel from another kernel (``imputils.user_function``)
    without linking the callee's library into the caller's: the call goes to the
    callee's symbol, which the JIT resolves to the callee's own machine code (compiled
    and in memory first, or loaded first from the cache by :class:`_Need`). numba
    otherwise links the callee's whole module (with everything it links) into each
    caller's and optimises and compiles it again there, at every level of calls."""
    from numba.core import cgutils, imputils

    def imp(context, builder, sig, args):
        func = context.declare_function(builder.module, fndesc)
        status, retval = context.call_conv.call_function(
            builder, func, fndesc.restype, fndesc.argtypes, args
        )
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        retval = imputils.fix_returning_optional(context, builder, sig, status, retval)
        context.active_code_library._reload_init.add(
            _Need(fndesc.modname, fndesc.qualname, fndesc.argtypes, fndesc.restype,
                  fndesc.llvm_func_name)
        )  # fmt: skip
        return imputils.impl_ret_new_ref(context, builder, fndesc.restype, retval)

    imp.signature = fndesc.argtypes
    imp.libs = ()
    return imp


def _install_unlinked() -> bool:
    """Route calls of ``link=False`` kernels through :func:`_unlinked_call`; False (and
    nothing changed: every kernel links, as numba does) when this numba lacks the
    internals it relies on."""
    from numba.core import base, codegen, imputils

    orig = getattr(base.BaseContext, "insert_user_function", None)
    if orig is None or not all(
        hasattr(imputils, a) for a in ("fix_returning_optional", "impl_ret_new_ref")
    ):
        return False
    try:  # a code library's callbacks run before it is loaded from the cache
        if "_reload_init" not in inspect.getsource(codegen.CodeLibrary.__init__):
            return False
    except (OSError, TypeError):  # pragma: no cover - no source (frozen install)
        return False
    if getattr(orig, "_navkit", False):  # pragma: no cover - module reloaded
        return True

    def insert_user_function(self, func, fndesc, libs=()):
        if (fndesc.modname, fndesc.qualname) in _UNLINKED:
            impl = _unlinked_call(fndesc)
            self._defns[func].append(impl, impl.signature)
            return
        orig(self, func, fndesc, libs)

    insert_user_function._navkit = True  # type: ignore[attr-defined]
    base.BaseContext.insert_user_function = insert_user_function  # type: ignore[method-assign]
    _keep_reload_init()
    return True


def _keep_reload_init() -> None:
    """A kernel loaded from the cache keeps its callbacks on its code library.

    numba runs a cached kernel's ``reload_init`` callbacks (:class:`_Need`) when it
    loads it, but the loaded library's own ``_reload_init`` stays empty; a kernel
    compiled later that links that library then inherits none of them, and its cached
    code calls an unloaded ``link=False`` kernel through a null symbol in the next
    process. The loaded library gets them back here."""
    from numba.core import compiler

    cls = compiler.CompileResult
    orig = cls.__dict__["_rebuild"].__func__
    if getattr(orig, "_navkit", False):  # pragma: no cover - module reloaded
        return

    def _rebuild(cls, target_context, libdata, fndesc, env, signature, objectmode, lifted,
                 typeann, reload_init, referenced_envs):  # fmt: skip
        cr = orig(cls, target_context, libdata, fndesc, env, signature, objectmode, lifted,
                  typeann, reload_init, referenced_envs)  # fmt: skip
        if reload_init:
            lib = getattr(cr, "library", None)
            if lib is not None and hasattr(lib, "_reload_init"):
                lib._reload_init.update(reload_init)
        return cr

    _rebuild._navkit = True  # type: ignore[attr-defined]
    cls._rebuild = classmethod(_rebuild)  # type: ignore[assignment]


_UNLINK_OK = _install_unlinked()


# --- kernels compiled for other kernels: no CPython wrapper ---------------------------

_CALLEE = threading.local()  # .depth > 0: compiling for another kernel's call
_KEPT: list = []  # callee-only compiles replaced by a compile with a wrapper (see below)


class _as_callee:
    """While active, navkit kernels compile without a CPython wrapper (see
    :func:`_install_callee_compiles`)."""

    def __enter__(self) -> None:
        _CALLEE.depth = getattr(_CALLEE, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        _CALLEE.depth -= 1


def _has_wrapper(cres) -> bool:
    """Whether a compile result has the CPython wrapper Python calls go through."""
    try:
        return bool(cres.library.get_pointer_to_function(cres.fndesc.llvm_cpython_wrapper_name))
    except Exception:  # noqa: BLE001 - cannot tell: treat as having one (numba's default)
        return True


class _NoCacheLoad:
    """A dispatcher's numba cache that saves but does not load."""

    def __init__(self, cache) -> None:
        self._cache = cache

    def load_overload(self, *args: object, **kws: object) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)


class _SaveIfAbsent:
    """A dispatcher's numba cache that does not overwrite an entry another process
    saved meanwhile (that one may have a CPython wrapper; a callee-only compile would
    make that process's next Python call compile again)."""

    def __init__(self, cache) -> None:
        self._cache = cache

    def save_overload(self, sig, cres) -> None:
        c = self._cache
        try:
            if c._index_key(sig, cres.codegen) in c._cache_file._load_index():
                return
        except Exception:  # noqa: BLE001 - numba internals: save as numba would
            pass
        c.save_overload(sig, cres)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)


def _install_callee_compiles() -> bool:
    """Compile a navkit kernel that another kernel's compile needs (a callee) without
    the CPython wrapper that only a call from Python uses.

    numba builds, optimises and emits machine code for a wrapper (argument unboxing,
    result boxing, error reporting) on every compile, also of a kernel that is only
    ever called from other kernels: for most of a bake's ~100 kernels the wrapper
    was 8-10% of their compile (Python building its IR, LLVM's passes and code).
    Here a compile started by the typing of a call from another kernel (navkit's
    ``get_call_template``, or :class:`_Need` loading a cached caller) gets numba's own
    ``no_cpython_wrapper`` flag. Such a compile result is not entered in the
    dispatcher's table of Python-callable signatures; a Python call (or an explicit
    ``compile``) of that signature then compiles the kernel again with a wrapper,
    replacing it (the first compile's code stays alive for the kernels compiled
    against it) and overwriting its numba cache entry; a cached callee-only compile
    is recognised by its missing wrapper symbol, and never overwrites an entry another
    process saved meanwhile. A kernel that one feature compiled only for other kernels
    is compiled again (that kernel alone) on another feature's first Python call of it. False (nothing changed) when numba's
    dispatcher is not as expected."""
    try:
        from numba.core import dispatcher as dmod
        from numba.core import sigutils
        from numba.core.compiler_lock import global_compiler_lock
    except ImportError:  # pragma: no cover
        return False
    D = dmod.Dispatcher
    orig_compile, orig_add = D.__dict__.get("compile"), getattr(D, "add_overload", None)
    if orig_compile is None or orig_add is None:  # pragma: no cover
        return False
    if getattr(orig_compile, "_navkit", False):  # pragma: no cover - module reloaded
        return True
    if (
        "existing = self.overloads.get(tuple(args))" not in _src(orig_compile)
        or "self._cache.load_overload(sig, self.targetctx)" not in _src(orig_compile)
        or "self._insert(sig, cres.entry_point, cres.objectmode)" not in _src(orig_add)
        or "parse_as_flags(flags, self.targetoptions)" not in _src(getattr(dmod, "_FunctionCompiler", None))
    ):  # pragma: no cover - numba layout changed
        return False

    def add_overload(self, cres):
        if getattr(self, "_navkit_callee", False) and not cres.objectmode and not _has_wrapper(
            cres
        ):
            self.overloads[tuple(cres.signature.args)] = cres  # callable from kernels only
            return
        orig_add(self, cres)

    def compile(self, sig):
        if not getattr(self, "_navkit_callee", False):
            return orig_compile(self, sig)
        with global_compiler_lock:  # (the options below are the dispatcher's, shared)
            return _compile(self, sig)

    def _compile(self, sig):
        if getattr(_CALLEE, "depth", 0) > 0:
            opts = self.targetoptions
            prev = opts.get("no_cpython_wrapper", _UNSET)
            opts["no_cpython_wrapper"] = True
            cache = self._cache
            self._cache = _SaveIfAbsent(cache)
            try:
                return orig_compile(self, sig)
            finally:
                self._cache = cache
                if prev is _UNSET:
                    del opts["no_cpython_wrapper"]
                else:
                    opts["no_cpython_wrapper"] = prev
        ep = orig_compile(self, sig)
        args = tuple(sigutils.normalize_signature(sig)[0])
        cres = self.overloads.get(args)
        if cres is None or cres.objectmode or _has_wrapper(cres):
            return ep
        # a Python call of a signature compiled (or cached) for kernels only
        _KEPT.append(cres)  # its code stays: kernels compiled against it call it
        del self.overloads[args]
        cache = self._cache
        self._cache = _NoCacheLoad(cache)
        try:
            ep = orig_compile(self, sig)
        except BaseException:
            self.overloads.setdefault(args, cres)
            raise
        finally:
            self._cache = cache
        new = self.overloads.get(args)
        if new is None or not _has_wrapper(new):  # pragma: no cover - never a null entry
            raise RuntimeError(f"navkit: {self} compiled without a CPython wrapper for {sig}")
        return ep

    compile._navkit = True  # type: ignore[attr-defined]
    D.compile = compile  # type: ignore[method-assign]
    D.add_overload = add_overload  # type: ignore[method-assign]
    return True


_UNSET = object()

def pnjit(*args, **kwargs):
    """Like :func:`njit`, with ``parallel=True`` for kernels that use ``numba.prange``."""
    kwargs.setdefault("parallel", True)
    return njit(*args, **kwargs)


def is_cached(kernel) -> bool | None:
    """Whether numba's on-disk cache already holds compiled code for ``kernel``.

    None when it cannot tell (caching off, or numba's internals changed). Used to
    warn before a first run spends minutes compiling.
    """
    import os

    try:
        return bool(os.path.exists(kernel._cache._cache_file._index_path))
    except Exception:  # noqa: BLE001 - private numba attributes; any failure means "unknown"
        return None


# --- first-run announcement -------------------------------------------------

#: Which feature a kernel belongs to, by module prefix (first match wins), for the
#: announcement of a long first compile.
_GROUPS = (
    ("navkit.detour._polyanya", "optimal-path"),
    ("navkit.detour.optimal", "optimal-path"),
    ("navkit.detour._batch", "batch-path"),
    ("navkit.detour.navmesh", "navmesh"),
    ("navkit.detour.tile", "navmesh"),
    ("navkit.detour._links", "navmesh"),
    ("navkit.detour._pool_links", "navmesh"),
    ("navkit.detour._bvtree", "navmesh"),
    ("navkit.detour.io", "navmesh"),
    ("navkit.detour.recast_format", "navmesh"),
    ("navkit.detour.islands", "navmesh"),
    ("navkit.detour._validate", "navmesh"),
    ("navkit.detour", "query"),
    ("navkit.recast", "bake"),
    ("navkit.geometry", "bake"),
    ("navkit.pipeline", "bake"),  # the bake's tile grid and triangle binning
    ("navkit._bake_tiles", "bake"),
    ("navkit.ecm", "corridor-map"),
    ("navkit.tilecache", "tile-cache"),
    ("navkit.crowd", "crowd"),
)

#: Cold compile time of each group [CPU s, in one process] on a 2-core reference
#: machine (bench/compile.py, rounded up), shown as the announcement's estimate
#: (``navkit bake`` gives its own: it compiles on two cores).
COMPILE_ESTIMATE_S = {
    "bake": 60,
    "navmesh": 10,
    "query": 20,
    "batch-path": 30,
    "optimal-path": 20,
    "corridor-map": 30,
}

#: A compile announces itself once it has taken this long [s].
ANNOUNCE_AFTER_S = 2.0


def _group_of(dispatcher) -> str | None:
    fn = getattr(dispatcher, "py_func", None)
    mod = getattr(fn, "__module__", "") or ""
    if mod == "navkit.detour._batch" and getattr(fn, "__name__", "") != "batch_kernel":
        return "query"  # path()'s one-call kernel lives beside paths()' batch
    for prefix, group in _GROUPS:
        if mod.startswith(prefix):
            return group
    return "navkit" if mod.startswith("navkit.") else None


class _Announcer(_event.Listener):
    """A numba ``numba:compile`` listener: when navkit's kernels of one group have
    spent :data:`ANNOUNCE_AFTER_S` compiling in this process, say so once on
    stderr. A run whose kernels all load from the cache compiles nothing and
    prints nothing. Worker processes (process pools) stay quiet.
    """

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()
        self.depth = 0
        self.group: str | None = None
        self.t0 = 0.0
        self.timer: Any = None
        self.spent: dict[str, float] = {}
        self.announced: set[str] = set()
        self.enabled = True

    def announce(self, group: str, estimate: str | None = None) -> None:
        """Print the announcement for ``group`` (once per process); ``estimate``
        replaces the group's "~N s" from :data:`COMPILE_ESTIMATE_S`."""
        import sys

        with self.lock:
            if group in self.announced or not self.enabled:
                return
            self.announced.add(group)
        est = COMPILE_ESTIMATE_S.get(group)
        more = f", {estimate}" if estimate else f", ~{est} s" if est else ""
        try:
            print(
                f"navkit: compiling {group} kernels (first run only{more})...",
                file=sys.stderr,
                flush=True,
            )
        except (OSError, ValueError):  # stderr closed
            pass

    def on_start(self, ev) -> None:
        import threading
        import time

        self.depth += 1
        if self.depth != 1:
            return
        group = _group_of(ev.data.get("dispatcher"))
        self.group = group
        self.t0 = time.perf_counter()
        if group is None or group in self.announced:
            return
        delay = ANNOUNCE_AFTER_S - self.spent.get(group, 0.0)
        if delay <= 0:
            self.announce(group)
            return
        self.timer = threading.Timer(delay, self.announce, (group,))
        self.timer.daemon = True
        self.timer.start()

    def on_end(self, ev) -> None:
        import time

        self.depth -= 1
        if self.depth != 0:
            return
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.group is not None:
            self.spent[self.group] = self.spent.get(self.group, 0.0) + (
                time.perf_counter() - self.t0
            )
        self.group = None


class _LazyGc(_event.Listener):
    """A numba ``numba:compile`` listener: while numba compiles, Python's cyclic
    garbage collector runs rarely.

    numba allocates millions of small objects per kernel (IR, types, LLVM IR), so
    the default thresholds trigger thousands of collections per compile, and the
    full ones scan every object of every kernel compiled so far: a sixth of a cold
    demo's compile time. During a compile the first generation collects every
    :data:`COMPILE_GC_THRESHOLD` allocations instead of every 700; the previous
    thresholds come back when the outermost compile ends (nothing is frozen, so
    garbage is still collected).
    """

    def __init__(self) -> None:
        self.depth = 0
        self.saved: tuple[int, ...] | None = None

    def on_start(self, ev) -> None:
        import gc

        self.depth += 1
        if self.depth == 1 and self.saved is None:
            self.saved = gc.get_threshold()
            gc.set_threshold(max(self.saved[0], COMPILE_GC_THRESHOLD), 50, 100)

    def on_end(self, ev) -> None:
        import gc

        self.depth -= 1
        if self.depth == 0 and self.saved is not None:
            gc.set_threshold(*self.saved)
            self.saved = None


#: First-generation garbage-collection threshold while numba compiles (see :class:`_LazyGc`).
COMPILE_GC_THRESHOLD = 100_000
_event.register("numba:compile", _LazyGc())


def _plain_slice_error() -> None:
    """Make a mismatched slice assignment (``a[i:j] = b``) raise a fixed message.

    numba (0.60+) formats the two shapes into the ValueError's message, and the
    formatting (``str`` of ints, ``str.join``, f-strings: ~36 compiled functions)
    is compiled the first time any kernel of the process assigns a slice from an
    array: ~2.6 s of CPU per process, for an error navkit's kernels never raise.
    numba's array code looks its stub up by module global at each compile, so
    replacing the stub (with one whose only overload raises a constant message)
    switches every later slice assignment over; nothing else changes.
    """
    try:
        from numba.core.extending import overload
        from numba.np import arrayobj
    except ImportError:  # pragma: no cover - numba layout changed: keep its version
        return
    if not hasattr(arrayobj, "raise_with_shape_context"):  # pragma: no cover
        return

    def raise_with_shape_context(src_shapes, index_shape):  # pragma: no cover - stub
        raise NotImplementedError

    @overload(raise_with_shape_context)
    def _ol(src_shapes, index_shape):
        def impl(src_shapes, index_shape):  # pragma: no cover - numba
            raise ValueError("cannot assign slice from input of different size")

        return impl

    arrayobj.raise_with_shape_context = raise_with_shape_context


_plain_slice_error()


# --- numba's own per-compile overheads ---------------------------------------------


def _fast_target_config() -> bool:
    """Make numba's compiler flags (``TargetConfig``) cheap to hash and compare.

    numba looks every ``@overload`` implementation up in a cache keyed by the current
    flags (``_OverloadFunctionTemplate._get_impl``), i.e. on each typing of a call
    of ``np.empty``, ``min``, an array method, ...: each lookup hashes and compares
    the flags, and each of those builds a dict of all ~40 options through their
    property getters. That was a quarter of the type inference time of a cold bake
    (a sampling profile of a cold ``navkit demo``: ~6% of all its compile time).

    Same results, computed directly: ``values()`` from the class's defaults and the
    options set; the hash is numba's own (of the sorted option *names*: one value per
    class, computed once); equality compares the options set first (equal when they
    are), then falls back to numba's comparison of all values. Returns False (and
    changes nothing) when numba's ``TargetConfig`` is not laid out as expected."""
    try:
        from numba.core import targetconfig as tcm
    except ImportError:  # pragma: no cover - numba layout changed
        return False
    TC = tcm.TargetConfig
    if getattr(TC.values, "_navkit", False):  # pragma: no cover - module reloaded
        return True
    if not (
        hasattr(TC, "options") and "_values" in getattr(TC, "__slots__", ())
        and "sorted(self.values())" in _src(TC.__hash__)
        and "self.values() == other.values()" in _src(TC.__eq__)
        and "getattr(self, k) for k in self.options" in _src(TC.values)
    ):  # fmt: skip
        return False
    orig_values = TC.values
    defaults: dict = {}  # class -> (defaults dict, hash)

    def _info(cls):
        info = defaults.get(cls)
        if info is None:
            opts = cls.options
            # the property getters return ``self._values.get(name, option.default)``
            ok = all(isinstance(getattr(cls, k, None), property) for k in opts)
            info = (
                {k: o.default for k, o in opts.items()} if ok else None,
                hash(tuple(sorted(opts))),
            )
            defaults[cls] = info
        return info

    def values(self):
        d = _info(type(self))[0]
        if d is None:  # pragma: no cover - a subclass with its own accessors
            return orig_values(self)
        out = dict(d)
        for k, v in self._values.items():
            if k in out:
                out[k] = v
        return out

    def __hash__(self):
        return _info(type(self))[1]

    def __eq__(self, other):
        if not isinstance(other, TC):
            return NotImplemented
        if type(self) is type(other) and self._values == other._values:
            return True
        return values(self) == values(other)

    values._navkit = True  # type: ignore[attr-defined]
    TC.values = values  # type: ignore[method-assign]
    TC.__hash__ = __hash__  # type: ignore[method-assign,assignment]
    TC.__eq__ = __eq__  # type: ignore[method-assign,assignment]
    return True


def _src(fn) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):  # pragma: no cover - no source (frozen install)
        return ""


def _quiet_llvm_lock() -> bool:
    """Drop numba's ``numba:llvm_lock`` events, which only time how long the LLVM lock
    is held (``cres.metadata["timers"]["llvm_lock"]``, read by nothing).

    llvmlite takes its lock around every call into LLVM (hundreds per compile: each
    function of a module iterated, each name read), and numba broadcasts a start and
    an end event for each to every compile on the stack: ~2-3% of a cold demo's
    compile time. The lock itself stays; only the two callbacks go. False when
    numba's callbacks are not found (nothing changed)."""
    try:
        from llvmlite.binding import ffi
        from numba.core import base
    except ImportError:  # pragma: no cover
        return False
    lock = getattr(getattr(ffi, "lib", None), "_lock", None)
    cbs = getattr(lock, "_cblist", None)
    if not isinstance(cbs, list):  # pragma: no cover - llvmlite layout changed
        return False
    ours = [
        (a, r) for a, r in cbs
        if getattr(a, "__module__", "") == base.__name__
        and getattr(a, "__qualname__", "").startswith("_initialize_llvm_lock_event")
    ]  # fmt: skip
    for a, r in ours:
        ffi.unregister_lock_callback(a, r)
    return bool(ours)


def _no_cfunc_wrappers_for_overloads() -> bool:
    """Compile numba's ``@overload`` implementations (``np.empty``, ``np.zeros``,
    ``min``, array methods, ...) without a C-callable wrapper, as navkit's own kernels
    are (``no_cfunc_wrapper``): such an implementation is only ever linked into the
    kernel that calls it, never called through a C pointer, and numba otherwise builds
    and optimises a wrapper for each (~1% of a cold demo's compile time)."""
    try:
        from numba.core.typing.templates import _OverloadFunctionTemplate as T
    except ImportError:  # pragma: no cover
        return False
    orig = getattr(T, "_get_jit_decorator", None)
    if orig is None or "jitter(**self._jit_options)" not in _src(T._build_impl):
        return False  # pragma: no cover - numba layout changed
    if getattr(orig, "_navkit", False):  # pragma: no cover - module reloaded
        return True

    def _get_jit_decorator(self):
        jitter = orig(self)

        def no_cfunc(*args, **opts):
            if not args:
                opts.setdefault("no_cfunc_wrapper", True)
            return jitter(*args, **opts)

        return no_cfunc

    _get_jit_decorator._navkit = True  # type: ignore[attr-defined]
    T._get_jit_decorator = _get_jit_decorator  # type: ignore[method-assign]
    return True


#: names of the compiler flags an ``@overload`` implementation inherits from its caller
#: (read from numba's source by :func:`_overloads_keyed_by_inherited_flags`)
_INHERITED: list[str] = []


def _flag_val(v):
    enc = getattr(v, "encode", None)  # FastMathOptions: unhashable, encodes to str
    if callable(enc) and not isinstance(v, str):
        return (type(v).__name__, enc())
    hash(v)
    return v


def _inherited_key(flags):
    """The flags an ``@overload`` implementation inherits from ``flags`` (the current
    compile's), as a hashable key; ``flags`` itself when they cannot be read."""
    if flags is not None and _INHERITED:
        try:
            return ("inherited",) + tuple(_flag_val(getattr(flags, n)) for n in _INHERITED)
        except (TypeError, AttributeError):  # pragma: no cover - odd option value
            pass
    return flags


def _overloads_keyed_by_inherited_flags() -> bool:
    """Compile an ``@overload`` implementation once per argument types and the compiler
    flags it inherits from its caller, not once per caller's whole set of flags.

    numba caches ``np.empty``'s, ``np.zeros``'s, ``min``'s ... implementation per
    (argument types, the caller's flags) (``_OverloadFunctionTemplate._get_impl``), so
    the same implementation compiled again for a caller with other flags: a navkit
    kernel (``nogil``, CPython wrapper) and numba's own ``np.zeros`` implementation
    (no wrapper) calling ``np.empty(n, np.int64)`` compiled it twice, three times with
    a ``parallel`` caller (a cold demo: ``np.empty`` 39 compiles for 22 signatures in
    one process). An implementation's compile reads only the options its target
    inherits from the caller (``inherit_if_not_set`` in ``CPUTargetOptions.finalize``:
    ``nrt``, ``fastmath``, ``error_model``, ``forceinline`` in numba 0.6x; read here
    from numba's source), so the cache is keyed by those. Lowering already looks the
    compiled implementation up by argument types alone. False (nothing changed) when
    numba's code is not as expected."""
    import re

    try:
        from numba.core import cpu, targetconfig
        from numba.core.typing.templates import _OverloadFunctionTemplate as T
    except ImportError:  # pragma: no cover
        return False
    if getattr(T._get_impl, "_navkit", False):  # pragma: no cover - module reloaded
        return True
    src = _src(T._get_impl)
    fin = _src(cpu.CPUTargetOptions.finalize)
    names = tuple(re.findall(r"inherit_if_not_set\(\s*[\"'](\w+)[\"']", fin))
    if (
        not names
        or "cache_key = self.context, tuple(args), tuple(kws.items()), flags" not in src
        or "self._build_impl(cache_key, args, kws)" not in src
        or "ConfigStack.top_or_none()" not in src
    ):  # pragma: no cover - numba layout changed
        return False

    _INHERITED[:] = names

    def _get_impl(self, args, kws):
        flags = _inherited_key(targetconfig.ConfigStack.top_or_none())
        cache_key = self.context, tuple(args), tuple(kws.items()), flags
        try:
            return self._impl_cache[cache_key]
        except KeyError:
            pass
        return self._build_impl(cache_key, args, kws)

    _get_impl._navkit = True  # type: ignore[attr-defined]
    T._get_impl = _get_impl  # type: ignore[method-assign]
    return True


def _memo_function_typing() -> bool:
    """Remember the signature numba resolves for a call of a global function (an
    operator, ``len``, ``min``, ``np.empty``, ...) per (function type, argument types).

    numba types every such call afresh (``BaseFunction.get_call_type``): it tries the
    function's templates in order, each twice (with and without literal arguments),
    until one accepts; ``a + b`` or ``a[i]`` tries a dozen templates, ``@overload``
    ones each looked up in their implementation cache, and type inference repeats the
    resolution each round its constraints propagate. In a cold bake ~90% of these
    resolutions repeat one already made in the process (~10,000 resolutions, ~900
    distinct), and resolving was most of numba's type inference. Keyed also by the
    compiler flags an ``@overload`` implementation inherits from the caller (as
    :func:`_overloads_keyed_by_inherited_flags` keys its implementations). The result
    is the same: the first resolution of a key runs numba's own code (compiling an
    ``@overload`` implementation, registering the implementation key the lowering
    looks up), a repeat returns its signature and re-registers that implementation
    key. Failures are not remembered (numba raises or tries other argument types
    again). False (nothing changed) when numba's code is not as expected."""
    try:
        from numba.core.types import functions as fmod
    except ImportError:  # pragma: no cover
        return False
    BF = fmod.BaseFunction
    orig = BF.__dict__.get("get_call_type")
    if orig is None:  # pragma: no cover - numba layout changed
        return False
    if getattr(orig, "_navkit", False):  # pragma: no cover - module reloaded
        return True
    src = _src(orig)
    if (
        "self._impl_keys[sig.args] = temp.get_impl_key(sig)" not in src
        or "def get_impl_key(self, sig)" not in _src(BF)
    ):  # pragma: no cover - numba layout changed
        return False
    from numba.core import targetconfig

    memo: dict = {}

    def get_call_type(self, context, args, kws):
        try:
            flags = _inherited_key(targetconfig.ConfigStack.top_or_none())
            key = (self, context, tuple(args), tuple(kws.items()) if kws else (), flags)
            hit = memo.get(key)
        except TypeError:  # pragma: no cover - an unhashable argument type
            return orig(self, context, args, kws)
        if hit is not None:
            sig, impl_key = hit
            self._impl_keys[sig.args] = impl_key
            return sig
        sig = orig(self, context, args, kws)
        if sig is not None:
            memo[key] = (sig, self._impl_keys[sig.args])
        return sig

    get_call_type._navkit = True  # type: ignore[attr-defined]
    get_call_type._memo = memo  # type: ignore[attr-defined]
    BF.get_call_type = get_call_type  # type: ignore[method-assign]
    return True


#: compiler flags that no untyped pass reads (the CPython and C wrappers are built at
#: lowering; with-lifting, which copies them for a lifted block, is never used: see
#: :func:`_untyped_ir_once`): left out of the key of an inlined function's IR
_WRAPPER_FLAGS = frozenset({"no_cpython_wrapper", "no_cfunc_wrapper"})


def _has_with(func) -> bool:
    import dis

    try:
        return any("WITH" in ins.opname for ins in dis.get_instructions(func))
    except TypeError:  # pragma: no cover - not a plain function
        return True


def _untyped_ir_once() -> bool:
    """Run numba's untyped passes over an ``inline="always"`` kernel once per process,
    not at every call site that inlines it.

    numba's ``InlineInlinables`` pass inlines a call of such a kernel
    (``InlineWorker.inline_function``) by translating the callee's bytecode and running
    the whole untyped pipeline over it (SSA-free IR, its own inlinables inlined, branch
    pruning, literal propagation), then ``inline_ir`` deep-copies that IR, renames its
    variables after a fresh id and splices the copy in. The IR before the copy depends
    only on the function and the compile's options, so it is kept here, per (function,
    typing context, target (each compile's target context is a copy of the target's, with
    options from the flags), pipeline class, flags but the wrapper ones, locals), and
    each call site gets the kept IR under a fresh function id (numbered as
    ``FunctionIdentity.from_function`` numbers it: the unique name numba renames the inlined variables after), which ``inline_ir``
    copies before changing anything, as it copies the fresh IR. The caller's flags get
    ``enable_ssa`` as the untyped run sets it. The kept IR follows the function's
    globals as they were on its first inlining (numba freezes globals at compile time
    too); a function with a ``with`` block (with-lifting compiles the lifted block with
    the caller's flags) always runs numba's own path. False (nothing changed) when
    numba's code is not as expected."""
    import copy as _copy

    try:
        from numba.core import inline_closurecall as icc
        from numba.core.bytecode import FunctionIdentity
    except ImportError:  # pragma: no cover
        return False
    W = getattr(icc, "InlineWorker", None)
    orig = getattr(W, "inline_function", None)
    if W is None or orig is None:  # pragma: no cover
        return False
    if getattr(orig, "_navkit", False):  # pragma: no cover - module reloaded
        return True
    run_src = _src(W.run_untyped_passes)
    if (
        "callee_ir = self.run_untyped_passes(function)" not in _src(orig)
        or "callee_ir = copy_ir(callee_ir)" not in _src(W.inline_ir)
        or "state.flags.enable_ssa = enable_ssa" not in run_src
        or "FunctionIdentity.from_function(func)" not in run_src
        or "self.unique_name = '{}${}'.format(self.func_qualname, uid)"
        not in _src(FunctionIdentity.from_function)
        or not hasattr(FunctionIdentity, "_unique_ids")
    ):  # pragma: no cover - numba layout changed
        return False

    memo: dict = {}
    stats = {"hits": 0, "misses": 0}

    def _key(self, function):
        flags = self.flags
        fk = tuple(
            sorted((k, _flag_val(v)) for k, v in flags.values().items() if k not in _WRAPPER_FLAGS)
        )
        loc = tuple(sorted(self.locals.items())) if self.locals else ()
        tctx = self.targetctx  # (a subtarget per compile: its options follow the flags)
        key = (function, self.typingctx, type(tctx), tctx.codegen(), type(self.pipeline), fk, loc)
        hash(key)
        return key

    def inline_function(self, caller_ir, block, i, function, arg_typs=None):
        try:
            self.flags.enable_ssa = False  # (as run_untyped_passes sets it, before the key)
            key = _key(self, function)
        except (TypeError, AttributeError):  # an unhashable option: numba's own path
            return orig(self, caller_ir, block, i, function, arg_typs)
        kept = memo.get(key)
        if kept is None:
            if _has_with(function):
                return orig(self, caller_ir, block, i, function, arg_typs)
            stats["misses"] += 1
            kept = memo[key] = self.run_untyped_passes(function)
        else:
            stats["hits"] += 1
        callee_ir = kept.copy()  # (inline_ir deep-copies the blocks before changing them)
        fid = callee_ir.func_id = _copy.copy(kept.func_id)
        uid = next(FunctionIdentity._unique_ids)  # (as from_function numbers it)
        fid.unique_name, fid.unique_id = f"{fid.func_qualname}${uid}", uid
        return self.inline_ir(
            caller_ir, block, i, callee_ir, function.__code__.co_freevars, arg_typs=arg_typs
        )

    inline_function._navkit = True  # type: ignore[attr-defined]
    inline_function._orig = orig  # type: ignore[attr-defined]
    inline_function._memo = memo  # type: ignore[attr-defined]
    inline_function._stats = stats  # type: ignore[attr-defined]
    W.inline_function = inline_function  # type: ignore[method-assign]
    return True


def _ssa_where_needed() -> bool:
    """Rebuild SSA form visiting, for each multiply-assigned variable, only the blocks
    that assign or read it.

    numba's ``reconstruct_ssa`` (``ssa._run_ssa``) renames one violating variable at a
    time, and for each one it rewrites every block of the function twice (a pass giving
    each assignment a fresh name, a pass pointing each read at its reaching definition
    and placing phi nodes), each pass a new list per block with every statement handed
    to a handler: its cost is (violating variables) x (statements), ~10% of a cold bake's
    compile. A block that neither assigns nor reads the variable comes out of both passes
    unchanged (the handlers return its statements as they are, and only reads look for
    definitions or place phi nodes), so here each variable's two passes run numba's own
    handlers over those blocks only, in the same block order, with the same per-variable
    state; the variables are taken in numba's order and the blocks are rebuilt at the
    end as numba rebuilds them. Which blocks assign or read which variable comes from
    the one pass that finds the violators (its variable lists kept for the second pass,
    as numba's own cache of them does). The same IR results, names and phi nodes
    included (tests compare the blocks' text of real kernels with numba's). False
    (nothing changed) when numba's code is not as expected."""
    try:
        from numba.core import ir, ssa
        from numba.core.analysis import compute_cfg_from_blocks
    except ImportError:  # pragma: no cover
        return False
    orig = getattr(ssa, "_run_ssa", None)
    if orig is None:  # pragma: no cover
        return False
    if getattr(orig, "_navkit", False):  # pragma: no cover - module reloaded
        return True
    needed = (
        "_iterated_domfronts", "_find_defs_violators", "_CacheListVars", "_fresh_vars",
        "_fix_ssa_vars", "_FreshVarHandler", "_FixSSAVars", "_compute_phi_locations",
        "_run_block_rewrite", "_run_ssa_block_pass", "_GatherDefsHandler",
    )  # fmt: skip
    if not all(hasattr(ssa, n) for n in needed):  # pragma: no cover
        return False
    run, fix, fresh = _src(orig), _src(ssa._fix_ssa_vars), _src(ssa._fresh_vars)
    rewrite, bpass = _src(ssa._run_block_rewrite), _src(ssa._run_ssa_block_pass)
    viol, gather = _src(ssa._find_defs_violators), _src(ssa._GatherDefsHandler)
    if not (
        "for varname in violators:" in run
        and "blocks, defmap = _fresh_vars(blocks, varname)" in run
        and "_fix_ssa_vars(blocks, varname, defmap, cfg, df_plus" in run
        and "violators = _find_defs_violators(blocks, cfg)" in run
        and "cfg_post != cfg" in run
        and "states['phi_locations'] = _compute_phi_locations(df_plus, defmap)" in fix
        and "curblk.body = philist + curblk.body" in fix
        and "states['phimap'] = phimap = defaultdict(list)" in fix
        and "states['defmap'] = defmap = defaultdict(list)" in fresh
        and "states['block'] = blk" in rewrite
        and "newblk = ir.Block(scope=blk.scope, loc=blk.loc)" in rewrite
        and "handler.on_assign(states, stmt)" in bpass
        and "handler.on_other(states, stmt)" in bpass
        and "len(vs) > 1" in viol
        and "def_labels.intersection(dom)" in viol
        and "if k != assign.target.name:" in gather
        and "self._saved[inst] = got = inst.list_vars()" in _src(ssa._CacheListVars)
    ):  # pragma: no cover - numba layout changed
        return False
    from collections import defaultdict

    from numba.core.utils import OrderedSet

    stats = {"functions": 0, "violators": 0}

    def _gather(blocks, lv):
        # every assignment's target and every variable read, per name: the labels and
        # the number of assignments (numba's _GatherDefsHandler's defs and uses), read
        # through numba's list_vars cache the SSA pass then uses
        ndefs: dict = defaultdict(int)
        def_labels: dict = defaultdict(set)
        uses: dict = defaultdict(set)
        for label, blk in blocks.items():
            for stmt in blk.body:
                if isinstance(stmt, ir.Assign):
                    t = stmt.target.name
                    ndefs[t] += 1
                    def_labels[t].add(label)
                    rhs = stmt.value
                    if isinstance(rhs, ir.Var):
                        read = [rhs]
                    elif isinstance(rhs, ir.Inst):
                        read = lv.get(rhs)
                    else:
                        continue
                    for v in read:
                        if v.name != t:
                            uses[v.name].add(label)
                else:
                    for v in lv.get(stmt):
                        uses[v.name].add(label)
        return ndefs, def_labels, uses

    def _violators(ndefs, def_labels, uses, cfg):
        # numba's rule and order: assigned more than once (in order of first
        # assignment), then read in a block that no assigning block dominates
        out = OrderedSet(k for k, n in ndefs.items() if n > 1)
        doms = cfg.dominators()
        for k, labels in uses.items():
            if k in out:
                continue
            defs = def_labels.get(k, ())
            if any(not doms[label].intersection(defs) for label in labels):
                out.add(k)
        return out

    def _pass(bodies, blocks, labels, states, handler):
        for label in labels:
            old = bodies[label]
            blk = ir.Block(scope=blocks[label].scope, loc=blocks[label].loc)
            blk.body = old
            states["label"] = label
            states["block"] = blk
            new = []
            for stmt in old:
                if isinstance(stmt, ir.Assign):
                    new.append(handler.on_assign(states, stmt))
                else:
                    new.append(handler.on_other(states, stmt))
            bodies[label] = new

    def _run_ssa(blocks):
        if not blocks:
            return {}
        cfg = compute_cfg_from_blocks(blocks)
        df_plus = ssa._iterated_domfronts(cfg)
        lv = ssa._CacheListVars()
        ndefs, def_labels, uses = _gather(blocks, lv)
        violators = _violators(ndefs, def_labels, uses, cfg)
        stats["functions"] += 1
        stats["violators"] += len(violators)
        if not violators:
            return blocks  # (numba returns the blocks it was given)
        order = {label: i for i, label in enumerate(blocks)}
        scope = ssa._get_scope(blocks)
        bodies = {label: blk.body for label, blk in blocks.items()}
        for name in violators:
            defmap: dict = defaultdict(list)
            states: dict = {"scope": scope, "varname": name, "defmap": defmap}
            _pass(bodies, blocks, sorted(def_labels[name], key=order.__getitem__), states,
                  ssa._FreshVarHandler())  # fmt: skip
            phimap: dict = defaultdict(list)
            states = {
                "scope": scope, "varname": name, "defmap": defmap, "phimap": phimap,
                "cfg": cfg, "phi_locations": ssa._compute_phi_locations(df_plus, defmap),
            }  # fmt: skip
            # (a block reading the variable into its own assignment, ``x = x + 1``,
            # is among the assigning blocks: numba does not count that read as a use)
            labels = sorted(uses.get(name, set()) | def_labels[name], key=order.__getitem__)
            _pass(bodies, blocks, labels, states, ssa._FixSSAVars(lv))
            for label, philist in phimap.items():
                bodies[label] = philist + bodies[label]
        out = {}
        for label, blk in blocks.items():
            nb = ir.Block(scope=blk.scope, loc=blk.loc)
            nb.body = list(bodies[label])
            out[label] = nb
        if compute_cfg_from_blocks(out) != cfg:  # (numba's own check)
            from numba.core import errors

            raise errors.CompilerError("CFG mutated in SSA pass")
        return out

    _run_ssa._navkit = True  # type: ignore[attr-defined]
    _run_ssa._orig = orig  # type: ignore[attr-defined]
    _run_ssa._stats = stats  # type: ignore[attr-defined]
    ssa._run_ssa = _run_ssa
    return True


def _abi_sizes_once() -> bool:
    """Remember the ABI size and alignment of each LLVM type per target data layout.

    numba asks a target context for an LLVM type's size (``BaseContext.get_abi_sizeof``)
    at every local variable it lowers (``Lower.alloca_lltype`` passes it to the debug-
    info builder, which ignores it unless ``debug=True``), and llvmlite answers each
    question by printing a module holding one global of that type and parsing it back
    through LLVM (``Type._get_ll_global_value_type``): ~5% of a cold bake's compile.
    The answer depends only on the type and the data layout, so it is kept per (the
    type's text, the target data object). Types that name an identified struct
    (``%"..."``: its text does not say what it holds) are asked every time. False
    (nothing changed) when numba's code is not as expected."""
    try:
        from numba.core import base
    except ImportError:  # pragma: no cover
        return False
    BC = base.BaseContext
    size0 = BC.__dict__.get("get_abi_sizeof")
    align0 = BC.__dict__.get("get_abi_alignment")
    if size0 is None or align0 is None:  # pragma: no cover
        return False
    if getattr(size0, "_navkit", False):  # pragma: no cover - module reloaded
        return True
    if (
        "return ty.get_abi_size(self.target_data)" not in _src(size0)
        or "return ty.get_abi_alignment(self.target_data)" not in _src(align0)
    ):  # pragma: no cover - numba layout changed
        return False
    memo: dict = {}
    alive: dict = {}

    def _memoised(orig, kind):
        def get(self, ty):
            td = self.target_data
            text = str(ty)  # (llvmlite keeps a type's text once made)
            if "%" in text:
                return orig(self, ty)
            key = (kind, text, id(td))
            got = memo.get(key)
            if got is None:
                got = memo[key] = orig(self, ty)
                alive.setdefault(id(td), td)  # (the id stays this object's)
            return got

        get._navkit = True  # type: ignore[attr-defined]
        get._orig = orig  # type: ignore[attr-defined]
        get._memo = memo  # type: ignore[attr-defined]
        get.__doc__ = orig.__doc__
        return get

    BC.get_abi_sizeof = _memoised(size0, "size")  # type: ignore[method-assign]
    BC.get_abi_alignment = _memoised(align0, "align")  # type: ignore[method-assign]
    return True


class _EntryVars(dict):
    """``FunctionIR.block_entry_vars`` whose latest entries are still to be computed
    (``pending``: the lifetime object of the post-processing that deferred them; see
    :func:`_block_entry_vars_when_read`). A copied or reset IR gets a plain dict, as
    numba gives it."""

    pending: Any = None


def _block_entry_vars_when_read() -> bool:
    """In a nopython compile, work out the variables live at each block's entry when
    something reads them, not at every IR post-processing.

    numba's ``PostProcessor.run`` (after translation and after most untyped and
    typed passes that change the IR, ~10 times per compile) computes the variables
    alive at each block's entry (``FunctionIR.block_entry_vars``), which needs the
    function's use/def, live and dead maps: ~8% of a cold bake's compile. Only object-
    mode lowering and generators read them (``FunctionIR.get_block_entry_vars``);
    nopython lowering, typing and the rewrites never do. Here, in a compile whose flags
    allow no object mode, of a function that is not a generator, without ``del``
    statements asked for, the run canonicalises the CFG and installs a fresh
    (lazy) ``VariableLifetime`` as numba's own loop-canonicalising passes do, and
    leaves the entry variables to ``get_block_entry_vars``, which computes them from
    that run's lifetime object the first time one is asked for. Anything else runs
    numba's own code. False (nothing changed) when numba's code is not as expected."""
    try:
        from numba.core import analysis, ir, postproc, targetconfig, transforms
    except ImportError:  # pragma: no cover
        return False
    PP = postproc.PostProcessor
    FIR = ir.FunctionIR
    orig = PP.__dict__.get("run")
    get0 = FIR.__dict__.get("get_block_entry_vars")
    if orig is None or get0 is None:  # pragma: no cover
        return False
    if getattr(orig, "_navkit", False):  # pragma: no cover - module reloaded
        return True
    src = _src(orig)
    if not (
        "self.func_ir.blocks = transforms.canonicalize_cfg(self.func_ir.blocks)" in src
        and "vlt = VariableLifetime(self.func_ir.blocks)" in src
        and "bev = analysis.compute_live_variables(vlt.cfg, self.func_ir.blocks," in src
        and "vlt.usedefs.defmap" in src and "vlt.deadmaps.combined" in src
        and "self.func_ir.block_entry_vars[ir_block] = bev[offset]" in src
        and "if self.func_ir.is_generator:" in src
        and "self.func_ir.generator_info = None" in src
        and "if emit_dels:" in src
        and "return self.block_entry_vars[block]" in _src(get0)
        and hasattr(analysis, "compute_live_variables")
        and all(hasattr(postproc.VariableLifetime, a) for a in ("cfg", "usedefs", "deadmaps"))
    ):  # pragma: no cover - numba layout changed
        return False
    stats = {"deferred": 0, "computed": 0}

    def _nopython_only():
        flags = targetconfig.ConfigStack.top_or_none()
        if flags is None:
            return False
        try:
            return not (flags.enable_pyobject or flags.force_pyobject)
        except AttributeError:  # pragma: no cover - other flags
            return False

    def run(self, emit_dels: bool = False, extend_lifetimes: bool = False):
        fir = self.func_ir
        if emit_dels or fir.is_generator or not _nopython_only():
            return orig(self, emit_dels=emit_dels, extend_lifetimes=extend_lifetimes)
        fir.blocks = transforms.canonicalize_cfg(fir.blocks)
        vlt = postproc.VariableLifetime(fir.blocks)
        fir.variable_lifetime = vlt
        bev = fir.block_entry_vars
        if not isinstance(bev, _EntryVars):
            bev = fir.block_entry_vars = _EntryVars(bev)
        bev.pending = vlt  # (computed by get_block_entry_vars if asked)
        fir.generator_info = None
        stats["deferred"] += 1

    def get_block_entry_vars(self, block):
        bev = self.block_entry_vars
        vlt = getattr(bev, "pending", None)
        if vlt is not None:
            bev.pending = None
            stats["computed"] += 1
            live = analysis.compute_live_variables(
                vlt.cfg, vlt._blocks, vlt.usedefs.defmap, vlt.deadmaps.combined
            )
            for offset, blk in vlt._blocks.items():
                bev[blk] = live[offset]
        return get0(self, block)

    run._navkit = True  # type: ignore[attr-defined]
    run._orig = orig  # type: ignore[attr-defined]
    run._stats = stats  # type: ignore[attr-defined]
    get_block_entry_vars._orig = get0  # type: ignore[attr-defined]
    PP.run = run  # type: ignore[method-assign]
    FIR.get_block_entry_vars = get_block_entry_vars  # type: ignore[method-assign]
    return True


#: which of the overhead cuts above are in place (tests, bench/compile.py)
NUMBA_PATCHES = {
    "overloads_keyed_by_inherited_flags": _overloads_keyed_by_inherited_flags(),
    "memo_function_typing": _memo_function_typing(),  # (after: keyed by the same flags)
    "fast_target_config": _fast_target_config(),
    "quiet_llvm_lock": _quiet_llvm_lock(),
    "no_cfunc_wrappers_for_overloads": _no_cfunc_wrappers_for_overloads(),
    "untyped_ir_once": _untyped_ir_once(),
    "ssa_where_needed": _ssa_where_needed(),
    "abi_sizes_once": _abi_sizes_once(),
    "block_entry_vars_when_read": _block_entry_vars_when_read(),
}
_CALLEES_OK = NUMBA_PATCHES["callee_compiles_without_wrapper"] = _install_callee_compiles()


def _install_announcer() -> _Announcer:
    import multiprocessing

    a = _Announcer()
    a.enabled = multiprocessing.parent_process() is None
    _event.register("numba:compile", a)
    return a


#: The process's announcer; ``announcer.announce(group)`` prints a group's
#: announcement ahead of work that will compile elsewhere (worker processes).
announcer = _install_announcer()


def _borrow_intrinsic():
    from numba.core import types
    from numba.extending import intrinsic
    from numba.np.arrayobj import populate_array

    def _one(context, builder, ty, val):
        src = context.make_array(ty)(context, builder, value=val)
        out = context.make_array(ty)(context, builder)
        populate_array(
            out, data=src.data, shape=src.shape, strides=src.strides, itemsize=src.itemsize,
            meminfo=None,
        )  # fmt: skip
        return out._getvalue()

    @intrinsic
    def borrow(typingctx, arr):
        """The same array without its memory-manager handle (a borrowed view); given
        a tuple of arrays, the tuple of their borrowed views.

        Reference counting on a borrowed array is a no-op. numba increments and
        decrements (atomically) the count of every array argument each time a
        non-inlined helper is called, which can cost more than the helper's own
        arithmetic; entry kernels borrow their arguments once, so their helpers
        pass them around for free, and threads do not contend for one shared
        counter. The caller must keep the originals alive while the borrowed
        arrays are used (a kernel's arguments are), and a kernel must never
        return a borrowed array.
        """
        if isinstance(arr, types.Array):

            def codegen(context, builder, signature, args):
                return _one(context, builder, arr, args[0])

            return arr(arr), codegen
        if isinstance(arr, types.BaseTuple) and all(isinstance(t, types.Array) for t in arr):

            def codegen_t(context, builder, signature, args):
                vals = [
                    _one(context, builder, t, builder.extract_value(args[0], i))
                    for i, t in enumerate(arr)
                ]
                return context.make_tuple(builder, arr, vals)

            return arr(arr), codegen_t
        return None

    return borrow


borrow = _borrow_intrinsic()


# --- lent arrays: borrowed arrays whose type has no reference count -----------------


def desc_opener(members, out_t, words: int):
    """An intrinsic ``open(d)`` -> ``out_t`` (a tuple type of the array types
    ``members``, all C-contiguous, with no memory-manager handle) from a descriptor
    ``d``: a 1-D int64 array of ``words`` int64 words per array, its address then its
    extents (``words - 1`` >= its rank). The caller keeps the arrays alive. One intrinsic
    for a whole tuple: nothing to type-infer per field, no carray compiled per dtype."""
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic
    from numba.np.arrayobj import populate_array

    @intrinsic
    def open_desc(typingctx, d):
        if not (isinstance(d, types.Array) and d.dtype == types.int64 and d.ndim == 1):
            return None

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            data = context.make_array(d)(context, builder, value=args[0]).data

            def word(k):
                return builder.load(builder.gep(data, [ir.Constant(i64, k)]))

            vals = []
            for i, t in enumerate(members):
                arr = context.make_array(t)(context, builder)
                ll_dtype = context.get_data_type(t.dtype)
                itemsize = ir.Constant(i64, context.get_abi_sizeof(ll_dtype))
                ptr = builder.inttoptr(word(words * i), ll_dtype.as_pointer())
                shape = [word(words * i + 1 + k) for k in range(t.ndim)]
                strides = [itemsize] * t.ndim
                for k in range(t.ndim - 2, -1, -1):  # C order
                    strides[k] = builder.mul(strides[k + 1], shape[k + 1])
                populate_array(
                    arr, data=ptr, shape=cgutils.pack_array(builder, shape),
                    strides=cgutils.pack_array(builder, strides), itemsize=itemsize,
                    meminfo=None,
                )  # fmt: skip
                vals.append(arr._getvalue())
            return context.make_tuple(builder, out_t, vals)

        return out_t(d), codegen

    return open_desc


def _lend_machinery():
    import numpy as np
    from numba.core import types
    from numba.core.datamodel.models import ArrayModel
    from numba.extending import intrinsic, lower_cast, register_model
    from numba.np.arrayobj import populate_array

    class LentArray(types.Array):
        """The numba type of a lent array: an array without a memory-manager handle
        whose *type* says so, so numba emits no reference counting for it at all.

        Each array passed to a non-inlined kernel (alone or inside a tuple such as
        the navmesh view) costs a call to ``NRT_incref`` and one to ``NRT_decref``,
        out-of-line functions even when the handle is null: the 42-array view made
        ~170 such calls per helper call (~0.13-0.3 us). A lent array makes none, so
        helpers can take the view as ordinary (non-inlined) kernels. Slices and
        copies of a lent array are plain arrays (a slice still has a null handle).
        """

        def __init__(self, dtype, ndim, layout):
            super().__init__(dtype, ndim, layout, name=f"lent array({dtype}, {ndim}d, {layout})")

        @property
        def key(self):
            return (*super().key, "lent")

        def __repr__(self):
            return f"LentArray({self.dtype!r}, {self.ndim}, '{self.layout}')"

    @register_model(LentArray)
    class LentArrayModel(ArrayModel):
        def traverse(self, builder):
            return []

        def traverse_models(self):
            return []

        def has_nrt_meminfo(self):
            return False

    @lower_cast(LentArray, types.Array)
    def _lent_to_array(context, builder, fromty, toty, val):
        return val  # same layout in memory; the handle stays null

    @lower_cast(types.Array, LentArray)
    def _array_to_lent(context, builder, fromty, toty, val):
        # an argument lent to a kernel (njit(lent=True)): the caller owns it for the call
        return _lent_one(context, builder, fromty, val)

    def _lent_one(context, builder, ty, val):
        src = context.make_array(ty)(context, builder, value=val)
        out = context.make_array(ty)(context, builder)
        populate_array(
            out, data=src.data, shape=src.shape, strides=src.strides, itemsize=src.itemsize,
            meminfo=None,
        )  # fmt: skip
        return out._getvalue()

    def _lent_type(t):
        return LentArray(t.dtype, t.ndim, t.layout)

    @intrinsic
    def lend(typingctx, arr):
        """The array without its memory-manager handle, typed as a lent array (no
        reference counting anywhere it goes); given a tuple (or named tuple) of
        arrays, the same tuple of lent arrays.

        As for :func:`borrow`, the caller keeps the originals alive while the lent
        arrays are used, and a kernel never returns a lent array to Python.
        """
        if isinstance(arr, types.Array):

            def codegen(context, builder, signature, args):
                return _lent_one(context, builder, arr, args[0])

            return _lent_type(arr)(arr), codegen
        if isinstance(arr, types.BaseTuple) and all(isinstance(t, types.Array) for t in arr):
            members = [_lent_type(t) for t in arr]
            if isinstance(arr, types.BaseNamedTuple):
                out_t = types.NamedTuple(members, arr.instance_class)
            else:
                out_t = types.Tuple(members)

            def codegen_t(context, builder, signature, args):
                vals = [
                    _lent_one(context, builder, t, builder.extract_value(args[0], i))
                    for i, t in enumerate(arr)
                ]
                return context.make_tuple(builder, out_t, vals)

            return out_t(arr), codegen_t
        return None

    def lent_opener(tuple_class, spec):
        """An intrinsic ``open(d)`` -> ``tuple_class`` of lent arrays, from a descriptor
        ``d`` ((3 * len(spec),) int64 of address, shape0, shape1 per array; see
        ``navkit.detour._view.pack_arrays``). ``spec`` gives (name, dtype, ndim) per
        field. One intrinsic instead of one ``numba.carray`` per field: nothing to
        type-infer, and no carray implementation compiled per dtype and rank."""
        from numba.np import numpy_support

        members = [LentArray(numpy_support.from_dtype(np.dtype(dt)), nd, "C") for _, dt, nd in spec]
        out_t = types.NamedTuple(members, tuple_class)

        return desc_opener(members, out_t, 3)

    def lent_arg(t):
        """The type a ``lent=True`` kernel takes for an argument of type t."""
        if isinstance(t, LentArray):
            return t
        if isinstance(t, types.Array):
            return _lent_type(t) if t.mutable and t.aligned else t
        if (
            isinstance(t, types.BaseTuple) and not isinstance(t, types.BaseNamedTuple)
            and any(isinstance(m, types.Array) for m in t)
        ):  # fmt: skip
            return types.Tuple([lent_arg(m) for m in t])
        return t  # named tuples as they are (numba cannot cast them; open_view's are lent)

    return LentArray, lend, lent_opener, lent_arg


def _by_reference(cls):
    """Name a type class made inside a function after its module attribute, so that
    pickles (numba's cache index keys, :class:`_Need`) refer to ``navkit._jit.<name>``.

    Otherwise (cloudpickle, a ``<locals>`` class) each process pickles the class by
    value, under a tag of its own: a signature with a lent array written by one process
    never equals the same signature typed live in another, so a kernel another process
    had compiled and cached was compiled again whenever a new caller needed it (in a
    cold demo, ``connect_tile`` and its helpers in both processes; a feature's first
    use after another feature's, the shared query kernels)."""
    cls.__qualname__ = cls.__name__
    cls.__module__ = __name__
    return cls


LentArray, lend, lent_opener, _lent_arg = _lend_machinery()
_by_reference(LentArray)


#: kernel -> the compiled entry point of its single overload (see :func:`entry_call`)
ENTRY_POINTS: dict = {}


def entry_call(kernel, *args):
    """Call a kernel, bypassing numba's dispatcher once its single overload is known.

    Callers that always pass the same argument types (the query layer, the tile
    cache's update step) skip the dispatcher's type resolution of every argument
    after the first call. Falls back to the dispatcher on a type error, and keeps
    no entry point while a kernel has several overloads (or none: a plain function).
    """
    ep = ENTRY_POINTS.get(kernel)
    if ep is not None:
        try:
            return ep(*args)
        except TypeError:
            pass
    res = kernel(*args)
    ovs = getattr(kernel, "overloads", None)
    if ovs is not None and len(ovs) == 1:
        ENTRY_POINTS[kernel] = next(iter(ovs.values())).entry_point
    else:
        ENTRY_POINTS.pop(kernel, None)
    return res


# --- array references: a struct of arrays passed as one pointer ---------------------


def _ref_machinery():
    import numpy as np
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.core.datamodel import models
    from numba.core.typing.templates import AttributeTemplate
    from numba.extending import infer_getattr, intrinsic, lower_getattr_generic, register_model
    from numba.np import numpy_support
    from numba.np.arrayobj import populate_array

    class ArraysRef(types.Type):
        """The numba type of a struct of arrays held by a descriptor (see
        :func:`ref_opener`): one pointer to the descriptor's words, whose attributes
        are the lent arrays it describes.

        A named tuple of arrays is passed to a non-inlined kernel as all its arrays'
        fields flattened into scalar arguments (the 42-array navmesh view: ~320
        words stored to the stack on every call, most of a raycast's cost in a batch
        loop). This type passes one pointer; an attribute reads its array's address
        and shape from the descriptor with loads marked invariant, so LLVM hoists and
        merges them freely (the descriptor never changes while a kernel runs).
        """

        def __init__(self, tuple_class, fields, members):
            self.tuple_class = tuple_class
            self.fields = tuple(fields)
            self.members = tuple(members)
            super().__init__(name=f"ArraysRef({tuple_class.__module__}.{tuple_class.__name__})")

        @property
        def key(self):
            return (self.tuple_class, self.fields, self.members)

    @register_model(ArraysRef)
    class ArraysRefModel(models.PrimitiveModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, ir.IntType(64).as_pointer())

    @infer_getattr
    class _ArraysRefAttrs(AttributeTemplate):
        key = ArraysRef

        def generic_resolve(self, typ, attr):
            if attr in typ.fields:
                return typ.members[typ.fields.index(attr)]
            return None

    @lower_getattr_generic(ArraysRef)
    def _ref_getattr(context, builder, typ, value, attr):
        i = typ.fields.index(attr)
        t = typ.members[i]
        i64 = ir.IntType(64)
        inv = builder.module.add_metadata([])

        def word(k):
            ld = builder.load(builder.gep(value, [ir.Constant(i64, k)]))
            ld.set_metadata("invariant.load", inv)
            return ld

        arr = context.make_array(t)(context, builder)
        ll_dtype = context.get_data_type(t.dtype)
        isz = context.get_abi_sizeof(ll_dtype)
        ptr = builder.inttoptr(word(3 * i), ll_dtype.as_pointer())
        n0 = word(3 * i + 1)
        itemsize = ir.Constant(i64, isz)
        if t.ndim == 1:
            shape = [n0]
            strides = [itemsize]
        else:
            n1 = word(3 * i + 2)
            shape = [n0, n1]
            strides = [builder.mul(n1, itemsize), itemsize]
        populate_array(
            arr, data=ptr, shape=cgutils.pack_array(builder, shape),
            strides=cgutils.pack_array(builder, strides), itemsize=itemsize, meminfo=None,
        )  # fmt: skip
        return arr._getvalue()

    def ref_opener(tuple_class, spec):
        """An intrinsic ``open(d)`` -> :class:`ArraysRef` over a descriptor ``d``
        ((3 * len(spec),) int64 of address, shape0, shape1 per array, C-contiguous;
        see ``navkit.detour._view.pack_arrays``): attribute ``x`` of the result is the
        lent array ``tuple_class``'s field ``x`` describes. The descriptor must stay
        alive while the reference is used (a kernel's argument is)."""
        fields = [name for name, _, _ in spec]
        members = [LentArray(numpy_support.from_dtype(np.dtype(dt)), nd, "C") for _, dt, nd in spec]
        ref_t = ArraysRef(tuple_class, fields, members)

        @intrinsic
        def open_ref(typingctx, d):
            if not (isinstance(d, types.Array) and d.dtype == types.int64 and d.ndim == 1):
                return None

            def codegen(context, builder, signature, args):
                data = context.make_array(d)(context, builder, value=args[0]).data
                return builder.bitcast(data, ir.IntType(64).as_pointer())

            return ref_t(d), codegen

        return open_ref

    return ArraysRef, ref_opener


ArraysRef, ref_opener = _ref_machinery()
_by_reference(ArraysRef)


# -- numba's thread count, cheaply ------------------------------------------------------------
# numba.get_num_threads / set_num_threads take ~3-4 us each (they make sure the thread pool
# is launched, then check the count); a batch call asks three times. After the first call
# the pool is up, and the threading layer's own get/set (the functions the public ones end
# with) take ~0.1-0.3 us. Fallback: the public functions.
_thread_fns: list = []


def _bind_thread_fns() -> tuple:
    import numba

    numba.get_num_threads()  # launches the pool
    from numba.np.ufunc import parallel as _par

    get = getattr(_par, "_get_num_threads", None)
    put = getattr(_par, "_set_num_threads", None)
    if not (callable(get) and callable(put) and get() == numba.get_num_threads()):
        get, put = numba.get_num_threads, numba.set_num_threads
    _thread_fns[:] = [get, put]
    return get, put


def get_threads() -> int:
    """numba.get_num_threads() of the calling thread."""
    fns = _thread_fns or _bind_thread_fns()
    return int(fns[0]())


def set_threads(n: int) -> None:
    """numba.set_num_threads(n) for the calling thread; ``n`` must be in
    1..numba.config.NUMBA_NUM_THREADS (the callers clamp it)."""
    fns = _thread_fns or _bind_thread_fns()
    fns[1](n)
