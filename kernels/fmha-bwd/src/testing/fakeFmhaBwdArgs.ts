// Launch arguments at fake device addresses for the CI specs that pack the backward kernels'
// launches without a GPU. Harness code for *.spec.ts; not exported by the package.
import type { AttentionTensorStrides, FmhaBwdArgs, CheckedFmhaBwdProblem } from '@tilekit/fmha';

/**
 * Backward args for `p`: every tensor (Q, K, V, O, dO, dQ, dK, dV) at 0x10000 with `strides`, LSE
 * at 0x2000 and D at 0x3000 in `p.lseStrides`, `p.scale`, the workspace at 0x9000; `extra`'s fields
 * (seqstarts, a score modifier's values) added last.
 */
export function fakeFmhaBwdArgs(p: CheckedFmhaBwdProblem, strides: AttentionTensorStrides, extra: object = {}): FmhaBwdArgs {
  const tensor = { ptr: 0x10000n, strides };
  return {
    q: tensor,
    k: tensor,
    v: tensor,
    o: tensor,
    dO: tensor,
    dQ: tensor,
    dK: tensor,
    dV: tensor,
    lse: { ptr: 0x2000n, strides: p.lseStrides },
    d: { ptr: 0x3000n, strides: p.lseStrides },
    scale: p.scale,
    workspace: 0x9000n,
    ...extra,
  };
}
