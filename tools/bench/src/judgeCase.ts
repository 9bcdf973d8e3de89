import type { SuiteCase } from './benchSuite.ts';
import type { CheckReply, ErrorStats, PrepareReply } from './referenceProtocol.ts';
import { pickErrorBaseline, roundingModelErrors } from './validate/errorBaseline.ts';
import { judgeOutputs, type CaseVerdict, type OutputEvidence } from './validate/judgeOutputs.ts';

/** Where the tolerance came from when no torch baseline of the case's preference list ran. */
export const ROUNDING_MODEL = 'rounding model (no torch baseline ran)';

/**
 * Judges one case: each output the case names in `precision` gets our error (the check), torch's
 * error on the same inputs (the first of the case's errorBaselines that ran; else the error of
 * rounding the reference once) and the reference's size, and validate/judgeOutputs decides.
 */
export function judgeCase(c: SuiteCase, prepared: PrepareReply, checked: CheckReply): CaseVerdict & { readonly against: string } {
  const picked = pickErrorBaseline(prepared.baselines, c.errorBaselines);
  const evidence: Record<string, OutputEvidence> = {};
  for (const [output, precision] of Object.entries(c.precision)) {
    const reference = checked.reference[output];
    const ours = checked.errors[output];
    if (reference === undefined || ours === undefined) throw new Error(`the reference server did not check output ${output}`);
    const torch: ErrorStats | undefined = picked?.errors[output] ?? roundingModelErrors({ [output]: reference }, precision)[output];
    evidence[output] = { ours, torch: torch!, reference, precision };
  }
  return { ...judgeOutputs(evidence), against: picked?.name ?? ROUNDING_MODEL };
}
