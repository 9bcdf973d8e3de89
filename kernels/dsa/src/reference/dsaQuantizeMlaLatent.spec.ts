import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { decode } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaRandomMlaLatent, DSA_MLA_TILE_REGIMES, type DsaMlaTileRegime } from '../testing/dsaRandomMlaLatent.ts';
import { dsaDequantizeMlaLatent, dsaMlaTileScale, dsaQuantizeMlaLatent } from './dsaQuantizeMlaLatent.ts';

const ROW = 576;
const e4m3 = (bits: number): number => decode('fp8e4m3fn', bits);
const BF16_MAX = decode('bf16', 0x7f7f);

/** Independent e4m3fn encoder: the nearest finite magnitude by exhaustive search, ties to the even pattern, sign kept, saturating. */
const magnitudes = Array.from({ length: 0x7f }, (_, bits) => e4m3(bits));
function nearestE4m3(y: number): number {
  const magnitude = Math.abs(y);
  let best = 0;
  for (let bits = 1; bits <= 0x7e; bits++) {
    const d = Math.abs(magnitudes[bits]! - magnitude);
    const bestD = Math.abs(magnitudes[best]! - magnitude);
    if (d < bestD || (d === bestD && (bits & 1) === 0)) best = bits;
  }
  return (y < 0 || Object.is(y, -0) ? 0x80 : 0) | best;
}

/** Half the e4m3fn spacing at magnitude y (subnormal spacing 2^-9 below 2^-6). */
function halfUlpE4m3(y: number): number {
  return y < 2 ** -6 ? 2 ** -10 : 2 ** (Math.floor(Math.log2(y)) - 4);
}

/** One row with the given nope tiles (leading values, zeros elsewhere) and rope. */
function row(tiles: readonly (readonly number[])[], rope: readonly number[] = []): Float32Array {
  const r = new Float32Array(ROW);
  tiles.forEach((lead, t) => r.set(lead, t * 128));
  r.set(rope, 512);
  return r;
}

const latentArb = (regimes: readonly DsaMlaTileRegime[] = DSA_MLA_TILE_REGIMES) =>
  fc
    .record({ seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }), tokens: fc.integer({ min: 1, max: 4 }) })
    .map(({ seed, tokens }) => ({ tokens, latent: dsaRandomMlaLatent(tokens, new Prng(seed), regimes) }));

describe('dsaMlaTileScale', () => {
  it('is 2^⌈log2(max(amax / 448, 1e-4))⌉ (golden)', () => {
    expect(dsaMlaTileScale(448)).toBe(1);
    expect(dsaMlaTileScale(449)).toBe(2);
    expect(dsaMlaTileScale(224)).toBe(0.5);
    expect(dsaMlaTileScale(1)).toBe(2 ** -8); // 1/448 ∈ (2^-9, 2^-8]
    expect(dsaMlaTileScale(0)).toBe(2 ** -13); // the floor: 1e-4 ∈ (2^-14, 2^-13]
    expect(dsaMlaTileScale(0.0448)).toBe(2 ** -13);
    expect(dsaMlaTileScale(448 * 2 ** -13)).toBe(2 ** -13);
    expect(dsaMlaTileScale(448 * 2 ** -13 * 1.01)).toBe(2 ** -12);
    expect(dsaMlaTileScale(BF16_MAX)).toBe(2 ** 120);
  });

  it('is a power of two ≥ the fp32 ratio and below twice it', () => {
    fc.assert(
      fc.property(fc.float({ min: 0, max: Math.fround(3e38), noNaN: true }), (amax) => {
        const s = dsaMlaTileScale(amax);
        const r = Math.max(Math.fround(amax / 448), Math.fround(1e-4));
        expect(Number.isInteger(Math.log2(s))).toBe(true);
        expect(s).toBeGreaterThanOrEqual(r);
        expect(s / 2).toBeLessThan(r);
      }),
    );
  });

  it('rejects a negative or non-finite amax', () => {
    expect(() => dsaMlaTileScale(-1)).toThrow(DsaArgumentError);
    expect(() => dsaMlaTileScale(Infinity)).toThrow(/amax/);
  });
});

describe('dsaQuantizeMlaLatent', () => {
  it('encodes a golden row: RNE ties to even, subnormals, −0, per-tile scales, rope bits unchanged', () => {
    const lead = [448, 224, 1, -3.5, -0, 2 ** -9, 2 ** -10, 3 * 2 ** -10, 17, -19];
    const x = row([lead, [], lead.map((v) => v * 2 ** 20), [464, -1]], [1.5, -0, BF16_MAX, 2 ** -133, -2]);
    const q = dsaQuantizeMlaLatent(x, 1);
    expect(Array.from(q.scales)).toEqual([1, 2 ** -13, 2 ** 20, 2]);
    // 448 = 1.75·2^8, 224, 1, −3.5, −0, 2^-9 (smallest subnormal), 2^-10 (tie → 0), 1.5·2^-9 (tie → 2^-8), 17 (tie → 16), −19 (tie → −20).
    const golden = [0x7e, 0x76, 0x38, 0xc6, 0x80, 0x01, 0x00, 0x02, 0x58, 0xda];
    expect(Array.from(q.nope.subarray(0, 10))).toEqual(golden);
    expect(q.nope.subarray(10, 256).every((v) => v === 0)).toBe(true);
    expect(Array.from(q.nope.subarray(256, 266))).toEqual(golden);
    // 464 / 2 = 232 → 224 (a tie, to even); −1 / 2 = −0.5 → 0xb0.
    expect(Array.from(q.nope.subarray(384, 386))).toEqual([0x76, 0xb0]);
    expect(Array.from(q.rope.subarray(0, 5))).toEqual([0x3fc0, 0x8000, 0x7f7f, 0x0001, 0xc000]);
    const back = dsaDequantizeMlaLatent(q);
    expect(Array.from(back.subarray(0, 4))).toEqual([448, 224, 1, -3.5]);
    expect(Object.is(back[4], -0)).toBe(true);
    expect(back[9]).toBe(-20);
    expect(Array.from(back.subarray(384, 386))).toEqual([448, -1]);
    expect(Array.from(back.subarray(512, 517))).toEqual([1.5, -0, BF16_MAX, 2 ** -133, -2]);
  });

  it('gives a +0 tile zero bytes and scale 2^-13, a −0 tile 0x80 bytes; tokens 0 gives empty arrays', () => {
    const q = dsaQuantizeMlaLatent(row([[], Array<number>(128).fill(-0), [2 ** -133, -(2 ** -130)], []]), 1);
    expect(Array.from(q.scales)).toEqual([2 ** -13, 2 ** -13, 2 ** -13, 2 ** -13]);
    expect(q.nope.subarray(0, 128).every((v) => v === 0)).toBe(true);
    expect(q.nope.subarray(128, 256).every((v) => v === 0x80)).toBe(true);
    expect(Array.from(q.nope.subarray(256, 258))).toEqual([0x00, 0x80]); // bf16 subnormals underflow to ±0
    expect(dsaQuantizeMlaLatent(new Float32Array(0), 0).scales.length).toBe(0);
  });

  it('dequantizes a tile whose amax is the bf16 maximum to ±∞ (256 · 2^120 overflows), as the GPU does', () => {
    const q = dsaQuantizeMlaLatent(row([[BF16_MAX, -BF16_MAX, 2 ** 125]]), 1);
    expect(q.scales[0]).toBe(2 ** 120);
    expect(Array.from(q.nope.subarray(0, 3))).toEqual([0x78, 0xf8, 0x60]); // 255 → 256; 32
    expect(Array.from(dsaDequantizeMlaLatent(q).subarray(0, 3))).toEqual([Infinity, -Infinity, 2 ** 125]);
  });

  it('is e4m3(fp32(x / s)) by an independent encoder, with power-of-two scales and |e4m3| ≤ 448 (every regime)', () => {
    fc.assert(
      fc.property(latentArb(), ({ tokens, latent }) => {
        const q = dsaQuantizeMlaLatent(latent, tokens);
        for (let t = 0; t < tokens; t++) {
          for (let tile = 0; tile < 4; tile++) {
            const s = q.scales[t * 4 + tile]!;
            expect(Number.isInteger(Math.log2(s)) && s >= 2 ** -13).toBe(true);
            let amax = 0;
            for (let i = 0; i < 128; i++) {
              const x = latent[t * ROW + tile * 128 + i]!;
              amax = Math.max(amax, Math.abs(x));
              expect(q.nope[t * 512 + tile * 128 + i]).toBe(nearestE4m3(Math.fround(x / s)));
            }
            expect(s).toBe(dsaMlaTileScale(amax));
            expect(amax / s).toBeLessThanOrEqual(448);
            if (amax / 448 > 1e-4) expect(amax / s).toBeGreaterThanOrEqual(224);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('dequantizes within half an e4m3 ulp times the scale; the rope comes back exactly', () => {
    fc.assert(
      fc.property(latentArb(), ({ tokens, latent }) => {
        const q = dsaQuantizeMlaLatent(latent, tokens);
        const back = dsaDequantizeMlaLatent(q);
        for (let t = 0; t < tokens; t++) {
          for (let i = 0; i < 512; i++) {
            const x = latent[t * ROW + i]!;
            const s = q.scales[t * 4 + Math.floor(i / 128)]!;
            const y = back[t * ROW + i]!;
            if (!Number.isFinite(y)) {
              expect(Math.abs(x)).toBeGreaterThan(2 ** 127.9);
              continue;
            }
            expect(Math.abs(y - x)).toBeLessThanOrEqual(s * halfUlpE4m3(Math.abs(x / s)));
          }
          for (let i = 512; i < ROW; i++) expect(Object.is(back[t * ROW + i], latent[t * ROW + i])).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('scaling a tile by 2^j (above the floor, in range) scales its s by 2^j and keeps its bytes', () => {
    fc.assert(
      fc.property(latentArb(['normal']), fc.integer({ min: 0, max: 20 }), ({ tokens, latent }, j) => {
        const a = dsaQuantizeMlaLatent(latent, tokens);
        const b = dsaQuantizeMlaLatent(
          latent.map((v) => v * 2 ** j),
          tokens,
        );
        expect(Array.from(b.nope)).toEqual(Array.from(a.nope));
        expect(Array.from(b.scales)).toEqual(Array.from(a.scales, (s) => s * 2 ** j));
      }),
      { numRuns: 40 },
    );
  });

  it('rejects a bad count, a bad length, a non-finite or non-bf16 value; dequantize rejects NaN patterns and bad lengths', () => {
    expect(() => dsaQuantizeMlaLatent(new Float32Array(ROW), -1)).toThrow(/tokens/);
    expect(() => dsaQuantizeMlaLatent(new Float32Array(ROW), 2)).toThrow(/latent/);
    expect(() => dsaQuantizeMlaLatent(row([[Number.NaN]]), 1)).toThrow(/latent\[0\]/);
    expect(() => dsaQuantizeMlaLatent(row([], [1 + 2 ** -10]), 1)).toThrow(/latent\[512\].*bf16/);
    const q = dsaQuantizeMlaLatent(new Float32Array(ROW), 1);
    expect(() => dsaDequantizeMlaLatent({ ...q, nope: new Uint8Array(512).fill(0x7f) })).toThrow(/q\.nope\[0\]/);
    expect(() => dsaDequantizeMlaLatent({ ...q, scales: new Float32Array(3) })).toThrow(/q\.scales/);
    expect(() => dsaDequantizeMlaLatent({ ...q, rope: new Uint16Array(63) })).toThrow(DsaArgumentError);
  });
});
