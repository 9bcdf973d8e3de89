// The kernels' addressing, checked through the layout descriptors they are emitted from (layout's
// own tests prove emitted code == TS evaluation): every work item moves the right element, the
// tail guard is exact, and the transpose's shared-memory swizzle is a bijection without bank
// conflicts for the access patterns of both phases.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { headPermuteDescriptors, headPermuteWorkView } from './headPermuteKernel.ts';
import { transposeGlobalViews, transposeSharedViews, type TransposePolicy } from './transposeKernel.ts';
import { PERMUTE_CATALOG } from './permuteCatalog.ts';
import { TransposeInstance } from './permuteInstance.ts';

describe('head permute addressing', () => {
  test.prop(
    [
      fc.record({
        B: fc.integer({ min: 1, max: 3 }),
        X: fc.integer({ min: 1, max: 9 }),
        Y: fc.integer({ min: 1, max: 9 }),
        DV: fc.integer({ min: 1, max: 5 }),
        V: fc.constantFrom(1, 2, 4, 8),
        tile: fc.constantFrom(4, 16, 128),
        rows: fc.constantFrom(1, 2, 4),
      }),
    ],
    { numRuns: 40 },
  )('every work item (b, y, i, v) reads src[b, x, y, d] and writes dst[b, y, x, d]', ({ B, X, Y, DV, V, tile, rows }) => {
    const { src, dst } = headPermuteDescriptors(V);
    const bindings = { B, xdim: X, ydim: Y, dvec: DV };
    const from = headPermuteWorkView(src, V, tile, rows).bind(bindings);
    const to = headPermuteWorkView(dst, V, tile, rows).bind(bindings);
    const D = DV * V;
    const plane = Math.ceil((X * DV) / tile) * tile;
    const seen = new Set<number>();
    for (let b = 0; b < B; b++) {
      for (let y = 0; y < Math.ceil(Y / rows) * rows; y++) {
        for (let i = 0; i < plane; i++) {
          for (let v = 0; v < V; v++) {
            const s = from.evaluate([b, y, i, v]);
            const t = to.evaluate([b, y, i, v]);
            expect(s.valid).toBe(i < X * DV && y < Y);
            expect(t.valid).toBe(s.valid);
            if (!s.valid) continue;
            const x = Math.floor(i / DV);
            const d = (i % DV) * V + v;
            expect(s.offset).toBe(((b * X + x) * Y + y) * D + d);
            expect(t.offset).toBe(((b * Y + y) * X + x) * D + d);
            seen.add(t.offset);
          }
        }
      }
    }
    expect(seen.size).toBe(B * X * Y * D); // every output element written exactly once
  });
});

/** Bank-conflict degree of one warp-wide shared access: 1 = conflict-free. */
function conflictDegree(byteAddresses: readonly number[], accessBytes: number): number {
  // 16-byte accesses are served a quarter warp at a time, 8-byte a half warp, narrower the whole warp.
  const group = accessBytes === 16 ? 8 : accessBytes === 8 ? 16 : 32;
  let worst = 1;
  for (let g = 0; g < byteAddresses.length; g += group) {
    const words = new Map<number, Set<number>>();
    for (const a of byteAddresses.slice(g, g + group)) {
      for (let w = Math.floor(a / 4); w < Math.ceil((a + accessBytes) / 4); w++) {
        const bank = w % 32;
        if (!words.has(bank)) words.set(bank, new Set());
        words.get(bank)!.add(w);
      }
    }
    for (const s of words.values()) worst = Math.max(worst, s.size);
  }
  return worst;
}

const transposes = PERMUTE_CATALOG.filter((i): i is TransposeInstance => i instanceof TransposeInstance);

describe('transpose shared memory (xor swizzle)', () => {
  it.each(transposes.map((i) => [i.name, i.policy] as const))(
    '%s: both views address one bijective tile',
    (_name, policy: TransposePolicy) => {
      const { rows, columns } = transposeSharedViews(policy);
      const e = policy.dtype === 'fp32' ? 4 : 2;
      const V = policy.vectorBytes / e;
      const seen = new Set<number>();
      for (let m = 0; m < policy.tileM; m++) {
        for (let n = 0; n < policy.tileN; n++) {
          const off = rows.calculateOffset([m, n]);
          expect(columns.calculateOffset([Math.floor(m / V), m % V, n])).toBe(off);
          if (n % V === 0) {
            expect(off % V).toBe(0); // a vector starts aligned ...
            for (let w = 1; w < V; w++) expect(rows.calculateOffset([m, n + w])).toBe(off + w); // ... and is contiguous
          }
          seen.add(off);
        }
      }
      expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: policy.tileM * policy.tileN }, (_, k) => k));
    },
  );

  it.each(transposes.map((i) => [i.name, i.policy] as const))(
    '%s: phase 1 stores and phase 2 loads: no bank conflicts with 16-byte vectors, at most 2-way for scalars',
    (_name, policy: TransposePolicy) => {
      const { rows, columns } = transposeSharedViews(policy);
      const e = policy.dtype === 'fp32' ? 4 : 2;
      const V = policy.vectorBytes / e;
      const chunks = policy.tileN / V;
      let phase1 = 1;
      let phase2 = 1;
      for (let warp = 0; warp < policy.threads / 32; warp++) {
        const lanes = Array.from({ length: 32 }, (_, l) => warp * 32 + l);
        for (let k = 0; k < (policy.tileM * chunks) / policy.threads; k++) {
          const addresses = lanes.map((t) => {
            const idx = t + k * policy.threads;
            return rows.calculateOffset([Math.floor(idx / chunks), (idx % chunks) * V]) * e;
          });
          phase1 = Math.max(phase1, conflictDegree(addresses, policy.vectorBytes));
        }
        const run = policy.storeRun;
        const hi = policy.tileM / V / run;
        for (let k = 0; k < (policy.tileN * (policy.tileM / V)) / policy.threads; k++) {
          for (let j = 0; j < V; j++) {
            const addresses = lanes.map((t) => {
              const idx = t + k * policy.threads;
              const mvLo = idx % run;
              const nn = Math.floor(idx / run) % policy.tileN;
              const mvHi = Math.floor(idx / (run * policy.tileN)) % hi;
              return columns.calculateOffset([mvHi * run + mvLo, j, nn]) * e;
            });
            phase2 = Math.max(phase2, conflictDegree(addresses, e));
          }
        }
      }
      if (policy.vectorBytes === 16) {
        expect(phase1).toBe(1);
        expect(phase2).toBe(1);
      } else {
        expect(phase1).toBeLessThanOrEqual(2); // the scalar fallback: at most 2-way
        expect(phase2).toBeLessThanOrEqual(2);
      }
    },
  );

  test.prop([fc.integer({ min: 1, max: 150 }), fc.integer({ min: 1, max: 150 }), fc.constantFrom(...transposes)], { numRuns: 30 })(
    'global views: in-range elements map to src[m, n] and dst[n, m]; the padding is invalid',
    (m, n, instance) => {
      const V = instance.vectorElements;
      const M = Math.ceil(m / V) * V;
      const N = Math.ceil(n / V) * V;
      const { src, dst } = transposeGlobalViews(instance.policy);
      const s = src.bind({ mrows: M, ncols: N });
      const d = dst.bind({ mrows: M, ncols: N });
      const TM = instance.policy.tileM;
      const TN = instance.policy.tileN;
      for (let i = 0; i < Math.ceil(M / TM) * TM; i += 7) {
        for (let j = 0; j < Math.ceil(N / TN) * TN; j += 5) {
          const a = s.evaluate([i, j]);
          const b = d.evaluate([j, i]);
          expect(a.valid).toBe(i < M && j < N);
          expect(b.valid).toBe(a.valid);
          if (a.valid) {
            expect(a.offset).toBe(i * N + j);
            expect(b.offset).toBe(j * M + i);
          }
        }
      }
    },
  );
});
