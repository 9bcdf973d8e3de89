// The permute benchmark suite: tilekit's permute kernels beside torch's `.permute(...).contiguous()`
// and torch's device-to-device copy of the same bytes, on ≥ 1 GiB tensors. Each case is validated
// bit for bit against the input on the host (every element), and timed with CUDA events around
// each launch: median of 25 after 5 warm-ups, as torch_reference.py times torch.
import { gbPerSec, summarizeTimes } from '@tilekit/host';
import {
  comparePermutedBits,
  elementBytes,
  fillPatternBits,
  formatPermuteProblem,
  permuteBytesMoved,
  permuteElements,
  PermuteKernel,
  permuteShapes,
  selectPermuteInstance,
  type PermuteInstance,
  type PermuteProblem,
} from '@tilekit/kernel-permute';
import { buildOncePerInstance, Device, NvccCompiler, timeLaunches, type Compiler } from '@tilekit/runtime';
import type { BenchSuite, OurCaseResult, SuiteCase } from '../runSuite.ts';

const WARMUP = 5;
const REPEAT = 25;

/** The benchmarked problems: 1 GiB (or 2) per tensor. */
export const PERMUTE_BENCH_PROBLEMS: readonly PermuteProblem[] = [
  { kind: 'bhsd2bshd', dtype: 'fp16', b: 16, h: 32, s: 8192, d: 128 },
  { kind: 'bshd2bhsd', dtype: 'fp16', b: 16, h: 32, s: 8192, d: 128 },
  { kind: 'bhsd2bshd', dtype: 'fp16', b: 16, h: 32, s: 16384, d: 64 },
  { kind: 'bhsd2bshd', dtype: 'bf16', b: 16, h: 32, s: 8192, d: 128 },
  { kind: 'bshd2bhsd', dtype: 'bf16', b: 16, h: 32, s: 8192, d: 128 },
  { kind: 'bhsd2bshd', dtype: 'fp32', b: 8, h: 32, s: 8192, d: 128 },
  { kind: 'bshd2bhsd', dtype: 'fp32', b: 8, h: 32, s: 8192, d: 128 },
  { kind: 'transpose', dtype: 'fp16', m: 16384, n: 32768 },
  { kind: 'transpose', dtype: 'bf16', m: 32768, n: 16384 },
  { kind: 'transpose', dtype: 'fp32', m: 16384, n: 16384 },
];

function caseName(p: PermuteProblem): string {
  return formatPermuteProblem(p).replaceAll(' ', '_');
}

/** The suite case of a problem: our params, and torch's permute of the same input. */
export function permuteSuiteCase(p: PermuteProblem): SuiteCase {
  const { input, axes } = permuteShapes(p);
  const params = p.kind === 'transpose' ? { kind: p.kind, dtype: p.dtype, m: p.m, n: p.n } : { kind: p.kind, dtype: p.dtype, b: p.b, h: p.h, s: p.s, d: p.d };
  return { name: caseName(p), params, torch: { op: 'permute', params: { dtype: p.dtype, shape: input.join('x'), perm: axes.join(',') } } };
}

function problemOf(c: SuiteCase): PermuteProblem {
  const p = c.params as Record<string, string | number>;
  if (p['kind'] === 'transpose') return { kind: 'transpose', dtype: p['dtype'] as PermuteProblem['dtype'], m: p['m'] as number, n: p['n'] as number };
  return { kind: p['kind'] as 'bhsd2bshd', dtype: p['dtype'] as PermuteProblem['dtype'], b: p['b'] as number, h: p['h'] as number, s: p['s'] as number, d: p['d'] as number };
}

/** A `BenchSuite` for `runSuite` over `problems` on device 0. */
export function permuteSuite(problems: readonly PermuteProblem[] = PERMUTE_BENCH_PROBLEMS, log: (line: string) => void = console.log): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const kernelFor = buildOncePerInstance((instance: PermuteInstance) => PermuteKernel.build(instance, { device, compiler }));
  return {
    name: 'permute',
    cases: problems.map(permuteSuiteCase),
    async runOurs(c: SuiteCase): Promise<OurCaseResult> {
      const problem = problemOf(c);
      const instance = selectPermuteInstance(problem);
      const kernel = await kernelFor(instance);
      const n = permuteElements(problem);
      const input = fillPatternBits(elementBytes(problem) === 2 ? new Uint16Array(n) : new Uint32Array(n), n);
      const src = device.upload(input);
      const dst = device.alloc(input.byteLength).fill(0);
      try {
        // Validated once; the timed loop only enqueues (as torch's loop only calls the op).
        const run = kernel.prepare(problem, { src, dst });
        const ms = summarizeTimes(timeLaunches(device, run.launch, { warmup: WARMUP, repeat: REPEAT })).median;
        const out = dst.copyToHost();
        const bits = elementBytes(problem) === 2 ? new Uint16Array(out.buffer) : new Uint32Array(out.buffer);
        const check = comparePermutedBits(problem, input, bits);
        if (check.mismatches > 0) log(`  ${c.name}: ${check.mismatches} of ${check.elements} elements wrong, first ${JSON.stringify(check.first)}`);
        const r = kernel.resources;
        return {
          ours: { ms, gbps: gbPerSec(permuteBytesMoved(problem), ms), instance: instance.name },
          valid: check.mismatches === 0,
          maxAbsErr: 0,
          note: `bit-exact check of all ${check.elements} elements: ${check.mismatches} wrong; ${r.registers} registers, ${r.sharedBytes} B smem, ${r.spillStores + r.spillLoads} B spills`,
        };
      } finally {
        device.synchronize();
        src.dispose();
        dst.dispose();
      }
    },
    dispose(): void {
      for (const k of kernelFor.builds()) void k.then((kernel) => kernel.dispose());
    },
  };
}
