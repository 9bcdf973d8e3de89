// The CUDA side of the dense attention backward: dq_dk_dv's launch with its TMA maps (the executor
// of @tilekit/fmha-launch runs it beside the row kernels) and the operator-level runner that builds
// the launcher over the catalog, compiles the selected triple, owns (or accepts) the workspace and D.
import {
  checkFmhaBwdProblem,
  type CheckedFmhaBwdProblem,
  type CheckedFmhaBwdTraits,
  type FmhaBwdArgs,
  type FmhaBwdProblem,
  type FmhaBwdRecordTriple,
  type FmhaBwdWorkspace,
  type FmhaScoreModifierSpec,
  longestSlot,
} from '@tilekit/fmha';
import {
  FmhaBwdRunnerBase,
  fmhaBwdDqDkDvArgValues,
  fmhaBwdStrideProblems,
  fmhaBwdTmaMapArgs,
  fmhaScoreArgValues,
  lateFmhaBwdExecutor,
  type FmhaBwdConvertDqInstance,
  type FmhaBwdDotDoOInstance,
  type FmhaBwdPackedLaunch,
  type FmhaBwdRunnerBuildOptions,
  type FmhaBwdRunnerKernels,
  type FmhaBwdRunnerParts,
} from '@tilekit/fmha-launch';
import { ArgumentError, getDType } from '@tilekit/numeric';
import { encodeTensorMapTiled, type TiledTensorMapOptions } from '@tilekit/runtime';
import type { FmhaBwdDqDkDvInstance } from './fmhaBwdDqDkDvInstance.ts';
import { dispatchFmhaBwd } from './fmhaBwdDispatch.ts';

// What every backward runner shares now lives in @tilekit/fmha-launch; re-exported under the names this module had.
export {
  FmhaBwdCudaExecutor,
  FmhaBwdKernel,
  packFmhaBwdConvertDq,
  packFmhaBwdDotDoO,
  type FmhaBwdKernelInstance,
  type FmhaBwdPackedLaunch,
  type FmhaBwdRunnerBuffers,
} from '@tilekit/fmha-launch';

/** SMs of an H200 (the planning default without a device). */
export const FMHA_BWD_DEFAULT_SM_COUNT = 132;

/** Encodes a tiled tensor map (the driver on a GPU; tests pass a checker). */
export type FmhaBwdTensorMapEncoder = (options: TiledTensorMapOptions) => Uint8Array;

/** Any backward kernel instance. */
export type FmhaBwdAnyInstance = FmhaBwdDqDkDvInstance | FmhaBwdDotDoOInstance | FmhaBwdConvertDqInstance;

function maxRowsK(t: CheckedFmhaBwdTraits): number {
  return t.groupMode ? longestSlot(t.seqstartK) : t.seqlenK;
}

/**
 * dq_dk_dv's launch: TMA maps of Q, K, V, dO (boxes from the instance), LSE/D, dK/dV, the
 * workspace pointer, the mask and the values of the instance's score modifier from
 * `args.scoreModifier` (`fmhaScoreArgValues`: an `ArgumentError` naming `scoreModifier` when the
 * spec is missing, of another kind, or given to an instance without one). Grid x: key tiles
 * (atomic: ⌈max sk/kN0⌉) or the largest split count of the workspace (split: block x takes key
 * tiles x, x + nsplits_b, …).
 */
export function packFmhaBwdDqDkDv(
  instance: FmhaBwdDqDkDvInstance,
  t: CheckedFmhaBwdTraits,
  ws: FmhaBwdWorkspace,
  args: FmhaBwdArgs,
  encode: FmhaBwdTensorMapEncoder,
): FmhaBwdPackedLaunch {
  const packed = instance.signature.pack({
    ...fmhaBwdTmaMapArgs(t, args, instance.tmaBoxes, encode),
    ...fmhaBwdDqDkDvArgValues(t, args),
    ...fmhaScoreArgValues(instance.policy.scoreModifier, args.scoreModifier, t.nheadQ),
  });
  const gridX = instance.policy.dqMode === 'atomic' ? Math.ceil(maxRowsK(t) / instance.kN0) : Math.max(0, ...ws.nsplits);
  const l = instance.launch(gridX, t.nheadK, t.batch);
  return { grid: l.grid, block: l.block, sharedBytes: l.sharedBytes, args: packed };
}

/** The compiled kernels of one triple. */
export type FmhaBwdKernels = FmhaBwdRunnerKernels<FmhaBwdDqDkDvInstance>;

/**
 * Why the runner's kernels cannot take the problem's layout (one line per rule), empty when they
 * can: Q/K/V/dO strides·e multiples of 16 bytes and below 2^40 (TMA), O strides multiples of 8
 * elements (dot_do_o's 16-byte loads), dQ strides multiples of 4 (convert_dq's stores), dK/dV row
 * strides even and below 2^31.
 */
export function fmhaBwdLayoutProblems(p: CheckedFmhaBwdProblem): string[] {
  const e = getDType(p.dtype).bytes;
  const tma = (s: number): string | undefined =>
    (s * e) % 16 !== 0
      ? 'times the element size must be a multiple of 16 bytes (TMA)'
      : s * e >= 2 ** 40
        ? 'reaches 2^40 bytes (TMA)'
        : undefined;
  return fmhaBwdStrideProblems(p, tma).map((x) =>
    x.rule === 'exceeds int32' ? `${x.tensor} row stride exceeds int32` : `${x.tensor} ${x.stride} stride ${x.value}: ${x.rule}`,
  );
}

/** How the runner gets its kernels (e.g. `buildOncePerInstance` memos) and its workspace. */
export interface FmhaBwdRunnerOptions extends FmhaBwdRunnerBuildOptions {
  /** Triples to select from (default `fmhaBwdCatalogFor`'s: the dense ones, or those of the problem's score modifier). */
  readonly triples?: readonly FmhaBwdRecordTriple[];
  /** TMA descriptor encoder (default: the driver's, on `device`). */
  readonly encode?: FmhaBwdTensorMapEncoder;
  /** Where the launcher's "no instance" warning goes (default: none; `create` throws instead). */
  readonly warn?: (message: string) => void;
}

/**
 * Runs one attention-backward problem on a device through @tilekit/fmha's `FmhaBwdLauncher`:
 * `create` checks the problem (`FmhaBwdArgumentError`), its layout (`ArgumentError` naming
 * `problem`), dispatches it (`dispatchFmhaBwd`: the dense triples, or those of the score-modifier
 * catalog for a problem with `scoreModifier`; the traits the catalog has — dtype, head dims, mask
 * kind, determinism — as `FmhaBwdArgumentError`; the launcher over the triples,
 * `NoFmhaBwdInstanceError` when none matches, with the launcher's unmatched traits), checks a
 * caller's `options.workspace` (size, 16-byte alignment), compiles the selected kernels, allocates
 * D and — unless one is given — the workspace (`workspaceSize.total` bytes), and prepares the workspace.
 * `prepare(buffers)` validates the buffers and returns `launch()` (dot_do_o, dq_dk_dv, convert_dq on
 * `buffers.stream`, re-zeroing dq_acc first when the layout needs it; `buffers.scoreModifier`
 * carries the values of the problem's score modifier); `run` = prepare + launch.
 * Postconditions (GPU spec): dQ/dK/dV match `referenceAttentionBwd` within
 * `attentionBwdToleranceFor`; deterministic runs give bitwise-identical dQ.
 */
export class FmhaBwdRunner extends FmhaBwdRunnerBase<FmhaBwdDqDkDvInstance> {
  readonly triple: FmhaBwdRecordTriple;

  private constructor(parts: FmhaBwdRunnerParts<FmhaBwdDqDkDvInstance>) {
    super(parts);
    this.triple = parts.launcher.triple!;
  }

  /** Checks, selects, compiles, allocates and prepares (see the class comment). */
  static async create(problem: FmhaBwdProblem | CheckedFmhaBwdProblem, options: FmhaBwdRunnerOptions): Promise<FmhaBwdRunner> {
    const p = 'rowsQ' in problem ? problem : checkFmhaBwdProblem(problem);
    const layout = fmhaBwdLayoutProblems(p);
    if (layout.length > 0) throw new ArgumentError('problem', `the backward kernels cannot take this layout: ${layout.join('; ')}`);
    const { device } = options;
    const late = lateFmhaBwdExecutor();
    const { launcher, kernels: set } = dispatchFmhaBwd(p, {
      ...(options.triples ? { triples: options.triples } : {}),
      executor: late.proxy,
      smCount: device.smCount,
      ...(options.warn ? { warn: options.warn } : {}),
    });
    const encode = options.encode ?? ((m: TiledTensorMapOptions) => encodeTensorMapTiled(device, m));
    const pack = (instance: FmhaBwdDqDkDvInstance) => (traits: CheckedFmhaBwdTraits, workspace: FmhaBwdWorkspace, args: FmhaBwdArgs) =>
      packFmhaBwdDqDkDv(instance, traits, workspace, args, encode);
    return new FmhaBwdRunner(await FmhaBwdRunnerBase.assemble(p, launcher, set, late, pack, options));
  }

  /** The workspace layout (nsplits, offsets, dq_acc; `describeFmhaBwdWorkspace` prints it). */
  get workspaceLayout(): FmhaBwdWorkspace {
    return this.launcher.workspace!;
  }

  /** `spec` is of the problem's score modifier (none without one) and its values pass the dq_dk_dv kernel's rules. */
  protected checkScoreModifier(spec: FmhaScoreModifierSpec | undefined): void {
    const want = this.problem.scoreModifier;
    const kind: unknown = typeof spec === 'object' && spec !== null ? spec.kind : spec;
    if (kind !== want)
      throw new ArgumentError(
        'scoreModifier',
        want === undefined
          ? 'must be omitted: the problem has no score modifier (problem.scoreModifier)'
          : `must be { kind: "${want}", … }: the problem's score modifier (problem.scoreModifier)`,
        kind,
      );
    fmhaScoreArgValues(this.kernels.dqDkDv.instance.policy.scoreModifier, spec, this.problem.nheadQ);
  }
}
