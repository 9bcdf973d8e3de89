// The fmha-fwd benchmark suite: tilekit's sm_90a attention forward beside torch's
// scaled_dot_product_attention with each backend (flash = FlashAttention-2, cudnn, efficient) for the
// same shapes, in the same device command. Inputs are packed bhsd (torch's layout). Each case is
// validated on sampled query rows (every batch and head, rows spread over the sequence, the first
// and last included) against an fp64 softmax of the same fp16/bf16 inputs; timed with CUDA events
// around each launch, median of 25 after 5 warm-ups, as torch_reference.py times torch.
import { summarizeTimes } from '@tilekit/host';
import { attentionFwdTolerance, causalBottomRight, makeGenericAttentionMask, noMask } from '@tilekit/fmha';
import { checkFmhaFwdProblem, FMHA_FWD_CATALOG, FmhaFwdKernel, fmhaFwdOperandElements, fmhaFwdProblemFlops, formatFmhaFwdProblem, type CheckedFmhaFwdProblem, type FmhaFwdInstance, type FmhaFwdProblem } from '@tilekit/kernel-fmha-fwd';
import { decode, encode } from '@tilekit/numeric';
import { buildOncePerInstance, Device, encodeTensorMapTiled, NvccCompiler, timeLaunches, type Compiler } from '@tilekit/runtime';
import { tflopsOf } from '../flops.ts';
import type { BenchSuite, OurCaseResult, SuiteCase } from '../runSuite.ts';

const WARMUP = 5;
const REPEAT = 25;
/** Query rows checked per (batch, head). */
const ROWS_PER_HEAD = 3;

/** One benchmarked shape (BENCHMARKS.md's parameter names). */
export interface FmhaFwdBenchCase {
  readonly dtype: 'fp16' | 'bf16';
  readonly b: number;
  readonly h: number;
  readonly hk?: number;
  readonly sq: number;
  readonly sk: number;
  readonly d: number;
  readonly dv?: number;
  readonly causal: boolean;
}

/** The cases: b=2 h=16 s=8192 d ∈ {64, 128, 256} × {non-causal, causal} × {fp16, bf16}; s=16384 d=128; GQA h=32 h_k=8. */
export const FMHA_FWD_BENCH_CASES: readonly FmhaFwdBenchCase[] = [
  ...(['fp16', 'bf16'] as const).flatMap((dtype) => [64, 128, 256].flatMap((d) => [false, true].map((causal) => ({ dtype, b: 2, h: 16, sq: 8192, sk: 8192, d, causal })))),
  { dtype: 'fp16', b: 2, h: 16, sq: 16384, sk: 16384, d: 128, causal: false },
  { dtype: 'fp16', b: 2, h: 16, sq: 16384, sk: 16384, d: 128, causal: true },
  { dtype: 'fp16', b: 2, h: 32, hk: 8, sq: 8192, sk: 8192, d: 128, causal: false },
];

/** `fmha_fwd_b2_h16_s8192_d128_causal_fp16` (BENCHMARKS.md's example name). */
export function fmhaFwdCaseName(c: FmhaFwdBenchCase): string {
  const heads = c.hk !== undefined && c.hk !== c.h ? `h${c.h}_hk${c.hk}` : `h${c.h}`;
  const seq = c.sq === c.sk ? `s${c.sq}` : `sq${c.sq}_sk${c.sk}`;
  const dims = c.dv !== undefined && c.dv !== c.d ? `d${c.d}_dv${c.dv}` : `d${c.d}`;
  return `fmha_fwd_b${c.b}_${heads}_${seq}_${dims}${c.causal ? '_causal' : ''}_${c.dtype}`;
}

function problemOf(c: FmhaFwdBenchCase): CheckedFmhaFwdProblem {
  const p: FmhaFwdProblem = { dtype: c.dtype, batch: c.b, nheadQ: c.h, nheadK: c.hk ?? c.h, hdimQ: c.d, hdimV: c.dv ?? c.d, seqlenQ: c.sq, seqlenK: c.sk, mask: c.causal ? causalBottomRight : noMask };
  return checkFmhaFwdProblem(p);
}

/** The suite case: our params, and torch's SDPA of the same shape (is_causal = bottom-right when sq = sk). */
export function fmhaFwdSuiteCase(c: FmhaFwdBenchCase): SuiteCase {
  const params = { dtype: c.dtype, b: c.b, h: c.h, hk: c.hk ?? c.h, sq: c.sq, sk: c.sk, d: c.d, dv: c.dv ?? c.d, causal: c.causal };
  return { name: fmhaFwdCaseName(c), params, torch: { op: 'sdpa_fwd', params } };
}

/** Values in [-1, 1) on a 1/128 grid, exactly representable in `dtype` (xorshift, seeded). */
function randomBits(dtype: 'fp16' | 'bf16', count: number, seed: number): Uint16Array {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) table[i] = encode(dtype, (i - 128) / 128);
  const out = new Uint16Array(count);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = table[x & 255]!;
  }
  return out;
}

/** The instance of the catalog for a problem (the one-pass kernel of its dtype, head dims and mask kind). */
export function fmhaFwdInstanceFor(p: CheckedFmhaFwdProblem, catalog: readonly FmhaFwdInstance[] = FMHA_FWD_CATALOG): FmhaFwdInstance {
  const mask = p.mask.kind === 'none' ? 'none' : 'window';
  const found = catalog.find((i) => i.policy.dtype === p.dtype && i.policy.headDim === p.hdimQ && i.policy.headDimV === p.hdimV && i.policy.mask === mask && i.policy.splitKv === p.numSplits > 1);
  if (found === undefined) throw new Error(`no fmha-fwd instance for ${formatFmhaFwdProblem(p)}`);
  return found;
}

/** A `BenchSuite` for `runSuite` over `cases` on device 0. */
export function fmhaFwdSuite(cases: readonly FmhaFwdBenchCase[] = FMHA_FWD_BENCH_CASES, log: (line: string) => void = console.log): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const kernelFor = buildOncePerInstance((instance: FmhaFwdInstance) => FmhaFwdKernel.build(instance, { device, compiler }));
  const byName = new Map(cases.map((c) => [fmhaFwdCaseName(c), c]));
  return {
    name: 'fmha-fwd',
    cases: cases.map(fmhaFwdSuiteCase),
    async runOurs(sc: SuiteCase): Promise<OurCaseResult> {
      const c = byName.get(sc.name)!;
      const p = problemOf(c);
      const instance = fmhaFwdInstanceFor(p);
      const kernel = await kernelFor(instance);
      const elems = fmhaFwdOperandElements(p);
      const qBits = randomBits(p.dtype, elems.q, 11);
      const kBits = randomBits(p.dtype, elems.k, 23);
      const vBits = randomBits(p.dtype, elems.v, 37);
      const q = device.upload(qBits);
      const k = device.upload(kBits);
      const v = device.upload(vBits);
      const o = device.alloc(elems.o * 2).fill(0xff);
      try {
        const run = kernel.prepare(p, { q, k, v, o }, (m) => encodeTensorMapTiled(device, m));
        const ms = summarizeTimes(timeLaunches(device, run.launch, { warmup: WARMUP, repeat: REPEAT })).median;
        const out = new Uint16Array(o.copyToHost().buffer);
        const value = Float64Array.from({ length: 1 << 16 }, (_, bits) => decode(p.dtype, bits));
        const mask = makeGenericAttentionMask(p.mask, p.seqlenQ, p.seqlenK);
        const tol = attentionFwdTolerance({ dtype: p.dtype, seqlenK: p.seqlenK, hdimQ: p.hdimQ, scale: p.scale, maxAbsQ: 1, maxAbsK: 1, maxAbsV: 1 });
        let maxAbsErr = 0;
        let wrong = 0;
        let checked = 0;
        const s = new Float64Array(p.seqlenK);
        for (let b = 0; b < p.batch; b++) {
          for (let h = 0; h < p.nheadQ; h++) {
            const hk = Math.floor(h / (p.nheadQ / p.nheadK));
            for (let t = 0; t < ROWS_PER_HEAD; t++) {
              const i = t === 0 ? 0 : t === ROWS_PER_HEAD - 1 ? p.seqlenQ - 1 : (b * 7919 + h * 104729 + t * 1299709) % p.seqlenQ;
              const qo = b * p.qStrides.batch + h * p.qStrides.head + i * p.qStrides.row;
              let mx = -Infinity;
              for (let j = 0; j < p.seqlenK; j++) {
                if (mask.isMasked(i, j)) {
                  s[j] = -Infinity;
                  continue;
                }
                const ko = b * p.kStrides.batch + hk * p.kStrides.head + j * p.kStrides.row;
                let dot = 0;
                for (let x = 0; x < p.hdimQ; x++) dot += value[qBits[qo + x]!]! * value[kBits[ko + x]!]!;
                s[j] = dot * p.scale;
                mx = Math.max(mx, s[j]!);
              }
              let sum = 0;
              for (let j = 0; j < p.seqlenK; j++) {
                s[j] = s[j] === -Infinity ? 0 : Math.exp(s[j]! - mx);
                sum += s[j]!;
              }
              const oo = b * p.oStrides.batch + h * p.oStrides.head + i * p.oStrides.row;
              for (let x = 0; x < p.hdimV; x++) {
                let acc = 0;
                for (let j = 0; j < p.seqlenK; j++) if (s[j]! !== 0) acc += s[j]! * value[vBits[b * p.vStrides.batch + hk * p.vStrides.head + j * p.vStrides.row + x]!]!;
                const want = sum > 0 ? acc / sum : 0;
                const got = value[out[oo + x]!]!;
                const err = Math.abs(got - want);
                maxAbsErr = Number.isNaN(err) ? Infinity : Math.max(maxAbsErr, err);
                checked++;
                if (!(err <= tol.o.atol + tol.o.rtol * Math.abs(want))) {
                  if (wrong === 0) log(`  ${sc.name}: O[b${b} h${h} r${i} d${x}] = ${got}, want ${want}`);
                  wrong++;
                }
              }
            }
          }
        }
        const r = kernel.resources;
        return {
          ours: { ms, tflops: tflopsOf(fmhaFwdProblemFlops(p), ms), instance: instance.name },
          valid: wrong === 0,
          maxAbsErr,
          note: `${formatFmhaFwdProblem(p)}: ${checked} O elements of sampled rows vs an fp64 softmax, ${wrong} outside atol ${tol.o.atol.toExponential(2)} + rtol ${tol.o.rtol.toExponential(2)}; ${r.registers} registers, ${instance.sharedBytes} B dynamic smem, ${r.spillStores + r.spillLoads} B spills`,
        };
      } finally {
        device.synchronize();
        for (const buf of [q, k, v, o]) buf.dispose();
      }
    },
  };
}
