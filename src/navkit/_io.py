"""Atomic file writes: a temporary file in the target's folder, fsync, rename.

The file gets the permissions a plain ``open(path, "wb")`` would give it: an
existing file keeps its mode; a new one gets ``0o666`` less the process umask
(``0o644`` under the usual umask 022), not the ``0o600`` of a temporary file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import InputError

__all__ = ["atomic_write_bytes"]


def _umask() -> int:
    """The process umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (the only portable read)
    os.umask(mask)
    return mask


def _new_file_mode(p: Path) -> int:
    """The mode ``open(p, "wb")`` leaves ``p`` with."""
    try:
        return stat.S_IMODE(os.stat(p).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    The file's mode is what a plain ``open(path, "wb")`` gives: an existing
    file's mode is kept, a new file gets ``0o666 & ~umask``.

    Raises
    ------
    InputError
        The folder does not exist or is not writable.
    """
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"{p}: folder {folder} does not exist")
    mode = _new_file_mode(p)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(f"{p}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
            else:  # pragma: no cover - Windows before Python 3.13
                os.chmod(tmp, mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
