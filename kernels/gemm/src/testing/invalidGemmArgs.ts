// Random invalid argument sets of the GEMM launchers (`GemmKernel.run` on sm_90a, `GemmSm80Kernel.run`
// in its sm_90a build): a random valid call (problem, the instance dispatch picks, A/B/C/bias of
// exactly their strided extents) with one to three corruptions — bad or mismatched dtypes,
// layouts, sizes, leading dimensions, batch strides, alpha, bias and activation; shapes the buffers
// do not hold; buffers too small, misaligned, missing, not buffers, unexpected or overlapping.
// Used by the CI fuzz spec (fake addon) and replayed on a GPU.
import fc from 'fast-check';
import { sm90a } from '@tilekit/codegen';
import { GEMM_ACTIVATIONS } from '@tilekit/gemm';
import { getDType } from '@tilekit/numeric';
import type { AnyGemmInstance } from '../anyGemmKernel.ts';
import { findAnyGemmInstance } from '../anyGemmKernel.ts';
import { GEMM_EPILOGUE_INSTANCES } from '../gemmCatalog.ts';
import { GemmSm80Instance } from '../sm80/gemmSm80Instance.ts';
import { selectGemmInstance, selectGemmSm80Instance } from '../gemmDispatch.ts';
import {
  checkGemmProblem,
  GEMM_DTYPES,
  GEMM_LAYOUTS,
  GEMM_MAX_BATCH,
  GEMM_MAX_DIM,
  gemmOperandElements,
  gemmOperandStorage,
  type GemmDType,
  type GemmLayoutName,
  type GemmProblem,
} from '../gemmProblem.ts';
import { gemmSm80CatalogFor } from '../sm80/gemmSm80Catalog.ts';
import {
  allocPlan,
  BAD_SIZES,
  bufferCorruptions,
  invalidCalls,
  withBuffer,
  type BufferPlan,
  type Corruption,
  type InvalidCall,
} from '@tilekit/runtime/testing';

/** The two CUDA families a call runs on (sm_80 kernels in their sm_90a build). */
export type GemmFuzzFamily = 'sm90a' | 'sm80';

/** One GEMM call as data: the problem (possibly corrupted), the instance run (by name), the buffers. */
export interface GemmFuzzCall {
  readonly problem: Readonly<Record<string, unknown>>;
  readonly instance: string;
  readonly buffers: Readonly<Record<string, BufferPlan>>;
}

/** Which valid calls to start from. */
export interface GemmFuzzOptions {
  readonly family: GemmFuzzFamily;
  readonly dtypes?: readonly GemmDType[];
  readonly layouts?: readonly GemmLayoutName[];
  /** Whether bases may use the epilogue-functor instances (sm_90a only; default true). */
  readonly epilogues?: boolean;
  /** The instance to run (problems it cannot run are skipped); default: dispatch's choice. */
  readonly instance?: AnyGemmInstance;
}

/** The catalog instance named `name` (calls name their instance, so that they print short). */
export function gemmInstanceNamed(name: string): AnyGemmInstance {
  const i = findAnyGemmInstance(name);
  if (i === undefined) throw new Error(`no GEMM instance ${name}`);
  return i;
}

/** A leading dimension: the minimum, or padded by 8 to 32 elements (16-byte multiples stay so). */
const pad = fc.constantFrom(0, 0, 8, 32);

function identityProblems(o: GemmFuzzOptions): fc.Arbitrary<GemmProblem> {
  const layouts = o.layouts ?? (o.family === 'sm90a' ? GEMM_LAYOUTS : (['tn', 'nn'] as const));
  return fc
    .record({
      dtype: fc.constantFrom(...(o.dtypes ?? GEMM_DTYPES)),
      layout: fc.constantFrom(...layouts),
      m: fc.integer({ min: 1, max: 200 }),
      n: fc.integer({ min: 1, max: 200 }).map((n) => 2 * n),
      k: fc.integer({ min: 1, max: 30 }).map((k) => 8 * k),
      batch: fc.constantFrom(1, 1, 2, 3),
      pads: fc.tuple(pad, pad, pad),
    })
    .map(({ pads, ...p }) => withLeadingDims(p, pads));
}

function withLeadingDims(p: GemmProblem, pads: readonly [number, number, number]): GemmProblem {
  const store = gemmOperandStorage(p.layout ?? 'tn');
  const m8 = Math.ceil(p.m / 8) * 8;
  const n8 = Math.ceil(p.n / 8) * 8;
  const lda = (store.a === 'row' ? p.k : m8) + pads[0];
  const ldb = (store.b === 'col' ? p.k : n8) + pads[1];
  return { ...p, lda, ldb, ldc: p.n + pads[2] };
}

function epilogueProblems(o: GemmFuzzOptions): fc.Arbitrary<GemmProblem> {
  const variants = GEMM_EPILOGUE_INSTANCES.filter((x) => o.dtypes === undefined || o.dtypes.includes(x.dtype));
  if (variants.length === 0) return identityProblems(o);
  return fc
    .tuple(identityProblems({ ...o, layouts: ['tn'] }), fc.constantFrom(...variants), fc.constantFrom(1, 0.5, 2, -0.25))
    .map(([p, v, alpha]) => ({ ...p, dtype: v.dtype, alpha, bias: v.epilogue.bias, activation: v.epilogue.activation }));
}

function instanceFor(p: GemmProblem, o: GemmFuzzOptions): AnyGemmInstance | undefined {
  if (o.instance !== undefined)
    return o.instance.unsupported(checkGemmProblem(p), { a: 256, b: 256, c: 256 }).length === 0 ? o.instance : undefined;
  try {
    return o.family === 'sm90a' ? selectGemmInstance(p) : selectGemmSm80Instance(p, { catalog: gemmSm80CatalogFor(sm90a) });
  } catch {
    return undefined;
  }
}

/** The bytes each buffer of a valid problem needs (A and B as far as `instance` reads them). */
export function gemmBufferBytes(
  p: GemmProblem,
  instance?: AnyGemmInstance,
): { readonly a: number; readonly b: number; readonly c: number; readonly bias: number } {
  const checked = checkGemmProblem(p);
  const e = getDType(checked.dtype).bytes;
  const elems = { ...gemmOperandElements(checked), ...(instance instanceof GemmSm80Instance ? instance.readElements(checked) : {}) };
  return { a: elems.a * e, b: elems.b * e, c: elems.c * e, bias: checked.bias ? checked.n * e : 0 };
}

/** Valid calls: a problem, an instance that runs it, A/B/C (and bias) of exactly their extents. */
export function validGemmCalls(o: GemmFuzzOptions): fc.Arbitrary<GemmFuzzCall> {
  const problems = o.family === 'sm90a' && o.epilogues !== false ? fc.oneof(identityProblems(o), epilogueProblems(o)) : identityProblems(o);
  return problems
    .map((p) => ({ p, instance: instanceFor(p, o) }))
    .filter((x): x is { p: GemmProblem; instance: AnyGemmInstance } => x.instance !== undefined)
    .map(({ p, instance }) => {
      const bytes = gemmBufferBytes(p, instance);
      const buffers: Record<string, BufferPlan> = { a: allocPlan(bytes.a), b: allocPlan(bytes.b), c: allocPlan(bytes.c) };
      if (bytes.bias > 0) buffers['bias'] = allocPlan(bytes.bias);
      return { problem: p as unknown as Record<string, unknown>, instance: instance.name, buffers };
    });
}

function setField(field: string, value: unknown, label = `problem.${field} = ${String(value)}`): Corruption<GemmFuzzCall> {
  return { target: `problem.${field}`, label, apply: (c) => ({ ...c, problem: { ...c.problem, [field]: value } }) };
}

/** The minimum leading dimension of each operand in a layout. */
function minLeadingDims(p: GemmProblem): { readonly lda: number; readonly ldb: number; readonly ldc: number } {
  const store = gemmOperandStorage(p.layout ?? 'tn');
  return { lda: store.a === 'row' ? p.k : p.m, ldb: store.b === 'col' ? p.k : p.n, ldc: p.n };
}

/** dtype, layout and size corruptions: unknown values, another instance's, out of range, larger than the buffers. */
function shapeCorruptions(p: GemmProblem): fc.Arbitrary<Corruption<GemmFuzzCall>>[] {
  const lds = minLeadingDims(p);
  return [
    fc
      .constantFrom<unknown>('fp32', 'fp8', 'half', undefined, ...GEMM_DTYPES.filter((d) => d !== p.dtype))
      .map((v) => setField('dtype', v)),
    fc
      .constantFrom<unknown>('NT', 'tnn', 'rowmajor', 0, ...GEMM_LAYOUTS.filter((l) => l !== (p.layout ?? 'tn')))
      .map((v) => setField('layout', v)),
    fc
      .tuple(fc.constantFrom('m', 'n', 'k'), fc.constantFrom<unknown>(...BAD_SIZES, null, undefined, GEMM_MAX_DIM + 1, 2 ** 31))
      .map(([f, v]) => setField(f, v)),
    fc
      .tuple(fc.constantFrom('m', 'n'), fc.integer({ min: 2, max: 4 }))
      .map(([f, k]) =>
        setField(f, (p as unknown as Record<string, number>)[f]! * k, `problem.${f} × ${k} (buffers sized for the original)`),
      ),
    fc
      .tuple(fc.constantFrom('lda', 'ldb', 'ldc'), fc.integer({ min: 1, max: 8 }))
      .map(([f, d]) =>
        setField(f, Math.max(0, lds[f as keyof typeof lds] - d), `problem.${f} below its minimum ${lds[f as keyof typeof lds]}`),
      ),
    fc
      .tuple(fc.constantFrom('lda', 'ldb', 'ldc'), fc.constantFrom<unknown>(...BAD_SIZES, GEMM_MAX_DIM + 1))
      .map(([f, v]) => setField(f, v)),
    fc.constantFrom<unknown>(...BAD_SIZES, GEMM_MAX_BATCH + 1).map((v) => setField('batch', v)),
    fc
      .integer({ min: 2, max: 4 })
      .map((k) => setField('batch', (p.batch ?? 1) * k, `problem.batch × ${k} (buffers sized for the original)`)),
  ];
}

/** Batch-stride, alpha, bias and activation corruptions (not null: an optional field given null takes its default, as `??` reads it). */
function epilogueCorruptions(p: GemmProblem, instance: AnyGemmInstance): fc.Arbitrary<Corruption<GemmFuzzCall>>[] {
  const identity = !instance.epilogue.bias && instance.epilogue.activation === 'none';
  const out: fc.Arbitrary<Corruption<GemmFuzzCall>>[] = [
    fc
      .tuple(
        fc.constantFrom('batchStrideA', 'batchStrideB', 'batchStrideC'),
        fc.constantFrom<unknown>(-1, -8, 1.5, Number.NaN, Infinity, '0'),
      )
      .map(([f, v]) => setField(f, v)),
    fc.constantFrom('batchStrideA', 'batchStrideB', 'batchStrideC').map((f) => ({
      target: `problem.${f}`,
      label: `problem.${f} = 1 with batch 2 (matrices overlap)`,
      apply: (c: GemmFuzzCall) => ({ ...c, problem: { ...c.problem, batch: Math.max(2, p.batch ?? 1), [f]: 1 } }),
    })),
    fc.constantFrom<unknown>(Number.NaN, Infinity, -Infinity, 0.1, 1e39, '1').map((v) => setField('alpha', v)),
    fc.constantFrom<unknown>('yes', 1).map((v) => setField('bias', v)),
    fc
      .constantFrom<unknown>('tanh', 'RELU', 0, ...GEMM_ACTIVATIONS.filter((a) => a !== instance.epilogue.activation))
      .map((v) => setField('activation', v)),
  ];
  if (identity)
    out.push(fc.constantFrom(2, 0.5, -1).map((v) => setField('alpha', v, `problem.alpha = ${v} on an instance without epilogue functor`)));
  if (identity) out.push(fc.constant(setField('bias', true, 'problem.bias on an instance that adds none')));
  return out;
}

/** Buffer corruptions: each operand too small, misaligned, missing, not a buffer; C over A or B; bias over C, or given to an instance without bias. */
function buffersCorruptions(c: GemmFuzzCall, instance: AnyGemmInstance): fc.Arbitrary<Corruption<GemmFuzzCall>>[] {
  const p = c.problem as unknown as GemmProblem;
  const bytes = gemmBufferBytes(p, instance);
  const e = getDType(p.dtype).bytes;
  const cAlign = instance.policy.cVector * e;
  const out = [
    ...bufferCorruptions<GemmFuzzCall>('a', { need: bytes.a, align: 16 }),
    ...bufferCorruptions<GemmFuzzCall>('b', { need: bytes.b, align: 16 }),
    ...bufferCorruptions<GemmFuzzCall>('c', { need: bytes.c, align: cAlign, overlaps: ['a', 'b'] }),
  ];
  if (bytes.bias > 0) out.push(...bufferCorruptions<GemmFuzzCall>('bias', { need: bytes.bias, align: e, overlaps: ['c'] }));
  else
    out.push(
      fc.constant({
        target: 'bias',
        label: 'a bias buffer for an instance that adds none',
        apply: (x: GemmFuzzCall) => withBuffer(x, 'bias', allocPlan(Math.max(2, p.n * e))),
      }),
    );
  return out;
}

/** Invalid calls of `o.family`: a valid one with one to three corruptions of the problem or the buffers. */
export function invalidGemmCalls(o: GemmFuzzOptions): fc.Arbitrary<InvalidCall<GemmFuzzCall>> {
  return invalidCalls(validGemmCalls(o), (c) => {
    const instance = gemmInstanceNamed(c.instance);
    const p = c.problem as unknown as GemmProblem;
    return [...shapeCorruptions(p), ...epilogueCorruptions(p, instance), ...buffersCorruptions(c, instance)];
  });
}
