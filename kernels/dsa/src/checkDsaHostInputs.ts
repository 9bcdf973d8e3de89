// Host-side checks of the per-query arrays the kernels read from the device (they clamp what they
// read, so a bad window or length never faults, but it is still the caller's bug): run them on the
// host copies before uploading.
import { ArgumentProblems } from '@tilekit/numeric';
import { DsaArgumentError } from './dsaArgumentError.ts';

/**
 * Checks prefill windows: for every query t, 0 ≤ windowStart[t] ≤ windowEnd[t] ≤ seqKv (an empty
 * window is allowed: its row is all −∞), both arrays of length seqQ.
 * @throws DsaArgumentError naming every broken entry (`windowStart[t]`, `windowEnd[t]`) and its rule.
 */
export function checkDsaPrefillWindows(windowStart: ArrayLike<number>, windowEnd: ArrayLike<number>, seqQ: number, seqKv: number): void {
  const v = new ArgumentProblems(DsaArgumentError);
  if (windowStart.length !== seqQ) v.report('windowStart', `must hold seqQ = ${seqQ} entries`, windowStart.length);
  if (windowEnd.length !== seqQ) v.report('windowEnd', `must hold seqQ = ${seqQ} entries`, windowEnd.length);
  v.throwIfAny();
  for (let t = 0; t < seqQ; t++) {
    const s = windowStart[t]!;
    const e = windowEnd[t]!;
    if (!Number.isInteger(s) || s < 0 || s > seqKv) v.report(`windowStart[${t}]`, `must be an integer in [0, seqKv = ${seqKv}]`, s);
    else if (!Number.isInteger(e) || e < s || e > seqKv)
      v.report(`windowEnd[${t}]`, `must be an integer in [windowStart[${t}] = ${s}, seqKv = ${seqKv}]`, e);
  }
  v.throwIfAny();
}

/**
 * Checks decode context lengths: batch entries, each an integer in [0, maxContext] (a sequence's
 * tokens including this step's nextN; positions from maxContext on are not computed).
 * @throws DsaArgumentError naming every broken entry (`contextLens[b]`) and its rule.
 */
export function checkDsaContextLens(contextLens: ArrayLike<number>, batch: number, maxContext: number): void {
  const v = new ArgumentProblems(DsaArgumentError);
  if (contextLens.length !== batch) v.report('contextLens', `must hold batch = ${batch} entries`, contextLens.length);
  v.throwIfAny();
  for (let b = 0; b < batch; b++) {
    const l = contextLens[b]!;
    if (!Number.isInteger(l) || l < 0 || l > maxContext)
      v.report(`contextLens[${b}]`, `must be an integer in [0, maxContext = ${maxContext}]`, l);
  }
  v.throwIfAny();
}
