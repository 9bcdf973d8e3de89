// The CUDA side of attention backward: an FmhaBwdExecutor (the device operations @tilekit/fmha's
// pure FmhaBwdLauncher asks for: copy the workspace head, zero dq_acc, launch a stage with its TMA
// maps and packed arguments) and the operator-level runner that builds the launcher over the
// catalog, compiles the selected triple, owns (or accepts) the workspace and the D buffer.
import type { PackedArguments } from '@tilekit/codegen';
import {
  longestSlot,
  type AttentionTensorStrides,
  type CheckedFmhaBwdTraits,
  type FmhaBwdArgs,
  type FmhaBwdExecutor,
  type FmhaBwdLauncher,
  type FmhaBwdRecordTriple,
  type FmhaBwdStageLaunch,
  type FmhaBwdWorkspace,
  type FmhaBwdWorkspaceSize,
  type FmhaBwdDeviceRange,
  type FmhaScoreModifierSpec,
} from '@tilekit/fmha';
import { fmhaScoreArgValues } from '@tilekit/fmha-launch';
import { ArgumentError, ArgumentProblems, getDType } from '@tilekit/numeric';
import {
  checkTiledTensorMap,
  encodeTensorMapTiled,
  loadInstance,
  type CompileResult,
  type Compiler,
  type CudaModule,
  type Device,
  type DeviceBuffer,
  type Kernel,
  type KernelResources,
  type Stream,
  type TiledTensorMapOptions,
} from '@tilekit/runtime';
import { FMHA_BWD_COMPILE_FLAGS } from './fmhaBwdCatalog.ts';
import {
  FMHA_BWD_DQ_STORE_VECTOR,
  type FmhaBwdConvertDqInstance,
  type FmhaBwdDotDoOInstance,
  type FmhaBwdRowLaunch,
} from '@tilekit/fmha-launch';
import type { FmhaBwdDqDkDvInstance } from './fmhaBwdDqDkDvInstance.ts';
import { dispatchFmhaBwd } from './fmhaBwdDispatch.ts';
import {
  checkFmhaBwdProblem,
  FMHA_BWD_TENSORS,
  fmhaBwdOperandElements,
  type CheckedFmhaBwdProblem,
  type FmhaBwdProblem,
  type FmhaBwdTensor,
} from './fmhaBwdProblem.ts';

/** SMs of an H200 (the planning default without a device). */
export const FMHA_BWD_DEFAULT_SM_COUNT = 132;

/** Encodes a tiled tensor map (the driver on a GPU; tests pass a checker). */
export type FmhaBwdTensorMapEncoder = (options: TiledTensorMapOptions) => Uint8Array;

/** Any backward kernel instance. */
export type FmhaBwdAnyInstance = FmhaBwdDqDkDvInstance | FmhaBwdDotDoOInstance | FmhaBwdConvertDqInstance;

/** One packed launch of a stage. */
export interface FmhaBwdPackedLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
  readonly args: PackedArguments;
}

/**
 * The element strides of a tensor argument must be 16-byte multiples for TMA; its address 16-byte
 * aligned. A tensor of 0 rows (every query or every key sequence empty: its head and batch strides
 * are 0, which TMA rejects) gets a placeholder map [hdim, 1, 1, 1] with the row stride everywhere;
 * dq_dk_dv never loads from it (no key tiles: no blocks; no query rows: no query tile is loaded).
 */
function tmaMap(
  dtype: 'fp16' | 'bf16',
  address: bigint,
  s: AttentionTensorStrides,
  heads: number,
  rows: number,
  hdim: number,
  batches: number,
  box: readonly number[],
): TiledTensorMapOptions {
  const e = getDType(dtype).bytes;
  return {
    dtype: dtype === 'fp16' ? 'float16' : 'bfloat16',
    swizzle: '128B',
    oobFill: 'zero',
    l2Promotion: '128B',
    address,
    globalDims: rows === 0 ? [hdim, 1, 1, 1] : [hdim, rows, heads, batches],
    // A unit dimension's stride is never used: any valid one (the row stride) will do.
    globalStrides:
      rows === 0
        ? [s.row * e, s.row * e, s.row * e]
        : [s.row * e, (heads === 1 ? s.row : s.head) * e, (batches === 1 ? s.row : s.batch) * e],
    boxDims: [...box],
  };
}

/** Physical query rows of the longest sequence (group mode: the longest seqstart slot). */
function maxRowsQ(t: CheckedFmhaBwdTraits): number {
  return t.groupMode ? longestSlot(t.seqstartQ) : t.seqlenQ;
}

function maxRowsK(t: CheckedFmhaBwdTraits): number {
  return t.groupMode ? longestSlot(t.seqstartK) : t.seqlenK;
}

function rowLaunch(l: FmhaBwdRowLaunch, args: PackedArguments): FmhaBwdPackedLaunch {
  return { grid: l.grid, block: l.block, sharedBytes: l.sharedBytes, args };
}

/** dot_do_o's launch: D = rowsum(dO ∘ O) into `args.d` (the LSE layout). */
export function packFmhaBwdDotDoO(instance: FmhaBwdDotDoOInstance, t: CheckedFmhaBwdTraits, args: FmhaBwdArgs): FmhaBwdPackedLaunch {
  const group = t.groupMode;
  const packed = instance.signature.pack({
    o: args.o.ptr,
    d_o: args.dO.ptr,
    d: args.d.ptr,
    o_stride_row: args.o.strides.row,
    o_stride_head: args.o.strides.head,
    o_stride_batch: group ? 0 : args.o.strides.batch,
    do_stride_row: args.dO.strides.row,
    do_stride_head: args.dO.strides.head,
    do_stride_batch: group ? 0 : args.dO.strides.batch,
    d_stride_head: args.d.strides.head,
    d_stride_batch: group ? 0 : args.d.strides.batch,
    seqlen_q: t.seqlenQ,
    seqstart_q: group ? (args.seqstartQ ?? 0n) : 0n,
  });
  return rowLaunch(instance.launch(t.batch, t.nheadQ, maxRowsQ(t)), packed);
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
  const group = t.groupMode;
  const batches = group ? 1 : t.batch;
  const boxes = instance.tmaBoxes;
  const maps = {
    q: tmaMap(t.dtype, args.q.ptr, args.q.strides, t.nheadQ, t.seqlenQ, t.hdimQ, batches, boxes.q),
    k: tmaMap(t.dtype, args.k.ptr, args.k.strides, t.nheadK, t.seqlenK, t.hdimQ, batches, boxes.kv),
    v: tmaMap(t.dtype, args.v.ptr, args.v.strides, t.nheadK, t.seqlenK, t.hdimV, batches, boxes.kv),
    dO: tmaMap(t.dtype, args.dO.ptr, args.dO.strides, t.nheadQ, t.seqlenQ, t.hdimV, batches, boxes.q),
  };
  for (const m of Object.values(maps)) checkTiledTensorMap(m);
  const window = t.mask.kind === 'window' ? t.mask : undefined;
  const packed = instance.signature.pack({
    q_map: encode(maps.q),
    k_map: encode(maps.k),
    v_map: encode(maps.v),
    do_map: encode(maps.dO),
    lse: args.lse.ptr,
    d: args.d.ptr,
    lse_stride_head: args.lse.strides.head,
    lse_stride_batch: group ? 0 : args.lse.strides.batch,
    dk: args.dK.ptr,
    dv: args.dV.ptr,
    dk_stride_row: args.dK.strides.row,
    dk_stride_head: args.dK.strides.head,
    dk_stride_batch: group ? 0 : args.dK.strides.batch,
    dv_stride_row: args.dV.strides.row,
    dv_stride_head: args.dV.strides.head,
    dv_stride_batch: group ? 0 : args.dV.strides.batch,
    workspace: args.workspace,
    batch: t.batch,
    nhead_q: t.nheadQ,
    nhead_ratio: t.nheadQ / t.nheadK,
    seqlen_q: t.seqlenQ,
    seqlen_k: t.seqlenK,
    seqstart_q: group ? (args.seqstartQ ?? 0n) : 0n,
    seqstart_k: group ? (args.seqstartK ?? 0n) : 0n,
    seqlen_k_ptr: 0n,
    scale: args.scale,
    scale_log2: args.scale * Math.LOG2E,
    mask_left: window?.left ?? -1,
    mask_right: window?.right ?? -1,
    mask_top_left: window === undefined || window.alignment === 'topLeft' ? 1 : 0,
    ...fmhaScoreArgValues(instance.policy.scoreModifier, args.scoreModifier, t.nheadQ),
  });
  const gridX = instance.policy.dqMode === 'atomic' ? Math.ceil(maxRowsK(t) / instance.kN0) : Math.max(0, ...ws.nsplits);
  const l = instance.launch(gridX, t.nheadK, t.batch);
  return { grid: l.grid, block: l.block, sharedBytes: l.sharedBytes, args: packed };
}

/** convert_dq's launch: the workspace pointer, dQ and its strides. */
export function packFmhaBwdConvertDq(instance: FmhaBwdConvertDqInstance, t: CheckedFmhaBwdTraits, args: FmhaBwdArgs): FmhaBwdPackedLaunch {
  const group = t.groupMode;
  const packed = instance.signature.pack({
    workspace: args.workspace,
    dq: args.dQ.ptr,
    dq_stride_row: args.dQ.strides.row,
    dq_stride_head: args.dQ.strides.head,
    dq_stride_batch: group ? 0 : args.dQ.strides.batch,
    batch: t.batch,
    nhead_q: t.nheadQ,
    seqlen_q: t.seqlenQ,
    seqstart_q: group ? (args.seqstartQ ?? 0n) : 0n,
  });
  return rowLaunch(instance.launch(t.batch, t.nheadQ, maxRowsQ(t)), packed);
}

/** One backward instance compiled and loaded on a device. */
export class FmhaBwdKernel<I extends FmhaBwdAnyInstance = FmhaBwdAnyInstance> {
  readonly instance: I;
  readonly compiled: CompileResult;
  readonly module: CudaModule;
  readonly kernel: Kernel;

  private constructor(instance: I, compiled: CompileResult, module: CudaModule, kernel: Kernel) {
    this.instance = instance;
    this.compiled = compiled;
    this.module = module;
    this.kernel = kernel;
  }

  /** Compiles and loads (the runtime's arch and parameter-layout checks) and opts in to the dynamic shared memory. */
  static async build<I extends FmhaBwdAnyInstance>(
    instance: I,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<FmhaBwdKernel<I>> {
    const loaded = await loadInstance(instance, { ...options, flags: FMHA_BWD_COMPILE_FLAGS });
    if (instance.sharedBytes > 0) loaded.kernel.setMaxDynamicSharedMemory(instance.sharedBytes);
    return new FmhaBwdKernel(instance, loaded.compiled, loaded.module, loaded.kernel);
  }

  get resources(): KernelResources {
    return this.compiled.resources;
  }

  /** Enqueues `p`; a grid without blocks (no key tiles, no query rows) has nothing to compute and is skipped. */
  launch(p: FmhaBwdPackedLaunch, stream: Stream | undefined): void {
    if (p.grid.some((n) => n === 0)) return;
    this.kernel.launch({ grid: p.grid, block: p.block, sharedBytes: p.sharedBytes, ...(stream ? { stream } : {}) }, p.args);
  }

  dispose(): void {
    this.module.dispose();
  }
}

/** The compiled kernels of one triple. */
export interface FmhaBwdKernels {
  readonly dotDoO: FmhaBwdKernel<FmhaBwdDotDoOInstance>;
  readonly dqDkDv: FmhaBwdKernel<FmhaBwdDqDkDvInstance>;
  readonly convertDq: FmhaBwdKernel<FmhaBwdConvertDqInstance> | null;
}

/**
 * The CUDA executor of the pure launcher: device copies and fills go through the `DeviceBuffer`
 * that holds the address (a workspace registered with `register`), launches through the triple's
 * compiled kernels with `packFmhaBwd*` arguments. An address in no registered buffer is an
 * `ArgumentError`.
 */
export class FmhaBwdCudaExecutor implements FmhaBwdExecutor<Stream | undefined> {
  readonly kernels: FmhaBwdKernels;
  readonly #encode: FmhaBwdTensorMapEncoder;
  readonly #buffers = new Set<DeviceBuffer>();

  constructor(kernels: FmhaBwdKernels, encode: FmhaBwdTensorMapEncoder) {
    this.kernels = kernels;
    this.#encode = encode;
  }

  /** Makes `buffer` reachable by copyToDevice/fillZero. */
  register(buffer: DeviceBuffer): void {
    this.#buffers.add(buffer);
  }

  #holding(dst: bigint, bytes: number): { buffer: DeviceBuffer; offset: number } {
    for (const buffer of this.#buffers) {
      if (buffer.disposed) continue;
      const offset = dst - buffer.ptr;
      if (offset >= 0n && offset + BigInt(bytes) <= BigInt(buffer.bytes)) return { buffer, offset: Number(offset) };
    }
    throw new ArgumentError('dst', 'must lie in a workspace buffer registered with the executor', `0x${dst.toString(16)} + ${bytes} bytes`);
  }

  copyToDevice(dst: bigint, bytes: Uint8Array, stream: Stream | undefined): void {
    const { buffer, offset } = this.#holding(dst, bytes.byteLength);
    buffer.copyFromHost(bytes, { offset, ...(stream ? { stream } : {}) });
  }

  fillZero(dst: bigint, byteCount: number, stream: Stream | undefined): void {
    if (byteCount === 0) return;
    const { buffer, offset } = this.#holding(dst, byteCount);
    buffer.fill(0, { offset, bytes: byteCount, ...(stream ? { stream } : {}) });
  }

  launch(l: FmhaBwdStageLaunch, stream: Stream | undefined): void {
    const k = this.kernels;
    switch (l.stage) {
      case 'dotDoO':
        k.dotDoO.launch(packFmhaBwdDotDoO(k.dotDoO.instance, l.traits, l.args), stream);
        return;
      case 'dqDkDv':
        k.dqDkDv.launch(packFmhaBwdDqDkDv(k.dqDkDv.instance, l.traits, l.workspace, l.args, this.#encode), stream);
        return;
      case 'convertDq':
        if (k.convertDq === null)
          throw new ArgumentError('launch.stage', 'convertDq needs a convert_dq kernel: this triple writes dQ directly', l.stage);
        k.convertDq.launch(packFmhaBwdConvertDq(k.convertDq.instance, l.traits, l.args), stream);
        return;
    }
  }
}

/** A range of device memory. */

/**
 * Device memory of one backward run: the inputs (Q, K, V, O, dO, the forward's LSE), the outputs,
 * group-mode int32 seqstarts; and the score modifier's values, as the forward's buffers take them.
 */
export interface FmhaBwdRunnerBuffers {
  readonly q: FmhaBwdDeviceRange;
  readonly k: FmhaBwdDeviceRange;
  readonly v: FmhaBwdDeviceRange;
  readonly o: FmhaBwdDeviceRange;
  readonly dO: FmhaBwdDeviceRange;
  /** fp32, the problem's `lseStrides` layout. */
  readonly lse: FmhaBwdDeviceRange;
  readonly dQ: FmhaBwdDeviceRange;
  readonly dK: FmhaBwdDeviceRange;
  readonly dV: FmhaBwdDeviceRange;
  readonly seqstartQ?: FmhaBwdDeviceRange;
  readonly seqstartK?: FmhaBwdDeviceRange;
  readonly stream?: Stream;
  /** The values of the problem's score modifier (its cap, or ALiBi's fp32 slopes); required exactly when the problem has one. */
  readonly scoreModifier?: FmhaScoreModifierSpec;
}

/**
 * Why the runner's kernels cannot take the problem's layout (one line per rule), empty when they
 * can: Q/K/V/dO strides·e multiples of 16 bytes and below 2^40 (TMA), O strides multiples of 8
 * elements (dot_do_o's 16-byte loads), dQ strides multiples of 4 (convert_dq's stores), dK/dV row
 * strides even and below 2^31.
 */
export function fmhaBwdLayoutProblems(p: CheckedFmhaBwdProblem): string[] {
  const out: string[] = [];
  const e = getDType(p.dtype).bytes;
  const group = p.mode === 'group';
  const each = (name: FmhaBwdTensor, rule: (stride: number) => string | undefined): void => {
    for (const what of ['row', 'head', 'batch'] as const) {
      if (what === 'batch' && group) continue;
      const why = rule(p.strides[name][what]);
      if (why !== undefined) out.push(`${name} ${what} stride ${p.strides[name][what]}: ${why}`);
    }
  };
  for (const name of ['q', 'k', 'v', 'dO'] as const)
    each(name, (s) =>
      (s * e) % 16 !== 0
        ? 'times the element size must be a multiple of 16 bytes (TMA)'
        : s * e >= 2 ** 40
          ? 'reaches 2^40 bytes (TMA)'
          : undefined,
    );
  each('o', (s) => (s % 8 !== 0 ? 'must be a multiple of 8 elements (dot_do_o reads 16-byte vectors)' : undefined));
  each('dQ', (s) =>
    s % FMHA_BWD_DQ_STORE_VECTOR !== 0
      ? `must be a multiple of ${FMHA_BWD_DQ_STORE_VECTOR} elements (convert_dq stores ${FMHA_BWD_DQ_STORE_VECTOR}-element vectors)`
      : undefined,
  );
  for (const name of ['dK', 'dV'] as const)
    each(name, (s) => (s % 2 !== 0 ? 'must be even (dK/dV are stored in element pairs)' : undefined));
  for (const name of ['o', 'dQ', 'dK', 'dV'] as const) if (p.strides[name].row > 2 ** 31 - 8) out.push(`${name} row stride exceeds int32`);
  return out;
}

/** How the runner gets its kernels (e.g. `buildOncePerInstance` memos) and its workspace. */
export interface FmhaBwdRunnerOptions {
  readonly device: Device;
  readonly compiler: Compiler;
  /** Triples to select from (default `fmhaBwdCatalogFor`'s: the dense ones, or those of the problem's score modifier). */
  readonly triples?: readonly FmhaBwdRecordTriple[];
  readonly buildKernel?: <I extends FmhaBwdAnyInstance>(instance: I) => Promise<FmhaBwdKernel<I>>;
  /** TMA descriptor encoder (default: the driver's, on `device`). */
  readonly encode?: FmhaBwdTensorMapEncoder;
  /** A caller's workspace (at least `workspaceSize.total` bytes); default: the runner allocates and owns one. */
  readonly workspace?: DeviceBuffer;
  /** Where the launcher's "no instance" warning goes (default: none; `create` throws instead). */
  readonly warn?: (message: string) => void;
}

/** A device buffer's address: a `{ ptr: bigint, bytes }` of at least `bytes`, aligned to `align` (typed `ArgumentError` naming `name` otherwise). */
function checkedAddress(name: string, r: FmhaBwdDeviceRange | undefined, bytes: number, align: number): bigint {
  if (typeof r !== 'object' || r === null || typeof r.ptr !== 'bigint' || !Number.isSafeInteger(r.bytes))
    throw new ArgumentError(name, 'must be a device buffer (an object with a bigint ptr and a byte count)', r);
  if (r.bytes < bytes) throw new ArgumentError(name, `must hold at least ${bytes} bytes`, r.bytes);
  if (r.ptr % BigInt(align) !== 0n) throw new ArgumentError(name, `address must be aligned to ${align} bytes`, `0x${r.ptr.toString(16)}`);
  return r.ptr;
}

/** The written tensors of a backward call: the others are read while they are written. */
const FMHA_BWD_OUTPUTS: readonly string[] = ['dQ', 'dK', 'dV'];

/**
 * Reports to `problems` every output (dQ, dK, dV) whose extent [ptr, ptr + bytes) overlaps another
 * tensor's (rule `must not overlap <other>`): blocks read Q, K, V, O, dO and LSE while others write
 * the gradients, and dK and dV are written by the same blocks at once. Empty extents overlap nothing.
 */
function reportOutputOverlaps(
  problems: ArgumentProblems,
  extents: readonly { readonly name: string; readonly ptr: bigint; readonly bytes: number }[],
): void {
  const meets = (x: (typeof extents)[number], y: (typeof extents)[number]) =>
    x.bytes > 0 && y.bytes > 0 && x.ptr < y.ptr + BigInt(y.bytes) && y.ptr < x.ptr + BigInt(x.bytes);
  extents.forEach((out, i) => {
    if (!FMHA_BWD_OUTPUTS.includes(out.name)) return;
    for (const [j, other] of extents.entries()) {
      if (j !== i && (!FMHA_BWD_OUTPUTS.includes(other.name) || j < i) && meets(out, other))
        problems.report(out.name, `must not overlap ${other.name} (the kernels read or write it while writing ${out.name})`, {
          [out.name]: `0x${out.ptr.toString(16)}`,
          [other.name]: `0x${other.ptr.toString(16)}`,
        });
    }
  });
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
export class FmhaBwdRunner {
  readonly problem: CheckedFmhaBwdProblem;
  readonly launcher: FmhaBwdLauncher<Stream | undefined>;
  readonly triple: FmhaBwdRecordTriple;
  readonly kernels: FmhaBwdKernels;
  readonly device: Device;
  readonly #executor: FmhaBwdCudaExecutor;
  readonly #d: DeviceBuffer;
  #workspace: DeviceBuffer | undefined;
  readonly #owned: { dispose(): void }[];

  private constructor(
    problem: CheckedFmhaBwdProblem,
    launcher: FmhaBwdLauncher<Stream | undefined>,
    kernels: FmhaBwdKernels,
    executor: FmhaBwdCudaExecutor,
    device: Device,
    d: DeviceBuffer,
    workspace: DeviceBuffer | undefined,
    owned: { dispose(): void }[],
  ) {
    this.problem = problem;
    this.launcher = launcher;
    this.triple = launcher.triple!;
    this.kernels = kernels;
    this.#executor = executor;
    this.device = device;
    this.#d = d;
    this.#workspace = workspace;
    this.#owned = owned;
  }

  /** Checks, selects, compiles, allocates and prepares (see the class comment). */
  static async create(problem: FmhaBwdProblem | CheckedFmhaBwdProblem, options: FmhaBwdRunnerOptions): Promise<FmhaBwdRunner> {
    const p = 'rowsQ' in problem ? problem : checkFmhaBwdProblem(problem);
    const layout = fmhaBwdLayoutProblems(p);
    if (layout.length > 0) throw new ArgumentError('problem', `the backward kernels cannot take this layout: ${layout.join('; ')}`);
    const { device } = options;
    const executorRef: { current?: FmhaBwdCudaExecutor } = {};
    const proxy: FmhaBwdExecutor<Stream | undefined> = {
      copyToDevice: (dst, bytes, stream) => executorRef.current!.copyToDevice(dst, bytes, stream),
      fillZero: (dst, n, stream) => executorRef.current!.fillZero(dst, n, stream),
      launch: (l, stream) => executorRef.current!.launch(l, stream),
    };
    const { launcher, kernels: set } = dispatchFmhaBwd(p, {
      ...(options.triples ? { triples: options.triples } : {}),
      executor: proxy,
      smCount: device.smCount,
      ...(options.warn ? { warn: options.warn } : {}),
    });
    // A caller's workspace is checked before anything is compiled.
    if (options.workspace !== undefined && launcher.workspaceSize.total > 0)
      checkedAddress('options.workspace', options.workspace, launcher.workspaceSize.total, 16);
    const owned: { dispose(): void }[] = [];
    const build = async <I extends FmhaBwdAnyInstance>(instance: I): Promise<FmhaBwdKernel<I>> => {
      if (options.buildKernel) return options.buildKernel(instance);
      const k = await FmhaBwdKernel.build(instance, options);
      owned.push(k);
      return k;
    };
    const kernels: FmhaBwdKernels = {
      dotDoO: await build(set.dotDoO),
      dqDkDv: await build(set.dqDkDv),
      convertDq: set.convertDq === null ? null : await build(set.convertDq),
    };
    const executor = new FmhaBwdCudaExecutor(kernels, options.encode ?? ((m) => encodeTensorMapTiled(device, m)));
    executorRef.current = executor;
    const d = device.alloc(Math.max(16, fmhaBwdOperandElements(p).lse * 4));
    owned.push(d);
    let workspace: DeviceBuffer | undefined = options.workspace;
    const total = launcher.workspaceSize.total;
    if (workspace === undefined && total > 0) {
      workspace = device.alloc(total);
      owned.push(workspace);
    }
    const runner = new FmhaBwdRunner(p, launcher, kernels, executor, device, d, workspace, owned);
    if (workspace !== undefined && total > 0) runner.prepareWorkspace(workspace);
    return runner;
  }

  /** Host (metadata) + device (dq_acc) bytes of the workspace: what a caller's workspace must hold. */
  get workspaceSize(): FmhaBwdWorkspaceSize {
    return this.launcher.workspaceSize;
  }

  /** The workspace layout (nsplits, offsets, dq_acc; `describeFmhaBwdWorkspace` prints it). */
  get workspaceLayout(): FmhaBwdWorkspace {
    return this.launcher.workspace!;
  }

  /** The compiled instances in launch order. */
  get instances(): readonly FmhaBwdAnyInstance[] {
    const k = this.kernels;
    return k.convertDq === null ? [k.dotDoO.instance, k.dqDkDv.instance] : [k.dotDoO.instance, k.dqDkDv.instance, k.convertDq.instance];
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

  /**
   * The launcher's args for `buffers` (the runner's D buffer and workspace filled in). Throws one
   * `ArgumentError` naming every missing, short or misaligned buffer and a `scoreModifier` that
   * does not match the problem's modifier or breaks its rules (the first one's name as `argument`);
   * then one naming every output (dQ, dK, dV) that overlaps an input or another output.
   */
  args(buffers: FmhaBwdRunnerBuffers): FmhaBwdArgs {
    const p = this.problem;
    const e = getDType(p.dtype).bytes;
    const elems = fmhaBwdOperandElements(p);
    const problems = new ArgumentProblems(ArgumentError);
    const range = (name: string, r: FmhaBwdDeviceRange | undefined, bytes: number, align: number): bigint =>
      problems.check(() => checkedAddress(name, r, bytes, align)) ?? 0n;
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
    const tensor = (name: FmhaBwdTensor) => ({ ptr: range(name, buffers[name], elems[name] * e, align[name]), strides: p.strides[name] });
    const t = Object.fromEntries(FMHA_BWD_TENSORS.map((n) => [n, tensor(n)])) as Record<FmhaBwdTensor, ReturnType<typeof tensor>>;
    const group = p.mode === 'group';
    const ws = this.#workspace;
    const lse = range('lse', buffers.lse, elems.lse * 4, 4);
    const starts = group
      ? {
          seqstartQ: range('seqstartQ', buffers.seqstartQ, 4 * (p.batch + 1), 4),
          seqstartK: range('seqstartK', buffers.seqstartK, 4 * (p.batch + 1), 4),
        }
      : {};
    problems.check(() => this.#checkScoreModifier(buffers.scoreModifier));
    problems.throwIfAny();
    reportOutputOverlaps(problems, [
      ...FMHA_BWD_TENSORS.map((n) => ({ name: n, ptr: t[n].ptr, bytes: elems[n] * e })),
      { name: 'lse', ptr: lse, bytes: elems.lse * 4 },
    ]);
    problems.throwIfAny();
    return {
      ...t,
      lse: { ptr: lse, strides: p.lseStrides },
      d: { ptr: this.#d.ptr, strides: p.lseStrides },
      ...starts,
      scale: p.scale,
      workspace: this.workspaceSize.total > 0 && ws !== undefined ? ws.ptr : 0n,
      ...(buffers.scoreModifier === undefined ? {} : { scoreModifier: buffers.scoreModifier }),
    };
  }

  /** `spec` is of the problem's score modifier (none without one) and its values pass the dq_dk_dv kernel's rules. */
  #checkScoreModifier(spec: FmhaScoreModifierSpec | undefined): void {
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

  /** Validates `buffers` and the launch arguments once; `launch` enqueues the three kernels on `buffers.stream`. */
  prepare(buffers: FmhaBwdRunnerBuffers): { readonly args: FmhaBwdArgs; launch(): void } {
    const args = this.args(buffers);
    const stream = buffers.stream;
    const t = this.launcher.traits;
    // Pack every stage once up front: bad arguments fail here, before anything is enqueued.
    packFmhaBwdDotDoO(this.kernels.dotDoO.instance, t, args);
    if (this.kernels.convertDq) packFmhaBwdConvertDq(this.kernels.convertDq.instance, t, args);
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
