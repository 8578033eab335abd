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


# -- navkit's container: magic, version, JSON header, payload, SHA-256 ---------------------
def pack_container(magic: bytes, version: int, header: dict, payload: bytes) -> bytes:
    """``magic`` (8 bytes), u32 version, u32 header length, the JSON header, the payload,
    and the SHA-256 of everything before it. The header must carry ``payload_size``."""
    import hashlib
    import json
    import struct

    hb = json.dumps(header, separators=(",", ":")).encode()
    body = magic + struct.pack("<II", version, len(hb)) + hb + payload
    return body + hashlib.sha256(body).digest()


def unpack_container(
    data: bytes, magic: bytes, version: int, kind: str, what: str
) -> tuple[dict, bytes]:
    """The JSON header and the payload of a :func:`pack_container` file.

    Raises
    ------
    FormatError
        Wrong magic or version, a checksum mismatch (corrupt or truncated), or a
        header that does not describe the payload (``kind`` names the file type in
        the messages, e.g. ``"navmesh"``).
    """
    import hashlib
    import json
    import struct

    from .errors import FormatError

    data = bytes(data)
    if len(data) < 16 + 32:
        raise FormatError(f"{what}: {len(data)} bytes is too short for a navkit {kind}")
    if data[:8] != magic:
        raise FormatError(f"{what}: not a navkit {kind} file (magic {data[:8]!r})")
    ver, hlen = struct.unpack_from("<II", data, 8)
    if ver != version:
        raise FormatError(f"{what}: navkit {kind} format version {ver}, expected {version}")
    body, digest = data[:-32], data[-32:]
    if hashlib.sha256(body).digest() != digest:
        raise FormatError(f"{what}: checksum mismatch (file corrupt or truncated)")
    if 16 + hlen > len(body):
        raise FormatError(f"{what}: header length {hlen} exceeds the file")
    try:
        h = json.loads(body[16 : 16 + hlen].decode())
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise FormatError(f"{what}: unreadable navkit {kind} header: {exc}") from None
    payload = body[16 + hlen :]
    if not isinstance(h, dict) or h.get("payload_size") != len(payload):
        size = h.get("payload_size") if isinstance(h, dict) else None
        raise FormatError(f"{what}: payload is {len(payload)} bytes, header says {size!r}")
    return h, payload
