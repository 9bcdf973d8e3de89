// The fmha-bwd benchmark suite: tilekit's sm_90a attention backward (dot_do_o + dq_dk_dv +
// convert_dq through the operator's runner and the unified workspace) beside torch's SDPA backward
// with each backend (flash = FlashAttention-2, cudnn, efficient; torch_reference.py's `sdpa_bwd`
// op, which times only torch.autograd.grad of a precomputed output). Shapes: b=2 h=16 s=8192,
// d ∈ {64, 128} × {causal, not}, fp16, atomic dQ; the same with deterministic dQ (its cost relative
// to atomic); one varlen batch. Inputs: Q, K, V, dO on a 1/128 grid in [-1, 1); O and LSE from our
// forward (kernel-fmha-fwd). Validation: sampled query rows of dQ and sampled keys of dK/dV against
// an fp64 computation from the same inputs and the forward's LSE.
import { attentionBwdTolerance, causalBottomRight, makeGenericAttentionMask, noMask, seqstartsOf } from '@tilekit/fmha';
import { summarizeTimes } from '@tilekit/host';
import { FmhaFwdRunner } from '@tilekit/kernel-fmha-fwd';
import { checkFmhaBwdProblem, FmhaBwdKernel, FmhaBwdRunner, fmhaBwdOperandElements, fmhaBwdProblemFlops, formatFmhaBwdProblem, type CheckedFmhaBwdProblem, type FmhaBwdAnyInstance } from '@tilekit/kernel-fmha-bwd';
import { decode } from '@tilekit/numeric';
import { buildOncePerInstance, Device, NvccCompiler, timeLaunches, type Compiler } from '@tilekit/runtime';
import { tflopsOf } from '../flops.ts';
import type { BenchSuite, OurCaseResult, SuiteCase } from '../runSuite.ts';
import { randomBits } from './randomBits.ts';

const WARMUP = 5;
const REPEAT = 25;

/** One benchmarked backward. */
export interface FmhaBwdBenchShape {
  readonly dtype: 'fp16' | 'bf16';
  readonly b: number;
  readonly h: number;
  readonly d: number;
  readonly causal: boolean;
  readonly deterministic: boolean;
  readonly s?: number;
  /** Varlen: rows per sequence (q = k). */
  readonly seqlens?: readonly number[];
}

/** Ragged lengths of the varlen case. */
export const FMHA_BWD_VARLEN_SEQLENS: readonly number[] = Object.freeze([8192, 4097, 2048, 1000, 259, 17, 1, 4096]);

/** `fmha_bwd_b2_h16_s8192_d128_causal_fp16[_det]`, `fmha_bwd_varlen8_h16_d128_fp16`. */
export function fmhaBwdBenchName(s: FmhaBwdBenchShape): string {
  const seq = s.seqlens !== undefined ? `varlen${s.seqlens.length}_h${s.h}` : `b${s.b}_h${s.h}_s${s.s}`;
  return `fmha_bwd_${seq}_d${s.d}${s.causal ? '_causal' : ''}_${s.dtype}${s.deterministic ? '_det' : ''}`;
}

/** The acceptance shapes (atomic), their deterministic variants, and the varlen case. */
export const FMHA_BWD_BENCH_SHAPES: readonly FmhaBwdBenchShape[] = Object.freeze([
  ...[false, true].flatMap((deterministic) => [64, 128].flatMap((d) => [false, true].map((causal): FmhaBwdBenchShape => ({ dtype: 'fp16', b: 2, h: 16, d, causal, deterministic, s: 8192 })))),
  ...[false, true].map((deterministic): FmhaBwdBenchShape => ({ dtype: 'fp16', b: FMHA_BWD_VARLEN_SEQLENS.length, h: 16, d: 128, causal: true, deterministic, seqlens: FMHA_BWD_VARLEN_SEQLENS })),
]);

/** The operator problem of a shape: bhsd, bottom-right causal (= top-left where sq = sk). */
export function fmhaBwdBenchProblem(s: FmhaBwdBenchShape): CheckedFmhaBwdProblem {
  const common = { dtype: s.dtype, batch: s.b, nheadQ: s.h, hdimQ: s.d, mask: s.causal ? causalBottomRight : noMask, deterministic: s.deterministic } as const;
  if (s.seqlens !== undefined) return checkFmhaBwdProblem({ ...common, seqstartQ: seqstartsOf(s.seqlens), seqstartK: seqstartsOf(s.seqlens) });
  return checkFmhaBwdProblem({ ...common, seqlenQ: s.s!, seqlenK: s.s! });
}

/** The suite case of a shape: torch's `sdpa_bwd` (varlen: its `seqlens`, looped over sequences). */
export function fmhaBwdSuiteCase(s: FmhaBwdBenchShape): SuiteCase {
  const common = { dtype: s.dtype, b: s.b, h: s.h, d: s.d, causal: s.causal, deterministic: s.deterministic };
  const params = s.seqlens !== undefined ? { ...common, seqlens: s.seqlens.join(',') } : { ...common, s: s.s! };
  const torch = s.seqlens !== undefined ? { ...common, seqlens: [...s.seqlens] } : { ...common, sq: s.s!, sk: s.s! };
  return { name: fmhaBwdBenchName(s), params, torch: { op: 'sdpa_bwd', params: torch } };
}

interface HostData {
  readonly q: Uint16Array;
  readonly k: Uint16Array;
  readonly v: Uint16Array;
  readonly o: Uint16Array;
  readonly dO: Uint16Array;
  readonly lse: Float32Array;
  readonly dQ: Uint16Array;
  readonly dK: Uint16Array;
  readonly dV: Uint16Array;
}

/**
 * Checks, per sequence and head, 2 query rows of dQ (first and last) and, per sequence and KV head,
 * 2 keys of dK and dV against fp64 sums from the inputs and the forward's LSE/O: P_ij = exp(scale·q_i·k_j
 * − LSE_i), D_i = dO_i·O_i, dS_ij = P_ij(dO_i·v_j − D_i); dQ_i = scale·Σ_j dS_ij k_j, dK_j = scale·Σ_i dS_ij q_i,
 * dV_j = Σ_i P_ij dO_i. Tolerance: `attentionBwdTolerance` with the inputs' bound 1.
 */
export function checkSampledGradients(p: CheckedFmhaBwdProblem, x: HostData): { checked: number; wrong: number; maxAbsErr: number; first: string } {
  const val = Float64Array.from({ length: 1 << 16 }, (_, b) => decode(p.dtype, b));
  const group = p.mode === 'group';
  const S = p.strides;
  const off = (s: { batch: number; head: number; row: number }, b: number, h: number, row: number): number => (group ? 0 : b * s.batch) + h * s.head + row * s.row;
  const tol = attentionBwdTolerance({ dtype: p.dtype, seqlenQ: p.seqlenQ, seqlenK: p.seqlenK, hdimQ: p.hdimQ, hdimV: p.hdimV, groupSize: p.nheadQ / p.nheadK, scale: p.scale, maxAbsQ: 1, maxAbsK: 1, maxAbsV: 1, maxAbsO: 1, maxAbsDo: 1 });
  let checked = 0;
  let wrong = 0;
  let maxAbsErr = 0;
  let first = '';
  const dot = (a: Uint16Array, ao: number, b: Uint16Array, bo: number, n: number): number => {
    let s = 0;
    for (let t = 0; t < n; t++) s += val[a[ao + t]!]! * val[b[bo + t]!]!;
    return s;
  };
  const compare = (what: string, bits: Uint16Array, at: number, want: Float64Array, t: { atol: number; rtol: number }): void => {
    want.forEach((w, j) => {
      const got = val[bits[at + j]!]!;
      const err = Math.abs(got - w);
      maxAbsErr = Number.isNaN(err) ? Infinity : Math.max(maxAbsErr, err);
      checked++;
      if (!(err <= t.atol + t.rtol * Math.abs(w))) {
        wrong++;
        first ||= `${what} d${j} = ${got}, want ${w}`;
      }
    });
  };
  const ratio = p.nheadQ / p.nheadK;
  for (let b = 0; b < p.batch; b++) {
    const q0 = group ? p.seqstartQ[b]! : 0;
    const k0 = group ? p.seqstartK[b]! : 0;
    const sq = group ? p.seqstartQ[b + 1]! - q0 : p.seqlenQ;
    const sk = group ? p.seqstartK[b + 1]! - k0 : p.seqlenK;
    if (sq === 0 || sk === 0) continue;
    const mask = makeGenericAttentionMask(p.mask, sq, sk);
    const lseAt = (h: number, i: number): number => (group ? 0 : b * p.lseStrides.batch) + h * p.lseStrides.head + q0 + i;
    const terms = (h: number, i: number, j: number): { pij: number; ds: number } => {
      const hk = Math.floor(h / ratio);
      const lse = x.lse[lseAt(h, i)]!;
      const pij = Math.exp(p.scale * dot(x.q, off(S.q, b, h, q0 + i), x.k, off(S.k, b, hk, k0 + j), p.hdimQ) - lse);
      const di = dot(x.dO, off(S.dO, b, h, q0 + i), x.o, off(S.o, b, h, q0 + i), p.hdimV);
      return { pij, ds: pij * (dot(x.dO, off(S.dO, b, h, q0 + i), x.v, off(S.v, b, hk, k0 + j), p.hdimV) - di) };
    };
    for (let h = 0; h < p.nheadQ; h++) {
      for (const i of new Set([0, sq - 1])) {
        const want = new Float64Array(p.hdimQ);
        const [lo, hi] = mask.keyRangeOfRow(i);
        for (let j = lo; j < hi; j++) {
          const { ds } = terms(h, i, j);
          const ko = off(S.k, b, Math.floor(h / ratio), k0 + j);
          for (let t = 0; t < p.hdimQ; t++) want[t] = want[t]! + p.scale * ds * val[x.k[ko + t]!]!;
        }
        compare(`dQ[b${b} h${h} r${i}]`, x.dQ, off(S.dQ, b, h, q0 + i), want, tol.dq);
      }
    }
    for (let hk = 0; hk < p.nheadK; hk++) {
      for (const j of new Set([0, Math.floor(sk / 2), sk - 1])) {
        const wk = new Float64Array(p.hdimQ);
        const wv = new Float64Array(p.hdimV);
        for (let h = hk * ratio; h < (hk + 1) * ratio; h++) {
          for (let i = 0; i < sq; i++) {
            const [lo, hi] = mask.keyRangeOfRow(i);
            if (j < lo || j >= hi) continue;
            const { pij, ds } = terms(h, i, j);
            const qo = off(S.q, b, h, q0 + i);
            const oo = off(S.dO, b, h, q0 + i);
            for (let t = 0; t < p.hdimQ; t++) wk[t] = wk[t]! + p.scale * ds * val[x.q[qo + t]!]!;
            for (let t = 0; t < p.hdimV; t++) wv[t] = wv[t]! + pij * val[x.dO[oo + t]!]!;
          }
        }
        compare(`dK[b${b} hk${hk} key${j}]`, x.dK, off(S.dK, b, hk, k0 + j), wk, tol.dk);
        compare(`dV[b${b} hk${hk} key${j}]`, x.dV, off(S.dV, b, hk, k0 + j), wv, tol.dv);
      }
    }
  }
  return { checked, wrong, maxAbsErr, first };
}

/** A `BenchSuite` for `runSuite` over `shapes` on device 0. */
export function fmhaBwdSuite(shapes: readonly FmhaBwdBenchShape[] = FMHA_BWD_BENCH_SHAPES, log: (line: string) => void = console.log): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const buildKernel = buildOncePerInstance((instance: FmhaBwdAnyInstance) => FmhaBwdKernel.build(instance, { device, compiler })) as <I extends FmhaBwdAnyInstance>(instance: I) => Promise<FmhaBwdKernel<I>>;
  const byName = new Map(shapes.map((s) => [fmhaBwdBenchName(s), s]));
  return {
    name: 'fmha-bwd',
    cases: shapes.map(fmhaBwdSuiteCase),
    async runOurs(sc: SuiteCase): Promise<OurCaseResult> {
      const shape = byName.get(sc.name)!;
      const p = fmhaBwdBenchProblem(shape);
      const elems = fmhaBwdOperandElements(p);
      const host = { q: randomBits(p.dtype, elems.q, 11), k: randomBits(p.dtype, elems.k, 23), v: randomBits(p.dtype, elems.v, 37), dO: randomBits(p.dtype, elems.dO, 41) };
      const group = p.mode === 'group' ? { seqstartQ: device.upload(new Int32Array(p.seqstartQ)), seqstartK: device.upload(new Int32Array(p.seqstartK)) } : {};
      const bufs = {
        q: device.upload(host.q),
        k: device.upload(host.k),
        v: device.upload(host.v),
        dO: device.upload(host.dO),
        o: device.alloc(Math.max(1, elems.o) * 2),
        lse: device.alloc(Math.max(1, elems.lse) * 4),
        dQ: device.alloc(Math.max(1, elems.dQ) * 2).fill(0xff),
        dK: device.alloc(Math.max(1, elems.dK) * 2).fill(0xff),
        dV: device.alloc(Math.max(1, elems.dV) * 2).fill(0xff),
        ...group,
      };
      const fwdProblem = { dtype: p.dtype, batch: p.batch, nheadQ: p.nheadQ, hdimQ: p.hdimQ, mask: p.mask, lse: true, ...(p.mode === 'group' ? { seqstartQ: p.seqstartQ, seqstartK: p.seqstartK } : { seqlenQ: p.seqlenQ, seqlenK: p.seqlenK }) };
      const fwd = await FmhaFwdRunner.create(fwdProblem, { device, compiler });
      const runner = await FmhaBwdRunner.create(p, { device, compiler, buildKernel });
      try {
        fwd.run({ q: bufs.q, k: bufs.k, v: bufs.v, o: bufs.o, lse: bufs.lse, ...group });
        const run = runner.prepare(bufs);
        const ms = summarizeTimes(timeLaunches(device, run.launch, { warmup: WARMUP, repeat: REPEAT })).median;
        const u16 = (b: { copyToHost(): Uint8Array }): Uint16Array => {
          const x = b.copyToHost();
          return new Uint16Array(x.buffer, x.byteOffset, x.byteLength / 2);
        };
        const lseBytes = bufs.lse.copyToHost();
        const r = checkSampledGradients(p, { ...host, o: u16(bufs.o), lse: new Float32Array(lseBytes.buffer, lseBytes.byteOffset, lseBytes.byteLength / 4), dQ: u16(bufs.dQ), dK: u16(bufs.dK), dV: u16(bufs.dV) });
        if (r.wrong > 0) log(`  ${sc.name}: ${r.first}`);
        const kernels = runner.resources.map((k) => `${k.instance}: ${k.resources.registers} registers, ${k.resources.spillStores + k.resources.spillLoads} B spills`).join('; ');
        return {
          ours: { ms, tflops: tflopsOf(fmhaBwdProblemFlops(p), ms), instance: runner.instances.map((i) => i.name).join('+') },
          valid: r.wrong === 0 && r.checked > 0,
          maxAbsErr: r.maxAbsErr,
          note: `${formatFmhaBwdProblem(p)}; workspace ${runner.workspaceSize.total} B: ${r.checked} sampled dQ/dK/dV values vs fp64, ${r.wrong} outside tolerance; ${kernels}`,
        };
      } finally {
        device.synchronize();
        for (const buf of Object.values(bufs)) buf.dispose();
        runner.dispose();
        fwd.dispose();
      }
    },
  };
}
