"""The packed view descriptor: kernels see exactly the NavView's arrays, and a descriptor
keeps them alive (it can never dangle)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from peer_support import peer_file

from navkit._jit import njit
from navkit.detour._nodes import POOL_SPEC, PoolHandle, open_pool
from navkit.detour._view import (
    VIEW_SPEC,
    NavView,
    ViewHandle,
    open_view,
    pack_arrays,
    poly_index,
    poly_index_entry,
    view_from_navmesh,
)
from navkit.detour.navmesh import NavMesh
from navkit.detour.query import NavMeshQuery


@njit
def _acc(a):
    s = 0.0
    for v in a.ravel():
        s += np.float64(v)
    return a.size, s


def _make_sums():
    """A kernel that reads every pool by name through open_view (the view is one
    pointer, not a tuple to unroll): per pool, its element count and the sum of its
    elements."""
    body = [
        "def _sums(d):",
        "    nav = open_view(d)",
        f"    out = np.zeros(({len(VIEW_SPEC)}, 2), np.float64)",
    ]
    for i, (name, _, _) in enumerate(VIEW_SPEC):
        body.append(f"    out[{i}, 0], out[{i}, 1] = _acc(nav.{name})")
    body.append("    return out")
    ns = {"open_view": open_view, "np": np, "_acc": _acc}
    exec("\n".join(body), ns)
    return njit(cache=False)(ns["_sums"])


_sums = _make_sums()


@pytest.fixture(scope="module", params=["dungeon.solo", "nav_test.tiled"])
def navmesh(request):
    return NavMesh.from_recast(peer_file(f"{request.param}.navmesh.bin"))


def test_spec_matches_the_namedtuple():
    assert tuple(name for name, _, _ in VIEW_SPEC) == NavView._fields


def test_kernels_see_the_same_arrays(navmesh):
    view = view_from_navmesh(navmesh)
    got = _sums(ViewHandle(view).desc)
    for i, a in enumerate(view):
        assert got[i, 0] == a.size, VIEW_SPEC[i][0]
        assert got[i, 1] == pytest.approx(float(a.astype(np.float64).sum()), rel=1e-12, abs=0)


def test_poly_index_through_descriptor_equals_direct(navmesh):
    view = view_from_navmesh(navmesh)
    h = ViewHandle(view)
    for ref in view.poly_ref[:: max(1, view.poly_ref.shape[0] // 50)]:
        assert poly_index_entry(h.desc, int(ref)) == poly_index(view, int(ref))
    assert poly_index_entry(h.desc, 0) == -1


def test_descriptor_keeps_its_arrays_alive(navmesh):
    h = ViewHandle(view_from_navmesh(navmesh))
    d = h.desc
    ref = int(h.view.poly_ref[-1])
    want = poly_index(h.view, ref)
    del h
    gc.collect()
    junk = [np.full(10_000, -7, np.int64) for _ in range(50)]  # reuse freed memory if any
    assert poly_index_entry(d, ref) == want
    del junk


def test_flags_stay_live(navmesh):
    q = NavMeshQuery(navmesh)
    view = q.view
    ref = int(view.poly_ref[0])
    old = navmesh.get_poly_flags(ref)
    try:
        navmesh.set_poly_flags(ref, 0x1234)
        assert int(view.poly_flags[0]) == 0x1234
        assert q.view is view  # no rebuild needed for flags
    finally:
        navmesh.set_poly_flags(ref, old)


def test_pack_rejects_mismatched_arrays():
    pool = PoolHandle(8).pool
    bad = pool._replace(cost=pool.cost.astype(np.float64))
    with pytest.raises(TypeError, match="cost"):
        pack_arrays(bad, POOL_SPEC)
    strided = pool._replace(ref=np.zeros(16, np.int64)[::2])
    with pytest.raises(TypeError, match="ref"):
        pack_arrays(strided, POOL_SPEC)


@njit
def _pool_fields(d):
    p = open_pool(d)
    return p.ref.shape[0], p.bucket.shape[0], p.pos.shape[1], p.parent[0], p.bucket[0]


def test_pool_descriptor():
    h = PoolHandle(100)
    assert _pool_fields(h.desc) == (100, 32, 3, -1, -1)
