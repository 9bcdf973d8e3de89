import { add, call, cast, float32, index, int32, kernelParam, lit, mul, sub, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { ArgumentError } from '@tilekit/numeric';
import type { FmhaScoreAt, FmhaScoreModifier, FmhaScoreModifierSite, FmhaScoreModifierSpec } from './fmhaScoreModifier.ts';

/**
 * ALiBi (Press et al., "Train Short, Test Long"): the scaled score of query i and key j gets the
 * bias −slope_h·|i + seqlenK − seqlenQ − j| (aligned to the bottom-right corner, as FlashAttention
 * does), one fp32 slope per query head read from `alibi_slopes`. A bias: the backward's factor is 1.
 */
export class AlibiScore implements FmhaScoreModifier {
  readonly tag = 'alibi';

  params() {
    return { alibi_slopes: kernelParam.pointer(float32, { const: true, align: 4 }) };
  }

  bind(values: Readonly<Record<string, Expr>>, seq: { readonly seqlenQ: Expr; readonly seqlenK: Expr }): FmhaScoreModifierSite {
    const slopes = values.alibi_slopes!;
    return {
      atHead(b: BlockBuilder, head: Expr): FmhaScoreAt {
        const slope = b.let('alibi_slope', float32, mul(index(slopes, head), lit(-Math.LOG2E, float32)));
        const shift = b.let('alibi_shift', int32, sub(seq.seqlenK, seq.seqlenQ));
        return {
          logit: (_b, s, row, col, scaleLog2) =>
            add(mul(s, scaleLog2), mul(slope, cast(call('abs', [sub(add(row, shift), col)], int32, { pure: true }), float32))),
        };
      },
    };
  }

  argValues(spec: FmhaScoreModifierSpec | undefined, nheadQ: number): Readonly<Record<string, bigint>> {
    if (spec?.kind !== 'alibi')
      throw new ArgumentError('scoreModifier', 'must be { kind: "alibi", slopes } for an ALiBi kernel', spec?.kind);
    const { ptr, bytes } = spec.slopes;
    if (typeof ptr !== 'bigint' || ptr === 0n || ptr % 4n !== 0n)
      throw new ArgumentError('scoreModifier.slopes', 'must be a non-null device address aligned to 4 bytes', ptr);
    if (!(bytes >= 4 * nheadQ))
      throw new ArgumentError('scoreModifier.slopes', `must hold nheadQ = ${nheadQ} fp32 slopes (${4 * nheadQ} bytes)`, bytes);
    return { alibi_slopes: ptr };
  }
}
