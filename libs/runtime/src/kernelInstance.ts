// Compiling and loading one kernel instance: the steps every operator's launcher shares, with the
// two checks that make a launch trustworthy — the device's arch is the instance's target, and the
// driver sees the parameter layout the instance's signature declared.
import type { AnyKernelSignature } from '@tilekit/codegen';
import { ArgumentError, TilekitError } from '@tilekit/numeric';
import type { CudaArch } from './arch.ts';
import type { CompileResult, Compiler } from './compiler.ts';
import type { CudaModule } from './cudaModule.ts';
import type { Device } from './device.ts';
import type { Kernel } from './kernel.ts';

/** What the runtime needs of an instance: its entry name, declared signature and source. */
export interface CompilableInstance {
  readonly name: string;
  readonly signature: AnyKernelSignature;
  source(): string;
}

/** The compiled instance's parameter layout differs from the driver's: a bug, never expected. */
export class ParamLayoutMismatchError extends TilekitError {
  constructor(kernel: string, declared: string, driver: string) {
    super('runtime/param-layout', `${kernel}: declared parameters ${declared} but the driver reports ${driver}`);
  }
}

/** Compiles an instance (through the compiler's cache) for its signature's target arch. */
export function compileInstance(instance: CompilableInstance, compiler: Compiler, flags: readonly string[]): Promise<CompileResult> {
  return compiler.compile({ source: instance.source(), name: instance.name, arch: instance.signature.target.arch as CudaArch, flags });
}

/** An instance compiled and loaded on a device. */
export interface LoadedInstance {
  readonly compiled: CompileResult;
  readonly module: CudaModule;
  readonly kernel: Kernel;
}

/**
 * Compiles `instance` and loads it on `device`. Throws `ArgumentError` when the device's arch is
 * not the instance's target (before compiling), `CompileError` from the compiler, and
 * `ParamLayoutMismatchError` (after unloading) if the driver's `cuFuncGetParamInfo` disagrees with
 * the declared layout.
 */
export async function loadInstance(
  instance: CompilableInstance,
  options: { readonly device: Device; readonly compiler: Compiler; readonly flags: readonly string[] },
): Promise<LoadedInstance> {
  const arch = instance.signature.target.arch;
  if (options.device.arch !== arch) {
    throw new ArgumentError('device', `must be a ${arch} device for ${instance.name}`, `${options.device.name} (${options.device.arch})`);
  }
  const compiled = await compileInstance(instance, options.compiler, options.flags);
  const module = options.device.loadModule(compiled.cubin);
  const kernel = module.getKernel(instance.name);
  const driver = kernel.params;
  if (driver !== undefined) {
    const declared = instance.signature.layout.fields.map((f) => `${f.offset}:${f.size}`).join(' ');
    const reported = driver.map((p) => `${p.offset}:${p.size}`).join(' ');
    if (declared !== reported) {
      module.dispose();
      throw new ParamLayoutMismatchError(instance.name, declared, reported);
    }
  }
  return { compiled, module, kernel };
}

/** `build` made idempotent per instance name; `builds()` lists what was started (e.g. to dispose it). */
export type InstanceBuilder<I, K> = ((instance: I) => Promise<K>) & { readonly builds: () => Promise<K>[] };

/**
 * Wraps `build` so each instance (by name) is built at most once; concurrent callers share the
 * pending build. For test and bench harnesses that meet the same instance many times.
 */
export function buildOncePerInstance<I extends { readonly name: string }, K>(build: (instance: I) => Promise<K>): InstanceBuilder<I, K> {
  const built = new Map<string, Promise<K>>();
  const get = (instance: I): Promise<K> => {
    let pending = built.get(instance.name);
    if (pending === undefined) {
      pending = build(instance);
      built.set(instance.name, pending);
    }
    return pending;
  };
  return Object.assign(get, { builds: () => [...built.values()] });
}
