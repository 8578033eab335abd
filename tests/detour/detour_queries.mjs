#!/usr/bin/env node
// detour_queries.mjs - run a JSON list of dtNavMeshQuery calls on a navmesh file with the
// real Detour (@recast-navigation/core, WebAssembly) and print the results as JSON.
//
//   node detour_queries.mjs NAVMESH.bin QUERIES.json  > RESULTS.json
//
// Run it from a folder whose node_modules holds @recast-navigation/core (the peer's copy,
// tests/peer_support.py: peer_workdir()). QUERIES.json:
//   { "maxNodes": 2048,
//     "polys": [[ref, flags, area], ...],            // dtNavMesh::setPolyFlags/setPolyArea first
//     "filters": { "name": {"include": 0xffff, "exclude": 0, "costs": [64 floats]} },
//     "queries": [ {"op": ..., ...}, ... ] }
// Every query names its filter with "f" (default: include 0xffff, exclude 0, costs 1).
// Ops and their fields (points are [x, y, z]; refs are numbers):
//   nearest  c he f                 -> findNearestPoly
//   path     s e he f maxPath opts maxPts
//            -> findNearestPoly(s), findNearestPoly(e), findPath, closestPointOnPoly of e on
//               the last corridor polygon when it is not e's polygon, findStraightPath(opts)
//   findPath sref eref s e f maxPath -> findPath alone (refs given)
//   move     ref s e f maxVisited    -> moveAlongSurface
//   circle   ref c r f max           -> findPolysAroundCircle
//   qpolys   c he f max              -> queryPolygons
//   cpop     ref p                   -> closestPointOnPoly
//   height   ref p                   -> getPolyHeight
//   raycast  ref s e f opts prev     -> raycast (dtRaycastHit; the binding gives no path buffer)
//   random   seed f                  -> findRandomPoint after FastRand.setSeed(seed)
//   randomCircle seed ref c r f      -> findRandomPointAroundCircle after FastRand.setSeed(seed)
// (the binding's frand is its FastRand: an LCG, seed = 214013 * seed + 2531011 in int32,
// value ((seed >> 16) & 0x7fff) / 32767.0f)
// Output: {"results": [...]} in query order; float32 values print exactly as doubles.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

// resolve the package from the working directory (the peer's node_modules), not this file
const requireHere = createRequire(path.join(process.cwd(), 'noop.js'));
const core = await import(requireHere.resolve('@recast-navigation/core'));
await core.init();
const R = core.Raw;

const [navFile, queryFile] = process.argv.slice(2);
const spec = JSON.parse(fs.readFileSync(queryFile, 'utf8'));
const { navMesh } = core.importNavMesh(new Uint8Array(fs.readFileSync(navFile)));
for (const [ref, flags, area] of spec.polys || []) {
  navMesh.setPolyFlags(ref, flags);
  navMesh.setPolyArea(ref, area);
}
const query = new core.NavMeshQuery(navMesh, { maxNodes: spec.maxNodes ?? 2048 });
const q = query.raw;

const filters = { default: query.defaultFilter.raw };
for (const [name, f] of Object.entries(spec.filters || {})) {
  const qf = new R.Module.dtQueryFilter();
  qf.setIncludeFlags(f.include);
  qf.setExcludeFlags(f.exclude);
  (f.costs || []).forEach((c, i) => qf.setAreaCost(i, c));
  filters[name] = qf;
}
const filt = (name) => filters[name ?? 'default'];
const u32 = (v) => v >>> 0;
const v3 = (vec) => [vec.x, vec.y, vec.z];
const uintArray = (n) => { const a = new R.UnsignedIntArray(); a.resize(n); return a; };
const take = (arr, n) => { const out = []; for (let i = 0; i < n; i++) out.push(arr.get(i)); return out; };

function nearest(c, he, f) {
  const ref = new R.UnsignedIntRef(), pt = new R.Vec3(), over = new R.BoolRef();
  const st = q.findNearestPoly(c, he, f, ref, pt, over);
  const res = { status: u32(st), ref: ref.value, point: v3(pt), over: over.value };
  R.destroy(ref); R.destroy(pt); R.destroy(over);
  return res;
}

function closest(ref, p) {
  const pt = new R.Vec3(), over = new R.BoolRef();
  const st = q.closestPointOnPoly(ref, p, pt, over);
  const res = { status: u32(st), point: v3(pt), over: over.value };
  R.destroy(pt); R.destroy(over);
  return res;
}

function straight(s, e, polys, opts, maxPts) {
  const path = uintArray(polys.length);
  polys.forEach((r, i) => path.set(i, r));
  const pts = new R.FloatArray(); pts.resize(maxPts * 3);
  const fl = new R.UnsignedCharArray(); fl.resize(maxPts);
  const rf = uintArray(maxPts);
  const cnt = new R.IntRef();
  const st = q.findStraightPath(s, e, path, pts, fl, rf, cnt, maxPts, opts);
  const n = cnt.value;
  const res = { status: u32(st), points: [], flags: take(fl, n), refs: take(rf, n) };
  for (let i = 0; i < n; i++) res.points.push([pts.get(3 * i), pts.get(3 * i + 1), pts.get(3 * i + 2)]);
  [path, pts, fl, rf, cnt].forEach((a) => R.destroy(a));
  return res;
}

const ops = {
  nearest: (x) => nearest(x.c, x.he, filt(x.f)),
  path(x) {
    const f = filt(x.f);
    const ns = nearest(x.s, x.he, f), ne = nearest(x.e, x.he, f);
    const res = { start: ns, end: ne };
    if (!ns.ref || !ne.ref) return res;
    const buf = uintArray(x.maxPath);
    const st = q.findPath(ns.ref, ne.ref, x.s, x.e, f, buf, x.maxPath);
    // the binding resizes the output array to the corridor length
    res.findPath = { status: u32(st), polys: take(buf, buf.size) };
    R.destroy(buf);
    const polys = res.findPath.polys;
    if (!polys.length) return res;
    let endPos = x.e;
    if (polys[polys.length - 1] !== ne.ref) endPos = closest(polys[polys.length - 1], x.e).point;
    res.endPos = endPos;
    res.straight = straight(x.s, endPos, polys, x.opts, x.maxPts);
    return res;
  },
  straight: (x) => straight(x.s, x.e, x.polys, x.opts, x.maxPts),
  findPath(x) {
    const buf = uintArray(x.maxPath);
    const st = q.findPath(x.sref, x.eref, x.s, x.e, filt(x.f), buf, x.maxPath);
    const res = { status: u32(st), polys: take(buf, buf.size) };
    R.destroy(buf);
    return res;
  },
  move(x) {
    const pos = new R.Vec3();
    const vis = new R.UnsignedIntArray();
    const st = q.moveAlongSurface(x.ref, x.s, x.e, filt(x.f), pos, vis, x.maxVisited);
    const res = { status: u32(st), pos: v3(pos), visited: take(vis, vis.size) };
    R.destroy(vis); R.destroy(pos);
    return res;
  },
  circle(x) {
    const refs = uintArray(x.max), par = uintArray(x.max);
    const cost = new R.FloatArray(); cost.resize(x.max);
    const cnt = new R.IntRef();
    const st = q.findPolysAroundCircle(x.ref, x.c, x.r, filt(x.f), refs, par, cost, cnt, x.max);
    const n = cnt.value;
    const res = { status: u32(st), refs: take(refs, n), parents: take(par, n), costs: take(cost, n) };
    [refs, par, cost].forEach((a) => R.destroy(a));
    R.destroy(cnt);
    return res;
  },
  qpolys(x) {
    const refs = uintArray(Math.max(1, x.max));
    const cnt = new R.IntRef();
    const st = q.queryPolygons(x.c, x.he, filt(x.f), refs, cnt, x.max);
    const res = { status: u32(st), refs: take(refs, cnt.value) };
    R.destroy(refs); R.destroy(cnt);
    return res;
  },
  cpop: (x) => closest(x.ref, x.p),
  height(x) {
    const h = new R.FloatRef();
    const st = q.getPolyHeight(x.ref, x.p, h);
    const res = { status: u32(st), height: h.value };
    R.destroy(h);
    return res;
  },
  random(x) {
    R.Module.FastRand.prototype.setSeed(x.seed);
    const ref = new R.UnsignedIntRef(), pt = new R.Vec3();
    const st = q.findRandomPoint(filt(x.f), ref, pt);
    const res = { status: u32(st), ref: ref.value, point: v3(pt) };
    R.destroy(ref); R.destroy(pt);
    return res;
  },
  randomCircle(x) {
    R.Module.FastRand.prototype.setSeed(x.seed);
    const ref = new R.UnsignedIntRef(), pt = new R.Vec3();
    const st = q.findRandomPointAroundCircle(x.ref, x.c, x.r, filt(x.f), ref, pt);
    const res = { status: u32(st), ref: ref.value, point: v3(pt) };
    R.destroy(ref); R.destroy(pt);
    return res;
  },
  raycast(x) {
    const hit = new R.Module.dtRaycastHit();
    // Detour leaves hitEdgeIndex unwritten when the ray misses the start polygon; -1 then
    // shows through (navkit's "no edge" value), instead of the fresh struct's 0.
    hit.set_hitEdgeIndex(-1);
    const st = q.raycast(x.ref, x.s, x.e, filt(x.f), x.opts, hit, x.prev);
    const res = {
      status: u32(st), t: hit.t, edge: hit.hitEdgeIndex, cost: hit.pathCost,
      normal: [0, 1, 2].map((i) => hit.get_hitNormal(i)),
    };
    R.destroy(hit);
    return res;
  },
};

const results = spec.queries.map((x) => {
  const fn = ops[x.op];
  if (!fn) throw new Error(`unknown op ${x.op}`);
  return fn(x);
});
process.stdout.write(JSON.stringify({ results }));
query.destroy();
navMesh.destroy();
