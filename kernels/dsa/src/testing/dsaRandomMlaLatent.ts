// Seeded MLA latent KV rows for the FP8 latent-cache writer's tests: every tile drawn from one of several regimes.
import type { Prng } from '@tilekit/host';
import { decode, roundTo } from '@tilekit/numeric';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_MLA_LATENT_DIM, DSA_MLA_NOPE_DIM, DSA_MLA_ROPE_DIM, DSA_MLA_TILE, DSA_MLA_TILES } from '../dsaMlaCacheLayout.ts';

/**
 * How the values of one tile (128 nope values, or the 64 rope values) are drawn:
 * - `normal`: N(0, 1) · 2^u, u uniform in [−4, 4] per tile;
 * - `fullEntropy`: uniform over every finite bf16 bit pattern (±0, subnormals, up to ±3.39e38);
 * - `zero`: all +0; `signedZero`: ±0 at random;
 * - `huge`: N(0, 1) · 2^u, u uniform in [100, 120] per tile; `tiny`: u in [−30, −6] (the scale floor applies);
 * - `subnormal`: uniform over the bf16 subnormal patterns (and ±0);
 * - `extremes`: ±bf16 max, ±the smallest subnormal, ±0, ±448 · 2^k (k in [−20, 20]) at random.
 */
export type DsaMlaTileRegime = 'normal' | 'fullEntropy' | 'zero' | 'signedZero' | 'huge' | 'tiny' | 'subnormal' | 'extremes';

/** Every tile regime. */
export const DSA_MLA_TILE_REGIMES: readonly DsaMlaTileRegime[] = Object.freeze([
  'normal',
  'fullEntropy',
  'zero',
  'signedZero',
  'huge',
  'tiny',
  'subnormal',
  'extremes',
]);

const BF16_MAX = decode('bf16', 0x7f7f);
const BF16_MIN_SUBNORMAL = decode('bf16', 0x0001);

/** A uniformly random finite bf16 pattern (exponent not all ones). */
function finiteBf16Bits(rng: Prng): number {
  const bits = rng.nextInt(0, 0xffff);
  return (bits & 0x7f80) === 0x7f80 ? bits & 0x807f : bits;
}

function extreme(rng: Prng): number {
  const sign = rng.nextInt(0, 1) === 0 ? 1 : -1;
  const pick = rng.nextInt(0, 3);
  if (pick === 0) return sign * BF16_MAX;
  if (pick === 1) return sign * BF16_MIN_SUBNORMAL;
  if (pick === 2) return sign * 0;
  return sign * 448 * 2 ** rng.nextInt(-20, 20);
}

/** One value generator per regime (the per-tile exponent drawn once). */
function regimeValues(regime: DsaMlaTileRegime, rng: Prng): () => number {
  const scaled = (lo: number, hi: number): (() => number) => {
    const factor = 2 ** rng.nextRange(lo, hi);
    return () => roundTo('bf16', rng.nextNormal() * factor);
  };
  switch (regime) {
    case 'normal':
      return scaled(-4, 4);
    case 'huge':
      return scaled(100, 120);
    case 'tiny':
      return scaled(-30, -6);
    case 'fullEntropy':
      return () => decode('bf16', finiteBf16Bits(rng));
    case 'zero':
      return () => 0;
    case 'signedZero':
      return () => (rng.nextInt(0, 1) === 0 ? 0 : -0);
    case 'subnormal':
      return () => decode('bf16', rng.nextInt(0, 0xffff) & 0x807f);
    case 'extremes':
      return () => extreme(rng);
  }
}

/**
 * [tokens][576] latent KV rows as bf16 values in fp32 (512 nope, then 64 rope): each of a row's 4 nope tiles and its
 * rope part is drawn from a regime picked uniformly from `regimes` (default: all of {@link DSA_MLA_TILE_REGIMES}).
 * @throws DsaArgumentError for a bad token count or an empty or unknown regime list.
 */
export function dsaRandomMlaLatent(tokens: number, rng: Prng, regimes: readonly DsaMlaTileRegime[] = DSA_MLA_TILE_REGIMES): Float32Array {
  if (!Number.isSafeInteger(tokens) || tokens < 0) throw new DsaArgumentError('tokens', 'must be an integer ≥ 0', tokens);
  if (regimes.length === 0 || regimes.some((r) => !DSA_MLA_TILE_REGIMES.includes(r)))
    throw new DsaArgumentError('regimes', `must be a non-empty list of ${DSA_MLA_TILE_REGIMES.join(', ')}`, regimes);
  const out = new Float32Array(tokens * DSA_MLA_LATENT_DIM);
  const parts = [
    ...Array.from({ length: DSA_MLA_TILES }, (_, i) => [i * DSA_MLA_TILE, DSA_MLA_TILE]),
    [DSA_MLA_NOPE_DIM, DSA_MLA_ROPE_DIM],
  ];
  for (let t = 0; t < tokens; t++) {
    for (const [from, count] of parts) {
      const next = regimeValues(regimes[rng.nextInt(0, regimes.length - 1)]!, rng);
      for (let i = 0; i < count!; i++) out[t * DSA_MLA_LATENT_DIM + from! + i] = next();
    }
  }
  return out;
}
