import type { BlockBuilder, Expr } from '@tilekit/codegen';
import { BlockGemmPolicyError } from '@tilekit/gemm';
import type { DistributedTensor } from '@tilekit/tile';
import type { FmhaFwdKeyPart } from './fmhaFwdKeyPart.ts';
import type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';
import type { FmhaFwdWsPipeline, FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';
import type { FmhaFwdWsTileSteps } from './fmhaFwdWsTileSteps.ts';

/**
 * How the sm_90a forward splits O across consumer warpgroups (the hook a policy carries,
 * `outputSplit`): `slices` groups of consumer warpgroups run the same query rows, and group g owns
 * O's columns [g·d_v/slices, (g+1)·d_v/slices): its P·V reads only that slice of V, its epilogue
 * writes only that slice of O, and group 0 writes the LSE. So a warpgroup holds 1/slices of O in
 * registers, which lets d_v pass 256.
 */
export interface FmhaFwdOutputSplit {
  /**
   * How the groups get P: each computes S = Q·Kᵀ and the softmax itself (`recomputeS`, FFPA's L2
   * idea across warpgroups), or group 0 computes them and hands P to the others (`shareP`).
   */
  readonly tag: 'recomputeS' | 'shareP';
  readonly slices: number;
  /** Groups that compute S = Q·Kᵀ (and so read and release Q and K): every one, or the first. */
  readonly scoringSlices: number;
  /** The split's part of an instance key. */
  readonly key: FmhaFwdKeyPart;
  /** Throws BlockGemmPolicyError when `policy` cannot be split so. */
  check(policy: FmhaFwdWsPolicy): void;
  /** Shared memory the split needs (its exchange), placed after the pipeline's other regions. */
  sharedBytes(pipeline: FmhaFwdWsPipeline): number;
  /** Thread 0, while the ring's barriers are initialised: the split's own. */
  emitInit(t: BlockBuilder, ctx: Pick<FmhaFwdWsContext, 'target' | 'smem' | 'pipeline'>): void;
  /** The consumers' key loops: `runSchedule` emits the policy's schedule (for every group, or for the scoring one). */
  emitConsumers(cons: BlockBuilder, steps: FmhaFwdWsTileSteps, runSchedule: (b: BlockBuilder) => void): void;
  /** A scoring group's step after a tile's P is packed (`corr`: the tile's O rescale factors). */
  emitPublish(l: BlockBuilder, steps: FmhaFwdWsTileSteps, it: Expr, corr: DistributedTensor): void;
  /** After the key loops, before the epilogue. */
  emitBeforeEpilogue(cons: BlockBuilder, steps: FmhaFwdWsTileSteps): void;
}

/**
 * O split into `slices` column slices, each group of consumer warpgroups computing S and the softmax
 * of the block's rows itself (the same arithmetic in every group, so every group's P is the same)
 * and P·V on its slice. Costs Q·Kᵀ once per slice; needs no exchange between warpgroups.
 */
export class FmhaFwdRecomputeSOutputSplit implements FmhaFwdOutputSplit {
  readonly tag = 'recomputeS';
  readonly slices: number;
  readonly scoringSlices: number;
  readonly key: FmhaFwdKeyPart;

  constructor(slices: number) {
    if (!Number.isSafeInteger(slices) || slices < 2 || slices > 4)
      throw new BlockGemmPolicyError('FmhaFwdRecomputeSOutputSplit slices', 'must be an integer in [2, 4]', String(slices));
    this.slices = slices;
    this.scoringSlices = slices;
    this.key = Object.freeze({ config: { dvSlices: slices }, tags: { dvSlices: 'dvslices' } });
    Object.freeze(this);
  }

  check(policy: FmhaFwdWsPolicy): void {
    checkOutputSlices(policy, this.slices);
  }

  sharedBytes(): number {
    return 0;
  }

  emitInit(): void {}

  emitConsumers(cons: BlockBuilder, _steps: FmhaFwdWsTileSteps, runSchedule: (b: BlockBuilder) => void): void {
    runSchedule(cons);
  }

  emitPublish(): void {}

  emitBeforeEpilogue(): void {}
}

/**
 * The rules every output split shares: d_v in whole 64-column slabs, ⌈d_v / (64·slices)⌉·64 columns
 * per slice (the last one padded), at most 256; no P·V gate, no ping-pong.
 */
export function checkOutputSlices(policy: FmhaFwdWsPolicy, slices: number): void {
  const bad = (rule: string, found: unknown): never => {
    throw new BlockGemmPolicyError('FmhaFwdWsPipeline outputSplit', rule, String(found));
  };
  const slice = Math.ceil(policy.headDimV / (64 * slices)) * 64;
  if (policy.headDimV % 64 !== 0 || slice > 256 || slice * (slices - 1) >= policy.headDimV)
    bad(`headDimV must be whole 64-column slabs that split into ${slices} slices of at most 256, none empty`, policy.headDimV);
  if (policy.pvGate !== undefined) bad('takes no P·V gate (its vote is per warpgroup of rows)', policy.pvGate.tag);
  if (policy.schedule?.tag === 'pingPong') bad('takes no ping-pong schedule (its turns pair two warpgroups of rows)', policy.schedule.tag);
}
