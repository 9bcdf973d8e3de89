// One (query, head) row of sparse MLA attention in float64, with its error bound (internal: used by the references).
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { dsaSparseMlaOutBound, dsaSparseMlaRowBound } from './dsaSparseMlaErrorBound.ts';

const DQK = DSA_SPARSE_MLA_QK_DIM;
const DV = DSA_SPARSE_MLA_V_DIM;

/** One row's task: the query head, its valid key rows in list order (duplicates repeated), the scale and the sink. */
export interface DsaSparseMlaRowTask {
  /** 576 query values. */
  readonly q: Float32Array;
  /** Valid latent rows (576 values each; V = the first 512). */
  readonly keys: readonly Float32Array[];
  readonly smScale: number;
  /** attn_sink of this head, or undefined. */
  readonly sink: number | undefined;
}

/** Where one row's results go: out and its bound (512 each, pre-zeroed), and the scalars. */
export interface DsaSparseMlaRowOutput {
  readonly out: Float32Array;
  readonly outBound: Float64Array;
  lse: number;
  maxLogits: number;
  lseBound: number;
  maxBound: number;
}

function scores(task: DsaSparseMlaRowTask): { s: Float64Array; dotAbsMax: number } {
  const s = new Float64Array(task.keys.length);
  let dotAbsMax = 0;
  task.keys.forEach((k, j) => {
    let dot = 0;
    let abs = 0;
    for (let i = 0; i < DQK; i++) {
      const p = task.q[i]! * k[i]!;
      dot += p;
      abs += Math.abs(p);
    }
    s[j] = task.smScale * dot;
    dotAbsMax = Math.max(dotAbsMax, task.smScale * abs);
  });
  return { s, dotAbsMax };
}

/** Σ_j w_j·v_jd and Σ_j w_j·|v_jd| over d < 512. */
function weightedValues(keys: readonly Float32Array[], w: Float64Array): [Float64Array, Float64Array] {
  const o = new Float64Array(DV);
  const a = new Float64Array(DV);
  keys.forEach((k, j) => {
    const wj = w[j]!;
    for (let d = 0; d < DV; d++) {
      o[d] = o[d]! + wj * k[d]!;
      a[d] = a[d]! + wj * Math.abs(k[d]!);
    }
  });
  return [o, a];
}

/**
 * Attends one row: s_j = sm_scale·q·k_j, lse = ln Σ e^{s_j}, max = max s_j, out = f·Σ softmax(s)_j·k_j[0:512] with the
 * sink factor f = 1 / (1 + e^{sink − lse}); a row without keys leaves out 0 and gives lse +∞, max −∞ (all bounds 0).
 */
export function dsaSparseMlaAttendRow(task: DsaSparseMlaRowTask, dst: DsaSparseMlaRowOutput): void {
  if (task.keys.length === 0) {
    Object.assign(dst, { lse: Number.POSITIVE_INFINITY, maxLogits: Number.NEGATIVE_INFINITY, lseBound: 0, maxBound: 0 });
    return;
  }
  const { s, dotAbsMax } = scores(task);
  const m = s.reduce((x, y) => Math.max(x, y), Number.NEGATIVE_INFINITY);
  const w = s.map((x) => Math.exp(x - m));
  const l = w.reduce((x, y) => x + y, 0);
  const lse = m + Math.log(l);
  const factor = task.sink === undefined ? 1 : 1 / (1 + Math.exp(task.sink - lse));
  const scoreAbsMax = s.reduce((x, y) => Math.max(x, Math.abs(y)), 0);
  const row = dsaSparseMlaRowBound({ valid: s.length, dims: DQK, dotAbsMax, scoreAbsMax, lse, sinkFactor: factor });
  const [o, a] = weightedValues(task.keys, w);
  for (let d = 0; d < DV; d++) {
    dst.out[d] = (factor * o[d]!) / l;
    dst.outBound[d] = dsaSparseMlaOutBound(row, o[d]! / l, a[d]! / l);
  }
  Object.assign(dst, { lse, maxLogits: m, lseBound: row.lse, maxBound: row.maxLogits });
}
