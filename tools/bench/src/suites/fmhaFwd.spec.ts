import { referenceAttentionFwd } from '@tilekit/fmha';
import { fmhaFwdOperandElements, fmhaFwdReferenceArgs } from '@tilekit/kernel-fmha-fwd';
import { encode } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { checkSampledRows, fmhaFwdBenchProblem } from './fmhaFwd.ts';
import { FMHA_FWD_BENCH_SHAPES } from './fmhaFwdCases.ts';

describe('fmha-fwd suite', () => {
  it('every bench shape makes a valid problem (varlen in group mode, split-KV auto)', () => {
    for (const s of FMHA_FWD_BENCH_SHAPES) {
      const p = fmhaFwdBenchProblem(s);
      expect(p.mode).toBe(s.seqlensQ !== undefined ? 'group' : 'batch');
      expect(p.splitKvAuto).toBe(true);
    }
  });

  it('the sampled-row check accepts the CPU reference and rejects a wrong row (varlen, GQA, causal)', () => {
    const p = fmhaFwdBenchProblem({ dtype: 'bf16', b: 3, h: 4, hk: 2, d: 32, dv: 32, causal: true, seqlensQ: [5, 0, 9], seqlensK: [5, 3, 9] });
    const e = fmhaFwdOperandElements(p);
    let x = 3;
    const bits = (n: number) => Uint16Array.from({ length: n }, () => encode('bf16', ((x = (x * 48271) % 2147483647) / 2147483647) * 2 - 1));
    const data = { q: bits(e.q), k: bits(e.k), v: bits(e.v) };
    const ref = referenceAttentionFwd(fmhaFwdReferenceArgs(p, data));
    const o = Uint16Array.from(ref.o, (v) => encode('bf16', v));
    const good = checkSampledRows(p, { ...data, o });
    expect(good.wrong).toBe(0);
    // The first, the last and one more row per (sequence, head) (the third may repeat one); the empty sequence skipped.
    expect(good.checked).toBeGreaterThanOrEqual(4 * (2 + 2) * 32);
    expect(good.checked).toBeLessThanOrEqual(4 * (3 + 3) * 32);
    o[(5 + 8) * p.oStrides.row + 3 * p.oStrides.head + 7] = encode('bf16', 3);
    const bad = checkSampledRows(p, { ...data, o });
    expect(bad.wrong).toBe(1);
    expect(bad.first).toMatch(/^O\[b2 h3 r8 d7\]/);
  });
});
