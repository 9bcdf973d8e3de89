// The launch side of the split-KV combine kernel: validates the workspace, output and LSE buffers
// against a launch problem (ArgumentError naming the argument and the rule) and packs the
// arguments; FmhaFwdCombineKernel compiles and loads an instance.
import type { PackedArguments } from '@tilekit/codegen';
import { ArgumentError, ArgumentProblems, getDType } from '@tilekit/numeric';
import { checkDeviceRange, type Compiler, type Device, type DeviceRange, type Stream } from '@tilekit/runtime';
import type { FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { FmhaFwdLoadedKernel, reportFmhaFwdOverlaps } from '@tilekit/fmha-launch';
import type { FmhaFwdCombineInstance, FmhaFwdCombineLaunch } from './fmhaFwdCombine.ts';
import { fmhaFwdWorkspace } from '@tilekit/fmha-launch';

/** Device memory of a combine launch: the split workspace (read) and O / LSE (written). */
export interface FmhaFwdCombineBuffers {
  /** Partial O, fp32, `fmhaFwdWorkspace(p).oElements` elements. */
  readonly oAcc: DeviceRange;
  /** Partial LSE, fp32, `fmhaFwdWorkspace(p).lseElements` elements. */
  readonly lseAcc: DeviceRange;
  readonly o: DeviceRange;
  /** Final LSE; required when the problem asks for it. */
  readonly lse?: DeviceRange;
  /** Group mode: int32, batch + 1 entries. */
  readonly seqstartQ?: DeviceRange;
  readonly stream?: Stream;
}

/** A validated combine launch. */
export interface PreparedFmhaFwdCombineLaunch {
  readonly launch: FmhaFwdCombineLaunch;
  readonly args: PackedArguments;
}

/** Why `instance` cannot combine for `p` (one line per broken predicate); empty when it can. */
export function fmhaFwdCombineUnsupported(instance: FmhaFwdCombineInstance, p: FmhaFwdLaunchProblem): string[] {
  const out: string[] = [];
  if (p.dtype !== instance.policy.dtype) out.push(`dtype ${p.dtype}: this combine writes ${instance.policy.dtype}`);
  if (p.hdimV !== instance.policy.headDimV) out.push(`hdimV ${p.hdimV}: this combine has ${instance.policy.headDimV}`);
  if (p.numSplits < 1 || p.numSplits > 128) out.push(`${p.numSplits} splits: the combine takes 1 to 128`);
  if (p.oStrides.row % 2 !== 0) out.push(`o row stride ${p.oStrides.row} is odd (the combine stores element pairs)`);
  if (p.oStrides.row > 2 ** 31 - 2) out.push('o row stride exceeds int32');
  return out;
}

/**
 * Validates a combine launch of `instance` for `p` (the workspace laid out by `fmhaFwdWorkspace`)
 * and packs it. Throws one `ArgumentError` naming every problem found: `problem` (the predicates,
 * listed), `oAcc`/`lseAcc` (too small or misaligned), `o`, `lse` (missing when the problem asks for
 * LSE; either overlapping the workspace or the other), `seqstartQ` (missing in group mode); the
 * first one's name is its `argument`.
 */
export function prepareFmhaFwdCombineLaunch(
  instance: FmhaFwdCombineInstance,
  p: FmhaFwdLaunchProblem,
  buffers: FmhaFwdCombineBuffers,
): PreparedFmhaFwdCombineLaunch {
  const problems = new ArgumentProblems(ArgumentError);
  const reasons = fmhaFwdCombineUnsupported(instance, p);
  if (reasons.length > 0) problems.report('problem', `${instance.name} cannot run it: ${reasons.join('; ')}`);
  const e = getDType(p.dtype).bytes;
  const group = p.mode === 'group';
  const batches = group ? 1 : p.batch;
  const ws = fmhaFwdWorkspace(p);
  const oAcc = problems.check(() => checkDeviceRange('oAcc', buffers.oAcc, ws.oElements * 4, 16));
  const lseAcc = problems.check(() => checkDeviceRange('lseAcc', buffers.lseAcc, ws.lseElements * 4, 4));
  const rows = p.rowsQ;
  const oSpan =
    rows === 0 ? 0 : (batches - 1) * p.oStrides.batch + (p.nheadQ - 1) * p.oStrides.head + (rows - 1) * p.oStrides.row + p.hdimV;
  const o = problems.check(() => checkDeviceRange('o', buffers.o, oSpan * e, 2 * e));
  const lseBytes = p.lse ? ((batches - 1) * p.lseStrides.batch + (p.nheadQ - 1) * p.lseStrides.head + rows) * 4 : 0;
  const lse = p.lse ? problems.check(() => checkDeviceRange('lse', buffers.lse, lseBytes, 4)) : undefined;
  const seqstartQ = group ? problems.check(() => checkDeviceRange('seqstartQ', buffers.seqstartQ, 4 * (p.batch + 1), 4).ptr) : 0n;
  const reads = [
    { name: 'oAcc', range: oAcc, bytes: ws.oElements * 4 },
    { name: 'lseAcc', range: lseAcc, bytes: ws.lseElements * 4 },
  ];
  reportFmhaFwdOverlaps(
    problems,
    [
      { name: 'o', range: o, bytes: oSpan * e },
      { name: 'lse', range: lse, bytes: lseBytes },
    ],
    reads,
  );
  problems.throwIfAny();
  const args = instance.signature.pack({
    o_acc: oAcc!.ptr,
    lse_acc: lseAcc!.ptr,
    o: o!.ptr,
    lse: lse?.ptr ?? 0n,
    o_stride_row: p.oStrides.row,
    o_stride_head: p.oStrides.head,
    o_stride_batch: group ? 0 : p.oStrides.batch,
    lse_stride_head: p.lseStrides.head,
    lse_stride_batch: group ? 0 : p.lseStrides.batch,
    o_acc_stride_head: ws.oStrides.head,
    o_acc_stride_batch: group ? 0 : ws.oStrides.batch,
    o_acc_split_stride: ws.oSplit,
    lse_acc_stride_head: ws.lseStrides.head,
    lse_acc_stride_batch: group ? 0 : ws.lseStrides.batch,
    lse_acc_split_stride: ws.lseSplit,
    seqlen_q: p.seqlenQ,
    seqstart_q: seqstartQ!,
    num_splits: p.numSplits,
  });
  return { launch: instance.launch(p.batch, p.nheadQ, p.seqlenQ), args };
}

/** One combine instance compiled and loaded on a device. */
export class FmhaFwdCombineKernel extends FmhaFwdLoadedKernel<FmhaFwdCombineInstance> {
  /** Compiles and loads `instance` (the runtime's arch and parameter-layout checks). */
  static async build(
    instance: FmhaFwdCombineInstance,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<FmhaFwdCombineKernel> {
    return new FmhaFwdCombineKernel(instance, await FmhaFwdLoadedKernel.loadOn(instance, options), options.device);
  }

  /** Validates and packs once; `launch` only enqueues. */
  prepare(p: FmhaFwdLaunchProblem, buffers: FmhaFwdCombineBuffers): { readonly prepared: PreparedFmhaFwdCombineLaunch; launch(): void } {
    return this.enqueuer(prepareFmhaFwdCombineLaunch(this.instance, p, buffers), buffers.stream);
  }
}
