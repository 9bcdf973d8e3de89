// GPU tests of the fp8 sm_90a block GEMM (node:test; `npm run test:gpu`, or tools/device on the GPU
// machine): one block of WgmmaBlockGemmSs per probe kernel (blockGemmWgmmaSsProbe.ts, fp8 bits
// stored as unsigned char) copies random fp8 A (tileM × K) and B (tileN × K) into the swizzled
// shared tiles through its own layout descriptors (128B for tileK 128, 64B for tileK 64), runs wgmma
// m64nNk32.f32.e4m3.e4m3 (or .e5m2.e5m2) over the K tiles (the first with scale-d 0, the others
// adding), and stores the fp32 accumulator through cEncoding.
//
// Operands are full-entropy bit patterns minus the non-finite ones (e4m3: every byte but the two
// NaNs 0x7f / 0xff, so zeros, subnormals and ±448 included; e5m2: every byte but ±inf and the NaNs).
// The reference multiplies the decoded values exactly in float64 (an e4m3 or e5m2 product has at
// most 8 significant bits) and sums them in float64. The tolerance is NOT that of an IEEE fp32
// accumulation: Hopper's FP8 tensor cores align each k32 group's addends (the 32 products and D) to
// the largest exponent, keep about 14 bits below it, and truncate the sum to a 13-bit mantissa (FP22)
// before writing D (SageAttention2; DeepSeek-V3 §3.5.2). Per element the bound is therefore
//   Σ over k32 steps s of 2 · 2^-13 · (33 · max(max_k∈s |a·b|, |C_{s-1}|) + |C_s|)
// (C_s the exact partial sum after step s; 33 addends each off by less than one unit of 2^-13 of
// the largest, plus the final truncation, times 2 for margin), and each case logs the fraction of it
// used (H200, driver 580, CUDA 13.0: at most 5.7% of it, while the same errors reach 110× an IEEE
// fp32 summation's worst case K · 2^-24 · Σ|a·b|, so an fp32 tolerance would fail). A wrong
// operand layout is off by whole products, far beyond it. The "small integers" cases
// (every |value| ≤ 4, so every partial sum is an integer of magnitude at most 2^12) must be EXACT. Skipped (loudly,
// by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decode } from '@tilekit/numeric';
import { kernelArgs } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import type { WgmmaSsProbeCase } from './blockGemmWgmmaSsProbe.ts';
import { random, wgmmaSsGpuProbes } from './testing/wgmmaSsGpuProbes.ts';

type Fp8 = 'fp8e4m3fn' | 'fp8e5m2';

/** A probe kernel and how its operands are drawn: full-entropy finite bit patterns, or small integers (exact). */
interface Fp8Case extends WgmmaSsProbeCase {
  readonly values: 'full' | 'small';
}

const cases: readonly Fp8Case[] = [
  { name: 'gpu_e4m3_m128n128k128', policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK: 128 }, kTiles: 1, values: 'full' },
  { name: 'gpu_e4m3_m128n128k64x2', policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK: 64 }, kTiles: 2, values: 'full' },
  { name: 'gpu_e4m3_m64n256k128x2', policy: { dtype: 'fp8e4m3fn', tileM: 64, tileN: 256, tileK: 128 }, kTiles: 2, values: 'full' },
  {
    name: 'gpu_e4m3_m128n256k64_wgn2',
    policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 256, tileK: 64, warpgroupsN: 2 },
    kTiles: 2,
    values: 'full',
  },
  { name: 'gpu_e4m3_m192n48k128', policy: { dtype: 'fp8e4m3fn', tileM: 192, tileN: 48, tileK: 128 }, kTiles: 1, values: 'full' },
  { name: 'gpu_e5m2_m128n128k128x2', policy: { dtype: 'fp8e5m2', tileM: 128, tileN: 128, tileK: 128 }, kTiles: 2, values: 'full' },
  { name: 'gpu_e4m3_small_m128n128k128x2', policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK: 128 }, kTiles: 2, values: 'small' },
  { name: 'gpu_e5m2_small_m128n64k64x2', policy: { dtype: 'fp8e5m2', tileM: 128, tileN: 64, tileK: 64 }, kTiles: 2, values: 'small' },
];

/** One nvcc run for every probe kernel (no spills), each launched on one block. */
const probes = wgmmaSsGpuProbes({ gpu, gpuTestCompiler, kernelArgs }, 'gemm-fp8-gpu', cases);

/** Whether an fp8 bit pattern is finite: e4m3fn has only the NaNs S.1111.111; e5m2 has ±inf and NaNs at exponent 11111. */
function finite(dtype: Fp8, bits: number): boolean {
  return dtype === 'fp8e4m3fn' ? (bits & 0x7f) !== 0x7f : (bits & 0x7c) !== 0x7c;
}

/** The e4m3 / e5m2 bit pattern of a small integer (|x| ≤ 4: exact in both). */
function smallBits(dtype: Fp8, x: number): number {
  const bits = [...Array(256).keys()].find((b) => finite(dtype, b) && decode(dtype, b) === x && (x !== 0 || b === 0));
  assert.ok(bits !== undefined, `${dtype} has no ${x}`);
  return bits;
}

/**
 * `rows × k` fp8 bit patterns. Full entropy: uniform over the finite patterns (row 0 all +max, row 1
 * alternating ±max, the extremes); small: integers in [-4, 4].
 */
function operand(dtype: Fp8, values: Fp8Case['values'], rows: number, k: number, seed: number): Uint8Array {
  const next = random(seed);
  const out = new Uint8Array(rows * k);
  if (values === 'small') {
    const table = [-4, -3, -2, -1, 0, 1, 2, 3, 4].map((x) => smallBits(dtype, x));
    for (let i = 0; i < out.length; i++) out[i] = table[next() % table.length]!;
    return out;
  }
  const max = dtype === 'fp8e4m3fn' ? 0x7e : 0x7b;
  for (let i = 0; i < out.length; i++) {
    if (i < k) out[i] = max;
    else if (i < 2 * k) out[i] = max | (i % 2 === 0 ? 0x80 : 0);
    else {
      let b = next() & 0xff;
      while (!finite(dtype, b)) b = next() & 0xff;
      out[i] = b;
    }
  }
  return out;
}

/**
 * C[i][j] = Σ_k A[i][k] · B[j][k] (exact products, summed in float64), the per-element bound of the
 * FP8 tensor core's accumulation (header comment) over the k32 steps, and Σ_k |A[i][k] · B[j][k]|.
 */
function reference(
  a: Float64Array,
  b: Float64Array,
  m: number,
  n: number,
  k: number,
): { want: Float64Array; bound: Float64Array; magnitude: Float64Array } {
  const want = new Float64Array(m * n);
  const bound = new Float64Array(m * n);
  const magnitude = new Float64Array(m * n);
  const unit = 2 ** -13;
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let c = 0;
      let e = 0;
      let abs = 0;
      for (let k0 = 0; k0 < k; k0 += 32) {
        let largest = Math.abs(c);
        let s = c;
        for (let kk = k0; kk < k0 + 32; kk++) {
          const p = a[i * k + kk]! * b[j * k + kk]!;
          largest = Math.max(largest, Math.abs(p));
          abs += Math.abs(p);
          s += p;
        }
        e += 2 * unit * (33 * largest + Math.abs(s));
        c = s;
      }
      want[i * n + j] = c;
      bound[i * n + j] = e;
      magnitude[i * n + j] = abs;
    }
  return { want, bound, magnitude };
}

for (const c of cases) {
  const dtype = c.policy.dtype as Fp8;
  const { tileM, tileN, tileK } = c.policy;
  const k = c.kTiles * tileK;
  test(
    `gemm/gpu: WgmmaBlockGemmSs ${dtype} ${tileM}×${tileN}, tileK ${tileK} × ${c.kTiles} K ` +
      `tile(s)${c.policy.warpgroupsN ? `, ${c.policy.warpgroupsN} warpgroups along N` : ''}, ` +
      (c.values === 'full'
        ? 'full-entropy operands: within the FP8 accumulation bound of the float64 GEMM'
        : 'small integers: equals the GEMM exactly'),
    gpu.options,
    async (t) => {
      const a = operand(dtype, c.values, tileM, k, 17 * tileM + k + (dtype === 'fp8e5m2' ? 5 : 0));
      const b = operand(dtype, c.values, tileN, k, 31 * tileN + k + 1);
      const decoded = (bits: Uint8Array): Float64Array => Float64Array.from(bits, (x) => decode(dtype, x));
      const { want, bound, magnitude } = reference(decoded(a), decoded(b), tileM, tileN, k);
      const got = await probes.run(c, a, b, new Float32Array(tileM * tileN).fill(Number.NaN)); // an element never written fails
      let used = 0;
      let inexact = 0;
      // For information: the error against an IEEE fp32 summation's worst case, K · 2^-24 · Σ|a·b|.
      let fp32 = 0;
      for (let i = 0; i < tileM; i++)
        for (let j = 0; j < tileN; j++) {
          const x = i * tileN + j;
          const err = Math.abs(got[x]! - want[x]!);
          const allowed = c.values === 'small' ? 0 : bound[x]!;
          if (!(err <= allowed))
            assert.fail(`${c.name}: C[${i}][${j}] = ${got[x]}, want ${want[x]} ± ${allowed} (|error| ${err}; first mismatch, row-major)`);
          if (err > 0) inexact++;
          if (allowed > 0) used = Math.max(used, err / allowed);
          if (magnitude[x]! > 0) fp32 = Math.max(fp32, err / (k * 2 ** -24 * magnitude[x]!));
        }
      t.diagnostic(
        `${c.name}: ${inexact} of ${tileM * tileN} elements inexact; at most ${(100 * used).toFixed(2)}% of the bound used ` +
          `(${fp32.toFixed(2)}× an fp32 summation's worst-case error)`,
      );
    },
  );
}

test('gemm/gpu: the context is still usable after the fp8 block GEMM kernels', gpu.options, async () => {
  await gpu.expectUsable();
});
