import {
  freeze,
  makeNaiveTensorDescriptorPacked,
  merge,
  replicate,
  TensorAdaptor,
  TensorDescriptor,
  unmerge,
  type BoundTensorAdaptor,
  type Transform,
} from '@tilekit/layout';
import { EncodingError, TileArityError, TileIndexRangeError } from './errors.ts';

/**
 * One digit reference of CK-tile's `(major, minor)` form: major 0 is the R (replication) list and
 * major i ≥ 1 is the H list of X_{i−1}; minor is the position inside that list.
 */
export interface RhRef {
  readonly major: number;
  readonly minor: number;
}

/** Reference to replication digit `minor` (major 0). */
export function rRef(minor: number): RhRef {
  return { major: 0, minor };
}

/** Reference to digit `minor` of X dimension `x` (major x + 1). */
export function hRef(x: number, minor: number): RhRef {
  return { major: x + 1, minor };
}

/** The constructor argument of {@link TileDistributionEncoding}: CK's six template lists as data. */
export interface TileDistributionEncodingSpec {
  /** Replication lengths (CK `RsLengths`); default none. */
  readonly rs?: readonly number[];
  /** Per X dimension, its H digits, first most significant (CK `HsLengthss`); an empty list is an X of length 1. */
  readonly hs: readonly (readonly number[])[];
  /** Per P dimension, the digits it merges, first most significant (CK `Ps2RHss{Major,Minor}`). */
  readonly ps: readonly (readonly RhRef[])[];
  /** Per Y dimension, the H digit it indexes (CK `Ys2RHs{Major,Minor}`); the last Y is fastest in registers. */
  readonly ys: readonly RhRef[];
}

/** One (P, Y) pair that owns an X index: its partition index, Y index, thread-buffer index d and R index. */
export interface TileOwner {
  readonly ps: readonly number[];
  readonly ys: readonly number[];
  readonly d: number;
  readonly rs: readonly number[];
}

/** A Y-owned H digit of one X dimension (CK's distributed span entry). */
export interface SpanDigit {
  /** Position of the digit in its H list. */
  readonly minor: number;
  readonly length: number;
  /** The Y dimension that indexes it. */
  readonly y: number;
}

/** Who references a digit: P dimension `p` at position `position` of its merge, or Y dimension `y`. */
export type DigitOwner = { readonly kind: 'p'; readonly p: number; readonly position: number } | { readonly kind: 'y'; readonly y: number };

const product = (xs: readonly number[]): number => xs.reduce((a, b) => a * b, 1);

/** Row-major digits of `value` for `lengths` (first most significant). */
export function splitMixedRadix(value: number, lengths: readonly number[]): number[] {
  const out = new Array<number>(lengths.length);
  let rest = value;
  for (let i = lengths.length - 1; i >= 0; i--) {
    const l = lengths[i]!;
    out[i] = rest % l;
    rest = Math.floor(rest / l);
  }
  return out;
}

/** Row-major value of `digits` for `lengths` (first most significant). */
export function joinMixedRadix(digits: readonly number[], lengths: readonly number[]): number {
  let v = 0;
  for (let i = 0; i < lengths.length; i++) v = v * lengths[i]! + digits[i]!;
  return v;
}

function formatRef(r: RhRef): string {
  return r.major === 0 ? `r[${r.minor}]` : `h${r.major - 1}[${r.minor}]`;
}

function checkLengthList(xs: readonly number[], what: string): void {
  xs.forEach((l, i) => {
    if (!Number.isSafeInteger(l) || l < 1) throw new EncodingError(`${what}[${i}]`, 'a length must be an integer ≥ 1', String(l));
  });
}

/**
 * CK-tile's `tile_distribution_encoding` (static): how a tile of X dimensions is spread over threads
 * (P dimensions) and each thread's registers (Y dimensions), with R dimensions for replicas.
 *
 * Each X_i is the row-major number of its H digits. A P value is the row-major merge of the digits it
 * references (R or H); a Y value is one H digit. Well-formedness (checked on construction,
 * `EncodingError` otherwise): lengths are integers ≥ 1; every reference names an existing digit;
 * every H digit is referenced exactly once, by a P or a Y; every R digit at most once and only by a
 * P, and exactly once unless its length is 1 (CK's `R = (1)` idiom); every P references a digit.
 *
 * Derived (built from `@tilekit/layout`): `psYsToXsAdaptor` (top [P…, Y…] → bottom [X…]) and
 * `ysToDDescriptor` (packed row-major Y → thread-buffer index d). Postcondition the tests check
 * exhaustively: (P, Y) → X is a bijection modulo R: every X index has exactly ΠR owners, one per R index.
 */
export class TileDistributionEncoding {
  readonly rsLengths: readonly number[];
  readonly hsLengthss: readonly (readonly number[])[];
  readonly psToRhs: readonly (readonly RhRef[])[];
  readonly ysToRhs: readonly RhRef[];
  readonly ndimX: number;
  readonly ndimP: number;
  readonly ndimY: number;
  readonly ndimR: number;
  /** |X_i| = Π H_i. */
  readonly xLengths: readonly number[];
  /** |P_p| = Π of its referenced digits' lengths. */
  readonly pLengths: readonly number[];
  readonly yLengths: readonly number[];
  /** Π Y lengths: the number of elements each thread holds (CK's thread buffer size). */
  readonly threadBufferSize: number;
  /** Π P lengths: the number of threads (partition indices) the encoding spreads over. */
  readonly numThreads: number;
  /** Π R lengths: how many threads hold each element. */
  readonly numReplicas: number;
  /** `digitOwners[major][minor]`: the P or Y that references each digit (undefined: an unreferenced R digit of length 1). */
  readonly digitOwners: readonly (readonly (DigitOwner | undefined)[])[];
  private adaptorCache: TensorAdaptor | undefined;
  private descriptorCache: TensorDescriptor | undefined;
  private boundCache: BoundTensorAdaptor | undefined;

  constructor(spec: TileDistributionEncodingSpec) {
    const rs = [...(spec.rs ?? [])];
    const hs = spec.hs.map((h) => [...h]);
    checkLengthList(rs, 'encoding rs');
    hs.forEach((h, i) => checkLengthList(h, `encoding hs[${i}]`));
    if (hs.length === 0) throw new EncodingError('encoding hs', 'a tile needs at least one X dimension', '[]');
    const ps = spec.ps.map((p) => p.map((r) => ({ major: r.major, minor: r.minor })));
    const ys = spec.ys.map((r) => ({ major: r.major, minor: r.minor }));
    const lists: readonly (readonly number[])[] = [rs, ...hs];
    const owners: (DigitOwner | undefined)[][] = lists.map((l) => new Array<DigitOwner | undefined>(l.length).fill(undefined));
    const claim = (r: RhRef, owner: DigitOwner, what: string): void => {
      if (!Number.isSafeInteger(r.major) || r.major < 0 || r.major > hs.length)
        throw new EncodingError(what, `major must be 0 (R) or 1..${hs.length} (H of X0..X${hs.length - 1})`, String(r.major));
      const list = lists[r.major]!;
      if (!Number.isSafeInteger(r.minor) || r.minor < 0 || r.minor >= list.length) {
        throw new EncodingError(
          what,
          `minor must index the ${r.major === 0 ? 'R list' : `H list of X${r.major - 1}`} (length ${list.length})`,
          String(r.minor),
        );
      }
      const prev = owners[r.major]![r.minor];
      if (prev !== undefined) {
        const by = prev.kind === 'p' ? `P${prev.p}` : `Y${prev.y}`;
        throw new EncodingError(
          what,
          `every digit is referenced exactly once, but ${formatRef(r)} is already referenced by ${by}`,
          formatRef(r),
        );
      }
      owners[r.major]![r.minor] = owner;
    };
    ps.forEach((refs, p) => {
      if (refs.length === 0) throw new EncodingError(`encoding ps[${p}]`, 'a P dimension must reference at least one digit', '[]');
      refs.forEach((r, position) => claim(r, { kind: 'p', p, position }, `encoding ps[${p}][${position}]`));
    });
    ys.forEach((r, y) => {
      if (r.major === 0)
        throw new EncodingError(`encoding ys[${y}]`, 'a Y dimension must reference an H digit (R digits belong to P only)', formatRef(r));
      claim(r, { kind: 'y', y }, `encoding ys[${y}]`);
    });
    owners.forEach((list, major) =>
      list.forEach((o, minor) => {
        // CK writes "no replication" as R = (1) with no P referencing it; only that idiom may dangle.
        if (o === undefined && !(major === 0 && rs[minor] === 1)) {
          throw new EncodingError(
            'encoding',
            'every H digit must be referenced by a P or a Y, and every R digit longer than 1 by a P',
            `${formatRef({ major, minor })} unreferenced`,
          );
        }
      }),
    );

    this.rsLengths = rs;
    this.hsLengthss = hs;
    this.psToRhs = ps;
    this.ysToRhs = ys;
    this.ndimX = hs.length;
    this.ndimP = ps.length;
    this.ndimY = ys.length;
    this.ndimR = rs.length;
    this.xLengths = hs.map(product);
    this.pLengths = ps.map((refs) => product(refs.map((r) => this.digitLength(r))));
    this.yLengths = ys.map((r) => this.digitLength(r));
    this.threadBufferSize = product(this.yLengths);
    this.numThreads = product(this.pLengths);
    this.numReplicas = product(rs);
    this.digitOwners = owners;
  }

  /** Length of a referenced digit. */
  digitLength(r: RhRef): number {
    const l = r.major === 0 ? this.rsLengths[r.minor] : this.hsLengthss[r.major - 1]?.[r.minor];
    if (l === undefined) throw new EncodingError('digitLength', 'the reference must name an existing digit', formatRef(r));
    return l;
  }

  /** CK's `Ps2RHssMajor`. */
  get ps2rhsMajor(): readonly (readonly number[])[] {
    return this.psToRhs.map((refs) => refs.map((r) => r.major));
  }

  /** CK's `Ps2RHssMinor`. */
  get ps2rhsMinor(): readonly (readonly number[])[] {
    return this.psToRhs.map((refs) => refs.map((r) => r.minor));
  }

  /** CK's `Ys2RHsMajor`. */
  get ys2rhsMajor(): readonly number[] {
    return this.ysToRhs.map((r) => r.major);
  }

  /** CK's `Ys2RHsMinor`. */
  get ys2rhsMinor(): readonly number[] {
    return this.ysToRhs.map((r) => r.minor);
  }

  /** This encoding as a constructor argument (a deep copy). */
  toSpec(): TileDistributionEncodingSpec {
    return {
      rs: [...this.rsLengths],
      hs: this.hsLengthss.map((h) => [...h]),
      ps: this.psToRhs.map((p) => p.map((r) => ({ ...r }))),
      ys: this.ysToRhs.map((r) => ({ ...r })),
    };
  }

  /**
   * CK's ps_ys_to_xs adaptor. Hidden ids: X_i = i (the bottom), then the R digits, then each X's H
   * digits, then one id per P. Transforms, bottom-up: `replicate(R)`, per X `unmerge(H_i)` (`freeze(0)`
   * for an X without digits), per P `merge(its digits)`. Top = [P_0…, Y_0…], where Y_y is its H digit's id.
   * Postcondition: `calculateBottomIndex([...ps, ...ys])` = `calculateXIndex(ps, ys)`.
   */
  get psYsToXsAdaptor(): TensorAdaptor {
    if (this.adaptorCache === undefined) this.adaptorCache = this.buildAdaptor();
    return this.adaptorCache;
  }

  /** Hidden id of a digit inside `psYsToXsAdaptor`. */
  digitHiddenId(r: RhRef): number {
    this.digitLength(r);
    let id = this.ndimX;
    if (r.major === 0) return id + r.minor;
    id += this.ndimR;
    for (let i = 0; i < r.major - 1; i++) id += this.hsLengthss[i]!.length;
    return id + r.minor;
  }

  private buildAdaptor(): TensorAdaptor {
    const transforms: Transform[] = [];
    const lower: number[][] = [];
    const upper: number[][] = [];
    // Unreferenced R digits (length 1) get no hidden dim: nothing would write them.
    const usedR = this.rsLengths.map((_, j) => j).filter((j) => this.digitOwners[0]![j] !== undefined);
    if (usedR.length > 0) {
      transforms.push(replicate(usedR.map((j) => this.rsLengths[j]!)));
      lower.push([]);
      upper.push(usedR.map((j) => this.digitHiddenId(rRef(j))));
    }
    this.hsLengthss.forEach((h, i) => {
      transforms.push(h.length === 0 ? freeze(0) : unmerge(h));
      lower.push([i]);
      upper.push(h.map((_, j) => this.digitHiddenId(hRef(i, j))));
    });
    const firstP = this.ndimX + this.ndimR + this.hsLengthss.reduce((a, h) => a + h.length, 0);
    this.psToRhs.forEach((refs, p) => {
      transforms.push(merge(refs.map((r) => this.digitLength(r))));
      lower.push(refs.map((r) => this.digitHiddenId(r)));
      upper.push([firstP + p]);
    });
    const top = [...this.psToRhs.map((_, p) => firstP + p), ...this.ysToRhs.map((r) => this.digitHiddenId(r))];
    return new TensorAdaptor(
      transforms,
      lower,
      upper,
      this.hsLengthss.map((_, i) => i),
      top,
    );
  }

  /**
   * CK's ys_to_d descriptor: the packed row-major descriptor of the Y lengths (last Y fastest); its
   * element space is the thread buffer. With no Y dims, a 0-d descriptor whose only offset is 0.
   */
  get ysToDDescriptor(): TensorDescriptor {
    if (this.descriptorCache === undefined) {
      this.descriptorCache =
        this.ndimY === 0
          ? new TensorDescriptor(new TensorAdaptor([freeze(0)], [[0]], [[]], [0], []), 1)
          : makeNaiveTensorDescriptorPacked(this.yLengths);
    }
    return this.descriptorCache;
  }

  private get bound(): BoundTensorAdaptor {
    if (this.boundCache === undefined) this.boundCache = this.psYsToXsAdaptor.bind();
    return this.boundCache;
  }

  /** The X index of element `ys` of thread `ps` (through `psYsToXsAdaptor`). */
  calculateXIndex(ps: readonly number[], ys: readonly number[]): number[] {
    checkIndex('partition index ps', this.pLengths, ps);
    checkIndex('Y index ys', this.yLengths, ys);
    return this.bound.calculateBottomIndex([...ps, ...ys]);
  }

  /** CK's `calculate_index`: the X index of thread `ps`'s first element (all Y = 0). */
  calculateXOrigin(ps: readonly number[]): number[] {
    return this.calculateXIndex(ps, new Array<number>(this.ndimY).fill(0));
  }

  /** Thread-buffer index of a Y index (through `ysToDDescriptor`). */
  calculateD(ys: readonly number[]): number {
    checkIndex('Y index ys', this.yLengths, ys);
    return this.ysToDDescriptor.calculateOffset(ys);
  }

  /** The Y index stored at thread-buffer index `d` (inverse of `calculateD`). */
  calculateYIndex(d: number): number[] {
    checkIndex('thread-buffer index d', [this.threadBufferSize], [d]);
    return splitMixedRadix(d, this.yLengths);
  }

  /** The X index of thread-buffer element `d` of thread `ps`. */
  calculateXIndexFromD(ps: readonly number[], d: number): number[] {
    return this.calculateXIndex(ps, this.calculateYIndex(d));
  }

  /** CK's `calculate_rs_index_from_ps_index`: the R digit values a partition index carries. */
  calculateRIndex(ps: readonly number[]): number[] {
    checkIndex('partition index ps', this.pLengths, ps);
    const rs = new Array<number>(this.ndimR).fill(0);
    this.psToRhs.forEach((refs, p) => {
      const digits = splitMixedRadix(
        ps[p]!,
        refs.map((r) => this.digitLength(r)),
      );
      refs.forEach((r, k) => {
        if (r.major === 0) rs[r.minor] = digits[k]!;
      });
    });
    return rs;
  }

  /**
   * Where R digit `r` sits inside the partition index (CK's `does_p_own_r_` and `ps_over_rs_derivative_`):
   * the P that merges it and its stride there (the product of the lengths merged after it), so adding
   * `stride` to that P moves to the next replica. Undefined for an unreferenced R digit (length 1).
   * A cross-lane reduction over the replicas shuffles by multiples of `stride`.
   */
  rDigitPlacement(r: number): { readonly p: number; readonly stride: number } | undefined {
    checkIndex('R digit', [this.ndimR], [r]);
    const o = this.digitOwners[0]![r];
    if (o === undefined || o.kind !== 'p') return undefined;
    const after = this.psToRhs[o.p]!.slice(o.position + 1);
    return { p: o.p, stride: product(after.map((ref) => this.digitLength(ref))) };
  }

  /** The partition index of a flat thread number: row-major over the P lengths (P_0 most significant). */
  partitionIndexOf(thread: number): number[] {
    checkIndex('thread', [this.numThreads], [thread]);
    return splitMixedRadix(thread, this.pLengths);
  }

  /** The flat thread number of a partition index (inverse of `partitionIndexOf`). */
  threadOf(ps: readonly number[]): number {
    checkIndex('partition index ps', this.pLengths, ps);
    return joinMixedRadix(ps, this.pLengths);
  }

  /**
   * Every (P, Y) that holds X index `x`, one per R index (R row-major, first most significant).
   * Computed from the digits of `x`, no search. Postcondition (tested against brute force): exactly
   * the pairs whose `calculateXIndex` is `x`.
   */
  owners(x: readonly number[]): TileOwner[] {
    checkIndex('X index x', this.xLengths, x);
    const hDigits = this.hsLengthss.map((h, i) => splitMixedRadix(x[i]!, h));
    const digit = (r: RhRef, rDigits: readonly number[]): number => (r.major === 0 ? rDigits[r.minor]! : hDigits[r.major - 1]![r.minor]!);
    const ys = this.ysToRhs.map((r) => digit(r, []));
    const d = this.ndimY === 0 ? 0 : joinMixedRadix(ys, this.yLengths);
    const out: TileOwner[] = [];
    for (let rFlat = 0; rFlat < this.numReplicas; rFlat++) {
      const rs = splitMixedRadix(rFlat, this.rsLengths);
      const ps = this.psToRhs.map((refs) =>
        joinMixedRadix(
          refs.map((r) => digit(r, rs)),
          refs.map((r) => this.digitLength(r)),
        ),
      );
      out.push({ ps, ys: [...ys], d, rs });
    }
    return out;
  }

  /** 32-bit registers a thread needs for its elements of `bitsPerElement` bits, packed in d order. */
  registersPerThread(bitsPerElement: number): number {
    return Math.ceil((this.threadBufferSize * bitsPerElement) / 32);
  }

  /** CK's distributed spans: per X, its Y-owned digits in H order (what `sweep_tile_span` loops over). */
  distributedSpans(): SpanDigit[][] {
    return this.hsLengthss.map((h, i) => {
      const out: SpanDigit[] = [];
      h.forEach((length, minor) => {
        const o = this.digitOwners[i + 1]![minor];
        if (o?.kind === 'y') out.push({ minor, length, y: o.y });
      });
      return out;
    });
  }

  /** Structural equality (same R, H, P and Y lists). */
  equals(other: TileDistributionEncoding): boolean {
    return this.toString() === other.toString();
  }

  /** One line: `R (..) H ((..), (..)) P0 → h0[1] h1[0]; … Y → h0[0] …`. */
  toString(): string {
    const hs = this.hsLengthss.map((h) => `(${h.join(', ')})`).join(', ');
    const ps = this.psToRhs.map((refs, p) => `P${p} → ${refs.map(formatRef).join(' ')}`).join('; ');
    const ys = this.ysToRhs.map(formatRef).join(' ');
    return `TileDistributionEncoding R (${this.rsLengths.join(', ')}) H (${hs}); ${ps}; Y → ${ys === '' ? '∅' : ys}`;
  }
}

/** Throws unless `index` has one entry per length, each in [0, length). */
export function checkIndex(what: string, lengths: readonly number[], index: readonly number[]): void {
  if (index.length !== lengths.length) throw new TileArityError(what, lengths.length, index.length);
  for (let i = 0; i < lengths.length; i++) {
    const v = index[i]!;
    if (!Number.isSafeInteger(v) || v < 0 || v >= lengths[i]!) throw new TileIndexRangeError(what, lengths, index);
  }
}

/** Builds an encoding (see {@link TileDistributionEncoding}); throws `EncodingError` if it is not well-formed. */
export function makeTileDistributionEncoding(spec: TileDistributionEncodingSpec): TileDistributionEncoding {
  return new TileDistributionEncoding(spec);
}
