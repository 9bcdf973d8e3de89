import { GEMM_ACTIVATIONS, type GemmActivation, type ReferenceGemmArgs } from '@tilekit/gemm';
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';

/** The element types of A, B and C (fp32 accumulation). */
export const GEMM_DTYPES = ['fp16', 'bf16'] as const;
export type GemmDType = (typeof GEMM_DTYPES)[number];

/**
 * Storage of A and B, named as in BLAS (column-major convention, cuBLAS's `transa`/`transb`): the
 * first letter is A, the second B; `n` = the operand is stored column-major as it appears in
 * C = A·B, `t` = it is stored transposed (i.e. row-major). In CK's terms (`-a_layout`/`-b_layout`):
 *
 * | layout | A (M×K)                               | B (K×N)                               | wgmma A / B major |
 * |--------|---------------------------------------|---------------------------------------|-------------------|
 * | `tn`   | R: row-major, (i, k) at i·lda + k     | C: column-major, (k, j) at j·ldb + k  | K / K             |
 * | `nn`   | C: column-major, (i, k) at k·lda + i  | C: column-major                       | M / K             |
 * | `tt`   | R: row-major                          | R: row-major, (k, j) at k·ldb + j     | K / N             |
 * | `nt`   | C: column-major                       | R: row-major                          | M / N             |
 *
 * C is always row-major M×N (row stride ldc). `tn` is the natural wgmma layout (both operands
 * K-major); the others read an M- or N-major tile with wgmma's transpose bit.
 */
export const GEMM_LAYOUTS = ['tn', 'nn', 'nt', 'tt'] as const;
export type GemmLayoutName = (typeof GEMM_LAYOUTS)[number];

/** Storage order of each operand of a layout: `row` or `col`, as `referenceGemm` names them. */
export interface GemmOperandStorage {
  readonly a: 'row' | 'col';
  readonly b: 'row' | 'col';
}

/** `tn` → A row, B col; `nn` → A col, B col; `tt` → A row, B row; `nt` → A col, B row. */
export function gemmOperandStorage(layout: GemmLayoutName): GemmOperandStorage {
  return { a: layout[0] === 't' ? 'row' : 'col', b: layout[1] === 'n' ? 'col' : 'row' };
}

/** Which dim of each operand is contiguous in memory (and in the shared-memory tile): `K` or `MN`. */
export function gemmOperandMajors(layout: GemmLayoutName): { readonly a: 'K' | 'MN'; readonly b: 'K' | 'MN' } {
  const s = gemmOperandStorage(layout);
  return { a: s.a === 'row' ? 'K' : 'MN', b: s.b === 'col' ? 'K' : 'MN' };
}

/** The Problem of the GEMM operator: C = act(alpha·(A·B) + bias[n]), what to compute (no tiling, no code). */
export interface GemmProblem {
  readonly dtype: GemmDType;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Default `tn`. */
  readonly layout?: GemmLayoutName;
  /** Leading dimension of A in elements: its row stride when row-major (default k), column stride when column-major (default m). */
  readonly lda?: number;
  /** Leading dimension of B in elements: its column stride when column-major (default k), row stride when row-major (default n). */
  readonly ldb?: number;
  /** Row stride of C in elements (default n). */
  readonly ldc?: number;
  /** Independent products C[i] = A[i]·B[i] (default 1). */
  readonly batch?: number;
  /** Elements between consecutive A, B and C matrices of a batch (defaults: A m·lda row-major, k·lda column-major; B n·ldb column-major, k·ldb row-major; C m·ldc). */
  readonly batchStrideA?: number;
  readonly batchStrideB?: number;
  readonly batchStrideC?: number;
  /** Scale of the product, applied in fp32 (default 1; other values need an epilogue instance). */
  readonly alpha?: number;
  /** Adds a per-column bias vector (length N, C's dtype, shared by the batch; default false). */
  readonly bias?: boolean;
  /** Activation applied in fp32 before the cast (default `none`). */
  readonly activation?: GemmActivation;
}

/** A problem with every default filled in. */
export interface CheckedGemmProblem {
  readonly dtype: GemmDType;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly layout: GemmLayoutName;
  readonly lda: number;
  readonly ldb: number;
  readonly ldc: number;
  readonly batch: number;
  readonly batchStrideA: number;
  readonly batchStrideB: number;
  readonly batchStrideC: number;
  readonly alpha: number;
  readonly bias: boolean;
  readonly activation: GemmActivation;
}

/** The largest batch (grid.y). */
export const GEMM_MAX_BATCH = 65535;

/** The largest M, N, K and leading dimension the kernels declare (their `int` parameter ranges). */
export const GEMM_MAX_DIM = 1 << 20;

function positiveInt(where: string, v: unknown, max = GEMM_MAX_DIM): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > max)
    throw new ArgumentError(where, `must be an integer in [1, ${max}]`, v);
  return v;
}

function member<T>(where: string, v: unknown, allowed: readonly T[]): T {
  if (!(allowed as readonly unknown[]).includes(v)) throw new ArgumentError(where, `must be one of ${allowed.join(', ')}`, v);
  return v as T;
}

/** The sizes and layout as checked so far (undefined: that field was invalid, rules that need it are skipped). */
interface GemmDims {
  readonly layout: GemmLayoutName | undefined;
  readonly m: number | undefined;
  readonly n: number | undefined;
  readonly k: number | undefined;
}

/** A leading dimension in [1, 2^20] (default `fallback`) and at least `min` (checked when known); undefined when broken. */
function leadingDim(
  v: ArgumentProblems,
  name: string,
  given: number | undefined,
  fallback: number | undefined,
  min: { readonly value: number | undefined; readonly rule: () => string },
): number | undefined {
  const x = given ?? fallback;
  if (x === undefined) return undefined;
  const ld = v.check(() => positiveInt(`problem.${name}`, x));
  if (ld === undefined || min.value === undefined || ld >= min.value) return ld;
  v.report(`problem.${name}`, min.rule(), ld);
  return undefined;
}

/** lda, ldb, ldc with their defaults and minimums (the contiguous extent of each operand). */
function leadingDims(
  v: ArgumentProblems,
  p: GemmProblem,
  d: GemmDims,
): { lda: number | undefined; ldb: number | undefined; ldc: number | undefined } {
  const { layout, m, n, k } = d;
  const store = layout === undefined ? undefined : gemmOperandStorage(layout);
  const aMin = store === undefined ? undefined : store.a === 'row' ? k : m;
  const bMin = store === undefined ? undefined : store.b === 'col' ? k : n;
  const lda = leadingDim(v, 'lda', p.lda, aMin, {
    value: aMin,
    rule: () =>
      store!.a === 'row'
        ? `must be at least k = ${k} (A is row-major M×K in layout ${layout})`
        : `must be at least m = ${m} (A is column-major M×K in layout ${layout})`,
  });
  const ldb = leadingDim(v, 'ldb', p.ldb, bMin, {
    value: bMin,
    rule: () =>
      store!.b === 'col'
        ? `must be at least k = ${k} (B is column-major K×N, stored N×K, in layout ${layout})`
        : `must be at least n = ${n} (B is row-major K×N in layout ${layout})`,
  });
  const ldc = leadingDim(v, 'ldc', p.ldc, n, { value: n, rule: () => `must be at least n = ${n} (C is row-major M×N)` });
  return { lda, ldb, ldc };
}

/** A batch stride ≥ 0 (default `packed`), at least one matrix (`extent`) when batch > 1 (checked when known). */
function batchStride(
  v: ArgumentProblems,
  name: string,
  given: number | undefined,
  matrix: { readonly packed: number; readonly extent: number } | undefined,
  batch: number | undefined,
): number | undefined {
  const s = given ?? matrix?.packed;
  if (s === undefined) return undefined;
  if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 0) {
    v.report(`problem.${name}`, 'must be a non-negative integer', s);
    return undefined;
  }
  if (batch !== undefined && batch > 1 && matrix !== undefined && s < matrix.extent)
    v.report(`problem.${name}`, `must be at least ${matrix.extent} (one matrix) when batch > 1`, s);
  return s;
}

/** The packed size and extent of one matrix of A, B and C, where the fields they need are valid. */
function matrixSizes(d: GemmDims, ld: { lda: number | undefined; ldb: number | undefined; ldc: number | undefined }) {
  const { layout, m, n, k } = d;
  const { lda, ldb, ldc } = ld;
  const known = (...xs: (number | undefined)[]) => layout !== undefined && xs.every((x) => x !== undefined);
  const store = layout === undefined ? undefined : gemmOperandStorage(layout);
  const a = !known(m, k, lda)
    ? undefined
    : store!.a === 'row'
      ? { packed: m! * lda!, extent: (m! - 1) * lda! + k! }
      : { packed: k! * lda!, extent: (k! - 1) * lda! + m! };
  const b = !known(n, k, ldb)
    ? undefined
    : store!.b === 'col'
      ? { packed: n! * ldb!, extent: (n! - 1) * ldb! + k! }
      : { packed: k! * ldb!, extent: (k! - 1) * ldb! + n! };
  const c = m === undefined || n === undefined || ldc === undefined ? undefined : { packed: m * ldc, extent: (m - 1) * ldc + n };
  return { a, b, c };
}

/** alpha (finite fp32, default 1), bias (boolean, default false), activation (default none). */
function epilogue(
  v: ArgumentProblems,
  p: GemmProblem,
): { alpha: number | undefined; bias: boolean | undefined; activation: GemmActivation | undefined } {
  const alpha = p.alpha ?? 1;
  const alphaOk = typeof alpha === 'number' && Number.isFinite(alpha) && Math.fround(alpha) === alpha;
  if (!alphaOk) v.report('problem.alpha', 'must be a finite number exactly representable in fp32', alpha);
  const bias = p.bias ?? false;
  if (typeof bias !== 'boolean') v.report('problem.bias', 'must be a boolean', bias);
  const activation = v.check(() => member('problem.activation', p.activation ?? 'none', GEMM_ACTIVATIONS));
  return { alpha: alphaOk ? alpha : undefined, bias: typeof bias === 'boolean' ? bias : undefined, activation };
}

/**
 * Validates a problem and returns it with defaults, frozen: known dtype and layout, sizes in
 * [1, 2^20], leading dimensions at least the contiguous extent (row-major A: lda ≥ k, column-major
 * A: lda ≥ m; column-major B: ldb ≥ k, row-major B: ldb ≥ n; ldc ≥ n); batch strides ≥ 0 and, when
 * batch > 1, at least one matrix; alpha a finite fp32 value (default 1), bias a boolean (default
 * false), a known activation (default none). Every violation found is reported in one
 * `ArgumentError` naming `problem.<field>` (the first one's as `argument`); a rule comparing fields
 * is checked once those fields are valid.
 */
export function checkGemmProblem(problem: GemmProblem): CheckedGemmProblem {
  if (typeof problem !== 'object' || problem === null) throw new ArgumentError('problem', 'must be an object', problem);
  const p = problem;
  const v = new ArgumentProblems(ArgumentError);
  const dtype = v.check(() => member('problem.dtype', p.dtype, GEMM_DTYPES));
  const layout = v.check(() => member('problem.layout', p.layout ?? 'tn', GEMM_LAYOUTS));
  const dims: GemmDims = {
    layout,
    m: v.check(() => positiveInt('problem.m', p.m)),
    n: v.check(() => positiveInt('problem.n', p.n)),
    k: v.check(() => positiveInt('problem.k', p.k)),
  };
  const ld = leadingDims(v, p, dims);
  const batch = v.check(() => positiveInt('problem.batch', p.batch ?? 1, GEMM_MAX_BATCH));
  const sizes = matrixSizes(dims, ld);
  const batchStrideA = batchStride(v, 'batchStrideA', p.batchStrideA, sizes.a, batch);
  const batchStrideB = batchStride(v, 'batchStrideB', p.batchStrideB, sizes.b, batch);
  const batchStrideC = batchStride(v, 'batchStrideC', p.batchStrideC, sizes.c, batch);
  const { alpha, bias, activation } = epilogue(v, p);
  v.throwIfAny();
  return Object.freeze({
    dtype: dtype!,
    m: dims.m!,
    n: dims.n!,
    k: dims.k!,
    layout: layout!,
    lda: ld.lda!,
    ldb: ld.ldb!,
    ldc: ld.ldc!,
    batch: batch!,
    batchStrideA: batchStrideA!,
    batchStrideB: batchStrideB!,
    batchStrideC: batchStrideC!,
    alpha: alpha!,
    bias: bias!,
    activation: activation!,
  });
}

/**
 * Elements each operand spans in memory: A (batch−1)·batchStrideA + (m−1)·lda + k when row-major,
 * (k−1)·lda + m when column-major; B (n−1)·ldb + k column-major, (k−1)·ldb + n row-major; C
 * (batch−1)·batchStrideC + (m−1)·ldc + n.
 */
export function gemmOperandElements(p: CheckedGemmProblem): { readonly a: number; readonly b: number; readonly c: number } {
  const b = p.batch - 1;
  const store = gemmOperandStorage(p.layout);
  const a = store.a === 'row' ? (p.m - 1) * p.lda + p.k : (p.k - 1) * p.lda + p.m;
  const bb = store.b === 'col' ? (p.n - 1) * p.ldb + p.k : (p.k - 1) * p.ldb + p.n;
  return { a: b * p.batchStrideA + a, b: b * p.batchStrideB + bb, c: b * p.batchStrideC + (p.m - 1) * p.ldc + p.n };
}

/**
 * The elements of A and B a kernel reading rows in whole vectors of `vector` elements addresses:
 * gemmOperandElements with each operand's contiguous length rounded up to the vector.
 */
export function gemmVectorReadElements(p: CheckedGemmProblem, vector: number): { readonly a: number; readonly b: number } {
  const up = (x: number): number => Math.ceil(x / vector) * vector;
  const store = gemmOperandStorage(p.layout);
  const a = gemmOperandElements(store.a === 'row' ? { ...p, k: up(p.k) } : { ...p, m: up(p.m) }).a;
  const b = gemmOperandElements(store.b === 'col' ? { ...p, k: up(p.k) } : { ...p, n: up(p.n) }).b;
  return { a, b };
}

/** 2·batch·M·N·K. */
export function gemmProblemFlops(p: GemmProblem): number {
  return 2 * (p.batch ?? 1) * p.m * p.n * p.k;
}

/** `fp16 tn 257x511x200 (ldc 512)`, `bf16 tn 3x64x64x64` (batch 3). */
export function formatGemmProblem(problem: GemmProblem): string {
  const p = problem;
  const strides = [
    p.lda === undefined ? '' : `lda ${p.lda}`,
    p.ldb === undefined ? '' : `ldb ${p.ldb}`,
    p.ldc === undefined ? '' : `ldc ${p.ldc}`,
    p.batchStrideA === undefined ? '' : `batch stride a ${p.batchStrideA}`,
    p.batchStrideB === undefined ? '' : `batch stride b ${p.batchStrideB}`,
    p.batchStrideC === undefined ? '' : `batch stride c ${p.batchStrideC}`,
    p.alpha === undefined || p.alpha === 1 ? '' : `alpha ${p.alpha}`,
    p.bias === true ? 'bias' : '',
    p.activation === undefined || p.activation === 'none' ? '' : p.activation,
  ].filter(Boolean);
  const batch = (p.batch ?? 1) > 1 ? `${p.batch}x` : '';
  return `${p.dtype} ${p.layout ?? 'tn'} ${batch}${p.m}x${p.n}x${p.k}${strides.length > 0 ? ` (${strides.join(', ')})` : ''}`;
}

/**
 * `referenceGemm`'s arguments for `p` (no epilogue functor): A and B as flat arrays of their
 * strided extents (`gemmOperandElements`) read through the layout's storage, C row-major with ldc and
 * the C batch stride, rounding to the problem's dtype. The CPU reference of tests and the example.
 */
export function gemmReferenceArgs(p: CheckedGemmProblem, a: ArrayLike<number>, b: ArrayLike<number>): ReferenceGemmArgs {
  const storage = gemmOperandStorage(p.layout);
  return {
    m: p.m,
    n: p.n,
    k: p.k,
    batch: p.batch,
    a: { data: a, layout: storage.a, stride: p.lda, batchStride: p.batchStrideA },
    b: { data: b, layout: storage.b, stride: p.ldb, batchStride: p.batchStrideB },
    c: { layout: 'row', stride: p.ldc, batchStride: p.batchStrideC },
    inputType: p.dtype,
    outType: p.dtype,
  };
}
