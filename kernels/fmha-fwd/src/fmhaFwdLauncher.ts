// The launch side of an attention-forward instance: TMA maps of Q, K and V, the packed kernel
// arguments and the grid, from a checked problem and device buffers — all validated before
// anything reaches the GPU (ArgumentError naming the argument and the rule).
import type { PackedArguments } from '@tilekit/codegen';
import { attentionTensorSpan, type AttentionTensorStrides, type CheckedAttentionProblem } from '@tilekit/fmha';
import { ArgumentError, ArgumentProblems, getDType } from '@tilekit/numeric';
import {
  checkTiledTensorMap,
  type Device,
  type Stream,
  type TiledTensorMapOptions,
  type Compiler,
  checkDeviceRange,
  type DeviceRange,
} from '@tilekit/runtime';
import { FmhaFwdLoadedKernel } from './fmhaFwdLoadedKernel.ts';
import type { FmhaFwdInstance, FmhaFwdLaunch, FmhaFwdMode, FmhaFwdPolicy } from './fmhaFwdInstance.ts';

export { FMHA_FWD_COMPILE_FLAGS } from './fmhaFwdLoadedKernel.ts';

/** A range of device memory (the runtime's `DeviceRange`, re-exported for this launcher's users). */
export type { DeviceRange } from '@tilekit/runtime';

/**
 * What a launch needs to know of the problem (every default already filled in): shapes, element
 * strides of Q/K/V/O (`AttentionTensorStrides`: batch, head, row; the head dim contiguous), the LSE
 * layout (per batch and head, rows contiguous), the mask and the scale.
 */
export interface FmhaFwdLaunchProblem extends CheckedAttentionProblem {
  readonly dtype: 'fp16' | 'bf16';
  readonly mode: FmhaFwdMode;
  readonly qStrides: AttentionTensorStrides;
  readonly kStrides: AttentionTensorStrides;
  readonly vStrides: AttentionTensorStrides;
  readonly oStrides: AttentionTensorStrides;
  /** Writes LSE (fp32, natural log) at lse[b·lseStrides.batch + h·lseStrides.head + row]; group mode reads the key rows from `seqstartK`. */
  readonly lse: boolean;
  /** Key splits (1: no split-KV). */
  readonly numSplits: number;
}

/** Device memory of one launch. Group mode needs `seqstartQ`/`seqstartK` (int32, batch + 1) and optionally `seqlenK` (int32, batch). */
export interface FmhaFwdBuffers {
  readonly q: DeviceRange;
  readonly k: DeviceRange;
  readonly v: DeviceRange;
  /** O, or with split-KV the fp32 workspace of the partial O (`fmhaFwdWorkspace`). */
  readonly o: DeviceRange;
  /** LSE, or with split-KV the fp32 workspace of the partial LSE. */
  readonly lse?: DeviceRange;
  readonly seqstartQ?: DeviceRange;
  readonly seqstartK?: DeviceRange;
  readonly seqlenK?: DeviceRange;
  readonly stream?: Stream;
}

/** Encodes a tiled tensor map (the driver on a GPU; tests pass a checker). */
export type TensorMapEncoder = (options: TiledTensorMapOptions) => Uint8Array;

/** A validated launch. */
export interface PreparedFmhaFwdLaunch {
  readonly launch: FmhaFwdLaunch;
  readonly args: PackedArguments;
  readonly maps: { readonly q: TiledTensorMapOptions; readonly k: TiledTensorMapOptions; readonly v: TiledTensorMapOptions };
}

/**
 * The TMA maps (dimension 0 innermost): X is [hdim, rows, heads, batches] with byte strides
 * (row, head, batch)·e and the box [64, tile rows, 1, 1] (64 head-dim elements = one 128-byte
 * swizzle row; a head dim that is not a multiple of 64 reads zeros past its end). Group mode has
 * one "batch" holding every sequence's rows. A tensor of 0 rows (every query or every key sequence
 * empty) gets a placeholder map [hdim, 1, 1, 1] with the row stride everywhere: its head and batch
 * strides are 0, which TMA rejects, and the kernels never load from it (a block whose query tile
 * lies past its sequence returns before any load; with no keys it issues no K/V loads).
 */
export function fmhaFwdTensorMaps(
  instance: Pick<FmhaFwdInstance, 'tmaBoxes'>,
  p: FmhaFwdLaunchProblem,
  q: bigint,
  k: bigint,
  v: bigint,
): PreparedFmhaFwdLaunch['maps'] {
  const e = getDType(p.dtype).bytes;
  const dtype = p.dtype === 'fp16' ? 'float16' : 'bfloat16';
  const batches = p.mode === 'group' ? 1 : p.batch;
  const boxes = instance.tmaBoxes;
  const map = (
    address: bigint,
    s: AttentionTensorStrides,
    heads: number,
    rows: number,
    hdim: number,
    box: readonly number[],
  ): TiledTensorMapOptions => ({
    dtype,
    swizzle: '128B',
    oobFill: 'zero',
    l2Promotion: '128B',
    address,
    // 0 rows: a placeholder of one row, one head, one batch (see above).
    globalDims: rows === 0 ? [hdim, 1, 1, 1] : [hdim, rows, heads, batches],
    // A unit dimension's stride is never used: any valid one (the row stride) will do.
    globalStrides:
      rows === 0
        ? [s.row * e, s.row * e, s.row * e]
        : [s.row * e, (heads === 1 ? s.row : s.head) * e, (batches === 1 ? s.row : s.batch) * e],
    boxDims: [...box],
  });
  return {
    q: map(q, p.qStrides, p.nheadQ, p.rowsQ, p.hdimQ, boxes.q),
    k: map(k, p.kStrides, p.nheadK, p.rowsK, p.hdimQ, boxes.kv),
    v: map(v, p.vStrides, p.nheadK, p.rowsK, p.hdimV, boxes.kv),
  };
}

/** Why `instance` cannot run `p` (one line per broken predicate); empty when it can. */
export function fmhaFwdUnsupported(
  instance: { readonly policy: Pick<FmhaFwdPolicy, 'dtype' | 'headDim' | 'headDimV' | 'mask' | 'splitKv'> },
  p: FmhaFwdLaunchProblem,
): string[] {
  const P = instance.policy;
  const out: string[] = [];
  const e = getDType(p.dtype).bytes;
  if (p.dtype !== P.dtype) out.push(`dtype ${p.dtype}: this kernel computes ${P.dtype}`);
  if (p.hdimQ !== P.headDim || p.hdimV !== P.headDimV)
    out.push(`head dims ${p.hdimQ}/${p.hdimV}: this kernel has ${P.headDim}/${P.headDimV}`);
  const masked = p.mask.kind !== 'none';
  if (p.mask.kind === 'generic') out.push('a generic (y, x) mask: this kernel takes window masks (left, right) only');
  else if (masked !== (P.mask === 'window'))
    out.push(masked ? 'a masked problem: this kernel has no mask' : 'no mask: this kernel applies a window mask');
  if (p.numSplits > 1 !== P.splitKv)
    out.push(
      p.numSplits > 1 ? `${p.numSplits} key splits: this kernel does not split` : 'one key split: this kernel writes split partials',
    );
  for (const [name, s] of [
    ['q', p.qStrides],
    ['k', p.kStrides],
    ['v', p.vStrides],
  ] as const) {
    for (const [what, stride] of [
      ['row', s.row],
      ['head', s.head],
      ['batch', s.batch],
    ] as const) {
      if ((stride * e) % 16 !== 0)
        out.push(`${name} ${what} stride · ${e} = ${stride * e} bytes is not a multiple of 16 (TMA global stride)`);
      if (stride * e >= 2 ** 40) out.push(`${name} ${what} stride · ${e} bytes reaches 2^40 (TMA)`);
    }
  }
  if (p.oStrides.row % 2 !== 0) out.push(`o row stride ${p.oStrides.row} is odd (the epilogue stores element pairs)`);
  if (p.oStrides.row > 2 ** 31 - 1) out.push('o row stride exceeds int32');
  return out;
}

/** The elements of the split-KV workspace: partial O [splits][batch][heads][rows][hdimV] and LSE [splits][batch][heads][rows] (fp32). */
export function fmhaFwdWorkspace(p: FmhaFwdLaunchProblem): {
  readonly oElements: number;
  readonly lseElements: number;
  readonly oStrides: AttentionTensorStrides;
  readonly lseStrides: { readonly batch: number; readonly head: number };
  readonly oSplit: number;
  readonly lseSplit: number;
} {
  const batches = p.mode === 'group' ? 1 : p.batch;
  const rows = p.rowsQ;
  const oStrides = { batch: p.nheadQ * rows * p.hdimV, head: rows * p.hdimV, row: p.hdimV };
  const lseStrides = { batch: p.nheadQ * rows, head: rows };
  const oSplit = batches * oStrides.batch;
  const lseSplit = batches * lseStrides.batch;
  return { oElements: p.numSplits * oSplit, lseElements: p.numSplits * lseSplit, oStrides, lseStrides, oSplit, lseSplit };
}

/**
 * The values of the parameters every forward kernel shares (`fmhaFwdTileParams`, same names and
 * order): O and LSE (pointers and strides; batch strides 0 in group mode, where one "batch" holds
 * every sequence's rows), the sequences (group mode: `seqstartQ`/`seqstartK` checked and passed,
 * `seqlenK` when given), GQA, scale·log2 e and the window. Throws ArgumentError for a missing or
 * short seqstart buffer.
 */
export function fmhaFwdTileArgValues(
  p: FmhaFwdLaunchProblem,
  buffers: Pick<FmhaFwdBuffers, 'seqstartQ' | 'seqstartK' | 'seqlenK'>,
  out: {
    readonly o: bigint;
    readonly oStrides: AttentionTensorStrides;
    readonly lse: bigint;
    readonly lseStrides: { readonly batch: number; readonly head: number };
  },
) {
  const group = p.mode === 'group';
  const { seqstartQ, seqstartK, seqlenK } = checkFmhaFwdSequenceBuffers(p, buffers);
  const window = p.mask.kind === 'window' ? p.mask : undefined;
  return {
    o: out.o,
    o_stride_row: out.oStrides.row,
    o_stride_head: out.oStrides.head,
    o_stride_batch: group ? 0 : out.oStrides.batch,
    lse: out.lse,
    lse_stride_head: out.lseStrides.head,
    lse_stride_batch: group ? 0 : out.lseStrides.batch,
    seqlen_q: p.seqlenQ,
    seqlen_k: p.seqlenK,
    seqstart_q: seqstartQ,
    seqstart_k: seqstartK,
    seqlen_k_ptr: seqlenK,
    nhead_ratio: p.nheadQ / p.nheadK,
    scale_log2: p.scale * Math.LOG2E,
    mask_left: window?.left ?? -1,
    mask_right: window?.right ?? -1,
    mask_top_left: window === undefined || window.alignment === 'topLeft' ? 1 : 0,
  };
}

/**
 * Checks the group-mode sequence buffers (`seqstartQ`/`seqstartK` of batch + 1 int32, `seqlenK` of
 * batch — required when a checked problem has per-batch keys (`hasSeqlenK`), else optional; each
 * 4-byte aligned) and returns their addresses (0 in batch mode). Throws one ArgumentError naming
 * every missing, short or misaligned buffer.
 */
export function checkFmhaFwdSequenceBuffers(
  p: FmhaFwdLaunchProblem,
  buffers: Pick<FmhaFwdBuffers, 'seqstartQ' | 'seqstartK' | 'seqlenK'>,
): { readonly seqstartQ: bigint; readonly seqstartK: bigint; readonly seqlenK: bigint } {
  if (p.mode !== 'group') return { seqstartQ: 0n, seqstartK: 0n, seqlenK: 0n };
  const v = new ArgumentProblems(ArgumentError);
  const seqstartQ = v.check(() => checkDeviceRange('seqstartQ', buffers.seqstartQ, 4 * (p.batch + 1), 4).ptr);
  const seqstartK = v.check(() => checkDeviceRange('seqstartK', buffers.seqstartK, 4 * (p.batch + 1), 4).ptr);
  // A checked problem with per-batch keys (`hasSeqlenK`) is computed with them: without the buffer the kernel would use whole slots.
  const required = 'hasSeqlenK' in p && p.hasSeqlenK === true;
  if (required && buffers.seqlenK === undefined) v.report('seqlenK', 'is required: the problem gives per-batch seqlenK', undefined);
  const seqlenK = buffers.seqlenK === undefined ? 0n : v.check(() => checkDeviceRange('seqlenK', buffers.seqlenK, 4 * p.batch, 4).ptr);
  v.throwIfAny();
  return { seqstartQ: seqstartQ!, seqstartK: seqstartK!, seqlenK: seqlenK! };
}

/** One buffer holding `bytes` and starting on an `align`-byte boundary (the alignment message names `why`). */
function alignedRange(name: string, range: DeviceRange | undefined, bytes: number, align: number, why: string): DeviceRange {
  const r = checkDeviceRange(name, range, bytes);
  if (r.ptr % BigInt(align) !== 0n)
    throw new ArgumentError(name, `address must be aligned to ${align} bytes${why}`, `0x${r.ptr.toString(16)}`);
  return r;
}

/**
 * Checks Q, K and V of a forward launch: each holds its strided span (`attentionTensorSpan`, group
 * mode one "batch") and starts on a 16-byte boundary, which the `loader` (TMA, cp.async) needs.
 * Throws one ArgumentError naming every broken one of `q`, `k` and `v`.
 */
export function checkFmhaFwdInputs(
  p: FmhaFwdLaunchProblem,
  buffers: Pick<FmhaFwdBuffers, 'q' | 'k' | 'v'>,
  loader: string,
): { readonly q: DeviceRange; readonly k: DeviceRange; readonly v: DeviceRange } {
  const bytes = fmhaFwdInputBytes(p);
  const problems = new ArgumentProblems(ArgumentError);
  const why = ` (${loader})`;
  const q = problems.check(() => alignedRange('q', buffers.q, bytes.q, 16, why));
  const k = problems.check(() => alignedRange('k', buffers.k, bytes.k, 16, why));
  const v = problems.check(() => alignedRange('v', buffers.v, bytes.v, 16, why));
  problems.throwIfAny();
  return { q: q!, k: k!, v: v! };
}

/** Bytes of Q, K and V a launch reads: their strided spans (group mode one "batch"). */
export function fmhaFwdInputBytes(p: FmhaFwdLaunchProblem): { readonly q: number; readonly k: number; readonly v: number } {
  const e = getDType(p.dtype).bytes;
  const batches = p.mode === 'group' ? 1 : p.batch;
  return {
    q: attentionTensorSpan(p.qStrides, batches, p.nheadQ, p.rowsQ, p.hdimQ) * e,
    k: attentionTensorSpan(p.kStrides, batches, p.nheadK, p.rowsK, p.hdimQ) * e,
    v: attentionTensorSpan(p.vStrides, batches, p.nheadK, p.rowsK, p.hdimV) * e,
  };
}

/** A buffer as far as a launch touches it: `bytes` from its address (0: nothing). */
export interface FmhaFwdExtent {
  readonly name: string;
  readonly range: DeviceRange | undefined;
  readonly bytes: number;
}

function overlap(x: FmhaFwdExtent, y: FmhaFwdExtent): boolean {
  if (x.range === undefined || y.range === undefined || x.bytes === 0 || y.bytes === 0) return false;
  return x.range.ptr < y.range.ptr + BigInt(y.bytes) && y.range.ptr < x.range.ptr + BigInt(x.bytes);
}

/**
 * Reports to `problems` every output whose extent overlaps an input's or an earlier output's (rule
 * `must not overlap <other>`): other blocks still read the inputs while one writes, so an output
 * over an input (O over Q, say) races. Extents that were not checked (undefined) are skipped.
 */
export function reportFmhaFwdOverlaps(
  problems: ArgumentProblems,
  outputs: readonly FmhaFwdExtent[],
  inputs: readonly FmhaFwdExtent[],
): void {
  outputs.forEach((out, i) => {
    for (const other of [...inputs, ...outputs.slice(0, i)]) {
      if (overlap(out, other))
        problems.report(out.name, `must not overlap ${other.name} (the kernel reads it while writing ${out.name})`, {
          [out.name]: `0x${out.range!.ptr.toString(16)}`,
          [other.name]: `0x${other.range!.ptr.toString(16)}`,
        });
    }
  });
}

/**
 * Checks O (its strided span, element pairs aligned) and, when the problem asks for it, LSE (fp32,
 * `lseStrides`) of a one-pass forward launch. Throws one ArgumentError naming every broken one of
 * `o` and `lse`.
 */
export function checkFmhaFwdOutputs(
  p: FmhaFwdLaunchProblem,
  buffers: Pick<FmhaFwdBuffers, 'o' | 'lse'>,
): { readonly o: DeviceRange; readonly lse: DeviceRange | undefined } {
  const e = getDType(p.dtype).bytes;
  const bytes = fmhaFwdOutputBytes(p);
  const problems = new ArgumentProblems(ArgumentError);
  const o = problems.check(() => checkDeviceRange('o', buffers.o, bytes.o, 2 * e));
  const lse = p.lse ? problems.check(() => checkDeviceRange('lse', buffers.lse, bytes.lse, 4)) : undefined;
  problems.throwIfAny();
  return { o: o!, lse };
}

/** Bytes of O (its strided span) and LSE (fp32, `lseStrides`; 0 when the problem writes none) a one-pass launch writes. */
export function fmhaFwdOutputBytes(p: FmhaFwdLaunchProblem): { readonly o: number; readonly lse: number } {
  const e = getDType(p.dtype).bytes;
  const batches = p.mode === 'group' ? 1 : p.batch;
  const lse = p.lse ? ((batches - 1) * p.lseStrides.batch + (p.nheadQ - 1) * p.lseStrides.head + p.rowsQ) * 4 : 0;
  return { o: attentionTensorSpan(p.oStrides, batches, p.nheadQ, p.rowsQ, p.hdimV) * e, lse };
}

/**
 * Reports to `problems` O or LSE overlapping Q, K, V or each other (see `reportFmhaFwdOverlaps`),
 * for the buffers of a one-pass launch that passed their own checks.
 */
export function reportFmhaFwdOutputOverlaps(
  problems: ArgumentProblems,
  p: FmhaFwdLaunchProblem,
  inputs: { readonly q: DeviceRange; readonly k: DeviceRange; readonly v: DeviceRange } | undefined,
  outputs: { readonly o: DeviceRange; readonly lse: DeviceRange | undefined } | undefined,
): void {
  if (inputs === undefined || outputs === undefined) return;
  const read = fmhaFwdInputBytes(p);
  const written = fmhaFwdOutputBytes(p);
  const ins = (['q', 'k', 'v'] as const).map((name) => ({ name, range: inputs[name], bytes: read[name] }));
  reportFmhaFwdOverlaps(
    problems,
    [
      { name: 'o', range: outputs.o, bytes: written.o },
      { name: 'lse', range: outputs.lse, bytes: written.lse },
    ],
    ins,
  );
}

/** O and LSE of a launch of `instance`: the problem's (one pass) or the fp32 split workspace's, each checked (every problem reported to `problems`). */
function checkLaunchOutputs(problems: ArgumentProblems, instance: FmhaFwdInstance, p: FmhaFwdLaunchProblem, buffers: FmhaFwdBuffers) {
  const e = getDType(p.dtype).bytes;
  const batches = p.mode === 'group' ? 1 : p.batch;
  const split = instance.policy.splitKv;
  const ws = fmhaFwdWorkspace(p);
  const oStrides = split ? ws.oStrides : p.oStrides;
  const lseStrides = split ? ws.lseStrides : p.lseStrides;
  const oBytes = split ? ws.oElements * 4 : attentionTensorSpan(p.oStrides, batches, p.nheadQ, p.rowsQ, p.hdimV) * e;
  const o = problems.check(() => alignedRange('o', buffers.o, oBytes, split ? 8 : 2 * e, ''));
  const writesLse = split || p.lse;
  const lseBytes = writesLse
    ? (split ? ws.lseElements : (batches - 1) * lseStrides.batch + (p.nheadQ - 1) * lseStrides.head + p.rowsQ) * 4
    : 0;
  const lse = writesLse ? problems.check(() => checkDeviceRange('lse', buffers.lse, lseBytes, 4)) : undefined;
  return {
    o,
    oStrides,
    lse,
    lseStrides,
    ws,
    extents: [
      { name: 'o', range: o, bytes: oBytes },
      { name: 'lse', range: lse, bytes: lseBytes },
    ],
  };
}

/**
 * Validates a launch of `instance` on `p` with `buffers` and packs it. Throws one `ArgumentError`
 * naming every problem found: `problem` (the instance's predicates, listed), `q`/`k`/`v`/`o`/`lse`
 * (too small or misaligned; `o`/`lse` also when overlapping Q, K, V or each other),
 * `seqstartQ`/`seqstartK`/`seqlenK` (missing, short or misaligned in group mode); the first one's
 * name is its `argument`.
 */
export function prepareFmhaFwdLaunch(
  instance: FmhaFwdInstance,
  p: FmhaFwdLaunchProblem,
  buffers: FmhaFwdBuffers,
  encode: TensorMapEncoder,
): PreparedFmhaFwdLaunch {
  const problems = new ArgumentProblems(ArgumentError);
  const reasons = fmhaFwdUnsupported(instance, p);
  if (reasons.length > 0) problems.report('problem', `${instance.name} cannot run it: ${reasons.join('; ')}`);
  const inputs = problems.check(() => checkFmhaFwdInputs(p, buffers, 'TMA'));
  const { o, oStrides, lse, lseStrides, ws, extents } = checkLaunchOutputs(problems, instance, p, buffers);
  if (inputs !== undefined) {
    const read = fmhaFwdInputBytes(p);
    reportFmhaFwdOverlaps(
      problems,
      extents,
      (['q', 'k', 'v'] as const).map((name) => ({ name, range: inputs[name], bytes: read[name] })),
    );
  }
  problems.check(() => checkFmhaFwdSequenceBuffers(p, buffers));
  problems.throwIfAny();
  const { q, k, v } = inputs!;
  const split = instance.policy.splitKv;
  const maps = fmhaFwdTensorMaps(instance, p, q.ptr, k.ptr, v.ptr);
  checkTiledTensorMap(maps.q);
  checkTiledTensorMap(maps.k);
  checkTiledTensorMap(maps.v);
  const args = instance.signature.pack({
    q_map: encode(maps.q),
    k_map: encode(maps.k),
    v_map: encode(maps.v),
    ...fmhaFwdTileArgValues(p, buffers, { o: o!.ptr, oStrides, lse: lse?.ptr ?? 0n, lseStrides }),
    num_splits: p.numSplits,
    o_split_stride: split ? ws.oSplit : 0,
    lse_split_stride: split ? ws.lseSplit : 0,
  });
  return { launch: instance.launch(p.batch, p.nheadQ, p.seqlenQ, p.numSplits), args, maps };
}

/** One instance compiled and loaded on a device. */
export class FmhaFwdKernel extends FmhaFwdLoadedKernel<FmhaFwdInstance> {
  /** Compiles and loads `instance` (arch and parameter-layout checks of the runtime's `loadInstance`) and opts in to its shared memory. */
  static async build(instance: FmhaFwdInstance, options: { readonly device: Device; readonly compiler: Compiler }): Promise<FmhaFwdKernel> {
    return new FmhaFwdKernel(instance, await FmhaFwdLoadedKernel.loadOn(instance, options), options.device);
  }

  /** Validates and encodes once; `launch` only enqueues (timing loops call it repeatedly). */
  prepare(
    p: FmhaFwdLaunchProblem,
    buffers: FmhaFwdBuffers,
    encode: TensorMapEncoder,
  ): { readonly prepared: PreparedFmhaFwdLaunch; launch(): void } {
    return this.enqueuer(prepareFmhaFwdLaunch(this.instance, p, buffers, encode), buffers.stream);
  }
}
