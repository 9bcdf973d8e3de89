import { ArgumentError, ArgumentProblems, getDType } from '@tilekit/numeric';

/** The permutations this operator performs. */
export const PERMUTE_KINDS = ['bhsd2bshd', 'bshd2bhsd', 'transpose'] as const;
export type PermuteKind = (typeof PERMUTE_KINDS)[number];

/** The element types it is instantiated for (it moves bits, so only the element size matters to the code). */
export const PERMUTE_DTYPES = ['fp16', 'bf16', 'fp32'] as const;
export type PermuteDType = (typeof PERMUTE_DTYPES)[number];

/** A head-layout change of an attention tensor: [b, h, s, d] ↔ [b, s, h, d] (d contiguous on both sides). */
export interface HeadPermuteProblem {
  readonly kind: 'bhsd2bshd' | 'bshd2bhsd';
  readonly dtype: PermuteDType;
  readonly b: number;
  readonly h: number;
  readonly s: number;
  readonly d: number;
}

/** A 2-D transpose: input [m, n] row-major, output [n, m] row-major. */
export interface TransposeProblem {
  readonly kind: 'transpose';
  readonly dtype: PermuteDType;
  readonly m: number;
  readonly n: number;
}

/**
 * The Problem of the permute operator: what to move (kind, dtype, sizes), no code and no tiling.
 * Inputs and outputs are packed row-major.
 */
export type PermuteProblem = HeadPermuteProblem | TransposeProblem;

/** Shapes of a problem, and the axes with `output = input.permute(axes)`. */
export interface PermuteShapes {
  readonly input: readonly number[];
  readonly output: readonly number[];
  readonly axes: readonly number[];
}

function positiveInt(where: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new ArgumentError(where, 'must be a positive integer', v);
  return v;
}

function member<T>(where: string, v: unknown, allowed: readonly T[]): T {
  if (!(allowed as readonly unknown[]).includes(v)) throw new ArgumentError(where, `must be one of ${allowed.join(', ')}`, v);
  return v as T;
}

/** The sizes of the problem's kind, each checked on its own (every broken one reported to `v`). */
function checkSizes(v: ArgumentProblems, problem: PermuteProblem, kind: PermuteKind): Record<string, number | undefined> {
  const names = kind === 'transpose' ? (['m', 'n'] as const) : (['b', 'h', 's', 'd'] as const);
  const given = problem as unknown as Record<string, unknown>;
  return Object.fromEntries(names.map((name) => [name, v.check(() => positiveInt(`problem.${name}`, given[name]))]));
}

/**
 * Validates a problem and returns it frozen: a known kind and dtype, positive integer sizes, and
 * tensors that fit in 2^53 bytes. Every violation found is reported in one `ArgumentError` naming
 * `problem.<field>` (the first one's as `argument`); the sizes are checked once the kind is known,
 * the byte count once every field is valid.
 */
export function checkPermuteProblem(problem: PermuteProblem): PermuteProblem {
  if (typeof problem !== 'object' || problem === null) throw new ArgumentError('problem', 'must be an object', problem);
  const v = new ArgumentProblems(ArgumentError);
  const kind = v.check(() => member('problem.kind', problem.kind, PERMUTE_KINDS));
  const dtype = v.check(() => member('problem.dtype', problem.dtype, PERMUTE_DTYPES));
  const sizes = kind === undefined ? undefined : checkSizes(v, problem, kind);
  v.throwIfAny();
  const checked = { kind, dtype, ...sizes } as PermuteProblem;
  const bytes = permuteElements(checked) * elementBytes(checked);
  if (!Number.isSafeInteger(bytes)) throw new ArgumentError('problem', 'the tensor must have fewer than 2^53 bytes', bytes);
  return Object.freeze(checked);
}

/** Bytes per element. */
export function elementBytes(problem: PermuteProblem): number {
  return getDType(problem.dtype).bytes;
}

/** Elements of the input (= of the output). */
export function permuteElements(problem: PermuteProblem): number {
  return problem.kind === 'transpose' ? problem.m * problem.n : problem.b * problem.h * problem.s * problem.d;
}

/** Bytes read plus bytes written by one permute (the bandwidth figure's numerator). */
export function permuteBytesMoved(problem: PermuteProblem): number {
  return 2 * permuteElements(problem) * elementBytes(problem);
}

/** Input and output shapes and the axes of the permutation (`output = input.permute(axes)`). */
export function permuteShapes(problem: PermuteProblem): PermuteShapes {
  switch (problem.kind) {
    case 'transpose':
      return { input: [problem.m, problem.n], output: [problem.n, problem.m], axes: [1, 0] };
    case 'bhsd2bshd':
      return {
        input: [problem.b, problem.h, problem.s, problem.d],
        output: [problem.b, problem.s, problem.h, problem.d],
        axes: [0, 2, 1, 3],
      };
    case 'bshd2bhsd':
      return {
        input: [problem.b, problem.s, problem.h, problem.d],
        output: [problem.b, problem.h, problem.s, problem.d],
        axes: [0, 2, 1, 3],
      };
  }
}

/** A short readable form: `bhsd2bshd fp16 b2 h8 s1024 d128`, `transpose fp32 m4096 n8192`. */
export function formatPermuteProblem(problem: PermuteProblem): string {
  if (problem.kind === 'transpose') return `transpose ${problem.dtype} m${problem.m} n${problem.n}`;
  return `${problem.kind} ${problem.dtype} b${problem.b} h${problem.h} s${problem.s} d${problem.d}`;
}
