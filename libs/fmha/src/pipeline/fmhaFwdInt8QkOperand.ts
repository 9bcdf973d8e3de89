import { add, call, float32, int32, lit, mul, sub, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { BlockGemmPolicyError } from '@tilekit/gemm';
import type { BlockEmitter } from '@tilekit/tile';
import type { FmhaFwdQkDequantizeStep, FmhaFwdQkOperand } from './fmhaFwdQkOperand.ts';
import type { FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

/**
 * int8 Q·Kᵀ (SageAttention's per-block quantization, Sparge's int8 path): Q and K arrive as int8
 * with one dequantization scale per query tile and per key tile; S = Q8·K8ᵀ is an s8 wgmma with an
 * int32 accumulator over the whole head dim (64 or 128, one swizzle row), converted to float and
 * scaled by q_scale·k_scale with the softmax scale.
 */
export class FmhaFwdInt8QkOperand implements FmhaFwdQkOperand {
  readonly tag = 'int8';
  readonly gemmDtype = 'int8';
  readonly accumulator = int32;

  tileK(headDim: number): number {
    return headDim;
  }

  check(policy: FmhaFwdWsPolicy): void {
    if (policy.headDim !== 64 && policy.headDim !== 128)
      throw new BlockGemmPolicyError(
        'FmhaFwdWsPipeline headDim',
        'must be 64 or 128 with int8 Q·Kᵀ (one swizzle row of int8)',
        String(policy.headDim),
      );
  }

  dequantize(l: BlockBuilder, inner: BlockEmitter, step: FmhaFwdQkDequantizeStep): Expr {
    const { sAcc, sRaw, scales } = step;
    l.comment("int8 S to float; the tile's dequantization scales join the softmax scale");
    inner.threads((t) => {
      // |S| ≤ 128·128·128 < 2^22, so the float with S added to the mantissa of 1.5·2^23 is exact:
      // an integer add and a float subtract instead of the quarter-rate I2F conversion.
      for (let e = 0; e < sAcc.size; e++) {
        t.b.assign(
          sAcc.at(t, e),
          sub(call('__int_as_float', [add(sRaw.at(t, e), lit(0x4b400000, int32))], float32, { pure: true }), lit(12582912, float32)),
        );
      }
    });
    return l.let('scale_log2_tile', float32, mul(step.scaleLog2, mul(scales.q, scales.k(l, step.j0))));
  }
}
