// The host side of a backward kernel's GPU spec (the dense dq_dk_dv kernel and FFPA's alike): random
// Q, K, V, dO of a case in packed bhsd tensors, the fp32 CPU forward (O, LSE) and backward (dQ, dK,
// dV, D) references with their tolerances, and the check of a kernel's dQ, dK and dV against them.
// Harness code for *.gpu.spec.ts (@tilekit/fmha-launch/testing).
import {
  attentionBwdToleranceFor,
  attentionScoreSetup,
  packedAttentionStrides,
  referenceAttentionBwd,
  referenceAttentionFwd,
  type AttentionBwdArgs,
  type AttentionBwdResult,
  type AttentionBwdTolerance,
  type AttentionFwdResult,
  type AttentionMaskSpec,
  type AttentionScoreSetup,
  type AttentionTensorStrides,
} from '@tilekit/fmha';
import { randomBits16 } from '@tilekit/host';
import { decode, encode } from '@tilekit/numeric';

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

/** A case's inputs (fp16/bf16 bits, packed bhsd), sequences, references and tolerances. */
export interface FmhaBwdReferenceCase {
  readonly spec: FmhaBwdReferenceCaseSpec;
  readonly group: boolean;
  readonly hk: number;
  readonly dv: number;
  readonly sqs: readonly number[];
  readonly sks: readonly number[];
  /** Physical rows of one batch's tensors (group mode: all sequences). */
  readonly rowsQ: number;
  readonly rowsK: number;
  /** Group mode: cumulative rows (batch + 1 each); batch mode: empty. */
  readonly seqstartQ: readonly number[];
  readonly seqstartK: readonly number[];
  /** Strides of Q/dQ, K/dK, V/dV, and O/dO. */
  readonly qs: AttentionTensorStrides;
  readonly ks: AttentionTensorStrides;
  readonly vs: AttentionTensorStrides;
  readonly os: AttentionTensorStrides;
  readonly q: Uint16Array;
  readonly k: Uint16Array;
  readonly v: Uint16Array;
  readonly dO: Uint16Array;
  readonly scale: number;
  readonly score: AttentionScoreSetup | undefined;
  readonly fwd: AttentionFwdResult;
  readonly ref: AttentionBwdResult;
  readonly tol: AttentionBwdTolerance;
}

/** Cumulative sums: [0, l0, l0 + l1, …]. */
export function cumulativeRows(lens: readonly number[]): number[] {
  return lens.reduce<number[]>((s, l) => [...s, s[s.length - 1]! + l], [0]);
}

/** Random inputs of `c` (Q from seed 5 + rows, K 6 + rows, V 7 + rows, dO 8 + rows), the fp32 references and tolerances. */
export function fmhaBwdReferenceCase(c: FmhaBwdReferenceCaseSpec): FmhaBwdReferenceCase {
  const group = Array.isArray(c.sq);
  const hk = c.hk ?? c.h;
  const dv = c.dv ?? c.d;
  const sqs = group ? (c.sq as readonly number[]) : Array<number>(c.batch).fill(c.sq as number);
  const sks = group ? (c.sk as readonly number[]) : Array<number>(c.batch).fill(c.sk as number);
  const rowsQ = group ? sqs.reduce((a, b) => a + b, 0) : sqs[0]!;
  const rowsK = group ? sks.reduce((a, b) => a + b, 0) : sks[0]!;
  const batches = group ? 1 : c.batch;
  const [qs, ks, vs, os] = [
    packedAttentionStrides('bhsd', c.h, rowsQ, c.d),
    packedAttentionStrides('bhsd', hk, rowsK, c.d),
    packedAttentionStrides('bhsd', hk, rowsK, dv),
    packedAttentionStrides('bhsd', c.h, rowsQ, dv),
  ];
  const q = randomBits16(c.dtype, batches * c.h * rowsQ * c.d, 5 + rowsQ);
  const k = randomBits16(c.dtype, batches * hk * rowsK * c.d, 6 + rowsK);
  const v = randomBits16(c.dtype, batches * hk * rowsK * dv, 7 + rowsK);
  const dO = randomBits16(c.dtype, batches * c.h * rowsQ * dv, 8 + rowsQ);
  const seqstartQ = group ? cumulativeRows(sqs) : [];
  const seqstartK = group ? cumulativeRows(sks) : [];
  const seqs = group ? { seqstartQ, seqstartK } : { seqlenQ: rowsQ, seqlenK: rowsK };
  const score = attentionScoreSetup(c.score, c.h, 1.5);
  const common = { batch: c.batch, nheadQ: c.h, nheadK: hk, hdimQ: c.d, hdimV: dv, ...seqs, mask: c.mask };
  const scored = { ...common, ...(score ? { scoreModifier: score.reference } : {}) };
  const tensor = (data: Uint16Array, strides: AttentionTensorStrides) => ({ dtype: c.dtype, data, strides });
  const fwd = referenceAttentionFwd({ ...scored, q: tensor(q, qs), k: tensor(k, ks), v: tensor(v, vs), oStrides: os });
  const o16 = Uint16Array.from(fwd.o, (x) => encode(c.dtype, x));
  const bwdArgs: AttentionBwdArgs = {
    ...scored,
    q: tensor(q, qs),
    k: tensor(k, ks),
    v: tensor(v, vs),
    o: tensor(o16, os),
    dO: tensor(dO, os),
    lse: fwd.lse,
    dqStrides: qs,
    dkStrides: ks,
    dvStrides: vs,
  };
  const ref = referenceAttentionBwd(bwdArgs);
  const tol = attentionBwdToleranceFor(bwdArgs, ref);
  const sizes = { group, hk, dv, sqs, sks, rowsQ, rowsK, seqstartQ, seqstartK };
  return { spec: c, ...sizes, qs, ks, vs, os, q, k, v, dO, scale: 1 / Math.sqrt(c.d), score, fwd, ref, tol };
}

/** A kernel's gradients: dQ as an accessor (batch, head, row, column; e.g. summed over workspace splits), dK and dV as dtype bits. */
export interface FmhaBwdGradients {
  dq(b: number, h: number, r: number, x: number): number;
  readonly dk: Uint16Array;
  readonly dv: Uint16Array;
}

/** What a gradient check found: values off their tolerance, the first of them, and the largest error of each. */
export interface FmhaBwdGradientCheck {
  readonly bad: number;
  readonly first: string;
  readonly worst: { readonly dq: number; readonly dk: number; readonly dv: number };
}

/** Element offset of row r of head h in batch b of a packed tensor (group mode: global rows). */
function rowBase(rc: FmhaBwdReferenceCase, s: AttentionTensorStrides, starts: readonly number[], b: number, h: number, r: number): number {
  return rc.group ? (starts[b]! + r) * s.row + h * s.head : b * s.batch + h * s.head + r * s.row;
}

/** Checks every element of dQ, dK and dV of every sequence against the reference within `rc.tol`. */
export function checkFmhaBwdGradients(rc: FmhaBwdReferenceCase, got: FmhaBwdGradients): FmhaBwdGradientCheck {
  const { spec: c, ref, tol } = rc;
  const worst = { dq: 0, dk: 0, dv: 0 };
  let bad = 0;
  let first = '';
  const check = (what: 'dq' | 'dk' | 'dv', value: number, want: number, where: string): void => {
    const t = tol[what];
    const err = Math.abs(value - want);
    worst[what] = Math.max(worst[what], err);
    if (err <= t.atol + t.rtol * Math.abs(want)) return;
    bad++;
    first ||= `${what}${where} = ${value}, reference ${want} (atol ${t.atol.toExponential(2)})`;
  };
  for (let b = 0; b < c.batch; b++) {
    for (let h = 0; h < c.h; h++)
      for (let r = 0; r < rc.sqs[b]!; r++) {
        const base = rowBase(rc, rc.qs, rc.seqstartQ, b, h, r);
        for (let x = 0; x < c.d; x++) check('dq', got.dq(b, h, r, x), ref.dq[base + x]!, `[b${b} h${h} r${r} d${x}]`);
      }
    for (let h = 0; h < rc.hk; h++)
      for (let r = 0; r < rc.sks[b]!; r++) {
        const kBase = rowBase(rc, rc.ks, rc.seqstartK, b, h, r);
        const vBase = rowBase(rc, rc.vs, rc.seqstartK, b, h, r);
        for (let x = 0; x < c.d; x++) check('dk', decode(c.dtype, got.dk[kBase + x]!), ref.dk[kBase + x]!, `[b${b} h${h} r${r} d${x}]`);
        for (let x = 0; x < rc.dv; x++) check('dv', decode(c.dtype, got.dv[vBase + x]!), ref.dv[vBase + x]!, `[b${b} h${h} r${r} d${x}]`);
      }
  }
  return { bad, first, worst };
}
