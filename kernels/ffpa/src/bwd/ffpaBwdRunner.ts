// The operator-level runner of FFPA's backward: checks the problem, picks its three kernels, and
// drives them through @tilekit/fmha's pure FmhaBwdLauncher (the unified workspace, atomic dQ) as
// @tilekit/fmha-launch's FmhaBwdRunnerBase does for every backward, with the split-D dq_dk_dv.
import { fmhaBwdTraitsOf, FmhaBwdLauncher, type CheckedFmhaBwdProblem, type FmhaBwdArgs, type FmhaScoreModifierSpec } from '@tilekit/fmha';
import { FmhaBwdRunnerBase, lateFmhaBwdExecutor, type FmhaBwdRunnerBuildOptions } from '@tilekit/fmha-launch';
import { ArgumentError } from '@tilekit/numeric';
import type { Stream } from '@tilekit/runtime';
import { checkFfpaBwdProblem, type FfpaBwdProblem } from './checkFfpaBwdProblem.ts';
import type { FfpaBwdInstance } from './ffpaBwdInstance.ts';
import { ffpaBwdKernelSet, NoFfpaBwdInstanceError } from './ffpaBwdKernelSet.ts';
import { packFfpaBwdDqDkDv } from './ffpaBwdLauncher.ts';

/** How the runner gets its kernels (e.g. a `buildOncePerInstance` memo) and its workspace. */
export type FfpaBwdRunnerOptions = FmhaBwdRunnerBuildOptions;

/**
 * Runs one FFPA backward problem (dQ, dK, dV of large-head-dim attention) on a device: `create`
 * checks the problem (`checkFfpaBwdProblem`: `FmhaBwdArgumentError`), picks its kernels
 * (`ffpaBwdKernelSet`), checks a caller's `options.workspace`, compiles, allocates D and the
 * workspace and prepares it; `prepare(buffers)` validates the buffers and returns `launch()`
 * (dot_do_o, dq_acc zeroed, dq_dk_dv, convert_dq on `buffers.stream`); `run` = prepare + launch.
 * Postcondition (GPU spec): dQ/dK/dV match `referenceAttentionBwd` within `attentionBwdToleranceFor`.
 */
export class FfpaBwdRunner extends FmhaBwdRunnerBase<FfpaBwdInstance> {
  /** Checks, selects, compiles, allocates and prepares (see the class comment). */
  static async create(problem: FfpaBwdProblem | CheckedFmhaBwdProblem, options: FfpaBwdRunnerOptions): Promise<FfpaBwdRunner> {
    const p = checkFfpaBwdProblem(problem);
    const set = ffpaBwdKernelSet(p);
    const late = lateFmhaBwdExecutor();
    let warning = '';
    const launcher = new FmhaBwdLauncher<Stream | undefined>(fmhaBwdTraitsOf(p), {
      catalog: [set.triple],
      executor: late.proxy,
      smCount: options.device.smCount,
      warn: (m) => (warning = m),
    });
    if (!launcher.supported) throw new NoFfpaBwdInstanceError(warning || `ffpa bwd: ${set.dqDkDv.name} cannot run these traits`);
    const parts = await FmhaBwdRunnerBase.assemble(
      p,
      launcher,
      set,
      late,
      (kernel) => (l, stream) => kernel.launch(packFfpaBwdDqDkDv(kernel.instance, l.traits, l.args), stream),
      options,
    );
    return new FfpaBwdRunner(parts);
  }

  protected checkScoreModifier(spec: FmhaScoreModifierSpec | undefined): void {
    if (spec !== undefined) throw new ArgumentError('scoreModifier', 'must be omitted: FFPA has no score modifier', spec);
  }

  protected packDqDkDv(args: FmhaBwdArgs): void {
    packFfpaBwdDqDkDv(this.kernels.dqDkDv.instance, this.launcher.traits, args);
  }
}
