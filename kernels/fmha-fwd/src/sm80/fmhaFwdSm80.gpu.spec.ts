// GPU tests of the sm_80 attention forward (node:test; `npm run test:gpu`, or tools/device on the GPU
// machine): every sm_80 catalog instance, built for the device's arch (sm_90a on an H200: the sm_80
// cubin does not load there; sm_80 on an A100), against the fp32 CPU reference (probabilities not
// narrowed) on ragged shapes (seqlens 1, 17, 127, 259, 1000), causal and sliding-window masks
// including windows that fully mask rows, GQA, varlen with an empty sequence, both layouts, LSE (and
// a run without LSE). O is filled with a NaN sentinel first, so a row the kernel skips fails. Skipped
// (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sm80, sm90a } from '@tilekit/codegen';
import {
  attentionFwdToleranceFor,
  attentionLseIndex,
  causalBottomRight,
  causalTopLeft,
  noMask,
  packedAttentionStrides,
  referenceAttentionFwd,
  resolveAttentionFwdArgs,
  slidingWindowMask,
  type AttentionFwdArgs,
  type AttentionLayout,
  type AttentionMaskSpec,
} from '@tilekit/fmha';
import { decode, encode } from '@tilekit/numeric';
import { buildOncePerInstance, Device, NvccCompiler } from '@tilekit/runtime';
import { gpu } from '@tilekit/runtime/testing';
import type { FmhaFwdLaunchProblem } from '../fmhaFwdLauncher.ts';
import { FMHA_FWD_SM80_CATALOG, fmhaFwdSm80CatalogFor } from './fmhaFwdSm80Catalog.ts';
import { FmhaFwdSm80Instance, type FmhaFwdSm80InstancePolicy } from './fmhaFwdSm80Instance.ts';
import { FmhaFwdSm80Kernel } from './fmhaFwdSm80Launcher.ts';

let compiler: NvccCompiler | undefined;
const kernelFor = buildOncePerInstance((instance: FmhaFwdSm80Instance) => {
  compiler ??= new NvccCompiler({ cacheDir: process.env['TILEKIT_CACHE_DIR'] ?? mkdtempSync(join(tmpdir(), 'tilekit-fmha-sm80-gpu-')) });
  return FmhaFwdSm80Kernel.build(instance, { device: Device.open(0), compiler });
});

/** The catalog built for the device's arch (sm_80 code runs on sm_90 only when compiled for it). */
function catalogForDevice(): readonly FmhaFwdSm80Instance[] {
  const arch = Device.open(0).arch;
  if (arch === 'sm_80') return fmhaFwdSm80CatalogFor(sm80);
  assert.equal(arch, 'sm_90a', `the sm_80 attention tests need an sm_80 or sm_90a device, got ${arch}`);
  return fmhaFwdSm80CatalogFor(sm90a);
}

function fill(count: number, dtype: 'fp16' | 'bf16', seed: number): Uint16Array {
  const bits = new Uint16Array(count);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    bits[i] = encode(dtype, (x / 2 ** 32) * 2 - 1);
  }
  return bits;
}

interface Case {
  readonly dtype: 'fp16' | 'bf16';
  readonly d: number;
  readonly batch: number;
  readonly h: number;
  readonly hk?: number;
  /** Batch mode: one length each; group mode: per-batch lengths. */
  readonly sq: number | readonly number[];
  readonly sk: number | readonly number[];
  readonly layout: AttentionLayout;
  readonly mask: AttentionMaskSpec;
  /** Default true. */
  readonly lse?: boolean;
  /** A pipeline variant outside the catalog (built for the device like the catalog). */
  readonly variant?: FmhaFwdSm80InstancePolicy;
}

function starts(lens: readonly number[]): number[] {
  const s = [0];
  for (const l of lens) s.push(s[s.length - 1]! + l);
  return s;
}

function instanceFor(c: Case): FmhaFwdSm80Instance {
  if (c.variant !== undefined) return new FmhaFwdSm80Instance(c.variant, catalogForDevice()[0]!.target);
  const found = catalogForDevice().find((i) => i.policy.dtype === c.dtype && i.policy.headDim === c.d && i.policy.headDimV === c.d && i.policy.mask === (c.mask.kind === 'none' ? 'none' : 'window'));
  assert.ok(found, `no sm_80 instance for ${JSON.stringify(c)}`);
  return found;
}

async function runCase(c: Case): Promise<string> {
  const dv = c.d;
  const hk = c.hk ?? c.h;
  const withLse = c.lse ?? true;
  const group = Array.isArray(c.sq);
  const sqs = group ? (c.sq as readonly number[]) : Array<number>(c.batch).fill(c.sq as number);
  const sks = group ? (c.sk as readonly number[]) : Array<number>(c.batch).fill(c.sk as number);
  const rowsQ = group ? sqs.reduce((a, b) => a + b, 0) : sqs[0]!;
  const rowsK = group ? sks.reduce((a, b) => a + b, 0) : sks[0]!;
  const batches = group ? 1 : c.batch;
  const qs = packedAttentionStrides(c.layout, c.h, rowsQ, c.d);
  const ks = packedAttentionStrides(c.layout, hk, rowsK, c.d);
  const vs = packedAttentionStrides(c.layout, hk, rowsK, dv);
  const os = packedAttentionStrides(c.layout, c.h, rowsQ, dv);
  const q = fill(batches * c.h * rowsQ * c.d, c.dtype, 11 + rowsQ);
  const k = fill(batches * hk * rowsK * c.d, c.dtype, 12 + rowsK);
  const v = fill(batches * hk * rowsK * dv, c.dtype, 13 + rowsK);
  const args: AttentionFwdArgs = {
    batch: c.batch,
    nheadQ: c.h,
    nheadK: hk,
    hdimQ: c.d,
    hdimV: dv,
    ...(group ? { seqstartQ: starts(sqs), seqstartK: starts(sks) } : { seqlenQ: rowsQ, seqlenK: rowsK }),
    q: { dtype: c.dtype, data: q, strides: qs },
    k: { dtype: c.dtype, data: k, strides: ks },
    v: { dtype: c.dtype, data: v, strides: vs },
    oStrides: os,
    mask: c.mask,
  };
  const resolved = resolveAttentionFwdArgs(args);
  const ref = referenceAttentionFwd(args);
  const tol = attentionFwdToleranceFor(args);
  const problem: FmhaFwdLaunchProblem = {
    dtype: c.dtype,
    mode: group ? 'group' : 'batch',
    batch: c.batch,
    nheadQ: c.h,
    nheadK: hk,
    hdimQ: c.d,
    hdimV: dv,
    seqlenQ: Math.max(...sqs),
    seqlenK: Math.max(...sks),
    rowsQ,
    rowsK,
    qStrides: qs,
    kStrides: ks,
    vStrides: vs,
    oStrides: os,
    lse: withLse,
    lseStrides: group ? { batch: 0, head: rowsQ } : { batch: c.h * rowsQ, head: rowsQ },
    scale: resolved.scale,
    mask: c.mask,
    numSplits: 1,
  };
  const kernel = await kernelFor(instanceFor(c));
  const device = Device.open(0);
  const dq = device.upload(q);
  const dk = device.upload(k);
  const dvb = device.upload(v);
  const oCount = batches * c.h * rowsQ * dv;
  const lseCount = batches * c.h * rowsQ;
  const dout = device.alloc(Math.max(1, oCount) * 2).fill(0xff);
  const dlse = withLse ? device.alloc(Math.max(1, lseCount) * 4).fill(0xff) : undefined;
  const dsq = group ? device.upload(new Int32Array(starts(sqs))) : undefined;
  const dsk = group ? device.upload(new Int32Array(starts(sks))) : undefined;
  try {
    kernel.prepare(problem, { q: dq, k: dk, v: dvb, o: dout, ...(dlse ? { lse: dlse } : {}), ...(dsq && dsk ? { seqstartQ: dsq, seqstartK: dsk } : {}) }).launch();
    const out = new Uint16Array(dout.copyToHost().buffer);
    const lse = dlse ? new Float32Array(dlse.copyToHost().buffer) : undefined;
    let worstO = 0;
    let worstL = 0;
    let bad = 0;
    let first = '';
    for (let b = 0; b < c.batch; b++) {
      for (let h = 0; h < c.h; h++) {
        for (let r = 0; r < sqs[b]!; r++) {
          const base = group ? (resolved.rowStartsQ[b]! + r) * os.row + h * os.head : b * os.batch + h * os.head + r * os.row;
          for (let j = 0; j < dv; j++) {
            const got = decode(c.dtype, out[base + j]!);
            const want = ref.o[base + j]!;
            const err = Math.abs(got - want);
            const lim = tol.o.atol + tol.o.rtol * Math.abs(want);
            worstO = Math.max(worstO, err);
            if (!(err <= lim)) {
              bad++;
              first ||= `O[b${b} h${h} r${r} d${j}] = ${got}, reference ${want} (|err| ${err.toExponential(2)} > ${lim.toExponential(2)})`;
            }
          }
          if (lse === undefined) continue;
          const li = attentionLseIndex(resolved, b, h, r);
          const gotL = lse[li]!;
          const wantL = ref.lse[li]!;
          const okL = wantL === -Infinity ? gotL === -Infinity : Math.abs(gotL - wantL) <= tol.lse.atol + tol.lse.rtol * Math.abs(wantL);
          if (wantL !== -Infinity) worstL = Math.max(worstL, Math.abs(gotL - wantL));
          if (!okL) {
            bad++;
            first ||= `LSE[b${b} h${h} r${r}] = ${gotL}, reference ${wantL}`;
          }
        }
      }
    }
    assert.equal(bad, 0, `${kernel.instance.name}: ${bad} elements off; first: ${first}`);
    return `${kernel.instance.name}: max |err| O ${worstO.toExponential(2)} (atol ${tol.o.atol.toExponential(2)})${lse ? `, LSE ${worstL.toExponential(2)}` : ', no LSE'}`;
  } finally {
    for (const buf of [dq, dk, dvb, dout, dlse, dsq, dsk]) buf?.dispose();
  }
}

const cases: readonly (Case & { readonly label: string })[] = [
  { label: 'fp16 d128 no mask, b2 h2 s259, bhsd', dtype: 'fp16', d: 128, batch: 2, h: 2, sq: 259, sk: 259, layout: 'bhsd', mask: noMask },
  { label: 'fp16 d128 causal top-left, s1000, bshd', dtype: 'fp16', d: 128, batch: 1, h: 2, sq: 1000, sk: 1000, layout: 'bshd', mask: causalTopLeft },
  { label: 'bf16 d128 causal bottom-right sq259 < sk1000 (GQA 4:2)', dtype: 'bf16', d: 128, batch: 2, h: 4, hk: 2, sq: 259, sk: 1000, layout: 'bhsd', mask: causalBottomRight },
  { label: 'fp16 d128 causal bottom-right sq259 > sk100: the first 159 rows fully masked', dtype: 'fp16', d: 128, batch: 1, h: 2, sq: 259, sk: 100, layout: 'bhsd', mask: causalBottomRight },
  { label: 'bf16 d64 sliding window t:5,0 sq259 > sk100: rows from 105 on fully masked', dtype: 'bf16', d: 64, batch: 1, h: 2, sq: 259, sk: 100, layout: 'bshd', mask: slidingWindowMask(5, 0) },
  { label: 'fp16 d64 sliding window b:3,2 sq127 sk17: the first rows fully masked', dtype: 'fp16', d: 64, batch: 2, h: 2, sq: 127, sk: 17, layout: 'bhsd', mask: slidingWindowMask(3, 2, 'bottomRight') },
  { label: 'fp16 d128 sliding window t:17,5 s127', dtype: 'fp16', d: 128, batch: 1, h: 2, sq: 127, sk: 127, layout: 'bshd', mask: slidingWindowMask(17, 5) },
  { label: 'bf16 d128 varlen q 1,17,0,127,259 k 17,1,5,127,300, bshd, GQA 4:1', dtype: 'bf16', d: 128, batch: 5, h: 4, hk: 1, sq: [1, 17, 0, 127, 259], sk: [17, 1, 5, 127, 300], layout: 'bshd', mask: noMask },
  { label: 'fp16 d64 varlen causal bottom-right q 17,0,259 k 259,3,17, bhsd', dtype: 'fp16', d: 64, batch: 3, h: 2, sq: [17, 0, 259], sk: [259, 3, 17], layout: 'bhsd', mask: causalBottomRight },
  { label: 'bf16 d64 varlen window t:31,0 q 1000,1 k 1000,127, bshd, GQA 2:1', dtype: 'bf16', d: 64, batch: 2, h: 2, hk: 1, sq: [1000, 1], sk: [1000, 127], layout: 'bshd', mask: slidingWindowMask(31, 0) },
  { label: 'fp16 d64 no mask s1 sk1000', dtype: 'fp16', d: 64, batch: 1, h: 2, sq: 1, sk: 1000, layout: 'bhsd', mask: noMask },
  { label: 'fp16 d64 causal top-left s259, bshd', dtype: 'fp16', d: 64, batch: 2, h: 2, sq: 259, sk: 259, layout: 'bshd', mask: causalTopLeft },
  { label: 'bf16 d64 no mask sq17 sk127 (GQA 4:1), no LSE', dtype: 'bf16', d: 64, batch: 2, h: 4, hk: 1, sq: 17, sk: 127, layout: 'bhsd', mask: noMask, lse: false },
  { label: 'bf16 d128 no mask s1000, bshd, no LSE', dtype: 'bf16', d: 128, batch: 1, h: 2, sq: 1000, sk: 1000, layout: 'bshd', mask: noMask, lse: false },
  // Variants outside the catalog: Q re-read from shared memory each key tile (d 256), 4 warps (d 32).
  { label: 'variant bf16 d256 (Q in shared memory, 128×32 tiles) causal bottom-right sq259 sk300', dtype: 'bf16', d: 256, batch: 1, h: 2, sq: 259, sk: 300, layout: 'bhsd', mask: causalBottomRight, variant: { dtype: 'bf16', headDim: 256, headDimV: 256, tileM: 128, tileN: 32, qResidence: 'shared', mask: 'window' } },
  { label: 'variant fp16 d32 (4 warps, 64×64 tiles) no mask sq127 sk1000, bshd', dtype: 'fp16', d: 32, batch: 2, h: 2, sq: 127, sk: 1000, layout: 'bshd', mask: noMask, variant: { dtype: 'fp16', headDim: 32, headDimV: 32, tileM: 64, tileN: 64, qResidence: 'registers', mask: 'none' } },
];

test('kernel-fmha-fwd sm80/gpu: the cases cover every catalog instance', () => {
  const used = new Set(cases.map((c) => `${c.dtype} ${c.d} ${c.mask.kind === 'none' ? 'none' : 'window'}`));
  for (const i of FMHA_FWD_SM80_CATALOG) assert.ok(used.has(`${i.policy.dtype} ${i.policy.headDim} ${i.policy.mask}`), `no case runs ${i.name}`);
});

for (const c of cases) {
  test(`kernel-fmha-fwd sm80/gpu: ${c.label}`, gpu.options, async () => {
    console.log(await runCase(c));
  });
}
