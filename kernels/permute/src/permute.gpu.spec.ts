// GPU tests of the permute operator (node:test; `npm run test:gpu`, or tools/device on the GPU
// machine): every catalog instance against the CPU reference on odd shapes (partial tiles, tails),
// dispatch end to end, 64-bit offsets beyond 2^31 elements, typed errors before any launch, and
// the driver's parameter layout == the declared one. Skipped (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { HostTensor } from '@tilekit/host';
import { ArgumentError } from '@tilekit/numeric';
import { buildOncePerInstance, Device, NvccCompiler, probe, type DeviceBuffer } from '@tilekit/runtime';
import { PERMUTE_CATALOG } from './permuteCatalog.ts';
import { selectPermuteInstance } from './permuteDispatch.ts';
import { HeadPermuteInstance, type PermuteInstance } from './permuteInstance.ts';
import { PermuteKernel } from './permuteLauncher.ts';
import { elementBytes, formatPermuteProblem, permuteShapes, type PermuteProblem } from './permuteProblem.ts';
import { comparePermutedBits, fillPatternBits, storageBits } from './permuteReference.ts';

const probed = probe();
const options = probed.driver && probed.deviceCount > 0 ? {} : { skip: 'no CUDA device' };

let compiler: NvccCompiler | undefined;
const kernelFor = buildOncePerInstance((instance: PermuteInstance) => {
  compiler ??= new NvccCompiler({ cacheDir: process.env['TILEKIT_CACHE_DIR'] || mkdtempSync(join(tmpdir(), 'tilekit-permute-gpu-')) });
  return PermuteKernel.build(instance, { device: Device.open(0), compiler });
});

/** Runs `problem` through `kernel` on seeded data and compares every element with the CPU reference. */
function runAndCheck(kernel: PermuteKernel, problem: PermuteProblem, seed: number): void {
  const device = Device.open(0);
  const input = HostTensor.empty(problem.dtype, permuteShapes(problem).input);
  fillPatternBits(storageBits(input), seed);
  const src = device.upload(input.bytes());
  const dst = device.alloc(input.byteLength).fill(0xff);
  try {
    kernel.run(problem, { src, dst });
    const out = dst.copyToHost();
    const bits = elementBytes(problem) === 2 ? new Uint16Array(out.buffer) : new Uint32Array(out.buffer);
    const result = comparePermutedBits(problem, storageBits(input), bits);
    assert.equal(
      result.mismatches,
      0,
      `${kernel.instance.name} on ${formatPermuteProblem(problem)}: ${result.mismatches} of ${result.elements} wrong, first ${JSON.stringify(result.first)}`,
    );
  } finally {
    src.dispose();
    dst.dispose();
  }
}

/** Odd shapes an instance supports: partial tiles, tails, several tiles. */
function oddProblems(instance: PermuteInstance): PermuteProblem[] {
  const e = instance.dtype === 'fp32' ? 4 : 2;
  const V = instance.vectorBytes / e;
  if (instance instanceof HeadPermuteInstance) {
    const d = 3 * V;
    return [
      { kind: 'bhsd2bshd', dtype: instance.dtype, b: 2, h: 3, s: 37, d },
      { kind: 'bshd2bhsd', dtype: instance.dtype, b: 2, h: 5, s: 411, d },
      { kind: 'bhsd2bshd', dtype: instance.dtype, b: 1, h: 700, s: 3, d: V },
    ];
  }
  return [
    { kind: 'transpose', dtype: instance.dtype, m: 17 * V, n: 25 * V },
    { kind: 'transpose', dtype: instance.dtype, m: 128, n: 64 },
    { kind: 'transpose', dtype: instance.dtype, m: V, n: 131 * V },
  ];
}

test('permute/gpu: every catalog instance matches the CPU reference on odd shapes', options, async (t) => {
  const kernels = await Promise.all(PERMUTE_CATALOG.map(kernelFor));
  let cases = 0;
  for (const kernel of kernels) {
    for (const [k, problem] of oddProblems(kernel.instance).entries()) {
      assert.deepEqual(kernel.instance.unsupported(problem), [], `${kernel.instance.name} should run ${formatPermuteProblem(problem)}`);
      runAndCheck(kernel, problem, 1000 + k);
      cases++;
    }
  }
  t.diagnostic(`${kernels.length} instances, ${cases} cases, all bit-exact`);
});

test('permute/gpu: the driver reports the declared parameter layout', options, async () => {
  for (const instance of PERMUTE_CATALOG.filter((_, i) => i % 7 === 0)) {
    const kernel = await kernelFor(instance);
    const params = kernel.kernel.params;
    if (params === undefined) return; // driver without cuFuncGetParamInfo
    assert.deepEqual(
      params.map((p) => [p.offset, p.size]),
      instance.signature.layout.fields.map((f) => [f.offset, f.size]),
    );
  }
});

test('permute/gpu: dispatch picks an instance and it validates on each kind and dtype', options, async () => {
  const problems: PermuteProblem[] = [
    { kind: 'bhsd2bshd', dtype: 'fp16', b: 2, h: 8, s: 333, d: 128 },
    { kind: 'bshd2bhsd', dtype: 'bf16', b: 3, h: 4, s: 1000, d: 72 },
    { kind: 'bhsd2bshd', dtype: 'fp32', b: 1, h: 6, s: 129, d: 40 },
    { kind: 'transpose', dtype: 'fp16', m: 1000, n: 776 },
    { kind: 'transpose', dtype: 'fp32', m: 333, n: 517 },
  ];
  for (const [k, problem] of problems.entries()) runAndCheck(await kernelFor(selectPermuteInstance(problem)), problem, 77 + k);
});

/** Writes `marks` (element index → 16-bit value) into a zeroed tensor, permutes, and reads the marks back where they must land. */
async function checkMarks(
  problem: PermuteProblem,
  marks: readonly (readonly [number, number])[],
  outIndex: (i: number) => number,
): Promise<void> {
  const device = Device.open(0);
  const bytes = permuteShapes(problem).input.reduce((a, b) => a * b, 1) * elementBytes(problem);
  let src: DeviceBuffer | undefined;
  let dst: DeviceBuffer | undefined;
  try {
    src = device.alloc(bytes).fill(0);
    dst = device.alloc(bytes).fill(0xff);
    for (const [i, v] of marks) src.copyFromHost(Uint16Array.of(v), { offset: i * 2 });
    const kernel = await kernelFor(selectPermuteInstance(problem));
    kernel.run(problem, { src, dst });
    for (const [i, v] of marks) {
      const got: number | undefined = dst.copyToHost(new Uint16Array(1), { offset: outIndex(i) * 2 })[0];
      assert.equal(got, v, `${formatPermuteProblem(problem)}: element ${i} should land at ${outIndex(i)}`);
    }
    // A few unmarked outputs near the end must be the zeros of the input (no stray or missing writes).
    const tail = dst.copyToHost(new Uint16Array(64), { offset: bytes - 128 });
    const marked = new Set(marks.map(([i]) => outIndex(i)));
    tail.forEach((x, k) => {
      const at = bytes / 2 - 64 + k;
      if (!marked.has(at)) assert.equal(x, 0, `output ${at}`);
    });
  } finally {
    src?.dispose();
    dst?.dispose();
  }
}

test('permute/gpu: 64-bit offsets beyond 2^31 elements (6 GiB tensors)', options, async () => {
  const device = Device.open(0);
  if (device.memoryInfo().free < 16 * 2 ** 30) return;
  // bshd → bhsd, fp16, 3 · 32768 · 256 · 128 = 3 · 2^30 elements.
  const head: PermuteProblem = { kind: 'bshd2bhsd', dtype: 'fp16', b: 3, h: 256, s: 32768, d: 128 };
  const { b: B, h: H, s: S, d: D } = head;
  const at = (b: number, s: number, h: number, d: number) => ((b * S + s) * H + h) * D + d;
  const to = (i: number): number => {
    const d = i % D;
    const h = Math.floor(i / D) % H;
    const s = Math.floor(i / (D * H)) % S;
    const b = Math.floor(i / (D * H * S));
    return ((b * H + h) * S + s) * D + d;
  };
  const marks: [number, number][] = [
    at(0, 0, 0, 0),
    at(2, 32767, 255, 127),
    at(2, 5, 200, 3),
    at(1, 30000, 17, 64),
    at(B - 1, S - 1, 0, 0),
  ].map((i, k) => [i, 0x1234 + k]);
  await checkMarks(head, marks, to);
  // transpose, fp16, 65536 × 40000 = 2.6 · 10^9 elements (the i64 index domain).
  const tr: PermuteProblem = { kind: 'transpose', dtype: 'fp16', m: 65536, n: 40000 };
  const M = tr.m;
  const N = tr.n;
  const tMarks: [number, number][] = [0, M * N - 1, 65535 * N + 7, 40000 * 33 + 39999, 2 ** 31 + 12345].map((i, k) => [i, 0x4321 + k]);
  await checkMarks(tr, tMarks, (i) => (i % N) * M + Math.floor(i / N));
});

test('permute/gpu: bad arguments are ArgumentErrors before any launch; the context stays usable', options, async () => {
  const device = Device.open(0);
  const problem: PermuteProblem = { kind: 'bhsd2bshd', dtype: 'fp16', b: 1, h: 4, s: 64, d: 64 };
  const kernel = await kernelFor(selectPermuteInstance(problem));
  const small = device.alloc(1024);
  const big = device.alloc(1 << 20);
  try {
    assert.throws(
      () => kernel.run(problem, { src: small, dst: big }),
      (e: unknown) => e instanceof ArgumentError && e.argument === 'src',
    );
    assert.throws(
      () => kernel.run(problem, { src: big, dst: big }),
      (e: unknown) => e instanceof ArgumentError && e.argument === 'dst',
    );
    assert.throws(
      () => kernel.run(problem, { src: big.view(8), dst: device.alloc(1 << 16) }),
      (e: unknown) => e instanceof ArgumentError && e.argument === 'problem',
    );
    assert.throws(
      () => kernel.run({ ...problem, dtype: 'fp32' }, { src: big, dst: device.alloc(1 << 20) }),
      (e: unknown) => e instanceof ArgumentError && /dtype fp32/.test((e as Error).message),
    );
  } finally {
    small.dispose();
    big.dispose();
  }
  runAndCheck(kernel, problem, 5);
});
