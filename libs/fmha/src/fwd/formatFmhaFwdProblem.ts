// One log line describing a checked forward attention problem.
import { formatAttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import type { CheckedFmhaFwdProblem } from './fmhaFwdProblem.ts';

/** `fp16 batch 2x16/8h 8192x8192 d128/128 bhsd>bshd mask=t lse split4` — one line for logs. */
export function formatFmhaFwdProblem(problem: CheckedFmhaFwdProblem): string {
  const p = problem;
  const heads = p.nheadK === p.nheadQ ? `${p.nheadQ}h` : `${p.nheadQ}/${p.nheadK}h`;
  const seq =
    p.mode === 'group'
      ? `sq[${p.seqstartQ
          .slice(1)
          .map((e, b) => e - p.seqstartQ[b]!)
          .join(',')}] sk[${p.seqlensK.join(',')}]`
      : `${p.seqlenQ}x${p.seqlenK}`;
  const extras = [
    p.mask.kind === 'none' ? '' : `mask=${formatAttentionMaskSpec(p.mask)}`,
    p.lse ? 'lse' : '',
    p.splitKvAuto ? 'split=auto' : p.numSplits > 1 ? `split${p.numSplits}` : '',
  ].filter(Boolean);
  return [`${p.dtype} ${p.mode} ${p.batch}x${heads} ${seq} d${p.hdimQ}/${p.hdimV} ${p.inputLayout}>${p.outputLayout}`, ...extras].join(' ');
}
