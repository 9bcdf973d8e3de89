import {
  add,
  and,
  bool,
  eq,
  infinity,
  exp2Approx,
  float32,
  gt,
  lit,
  log2Approx,
  maxOf,
  mul,
  neg,
  not,
  select,
  sub,
  div,
  type Expr,
} from '@tilekit/codegen';
import {
  blockReducePlan,
  makeDistributedTensor,
  reduceEncoding,
  type BlockEmitter,
  type DistributedTensor,
  type ThreadScope,
  type TileDistributionEncoding,
} from '@tilekit/tile';
import { FmhaError } from '../errors.ts';

/** ln 2: LSE = (m + log2 l) · ln 2 turns the exp2-domain state into a natural log. */
const LN2 = Math.LN2;

/**
 * The online softmax of {@link onlineSoftmaxUpdate} as block code over a score tile in registers
 * (CK-tile's `block_fmha` softmax steps, FlashAttention-2's rescaling): the score tile S is a
 * distributed tensor whose X1 is the key dim; the row state m (running max, exp2 domain) and l
 * (running sum) live in the row distribution (S's encoding reduced over X1). The row maximum is
 * all-reduced across the lanes that share a row (shuffles from tile's `blockReducePlan`); the
 * row sum stays thread-partial until {@link emitFinalize} (every lane of a row rescales by the same
 * factor, so partial sums stay consistent — one all-reduce per row instead of one per key tile).
 * CUDA only (fast exp2/log2 and lane shuffles). Postcondition (the attention GPU tests, against the
 * fp32 CPU reference): O and LSE follow `onlineSoftmaxUpdate` / `onlineSoftmaxFinalize`, fully
 * masked rows included.
 */
export class BlockOnlineSoftmax {
  readonly block: BlockEmitter;
  readonly sEncoding: TileDistributionEncoding;
  /** Distribution of the per-row state (S's encoding reduced over the key dim). */
  readonly rowEncoding: TileDistributionEncoding;
  /** S element d → its row-state element. */
  readonly rowOf: readonly number[];
  /** Running max m (exp2 domain: scaleLog2 · raw score). */
  readonly m: DistributedTensor;
  /** Thread-partial running sum l. */
  readonly l: DistributedTensor;
  readonly #laneMasks: readonly number[];

  constructor(block: BlockEmitter, sEncoding: TileDistributionEncoding, name = 'row') {
    this.block = block;
    this.sEncoding = sEncoding;
    const reduced = reduceEncoding(sEncoding, [1]);
    this.rowEncoding = reduced.encoding;
    this.rowOf = Array.from({ length: sEncoding.threadBufferSize }, (_, d) => {
      const ys = sEncoding.calculateYIndex(d);
      return reduced.encoding.calculateD(reduced.keptYs.map((y) => ys[y]!));
    });
    const { steps } = blockReducePlan(sEncoding, [1], block.warpSize);
    if (steps.some((s) => s.via !== 'lanes'))
      throw new FmhaError(
        'fmha/softmax-distribution',
        `BlockOnlineSoftmax: the key dim of ${sEncoding} must be spread over lanes of one warp only (no cross-warp row reduction)`,
      );
    this.#laneMasks = steps.flatMap((s) => {
      const masks: number[] = [];
      for (let mask = s.stride; mask < s.stride * s.length; mask *= 2) masks.push(mask);
      return masks;
    });
    this.m = makeDistributedTensor(block, `${name}_max`, this.rowEncoding, float32);
    this.l = makeDistributedTensor(block, `${name}_sum`, this.rowEncoding, float32);
  }

  /** Shuffle masks (XOR) that all-reduce a row across its lanes. */
  get laneMasks(): readonly number[] {
    return this.#laneMasks;
  }

  /** m = −∞, l = 0. */
  emitInit(t: ThreadScope): void {
    for (let r = 0; r < this.m.size; r++) {
      t.b.assign(this.m.at(t, r), infinity(float32, { negative: true }));
      t.b.assign(this.l.at(t, r), lit(0, float32));
    }
  }

  #allReduce(t: ThreadScope, value: Expr, combine: (a: Expr, b: Expr) => Expr): void {
    for (const mask of this.#laneMasks) {
      const other = t.b.let('other', float32, this.block.target.shflXor(value, mask));
      t.b.assign(value, combine(value, other));
    }
  }

  /**
   * One key tile: S (raw scores, −∞ where masked) becomes P = 2^(S·scaleLog2 − m_new) in place;
   * l becomes l·c + Σ P (thread-partial); returns c = 2^(m_old − m_new) per row, the factor for
   * the output accumulator. `first` (a compile-time fact) skips c, whose only use would be
   * rescaling zeros. `gate` (the PV skip) receives Δ = m_loc − m_old per row of the thread (log2
   * units; −∞ where the tile masks the whole row, +∞ on a row's first unmasked tile) and returns a
   * `bool`: false leaves l at l·c (the tile's P is not summed; the caller does not use it either).
   * `exchangeRowMax` runs once every row's tile maximum (raw scores, all-reduced over its lanes) is
   * known and before the new running max: it may raise the maxima in place, e.g. to the maximum over
   * several warpgroups that share the rows and each score their own key tiles (FlashMLA's shared
   * max), so that every such warpgroup keeps the same running max and their P and l add up.
   */
  emitUpdate(
    t: ThreadScope,
    s: DistributedTensor,
    scaleLog2: Expr,
    options: {
      readonly first?: boolean;
      readonly gate?: (rowDelta: readonly Expr[]) => Expr;
      readonly exchangeRowMax?: (t: ThreadScope, rowMax: readonly Expr[]) => void;
    } = {},
  ): DistributedTensor | undefined {
    if (!s.encoding.equals(this.sEncoding))
      throw new FmhaError(
        'fmha/softmax-distribution',
        'BlockOnlineSoftmax.emitUpdate: S must have the distribution the softmax was made for',
      );
    const b = t.b;
    const rows = this.m.size;
    const rowMax = Array.from({ length: rows }, (_, r) =>
      b.declare(`mx${r}`, float32, infinity(float32, { negative: true }), { storage: 'mutable' }),
    );
    for (let d = 0; d < s.size; d++) b.assign(rowMax[this.rowOf[d]!]!, maxOf(rowMax[this.rowOf[d]!]!, s.at(t, d)));
    const corr = options.first ? undefined : makeDistributedTensor(this.block, 'corr', this.rowEncoding, float32);
    const shift: Expr[] = [];
    const delta: Expr[] = [];
    const newMax = (r: number): void => {
      const mNew = b.let(`m_new${r}`, float32, maxOf(this.m.at(t, r), mul(rowMax[r]!, scaleLog2)));
      // A row with nothing unmasked yet subtracts 0, not −∞ (−∞ − −∞ is NaN).
      shift.push(b.let(`shift${r}`, float32, select(eq(mNew, infinity(float32, { negative: true })), lit(0, float32), mNew)));
      if (corr !== undefined) b.assign(corr.at(t, r), exp2Approx(this.block.target, sub(this.m.at(t, r), shift[r]!)));
      b.assign(this.m.at(t, r), mNew);
    };
    const exchange = options.exchangeRowMax;
    for (let r = 0; r < rows; r++) {
      this.#allReduce(t, rowMax[r]!, maxOf);
      if (options.gate !== undefined) {
        const negInf = infinity(float32, { negative: true });
        delta.push(b.let(`delta${r}`, float32, select(eq(rowMax[r]!, negInf), negInf, sub(mul(rowMax[r]!, scaleLog2), this.m.at(t, r)))));
      }
      if (exchange === undefined) newMax(r);
    }
    if (exchange !== undefined) {
      exchange(t, rowMax);
      for (let r = 0; r < rows; r++) newMax(r);
    }
    const keep = options.gate === undefined ? undefined : b.let('keep_tile', bool, options.gate(delta));
    const sum = Array.from({ length: rows }, (_, r) => b.declare(`psum${r}`, float32, lit(0, float32), { storage: 'mutable' }));
    for (let d = 0; d < s.size; d++) {
      const r = this.rowOf[d]!;
      // s·scaleLog2 − shift as one FFMA.
      b.assign(s.at(t, d), exp2Approx(this.block.target, add(mul(s.at(t, d), scaleLog2), neg(shift[r]!))));
      b.assign(sum[r]!, add(sum[r]!, s.at(t, d)));
    }
    for (let r = 0; r < rows; r++) {
      const added = keep === undefined ? sum[r]! : select(keep, sum[r]!, lit(0, float32));
      b.assign(this.l.at(t, r), corr === undefined ? added : add(mul(this.l.at(t, r), corr.at(t, r)), added));
    }
    return corr;
  }

  /** o[d] *= c[row of d]: `o` must share S's row distribution (same M split, any N). */
  emitRescale(t: ThreadScope, o: DistributedTensor, c: DistributedTensor): void {
    const rowOf = this.#rowsOf(o);
    for (let d = 0; d < o.size; d++) t.b.assign(o.at(t, d), mul(o.at(t, d), c.at(t, rowOf[d]!)));
  }

  /**
   * {@link emitRescale}, skipped by a warp whose factors `c` are all exactly 1 (none of its rows' running max moved:
   * most key tiles once the max has settled) — a warp-uniform branch on one vote that keeps the warp's multiplies off
   * the path to its next P·V. `o` must not be in flight in a wgmma; beside conditional wgmmas on the same accumulator
   * ptxas serializes the wgmmas (C7515), so a pipeline whose P·V is conditional keeps the plain rescale.
   */
  emitRescaleUnlessUnit(t: ThreadScope, o: DistributedTensor, c: DistributedTensor): void {
    const unit = Array.from({ length: c.size }, (_, r) => eq(c.at(t, r), lit(1, float32))).reduce((x, y) => and(x, y));
    t.b.if(not(this.block.target.all(unit)), (x) => this.emitRescale({ ...t, b: x }, o, c));
  }

  /**
   * The end of the row: all-reduces l, scales O by 1/l (0 where l = 0: a fully masked row gives
   * O = 0) and, with `lse`, returns the natural-log LSE per row ((m + log2 l)·ln 2; −∞ where l = 0).
   */
  emitFinalize(t: ThreadScope, o: DistributedTensor, options: { readonly lse?: boolean } = {}): DistributedTensor | undefined {
    const b = t.b;
    const rowOf = this.#rowsOf(o);
    const lse = options.lse === true ? makeDistributedTensor(this.block, 'lse', this.rowEncoding, float32) : undefined;
    const inv: Expr[] = [];
    for (let r = 0; r < this.l.size; r++) {
      const l = this.l.at(t, r);
      this.#allReduce(t, l, add);
      const live = b.let(`live${r}`, bool, gt(l, lit(0, float32)));
      inv.push(b.let(`inv_sum${r}`, float32, select(live, div(lit(1, float32), l), lit(0, float32))));
      if (lse !== undefined)
        b.assign(
          lse.at(t, r),
          select(
            live,
            mul(add(this.m.at(t, r), log2Approx(this.block.target, l)), lit(LN2, float32)),
            infinity(float32, { negative: true }),
          ),
        );
    }
    for (let d = 0; d < o.size; d++) t.b.assign(o.at(t, d), mul(o.at(t, d), inv[rowOf[d]!]!));
    return lse;
  }

  #rowsOf(o: DistributedTensor): number[] {
    const reduced = reduceEncoding(o.encoding, [1]);
    if (!reduced.encoding.equals(this.rowEncoding))
      throw new FmhaError('fmha/softmax-distribution', `BlockOnlineSoftmax: ${o.encoding} does not split rows like the score tile`);
    return Array.from({ length: o.size }, (_, d) => {
      const ys = o.encoding.calculateYIndex(d);
      return reduced.encoding.calculateD(reduced.keptYs.map((y) => ys[y]!));
    });
  }
}
