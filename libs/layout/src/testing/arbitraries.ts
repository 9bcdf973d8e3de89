// Reusable fast-check arbitraries for layout properties: random transforms, random descriptors built
// by construction (every transform admissible for the dims it consumes), bindings inside the symbols'
// domains, and in-range indices. Exported as "@tilekit/layout/testing".
import fc from 'fast-check';
import type { TensorDescriptor } from '../descriptor.ts';
import { makeNaiveTensorDescriptor, makeNaiveTensorDescriptorPacked, transformTensorDescriptor } from '../descriptor.ts';
import { divisorOf, intervalOf } from '../symbolic/bounds.ts';
import { evaluateSymInt, freeSymbols, type Bindings } from '../symbolic/evaluate.ts';
import { symEquals, type SymInt, type SymbolAtom } from '../symbolic/expr.ts';
import { mul } from '../symbolic/poly.ts';
import { floorDiv } from '../symbolic/simplify.ts';
import { symbol } from '../symbolic/symbol.ts';
import { embed } from '../transforms/embed.ts';
import { freeze } from '../transforms/freeze.ts';
import { insert } from '../transforms/insert.ts';
import { leftPad } from '../transforms/leftPad.ts';
import { merge } from '../transforms/merge.ts';
import { modulo } from '../transforms/modulo.ts';
import { offset } from '../transforms/offset.ts';
import { pad } from '../transforms/pad.ts';
import { passThrough } from '../transforms/passThrough.ts';
import { replicate } from '../transforms/replicate.ts';
import { rightPad } from '../transforms/rightPad.ts';
import { slice } from '../transforms/slice.ts';
import type { Transform } from '../transforms/transform.ts';
import { unmerge } from '../transforms/unmerge.ts';
import { xor } from '../transforms/xor.ts';

/** Which transforms the random descriptor builder may use. */
export type RandomTransformKind = Transform['kind'];

/** Options of `descriptorArb`. */
export interface DescriptorArbOptions {
  /** Allow symbolic lengths/strides (symbols `s0…`, `st0…` with small domains). Default false. */
  readonly symbolic?: boolean;
  /** Number of transform stages above the naive descriptor: [min, max]. Default [1, 3]. */
  readonly levels?: readonly [number, number];
  /** Largest static length of a naive dim. Default 6. */
  readonly maxLength?: number;
  /** Transforms to use (default: all). */
  readonly kinds?: readonly RandomTransformKind[];
  /** Attach a truthful vector guarantee to the naive descriptor. Default false. */
  readonly vectorGuarantee?: boolean;
  /** Stop adding stages once the top element count may exceed this. Default 4096. */
  readonly maxElements?: number;
}

/** A random descriptor and how it was built (for failure messages). */
export interface RandomDescriptor {
  readonly descriptor: TensorDescriptor;
  readonly symbols: readonly SymbolAtom[];
  /** The stages, readable. */
  readonly recipe: string;
  /** The naive descriptor the stages start from. */
  readonly base: TensorDescriptor;
  /** The transform stages applied to `base`, in order (arguments of `transformTensorDescriptor`). */
  readonly stages: readonly RandomStage[];
}

/** One `transformTensorDescriptor` stage. */
export interface RandomStage {
  readonly transforms: readonly Transform[];
  readonly lowerDimIds: readonly (readonly number[])[];
  readonly upperDimIds: readonly (readonly number[])[];
}

const allKinds: readonly RandomTransformKind[] = [
  'passThrough',
  'pad',
  'leftPad',
  'rightPad',
  'embed',
  'merge',
  'unmerge',
  'freeze',
  'insert',
  'replicate',
  'slice',
  'modulo',
  'xor',
  'offset',
];

/** Deterministic chooser over a stream of random naturals (shrinks toward choice 0 = simplest). */
class Chooser {
  private i = 0;
  private readonly entropy: readonly number[];
  constructor(entropy: readonly number[]) {
    this.entropy = entropy;
  }
  next(n: number): number {
    const v = this.entropy[this.i % this.entropy.length]! + Math.floor(this.i / this.entropy.length);
    this.i++;
    return n <= 1 ? 0 : v % n;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.next(xs.length)]!;
  }
  chance(percent: number): boolean {
    return this.next(100) < percent;
  }
}

function maxOf(x: SymInt): number {
  return intervalOf(x).hi;
}

function minOf(x: SymInt): number {
  return intervalOf(x).lo;
}

/** Builds one random descriptor from entropy. Exported for deterministic batch generation (g++ tests). */
export function buildRandomDescriptor(entropy: readonly number[], options: DescriptorArbOptions = {}): RandomDescriptor {
  const c = new Chooser(entropy.length === 0 ? [0] : entropy);
  const kinds = options.kinds ?? allKinds;
  const maxLength = options.maxLength ?? 6;
  const maxElements = options.maxElements ?? 4096;
  const symbolic = options.symbolic ?? false;
  const [minLevels, maxLevels] = options.levels ?? [1, 3];
  const recipe: string[] = [];

  // Naive base: 1..3 dims.
  const n0 = 1 + c.next(3);
  const lengths: SymInt[] = [];
  for (let i = 0; i < n0; i++) {
    if (symbolic && c.chance(40)) {
      const m = c.pick([1, 1, 2, 4]);
      lengths.push(symbol(`s${i}`, { min: m, max: m * (1 + c.next(4) + 2), multipleOf: m }));
    } else lengths.push(1 + c.next(maxLength));
  }
  const vector = options.vectorGuarantee ?? false;
  let desc: TensorDescriptor;
  if (!vector && c.chance(35)) {
    desc = makeNaiveTensorDescriptorPacked(lengths);
  } else {
    // Strides: last 1 (or small), others row-major with optional padding, possibly symbolic.
    const strides = new Array<SymInt>(n0);
    const v = vector ? c.pick([1, 2, 4, 8]) : 1;
    strides[n0 - 1] = vector ? 1 : c.pick([1, 1, 1, 2, 3]);
    for (let i = n0 - 2; i >= 0; i--) {
      if (symbolic && c.chance(30)) {
        strides[i] = symbol(`st${i}`, { min: v, max: 64 * v, multipleOf: v });
      } else {
        const base = maxOf(mul(strides[i + 1]!, lengths[i + 1]!));
        strides[i] = (Math.ceil(base / v) + c.next(3)) * v;
      }
    }
    if (vector) {
      // A truthful guarantee: the last dim's runs of v start aligned and are contiguous; other strides are multiples of v.
      desc = makeNaiveTensorDescriptor(lengths, strides, { vectorLength: v, vectorStride: 1 });
    } else desc = makeNaiveTensorDescriptor(lengths, strides);
    recipe.push(`naive (${lengths.map(String).join(', ')}) : (${strides.map(String).join(', ')})${vector ? ` vector ${v}` : ''}`);
  }
  if (recipe.length === 0) recipe.push(`packed (${lengths.map(String).join(', ')})`);

  const base = desc;
  const stages: RandomStage[] = [];
  const levels = minLevels + c.next(maxLevels - minLevels + 1);
  for (let level = 0; level < levels; level++) {
    const top = desc.lengths;
    const transforms: Transform[] = [];
    const lowerIds: number[][] = [];
    let newCount = 0;
    const uppers: number[][] = [];
    const add = (t: Transform, low: number[]): void => {
      transforms.push(t);
      lowerIds.push(low);
      uppers.push(Array.from({ length: t.upperArity }, () => newCount++));
    };
    let i = 0;
    let grown = maxOf(desc.elementSize);
    while (i < top.length) {
      const L = top[i]!;
      const staticL = typeof L === 'number' ? L : undefined;
      const kind = c.pick(kinds);
      const remaining = top.length - i;
      if (kind === 'pad' && grown < maxElements) {
        const lp = c.next(3);
        const rp = c.next(3);
        add(pad(L, lp, rp), [i]);
      } else if (kind === 'leftPad' && grown < maxElements) add(leftPad(L, 1 + c.next(2)), [i]);
      else if (kind === 'rightPad' && grown < maxElements) add(rightPad(L, 1 + c.next(3)), [i]);
      else if (kind === 'merge' && remaining >= 2) {
        const k = Math.min(remaining, 2 + c.next(2));
        add(
          merge(top.slice(i, i + k)),
          Array.from({ length: k }, (_, j) => i + j),
        );
        i += k;
        continue;
      } else if (kind === 'unmerge') {
        const split = splitLength(L, c);
        if (split !== undefined) add(unmerge(split), [i]);
        else add(passThrough(L), [i]);
      } else if (kind === 'xor' && remaining >= 2 && typeof top[i + 1] === 'number' && isPow2(top[i + 1] as number)) {
        add(xor([L, top[i + 1]!]), [i, i + 1]);
        i += 2;
        continue;
      } else if (kind === 'slice' && staticL !== undefined && staticL >= 2) {
        const b = c.next(staticL);
        const e = b + 1 + c.next(staticL - b);
        add(slice(L, b, e), [i]);
      } else if (kind === 'offset' && staticL !== undefined && staticL >= 2) {
        const off = 1 + c.next(staticL - 1);
        add(offset(staticL - off, off), [i]);
      } else if (kind === 'modulo' && grown < maxElements) {
        add(modulo(L, 1 + c.next(2 * Math.max(1, Math.min(maxOf(L), 8)))), [i]);
      } else if (kind === 'embed' && staticL !== undefined && staticL >= 2) {
        // Upper (a, b) with coefficients keeping (a−1)·c0 + (b−1)·c1 ≤ L − 1.
        const b = 1 + c.next(Math.min(staticL, 4));
        const c1 = 2 * (b - 1) <= staticL - 1 ? 1 + c.next(2) : 1;
        const c0 = Math.max(1, (b - 1) * c1 + c.next(2));
        const a = 1 + Math.floor((staticL - 1 - (b - 1) * c1) / c0);
        add(embed([Math.max(1, a), b], [c0, c1]), [i]);
      } else if (kind === 'freeze' && top.length - transforms.filter((t) => t.kind === 'freeze').length > 1) {
        add(freeze(c.next(Math.max(1, minOf(L)))), [i]);
      } else if (kind === 'insert' && grown < maxElements) {
        add(insert(1 + c.next(3)), []);
        continue; // does not consume dim i
      } else if (kind === 'replicate' && grown < maxElements) {
        add(replicate([1 + c.next(2)]), []);
        continue;
      } else add(passThrough(L), [i]);
      i++;
      grown = maxOf(desc.elementSize) * 4;
    }
    // New tops in a random permutation.
    const perm = Array.from({ length: newCount }, (_, k) => k);
    for (let k = perm.length - 1; k > 0; k--) {
      const j = c.next(k + 1);
      [perm[k], perm[j]] = [perm[j]!, perm[k]!];
    }
    const upperIds = uppers.map((u) => u.map((k) => perm[k]!));
    const next = transformTensorDescriptor(desc, transforms, lowerIds, upperIds);
    if (maxOf(next.elementSize) > maxElements || next.numDims === 0) break;
    desc = next;
    stages.push({ transforms, lowerDimIds: lowerIds, upperDimIds: upperIds });
    recipe.push(transforms.map((t, k) => `${t.toString()} [${lowerIds[k]!.join(' ')}]→[${upperIds[k]!.join(' ')}]`).join('; '));
  }
  const symbols = [
    ...freeSymbols([...desc.lengths, desc.elementSpaceSize, ...desc.adaptor.transforms.flatMap((t) => [...t.upperLengths])]).values(),
  ];
  for (const t of desc.adaptor.transforms) for (const a of t.symbols.values()) if (!symbols.some((s) => s.name === a.name)) symbols.push(a);
  return { descriptor: desc, symbols, recipe: recipe.join('\n'), base, stages };
}

function isPow2(x: number): boolean {
  return x >= 1 && (x & (x - 1)) === 0;
}

function splitLength(L: SymInt, c: Chooser): SymInt[] | undefined {
  if (typeof L === 'number') {
    const divisors = Array.from({ length: L }, (_, k) => k + 1).filter((d) => L % d === 0);
    const d = c.pick(divisors);
    return c.chance(50) ? [L / d, d] : [d, L / d];
  }
  const g = divisorOf(L);
  const d = c.pick(Array.from({ length: g }, (_, k) => k + 1).filter((x) => g % x === 0));
  const q = floorDiv(L, d);
  if (!symEquals(mul(q, d), L)) return undefined;
  return c.chance(50) ? [q, d] : [d, q];
}

/** Random descriptors built by construction (see DescriptorArbOptions). */
export function descriptorArb(options: DescriptorArbOptions = {}): fc.Arbitrary<RandomDescriptor> {
  return fc.array(fc.nat(1 << 20), { minLength: 96, maxLength: 96 }).map((entropy) => buildRandomDescriptor(entropy, options));
}

/** Bindings for `symbols`, each inside its declared domain. */
export function bindingsArb(symbols: readonly SymbolAtom[]): fc.Arbitrary<Bindings> {
  const entries = symbols.map((s) =>
    fc.integer({ min: s.min / s.multipleOf, max: s.max / s.multipleOf }).map((k) => [s.name, k * s.multipleOf] as const),
  );
  return fc.tuple(...entries).map((kv) => Object.fromEntries(kv));
}

/** An index inside numeric `lengths`. */
export function indexArb(lengths: readonly number[]): fc.Arbitrary<number[]> {
  return fc.tuple(...lengths.map((l) => fc.nat(l - 1)));
}

/** A descriptor with bindings and an in-range index (and the bound lengths). */
export function descriptorCaseArb(
  options: DescriptorArbOptions = {},
): fc.Arbitrary<{ rd: RandomDescriptor; bindings: Bindings; lengths: number[]; index: number[] }> {
  return descriptorArb(options).chain((rd) =>
    bindingsArb(rd.symbols).chain((bindings) => {
      const lengths = rd.descriptor.lengths.map((l) => evaluateSymInt(l, bindings));
      return indexArb(lengths).map((index) => ({ rd, bindings, lengths, index }));
    }),
  );
}

/** Every index inside numeric `lengths`, row-major. */
export function* allIndices(lengths: readonly number[]): Generator<number[]> {
  const n = lengths.length;
  if (lengths.some((l) => l <= 0)) return;
  const idx = new Array<number>(n).fill(0);
  for (;;) {
    yield [...idx];
    let k = n - 1;
    while (k >= 0) {
      idx[k]!++;
      if (idx[k]! < lengths[k]!) break;
      idx[k] = 0;
      k--;
    }
    if (k < 0) return;
  }
}

const len = (max = 6): fc.Arbitrary<number> => fc.integer({ min: 1, max });
const lengthsArb = (n: [number, number], max = 5): fc.Arbitrary<number[]> => fc.array(len(max), { minLength: n[0], maxLength: n[1] });

/** One random static transform of the given kind (all kinds by default), with admissible parameters. */
export function transformArb(kinds: readonly RandomTransformKind[] = allKinds): fc.Arbitrary<Transform> {
  const byKind: Record<RandomTransformKind, fc.Arbitrary<Transform>> = {
    passThrough: len().map((l) => passThrough(l)),
    pad: fc.tuple(len(), fc.nat(3), fc.nat(3), fc.boolean()).map(([l, a, b, skip]) => pad(l, a, b, skip)),
    leftPad: fc.tuple(len(), fc.nat(3)).map(([l, a]) => leftPad(l, a)),
    rightPad: fc.tuple(len(), fc.nat(3)).map(([l, a]) => rightPad(l, a)),
    embed: fc
      .integer({ min: 1, max: 3 })
      .chain((n) => fc.tuple(lengthsArb([n, n]), fc.array(fc.integer({ min: -4, max: 9 }), { minLength: n, maxLength: n })))
      .map(([l, c]) => embed(l, c)),
    merge: lengthsArb([1, 4]).map((l) => merge(l)),
    unmerge: lengthsArb([1, 4]).map((l) => unmerge(l)),
    freeze: fc.nat(5).map((i) => freeze(i)),
    insert: len().map((l) => insert(l)),
    replicate: lengthsArb([0, 2]).map((l) => replicate(l)),
    slice: len(8).chain((l) => fc.nat(l - 1).chain((b) => fc.integer({ min: b + 1, max: l }).map((e) => slice(l, b, e)))),
    modulo: fc.tuple(len(), len(16)).map(([m, u]) => modulo(m, u)),
    xor: fc.tuple(len(6), fc.constantFrom(1, 2, 4, 8)).map(([a, b]) => xor([a, b])),
    offset: fc.tuple(len(), fc.nat(5)).map(([l, o]) => offset(l, o)),
  };
  return fc.oneof(...kinds.map((k) => byKind[k]));
}

/** A static transform with an in-range upper index and a step keeping it in range (negative steps too). */
export function transformCaseArb(
  kinds?: readonly RandomTransformKind[],
): fc.Arbitrary<{ transform: Transform; up: number[]; step: number[] }> {
  return transformArb(kinds).chain((transform) => {
    const lengths = transform.upperLengths as number[];
    return indexArb(lengths).chain((up) =>
      fc.tuple(...up.map((u, i) => fc.integer({ min: -u, max: lengths[i]! - 1 - u }))).map((step) => ({ transform, up, step })),
    );
  });
}
