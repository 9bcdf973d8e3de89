// GPU tests of the GEMM operator (node:test; `npm run test:gpu`, or tools/device on the GPU machine):
// every catalog instance against the CPU reference (referenceGemm, fp32 accumulation) on aligned,
// ragged and strided shapes, within @tilekit/numeric's CK-style thresholds for K accumulations;
// every C element outside the product left untouched; dispatch end to end; typed errors before any
// launch; the driver's parameter layout; HGMMA in the SASS (cuobjdump, when the machine has it); and
// small shapes on one instance of each kind (what compute-sanitizer runs).
// Skipped (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { isIdentityEpilogue, referenceGemm, type GemmActivation } from '@tilekit/gemm';
import { absoluteThreshold, ArgumentError, decode, relativeThreshold } from '@tilekit/numeric';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { GEMM_CATALOG } from './gemmCatalog.ts';
import { selectGemmInstance } from './gemmDispatch.ts';
import type { GemmInstance } from './gemmInstance.ts';
import { GemmKernel } from './gemmLauncher.ts';
import {
  checkGemmProblem,
  formatGemmProblem,
  GEMM_LAYOUTS,
  gemmOperandElements,
  gemmOperandStorage,
  gemmReferenceArgs,
  type CheckedGemmProblem,
  type GemmDType,
  type GemmLayoutName,
  type GemmProblem,
} from './gemmProblem.ts';
import { gemmTestValues } from './testing/gemmTestValues.ts';

const kernelFor = buildOncePerInstance((instance: GemmInstance) => {
  const compiler = gpuTestCompiler('gemm-gpu');
  return GemmKernel.build(instance, { device: Device.open(0), compiler });
});

const fillValues = gemmTestValues;

const C_SENTINEL = 0xffff; // a NaN in fp16 and bf16: any element left unwritten inside the product fails

interface Reference {
  readonly a: Uint16Array;
  readonly b: Uint16Array;
  /** bias[0..N) when the problem adds one. */
  readonly bias?: Uint16Array;
  readonly c: Float64Array;
  readonly atol: number;
  readonly rtol: number;
}

const references = new Map<string, Reference>();

/** Inputs and the reference result of a problem (cached per dtype and shape). */
function referenceFor(p: CheckedGemmProblem): Reference {
  const key = JSON.stringify(p);
  let r = references.get(key);
  if (r === undefined) {
    const elems = gemmOperandElements(p);
    const a = fillValues(elems.a, p.dtype, p.m * 31 + p.k);
    const b = fillValues(elems.b, p.dtype, p.n * 17 + p.k);
    const bias = p.bias ? fillValues(p.n, p.dtype, p.n * 7 + 3) : undefined;
    const functor = p.alpha !== 1 || p.bias || p.activation !== 'none';
    const product = (activation: GemmActivation): Float64Array =>
      referenceGemm({
        ...gemmReferenceArgs(p, a.values, b.values),
        ...(functor ? { epilogue: { alpha: p.alpha, activation, ...(bias === undefined ? {} : { bias: bias.values }) } } : {}),
      });
    const c = product(p.activation);
    // The tolerance scales with the largest value before the activation (alpha·A·B + bias).
    const pre = p.activation === 'none' ? c : product('none');
    let max = 0;
    for (let x = 0; x < p.batch; x++)
      for (let i = 0; i < p.m; i++) for (let j = 0; j < p.n; j++) max = Math.max(max, Math.abs(pre[x * p.batchStrideC + i * p.ldc + j]!));
    // gelu_tanh / silu: the dtype's thresholds plus 16 fp32 ulps at the largest binade for the device's
    // tanhf / expf (within 2 ulp of the correctly rounded value) and the few fp32 operations around them.
    const slack =
      p.activation === 'gelu_tanh' || p.activation === 'silu' ? 16 * 2 ** -23 * 2 ** Math.floor(Math.log2(Math.max(max, 1))) : 0;
    r = {
      a: a.bits,
      b: b.bits,
      ...(bias === undefined ? {} : { bias: bias.bits }),
      c,
      rtol: relativeThreshold(p.dtype, p.dtype, 'fp32', p.k),
      atol: absoluteThreshold(p.dtype, p.dtype, 'fp32', max, p.k) + slack,
    };
    references.set(key, r);
  }
  return r;
}

/**
 * Runs `problem` through `kernel` and checks every element of C (and that the ldc and batch padding
 * is untouched). `smCount` sizes a persistent instance's grid (default the device's).
 */
function runAndCheck(kernel: GemmKernel, problem: GemmProblem, smCount?: number): string {
  const p = checkGemmProblem(problem);
  const ref = referenceFor(p);
  const device = Device.open(0);
  const cCount = gemmOperandElements(p).c;
  const a = device.upload(ref.a);
  const b = device.upload(ref.b);
  const c = device.alloc(cCount * 2).fill(0xff);
  const bias = ref.bias === undefined ? undefined : device.upload(ref.bias);
  try {
    kernel.run(p, { a, b, c, ...(bias === undefined ? {} : { bias }) }, smCount === undefined ? {} : { smCount });
    const out = new Uint16Array(c.copyToHost().buffer);
    let bad = 0;
    let first = '';
    let worst = 0;
    const inProduct = new Uint8Array(cCount);
    for (let x = 0; x < p.batch; x++)
      for (let i = 0; i < p.m; i++) inProduct.fill(1, x * p.batchStrideC + i * p.ldc, x * p.batchStrideC + i * p.ldc + p.n);
    for (let at = 0; at < cCount; at++) {
      if (inProduct[at] === 0) {
        if (out[at] !== C_SENTINEL) {
          bad++;
          first ||= `padding element ${at} written: 0x${out[at]!.toString(16)}`;
        }
        continue;
      }
      const got = decode(p.dtype, out[at]!);
      const want = ref.c[at]!;
      const err = Math.abs(got - want);
      worst = Math.max(worst, err);
      if (!(err <= ref.atol + ref.rtol * Math.abs(want))) {
        bad++;
        const x = p.batch === 1 ? 0 : Math.floor(at / p.batchStrideC);
        const i = Math.floor((at - x * p.batchStrideC) / p.ldc);
        first ||= `[${x}] (${i}, ${at - x * p.batchStrideC - i * p.ldc}): got ${got}, want ${want}`;
      }
    }
    assert.equal(
      bad,
      0,
      `${kernel.instance.name} on ${formatGemmProblem(problem)}: ${bad} of ${cCount} checked ` +
        `elements wrong (atol ${ref.atol}, rtol ${ref.rtol}), first ${first}`,
    );
    return `max |err| ${worst.toExponential(2)} (atol ${ref.atol.toExponential(2)})`;
  } finally {
    a.dispose();
    b.dispose();
    c.dispose();
    bias?.dispose();
  }
}

/**
 * Aligned, ragged, strided and deep-K (the 4-stage ring wraps several times) problems. `tn`: the
 * original set. Other layouts: the same shapes with leading dimensions padded to 8 elements (TMA's
 * 16-byte stride rule) and an even N (their instances store 2 C elements at a time); m = 1 makes
 * the second 64-wide slab load of an M-major A tile entirely out of bounds (zero fill).
 */
function problemsFor(dtype: GemmDType, layout: GemmLayoutName = 'tn'): GemmProblem[] {
  if (layout === 'tn') {
    return [
      { dtype, m: 256, n: 512, k: 128 },
      { dtype, m: 257, n: 511, k: 200 },
      { dtype, m: 1, n: 256, k: 64 },
      { dtype, m: 300, n: 260, k: 1000 },
      { dtype, m: 130, n: 136, k: 72, lda: 80, ldb: 88, ldc: 144 },
      { dtype, m: 1100, n: 700, k: 520 },
      { dtype, m: 64, n: 24, k: 8 },
      { dtype, m: 200, n: 136, k: 96, batch: 3, batchStrideA: 200 * 96 + 64, batchStrideB: 136 * 96 + 8, batchStrideC: 200 * 136 + 10 },
    ];
  }
  const storage = gemmOperandStorage(layout);
  const pad8 = (x: number): number => Math.ceil(x / 8) * 8;
  const shape = (
    m: number,
    n: number,
    k: number,
    extra: { readonly padA?: number; readonly padB?: number; readonly ldc?: number; readonly batch?: number } = {},
  ): GemmProblem => {
    const lda = pad8(storage.a === 'row' ? k : m) + (extra.padA ?? 0);
    const ldb = pad8(storage.b === 'col' ? k : n) + (extra.padB ?? 0);
    const batch = extra.batch ?? 1;
    const strides =
      batch === 1
        ? {}
        : {
            batch,
            batchStrideA: (storage.a === 'row' ? m : k) * lda + 64,
            batchStrideB: (storage.b === 'col' ? n : k) * ldb + 8,
            batchStrideC: m * (extra.ldc ?? n) + 10,
          };
    return { dtype, layout, m, n, k, lda, ldb, ...(extra.ldc === undefined ? {} : { ldc: extra.ldc }), ...strides };
  };
  return [
    shape(256, 512, 128),
    shape(257, 130, 200),
    shape(1, 256, 64),
    shape(300, 260, 1000),
    shape(130, 136, 72, { padA: 8, padB: 16, ldc: 144 }),
    shape(1100, 700, 520),
    shape(64, 24, 8),
    shape(200, 136, 96, { batch: 3 }),
  ];
}

test(
  'gemm/gpu: every catalog instance (every layout: tn, nn, nt, tt) matches the CPU reference on aligned, ragged, strided and batched shapes',
  gpu.options,
  async (t) => {
    const kernels = await Promise.all(GEMM_CATALOG.filter((i) => isIdentityEpilogue(i.epilogue)).map(kernelFor));
    let cases = 0;
    for (const kernel of kernels) {
      const runs = problemsFor(kernel.instance.dtype, kernel.instance.policy.layout).filter(
        (p) => kernel.instance.unsupported(checkGemmProblem(p)).length === 0,
      );
      assert.ok(runs.length >= 4, `${kernel.instance.name} runs only ${runs.length} of the test problems`);
      for (const problem of runs) {
        const note = runAndCheck(kernel, problem);
        t.diagnostic(`${kernel.instance.name} ${formatGemmProblem(problem)}: ok, ${note}`);
        cases++;
      }
    }
    t.diagnostic(`${kernels.length} instances, ${cases} cases, all within tolerance`);
  },
);

test(
  'gemm/gpu: the epilogue-functor instances (act(alpha·A·B + bias[n])) match the reference on aligned, ragged, deep-K and batched shapes',
  gpu.options,
  async (t) => {
    const instances = GEMM_CATALOG.filter((i) => !isIdentityEpilogue(i.epilogue));
    assert.ok(instances.length >= 3);
    let cases = 0;
    for (const instance of instances) {
      const kernel = await kernelFor(instance);
      const { dtype, epilogue } = instance;
      const functor = { bias: epilogue.bias, activation: epilogue.activation };
      for (const problem of [
        { dtype, m: 256, n: 512, k: 128, alpha: 1, ...functor },
        { dtype, m: 257, n: 510, k: 200, alpha: 0.75, ...functor },
        { dtype, m: 300, n: 260, k: 1000, alpha: -1.5, ...functor },
        { dtype, m: 130, n: 136, k: 72, lda: 80, ldb: 88, ldc: 144, alpha: 2, ...functor },
        {
          dtype,
          m: 200,
          n: 136,
          k: 96,
          batch: 3,
          batchStrideA: 200 * 96 + 64,
          batchStrideB: 136 * 96 + 8,
          batchStrideC: 200 * 136 + 10,
          alpha: 0.5,
          ...functor,
        },
      ] satisfies GemmProblem[]) {
        assert.deepEqual(instance.unsupported(checkGemmProblem(problem)), [], `${instance.name} rejects ${formatGemmProblem(problem)}`);
        const note = runAndCheck(kernel, problem);
        t.diagnostic(`${instance.name} ${formatGemmProblem(problem)}: ok, ${note}`);
        cases++;
      }
    }
    // Dispatch end to end and typed errors before launch.
    const problem: GemmProblem = { dtype: 'fp16', m: 512, n: 384, k: 64, bias: true, activation: 'gelu_tanh', alpha: 0.5 };
    const kernel = await kernelFor(selectGemmInstance(problem));
    runAndCheck(kernel, problem);
    const device = Device.open(0);
    const buf = device.alloc(1 << 20);
    const other = device.alloc(1 << 20);
    const out = device.alloc(1 << 20);
    try {
      assert.throws(
        () => kernel.run(problem, { a: buf, b: other, c: out }),
        (e: unknown) => e instanceof ArgumentError && e.argument === 'bias',
      );
      assert.throws(
        () => kernel.run({ ...problem, activation: 'relu' }, { a: buf, b: other, c: out, bias: buf }),
        (e: unknown) => e instanceof ArgumentError && e.argument === 'activation',
      );
    } finally {
      buf.dispose();
      other.dispose();
      out.dispose();
    }
    t.diagnostic(`${instances.length} epilogue instances, ${cases + 1} cases, all within tolerance`);
  },
);

test('gemm/gpu: dispatch picks an instance and it validates (fp16 and bf16, every layout, aligned and ragged)', gpu.options, async (t) => {
  for (const problem of [
    { dtype: 'fp16', m: 2048, n: 2048, k: 256 },
    { dtype: 'bf16', m: 4097, n: 1029, k: 136 },
    { dtype: 'bf16', m: 16, n: 8192, k: 64 },
  ] as const) {
    runAndCheck(await kernelFor(selectGemmInstance(problem)), problem);
  }
  // Every layout combination through the dispatcher: aligned, ragged (padded leading dims) and batched.
  for (const layout of GEMM_LAYOUTS) {
    for (const dtype of ['fp16', 'bf16'] as const) {
      const pad = (x: number): number => Math.ceil(x / 8) * 8;
      const storage = gemmOperandStorage(layout);
      for (const [m, n, k, batch] of [
        [1024, 1024, 256, 1],
        [2049, 1030, 136, 1],
        [257, 130, 200, 2],
      ] as const) {
        const problem: GemmProblem = {
          dtype,
          layout,
          m,
          n,
          k,
          batch,
          lda: pad(storage.a === 'row' ? k : m),
          ldb: pad(storage.b === 'col' ? k : n),
        };
        const kernel = await kernelFor(selectGemmInstance(problem));
        const note = runAndCheck(kernel, problem);
        t.diagnostic(`${kernel.instance.name} ${formatGemmProblem(problem)}: ok, ${note}`);
      }
    }
  }
});

test(
  'gemm/gpu: the persistent instances, with few blocks each looping over many tiles (the ring continuing across tiles), match the reference',
  gpu.options,
  async (t) => {
    const instances = GEMM_CATALOG.filter((i) => i.persistent);
    assert.ok(instances.length >= 2);
    for (const instance of instances) {
      const kernel = await kernelFor(instance);
      const dtype = instance.dtype;
      for (const [problem, smCount] of [
        [{ dtype, m: 1100, n: 700, k: 520 }, 1], // 27 tiles in one block, 9 K tiles each (the 4-stage ring wraps mid-tile)
        [{ dtype, m: 1100, n: 700, k: 200 }, 5], // 4 K tiles per tile: every tile starts on stage 0
        [{ dtype, m: 300, n: 260, k: 1000 }, 2],
        [{ dtype, m: 257, n: 510, k: 72 }, 3], // 2 K tiles: tiles start on alternating stages and phases
        [{ dtype, m: 130, n: 136, k: 8, lda: 8, ldb: 8, ldc: 144 }, 1],
        [
          { dtype, m: 200, n: 136, k: 96, batch: 3, batchStrideA: 200 * 96 + 64, batchStrideB: 136 * 96 + 8, batchStrideC: 200 * 136 + 10 },
          1,
        ],
        [{ dtype, m: 2048, n: 2048, k: 256 }, 132],
      ] as const) {
        const launch = instance.launch(checkGemmProblem(problem), { smCount });
        const note = runAndCheck(kernel, problem, smCount);
        t.diagnostic(`${instance.name} ${formatGemmProblem(problem)} on ${launch.grid[0]} block(s) per matrix: ok, ${note}`);
      }
    }
  },
);

/**
 * One instance of each kind (both tiles and vector widths of tn, every other layout, both dtypes,
 * an epilogue functor, the persistent loop) on ragged, m = 1 and batched shapes of at most 257 × 511 × 200:
 * the GEMM cases of the compute-sanitizer plan (tools/device/sanitizeCases.mjs), which slows
 * kernels 10–1000×; the tests above cover the catalog and the large shapes.
 */
function smallRepresentatives(): GemmInstance[] {
  const identity = GEMM_CATALOG.filter((i) => isIdentityEpilogue(i.epilogue) && !i.persistent);
  const picks = [
    identity.find((i) => i.policy.layout === 'tn' && i.name.includes('_128x256x64_') && i.name.endsWith('_v2')),
    identity.find((i) => i.policy.layout === 'tn' && i.dtype === 'bf16' && i.name.includes('_128x128x64_') && i.name.endsWith('_v1')),
    ...(['nn', 'nt', 'tt'] as const).map((layout) =>
      identity.find((i) => i.policy.layout === layout && i.dtype === (layout === 'nt' ? 'bf16' : 'fp16')),
    ),
    GEMM_CATALOG.find((i) => !isIdentityEpilogue(i.epilogue)),
    GEMM_CATALOG.find((i) => i.persistent),
  ];
  assert.ok(
    picks.every((i) => i !== undefined),
    'the catalog lacks a kind the small test picks',
  );
  return picks as GemmInstance[];
}

test(
  'gemm/gpu: small shapes (sanitizer size) on one instance per tile, vector width, layout, epilogue and the persistent loop',
  gpu.options,
  async (t) => {
    for (const instance of smallRepresentatives()) {
      const kernel = await kernelFor(instance);
      const { dtype, epilogue } = instance;
      const functor = isIdentityEpilogue(epilogue) ? {} : { bias: epilogue.bias, activation: epilogue.activation, alpha: 0.75 };
      // Ragged (257 × 511 or 257 × 130; tn also 257 × 510 for 2-element stores), m = 1, batched; the
      // persistent instance on 3 and 1 blocks, so that a block loops over several tiles.
      const layout = instance.policy.layout;
      const shapes = [
        ...problemsFor(dtype, layout).filter((_, k) => k === 1 || k === 2 || k === 7),
        ...(layout === 'tn' ? [{ dtype, m: 257, n: 510, k: 72 }] : []),
      ];
      const runs = shapes.map((p): [GemmProblem, number | undefined] => [
        { ...p, ...functor },
        instance.persistent ? (p.batch === undefined ? 3 : 1) : undefined,
      ]);
      const supported = runs.filter(([p]) => instance.unsupported(checkGemmProblem(p)).length === 0);
      assert.ok(supported.length >= 2, `${instance.name} runs only ${supported.length} of the small problems`);
      for (const [problem, smCount] of supported) {
        const note = runAndCheck(kernel, problem, smCount);
        t.diagnostic(`${instance.name} ${formatGemmProblem(problem)}${smCount === undefined ? '' : ` on ${smCount} SMs`}: ok, ${note}`);
      }
    }
  },
);

test('gemm/gpu: the driver reports the declared parameter layout', gpu.options, async () => {
  for (const instance of GEMM_CATALOG) {
    const kernel = await kernelFor(instance);
    const params = kernel.kernel.params;
    if (params === undefined) return; // driver without cuFuncGetParamInfo
    assert.deepEqual(
      params.map((p) => [p.offset, p.size]),
      instance.signature.layout.fields.map((f) => [f.offset, f.size]),
    );
  }
});

test('gemm/gpu: bad arguments are ArgumentErrors before any launch; the context stays usable', gpu.options, async () => {
  const device = Device.open(0);
  const problem: GemmProblem = { dtype: 'fp16', m: 128, n: 128, k: 64 };
  const kernel = await kernelFor(selectGemmInstance(problem));
  const big = device.alloc(1 << 20);
  const other = device.alloc(1 << 20);
  const out = device.alloc(1 << 20);
  const small = device.alloc(64);
  try {
    assert.throws(
      () => kernel.run(problem, { a: small, b: other, c: out }),
      (e: unknown) => e instanceof ArgumentError && e.argument === 'a',
    );
    assert.throws(
      () => kernel.run(problem, { a: big, b: other, c: big }),
      (e: unknown) => e instanceof ArgumentError && e.argument === 'c',
    );
    assert.throws(
      () => kernel.run(problem, { a: big.view(8), b: other, c: out }),
      (e: unknown) => e instanceof ArgumentError && e.argument === 'problem',
    );
    assert.throws(
      () => kernel.run({ ...problem, k: 60 }, { a: big, b: other, c: out }),
      (e: unknown) => e instanceof ArgumentError && /TMA global stride/.test((e as Error).message),
    );
  } finally {
    big.dispose();
    other.dispose();
    out.dispose();
    small.dispose();
  }
  runAndCheck(kernel, problem);
});

test('gemm/gpu: the SASS of every instance contains HGMMA (cuobjdump -sass on the compiled cubin)', gpu.options, async (t) => {
  const cuobjdump = process.env['TILEKIT_CUOBJDUMP'] ?? 'cuobjdump';
  const probe = spawnSync(cuobjdump, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    console.warn(
      `\n!!! gemm/gpu: "${cuobjdump}" is not runnable here (${probe.error?.message ?? `status ${probe.status}`}): the HGMMA SASS check is SKIPPED. !!!\n`,
    );
    t.skip(`${cuobjdump} not available`);
    return;
  }
  for (const instance of GEMM_CATALOG) {
    const kernel = await kernelFor(instance);
    const sass = spawnSync(cuobjdump, ['-sass', kernel.compiled.binaryPath], { encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(sass.status, 0, `cuobjdump -sass ${kernel.compiled.binaryPath}: ${sass.stderr}`);
    const hgmma = sass.stdout.match(/\bHGMMA[.\w]*/g) ?? [];
    assert.ok(hgmma.length > 0, `${instance.name}: no HGMMA in the SASS`);
    t.diagnostic(`${instance.name}: ${hgmma.length} HGMMA (${[...new Set(hgmma)].join(', ')})`);
  }
});
