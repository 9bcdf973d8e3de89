import { roundTo, type DTypeName } from '@tilekit/numeric';
import { ReferenceGemmError } from '../errors.ts';
import { applyGemmEpilogue, GEMM_ACTIVATIONS, type GemmActivation } from '../pipeline/gemmEpilogue.ts';

/** Storage order of a matrix: `row`: (i, j) at i·stride + j; `col`: (i, j) at i + j·stride. */
export type GemmLayout = 'row' | 'col';

/** A (batched) strided matrix in a flat array. */
export interface ReferenceGemmOperand {
  readonly data: ArrayLike<number>;
  readonly layout: GemmLayout;
  /** Leading-dimension stride in elements (default packed: columns for `row`, rows for `col`). */
  readonly stride?: number;
  /** Elements between consecutive batches (default rows·cols when packed, else rows-or-cols·stride). */
  readonly batchStride?: number;
}

/** Arguments of {@link referenceGemm}: C[b] = A[b] · B[b], A M×K, B K×N, C M×N. */
export interface ReferenceGemmArgs {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Number of independent products (default 1). */
  readonly batch?: number;
  readonly a: ReferenceGemmOperand;
  readonly b: ReferenceGemmOperand;
  /** Layout of the result (default packed row-major). */
  readonly c?: Omit<ReferenceGemmOperand, 'data'>;
  /** When given, A and B elements are first rounded to this dtype (e.g. fp16 inputs). */
  readonly inputType?: DTypeName;
  /** `fp32` (default): the sum is rounded to fp32 after every term, as a tensor-core fp32 accumulator; `fp64`: plain double sums. */
  readonly accType?: 'fp32' | 'fp64';
  /** Dtype each result is rounded to (default fp32), through `@tilekit/numeric`. */
  readonly outType?: DTypeName;
  /**
   * The epilogue functor on the fp32 accumulator before the rounding to `outType` (as the kernel's,
   * `applyGemmEpilogue`): act(alpha·acc + bias[j]), bias values rounded to fp32, one per column
   * (length ≥ N, shared by the batch). Only with `accType` fp32.
   */
  readonly epilogue?: { readonly alpha?: number; readonly bias?: ArrayLike<number>; readonly activation?: GemmActivation };
}

interface Resolved {
  readonly layout: GemmLayout;
  readonly stride: number;
  readonly batchStride: number;
}

function checkDim(what: string, v: number, min: number): void {
  if (!Number.isSafeInteger(v) || v < min) throw new ReferenceGemmError(what, `must be an integer ≥ ${min}`, String(v));
}

function resolve(what: string, op: Omit<ReferenceGemmOperand, 'data'>, rows: number, cols: number, batch: number): Resolved {
  if (op.layout !== 'row' && op.layout !== 'col')
    throw new ReferenceGemmError(`${what}.layout`, 'must be "row" or "col"', String(op.layout));
  const minStride = op.layout === 'row' ? cols : rows;
  const stride = op.stride ?? Math.max(1, minStride);
  checkDim(`${what}.stride`, stride, Math.max(1, minStride));
  const span = (op.layout === 'row' ? rows : cols) * stride;
  const batchStride = op.batchStride ?? span;
  checkDim(`${what}.batchStride`, batchStride, batch > 1 ? 1 : 0);
  return { layout: op.layout, stride, batchStride };
}

/** Elements a strided operand reaches: one past its last addressed element. */
function extent(r: Resolved, rows: number, cols: number, batch: number): number {
  if (rows === 0 || cols === 0) return 0;
  const last = r.layout === 'row' ? (rows - 1) * r.stride + (cols - 1) : rows - 1 + (cols - 1) * r.stride;
  return (batch - 1) * r.batchStride + last + 1;
}

const at = (r: Resolved, b: number, i: number, j: number): number =>
  b * r.batchStride + (r.layout === 'row' ? i * r.stride + j : i + j * r.stride);

/**
 * The CPU reference GEMM: C[b](i, j) = Σ_k A[b](i, k) · B[b](k, j) for every batch b, with A, B and C
 * each row- or column-major with any leading-dimension and batch strides. Terms are added in
 * increasing k; with `accType` fp32 the running sum is rounded to fp32 after each term (the
 * products of fp16/bf16 inputs are exact in double, so each step is one fp32 fused multiply-add);
 * results are rounded to `outType` through `@tilekit/numeric`'s `roundTo`. Returns a new
 * Float64Array sized to C's extent (elements outside the M×N tiles stay 0). With `epilogue`, each
 * fp32 sum goes through act(alpha·acc + bias[j]) first (see `applyGemmEpilogue`).
 * Postconditions (property-tested): A·I = A and I·B = B; (A·B)ᵀ = Bᵀ·Aᵀ bit for bit (the same
 * terms in the same order); (A·I)·B = A·(I·B); agreement with an independent triple loop on random
 * ragged shapes, layouts, strides and batches.
 */
export function referenceGemm(args: ReferenceGemmArgs): Float64Array {
  const { m, n, k } = args;
  const batch = args.batch ?? 1;
  checkDim('m', m, 1);
  checkDim('n', n, 1);
  checkDim('k', k, 0);
  checkDim('batch', batch, 1);
  const ra = resolve('a', args.a, m, k, batch);
  const rb = resolve('b', args.b, k, n, batch);
  const rc = resolve('c', args.c ?? { layout: 'row' }, m, n, batch);
  for (const [what, r, rows, cols, data] of [
    ['a', ra, m, k, args.a.data],
    ['b', rb, k, n, args.b.data],
  ] as const) {
    const need = extent(r, rows, cols, batch);
    if (data.length < need)
      throw new ReferenceGemmError(
        `${what}.data`,
        `must hold at least ${need} elements for ${rows}×${cols}×${batch} with its strides`,
        String(data.length),
      );
  }
  const accType = args.accType ?? 'fp32';
  if (accType !== 'fp32' && accType !== 'fp64') throw new ReferenceGemmError('accType', 'must be "fp32" or "fp64"', String(accType));
  const ep = args.epilogue;
  const activation = ep?.activation ?? 'none';
  const alpha = Math.fround(ep?.alpha ?? 1);
  if (ep !== undefined) {
    if (!(GEMM_ACTIVATIONS as readonly string[]).includes(activation))
      throw new ReferenceGemmError('epilogue.activation', `must be one of ${GEMM_ACTIVATIONS.join(', ')}`, String(activation));
    if (!Number.isFinite(alpha)) throw new ReferenceGemmError('epilogue.alpha', 'must be finite', String(ep.alpha));
    if (ep.bias !== undefined && ep.bias.length < n)
      throw new ReferenceGemmError('epilogue.bias', `must hold at least n = ${n} elements`, String(ep.bias.length));
    if (accType !== 'fp32') throw new ReferenceGemmError('epilogue', 'needs accType fp32 (it models the fp32 accumulator)', accType);
  }
  const biasF32 = ep?.bias === undefined ? undefined : Float64Array.from({ length: n }, (_, j) => Math.fround(ep.bias![j]!));
  const outType = args.outType ?? 'fp32';
  const out = outType === 'fp32' ? Math.fround : (x: number): number => roundTo(outType, x);
  const input = args.inputType === undefined || args.inputType === 'fp32' ? null : args.inputType;
  const load = (data: ArrayLike<number>, i: number): number => {
    const v = data[i] as number;
    return input === null ? (args.inputType === 'fp32' ? Math.fround(v) : v) : roundTo(input, v);
  };
  const c = new Float64Array(extent(rc, m, n, batch));
  const fp32 = accType === 'fp32';
  // Each operand element is loaded (and rounded) once per batch into a packed K-contiguous copy, so
  // the O(M·N·K) loop touches no conversion: the same terms in the same order as loading per term.
  const aRows = new Float64Array(m * k);
  const bCols = new Float64Array(n * k);
  for (let bi = 0; bi < batch; bi++) {
    for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) aRows[i * k + p] = load(args.a.data, at(ra, bi, i, p));
    for (let j = 0; j < n; j++) for (let p = 0; p < k; p++) bCols[j * k + p] = load(args.b.data, at(rb, bi, p, j));
    for (let i = 0; i < m; i++) {
      const ai = i * k;
      for (let j = 0; j < n; j++) {
        const bj = j * k;
        let acc = 0;
        if (fp32) for (let p = 0; p < k; p++) acc = Math.fround(acc + aRows[ai + p]! * bCols[bj + p]!);
        else for (let p = 0; p < k; p++) acc += aRows[ai + p]! * bCols[bj + p]!;
        c[at(rc, bi, i, j)] = out(ep === undefined ? acc : applyGemmEpilogue(activation, acc, alpha, biasF32?.[j]));
      }
    }
  }
  return c;
}
