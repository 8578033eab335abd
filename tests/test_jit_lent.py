"""Lent arrays (navkit._jit.lend, njit(lent=True)): the same values as the arrays they
lend, no reference counting in a lent kernel, one signature whatever the caller passes."""

from __future__ import annotations

import numpy as np

from navkit._jit import LentArray, lend, njit


@njit(lent=True, cache=False)
def _add_into(out, a, pair, k):
    """out[i] += a[i] * k + pair[0][i] - pair[1][i]; returns the sum of out."""
    s = 0.0
    for i in range(out.shape[0]):
        out[i] += a[i] * k + pair[0][i] - pair[1][i]
        s += out[i]
    return s


@njit(cache=False)
def _caller(out, a, b):
    owned = np.ones(out.shape[0])  # an array owned by this kernel
    s1 = _add_into(out, a, (owned, b), 2.0)
    la, lb = lend((a, b))  # the same arrays, lent
    s2 = _add_into(out, la, (owned, lb), 1.0)
    return s1, s2


def test_lent_kernel_values_and_one_signature():
    out = np.zeros(4)
    a = np.arange(4.0)
    b = np.full(4, 0.5)
    s1, s2 = _caller(out, a, b)
    step1 = a * 2.0 + 1.0 - 0.5
    assert s1 == step1.sum()
    np.testing.assert_array_equal(out, step1 + a + 1.0 - 0.5)  # writes reach the owner
    assert s2 == out.sum()
    sigs = _add_into.signatures
    assert len(sigs) == 1, sigs  # owned and lent callers share one compile
    assert all(isinstance(t, LentArray) for t in (sigs[0][0], sigs[0][1]))


def test_lent_kernel_has_no_reference_counting():
    _caller(np.zeros(2), np.zeros(2), np.zeros(2))
    llvm = _add_into.inspect_llvm(_add_into.signatures[0])
    assert "NRT_incref" not in llvm and "NRT_decref" not in llvm


def test_open_view_reads_the_pools():
    from navkit.detour._view import VIEW_SPEC, NavView, open_view, pack_view

    view = NavView(
        *(np.arange(12, dtype=dt).reshape((4, 3) if nd == 2 else (12,)) for _, dt, nd in VIEW_SPEC)
    )

    @njit(cache=False)
    def probe(d):
        nav = open_view(d)
        return (
            nav.verts.shape[0], nav.verts.shape[1], nav.verts[3, 1], nav.poly_verts[2, 2],
            nav.grid[3], nav.verts.strides[0], nav.poly_area[5],
        )  # fmt: skip

    assert probe(pack_view(view)) == (4, 3, 10.0, 8, 3.0, 12, 5)
