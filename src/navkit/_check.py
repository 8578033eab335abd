"""Argument validators shared by navkit's public entry points.

Each validator takes the value and the argument's name, and returns the value
converted to the type the caller needs, or raises :class:`~navkit.errors.InputError`
naming the argument and its valid range. They are cheap (plain Python: ``type``
tests, ``float``, ``math.isfinite``), because single queries call them on every
call, and they run before any work so that nothing invalid reaches a kernel.

bool is rejected wherever a number is expected (``True`` is an ``int`` in Python,
but never a meaningful count, ref or length).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .errors import InputError

__all__ = [
    "MAX_RESULT",
    "FLT_MAX",
    "integer",
    "ref",
    "kernel_ref",
    "real",
    "flag",
    "rng",
    "point",
]

#: Upper limit of every result-count argument (``max_path``, ``max_polys``, ...):
#: 2**20 refs are 8 MiB per result array, far beyond any navmesh query's reach
#: (the node pool holds at most 65535 polygons).
MAX_RESULT = 1 << 20
#: Largest finite float32 (coordinates and lengths must convert to finite float32).
FLT_MAX = float(np.finfo(np.float32).max)
_REF_END = 1 << 64
_REF_SIGN = 1 << 63


def _describe(v: object) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def integer(v: object, name: str, lo: int, hi: int) -> int:
    """An integer in ``[lo, hi]`` (Python int or numpy integer; not bool, not float).

    Raises
    ------
    InputError
        Not an integer, or outside ``[lo, hi]``.
    """
    if type(v) is int:
        i = v
    else:
        if isinstance(v, bool | np.bool_):
            raise InputError(f"{name} must be an integer in {lo}..{hi}, got {v!r}")
        try:
            i = operator.index(v)  # type: ignore[arg-type]
        except TypeError:
            raise InputError(
                f"{name} must be an integer in {lo}..{hi}, got {_describe(v)}"
            ) from None
    if i < lo or i > hi:
        raise InputError(f"{name} must be in {lo}..{hi}, got {i}")
    return i


def ref(v: object, name: str = "ref") -> int:
    """A polygon or tile ref: an integer in ``[0, 2**64)`` (Detour's 64-bit refs hold
    every 32-bit one). Returns a Python int."""
    if type(v) is int and 0 <= v < _REF_END:
        return v
    return integer(v, name, 0, _REF_END - 1)


def kernel_ref(v: object, name: str = "ref") -> int:
    """:func:`ref` as the int64 the kernels use (two's complement above 2**63)."""
    r = v if type(v) is int and 0 <= v < _REF_SIGN else ref(v, name)
    return r - _REF_END if r >= _REF_SIGN else r  # type: ignore[operator]


def real(
    v: object,
    name: str,
    lo: float = -FLT_MAX,
    hi: float = FLT_MAX,
    *,
    lo_open: bool = False,
    unit: str = "",
) -> float:
    """A finite real number in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``).

    Accepts Python and numpy ints and floats (not bool, not strings).

    Raises
    ------
    InputError
        Not a number, NaN/infinite, or outside the range.
    """
    if type(v) is float:
        f = v
    else:
        if isinstance(v, bool | np.bool_ | str | bytes) or not isinstance(
            v, int | float | np.integer | np.floating
        ):
            raise InputError(f"{name} must be a number, got {_describe(v)}")
        try:
            f = float(v)
        except OverflowError:  # an int beyond float's range
            f = math.inf
    if f - f != 0.0:  # NaN or infinite
        raise InputError(f"{name} must be finite, got {_describe(v)}")
    if f < lo or f > hi or (lo_open and f == lo):
        u = f" {unit}" if unit else ""
        rng_txt = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"
        raise InputError(f"{name} must be in {rng_txt}{u}, got {_describe(v)}")
    return f


def flag(v: object, name: str) -> bool:
    """A bool (Python or numpy); integers are rejected, as are strings."""
    if v is True or v is False:
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    raise InputError(f"{name} must be True or False, got {_describe(v)}")


def rng(v: Any, name: str = "rng") -> np.random.Generator:
    """A numpy Generator from ``None`` (fresh entropy), a Generator, a BitGenerator,
    a SeedSequence or an integer seed >= 0."""
    if v is None:
        return np.random.default_rng()
    if isinstance(v, np.random.Generator):
        return v
    if isinstance(v, np.random.BitGenerator | np.random.SeedSequence):
        return np.random.default_rng(v)
    if type(v) is int or (isinstance(v, np.integer) and not isinstance(v, np.bool_)):
        if int(v) < 0:
            raise InputError(f"{name} seed must be >= 0, got {v}")
        return np.random.default_rng(int(v))
    raise InputError(
        f"{name} must be None, a numpy Generator or an integer seed >= 0, got {_describe(v)}"
    )


def point(v: object, name: str) -> np.ndarray:
    """A (3,) point, finite as float32; returned as float32 (not for hot paths)."""
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} must be 3 numbers, got {_describe(v)}") from None
    if a.shape != (3,):
        raise InputError(f"{name} must have shape (3,), got {a.shape}")
    if not np.all(np.abs(a) <= FLT_MAX):
        raise InputError(f"{name} must be finite (as float32), got {a.tolist()}")
    return a.astype(np.float32)
