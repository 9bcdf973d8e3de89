// The launch side of an attention-forward instance (FmhaFwdInstance): TMA maps of Q, K and V, the
// packed kernel arguments and the grid, from a checked problem and device buffers — all validated
// before anything reaches the GPU (ArgumentError naming the argument and the rule).
import { attentionTensorSpan, type AttentionTensorStrides, type FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { fmhaScoreArgValues } from '../fmhaScoreArgValues.ts';
import { checkAlignedDeviceRange } from './checkAlignedDeviceRange.ts';
import { checkFmhaFwdInputs } from './checkFmhaFwdInputs.ts';
import { checkFmhaFwdSequenceBuffers } from './checkFmhaFwdSequenceBuffers.ts';
import type { FmhaFwdBuffers } from './fmhaFwdBuffers.ts';
import { fmhaFwdInputBytes } from './fmhaFwdInputBytes.ts';
import { FmhaFwdLoadedKernel } from './fmhaFwdLoadedKernel.ts';
import { fmhaFwdTensorMaps } from './fmhaFwdTensorMaps.ts';
import { fmhaFwdTileArgValues } from './fmhaFwdTileArgValues.ts';
import { fmhaFwdUnsupported } from './fmhaFwdUnsupported.ts';
import type { PreparedFmhaFwdLaunch } from './preparedFmhaFwdLaunch.ts';
import { reportFmhaFwdOverlaps } from './reportFmhaFwdOverlaps.ts';
import type { TensorMapEncoder } from './tensorMapEncoder.ts';
import { ArgumentError, ArgumentProblems, getDType } from '@tilekit/numeric';
import { checkTiledTensorMap, type Device, type Compiler, checkDeviceRange } from '@tilekit/runtime';
import type { FmhaFwdInstance } from './fmhaFwdInstance.ts';

/** A range of device memory (the runtime's `DeviceRange`, re-exported for this launcher's users). */
export type { DeviceRange } from '@tilekit/runtime';

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

/** O and LSE of a launch of `instance`: the problem's (one pass) or the fp32 split workspace's, each checked (every problem reported to `problems`). */
function checkLaunchOutputs(problems: ArgumentProblems, instance: FmhaFwdInstance, p: FmhaFwdLaunchProblem, buffers: FmhaFwdBuffers) {
  const e = getDType(p.dtype).bytes;
  const batches = p.mode === 'group' ? 1 : p.batch;
  const split = instance.policy.splitKv;
  const ws = fmhaFwdWorkspace(p);
  const oStrides = split ? ws.oStrides : p.oStrides;
  const lseStrides = split ? ws.lseStrides : p.lseStrides;
  const oBytes = split ? ws.oElements * 4 : attentionTensorSpan(p.oStrides, batches, p.nheadQ, p.rowsQ, p.hdimV) * e;
  const o = problems.check(() => checkAlignedDeviceRange('o', buffers.o, oBytes, split ? 8 : 2 * e, ''));
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
  const score = problems.check(() => fmhaScoreArgValues(instance.policy.scoreModifier, buffers.scoreModifier, p.nheadQ));
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
    ...score,
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
