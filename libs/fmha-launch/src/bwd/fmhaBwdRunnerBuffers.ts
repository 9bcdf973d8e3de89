// The device buffers of one backward run, their checks, and the pure launcher's arguments built
// from them — what every backward runner (the dense one, FFPA's) does before it launches.
import {
  FMHA_BWD_TENSORS,
  fmhaBwdOperandElements,
  type CheckedFmhaBwdProblem,
  type FmhaBwdArgs,
  type FmhaBwdDeviceRange,
  type FmhaBwdTensor,
  type FmhaScoreModifierSpec,
} from '@tilekit/fmha';
import { ArgumentError, ArgumentProblems, getDType } from '@tilekit/numeric';
import type { Stream } from '@tilekit/runtime';

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

/** A device buffer's address: a `{ ptr: bigint, bytes }` of at least `bytes`, aligned to `align` (typed `ArgumentError` naming `name` otherwise). */
export function checkFmhaBwdDeviceRange(name: string, r: FmhaBwdDeviceRange | undefined, bytes: number, align: number): bigint {
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

/** What a runner adds to the buffers: its D buffer, its workspace, each tensor's address alignment and a check of `scoreModifier`. */
export interface FmhaBwdRunnerArgsContext {
  readonly d: bigint;
  /** 0n when the launcher needs no workspace. */
  readonly workspace: bigint;
  readonly align: Readonly<Record<FmhaBwdTensor, number>>;
  readonly checkScoreModifier: (spec: FmhaScoreModifierSpec | undefined) => void;
}

/**
 * The launcher's args for `buffers`. Throws one `ArgumentError` naming every missing, short or
 * misaligned buffer and a `scoreModifier` the context rejects (the first one's name as
 * `argument`); then one naming every output (dQ, dK, dV) that overlaps an input or another output.
 * The args are frozen (a snapshot of the buffers' addresses and the score modifier's fields).
 */
export function fmhaBwdRunnerArgs(p: CheckedFmhaBwdProblem, buffers: FmhaBwdRunnerBuffers, ctx: FmhaBwdRunnerArgsContext): FmhaBwdArgs {
  const e = getDType(p.dtype).bytes;
  const elems = fmhaBwdOperandElements(p);
  const problems = new ArgumentProblems(ArgumentError);
  const range = (name: string, r: FmhaBwdDeviceRange | undefined, bytes: number, align: number): bigint =>
    problems.check(() => checkFmhaBwdDeviceRange(name, r, bytes, align)) ?? 0n;
  const tensor = (name: FmhaBwdTensor) => ({ ptr: range(name, buffers[name], elems[name] * e, ctx.align[name]), strides: p.strides[name] });
  const t = Object.fromEntries(FMHA_BWD_TENSORS.map((n) => [n, tensor(n)])) as Record<FmhaBwdTensor, ReturnType<typeof tensor>>;
  const lse = range('lse', buffers.lse, elems.lse * 4, 4);
  const starts =
    p.mode === 'group'
      ? {
          seqstartQ: range('seqstartQ', buffers.seqstartQ, 4 * (p.batch + 1), 4),
          seqstartK: range('seqstartK', buffers.seqstartK, 4 * (p.batch + 1), 4),
        }
      : {};
  problems.check(() => ctx.checkScoreModifier(buffers.scoreModifier));
  problems.throwIfAny();
  reportOutputOverlaps(problems, [
    ...FMHA_BWD_TENSORS.map((n) => ({ name: n, ptr: t[n].ptr, bytes: elems[n] * e })),
    { name: 'lse', ptr: lse, bytes: elems.lse * 4 },
  ]);
  problems.throwIfAny();
  // Frozen, tensors and the score modifier's fields included: an executor packs each stage once per args object.
  const tensors = Object.fromEntries(FMHA_BWD_TENSORS.map((n) => [n, Object.freeze(t[n])])) as typeof t;
  return Object.freeze({
    ...tensors,
    lse: Object.freeze({ ptr: lse, strides: p.lseStrides }),
    d: Object.freeze({ ptr: ctx.d, strides: p.lseStrides }),
    ...starts,
    scale: p.scale,
    workspace: ctx.workspace,
    ...(buffers.scoreModifier === undefined ? {} : { scoreModifier: Object.freeze({ ...buffers.scoreModifier }) }),
  });
}
