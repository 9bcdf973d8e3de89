import { InvalidParameterError } from '../errors.ts';
import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { add, sub } from '../symbolic/poly.ts';
import { proveLessEqual } from '../symbolic/simplify.ts';
import {
  checkLength,
  checkNonNegative,
  formatSymInt,
  TransformBase,
  vectorGcd,
  type TransformStep,
  type VectorLengthsStrides,
} from './transform.ts';

/**
 * `slice(L, begin, end)`: 1 → 1, upper length end − begin, low = up + begin, with
 * 0 ≤ begin < end ≤ L. Linear; always valid by promise (no check, as CK). Vector rule: gcd(V, begin).
 */
export class Slice extends TransformBase {
  readonly kind = 'slice';
  readonly lowerArity = 1;
  readonly upperArity = 1;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[];
  readonly isAlwaysValid = true;
  readonly isLinear = true;

  readonly length: SymInt;
  readonly begin: SymInt;
  readonly end: SymInt;

  constructor(length: SymInt, begin: SymInt, end: SymInt) {
    super([length, begin, end]);
    this.length = length;
    this.begin = begin;
    this.end = end;
    checkLength(length, 'slice length');
    checkNonNegative(begin, 'slice begin');
    const extent = sub(end, begin);
    checkLength(extent, 'slice end − begin');
    if (!proveLessEqual(end, length)) {
      throw new InvalidParameterError('slice end', `must be ≤ the sliced length ${formatSymInt(length)}`, formatSymInt(end));
    }
    this.upperLengths = [extent];
    this.lowerLengths = [length];
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const [b] = this.values([this.begin], bindings) as [number];
    const u = up[0]!;
    const l = low[0]!;
    return {
      lower: (h) => {
        h[l] = h[u]! + b;
      },
      update: (h, dh) => {
        dh[l] = dh[u]!;
        h[l] = h[u]! + b;
      },
      valid: () => true,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [add(up[0]!, this.begin)];
  }

  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides {
    return { lengths: [vectorGcd(lower.lengths[0]!, this.begin)], strides: [lower.strides[0]!] };
  }

  toString(): string {
    return `slice(${formatSymInt(this.length)}, [${formatSymInt(this.begin)}, ${formatSymInt(this.end)}))`;
  }
}

/** The sub-range [begin, end) of a dim of length L. */
export function slice(length: SymInt, begin: SymInt, end: SymInt): Slice {
  return new Slice(length, begin, end);
}
