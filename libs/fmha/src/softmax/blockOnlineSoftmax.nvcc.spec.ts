// BlockOnlineSoftmax's rescales as CUDA: emitRescaleUnlessUnit guards emitRescale's multiplies with one warp vote
// (a warp whose factors are all exactly 1 skips them), and a kernel using both compiles for sm_90a with nvcc.
// No GPU needed; a missing nvcc skips the compile LOUDLY.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { add, float32, index, mul, pointer, sm90a, SourceBuilder } from '@tilekit/codegen';
import { toolAvailable } from '@tilekit/codegen/testing';
import { WgmmaBlockGemmSs } from '@tilekit/gemm';
import { BlockEmitter, makeDistributedTensor } from '@tilekit/tile';
import { describe, expect, it } from 'vitest';
import { BlockOnlineSoftmax } from './blockOnlineSoftmax.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc) console.warn(`\n!!! SKIPPING the BlockOnlineSoftmax nvcc compile test: "${nvcc}" not found (set TILEKIT_NVCC). !!!\n`);

/** A kernel: S and O in a wgmma accumulator's distribution, O rescaled by a row factor read from memory, guarded or not. */
function rescaleKernel(guarded: boolean): string {
  const gemm = new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 64, tileN: 64, tileK: 64 });
  const src = new SourceBuilder({ dialect: sm90a, header: 'BlockOnlineSoftmax rescales (compile test)' });
  src.function(
    { name: 'rescale', qualifiers: sm90a.kernelQualifiers(), attributes: [sm90a.launchBounds(128)], params: { io: pointer(float32) } },
    (b, p) => {
      const block = new BlockEmitter(b, sm90a, { numThreads: 128 });
      const softmax = new BlockOnlineSoftmax(block, gemm.cEncoding);
      const o = makeDistributedTensor(block, 'o', gemm.cEncoding, float32);
      const c = makeDistributedTensor(block, 'c', softmax.rowEncoding, float32);
      block.threads((t) => {
        // Each thread its own 34 floats (32 of O, 2 factors).
        const io = t.b.let('mine', pointer(float32), add(p.io, mul(t.tid, o.size + c.size)));
        for (let d = 0; d < o.size; d++) t.b.assign(o.at(t, d), index(io, d));
        for (let r = 0; r < c.size; r++) t.b.assign(c.at(t, r), index(io, o.size + r));
        if (guarded) softmax.emitRescaleUnlessUnit(t, o, c);
        else softmax.emitRescale(t, o, c);
        for (let d = 0; d < o.size; d++) t.b.assign(index(io, d), o.at(t, d));
      });
    },
  );
  return src.render();
}

describe('BlockOnlineSoftmax.emitRescaleUnlessUnit', () => {
  it("puts emitRescale's multiplies behind one warp vote on every row factor being exactly 1", () => {
    const plain = rescaleKernel(false);
    const guarded = rescaleKernel(true);
    expect(guarded).toContain('if (__all_sync(0xffffffffu, c[0] == 1.0f && c[1] == 1.0f) == 0) {');
    expect(plain).not.toContain('__all_sync');
    const multiplies = (s: string): number => (s.match(/o\[\d+\] = o\[\d+\] \* c\[\d\];/g) ?? []).length;
    expect(multiplies(guarded)).toBe(multiplies(plain));
    expect(multiplies(plain)).toBe(32);
  });

  it.runIf(hasNvcc)(
    'compiles for sm_90a',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'tilekit-softmax-rescale-'));
      try {
        const file = join(dir, 'rescale.cu');
        writeFileSync(file, rescaleKernel(true));
        const r = spawnSync(nvcc, ['-arch=sm_90a', '-c', '-o', join(dir, 'rescale.o'), file], {
          encoding: 'utf8',
        });
        expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
