// The host side of a backward kernel's GPU spec (the dense dq_dk_dv kernel and FFPA's alike): a
// case as a checked problem with packed bhsd tensors, random Q, K, V, dO, the fp32 CPU references
// (`fmhaBwdReference`), and the check of a kernel's dQ (fp32, e.g. from the dq_acc workspace), dK
// and dV against them (`compareFmhaBwd`). Harness code for *.gpu.spec.ts (@tilekit/fmha-launch/testing).
import {
  attentionRowOffset,
  attentionScoreSetup,
  checkFmhaBwdProblem,
  compareFmhaBwd,
  fmhaBwdOperandElements,
  fmhaBwdReference,
  seqstartsOf,
  type AttentionMaskSpec,
  type AttentionScoreSetup,
  type CheckedFmhaBwdProblem,
  type FmhaBwdHostInputs,
  type FmhaBwdReference,
} from '@tilekit/fmha';
import { randomBits16 } from '@tilekit/host';

/** One backward case: shapes, lengths, mask and an optional score modifier. */
export interface FmhaBwdReferenceCaseSpec {
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q and K. */
  readonly d: number;
  /** Head dim of V, O and dO; default `d`. */
  readonly dv?: number;
  readonly batch: number;
  readonly h: number;
  /** Key/value heads (GQA); default `h`. */
  readonly hk?: number;
  /** Batch mode: one length each; group mode: per-batch lengths. */
  readonly sq: number | readonly number[];
  readonly sk: number | readonly number[];
  readonly mask: AttentionMaskSpec;
  /** Soft-capping at 1.5, or ALiBi with the geometric slopes. */
  readonly score?: 'softcap' | 'alibi';
}

/** A case's problem (bhsd), inputs, references and score-modifier setup. */
export interface FmhaBwdReferenceCase {
  readonly problem: CheckedFmhaBwdProblem;
  readonly data: FmhaBwdHostInputs;
  readonly ref: FmhaBwdReference;
  readonly score: AttentionScoreSetup | undefined;
  /** Query and key rows per batch. */
  readonly sqs: readonly number[];
  readonly sks: readonly number[];
}

/** The case's problem and random inputs (Q from seed 5 + physical query rows, K 6 + key rows, V 7 + key rows, dO 8 + query rows), and its references. */
export function fmhaBwdReferenceCase(c: FmhaBwdReferenceCaseSpec): FmhaBwdReferenceCase {
  const group = Array.isArray(c.sq);
  const sqs = group ? (c.sq as readonly number[]) : Array<number>(c.batch).fill(c.sq as number);
  const sks = group ? (c.sk as readonly number[]) : Array<number>(c.batch).fill(c.sk as number);
  const sequences = group
    ? { seqstartQ: seqstartsOf(sqs), seqstartK: seqstartsOf(sks) }
    : { seqlenQ: c.sq as number, seqlenK: c.sk as number };
  const problem = checkFmhaBwdProblem({
    dtype: c.dtype,
    batch: c.batch,
    nheadQ: c.h,
    nheadK: c.hk ?? c.h,
    hdimQ: c.d,
    hdimV: c.dv ?? c.d,
    ...sequences,
    mask: c.mask,
    ...(c.score === undefined ? {} : { scoreModifier: c.score }),
  });
  const rowsQ = problem.rowsQ;
  const rowsK = problem.rowsK;
  const e = fmhaBwdOperandElements(problem);
  const data = {
    q: randomBits16(c.dtype, e.q, 5 + rowsQ),
    k: randomBits16(c.dtype, e.k, 6 + rowsK),
    v: randomBits16(c.dtype, e.v, 7 + rowsK),
    dO: randomBits16(c.dtype, e.dO, 8 + rowsQ),
  };
  const score = attentionScoreSetup(c.score, c.h, 1.5);
  return { problem, data, ref: fmhaBwdReference(problem, data, score?.reference), score, sqs, sks };
}

/** dQ in the problem's dQ strides from `at(batch, head, row, column)` (e.g. a workspace summed over its splits). */
export function fmhaBwdDqFrom(rc: FmhaBwdReferenceCase, at: (b: number, h: number, r: number, x: number) => number): Float32Array {
  const p = rc.problem;
  const a = rc.ref.result.args;
  const dq = new Float32Array(Math.max(1, fmhaBwdOperandElements(p).dQ));
  for (let b = 0; b < p.batch; b++)
    for (let h = 0; h < p.nheadQ; h++)
      for (let r = 0; r < rc.sqs[b]!; r++) {
        const base = attentionRowOffset(a, a.dqStrides, a.rowStartsQ, b, h, r);
        for (let x = 0; x < p.hdimQ; x++) dq[base + x] = at(b, h, r, x);
      }
  return dq;
}

/** Compares dQ (fp32), dK and dV (dtype bits) with the reference; throws naming the first element off, else returns the largest errors. */
export function checkFmhaBwdGradients(
  rc: FmhaBwdReferenceCase,
  got: { dQ: Float32Array; dK: Uint16Array; dV: Uint16Array },
  who: string,
): string {
  const results = compareFmhaBwd(rc.problem, rc.ref, got);
  const wrong = results.filter((r) => r.wrong > 0);
  if (wrong.length > 0)
    throw new Error(`${who}: ${wrong.map((r) => `${r.tensor} ${r.wrong}/${r.checked} off`).join(', ')}; first: ${wrong[0]!.first}`);
  return `${who}: max |err| ${results.map((r) => `${r.tensor} ${r.maxAbsErr.toExponential(2)}`).join(' ')}`;
}
