"""OBJ text, TriMesh arrays and BakeConfig values, each against a small reference."""

from __future__ import annotations

import math
import re

import numpy as np

from .common import F32_MAX, HOSTILE_FLOATS, HOSTILE_INTS, expect, pick, roundtrip_equal

MAX_COORD = 1.0e7
_NUM = re.compile(
    r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|nan|inf|infinity)", re.IGNORECASE | re.ASCII
)  # ASCII digits only, as C's strtod reads them
_INT = re.compile(r"[+-]?\d+", re.ASCII)


class _Reject(Exception):
    pass


def reference_obj(text: str) -> tuple[np.ndarray, np.ndarray]:
    """A strict OBJ reader: whitespace-separated tokens, ASCII numbers only."""
    verts: list[tuple[float, float, float]] = []
    tris: list[tuple[int, int, int]] = []
    records = 0
    for line in text.splitlines():
        tok = line.split()
        if not tok or tok[0].startswith("#"):
            continue
        if tok[0] == "v":
            records += 1
            if len(tok) < 4 or not all(_NUM.fullmatch(x) for x in tok[1:4]):
                raise _Reject(f"bad vertex {line!r}")
            xyz = tuple(float(x) for x in tok[1:4])
            if not all(math.isfinite(c) and abs(c) <= MAX_COORD for c in xyz):
                raise _Reject(f"non-finite or huge vertex {line!r}")
            verts.append(xyz)  # type: ignore[arg-type]
        elif tok[0] == "f":
            records += 1
            idx = []
            for t in tok[1:]:
                head = t.split("/", 1)[0]
                if not _INT.fullmatch(head):
                    raise _Reject(f"bad face index {t!r}")
                i = int(head)
                if i == 0:
                    raise _Reject("face index 0")
                i = i + len(verts) if i < 0 else i - 1
                if not 0 <= i < len(verts):
                    raise _Reject(f"face index {head} out of range")
                idx.append(i)
            if len(idx) < 3:
                raise _Reject("face with < 3 vertices")
            for k in range(2, len(idx)):
                tris.append((idx[0], idx[k - 1], idx[k]))
    if records == 0:
        raise _Reject("no records")
    return np.asarray(verts, np.float64).reshape(-1, 3), np.asarray(tris, np.int64).reshape(-1, 3)


def _num_text(x: float, rng) -> str:
    style = int(rng.integers(5))
    if style == 0 and float(x).is_integer():
        return str(int(x))
    if style == 1:
        return f"{x:.6f}"
    if style == 2:
        return f"{x:e}"
    if style == 3:
        return repr(float(x))
    return f"{x:g}"


_BAD_NUMS = ["nan", "inf", "-inf", "1e400", "1e8", "-1e8", "1e-400", "", "+", "-", "1.2.3", "0x10",
             "\u0661\u0662", "1e", "e5", ".", "-.5", "1_000", "1__0", "١", "10000000", "10000001",
             "3.4e38", "1e7", "+1.5E+1", "1,5", "NaN", "Infinity", "1e-7"]  # fmt: skip
_BAD_IDX = ["0", "a", "1/", "/1", "+1", "1.0", "-0", "1_0", "99", "-99", "2147483648", "٣"]


def obj_text_case(rng: np.random.Generator, index: int) -> None:
    from navkit.errors import NavkitError
    from navkit.geometry.obj import parse_obj

    nv = int(rng.integers(0, 10))
    verts = rng.uniform(-50, 50, (nv, 3)).round(int(pick(rng, [0, 2, 6])))
    lines: list[list[str]] = []
    for v in verts:
        lines.append(
            ["v", *[_num_text(c, rng) for c in v]] + (["1.0"] if rng.random() < 0.1 else [])
        )
    for _ in range(int(rng.integers(0, 6)) if nv else 0):
        k = int(rng.integers(3, 6))
        toks = []
        for i in rng.integers(1, nv + 1, k):
            i = int(i) if rng.random() < 0.8 else int(i) - nv - 1  # relative
            toks.append(pick(rng, [f"{i}", f"{i}/1", f"{i}//1", f"{i}/1/1"]))
        lines.insert(int(rng.integers(len(lines) + 1)), ["f", *toks])
    for _ in range(int(rng.integers(0, 3))):
        lines.insert(int(rng.integers(len(lines) + 1)),
                     pick(rng, [["#", "c"], ["vt", "0", "0"], ["vn", "0", "1", "0"], ["o", "x"],
                                ["g", "a"], ["s", "off"], ["usemtl", "m"], [], ["l", "1", "2"]]))  # fmt: skip
    for _ in range(int(rng.integers(0, 4))):
        if not lines:
            break
        ln = pick(rng, lines)
        kind = int(rng.integers(6))
        if kind == 0 and ln and ln[0] == "v" and len(ln) > 1:
            ln[int(rng.integers(1, len(ln)))] = pick(rng, _BAD_NUMS)
        elif kind == 1 and ln and ln[0] == "f" and len(ln) > 1:
            ln[int(rng.integers(1, len(ln)))] = pick(rng, _BAD_IDX)
        elif kind == 2 and len(ln) > 1:  # underscores inside a number
            j = int(rng.integers(1, len(ln)))
            s = ln[j]
            if len(s) > 1:
                p = int(rng.integers(1, len(s)))
                ln[j] = s[:p] + "_" + s[p:]
        elif kind == 3 and ln:
            del ln[int(rng.integers(len(ln)))]
        elif kind == 4 and ln:
            ln[0] = pick(rng, ["V", "F", "v1", "f,", "vv"])
        elif kind == 5:
            lines.remove(ln)
    seps = [" ", "\t", "  ", " \t", "\t "]
    out = []
    for ln in lines:
        if rng.random() < 0.3:
            sep_first = pick(rng, seps)
            body = pick(rng, seps).join(ln[1:])
            s = (ln[0] + sep_first + body) if ln else ""
        else:
            s = " ".join(ln)
        if rng.random() < 0.1:
            s = pick(rng, [" ", "\t", "  "]) + s
        out.append(s)
    text = pick(rng, ["\n", "\r\n", "\r"]).join(out)
    if rng.random() < 0.15 and text:
        text = text[: int(rng.integers(len(text)))]
    try:
        rv, rt = reference_obj(text)
        ref_ok, why = True, ""
    except _Reject as exc:
        ref_ok, why = False, str(exc)
    try:
        m = parse_obj(text)
    except NavkitError as exc:
        expect(not ref_ok, f"parse_obj refused a valid OBJ ({exc}): {text!r}")
        return
    expect(ref_ok, f"parse_obj accepted an invalid OBJ ({why}): {text!r}")
    expect(m.vertices.shape == rv.shape and np.array_equal(m.vertices, rv.astype(np.float32)),
           f"parse_obj vertices differ from the reference: {text!r}")  # fmt: skip
    expect(m.triangles.shape == rt.shape and np.array_equal(m.triangles, rt),
           f"parse_obj triangles differ from the reference: {text!r}")  # fmt: skip


# -- arrays --------------------------------------------------------------------------------
def _ref_arrays(v, t, a):
    """(vertices float32, triangles int32, areas uint8|None) or _Reject."""
    try:
        va = np.asarray(v)
    except (TypeError, ValueError) as exc:
        raise _Reject(f"vertices: {exc}") from None
    if va.dtype.kind not in "iuf":
        raise _Reject(f"vertices dtype {va.dtype}")
    if va.size == 0:
        va = va.reshape(0, 3)
    if va.ndim != 2 or va.shape[1] != 3:
        raise _Reject("vertices shape")
    v64 = va.astype(np.float64)
    if not np.all(np.isfinite(v64)) or (v64.size and np.abs(v64).max() > MAX_COORD):
        raise _Reject("vertex values")
    try:
        ta = np.asarray(t)
    except (TypeError, ValueError) as exc:
        raise _Reject(f"triangles: {exc}") from None
    if ta.size == 0:
        ta = ta.reshape(0, 3)
    if ta.ndim != 2 or ta.shape[1] != 3:
        raise _Reject("triangles shape")
    if ta.dtype.kind == "f":
        if not np.all(np.isfinite(ta)) or np.any(ta != np.round(ta)):
            raise _Reject("triangles not integral")
    elif ta.dtype.kind not in "iu":
        raise _Reject(f"triangles dtype {ta.dtype}")
    n = v64.shape[0]
    if ta.size and (ta.min() < 0 or ta.max() >= n):
        raise _Reject("triangle index range")
    aa = None
    if a is not None:
        try:
            aa = np.asarray(a)
        except (TypeError, ValueError) as exc:
            raise _Reject(f"areas: {exc}") from None
        if aa.shape != (ta.shape[0],):
            raise _Reject("areas shape")
        if aa.dtype.kind == "f":
            if not np.all(np.isfinite(aa)) or np.any(aa != np.round(aa)):
                raise _Reject("areas not integral")
        elif aa.dtype.kind not in "iu":
            raise _Reject(f"areas dtype {aa.dtype}")
        if aa.size and (aa.min() < 0 or aa.max() > 63):
            raise _Reject("areas range")
        aa = aa.astype(np.uint8)
    return v64.astype(np.float32), ta.astype(np.int32), aa


def arrays_case(rng: np.random.Generator, index: int) -> None:
    import navkit
    from navkit.errors import NavkitError

    n = int(rng.integers(0, 9))
    m = int(rng.integers(0, 9)) if n else int(rng.integers(0, 2))
    scale = float(pick(rng, [1, 1, 10, 1e3, 1e5, 1e7]))
    v: object = rng.uniform(-1, 1, (n, 3)) * scale
    v[:, 1] *= 0.1  # type: ignore[index]
    t: object = rng.integers(0, max(n, 1), (m, 3))
    a: object = rng.integers(0, 64, m) if rng.random() < 0.3 else None
    for _ in range(int(rng.integers(0, 3))):
        try:  # (a mutation of an already mutated value may not apply: skip it)
            what = int(rng.integers(3))
            r = rng.random()
            if what == 0:
                va = np.asarray(v)
                if r < 0.35 and va.size:
                    va = va.astype(np.float64).copy()
                    va.flat[int(rng.integers(va.size))] = pick(
                        rng, HOSTILE_FLOATS + [1e7, -1e7, 1e7 + 1]
                    )
                elif r < 0.6:
                    va = va.astype(
                        pick(rng, [np.float16, np.float32, np.int32, np.int8, np.uint8, complex])
                    )
                    if va.dtype.kind == "c" and va.size:
                        va = va + 1j
                elif r < 0.8:
                    va = pick(rng, [va.reshape(-1), va[:, :2], va[..., None], va.T, np.zeros(()), None,
                                    [[1, 2, 3], [1, 2]], np.array([["a", "b", "c"]]),
                                    np.array([[None, 1, 2]], dtype=object)])  # fmt: skip
                else:
                    va = va.tolist()
                v = va
            elif what == 1:
                ta = np.asarray(t)
                if r < 0.4 and ta.size:
                    ta = ta.astype(np.int64).copy()
                    ta.flat[int(rng.integers(ta.size))] = pick(rng, [-1, n, n + 1, 2**31, 2**32, -(2**31),
                                                                     2**32 + 1, 2**63 - 1])  # fmt: skip
                elif r < 0.7:
                    dt = pick(rng, [np.int8, np.int16, np.uint16, np.uint32, np.uint64, np.float64,
                                    np.float32, np.bool_])  # fmt: skip
                    ta = ta.astype(dt)
                    if dt in (np.float64, np.float32) and ta.size and rng.random() < 0.5:
                        ta.flat[0] = pick(rng, [0.5, np.nan, np.inf, 1.0000001])
                else:
                    ta = pick(rng, [ta.reshape(-1), ta[:, :2], None, ta.tolist(), "x",
                                    np.array([[0, 1, 2]], dtype=object)])  # fmt: skip
                t = ta
            else:
                mm = np.asarray(t).shape[0] if np.asarray(t).ndim >= 1 else 0
                a = pick(rng, [np.full(mm, pick(rng, [-1, 64, 255, 256, 63, 0])),
                               np.full(mm, pick(rng, [1.5, np.nan, 1.0, np.inf])),
                               np.zeros(mm + 1, np.uint8), np.zeros(mm, np.int64),
                               np.array(["a"] * mm), None, np.zeros(mm, dtype=object),
                               np.full(mm, 2**40, np.int64)])  # fmt: skip
        except (TypeError, ValueError, IndexError):
            continue
    try:
        ref = _ref_arrays(v, t, a)
        why = ""
    except _Reject as exc:
        ref, why = None, str(exc)
    try:
        mesh = navkit.TriMesh.from_arrays(v, t, a)  # type: ignore[arg-type]
    except NavkitError as exc:
        expect(ref is None, f"from_arrays refused valid arrays: {exc}")
        return
    expect(ref is not None, f"from_arrays accepted invalid arrays ({why})")
    rv, rt, ra = ref  # type: ignore[misc]
    expect(np.array_equal(mesh.vertices, rv), "from_arrays vertices differ")
    expect(np.array_equal(mesh.triangles, rt), "from_arrays triangles differ")
    expect((ra is None and mesh.areas is None) or np.array_equal(mesh.areas, ra),  # type: ignore[arg-type]
           "from_arrays areas differ")  # fmt: skip
    if rng.random() < 0.3 and mesh.n_triangles:
        from .c_query import exercise

        nm = navkit.bake(mesh, navkit.BakeConfig(tile_size=int(pick(rng, [0, 0, 32]))))
        exercise(nm, rng, 2)


# -- configs -------------------------------------------------------------------------------
_FIELDS = {
    "cell_size": [1e-7, 1e-4, 0.01, 0.3, 5.0, 1e4, 1e30],
    "cell_height": [1e-7, 1e-4, 0.01, 0.2, 5.0, 1e30],
    "agent_height": [0.6, 2.0, 50.9, 51.0, 1e30],
    "agent_radius": [0.0, 0.6, 5.0, 1e6, 1e30],
    "agent_max_climb": [0.0, 0.9, 50.9, 51.2, 1e30],
    "agent_max_slope": [0.0, 45.0, 89.999, 90.0, -1e-9],
    "region_min_size": [0.0, 8, 1e5, 1e20, 46341.0],
    "region_merge_size": [0.0, 20, 1e5, 1e20, 46341.0],
    "edge_max_len": [0.0, 12.0, 1e9, 1e30],
    "edge_max_error": [0.0, 1.3, 1e-30, 1e30],
    "verts_per_poly": [3, 6, 7, 2, 4.0, 4.5],
    "detail_sample_dist": [0.0, 0.89, 0.9, 6.0, 1e30],
    "detail_sample_max_error": [0.0, 1.0, 1e30],
    "partition": ["watershed", "monotone", "layers", "Watershed", None, 1],
    "tile_size": [0, 16, 15, 4096, 4097, 32.0, 2**31],
    "filter_ledge_spans": [True, False, 1, 0, None, "yes", np.bool_(True)],
}


def _cfg_value(rng, name):
    r = rng.random()
    if r < 0.6:
        return pick(rng, _FIELDS[name])
    if r < 0.75 and name not in ("partition", "filter_ledge_spans"):
        return pick(rng, [np.float32, np.float64, np.int32, np.int64])(
            min(float(pick(rng, _FIELDS[name])), 1e9) if name != "verts_per_poly" else 5
        )
    return pick(rng, HOSTILE_FLOATS[:8] + HOSTILE_INTS[:6] + [True, False, None, "1", [1], math.nan,
                                                             math.inf, F32_MAX, 2**200])  # fmt: skip


def _cfg_ref_ok(kw: dict) -> bool:
    """Whether the values are of an acceptable type (numbers for numeric fields, not bools)."""
    for k, v in kw.items():
        if k == "partition":
            if v not in ("watershed", "monotone", "layers") or not isinstance(v, str):
                return False
        elif k.startswith("filter_"):
            if not isinstance(v, (bool, np.bool_)):
                return False
        elif isinstance(v, (bool, np.bool_)) or not isinstance(
            v, (int, float, np.integer, np.floating)
        ):
            return False
    return True


@__import__("functools").cache
def _tiny_mesh():
    import navkit
    from navkit.geometry.sample import box

    v1, t1 = box(0, -0.2, 0, 6, 0, 6)
    v2, t2 = box(2, 0, 2, 3, 1.5, 3)
    return navkit.TriMesh.from_arrays(np.vstack([v1, v2]), np.vstack([t1, t2 + len(v1)]))


def configs_case(rng: np.random.Generator, index: int) -> None:
    import json

    import navkit

    kw = {}
    for _ in range(int(rng.integers(1, 4))):
        name = pick(rng, sorted(_FIELDS))
        kw[name] = _cfg_value(rng, name)
    if rng.random() < 0.05:
        kw[pick(rng, ["cellsize", "agent_radius "])] = 1.0
        navkit.BakeConfig.from_dict(kw)  # unknown keys: ConfigError
    cfg = navkit.BakeConfig(**kw)  # ConfigError ends the case
    expect(_cfg_ref_ok(kw), f"BakeConfig accepted values of the wrong type: {kw!r}")
    vx = cfg.voxel()
    expect(vx.walkable_height <= 255 and vx.walkable_climb <= 255, f"voxel() out of range: {vx}")
    d = cfg.to_dict()
    expect(navkit.BakeConfig.from_dict(d).to_dict() == d, "BakeConfig dict round trip differs")
    json.dumps(d)
    if rng.random() < 0.5:
        nm = navkit.bake(_tiny_mesh(), cfg)
        roundtrip_equal(nm, cfg)
