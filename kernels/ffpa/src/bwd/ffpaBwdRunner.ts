// The operator-level runner of FFPA's backward: checks the problem, picks its three kernels, drives
// them through @tilekit/fmha's pure FmhaBwdLauncher (the unified workspace, atomic dQ) with
// @tilekit/fmha-launch's CUDA executor, and owns D and (unless given one) the workspace.
import {
  fmhaBwdOperandElements,
  fmhaBwdTraitsOf,
  FmhaBwdLauncher,
  type CheckedFmhaBwdProblem,
  type FmhaBwdArgs,
  type FmhaBwdExecutor,
  type FmhaBwdTensor,
  type FmhaBwdWorkspaceSize,
  type FmhaScoreModifierSpec,
} from '@tilekit/fmha';
import {
  checkFmhaBwdDeviceRange,
  FMHA_BWD_DQ_STORE_VECTOR,
  FmhaBwdCudaExecutor,
  FmhaBwdKernel,
  fmhaBwdRunnerArgs,
  packFmhaBwdConvertDq,
  packFmhaBwdDotDoO,
  type FmhaBwdConvertDqInstance,
  type FmhaBwdDotDoOInstance,
  type FmhaBwdKernelInstance,
  type FmhaBwdRunnerBuffers,
} from '@tilekit/fmha-launch';
import { ArgumentError, getDType } from '@tilekit/numeric';
import type { Compiler, Device, DeviceBuffer, KernelResources, Stream } from '@tilekit/runtime';
import { checkFfpaBwdProblem, type FfpaBwdProblem } from './checkFfpaBwdProblem.ts';
import type { FfpaBwdInstance } from './ffpaBwdInstance.ts';
import { ffpaBwdKernelSet, NoFfpaBwdInstanceError } from './ffpaBwdKernelSet.ts';
import { packFfpaBwdDqDkDv } from './ffpaBwdLauncher.ts';

/** How the runner gets its kernels (e.g. a `buildOncePerInstance` memo) and its workspace. */
export interface FfpaBwdRunnerOptions {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly buildKernel?: <I extends FmhaBwdKernelInstance>(instance: I) => Promise<FmhaBwdKernel<I>>;
  /** A caller's workspace (at least `workspaceSize.total` bytes); default: the runner allocates and owns one. */
  readonly workspace?: DeviceBuffer;
}

/** The compiled kernels of one FFPA backward call, in launch order. */
export interface FfpaBwdKernels {
  readonly dotDoO: FmhaBwdKernel<FmhaBwdDotDoOInstance>;
  readonly dqDkDv: FmhaBwdKernel<FfpaBwdInstance>;
  readonly convertDq: FmhaBwdKernel<FmhaBwdConvertDqInstance>;
}

/** The launcher over one triple, its executor filled in once the kernels are built. */
function launcherOf(p: CheckedFmhaBwdProblem, smCount: number) {
  const set = ffpaBwdKernelSet(p);
  const ref: { executor?: FmhaBwdCudaExecutor } = {};
  const proxy: FmhaBwdExecutor<Stream | undefined> = {
    copyToDevice: (dst, bytes, stream) => ref.executor!.copyToDevice(dst, bytes, stream),
    fillZero: (dst, n, stream) => ref.executor!.fillZero(dst, n, stream),
    launch: (l, stream) => ref.executor!.launch(l, stream),
  };
  let warning = '';
  const launcher = new FmhaBwdLauncher<Stream | undefined>(fmhaBwdTraitsOf(p), {
    catalog: [set.triple],
    executor: proxy,
    smCount,
    warn: (m) => (warning = m),
  });
  if (!launcher.supported) throw new NoFfpaBwdInstanceError(warning || `ffpa bwd: ${set.dqDkDv.name} cannot run these traits`);
  return { set, launcher, ref };
}

/**
 * Runs one FFPA backward problem (dQ, dK, dV of large-head-dim attention) on a device: `create`
 * checks the problem (`checkFfpaBwdProblem`: `FmhaBwdArgumentError`), picks its kernels
 * (`ffpaBwdKernelSet`), checks a caller's `options.workspace` (size, 16-byte alignment), compiles,
 * allocates D and the workspace and prepares it; `prepare(buffers)` validates the buffers and
 * returns `launch()` (dot_do_o, dq_acc zeroed, dq_dk_dv, convert_dq on `buffers.stream`); `run` =
 * prepare + launch. Postcondition (GPU spec): dQ/dK/dV match `referenceAttentionBwd` within
 * `attentionBwdToleranceFor`.
 */
export class FfpaBwdRunner {
  readonly problem: CheckedFmhaBwdProblem;
  readonly launcher: FmhaBwdLauncher<Stream | undefined>;
  readonly kernels: FfpaBwdKernels;
  readonly device: Device;
  readonly #executor: FmhaBwdCudaExecutor;
  readonly #d: DeviceBuffer;
  #workspace: DeviceBuffer | undefined;
  readonly #owned: { dispose(): void }[];

  private constructor(
    problem: CheckedFmhaBwdProblem,
    launcher: FmhaBwdLauncher<Stream | undefined>,
    kernels: FfpaBwdKernels,
    executor: FmhaBwdCudaExecutor,
    buffers: { readonly device: Device; readonly d: DeviceBuffer; readonly workspace: DeviceBuffer | undefined },
    owned: { dispose(): void }[],
  ) {
    this.problem = problem;
    this.launcher = launcher;
    this.kernels = kernels;
    this.#executor = executor;
    this.device = buffers.device;
    this.#d = buffers.d;
    this.#workspace = buffers.workspace;
    this.#owned = owned;
  }

  /** Checks, selects, compiles, allocates and prepares (see the class comment). */
  static async create(problem: FfpaBwdProblem | CheckedFmhaBwdProblem, options: FfpaBwdRunnerOptions): Promise<FfpaBwdRunner> {
    const p = checkFfpaBwdProblem(problem);
    const { device } = options;
    const { set, launcher, ref } = launcherOf(p, device.smCount);
    const total = launcher.workspaceSize.total;
    if (options.workspace !== undefined && total > 0) checkFmhaBwdDeviceRange('options.workspace', options.workspace, total, 16);
    const owned: { dispose(): void }[] = [];
    const build = async <I extends FmhaBwdKernelInstance>(instance: I): Promise<FmhaBwdKernel<I>> => {
      if (options.buildKernel) return options.buildKernel(instance);
      const k = await FmhaBwdKernel.build(instance, options);
      owned.push(k);
      return k;
    };
    const kernels: FfpaBwdKernels = {
      dotDoO: await build(set.dotDoO),
      dqDkDv: await build(set.dqDkDv),
      convertDq: await build(set.convertDq),
    };
    ref.executor = new FmhaBwdCudaExecutor(kernels, (l, stream) =>
      kernels.dqDkDv.launch(packFfpaBwdDqDkDv(kernels.dqDkDv.instance, l.traits, l.args), stream),
    );
    const d = device.alloc(Math.max(16, fmhaBwdOperandElements(p).lse * 4));
    owned.push(d);
    let workspace = options.workspace;
    if (workspace === undefined && total > 0) {
      workspace = device.alloc(total);
      owned.push(workspace);
    }
    const runner = new FfpaBwdRunner(p, launcher, kernels, ref.executor, { device, d, workspace }, owned);
    if (workspace !== undefined && total > 0) runner.prepareWorkspace(workspace);
    return runner;
  }

  /** Host (metadata) + device (dq_acc) bytes of the workspace: what a caller's workspace must hold. */
  get workspaceSize(): FmhaBwdWorkspaceSize {
    return this.launcher.workspaceSize;
  }

  /** The compiled instances in launch order. */
  get instances(): readonly FmhaBwdKernelInstance[] {
    const k = this.kernels;
    return [k.dotDoO.instance, k.dqDkDv.instance, k.convertDq.instance];
  }

  /** Registers, shared memory and spills of each kernel, in launch order. */
  get resources(): readonly { readonly instance: string; readonly resources: KernelResources; readonly dynamicSharedBytes: number }[] {
    const k = this.kernels;
    return [k.dotDoO, k.dqDkDv, k.convertDq].map((x) => ({
      instance: x.instance.name,
      resources: x.resources,
      dynamicSharedBytes: x.instance.sharedBytes,
    }));
  }

  /**
   * Copies the workspace metadata to the head of `buffer` (default: the runner's workspace) and
   * zeroes dq_acc; later runs use `buffer`.
   * @throws ArgumentError `buffer` when it is smaller than `workspaceSize.total` or misaligned.
   */
  prepareWorkspace(buffer: DeviceBuffer | undefined = this.#workspace, stream?: Stream): void {
    if (this.workspaceSize.total === 0) return;
    if (buffer === undefined)
      throw new ArgumentError('buffer', `is required: the workspace needs ${this.workspaceSize.total} bytes`, buffer);
    this.#executor.register(buffer);
    this.launcher.prepareWorkspace({ ptr: buffer.ptr, bytes: buffer.bytes }, stream);
    this.#workspace = buffer;
  }

  /** The launcher's args for `buffers` (`fmhaBwdRunnerArgs`: typed errors naming each bad buffer; no score modifier). */
  args(buffers: FmhaBwdRunnerBuffers): FmhaBwdArgs {
    const p = this.problem;
    const e = getDType(p.dtype).bytes;
    const align: Record<FmhaBwdTensor, number> = {
      q: 16,
      k: 16,
      v: 16,
      dO: 16,
      o: 16,
      dQ: FMHA_BWD_DQ_STORE_VECTOR * e,
      dK: 2 * e,
      dV: 2 * e,
    };
    const ws = this.#workspace;
    return fmhaBwdRunnerArgs(p, buffers, {
      d: this.#d.ptr,
      workspace: this.workspaceSize.total > 0 && ws !== undefined ? ws.ptr : 0n,
      align,
      checkScoreModifier: (spec: FmhaScoreModifierSpec | undefined) => {
        if (spec !== undefined) throw new ArgumentError('scoreModifier', 'must be omitted: FFPA has no score modifier', spec);
      },
    });
  }

  /** Validates `buffers` and packs every stage once; `launch` enqueues the three kernels on `buffers.stream`. */
  prepare(buffers: FmhaBwdRunnerBuffers): { readonly args: FmhaBwdArgs; launch(): void } {
    const args = this.args(buffers);
    const t = this.launcher.traits;
    const k = this.kernels;
    packFmhaBwdDotDoO(k.dotDoO.instance, t, args);
    packFfpaBwdDqDkDv(k.dqDkDv.instance, t, args);
    packFmhaBwdConvertDq(k.convertDq.instance, t, args);
    return { args, launch: () => void this.launcher.run(args, buffers.stream) };
  }

  /** `prepare(buffers).launch()`. */
  run(buffers: FmhaBwdRunnerBuffers): void {
    this.prepare(buffers).launch();
  }

  /** Frees D, the owned workspace and the kernels this runner built. */
  dispose(): void {
    for (const x of this.#owned) x.dispose();
  }
}
