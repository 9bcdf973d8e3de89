// The launch side of an sm_80 attention-forward instance (any main loop): the packed kernel arguments (global
// pointers and element strides) and the grid, from a checked problem and device buffers — all
// validated before anything reaches the GPU (ArgumentError naming the argument and the rule).
import type { PackedArguments } from '@tilekit/codegen';
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import type { Compiler, Device } from '@tilekit/runtime';
import type { FmhaFwdLaunch, FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { checkFmhaFwdInputs } from '../fwd/checkFmhaFwdInputs.ts';
import { checkFmhaFwdOutputs } from '../fwd/checkFmhaFwdOutputs.ts';
import { checkFmhaFwdSequenceBuffers } from '../fwd/checkFmhaFwdSequenceBuffers.ts';
import type { FmhaFwdBuffers } from '../fwd/fmhaFwdBuffers.ts';
import { FmhaFwdLoadedKernel } from '../fwd/fmhaFwdLoadedKernel.ts';
import { fmhaFwdQkvStrides } from '../fwd/fmhaFwdQkvStrides.ts';
import { fmhaFwdTileArgValues } from '../fwd/fmhaFwdTileArgValues.ts';
import { reportFmhaFwdOutputOverlaps } from '../fwd/reportFmhaFwdOverlaps.ts';
import { FMHA_SM80_COPY_ELEMENTS, FMHA_SM80_MAX_ROW_STRIDE, type FmhaFwdSm80LoopInstance } from './fmhaFwdSm80LoopInstance.ts';

/** A validated sm_80 launch. */
export interface PreparedFmhaFwdSm80Launch {
  readonly launch: FmhaFwdLaunch;
  readonly args: PackedArguments;
}

/** Device memory of one sm_80 launch: the one-pass buffers of `FmhaFwdBuffers` (Q, K, V 16-byte aligned). */
export type FmhaFwdSm80Buffers = FmhaFwdBuffers;

/**
 * Why `instance` cannot run `p` (one line per broken predicate); empty when it can. The sm_80
 * kernel reads Q/K/V rows as 16-byte `cp.async` vectors, so every Q/K/V stride (row, head, batch)
 * must be a multiple of 8 elements (no scalar fallback); it has no split-KV.
 */
export function fmhaFwdSm80Unsupported(instance: FmhaFwdSm80LoopInstance, p: FmhaFwdLaunchProblem): string[] {
  const P = instance.policy;
  const out: string[] = [];
  const v = FMHA_SM80_COPY_ELEMENTS;
  if (p.dtype !== P.dtype) out.push(`dtype ${p.dtype}: this kernel computes ${P.dtype}`);
  if (p.hdimQ !== P.headDim || p.hdimV !== P.headDimV)
    out.push(`head dims ${p.hdimQ}/${p.hdimV}: this kernel has ${P.headDim}/${P.headDimV}`);
  const masked = p.mask.kind !== 'none';
  if (p.mask.kind === 'generic') out.push('a generic (y, x) mask: this kernel takes window masks (left, right) only');
  else if (masked !== (P.mask === 'window'))
    out.push(masked ? 'a masked problem: this kernel has no mask' : 'no mask: this kernel applies a window mask');
  if (p.numSplits !== 1) out.push(`${p.numSplits} key splits: the sm_80 kernel does not split`);
  for (const { name, what, stride } of fmhaFwdQkvStrides(p)) {
    if (stride % v !== 0)
      out.push(`${name} ${what} stride ${stride} is not a multiple of ${v} elements (16-byte cp.async rows; no scalar fallback)`);
    if (what === 'row' && stride > FMHA_SM80_MAX_ROW_STRIDE) out.push(`${name} row stride exceeds int32`);
  }
  for (const [what, stride] of [
    ['row', p.oStrides.row],
    ['head', p.oStrides.head],
    ['batch', p.oStrides.batch],
  ] as const) {
    if (stride % 2 !== 0) out.push(`o ${what} stride ${stride} is odd (the epilogue stores aligned element pairs)`);
  }
  if (p.oStrides.row > FMHA_SM80_MAX_ROW_STRIDE) out.push('o row stride exceeds int32');
  return out;
}

/**
 * Validates a launch of `instance` on `p` with `buffers` and packs it. Throws one `ArgumentError`
 * naming every problem found: `problem` (the instance's predicates, listed), `q`/`k`/`v`/`o`/`lse`
 * (too small or misaligned; `o`/`lse` also when overlapping Q, K, V or each other),
 * `seqstartQ`/`seqstartK`/`seqlenK` (missing, short or misaligned in group mode); the first one's
 * name is its `argument`.
 */
export function prepareFmhaFwdSm80Launch(
  instance: FmhaFwdSm80LoopInstance,
  p: FmhaFwdLaunchProblem,
  buffers: FmhaFwdSm80Buffers,
): PreparedFmhaFwdSm80Launch {
  const problems = new ArgumentProblems(ArgumentError);
  const reasons = fmhaFwdSm80Unsupported(instance, p);
  if (reasons.length > 0) problems.report('problem', `${instance.name} cannot run it: ${reasons.join('; ')}`);
  const inputs = problems.check(() => checkFmhaFwdInputs(p, buffers, 'cp.async'));
  const outputs = problems.check(() => checkFmhaFwdOutputs(p, buffers));
  reportFmhaFwdOutputOverlaps(problems, p, inputs, outputs);
  problems.check(() => checkFmhaFwdSequenceBuffers(p, buffers));
  problems.throwIfAny();
  const { q, k, v } = inputs!;
  const { o, lse } = outputs!;
  // Group mode: one "batch" holds every sequence's rows (the kernel adds seqstart · row stride).
  const batchStride = (s: number): number => (p.mode === 'group' ? 0 : s);
  const args = instance.signature.pack({
    q: q.ptr,
    k: k.ptr,
    v: v.ptr,
    q_stride_row: p.qStrides.row,
    q_stride_head: p.qStrides.head,
    q_stride_batch: batchStride(p.qStrides.batch),
    k_stride_row: p.kStrides.row,
    k_stride_head: p.kStrides.head,
    k_stride_batch: batchStride(p.kStrides.batch),
    v_stride_row: p.vStrides.row,
    v_stride_head: p.vStrides.head,
    v_stride_batch: batchStride(p.vStrides.batch),
    ...fmhaFwdTileArgValues(p, buffers, { o: o.ptr, oStrides: p.oStrides, lse: lse?.ptr ?? 0n, lseStrides: p.lseStrides }),
  });
  return { launch: instance.launch(p.batch, p.nheadQ, p.seqlenQ), args };
}

/** One sm_80 instance compiled and loaded on a device (built for the device's arch: sm_80, or sm_90a on Hopper). */
export class FmhaFwdSm80Kernel<I extends FmhaFwdSm80LoopInstance = FmhaFwdSm80LoopInstance> extends FmhaFwdLoadedKernel<I> {
  /** Compiles and loads `instance` (arch and parameter-layout checks of the runtime's `loadInstance`) and opts in to its shared memory. */
  static async build<I extends FmhaFwdSm80LoopInstance>(
    instance: I,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<FmhaFwdSm80Kernel<I>> {
    return new FmhaFwdSm80Kernel(instance, await FmhaFwdLoadedKernel.loadOn(instance, options), options.device);
  }

  /** Validates once; `launch` only enqueues (timing loops call it repeatedly). */
  prepare(p: FmhaFwdLaunchProblem, buffers: FmhaFwdSm80Buffers): { readonly prepared: PreparedFmhaFwdSm80Launch; launch(): void } {
    return this.enqueuer(prepareFmhaFwdSm80Launch(this.instance, p, buffers), buffers.stream);
  }
}
