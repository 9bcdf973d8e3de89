import { float32, gfx942, SourceBuilder } from '@tilekit/codegen';
import { BlockEmitter, makeDistributedTensor, makeTensorView, makeTileWindow, makeVectorLoadEncoding } from '@tilekit/tile';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceGemm } from '../reference/referenceGemm.ts';
import {
  evaluateMfma,
  evaluateMfmaBlockGemm,
  GFX942_LDS,
  iterateKEncoding,
  makeMfmaLdsLayout,
  MfmaBlockGemm,
  MfmaBlockGemmPolicyError,
  type MfmaBlockGemmPolicy,
} from './blockGemmMfma.ts';

const policies: readonly MfmaBlockGemmPolicy[] = [
  { dtype: 'fp16', tileM: 256, tileN: 128, tileK: 32, warpsM: 2, warpsN: 2 },
  { dtype: 'bf16', tileM: 128, tileN: 128, tileK: 32, warpsM: 2, warpsN: 2 },
  { dtype: 'fp16', tileM: 64, tileN: 64, tileK: 32, warpsM: 2, warpsN: 2 },
  { dtype: 'bf16', tileM: 128, tileN: 32, tileK: 64, warpsM: 4, warpsN: 1 },
];

/** Byte address → 16-byte bank quad (of the 8 in a 128-byte pass over the 32 × 4-byte banks). */
const quad = (elementOffset: number): number => Math.floor((elementOffset * 2) / 16) % ((GFX942_LDS.banks * GFX942_LDS.bankBytes) / 16);

describe('iterateKEncoding (CK IterateK: kIter MFMAs share one contiguous per-lane K run)', () => {
  it('MFMA i of the iterated A and B fragments pairs the same K values (so each MFMA sums real products)', () => {
    const atom = new MfmaBlockGemm(policies[0]!).atom;
    for (const kIter of [1, 2, 4]) {
      const a = iterateKEncoding(atom.a!.encoding, 1, kIter);
      const b = iterateKEncoding(atom.b!.encoding, 0, kIter);
      expect(a.xLengths).toEqual([32, 8 * kIter]);
      expect(b.xLengths).toEqual([8 * kIter, 32]);
      for (let i = 0; i < kIter; i++) {
        // The atom's K position kAtom (its lane/element) maps to one real K through A and the same through B.
        const seen = new Set<number>();
        for (let kAtom = 0; kAtom < 8; kAtom++) {
          const [la, va] = atom.a!.ownerOf([0, kAtom]);
          const [lb, vb] = atom.b!.ownerOf([kAtom, 0]);
          const kA = a.calculateXIndexFromD(a.partitionIndexOf(la), 4 * i + va)[1]!;
          const kB = b.calculateXIndexFromD(b.partitionIndexOf(lb), 4 * i + vb)[0]!;
          expect(kA).toBe(kB);
          seen.add(kA);
        }
        expect(seen.size).toBe(8);
      }
    }
  });

  it('rejects a bad kIter or K dim, naming it', () => {
    const atom = new MfmaBlockGemm(policies[0]!).atom;
    expect(() => iterateKEncoding(atom.a!.encoding, 1, 0)).toThrow(/kIter/);
    expect(() => iterateKEncoding(atom.a!.encoding, 2, 2)).toThrow(/kX/);
    expect(() => iterateKEncoding(atom.a!.encoding, 0, 2)).toThrow(MfmaBlockGemmPolicyError);
  });
});

describe('makeMfmaLdsLayout (K-contiguous 16-byte chunks, XOR-swizzled per 128-byte line)', () => {
  it('is a bijection onto [0, rows·k) whose 16-byte chunks stay contiguous and aligned', () => {
    fc.assert(
      fc.property(fc.constantFrom(8, 16, 32, 64), fc.integer({ min: 1, max: 8 }), fc.constantFrom('fp16', 'bf16'), (k, periods, dtype) => {
        const l = makeMfmaLdsLayout({ dtype, rows: (128 / (2 * k)) * (k / 8) * periods * 4, k });
        const seen = new Set<number>();
        for (let r = 0; r < l.rows; r++) {
          for (let c = 0; c < k; c += 8) {
            const o = l.descriptor.calculateOffset([r, c]);
            expect(o % 8).toBe(0);
            for (let j = 0; j < 8; j++) {
              expect(l.descriptor.calculateOffset([r, c + j])).toBe(o + j);
              seen.add(o + j);
            }
          }
        }
        expect(seen.size).toBe(l.elements);
        expect(Math.max(...seen)).toBe(l.elements - 1);
      }),
      { numRuns: 40 },
    );
  });

  it('golden: 64-byte rows, chunk q of row r at line ⌊r/2⌋, half r mod 2, chunk q XOR (⌊r/2⌋ mod 4)', () => {
    const l = makeMfmaLdsLayout({ dtype: 'fp16', rows: 256, k: 32 });
    for (const [r, q] of [
      [0, 0],
      [1, 3],
      [2, 0],
      [3, 1],
      [7, 2],
      [255, 3],
    ] as const) {
      const line = Math.floor(r / 2);
      expect(l.descriptor.calculateOffset([r, 8 * q]) * 2).toBe(line * 128 + (r % 2) * 64 + 16 * (q ^ (line % 4)));
    }
  });

  it.each(policies)(
    'fragment reads (ds_read_b128, 8 lanes per pass) hit 8 distinct bank quads; an unswizzled layout would not (%o)',
    (policy) => {
      const blk = new MfmaBlockGemm(policy);
      for (const [enc, lds] of [
        [blk.aEncoding, blk.aLds],
        [blk.bEncoding, blk.bLds],
      ] as const) {
        const packed = (r: number, c: number): number => r * lds.k + c;
        let unswizzledConflicts = 0;
        for (let wave = 0; wave < blk.waves; wave++) {
          for (let d0 = 0; d0 < enc.threadBufferSize; d0 += 8) {
            for (let pass = 0; pass < 64 / GFX942_LDS.b128LanesPerPass; pass++) {
              const lanes = Array.from(
                { length: GFX942_LDS.b128LanesPerPass },
                (_, j) => wave * 64 + pass * GFX942_LDS.b128LanesPerPass + j,
              );
              const xs = lanes.map((t) => enc.calculateXIndexFromD(enc.partitionIndexOf(t), d0) as [number, number]);
              expect(new Set(xs.map(([r, c]) => quad(lds.descriptor.calculateOffset([r, c])))).size).toBe(8);
              if (new Set(xs.map(([r, c]) => quad(packed(r, c)))).size < 8) unswizzledConflicts++;
            }
          }
        }
        expect(unswizzledConflicts).toBeGreaterThan(0);
      }
    },
  );

  it.each(policies)(
    'global → LDS writes of the coalesced load distribution (16-byte vectors) hit 8 distinct bank quads per pass (%o)',
    (policy) => {
      const blk = new MfmaBlockGemm(policy);
      for (const lds of [blk.aLds, blk.bLds]) {
        const enc = makeVectorLoadEncoding({ rows: lds.rows, cols: lds.k, vectorLength: 8, warpSize: 64, numWarps: blk.waves });
        for (let t0 = 0; t0 < blk.threads; t0 += 8) {
          for (let d0 = 0; d0 < enc.threadBufferSize; d0 += 8) {
            const quads = Array.from({ length: 8 }, (_, j) =>
              quad(lds.descriptor.calculateOffset(enc.calculateXIndexFromD(enc.partitionIndexOf(t0 + j), d0))),
            );
            expect(new Set(quads).size).toBe(8);
          }
        }
      }
    },
  );

  it('rejects non-2-byte types, rows that are no whole swizzle period and K that is no whole row of chunks', () => {
    expect(() => makeMfmaLdsLayout({ dtype: 'fp32', rows: 64, k: 32 })).toThrow(/2-byte/);
    expect(() => makeMfmaLdsLayout({ dtype: 'fp16', rows: 6, k: 32 })).toThrow(/rows/);
    expect(() => makeMfmaLdsLayout({ dtype: 'fp16', rows: 64, k: 12 })).toThrow(/k/);
    expect(() => makeMfmaLdsLayout({ dtype: 'fp16', rows: 64, k: 128 })).toThrow(MfmaBlockGemmPolicyError);
  });
});

describe('MfmaBlockGemm (gfx942 block GEMM: LDS A/B, C over a wave grid, transposed-C MFMA 32x32x8)', () => {
  it.each(policies)('distributions: C owned once per element, A replicated over N waves, B over M waves (%o)', (policy) => {
    const blk = new MfmaBlockGemm(policy);
    expect(blk.threads).toBe(64 * policy.warpsM * policy.warpsN);
    expect(blk.cEncoding.xLengths).toEqual([policy.tileM, policy.tileN]);
    expect(blk.accumulatorsPerThread).toBe(16 * blk.mIter * blk.nIter);
    for (const [m, n] of [
      [0, 0],
      [policy.tileM - 1, policy.tileN - 1],
      [33, 17],
    ] as const) {
      expect(blk.cEncoding.owners([m % policy.tileM, n % policy.tileN])).toHaveLength(1);
    }
    expect(blk.aEncoding.owners([policy.tileM - 1, policy.tileK - 1])).toHaveLength(policy.warpsN);
    expect(blk.bEncoding.owners([0, 0])).toHaveLength(policy.warpsM);
    // Transposed C: a lane's 4 consecutive accumulators are 4 consecutive N of one row.
    const xs = [0, 1, 2, 3].map((d) => blk.cEncoding.calculateXIndexFromD(blk.cEncoding.partitionIndexOf(5), d));
    expect(xs.map(([m]) => m)).toEqual([xs[0]![0], xs[0]![0], xs[0]![0], xs[0]![0]]);
    expect(xs.map(([, n]) => n! - xs[0]![1]!)).toEqual([0, 1, 2, 3]);
  });

  it('evaluateMfma: one MFMA by the atom tables is C + A·B', () => {
    const atom = new MfmaBlockGemm(policies[0]!).atom;
    const A = Array.from({ length: 32 }, (_, i) => Array.from({ length: 8 }, (_, k) => ((i * 3 + k * 5) % 7) - 3));
    const B = Array.from({ length: 8 }, (_, k) => Array.from({ length: 32 }, (_, j) => ((k * 2 + j) % 5) - 2));
    const lanes = (f: (lane: number, v: number) => number, n: number): number[][] =>
      Array.from({ length: 64 }, (_, l) => Array.from({ length: n }, (_, v) => f(l, v)));
    const a = lanes((l, v) => {
      const [i, k] = atom.a!.elementXIndex(l, v);
      return A[i!]![k!]!;
    }, 4);
    const b = lanes((l, v) => {
      const [k, j] = atom.b!.elementXIndex(l, v);
      return B[k!]![j!]!;
    }, 4);
    const c = lanes(() => 1, 16);
    const d = evaluateMfma(atom, a, b, c);
    for (let l = 0; l < 64; l++) {
      for (let e = 0; e < 16; e++) {
        const [i, j] = atom.c.elementXIndex(l, e);
        expect(d[l]![e]).toBe(1 + A[i!]!.reduce((s, x, k) => s + x * B[k]![j!]!, 0));
      }
    }
  });

  it.each(policies)('one K tile from swizzled LDS through the fragment registers and MFMAs equals referenceGemm (%o)', (policy) => {
    const blk = new MfmaBlockGemm(policy);
    const { tileM: M, tileN: N, tileK: K } = policy;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
        let s = seed;
        const rnd = (): number => {
          s = (s * 1103515245 + 12345) % 2 ** 31;
          return (s % 9) - 4;
        };
        const A = Array.from({ length: M * K }, rnd);
        const B = Array.from({ length: N * K }, rnd);
        const aLds = new Array<number>(blk.aLds.elements);
        const bLds = new Array<number>(blk.bLds.elements);
        for (let r = 0; r < M; r++) for (let k = 0; k < K; k++) aLds[blk.aLds.descriptor.calculateOffset([r, k])] = A[r * K + k]!;
        for (let r = 0; r < N; r++) for (let k = 0; k < K; k++) bLds[blk.bLds.descriptor.calculateOffset([r, k])] = B[r * K + k]!;
        const acc = evaluateMfmaBlockGemm(
          blk,
          aLds,
          bLds,
          Array.from({ length: blk.threads }, () => new Array<number>(blk.accumulatorsPerThread).fill(0)),
        );
        const ref = referenceGemm({ m: M, n: N, k: K, a: { data: A, layout: 'row' }, b: { data: B, layout: 'col' } });
        for (let t = 0; t < blk.threads; t++) {
          for (let d = 0; d < blk.accumulatorsPerThread; d++) {
            const [m, n] = blk.cEncoding.calculateXIndexFromD(blk.cEncoding.partitionIndexOf(t), d);
            if (acc[t]![d] !== ref[m! * N + n!])
              throw new Error(`thread ${t} acc[${d}] = C[${m}][${n}]: ${acc[t]![d]} vs ${ref[m! * N + n!]}`);
          }
        }
      }),
      { numRuns: 3 },
    );
  });

  it('rejects shapes it cannot do, naming the field', () => {
    const base = policies[1]!;
    expect(() => new MfmaBlockGemm({ ...base, dtype: 'fp32' })).toThrow(/dtype.*fp16 or bf16/);
    expect(() => new MfmaBlockGemm({ ...base, tileM: 96 })).toThrow(/tileM/);
    expect(() => new MfmaBlockGemm({ ...base, tileN: 48 })).toThrow(/tileN/);
    expect(() => new MfmaBlockGemm({ ...base, tileK: 24 })).toThrow(/tileK/);
    expect(() => new MfmaBlockGemm({ ...base, warpsM: 0 })).toThrow(/warpsM/);
    expect(() => new MfmaBlockGemm({ ...base, warpsM: 8, warpsN: 4, tileM: 256 })).toThrow(MfmaBlockGemmPolicyError);
  });

  it('emits one K tile as HIP: 16-byte LDS fragment reads, then kSteps·mIter·nIter·2 MFMA leaves on register slices (snapshot)', () => {
    const policy: MfmaBlockGemmPolicy = { dtype: 'fp16', tileM: 64, tileN: 64, tileK: 32, warpsM: 2, warpsN: 2 };
    const blk = new MfmaBlockGemm(policy);
    const src = new SourceBuilder({ dialect: gfx942, header: 'mfma block gemm step' });
    src.function(
      { name: 'block_gemm_step', qualifiers: gfx942.kernelQualifiers(), attributes: [gfx942.launchBounds(blk.threads)], params: {} },
      (b) => {
        const block = new BlockEmitter(b, gfx942, { numThreads: blk.threads });
        const half = gfx942.dtypeType('fp16');
        const aArr = block.shared('a_lds', half, blk.aLds.elements);
        const bArr = block.shared('b_lds', half, blk.bLds.elements);
        const aLds = makeTileWindow(block, {
          view: makeTensorView(aArr, blk.aLds.descriptor, { elementBytes: 2 }),
          lengths: [64, 32],
          origin: [0, 0],
        });
        const bLds = makeTileWindow(block, {
          view: makeTensorView(bArr, blk.bLds.descriptor, { elementBytes: 2 }),
          lengths: [64, 32],
          origin: [0, 0],
        });
        const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
        const aFrag = makeDistributedTensor(block, 'a_frag', blk.aEncoding, half);
        const bFrag = makeDistributedTensor(block, 'b_frag', blk.bEncoding, half);
        block.threads((t) => blk.emit(t, gfx942, { acc, aLds, bLds, aFrag, bFrag }));
      },
    );
    const text = src.render();
    expect(text.match(/tk_mfma_f32_32x32x8_f16\(&acc/g)).toHaveLength(blk.kSteps * blk.mIter * blk.nIter * blk.kIter);
    expect(text).toContain(
      'tk_mfma_f32_32x32x8_f16(&acc[0], reinterpret_cast<const unsigned int*>(&b_frag[0]), reinterpret_cast<const unsigned int*>(&a_frag[0]), &acc[0]);',
    );
    expect(text).toContain(
      'tk_mfma_f32_32x32x8_f16(&acc[0], reinterpret_cast<const unsigned int*>(&b_frag[4]), reinterpret_cast<const unsigned int*>(&a_frag[4]), &acc[0]);',
    );
    expect(text.match(/tk_vec<_Float16, 8>/g)?.length).toBeGreaterThanOrEqual(2);
    const entry = text.lastIndexOf('\n', text.indexOf('block_gemm_step('));
    expect(entry).toBeGreaterThan(0);
    expect(text.slice(entry + 1)).toMatchSnapshot();
  });
});
