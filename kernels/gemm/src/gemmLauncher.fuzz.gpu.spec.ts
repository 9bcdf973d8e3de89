// GPU replay of the GEMM launcher's invalid-argument fuzz (issue 17 item 4): 100 seeded invalid
// argument sets (the CI fuzz's generators, restricted to one compiled sm_90a instance) through the
// real addon on device 0 — each a typed ArgumentError before any launch — then one valid GEMM whose
// C is checked against the CPU reference (the context is still usable).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { referenceGemm } from '@tilekit/gemm';
import { absoluteThreshold, decodeArray, relativeThreshold } from '@tilekit/numeric';
import { Device } from '@tilekit/runtime';
import { countingCompiler, fuzzLine, gpu, gpuTestCompiler, replayInvalidCalls } from '@tilekit/runtime/testing';
import { selectGemmInstance } from './gemmDispatch.ts';
import { GemmKernel, type GemmBuffers } from './gemmLauncher.ts';
import { checkGemmProblem, gemmOperandElements, gemmReferenceArgs, type GemmProblem } from './gemmProblem.ts';
import { gemmTestValues } from './testing/gemmTestValues.ts';
import { invalidGemmCalls } from './testing/invalidGemmArgs.ts';

const SEED = 0x17_04_02;
const VALID: GemmProblem = { dtype: 'fp16', layout: 'tn', m: 130, n: 72, k: 64 };

/** Runs VALID and checks every element of C against referenceGemm (fp32 accumulation thresholds). */
function runAndCheck(kernel: GemmKernel, device: Device): void {
  const p = checkGemmProblem(VALID);
  const elems = gemmOperandElements(p);
  const a = gemmTestValues(elems.a, p.dtype, 31);
  const b = gemmTestValues(elems.b, p.dtype, 17);
  const want = referenceGemm(gemmReferenceArgs(p, a.values, b.values));
  const [da, db, dc] = [device.upload(a.bits), device.upload(b.bits), device.alloc(elems.c * 2).fill(0xff)];
  try {
    kernel.run(VALID, { a: da, b: db, c: dc });
    const got = decodeArray(p.dtype, new Uint16Array(dc.copyToHost().buffer));
    const max = want.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    const [rtol, atol] = [relativeThreshold(p.dtype, p.dtype, 'fp32', p.k), absoluteThreshold(p.dtype, p.dtype, 'fp32', max, p.k)];
    const bad = want.findIndex((w, i) => !(Math.abs(got[i]! - w) <= atol + rtol * Math.abs(w)));
    assert.equal(bad, -1, `C[${bad}] = ${got[bad]}, reference ${want[bad]}`);
  } finally {
    for (const x of [da, db, dc]) x.dispose();
  }
}

test(
  'gemm/gpu fuzz: 100 invalid argument sets are typed errors before any launch; then a valid GEMM is correct',
  gpu.options,
  async (t) => {
    const device = Device.open(0);
    const counter = { compiles: 0 };
    const compiler = countingCompiler(gpuTestCompiler('gemm-fuzz'), counter);
    const instance = selectGemmInstance(VALID);
    const kernel = await GemmKernel.build(instance, { device, compiler });
    const sets = fc.sample(invalidGemmCalls({ family: 'sm90a', instance, dtypes: ['fp16'], layouts: ['tn'], epilogues: false }), {
      numRuns: 100,
      seed: SEED,
    });
    const tally = await replayInvalidCalls({
      device,
      sets,
      compiles: () => counter.compiles,
      call: ({ call }, ranges) => kernel.run(call.problem as unknown as GemmProblem, ranges as unknown as GemmBuffers),
    });
    t.diagnostic(fuzzLine('gemm sm90a launcher (GPU)', tally));
    assert.equal(tally.typed, 100);
    runAndCheck(kernel, device);
    kernel.dispose();
  },
);
