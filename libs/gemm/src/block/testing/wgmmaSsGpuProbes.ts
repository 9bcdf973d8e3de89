// Test-only: the harness the two WgmmaBlockGemmSs GPU specs (blockGemmWgmmaSsInt8.gpu.spec.ts,
// blockGemmWgmmaSsFp8.gpu.spec.ts) share — one nvcc run for all of a spec's probe kernels
// (blockGemmWgmmaSsProbe.ts) with no register spills, the seeded generator of their operands, and
// one launch of a probe on one block (upload A, B and C's initial bytes, launch, read C back). What
// each spec checks C against (its CPU reference and tolerance) stays in the spec. @tilekit/runtime
// sits above this pure library's layer, so the specs hand in what the harness calls of it
// (`{ gpu, gpuTestCompiler, kernelArgs }`), named here by shape. Uses node: built-ins (assert).
import assert from 'node:assert/strict';
import { WgmmaBlockGemmSs } from '../blockGemmWgmmaSs.ts';
import { wgmmaSsProbeSource, type WgmmaSsProbeCase } from '../blockGemmWgmmaSsProbe.ts';

/** A device buffer, as far as the harness uses one (the runtime's `DeviceBuffer`). */
interface ProbeBuffer {
  readonly ptr: bigint;
  copyToHost<T extends Int32Array | Float32Array>(dst: T): T;
  dispose(): void;
}

/** A loaded module (the runtime's `CudaModule`): its kernels launch on a grid of blocks with packed arguments. */
interface ProbeModule {
  getKernel(name: string): { launch(config: { readonly grid: number; readonly block: number }, args: unknown): void };
}

/** A device (the runtime's `Device`): uploads host arrays, loads a cubin, waits for its work. */
interface ProbeDevice {
  upload(host: ArrayBufferView): ProbeBuffer;
  loadModule(image: Uint8Array): ProbeModule;
  synchronize(): void;
}

/** The argument builder `kernelArgs` fills: one pointer after another. */
interface ProbeArgs {
  pointer(buffer: ProbeBuffer): ProbeArgs;
}

/**
 * What the harness calls of @tilekit/runtime (`kernelArgs`) and @tilekit/runtime/testing (`gpu`,
 * `gpuTestCompiler`): a GPU spec passes its own imports.
 */
export interface WgmmaSsProbeRuntime<Device extends ProbeDevice> {
  readonly gpu: { device(): Device };
  // NoInfer: the compiler targets the device `gpu.device()` gives (its type is inferred there alone).
  gpuTestCompiler(name: string): {
    compile(request: { readonly source: string; readonly name: string; readonly arch: NoInfer<Device> }): Promise<{
      readonly cubin: Uint8Array;
      readonly functions: Readonly<Record<string, { readonly spillStores: number; readonly spillLoads: number }>>;
    }>;
  };
  kernelArgs(fill: (args: ProbeArgs) => unknown): unknown;
}

/** A GPU spec's probe kernels: compiled together once, each launched on one block. */
export interface WgmmaSsGpuProbes {
  /**
   * Launches `probe` on ONE block of its block GEMM's threads with A, B and C uploaded from `a`, `b`
   * and `c` (C's initial bytes: a sentinel, so that an element never written fails), waits, and
   * returns C read back into `c`.
   */
  run<C extends Int32Array | Float32Array>(probe: WgmmaSsProbeCase, a: ArrayBufferView, b: ArrayBufferView, c: C): Promise<C>;
}

/** The probe kernels of `cases`, compiled by `runtime.gpuTestCompiler(compilerName)` on first use. */
export function wgmmaSsGpuProbes<Device extends ProbeDevice>(
  runtime: WgmmaSsProbeRuntime<Device>,
  compilerName: string,
  cases: readonly WgmmaSsProbeCase[],
): WgmmaSsGpuProbes {
  const { gpu, kernelArgs } = runtime;
  let loaded: Promise<ProbeModule> | undefined;

  /** One nvcc run for every probe kernel; asserts ptxas spilled nothing. */
  function probeModule(): Promise<ProbeModule> {
    loaded ??= (async () => {
      const device = gpu.device();
      const result = await runtime.gpuTestCompiler(compilerName).compile({
        source: wgmmaSsProbeSource(cases),
        name: cases[0]!.name,
        arch: device,
      });
      for (const c of cases) {
        const r = result.functions[c.name];
        assert.ok(r !== undefined, `${c.name}: ptxas reported no resources`);
        assert.equal(r.spillStores + r.spillLoads, 0, `${c.name}: register spills`);
      }
      return device.loadModule(result.cubin);
    })();
    return loaded;
  }

  return {
    async run(probe, a, b, c) {
      const blk = new WgmmaBlockGemmSs(probe.policy);
      const module = await probeModule();
      const device = gpu.device();
      const da = device.upload(a);
      const db = device.upload(b);
      const dc = device.upload(c);
      try {
        module.getKernel(probe.name).launch(
          { grid: 1, block: blk.threads },
          kernelArgs((args) => args.pointer(da).pointer(db).pointer(dc)),
        );
        device.synchronize();
        return dc.copyToHost(c);
      } finally {
        da.dispose();
        db.dispose();
        dc.dispose();
      }
    },
  };
}

/** Deterministic 32-bit generator (mulberry32), so a failure reproduces. */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}
