// Reusable fast-check arbitraries for host tensors (used by this package's specs and by other
// packages' tests through `@tilekit/host/testing`).
import fc from 'fast-check';
import type { DTypeName } from '@tilekit/numeric';
import { fillTensor } from '../fill.ts';
import { HostTensor } from '../hostTensor.ts';

/** Size limits of generated shapes. */
export interface ShapeArbOptions {
  minRank?: number;
  maxRank?: number;
  /** Smallest axis length (default 1; 0 generates empty tensors too). */
  minLength?: number;
  maxLength?: number;
}

/** Shapes of rank in [minRank, maxRank] (default 0..4) with lengths in [minLength, maxLength] (1..5). */
export function shapeArb(options: ShapeArbOptions = {}): fc.Arbitrary<number[]> {
  const { minRank = 0, maxRank = 4, minLength = 1, maxLength = 5 } = options;
  return fc.array(fc.integer({ min: minLength, max: maxLength }), { minLength: minRank, maxLength: maxRank });
}

/** Permutations of 0..rank−1. */
export function permutationArb(rank: number): fc.Arbitrary<number[]> {
  const identity = Array.from({ length: rank }, (_, i) => i);
  return fc.shuffledSubarray(identity, { minLength: rank, maxLength: rank });
}

/** Options of hostTensorArb. */
export interface HostTensorArbOptions extends ShapeArbOptions {
  /** Fill spec (default `uf:-4,4`), seeded by a generated seed. */
  fill?: string;
  /** Give the tensor padded row-major strides (default: sometimes). */
  padded?: boolean;
}

/**
 * Filled host tensors of `dtype`, packed or with padded (non-contiguous) row-major strides:
 * stride[i] = Π_{j>i} (shape[j] + pad[j]) with pads in 0..2.
 */
export function hostTensorArb(dtype: DTypeName = 'fp32', options: HostTensorArbOptions = {}): fc.Arbitrary<HostTensor> {
  const { fill = 'uf:-4,4', padded } = options;
  return shapeArb(options).chain((shape) =>
    fc
      .record({
        pads: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: shape.length, maxLength: shape.length }),
        usePads: padded === undefined ? fc.boolean() : fc.constant(padded),
        seed: fc.integer({ min: 0, max: 2 ** 31 }),
      })
      .map(({ pads, usePads, seed }) => {
        const strides = new Array<number>(shape.length);
        let step = 1;
        for (let axis = shape.length - 1; axis >= 0; axis--) {
          strides[axis] = step;
          step *= shape[axis]! + (usePads ? pads[axis]! : 0);
        }
        return fillTensor(HostTensor.empty(dtype, shape, { strides }), fill, seed);
      }),
  );
}

/**
 * One view operation with raw random parameters; `applyViewChain` reads them modulo the current
 * shape so any step applies to any tensor (rank-0 tensors skip axis operations).
 */
export type ViewStep =
  { op: 'permute'; key: number } | { op: 'transpose'; a: number; b: number } | { op: 'slice'; axis: number; start: number; length: number };

/** Chains of up to `maxSteps` view operations (default 4). */
export function viewChainArb(maxSteps = 4): fc.Arbitrary<ViewStep[]> {
  const n = fc.nat({ max: 1000 });
  const step: fc.Arbitrary<ViewStep> = fc.oneof(
    fc.record({ op: fc.constant('permute' as const), key: n }),
    fc.record({ op: fc.constant('transpose' as const), a: n, b: n }),
    fc.record({ op: fc.constant('slice' as const), axis: n, start: n, length: n }),
  );
  return fc.array(step, { maxLength: maxSteps });
}

/**
 * Applies a view chain and returns the view with `toBase`, which maps an index of the view to the
 * index of the same element in `base` (computed independently of the tensor's stride arithmetic).
 */
export function applyViewChain(
  base: HostTensor,
  steps: readonly ViewStep[],
): { view: HostTensor; toBase: (index: readonly number[]) => number[] } {
  let view = base;
  let toBase = (index: readonly number[]): number[] => [...index];
  for (const step of steps) {
    const rank = view.rank;
    if (rank === 0) continue;
    const previous = toBase;
    if (step.op === 'permute') {
      const axes = nthPermutation(rank, step.key);
      view = view.permute(axes);
      toBase = (index) => {
        const inner = new Array<number>(rank);
        axes.forEach((a, i) => (inner[a] = index[i]!));
        return previous(inner);
      };
    } else if (step.op === 'transpose') {
      const a = step.a % rank;
      const b = step.b % rank;
      view = view.transpose(a, b);
      toBase = (index) => {
        const inner = [...index];
        [inner[a], inner[b]] = [index[b]!, index[a]!];
        return previous(inner);
      };
    } else {
      const axis = step.axis % rank;
      const length = view.shape[axis]!;
      const start = step.start % (length + 1);
      const end = start + (step.length % (length - start + 1));
      view = view.slice(axis, start, end);
      toBase = (index) => {
        const inner = [...index];
        inner[axis] = index[axis]! + start;
        return previous(inner);
      };
    }
  }
  return { view, toBase };
}

/** The permutation of 0..rank−1 numbered `key` (mod rank!), by a factorial-base decoding. */
function nthPermutation(rank: number, key: number): number[] {
  const pool = Array.from({ length: rank }, (_, i) => i);
  const out: number[] = [];
  let rest = key;
  for (let n = rank; n > 0; n--) {
    const pick = rest % n;
    rest = Math.floor(rest / n);
    out.push(pool.splice(pick, 1)[0]!);
  }
  return out;
}
