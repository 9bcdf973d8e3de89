import { add, call, div, float32, gt, kernelParam, lit, mul, select, sub, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { ArgumentError } from '@tilekit/numeric';
import type { FmhaScoreAt, FmhaScoreModifier, FmhaScoreModifierSite, FmhaScoreModifierSpec } from './fmhaScoreModifier.ts';

/**
 * Logit soft-capping (Gemma 2): the scaled score x becomes cap·tanh(x / cap). In the log2 domain
 * with c = cap·log2 e the logit is c·tanh(s·scaleLog2 / c); the backward's factor is 1 − tanh², the
 * tanh recovered from P and the row's LSE: t = (log2 P + LSE·log2 e) / c (0 where P is 0).
 * Kernel parameter `softcap_log2` (c). tanh is the accurate `tanhf`: `tanh.approx.f32`'s 2^−11
 * relative error, times c, would move the logits by more than the fp16 tolerance allows.
 */
export class SoftCapScore implements FmhaScoreModifier {
  readonly tag = 'softcap';

  params() {
    return { softcap_log2: kernelParam.f32() };
  }

  bind(values: Readonly<Record<string, Expr>>): FmhaScoreModifierSite {
    const c = values.softcap_log2!;
    return {
      atHead(b: BlockBuilder): FmhaScoreAt {
        const inv = b.let('softcap_inv', float32, div(lit(1, float32), c));
        return {
          logit: (_b, s, _row, _col, scaleLog2) => mul(c, call('tanhf', [mul(s, mul(scaleLog2, inv))], float32, { pure: true })),
          gradient: (gb, p, lseLog2) => {
            const t = gb.let('softcap_t', float32, mul(add(call('__log2f', [p], float32, { pure: true }), lseLog2), inv));
            return select(gt(p, lit(0, float32)), sub(lit(1, float32), mul(t, t)), lit(0, float32));
          },
        };
      },
    };
  }

  argValues(spec: FmhaScoreModifierSpec | undefined): Readonly<Record<string, number>> {
    if (spec?.kind !== 'softcap')
      throw new ArgumentError('scoreModifier', 'must be { kind: "softcap", cap } for a soft-capping kernel', spec?.kind);
    if (!(Number.isFinite(spec.cap) && spec.cap > 0)) throw new ArgumentError('scoreModifier.cap', 'must be a finite number > 0', spec.cap);
    return { softcap_log2: spec.cap * Math.LOG2E };
  }
}
