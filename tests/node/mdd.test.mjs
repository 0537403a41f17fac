// clothbake's MDD read by three.js's MDDLoader (the loader three.js ships, run under node): its
// morph targets equal the PC2 of the same bake exactly and its clip's times are the scene times.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MDDLoader } from 'three/examples/jsm/loaders/MDDLoader.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = process.env.CLOTHBAKE_BIN || join(root, 'target', 'release', 'clothbake');

function arrayBuffer(path) {
  const b = readFileSync(path);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
}

/** PC2 as documented: "POINTCACHE2\0", i32 version, i32 points, f32 start, f32 rate, i32 samples. */
function readPc2(path) {
  const v = new DataView(arrayBuffer(path));
  const magic = new TextDecoder().decode(new Uint8Array(v.buffer, 0, 12));
  assert.equal(magic, 'POINTCACHE2\0');
  const n = v.getInt32(16, true);
  const start = v.getFloat32(20, true);
  const samples = v.getInt32(28, true);
  const frames = [];
  for (let s = 0; s < samples; s++) {
    const f = new Float32Array(3 * n);
    for (let k = 0; k < 3 * n; k++) f[k] = v.getFloat32(32 + 4 * (3 * n * s + k), true);
    frames.push(f);
  }
  return { n, start, frames };
}

test('three.js MDDLoader reads clothbake MDD equal to the PC2', () => {
  assert.ok(existsSync(bin), `clothbake binary not found at ${bin}`);
  const tmp = mkdtempSync(join(tmpdir(), 'clothbake-mdd-'));
  try {
    execFileSync(bin, ['sample', 'skirt-walk', '-o', join(tmp, 'scene')]);
    execFileSync(bin, ['bake', join(tmp, 'scene', 'scene.toml'), '-o', join(tmp, 'out'),
      '--frames', '2..7', '--format', 'pc2,mdd']);
    const pc2 = readPc2(join(tmp, 'out', 'skirt.pc2'));
    assert.equal(pc2.start, 2);
    assert.equal(pc2.frames.length, 6);
    const { morphTargets, clip } = new MDDLoader().parse(arrayBuffer(join(tmp, 'out', 'skirt.mdd')));
    assert.equal(morphTargets.length, 6);
    morphTargets.forEach((attr, s) => {
      assert.equal(attr.itemSize, 3);
      assert.equal(attr.count, pc2.n);
      assert.deepEqual(Array.from(attr.array), Array.from(pc2.frames[s]), `frame ${2 + s}`);
    });
    // Clip times: scene time of each frame, (frame_start + i) / fps at the sample's 24 fps.
    const times = Array.from(clip.tracks[0].times);
    assert.deepEqual(times, [2, 3, 4, 5, 6, 7].map((f) => Math.fround(f / 24)));
    assert.equal(clip.duration, Math.fround(7 / 24));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
