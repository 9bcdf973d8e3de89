// The dense forward's sm_80 instances: FlashAttention-2's cp.async + ldmatrix + mma.sync pipeline
// of @tilekit/fmha (FmhaFwdSm80Pipeline) as the main loop of @tilekit/fmha-launch's sm_80 instance,
// named `fmha_fwd_sm80_…`. Compiled for sm_80 (A100) or, with the sm_90a target, for Hopper.
import { sm80, type Target } from '@tilekit/codegen';
import { FmhaFwdSm80Pipeline, type FmhaFwdMaskKind, type FmhaFwdSm80Policy } from '@tilekit/fmha';
import { FmhaFwdSm80LoopInstance, type FmhaFwdInstanceHeader } from '@tilekit/fmha-launch';

export { FMHA_SM80_COPY_ELEMENTS, FMHA_SM80_MAX_ROW_STRIDE } from '@tilekit/fmha-launch';

/** The Policy of one sm_80 attention-forward instance. */
export interface FmhaFwdSm80InstancePolicy extends FmhaFwdSm80Policy {
  readonly mask: FmhaFwdMaskKind;
}

/** The dense forward operator's sm_80 names (`fmha_fwd_sm80_…`) and source header. */
export const FMHA_FWD_SM80_INSTANCE_HEADER: FmhaFwdInstanceHeader = Object.freeze({
  prefix: 'fmha_fwd_sm80',
  title: 'fmha forward (sm_80 pipeline)',
  generator: '@tilekit/kernel-fmha-fwd',
});

/**
 * One sm_80 attention-forward kernel (cp.async double buffering, ldmatrix + mma.sync, online softmax
 * in registers). Dynamic shared memory per block: the pipeline's (incl. 1024 of alignment slack).
 */
export class FmhaFwdSm80Instance extends FmhaFwdSm80LoopInstance<FmhaFwdSm80Pipeline> {
  declare readonly policy: FmhaFwdSm80InstancePolicy;

  constructor(policy: FmhaFwdSm80InstancePolicy, target: Target = sm80) {
    const { mask, ...pipelinePolicy } = policy;
    super(new FmhaFwdSm80Pipeline(pipelinePolicy), { mask, target, header: FMHA_FWD_SM80_INSTANCE_HEADER, keyTags: { qResidence: 'q' } });
  }

  /** The main loop: FlashAttention-2's sm_80 pipeline. */
  get pipeline(): FmhaFwdSm80Pipeline {
    return this.mainLoop;
  }
}
