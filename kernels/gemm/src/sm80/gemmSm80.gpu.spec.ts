// GPU tests of the sm_80 GEMM kernels (node:test; `npm run test:gpu`): every catalog instance, built
// for the GPU's arch (sm_90a on an H200: the sm_80 cubin does not load there; sm_80 on an A100),
// plus the other two layouts (nt, tt), against the CPU reference (referenceGemm, fp32 accumulation)
// on aligned, ragged (K = 77 not a multiple of 8: the copy zero-fills the tail through cp.async's
// src-size), deep-K, strided and batched shapes, within @tilekit/numeric's thresholds for K; every
// C element outside the product left untouched; the lda-not-a-multiple-of-8 predicate explained.
// Every launch goes through the typed launcher (GemmSm80Kernel: checkGemmBuffers, packed pointers),
// and dispatch by target (selectGemmInstanceFor with the device's arch) picks the same build.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sm80, sm90a } from '@tilekit/codegen';
import { referenceGemm } from '@tilekit/gemm';
import { absoluteThreshold, decode, relativeThreshold } from '@tilekit/numeric';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { selectGemmInstanceFor } from '../gemmDispatch.ts';
import {
  checkGemmProblem,
  formatGemmProblem,
  gemmOperandElements,
  gemmOperandStorage,
  gemmReferenceArgs,
  type GemmDType,
  type GemmLayoutName,
  type GemmProblem,
} from '../gemmProblem.ts';
import { GEMM_SM80_CATALOG, GEMM_SM80_TILE, gemmSm80CatalogFor } from './gemmSm80Catalog.ts';
import { GemmSm80Instance } from './gemmSm80Instance.ts';
import { GemmSm80Kernel } from './gemmSm80Launcher.ts';
import { gemmTestValues } from '../testing/gemmTestValues.ts';

const build = buildOncePerInstance(async (instance: GemmSm80Instance) => {
  const compiler = gpuTestCompiler('gemm-sm80-gpu');
  return GemmSm80Kernel.build(instance, { device: Device.open(0), compiler });
});

/** The instance rebuilt for the device's arch (sm_80 code runs on sm_90 only when compiled for it). */
function forDevice(instance: GemmSm80Instance): GemmSm80Instance {
  const arch = Device.open(0).arch;
  assert.ok(arch === 'sm_80' || arch === 'sm_90a', `the sm_80 GEMM tests need an sm_80 or sm_90a device, got ${arch}`);
  const target = arch === 'sm_80' ? sm80 : sm90a;
  return (
    gemmSm80CatalogFor(target).find((i) => i.name === new GemmSm80Instance(instance.policy, target).name) ??
    new GemmSm80Instance(instance.policy, target)
  );
}

const fillValues = gemmTestValues;

const C_SENTINEL = 0xffff; // NaN in fp16 and bf16

/** Runs `problem` on `instance` and checks every element of C (padding included). */
async function runAndCheck(instance: GemmSm80Instance, problem: GemmProblem): Promise<string> {
  const p = checkGemmProblem(problem);
  assert.deepEqual(instance.unsupported(p), [], `${instance.name} rejects ${formatGemmProblem(problem)}`);
  const kernel = await build(instance);
  const elems = gemmOperandElements(p);
  // A and B as the launcher requires them: the last row's final 16-byte read must be addressable.
  const read = instance.readElements(p);
  const a = fillValues(read.a, p.dtype, p.m * 31 + p.k);
  const b = fillValues(read.b, p.dtype, p.n * 17 + p.k);
  const want = referenceGemm(gemmReferenceArgs(p, a.values, b.values));
  let max = 0;
  for (let x = 0; x < p.batch; x++)
    for (let i = 0; i < p.m; i++) for (let j = 0; j < p.n; j++) max = Math.max(max, Math.abs(want[x * p.batchStrideC + i * p.ldc + j]!));
  const rtol = relativeThreshold(p.dtype, p.dtype, 'fp32', p.k);
  const atol = absoluteThreshold(p.dtype, p.dtype, 'fp32', max, p.k);
  const device = Device.open(0);
  const da = device.upload(a.bits);
  const db = device.upload(b.bits);
  const dc = device.alloc(elems.c * 2).fill(0xff);
  try {
    kernel.run(problem, { a: da, b: db, c: dc });
    const out = new Uint16Array(dc.copyToHost().buffer);
    const inProduct = new Uint8Array(elems.c);
    for (let x = 0; x < p.batch; x++)
      for (let i = 0; i < p.m; i++) inProduct.fill(1, x * p.batchStrideC + i * p.ldc, x * p.batchStrideC + i * p.ldc + p.n);
    let bad = 0;
    let first = '';
    let worst = 0;
    for (let at = 0; at < elems.c; at++) {
      if (inProduct[at] === 0) {
        if (out[at] !== C_SENTINEL) {
          bad++;
          first ||= `padding element ${at} written`;
        }
        continue;
      }
      const got = decode(p.dtype, out[at]!);
      const err = Math.abs(got - want[at]!);
      worst = Math.max(worst, err);
      if (!(err <= atol + rtol * Math.abs(want[at]!))) {
        bad++;
        first ||= `element ${at}: got ${got}, want ${want[at]}`;
      }
    }
    assert.equal(
      bad,
      0,
      `${instance.name} on ${formatGemmProblem(problem)}: ${bad} of ${elems.c} elements wrong (atol ${atol}, rtol ${rtol}), first ${first}`,
    );
    return `max |err| ${worst.toExponential(2)} (atol ${atol.toExponential(2)})`;
  } finally {
    da.dispose();
    db.dispose();
    dc.dispose();
  }
}

/** Leading dimension rounded up to the 16-byte row of cp.async. */
const ld8 = (x: number): number => Math.ceil(x / 8) * 8;

/** Aligned, ragged (K = 77), deep-K, tiny, strided and batched problems for `layout`, with lda/ldb multiples of 8. */
function problemsFor(dtype: GemmDType, layout: GemmLayoutName): GemmProblem[] {
  const lds = (m: number, n: number, k: number) => {
    const s = gemmOperandStorage(layout);
    return { lda: ld8(s.a === 'row' ? k : m), ldb: ld8(s.b === 'col' ? k : n) };
  };
  const with_ = (m: number, n: number, k: number, extra: Partial<GemmProblem> = {}): GemmProblem => ({
    dtype,
    layout,
    m,
    n,
    k,
    ...lds(m, n, k),
    ...extra,
  });
  const batched = with_(200, 136, 96);
  const s = gemmOperandStorage(layout);
  return [
    with_(256, 256, 128),
    with_(257, 129, 77),
    with_(300, 260, 1000),
    with_(1, 256, 64),
    with_(130, 136, 72, { lda: ld8(s.a === 'row' ? 72 : 130) + 16, ldb: ld8(s.b === 'col' ? 72 : 136) + 8, ldc: 144 }),
    {
      ...batched,
      batch: 3,
      batchStrideA: (s.a === 'row' ? 200 : 96) * batched.lda! + 64,
      batchStrideB: (s.b === 'col' ? 136 : 96) * batched.ldb! + 8,
      batchStrideC: 200 * 136 + 10,
    },
  ];
}

test(
  'gemm sm80/gpu: every catalog instance (built for this GPU) matches the CPU reference on aligned, ragged, deep-K, strided and batched shapes',
  gpu.options,
  async (t) => {
    let cases = 0;
    for (const base of GEMM_SM80_CATALOG) {
      const instance = forDevice(base);
      for (const problem of problemsFor(instance.dtype, instance.policy.layout)) {
        t.diagnostic(`${instance.name} ${formatGemmProblem(problem)}: ok, ${await runAndCheck(instance, problem)}`);
        cases++;
      }
    }
    t.diagnostic(`${GEMM_SM80_CATALOG.length} instances, ${cases} cases, all within tolerance`);
  },
);

test('gemm sm80/gpu: the B-row-major layouts (nt, tt: B N-major, ldmatrix .trans) match the reference too', gpu.options, async (t) => {
  for (const layout of ['nt', 'tt'] as const) {
    const instance = forDevice(new GemmSm80Instance({ dtype: 'fp16', layout, ...GEMM_SM80_TILE, cVector: 1 }));
    for (const problem of problemsFor('fp16', layout))
      t.diagnostic(`${instance.name} ${formatGemmProblem(problem)}: ok, ${await runAndCheck(instance, problem)}`);
  }
});

test(
  'gemm sm80/gpu: small shapes (sanitizer size): every catalog instance and nt/tt on ragged K = 77, m = 1 and batched problems',
  gpu.options,
  async (t) => {
    // The compute-sanitizer plan's cases (tools/device/sanitizeCases.mjs): the catalog test's shapes without the deep K = 1000 one.
    const extra = (['nt', 'tt'] as const).map((layout) => new GemmSm80Instance({ dtype: 'fp16', layout, ...GEMM_SM80_TILE, cVector: 1 }));
    for (const base of [...GEMM_SM80_CATALOG, ...extra]) {
      const instance = forDevice(base);
      for (const problem of problemsFor(instance.dtype, instance.policy.layout).filter((_, k) => k === 1 || k === 3 || k === 5)) {
        t.diagnostic(`${instance.name} ${formatGemmProblem(problem)}: ok, ${await runAndCheck(instance, problem)}`);
      }
    }
  },
);

test('gemm sm80/gpu: K = 77 with packed rows (lda = 77) is rejected with its reason; with lda = 80 it runs', gpu.options, async () => {
  const instance = forDevice(GEMM_SM80_CATALOG[0]!);
  const packed = checkGemmProblem({ dtype: instance.dtype, layout: 'tn', m: 257, n: 129, k: 77 });
  const reasons = instance.unsupported(packed);
  assert.ok(
    reasons.some((r) => /lda = 77 is not a multiple of 8/.test(r)),
    reasons.join('; '),
  );
  assert.ok(
    reasons.some((r) => /ldb = 77 is not a multiple of 8/.test(r)),
    reasons.join('; '),
  );
  await runAndCheck(instance, { dtype: instance.dtype, layout: 'tn', m: 257, n: 129, k: 77, lda: 80, ldb: 80 });
});

test(
  'gemm sm80/gpu: dispatch by target on this device (-arch=sm80) picks the build for the device and runs through the launcher',
  gpu.options,
  async (t) => {
    const device = Device.open(0);
    for (const problem of [
      { dtype: 'fp16', m: 1000, n: 777, k: 512 },
      { dtype: 'bf16', layout: 'nn', m: 333, n: 256, k: 200, lda: 336 },
    ] as const) {
      const picked = selectGemmInstanceFor(problem, { arch: 'sm80', deviceArch: device.arch });
      assert.ok(picked instanceof GemmSm80Instance, picked.name);
      assert.equal(picked.target.name, device.arch);
      t.diagnostic(`${picked.name} ${formatGemmProblem(problem)}: ok, ${await runAndCheck(picked, problem)}`);
    }
  },
);
