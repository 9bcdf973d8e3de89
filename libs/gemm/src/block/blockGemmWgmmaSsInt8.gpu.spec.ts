// GPU tests of the int8 sm_90a block GEMM (node:test; `npm run test:gpu`, or tools/device on the GPU
// machine): one block of WgmmaBlockGemmSs per probe kernel (blockGemmWgmmaSsProbe.ts) copies
// random int8 A (tileM × K) and B (tileN × K) into the swizzled shared tiles through its own layout
// descriptors (128B for tileK 128, 64B for tileK 64), runs wgmma m64nNk32.s32.s8.s8 over the K
// tiles (tileK 64: two tiles, the second accumulating), stores the int32 accumulator through
// cEncoding, and every element must EQUAL the CPU int32 GEMM; the fp16 path (fp32 accumulator,
// small integers, so exact too) runs beside it as the control. Skipped (loudly, by the runner)
// without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encode } from '@tilekit/numeric';
import { kernelArgs } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import type { WgmmaSsProbeCase } from './blockGemmWgmmaSsProbe.ts';
import { random, wgmmaSsGpuProbes } from './testing/wgmmaSsGpuProbes.ts';

const cases: readonly WgmmaSsProbeCase[] = [
  { name: 'gpu_int8_m128n128k128', policy: { dtype: 'int8', tileM: 128, tileN: 128, tileK: 128 }, kTiles: 1 },
  { name: 'gpu_int8_m128n128k64x2', policy: { dtype: 'int8', tileM: 128, tileN: 128, tileK: 64 }, kTiles: 2 },
  { name: 'gpu_int8_m64n256k128x2', policy: { dtype: 'int8', tileM: 64, tileN: 256, tileK: 128 }, kTiles: 2 },
  { name: 'gpu_int8_m128n256k64_wgn2', policy: { dtype: 'int8', tileM: 128, tileN: 256, tileK: 64, warpgroupsN: 2 }, kTiles: 2 },
  { name: 'gpu_fp16_m128n128k64x2', policy: { dtype: 'fp16', tileM: 128, tileN: 128, tileK: 64 }, kTiles: 2 },
];

/** One nvcc run for every probe kernel (no spills), each launched on one block. */
const probes = wgmmaSsGpuProbes({ gpu, gpuTestCompiler, kernelArgs }, 'gemm-int8-gpu', cases);

/** `rows × k` values: int8 over the whole range [-128, 127] (row 0 all -128, the extreme), fp16 small integers [-8, 8]. */
function operand(dtype: string, rows: number, k: number, seed: number): number[] {
  const next = random(seed);
  return Array.from({ length: rows * k }, (_, i) => (dtype === 'int8' ? (i < k ? -128 : (next() % 256) - 128) : (next() % 17) - 8));
}

/** C[i][j] = Σ_k A[i][k] · B[j][k] in int32 (exact: |C| ≤ 128² · K < 2^31 here). */
function referenceInt32(a: readonly number[], b: readonly number[], m: number, n: number, k: number): Int32Array {
  const c = new Int32Array(m * n);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let kk = 0; kk < k; kk++) s = (s + Math.imul(a[i * k + kk]!, b[j * k + kk]!)) | 0;
      c[i * n + j] = s;
    }
  return c;
}

for (const c of cases) {
  const { dtype, tileM, tileN, tileK } = c.policy;
  const k = c.kTiles * tileK;
  test(
    `gemm/gpu: WgmmaBlockGemmSs ${dtype} ${tileM}×${tileN}, tileK ${tileK} × ${c.kTiles} K ` +
      `tile(s)${c.policy.warpgroupsN ? `, ${c.policy.warpgroupsN} warpgroups along N` : ''} ` +
      `equals the CPU GEMM exactly`,
    gpu.options,
    async () => {
      const a = operand(dtype, tileM, k, 17 * tileM + k);
      const b = operand(dtype, tileN, k, 31 * tileN + k + 1);
      const store = (xs: number[]): ArrayBufferView =>
        dtype === 'int8' ? Int8Array.from(xs) : Uint16Array.from(xs, (x) => encode('fp16', x));
      const want = referenceInt32(a, b, tileM, tileN, k);
      const sentinel = dtype === 'int8' ? 0x7fffffff : 0x7fc00000; // INT_MAX / a NaN: an element never written fails
      const raw = await probes.run(c, store(a), store(b), new Int32Array(tileM * tileN).fill(sentinel));
      const got = dtype === 'int8' ? raw : new Float32Array(raw.buffer, raw.byteOffset, raw.length);
      for (let i = 0; i < tileM; i++)
        for (let j = 0; j < tileN; j++) {
          if (got[i * tileN + j] !== want[i * tileN + j])
            assert.fail(`${c.name}: C[${i}][${j}] = ${got[i * tileN + j]}, want ${want[i * tileN + j]} (first mismatch, row-major)`);
        }
    },
  );
}

test('gemm/gpu: the context is still usable after the int8 block GEMM kernels', gpu.options, async () => {
  await gpu.expectUsable();
});
