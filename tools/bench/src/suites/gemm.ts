// The gemm benchmark suite: tilekit's sm_90a GEMM (warp-specialized TMA + wgmma) beside torch's
// `a @ b` for the same M, N, K and dtype. Each case is validated on a sample of C elements against
// an fp64 dot product on the host (a full CPU reference at 8192³ would take hours), within
// @tilekit/numeric's thresholds for K fp32 accumulations; timed with CUDA events around each launch,
// median of 25 after 5 warm-ups, as torch_reference.py times torch.
//
// Layouts (BLAS names, kernels/gemm's GEMM_LAYOUTS: first letter A, second B; t = row-major,
// n = column-major; C row-major): each case passes its layout to torch_reference.py, which builds
// the same storage as (transposed) views — A column-major is `randn(k, m).t()`, B column-major
// `randn(n, k).t()` — so cuBLAS gets the same transposes as ours. Torch's operands are packed (the
// ragged case's padded lda/ldb are ours only). Same C = A·B, same 2·M·N·K flops.
//
// One extra case runs the sm_80 family (cp.async + ldmatrix + mma.sync, built for sm_90a) by name at
// 4096³ (`gemm_fp16_4096x4096x4096_sm80`), so the speed of the Ampere-style kernel on Hopper is on
// record beside the wgmma one; it is not a tuning target.
import { summarizeTimes } from '@tilekit/host';
import {
  buildGemmKernel,
  checkGemmProblem,
  findAnyGemmInstance,
  formatGemmProblem,
  gemmOperandElements,
  gemmOperandStorage,
  gemmProblemFlops,
  GemmInstance,
  selectGemmInstance,
  type AnyGemmInstance,
  type CheckedGemmProblem,
  type GemmDType,
  type GemmLayoutName,
  type GemmProblem,
} from '@tilekit/kernel-gemm';
import { absoluteThreshold, ArgumentError, decode, relativeThreshold } from '@tilekit/numeric';
import { buildOncePerInstance, Device, NvccCompiler, timeLaunches, type Compiler } from '@tilekit/runtime';
import { tflopsOf } from '../flops.ts';
import type { BenchSuite, OurCaseResult, SuiteCase } from '../runSuite.ts';
import { randomBits } from './randomBits.ts';

const WARMUP = 5;
const REPEAT = 25;
/** C elements checked per case (corners and the last row/column included). */
const SAMPLES = 512;

/**
 * The benchmarked problems: fp16 and bf16 at 8192³, 4096³, 2048³, a ragged 4097×4095×4100 (K
 * rows padded to 4104 for TMA's 16-byte strides), a shallow 8192×8192×1024 and a skinny 16×8192×8192
 * (one M tile: no split-K yet, so few blocks), all `tn`; then 4096³ in each other layout (nn,
 * nt, tt: an M- or N-major operand).
 */
export const GEMM_BENCH_PROBLEMS: readonly GemmProblem[] = (['fp16', 'bf16'] as const).flatMap((dtype: GemmDType): GemmProblem[] => [
  { dtype, m: 8192, n: 8192, k: 8192 },
  { dtype, m: 4096, n: 4096, k: 4096 },
  { dtype, m: 2048, n: 2048, k: 2048 },
  { dtype, m: 4097, n: 4095, k: 4100, lda: 4104, ldb: 4104 },
  { dtype, m: 8192, n: 8192, k: 1024 },
  { dtype, m: 16, n: 8192, k: 8192 },
  ...(['nn', 'nt', 'tt'] as const).map((layout) => ({ dtype, m: 4096, n: 4096, k: 4096, layout })),
]);

/** A benchmarked problem, optionally run by a named catalog instance instead of the dispatched one. */
export interface GemmBenchCase {
  readonly problem: GemmProblem;
  /**
   * A catalog instance name, sm_90a or sm_80 family (the case is then named after the problem +
   * `_persistent` for a persistent instance, `_sm80` for an sm_80-family one, else + `_<instance>`).
   */
  readonly instance?: string;
}

/** The sm_80-family instance the suite records (its sm_90a build: the bench runs on the H200). */
export const GEMM_BENCH_SM80_INSTANCE = 'gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_90a';

/**
 * Every case of the suite: {@link GEMM_BENCH_PROBLEMS} dispatched, then the persistent-scheduler
 * instances by name at 8192³ (fp16 and bf16; torch's side is the same as the dispatched case's),
 * then the sm_80 family's fp16 `tn` kernel by name at 4096³ ({@link GEMM_BENCH_SM80_INSTANCE}).
 */
export const GEMM_BENCH_CASES: readonly GemmBenchCase[] = [
  ...GEMM_BENCH_PROBLEMS.map((problem) => ({ problem })),
  ...(['fp16', 'bf16'] as const).map((dtype) => ({ problem: { dtype, m: 8192, n: 8192, k: 8192 }, instance: `gemm_sm90_ws_${dtype}_tn_128x256x64_s4_v2_persistent` })),
  { problem: { dtype: 'fp16', m: 4096, n: 4096, k: 4096 }, instance: GEMM_BENCH_SM80_INSTANCE },
];

/** `_persistent`, `_sm80` or `_<name>`: what a named instance adds to its case name. */
function instanceSuffix(instance: AnyGemmInstance): string {
  if (!(instance instanceof GemmInstance)) return '_sm80';
  return instance.persistent ? '_persistent' : `_${instance.name}`;
}

/** `gemm_fp16_4096x4096x4096`, with `_<layout>` for layouts other than tn (existing case names unchanged). */
function caseName(p: GemmProblem): string {
  const layout = p.layout === undefined || p.layout === 'tn' ? '' : `_${p.layout}`;
  return `gemm_${p.dtype}_${p.m}x${p.n}x${p.k}${layout}`;
}

/** The suite case of a problem (and named instance): our params, and torch's `a @ b` of the same sizes and layout. */
export function gemmSuiteCase(p: GemmProblem, instance?: string): SuiteCase {
  const c = checkGemmProblem(p);
  let suffix = '';
  if (instance !== undefined) {
    const named = findAnyGemmInstance(instance);
    if (named === undefined) throw new ArgumentError('instance', 'must name a gemm catalog instance', instance);
    const reasons = named.unsupported(c);
    if (reasons.length > 0) throw new ArgumentError('instance', `${instance} cannot run ${formatGemmProblem(c)}: ${reasons.join('; ')}`, instance);
    suffix = instanceSuffix(named);
  }
  return {
    name: `${caseName(p)}${suffix}`,
    params: { dtype: c.dtype, layout: c.layout, m: c.m, n: c.n, k: c.k, lda: c.lda, ldb: c.ldb, ldc: c.ldc, ...(instance === undefined ? {} : { instance }) },
    torch: { op: 'gemm', params: { dtype: c.dtype, m: c.m, n: c.n, k: c.k, layout: c.layout } },
  };
}

function problemOf(c: SuiteCase): CheckedGemmProblem {
  const p = c.params as Record<string, number | string>;
  return checkGemmProblem({
    dtype: p['dtype'] as GemmDType,
    layout: p['layout'] as GemmLayoutName,
    m: p['m'] as number,
    n: p['n'] as number,
    k: p['k'] as number,
    lda: p['lda'] as number,
    ldb: p['ldb'] as number,
    ldc: p['ldc'] as number,
  });
}

/** Sample positions of C: the four corners, then pseudo-random (i, j). */
function samplePositions(p: CheckedGemmProblem): [number, number][] {
  const out: [number, number][] = [
    [0, 0],
    [0, p.n - 1],
    [p.m - 1, 0],
    [p.m - 1, p.n - 1],
  ];
  let x = 12345;
  while (out.length < SAMPLES) {
    x = (x * 1103515245 + 12345) >>> 0;
    const i = x % p.m;
    x = (x * 1103515245 + 12345) >>> 0;
    out.push([i, x % p.n]);
  }
  return out;
}

/** A `BenchSuite` for `runSuite` over `cases` on device 0. */
export function gemmSuite(cases: readonly GemmBenchCase[] = GEMM_BENCH_CASES, log: (line: string) => void = console.log): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const kernelFor = buildOncePerInstance((instance: AnyGemmInstance) => buildGemmKernel(instance, { device, compiler }));
  return {
    name: 'gemm',
    cases: cases.map((c) => gemmSuiteCase(c.problem, c.instance)),
    async runOurs(c: SuiteCase): Promise<OurCaseResult> {
      const problem = problemOf(c);
      const named = c.params['instance'];
      const instance = typeof named === 'string' ? findAnyGemmInstance(named)! : selectGemmInstance(problem);
      const kernel = await kernelFor(instance);
      const elems = gemmOperandElements(problem);
      const aBits = randomBits(problem.dtype, elems.a, 1 + problem.m);
      const bBits = randomBits(problem.dtype, elems.b, 7 + problem.n);
      const a = device.upload(aBits);
      const b = device.upload(bBits);
      const out = device.alloc(elems.c * 2).fill(0xff);
      try {
        const run = kernel.prepare(problem, { a, b, c: out });
        const ms = summarizeTimes(timeLaunches(device, run.launch, { warmup: WARMUP, repeat: REPEAT })).median;
        const cBits = new Uint16Array(out.copyToHost().buffer);
        // fp64 dot products of the sampled elements; thresholds from the largest sampled magnitude.
        const value = Float64Array.from({ length: 1 << 16 }, (_, bits) => decode(problem.dtype, bits));
        // A(i, kk) and B(kk, j) through the layout: row-major A / column-major B are K-contiguous.
        const storage = gemmOperandStorage(problem.layout);
        const [aRow, aK] = storage.a === 'row' ? [problem.lda, 1] : [1, problem.lda];
        const [bCol, bK] = storage.b === 'col' ? [problem.ldb, 1] : [1, problem.ldb];
        const samples = samplePositions(problem).map(([i, j]) => {
          let s = 0;
          for (let kk = 0; kk < problem.k; kk++) s += value[aBits[i * aRow + kk * aK]!]! * value[bBits[j * bCol + kk * bK]!]!;
          return { i, j, want: s, got: value[cBits[i * problem.ldc + j]!]! };
        });
        const max = samples.reduce((x, s) => Math.max(x, Math.abs(s.want)), 0);
        const rtol = relativeThreshold(problem.dtype, problem.dtype, 'fp32', problem.k);
        const atol = absoluteThreshold(problem.dtype, problem.dtype, 'fp32', max, problem.k);
        let maxAbsErr = 0;
        let wrong = 0;
        for (const s of samples) {
          const err = Math.abs(s.got - s.want);
          maxAbsErr = Number.isNaN(err) ? Infinity : Math.max(maxAbsErr, err);
          if (!(err <= atol + rtol * Math.abs(s.want))) {
            if (wrong === 0) log(`  ${c.name}: C(${s.i}, ${s.j}) = ${s.got}, want ${s.want} (atol ${atol}, rtol ${rtol})`);
            wrong++;
          }
        }
        const r = kernel.resources;
        return {
          ours: { ms, tflops: tflopsOf(gemmProblemFlops(problem), ms), instance: instance.name },
          valid: wrong === 0,
          maxAbsErr,
          note: `${formatGemmProblem(problem)}: ${SAMPLES} sampled C elements vs fp64 dot products, ${wrong} outside atol ${atol.toExponential(2)} + rtol ${rtol.toExponential(2)}; ${r.registers} registers, ${instance.sharedBytes} B dynamic smem, ${r.spillStores + r.spillLoads} B spills`,
        };
      } finally {
        device.synchronize();
        a.dispose();
        b.dispose();
        out.dispose();
      }
    },
    dispose(): void {
      for (const k of kernelFor.builds()) void k.then((kernel) => kernel.dispose());
    },
  };
}
