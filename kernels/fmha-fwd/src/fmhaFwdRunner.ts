// The operator-level runner of attention forward: from a problem to the kernel(s) that compute it —
// the dispatched attention instance and, with split-KV, the combine instance and the fp32 workspace
// between them — validated before anything is launched, then one or two launches on one stream.
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import { checkFmhaFwdKernelRules, checkFmhaFwdProblem, type CheckedFmhaFwdProblem, type FmhaFwdProblem } from '@tilekit/fmha';
import { encodeTensorMapTiled, type Compiler, type Device, type DeviceBuffer, type KernelResources } from '@tilekit/runtime';
import type { FmhaFwdCombineInstance } from './fmhaFwdCombine.ts';
import { FmhaFwdCombineKernel } from './fmhaFwdCombineLauncher.ts';
import { selectFmhaFwdCombineInstance, selectFmhaFwdInstance } from './fmhaFwdDispatch.ts';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { reportFmhaFwdOutputOverlaps, type FmhaFwdRunnerBuffers, type TensorMapEncoder } from '@tilekit/fmha-launch';
import { FmhaFwdKernel, fmhaFwdWorkspace } from '@tilekit/fmha-launch';
import { chooseFmhaFwdSplits, withFmhaFwdSplits } from './fmhaFwdSplit.ts';

/** SMs of an H200 (the planning default when no device is at hand). */
export const FMHA_FWD_DEFAULT_SM_COUNT = 132;

/** Byte alignment of the workspace's parts (the combine reads 16-byte vectors). */
const WORKSPACE_ALIGN = 256;

/** What runs a problem: the instances, the problem with its splits resolved, the workspace size. */
export interface FmhaFwdPlan {
  /** The checked problem; `numSplits` resolved ('auto' → `chooseFmhaFwdSplits`). */
  readonly problem: CheckedFmhaFwdProblem;
  readonly instance: FmhaFwdInstance;
  /** The combine instance (split-KV only). */
  readonly combine: FmhaFwdCombineInstance | undefined;
  /** Bytes of the split workspace (0 without split-KV): partial O, then partial LSE, each 256-aligned. */
  readonly workspaceBytes: number;
  /** Byte offset of the partial LSE in the workspace. */
  readonly workspaceLseOffset: number;
}

function alignUp(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}

/**
 * Plans `problem` (no GPU needed): checks it (and `checkFmhaFwdKernelRules`), resolves splitKv
 * 'auto' for `smCount` SMs with the dispatched instance's tiles, dispatches the attention instance
 * (and the combine instance when there is more than one split) and sizes the workspace
 * (`fmhaFwdWorkspace`). Throws `FmhaFwdArgumentError` for a bad problem and `NoFmhaFwdInstanceError`
 * when no instance fits (a custom catalog).
 */
export function planFmhaFwd(
  problem: FmhaFwdProblem | CheckedFmhaFwdProblem,
  options: {
    readonly smCount?: number;
    readonly catalog?: readonly FmhaFwdInstance[];
    readonly combineCatalog?: readonly FmhaFwdCombineInstance[];
  } = {},
): FmhaFwdPlan {
  let checked = typeof problem === 'object' && problem !== null && 'rowsQ' in problem ? problem : checkFmhaFwdProblem(problem);
  checkFmhaFwdKernelRules(checked);
  const catalog = options.catalog !== undefined ? { catalog: options.catalog } : {};
  if (checked.splitKvAuto) {
    // The tiles of the one-pass instance (the split instance of the same head dims has the same).
    const tiles = selectFmhaFwdInstance(withFmhaFwdSplits(checked, 1), catalog).policy;
    checked = withFmhaFwdSplits(checked, chooseFmhaFwdSplits(checked, options.smCount ?? FMHA_FWD_DEFAULT_SM_COUNT, tiles));
  }
  const instance = selectFmhaFwdInstance(checked, catalog);
  if (checked.numSplits === 1) return { problem: checked, instance, combine: undefined, workspaceBytes: 0, workspaceLseOffset: 0 };
  const combine = selectFmhaFwdCombineInstance(checked, options.combineCatalog !== undefined ? { catalog: options.combineCatalog } : {});
  const ws = fmhaFwdWorkspace(checked);
  const lseOffset = alignUp(Math.max(1, ws.oElements * 4), WORKSPACE_ALIGN);
  return {
    problem: checked,
    instance,
    combine,
    workspaceBytes: lseOffset + alignUp(Math.max(1, ws.lseElements * 4), WORKSPACE_ALIGN),
    workspaceLseOffset: lseOffset,
  };
}

/** How the runner gets its kernels (a caller's memo, e.g. `buildOncePerInstance`); default: built per runner. */
export interface FmhaFwdRunnerOptions {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly catalog?: readonly FmhaFwdInstance[];
  readonly combineCatalog?: readonly FmhaFwdCombineInstance[];
  readonly buildKernel?: (instance: FmhaFwdInstance) => Promise<FmhaFwdKernel>;
  readonly buildCombine?: (instance: FmhaFwdCombineInstance) => Promise<FmhaFwdCombineKernel>;
  /** TMA descriptor encoder (default: the driver's, on `device`). */
  readonly encode?: TensorMapEncoder;
}

/** A kernel's name and ptxas resources. */
export interface FmhaFwdKernelResources {
  readonly instance: string;
  readonly resources: KernelResources;
  readonly dynamicSharedBytes: number;
}

/**
 * Runs one attention-forward problem on a device: `create` plans it (`planFmhaFwd`, with the
 * device's SM count), builds the kernel(s) and allocates the split workspace it owns; `prepare`
 * validates a set of buffers against both launches before returning `launch` (typed errors,
 * nothing enqueued); `run` = prepare + launch. Postcondition (GPU spec): O and LSE match the CPU
 * reference within `attentionFwdToleranceFor`, with and without split-KV.
 */
export class FmhaFwdRunner {
  readonly plan: FmhaFwdPlan;
  readonly kernel: FmhaFwdKernel;
  readonly combineKernel: FmhaFwdCombineKernel | undefined;
  readonly device: Device;
  readonly #workspace: DeviceBuffer | undefined;
  readonly #encode: TensorMapEncoder;
  readonly #owned: readonly { dispose(): void }[];

  private constructor(
    plan: FmhaFwdPlan,
    kernel: FmhaFwdKernel,
    combineKernel: FmhaFwdCombineKernel | undefined,
    device: Device,
    workspace: DeviceBuffer | undefined,
    encode: TensorMapEncoder,
    owned: readonly { dispose(): void }[],
  ) {
    this.plan = plan;
    this.kernel = kernel;
    this.combineKernel = combineKernel;
    this.device = device;
    this.#workspace = workspace;
    this.#encode = encode;
    this.#owned = owned;
  }

  /** Plans, builds and allocates (see the class comment). */
  static async create(problem: FmhaFwdProblem | CheckedFmhaFwdProblem, options: FmhaFwdRunnerOptions): Promise<FmhaFwdRunner> {
    const { device } = options;
    const plan = planFmhaFwd(problem, {
      smCount: device.smCount,
      ...(options.catalog ? { catalog: options.catalog } : {}),
      ...(options.combineCatalog ? { combineCatalog: options.combineCatalog } : {}),
    });
    const owned: { dispose(): void }[] = [];
    const kernel = options.buildKernel ? await options.buildKernel(plan.instance) : await FmhaFwdKernel.build(plan.instance, options);
    if (!options.buildKernel) owned.push(kernel);
    let combineKernel: FmhaFwdCombineKernel | undefined;
    if (plan.combine !== undefined) {
      combineKernel = options.buildCombine
        ? await options.buildCombine(plan.combine)
        : await FmhaFwdCombineKernel.build(plan.combine, options);
      if (!options.buildCombine) owned.push(combineKernel);
    }
    const workspace = plan.workspaceBytes > 0 ? device.alloc(plan.workspaceBytes) : undefined;
    if (workspace) owned.push(workspace);
    return new FmhaFwdRunner(
      plan,
      kernel,
      combineKernel,
      device,
      workspace,
      options.encode ?? ((m) => encodeTensorMapTiled(device, m)),
      owned,
    );
  }

  get problem(): CheckedFmhaFwdProblem {
    return this.plan.problem;
  }

  /** The attention instance, then the combine instance (split-KV). */
  get instances(): readonly (FmhaFwdInstance | FmhaFwdCombineInstance)[] {
    return this.plan.combine ? [this.plan.instance, this.plan.combine] : [this.plan.instance];
  }

  /** Registers, shared memory, spills of each kernel (in launch order). */
  get resources(): readonly FmhaFwdKernelResources[] {
    const out: FmhaFwdKernelResources[] = [
      { instance: this.kernel.instance.name, resources: this.kernel.resources, dynamicSharedBytes: this.kernel.instance.sharedBytes },
    ];
    if (this.combineKernel)
      out.push({ instance: this.combineKernel.instance.name, resources: this.combineKernel.resources, dynamicSharedBytes: 0 });
    return out;
  }

  /** Bytes of the split workspace the runner owns (0 without split-KV). */
  get workspaceBytes(): number {
    return this.plan.workspaceBytes;
  }

  /**
   * Validates `buffers` for both launches (ArgumentError naming the buffer or `problem`; `lse`
   * is required when the problem asks for LSE; `o`/`lse` must not overlap Q, K or V, with split-KV
   * too) and returns `launch`, which enqueues the attention
   * kernel and, with split-KV, the combine kernel on `buffers.stream`.
   */
  prepare(buffers: FmhaFwdRunnerBuffers): { launch(): void } {
    const p = this.plan.problem;
    if (p.lse && buffers.lse === undefined) throw new ArgumentError('lse', 'is required: the problem asks for LSE', buffers.lse);
    const stream = buffers.stream ? { stream: buffers.stream } : {};
    const score = buffers.scoreModifier ? { scoreModifier: buffers.scoreModifier } : {};
    const group = {
      ...(buffers.seqstartQ ? { seqstartQ: buffers.seqstartQ } : {}),
      ...(buffers.seqstartK ? { seqstartK: buffers.seqstartK } : {}),
      ...(buffers.seqlenK ? { seqlenK: buffers.seqlenK } : {}),
    };
    if (this.combineKernel === undefined || this.#workspace === undefined) {
      const main = this.kernel.prepare(
        p,
        {
          q: buffers.q,
          k: buffers.k,
          v: buffers.v,
          o: buffers.o,
          ...(p.lse && buffers.lse ? { lse: buffers.lse } : {}),
          ...group,
          ...stream,
          ...score,
        },
        this.#encode,
      );
      return { launch: () => main.launch() };
    }
    const ws = this.#workspace;
    const oAcc = ws.view(0, this.plan.workspaceLseOffset);
    const lseAcc = ws.view(this.plan.workspaceLseOffset);
    const main = this.kernel.prepare(
      p,
      { q: buffers.q, k: buffers.k, v: buffers.v, o: oAcc, lse: lseAcc, ...group, ...stream },
      this.#encode,
    );
    const combine = this.combineKernel.prepare(p, {
      oAcc,
      lseAcc,
      o: buffers.o,
      ...(p.lse && buffers.lse ? { lse: buffers.lse } : {}),
      ...(buffers.seqstartQ ? { seqstartQ: buffers.seqstartQ } : {}),
      ...stream,
    });
    // Each launch checked its own buffers; the final O and LSE must not overlap Q, K or V either.
    const overlaps = new ArgumentProblems(ArgumentError);
    reportFmhaFwdOutputOverlaps(
      overlaps,
      p,
      { q: buffers.q, k: buffers.k, v: buffers.v },
      { o: buffers.o, lse: p.lse ? buffers.lse : undefined },
    );
    overlaps.throwIfAny();
    return {
      launch: () => {
        main.launch();
        combine.launch();
      },
    };
  }

  /** `prepare(buffers).launch()`. */
  run(buffers: FmhaFwdRunnerBuffers): void {
    this.prepare(buffers).launch();
  }

  /** Frees the workspace and the kernels this runner built (not those of `buildKernel`/`buildCombine`). */
  dispose(): void {
    for (const x of this.#owned) x.dispose();
  }
}
