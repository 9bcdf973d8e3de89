// Independent, deliberately naive recomputations of what an encoding means, for tests: (P, Y) → X as
// CK-tile's `tile_distribution_encoding` defines it, digit by digit; full enumeration of ownership; and a
// bijection-modulo-R checker.
import type { TileDistributionEncoding, TileOwner } from '../tileDistributionEncoding.ts';

/** Every index of `lengths`, row-major (last fastest). */
export function* allIndices(lengths: readonly number[]): Generator<number[]> {
  const total = lengths.reduce((a, b) => a * b, 1);
  for (let flat = 0; flat < total; flat++) {
    const idx = new Array<number>(lengths.length);
    let rest = flat;
    for (let i = lengths.length - 1; i >= 0; i--) {
      idx[i] = rest % lengths[i]!;
      rest = Math.floor(rest / lengths[i]!);
    }
    yield idx;
  }
}

/**
 * (P, Y) → X written without the layout library: split each P into its digits (first
 * most significant), read each Y as its digit, then X_i = row-major number of H_i's digits.
 */
export function referenceXIndex(enc: TileDistributionEncoding, ps: readonly number[], ys: readonly number[]): number[] {
  const digits = new Map<string, number>();
  enc.psToRhs.forEach((refs, p) => {
    let rest = ps[p]!;
    for (let k = refs.length - 1; k >= 0; k--) {
      const r = refs[k]!;
      const len = r.major === 0 ? enc.rsLengths[r.minor]! : enc.hsLengthss[r.major - 1]![r.minor]!;
      digits.set(`${r.major}:${r.minor}`, rest % len);
      rest = Math.floor(rest / len);
    }
  });
  enc.ysToRhs.forEach((r, y) => digits.set(`${r.major}:${r.minor}`, ys[y]!));
  return enc.hsLengthss.map((h, i) => {
    let x = 0;
    h.forEach((len, j) => {
      x = x * len + digits.get(`${i + 1}:${j}`)!;
    });
    return x;
  });
}

/** The R digit values of a partition index, by the same naive digit split. */
export function referenceRIndex(enc: TileDistributionEncoding, ps: readonly number[]): number[] {
  const rs = new Array<number>(enc.ndimR).fill(0);
  enc.psToRhs.forEach((refs, p) => {
    let rest = ps[p]!;
    for (let k = refs.length - 1; k >= 0; k--) {
      const r = refs[k]!;
      const len = r.major === 0 ? enc.rsLengths[r.minor]! : enc.hsLengthss[r.major - 1]![r.minor]!;
      if (r.major === 0) rs[r.minor] = rest % len;
      rest = Math.floor(rest / len);
    }
  });
  return rs;
}

/** Every (P, Y) grouped by the X index it maps to (through the encoding's adaptor), keyed `x0,x1,…`. */
export function ownershipByEnumeration(enc: TileDistributionEncoding): Map<string, TileOwner[]> {
  const out = new Map<string, TileOwner[]>();
  for (const ps of allIndices(enc.pLengths)) {
    const rs = enc.calculateRIndex(ps);
    for (const ys of allIndices(enc.yLengths)) {
      const key = enc.calculateXIndex(ps, ys).join(',');
      const list = out.get(key) ?? [];
      list.push({ ps, ys, d: enc.calculateD(ys), rs });
      out.set(key, list);
    }
  }
  return out;
}

/**
 * Checks that (P, Y) → X is a bijection modulo R, exhaustively: every (P, Y) lands inside the X
 * lengths, every X index has exactly ΠR owners whose R indices are pairwise distinct (one per
 * replica), and `owners(x)` lists exactly them. Returns the first violation, or undefined.
 */
export function bijectionModuloRViolation(enc: TileDistributionEncoding): string | undefined {
  const byX = ownershipByEnumeration(enc);
  const xCount = enc.xLengths.reduce((a, b) => a * b, 1);
  if (byX.size !== xCount) return `${byX.size} distinct X indices are owned, expected ${xCount} (${enc.toString()})`;
  for (const x of allIndices(enc.xLengths)) {
    const key = x.join(',');
    const owners = byX.get(key);
    if (owners === undefined) return `X ${key} has no owner`;
    if (owners.length !== enc.numReplicas) return `X ${key} has ${owners.length} owners, expected ${enc.numReplicas}`;
    const rKeys = new Set(owners.map((o) => o.rs.join(',')));
    if (rKeys.size !== owners.length) return `X ${key}: two owners share an R index`;
    const ownerKey = (o: TileOwner): string => `${o.ps.join(',')}|${o.ys.join(',')}|${o.d}|${o.rs.join(',')}`;
    const expected = owners.map(ownerKey).sort();
    const found = enc.owners(x).map(ownerKey).sort();
    if (expected.join(' ') !== found.join(' ')) return `X ${key}: owners() = ${found.join(' ')}, enumeration = ${expected.join(' ')}`;
  }
  return undefined;
}
