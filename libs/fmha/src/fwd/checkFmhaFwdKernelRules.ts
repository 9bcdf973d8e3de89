// The rules every sm_90a / sm_80 forward kernel puts on a problem beyond the operator's own
// checks (shared by the dense forward and FFPA runners).
import { ArgumentProblems, getDType } from '@tilekit/numeric';
import { formatAttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import { FmhaFwdArgumentError } from './fmhaFwdArgumentError.ts';
import type { CheckedFmhaFwdProblem } from './fmhaFwdProblem.ts';

/**
 * The rules every forward kernel puts on a valid problem (the predicates all instances share, so
 * that a problem breaking one is an argument error, not a missing instance): a window mask or none
 * (no generic (y, x) mask); Q, K and V strides whose bytes are multiples of 16 below 2^40 (TMA and
 * cp.async rows); an even O row stride below 2^31 (element-pair stores). Throws one
 * `FmhaFwdArgumentError` naming every broken `problem.mask` / `problem.<x>Strides.<dim>`.
 */
export function checkFmhaFwdKernelRules(p: CheckedFmhaFwdProblem): void {
  const v = new ArgumentProblems(FmhaFwdArgumentError);
  const e = getDType(p.dtype).bytes;
  if (p.mask.kind === 'generic')
    v.report(
      'problem.mask',
      'must be a window mask or none: the forward kernels take no generic (y, x) mask',
      formatAttentionMaskSpec(p.mask),
    );
  for (const [name, s] of [
    ['qStrides', p.qStrides],
    ['kStrides', p.kStrides],
    ['vStrides', p.vStrides],
  ] as const) {
    for (const dim of ['row', 'head', 'batch'] as const) {
      if ((s[dim] * e) % 16 !== 0)
        v.report(
          `problem.${name}.${dim}`,
          `times the element size (${e} bytes) must be a multiple of 16 bytes (the kernels load 16-byte rows)`,
          s[dim],
        );
      else if (s[dim] * e >= 2 ** 40) v.report(`problem.${name}.${dim}`, 'times the element size must stay below 2^40 bytes (TMA)', s[dim]);
    }
  }
  if (p.oStrides.row % 2 !== 0) v.report('problem.oStrides.row', 'must be even (the kernels store O in element pairs)', p.oStrides.row);
  else if (p.oStrides.row > 2 ** 31 - 2) v.report('problem.oStrides.row', 'must fit in int32', p.oStrides.row);
  v.throwIfAny();
}
