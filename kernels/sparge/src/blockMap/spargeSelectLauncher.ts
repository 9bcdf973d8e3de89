// The host side of the selection kernel: checks the problem and the device buffers (naming each),
// picks the catalog instance, packs the arguments and launches on a stream.
import type { PackedArguments } from '@tilekit/codegen';
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import {
  checkDeviceRange,
  loadInstance,
  type CompileResult,
  type Compiler,
  type CudaModule,
  type Device,
  type DeviceRange,
  type Kernel,
  type Stream,
} from '@tilekit/runtime';
import { SpargeArgumentError } from '../spargeArgumentError.ts';
import { SPARGE_BLOCK_SIZES, type SpargeSelection } from '../spargeHyperparameters.ts';
import { SPARGE_HEAD_DIMS } from '../spargeShape.ts';
import { spargePooledBytes } from './spargePoolProblem.ts';
import { SPARGE_SELECT_COMPILE_FLAGS, spargeSelectInstanceFor } from './spargeSelectCatalog.ts';
import { spargeSelectSharedBytes, type SpargeSelectInstance } from './spargeSelectInstance.ts';
import { spargeSelectGrid, type SpargeSelectGrid, type SpargeSelectProblem } from './spargeSelectReference.ts';
import { SPARGE_SELECT_MAX_KEY_BLOCKS, spargeSelectSortLength } from './spargeSelectSortNetwork.ts';

/** The selection problem as the launcher sees it: the shape and flags (the per-head values are device arrays). */
export type SpargeSelectConfig = Omit<SpargeSelectProblem, 'selectionValue' | 'simthreshd1'>;

/** A checked config with its padded grid. */
export interface CheckedSpargeSelectConfig extends SpargeSelectConfig {
  readonly grid: SpargeSelectGrid;
  readonly groupMode: boolean;
}

/**
 * The device buffers of one selection launch (fp32 inputs from stage A, float64 per-head arrays,
 * outputs over the padded grid [b][h][qBlocksMax][kBlocksMax]):
 * - pooledQ f32 [b][h][qBlocksMax][d], simQ f32 [b][h][qBlocksMax];
 * - pooledK f32 [b][hk][kBlocksMax][d], simK f32 [b][hk][kBlocksMax];
 * - simthreshd1, selectionValue f64 [nhead] (topk ratio or cdf τ per head);
 * - blockMap u8, lut i32 [b][h][qBlocksMax][kBlocksMax], validBlockNum i32 [b][h][qBlocksMax];
 * - visited i32 [b][h] (optional; the launcher zeroes it on the stream first);
 * - seqstartQ/seqstartK i32 [batch + 1] in group mode.
 */
export interface SpargeSelectBuffers {
  readonly pooledQ: DeviceRange;
  readonly simQ: DeviceRange;
  readonly pooledK: DeviceRange;
  readonly simK: DeviceRange;
  readonly simthreshd1: DeviceRange;
  readonly selectionValue: DeviceRange;
  readonly blockMap: DeviceRange;
  readonly lut: DeviceRange;
  readonly validBlockNum: DeviceRange;
  readonly visited?: DeviceRange;
  readonly seqstartQ?: DeviceRange;
  readonly seqstartK?: DeviceRange;
}

/** One packed selection launch. */
export interface SpargeSelectPackedLaunch {
  readonly instance: SpargeSelectInstance;
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
  readonly args: PackedArguments;
}

function integer(name: string, v: unknown, min: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new SpargeArgumentError(name, `must be an integer ≥ ${min}`, v);
  return v;
}

function flag(name: string, v: unknown): boolean {
  if (typeof v !== 'boolean') throw new SpargeArgumentError(name, 'must be a boolean', v);
  return v;
}

/** batch + 1 non-decreasing int32 offsets (any count when `batch` is undefined: the caller found it invalid); every broken entry reported. */
function starts(name: string, v: unknown, batch: number | undefined): readonly number[] {
  if (!Array.isArray(v) || (batch !== undefined && v.length !== batch + 1)) {
    throw new SpargeArgumentError(
      name,
      batch === undefined ? 'must be an array of batch + 1 offsets' : `must be an array of batch + 1 = ${batch + 1} offsets`,
      Array.isArray(v) ? v.length : v,
    );
  }
  const problems = new ArgumentProblems(SpargeArgumentError);
  v.forEach((x: unknown, b) => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0 || x > 2 ** 31 - 1)
      return problems.report(`${name}[${b}]`, 'must be an int32 ≥ 0', x);
    const before = v[b - 1] as unknown;
    if (b > 0 && typeof before === 'number' && x < before)
      problems.report(`${name}[${b}]`, `must be ≥ ${name}[${b - 1}] (sequences do not overlap backwards)`, x);
  });
  problems.throwIfAny();
  return v as readonly number[];
}

/** Batch mode (seqlenQ, seqlenK ≥ 0) or group mode (seqstartQ, seqstartK), never both; every independent problem reported to `v`. */
function checkSequences(v: ArgumentProblems, config: SpargeSelectConfig, batch: number | undefined, group: boolean): void {
  if (!group) {
    v.check(() => integer('seqlenQ', config.seqlenQ, 0));
    v.check(() => integer('seqlenK', config.seqlenK, 0));
    return;
  }
  if (config.seqlenQ !== undefined || config.seqlenK !== undefined)
    v.report('seqlenQ/seqstartQ', 'give either seqlenQ and seqlenK (batch mode) or seqstartQ and seqstartK (group mode)', 'both');
  v.check(() => starts('seqstartQ', config.seqstartQ, batch));
  v.check(() => starts('seqstartK', config.seqstartK, batch));
}

/**
 * Checks a selection config: batch, nhead ≥ 1, nheadK divides nhead, headDim ∈ {64, 128}, blockQ
 * and blockK in SPARGE_BLOCK_SIZES, either seqlenQ and seqlenK (batch mode, ≥ 0) or seqstartQ and
 * seqstartK (group mode, batch + 1 non-decreasing int32 offsets) but not both, selection topk/cdf,
 * boolean flags, and at most SPARGE_SELECT_MAX_KEY_BLOCKS key blocks in the longest sequence.
 * @throws SpargeArgumentError naming the field and the rule, every problem found in one error (the
 * first one's name as `argument`; the key-block limit once everything else is valid).
 */
export function checkSpargeSelectConfig(config: SpargeSelectConfig): CheckedSpargeSelectConfig {
  if (typeof config !== 'object' || config === null) throw new SpargeArgumentError('config', 'must be an object', config);
  const v = new ArgumentProblems(SpargeArgumentError);
  const batch = v.check(() => integer('batch', config.batch, 1));
  const nhead = v.check(() => integer('nhead', config.nhead, 1));
  const nheadK = v.check(() => integer('nheadK', config.nheadK, 1));
  if (nhead !== undefined && nheadK !== undefined && nhead % nheadK !== 0) v.report('nheadK', `must divide nhead = ${nhead}`, nheadK);
  if (!(SPARGE_HEAD_DIMS as readonly number[]).includes(config.headDim))
    v.report('headDim', `must be one of ${SPARGE_HEAD_DIMS.join(', ')}`, config.headDim);
  for (const key of ['blockQ', 'blockK'] as const) {
    if (!(SPARGE_BLOCK_SIZES as readonly number[]).includes(config[key]))
      v.report(key, `must be one of ${SPARGE_BLOCK_SIZES.join(', ')}`, config[key]);
  }
  const group = config.seqstartQ !== undefined || config.seqstartK !== undefined;
  checkSequences(v, config, batch, group);
  if (config.selection !== 'topk' && config.selection !== 'cdf')
    v.report('selection', 'must be topk or cdf', config.selection as SpargeSelection);
  v.check(() => flag('isCausal', config.isCausal));
  v.check(() => flag('attentionSink', config.attentionSink));
  v.throwIfAny();
  const grid = spargeSelectGrid({ ...config, selectionValue: [], simthreshd1: [] });
  if (grid.kBlocksMax > SPARGE_SELECT_MAX_KEY_BLOCKS) {
    throw new SpargeArgumentError(
      group ? 'seqstartK' : 'seqlenK',
      `gives ${grid.kBlocksMax} key blocks of ${config.blockK}; the selection kernel sorts at most ${SPARGE_SELECT_MAX_KEY_BLOCKS} per row`,
      grid.kBlocksMax,
    );
  }
  return Object.freeze({ ...config, grid, groupMode: group });
}

/** Bytes of each buffer of a checked config (inputs, per-head arrays, outputs). */
export function spargeSelectBufferBytes(
  c: CheckedSpargeSelectConfig,
): Readonly<Record<Exclude<keyof SpargeSelectBuffers, 'seqstartQ' | 'seqstartK'>, number>> {
  const { qBlocksMax: QM, kBlocksMax: KM } = c.grid;
  const rowsQ = c.batch * c.nhead * QM;
  return {
    // The pooling stage's outputs: one size function for both stages (and the allocation).
    ...spargePooledBytes({ batch: c.batch, nhead: c.nhead, nheadK: c.nheadK, headDim: c.headDim, qBlocksMax: QM, kBlocksMax: KM }),
    simthreshd1: c.nhead * 8,
    selectionValue: c.nhead * 8,
    blockMap: rowsQ * KM,
    lut: rowsQ * KM * 4,
    validBlockNum: rowsQ * 4,
    visited: c.batch * c.nhead * 4,
  };
}

/** What the selection kernel writes; it reads every other buffer. */
const SELECT_OUTPUTS = ['blockMap', 'lut', 'validBlockNum', 'visited'] as const;

/**
 * Reports to `v` every output (block map, LUT, valid counts, visited) overlapping another buffer of
 * the launch (rule `must not overlap buffers.<other>`): a block writes its rows while others read
 * the pooled inputs and write theirs. Extents are the bytes the launch touches.
 */
function reportSelectOverlaps(v: ArgumentProblems, buffers: SpargeSelectBuffers, bytes: ReturnType<typeof spargeSelectBufferBytes>): void {
  const size = (key: keyof SpargeSelectBuffers): number => (key === 'seqstartQ' || key === 'seqstartK' ? 0 : bytes[key]);
  const all = (Object.keys(buffers) as (keyof SpargeSelectBuffers)[]).filter((k) => buffers[k] !== undefined && size(k) > 0);
  const meets = (x: keyof SpargeSelectBuffers, y: keyof SpargeSelectBuffers): boolean =>
    buffers[x]!.ptr < buffers[y]!.ptr + BigInt(size(y)) && buffers[y]!.ptr < buffers[x]!.ptr + BigInt(size(x));
  SELECT_OUTPUTS.forEach((out, i) => {
    if (!all.includes(out)) return;
    for (const other of all) {
      const earlierOutput = (SELECT_OUTPUTS as readonly string[]).indexOf(other);
      if (other === out || (earlierOutput >= 0 && earlierOutput > i)) continue;
      if (meets(out, other))
        v.report(`buffers.${out}`, `must not overlap buffers.${other} (the selection kernel reads or writes it while writing ${out})`, {
          [out]: `0x${buffers[out]!.ptr.toString(16)}`,
          [other]: `0x${buffers[other]!.ptr.toString(16)}`,
        });
    }
  });
}

/**
 * Checks the buffers against a checked config (each at least its size, aligned to its element)
 * and packs the launch of the catalog instance for the head dim and key-block count.
 * @throws ArgumentError naming the buffer (`buffers.lut`, …) and the rule, every broken buffer in
 * one error (the first one's name as `argument`); then one naming every output (`buffers.blockMap`,
 * `buffers.lut`, `buffers.validBlockNum`, `buffers.visited`) that overlaps another buffer.
 */
export function packSpargeSelect(c: CheckedSpargeSelectConfig, buffers: SpargeSelectBuffers): SpargeSelectPackedLaunch {
  if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
  const bytes = spargeSelectBufferBytes(c);
  const align = {
    pooledQ: 4,
    simQ: 4,
    pooledK: 4,
    simK: 4,
    simthreshd1: 8,
    selectionValue: 8,
    blockMap: 1,
    lut: 4,
    validBlockNum: 4,
    visited: 4,
  } as const;
  const v = new ArgumentProblems(ArgumentError);
  for (const key of Object.keys(align) as (keyof typeof align)[]) {
    if (key === 'visited' && buffers.visited === undefined) continue;
    v.check(() => checkDeviceRange(`buffers.${key}`, buffers[key], bytes[key], align[key]));
  }
  if (c.groupMode) {
    v.check(() => checkDeviceRange('buffers.seqstartQ', buffers.seqstartQ, (c.batch + 1) * 4, 4));
    v.check(() => checkDeviceRange('buffers.seqstartK', buffers.seqstartK, (c.batch + 1) * 4, 4));
  }
  v.throwIfAny();
  reportSelectOverlaps(v, buffers, bytes);
  v.throwIfAny();
  const instance = spargeSelectInstanceFor(c.headDim, c.grid.kBlocksMax);
  const { qBlocksMax, kBlocksMax } = c.grid;
  const args = instance.signature.pack({
    pooled_q: buffers.pooledQ.ptr,
    sim_q: buffers.simQ.ptr,
    pooled_k: buffers.pooledK.ptr,
    sim_k: buffers.simK.ptr,
    simthreshd1: buffers.simthreshd1.ptr,
    selection_value: buffers.selectionValue.ptr,
    block_map: buffers.blockMap.ptr,
    lut: buffers.lut.ptr,
    valid_block_num: buffers.validBlockNum.ptr,
    visited: buffers.visited?.ptr ?? 0n,
    nhead: c.nhead,
    nhead_ratio: c.nhead / c.nheadK,
    q_blocks_max: qBlocksMax,
    k_blocks_max: kBlocksMax,
    sort_capacity: spargeSelectSortLength(kBlocksMax),
    seqlen_q: c.groupMode ? 0 : c.seqlenQ!,
    seqlen_k: c.groupMode ? 0 : c.seqlenK!,
    seqstart_q: c.groupMode ? buffers.seqstartQ!.ptr : 0n,
    seqstart_k: c.groupMode ? buffers.seqstartK!.ptr : 0n,
    block_q: c.blockQ,
    block_k: c.blockK,
    cdf_mode: c.selection === 'cdf' ? 1 : 0,
    is_causal: c.isCausal ? 1 : 0,
    attention_sink: c.attentionSink ? 1 : 0,
  });
  const l = instance.launch(c.batch, c.nhead, qBlocksMax, kBlocksMax);
  return { instance, grid: l.grid, block: l.block, sharedBytes: l.sharedBytes, args };
}

/** One selection instance compiled and loaded, opted in to the dynamic shared memory its largest launch takes. */
export class SpargeSelectKernel {
  readonly instance: SpargeSelectInstance;
  readonly compiled: CompileResult;
  readonly module: CudaModule;
  readonly kernel: Kernel;

  private constructor(instance: SpargeSelectInstance, compiled: CompileResult, module: CudaModule, kernel: Kernel) {
    this.instance = instance;
    this.compiled = compiled;
    this.module = module;
    this.kernel = kernel;
  }

  /** Compiles (SPARGE_SELECT_COMPILE_FLAGS) and loads `instance` on `device`. */
  static async build(
    instance: SpargeSelectInstance,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<SpargeSelectKernel> {
    const loaded = await loadInstance(instance, { ...options, flags: SPARGE_SELECT_COMPILE_FLAGS });
    const capacity = Math.floor(SPARGE_SELECT_MAX_KEY_BLOCKS / instance.policy.rowsPerCta);
    const most = spargeSelectSharedBytes(instance.policy.rowsPerCta, Math.min(SPARGE_SELECT_MAX_KEY_BLOCKS, capacity));
    if (most > 48 * 1024) loaded.kernel.setMaxDynamicSharedMemory(most);
    return new SpargeSelectKernel(instance, loaded.compiled, loaded.module, loaded.kernel);
  }

  /** Enqueues a packed launch (of this instance) on `stream` (default: the legacy default stream). */
  launch(p: SpargeSelectPackedLaunch, stream?: Stream): void {
    if (p.instance.name !== this.instance.name)
      throw new ArgumentError('launch', `was packed for ${p.instance.name}, this kernel is ${this.instance.name}`, p.instance.name);
    this.kernel.launch({ grid: p.grid, block: p.block, sharedBytes: p.sharedBytes, ...(stream ? { stream } : {}) }, p.args);
  }

  /** Unloads the module. */
  dispose(): void {
    this.module.dispose();
  }
}
