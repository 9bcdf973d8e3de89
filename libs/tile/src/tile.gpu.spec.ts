// GPU tests of the tile library (node:test; `npm run test:gpu`, or tools/device on the GPU machine):
// every program of testing/gpuParity.ts — load/store round trips through CK's coalesced fp16
// load (wave32, 16-byte vectors), mma.sync C and A fragment distributions, a fixed irregular encoding
// (R replicas, digits 3 and 5, 24 threads), ragged windows partly outside the tensor (runtime
// lengths and origin; odd length), fp16 staging through padded and xor-swizzled shared memory into
// another distribution; and block sum/max reductions through shared memory (across warps, a
// non-power-of-two digit) and lane shuffles (partial warps included) — is emitted in the CUDA
// dialect, launched on one block, and every buffer it touched (inputs, outputs with guard zones,
// a dump of every thread's registers) must equal BYTE FOR BYTE what the host dialect of the same
// program writes under g++ on this machine. Without g++ the expected bytes come from the TS
// evaluators instead (the test says so in a diagnostic; fold-order-only cases are then skipped).
// Skipped (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { sm80 } from '@tilekit/codegen';
import { hostCompiler, toolAvailable } from '@tilekit/codegen/testing';
import { kernelArgs, type DeviceBuffer } from '@tilekit/runtime';
import { gpu } from '@tilekit/runtime/testing';
import { cudaParitySource, firstMismatch, gpuParityCases, plainBytes, runParityCasesOnHost, type ParityCase } from './testing/gpuParity.ts';

const cases = gpuParityCases();
// The GPU is sm_90 (H200) here, but nothing arch-specific is emitted: sm_80's dialect runs anywhere ≥ sm_80.
// One module holds every case's kernel (one nvcc run); the compiler wants one of its entries as the name.
const MODULE_NAME = cases[0]!.name;

let hostRun: { readonly outputs: Uint8Array[][] | undefined; readonly note: string } | undefined;

/** Host-dialect outputs of every case (one g++ compile and run for all), or why there are none. */
function hostOutputs(): { readonly outputs: Uint8Array[][] | undefined; readonly note: string } {
  if (hostRun === undefined) {
    const cxx = hostCompiler();
    hostRun = toolAvailable(cxx)
      ? { outputs: runParityCasesOnHost(cases), note: `expected bytes: the host dialect compiled with ${cxx}` }
      : {
          outputs: undefined,
          note: `${cxx} NOT FOUND on this machine: expected bytes come from the TS evaluators instead of the host dialect`,
        };
  }
  return hostRun;
}

/** Uploads the case's buffers, launches its kernel on one block of numThreads, returns every buffer. */
async function runOnGpu(c: ParityCase): Promise<Uint8Array[]> {
  const device = gpu.device();
  const { module } = await gpu.module(cudaParitySource(cases, sm80), MODULE_NAME);
  const kernel = module.getKernel(c.name);
  const buffers: DeviceBuffer[] = [];
  try {
    for (const b of c.buffers) buffers.push(device.upload(b.init));
    const args = kernelArgs((a) => {
      for (const d of buffers) a.pointer(d);
      for (const i of c.ints) a.i32(i.value);
    });
    kernel.launch({ grid: 1, block: c.numThreads }, args);
    device.synchronize();
    return buffers.map((d) => plainBytes(d.copyToHost()));
  } finally {
    for (const d of buffers) d.dispose();
  }
}

async function checkCase(t: TestContext, c: ParityCase): Promise<void> {
  const host = hostOutputs();
  const i = cases.indexOf(c);
  const want = host.outputs?.[i] ?? c.expected;
  if (want === undefined) {
    t.skip(`${c.name}: only the host dialect defines its exact bits (fold order) and g++ is missing`);
    return;
  }
  t.diagnostic(`${c.name}: ${host.note}`);
  const got = await runOnGpu(c);
  assert.equal(got.length, c.buffers.length);
  c.buffers.forEach((b, k) => {
    const mismatch = firstMismatch(b.element, got[k]!, want[k]!);
    assert.deepEqual(
      got[k],
      plainBytes(want[k]!),
      `${c.name}.${b.name} (${c.what}): GPU ≠ ${host.outputs === undefined ? 'TS evaluators' : 'host dialect'}: ${mismatch ?? 'bytes differ'}`,
    );
  });
  // The host dialect itself agrees with the TS evaluators (also checked in CI by gpuParity.spec.ts).
  if (host.outputs !== undefined && c.expected !== undefined) {
    c.buffers.forEach((b, k) =>
      assert.equal(
        firstMismatch(b.element, host.outputs![i]![k]!, c.expected![k]!),
        undefined,
        `${c.name}.${b.name}: host dialect ≠ TS evaluators`,
      ),
    );
  }
}

for (const c of cases.filter((x) => x.kind === 'load-store')) {
  test(`tile/gpu: load/store equals the host dialect bit for bit: ${c.what}`, gpu.options, async (t) => checkCase(t, c));
}

for (const c of cases.filter((x) => x.kind === 'reduce')) {
  const paths = c.reduceSteps.map((s) => `${s.via} ×${s.length}`).join(' then ');
  test(`tile/gpu: block reduction equals the host dialect bit for bit [${paths}]: ${c.what}`, gpu.options, async (t) => checkCase(t, c));
}

test('tile/gpu: the context is still usable after the tile kernels', gpu.options, async () => {
  await gpu.expectUsable();
});
