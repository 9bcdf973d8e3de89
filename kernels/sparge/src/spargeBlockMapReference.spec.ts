import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spargeBlockMapReference, spargeKeyMean, spargePoolBlocks, spargeSelectRow } from './spargeBlockMapReference.ts';
import type { SpargeParams } from './spargeHyperparameters.ts';
import { decodeSpargeLut } from './spargeLut.ts';
import { spargeCausalBlockAllowed, type SpargeShape } from './spargeShape.ts';
import { spargeRandomValues } from './testing/spargeRandomValues.ts';

/**
 * Rows of random values plus, per block of 16 rows, a shared direction of random strength, so block
 * self-similarities spread over [0, 1] and the simthreshd1 judge flips both ways.
 */
function structured(batch: number, heads: number, seqlen: number, d: number, seed: number, strengthScale = 4): Float64Array {
  const noise = spargeRandomValues(batch * heads * seqlen * d, seed);
  const dirs = spargeRandomValues(batch * heads * Math.ceil(seqlen / 16) * (d + 1), seed + 1);
  const out = new Float64Array(noise.length);
  for (let bh = 0; bh < batch * heads; bh++) {
    for (let n = 0; n < seqlen; n++) {
      const g = bh * Math.ceil(seqlen / 16) + Math.floor(n / 16);
      const strength = strengthScale * Math.abs(dirs[g * (d + 1) + d]!);
      for (let c = 0; c < d; c++) out[(bh * seqlen + n) * d + c] = noise[(bh * seqlen + n) * d + c]! + strength * dirs[g * (d + 1) + c]!;
    }
  }
  return out;
}

/**
 * Upstream's block-map prediction (thu-ml/SpargeAttn `spas_sage_attn/utils.py`) transcribed literally
 * (Gram-matrix similarity, softmax, argsort, cumsum), nheadK = nhead.
 */
function digestPseudoCode(
  shape: Required<SpargeShape>,
  q: Float64Array,
  k: Float64Array,
  p: Required<Pick<SpargeParams, 'smoothK' | 'attentionSink' | 'isCausal' | 'blockQ' | 'blockK'>> & {
    topk?: number[];
    cdf?: number[];
    sim: number[];
  },
): Uint8Array {
  const { batch, nhead: H, seqlenQ: Nq, seqlenK: Nk, headDim: D } = shape;
  const { blockQ: BQ, blockK: BK } = p;
  const nQ = Math.ceil(Nq / BQ);
  const nK = Math.ceil(Nk / BK);
  const M = new Uint8Array(batch * H * nQ * nK);
  const poolsim = (x: number[][]): { pooled: number[]; sim: number } => {
    const pooled = Array.from({ length: D }, (_, c) => x.reduce((s, r) => s + r[c]!, 0) / x.length);
    const unit = x.map((r) => {
      const n = Math.hypot(...r);
      return r.map((v) => (n > 0 ? v / n : 0));
    });
    let gram = 0;
    for (const a of unit) for (const b of unit) gram += a.reduce((s, v, c) => s + v * b[c]!, 0);
    return { pooled, sim: gram / (x.length * x.length) };
  };
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < H; h++) {
      const rowsOf = (t: Float64Array, N: number): number[][] =>
        Array.from({ length: N }, (_, n) => Array.from(t.subarray(((b * H + h) * N + n) * D, ((b * H + h) * N + n + 1) * D)));
      const qr = rowsOf(q, Nq);
      let kr = rowsOf(k, Nk);
      if (p.smoothK) {
        const km = Array.from({ length: D }, (_, c) => kr.reduce((s, r) => s + r[c]!, 0) / Nk);
        kr = kr.map((r) => r.map((v, c) => v - km[c]!));
      }
      const qb = Array.from({ length: nQ }, (_, i) => poolsim(qr.slice(i * BQ, (i + 1) * BQ)));
      const kb = Array.from({ length: nK }, (_, j) => poolsim(kr.slice(j * BK, (j + 1) * BK)));
      const theta = p.sim[h]!;
      for (let i = 0; i < nQ; i++) {
        const C = (j: number): boolean => j < ((i + 1) * BQ) / BK;
        const row = kb.map((kj, j) =>
          !(kj.sim > theta) || (p.isCausal && !C(j))
            ? -Infinity
            : qb[i]!.pooled.reduce((s, v, c) => s + v * kj.pooled[c]!, 0) / Math.sqrt(D),
        );
        const max = Math.max(...row);
        const e = row.map((s) => Math.exp(s - max));
        const total = e.reduce((s, v) => s + v, 0);
        const prob = e.map((v) => (Number.isNaN(v / total) ? 0 : v / total));
        const order = prob.map((_, j) => j).sort((x, y) => prob[y]! - prob[x]! || x - y);
        let n: number;
        if (p.cdf !== undefined) {
          let c = 0;
          n = order.filter((j) => (c += prob[j]!) <= p.cdf![h]!).length;
        } else n = Math.trunc(p.topk![h]! * nK);
        n = Math.max(n, 1);
        const at = (j: number): number => ((b * H + h) * nQ + i) * nK + j;
        for (const j of order.slice(0, n)) M[at(j)] = 1;
        for (let j = 0; j < nK; j++) if (!(kb[j]!.sim > theta)) M[at(j)] = 1;
        if (!(qb[i]!.sim > theta)) for (let j = 0; j < nK; j++) M[at(j)] = 1;
        if (p.isCausal) for (let j = 0; j < nK; j++) if (!C(j)) M[at(j)] = 0;
        if (p.attentionSink) M[at(0)] = 1;
      }
    }
  }
  return M;
}

const caseArb = fc.record({
  batch: fc.integer({ min: 1, max: 2 }),
  nhead: fc.integer({ min: 1, max: 3 }),
  seqlenQ: fc.integer({ min: 1, max: 150 }),
  seqlenK: fc.integer({ min: 1, max: 150 }),
  blockQ: fc.constantFrom(16, 32, 64),
  blockK: fc.constantFrom(16, 32, 64),
  isCausal: fc.boolean(),
  smoothK: fc.boolean(),
  attentionSink: fc.boolean(),
  cdfMode: fc.boolean(),
  values: fc.array(fc.double({ min: 0.01, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }),
  sims: fc.array(fc.double({ min: -0.1, max: 0.9, noNaN: true }), { minLength: 3, maxLength: 3 }),
  seed: fc.integer({ min: 0, max: 1 << 30 }),
  qStrength: fc.constantFrom(0.5, 2, 8),
  kStrength: fc.constantFrom(0.5, 2, 8),
});

describe('spargeBlockMapReference', () => {
  it('equals the literal transcription of upstream on random inputs (partial tails, causal, per-head parameters)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const seqlenK = c.isCausal ? c.seqlenQ : c.seqlenK; // upstream's block-causal formula assumes Nq = Nk
        const shape = { batch: c.batch, nhead: c.nhead, nheadK: c.nhead, seqlenQ: c.seqlenQ, seqlenK, headDim: 64 };
        const q = structured(c.batch, c.nhead, c.seqlenQ, 64, c.seed, c.qStrength);
        const k = structured(c.batch, c.nhead, seqlenK, 64, c.seed + 7, c.kStrength);
        const perHead = (v: number[]): number[] => v.slice(0, c.nhead);
        const flags = { isCausal: c.isCausal, smoothK: c.smoothK, attentionSink: c.attentionSink, blockQ: c.blockQ, blockK: c.blockK };
        const got = spargeBlockMapReference({
          shape,
          q,
          k,
          params: {
            ...flags,
            simthreshd1: perHead(c.sims),
            ...(c.cdfMode ? { cdfthreshd: perHead(c.values) } : { topk: perHead(c.values) }),
          },
        });
        const want = digestPseudoCode(shape, q, k, {
          ...flags,
          sim: perHead(c.sims),
          ...(c.cdfMode ? { cdf: perHead(c.values) } : { topk: perHead(c.values) }),
        });
        // Rows whose selection sits within rounding of a threshold (τ equal to a cumulative mass,
        // two equal scores) may go either way between two summation orders: compare the others.
        const rows = got.scoreMargin.length;
        const cols = got.blockMap.map.length / rows;
        for (let r = 0; r < rows; r++) {
          if (got.scoreMargin[r]! < 1e-9 || got.massMargin[r]! < 1e-9) continue;
          expect(Array.from(got.blockMap.map.slice(r * cols, (r + 1) * cols))).toEqual(Array.from(want.slice(r * cols, (r + 1) * cols)));
        }
        expect(decodeSpargeLut(got.lut).map).toEqual(got.blockMap.map);
        const visited = got.lut.validBlockNum.reduce((a, b) => a + b, 0);
        let dense = 0;
        for (let i = 0; i < got.blockMap.qBlocks; i++)
          for (let j = 0; j < got.blockMap.kBlocks; j++)
            dense += !c.isCausal || spargeCausalBlockAllowed(i, j, c.blockQ, c.blockK, c.seqlenQ) ? c.batch * c.nhead : 0;
        expect(got.achievedSparsity).toBeCloseTo(1 - visited / dense, 12);
        for (const s of [...got.similarityQ, ...got.similarityK]) expect(Number.isNaN(s)).toBe(false);
      }),
      { numRuns: 60 },
    );
  });

  it('visits no block above the causal diagonal, keeps the sink and never leaves a row empty', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const shape = { batch: c.batch, nhead: c.nhead, seqlenQ: c.seqlenQ, seqlenK: c.seqlenQ, headDim: 64 };
        const q = structured(c.batch, c.nhead, c.seqlenQ, 64, c.seed);
        const k = structured(c.batch, c.nhead, c.seqlenQ, 64, c.seed + 3);
        const r = spargeBlockMapReference({
          shape,
          q,
          k,
          params: {
            topk: c.values[0]!,
            simthreshd1: c.sims[0]!,
            isCausal: true,
            attentionSink: c.attentionSink,
            blockQ: c.blockQ,
            blockK: c.blockK,
          },
        });
        const { qBlocks, kBlocks, map } = r.blockMap;
        for (let row = 0; row < c.batch * c.nhead * qBlocks; row++) {
          const i = row % qBlocks;
          expect(r.lut.validBlockNum[row]!).toBeGreaterThanOrEqual(1);
          if (c.attentionSink) expect(map[row * kBlocks]).toBe(1);
          for (let j = 0; j < kBlocks; j++)
            if (!spargeCausalBlockAllowed(i, j, c.blockQ, c.blockK, c.seqlenQ)) expect(map[row * kBlocks + j]).toBe(0);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('K smoothing leaves the selection unchanged when the similarity judge is off (softmax is shift-invariant per row)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const shape = { batch: 1, nhead: c.nhead, seqlenQ: c.seqlenQ, seqlenK: c.seqlenK, headDim: 64 };
        const q = structured(1, c.nhead, c.seqlenQ, 64, c.seed);
        const k = structured(1, c.nhead, c.seqlenK, 64, c.seed + 5);
        const params = { topk: c.values[0]!, simthreshd1: -0.1, attentionSink: false, blockQ: c.blockQ, blockK: c.blockK };
        const on = spargeBlockMapReference({ shape, q, k, params: { ...params, smoothK: true } });
        const off = spargeBlockMapReference({ shape, q, k, params: { ...params, smoothK: false } });
        for (let row = 0; row < on.scoreMargin.length; row++) {
          if (Math.min(on.scoreMargin[row]!, off.scoreMargin[row]!) < 1e-9) continue; // a near-tie may flip by rounding
          const kb = on.blockMap.kBlocks;
          expect(Array.from(on.blockMap.map.subarray(row * kb, (row + 1) * kb))).toEqual(
            Array.from(off.blockMap.map.subarray(row * kb, (row + 1) * kb)),
          );
        }
      }),
      { numRuns: 40 },
    );
  });

  it('K smoothing makes the similarity judge see past a common key offset (golden)', () => {
    const n = 256;
    const k = spargeRandomValues(n * 64, 5);
    for (let t = 0; t < n; t++) k[t * 64] = k[t * 64]! + 50; // every key shares a large component
    const q = spargeRandomValues(n * 64, 6);
    const shape = { batch: 1, nhead: 1, seqlenQ: n, seqlenK: n, headDim: 64 };
    const params = { topk: 0.25, simthreshd1: 0.5, blockQ: 64, blockK: 64, attentionSink: false } as const;
    const raw = spargeBlockMapReference({ shape, q, k, params: { ...params, smoothK: false } });
    const smooth = spargeBlockMapReference({ shape, q, k, params: { ...params, smoothK: true } });
    for (const s of raw.similarityK) expect(s).toBeGreaterThan(0.99);
    for (const s of smooth.similarityK) expect(s).toBeLessThan(0.1);
    // Smoothed: every K block is a fix block, so every block is visited; raw: one selected block per row (Q blocks are fix rows too).
    expect(smooth.achievedSparsity).toBe(0);
    expect(Array.from(spargeKeyMean(k, 1, 1, n, 64).subarray(0, 1))[0]).toBeCloseTo(50, 0);
  });

  it('a partial tail block pools over its real rows; upstreamFix makes it a fix block as upstream', () => {
    const shape = { batch: 1, nhead: 1, seqlenQ: 200, seqlenK: 200, headDim: 64 };
    const q = structured(1, 1, 200, 64, 11);
    const k = structured(1, 1, 200, 64, 12);
    const params = { topk: 0.25, simthreshd1: -0.1, blockQ: 64, blockK: 64, attentionSink: false, smoothK: false } as const;
    const ours = spargeBlockMapReference({ shape, q, k, params });
    const upstream = spargeBlockMapReference({ shape, q, k, params: { ...params, tailBlockRule: 'upstreamFix' } });
    expect(Number.isNaN(ours.similarityK[3]!)).toBe(false);
    expect(Number.isNaN(upstream.similarityK[3]!)).toBe(true);
    for (let i = 0; i < 4; i++) expect(upstream.blockMap.map[i * 4 + 3]).toBe(1); // fix column
    expect(Array.from(upstream.blockMap.map.subarray(12, 16))).toEqual([1, 1, 1, 1]); // fix row
    expect(ours.lut.validBlockNum[3]).toBe(1);
    // The tail's pooled token is the mean of its 8 real rows.
    for (let c = 0; c < 64; c++) {
      let sum = 0;
      for (let t = 192; t < 200; t++) sum += k[t * 64 + c]!;
      expect(ours.pooledK[3 * 64 + c]).toBeCloseTo(sum / 8, 12);
    }
  });

  it('reads the K head of its GQA group', () => {
    const shape = { batch: 1, nhead: 4, nheadK: 2, seqlenQ: 128, seqlenK: 128, headDim: 64 };
    const q = structured(1, 4, 128, 64, 1);
    const k = structured(1, 2, 128, 64, 2);
    const r = spargeBlockMapReference({ shape, q, k, params: { topk: 0.25, blockQ: 32, blockK: 32 } });
    const kOfHead1 = k.slice(128 * 64);
    const alone = spargeBlockMapReference({
      shape: { ...shape, nhead: 1, nheadK: 1 },
      q: q.slice(3 * 128 * 64),
      k: kOfHead1,
      params: { topk: 0.25, blockQ: 32, blockK: 32 },
    });
    expect(Array.from(r.blockMap.map.subarray(3 * 16))).toEqual(Array.from(alone.blockMap.map));
  });
});

describe('spargePoolBlocks', () => {
  it('similarity is the mean of the Gram matrix of the normalized rows, in [0, 1], zero rows included', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom(4, 8, 16),
        fc.integer({ min: 0, max: 1 << 30 }),
        fc.boolean(),
        (seqlen, block, seed, withZero) => {
          const d = 8;
          const x = spargeRandomValues(seqlen * d, seed);
          if (withZero) x.fill(0, 0, d);
          const { pooled, similarity } = spargePoolBlocks(x, 0, seqlen, d, block, null);
          for (let blk = 0; blk < similarity.length; blk++) {
            const rows = Array.from({ length: Math.min(block, seqlen - blk * block) }, (_, r) =>
              Array.from(x.subarray((blk * block + r) * d, (blk * block + r + 1) * d)),
            );
            const unit = rows.map((r) => r.map((v) => v / (Math.hypot(...r) || 1)));
            let gram = 0;
            for (const a of unit) for (const b of unit) gram += a.reduce((s, v, c) => s + v * b[c]!, 0);
            expect(similarity[blk]!).toBeCloseTo(gram / rows.length ** 2, 12);
            expect(similarity[blk]!).toBeGreaterThanOrEqual(0);
            expect(similarity[blk]!).toBeLessThanOrEqual(1 + 1e-12);
            for (let c = 0; c < d; c++) expect(pooled[blk * d + c]!).toBeCloseTo(rows.reduce((s, r) => s + r[c]!, 0) / rows.length, 12);
          }
        },
      ),
    );
  });
});

describe('spargeSelectRow', () => {
  it('cdf mode keeps the largest prefix with cumulative mass ≤ τ (upstream, one fewer than the CK port)', () => {
    const scores = Float64Array.from([Math.log(0.2), Math.log(0.5), -Infinity, Math.log(0.3)]);
    expect(spargeSelectRow(scores, 'cdf', 0.85).selected).toEqual([1, 3]); // c = 0.5, 0.8, 1.0; CK's "c ≥ τ" would take 3
    expect(spargeSelectRow(scores, 'cdf', 0.79).selected).toEqual([1]);
    expect(spargeSelectRow(scores, 'cdf', 0.1).selected).toEqual([1]); // n = 0 promoted to 1
    expect(spargeSelectRow(scores, 'cdf', 1).selected).toEqual([0, 1, 3]);
    expect(spargeSelectRow(scores, 'cdf', 0.85).massMargin).toBeCloseTo(0.05, 12);
  });

  it('topk mode takes ⌊topk·nK⌋ over all key blocks, ties to the lower index, at most the candidates', () => {
    const scores = Float64Array.from([1, 3, 3, -Infinity, 2, 3]);
    expect(spargeSelectRow(scores, 'topk', 0.34).selected).toEqual([1, 2]);
    expect(spargeSelectRow(scores, 'topk', 0.5).selected).toEqual([1, 2, 5]);
    expect(spargeSelectRow(scores, 'topk', 0.5).scoreMargin).toBe(1);
    expect(spargeSelectRow(scores, 'topk', 0.34).scoreMargin).toBe(0);
    expect(spargeSelectRow(scores, 'topk', 1).selected).toEqual([0, 1, 2, 4, 5]);
    expect(spargeSelectRow(Float64Array.from([-Infinity, -Infinity]), 'topk', 1).selected).toEqual([]);
  });
});

describe('spargeCausalBlockAllowed', () => {
  it('equals upstream j < (i + 1)·BLKQ/BLKK when seqlenQ = seqlenK', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2000 }),
        fc.constantFrom(16, 32, 64, 128, 256),
        fc.constantFrom(16, 32, 64, 128, 256),
        (n, bq, bk) => {
          for (let i = 0; i < Math.ceil(n / bq); i++)
            for (let j = 0; j < Math.ceil(n / bk); j++) expect(spargeCausalBlockAllowed(i, j, bq, bk, n)).toBe(j < ((i + 1) * bq) / bk);
        },
      ),
      { numRuns: 50 },
    );
  });
});
