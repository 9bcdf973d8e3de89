// Kernel instances of the dense attention forward pipeline: a Policy bound to the sm_90a
// warp-specialized TMA + wgmma pipeline of @tilekit/fmha, with a deterministic key (= entry point),
// the launch constants the host asks for, and the kernel parameters. Host code never re-derives
// these. The operators that launch it (the dense forward, FFPA's large head dims) name their own
// instances (FmhaFwdInstanceHeader).
import {
  add,
  cast,
  div,
  float32,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  mul,
  type SourceBuilder,
  sm90a,
  sub,
  type InstanceKey,
  type Target,
} from '@tilekit/codegen';
import {
  emitFmhaFwdWsBlock,
  fmhaFwdKeyPartOf,
  fmhaFwdTileParams,
  FmhaFwdWsPipeline,
  type FmhaFwdLaunch,
  type FmhaFwdMaskKind,
  type FmhaFwdWsPolicy,
  scoreModifierKeyPart,
  type FmhaScoreModifier,
} from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';

/** The Policy of one attention-forward instance: the pipeline's without the sparse hooks (P·V gate, int8 Q·Kᵀ, key-tile walk). */
export interface FmhaFwdPolicy extends Omit<FmhaFwdWsPolicy, 'pvGate' | 'qkOperand' | 'keyTileWalk'> {
  readonly mask: FmhaFwdMaskKind;
  /**
   * Split-KV: the key range is cut into `num_splits` pieces (grid z = batch · splits); each writes
   * its O (normalized over its own keys) and LSE in fp32 to a workspace that the combine kernel
   * merges. `false`: one pass writes O (and LSE) directly.
   */
  readonly splitKv: boolean;
  /** A score modifier (soft-capping, ALiBi): its parameters follow the kernel's own, its tag ends the name. */
  readonly scoreModifier?: FmhaScoreModifier;
}

function fmhaParams(policy: FmhaFwdPolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const e = getDType(policy.dtype).bytes;
  const big = { range: [0, 2 ** 50] as const };
  return {
    q_map: kernelParam.tensorMap(),
    k_map: kernelParam.tensorMap(),
    v_map: kernelParam.tensorMap(),
    // Split-KV writes fp32 partial O and LSE to the workspace instead of O.
    ...fmhaFwdTileParams(policy.splitKv ? kernelParam.pointer(float32, { align: 8 }) : kernelParam.pointer(element, { align: 2 * e })),
    num_splits: kernelParam.i32({ range: [1, 1024] }),
    o_split_stride: kernelParam.i64(big),
    lse_split_stride: kernelParam.i64(big),
    ...policy.scoreModifier?.params(),
  };
}

type FmhaParams = ReturnType<typeof fmhaParams>;

/** What an operator calls its instances: the key's prefix and the generated source's header. */
export interface FmhaFwdInstanceHeader {
  readonly prefix: string;
  readonly title: string;
  readonly generator: string;
}

/** The dense forward operator's (@tilekit/kernel-fmha-fwd) names. */
export const FMHA_FWD_INSTANCE_HEADER: FmhaFwdInstanceHeader = Object.freeze({
  prefix: 'fmha_fwd_sm90',
  title: 'fmha forward',
  generator: '@tilekit/kernel-fmha-fwd',
});

function fmhaFwdKey(policy: FmhaFwdPolicy, target: Target, prefix: string): InstanceKey {
  const { tileM, tileN, headDim, headDimV, scoreModifier, schedule, outputSplit, qkSource, ...rest } = policy;
  const hdim = headDim === headDimV ? headDim : `${headDim}x${headDimV}`;
  const parts = [
    scoreModifierKeyPart(scoreModifier),
    fmhaFwdKeyPartOf(schedule),
    fmhaFwdKeyPartOf(outputSplit),
    fmhaFwdKeyPartOf(qkSource),
  ];
  return instanceKey(prefix, Object.assign({ ...rest, hdim, tile: [tileM, tileN], target: target.name }, ...parts.map((p) => p.config)), {
    tags: Object.assign({ dtype: '', hdim: 'd', mask: '', tile: '', stages: 's', splitKv: 'split' }, ...parts.map((p) => p.tags)),
  });
}

/** One attention-forward kernel of the catalog. */
export class FmhaFwdInstance extends KernelInstance<FmhaFwdPolicy, FmhaParams> {
  readonly pipeline: FmhaFwdWsPipeline;
  protected readonly sourceHeader: { readonly title: string; readonly generator: string };

  constructor(policy: FmhaFwdPolicy, target: Target = sm90a, header: FmhaFwdInstanceHeader = FMHA_FWD_INSTANCE_HEADER) {
    const frozen = Object.freeze({ ...policy });
    const pipeline = new FmhaFwdWsPipeline(policy);
    super({
      key: fmhaFwdKey(frozen, target, header.prefix),
      policy: frozen,
      target,
      params: fmhaParams(frozen, target),
      threads: pipeline.threads,
      sharedBytes: pipeline.sharedBytes,
    });
    this.pipeline = pipeline;
    this.sourceHeader = { title: header.title, generator: header.generator };
  }

  /** The TMA box of Q (dimension 0 innermost: 64 head-dim elements × tileM rows × 1 head × 1 batch). */
  get tmaBoxes(): { readonly q: readonly number[]; readonly kv: readonly number[] } {
    return { q: [64, this.policy.tileM, 1, 1], kv: [64, this.policy.tileN, 1, 1] };
  }

  /** CTAs per query tile and head: a cluster of them with a cluster Q·Kᵀ source (`FmhaFwdClusterQkSource`), else 1. */
  get clusterCtas(): number {
    return this.pipeline.qkSource.clusterCtas ?? 1;
  }

  /**
   * Grid for `batch` sequences of at most `maxSeqlenQ` query rows and `nheadQ` heads (and `splits`
   * key splits); with a cluster, y counts heads × cluster CTAs, in clusters of [1, CTAs, 1].
   */
  launch(batch: number, nheadQ: number, maxSeqlenQ: number, splits = 1): FmhaFwdLaunch {
    const ctas = this.clusterCtas;
    return {
      grid: [Math.max(1, this.pipeline.queryTiles(maxSeqlenQ)), nheadQ * ctas, batch * splits],
      block: [this.threads, 1, 1],
      sharedBytes: this.sharedBytes,
      ...(ctas > 1 ? { cluster: [1, ctas, 1] as const } : {}),
    };
  }

  /** Adds the kernel to a translation unit. */
  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 1 } }, (b, a) => {
      const grid = b.let('splits_x_batch', int32, cast(t.blockIdx('z'), int32));
      const split = P.splitKv ? b.let('split', int32, sub(grid, mul(div(grid, a.num_splits), a.num_splits))) : undefined;
      const batch = b.let('batch', int32, P.splitKv ? div(grid, a.num_splits) : grid);
      const ctas = this.clusterCtas;
      const head = b.let('head', int32, ctas > 1 ? div(cast(t.blockIdx('y'), int32), ctas) : cast(t.blockIdx('y'), int32));
      // In a cluster, the CTA's rank picks its columns of V and O (its first one: rank · headDimV).
      const cols = ctas > 1 ? b.let('cta_cols', int32, mul(sub(cast(t.blockIdx('y'), int32), mul(head, ctas)), P.headDimV)) : undefined;
      const headK = b.let('head_k', int32, div(head, a.nhead_ratio));
      const splitOffset = (stride: typeof a.o_split_stride) => (split !== undefined ? mul(cast(split, int64), stride) : cast(0, int64));
      const oOffset = cols === undefined ? splitOffset(a.o_split_stride) : add(splitOffset(a.o_split_stride), cast(cols, int64));
      const block = emitFmhaFwdWsBlock(b, a, {
        target: t,
        mask: P.mask,
        tileM: P.tileM,
        headDimV: P.headDimV,
        outputBytes: P.splitKv ? 4 : getDType(P.dtype).bytes,
        batch,
        head,
        headK,
        oOffset,
        lseOffset: splitOffset(a.lse_split_stride),
        ...(cols !== undefined ? { vColumn0: cols } : {}),
      });
      const score = P.scoreModifier?.bind(a, { seqlenQ: block.args.seqlenQ, seqlenK: block.args.seqlenK }).atHead(b, head);
      this.pipeline.emit(b, t, {
        ...block.args,
        ...(split !== undefined ? { split: { count: a.num_splits, index: split } } : {}),
        ...(score !== undefined ? { scoreModifier: score } : {}),
      });
    });
  }
}
