// Why a forward attention instance (dense or sparse) cannot run a problem.
import type { FmhaFwdLaunchProblem, FmhaFwdMaskKind, FmhaFwdWsPolicy } from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';
import { fmhaFwdQkvStrides } from './fmhaFwdQkvStrides.ts';

/** What {@link fmhaFwdUnsupported} reads of an instance's policy. */
export interface FmhaFwdSupportPolicy extends Pick<FmhaFwdWsPolicy, 'dtype' | 'headDim' | 'headDimV'> {
  readonly mask: FmhaFwdMaskKind;
  readonly splitKv: boolean;
  /** The score modifier the kernel applies (absent: none). */
  readonly scoreModifier?: { readonly tag: string };
  /** The Q·Kᵀ source: with `clusterCtas`, that many CTAs of a cluster split O's columns (the kernel's d_v is headDimV × clusterCtas). */
  readonly qkSource?: { readonly clusterCtas?: number };
}

/** Why `instance` cannot run `p` (one line per broken predicate); empty when it can. */
export function fmhaFwdUnsupported(instance: { readonly policy: FmhaFwdSupportPolicy }, p: FmhaFwdLaunchProblem): string[] {
  const P = instance.policy;
  const out: string[] = [];
  const e = getDType(p.dtype).bytes;
  if (p.dtype !== P.dtype) out.push(`dtype ${p.dtype}: this kernel computes ${P.dtype}`);
  const ctas = P.qkSource?.clusterCtas ?? 1;
  if (p.hdimQ !== P.headDim || p.hdimV !== P.headDimV * ctas)
    out.push(`head dims ${p.hdimQ}/${p.hdimV}: this kernel has ${P.headDim}/${P.headDimV * ctas}`);
  if (p.nheadQ * ctas > 65535)
    out.push(`${p.nheadQ} query heads: a cluster of ${ctas} CTAs per head allows at most ${Math.floor(65535 / ctas)}`);
  const masked = p.mask.kind !== 'none';
  if (p.mask.kind === 'generic') out.push('a generic (y, x) mask: this kernel takes window masks (left, right) only');
  else if (masked !== (P.mask === 'window'))
    out.push(masked ? 'a masked problem: this kernel has no mask' : 'no mask: this kernel applies a window mask');
  if (p.numSplits > 1 !== P.splitKv)
    out.push(
      p.numSplits > 1 ? `${p.numSplits} key splits: this kernel does not split` : 'one key split: this kernel writes split partials',
    );
  const kernelScore = P.scoreModifier?.tag;
  if (p.scoreModifier !== kernelScore)
    out.push(
      kernelScore === undefined
        ? `score modifier ${p.scoreModifier}: this kernel applies none`
        : `${p.scoreModifier === undefined ? 'no score modifier' : `score modifier ${p.scoreModifier}`}: this kernel applies ${kernelScore}`,
    );
  for (const { name, what, stride } of fmhaFwdQkvStrides(p)) {
    if ((stride * e) % 16 !== 0)
      out.push(`${name} ${what} stride · ${e} = ${stride * e} bytes is not a multiple of 16 (TMA global stride)`);
    if (stride * e >= 2 ** 40) out.push(`${name} ${what} stride · ${e} bytes reaches 2^40 (TMA)`);
  }
  if (p.oStrides.row % 2 !== 0) out.push(`o row stride ${p.oStrides.row} is odd (the epilogue stores element pairs)`);
  if (p.oStrides.row > 2 ** 31 - 1) out.push('o row stride exceeds int32');
  return out;
}
