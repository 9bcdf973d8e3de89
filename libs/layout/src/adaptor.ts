import {
  ArityMismatchError,
  DimensionConsumedTwiceError,
  DimensionNotConsumedError,
  HiddenGraphError,
  InvalidParameterError,
  LengthMismatchError,
  TopDimensionPermutationError,
} from './errors.ts';
import { checkBindings, evaluateSymInt, mergeSymbols, NO_BINDINGS, type Bindings } from './symbolic/evaluate.ts';
import { formatSymInt, type SymInt, type SymbolAtom } from './symbolic/expr.ts';
import { product } from './symbolic/poly.ts';
import type { Transform, TransformStep } from './transforms/transform.ts';

/**
 * CK-tile's `tensor_adaptor`: a graph of transforms over numbered **hidden** dimensions. Every
 * dimension anywhere in the graph has one hidden id; transform i reads its upper ids and writes its
 * lower ids. Transforms are stored bottom-up: a transform's upper dims are top dims or lower dims of
 * *later* transforms, so evaluation walks the list from last to first.
 *
 * Invariants (checked on construction, typed `HiddenGraphError` otherwise): each hidden dim is written
 * by at most one transform and read by at most one; top dims are read and never written; bottom dims
 * are written and never read; every other written dim is read by an earlier transform.
 */
export class TensorAdaptor {
  readonly transforms: readonly Transform[];
  readonly lowerDimHiddenIds: readonly (readonly number[])[];
  readonly upperDimHiddenIds: readonly (readonly number[])[];
  readonly bottomDimHiddenIds: readonly number[];
  readonly topDimHiddenIds: readonly number[];
  /** 1 + the largest hidden id. */
  readonly numHiddenDims: number;
  /** Length of each hidden dim, from the transform that reads it (undefined for bottom dims). */
  readonly hiddenLengths: readonly (SymInt | undefined)[];
  /** Index of the transform that writes each hidden dim (−1: a top dim). */
  readonly writerOf: readonly number[];
  /** Symbols any parameter mentions. */
  readonly symbols: ReadonlyMap<string, SymbolAtom>;
  readonly isStatic: boolean;
  private readonly bound = new WeakMap<Bindings, BoundTensorAdaptor>();
  private readonly touched = new Map<number | string, readonly number[]>();

  constructor(
    transforms: readonly Transform[],
    lowerDimHiddenIds: readonly (readonly number[])[],
    upperDimHiddenIds: readonly (readonly number[])[],
    bottomDimHiddenIds: readonly number[],
    topDimHiddenIds: readonly number[],
  ) {
    if (lowerDimHiddenIds.length !== transforms.length)
      throw new ArityMismatchError(
        'tensor adaptor lowerDimHiddenIds (one list per transform)',
        transforms.length,
        lowerDimHiddenIds.length,
      );
    if (upperDimHiddenIds.length !== transforms.length)
      throw new ArityMismatchError(
        'tensor adaptor upperDimHiddenIds (one list per transform)',
        transforms.length,
        upperDimHiddenIds.length,
      );
    this.transforms = [...transforms];
    this.lowerDimHiddenIds = lowerDimHiddenIds.map((x) => [...x]);
    this.upperDimHiddenIds = upperDimHiddenIds.map((x) => [...x]);
    this.bottomDimHiddenIds = [...bottomDimHiddenIds];
    this.topDimHiddenIds = [...topDimHiddenIds];

    let maxId = -1;
    const visit = (id: number, what: string): void => {
      if (!Number.isSafeInteger(id) || id < 0) throw new HiddenGraphError(`${what} must be a non-negative integer (got ${id})`);
      maxId = Math.max(maxId, id);
    };
    transforms.forEach((t, i) => {
      if (this.lowerDimHiddenIds[i]!.length !== t.lowerArity)
        throw new ArityMismatchError(`transform ${i} (${t.toString()}) lower dim ids`, t.lowerArity, this.lowerDimHiddenIds[i]!.length);
      if (this.upperDimHiddenIds[i]!.length !== t.upperArity)
        throw new ArityMismatchError(`transform ${i} (${t.toString()}) upper dim ids`, t.upperArity, this.upperDimHiddenIds[i]!.length);
      this.lowerDimHiddenIds[i]!.forEach((id) => visit(id, `transform ${i} lower id`));
      this.upperDimHiddenIds[i]!.forEach((id) => visit(id, `transform ${i} upper id`));
    });
    this.bottomDimHiddenIds.forEach((id) => visit(id, 'bottom id'));
    this.topDimHiddenIds.forEach((id) => visit(id, 'top id'));
    const n = maxId + 1;
    this.numHiddenDims = n;

    const writer = new Array<number>(n).fill(-1);
    const reader = new Array<number>(n).fill(-1);
    const lengths = new Array<SymInt | undefined>(n).fill(undefined);
    transforms.forEach((t, i) => {
      for (const id of this.lowerDimHiddenIds[i]!) {
        if (writer[id] !== -1) throw new HiddenGraphError(`hidden dim ${id} is written by transforms ${writer[id]} and ${i}`);
        writer[id] = i;
      }
      this.upperDimHiddenIds[i]!.forEach((id, j) => {
        if (reader[id] !== -1) throw new DimensionConsumedTwiceError('tensor adaptor', id);
        reader[id] = i;
        lengths[id] = t.upperLengths[j];
      });
    });
    const tops = new Set(this.topDimHiddenIds);
    const bottoms = new Set(this.bottomDimHiddenIds);
    if (tops.size !== this.topDimHiddenIds.length)
      throw new HiddenGraphError(`top ids repeat a dim ([${this.topDimHiddenIds.join(', ')}])`);
    if (bottoms.size !== this.bottomDimHiddenIds.length)
      throw new HiddenGraphError(`bottom ids repeat a dim ([${this.bottomDimHiddenIds.join(', ')}])`);
    for (const id of tops) {
      if (reader[id] === -1) throw new HiddenGraphError(`top dim ${id} is read by no transform (its length would be unknown)`);
      if (writer[id] !== -1) throw new HiddenGraphError(`top dim ${id} is written by transform ${writer[id]}`);
    }
    for (const id of bottoms) {
      if (writer[id] === -1) throw new HiddenGraphError(`bottom dim ${id} is written by no transform`);
      if (reader[id] !== -1) throw new HiddenGraphError(`bottom dim ${id} is also read by transform ${reader[id]}`);
    }
    for (let id = 0; id < n; id++) {
      const w = writer[id]!;
      const r = reader[id]!;
      if (r !== -1 && !tops.has(id)) {
        if (w === -1) throw new HiddenGraphError(`hidden dim ${id} is read by transform ${r} but written by none and is not a top dim`);
        if (w <= r)
          throw new HiddenGraphError(
            `hidden dim ${id} is read by transform ${r} before transform ${w} writes it (transforms are listed bottom-up)`,
          );
      }
      if (w !== -1 && r === -1 && !bottoms.has(id))
        throw new HiddenGraphError(`hidden dim ${id} is written by transform ${w} but is neither read nor a bottom dim`);
    }
    this.hiddenLengths = lengths;
    this.writerOf = writer;
    this.symbols = mergeSymbols(transforms.map((t) => t.symbols));
    this.isStatic = transforms.every((t) => t.isStatic);
  }

  get numTopDims(): number {
    return this.topDimHiddenIds.length;
  }

  get numBottomDims(): number {
    return this.bottomDimHiddenIds.length;
  }

  /** Length of each top dim. */
  get topLengths(): readonly SymInt[] {
    return this.topDimHiddenIds.map((id) => this.hiddenLengths[id]!);
  }

  /** Number of top indices: Π top lengths. */
  get elementSize(): SymInt {
    return product(this.topLengths);
  }

  /**
   * The numeric form for `bindings` (every symbol must be bound inside its domain); cached per
   * bindings object, so pass the same object to evaluate many indices cheaply.
   */
  bind(bindings: Bindings = NO_BINDINGS): BoundTensorAdaptor {
    const key = this.isStatic ? NO_BINDINGS : bindings;
    let b = this.bound.get(key);
    if (b === undefined) {
      b = new BoundTensorAdaptor(this, key);
      this.bound.set(key, b);
    }
    return b;
  }

  /** CK's `calculate_bottom_index`: the bottom index of a top index. */
  calculateBottomIndex(top: readonly number[], bindings?: Bindings): number[] {
    return this.bind(bindings).calculateBottomIndex(top);
  }

  /**
   * Indices (descending, i.e. evaluation order) of the transforms a move with non-zero step on the
   * top dims `nonZero` must run: a transform runs iff one of its upper dims changed, and then all its
   * lower dims count as changed (CK's `JudgeDoTransforms`). Cached per pattern.
   */
  transformsTouchedBy(nonZero: readonly boolean[]): readonly number[] {
    if (nonZero.length !== this.numTopDims) throw new ArityMismatchError('non-zero step pattern', this.numTopDims, nonZero.length);
    if (nonZero.length <= 30) {
      let mask = 0;
      for (let i = 0; i < nonZero.length; i++) if (nonZero[i]) mask |= 1 << i;
      return this.transformsTouchedByMask(mask);
    }
    const key = nonZero.map((x) => (x ? '1' : '0')).join('');
    return this.touched.get(key) ?? this.computeTouched(key, (i) => nonZero[i] === true);
  }

  /** `transformsTouchedBy` with the pattern as a bit mask (bit i = top dim i moves; ≤ 30 top dims). */
  transformsTouchedByMask(mask: number): readonly number[] {
    return this.touched.get(mask) ?? this.computeTouched(mask, (i) => ((mask >> i) & 1) === 1);
  }

  private computeTouched(key: number | string, moves: (i: number) => boolean): readonly number[] {
    const marked = new Array<boolean>(this.numHiddenDims).fill(false);
    this.topDimHiddenIds.forEach((id, i) => {
      if (moves(i)) marked[id] = true;
    });
    const run: number[] = [];
    for (let i = this.transforms.length - 1; i >= 0; i--) {
      if (this.upperDimHiddenIds[i]!.some((id) => marked[id])) {
        run.push(i);
        for (const id of this.lowerDimHiddenIds[i]!) marked[id] = true;
      }
    }
    this.touched.set(key, run);
    return run;
  }

  /** Multi-line readable form: one line per transform (`upper ids → lower ids`), then the top ids. */
  toString(): string {
    return formatGraph('TensorAdaptor', this, `lengths (${this.topLengths.map(formatSymInt).join(', ')})`);
  }
}

/** Shared by adaptor and descriptor `toString`. */
export function formatGraph(title: string, a: TensorAdaptor, header: string, extra: readonly string[] = []): string {
  const rows = a.transforms.map((t, i) => {
    const up = a.upperDimHiddenIds[i]!.map((x) => `h${x}`).join(' ');
    const low = a.lowerDimHiddenIds[i]!.map((x) => `h${x}`).join(' ');
    return [t.toString(), `${up === '' ? '∅' : up} → ${low === '' ? '∅' : low}`];
  });
  const width = Math.max(0, ...rows.map((r) => r[0]!.length));
  const lines = [`${title} ${header}`];
  for (const [t, ids] of rows) lines.push(`  ${t!.padEnd(width)}  ${ids}`);
  lines.push(`  top ${a.topDimHiddenIds.map((x) => `h${x}`).join(' ')}; bottom ${a.bottomDimHiddenIds.map((x) => `h${x}`).join(' ')}`);
  for (const e of extra) lines.push(`  ${e}`);
  return lines.join('\n');
}

/**
 * A tensor adaptor with every symbol bound: plain-number evaluation over a hidden index vector.
 * This is the single numeric evaluator the rest of the package (and emitted C++) is checked against.
 */
export class BoundTensorAdaptor {
  readonly adaptor: TensorAdaptor;
  readonly bindings: Bindings;
  readonly steps: readonly TransformStep[];
  readonly topLengths: readonly number[];
  /** Transforms whose validity is checked at run time (the non-skipped pads). */
  readonly checkedSteps: readonly TransformStep[];
  private readonly scratch: number[];
  /** Reused by moves for the hidden diff vector (evaluation is single-threaded). */
  readonly diffScratch: number[];

  constructor(adaptor: TensorAdaptor, bindings: Bindings) {
    checkBindings(adaptor.symbols, bindings);
    this.adaptor = adaptor;
    this.bindings = bindings;
    this.steps = adaptor.transforms.map((t, i) => t.compile(bindings, adaptor.upperDimHiddenIds[i]!, adaptor.lowerDimHiddenIds[i]!));
    this.checkedSteps = this.steps.filter((_, i) => !adaptor.transforms[i]!.isAlwaysValid);
    this.topLengths = adaptor.topLengths.map((l) => evaluateSymInt(l, bindings));
    this.scratch = new Array<number>(adaptor.numHiddenDims).fill(0);
    this.diffScratch = new Array<number>(adaptor.numHiddenDims).fill(0);
  }

  /** A fresh hidden vector for `top` (all hidden dims computed). */
  hiddenIndex(top: readonly number[]): number[] {
    const a = this.adaptor;
    if (top.length !== a.topDimHiddenIds.length) throw new ArityMismatchError('top index', a.topDimHiddenIds.length, top.length);
    const h = new Array<number>(a.numHiddenDims).fill(0);
    this.fillHidden(top, h);
    return h;
  }

  /** Writes the hidden vector of `top` into `h` (no arity check: the hot path). */
  fillHidden(top: readonly number[], h: number[]): void {
    const ids = this.adaptor.topDimHiddenIds;
    for (let i = 0; i < ids.length; i++) h[ids[i]!] = top[i]!;
    const steps = this.steps;
    for (let i = steps.length - 1; i >= 0; i--) steps[i]!.lower(h);
  }

  /** CK's `calculate_bottom_index`. */
  calculateBottomIndex(top: readonly number[]): number[] {
    const h = this.hiddenIndex(top);
    return this.adaptor.bottomDimHiddenIds.map((id) => h[id]!);
  }

  /** The runtime validity of a hidden vector, assuming its top index is inside the top lengths. */
  isValidHidden(h: number[]): boolean {
    const c = this.checkedSteps;
    for (let i = 0; i < c.length; i++) if (!c[i]!.valid(h)) return false;
    return true;
  }

  /** Whether `top` lies inside the top lengths. */
  isTopInRange(top: readonly number[]): boolean {
    const L = this.topLengths;
    if (top.length !== L.length) throw new ArityMismatchError('top index', L.length, top.length);
    for (let i = 0; i < L.length; i++) if (!(top[i]! >= 0 && top[i]! < L[i]!)) return false;
    return true;
  }

  /** Value of one hidden-vector entry of `top` without allocating (uses a scratch vector). */
  hiddenValue(top: readonly number[], id: number): number {
    this.fillHidden(top, this.scratch);
    return this.scratch[id]!;
  }

  /** Scratch-based validity of `top`, assuming it is inside the top lengths. */
  isValidTop(top: readonly number[]): boolean {
    this.fillHidden(top, this.scratch);
    return this.isValidHidden(this.scratch);
  }

  /** See `TensorAdaptor.transformsTouchedBy`. */
  transformsTouchedBy(nonZero: readonly boolean[]): readonly number[] {
    return this.adaptor.transformsTouchedBy(nonZero);
  }
}

/**
 * CK's `transform_tensor_adaptor`: appends `transforms` on top of `old`. `lowerDimIds[i]` lists the
 * old top positions transform i consumes and `upperDimIds[i]` the new top positions it produces.
 * Every old top dim must be consumed exactly once and the new positions must be a permutation of
 * 0..m−1. New hidden ids follow the old ones in transform order; the bottom is unchanged.
 * Postcondition: new.calculateBottomIndex(t) = old.calculateBottomIndex(lower of t through `transforms`).
 */
export function transformTensorAdaptor(
  old: TensorAdaptor,
  transforms: readonly Transform[],
  lowerDimIds: readonly (readonly number[])[],
  upperDimIds: readonly (readonly number[])[],
): TensorAdaptor {
  const what = 'transformTensorAdaptor';
  checkStage(what, transforms, lowerDimIds, upperDimIds, old.numTopDims, old.topLengths);
  let next = old.numHiddenDims;
  const newTop = new Array<number>(upperDimIds.flat().length);
  const lows = lowerDimIds.map((ids) => ids.map((p) => old.topDimHiddenIds[p]!));
  const ups = upperDimIds.map((ids) =>
    ids.map((p) => {
      const id = next++;
      newTop[p] = id;
      return id;
    }),
  );
  return new TensorAdaptor(
    [...old.transforms, ...transforms],
    [...old.lowerDimHiddenIds, ...lows],
    [...old.upperDimHiddenIds, ...ups],
    old.bottomDimHiddenIds,
    newTop,
  );
}

/**
 * CK's `make_single_stage_tensor_adaptor`: one stage of transforms over `numBottom` bottom dims
 * (ids 0..numBottom−1, every one consumed exactly once); new top position p gets hidden id
 * numBottom + p.
 */
export function makeSingleStageTensorAdaptor(
  transforms: readonly Transform[],
  lowerDimIds: readonly (readonly number[])[],
  upperDimIds: readonly (readonly number[])[],
): TensorAdaptor {
  const numBottom = lowerDimIds.flat().length;
  checkStage('makeSingleStageTensorAdaptor', transforms, lowerDimIds, upperDimIds, numBottom, undefined);
  const ups = upperDimIds.map((ids) => ids.map((p) => numBottom + p));
  const top = Array.from({ length: upperDimIds.flat().length }, (_, p) => numBottom + p);
  return new TensorAdaptor(
    transforms,
    lowerDimIds,
    ups,
    Array.from({ length: numBottom }, (_, i) => i),
    top,
  );
}

/**
 * CK's `chain_tensor_adaptors`: `second`'s bottom dims are identified, by position, with `first`'s
 * top dims; `second`'s other hidden ids are renumbered after `first`'s. Postcondition:
 * chain(a, b).calculateBottomIndex(t) = a.calculateBottomIndex(b.calculateBottomIndex(t)).
 */
export function chainTensorAdaptors(first: TensorAdaptor, second: TensorAdaptor): TensorAdaptor {
  if (second.numBottomDims !== first.numTopDims)
    throw new ArityMismatchError(
      'chainTensorAdaptors: second adaptor bottom dims (= first adaptor top dims)',
      first.numTopDims,
      second.numBottomDims,
    );
  const map = new Map<number, number>();
  second.bottomDimHiddenIds.forEach((id, k) => map.set(id, first.topDimHiddenIds[k]!));
  let next = first.numHiddenDims;
  for (let id = 0; id < second.numHiddenDims; id++) if (!map.has(id) && isUsed(second, id)) map.set(id, next++);
  const m = (id: number): number => map.get(id)!;
  return new TensorAdaptor(
    [...first.transforms, ...second.transforms],
    [...first.lowerDimHiddenIds, ...second.lowerDimHiddenIds.map((ids) => ids.map(m))],
    [...first.upperDimHiddenIds, ...second.upperDimHiddenIds.map((ids) => ids.map(m))],
    first.bottomDimHiddenIds,
    second.topDimHiddenIds.map(m),
  );
}

function isUsed(a: TensorAdaptor, id: number): boolean {
  return (
    a.topDimHiddenIds.includes(id) || a.lowerDimHiddenIds.some((x) => x.includes(id)) || a.upperDimHiddenIds.some((x) => x.includes(id))
  );
}

/** Validates one stage: arities, each old top consumed exactly once, new tops a permutation, static lengths agree. */
export function checkStage(
  what: string,
  transforms: readonly Transform[],
  lowerDimIds: readonly (readonly number[])[],
  upperDimIds: readonly (readonly number[])[],
  numOldTop: number,
  oldTopLengths: readonly SymInt[] | undefined,
): void {
  if (lowerDimIds.length !== transforms.length)
    throw new ArityMismatchError(`${what} lowerDimIds (one list per transform)`, transforms.length, lowerDimIds.length);
  if (upperDimIds.length !== transforms.length)
    throw new ArityMismatchError(`${what} upperDimIds (one list per transform)`, transforms.length, upperDimIds.length);
  const consumed = new Array<boolean>(numOldTop).fill(false);
  transforms.forEach((t, i) => {
    const low = lowerDimIds[i]!;
    const up = upperDimIds[i]!;
    if (low.length !== t.lowerArity)
      throw new ArityMismatchError(`${what} lowerDimIds[${i}] for ${t.toString()}`, t.lowerArity, low.length);
    if (up.length !== t.upperArity) throw new ArityMismatchError(`${what} upperDimIds[${i}] for ${t.toString()}`, t.upperArity, up.length);
    low.forEach((p, j) => {
      if (!Number.isSafeInteger(p) || p < 0 || p >= numOldTop)
        throw new InvalidParameterError(`${what} lowerDimIds[${i}][${j}]`, `must be a top dimension in [0, ${numOldTop})`, String(p));
      if (consumed[p]) throw new DimensionConsumedTwiceError(what, p);
      consumed[p] = true;
      const expected = oldTopLengths?.[p];
      const found = t.lowerLengths[j];
      if (typeof expected === 'number' && typeof found === 'number' && expected !== found) {
        throw new LengthMismatchError(
          `${what} transform ${i} (${t.toString()}) lower dim ${j} = top dimension ${p}`,
          String(expected),
          String(found),
        );
      }
    });
  });
  const missing = consumed.indexOf(false);
  if (missing >= 0) throw new DimensionNotConsumedError(what, missing);
  const positions = upperDimIds.flat();
  const seen = new Array<boolean>(positions.length).fill(false);
  for (const p of positions) {
    if (!Number.isSafeInteger(p) || p < 0 || p >= positions.length || seen[p])
      throw new TopDimensionPermutationError(`${what} upperDimIds`, positions);
    seen[p] = true;
  }
}
