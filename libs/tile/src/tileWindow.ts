import {
  add,
  addressOf,
  and,
  array,
  call,
  cast,
  deref,
  ge,
  index,
  int32,
  le,
  lit,
  member,
  opaque,
  pointer,
  snippet,
  typeToString,
  type CType,
  type Expr,
  type ExprLike,
  type VarExpr,
} from '@tilekit/codegen';
import { emitCalculateOffset, isStatic, NO_BINDINGS, sym, type Bindings, type TensorDescriptor } from '@tilekit/layout';
import { emitPartitionIndex, emitXIndex, zeroOf, type DistributedTensor, type ThreadBuffers } from './distributedTensor.ts';
import { TileEmitError } from './errors.ts';
import { spaceFillingCurve } from './spaceFillingCurve.ts';
import type { TileDistributionEncoding } from './tileDistributionEncoding.ts';
import type { BlockEmitter, ThreadScope } from './blockEmitter.ts';

/** Where a view's elements live: global memory or the block's shared memory. */
export type MemorySpace = 'global' | 'shared';

/**
 * CK's `tensor_view`: a pointer (or shared array) of elements laid out by a layout descriptor.
 * `elementBytes` sizes vector accesses (integers/floats know theirs; opaque types such as `__half`
 * must give it).
 */
export interface TensorView {
  readonly pointer: Expr;
  readonly descriptor: TensorDescriptor;
  readonly element: CType;
  readonly elementBytes: number;
  readonly space: MemorySpace;
}

/** Makes a {@link TensorView}; the element type is the pointee of `pointer`. */
export function makeTensorView(
  ptr: Expr,
  descriptor: TensorDescriptor,
  options: { readonly space?: MemorySpace; readonly elementBytes?: number } = {},
): TensorView {
  const t = ptr.type;
  const element = t.kind === 'pointer' ? t.pointee : t.kind === 'array' ? t.element : undefined;
  if (element === undefined) throw new TileEmitError('makeTensorView pointer', 'must be a pointer or an array', typeToString(t));
  const bytes = options.elementBytes ?? (element.kind === 'int' || element.kind === 'float' ? element.bits / 8 : undefined);
  if (bytes === undefined || !Number.isSafeInteger(bytes) || bytes < 1)
    throw new TileEmitError(
      'makeTensorView elementBytes',
      'give the element size in bytes for non-arithmetic elements',
      typeToString(element),
    );
  return { pointer: ptr, descriptor, element, elementBytes: bytes, space: options.space ?? (t.kind === 'array' ? 'shared' : 'global') };
}

/**
 * CK's load/store traits of a window: the Y dimension accessed as vectors and how many scalars each
 * access moves, plus the snake-ordered access list. A Y can be the vector dim when its H digit is the
 * least significant non-trivial digit of its X (consecutive Y values are consecutive X values), and
 * that X's top dim has a safe vector of stride 1 in the descriptor; its vector length is the gcd of
 * the digit length, the descriptor's safe vector length, the window origin's known alignment along
 * that X and the tensor length's known divisor (so a vector never straddles the tensor's end), cut
 * to a power of two of at most `maxVectorBytes` (16: one 128-bit access). The longest wins (ties: the
 * first Y, as CK). Postcondition: accesses tile the Y box exactly (tested).
 */
export interface LoadStoreTraits {
  /** The Y accessed as vectors (undefined: scalar accesses). */
  readonly vectorDimY: number | undefined;
  /** Its X dim. */
  readonly vectorDimX: number | undefined;
  readonly scalarPerVector: number;
  /** Y index of each access's first element, in snake order. */
  readonly accesses: readonly (readonly number[])[];
}

const gcd = (a: number, b: number): number => (b === 0 ? Math.abs(a) : gcd(b, a % b));

/** Computes {@link LoadStoreTraits} for reading `encoding`'s tile through `descriptor`. */
export function loadStoreTraits(
  encoding: TileDistributionEncoding,
  descriptor: TensorDescriptor,
  options: { readonly originAlignment: readonly number[]; readonly elementBytes: number; readonly maxVectorBytes?: number },
): LoadStoreTraits {
  const vec = descriptor.safeVectorLengthsStrides();
  const maxScalars = Math.max(1, Math.floor((options.maxVectorBytes ?? 16) / options.elementBytes));
  let best: { y: number; x: number; len: number } | undefined;
  encoding.ysToRhs.forEach((ref, y) => {
    const x = ref.major - 1;
    const h = encoding.hsLengthss[x]!;
    if (h.slice(ref.minor + 1).some((l) => l !== 1)) return;
    if (vec.strides[x] !== 1 || vec.lengths[x]! < 2) return;
    let len = gcd(h[ref.minor]!, vec.lengths[x]!);
    len = gcd(len, options.originAlignment[x] ?? 1);
    len = gcd(len, sym.divisorOf(descriptor.lengths[x]!));
    let p = 1;
    while (len % (p * 2) === 0 && p * 2 <= maxScalars) p *= 2;
    if (p > 1 && (best === undefined || p > best.len)) best = { y, x, len: p };
  });
  const spa = encoding.yLengths.map((_, y) => (best !== undefined && y === best.y ? best.len : 1));
  return { vectorDimY: best?.y, vectorDimX: best?.x, scalarPerVector: best?.len ?? 1, accesses: spaceFillingCurve(encoding.yLengths, spa) };
}

/** What `makeTileWindow` takes. */
export interface TileWindowSpec {
  readonly view: TensorView;
  /** Static window lengths (one per tensor dim). */
  readonly lengths: readonly number[];
  /** The window origin in the tensor (runtime `int` expressions or numbers). */
  readonly origin: readonly ExprLike[];
  /**
   * The distribution of loads/stores (CK's `tile_window_with_static_distribution`); without it the
   * window takes the distribution of the tensor stored/loaded (a static-length window).
   */
  readonly encoding?: TileDistributionEncoding;
  /**
   * A known divisor of each origin coordinate, for all positions the window will be moved to (vector
   * accesses need aligned starts). Default: what the origin expressions show (a literal, or a product
   * with a literal), 1 otherwise.
   */
  readonly originAlignment?: readonly number[];
  /**
   * The origin is a compile-time constant (non-negative integers only) and the window never moves
   * (CK's windows on LDS at a static origin): no origin variables are declared (the origin is
   * emitted as literals), `moveTileWindow` refuses the window, and every dim where the window lies
   * inside a tensor dim of static length (origin + window length ≤ length) gets no runtime bounds
   * check — the distribution keeps each access inside the window, so the check could never fail,
   * and a compiler cannot always prove that itself (clang-19 for gfx942 kept them).
   */
  readonly fixedOrigin?: boolean;
}

/**
 * CK's `tile_window`: a view, static window lengths, a runtime origin held in mutable `int`
 * variables (so `moveTileWindow` can shift it inside loops) — or, for a fixed origin, literals —
 * and optionally a distribution. Block level: create and move it outside `threads` regions; load
 * and store inside them.
 */
export class TileWindow {
  readonly view: TensorView;
  readonly lengths: readonly number[];
  /** The origin: mutable `int` variables, or literals when the origin is fixed. */
  readonly origin: readonly Expr[];
  readonly encoding: TileDistributionEncoding | undefined;
  readonly originAlignment: readonly number[];
  /** The compile-time origin of a fixed-origin window (see `TileWindowSpec.fixedOrigin`); undefined for a movable one. */
  readonly fixedOrigin: readonly number[] | undefined;
  readonly #traits = new Map<string, LoadStoreTraits>();

  constructor(
    view: TensorView,
    lengths: readonly number[],
    origin: readonly Expr[],
    encoding: TileDistributionEncoding | undefined,
    originAlignment: readonly number[],
    fixedOrigin?: readonly number[],
  ) {
    this.view = view;
    this.lengths = lengths;
    this.origin = origin;
    this.encoding = encoding;
    this.originAlignment = originAlignment;
    this.fixedOrigin = fixedOrigin;
  }

  /**
   * Whether dim `i` of every access is statically inside the tensor: a fixed origin, a static
   * tensor length, and origin ≥ 0 with origin + window length ≤ that length.
   */
  staticallyInside(i: number): boolean {
    const length = this.view.descriptor.lengths[i];
    const o = this.fixedOrigin?.[i];
    return o !== undefined && length !== undefined && isStatic(length) && o >= 0 && o + this.lengths[i]! <= length;
  }

  /** The traits of accessing this window with `encoding` (cached). */
  traits(encoding: TileDistributionEncoding): LoadStoreTraits {
    const key = encoding.toString();
    let t = this.#traits.get(key);
    if (t === undefined) {
      t = loadStoreTraits(encoding, this.view.descriptor, { originAlignment: this.originAlignment, elementBytes: this.view.elementBytes });
      this.#traits.set(key, t);
    }
    return t;
  }
}

/** The largest divisor of `e`'s value that its shape proves (literals, products with literals, sums). */
export function knownMultiple(e: ExprLike): number {
  if (typeof e === 'number') return e === 0 ? 0 : Math.abs(e);
  if (typeof e !== 'object') return 1;
  if (e.kind === 'literal') return typeof e.value === 'boolean' ? 1 : Math.abs(Number(e.value));
  if (e.kind === 'binary') {
    if (e.op === '*') return knownMultiple(e.lhs) * knownMultiple(e.rhs) || 0;
    if (e.op === '+' || e.op === '-') return gcd(knownMultiple(e.lhs), knownMultiple(e.rhs));
    if (e.op === '<<' && e.rhs.kind === 'literal') return knownMultiple(e.lhs) * 2 ** Number(e.rhs.value);
  }
  if (e.kind === 'cast') return knownMultiple(e.operand);
  return 1;
}

/** CK's `make_tile_window`: declares the origin variables in the block (function level). */
export function makeTileWindow(block: BlockEmitter, spec: TileWindowSpec): TileWindow {
  const n = spec.view.descriptor.numDims;
  if (spec.lengths.length !== n || spec.origin.length !== n) {
    throw new TileEmitError(
      'makeTileWindow',
      `lengths and origin need one entry per tensor dim (${n})`,
      `${spec.lengths.length} and ${spec.origin.length}`,
    );
  }
  if (spec.encoding !== undefined) {
    if (spec.encoding.ndimX !== n || spec.encoding.xLengths.some((l, i) => l !== spec.lengths[i])) {
      throw new TileEmitError(
        'makeTileWindow encoding',
        `its X lengths must equal the window lengths [${spec.lengths.join(', ')}]`,
        `[${spec.encoding.xLengths.join(', ')}]`,
      );
    }
  }
  const align = spec.originAlignment ?? spec.origin.map((o) => knownMultiple(o));
  if (align.length !== n || align.some((a) => !Number.isSafeInteger(a) || a < 0))
    throw new TileEmitError('makeTileWindow originAlignment', 'one integer ≥ 0 per dim (0: the origin is 0)', `[${align.join(', ')}]`);
  if (spec.fixedOrigin === true) {
    const fixed = spec.origin.map((o) => (typeof o === 'number' && Number.isSafeInteger(o) && o >= 0 ? o : undefined));
    if (fixed.some((o) => o === undefined))
      throw new TileEmitError(
        'makeTileWindow origin',
        'a fixed origin must be non-negative integers (compile-time constants)',
        spec.origin.map((o) => (typeof o === 'number' ? String(o) : 'an expression')).join(', '),
      );
    const origin = fixed as number[];
    return new TileWindow(
      spec.view,
      [...spec.lengths],
      origin.map((o) => lit(o, int32)),
      spec.encoding,
      align.map((a) => (a === 0 ? 16 : a)),
      origin,
    );
  }
  const origin = spec.origin.map((o) => block.b.var('origin', int32, cast(o, int32)));
  // A zero origin is aligned for any vector (at most 16 scalars); later moves must keep that.
  return new TileWindow(
    spec.view,
    [...spec.lengths],
    origin,
    spec.encoding,
    align.map((a) => (a === 0 ? 16 : a)),
  );
}

/**
 * CK's `move_tile_window`: origin += step, emitted at block level (outside `threads`). Steps must
 * keep the declared origin alignment (a static step is checked).
 */
export function moveTileWindow(block: BlockEmitter, window: TileWindow, step: readonly ExprLike[]): void {
  if (step.length !== window.origin.length)
    throw new TileEmitError('moveTileWindow step', `one entry per dim (${window.origin.length})`, String(step.length));
  if (window.fixedOrigin !== undefined)
    throw new TileEmitError(
      'moveTileWindow window',
      'must not have a fixed origin (it has no origin variables)',
      `[${window.fixedOrigin.join(', ')}]`,
    );
  step.forEach((s, i) => {
    const a = window.originAlignment[i]!;
    if (knownMultiple(s) % a !== 0)
      throw new TileEmitError(
        'moveTileWindow step',
        `step ${i} must keep the origin a multiple of ${a} (declare originAlignment to allow it)`,
        String(typeof s === 'object' ? 'an expression' : s),
      );
    if (s !== 0) block.b.assign(window.origin[i]! as VarExpr, cast(s, int32), '+=');
  });
}

/**
 * CK's `get_slice_tile(window, xBegins, xEnds)`: a new window on the same view over the sub-box
 * [xBegins, xEnds) of `window` (origin + xBegins, lengths xEnds − xBegins; its own origin
 * variables, so later moves of either window are independent; a fixed-origin window's slice is
 * fixed too), with `encoding` (default none: it
 * takes the distribution of what is loaded or stored).
 */
export function sliceTileWindow(
  block: BlockEmitter,
  window: TileWindow,
  xBegins: readonly number[],
  xEnds: readonly number[],
  encoding?: TileDistributionEncoding,
): TileWindow {
  const n = window.lengths.length;
  if (xBegins.length !== n || xEnds.length !== n)
    throw new TileEmitError('sliceTileWindow', `xBegins and xEnds need one entry per dim (${n})`, `${xBegins.length} and ${xEnds.length}`);
  xBegins.forEach((b, i) => {
    const e = xEnds[i]!;
    if (!Number.isSafeInteger(b) || !Number.isSafeInteger(e) || b < 0 || e <= b || e > window.lengths[i]!) {
      throw new TileEmitError('sliceTileWindow', `dim ${i} needs 0 ≤ begin < end ≤ ${window.lengths[i]!}`, `[${b}, ${e})`);
    }
  });
  const fixed = window.fixedOrigin;
  return makeTileWindow(block, {
    view: window.view,
    lengths: xEnds.map((e, i) => e - xBegins[i]!),
    origin: fixed === undefined ? window.origin.map((o, i) => add(o, xBegins[i]!)) : fixed.map((o, i) => o + xBegins[i]!),
    ...(encoding === undefined ? {} : { encoding }),
    originAlignment: window.originAlignment.map((a, i) => gcd(a, xBegins[i]!)),
    ...(fixed === undefined ? {} : { fixedOrigin: true }),
  });
}

const vecSnippet = snippet('tk_vec', [
  '// N elements moved as one access (alignas: the compiler emits one vector load/store).',
  'template <typename T, int N>',
  'struct alignas(sizeof(T) * N) tk_vec {',
  '  T v[N];',
  '};',
]);

function distributionOf(window: TileWindow, tensor: DistributedTensor, what: string): TileDistributionEncoding {
  if (window.encoding !== undefined && !window.encoding.equals(tensor.encoding)) {
    throw new TileEmitError(what, "the tensor's distribution must be the window's", `${tensor.encoding} and ${window.encoding}`);
  }
  if (tensor.encoding.ndimX !== window.lengths.length || tensor.encoding.xLengths.some((l, i) => l !== window.lengths[i])) {
    throw new TileEmitError(
      what,
      `the tensor's X lengths must equal the window lengths [${window.lengths.join(', ')}]`,
      `[${tensor.encoding.xLengths.join(', ')}]`,
    );
  }
  return tensor.encoding;
}

/** One vector access of a window by the calling thread (see {@link emitTileWindowAccesses}). */
export interface TileWindowAccess {
  /** The view's element offset of the vector's first scalar (`int`, or `long long` when needed). */
  readonly offset: Expr;
  /** `bool`: the whole vector lies inside the tensor and the descriptor accepts it. Never access memory when false. */
  readonly pred: Expr;
  /** Y index of the first scalar. */
  readonly ys: readonly number[];
  /** Thread-buffer index of each scalar of the vector (consecutive in memory). */
  readonly ds: readonly number[];
}

/**
 * The access walk every window operation is built on, exposed for other transfer kinds (cp.async
 * global → shared copies with zero-fill, TMA-friendly tiling): for each access of the calling thread
 * in snake order, its offset, predicate and registers. Returns the traits used.
 */
export function emitTileWindowAccesses(
  t: ThreadScope,
  window: TileWindow,
  encoding: TileDistributionEncoding,
  visit: (a: TileWindowAccess) => void,
): LoadStoreTraits {
  const traits = window.traits(encoding);
  const desc = window.view.descriptor;
  const emitter = t.block.indexEmitter;
  const ps = emitPartitionIndex(t, encoding);
  const lengths = desc.lengths.map((l) => emitter.emit(t.b, l, new Map()));
  for (const ys of traits.accesses) {
    const xs = emitXIndex(t, encoding, ps, ys);
    const top = xs.map((x, i) => t.b.let('top', int32, add(window.origin[i]!, x)));
    const { offset, valid } = emitCalculateOffset(t.b, desc, top, emitter);
    // Explicit bounds: the whole vector lies inside the tensor (the descriptor's validity assumes it).
    // Left out per dim where a fixed origin puts the whole window inside a static length: x lies
    // in [0, window length) by the distribution, so origin + x stays in bounds.
    let pred: Expr = valid;
    top.forEach((x, i) => {
      if (window.staticallyInside(i)) return;
      const extent = i === traits.vectorDimX ? traits.scalarPerVector : 1;
      pred = and(pred, and(ge(x, 0), le(add(x, extent), lengths[i]!)));
    });
    const ds = Array.from({ length: traits.scalarPerVector }, (_, j) =>
      encoding.calculateD(ys.map((y, k) => (k === traits.vectorDimY ? y + j : y))),
    );
    visit({ offset, pred: t.b.let('inside', pred.type, pred), ys, ds });
  }
  return traits;
}

function vectorType(element: CType, n: number): CType {
  return opaque(`tk_vec<${typeToString(element)}, ${n}>`, [vecSnippet]);
}

/**
 * CK's `load_tile`: the calling thread reads its elements of the window into `out` (converting to
 * its type). One access per vector (CUDA: a single aligned vector load); an access whose vector is
 * not entirely inside the tensor and valid is never read: its registers become zero. Postcondition
 * (host dialect with g++ against {@link evaluateLoadTile}): every register equals the element of its
 * X index at the window origin, or zero outside.
 */
export function loadTile(t: ThreadScope, window: TileWindow, out: DistributedTensor): void {
  const enc = distributionOf(window, out, 'loadTile');
  const v = window.view;
  const conv = (e: Expr): Expr => cast(e, out.type);
  emitTileWindowAccesses(t, window, enc, ({ offset, pred, ds }) => {
    t.b.if(
      pred,
      (bt) => {
        if (t.block.dialect === 'cuda' && ds.length > 1) {
          const vt = vectorType(v.element, ds.length);
          const vv = bt.let('vec', vt, deref(cast(addressOf(index(v.pointer, offset)), pointer(vt, { const: true }))));
          ds.forEach((d, j) =>
            bt.assign(out.registers.at({ ...t, b: bt }, d), conv(index(member(vv, 'v', array(v.element, ds.length)), j))),
          );
        } else {
          ds.forEach((d, j) => bt.assign(out.registers.at({ ...t, b: bt }, d), conv(index(v.pointer, add(offset, j)))));
        }
      },
      (be) => ds.forEach((d) => be.assign(out.registers.at({ ...t, b: be }, d), zeroOf(out.type))),
    );
  });
}

/**
 * CK's `store_tile`: the calling thread writes its elements of `tensor` into the window (converted
 * to the view's type); vectors not entirely inside the tensor and valid are dropped, never written.
 * Replicated elements (R) are written by each replica, with the same value.
 */
export function storeTile(t: ThreadScope, window: TileWindow, tensor: DistributedTensor): void {
  const enc = distributionOf(window, tensor, 'storeTile');
  const v = window.view;
  const conv = (e: Expr): Expr => cast(e, v.element);
  emitTileWindowAccesses(t, window, enc, ({ offset, pred, ds }) => {
    t.b.if(pred, (bt) => {
      const at = (d: number): Expr => conv(tensor.registers.at({ ...t, b: bt }, d));
      if (t.block.dialect === 'cuda' && ds.length > 1) {
        const vt = vectorType(v.element, ds.length);
        const vv = bt.var('vec', vt);
        ds.forEach((d, j) => bt.assign(index(member(vv, 'v', array(v.element, ds.length)), j), at(d)));
        bt.assign(deref(cast(addressOf(index(v.pointer, offset)), pointer(vt))), vv);
      } else {
        ds.forEach((d, j) => bt.assign(index(v.pointer, add(offset, j)), at(d)));
      }
    });
  });
}

/**
 * CK's `update_tile` with the atomic-add memory operation: every in-bounds element of `tensor` is
 * added to memory (CUDA `atomicAdd` per scalar; host `+=`, threads being sequential). Replicas (R)
 * each add: the caller decides whether a replicated distribution is what they want.
 */
export function updateTile(t: ThreadScope, window: TileWindow, tensor: DistributedTensor): void {
  const enc = distributionOf(window, tensor, 'updateTile');
  const v = window.view;
  emitTileWindowAccesses(t, window, enc, ({ offset, pred, ds }) => {
    t.b.if(pred, (bt) => {
      ds.forEach((d, j) => {
        const value = cast(tensor.registers.at({ ...t, b: bt }, d), v.element);
        const target = index(v.pointer, add(offset, j));
        if (t.block.dialect === 'cuda') bt.expr(call('atomicAdd', [addressOf(target), value], v.element));
        else bt.assign(target, value, '+=');
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// TS evaluators (the reference the emitted code is tested against).

/** A window as plain numbers, for the TS evaluators. */
export interface WindowValue {
  readonly descriptor: TensorDescriptor;
  readonly encoding: TileDistributionEncoding;
  readonly origin: readonly number[];
  readonly bindings?: Bindings;
}

/** Calls `visit` with the memory offset (or undefined when outside/invalid) of every (thread, d). */
function forEachElement(w: WindowValue, visit: (thread: number, d: number, offset: number | undefined) => void): void {
  const desc = w.descriptor.bind(w.bindings ?? NO_BINDINGS);
  const enc = w.encoding;
  for (let thread = 0; thread < enc.numThreads; thread++) {
    const ps = enc.partitionIndexOf(thread);
    for (let d = 0; d < enc.threadBufferSize; d++) {
      const top = enc.calculateXIndexFromD(ps, d).map((x, i) => x + w.origin[i]!);
      visit(thread, d, desc.isValidIndex(top) ? desc.calculateOffset(top) : undefined);
    }
  }
}

/** What `loadTile` puts in each register: `memory[offset]`, or 0 outside the tensor or invalid. */
export function evaluateLoadTile(w: WindowValue, memory: readonly number[]): ThreadBuffers {
  const out: ThreadBuffers = Array.from({ length: w.encoding.numThreads }, () => new Array<number>(w.encoding.threadBufferSize).fill(0));
  forEachElement(w, (thread, d, off) => {
    if (off !== undefined) out[thread]![d] = memory[off]!;
  });
  return out;
}

/** What `storeTile` does to `memory` (in place, threads in order); returns the written offsets. */
export function evaluateStoreTile(w: WindowValue, buffers: ThreadBuffers, memory: number[]): Set<number> {
  const written = new Set<number>();
  forEachElement(w, (thread, d, off) => {
    if (off === undefined) return;
    memory[off] = buffers[thread]![d]!;
    written.add(off);
  });
  return written;
}

/** What `updateTile` (atomic add) does to `memory` (in place). */
export function evaluateUpdateTile(w: WindowValue, buffers: ThreadBuffers, memory: number[]): void {
  forEachElement(w, (thread, d, off) => {
    if (off !== undefined) memory[off] = memory[off]! + buffers[thread]![d]!;
  });
}
