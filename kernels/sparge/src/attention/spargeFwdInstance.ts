// Kernel instances of Sparge's sparse attention: the sm_90a warp-specialized TMA + wgmma forward
// pipeline of @tilekit/fmha with a sparse key-tile walk (`vsa`: the LUT of the block map; `jenga`:
// the one-hot block map compacted on chip) and the runtime PV-skip vote. The prologue (sequence,
// mask, O/LSE bases) and the parameters O, LSE, sequences, GQA, scale and mask are the dense
// forward's, under the same names.
import {
  add,
  cast,
  div,
  float32,
  type BlockBuilder,
  type Expr,
  index,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  mul,
  type SourceBuilder,
  sm90a,
  uint8,
  uint64,
  type InstanceKey,
  type Target,
} from '@tilekit/codegen';
import {
  BlockMaskKeyTileWalk,
  FmhaFwdWsPipeline,
  LutKeyTileWalk,
  type FmhaFwdWsPolicy,
  emitFmhaFwdWsBlock,
  FMHA_MAX_SEQLEN,
  fmhaFwdKeyPartOf,
  fmhaFwdTileParams,
  type FmhaFwdMaskKind,
} from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';

/** The sparse attention pipelines (the CK port's `-pipeline`): `vsa` walks the LUT, `jenga` the block map. */
export const SPARGE_PIPELINES = ['vsa', 'jenga'] as const;
export type SpargePipeline = (typeof SPARGE_PIPELINES)[number];

/** Key blocks the `jenga` walk can list on chip (2 bytes each in shared memory): s ≤ 256k at 128-row blocks. */
export const SPARGE_JENGA_MAX_KEY_BLOCKS = 2048;

/**
 * The Policy of one sparse attention instance: the dense pipeline's plus the walk. With a `pvGate`
 * (the PV-skip vote, runtime mode warp/block) groups of rows may skip P·V; without one every visited
 * tile computes it. With a `qkOperand` (int8) Q and K arrive quantized.
 */
export interface SpargeFwdPolicy extends Omit<FmhaFwdWsPolicy, 'outputSplit' | 'qkSource'> {
  readonly mask: FmhaFwdMaskKind;
  readonly pipeline: SpargePipeline;
}

/** The launch: grid (query blocks, heads, batch), threads, dynamic shared memory. */
export interface SpargeFwdLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

function spargeParams(policy: SpargeFwdPolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const e = getDType(policy.dtype).bytes;
  const blocks = { range: [1, FMHA_MAX_SEQLEN] as const };
  return {
    q_map: kernelParam.tensorMap(),
    k_map: kernelParam.tensorMap(),
    v_map: kernelParam.tensorMap(),
    ...fmhaFwdTileParams(kernelParam.pointer(element, { align: 2 * e })),
    // The block map's grid per (batch, head): q_blocks rows of k_blocks key blocks.
    q_blocks: kernelParam.i32(blocks),
    k_blocks: kernelParam.i32(blocks),
    // vsa: the delta LUT [b][h][q_blocks][k_blocks] and valid counts [b][h][q_blocks]; jenga: the one-hot map.
    lut: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    valid_block_num: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    block_map: kernelParam.pointer(uint8, { const: true, align: 1, nullable: true }),
    // PV skip: 0 none, 1 warp, 2 block; per-head thresholds (log2 units); optional counters.
    pv_mode: kernelParam.i32({ range: [0, 2] }),
    pv_threshold: kernelParam.pointer(float32, { const: true, align: 4 }),
    pv_stats: kernelParam.pointer(uint64, { align: 8, nullable: true }),
    // int8 Q·Kᵀ: the dequantization scales per query block [b][h][q_blocks] and key block [b][hk][k_blocks].
    q_scale: kernelParam.pointer(float32, { const: true, align: 4, nullable: true }),
    k_scale: kernelParam.pointer(float32, { const: true, align: 4, nullable: true }),
  };
}

type SpargeParams = ReturnType<typeof spargeParams>;

function spargeFwdKey(policy: SpargeFwdPolicy, target: Target): InstanceKey {
  const { tileM, tileN, headDim, headDimV, pvGate, keyTileWalk: _k, qkOperand, schedule, ...rest } = policy;
  const order = fmhaFwdKeyPartOf(schedule);
  return instanceKey(
    'sparge_fwd_sm90',
    {
      ...rest,
      hdim: headDim === headDimV ? headDim : `${headDim}x${headDimV}`,
      qk: qkOperand?.tag ?? 'f16qk',
      tile: [tileM, tileN],
      pv: pvGate?.tag ?? 'nopvskip',
      target: target.name,
      ...order.config,
    },
    { tags: { pipeline: '', dtype: '', hdim: 'd', qk: '', mask: '', tile: '', stages: 's', pv: '', ...order.tags } },
  );
}

/** One sparse attention kernel of the catalog. */
export class SpargeFwdInstance extends KernelInstance<SpargeFwdPolicy, SpargeParams> {
  readonly pipeline: FmhaFwdWsPipeline;
  protected readonly sourceHeader = { title: 'sparge attention', generator: '@tilekit/kernel-sparge' };

  constructor(policy: Omit<SpargeFwdPolicy, 'keyTileWalk'>, target: Target = sm90a) {
    // The walk's shared memory: the jenga walk lists key blocks on chip; the vsa walk reads its LUT.
    const walkBytes =
      policy.pipeline === 'jenga' ? new BlockMaskKeyTileWalk(cast(0, int32), cast(0, int32), SPARGE_JENGA_MAX_KEY_BLOCKS).sharedBytes : 0;
    const frozen = Object.freeze({ ...policy, keyTileWalk: { sharedBytes: walkBytes } });
    const pipeline = new FmhaFwdWsPipeline(frozen);
    super({
      key: spargeFwdKey(frozen, target),
      policy: frozen,
      target,
      params: spargeParams(frozen, target),
      threads: pipeline.threads,
      sharedBytes: pipeline.sharedBytes,
    });
    this.pipeline = pipeline;
  }

  /** Query rows per block of the block map (= the kernel's query tile). */
  get blockQ(): number {
    return this.policy.tileM;
  }

  /** Key rows per block of the block map (= the kernel's key tile). */
  get blockK(): number {
    return this.policy.tileN;
  }

  /** The TMA boxes of Q and of K/V (64 head-dim elements × tile rows × 1 × 1), as the dense forward's. */
  get tmaBoxes(): { readonly q: readonly number[]; readonly kv: readonly number[] } {
    return { q: [64, this.policy.tileM, 1, 1], kv: [64, this.policy.tileN, 1, 1] };
  }

  /** int8 instances: the boxes of int8 Q and K (the whole head dim × tile rows) and their swizzle (one swizzle row per tile row). */
  get int8Boxes(): { readonly q: readonly number[]; readonly k: readonly number[]; readonly swizzle: '128B' | '64B' } {
    const d = this.policy.headDim;
    return { q: [d, this.policy.tileM, 1, 1], k: [d, this.policy.tileN, 1, 1], swizzle: d === 128 ? '128B' : '64B' };
  }

  /** Grid for `batch` sequences, `nheadQ` heads and `qBlocks` query blocks per (batch, head). */
  launch(batch: number, nheadQ: number, qBlocks: number): SpargeFwdLaunch {
    return { grid: [Math.max(1, qBlocks), nheadQ, batch], block: [this.threads, 1, 1], sharedBytes: this.sharedBytes };
  }

  /** Adds the kernel to a translation unit. */
  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 1 } }, (b, a) => {
      const batch = b.let('batch', int32, cast(t.blockIdx('z'), int32));
      const head = b.let('head', int32, cast(t.blockIdx('y'), int32));
      const nhead = b.let('nhead', int32, cast(t.gridDim('y'), int32));
      const headK = b.let('head_k', int32, div(head, a.nhead_ratio));
      const block = emitFmhaFwdWsBlock(b, a, {
        target: t,
        mask: P.mask,
        tileM: P.tileM,
        headDimV: P.headDimV,
        outputBytes: getDType(P.dtype).bytes,
        batch,
        head,
        headK,
      });
      // This query block's row of the block map (its LUT row, valid count and one-hot row).
      const mapRow = b.let(
        'map_row',
        int64,
        add(mul(cast(add(mul(batch, nhead), head), int64), cast(a.q_blocks, int64)), cast(block.tile, int64)),
      );
      const walk =
        P.pipeline === 'vsa'
          ? new LutKeyTileWalk(
              b.let('lut_row', a.lut.type, add(a.lut, mul(mapRow, cast(a.k_blocks, int64)))),
              b.let('valid_blocks', int32, index(a.valid_block_num, mapRow)),
            )
          : new BlockMaskKeyTileWalk(
              b.let('map_row_ptr', a.block_map.type, add(a.block_map, mul(mapRow, cast(a.k_blocks, int64)))),
              a.k_blocks,
              SPARGE_JENGA_MAX_KEY_BLOCKS,
            );
      const kScaleRow =
        P.qkOperand !== undefined
          ? b.let(
              'k_scale_row',
              a.k_scale.type,
              add(a.k_scale, mul(cast(add(mul(batch, div(nhead, a.nhead_ratio)), headK), int64), cast(a.k_blocks, int64))),
            )
          : undefined;
      this.pipeline.emit(b, t, {
        ...block.args,
        keyTiles: walk,
        ...(kScaleRow !== undefined
          ? {
              int8Scales: {
                q: b.let('q_scale_tile', float32, index(a.q_scale, mapRow)),
                k: (l: BlockBuilder, row: Expr) => l.let('k_scale_tile', float32, index(kScaleRow, div(row, P.tileN))),
              },
            }
          : {}),
        ...(P.pvGate !== undefined
          ? { pvGate: { mode: a.pv_mode, threshold: b.let('pv_threshold', float32, index(a.pv_threshold, head)), stats: a.pv_stats } }
          : {}),
      });
    });
  }
}
