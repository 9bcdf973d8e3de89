// What an sm_80 attention-forward instance asks of its main loop: the block-level pipeline that
// runs from the kernel's views of Q, K, V and O (FmhaFwdSm80Args) to the stored output, with the
// launch constants it needs and the policy fields that name it.
import type { BlockBuilder, Target } from '@tilekit/codegen';
import type { FmhaFwdSm80Args } from '@tilekit/fmha';

/**
 * The policy fields every sm_80 main loop has (the instance key's `hdim` and `tile` come from the
 * head dims and tile; every other own field, `dtype` included, is a config field of the key as it is:
 * strings, numbers or booleans).
 */
export interface FmhaFwdSm80MainLoopPolicy {
  readonly dtype: 'fp16' | 'bf16';
  readonly headDim: number;
  readonly headDimV: number;
  readonly tileM: number;
  readonly tileN: number;
}

/**
 * An sm_80 forward main loop (`FmhaFwdSm80Pipeline`, `FmhaFwdSm80SplitDPipeline`, …): its policy,
 * block size, dynamic shared memory, query tiles per sequence and the body it emits.
 */
export interface FmhaFwdSm80MainLoop {
  readonly policy: FmhaFwdSm80MainLoopPolicy;
  /**
   * Name tags of the policy's own fields (e.g. `{ qResidence: 'q' }`: `…_qregisters_…`), in name
   * order after the tile; a field without a tag is in the key's hash but not in the name.
   */
  readonly keyTags?: Readonly<Record<string, string>>;
  readonly threads: number;
  /** Dynamic shared memory per block (bytes, alignment slack included). */
  readonly sharedBytes: number;
  /** Query tiles (blocks along x) of a sequence of `seqlenQ` rows. */
  queryTiles(seqlenQ: number): number;
  /** Emits the whole kernel body after the kernel's pointer set-up. */
  emit(b: BlockBuilder, target: Target, args: FmhaFwdSm80Args): void;
}
