// Exact top-k selection on the CPU: the rule every selection kernel is checked against.

/** A batch of logit rows to select from. */
export interface DsaTopkRows {
  /** fp32 logits, row r at `r · rowStride`. */
  readonly logits: Float32Array;
  readonly rows: number;
  /** Elements between consecutive rows (≥ the longest row). */
  readonly rowStride: number;
  /** Valid prefix of each row (positions ≥ it are not candidates); default: every row has rowStride. */
  readonly lengths?: Int32Array | readonly number[];
  /** Tokens to keep per row (1 … 4096). */
  readonly k: number;
}

/** Whether a logit can be selected: not −∞ and not NaN (masked positions carry −∞). */
export function dsaIsCandidate(value: number): boolean {
  return value > Number.NEGATIVE_INFINITY;
}

/**
 * The selected positions of every row, [rows][k] int32: a row's candidates are its positions below
 * its length whose logit is neither −∞ nor NaN; the k largest by value are kept, ties going to the
 * lower position; they are listed in ascending position, then −1 fills the row when it had fewer
 * than k candidates. This canonical order is what the kernels write (so grouped by cache page).
 */
export function dsaTopkReference(input: DsaTopkRows): Int32Array {
  const { logits, rows, rowStride, k } = input;
  const out = new Int32Array(rows * k).fill(-1);
  for (let r = 0; r < rows; r++) {
    const length = input.lengths === undefined ? rowStride : Math.max(0, Math.min(rowStride, input.lengths[r]!));
    const base = r * rowStride;
    const candidates: number[] = [];
    for (let p = 0; p < length; p++) if (dsaIsCandidate(logits[base + p]!)) candidates.push(p);
    candidates.sort((x, y) => logits[base + y]! - logits[base + x]! || x - y);
    const kept = candidates.slice(0, k).sort((x, y) => x - y);
    out.set(kept, r * k);
  }
  return out;
}
