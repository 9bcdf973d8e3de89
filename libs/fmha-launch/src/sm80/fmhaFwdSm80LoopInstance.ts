// sm_80 attention-forward instances: a main loop (FmhaFwdSm80MainLoop: the cp.async + ldmatrix +
// mma.sync pipelines of @tilekit/fmha) bound to the kernel around it, with a deterministic key
// (= entry point), the launch constants and the kernel parameters. The same runtime features as the
// sm_90a instance (batch/group mode, per-batch seqlen_k, GQA, window masks, LSE, layouts through
// strides), with global pointers and element strides in place of TMA maps. Compiled for sm_80
// (A100) or, with the sm_90a target, for Hopper (an sm_80 cubin does not load on sm_90). The
// operators that launch it (the dense forward, FFPA's large head dims) name their own instances
// (FmhaFwdInstanceHeader).
import {
  cast,
  div,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  mul,
  type SourceBuilder,
  sm80,
  sub,
  type InstanceKey,
  type InstanceValue,
  type Target,
} from '@tilekit/codegen';
import {
  emitFmhaFwdBase,
  emitFmhaFwdLseBase,
  emitFmhaFwdMask,
  emitFmhaFwdSequence,
  FMHA_MAX_SEQLEN,
  fmhaFwdTileParams,
  fmhaRowStrideParams,
  type FmhaFwdLaunch,
  type FmhaFwdMaskKind,
} from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import { makeTensorView } from '@tilekit/tile';
import type { FmhaFwdInstanceHeader } from '../fwd/fmhaFwdInstance.ts';
import type { FmhaFwdSm80MainLoop, FmhaFwdSm80MainLoopPolicy } from './fmhaFwdSm80MainLoop.ts';

/** The Policy of one sm_80 attention-forward instance: its main loop's and the mask kind. */
export type FmhaFwdSm80LoopInstancePolicy<P extends FmhaFwdSm80MainLoopPolicy> = P & { readonly mask: FmhaFwdMaskKind };

/** Elements per 16-byte cp.async vector of a 2-byte type: Q/K/V strides must keep every row 16-byte aligned. */
export const FMHA_SM80_COPY_ELEMENTS = 8;

/** Largest row stride (elements) of Q/K/V/O: an `int` kernel parameter. */
export const FMHA_SM80_MAX_ROW_STRIDE = 2 ** 31 - 1;

function params(policy: FmhaFwdSm80MainLoopPolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const e = getDType(policy.dtype).bytes;
  const rowStride = [0, FMHA_SM80_MAX_ROW_STRIDE] as const;
  return {
    q: kernelParam.pointer(element, { const: true, align: 16 }),
    k: kernelParam.pointer(element, { const: true, align: 16 }),
    v: kernelParam.pointer(element, { const: true, align: 16 }),
    ...fmhaRowStrideParams('q', rowStride),
    ...fmhaRowStrideParams('k', rowStride),
    ...fmhaRowStrideParams('v', rowStride),
    ...fmhaFwdTileParams(kernelParam.pointer(element, { align: 2 * e })),
  };
}

type FmhaSm80Params = ReturnType<typeof params>;

/**
 * The key: config = the policy's own fields but the head dims and tile (dtype first, the main
 * loop's, the mask), `hdim` (d, or d_qk × d_v), `tile` [tileM, tileN] and the target; name =
 * prefix, dtype, `d…`, mask, tile, the main loop's tagged fields, target.
 */
function fmhaFwdSm80Key(
  policy: FmhaFwdSm80MainLoopPolicy & { readonly mask: FmhaFwdMaskKind },
  target: Target,
  prefix: string,
  loopTags: Readonly<Record<string, string>>,
): InstanceKey {
  const { tileM, tileN, headDim, headDimV, ...rest } = policy;
  return instanceKey(
    prefix,
    {
      ...(rest as Record<string, InstanceValue>),
      hdim: headDim === headDimV ? headDim : `${headDim}x${headDimV}`,
      tile: [tileM, tileN],
      target: target.name,
    },
    { tags: { dtype: '', hdim: 'd', mask: '', tile: '', ...loopTags, target: '' } },
  );
}

/** How an instance is named and built: the mask kind, the target (default sm_80), the operator's header, the main loop's name tags. */
export interface FmhaFwdSm80LoopInstanceOptions {
  readonly mask: FmhaFwdMaskKind;
  readonly target?: Target;
  readonly header: FmhaFwdInstanceHeader;
  /** Name tags of the main loop's own policy fields (default: the main loop's `keyTags`, else none). */
  readonly keyTags?: Readonly<Record<string, string>>;
}

/**
 * One sm_80 attention-forward kernel: the kernel arguments, the (batch, head) pointer set-up and
 * the mask around a main loop (cp.async, ldmatrix + mma.sync, online softmax in registers). Dynamic
 * shared memory per block: the main loop's (incl. its alignment slack).
 */
export class FmhaFwdSm80LoopInstance<L extends FmhaFwdSm80MainLoop = FmhaFwdSm80MainLoop> extends KernelInstance<
  FmhaFwdSm80LoopInstancePolicy<L['policy']>,
  FmhaSm80Params
> {
  readonly mainLoop: L;
  protected readonly sourceHeader: { readonly title: string; readonly generator: string };

  constructor(mainLoop: L, options: FmhaFwdSm80LoopInstanceOptions) {
    const target = options.target ?? sm80;
    const policy = Object.freeze({ ...mainLoop.policy, mask: options.mask }) as FmhaFwdSm80LoopInstancePolicy<L['policy']>;
    super({
      key: fmhaFwdSm80Key(policy, target, options.header.prefix, options.keyTags ?? mainLoop.keyTags ?? {}),
      policy,
      target,
      params: params(policy, target),
      threads: mainLoop.threads,
      sharedBytes: mainLoop.sharedBytes,
    });
    this.mainLoop = mainLoop;
    this.sourceHeader = { title: options.header.title, generator: options.header.generator };
  }

  /** Grid for `batch` sequences of at most `maxSeqlenQ` query rows and `nheadQ` heads: (query tiles, heads, batch). */
  launch(batch: number, nheadQ: number, maxSeqlenQ: number): FmhaFwdLaunch {
    return {
      grid: [Math.max(1, this.mainLoop.queryTiles(maxSeqlenQ)), nheadQ, batch],
      block: [this.threads, 1, 1],
      sharedBytes: this.sharedBytes,
    };
  }

  /** Adds the kernel to a translation unit. */
  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const e = getDType(P.dtype).bytes;
    const rowsQ = symbol('seqlen_q', { max: FMHA_MAX_SEQLEN });
    const rowsK = symbol('seqlen_k', { max: FMHA_MAX_SEQLEN });
    const v = FMHA_SM80_COPY_ELEMENTS;
    const input = (rows: typeof rowsQ, stride: string, cols: number) =>
      makeNaiveTensorDescriptor([rows, cols], [symbol(stride, { max: FMHA_SM80_MAX_ROW_STRIDE, multipleOf: v }), 1], { vectorLength: v });
    const qDesc = input(rowsQ, 'q_stride_row', P.headDim);
    const kDesc = input(rowsK, 'k_stride_row', P.headDim);
    const vDesc = input(rowsK, 'v_stride_row', P.headDimV);
    const oDesc = makeNaiveTensorDescriptor(
      [rowsQ, P.headDimV],
      [symbol('o_stride_row', { max: FMHA_SM80_MAX_ROW_STRIDE, multipleOf: 2 }), 1],
      { vectorLength: 2 },
    );
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 1 } }, (b, a) => {
      const batch = b.let('batch', int32, cast(t.blockIdx('z'), int32));
      const head = b.let('head', int32, cast(t.blockIdx('y'), int32));
      const headK = b.let('head_k', int32, div(head, a.nhead_ratio));
      // Masked kernels start with the query tiles that see the most keys (the last ones under a causal mask).
      const tile = b.let(
        'q_tile_index',
        int32,
        P.mask === 'none' ? cast(t.blockIdx('x'), int32) : sub(sub(cast(t.gridDim('x'), int32), 1), cast(t.blockIdx('x'), int32)),
      );
      const m0 = b.let('m0', int32, mul(tile, P.tileM));
      // Group mode: the launcher passes batch strides 0 (a sequence's rows are rows of one "batch").
      const seq = emitFmhaFwdSequence(b, a, batch, m0);
      const { rowQ, rowK, seqlenQ, seqlenK } = seq;
      const maskCode = emitFmhaFwdMask(b, P.mask, a, seq);
      const rowOffset = (row: typeof rowQ, stride: typeof a.q_stride_row) => mul(cast(row, int64), cast(stride, int64));
      const qBase = emitFmhaFwdBase(b, 'q_base', a.q, {
        batch,
        batchStride: a.q_stride_batch,
        head,
        headStride: a.q_stride_head,
        rowOffset: rowOffset(rowQ, a.q_stride_row),
      });
      const kBase = emitFmhaFwdBase(b, 'k_base', a.k, {
        batch,
        batchStride: a.k_stride_batch,
        head: headK,
        headStride: a.k_stride_head,
        rowOffset: rowOffset(rowK, a.k_stride_row),
      });
      const vBase = emitFmhaFwdBase(b, 'v_base', a.v, {
        batch,
        batchStride: a.v_stride_batch,
        head: headK,
        headStride: a.v_stride_head,
        rowOffset: rowOffset(rowK, a.v_stride_row),
      });
      const oBase = emitFmhaFwdBase(b, 'o_base', a.o, {
        batch,
        batchStride: a.o_stride_batch,
        head,
        headStride: a.o_stride_head,
        rowOffset: rowOffset(rowQ, a.o_stride_row),
      });
      const lseBase = emitFmhaFwdLseBase(b, a.lse, {
        batch,
        batchStride: a.lse_stride_batch,
        head,
        headStride: a.lse_stride_head,
        rowOffset: cast(rowQ, int64),
      });
      this.mainLoop.emit(b, t, {
        q: makeTensorView(qBase, qDesc, { elementBytes: e }),
        k: makeTensorView(kBase, kDesc, { elementBytes: e }),
        v: makeTensorView(vBase, vDesc, { elementBytes: e }),
        o: makeTensorView(oBase, oDesc, { elementBytes: e }),
        seqlenQ,
        seqlenK,
        m0,
        scaleLog2: a.scale_log2,
        mask: maskCode,
        symbols: {
          seqlen_q: seqlenQ,
          seqlen_k: seqlenK,
          q_stride_row: a.q_stride_row,
          k_stride_row: a.k_stride_row,
          v_stride_row: a.v_stride_row,
          o_stride_row: a.o_stride_row,
        },
        lse: lseBase,
      });
    });
  }
}
