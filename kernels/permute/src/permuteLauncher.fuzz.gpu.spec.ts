// GPU replay of the permute launcher's invalid-argument fuzz (issue 17 item 4): 100 seeded invalid
// argument sets (the CI fuzz's generators, restricted to one compiled instance) through the real
// addon on device 0 — each a typed ArgumentError before any launch — then one valid permute whose
// output is checked bit for bit (the context is still usable).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { HostTensor } from '@tilekit/host';
import { Device } from '@tilekit/runtime';
import { countingCompiler, fuzzLine, gpu, gpuTestCompiler, replayInvalidCalls } from '@tilekit/runtime/testing';
import { selectPermuteInstance } from './permuteDispatch.ts';
import { PermuteKernel } from './permuteLauncher.ts';
import { elementBytes, permuteShapes, type PermuteProblem } from './permuteProblem.ts';
import { comparePermutedBits, fillPatternBits, storageBits } from './permuteReference.ts';
import { invalidPermuteCalls } from './testing/invalidPermuteArgs.ts';

const SEED = 0x17_04_01;
const VALID: PermuteProblem = { kind: 'bhsd2bshd', dtype: 'fp16', b: 2, h: 3, s: 37, d: 64 };

/** Permutes `problem` on seeded data and compares every element with the CPU reference. */
function runAndCheck(kernel: PermuteKernel, device: Device, problem: PermuteProblem): void {
  const input = HostTensor.empty(problem.dtype, permuteShapes(problem).input);
  fillPatternBits(storageBits(input), 17);
  const src = device.upload(input.bytes());
  const dst = device.alloc(input.byteLength).fill(0xff);
  try {
    kernel.run(problem, { src, dst });
    const out = dst.copyToHost();
    const bits = elementBytes(problem) === 2 ? new Uint16Array(out.buffer) : new Uint32Array(out.buffer);
    const result = comparePermutedBits(problem, storageBits(input), bits);
    assert.equal(result.mismatches, 0, `${result.mismatches} of ${result.elements} wrong, first ${JSON.stringify(result.first)}`);
  } finally {
    src.dispose();
    dst.dispose();
  }
}

test(
  'permute/gpu fuzz: 100 invalid argument sets are typed errors before any launch; then a valid permute is exact',
  gpu.options,
  async (t) => {
    const device = Device.open(0);
    const counter = { compiles: 0 };
    const compiler = countingCompiler(gpuTestCompiler('permute-fuzz'), counter);
    const instance = selectPermuteInstance(VALID);
    const kernel = await PermuteKernel.build(instance, { device, compiler });
    const sets = fc.sample(invalidPermuteCalls({ instance, kinds: ['bhsd2bshd', 'bshd2bhsd'], dtypes: ['fp16'] }), {
      numRuns: 100,
      seed: SEED,
    });
    const tally = await replayInvalidCalls({
      device,
      sets,
      compiles: () => counter.compiles,
      call: ({ call }, ranges) => kernel.run(call.problem as unknown as PermuteProblem, { src: ranges['src']!, dst: ranges['dst']! }),
    });
    t.diagnostic(fuzzLine('permute launcher (GPU)', tally));
    assert.equal(tally.typed, 100);
    runAndCheck(kernel, device, VALID);
    kernel.dispose();
  },
);
