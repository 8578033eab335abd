// Recast's rcRasterizeTriangles into tile-sized heightfields (tile + border, the whole
// mesh's triangles passed, as tiled builds do), for navkit's rasterizer tests.
//
//   node tests/oracles/make_recast_tile_raster.mjs <peer node_modules dir> <stages dir> > tests/oracles/recast_tile_raster.json
//
// Tile bounds follow RecastDemo's Sample_TileMesh arithmetic in float32 (tile size 32,
// border walkableRadius + 3). Per tile: the bounds and grid, and a SHA-1 of each CSR
// array (col_start uint32, smin/smax uint16, area uint8, little-endian), plus counts.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const [nodeModules, stagesDir] = process.argv.slice(2);
const core = await import(path.join(nodeModules, '@recast-navigation/core/dist/index.mjs'));
await core.init();
const f = Math.fround;
const sha1 = (typed) => crypto.createHash('sha1').update(new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength)).digest('hex');

const out = { format: 'navkit-recast-tile-raster/1', tileSize: 32, meshes: {} };
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
  const areas = new core.TriangleAreasArray(); areas.resize(nt);
  core.markWalkableTriangles(ctx, cfg.walkableSlopeAngle, verts, nv, tris, nt, areas);
  const ts = 32, border = cfg.walkableRadius + 3;
  const cs = f(cfg.cs), tcs = f(ts * cs);
  const bmin = man.bmin.map(f), bmax = man.bmax.map(f);
  const tw = Math.floor((man.grid.width + ts - 1) / ts), th = Math.floor((man.grid.height + ts - 1) / ts);
  // corner and inner tiles, the last one, and two whose border alone reaches the mesh
  const picks = [[0, 0], [1, 1], [2, 5], [Math.floor(tw / 2), Math.floor(th / 3)], [tw - 1, th - 1], [-1, 1], [1, -1]];
  const tiles = [];
  for (const [tx, ty] of picks) {
    const tbmin = [f(bmin[0] + f(tx * tcs)), bmin[1], f(bmin[2] + f(ty * tcs))];
    const tbmax = [f(bmin[0] + f((tx + 1) * tcs)), bmax[1], f(bmin[2] + f((ty + 1) * tcs))];
    tbmin[0] = f(tbmin[0] - f(border * cs)); tbmin[2] = f(tbmin[2] - f(border * cs));
    tbmax[0] = f(tbmax[0] + f(border * cs)); tbmax[2] = f(tbmax[2] + f(border * cs));
    const w = ts + 2 * border, h = ts + 2 * border;
    const hf = core.allocHeightfield();
    core.createHeightfield(ctx, hf, w, h, tbmin, tbmax, cfg.cs, cfg.ch);
    core.rasterizeTriangles(ctx, verts, nv, tris, areas, nt, hf, cfg.walkableClimb);
    const ncol = w * h, colStart = new Uint32Array(ncol + 1), smin = [], smax = [], area = [];
    for (let c = 0; c < ncol; c++) {
      colStart[c] = smin.length;
      let s = hf.spans(c);
      if (core.Raw.isNull(s.raw)) continue;
      for (; s; s = s.next()) { smin.push(s.smin()); smax.push(s.smax()); area.push(s.area()); }
    }
    colStart[ncol] = smin.length;
    tiles.push({
      tile: [tx, ty], width: w, height: h, bmin: tbmin, bmax: tbmax, spans: smin.length,
      sha1: { col_start: sha1(colStart), smin: sha1(Uint16Array.from(smin)), smax: sha1(Uint16Array.from(smax)), area: sha1(Uint8Array.from(area)) },
    });
    core.freeHeightfield(hf);
  }
  out.meshes[mesh] = { walkableClimb: cfg.walkableClimb, cs: cfg.cs, ch: cfg.ch, tiles };
  areas.destroy(); verts.destroy(); tris.destroy();
}
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
