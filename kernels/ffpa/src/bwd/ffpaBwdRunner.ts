// The operator-level runner of FFPA's backward: checks the problem, picks its three kernels on a
// path (sm90: the warp-specialized TMA dq_dk_dv; sm80: the mma.sync one), and drives them through
// @tilekit/fmha's pure FmhaBwdLauncher (the unified workspace, atomic dQ) as @tilekit/fmha-launch's
// FmhaBwdRunnerBase does for every backward, with the split-D dq_dk_dv.
import {
  fmhaBwdTraitsOf,
  FmhaBwdLauncher,
  type CheckedFmhaBwdProblem,
  type FmhaBwdArgs,
  type CheckedFmhaBwdTraits,
  type FmhaBwdWorkspace,
  type FmhaScoreModifierSpec,
} from '@tilekit/fmha';
import {
  FmhaBwdRunnerBase,
  lateFmhaBwdExecutor,
  type FmhaBwdRunnerBuildOptions,
  type FmhaBwdRunnerParts,
  type TensorMapEncoder,
} from '@tilekit/fmha-launch';
import { ArgumentError } from '@tilekit/numeric';
import { encodeTensorMapTiled, type Stream } from '@tilekit/runtime';
import { checkFfpaBwdProblem, type FfpaBwdProblem } from './checkFfpaBwdProblem.ts';
import { FfpaBwdSm90Instance } from './ffpaBwdSm90Instance.ts';
import { ffpaBwdKernelSet, NoFfpaBwdInstanceError, type FfpaBwdDqDkDvInstance, type FfpaBwdPath } from './ffpaBwdKernelSet.ts';
import { packFfpaBwdDqDkDv, type FfpaBwdPackedLaunch } from './ffpaBwdLauncher.ts';
import { ffpaBwdSm90LayoutProblems, packFfpaBwdSm90DqDkDv } from './ffpaBwdSm90Launcher.ts';

/** How the runner gets its kernels (e.g. a `buildOncePerInstance` memo), its workspace, its path and TMA encoder. */
export interface FfpaBwdRunnerOptions extends FmhaBwdRunnerBuildOptions {
  /** dq_dk_dv's path (default: `sm90` when FFPA_BWD_SM90_CATALOG has the problem's dtype, head dims and mask kind, else `sm80`). */
  readonly path?: FfpaBwdPath;
  /** TMA descriptor encoder of the sm90 path (default: the driver's, on `device`). */
  readonly encode?: TensorMapEncoder;
}

/** dq_dk_dv's packed launch for either path's instance (the sm90 one with its TMA maps through `encode`). */
function packDqDkDv(
  instance: FfpaBwdDqDkDvInstance,
  t: CheckedFmhaBwdTraits,
  ws: FmhaBwdWorkspace,
  args: FmhaBwdArgs,
  encode: TensorMapEncoder,
): FfpaBwdPackedLaunch {
  return instance instanceof FfpaBwdSm90Instance
    ? packFfpaBwdSm90DqDkDv(instance, t, ws, args, encode)
    : packFfpaBwdDqDkDv(instance, t, args);
}

/**
 * Runs one FFPA backward problem (dQ, dK, dV of large-head-dim attention) on a device: `create`
 * checks the problem (`checkFfpaBwdProblem`: `FmhaBwdArgumentError`), picks its kernels
 * (`ffpaBwdKernelSet` on `options.path`), on the sm90 path checks the layout TMA needs
 * (`ffpaBwdSm90LayoutProblems`: `ArgumentError` naming `problem`), checks a caller's
 * `options.workspace`, compiles, allocates D and the workspace and prepares it; `prepare(buffers)`
 * validates the buffers and returns `launch()` (dot_do_o, dq_acc zeroed, dq_dk_dv, convert_dq on
 * `buffers.stream`); `run` = prepare + launch.
 * Postcondition (GPU spec): dQ/dK/dV match `referenceAttentionBwd` within `attentionBwdToleranceFor`.
 */
export class FfpaBwdRunner extends FmhaBwdRunnerBase<FfpaBwdDqDkDvInstance> {
  /** The path dq_dk_dv runs on. */
  readonly path: FfpaBwdPath;

  private constructor(parts: FmhaBwdRunnerParts<FfpaBwdDqDkDvInstance>, path: FfpaBwdPath) {
    super(parts);
    this.path = path;
  }

  /** Checks, selects, compiles, allocates and prepares (see the class comment). */
  static async create(problem: FfpaBwdProblem | CheckedFmhaBwdProblem, options: FfpaBwdRunnerOptions): Promise<FfpaBwdRunner> {
    const p = checkFfpaBwdProblem(problem);
    const set = ffpaBwdKernelSet(p, options.path === undefined ? {} : { path: options.path });
    if (set.path === 'sm90') {
      const layout = ffpaBwdSm90LayoutProblems(p);
      if (layout.length > 0)
        throw new ArgumentError('problem', `the sm_90a backward kernels cannot take this layout: ${layout.join('; ')}`);
    }
    const late = lateFmhaBwdExecutor();
    let warning = '';
    const launcher = new FmhaBwdLauncher<Stream | undefined>(fmhaBwdTraitsOf(p), {
      catalog: [set.triple],
      executor: late.proxy,
      smCount: options.device.smCount,
      warn: (m) => (warning = m),
    });
    if (!launcher.supported) throw new NoFfpaBwdInstanceError(warning || `ffpa bwd: ${set.dqDkDv.name} cannot run these traits`);
    const encode = options.encode ?? ((m) => encodeTensorMapTiled(options.device, m));
    const parts = await FmhaBwdRunnerBase.assemble<FfpaBwdDqDkDvInstance>(
      p,
      launcher,
      set,
      late,
      (instance) => (traits, workspace, args) => packDqDkDv(instance, traits, workspace, args, encode),
      options,
    );
    return new FfpaBwdRunner(parts, set.path);
  }

  protected checkScoreModifier(spec: FmhaScoreModifierSpec | undefined): void {
    if (spec !== undefined) throw new ArgumentError('scoreModifier', 'must be omitted: FFPA has no score modifier', spec);
  }
}
