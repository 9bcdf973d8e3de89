// The bare kernel body the sm_80 forward pipeline specs read: a pipeline emitted over plain
// pointers (Q/K/V rows of 16-byte vectors, O of element pairs), a causal or no mask, LSE optional.
import { float32, int32, pointer, sm80, SourceBuilder, type BlockBuilder, type Target } from '@tilekit/codegen';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { makeTensorView, type TensorView } from '@tilekit/tile';
import { emitGenericAttentionMask } from '../mask/genericAttentionMaskCode.ts';
import type { FmhaFwdSm80Args } from '../pipeline/fmhaFwdSm80Pipeline.ts';

/** What {@link emitFmhaFwdSm80TestBody} needs of a pipeline: its element type and head dims, and its `emit`. */
export interface FmhaFwdSm80TestPipeline {
  readonly policy: { readonly dtype: 'fp16' | 'bf16'; readonly headDim: number; readonly headDimV: number };
  emit(b: BlockBuilder, target: Target, args: FmhaFwdSm80Args): void;
}

/** Options of {@link emitFmhaFwdSm80TestBody}: the target (default sm_80), a causal mask (default none), LSE (default on). */
export interface FmhaFwdSm80TestBodyOptions {
  readonly target?: Target;
  readonly masked?: boolean;
  readonly lse?: boolean;
}

/** A [rows, cols] view of 2-byte elements over `ptr`, row stride the symbol `stride` (a multiple of `vector`). */
function testView(ptr: Parameters<typeof makeTensorView>[0], rows: string, stride: string, cols: number, vector: number): TensorView {
  const desc = makeNaiveTensorDescriptor(
    [symbol(rows, { max: 1 << 30 }), cols],
    [symbol(stride, { max: 2 ** 31 - 1, multipleOf: vector }), 1],
    {
      vectorLength: vector,
    },
  );
  return makeTensorView(ptr, desc, { elementBytes: 2 });
}

/** The rendered source of a kernel `fmha_body` whose body is `p` emitted over its parameters (views over plain pointers). */
export function emitFmhaFwdSm80TestBody(p: FmhaFwdSm80TestPipeline, options: FmhaFwdSm80TestBodyOptions = {}): string {
  const target = options.target ?? sm80;
  const P = p.policy;
  const half = target.dtypeType(P.dtype);
  const src = new SourceBuilder({ dialect: target });
  src.function(
    {
      name: 'fmha_body',
      qualifiers: target.kernelQualifiers(),
      params: {
        q: pointer(half, { const: true }),
        k: pointer(half, { const: true }),
        v: pointer(half, { const: true }),
        o: pointer(half),
        lse: pointer(float32),
        sq: int32,
        sk: int32,
        q_ld: int32,
        k_ld: int32,
        v_ld: int32,
        o_ld: int32,
        m0: int32,
        scale_log2: float32,
      },
    },
    (b, a) => {
      const mask = emitGenericAttentionMask(
        options.masked ? { kind: 'window', alignment: 'topLeft', left: -1, right: 0 } : { kind: 'none' },
        a.sq,
        a.sk,
      );
      p.emit(b, target, {
        q: testView(a.q, 'seqlen_q', 'q_ld', P.headDim, 8),
        k: testView(a.k, 'seqlen_k', 'k_ld', P.headDim, 8),
        v: testView(a.v, 'seqlen_k', 'v_ld', P.headDimV, 8),
        o: testView(a.o, 'seqlen_q', 'o_ld', P.headDimV, 2),
        seqlenQ: a.sq,
        seqlenK: a.sk,
        m0: a.m0,
        scaleLog2: a.scale_log2,
        mask,
        symbols: { seqlen_q: a.sq, seqlen_k: a.sk, q_ld: a.q_ld, k_ld: a.k_ld, v_ld: a.v_ld, o_ld: a.o_ld },
        ...(options.lse === false ? {} : { lse: a.lse }),
      });
    },
  );
  return src.render();
}
