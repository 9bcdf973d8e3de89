// The launch of FFPA's sm_90a backward dq_dk_dv kernel: its packed arguments (TMA maps of Q, K, V and
// dO, then the arguments every dq_dk_dv shares) and grid from the backward's checked traits and
// arguments of @tilekit/fmha, so that its pure FmhaBwdLauncher can drive it.
import { longestSlot, type CheckedFmhaBwdProblem, type FmhaBwdWorkspace, type CheckedFmhaBwdTraits, type FmhaBwdArgs } from '@tilekit/fmha';
import { fmhaBwdDqDkDvArgValues, fmhaBwdStrideProblems, fmhaBwdTmaMapArgs, type TensorMapEncoder } from '@tilekit/fmha-launch';
import { getDType } from '@tilekit/numeric';
import type { FfpaBwdPackedLaunch } from './ffpaBwdLauncher.ts';
import type { FfpaBwdSm90Instance } from './ffpaBwdSm90Instance.ts';

/**
 * dq_dk_dv's launch on the sm_90a path: TMA maps of Q, K, V, dO (`fmhaBwdTmaMap`, boxes from the
 * instance; group mode one batch of all rows, the kernel adding seqstart to the row coordinate;
 * `checkTiledTensorMap` throws on strides TMA cannot take), each encoded by `encode`; LSE and D, dK
 * and dV, the workspace (dq_acc in the unified workspace's `atomic` layout, zeroed before; a
 * key-ordered instance also gets the `ordered` layout's counters from `ws`, the launcher's
 * workspace), the window mask and the scale. Grid: (key tiles of the longest key sequence × column
 * slices, key heads, batch).
 */
export function packFfpaBwdSm90DqDkDv(
  instance: FfpaBwdSm90Instance,
  t: CheckedFmhaBwdTraits,
  ws: FmhaBwdWorkspace,
  args: FmhaBwdArgs,
  encode: TensorMapEncoder,
): FfpaBwdPackedLaunch {
  const group = t.groupMode;
  const packed = instance.signature.pack({
    ...fmhaBwdTmaMapArgs(t, args, instance.tmaBoxes, encode),
    ...fmhaBwdDqDkDvArgValues(t, args),
    ...(instance.keyOrdered ? { dq_counter: args.workspace + BigInt(ws.counterOffset), dq_counter_tiles: ws.counterTiles } : {}),
  });
  const maxKeys = group ? longestSlot(t.seqstartK) : t.seqlenK;
  return { ...instance.launch(t.batch, t.nheadK, maxKeys), args: packed };
}

/** The tensors the sm_90a dq_dk_dv loads by TMA. */
const TMA_LOADED: ReadonlySet<string> = new Set(['q', 'k', 'v', 'dO']);

/**
 * Why the sm_90a dq_dk_dv cannot load the problem's Q, K, V and dO by TMA (one line per stride),
 * empty when it can: every stride times the element size a multiple of 16 bytes and below 2^40
 * bytes (batch strides skipped in group mode).
 */
export function ffpaBwdSm90LayoutProblems(p: CheckedFmhaBwdProblem): string[] {
  const e = getDType(p.dtype).bytes;
  const tma = (s: number): string | undefined =>
    (s * e) % 16 !== 0
      ? 'times the element size must be a multiple of 16 bytes (TMA)'
      : s * e >= 2 ** 40
        ? 'reaches 2^40 bytes (TMA)'
        : undefined;
  return fmhaBwdStrideProblems(p, tma)
    .filter((x) => TMA_LOADED.has(x.tensor))
    .map((x) => `${x.tensor} ${x.stride} stride ${x.value}: ${x.rule}`);
}
