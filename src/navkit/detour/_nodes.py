"""Search-node pool and open list for the graph searches (Detour's dtNodePool / dtNodeQueue).

A search visits polygons as *nodes* keyed by (poly ref, state); the state
distinguishes the up to four ways A* may enter a polygon across tile sides.
The pool is a fixed-capacity struct of arrays with a chained hash from key to
node index; once full, further keys get no node (the search then reports
``DT_OUT_OF_NODES``). The open list is a binary min-heap of node indices
ordered by ``total``; each heap entry's total is copied beside it
(``heap_total``), so a sift step reads one array, not heap then total. Its
exact sift rules matter for tie-breaking between equal totals, so they
follow Detour: push sifts up with a strict ``>``; pop moves the hole from the
root down to a leaf (always taking the smaller child, the right one only when
strictly smaller) and then sifts the last element up from there; modify
sifts the node up from its current heap position.

Node indices are 0-based; a parent index of -1 means "no parent".
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from navkit._jit import njit, ref_opener

from ._view import pack_arrays

NODE_OPEN = 1
NODE_CLOSED = 2
NODE_PARENT_DETACHED = 4

M_COUNT = 0  # meta[0]: nodes allocated
M_HEAP = 1  # meta[1]: heap size


class NodePool(NamedTuple):
    """Arrays of one node pool (capacity ``cap``) and its open list."""

    ref: np.ndarray  # (cap,) int64 poly ref
    state: np.ndarray  # (cap,) int32
    parent: np.ndarray  # (cap,) int32 parent node index, -1 = none
    cost: np.ndarray  # (cap,) float32 cost from start [wu * area cost]
    total: np.ndarray  # (cap,) float32 cost + heuristic
    pos: np.ndarray  # (cap, 3) float32 node position [wu]
    flags: np.ndarray  # (cap,) int32 NODE_* bits
    chain: np.ndarray  # (cap,) int32 next node in the same hash bucket, -1 = end
    bucket: np.ndarray  # (nbuckets,) int32 first node per bucket (power of two), -1 = empty
    heap: np.ndarray  # (cap,) int32 node indices, heap order
    heap_pos: np.ndarray  # (cap,) int32 position of each node in heap, -1 = not in heap
    heap_total: np.ndarray  # (cap,) float32 total of the node at each heap position
    meta: np.ndarray  # (2,) int64 [node count, heap size]


# dtype and rank of each NodePool array, in field order (see _view.pack_arrays).
POOL_SPEC = (
    ("ref", np.int64, 1),
    ("state", np.int32, 1),
    ("parent", np.int32, 1),
    ("cost", np.float32, 1),
    ("total", np.float32, 1),
    ("pos", np.float32, 2),
    ("flags", np.int32, 1),
    ("chain", np.int32, 1),
    ("bucket", np.int32, 1),
    ("heap", np.int32, 1),
    ("heap_pos", np.int32, 1),
    ("heap_total", np.float32, 1),
    ("meta", np.int64, 1),
)


class PoolHandle:
    """A NodePool and its descriptor (the pool owns the arrays)."""

    __slots__ = ("pool", "desc")

    def __init__(self, cap: int) -> None:
        self.pool = make_pool(cap)
        self.desc = pack_arrays(self.pool, POOL_SPEC)


#: The NodePool described by ``d`` (see :class:`PoolHandle`), as a reference whose
#: attributes are lent arrays (:func:`navkit._jit.ref_opener`: one pointer, no reference
#: counting). A numba intrinsic, for kernels only.
open_pool = ref_opener(NodePool, POOL_SPEC)


def _next_pow2(v: int) -> int:
    p = 1
    while p < v:
        p *= 2
    return p


_LINE = 64  # bytes of a cache line


def _padded(shape, dtype, fill) -> np.ndarray:
    """np.full(shape, fill, dtype) starting on a cache line, with a line of its own
    before and after it: no other allocation shares a cache line with the array.

    Pools of one batch are written by different threads; their small arrays (``meta``
    16 bytes, a 64-node pool's 256-byte arrays) would otherwise share lines with the
    neighbouring allocations of another thread's pool (false sharing)."""
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dt.itemsize
    buf = np.empty(nbytes + 3 * _LINE, np.uint8)
    off = _LINE - buf.ctypes.data % _LINE + _LINE if buf.ctypes.data % _LINE else _LINE
    a = buf[off : off + nbytes].view(dt).reshape(shape)
    a[...] = fill
    return a


def make_pool(cap: int) -> NodePool:
    """Allocate a pool of ``cap`` nodes (hash size as Detour: nextPow2(cap/4)); every
    array on cache lines of its own (see :func:`_padded`)."""
    cap = max(1, int(cap))
    nb = max(1, _next_pow2(cap // 4))
    pool = NodePool(
        ref=_padded(cap, np.int64, 0),
        state=_padded(cap, np.int32, 0),
        parent=_padded(cap, np.int32, -1),
        cost=_padded(cap, np.float32, 0),
        total=_padded(cap, np.float32, 0),
        pos=_padded((cap, 3), np.float32, 0),
        flags=_padded(cap, np.int32, 0),
        chain=_padded(cap, np.int32, -1),
        bucket=_padded(nb, np.int32, -1),
        heap=_padded(cap, np.int32, 0),
        heap_pos=_padded(cap, np.int32, -1),
        heap_total=_padded(cap, np.float32, 0),
        meta=_padded(2, np.int64, 0),
    )
    return pool


@njit(inline="always")
def _hash(ref):
    h = (ref * 2654435761) & 0xFFFFFFFF
    return h ^ (h >> 16)


@njit
def pool_clear(pool):
    """Forget every node and empty the open list."""
    pool.bucket[:] = -1
    pool.meta[M_COUNT] = 0
    pool.meta[M_HEAP] = 0


@njit
def pool_find(pool, ref, state):
    """Index of node (ref, state), or -1."""
    i = pool.bucket[_hash(ref) & (pool.bucket.shape[0] - 1)]
    while i != -1:
        if pool.ref[i] == ref and pool.state[i] == state:
            return i
        i = pool.chain[i]
    return -1


@njit
def pool_find_any(pool, ref):
    """Index of any node of poly ref (first in its bucket chain), or -1."""
    i = pool.bucket[_hash(ref) & (pool.bucket.shape[0] - 1)]
    while i != -1:
        if pool.ref[i] == ref:
            return i
        i = pool.chain[i]
    return -1


@njit(inline="always")
def _pool_get(
    p_ref,
    p_state,
    p_parent,
    p_cost,
    p_total,
    p_flags,
    p_heap_pos,
    p_chain,
    p_bucket,
    meta,
    ref,
    state,
):
    b = np.uint64(_hash(ref) & (p_bucket.shape[0] - 1))
    i = p_bucket[b]
    found = -1
    while i != -1:
        # unsigned subscripts: no wraparound fix on the chain's dependent loads
        ui = np.uint64(i)
        if p_ref[ui] == ref and p_state[ui] == state:
            found = i
            break
        i = p_chain[ui]
    if found == -1:
        n = meta[M_COUNT]
        if n < p_ref.shape[0]:
            found = np.int32(n)
            meta[M_COUNT] = n + 1
            un = np.uint64(n)  # unsigned: no wraparound fix on these stores
            p_ref[un] = ref
            p_state[un] = state
            p_parent[un] = -1
            p_cost[un] = 0
            p_total[un] = 0
            p_flags[un] = 0
            p_heap_pos[un] = -1
            p_chain[un] = p_bucket[b]
            p_bucket[b] = found
    return found


@njit(inline="always")
def pool_get(pool, ref, state):
    """Index of node (ref, state), allocating a fresh zeroed node; -1 when the pool is full."""
    return _pool_get(
        pool.ref, pool.state, pool.parent, pool.cost, pool.total, pool.flags, pool.heap_pos,
        pool.chain, pool.bucket, pool.meta, ref, state,
    )  # fmt: skip


@njit(inline="always")
def heap_push(pool, node):
    """Insert node into the open list."""
    heap_push_t(pool.heap, pool.heap_total, pool.heap_pos, pool.meta, node, pool.total[node])


@njit(inline="always")
def heap_empty(pool):
    return pool.meta[M_HEAP] == 0


@njit(inline="always")
def heap_pop(pool):
    """Remove and return the node with the lowest total."""
    return heap_pop_t(pool.heap, pool.heap_total, pool.heap_pos, pool.meta)


@njit(inline="always")
def heap_modify(pool, node):
    """Restore heap order after node's total decreased."""
    heap_modify_t(pool.heap, pool.heap_total, pool.heap_pos, node, pool.total[node])


# -- the open list on its own arrays, the total passed in (A* calls these directly and
# reads no node total while sifting; the pool versions above pass pool.total[node]) --
@njit(inline="always")
def _sift_up_t(heap, hval, heap_pos, hole, node, tot):
    while hole > 0:
        up = (hole - 1) >> 1
        uu = np.uint64(up)
        t_up = hval[uu]
        if t_up > tot:
            other = heap[uu]
            uh = np.uint64(hole)
            heap[uh] = other
            hval[uh] = t_up
            heap_pos[np.uint64(other)] = hole
            hole = up
        else:
            break
    uh = np.uint64(hole)
    heap[uh] = node
    hval[uh] = tot
    heap_pos[np.uint64(node)] = hole


@njit(inline="always")
def heap_push_t(heap, hval, heap_pos, meta, node, tot):
    """heap_push for a node whose total is tot (not read from the pool)."""
    n = meta[M_HEAP]
    meta[M_HEAP] = n + 1
    _sift_up_t(heap, hval, heap_pos, n, node, tot)


@njit(inline="always")
def heap_pop_t(heap, hval, heap_pos, meta):
    """heap_pop reading totals from the heap's own copy only (same sift rules)."""
    top = heap[0]
    heap_pos[np.uint64(top)] = -1
    n = meta[M_HEAP] - 1
    meta[M_HEAP] = n
    if n == 0:
        return top
    un = np.uint64(n)
    last = heap[un]
    tlast = hval[un]
    hole = 0
    child = 1
    while child < n:
        uc = np.uint64(child)
        if child + 1 < n and hval[uc] > hval[uc + np.uint64(1)]:
            child += 1
            uc = np.uint64(child)
        h = heap[uc]
        uh = np.uint64(hole)
        heap[uh] = h
        hval[uh] = hval[uc]
        heap_pos[np.uint64(h)] = hole
        hole = child
        child = hole * 2 + 1
    _sift_up_t(heap, hval, heap_pos, hole, last, tlast)
    return top


@njit(inline="always")
def heap_modify_t(heap, hval, heap_pos, node, tot):
    """heap_modify for a node whose total decreased to tot."""
    p = heap_pos[np.uint64(node)]
    if p >= 0:
        _sift_up_t(heap, hval, heap_pos, p, node, tot)
