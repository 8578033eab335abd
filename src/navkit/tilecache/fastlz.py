"""FastLZ compression, as Recast's tile cache stores its layers.

RecastDemo's ``FastLZCompressor`` (and the @recast-navigation build the peer runs)
compresses every tile-cache layer with FastLZ 0.1.0's ``fastlz_compress``, which uses
level 1 for inputs under 64 KiB and level 2 above. :func:`compress` reproduces that
encoder's choices (hash table, match search, token layout) at both levels, so that
navkit's compressed layers are the same bytes as Recast's; :func:`decompress` reads
both levels.

Stream format (level 1). Tokens follow each other; the first byte's top three bits
hold the level - 1, so the first control byte is ``byte0 & 31``:

- ``ctrl < 32``: a literal run, the next ``ctrl + 1`` bytes are copied as they are.
- otherwise a back reference: ``len = (ctrl >> 5) - 1`` (``len == 6``: one more byte
  is added), then one byte ``d``; ``len + 3`` bytes are copied from ``((ctrl & 31) << 8)
  + d + 1`` bytes back (the source may overlap the output: runs).

Level 2 differs in two places: a length of 6 is extended by bytes until one is not
255, and a distance byte of 255 with ``ctrl & 31 == 31`` is followed by a 16-bit
big-endian distance (plus 8191).

The encoder hashes the three bytes at the current position into a table of 8192
positions (all initialised to the input's start), takes the stored position as the
candidate when it lies 1..8191 bytes back and its first three bytes match, extends
the match as far as it goes (stopping two bytes before the end), and emits literals
in runs of at most 32. The last 12 bytes are never the start of a match. Level 2
also takes a run of four equal bytes at once without a hash lookup, and accepts
candidates up to 73724 bytes back when five bytes match.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..errors import FormatError, InputError

__all__ = ["compress", "decompress", "max_compressed_size", "stream_level"]

_HASH_LOG = 13
_HASH_SIZE = 1 << _HASH_LOG
_MAX_COPY = 32
_MAX_LEN = 264
_MAX_DISTANCE = 8192
#: Level-2 distances beyond this are written as a 16-bit extension.
_L2_MAX_DISTANCE = 8191


def max_compressed_size(n: int) -> int:
    """Bytes a level-1 stream of ``n`` input bytes can take at most.

    Worst case is all literals: one control byte per 32 input bytes.
    """
    return int(n) + (int(n) + _MAX_COPY - 1) // _MAX_COPY + 1


@njit
def _hash3(src, p):  # pragma: no cover - numba
    """FastLZ's hash of the bytes at ``p``, ``p + 1``, ``p + 2`` (13 bits)."""
    v = np.int64(src[p]) | (np.int64(src[p + 1]) << 8)
    w = np.int64(src[p + 1]) | (np.int64(src[p + 2]) << 8)
    v ^= w ^ (v >> (16 - _HASH_LOG))
    return v & (_HASH_SIZE - 1)


@njit
def _compress(src, out, level):  # pragma: no cover - numba
    """FastLZ stream (level 1 or 2) of ``src`` into ``out``; returns its length."""
    n = src.shape[0]
    if n < 4:
        if n == 0:
            return 0
        out[0] = n - 1
        for k in range(n):
            out[1 + k] = src[k]
        return n + 1
    # level 1 refers at most 8191 bytes back; level 2 also farther (5+ byte matches),
    # below FastLZ's MAX_FARDISTANCE = 65535 + 8191 - 1
    max_dist = _MAX_DISTANCE if level == 1 else _L2_MAX_DISTANCE + 65535 - 1
    htab = np.zeros(_HASH_SIZE, np.int64)  # every slot starts at the input's start
    ip_bound = n - 2
    ip_limit = n - 12
    # the stream starts with a literal run holding the first two bytes
    copy = 2
    out[0] = _MAX_COPY - 1
    out[1] = src[0]
    out[2] = src[1]
    op = 3
    ip = 2
    while ip < ip_limit:
        anchor = ip
        mlen = 3
        if (
            level == 2
            and src[ip] == src[ip - 1]
            and src[ip - 1] == src[ip + 1]
            and src[ip] == src[ip + 2]
        ):
            # level 2 takes a run at once (without hashing this position)
            distance = 1
            ref = anchor + 2
        else:
            hv = _hash3(src, ip)
            ref = htab[hv]
            distance = anchor - ref
            htab[hv] = anchor
            ok = (
                distance != 0
                and distance < max_dist
                and src[ref] == src[ip]
                and src[ref + 1] == src[ip + 1]
                and src[ref + 2] == src[ip + 2]
            )
            if ok and level == 2 and distance >= _L2_MAX_DISTANCE:
                # far matches need 5 bytes
                ok = src[ref + 3] == src[ip + 3] and src[ref + 4] == src[ip + 4]
                mlen = 5
            if not ok:
                # literal byte
                out[op] = src[anchor]
                op += 1
                ip = anchor + 1
                copy += 1
                if copy == _MAX_COPY:
                    copy = 0
                    out[op] = _MAX_COPY - 1
                    op += 1
                continue
            ref += mlen
        ip = anchor + mlen
        distance -= 1  # stored biased
        if distance == 0:
            # a run of one byte: compares the reference (one behind) with that byte
            x = src[ip - 1]
            while ip < ip_bound:
                r = src[ref]
                ref += 1
                if r != x:
                    break
                ip += 1
        else:
            stopped = False
            for _ in range(8):
                r = src[ref]
                s = src[ip]
                ref += 1
                ip += 1
                if r != s:
                    stopped = True
                    break
            if not stopped:
                while ip < ip_bound:
                    r = src[ref]
                    s = src[ip]
                    ref += 1
                    ip += 1
                    if r != s:
                        break
        # close the pending literal run (or drop its unused control byte)
        if copy:
            out[op - copy - 1] = copy - 1
        else:
            op -= 1
        copy = 0
        ip -= 3
        mlen = ip - anchor  # match length - 2
        if level == 1:
            while mlen > _MAX_LEN - 2:
                out[op] = (7 << 5) + (distance >> 8)
                out[op + 1] = _MAX_LEN - 2 - 7 - 2
                out[op + 2] = distance & 255
                op += 3
                mlen -= _MAX_LEN - 2
            if mlen < 7:
                out[op] = (mlen << 5) + (distance >> 8)
                out[op + 1] = distance & 255
                op += 2
            else:
                out[op] = (7 << 5) + (distance >> 8)
                out[op + 1] = mlen - 7
                out[op + 2] = distance & 255
                op += 3
        else:
            far = distance >= _L2_MAX_DISTANCE
            if far:
                distance -= _L2_MAX_DISTANCE
            hi = 31 if far else distance >> 8
            if mlen < 7:
                out[op] = (mlen << 5) + hi
                op += 1
            else:
                out[op] = (7 << 5) + hi
                op += 1
                mlen -= 7
                while mlen >= 255:
                    out[op] = 255
                    op += 1
                    mlen -= 255
                out[op] = mlen
                op += 1
            if far:
                out[op] = 255
                out[op + 1] = distance >> 8
                out[op + 2] = distance & 255
                op += 3
            else:
                out[op] = distance & 255
                op += 1
        # hash the two positions at the match's end
        htab[_hash3(src, ip)] = ip
        ip += 1
        htab[_hash3(src, ip)] = ip
        ip += 1
        out[op] = _MAX_COPY - 1  # a literal run is assumed to follow
        op += 1
    # the tail as literals
    while ip <= ip_bound + 1:
        out[op] = src[ip]
        op += 1
        ip += 1
        copy += 1
        if copy == _MAX_COPY:
            copy = 0
            out[op] = _MAX_COPY - 1
            op += 1
    if copy:
        out[op - copy - 1] = copy - 1
    else:
        op -= 1
    if level == 2:
        out[0] |= 1 << 5
    return op


@njit(link=False)
def _decompress(src, out):  # pragma: no cover - numba
    """Decode a level-1 or level-2 stream into ``out``.

    Returns the number of bytes written, or -1 when the stream is corrupt, would
    overflow ``out`` or refers before the output's start.
    """
    n = src.shape[0]
    cap = out.shape[0]
    if n == 0:
        return 0
    level = (np.int64(src[0]) >> 5) + 1
    if level != 1 and level != 2:
        return -1
    ip = 1
    op = 0
    ctrl = np.int64(src[0]) & 31
    while True:
        if ctrl >= 32:
            mlen = (ctrl >> 5) - 1
            ofs = (ctrl & 31) << 8
            if mlen == 6:
                if level == 1:
                    if ip >= n:
                        return -1
                    mlen += np.int64(src[ip])
                    ip += 1
                else:
                    while True:
                        if ip >= n:
                            return -1
                        code = np.int64(src[ip])
                        ip += 1
                        mlen += code
                        if code != 255:
                            break
            if ip >= n:
                return -1
            code = np.int64(src[ip])
            ip += 1
            dist = ofs + code + 1
            if level == 2 and code == 255 and ofs == (31 << 8):
                if ip + 2 > n:
                    return -1
                far = (np.int64(src[ip]) << 8) + np.int64(src[ip + 1])
                ip += 2
                dist = far + _L2_MAX_DISTANCE + 1
            count = mlen + 3
            if op + count > cap or dist > op:
                return -1
            ref = op - dist
            if count < 32 or (dist < count and dist != 1):
                # byte by byte: short (a slice assignment costs more) or overlapping
                # (repeats the pattern, as the format defines it)
                for k in range(count):
                    out[op + k] = out[ref + k]
            elif dist == 1:  # a long run of one byte
                out[op : op + count] = out[ref]
            else:  # a long block copy without overlap
                out[op : op + count] = out[ref : ref + count]
            op += count
        else:
            count = ctrl + 1
            if op + count > cap or ip + count > n:
                return -1
            for k in range(count):
                out[op + k] = src[ip + k]
            op += count
            ip += count
        if ip >= n:
            break
        ctrl = np.int64(src[ip])
        ip += 1
    return op


def _as_bytes(data: bytes | bytearray | memoryview | np.ndarray, name: str) -> np.ndarray:
    if isinstance(data, np.ndarray):
        if data.dtype != np.uint8 or data.ndim != 1:
            raise InputError(f"{name} must be a 1-d uint8 array, got {data.dtype} {data.shape}")
        return np.ascontiguousarray(data)
    if isinstance(data, (bytes, bytearray, memoryview)):
        # a writable copy: the kernels' signature for the arrays the bake and the update
        # kernel pass (a read-only one would compile a second signature)
        return np.frombuffer(bytearray(data), np.uint8)
    raise InputError(f"{name} must be bytes or a uint8 array, got {type(data).__name__}")


def stream_level(stream: bytes | bytearray | memoryview | np.ndarray) -> int:
    """FastLZ level of a stream: ``(first byte >> 5) + 1`` (0 for an empty stream)."""
    s = _as_bytes(stream, "stream")
    return 0 if s.size == 0 else int(s[0] >> 5) + 1


def compress(data: bytes | bytearray | memoryview | np.ndarray, level: int | None = None) -> bytes:
    """FastLZ stream of ``data``, byte for byte as FastLZ 0.1.0 writes it.

    Parameters
    ----------
    data : bytes-like or (n,) uint8
        Input of any length.
    level : {None, 1, 2}
        ``None`` chooses as ``fastlz_compress`` (what Recast's tile cache calls):
        level 1 below 65536 bytes (every layer up to 147 x 147 cells), level 2 above.

    Returns
    -------
    bytes
        The stream (empty for empty input).
    """
    src = _as_bytes(data, "data")
    if level is None:
        level = 1 if src.size < 65536 else 2
    if level not in (1, 2):
        raise InputError(f"level must be 1, 2 or None, got {level!r}")
    out = np.empty(max_compressed_size(src.size) + 16, np.uint8)
    n = int(_compress(src, out, level))
    return out[:n].tobytes()


def decompress(stream: bytes | bytearray | memoryview | np.ndarray, size: int) -> bytes:
    """Decode a FastLZ stream (level 1 or 2) that must expand to exactly ``size`` bytes.

    Raises
    ------
    FormatError
        Unknown level, a token that reads past the stream or refers before the
        output's start, or an output size other than ``size``.
    """
    s = _as_bytes(stream, "stream")
    if not isinstance(size, (int, np.integer)) or size < 0:
        raise InputError(f"size must be an int >= 0, got {size!r}")
    out = np.empty(int(size), np.uint8)
    n = int(_decompress(s, out))
    if n < 0:
        raise FormatError(
            f"corrupt FastLZ stream ({s.size} bytes, level {stream_level(s)}): "
            f"a token is truncated, refers before the start or overflows {size} bytes"
        )
    if n != size:
        raise FormatError(f"FastLZ stream decodes to {n} bytes, expected {size}")
    return out.tobytes()
