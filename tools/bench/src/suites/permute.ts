// The permute benchmark suite: tilekit's permute kernels beside torch's `.permute(...).contiguous()`
// and torch's device-to-device copy of the same bytes, on ≥ 1 GiB tensors. The torch reference
// server draws the input (full entropy, REFERENCE_OPS.md's `permute` op) and writes it packed; ours
// loads it, times back-to-back launches (timing/measureLaunches, the same plan as torch's) and writes
// y packed for the server to compare bit for bit (validation is central: validate/).
import { gbPerSec } from '@tilekit/host';
import {
  formatPermuteProblem,
  permuteBytesMoved,
  PermuteKernel,
  permuteShapes,
  selectPermuteInstance,
  type PermuteInstance,
  type PermuteProblem,
} from '@tilekit/kernel-permute';
import { buildOncePerInstance, Device, NvccCompiler, type Compiler, type DeviceBuffer } from '@tilekit/runtime';
import type { BenchSuite, CaseContext, OurCaseResult, SuiteCase } from '../benchSuite.ts';
import { measureLaunches } from '../timing/measureLaunches.ts';
import { caseSeed } from './caseSeed.ts';
import { readCaseInput } from './readCaseInput.ts';

/** The benchmarked problems: 1 GiB per tensor. */
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

/** The suite case of a problem: our params, and the server's `permute` of the same input (shape "AxB…", perm "i,j,…"). */
export function permuteSuiteCase(p: PermuteProblem): SuiteCase {
  const { input, axes } = permuteShapes(p);
  const params =
    p.kind === 'transpose'
      ? { kind: p.kind, dtype: p.dtype, m: p.m, n: p.n }
      : { kind: p.kind, dtype: p.dtype, b: p.b, h: p.h, s: p.s, d: p.d };
  const name = caseName(p);
  return {
    name,
    params,
    reference: { op: 'permute', params: { dtype: p.dtype, shape: input.join('x'), perm: axes.join(',') } },
    seed: caseSeed(name),
    precision: { y: 'exact' },
    errorBaselines: ['torch-contiguous'],
  };
}

/** The problem a case's params describe. */
export function permuteCaseProblem(c: SuiteCase): PermuteProblem {
  const p = c.params as Record<string, string | number>;
  if (p['kind'] === 'transpose')
    return { kind: 'transpose', dtype: p['dtype'] as PermuteProblem['dtype'], m: p['m'] as number, n: p['n'] as number };
  return {
    kind: p['kind'] as 'bhsd2bshd',
    dtype: p['dtype'] as PermuteProblem['dtype'],
    b: p['b'] as number,
    h: p['h'] as number,
    s: p['s'] as number,
    d: p['d'] as number,
  };
}

/** Our resources, as the record's note shows them. */
function resourceNote(kernel: PermuteKernel): string {
  const r = kernel.resources;
  return `${r.registers} registers, ${r.sharedBytes} B smem, ${r.spillStores + r.spillLoads} B spills`;
}

/** A `BenchSuite` for `runSuite` over `problems` on device 0. */
export function permuteSuite(problems: readonly PermuteProblem[] = PERMUTE_BENCH_PROBLEMS): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const kernelFor = buildOncePerInstance((instance: PermuteInstance) => PermuteKernel.build(instance, { device, compiler }));
  return {
    name: 'permute',
    cases: problems.map(permuteSuiteCase),
    async runOurs(c: SuiteCase, ctx: CaseContext): Promise<OurCaseResult> {
      const problem = permuteCaseProblem(c);
      const instance = selectPermuteInstance(problem);
      const kernel = await kernelFor(instance);
      const shapes = permuteShapes(problem);
      const buffers: { src?: DeviceBuffer; dst?: DeviceBuffer } = {};
      try {
        buffers.src = device.upload(readCaseInput(ctx, 'x', problem.dtype, shapes.input));
        // All-ones bytes (NaN in every float dtype): an element the kernel never writes fails the exact check.
        buffers.dst = device.alloc(buffers.src.bytes, 'permute y').fill(0xff);
        const run = kernel.prepare(problem, { src: buffers.src, dst: buffers.dst });
        const timing = measureLaunches(device, run.launch, ctx.timing);
        // The output of the last timed launch.
        const y = ctx.writeTensor('y', problem.dtype, shapes.output, buffers.dst.copyToHost());
        return {
          ours: { ...timing, gbps: gbPerSec(permuteBytesMoved(problem), timing.ms), instance: instance.name },
          outputs: { y },
          note: resourceNote(kernel),
        };
      } finally {
        device.synchronize();
        for (const buffer of Object.values(buffers)) buffer.dispose();
      }
    },
    dispose(): void {
      for (const k of kernelFor.builds()) void k.then((kernel) => kernel.dispose());
    },
  };
}
