#!/usr/bin/env node
// tilecache_oracle.mjs - Recast's own dtTileCache run over a tile cache set and a script.
// Reads JSON on stdin: {"tset": base64 of a TSET file, "ops": [...]} and prints a JSON
// list with one result per op. The cache and navmesh are set up exactly as the
// generators' generateTileCache does (params from the set, addTile in file order, then
// buildNavMeshTilesAt row by row; default mesh process: area 0, flag 1), so a TSET
// written by navkit's build_tile_cache gives the peer's own tile cache.
// Ops:
//   {"op": "cylinder", "pos": [x,y,z], "radius": r, "height": h}  -> {"ok", "k"}
//   {"op": "obox", "center": [x,y,z], "half": [x,y,z], "angle": a}   -> {"ok", "k"}
//   {"op": "remove", "k": k}          (k = index of the obstacle in add order)
//   {"op": "update"}                   one dtTileCache::update -> {"upToDate"}
//   {"op": "update_all"}               until up to date -> {"calls"}
//   {"op": "export"}                   -> {"navmesh": base64 of exportNavMesh()}
//   PEER_DIR=.scratch/peer node tests/tilecache/tilecache_oracle.mjs < script.json
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const peer = process.env.PEER_DIR;
if (!peer) { process.stderr.write('PEER_DIR is not set\n'); process.exit(2); }
const core = await import(pathToFileURL(path.join(peer, 'node_modules/@recast-navigation/core/dist/index.mjs')).href);
await core.init();
const { Raw } = core;
const input = JSON.parse(fs.readFileSync(0, 'utf8'));
const buf = Buffer.from(input.tset, 'base64');
const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
const f32 = (o) => dv.getFloat32(o, true);
const i32 = (o) => dv.getInt32(o, true);
const ntiles = i32(8);
const navMesh = new core.NavMesh();
const nmp = core.NavMeshParams.create({
  orig: { x: f32(12), y: f32(16), z: f32(20) }, tileWidth: f32(24), tileHeight: f32(28),
  maxTiles: i32(32), maxPolys: i32(36),
});
if (!navMesh.initTiled(nmp)) throw new Error('navmesh init failed');
const tcp = core.DetourTileCacheParams.create({
  orig: [f32(40), f32(44), f32(48)], cs: f32(52), ch: f32(56), width: i32(60), height: i32(64),
  walkableHeight: f32(68), walkableRadius: f32(72), walkableClimb: f32(76),
  maxSimplificationError: f32(80), maxTiles: i32(84), maxObstacles: i32(88),
});
const tileCache = new core.TileCache();
const allocator = new Raw.RecastLinearAllocator(32000);
const compressor = new Raw.RecastFastLZCompressor();
const proc = new core.TileCacheMeshProcess((params, areas, flags) => {
  for (let i = 0; i < params.polyCount(); ++i) { areas.set(i, 0); flags.set(i, 1); }
});
if (!tileCache.init(tcp, allocator, compressor, proc)) throw new Error('tile cache init failed');
let off = 92;
let maxTx = 0, maxTy = 0;
for (let k = 0; k < ntiles; k++) {
  const size = i32(off + 4);
  off += 8;
  const bytes = buf.subarray(off, off + size);
  off += size;
  maxTx = Math.max(maxTx, i32(off - size + 8));
  maxTy = Math.max(maxTy, i32(off - size + 12));
  const tile = new core.TileCacheData();
  tile.copy(bytes);
  const r = tileCache.addTile(tile);
  if (core.statusFailed(r.status)) throw new Error(`addTile ${k} failed`);
}
for (let y = 0; y <= maxTy; y++) {
  for (let x = 0; x <= maxTx; x++) {
    if (core.statusFailed(tileCache.buildNavMeshTilesAt(x, y, navMesh))) throw new Error(`build ${x},${y}`);
  }
}
const v3 = (a) => ({ x: a[0], y: a[1], z: a[2] });
const obstacles = [];
const out = [];
for (const op of input.ops) {
  if (op.op === 'cylinder' || op.op === 'obox') {
    const r = op.op === 'cylinder'
      ? tileCache.addCylinderObstacle(v3(op.pos), op.radius, op.height)
      : tileCache.addBoxObstacle(v3(op.center), v3(op.half), op.angle);
    obstacles.push(r.success ? r.obstacle : null);
    out.push({ ok: r.success, k: obstacles.length - 1 });
  } else if (op.op === 'remove') {
    const o = obstacles[op.k];
    out.push({ ok: !!o && tileCache.removeObstacle(o).success });
  } else if (op.op === 'update') {
    out.push({ upToDate: tileCache.update(navMesh).upToDate });
  } else if (op.op === 'update_all') {
    let calls = 0;
    while (calls < 100000) { calls++; if (tileCache.update(navMesh).upToDate) break; }
    out.push({ calls });
  } else if (op.op === 'export') {
    out.push({ navmesh: Buffer.from(core.exportNavMesh(navMesh)).toString('base64') });
  } else {
    throw new Error(`unknown op ${op.op}`);
  }
}
process.stdout.write(JSON.stringify(out));
