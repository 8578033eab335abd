"""Crafted navmesh files must fail to load (FormatError naming the fault), never crash
or hang a query.

Each case edits a real file: a Recast navmesh set (no checksum) or a navkit file whose
SHA-256 is recomputed after the edit. Loading and querying run in a subprocess
(``_crafted_runner.py``) with a timeout, so a segfault or an endless loop is a test
failure rather than a dead pytest. Set ``NAVKIT_CRAFTED_SRC`` to another navkit
``src`` directory to run the same cases against older code (they fail there).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_support import shared_dir

from navkit.detour import recast_format as rf
from navkit.detour.io import MAGIC, navmesh_from_bytes, navmesh_to_bytes
from navkit.detour.navmesh import NavMesh
from navkit.errors import FormatError

RUNNER = Path(__file__).with_name("_crafted_runner.py")
TIMEOUT = float(os.environ.get("NAVKIT_CRAFTED_TIMEOUT", "180"))


def _peer(name: str) -> bytes:
    p = shared_dir() / "peer" / "results" / name
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p.read_bytes()


# -- file surgery ------------------------------------------------------------------------------
def _mset_tiles(data: bytes) -> list[tuple[int, int]]:
    """(offset, size) of each tile blob of a 32-bit-ref MSET file."""
    ntiles = struct.unpack_from("<i", data, 8)[0]
    pos, out = 40, []
    for _ in range(ntiles):
        ref, size = struct.unpack_from("<Ii", data, pos)
        pos += 8
        if not ref or not size:
            break
        out.append((pos, size))
        pos += size
    return out


_SECTION_DTYPES = {
    "verts": np.dtype("<f4"),
    "polys": rf._POLY,
    "links": rf._LINK32,
    "detail": rf._DETAIL,
    "dverts": np.dtype("<f4"),
    "dtris": np.dtype("u1"),
    "bv": rf._BV,
    "offmesh": rf._OFFMESH,
}
_SECTION_COUNTS = {
    "verts": ("vertCount", 3),
    "polys": ("polyCount", 1),
    "links": ("maxLinkCount", 1),
    "detail": ("detailMeshCount", 1),
    "dverts": ("detailVertCount", 3),
    "dtris": ("detailTriCount", 4),
    "bv": ("bvNodeCount", 1),
    "offmesh": ("offMeshConCount", 1),
}


def _blob_sections(buf: bytearray, off: int) -> dict[str, np.ndarray]:
    """Writable structured views of the sections of the tile blob at ``buf[off:]``."""
    h = np.frombuffer(buf, rf._HEADER, count=1, offset=off)[0]
    counts = {n: int(h[n]) for n, _ in _SECTION_COUNTS.values()}
    sizes = rf._section_sizes(counts, rf._LINK32.itemsize)
    offs = np.cumsum([0, *sizes]).tolist()
    out = {"header": np.frombuffer(buf, rf._HEADER, count=1, offset=off)}
    for i, name in enumerate(_SECTION_DTYPES, start=1):
        field, per = _SECTION_COUNTS[name]
        out[name] = np.frombuffer(
            buf, _SECTION_DTYPES[name], count=counts[field] * per, offset=off + offs[i]
        )
    return out


def _navkit_split(data: bytes) -> tuple[dict, bytearray]:
    hlen = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[16 : 16 + hlen]), bytearray(data[16 + hlen : -32])


def _navkit_join(h: dict, payload: bytes) -> bytes:
    hb = json.dumps(h, separators=(",", ":")).encode()
    body = MAGIC + struct.pack("<II", 1, len(hb)) + hb + bytes(payload)
    return body + hashlib.sha256(body).digest()


def _navkit_of(name: str) -> bytes:
    return navmesh_to_bytes(NavMesh.from_recast(_peer(name)))


def _run(files: list[Path], timeout: float = TIMEOUT) -> dict[str, str]:
    """Run the runner on ``files``; {file: its last status line}. Crashes and hangs fail."""
    env = dict(os.environ)
    try:
        r = subprocess.run(
            [sys.executable, str(RUNNER), *map(str, files)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        pytest.fail(f"hang: no answer within {timeout} s; last lines:\n{out[-2000:]}")
    if r.returncode != 0:
        pytest.fail(
            f"crash: exit code {r.returncode}; last lines:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        )
    status: dict[str, str] = {}
    for line in r.stdout.splitlines():
        if line.startswith(("  ",)):
            continue
        name, _, rest = line.partition(" ")
        status[name] = rest
    return status


def _expect_format(tmp_path: Path, name: str, data: bytes, words: str) -> None:
    p = tmp_path / name
    p.write_bytes(data)
    status = _run([p])[str(p)]
    assert status.startswith("FORMAT"), status
    assert words in status, status


# -- Recast files (no checksum) ----------------------------------------------------------------
def _solo() -> tuple[bytearray, dict[str, np.ndarray]]:
    buf = bytearray(_peer("dungeon.solo.navmesh.bin"))
    ((off, _),) = _mset_tiles(buf)
    return buf, _blob_sections(buf, off)


def _internal_edge(polys: np.ndarray) -> tuple[int, int, int]:
    """(poly, edge, neighbour) of the first internal edge."""
    for p in range(len(polys)):
        for j in range(int(polys["vertCount"][p])):
            n = int(polys["neis"][p, j])
            if n and not n & 0x8000:
                return p, j, n - 1
    raise AssertionError("no internal edge")


def test_recast_self_neighbour(tmp_path):
    buf, s = _solo()
    p, j, _ = _internal_edge(s["polys"])
    s["polys"]["neis"][p, j] = p + 1
    _expect_format(
        tmp_path, "self.navmesh.bin", buf, f"poly {p}: neighbour of edge {j} is the polygon itself"
    )


def test_recast_changed_vertex_index(tmp_path):
    buf, s = _solo()
    p, j, _ = _internal_edge(s["polys"])
    nv = int(s["polys"]["vertCount"][p])
    k = (j + 1) % nv
    # Another polygon's vertex: the shared edge no longer matches the neighbour's.
    s["polys"]["verts"][p, k] = (int(s["polys"]["verts"][p, k]) + 7) % (len(s["verts"]) // 3)
    _expect_format(tmp_path, "vertex.navmesh.bin", buf, f"poly {p}")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_recast_non_finite_vertex(tmp_path, value):
    buf, s = _solo()
    s["verts"][4] = value
    _expect_format(tmp_path, "nan.navmesh.bin", buf, "verts[1]")


def test_recast_vertex_index_out_of_range(tmp_path):
    buf, s = _solo()
    s["polys"]["verts"][3, 1] = len(s["verts"]) // 3
    _expect_format(tmp_path, "range.navmesh.bin", buf, "poly 3: vertex index")


def test_recast_tiled_bad_portal_code(tmp_path):
    buf = bytearray(_peer("dungeon.tiled.navmesh.bin"))
    off, _ = _mset_tiles(buf)[3]
    s = _blob_sections(buf, off)
    polys = s["polys"]
    hit = [(p, j) for p in range(len(polys)) for j in range(6) if polys["neis"][p, j] & 0x8000]
    p, j = hit[0]
    polys["neis"][p, j] = 0x8000 | 0x10
    _expect_format(tmp_path, "portal.navmesh.bin", buf, "tile 3: poly")


def test_recast_tiled_detail_tri_out_of_range(tmp_path):
    buf = bytearray(_peer("dungeon.tiled.navmesh.bin"))
    off, _ = _mset_tiles(buf)[2]
    s = _blob_sections(buf, off)
    s["dtris"][1] = 200
    _expect_format(tmp_path, "dtri.navmesh.bin", buf, "tile 2: poly")


# -- navkit files (checksum recomputed) --------------------------------------------------------
def _navkit_blob(data: bytes, k: int = 0) -> tuple[dict, bytearray, dict[str, np.ndarray]]:
    h, payload = _navkit_split(data)
    e = h["tiles"][k]
    return h, payload, _blob_sections(payload, int(e["offset"]))


def test_navkit_link_edge_out_of_range(tmp_path):
    h, payload, s = _navkit_blob(_navkit_of("dungeon.solo.navmesh.bin"))
    used = s["polys"]["firstLink"]
    s["links"]["edge"][used[used != 0xFFFFFFFF]] = 255
    _expect_format(tmp_path, "edge.navkit", _navkit_join(h, payload), "on edge 255")


def test_navkit_link_target_overwritten(tmp_path):
    data = _navkit_of("dungeon.solo.navmesh.bin")
    nm = navmesh_from_bytes(data)
    h, payload, s = _navkit_blob(data)
    bad = nm.encode_ref(nm.decode_ref(nm.tile_ref(0))[0], 0, (1 << nm.poly_bits) - 1)
    used = s["polys"]["firstLink"]
    s["links"]["ref"][used[used != 0xFFFFFFFF]] = bad
    _expect_format(tmp_path, "target.navkit", _navkit_join(h, payload), "names no live polygon")


def test_navkit_link_cycle(tmp_path):
    h, payload, s = _navkit_blob(_navkit_of("dungeon.solo.navmesh.bin"))
    first = int(s["polys"]["firstLink"][0])
    s["links"]["next"][first] = first
    _expect_format(tmp_path, "cycle.navkit", _navkit_join(h, payload), "cycle")


def test_navkit_link_onto_a_wall(tmp_path):
    # A valid target, but on an edge with no neighbour: a raycast would cross a wall.
    data = _navkit_of("dungeon.solo.navmesh.bin")
    h, payload, s = _navkit_blob(data)
    polys, links = s["polys"], s["links"]
    for p in range(len(polys)):
        walls = [j for j in range(int(polys["vertCount"][p])) if polys["neis"][p, j] == 0]
        if walls and polys["firstLink"][p] != 0xFFFFFFFF:
            links["edge"][polys["firstLink"][p]] = walls[0]
            break
    _expect_format(tmp_path, "wall.navkit", _navkit_join(h, payload), "wall edge")


def test_navkit_internal_edge_without_link(tmp_path):
    # A polygon's link list cut short (fuzz navkit_file 7/606): move_along_surface crosses
    # internal edges by their neighbour codes, path() by links; they would disagree.
    data = _navkit_of("dungeon.solo.navmesh.bin")
    h, payload, s = _navkit_blob(data)
    polys = s["polys"]
    p = next(
        i
        for i in range(len(polys))
        if polys["firstLink"][i] != 0xFFFFFFFF
        and any(0 < polys["neis"][i, j] < 0x8000 for j in range(int(polys["vertCount"][i])))
    )
    polys["firstLink"][p] = 0xFFFFFFFF
    _expect_format(tmp_path, "unlinked.navkit", _navkit_join(h, payload), "has no link")


def test_navkit_tile_chain_cycle(tmp_path):
    data = _navkit_of("dungeon.tiled.navmesh.bin")
    h, payload = _navkit_split(data)
    s = next(int(v) for v in h["lut"] if v >= 0)
    h["tile_next"][s] = s
    _expect_format(tmp_path, "chain.navkit", _navkit_join(h, payload), "cycle")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1e39])
def test_navkit_params_beyond_float32(tmp_path, value):
    h, payload = _navkit_split(_navkit_of("dungeon.tiled.navmesh.bin"))
    h["params"]["orig"][0] = value  # json writes NaN / Infinity, and reads them back
    data = _navkit_join(h, payload)
    _expect_format(tmp_path, "orig.navkit", data, "orig")


def test_navkit_tile_width_beyond_float32(tmp_path):
    h, payload = _navkit_split(_navkit_of("dungeon.tiled.navmesh.bin"))
    h["params"]["tile_width"] = 1e39
    _expect_format(tmp_path, "width.navkit", _navkit_join(h, payload), "tile_width")


def test_navkit_nan_vertex(tmp_path):
    h, payload, s = _navkit_blob(_navkit_of("dungeon.tiled.navmesh.bin"), 5)
    s["verts"][7] = float("nan")
    slot = h["tiles"][5]["slot"]
    _expect_format(tmp_path, "nan.navkit", _navkit_join(h, payload), f"tile {slot}: verts[2]")


@pytest.mark.parametrize(
    "path",
    [
        ("salts", 0),
        ("tile_next", 0),
        ("lut", 0),
        ("params", "max_tiles"),
        ("params", "max_polys"),
        ("tiles", 0, "offset"),
        ("tiles", 0, "link_free"),
        ("free_slots", 0),
    ],
)
@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**64 + 5, 10**30])
def test_navkit_huge_json_ints(path, value):
    data = _navkit_of("dungeon.tiled.navmesh.bin")
    h, payload = _navkit_split(data)
    node = h
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    with pytest.raises(FormatError):
        navmesh_from_bytes(_navkit_join(h, payload))


# -- property: any single-field edit loads as FormatError or answers every query -----------------
_FIELDS = [
    ("verts", None),
    ("polys", "firstLink"),
    ("polys", "verts"),
    ("polys", "neis"),
    ("polys", "flags"),
    ("polys", "vertCount"),
    ("polys", "areaAndtype"),
    ("links", "ref"),
    ("links", "next"),
    ("links", "edge"),
    ("links", "side"),
    ("links", "bmin"),
    ("links", "bmax"),
    ("detail", "vertBase"),
    ("detail", "triBase"),
    ("detail", "vertCount"),
    ("detail", "triCount"),
    ("dverts", None),
    ("dtris", None),
    ("bv", "bmin"),
    ("bv", "bmax"),
    ("bv", "i"),
    ("offmesh", "pos"),
    ("offmesh", "rad"),
    ("offmesh", "poly"),
    ("offmesh", "side"),
]
_VALUES = st.one_of(
    st.sampled_from(["zero", "one", "max", "self", "plus1", "minus1", "nan", "inf", "huge", "neg"]),
    st.integers(0, 1 << 16),
)


def _apply(s: dict[str, np.ndarray], sec: str, field: str | None, pick: int, how) -> bool:
    arr = s[sec] if field is None else s[sec][field]
    flat = arr.reshape(-1)
    if flat.size == 0:
        return False
    i = pick % flat.size
    old = flat[i]
    kind = flat.dtype.kind
    if isinstance(how, int):
        v = how
    else:
        row = i // max(1, flat.size // max(1, len(s[sec])))
        v = {
            "zero": 0,
            "one": 1,
            "max": -1,
            "self": row + 1 if (sec, field) == ("polys", "neis") else row,
            "plus1": int(old) + 1 if kind != "f" else float(old) + 1.0,
            "minus1": int(old) - 1 if kind != "f" else float(old) - 1.0,
            "nan": float("nan"),
            "inf": float("inf"),
            "huge": 1e30,
            "neg": -5,
        }[how]
    if kind == "f":
        flat[i] = np.float32(v)
    else:
        if isinstance(v, float):
            v = 0 if v != v else int(min(max(v, -1e18), 1e18))
        flat[i] = np.array(v).astype(np.int64).astype(flat.dtype)
    return True


_EDIT = st.tuples(
    st.sampled_from(
        ["recast-solo", "recast-tiled", "recast-offmesh", "navkit-solo", "navkit-tiled"]
    ),
    st.integers(0, 63),
    st.sampled_from(_FIELDS),
    st.integers(0, 1 << 20),
    _VALUES,
)

_BASES: dict[str, bytes] = {}


def _base(kind: str) -> bytes:
    if kind not in _BASES:
        name = {
            "solo": "dungeon.solo.navmesh.bin",
            "tiled": "dungeon.tiled.navmesh.bin",
            "offmesh": "dungeon.offmesh.tiled.navmesh.bin",
        }[kind.split("-")[1]]
        _BASES[kind] = _peer(name) if kind.startswith("recast") else _navkit_of(name)
    return _BASES[kind]


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """Run every query once on valid files (compiles the kernels for the subprocesses)."""
    d = tmp_path_factory.mktemp("warm")
    files = []
    for kind in ("recast-solo", "navkit-tiled"):
        p = d / (kind + (".navmesh.bin" if kind.startswith("recast") else ".navkit"))
        p.write_bytes(_base(kind))
        files.append(p)
    status = _run(files, timeout=max(TIMEOUT, 1800))
    assert all(v == "OK" for v in status.values()), status


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=st.lists(_EDIT, min_size=25, max_size=25))
def test_single_field_edits_fail_cleanly(edits, warm, tmp_path_factory):
    d = tmp_path_factory.mktemp("edits")
    files = []
    for n, (kind, tile, (sec, field), pick, how) in enumerate(edits):
        data = _base(kind)
        if kind.startswith("recast"):
            buf = bytearray(data)
            tiles = _mset_tiles(buf)
            off = tiles[tile % len(tiles)][0]
            if not _apply(_blob_sections(buf, off), sec, field, pick, how):
                continue
            out, ext = bytes(buf), ".navmesh.bin"
        else:
            h, payload = _navkit_split(data)
            e = h["tiles"][tile % len(h["tiles"])]
            if not _apply(_blob_sections(payload, int(e["offset"])), sec, field, pick, how):
                continue
            out, ext = _navkit_join(h, payload), ".navkit"
        p = d / f"e{n}_{kind}_{sec}_{field}{ext}"
        p.write_bytes(out)
        files.append(p)
    status = _run(files)
    bad = {k: v for k, v in status.items() if not (v == "OK" or v.startswith("FORMAT"))}
    assert not bad, bad
    assert len(status) == len(files), status


# -- unbounded work ----------------------------------------------------------------------------
def test_huge_half_extents_visit_only_existing_tiles():
    from navkit.detour._nearest import _box_cells
    from navkit.detour.query import NavMeshQuery

    nm = NavMesh.from_recast(_peer("dungeon.tiled.navmesh.bin"))
    q = NavMeshQuery(nm)
    a = nm.arrays()
    lo, hi = a.verts.min(0), a.verts.max(0)
    c = ((lo + hi) / 2).astype(np.float32)
    covering = ((hi - lo) / 2 + 1).astype(np.float32)  # a box holding the whole mesh
    want = q.find_nearest_poly(c, covering)
    want_q = set(q.query_polygons(c, covering, max_polys=4096)[0].tolist())
    assert want.ref != 0 and len(want_q) == len(nm.poly_refs())
    occupied = {(int(a.tile_x[s]), int(a.tile_y[s])) for s in nm.tile_slots()}
    for h in (1e6, 1e8, 1e30):
        half = np.full(3, h, np.float32)
        got = q.find_nearest_poly(c, half)
        assert got.ref == want.ref and got.point.tolist() == want.point.tolist()
        assert set(q.query_polygons(c, half, max_polys=4096)[0].tolist()) == want_q
        cells = _box_cells(q.view, c - half, c + half)
        # The kernels walk these cells: only the ones holding a tile, in row order.
        assert {tuple(r) for r in cells.tolist()} == occupied
        assert len(cells) == len(occupied)
        assert cells[:, ::-1].tolist() == sorted(cells[:, ::-1].tolist())


def test_small_boxes_keep_detour_cell_order():
    from navkit.detour._nearest import _box_cells
    from navkit.detour.query import NavMeshQuery

    nm = NavMesh.from_recast(_peer("dungeon.tiled.navmesh.bin"))
    q = NavMeshQuery(nm)
    o, w = nm.params.orig, nm.params.tile_width
    c = np.array([o[0] + 2.5 * w, 0.0, o[2] + 3.5 * w], np.float32)
    half = np.array([w, 1.0, w], np.float32)  # 3 x 3 cells, some empty
    cells = _box_cells(q.view, c - half, c + half)
    assert cells.tolist() == [[x, y] for y in (2, 3, 4) for x in (1, 2, 3)]


def test_tiled_bake_with_too_many_tiles_fails_before_building(monkeypatch):
    from navkit import pipeline as build
    from navkit.errors import BuildError
    from navkit.geometry.trimesh import TriMesh
    from navkit.recast.config import BakeConfig

    def no_build(*args, **kwargs):
        raise AssertionError("a tile was built before the tile count was checked")

    monkeypatch.setattr(build, "_build_tile", no_build)
    mesh = TriMesh.from_arrays(
        [[0, 0, 0], [0, 0, 1000], [1000, 0, 1000], [1000, 0, 0]], [[0, 1, 2], [0, 2, 3]]
    )
    with pytest.raises(BuildError, match=r"tile_size=16 .* \(16384\)"):
        build.bake(mesh, BakeConfig(tile_size=16))


# -- valid state still loads; add_tile checks the same things ----------------------------------
def test_navkit_files_with_runtime_changes_still_load():
    nm = NavMesh.from_recast(_peer("dungeon.offmesh.tiled.navmesh.bin"))
    assert navmesh_from_bytes(navmesh_to_bytes(nm)).stats() == nm.stats()
    a = nm.arrays()

    def centre(r):
        gp = nm.poly_index(r)
        return a.verts[a.poly_verts[gp, : a.poly_vert_count[gp]]].mean(0)

    refs = nm.poly_refs()
    con = nm.add_off_mesh_connection(centre(refs[5]), centre(refs[100]), 1.0)
    back = navmesh_from_bytes(navmesh_to_bytes(nm))
    assert back.links_of(con) == nm.links_of(con)
    nm.remove_off_mesh_connection(con)
    nm.remove_tile(nm.tile_ref(nm.tile_slots()[3]))
    back = navmesh_from_bytes(navmesh_to_bytes(nm))
    assert back.stats() == nm.stats()


def _tile_of_solo():
    nm = NavMesh.from_recast(_peer("dungeon.solo.navmesh.bin"))
    return nm, nm.tile_data(0)


def test_add_tile_rejects_self_neighbour():
    from navkit.errors import InputError

    nm, td = _tile_of_solo()
    neis = td.poly_neis.copy()
    p, j = next(
        (p, j)
        for p in range(td.poly_count)
        for j in range(td.poly_vert_count[p])
        if neis[p, j] and not neis[p, j] & 0x8000
    )
    neis[p, j] = p + 1
    empty = NavMesh(nm.params)
    with pytest.raises(InputError, match=f"poly {p}: neighbour of edge {j} is the polygon itself"):
        empty.add_tile(td._replace(poly_neis=neis))


@pytest.mark.parametrize(
    "field,value,words",
    [
        ("poly_area", 200, "poly 0: area 200 above 63"),
        ("poly_verts", -1, "values outside uint16"),
        ("verts", np.nan, "verts[0]"),
        ("detail_tri_count", 0, "no detail triangles"),
        ("bv_i", 10_000, "BV node 0: leaf polygon"),
    ],
)
def test_add_tile_rejects_bad_fields(field, value, words):
    from navkit.errors import InputError

    nm, td = _tile_of_solo()
    arr = np.asarray(getattr(td, field))
    arr = arr.astype(np.int64 if arr.dtype.kind in "iu" else arr.dtype)
    arr.reshape(-1)[0] = value
    empty = NavMesh(nm.params)
    with pytest.raises(InputError, match=words.replace("[", r"\[").replace("]", r"\]")):
        empty.add_tile(td._replace(**{field: arr}))
