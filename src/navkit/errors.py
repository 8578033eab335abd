"""navkit's exceptions.

Every error navkit raises on purpose derives from :class:`NavkitError`, so one
``except navkit.errors.NavkitError`` catches them all. The subclasses say what
went wrong:

- :class:`InputError` -- bad geometry or arguments (NaN, out-of-range indices,
  empty meshes, points far from any polygon ...). Also a ``ValueError``.
- :class:`ConfigError` -- a setting outside its documented limit. Also a
  ``ValueError``; ``field`` names the setting.
- :class:`FormatError` -- a file that is corrupt, truncated, foreign or of an
  unsupported version.
- :class:`StaleHandleError` -- a polygon ref, obstacle or agent handle whose
  salt no longer matches (the thing it named was removed or replaced).
- :class:`BuildError` -- a bake that cannot proceed (e.g. geometry too large
  for one heightfield).
- :class:`QueryError` -- a query that cannot be answered as asked.
"""

from __future__ import annotations

__all__ = [
    "NavkitError",
    "InputError",
    "ConfigError",
    "FormatError",
    "StaleHandleError",
    "BuildError",
    "QueryError",
]


class NavkitError(Exception):
    """Base class of every error navkit raises on purpose."""


class InputError(NavkitError, ValueError):
    """Invalid input data: geometry, positions, indices or arguments."""


class ConfigError(NavkitError, ValueError):
    """A setting outside its limit.

    Parameters
    ----------
    field : str
        The setting's name, e.g. ``"cell_size"``.
    message : str
        What is wrong, including the limit.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class FormatError(NavkitError):
    """A file or byte string that is corrupt, truncated, foreign or unsupported."""


class StaleHandleError(NavkitError):
    """A handle (poly ref, tile ref, obstacle or agent) that no longer names anything."""


class BuildError(NavkitError):
    """A bake that cannot proceed with the given geometry and settings."""


class QueryError(NavkitError):
    """A query that cannot be answered as asked."""
