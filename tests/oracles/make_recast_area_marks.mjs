// Recast's own results for the area-marking functions navkit reimplements:
// rcMarkWalkableTriangles / rcClearUnwalkableTriangles at several slopes (digests), and
// (rcMarkBoxArea, rcMarkCylinderArea, rcMarkConvexPolyArea, then one-cell boxes, then
// rcMedianFilterWalkableArea), applied in that order to the eroded compact heightfield of each mesh.
//
//   node tests/oracles/make_recast_area_marks.mjs <peer node_modules dir> <stages dir> > tests/oracles/recast_area_marks.json
//
// <stages dir> holds the peer's --dump-stages folders (<mesh>.watershed/). The input
// geometry and rcConfig come from there; the pipeline up to erosion is RecastDemo's.
// Output per mesh: the volumes used, then for each step the spans whose area it
// changed, as runs [first span index, count, new area id].
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const [nodeModules, stagesDir] = process.argv.slice(2);
const core = await import(path.join(nodeModules, '@recast-navigation/core/dist/index.mjs'));
await core.init();

const out = { format: 'navkit-recast-area-marks/1', meshes: {} };
for (const mesh of ['dungeon', 'nav_test', 'undulating']) {
  const dir = path.join(stagesDir, `${mesh}.watershed`);
  const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json')));
  const cfg = man.rcConfig;
  const rd = (name, T) => { const b = fs.readFileSync(path.join(dir, name)); return new T(b.buffer, b.byteOffset, b.byteLength / T.BYTES_PER_ELEMENT); };
  const pos = rd('input.verts.bin', Float32Array), idx = rd('input.tris.bin', Int32Array);
  const nv = pos.length / 3, nt = idx.length / 3;
  const ctx = new core.RecastBuildContext();
  const verts = new core.VerticesArray(); verts.copy(pos);
  const tris = new core.TrianglesArray(); tris.copy(idx);
  // rcMarkWalkableTriangles (from zeros) and rcClearUnwalkableTriangles (from 7s) at
  // several slopes: SHA-1 of the (ntris,) uint8 areas, and the count of non-zero ones.
  const triDigest = (arr) => {
    const a = new Uint8Array(nt);
    for (let i = 0; i < nt; i++) a[i] = arr.get(i);
    return { sha1: crypto.createHash('sha1').update(a).digest('hex'), nonzero: a.reduce((k, v) => k + (v !== 0), 0) };
  };
  const triangles = [];
  for (const angle of [30, 45, 60, 89.5]) {
    const m = new core.TriangleAreasArray(); m.resize(nt);
    core.markWalkableTriangles(ctx, angle, verts, nv, tris, nt, m);
    const c = new core.TriangleAreasArray(); c.copy(new Array(nt).fill(7));
    core.clearUnwalkableTriangles(ctx, angle, verts, nv, tris, nt, c);
    triangles.push({ angle, mark: triDigest(m), clear: triDigest(c) });
    m.destroy(); c.destroy();
  }
  const hf = core.allocHeightfield();
  core.createHeightfield(ctx, hf, man.grid.width, man.grid.height, man.bmin, man.bmax, cfg.cs, cfg.ch);
  const areas = new core.TriangleAreasArray(); areas.resize(nt);
  core.markWalkableTriangles(ctx, cfg.walkableSlopeAngle, verts, nv, tris, nt, areas);
  core.rasterizeTriangles(ctx, verts, nv, tris, areas, nt, hf, cfg.walkableClimb);
  core.filterLowHangingWalkableObstacles(ctx, cfg.walkableClimb, hf);
  core.filterLedgeSpans(ctx, cfg.walkableHeight, cfg.walkableClimb, hf);
  core.filterWalkableLowHeightSpans(ctx, cfg.walkableHeight, hf);
  const chf = core.allocCompactHeightfield();
  core.buildCompactHeightfield(ctx, cfg.walkableHeight, cfg.walkableClimb, hf, chf);
  core.erodeWalkableArea(ctx, cfg.walkableRadius, chf);
  const n = chf.spanCount();
  const snap = () => { const a = new Uint8Array(n); for (let i = 0; i < n; i++) a[i] = chf.areas(i); return a; };

  // Volumes placed relative to the mesh bounds (float32 values, as Recast sees them).
  const f = Math.fround;
  const lo = man.bmin.map(f), hi = man.bmax.map(f);
  const ext = [0, 1, 2].map((k) => hi[k] - lo[k]);
  const at = (u, v) => [f(lo[0] + u * ext[0]), f(lo[2] + v * ext[2])];
  const [bx0, bz0] = at(0.25, 0.3), [bx1, bz1] = at(0.55, 0.6);
  const box = { bmin: [bx0, lo[1], bz0], bmax: [bx1, f(lo[1] + 0.5 * ext[1]), bz1], area: 5 };
  const [cx, cz] = at(0.5, 0.5);
  const cyl = { pos: [cx, lo[1], cz], radius: f(0.15 * Math.min(ext[0], ext[2])), height: f(ext[1]), area: 7 };
  const [px, pz] = at(0.7, 0.35), r = 0.12 * Math.min(ext[0], ext[2]);
  const poly = { verts: [], hmin: lo[1], hmax: hi[1], area: 9 };
  for (let k = 0; k < 5; k++) {
    const t = (2 * Math.PI * k) / 5;
    poly.verts.push([f(px + r * Math.cos(t)), f(lo[1]), f(pz + r * Math.sin(t))]);
  }
  const steps = [];
  let prev = snap();
  const record = (name) => {
    // changed spans as runs [first, count, area]
    const cur = snap(), runs = [];
    for (let i = 0; i < n; i++) {
      if (cur[i] === prev[i]) continue;
      const last = runs[runs.length - 1];
      if (last && last[0] + last[1] === i && last[2] === cur[i]) last[1]++;
      else runs.push([i, 1, cur[i]]);
    }
    steps.push({ step: name, runs });
    prev = cur;
  };
  core.markBoxArea(ctx, box.bmin, box.bmax, box.area, chf); record('box');
  core.markCylinderArea(ctx, cyl.pos, cyl.radius, cyl.height, cyl.area, chf); record('cylinder');
  const fa = new core.FloatArray(); fa.copy(poly.verts.flat());
  core.markConvexPolyArea(ctx, fa, 5, poly.hmin, poly.hmax, poly.area, chf); record('convex');
  // Speckles for the median filter: one-cell boxes (area 11) on a 7 x 7 lattice.
  const speckles = [];
  for (let i = 1; i <= 7; i++) for (let j = 1; j <= 7; j++) {
    const [sx, sz] = at(i / 8, j / 8);
    const b = { bmin: [sx, lo[1], sz], bmax: [f(sx + 0.1 * cfg.cs), hi[1], f(sz + 0.1 * cfg.cs)], area: 11 };
    core.markBoxArea(ctx, b.bmin, b.bmax, b.area, chf);
    speckles.push(b);
  }
  record('speckles');
  core.medianFilterWalkableArea(ctx, chf); record('median');
  out.meshes[mesh] = { spanCount: n, triangles, box, cylinder: cyl, convex: poly, speckles, steps };
  fa.destroy(); areas.destroy(); verts.destroy(); tris.destroy();
  core.freeCompactHeightfield(chf); core.freeHeightfield(hf);
}
process.stdout.write(JSON.stringify(out) + '\n');
