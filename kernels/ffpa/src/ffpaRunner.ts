// The operator-level runner of FFPA: from a problem to its column slices' kernels on a device,
// validated before anything is launched, then one launch per slice on one stream.
import type { CheckedFmhaFwdProblem } from '@tilekit/fmha';
import type { FmhaFwdRunnerBuffers, TensorMapEncoder } from '@tilekit/fmha-launch';
import { ArgumentError } from '@tilekit/numeric';
import { buildOncePerInstance, encodeTensorMapTiled, type Compiler, type Device, type KernelResources } from '@tilekit/runtime';
import type { FfpaProblem } from './checkFfpaProblem.ts';
import { buildFfpaKernel, type FfpaInstance, type FfpaKernel, type FfpaPath } from './ffpaKernel.ts';
import { prepareFfpaLaunch, type FfpaSliceKernel } from './ffpaLauncher.ts';
import { planFfpa, type FfpaPlan } from './ffpaPlan.ts';

/** How the runner gets its kernels (a caller's memo, e.g. `buildOncePerInstance`); default: built per runner. */
export interface FfpaRunnerOptions {
  readonly device: Device;
  readonly compiler: Compiler;
  /** `sm90` (default) or `sm80` (`FfpaPlanOptions.path`). */
  readonly path?: FfpaPath;
  readonly catalog?: readonly FfpaInstance[];
  /** `false`: d_v above 512 on column slices, never a cluster (`FfpaPlanOptions.clusters`). */
  readonly clusters?: boolean;
  readonly buildKernel?: (instance: FfpaInstance) => Promise<FfpaKernel>;
  /** TMA descriptor encoder (default: the driver's, on `device`). */
  readonly encode?: TensorMapEncoder;
}

/** A slice kernel's name and ptxas resources. */
export interface FfpaKernelResources {
  readonly instance: string;
  readonly resources: KernelResources;
  readonly dynamicSharedBytes: number;
}

/**
 * Runs one FFPA problem on a device: `create` plans it (`planFfpa`) and builds each slice's kernel
 * (slices of one width share it); `prepare` validates a set of buffers for every slice's launch
 * (typed errors, nothing enqueued) before returning `launch`; `run` = prepare + launch.
 * Postcondition (GPU spec): O and LSE match the fp32 CPU reference within `attentionFwdToleranceFor`.
 */
export class FfpaRunner {
  readonly plan: FfpaPlan;
  readonly kernels: readonly FfpaSliceKernel[];
  readonly device: Device;
  readonly #encode: TensorMapEncoder;
  readonly #owned: readonly { dispose(): void }[];

  private constructor(
    plan: FfpaPlan,
    kernels: readonly FfpaSliceKernel[],
    device: Device,
    encode: TensorMapEncoder,
    owned: readonly { dispose(): void }[],
  ) {
    this.plan = plan;
    this.kernels = kernels;
    this.device = device;
    this.#encode = encode;
    this.#owned = owned;
  }

  /** Plans and builds (see the class comment). */
  static async create(problem: FfpaProblem | CheckedFmhaFwdProblem, options: FfpaRunnerOptions): Promise<FfpaRunner> {
    const plan = planFfpa(problem, {
      ...(options.path ? { path: options.path } : {}),
      ...(options.catalog ? { catalog: options.catalog } : {}),
      ...(options.clusters === undefined ? {} : { clusters: options.clusters }),
    });
    const owned: FfpaKernel[] = [];
    const build = buildOncePerInstance(async (instance: FfpaInstance) => {
      if (options.buildKernel) return options.buildKernel(instance);
      const kernel = await buildFfpaKernel(instance, options);
      owned.push(kernel);
      return kernel;
    });
    const built = await Promise.allSettled(
      plan.slices.map(async (s) => ({ slice: { offset: s.offset, width: s.width }, kernel: await build(s.instance) })),
    );
    const failed = built.find((r) => r.status === 'rejected');
    if (failed !== undefined) {
      // Free what was built before passing the failure on.
      for (const k of owned) k.dispose();
      throw failed.reason;
    }
    const kernels = built.map((r) => (r as PromiseFulfilledResult<FfpaSliceKernel>).value);
    const encode = options.encode ?? ((m) => encodeTensorMapTiled(options.device, m));
    return new FfpaRunner(plan, kernels, options.device, encode, owned);
  }

  get problem(): CheckedFmhaFwdProblem {
    return this.plan.problem;
  }

  /** Registers, shared memory and spills of each distinct kernel (in column order). */
  get resources(): readonly FfpaKernelResources[] {
    const seen = new Map<string, FfpaKernelResources>();
    for (const { kernel } of this.kernels)
      seen.set(kernel.instance.name, {
        instance: kernel.instance.name,
        resources: kernel.resources,
        dynamicSharedBytes: kernel.instance.sharedBytes,
      });
    return [...seen.values()];
  }

  /**
   * Validates `buffers` for every slice's launch (`prepareFfpaLaunch`; `lse` is required when the
   * problem asks for it) and returns `launch`, which enqueues them on `buffers.stream`.
   */
  prepare(buffers: FmhaFwdRunnerBuffers): { launch(): void } {
    const p = this.plan.problem;
    if (p.lse && buffers.lse === undefined) throw new ArgumentError('lse', 'is required: the problem asks for LSE', buffers.lse);
    return prepareFfpaLaunch(this.kernels, p, buffers, this.#encode);
  }

  /** `prepare(buffers).launch()`. */
  run(buffers: FmhaFwdRunnerBuffers): void {
    this.prepare(buffers).launch();
  }

  /** Frees the kernels this runner built (not those of `buildKernel`). */
  dispose(): void {
    for (const x of this.#owned) x.dispose();
  }
}
