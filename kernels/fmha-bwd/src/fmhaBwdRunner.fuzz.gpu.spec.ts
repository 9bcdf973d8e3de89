// GPU replay of the attention-backward runner's invalid-argument fuzz (issue 17 item 4): 100 seeded
// invalid argument sets (the CI fuzz's generators, restricted to fp16 d128 without mask or
// determinism: one compiled triple runs them all) through `FmhaBwdRunner.create` + `run` on device 0
// — each a typed ArgumentError before any launch — then one valid backward whose dQ, dK and dV are
// checked against the CPU reference (the context is still usable).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { randomBits16 } from '@tilekit/host';
import { buildOncePerInstance, Device, type Compiler, type DeviceBuffer } from '@tilekit/runtime';
import { countingCompiler, fuzzLine, gpu, gpuTestCompiler, replayInvalidCalls } from '@tilekit/runtime/testing';
import {
  checkFmhaBwdProblem,
  fmhaBwdOperandElements,
  formatFmhaBwdProblem,
  type FmhaBwdProblem,
  compareFmhaBwd,
  fmhaBwdReference,
} from '@tilekit/fmha';
import {
  FmhaBwdKernel,
  FmhaBwdRunner,
  type FmhaBwdAnyInstance,
  type FmhaBwdKernelInstance,
  type FmhaBwdRunnerBuffers,
} from './fmhaBwdRunner.ts';
import { invalidFmhaBwdCalls } from './testing/invalidFmhaBwdArgs.ts';

const SEED = 0x17_04_04;
const SETS = 100;
const RUN_BUFFERS = ['q', 'k', 'v', 'o', 'dO', 'lse', 'dQ', 'dK', 'dV', 'seqstartQ', 'seqstartK'];
const VALID: FmhaBwdProblem = { dtype: 'fp16', batch: 2, nheadQ: 2, hdimQ: 128, seqlenQ: 130, seqlenK: 190 };

const counter = { compiles: 0 };

/** nvcc (through the spec's cache), counting compile requests. */
const countingNvcc = (): Compiler => countingCompiler(gpuTestCompiler('fmha-bwd-fuzz'), counter);

/** Runs VALID through `runner` and checks dQ, dK and dV against fmhaBwdReference. */
function runAndCheck(runner: FmhaBwdRunner, device: Device): void {
  const p = checkFmhaBwdProblem(VALID);
  const el = fmhaBwdOperandElements(p);
  const data = {
    q: randomBits16(p.dtype, el.q, 1),
    k: randomBits16(p.dtype, el.k, 2),
    v: randomBits16(p.dtype, el.v, 3),
    dO: randomBits16(p.dtype, el.dO, 4),
  };
  const ref = fmhaBwdReference(p, data);
  const bufs = {
    q: device.upload(data.q),
    k: device.upload(data.k),
    v: device.upload(data.v),
    o: device.upload(ref.o),
    dO: device.upload(data.dO),
    lse: device.upload(ref.lse),
    dQ: device.alloc(el.dQ * 2).fill(0xff),
    dK: device.alloc(el.dK * 2).fill(0xff),
    dV: device.alloc(el.dV * 2).fill(0xff),
  };
  const bits = (b: DeviceBuffer): Uint16Array => new Uint16Array(b.copyToHost().buffer);
  try {
    runner.run(bufs);
    for (const r of compareFmhaBwd(p, ref, { dQ: bits(bufs.dQ), dK: bits(bufs.dK), dV: bits(bufs.dV) }))
      assert.equal(r.wrong, 0, `${formatFmhaBwdProblem(p)}: ${r.tensor} ${r.wrong}/${r.checked} elements off; first: ${r.first}`);
  } finally {
    for (const b of Object.values(bufs)) b.dispose();
  }
}

test(
  'fmha-bwd/gpu fuzz: 100 invalid argument sets are typed errors before any launch; then a valid backward is correct',
  gpu.options,
  async (t) => {
    const device = Device.open(0);
    const compiler = countingNvcc();
    const memo = buildOncePerInstance((i: FmhaBwdAnyInstance) => FmhaBwdKernel.build(i, { device, compiler }));
    const buildKernel = memo as unknown as <I extends FmhaBwdKernelInstance>(instance: I) => Promise<FmhaBwdKernel<I>>;
    // Built (not launched) first: the replays below reuse its kernels.
    const valid = await FmhaBwdRunner.create(VALID, { device, compiler, buildKernel });
    const sets = fc.sample(
      invalidFmhaBwdCalls({ dtypes: ['fp16'], hdims: [128], masks: ['0'], deterministic: [false], smCount: device.smCount }),
      { numRuns: SETS, seed: SEED },
    );
    const tally = await replayInvalidCalls({
      device,
      sets,
      compiles: () => counter.compiles,
      rules: { checkedAfterBuild: RUN_BUFFERS },
      call: async ({ call }, ranges) => {
        const { workspace, ...tensors } = ranges;
        const runner = await FmhaBwdRunner.create(call.problem as unknown as FmhaBwdProblem, {
          device,
          compiler,
          buildKernel,
          ...(workspace === undefined ? {} : { workspace: workspace as DeviceBuffer }),
        });
        try {
          runner.run(tensors as unknown as FmhaBwdRunnerBuffers);
        } finally {
          runner.dispose();
        }
      },
    });
    t.diagnostic(fuzzLine('fmha-bwd runner (GPU)', tally));
    assert.equal(tally.typed, SETS);
    runAndCheck(valid, device);
    valid.dispose();
    for (const k of await Promise.all(memo.builds())) k.dispose();
  },
);
