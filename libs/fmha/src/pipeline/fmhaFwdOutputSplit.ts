import { BlockGemmPolicyError } from '@tilekit/gemm';
import type { FmhaFwdKeyPart } from './fmhaFwdConsumerSchedule.ts';
import type { FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

/**
 * How the sm_90a forward splits O across consumer warpgroups (the hook a policy carries,
 * `outputSplit`): `slices` groups of consumer warpgroups run the same query rows, and group g owns
 * O's columns [g·d_v/slices, (g+1)·d_v/slices): its P·V reads only that slice of V, its epilogue
 * writes only that slice of O, and group 0 writes the LSE. So a warpgroup holds 1/slices of O in
 * registers, which lets d_v pass 256.
 */
export interface FmhaFwdOutputSplit {
  /** How the groups get P: each computes S = Q·Kᵀ and the softmax itself (FFPA's L2 idea, across warpgroups). */
  readonly tag: 'recomputeS';
  readonly slices: number;
  /** The split's part of an instance key. */
  readonly key: FmhaFwdKeyPart;
  /** Throws BlockGemmPolicyError when `policy` cannot be split so. */
  check(policy: FmhaFwdWsPolicy): void;
}

/**
 * O split into `slices` column slices, each group of consumer warpgroups computing S and the softmax
 * of the block's rows itself (the same arithmetic in every group, so every group's P is the same)
 * and P·V on its slice. Costs Q·Kᵀ once per slice; needs no exchange between warpgroups.
 */
export class FmhaFwdRecomputeSOutputSplit implements FmhaFwdOutputSplit {
  readonly tag = 'recomputeS';
  readonly slices: number;
  readonly key: FmhaFwdKeyPart;

  constructor(slices: number) {
    if (!Number.isSafeInteger(slices) || slices < 2 || slices > 4)
      throw new BlockGemmPolicyError('FmhaFwdRecomputeSOutputSplit slices', 'must be an integer in [2, 4]', String(slices));
    this.slices = slices;
    this.key = Object.freeze({ config: { dvSlices: slices }, tags: { dvSlices: 'dvslices' } });
    Object.freeze(this);
  }

  check(policy: FmhaFwdWsPolicy): void {
    const bad = (rule: string, found: unknown): never => {
      throw new BlockGemmPolicyError('FmhaFwdWsPipeline outputSplit', rule, String(found));
    };
    const slice = policy.headDimV / this.slices;
    if (!Number.isInteger(slice) || slice % 64 !== 0 || slice > 256)
      bad(`headDimV must split into ${this.slices} slices of whole 64-column slabs, at most 256 each`, policy.headDimV);
    if (policy.pvGate !== undefined) bad('takes no P·V gate (its vote is per warpgroup of rows)', policy.pvGate.tag);
    if (policy.schedule?.tag === 'pingPong')
      bad('takes no ping-pong schedule (its turns pair two warpgroups of rows)', policy.schedule.tag);
  }
}

/** The key part of `split` (nothing for none). */
export function fmhaFwdOutputSplitKeyPart(split: FmhaFwdOutputSplit | undefined): FmhaFwdKeyPart {
  return split?.key ?? { config: {}, tags: {} };
}
