// The gemm benchmark suite: tilekit's sm_90a GEMM (warp-specialized TMA + wgmma; and one sm_80-family
// case) beside torch's `a @ b` on the same inputs. The torch reference server draws A and B (full
// entropy, REFERENCE_OPS.md's `gemm` op) and writes them packed; ours loads them at its own pitches,
// times back-to-back launches (timing/measureLaunches, the same plan as torch's) and writes C packed
// for the server to compare with its fp32 reference (validation is central: validate/). The cases
// are in gemmCases.ts.
import {
  buildGemmKernel,
  formatGemmProblem,
  gemmProblemFlops,
  type AnyGemmInstance,
  type AnyGemmKernel,
  type CheckedGemmProblem,
} from '@tilekit/kernel-gemm';
import { buildOncePerInstance, Device, NvccCompiler, type Compiler, type DeviceBuffer } from '@tilekit/runtime';
import type { BenchSuite, CaseContext, OurCaseResult, SuiteCase } from '../benchSuite.ts';
import { tflopsOf } from '../flops.ts';
import { measureLaunches, type LaunchTiming } from '../timing/measureLaunches.ts';
import { GEMM_BENCH_CASES, gemmCaseInstance, gemmCaseProblem, gemmSuiteCase, type GemmBenchCase } from './gemmCases.ts';
import { gemmOperandRows, packedShape, padRows, unpadRows, type PitchedRows } from './gemmOperandRows.ts';
import { readCaseInput } from './readCaseInput.ts';

/** fp16 and bf16. */
const ELEMENT_BYTES = 2;

/** Input `name` (packed in its file) uploaded with its rows at ours' pitch. */
function uploadOperand(device: Device, ctx: CaseContext, name: 'a' | 'b', p: CheckedGemmProblem, rows: PitchedRows): DeviceBuffer {
  return device.upload(padRows(readCaseInput(ctx, name, p.dtype, packedShape(rows)), rows, ELEMENT_BYTES));
}

/** Our resources, as the record's note shows them. */
function resourceNote(p: CheckedGemmProblem, instance: AnyGemmInstance, kernel: AnyGemmKernel): string {
  const r = kernel.resources;
  return `${formatGemmProblem(p)}: ${r.registers} registers, ${instance.sharedBytes} B dynamic smem, ${r.spillStores + r.spillLoads} B spills`;
}

/** Runs the case on `a`, `b` into `c` (C rows at `rows.c`), timed; C is downloaded after the timed launches. */
function runAndTime(
  device: Device,
  kernel: AnyGemmKernel,
  p: CheckedGemmProblem,
  buffers: { a: DeviceBuffer; b: DeviceBuffer; c: DeviceBuffer },
  ctx: CaseContext,
): { readonly timing: LaunchTiming; readonly c: Uint8Array } {
  const run = kernel.prepare(p, buffers);
  const timing = measureLaunches(device, run.launch, ctx.timing);
  // The output of the last timed launch: a launch that depends on state left by the previous one shows here.
  return { timing, c: buffers.c.copyToHost() };
}

/** A `BenchSuite` for `runSuite` over `cases` on device 0. */
export function gemmSuite(cases: readonly GemmBenchCase[] = GEMM_BENCH_CASES): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const kernelFor = buildOncePerInstance((instance: AnyGemmInstance) => buildGemmKernel(instance, { device, compiler }));
  return {
    name: 'gemm',
    cases: cases.map((c) => gemmSuiteCase(c.problem, c.instance)),
    async runOurs(c: SuiteCase, ctx: CaseContext): Promise<OurCaseResult> {
      const problem = gemmCaseProblem(c);
      const instance = gemmCaseInstance(c, problem);
      const kernel = await kernelFor(instance);
      const rows = gemmOperandRows(problem);
      const buffers: { a?: DeviceBuffer; b?: DeviceBuffer; c?: DeviceBuffer } = {};
      try {
        buffers.a = uploadOperand(device, ctx, 'a', problem, rows.a);
        buffers.b = uploadOperand(device, ctx, 'b', problem, rows.b);
        // NaN bytes (0xffff in fp16 and bf16): an element the kernel never writes fails the check.
        buffers.c = device.alloc(rows.c.rows * rows.c.pitch * ELEMENT_BYTES, 'gemm c').fill(0xff);
        const { timing, c: cBytes } = runAndTime(device, kernel, problem, { a: buffers.a, b: buffers.b, c: buffers.c }, ctx);
        const output = ctx.writeTensor('c', problem.dtype, packedShape(rows.c), unpadRows(cBytes, rows.c, ELEMENT_BYTES));
        return {
          ours: { ...timing, tflops: tflopsOf(gemmProblemFlops(problem), timing.ms), instance: instance.name },
          outputs: { c: output },
          note: resourceNote(problem, instance, kernel),
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
