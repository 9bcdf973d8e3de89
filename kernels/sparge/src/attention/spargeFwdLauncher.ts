// The launch side of a sparse attention instance: the dense forward's TMA maps and shared
// parameters (from @tilekit/kernel-fmha-fwd) plus the block map (LUT or one-hot), the PV-skip
// mode and thresholds — all validated before anything reaches the GPU.
import type { PackedArguments } from '@tilekit/codegen';
import { FMHA_PV_SKIP_MODES } from '@tilekit/fmha';
import { checkFmhaFwdInputs, checkFmhaFwdOutputs, fmhaFwdTensorMaps, fmhaFwdTileArgValues, fmhaFwdUnsupported, FmhaFwdLoadedKernel, type CheckedFmhaFwdProblem, type FmhaFwdBuffers, type PreparedFmhaFwdLaunch, type TensorMapEncoder } from '@tilekit/kernel-fmha-fwd';
import { ArgumentError } from '@tilekit/numeric';
import { checkDeviceRange, checkTiledTensorMap, type Compiler, type Device, type DeviceRange, type TiledTensorMapOptions } from '@tilekit/runtime';
import { SPARGE_PV_MODES, type SpargePvMode } from '../spargeReference.ts';
import { SPARGE_JENGA_MAX_KEY_BLOCKS, type SpargeFwdInstance, type SpargeFwdLaunch, type SpargePipeline } from './spargeFwdInstance.ts';

/** PV-skip granularity (digest §2.2): `warp` the paper's per-warp vote, `block` upstream's shipped per-CTA vote. */
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
  if (p.mask.kind === 'window' && !(p.mask.left < 0 && p.mask.right === 0 && p.mask.alignment === 'topLeft')) out.push('a window mask other than top-left causal: the block map is causal or not at all');
  if (!SPARGE_PV_MODES.includes(p.pvMode)) out.push(`pvMode ${String(p.pvMode)}: must be one of ${SPARGE_PV_MODES.join(', ')}`);
  if (p.pvMode !== 'none' && !instance.policy.pvSkip) out.push(`pvMode ${p.pvMode}: this kernel has no PV-skip vote`);
  if (p.pipeline === 'jenga' && p.kBlocks > SPARGE_JENGA_MAX_KEY_BLOCKS) out.push(`${p.kBlocks} key blocks: jenga lists at most ${SPARGE_JENGA_MAX_KEY_BLOCKS} on chip (use vsa)`);
  return out;
}

/**
 * Validates a launch of `instance` on `p` with `buffers` and packs it. Throws `ArgumentError`
 * naming `problem` (the instance's predicates, listed), a buffer (`q`, `lut`, `blockMap`,
 * `pvThreshold`, …: missing, too small or misaligned) or `qBlocks`/`kBlocks` (not the grid the
 * instance's tiles give the problem).
 */
export function prepareSpargeFwdLaunch(instance: SpargeFwdInstance, p: SpargeFwdLaunchProblem, buffers: SpargeFwdBuffers, encode: TensorMapEncoder): PreparedSpargeFwdLaunch {
  const reasons = spargeFwdUnsupported(instance, p);
  if (reasons.length > 0) throw new ArgumentError('problem', `${instance.name} cannot run it: ${reasons.join('; ')}`);
  const { maxQ, maxK } = spargeMaxSeqlens(p);
  const wantQ = Math.max(1, Math.ceil(maxQ / instance.blockQ));
  const wantK = Math.max(1, Math.ceil(maxK / instance.blockK));
  if (p.qBlocks !== wantQ) throw new ArgumentError('qBlocks', `must be ⌈max seqlenQ / ${instance.blockQ}⌉ = ${wantQ} (the block map's rows follow the kernel's query tile)`, p.qBlocks);
  if (p.kBlocks !== wantK) throw new ArgumentError('kBlocks', `must be ⌈max seqlenK / ${instance.blockK}⌉ = ${wantK} (the block map's columns follow the kernel's key tile)`, p.kBlocks);
  const batches = p.mode === 'group' ? 1 : p.batch;
  const { q, k, v } = checkFmhaFwdInputs(p, buffers, 'TMA');
  const { o, lse } = checkFmhaFwdOutputs(p, buffers);
  const rows = p.batch * p.nheadQ * p.qBlocks;
  const cells = rows * p.kBlocks;
  const lut = p.pipeline === 'vsa' ? checkDeviceRange('lut', buffers.lut, 4 * cells).ptr : 0n;
  const valid = p.pipeline === 'vsa' ? checkDeviceRange('validBlockNum', buffers.validBlockNum, 4 * rows).ptr : 0n;
  const blockMap = p.pipeline === 'jenga' ? checkDeviceRange('blockMap', buffers.blockMap, cells).ptr : 0n;
  const pvThreshold = checkDeviceRange('pvThreshold', buffers.pvThreshold, 4 * p.nheadQ).ptr;
  const pvStats = buffers.pvStats === undefined ? 0n : checkDeviceRange('pvStats', buffers.pvStats, 16).ptr;
  if (pvStats % 8n !== 0n) throw new ArgumentError('pvStats', 'address must be aligned to 8 bytes', `0x${pvStats.toString(16)}`);
  const int8 = instance.policy.qkDtype === 'int8';
  let qScale = 0n;
  let kScale = 0n;
  let maps = fmhaFwdTensorMaps(instance, p, q.ptr, k.ptr, v.ptr);
  if (int8) {
    const q8 = checkDeviceRange('q8', buffers.q8, batches * p.nheadQ * p.rowsQ * p.hdimQ);
    const k8 = checkDeviceRange('k8', buffers.k8, batches * p.nheadK * p.rowsK * p.hdimQ);
    for (const [name, r] of [['q8', q8], ['k8', k8]] as const) if (r.ptr % 16n !== 0n) throw new ArgumentError(name, 'address must be aligned to 16 bytes (TMA)', `0x${r.ptr.toString(16)}`);
    qScale = checkDeviceRange('qScale', buffers.qScale, 4 * rows).ptr;
    kScale = checkDeviceRange('kScale', buffers.kScale, 4 * p.batch * p.nheadK * p.kBlocks).ptr;
    const boxes = instance.int8Boxes;
    const int8Map = (address: bigint, heads: number, rowCount: number, box: readonly number[]): TiledTensorMapOptions => ({
      dtype: 'uint8',
      swizzle: boxes.swizzle,
      oobFill: 'zero',
      l2Promotion: '128B',
      address,
      globalDims: [p.hdimQ, Math.max(rowCount, 1), heads, batches],
      globalStrides: [p.hdimQ, (heads === 1 ? p.hdimQ : rowCount * p.hdimQ), batches === 1 ? p.hdimQ : heads * rowCount * p.hdimQ],
      boxDims: [...box],
    });
    maps = { ...maps, q: int8Map(q8.ptr, p.nheadQ, p.rowsQ, boxes.q), k: int8Map(k8.ptr, p.nheadK, p.rowsK, boxes.k) };
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
  static async build(instance: SpargeFwdInstance, options: { readonly device: Device; readonly compiler: Compiler }): Promise<SpargeFwdKernel> {
    return new SpargeFwdKernel(instance, await FmhaFwdLoadedKernel.loadOn(instance, options), options.device);
  }

  /** Validates and encodes once; `launch` only enqueues. */
  prepare(p: SpargeFwdLaunchProblem, buffers: SpargeFwdBuffers, encode: TensorMapEncoder): { readonly prepared: PreparedSpargeFwdLaunch; launch(): void } {
    return this.enqueuer(prepareSpargeFwdLaunch(this.instance, p, buffers, encode), buffers.stream);
  }
}
