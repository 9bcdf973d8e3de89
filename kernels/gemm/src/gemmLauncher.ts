// The typed launcher of the GEMM operator: compiles an instance, loads it (opting in to its dynamic
// shared memory), and launches it after validating every argument (typed ArgumentError naming the
// argument and the rule) and encoding the two TMA tensor maps, before anything reaches the GPU.
import type { PackedArguments } from '@tilekit/codegen';
import { ArgumentError, ArgumentProblems, getDType } from '@tilekit/numeric';
import {
  checkTiledTensorMap,
  compileInstance,
  type CompilableInstance,
  encodeTensorMapTiled,
  LoadedKernel,
  type CompileResult,
  type Compiler,
  type Device,
  type LoadableInstance,
  type LoadedInstance,
  type Stream,
  type TiledTensorMapOptions,
  checkDeviceRange,
  type DeviceRange,
} from '@tilekit/runtime';
import type { GemmEpilogue } from '@tilekit/gemm';
import { addressAlignment, type GemmAlignment, type GemmInstance, type GemmLaunch } from './gemmInstance.ts';
import {
  checkGemmProblem,
  formatGemmProblem,
  gemmOperandElements,
  gemmOperandStorage,
  type CheckedGemmProblem,
  type GemmProblem,
} from './gemmProblem.ts';

/** Flags every GEMM kernel is compiled with. */
export const GEMM_COMPILE_FLAGS: readonly string[] = Object.freeze(['-std=c++17', '-lineinfo']);

/** A range of device memory (the runtime's `DeviceRange`, re-exported for this launcher's users). */
export type { DeviceRange } from '@tilekit/runtime';

/** What one launch reads and writes, and where it is queued. */
export interface GemmBuffers {
  /** A (M×K): row-major (row stride lda) in layouts `t?`, column-major (column stride lda) in `n?`. */
  readonly a: DeviceRange;
  /** B (K×N): column-major, i.e. stored N×K (column stride ldb) in layouts `?n`, row-major (row stride ldb) in `?t`. */
  readonly b: DeviceRange;
  /** C, row-major M×N (row stride ldc). */
  readonly c: DeviceRange;
  /** bias[0..N) in C's dtype: required exactly when the instance's epilogue adds a bias (`problem.bias`). */
  readonly bias?: DeviceRange;
  readonly stream?: Stream;
}

/** Encodes a tiled tensor map (the driver's `cuTensorMapEncodeTiled` on the GPU; tests pass a checker). */
export type TensorMapEncoder = (options: TiledTensorMapOptions) => Uint8Array;

/** A validated launch: configuration, packed arguments and the problem with its defaults. */
export interface PreparedGemmLaunch {
  readonly problem: CheckedGemmProblem;
  readonly launch: GemmLaunch;
  readonly args: PackedArguments;
  readonly aMap: TiledTensorMapOptions;
  readonly bMap: TiledTensorMapOptions;
}

function overlaps(x: DeviceRange, xBytes: number, y: DeviceRange, yBytes: number): boolean {
  return x.ptr < y.ptr + BigInt(yBytes) && y.ptr < x.ptr + BigInt(xBytes);
}

/**
 * The tensor maps of a launch (dimension 0 innermost, strides in bytes): each operand's contiguous
 * dim first, then the strided one, then the batch. A row-major (`t?`): [K, M, batch], strides
 * [lda·e, batchStrideA·e]; column-major (`n?`): [M, K, batch]. B column-major (`?n`, stored N×K):
 * [K, N, batch]; row-major (`?t`): [N, K, batch]. Boxes from the instance (`tmaBoxes`: one box per
 * K-major operand, 64-wide slabs for M/N-major ones); 128-byte swizzle (the wgmma layouts the block
 * GEMM reads), zero fill outside (ragged M, N and K), L2 promotion 128B.
 */
export function gemmTensorMaps(
  instance: GemmInstance,
  problem: CheckedGemmProblem,
  a: bigint,
  b: bigint,
): { readonly a: TiledTensorMapOptions; readonly b: TiledTensorMapOptions } {
  const e = getDType(problem.dtype).bytes;
  const dtype = problem.dtype === 'fp16' ? 'float16' : 'bfloat16';
  const common = { dtype, swizzle: '128B', oobFill: 'zero', l2Promotion: '128B' } as const;
  const box = instance.tmaBoxes;
  const store = gemmOperandStorage(problem.layout);
  // With one matrix the batch stride is never used: any valid stride (the leading one) will do.
  const one = problem.batch === 1;
  const aDims: [number, number, number] = store.a === 'row' ? [problem.k, problem.m, problem.batch] : [problem.m, problem.k, problem.batch];
  const bDims: [number, number, number] = store.b === 'col' ? [problem.k, problem.n, problem.batch] : [problem.n, problem.k, problem.batch];
  return {
    a: {
      ...common,
      address: a,
      globalDims: aDims,
      globalStrides: [problem.lda * e, (one ? problem.lda : problem.batchStrideA) * e],
      boxDims: [...box.a],
    },
    b: {
      ...common,
      address: b,
      globalDims: bDims,
      globalStrides: [problem.ldb * e, (one ? problem.ldb : problem.batchStrideB) * e],
      boxDims: [...box.b],
    },
  };
}

/** What the buffer checks need of an instance (both GEMM families have it). */
export interface GemmLaunchRules {
  readonly name: string;
  readonly epilogue: GemmEpilogue;
  unsupported(problem: CheckedGemmProblem, alignment: GemmAlignment): string[];
  /**
   * The elements of A and B the kernel's reads may address, when more than the strided extent
   * (gemmOperandElements): a family that reads whole vectors past the end of a row (zero-filled,
   * never used) needs them addressable.
   */
  readElements?(problem: CheckedGemmProblem): { readonly a: number; readonly b: number };
}

/** The activation and bias rules of `instance`'s epilogue, every broken one reported to `v` (`c`: the checked C buffer, if valid). */
function checkEpilogueBuffers(
  v: ArgumentProblems,
  instance: GemmLaunchRules,
  checked: CheckedGemmProblem,
  buffers: GemmBuffers,
  c: { range: DeviceRange; bytes: number } | undefined,
): void {
  const ep = instance.epilogue;
  const e = getDType(checked.dtype).bytes;
  if (checked.activation !== ep.activation)
    v.report('activation', `must be ${ep.activation}: ${instance.name} applies ${ep.activation}`, checked.activation);
  if (!ep.bias) {
    if (checked.bias || buffers.bias !== undefined)
      v.report('bias', `must be absent: ${instance.name} adds no bias`, checked.bias ? 'problem.bias true' : 'a bias buffer');
    return;
  }
  if (!checked.bias) v.report('bias', `problem.bias must be true: ${instance.name} adds a bias`, checked.bias);
  if (buffers.bias === undefined)
    return v.report('bias', `must be a device buffer of n = ${checked.n} elements: ${instance.name} adds a bias`, undefined);
  const bias = v.check(() => checkDeviceRange('bias', buffers.bias, checked.n * e));
  if (bias === undefined) return;
  if (addressAlignment(bias.ptr) % e !== 0) v.report('bias', `address must be aligned to ${e} bytes`, `0x${bias.ptr.toString(16)}`);
  if (c !== undefined && overlaps(c.range, c.bytes, bias, checked.n * e))
    v.report('bias', 'must not overlap c', { bias: `0x${bias.ptr.toString(16)}`, c: `0x${c.range.ptr.toString(16)}` });
}

/**
 * The launch checks every GEMM family shares: checks `problem` and `buffers` against `instance`
 * and returns the checked problem. A malformed problem throws its own `ArgumentError` (naming
 * `problem.<field>`) first, as the buffer sizes follow from it; then every buffer problem found is
 * reported in one `ArgumentError` (the first one's name as `argument`): `a` / `b` / `c` for a buffer
 * too small for its strided extent (`c` also when it overlaps A or B); `activation` when the
 * problem's activation is not the instance's; `bias` when a bias buffer is missing, unexpected (the
 * problem or instance adds none), smaller than N elements, misaligned or overlapping C; `problem`
 * when the instance's predicates (given the buffers' address alignment) reject it, listing them.
 */
export function checkGemmBuffers(instance: GemmLaunchRules, problem: GemmProblem, buffers: GemmBuffers): CheckedGemmProblem {
  const checked = checkGemmProblem(problem);
  const e = getDType(checked.dtype).bytes;
  const elems = { ...gemmOperandElements(checked), ...instance.readElements?.(checked) };
  const v = new ArgumentProblems(ArgumentError);
  const range = (name: 'a' | 'b' | 'c') => {
    const r = v.check(() => checkDeviceRange(name, buffers[name], elems[name] * e));
    return r === undefined ? undefined : { range: r, bytes: elems[name] * e };
  };
  const [a, b, c] = [range('a'), range('b'), range('c')];
  checkEpilogueBuffers(v, instance, checked, buffers, c);
  if (a !== undefined && b !== undefined && c !== undefined) {
    const reasons = instance.unsupported(checked, {
      a: addressAlignment(a.range.ptr),
      b: addressAlignment(b.range.ptr),
      c: addressAlignment(c.range.ptr),
    });
    if (reasons.length > 0) v.report('problem', `${instance.name} cannot run ${formatGemmProblem(checked)}: ${reasons.join('; ')}`);
  }
  if (a !== undefined && c !== undefined && overlaps(c.range, c.bytes, a.range, a.bytes))
    v.report('c', 'must not overlap a', { a: `0x${a.range.ptr.toString(16)}`, c: `0x${c.range.ptr.toString(16)}` });
  if (b !== undefined && c !== undefined && overlaps(c.range, c.bytes, b.range, b.bytes))
    v.report('c', 'must not overlap b', { b: `0x${b.range.ptr.toString(16)}`, c: `0x${c.range.ptr.toString(16)}` });
  v.throwIfAny();
  return checked;
}

/**
 * Validates a launch of `instance` on `problem` with `buffers` and prepares it: the shared checks
 * of {@link checkGemmBuffers} (the instance's predicates list dtype, layout, TMA stride alignment,
 * C store width), then the tensor maps are checked (`checkTiledTensorMap`) and encoded by `encode`.
 * `options.smCount` sizes a persistent instance's grid (default 132).
 */
export function prepareGemmLaunch(
  instance: GemmInstance,
  problem: GemmProblem,
  buffers: GemmBuffers,
  encode: TensorMapEncoder,
  options: { readonly smCount?: number } = {},
): PreparedGemmLaunch {
  const checked = checkGemmBuffers(instance, problem, buffers);
  const maps = gemmTensorMaps(instance, checked, buffers.a.ptr, buffers.b.ptr);
  checkTiledTensorMap(maps.a);
  checkTiledTensorMap(maps.b);
  const args = instance.signature.pack(instance.args(checked, encode(maps.a), encode(maps.b), buffers.c.ptr, buffers.bias?.ptr));
  return { problem: checked, launch: instance.launch(checked, options), args, aMap: maps.a, bMap: maps.b };
}

/** Compiles an instance of either family (nvcc or NVRTC, through the compiler's cache) for its target's arch. */
export function compileGemmInstance(instance: CompilableInstance, compiler: Compiler): Promise<CompileResult> {
  return compileInstance(instance, compiler, GEMM_COMPILE_FLAGS);
}

/** What loading needs of an instance of either GEMM family: compilable, with the dynamic shared memory (bytes per block) the kernel is opted in to. */
export type LoadableGemmInstance = LoadableInstance;

/**
 * An instance of either family compiled and loaded on a device (the runtime's `loadInstance`: arch
 * check before compiling, `ParamLayoutMismatchError` if the driver's `cuFuncGetParamInfo` disagrees
 * with the declared layout) and opted in to its dynamic shared memory. The families' kernels
 * (`GemmKernel`, `GemmSm80Kernel`) add their validated `prepare` / `run`.
 */
export class LoadedGemmKernel<I extends LoadableGemmInstance> extends LoadedKernel<I> {
  /** Compiles and loads `instance` on `options.device` with the GEMM flags, opting in to its dynamic shared memory. */
  protected static load(
    instance: LoadableGemmInstance,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<LoadedInstance> {
    return LoadedKernel.loadWith(instance, { ...options, flags: GEMM_COMPILE_FLAGS });
  }

  /** A closure that only enqueues the prepared launch (on `stream`, default the null stream). */
  protected enqueuer(launch: GemmLaunch, args: PackedArguments, stream: Stream | undefined): () => void {
    return this.enqueue(launch, args, stream);
  }
}

/** One sm_90a instance compiled and loaded on a device: `run` validates, encodes the tensor maps and launches. */
export class GemmKernel extends LoadedGemmKernel<GemmInstance> {
  /**
   * Compiles `instance`, loads it on `device` (see the runtime's `loadInstance`: arch check before
   * compiling, `ParamLayoutMismatchError` if the driver disagrees with the declared layout) and
   * opts the kernel in to its dynamic shared memory.
   */
  static async build(instance: GemmInstance, options: { readonly device: Device; readonly compiler: Compiler }): Promise<GemmKernel> {
    return new GemmKernel(instance, await LoadedGemmKernel.load(instance, options), options.device);
  }

  /**
   * Validates (see `prepareGemmLaunch`) and enqueues one GEMM. `options.smCount` (default the
   * device's SM count) sizes a persistent instance's grid; tests pass fewer to make blocks loop.
   */
  run(problem: GemmProblem, buffers: GemmBuffers, options: { readonly smCount?: number } = {}): void {
    this.prepare(problem, buffers, options).launch();
  }

  /** Validates and encodes once; the returned `launch` only enqueues (for timing loops). */
  prepare(
    problem: GemmProblem,
    buffers: GemmBuffers,
    options: { readonly smCount?: number } = {},
  ): { readonly prepared: PreparedGemmLaunch; launch(): void } {
    const prepared = prepareGemmLaunch(this.instance, problem, buffers, (o) => encodeTensorMapTiled(this.device, o), {
      smCount: options.smCount ?? this.device.smCount,
    });
    return { prepared, launch: this.enqueuer(prepared.launch, prepared.args, buffers.stream) };
  }
}
