// What every backward runner (the dense one, FFPA's) is once its kernels are built: the pure
// launcher with the CUDA executor, the D buffer and the workspace it owns or was given, and the
// buffers-to-launch path; an operator's runner adds its problem checks, kernel selection and the
// dq_dk_dv launch (`FmhaBwdRunnerBase.assemble`).
import {
  fmhaBwdOperandElements,
  type CheckedFmhaBwdProblem,
  type FmhaBwdArgs,
  type FmhaBwdExecutor,
  type FmhaBwdLauncher,
  type FmhaBwdTensor,
  type FmhaBwdWorkspaceSize,
  type FmhaScoreModifierSpec,
} from '@tilekit/fmha';
import { ArgumentError, getDType } from '@tilekit/numeric';
import type { Compiler, Device, DeviceBuffer, KernelResources, Stream } from '@tilekit/runtime';
import { FMHA_BWD_DQ_STORE_VECTOR, type FmhaBwdConvertDqInstance } from './fmhaBwdConvertDq.ts';
import { FmhaBwdCudaExecutor, type FmhaBwdDqDkDvStage, type FmhaBwdRowKernels, type FmhaBwdStage } from './fmhaBwdCudaExecutor.ts';
import { FmhaBwdKernel, type FmhaBwdKernelInstance } from './fmhaBwdKernel.ts';
import { checkFmhaBwdDeviceRange, fmhaBwdRunnerArgs, type FmhaBwdRunnerBuffers } from './fmhaBwdRunnerBuffers.ts';

/** The compiled kernels of one backward: the row kernels and the operator's dq_dk_dv. */
export interface FmhaBwdRunnerKernels<D extends FmhaBwdKernelInstance> extends FmhaBwdRowKernels {
  readonly dqDkDv: FmhaBwdKernel<D>;
}

/** How a runner gets its kernels (e.g. a `buildOncePerInstance` memo) and its workspace. */
export interface FmhaBwdRunnerBuildOptions {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly buildKernel?: <I extends FmhaBwdKernelInstance>(instance: I) => Promise<FmhaBwdKernel<I>>;
  /** A caller's workspace (at least `workspaceSize.total` bytes); default: the runner allocates and owns one. */
  readonly workspace?: DeviceBuffer;
}

/** An executor for a launcher built before its kernels: `proxy` forwards to the executor `bind` sets later. */
export function lateFmhaBwdExecutor(): { readonly proxy: FmhaBwdExecutor<Stream | undefined>; bind(executor: FmhaBwdCudaExecutor): void } {
  let current: FmhaBwdCudaExecutor | undefined;
  return {
    proxy: {
      copyToDevice: (dst, bytes, stream) => current!.copyToDevice(dst, bytes, stream),
      fillZero: (dst, n, stream) => current!.fillZero(dst, n, stream),
      launch: (l, stream) => current!.launch(l, stream),
    },
    bind: (executor) => void (current = executor),
  };
}

/** The parts a runner is made of, as `assemble` returns them. */
export interface FmhaBwdRunnerParts<D extends FmhaBwdKernelInstance> {
  readonly problem: CheckedFmhaBwdProblem;
  readonly launcher: FmhaBwdLauncher<Stream | undefined>;
  readonly kernels: FmhaBwdRunnerKernels<D>;
  readonly executor: FmhaBwdCudaExecutor;
  readonly device: Device;
  readonly d: DeviceBuffer;
  readonly workspace: DeviceBuffer | undefined;
  readonly owned: readonly { dispose(): void }[];
}

/** The alignment each tensor's address needs: 16 bytes for the loaded ones, convert_dq's store vector for dQ, element pairs for dK/dV. */
function tensorAlignments(dtype: CheckedFmhaBwdProblem['dtype']): Record<FmhaBwdTensor, number> {
  const e = getDType(dtype).bytes;
  return { q: 16, k: 16, v: 16, dO: 16, o: 16, dQ: FMHA_BWD_DQ_STORE_VECTOR * e, dK: 2 * e, dV: 2 * e };
}

/**
 * A backward runner once assembled: `prepareWorkspace`, `args` (typed errors naming each bad
 * buffer), `prepare` (validates and packs every stage once, then `launch` runs the launcher on
 * `buffers.stream`), `run`, `resources`, `instances`, `dispose`. Subclasses bring `create`.
 */
export abstract class FmhaBwdRunnerBase<D extends FmhaBwdKernelInstance> {
  readonly problem: CheckedFmhaBwdProblem;
  readonly launcher: FmhaBwdLauncher<Stream | undefined>;
  readonly kernels: FmhaBwdRunnerKernels<D>;
  readonly device: Device;
  readonly #executor: FmhaBwdCudaExecutor;
  readonly #d: DeviceBuffer;
  #workspace: DeviceBuffer | undefined;
  readonly #owned: readonly { dispose(): void }[];

  protected constructor(parts: FmhaBwdRunnerParts<D>) {
    this.problem = parts.problem;
    this.launcher = parts.launcher;
    this.kernels = parts.kernels;
    this.device = parts.device;
    this.#executor = parts.executor;
    this.#d = parts.d;
    this.#workspace = parts.workspace;
    this.#owned = parts.owned;
    if (parts.workspace !== undefined && this.workspaceSize.total > 0) this.prepareWorkspace(parts.workspace);
  }

  /**
   * Checks a caller's `options.workspace` (size, 16-byte alignment), builds the selected kernels
   * (`options.buildKernel`, or owned ones), binds the executor (`dqDkDv` launches the operator's
   * kernel), allocates D and — unless given — the workspace.
   */
  protected static async assemble<D extends FmhaBwdKernelInstance>(
    problem: CheckedFmhaBwdProblem,
    launcher: FmhaBwdLauncher<Stream | undefined>,
    instances: {
      readonly dotDoO: FmhaBwdRowKernels['dotDoO']['instance'];
      readonly dqDkDv: D;
      readonly convertDq: FmhaBwdConvertDqInstance | null;
    },
    late: ReturnType<typeof lateFmhaBwdExecutor>,
    packDqDkDv: (instance: D) => FmhaBwdDqDkDvStage['pack'],
    options: FmhaBwdRunnerBuildOptions,
  ): Promise<FmhaBwdRunnerParts<D>> {
    const { device } = options;
    const total = launcher.workspaceSize.total;
    // A caller's workspace is checked before anything is compiled.
    if (options.workspace !== undefined && total > 0) checkFmhaBwdDeviceRange('options.workspace', options.workspace, total, 16);
    const owned: { dispose(): void }[] = [];
    const build = async <I extends FmhaBwdKernelInstance>(instance: I): Promise<FmhaBwdKernel<I>> => {
      if (options.buildKernel) return options.buildKernel(instance);
      const k = await FmhaBwdKernel.build(instance, options);
      owned.push(k);
      return k;
    };
    const kernels: FmhaBwdRunnerKernels<D> = {
      dotDoO: await build(instances.dotDoO),
      dqDkDv: await build(instances.dqDkDv),
      convertDq: instances.convertDq === null ? null : await build(instances.convertDq),
    };
    const executor = new FmhaBwdCudaExecutor(kernels, { kernel: kernels.dqDkDv, pack: packDqDkDv(kernels.dqDkDv.instance) });
    late.bind(executor);
    const d = device.alloc(Math.max(16, fmhaBwdOperandElements(problem).lse * 4));
    owned.push(d);
    let workspace = options.workspace;
    if (workspace === undefined && total > 0) {
      workspace = device.alloc(total);
      owned.push(workspace);
    }
    return { problem, launcher, kernels, executor, device, d, workspace, owned };
  }

  /** Host (metadata) + device (dq_acc) bytes of the workspace: what a caller's workspace must hold. */
  get workspaceSize(): FmhaBwdWorkspaceSize {
    return this.launcher.workspaceSize;
  }

  /** The compiled instances in launch order. */
  get instances(): readonly FmhaBwdKernelInstance[] {
    const k = this.kernels;
    return [k.dotDoO.instance, k.dqDkDv.instance, ...(k.convertDq ? [k.convertDq.instance] : [])];
  }

  /** Registers, shared memory and spills of each kernel, in launch order. */
  get resources(): readonly { readonly instance: string; readonly resources: KernelResources; readonly dynamicSharedBytes: number }[] {
    const k = this.kernels;
    return [k.dotDoO, k.dqDkDv, ...(k.convertDq ? [k.convertDq] : [])].map((x) => ({
      instance: x.instance.name,
      resources: x.resources,
      dynamicSharedBytes: x.instance.sharedBytes,
    }));
  }

  /**
   * Copies the workspace metadata to the head of `buffer` (default: the runner's workspace) and
   * zeroes dq_acc when required; later runs use `buffer`.
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

  /** Throws `ArgumentError` naming `scoreModifier` unless `spec` suits the problem and its dq_dk_dv kernel. */
  protected abstract checkScoreModifier(spec: FmhaScoreModifierSpec | undefined): void;

  /**
   * The launcher's args for `buffers` (the runner's D buffer and workspace filled in): one
   * `ArgumentError` naming every missing, short or misaligned buffer and a `scoreModifier` the
   * problem does not take, then one naming every output that overlaps an input or another output.
   */
  args(buffers: FmhaBwdRunnerBuffers): FmhaBwdArgs {
    const ws = this.#workspace;
    return fmhaBwdRunnerArgs(this.problem, buffers, {
      d: this.#d.ptr,
      workspace: this.workspaceSize.total > 0 && ws !== undefined ? ws.ptr : 0n,
      align: tensorAlignments(this.problem.dtype),
      checkScoreModifier: (spec) => this.checkScoreModifier(spec),
    });
  }

  /**
   * Validates `buffers` and packs every stage once (its checks run before anything is enqueued);
   * `launch` enqueues the kernels on `buffers.stream` with those packed launches (the buffers' and
   * score modifier's values as they were here: prepare again after changing them).
   */
  prepare(buffers: FmhaBwdRunnerBuffers): { readonly args: FmhaBwdArgs; launch(): void } {
    const args = this.args(buffers);
    const stream = buffers.stream;
    const stages: FmhaBwdStage[] = ['dotDoO', 'dqDkDv', ...(this.kernels.convertDq ? (['convertDq'] as const) : [])];
    for (const stage of stages) this.#executor.pack(stage, this.launcher.traits, this.launcher.workspace!, args);
    return { args, launch: () => void this.launcher.run(args, stream) };
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
