// The launch side of a sparse attention instance: the dense forward's TMA maps and shared
// parameters (from @tilekit/fmha and @tilekit/fmha-launch) plus the block map (LUT or one-hot), the PV-skip
// mode and thresholds — all validated before anything reaches the GPU.
import type { PackedArguments } from '@tilekit/codegen';
import { FMHA_PV_SKIP_MODES, type CheckedFmhaFwdProblem } from '@tilekit/fmha';
import {
  checkFmhaFwdInputs,
  checkFmhaFwdOutputs,
  checkFmhaFwdSequenceBuffers,
  fmhaFwdInputBytes,
  fmhaFwdOutputBytes,
  fmhaFwdTensorMaps,
  fmhaFwdTileArgValues,
  fmhaFwdUnsupported,
  FmhaFwdLoadedKernel,
  reportFmhaFwdOverlaps,
  type FmhaFwdBuffers,
  type PreparedFmhaFwdLaunch,
  type TensorMapEncoder,
} from '@tilekit/fmha-launch';
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import {
  checkDeviceRange,
  checkTiledTensorMap,
  type Compiler,
  type Device,
  type DeviceRange,
  type TiledTensorMapOptions,
} from '@tilekit/runtime';
import { SPARGE_PV_MODES, type SpargePvMode } from '../spargeReference.ts';
import { SPARGE_JENGA_MAX_KEY_BLOCKS, type SpargeFwdInstance, type SpargeFwdLaunch, type SpargePipeline } from './spargeFwdInstance.ts';

/** PV-skip granularity: `warp` the SpargeAttn paper's per-warp vote (§3.4, Algorithm 1), `block` upstream's shipped per-CTA vote. */
export type SpargePvModeName = SpargePvMode;

/** A dense forward launch problem plus the block map's grid and the sparse choices. */
export interface SpargeFwdLaunchProblem extends CheckedFmhaFwdProblem {
  readonly pipeline: SpargePipeline;
  readonly pvMode: SpargePvModeName;
  /** The block map's rows (query blocks) and columns (key blocks) per (batch, head). */
  readonly qBlocks: number;
  readonly kBlocks: number;
}

/** Device memory of one launch: the dense forward's plus the block map and the PV-skip thresholds. */
export interface SpargeFwdBuffers extends FmhaFwdBuffers {
  /** vsa: the delta LUT (int32 [b][h][qBlocks][kBlocks]) and valid counts (int32 [b][h][qBlocks]). */
  readonly lut?: DeviceRange;
  readonly validBlockNum?: DeviceRange;
  /** jenga: the one-hot block map (uint8 [b][h][qBlocks][kBlocks]). */
  readonly blockMap?: DeviceRange;
  /** float32 [nheadQ]: pv_threshold per head (log2 units; +∞ never skips). */
  readonly pvThreshold: DeviceRange;
  /** Optional uint64 [2]: the launch adds its computed and skipped P·V tiles (per warpgroup) here. */
  readonly pvStats?: DeviceRange;
  /**
   * int8 instances: Q and K quantized per block (the pooling kernel's q8 [batches][h][rowsQ][d] and
   * k8 [batches][hk][rowsK][d], packed bhsd) and their scales (fp32 [b][h][qBlocks], [b][hk][kBlocks]).
   */
  readonly q8?: DeviceRange;
  readonly k8?: DeviceRange;
  readonly qScale?: DeviceRange;
  readonly kScale?: DeviceRange;
}

/** A validated launch. */
export interface PreparedSpargeFwdLaunch {
  readonly launch: SpargeFwdLaunch;
  readonly args: PackedArguments;
  readonly maps: PreparedFmhaFwdLaunch['maps'];
}

/** The longest query and key sequences of a problem (group mode: over its batches). */
export function spargeMaxSeqlens(p: CheckedFmhaFwdProblem): { readonly maxQ: number; readonly maxK: number } {
  if (p.mode === 'batch') return { maxQ: p.seqlenQ, maxK: p.seqlenK };
  let maxQ = 0;
  let maxK = 0;
  for (let b = 0; b < p.batch; b++) {
    maxQ = Math.max(maxQ, p.seqstartQ[b + 1]! - p.seqstartQ[b]!);
    maxK = Math.max(maxK, p.seqlensK[b]!);
  }
  return { maxQ, maxK };
}

/** Why `instance` cannot run `p` (one line per broken predicate); empty when it can. */
export function spargeFwdUnsupported(instance: SpargeFwdInstance, p: SpargeFwdLaunchProblem): string[] {
  const out = fmhaFwdUnsupported({ policy: { ...instance.policy, splitKv: false } }, p);
  if (p.pipeline !== instance.policy.pipeline) out.push(`pipeline ${p.pipeline}: this kernel is ${instance.policy.pipeline}`);
  if (p.mask.kind === 'window' && !(p.mask.left < 0 && p.mask.right === 0 && p.mask.alignment === 'topLeft'))
    out.push('a window mask other than top-left causal: the block map is causal or not at all');
  if (!SPARGE_PV_MODES.includes(p.pvMode)) out.push(`pvMode ${String(p.pvMode)}: must be one of ${SPARGE_PV_MODES.join(', ')}`);
  if (p.pvMode !== 'none' && instance.policy.pvGate === undefined) out.push(`pvMode ${p.pvMode}: this kernel has no PV-skip vote`);
  if (p.pipeline === 'jenga' && p.kBlocks > SPARGE_JENGA_MAX_KEY_BLOCKS)
    out.push(`${p.kBlocks} key blocks: jenga lists at most ${SPARGE_JENGA_MAX_KEY_BLOCKS} on chip (use vsa)`);
  return out;
}

/** A device buffer's address after its size and alignment checks (undefined, reported to `problems`, when broken). */
function checkedPtr(
  problems: ArgumentProblems,
  name: string,
  range: DeviceRange | undefined,
  bytes: number,
  align = 1,
  why = '',
): bigint | undefined {
  return problems.check(() => {
    const r = checkDeviceRange(name, range, bytes);
    if (r.ptr % BigInt(align) !== 0n)
      throw new ArgumentError(name, `address must be aligned to ${align} bytes${why}`, `0x${r.ptr.toString(16)}`);
    return r.ptr;
  });
}

/** Bytes and alignment of the block-map, PV-skip and int8 buffers the instance reads (absent: it reads none). */
function spargeOnlyBytes(
  instance: SpargeFwdInstance,
  p: SpargeFwdLaunchProblem,
): Partial<Record<SpargeOnlyBuffer, { readonly bytes: number; readonly align: number }>> {
  const batches = p.mode === 'group' ? 1 : p.batch;
  const rows = p.batch * p.nheadQ * p.qBlocks;
  const cells = rows * p.kBlocks;
  const int8 = instance.policy.qkOperand?.tag === 'int8';
  return {
    ...(p.pipeline === 'vsa' ? { lut: { bytes: 4 * cells, align: 4 }, validBlockNum: { bytes: 4 * rows, align: 4 } } : {}),
    ...(p.pipeline === 'jenga' ? { blockMap: { bytes: cells, align: 1 } } : {}),
    pvThreshold: { bytes: 4 * p.nheadQ, align: 4 },
    pvStats: { bytes: 16, align: 8 },
    ...(int8
      ? {
          q8: { bytes: batches * p.nheadQ * p.rowsQ * p.hdimQ, align: 16 },
          k8: { bytes: batches * p.nheadK * p.rowsK * p.hdimQ, align: 16 },
          qScale: { bytes: 4 * rows, align: 4 },
          kScale: { bytes: 4 * p.batch * p.nheadK * p.kBlocks, align: 4 },
        }
      : {}),
  };
}

/** The buffers only the sparse kernels read (and `pvStats`, which they add to). */
type SpargeOnlyBuffer = 'lut' | 'validBlockNum' | 'blockMap' | 'pvThreshold' | 'pvStats' | 'q8' | 'k8' | 'qScale' | 'kScale';

/**
 * The block-map, PV-skip and int8 buffers the instance reads, each at least its size and aligned to
 * its element (0 where it reads none; `pvStats` optional), every problem reported to `problems`.
 */
function spargeOnlyBuffers(problems: ArgumentProblems, instance: SpargeFwdInstance, p: SpargeFwdLaunchProblem, buffers: SpargeFwdBuffers) {
  const sizes = spargeOnlyBytes(instance, p);
  const ptr = (name: SpargeOnlyBuffer): bigint | undefined => {
    const s = sizes[name];
    if (s === undefined || (name === 'pvStats' && buffers.pvStats === undefined)) return 0n;
    return checkedPtr(problems, name, buffers[name], s.bytes, s.align, name === 'q8' || name === 'k8' ? ' (TMA)' : '');
  };
  return {
    lut: ptr('lut'),
    valid: ptr('validBlockNum'),
    blockMap: ptr('blockMap'),
    pvThreshold: ptr('pvThreshold'),
    pvStats: ptr('pvStats'),
    q8: ptr('q8'),
    k8: ptr('k8'),
    qScale: ptr('qScale'),
    kScale: ptr('kScale'),
  };
}

/**
 * Reports to `problems` O, LSE or `pvStats` overlapping a buffer the launch reads (Q, K, V, the
 * block map, thresholds, int8 copies) or each other: other blocks read those while one writes.
 */
function reportSpargeOverlaps(
  problems: ArgumentProblems,
  instance: SpargeFwdInstance,
  p: SpargeFwdLaunchProblem,
  buffers: SpargeFwdBuffers,
): void {
  const sizes = spargeOnlyBytes(instance, p);
  const extent = (name: SpargeOnlyBuffer) => ({ name, range: buffers[name], bytes: sizes[name]?.bytes ?? 0 });
  const read = fmhaFwdInputBytes(p);
  const written = fmhaFwdOutputBytes(p);
  const inputs = [
    ...(['q', 'k', 'v'] as const).map((name) => ({ name, range: buffers[name], bytes: read[name] })),
    ...(['lut', 'validBlockNum', 'blockMap', 'pvThreshold', 'q8', 'k8', 'qScale', 'kScale'] as const).map(extent),
  ];
  reportFmhaFwdOverlaps(
    problems,
    [
      { name: 'o', range: buffers.o, bytes: written.o },
      { name: 'lse', range: p.lse ? buffers.lse : undefined, bytes: written.lse },
      extent('pvStats'),
    ],
    inputs,
  );
}

/**
 * Validates a launch of `instance` on `p` with `buffers` and packs it. Throws one `ArgumentError`
 * naming every problem found (the first one's name as `argument`): `problem` (the instance's
 * predicates, listed), `qBlocks`/`kBlocks` (not the grid the instance's tiles give the problem) or
 * a buffer (`q`, `lut`, `blockMap`, `pvThreshold`, …: missing, too small or misaligned; then `o`,
 * `lse` or `pvStats` overlapping a buffer the launch reads, or each other).
 */
export function prepareSpargeFwdLaunch(
  instance: SpargeFwdInstance,
  p: SpargeFwdLaunchProblem,
  buffers: SpargeFwdBuffers,
  encode: TensorMapEncoder,
): PreparedSpargeFwdLaunch {
  const problems = new ArgumentProblems(ArgumentError);
  const reasons = spargeFwdUnsupported(instance, p);
  if (reasons.length > 0) problems.report('problem', `${instance.name} cannot run it: ${reasons.join('; ')}`);
  const { maxQ, maxK } = spargeMaxSeqlens(p);
  const wantQ = Math.max(1, Math.ceil(maxQ / instance.blockQ));
  const wantK = Math.max(1, Math.ceil(maxK / instance.blockK));
  if (p.qBlocks !== wantQ)
    problems.report(
      'qBlocks',
      `must be ⌈max seqlenQ / ${instance.blockQ}⌉ = ${wantQ} (the block map's rows follow the kernel's query tile)`,
      p.qBlocks,
    );
  if (p.kBlocks !== wantK)
    problems.report(
      'kBlocks',
      `must be ⌈max seqlenK / ${instance.blockK}⌉ = ${wantK} (the block map's columns follow the kernel's key tile)`,
      p.kBlocks,
    );
  const batches = p.mode === 'group' ? 1 : p.batch;
  const inputs = problems.check(() => checkFmhaFwdInputs(p, buffers, 'TMA'));
  const outputs = problems.check(() => checkFmhaFwdOutputs(p, buffers));
  problems.check(() => checkFmhaFwdSequenceBuffers(p, buffers));
  const extra = spargeOnlyBuffers(problems, instance, p, buffers);
  if (problems.isEmpty) reportSpargeOverlaps(problems, instance, p, buffers);
  problems.throwIfAny();
  const { q, k, v } = inputs!;
  const { o, lse } = outputs!;
  const { lut, valid, blockMap, pvThreshold, pvStats, q8, k8, qScale, kScale } = extra as { [K in keyof typeof extra]: bigint };
  let maps = fmhaFwdTensorMaps(instance, p, q.ptr, k.ptr, v.ptr);
  if (instance.policy.qkOperand?.tag === 'int8') {
    const boxes = instance.int8Boxes;
    const int8Map = (address: bigint, heads: number, rowCount: number, box: readonly number[]): TiledTensorMapOptions => ({
      dtype: 'uint8',
      swizzle: boxes.swizzle,
      oobFill: 'zero',
      l2Promotion: '128B',
      address,
      // A tensor without rows (every sequence empty) gets a one-row placeholder: no tile is loaded from it.
      globalDims: [p.hdimQ, Math.max(rowCount, 1), heads, batches],
      globalStrides: [
        p.hdimQ,
        heads === 1 ? p.hdimQ : Math.max(rowCount, 1) * p.hdimQ,
        batches === 1 ? p.hdimQ : heads * Math.max(rowCount, 1) * p.hdimQ,
      ],
      boxDims: [...box],
    });
    maps = { ...maps, q: int8Map(q8, p.nheadQ, p.rowsQ, boxes.q), k: int8Map(k8, p.nheadK, p.rowsK, boxes.k) };
  }
  checkTiledTensorMap(maps.q);
  checkTiledTensorMap(maps.k);
  checkTiledTensorMap(maps.v);
  const args = instance.signature.pack({
    q_map: encode(maps.q),
    k_map: encode(maps.k),
    v_map: encode(maps.v),
    ...fmhaFwdTileArgValues(p, buffers, { o: o.ptr, oStrides: p.oStrides, lse: lse?.ptr ?? 0n, lseStrides: p.lseStrides }),
    q_blocks: p.qBlocks,
    k_blocks: p.kBlocks,
    lut,
    valid_block_num: valid,
    block_map: blockMap,
    pv_mode: FMHA_PV_SKIP_MODES[p.pvMode],
    pv_threshold: pvThreshold,
    pv_stats: pvStats,
    q_scale: qScale,
    k_scale: kScale,
  });
  return { launch: instance.launch(p.batch, p.nheadQ, p.qBlocks), args, maps };
}

/** One sparse attention instance compiled and loaded on a device. */
export class SpargeFwdKernel extends FmhaFwdLoadedKernel<SpargeFwdInstance> {
  /** Compiles and loads `instance` and opts in to its dynamic shared memory. */
  static async build(
    instance: SpargeFwdInstance,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<SpargeFwdKernel> {
    return new SpargeFwdKernel(instance, await FmhaFwdLoadedKernel.loadOn(instance, options), options.device);
  }

  /** Validates and encodes once; `launch` only enqueues. */
  prepare(
    p: SpargeFwdLaunchProblem,
    buffers: SpargeFwdBuffers,
    encode: TensorMapEncoder,
  ): { readonly prepared: PreparedSpargeFwdLaunch; launch(): void } {
    return this.enqueuer(prepareSpargeFwdLaunch(this.instance, p, buffers, encode), buffers.stream);
  }
}
