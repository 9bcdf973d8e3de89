import type { AttentionTensorStrides } from '@tilekit/fmha';
import { FMHA_BWD_TENSORS, fmhaBwdOperandElements, fmhaBwdProblemFlops, type FmhaBwdTensor } from '@tilekit/kernel-fmha-bwd';
import { checkFmhaFwdProblem } from '@tilekit/kernel-fmha-fwd';
import { describe, expect, it } from 'vitest';
import { attentionForwardFlops } from '../flops.ts';
import { attentionFileBytes } from './attentionFileLayout.ts';
import { fmhaBwdBenchProblem, fmhaBwdForwardProblem } from './fmhaBwd.ts';
import { FMHA_BWD_BENCH_CASES, fmhaBwdTensorFiles, type FmhaBwdBenchShape } from './fmhaBwdCases.ts';

/** The strides a kernel uses (group mode has no batch stride). */
function used(s: AttentionTensorStrides, group: boolean): Partial<AttentionTensorStrides> {
  return group ? { head: s.head, row: s.row } : s;
}

/** Which file each tensor of the backward is read from or written to (O lies like dO). */
const FILE_OF: Readonly<Record<FmhaBwdTensor, 'q' | 'k' | 'v' | 'do' | 'dq' | 'dk' | 'dv'>> = {
  q: 'q',
  k: 'k',
  v: 'v',
  o: 'do',
  dO: 'do',
  dQ: 'dq',
  dK: 'dk',
  dV: 'dv',
};

/** Our backward reads and writes every file where it lies, and our forward writes O and LSE where the backward reads them. */
function expectReadsFiles(s: FmhaBwdBenchShape): void {
  const p = fmhaBwdBenchProblem(s);
  const files = fmhaBwdTensorFiles(s);
  const group = p.mode === 'group';
  const elements = fmhaBwdOperandElements(p);
  for (const t of FMHA_BWD_TENSORS) {
    expect(used(p.strides[t], group)).toEqual(used(files[FILE_OF[t]].strides, group));
    expect(2 * elements[t]).toBe(attentionFileBytes(files[FILE_OF[t]]));
  }
  const fwd = checkFmhaFwdProblem(fmhaBwdForwardProblem(p));
  expect(fwd.lse).toBe(true);
  expect([fwd.qStrides, fwd.kStrides, fwd.vStrides, fwd.oStrides]).toEqual([p.strides.q, p.strides.k, p.strides.v, p.strides.o]);
  expect(fwd.lseStrides).toEqual(p.lseStrides);
  expect({ mode: fwd.mode, scale: fwd.scale, mask: fwd.mask, seqstartQ: fwd.seqstartQ, seqstartK: fwd.seqstartK }).toEqual({
    mode: p.mode,
    scale: p.scale,
    mask: p.mask,
    seqstartQ: p.seqstartQ,
    seqstartK: p.seqstartK,
  });
}

describe('fmha-bwd suite', () => {
  it('every case makes a valid problem: varlen in group mode (bshd = the (Σs, h, d) files), bhsd otherwise; FLOPs 2.5 × the forward', () => {
    for (const c of FMHA_BWD_BENCH_CASES) {
      const p = fmhaBwdBenchProblem(c.shape);
      expect(p.mode).toBe(c.shape.seqlens !== undefined ? 'group' : 'batch');
      expect([p.inputLayout, p.outputLayout]).toEqual(p.mode === 'group' ? ['bshd', 'bshd'] : ['bhsd', 'bhsd']);
      expect(p.deterministic).toBe(c.shape.deterministic);
    }
    const dense = fmhaBwdBenchProblem(FMHA_BWD_BENCH_CASES[3]!.shape);
    expect(fmhaBwdProblemFlops(dense)).toBe(2.5 * attentionForwardFlops({ b: 2, h: 16, sq: 8192, sk: 8192, dQk: 128, causal: true }));
  });

  it("every case's problem reads q, k, v, do and writes dq, dk, dv in the files' own layout; the forward matches it", () => {
    for (const c of FMHA_BWD_BENCH_CASES) expectReadsFiles(c.shape);
  });

  it('so does a small varlen problem with an empty sequence', () => {
    expectReadsFiles({ dtype: 'bf16', b: 3, h: 2, d: 64, causal: true, deterministic: true, seqlens: [5, 0, 9] });
  });
});
