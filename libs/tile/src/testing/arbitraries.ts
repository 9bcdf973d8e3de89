// Reusable fast-check arbitraries: random well-formed tile distribution encodings built by
// construction (every digit handed to exactly one P or Y, in random order). "@tilekit/tile/testing".
import fc from 'fast-check';
import { TileDistributionEncoding, type RhRef } from '../tileDistributionEncoding.ts';

/** Options of {@link encodingArb}. */
export interface EncodingArbOptions {
  /** X dimensions: [min, max]; default [1, 3]. */
  readonly xDims?: readonly [number, number];
  /** Most H digits per X (an X may have none); default 3. */
  readonly maxDigitsPerX?: number;
  /** Largest digit length; default 4. */
  readonly maxLength?: number;
  /** P dimensions: [min, max]; default [1, 2]. */
  readonly pDims?: readonly [number, number];
  /** Most R digits; default 2. */
  readonly maxR?: number;
  /** Reject encodings with more than this many (thread, element) pairs (= ΠR·ΠX); default 4096. */
  readonly maxPairs?: number;
}

interface Raw {
  readonly rs: number[];
  readonly hs: number[][];
  readonly nP: number;
  /** Owner per digit: −1 = a Y, p ≥ 0 = P p (R digits always a P). Same shape as [rs, ...hs]. */
  readonly owner: number[][];
  /** Sort keys giving the order of references inside each P and inside Y. */
  readonly key: number[][];
}

/** Random well-formed encodings, each digit owned exactly once; every P is non-empty. */
export function encodingArb(options: EncodingArbOptions = {}): fc.Arbitrary<TileDistributionEncoding> {
  const [xMin, xMax] = options.xDims ?? [1, 3];
  const [pMin, pMax] = options.pDims ?? [1, 2];
  const maxDigits = options.maxDigitsPerX ?? 3;
  const maxLength = options.maxLength ?? 4;
  const maxR = options.maxR ?? 2;
  const maxPairs = options.maxPairs ?? 4096;
  const len = fc.integer({ min: 1, max: maxLength });
  return fc
    .record({
      rs: fc.array(len, { maxLength: maxR }),
      hs: fc.array(fc.array(len, { maxLength: maxDigits }), { minLength: xMin, maxLength: xMax }),
      nP: fc.integer({ min: pMin, max: pMax }),
    })
    .chain(({ rs, hs, nP }) => {
      const shape = [rs.length, ...hs.map((h) => h.length)];
      const ownerArb = shape.map((n, major) =>
        fc.array(fc.integer({ min: major === 0 ? 0 : -1, max: nP - 1 }), { minLength: n, maxLength: n }),
      );
      const keyArb = shape.map((n) => fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: n, maxLength: n }));
      return fc
        .record({ owner: fc.tuple(...ownerArb), key: fc.tuple(...keyArb) })
        .map(({ owner, key }): Raw => ({ rs, hs, nP, owner, key }));
    })
    .filter((raw) => {
      const pairs = [raw.rs, ...raw.hs].flat().reduce((a, b) => a * b, 1);
      if (pairs > maxPairs) return false;
      for (let p = 0; p < raw.nP; p++) if (!raw.owner.some((list) => list.includes(p))) return false;
      return true;
    })
    .map(build);
}

function build(raw: Raw): TileDistributionEncoding {
  const ps: { ref: RhRef; key: number }[][] = Array.from({ length: raw.nP }, () => []);
  const ys: { ref: RhRef; key: number }[] = [];
  raw.owner.forEach((list, major) =>
    list.forEach((o, minor) => {
      const entry = { ref: { major, minor }, key: raw.key[major]![minor]! };
      if (o < 0) ys.push(entry);
      else ps[o]!.push(entry);
    }),
  );
  const order = (xs: { ref: RhRef; key: number }[]): RhRef[] => [...xs].sort((a, b) => a.key - b.key).map((e) => e.ref);
  return new TileDistributionEncoding({ rs: raw.rs, hs: raw.hs, ps: ps.map(order), ys: order(ys) });
}
