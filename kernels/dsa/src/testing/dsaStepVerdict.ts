// The verdict of a whole-path check of a DSA step (decode or prefill): one line per stage, valid when all three are.
import type { DsaLogitsComparison } from '../reference/compareDsaLogits.ts';
import type { DsaSparseMlaComparison } from '../reference/compareDsaSparseMla.ts';

/** All three stages valid, and one line per stage (indexer, selection, attention). */
export interface DsaStepVerdict {
  readonly ok: boolean;
  readonly lines: readonly string[];
}

/** The verdict of the three stage comparisons: `wrongRows` of `rows` selections differ from the exact top-k of the GPU's logits. */
export function dsaStepVerdict(v: {
  readonly logits: DsaLogitsComparison;
  readonly attention: DsaSparseMlaComparison;
  readonly rows: number;
  readonly wrongRows: number;
  /** What the selection produced (e.g. `top-2048 → slots`) and how it was mapped (e.g. ` through the block table`). */
  readonly selection: string;
  readonly through: string;
}): DsaStepVerdict {
  const { logits, attention } = v;
  const worst = (c: { worstRatio: number } | undefined): string => (c === undefined ? '-' : c.worstRatio.toFixed(3));
  const lines = [
    `indexer: ${logits.checked} logits, ${logits.overBound} over the bound, ${logits.maskMismatches} mask mismatches ` +
      `(worst ${logits.worstRatio.toFixed(3)} of the bound)`,
    `${v.selection}: ${v.rows - v.wrongRows}/${v.rows} rows equal to the exact selection of the GPU's logits${v.through}`,
    `attention: out ${attention.out.failures}/${attention.out.checked}, lse ${attention.lse.failures}, ` +
      `max ${attention.maxLogits?.failures ?? 0} over the bound ` +
      `(worst ratios ${worst(attention.out)}, ${worst(attention.lse)}, ${worst(attention.maxLogits)})`,
  ];
  return { ok: logits.ok && v.wrongRows === 0 && attention.ok, lines };
}

/** Rows of [rows][k] selections where `got` differs from `want` anywhere. */
export function dsaWrongSelectionRows(want: Int32Array, got: Int32Array, rows: number, k: number): number {
  let wrong = 0;
  for (let r = 0; r < rows; r++) if (want.subarray(r * k, (r + 1) * k).some((s, i) => s !== got[r * k + i])) wrong++;
  return wrong;
}
