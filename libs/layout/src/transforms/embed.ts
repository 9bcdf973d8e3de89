import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { add, mul } from '../symbolic/poly.ts';
import {
  checkArity,
  checkInteger,
  checkLength,
  formatList,
  TransformBase,
  unknownVectors,
  type TransformStep,
  type VectorLengthsStrides,
} from './transform.ts';

/**
 * `embed(lengths[n], coefficients[n])`: n → 1, low = Σ up_i·coef_i (a strided view). Linear; always
 * valid by promise (no check). Vector rule: unknown (vector facts of strided views come only from
 * the guarantee attached by `makeNaiveTensorDescriptor`).
 */
export class Embed extends TransformBase {
  readonly kind = 'embed';
  readonly lowerArity = 1;
  readonly upperArity: number;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly (SymInt | undefined)[] = [undefined];
  readonly isAlwaysValid = true;
  readonly isLinear = true;

  readonly lengths: readonly SymInt[];
  readonly coefficients: readonly SymInt[];

  constructor(lengths: readonly SymInt[], coefficients: readonly SymInt[]) {
    super([...lengths, ...coefficients]);
    this.lengths = lengths;
    this.coefficients = coefficients;
    checkArity('embed coefficients', lengths.length, coefficients.length);
    lengths.forEach((l, i) => checkLength(l, `embed lengths[${i}]`));
    coefficients.forEach((c, i) => checkInteger(c, `embed coefficients[${i}]`));
    this.upperArity = lengths.length;
    this.upperLengths = [...lengths];
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const c = this.values(this.coefficients, bindings);
    const n = c.length;
    const l = low[0]!;
    return {
      lower: (h) => {
        let acc = 0;
        for (let i = 0; i < n; i++) acc += h[up[i]!]! * c[i]!;
        h[l] = acc;
      },
      update: (h, dh) => {
        let acc = 0;
        for (let i = 0; i < n; i++) acc += dh[up[i]!]! * c[i]!;
        dh[l] = acc;
        h[l] = h[l]! + acc;
      },
      valid: () => true,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [add(...up.map((u, i) => mul(u, this.coefficients[i]!)))];
  }

  upperVectorLengthsStrides(_lower: VectorLengthsStrides): VectorLengthsStrides {
    return unknownVectors(this.upperArity);
  }

  toString(): string {
    return `embed((${formatList(this.lengths)}) : (${formatList(this.coefficients)}))`;
  }
}

/** A strided view: upper dims of `lengths` with per-dim `coefficients` (strides) into one lower dim. */
export function embed(lengths: readonly SymInt[], coefficients: readonly SymInt[]): Embed {
  return new Embed(lengths, coefficients);
}
