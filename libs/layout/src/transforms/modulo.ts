import { modInt } from '../integerMath.ts';
import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { mod } from '../symbolic/simplify.ts';
import { checkLength, formatSymInt, TransformBase, unknownVectors, type TransformStep, type VectorLengthsStrides } from './transform.ts';

/**
 * `modulo(modulus, upLength)`: 1 → 1, upper length `upLength`, low = up mod modulus (lower length
 * `modulus`; a wrap-around view). Always valid. Not linear: moves recompute `low = up_new mod m`
 * (CK's update adds the diff twice; this is the intended map). Vector rule: unknown.
 */
export class Modulo extends TransformBase {
  readonly kind = 'modulo';
  readonly lowerArity = 1;
  readonly upperArity = 1;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[];
  readonly isAlwaysValid = true;
  readonly isLinear = false;

  readonly modulus: SymInt;
  readonly upLength: SymInt;

  constructor(modulus: SymInt, upLength: SymInt) {
    super([modulus, upLength]);
    this.modulus = modulus;
    this.upLength = upLength;
    checkLength(modulus, 'modulo modulus');
    checkLength(upLength, 'modulo upper length');
    this.upperLengths = [upLength];
    this.lowerLengths = [modulus];
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const [m] = this.values([this.modulus], bindings) as [number];
    const u = up[0]!;
    const l = low[0]!;
    return {
      lower: (h) => {
        h[l] = modInt(h[u]!, m);
      },
      update: (h, dh) => {
        const v = modInt(h[u]!, m);
        dh[l] = v - h[l]!;
        h[l] = v;
      },
      valid: () => true,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [mod(up[0]!, this.modulus)];
  }

  upperVectorLengthsStrides(_lower: VectorLengthsStrides): VectorLengthsStrides {
    return unknownVectors(1);
  }

  toString(): string {
    return `modulo(${formatSymInt(this.modulus)}, length ${formatSymInt(this.upLength)})`;
  }
}

/** A dim of length `upLength` that wraps around a lower dim of length `modulus`. */
export function modulo(modulus: SymInt, upLength: SymInt): Modulo {
  return new Modulo(modulus, upLength);
}
