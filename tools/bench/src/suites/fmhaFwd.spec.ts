import type { AttentionTensorStrides } from '@tilekit/fmha';
import { fmhaFwdOperandElements, fmhaFwdProblemFlops } from '@tilekit/kernel-fmha-fwd';
import { describe, expect, it } from 'vitest';
import { attentionFileBytes, type AttentionTensorFile } from './attentionFileLayout.ts';
import { fmhaFwdBenchProblem } from './fmhaFwd.ts';
import { FMHA_FWD_BENCH_CASES, fmhaFwdTensorFiles, type FmhaFwdBenchShape } from './fmhaFwdCases.ts';

/** The strides a kernel uses (group mode has no batch stride). */
function used(s: AttentionTensorStrides, group: boolean): Partial<AttentionTensorStrides> {
  return group ? { head: s.head, row: s.row } : s;
}

/** Our problem reads each file where it lies: same strides, and the tensor spans the whole file. */
function expectReadsFiles(s: FmhaFwdBenchShape): void {
  const p = fmhaFwdBenchProblem(s);
  const files = fmhaFwdTensorFiles(s);
  const group = p.mode === 'group';
  const elements = fmhaFwdOperandElements(p);
  const tensors: [AttentionTensorStrides, AttentionTensorFile, number][] = [
    [p.qStrides, files.q, elements.q],
    [p.kStrides, files.k, elements.k],
    [p.vStrides, files.v, elements.v],
    [p.oStrides, files.o, elements.o],
  ];
  for (const [strides, file, span] of tensors) {
    expect(used(strides, group)).toEqual(used(file.strides, group));
    expect(2 * span).toBe(attentionFileBytes(file));
  }
}

describe('fmha-fwd suite', () => {
  it('every case makes a valid problem: varlen in group mode, split-KV auto, FLOPs as the case credits', () => {
    for (const c of FMHA_FWD_BENCH_CASES) {
      const p = fmhaFwdBenchProblem(c.shape);
      expect(p.mode).toBe(c.shape.seqlensQ !== undefined ? 'group' : 'batch');
      expect(p.splitKvAuto).toBe(true);
      expect(p.inputLayout).toBe(p.mode === 'group' ? 'bshd' : 'bhsd');
      expect(p.outputLayout).toBe(p.inputLayout);
      expect(fmhaFwdProblemFlops(p)).toBe(c.flops);
    }
  });

  it("every case's problem reads q, k, v and writes o in the files' own layout (uploaded and downloaded as they are)", () => {
    for (const c of FMHA_FWD_BENCH_CASES) expectReadsFiles(c.shape);
  });

  it('so does a small varlen GQA problem with an empty sequence and hdimV ≠ hdimQ', () => {
    expectReadsFiles({ dtype: 'bf16', b: 3, h: 4, hk: 2, d: 192, dv: 128, causal: false, seqlensQ: [5, 0, 9], seqlensK: [5, 3, 9] });
    expectReadsFiles({ dtype: 'fp16', b: 2, h: 4, hk: 1, d: 64, dv: 64, causal: false, sq: 3, sk: 70 });
  });
});
