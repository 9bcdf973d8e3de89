import type { SuiteCase } from './benchSuite.ts';
import type { BaselineReply, CheckReply, ErrorStats, PrepareReply, ReferenceStats } from './referenceProtocol.ts';
import { pickErrorBaseline, roundingModelErrors } from './validate/errorBaseline.ts';
import { judgeOutputs, type CaseVerdict, type OutputEvidence } from './validate/judgeOutputs.ts';

/** Where the tolerance came from when no torch baseline of the case's preference list ran. */
export const ROUNDING_MODEL = 'rounding model (no torch baseline ran)';

/**
 * A torch baseline whose rms error exceeds this share of the reference's rms is broken (a kernel
 * bug of torch's, seen with cuDNN on jagged backward): it sets no tolerance. Real fp16/bf16
 * attention and GEMM kernels err by well under 1%.
 */
export const BROKEN_RELATIVE_RMS = 2 ** -4;

/** A case's verdict, the baseline whose error set the limits, and each torch baseline's own verdict under the same limits. */
export interface CaseJudgement extends CaseVerdict {
  readonly against: string;
  readonly baselines: Readonly<Record<string, boolean>>;
}

/**
 * Judges one case: each output the case names in `precision` gets our error (the check), torch's
 * error on the same inputs (the first of the case's errorBaselines that ran and is not broken; else
 * the error of rounding the reference once) and the reference's size, and validate/judgeOutputs
 * decides. Every torch baseline that measured errors is judged by the same limits against the
 * prepare-time reference (a baseline faster than ours but wrong is not a result either).
 */
export function judgeCase(c: SuiteCase, prepared: PrepareReply, checked: CheckReply): CaseJudgement {
  const sound = Object.fromEntries(Object.entries(prepared.baselines).filter(([, b]) => !isBroken(b, prepared.reference)));
  const picked = pickErrorBaseline(sound, c.errorBaselines, Object.keys(c.precision));
  const torchErrors = (output: string, reference: ReferenceStats): ErrorStats =>
    picked?.errors[output] ?? roundingModelErrors({ [output]: reference }, c.precision[output]!)[output]!;
  const evidence = (
    errors: Readonly<Record<string, ErrorStats>>,
    references: Readonly<Record<string, ReferenceStats>>,
  ): Record<string, OutputEvidence> => {
    const out: Record<string, OutputEvidence> = {};
    for (const [output, precision] of Object.entries(c.precision)) {
      const reference = references[output];
      const ours = errors[output];
      if (reference === undefined || ours === undefined) throw new Error(`no error or reference for output ${output}`);
      out[output] = { ours, torch: torchErrors(output, reference), reference, precision };
    }
    return out;
  };
  const baselines: Record<string, boolean> = {};
  for (const [name, b] of Object.entries(prepared.baselines)) {
    if ('error' in b || Object.keys(b.errors).length === 0) continue;
    baselines[name] = judgeOutputs(evidence(b.errors, prepared.reference)).valid;
  }
  return { ...judgeOutputs(evidence(checked.errors, checked.reference)), against: picked?.name ?? ROUNDING_MODEL, baselines };
}

function isBroken(b: BaselineReply, reference: Readonly<Record<string, ReferenceStats>>): boolean {
  if ('error' in b) return true;
  return Object.entries(b.errors).some(([output, e]) => !(e.rms <= BROKEN_RELATIVE_RMS * (reference[output]?.rms ?? 0)));
}
