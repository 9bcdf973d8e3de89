import { add, call, cast, div, float32, gt, index, lt, mul, neg, select, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { emitPartitionIndex, emitXIndex, sweepOrder, type DistributedTensor, type ThreadScope } from '@tilekit/tile';
import { GemmError } from '../errors.ts';

/** Activations of the GEMM epilogue functor, applied to the fp32 value before the cast to C's type. */
export const GEMM_ACTIVATIONS = ['none', 'relu', 'gelu_tanh', 'silu'] as const;
export type GemmActivation = (typeof GEMM_ACTIVATIONS)[number];

/** The epilogue functor: C = act(alpha·(A·B) + bias[n]), in fp32 on the accumulator. */
export interface GemmEpilogue {
  /** Adds a per-column bias (length N, C's element type). */
  readonly bias: boolean;
  readonly activation: GemmActivation;
}

/** The identity epilogue (plain cast-and-store; no alpha, no bias). */
export const GEMM_EPILOGUE_NONE: GemmEpilogue = Object.freeze({ bias: false, activation: 'none' });

/** Is `e` the identity epilogue (the kernel takes neither alpha nor bias)? */
export function isIdentityEpilogue(e: GemmEpilogue): boolean {
  return !e.bias && e.activation === 'none';
}

/** An epilogue was asked for an unknown activation or a malformed bias flag. */
export class GemmEpilogueError extends GemmError {
  constructor(what: string, rule: string, found: string) {
    super('gemm/invalid-epilogue', `gemm epilogue ${what}: ${rule} (got ${found})`);
  }
}

/** Throws `GemmEpilogueError` unless `e` is a well-formed epilogue; returns it frozen. */
export function checkGemmEpilogue(e: GemmEpilogue): GemmEpilogue {
  if (typeof e !== 'object' || e === null) throw new GemmEpilogueError('epilogue', 'must be an object', String(e));
  if (typeof e.bias !== 'boolean') throw new GemmEpilogueError('bias', 'must be a boolean', String(e.bias));
  if (!(GEMM_ACTIVATIONS as readonly string[]).includes(e.activation))
    throw new GemmEpilogueError('activation', `must be one of ${GEMM_ACTIVATIONS.join(', ')}`, String(e.activation));
  return Object.freeze({ bias: e.bias, activation: e.activation });
}

/** √(2/π) and the cubic coefficient of the tanh approximation of GELU (as PyTorch's `gelu(approximate='tanh')`). */
const GELU_SQRT_2_OVER_PI = Math.fround(Math.sqrt(2 / Math.PI));
const GELU_CUBIC = Math.fround(0.044715);

/**
 * The activation in fp32 as the kernel computes it, every operation rounded to binary32 (`tanh`
 * and `exp` in double then rounded: the device's `tanhf`/`expf` are within 2 ulp of that, which
 * the GPU tests allow as a small absolute slack). relu: v > 0 ? v : 0; gelu_tanh:
 * 0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v·v·v))); silu: v / (1 + exp(−v)).
 */
export function applyGemmActivation(activation: GemmActivation, v: number): number {
  const f = Math.fround;
  switch (activation) {
    case 'none':
      return f(v);
    case 'relu':
      return v > 0 ? f(v) : 0;
    case 'gelu_tanh': {
      const cube = f(f(f(GELU_CUBIC * v) * v) * v);
      const t = f(Math.tanh(f(GELU_SQRT_2_OVER_PI * f(v + cube))));
      return f(f(0.5 * v) * f(1 + t));
    }
    case 'silu':
      return f(v / f(1 + f(Math.exp(-v))));
  }
}

/**
 * The whole functor on one fp32 accumulator value: act(alpha·acc + bias) with alpha·acc + bias one
 * fused multiply-add (the kernel's `fmaf`; without bias a plain fp32 product).
 */
export function applyGemmEpilogue(activation: GemmActivation, acc: number, alpha = 1, bias?: number): number {
  const pre = bias === undefined ? Math.fround(alpha * acc) : Math.fround(alpha * acc + bias);
  return applyGemmActivation(activation, pre);
}

/** The activation as an fp32 expression of `v` (a pure variable: it is used several times). */
export function emitGemmActivation(b: BlockBuilder, activation: GemmActivation, v: Expr): Expr {
  switch (activation) {
    case 'none':
      return v;
    case 'relu':
      return select(gt(v, 0), v, 0);
    case 'gelu_tanh': {
      const cube = mul(mul(mul(v, GELU_CUBIC), v), v);
      const t = b.let('th', float32, call('tanhf', [mul(add(v, cube), GELU_SQRT_2_OVER_PI)], float32, { pure: true }));
      return mul(mul(v, 0.5), add(t, 1));
    }
    case 'silu':
      return div(v, add(call('expf', [neg(v)], float32, { pure: true }), 1));
  }
}

/** What the emitted functor reads: alpha, the bias pointer (C's element type) and the columns. */
export interface GemmEpilogueArgs {
  /** `float` alpha. */
  readonly alpha: Expr;
  /** Pointer to bias[0..N) (required when the epilogue has a bias). */
  readonly bias?: Expr;
  /** `int` N (bias loads are predicated on n < N). */
  readonly n: Expr;
  /** `int` first column of the block tile. */
  readonly n0: Expr;
}

/**
 * Emits the functor on the fp32 accumulator tile in place: for every element the thread owns
 * (`sweepTile`'s elements and X index (row, col), grouped by column), acc = act(fmaf(alpha, acc, bias[n0 + col])) with
 * the bias load predicated on n0 + col < N (0 outside: those elements are never stored). The
 * identity epilogue emits nothing.
 */
export function emitGemmEpilogue(t: ThreadScope, acc: DistributedTensor, epilogue: GemmEpilogue, args: GemmEpilogueArgs): void {
  const e = checkGemmEpilogue(epilogue);
  if (isIdentityEpilogue(e)) return;
  if (e.bias && args.bias === undefined)
    throw new GemmEpilogueError('bias', 'the epilogue adds a bias but no bias pointer was given', 'undefined');
  if (acc.type !== float32) throw new GemmEpilogueError('accumulator', 'must be fp32', String(acc.type.kind));
  // sweepTile's order, regrouped by column (the Y digits of X1): each bias element is loaded once
  // and used at once by every row of the thread that shares its column (rows of one column share
  // X1 by construction: X1 depends only on P and X1's own Y digits), so no bias value stays live.
  const enc = acc.encoding;
  const columnYs = enc.distributedSpans()[1]!.map((s) => s.y);
  const byColumn = new Map<string, number[][]>();
  for (const ys of sweepOrder(enc)) {
    const key = columnYs.map((y) => ys[y]).join(',');
    const group = byColumn.get(key);
    if (group === undefined) byColumn.set(key, [ys]);
    else group.push(ys);
  }
  const ps = emitPartitionIndex(t, enc);
  const b = t.b;
  for (const group of byColumn.values()) {
    let bias: Expr | undefined;
    if (e.bias) {
      const x = emitXIndex(t, enc, ps, group[0]!);
      const col = b.let('bias_n', args.n0.type, add(args.n0, x[1]!));
      bias = b.let('bias_v', float32, select(lt(col, args.n), cast(index(args.bias!, col), float32), 0));
    }
    for (const ys of group) {
      const value = acc.at(t, enc.calculateD(ys));
      const v = b.let(
        'ep',
        float32,
        bias === undefined ? mul(args.alpha, value) : call('fmaf', [args.alpha, value, bias], float32, { pure: true }),
      );
      b.assign(value, emitGemmActivation(b, e.activation, v));
    }
  }
}
