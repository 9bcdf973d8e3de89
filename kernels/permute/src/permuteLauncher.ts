// The typed launcher of the permute operator: compiles an instance, loads it, and launches it
// after validating every argument (typed ArgumentError naming the argument and the rule, before
// anything reaches the GPU).
import type { PackedArguments } from '@tilekit/codegen';
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import {
  compileInstance,
  loadInstance,
  type CompileResult,
  type Compiler,
  type CudaModule,
  type Device,
  type Kernel,
  type KernelResources,
  type LoadedInstance,
  type Stream,
  checkDeviceRange,
  type DeviceRange,
} from '@tilekit/runtime';
import { addressAlignment, type PermuteInstance, type PermuteLaunch } from './permuteInstance.ts';
import { checkPermuteProblem, formatPermuteProblem, permuteBytesMoved, type PermuteProblem } from './permuteProblem.ts';

/** Flags every permute kernel is compiled with (line info lets compute-sanitizer name source lines). */
export const PERMUTE_COMPILE_FLAGS: readonly string[] = Object.freeze(['-std=c++17', '-lineinfo']);

/** A range of device memory (the runtime's `DeviceRange`, re-exported for this launcher's users). */
export type { DeviceRange } from '@tilekit/runtime';

/** What one launch reads and writes, and where it is queued. */
export interface PermuteBuffers {
  readonly src: DeviceRange;
  readonly dst: DeviceRange;
  readonly stream?: Stream;
}

/** A validated launch: configuration and packed arguments. */
export interface PreparedPermuteLaunch {
  readonly launch: PermuteLaunch;
  readonly args: PackedArguments;
}

/**
 * Validates a launch of `instance` on `problem` with `buffers` and prepares it, touching no GPU.
 * A malformed problem throws its own `ArgumentError` (naming `problem.<field>`) first, as the
 * buffer sizes follow from it; then every buffer problem found is reported in one `ArgumentError`
 * (the first one's name as `argument`): `src` / `dst` for a buffer that is too small, or
 * overlapping the other (the kernel reads src while writing dst); `problem` when the instance's
 * predicates reject it given the buffers' alignment (listing them).
 */
export function preparePermuteLaunch(instance: PermuteInstance, problem: PermuteProblem, buffers: PermuteBuffers): PreparedPermuteLaunch {
  const checked = checkPermuteProblem(problem);
  const bytes = permuteBytesMoved(checked) / 2;
  const v = new ArgumentProblems(ArgumentError);
  const src = v.check(() => checkDeviceRange('src', buffers.src, bytes));
  const dst = v.check(() => checkDeviceRange('dst', buffers.dst, bytes));
  if (src !== undefined && dst !== undefined) {
    const reasons = instance.unsupported(checked, { src: addressAlignment(src.ptr), dst: addressAlignment(dst.ptr) });
    if (reasons.length > 0) v.report('problem', `${instance.name} cannot run ${formatPermuteProblem(checked)}: ${reasons.join('; ')}`);
    const n = BigInt(bytes);
    if (src.ptr < dst.ptr + n && dst.ptr < src.ptr + n)
      v.report('dst', 'must not overlap src (the permute is not in place)', {
        src: `0x${src.ptr.toString(16)}`,
        dst: `0x${dst.ptr.toString(16)}`,
        bytes,
      });
  }
  v.throwIfAny();
  const [s, d] = [buffers.src.ptr, buffers.dst.ptr];
  return { launch: instance.launch(checked), args: instance.signature.pack(instance.args(checked, s, d)) };
}

/** Compiles an instance (nvcc or NVRTC, through the compiler's cache) for its target's arch. */
export function compilePermuteInstance(instance: PermuteInstance, compiler: Compiler): Promise<CompileResult> {
  return compileInstance(instance, compiler, PERMUTE_COMPILE_FLAGS);
}

/**
 * One instance compiled and loaded on a device: `run` validates and launches. Built by
 * `PermuteKernel.build`, which also checks the driver's view of the parameters
 * (`cuFuncGetParamInfo`) against the declared layout.
 */
export class PermuteKernel {
  readonly instance: PermuteInstance;
  readonly compiled: CompileResult;
  readonly module: CudaModule;
  readonly kernel: Kernel;

  private constructor(instance: PermuteInstance, loaded: LoadedInstance) {
    this.instance = instance;
    this.compiled = loaded.compiled;
    this.module = loaded.module;
    this.kernel = loaded.kernel;
  }

  /**
   * Compiles `instance` and loads it on `device` (see the runtime's `loadInstance`: arch check
   * before compiling, `ParamLayoutMismatchError` if the driver disagrees with the declared layout).
   */
  static async build(instance: PermuteInstance, options: { readonly device: Device; readonly compiler: Compiler }): Promise<PermuteKernel> {
    return new PermuteKernel(instance, await loadInstance(instance, { ...options, flags: PERMUTE_COMPILE_FLAGS }));
  }

  /** Registers, spills and shared memory as ptxas reported them. */
  get resources(): KernelResources {
    return this.compiled.resources;
  }

  /** Validates (see `preparePermuteLaunch`) and enqueues one permute. */
  run(problem: PermuteProblem, buffers: PermuteBuffers): void {
    this.prepare(problem, buffers).launch();
  }

  /**
   * Validates once (see `preparePermuteLaunch`) and returns a launcher of exactly that permute:
   * for timing loops, where re-validating between two CUDA events would time host work too.
   */
  prepare(problem: PermuteProblem, buffers: PermuteBuffers): { readonly prepared: PreparedPermuteLaunch; launch(): void } {
    const prepared = preparePermuteLaunch(this.instance, problem, buffers);
    const { launch, args } = prepared;
    const config = {
      grid: launch.grid,
      block: launch.block,
      sharedBytes: launch.sharedBytes,
      ...(buffers.stream ? { stream: buffers.stream } : {}),
    };
    return { prepared, launch: () => this.kernel.launch(config, args) };
  }

  /** Unloads the module (queued launches must have finished). */
  dispose(): void {
    this.module.dispose();
  }
}
