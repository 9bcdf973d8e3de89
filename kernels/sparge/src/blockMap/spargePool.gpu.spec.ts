// GPU tests of Sparge's block-map part A (node:test; run by the lead on the H200): K mean, pooling
// and self-similarity of Q and K, upstreamFix tails and the fused int8 quantization, against the
// CPU references on random inputs: partial tail blocks (seqlens 1, 17, 127, 259, 1000), GQA, bshd
// strides, group mode with an empty sequence, smoothK on/off, d 64/128, fp16/bf16, block 64/128.
// Plus a timing line at b2 h16 s16384 d128 (printed, not asserted). Skipped without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CudaEvent, Device, type DeviceBuffer } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { spargePoolExpected, spargePoolKeyMean, spargePoolTensor } from '../testing/spargePoolGpuCase.ts';
import { SpargePoolKernels } from './spargePoolKernels.ts';
import { checkSpargePoolProblem, spargePackedStrides, spargePoolOutputBytes, type SpargePoolProblem } from './spargePoolProblem.ts';

let kernels: Promise<SpargePoolKernels> | undefined;
const built = (): Promise<SpargePoolKernels> =>
  (kernels ??= SpargePoolKernels.build({ device: Device.open(0), compiler: gpuTestCompiler('sparge-pool-gpu') }));

interface Case {
  readonly name: string;
  readonly problem: SpargePoolProblem;
  readonly layout?: 'bhsd' | 'bshd';
}

function starts(lens: readonly number[]): number[] {
  const s = [0];
  for (const l of lens) s.push(s[s.length - 1]! + l);
  return s;
}

const f32 = (b: DeviceBuffer): Float32Array => {
  const x = b.copyToHost();
  return new Float32Array(x.buffer, x.byteOffset, x.byteLength / 4);
};
const i8 = (b: DeviceBuffer): Int8Array => {
  const x = b.copyToHost();
  return new Int8Array(x.buffer, x.byteOffset, x.byteLength);
};

function close(what: string, got: number, want: number, tol: number): void {
  if (Number.isNaN(want)) {
    assert.ok(Number.isNaN(got), `${what}: got ${got}, want NaN`);
    return;
  }
  assert.ok(Math.abs(got - want) <= tol * (1 + Math.abs(want)), `${what}: got ${got}, want ${want}`);
}

async function runCase(c: Case): Promise<string> {
  const layout = c.layout ?? 'bhsd';
  const base = checkSpargePoolProblem(c.problem);
  const p = checkSpargePoolProblem({
    ...c.problem,
    qStrides: spargePackedStrides(layout, base.nhead, base.rowsQ, base.headDim),
    kStrides: spargePackedStrides(layout, base.nheadK, base.rowsK, base.headDim),
  });
  const device = Device.open(0);
  const q = spargePoolTensor(p, 'q', 11);
  // A common key offset: what smoothing removes (it makes the K similarities discriminative).
  const k = spargePoolTensor(p, 'k', 12, 0.5);
  const sizes = spargePoolOutputBytes(p);
  const alloc = (n: number): DeviceBuffer => device.alloc(Math.max(16, n)).fill(0xff);
  const bufs = {
    q: device.upload(q.bits),
    k: device.upload(k.bits),
    ...(p.mode === 'group'
      ? { seqstartQ: device.upload(new Int32Array(p.seqstartQ!)), seqstartK: device.upload(new Int32Array(p.seqstartK!)) }
      : {}),
    pooledQ: alloc(sizes.pooledQ),
    simQ: alloc(sizes.simQ),
    pooledK: alloc(sizes.pooledK),
    simK: alloc(sizes.simK),
    km: alloc(sizes.km),
    kmPartial: alloc(sizes.kmPartial),
    ...(p.int8 ? { q8: alloc(sizes.q8), k8: alloc(sizes.k8), qScale: alloc(sizes.qScale), kScale: alloc(sizes.kScale) } : {}),
  };
  const run = (await built()).prepare(p, bufs);
  run.launch();
  const d = p.headDim;
  const km = f32(bufs.km);
  const got = { pooledQ: f32(bufs.pooledQ), simQ: f32(bufs.simQ), pooledK: f32(bufs.pooledK), simK: f32(bufs.simK) };
  const int8 = p.int8 ? { q8: i8(bufs.q8!), k8: i8(bufs.k8!), qScale: f32(bufs.qScale!), kScale: f32(bufs.kScale!) } : null;
  let ties = 0;
  let checkedInt8 = 0;
  for (const which of ['k', 'q'] as const) {
    const heads = which === 'q' ? p.nhead : p.nheadK;
    const blocks = which === 'q' ? p.qBlocksMax : p.kBlocksMax;
    const blockRows = which === 'q' ? p.blockQ : p.blockK;
    const data = which === 'q' ? q : k;
    const rowsTotal = which === 'q' ? p.rowsQ : p.rowsK;
    for (let b = 0; b < p.batch; b++) {
      for (let h = 0; h < heads; h++) {
        const values = data.sequences[b]![h]!;
        const where = `${c.name} ${which} b${b} h${h}`;
        let mean: Float64Array | null = null;
        if (which === 'k') {
          const want = p.smoothK ? spargePoolKeyMean(values, d) : new Float64Array(d);
          const kmAt = (b * p.nheadK + h) * d;
          for (let col = 0; col < d; col++) close(`${where} km[${col}]`, km[kmAt + col]!, want[col]!, 1e-5);
          // The GPU's own fp32 km: the int8 path is then checked bit for bit (the fp32 x − km is the same).
          if (p.smoothK) mean = Float64Array.from(km.subarray(kmAt, kmAt + d));
        }
        const exp = spargePoolExpected(values, d, blockRows, blocks, mean, p.tailBlockRule);
        const at = (b * heads + h) * blocks;
        const pooled = which === 'q' ? got.pooledQ : got.pooledK;
        const sim = which === 'q' ? got.simQ : got.simK;
        for (let i = 0; i < blocks; i++) {
          close(`${where} sim[${i}]`, sim[at + i]!, exp.sim[i]!, 2e-5);
          for (let col = 0; col < d; col++)
            close(`${where} pooled[${i}][${col}]`, pooled[(at + i) * d + col]!, exp.pooled[i * d + col]!, 2e-5);
        }
        if (int8 === null) continue;
        const scales = which === 'q' ? int8.qScale : int8.kScale;
        const x8 = which === 'q' ? int8.q8 : int8.k8;
        const seqBlocks = exp.scales.length;
        for (let i = 0; i < blocks; i++) {
          const want = i < seqBlocks ? exp.scales[i]! : 0;
          assert.ok(Math.abs(scales[at + i]! - want) <= 1e-6 * Math.abs(want), `${where} scale[${i}]: got ${scales[at + i]}, want ${want}`);
        }
        const starts = which === 'q' ? p.seqstartQ : p.seqstartK;
        const first = starts === null ? 0 : starts[b]!;
        const b8 = starts === null ? b : 0;
        for (let n = 0; n < values.length / d; n++) {
          for (let col = 0; col < d; col++) {
            const g = x8[((b8 * heads + h) * rowsTotal + first + n) * d + col]!;
            const w = exp.values[n * d + col]!;
            checkedInt8++;
            if (g === w) continue;
            // A quotient within fp32 rounding of a .5 boundary may round either way.
            const y = exp.quotients[n * d + col]!;
            const frac = Math.abs(Math.abs(y) - Math.floor(Math.abs(y)) - 0.5);
            assert.ok(
              Math.abs(g - w) === 1 && frac <= 4 * 2 ** -23 * Math.max(1, Math.abs(y)),
              `${where} int8[${n}][${col}]: got ${g}, want ${w} (x/scale = ${y})`,
            );
            ties++;
          }
        }
      }
    }
  }
  for (const b of Object.values(bufs)) b.dispose();
  return p.int8 ? `${checkedInt8} int8 values, ${ties} off by one at a .5 tie` : 'no int8';
}

const d128 = { dtype: 'fp16', headDim: 128, blockQ: 128, blockK: 64 } as const;
const CASES: readonly Case[] = [
  ...[1, 17, 127, 259, 1000].map((s): Case => ({
    name: `fp16 d128 s${s}`,
    problem: { ...d128, batch: 2, nhead: 2, seqlenQ: s, seqlenK: s, int8: true },
  })),
  {
    name: 'bf16 d64 64x128 GQA smoothK int8',
    problem: { dtype: 'bf16', headDim: 64, blockQ: 64, blockK: 128, batch: 2, nhead: 4, nheadK: 2, seqlenQ: 300, seqlenK: 517, int8: true },
  },
  {
    name: 'fp16 d64 bshd GQA',
    layout: 'bshd',
    problem: { dtype: 'fp16', headDim: 64, blockQ: 128, blockK: 64, batch: 2, nhead: 4, nheadK: 2, seqlenQ: 259, seqlenK: 259, int8: true },
  },
  {
    name: 'bf16 d128 bshd no smoothK',
    layout: 'bshd',
    problem: {
      dtype: 'bf16',
      headDim: 128,
      blockQ: 64,
      blockK: 64,
      batch: 1,
      nhead: 2,
      seqlenQ: 1000,
      seqlenK: 777,
      smoothK: false,
      int8: true,
    },
  },
  { name: 'fp16 d128 upstreamFix', problem: { ...d128, batch: 1, nhead: 2, seqlenQ: 259, seqlenK: 300, tailBlockRule: 'upstreamFix' } },
  {
    name: 'fp16 d128 group',
    problem: {
      ...d128,
      batch: 4,
      nhead: 4,
      nheadK: 2,
      seqstartQ: starts([17, 0, 1000, 259]),
      seqstartK: starts([127, 1, 0, 600]),
      int8: true,
    },
  },
  // The group case without its s1000 sequence: small enough for compute-sanitizer (tools/device/sanitizeCases.mjs).
  {
    name: 'fp16 d128 group small: q 17,0,259 k 127,1,0 (empty sequences), GQA 2:1',
    problem: { ...d128, batch: 3, nhead: 4, nheadK: 2, seqstartQ: starts([17, 0, 259]), seqstartK: starts([127, 1, 0]), int8: true },
  },
  {
    name: 'bf16 d64 group bshd no smoothK upstreamFix',
    layout: 'bshd',
    problem: {
      dtype: 'bf16',
      headDim: 64,
      blockQ: 64,
      blockK: 128,
      batch: 3,
      nhead: 2,
      seqstartQ: starts([1, 300, 64]),
      seqstartK: starts([259, 128, 5]),
      smoothK: false,
      tailBlockRule: 'upstreamFix',
      int8: true,
    },
  },
  { name: 'fp16 d128 long K (many K-mean chunks)', problem: { ...d128, batch: 1, nhead: 1, seqlenQ: 128, seqlenK: 20000 } },
];

for (const c of CASES) {
  test(`sparge pool: ${c.name}`, gpu.options, async (t) => {
    t.diagnostic(await runCase(c));
  });
}

test('sparge pool: timing at b2 h16 s16384 d128 fp16 (K mean + pooling of Q and K; printed)', gpu.options, async (t) => {
  const p = checkSpargePoolProblem({ ...d128, blockQ: 128, blockK: 64, batch: 2, nhead: 16, seqlenQ: 16384, seqlenK: 16384 });
  const device = Device.open(0);
  const sizes = spargePoolOutputBytes(p);
  const tensor = (bytes: number): DeviceBuffer => device.alloc(bytes).fill(0x3c);
  const bufs = {
    q: tensor(p.batch * p.nhead * p.rowsQ * p.headDim * 2),
    k: tensor(p.batch * p.nheadK * p.rowsK * p.headDim * 2),
    pooledQ: device.alloc(sizes.pooledQ),
    simQ: device.alloc(sizes.simQ),
    pooledK: device.alloc(sizes.pooledK),
    simK: device.alloc(sizes.simK),
    km: device.alloc(sizes.km),
    kmPartial: device.alloc(sizes.kmPartial),
  };
  const run = (await built()).prepare(p, bufs);
  for (let i = 0; i < 3; i++) run.launch();
  const start = CudaEvent.create(device);
  const stop = CudaEvent.create(device);
  const reps = 20;
  start.record();
  for (let i = 0; i < reps; i++) run.launch();
  stop.record();
  const ms = CudaEvent.elapsedMs(start, stop) / reps;
  const bytes = bufs.q.bytes + 2 * bufs.k.bytes;
  t.diagnostic(`${ms.toFixed(4)} ms per K mean + pooling (${((bytes / ms) * 1e-9).toFixed(2)} TB/s over Q + 2·K reads)`);
  for (const b of Object.values(bufs)) b.dispose();
});
