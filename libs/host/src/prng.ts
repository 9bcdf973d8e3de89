import { ArgumentError } from '@tilekit/numeric';

const MASK64 = (1n << 64n) - 1n;
const GOLDEN_GAMMA = 0x9e3779b97f4a7c15n;
const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;

/** A seed: any integer; numbers must be safe integers, bigints are taken modulo 2^64. */
export type Seed = number | bigint;

/** CK-tile examples' default `-seed` (fmha_fwd, fill.hpp). */
export const DEFAULT_SEED = 11939;

/**
 * SplitMix64 (Steele, Lea & Flood 2014, as in Vigna's reference `splitmix64.c`): a 64-bit state
 * advanced by the golden-ratio increment 0x9e3779b97f4a7c15, each output a bijective mix of the
 * state (xor-shift 30, ×0xbf58476d1ce4e5b9, xor-shift 27, ×0x94d049bb133111eb, xor-shift 31).
 * Used here only to expand a seed into xoshiro state, so it runs on bigint for clarity.
 * Postcondition (golden-tested): seed 1234567 yields 6457827717110365317, 3203168211198807973, …
 */
export class SplitMix64 {
  private state: bigint;

  constructor(seed: Seed) {
    this.state = seedToUint64(seed);
  }

  /** The next 64-bit output as an unsigned bigint in [0, 2^64). */
  next(): bigint {
    this.state = (this.state + GOLDEN_GAMMA) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  }
}

/**
 * The package's reproducible pseudo-random generator: xoshiro128** 1.1 (Blackman & Vigna 2018),
 * 128 bits of state in four uint32 words, period 2^128 − 1, 32-bit outputs
 * `rotl(s1·5, 7)·9` followed by the linear state update (t = s1 << 9; s2 ^= s0; s3 ^= s1;
 * s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 11)).
 *
 * Seeding: the seed (taken modulo 2^64) starts a SplitMix64; its first two outputs a, b give the
 * state [lo(a), hi(a), lo(b), hi(b)]. SplitMix64's output map is a bijection, so two consecutive
 * outputs are never both zero and the forbidden all-zero state cannot arise; neighbouring seeds
 * (CK's `seed`, `seed + 1`, … per tensor) give unrelated streams.
 *
 * Reproducibility: the uint32 stream uses only 32-bit integer arithmetic (Math.imul, shifts), so
 * the same seed gives the same stream on every machine and run. `nextFloat` and `nextInt` are
 * exact functions of that stream. `nextNormal` also calls Math.log/Math.cos, which are
 * deterministic for a given JS engine (V8 uses the same fdlibm port on every platform).
 *
 * Postcondition (golden-tested against the published xoshiro128** vector): state [1,2,3,4]
 * produces 11520, 0, 5927040, 70819200, 2031721883, …
 */
export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** Generator seeded as described above. */
  constructor(seed: Seed = DEFAULT_SEED) {
    const splitMix = new SplitMix64(seed);
    const a = splitMix.next();
    const b = splitMix.next();
    this.s0 = Number(a & 0xffffffffn) | 0;
    this.s1 = Number(a >> 32n) | 0;
    this.s2 = Number(b & 0xffffffffn) | 0;
    this.s3 = Number(b >> 32n) | 0;
  }

  /** A generator with an explicit raw state (not all zero); used for the reference test vectors. */
  static fromState(state: readonly [number, number, number, number]): Prng {
    if (state.length !== 4 || state.some((w) => !Number.isInteger(w) || w < 0 || w >= TWO_POW_32)) {
      throw new ArgumentError('state', 'must be four uint32 words', state);
    }
    if (state.every((w) => w === 0)) throw new ArgumentError('state', 'must not be all zero', state);
    const prng = new Prng(0);
    [prng.s0, prng.s1, prng.s2, prng.s3] = state.map((w) => w | 0) as [number, number, number, number];
    return prng;
  }

  /** The current state as four uint32 words (a checkpoint for `fromState`). */
  state(): [number, number, number, number] {
    return [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0];
  }

  /** An independent copy that continues the same stream. */
  clone(): Prng {
    return Prng.fromState(this.state());
  }

  /** Next output, a uint32 in [0, 2^32). */
  nextUint32(): number {
    const s1 = this.s1;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9);
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result >>> 0;
  }

  /** Uniform double in [0, 1) with 53 random bits (27 high bits of one draw, 26 of the next). */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / TWO_POW_53;
  }

  /** Uniform double in [min, max) (min when min == max). */
  nextRange(min: number, max: number): number {
    const value = min + (max - min) * this.nextFloat();
    // (max − min)·u can round up to max − min; keep the interval half-open.
    return value < max ? value : min;
  }

  /**
   * Uniform integer in [lo, hi] (both inclusive), unbiased: draws are rejected above the largest
   * multiple of the range that fits in 2^32. The range may hold at most 2^32 integers.
   */
  nextInt(lo: number, hi: number): number {
    if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || hi < lo) {
      throw new ArgumentError('nextInt', 'bounds must be safe integers with lo <= hi', [lo, hi]);
    }
    const n = hi - lo + 1;
    if (n > TWO_POW_32) throw new ArgumentError('nextInt', 'range must hold at most 2^32 integers', [lo, hi]);
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    let x = this.nextUint32();
    while (x >= limit) x = this.nextUint32();
    return lo + (x % n);
  }

  /**
   * Standard normal N(0, 1) by the Box–Muller transform of two `nextFloat` draws (exactly four
   * uint32 draws per call; the sine branch is not cached, so the stream position is predictable).
   */
  nextNormal(): number {
    const u1 = 1 - this.nextFloat(); // (0, 1]: log stays finite
    const u2 = this.nextFloat();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** A seed as an unsigned 64-bit bigint (negative seeds wrap, two's complement). */
export function seedToUint64(seed: Seed): bigint {
  if (typeof seed === 'bigint') return seed & MASK64;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) {
    throw new ArgumentError('seed', 'must be a safe integer or a bigint', seed);
  }
  return BigInt(seed) & MASK64;
}
