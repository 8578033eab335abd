#!/usr/bin/env node
// fastlz_oracle.mjs - Recast's own compressed tile-cache layers for given grids.
// Reads a JSON list [{"w": W, "h": H, "data": base64 of W*H*3 bytes}, ...] on stdin and
// prints a JSON list of base64 streams: what dtBuildTileCacheLayer with RecastDemo's
// FastLZ compressor stores after the 56-byte layer header.
//   PEER_DIR=.scratch/peer node tests/tilecache/fastlz_oracle.mjs < cases.json
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const peer = process.env.PEER_DIR;
if (!peer) { process.stderr.write('PEER_DIR is not set\n'); process.exit(2); }
const core = await import(pathToFileURL(path.join(peer, 'node_modules/@recast-navigation/core/dist/index.mjs')).href);
await core.init();
const { Raw } = core;
const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
const comp = new Raw.RecastFastLZCompressor();
const out = [];
for (const c of cases) {
  const bytes = Buffer.from(c.data, 'base64');
  const n = c.w * c.h;
  if (bytes.length !== 3 * n) throw new Error(`case needs ${3 * n} bytes, got ${bytes.length}`);
  const header = new Raw.dtTileCacheLayerHeader();
  header.magic = core.Detour.DT_TILECACHE_MAGIC;
  header.version = core.Detour.DT_TILECACHE_VERSION;
  header.width = c.w;
  header.height = c.h;
  const grids = [0, 1, 2].map((k) => {
    const a = new core.UnsignedCharArray();
    a.copy(bytes.subarray(k * n, (k + 1) * n));
    return a;
  });
  const tile = new core.TileCacheData();
  const status = core.buildTileCacheLayer(comp, header, grids[0], grids[1], grids[2], tile);
  if (core.statusFailed(status)) throw new Error(`buildTileCacheLayer failed: ${status}`);
  const data = tile.toTypedArray();
  out.push(Buffer.from(data.subarray(56)).toString('base64'));
  for (const g of grids) g.destroy();
  tile.destroy();
}
process.stdout.write(JSON.stringify(out));
