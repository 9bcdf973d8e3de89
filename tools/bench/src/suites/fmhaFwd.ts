// The fmha-fwd benchmark suite: tilekit's sm_90a attention forward (through the operator's runner:
// split-KV chosen by its heuristic, varlen through group mode) beside torch's
// scaled_dot_product_attention with each backend (flash = FlashAttention-2, cudnn, efficient) for the
// same shapes, in the same device command (torch_reference.py's `fmha_fwd` op: GQA through
// enable_gqa, varlen as jagged nested tensors). Inputs are packed bhsd (torch's layout). Each case
// is validated on sampled query rows (every batch and head, rows spread over each sequence, the
// first and last included) against an fp64 softmax of the same fp16/bf16 inputs; timed with CUDA
// events around each run, median of 25 after 5 warm-ups, as torch_reference.py times torch.
import { summarizeTimes } from '@tilekit/host';
import { attentionFwdTolerance, causalBottomRight, makeGenericAttentionMask, noMask, seqstartsOf } from '@tilekit/fmha';
import {
  checkFmhaFwdProblem,
  FmhaFwdCombineKernel,
  FmhaFwdKernel,
  FmhaFwdRunner,
  fmhaFwdOperandElements,
  fmhaFwdProblemFlops,
  formatFmhaFwdProblem,
  type CheckedFmhaFwdProblem,
  type FmhaFwdCombineInstance,
  type FmhaFwdInstance,
} from '@tilekit/kernel-fmha-fwd';
import { decode } from '@tilekit/numeric';
import { buildOncePerInstance, Device, NvccCompiler, timeLaunches, type Compiler } from '@tilekit/runtime';
import { tflopsOf } from '../flops.ts';
import type { BenchSuite, OurCaseResult, SuiteCase } from '../runSuite.ts';
import { randomBits } from './randomBits.ts';
import { FMHA_FWD_BENCH_CASES, type FmhaFwdBenchCase, type FmhaFwdBenchShape } from './fmhaFwdCases.ts';

const WARMUP = 5;
const REPEAT = 25;
/** Query rows checked per (sequence, head). */
const ROWS_PER_HEAD = 3;

/** The operator problem of a bench shape: bhsd, bottom-right causal (= top-left where sq = sk), split-KV 'auto'. */
export function fmhaFwdBenchProblem(s: FmhaFwdBenchShape): CheckedFmhaFwdProblem {
  const common = { dtype: s.dtype, batch: s.b, nheadQ: s.h, nheadK: s.hk, hdimQ: s.d, hdimV: s.dv, mask: s.causal ? causalBottomRight : noMask, splitKv: 'auto' } as const;
  if (s.seqlensQ !== undefined && s.seqlensK !== undefined) return checkFmhaFwdProblem({ ...common, seqstartQ: seqstartsOf(s.seqlensQ), seqstartK: seqstartsOf(s.seqlensK) });
  return checkFmhaFwdProblem({ ...common, seqlenQ: s.sq!, seqlenK: s.sk! });
}

/** The suite case: our params, and torch's `fmha_fwd` of the same shape. */
export function fmhaFwdSuiteCase(c: FmhaFwdBenchCase): SuiteCase {
  return { name: c.name, params: c.params, torch: c.torch };
}

/**
 * Checks sampled query rows of O against an fp64 softmax: for each sequence and head, the first,
 * the last and one more row in between (bit patterns in the problem's strides; group mode rows
 * offset by seqstart). Returns the count checked, the count outside tolerance, the worst error and
 * the first failure.
 */
export function checkSampledRows(p: CheckedFmhaFwdProblem, bits: { q: Uint16Array; k: Uint16Array; v: Uint16Array; o: Uint16Array }): { checked: number; wrong: number; maxAbsErr: number; first: string; atol: number; rtol: number } {
  const value = Float64Array.from({ length: 1 << 16 }, (_, b) => decode(p.dtype, b));
  const group = p.mode === 'group';
  const seqs = Array.from({ length: p.batch }, (_, b) => (group ? { sq: p.seqstartQ[b + 1]! - p.seqstartQ[b]!, sk: p.seqlensK[b]!, q0: p.seqstartQ[b]!, k0: p.seqstartK[b]! } : { sq: p.seqlenQ, sk: p.seqlenK, q0: 0, k0: 0 }));
  const tol = attentionFwdTolerance({ dtype: p.dtype, seqlenK: p.seqlenK, hdimQ: p.hdimQ, scale: p.scale, maxAbsQ: 1, maxAbsK: 1, maxAbsV: 1 });
  const offset = (s: { batch: number; head: number; row: number }, b: number, h: number, row: number): number => (group ? 0 : b * s.batch) + h * s.head + row * s.row;
  const ratio = p.nheadQ / p.nheadK;
  let checked = 0;
  let wrong = 0;
  let maxAbsErr = 0;
  let first = '';
  const s = new Float64Array(p.seqlenK);
  seqs.forEach(({ sq, sk, q0, k0 }, b) => {
    if (sq === 0) return;
    const mask = makeGenericAttentionMask(p.mask, sq, sk);
    for (let h = 0; h < p.nheadQ; h++) {
      const hk = Math.floor(h / ratio);
      const rows = [...new Set([0, sq - 1, (b * 7919 + h * 104729 + 1299709) % sq])].slice(0, ROWS_PER_HEAD);
      for (const i of rows) {
        const [lo, hi] = mask.keyRangeOfRow(i);
        const qo = offset(p.qStrides, b, h, q0 + i);
        let mx = -Infinity;
        for (let j = lo; j < hi; j++) {
          const ko = offset(p.kStrides, b, hk, k0 + j);
          let dot = 0;
          for (let x = 0; x < p.hdimQ; x++) dot += value[bits.q[qo + x]!]! * value[bits.k[ko + x]!]!;
          s[j] = dot * p.scale;
          mx = Math.max(mx, s[j]!);
        }
        let sum = 0;
        for (let j = lo; j < hi; j++) sum += s[j] = Math.exp(s[j]! - mx);
        const oo = offset(p.oStrides, b, h, q0 + i);
        for (let x = 0; x < p.hdimV; x++) {
          let acc = 0;
          for (let j = lo; j < hi; j++) acc += s[j]! * value[bits.v[offset(p.vStrides, b, hk, k0 + j) + x]!]!;
          const want = sum > 0 ? acc / sum : 0;
          const got = value[bits.o[oo + x]!]!;
          const err = Math.abs(got - want);
          maxAbsErr = Number.isNaN(err) ? Infinity : Math.max(maxAbsErr, err);
          checked++;
          if (!(err <= tol.o.atol + tol.o.rtol * Math.abs(want))) {
            first ||= `O[b${b} h${h} r${i} d${x}] = ${got}, want ${want}`;
            wrong++;
          }
        }
      }
    }
  });
  return { checked, wrong, maxAbsErr, first, atol: tol.o.atol, rtol: tol.o.rtol };
}

/** A `BenchSuite` for `runSuite` over `cases` on device 0. */
export function fmhaFwdSuite(cases: readonly FmhaFwdBenchCase[] = FMHA_FWD_BENCH_CASES, log: (line: string) => void = console.log): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const buildKernel = buildOncePerInstance((instance: FmhaFwdInstance) => FmhaFwdKernel.build(instance, { device, compiler }));
  const buildCombine = buildOncePerInstance((instance: FmhaFwdCombineInstance) => FmhaFwdCombineKernel.build(instance, { device, compiler }));
  const byName = new Map(cases.map((c) => [c.name, c]));
  return {
    name: 'fmha-fwd',
    cases: cases.map(fmhaFwdSuiteCase),
    async runOurs(sc: SuiteCase): Promise<OurCaseResult> {
      const c = byName.get(sc.name)!;
      const runner = await FmhaFwdRunner.create(fmhaFwdBenchProblem(c.shape), { device, compiler, buildKernel, buildCombine });
      const p = runner.problem;
      const elems = fmhaFwdOperandElements(p);
      const qBits = randomBits(p.dtype, elems.q, 11);
      const kBits = randomBits(p.dtype, elems.k, 23);
      const vBits = randomBits(p.dtype, elems.v, 37);
      const q = device.upload(qBits);
      const k = device.upload(kBits);
      const v = device.upload(vBits);
      const o = device.alloc(Math.max(1, elems.o) * 2).fill(0xff);
      const group = p.mode === 'group' ? { seqstartQ: device.upload(new Int32Array(p.seqstartQ)), seqstartK: device.upload(new Int32Array(p.seqstartK)) } : {};
      try {
        const run = runner.prepare({ q, k, v, o, ...group });
        const ms = summarizeTimes(timeLaunches(device, run.launch, { warmup: WARMUP, repeat: REPEAT })).median;
        const out = new Uint16Array(o.copyToHost().buffer);
        const r = checkSampledRows(p, { q: qBits, k: kBits, v: vBits, o: out });
        if (r.wrong > 0) log(`  ${sc.name}: ${r.first}`);
        const kernels = runner.resources.map((k) => `${k.instance}: ${k.resources.registers} registers, ${k.dynamicSharedBytes} B dynamic smem, ${k.resources.spillStores + k.resources.spillLoads} B spills`).join('; ');
        const splits = p.numSplits > 1 ? `, ${p.numSplits} key splits + combine` : '';
        return {
          ours: { ms, tflops: tflopsOf(fmhaFwdProblemFlops(p), ms), instance: runner.instances.map((i) => i.name).join('+') },
          valid: r.wrong === 0 && r.checked > 0,
          maxAbsErr: r.maxAbsErr,
          note: `${formatFmhaFwdProblem(p)}${splits}: ${r.checked} O elements of sampled rows vs an fp64 softmax, ${r.wrong} outside atol ${r.atol.toExponential(2)} + rtol ${r.rtol.toExponential(2)}; ${kernels}`,
        };
      } finally {
        device.synchronize();
        for (const buf of [q, k, v, o, ...Object.values(group)]) buf.dispose();
        runner.dispose();
      }
    },
  };
}
