import {
  add,
  addressOf,
  array,
  bitAnd,
  bitXor,
  cast,
  div,
  float32,
  index,
  int32,
  ldmatrix,
  mod,
  mul,
  packFloat2,
  sameType,
  shr,
  typeToString,
  uint32,
  type BlockBuilder,
  type Expr,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import { emitCalculateOffset, type IndexEmitter } from '@tilekit/layout';
import type { DTypeName } from '@tilekit/numeric';
import { ldmatrixAtom, type DistributedTensor, type LdmatrixAtom, type TileDistributionEncoding } from '@tilekit/tile';
import type { OperandMajor, WgmmaSmemLayout } from '../smemLayouts.ts';
import { mmaSyncM16n8k16Atom, type WarpGemmAtom } from '../warp/index.ts';
import { BlockGemmPolicyError, callLeaf } from './blockGemmWgmmaSs.ts';
import { makeLdmatrixSmemLayout } from './blockGemmMmaSyncSmem.ts';
import { mmaSyncARegisterEncoding, mmaSyncCEncoding } from './mmaFragments.ts';

/** Shape, types and operand layouts of the sm_80 block GEMMs (CK's block GEMM Problem + Policy). */
export interface MmaSyncBlockGemmPolicy {
  /** A and B element type: fp16 or bf16 (fp32 accumulation). */
  readonly dtype: DTypeName;
  /** Block tile M: a multiple of 16·warps[0]. */
  readonly tileM: number;
  /** Block tile N: a multiple of 16·warps[1] (n8 tiles go in pairs: one ldmatrix.x4 loads two B fragments). */
  readonly tileN: number;
  /** Block tile K: a multiple of 16 whose row is 32, 64 or a multiple of 128 bytes when K is contiguous. */
  readonly tileK: number;
  /** Warps along M and N (powers of two; the block has warps[0]·warps[1]·32 threads). */
  readonly warps: readonly [number, number];
  /** Contiguous dim of the A tile in shared memory: K (row-major A, ldmatrix) or MN (column-major A, ldmatrix .trans). */
  readonly aMajor: OperandMajor;
  /** Contiguous dim of the B tile (stored N×K): K (column-major K×N B, ldmatrix) or MN (row-major B, ldmatrix .trans). */
  readonly bMajor: OperandMajor;
}

/** One `ldmatrix.x4` of a K tile: its 4 registers land at `dst`…`dst + 3` of the fragment array; shared byte offset = (lane base + add) ^ xor. */
export interface LdmatrixLoad {
  /** Fragment index it serves (A: the m16 repeat i; B: the pair of n8 repeats 2q, 2q + 1). */
  readonly q: number;
  /** The k16 step inside the K tile. */
  readonly kk: number;
  readonly dst: number;
  readonly add: number;
  readonly xor: number;
}

/**
 * How one warp reads its fragments of one operand tile from shared memory with `ldmatrix.x4`
 * (`.trans` when the operand is MN-major): lane l supplies the row address of row l mod 8 of matrix
 * l / 8 (tile's `ldmatrixAtom`, whose matrix order is chosen so that the 4 registers are, in
 * order, the mma.sync A fragment a0..a3 (pairs) or the B fragments of two adjacent n8 tiles). Every
 * load's address is the lane's base offset (one `emitCalculateOffset` of the swizzled layout, once
 * per kernel) plus a static `add` then XOR a static `xor`: stepping k16 and the repeats along M/N
 * moves whole 8-row groups (a plain add) and whole 16-byte chunks inside a swizzle atom (an XOR of
 * the chunk bits, which carries no bits into the row). The constructor checks that identity
 * against the layout for every warp, lane and load; the spec checks what each register then holds
 * against the mma fragments with an independent model of ldmatrix.
 */
export class LdmatrixOperandPlan {
  readonly operand: 'A' | 'B';
  readonly layout: WgmmaSmemLayout;
  readonly atom: LdmatrixAtom;
  /** MN extent one warp step covers (A: 16 rows; B: an n8 pair) and the stride between a warp's repeats. */
  readonly warpStride: number;
  readonly repeatStride: number;
  readonly loads: readonly LdmatrixLoad[];
  /** Registers of the fragment array (A: 4 per m16 repeat; B: 2 per n8 repeat). */
  readonly fragmentRegisters: number;
  /** Which lane bits pick the matrix block: `rowFromLowBit` — block row = bit 3 of the lane, block col = bit 4 (else the other way). */
  readonly rowFromLowBit: boolean;

  constructor(
    operand: 'A' | 'B',
    layout: WgmmaSmemLayout,
    spec: { readonly warps: number; readonly repeats: number; readonly kSteps: number },
  ) {
    this.operand = operand;
    this.layout = layout;
    const trans = layout.major === 'MN';
    // Memory grid [block row, block col] → register: A K-major [m, k] column-major; A MN-major [k, m]
    // row-major; B K-major [n, k] row-major; B MN-major [k, n] column-major (see the class doc).
    const order = (operand === 'A') === !trans ? 'columnMajor' : 'rowMajor';
    this.atom = ldmatrixAtom({ num: 4, trans, grid: [2, 2], order, dtype: layout.dtype });
    this.rowFromLowBit = order === 'columnMajor';
    for (let lane = 0; lane < 32; lane++) {
      const [row, col] = this.atom.rowAddressOf(lane)!;
      const q = lane >> 3;
      const expect = this.rowFromLowBit ? [8 * (q & 1) + (lane & 7), 8 * (q >> 1)] : [8 * (q >> 1) + (lane & 7), 8 * (q & 1)];
      if (row !== expect[0] || col !== expect[1])
        throw new BlockGemmPolicyError('LdmatrixOperandPlan', 'the ldmatrix row addresses must follow the lane bits', `lane ${lane}`);
    }
    this.warpStride = 16;
    this.repeatStride = 16 * spec.warps;
    const per = operand === 'A' ? spec.repeats : spec.repeats / 2;
    this.fragmentRegisters = operand === 'A' ? 4 * spec.repeats : 2 * spec.repeats;
    const e = layout.elementBytes;
    const atomElems = layout.swizzleBytes / e;
    const loads: LdmatrixLoad[] = [];
    for (let kk = 0; kk < spec.kSteps; kk++) {
      for (let q = 0; q < per; q++) {
        const dmn = q * this.repeatStride;
        const dk = 16 * kk;
        const [dc, ds] = layout.major === 'K' ? [dk, dmn] : [dmn, dk];
        const atomPart = dc - (dc % atomElems);
        const point = layout.major === 'K' ? [ds, atomPart] : [atomPart, ds];
        loads.push({ q, kk, dst: 4 * q, add: layout.descriptor.calculateOffset(point) * e, xor: (dc % atomElems) * e });
      }
    }
    this.loads = loads;
    // The add/XOR decomposition must be exact for every warp, lane and load.
    for (let w = 0; w < spec.warps; w++) {
      for (let lane = 0; lane < 32; lane++) {
        const [mn, k] = this.laneCoordinate(lane);
        const base = this.byteOffset(w * this.warpStride + mn, k);
        for (const l of loads) {
          const want = this.byteOffset(w * this.warpStride + mn + l.q * this.repeatStride, k + 16 * l.kk);
          if (((base + l.add) ^ l.xor) !== want)
            throw new BlockGemmPolicyError(
              `LdmatrixOperandPlan ${operand}`,
              'the swizzled layout must make each k16 / repeat step an add plus a chunk XOR',
              `warp ${w} lane ${lane} load ${l.q},${l.kk}`,
            );
        }
      }
    }
  }

  /** Byte offset of (mn, k) in the tile. */
  byteOffset(mn: number, k: number): number {
    return this.layout.descriptor.calculateOffset([mn, k]) * this.layout.elementBytes;
  }

  /** (mn, k) of the row address lane `lane` gives for the warp's first fragment (warp offset 0, k 0). */
  laneCoordinate(lane: number): [number, number] {
    const [row, col] = this.atom.rowAddressOf(lane)!;
    return this.layout.major === 'K' ? [row, col] : [col, row];
  }

  /** Emits the calling lane's base byte offset (`int`) for warp index `warp` along this operand's MN. */
  emitBase(b: BlockBuilder, emitter: IndexEmitter, warp: Expr, lane: Expr, name: string): Expr {
    const q = shr(lane, 3);
    const inRow = bitAnd(lane, 7);
    const [br, bc] = this.rowFromLowBit ? [bitAnd(q, 1), shr(q, 1)] : [shr(q, 1), bitAnd(q, 1)];
    const row = add(mul(br, 8), inRow);
    const col = mul(bc, 8);
    const [mn, k] = this.layout.major === 'K' ? [row, col] : [col, row];
    const top = [b.let(`${name}_mn`, int32, add(mul(warp, this.warpStride), mn)), b.let(`${name}_k`, int32, k)];
    const { offset } = emitCalculateOffset(b, this.layout.descriptor, top, emitter);
    return b.let(name, int32, mul(offset, this.layout.elementBytes));
  }
}

/** Per-thread state a block GEMM sets up once (outside the main loop): warp coordinates, lane bases, fragment registers. */
export interface MmaSyncBlockGemmState {
  readonly aBase: Expr | undefined;
  readonly bBase: Expr;
  readonly aFrag: VarExpr;
  readonly bFrag: VarExpr;
}

abstract class MmaSyncBlockGemmBase {
  readonly policy: MmaSyncBlockGemmPolicy;
  readonly atom: WarpGemmAtom;
  readonly threads: number;
  /** m16 repeats per warp along M, n8 repeats per warp along N, k16 steps per K tile. */
  readonly mRepeats: number;
  readonly nRepeats: number;
  readonly kSteps: number;
  /** The fp32 accumulator's distribution (see `mmaSyncCEncoding`). */
  readonly cEncoding: TileDistributionEncoding;
  readonly bLayout: WgmmaSmemLayout;
  readonly bPlan: LdmatrixOperandPlan;
  readonly bTileBytes: number;

  constructor(policy: MmaSyncBlockGemmPolicy, what: string) {
    const { dtype, tileM, tileN, tileK, warps } = policy;
    if (!Array.isArray(warps) || warps.length !== 2)
      throw new BlockGemmPolicyError(`${what} warps`, 'must be [warps along M, warps along N]', String(warps));
    if (!Number.isSafeInteger(tileK) || tileK < 16 || tileK % 16 !== 0)
      throw new BlockGemmPolicyError(`${what} tileK`, 'must be a positive multiple of 16', String(tileK));
    for (const [name, major] of [
      ['aMajor', policy.aMajor],
      ['bMajor', policy.bMajor],
    ] as const) {
      if (major !== 'K' && major !== 'MN') throw new BlockGemmPolicyError(`${what} ${name}`, 'must be "K" or "MN"', String(major));
    }
    this.cEncoding = mmaSyncCEncoding({ dtype, warps, tileM, tileN });
    this.policy = Object.freeze({ ...policy, warps: [warps[0], warps[1]] as const });
    this.atom = mmaSyncM16n8k16Atom(dtype);
    this.threads = 32 * warps[0] * warps[1];
    this.mRepeats = tileM / (16 * warps[0]);
    this.nRepeats = tileN / (8 * warps[1]);
    this.kSteps = tileK / 16;
    this.bLayout = makeLdmatrixSmemLayout({ dtype, mn: tileN, k: tileK, major: policy.bMajor });
    this.bPlan = new LdmatrixOperandPlan('B', this.bLayout, { warps: warps[1], repeats: this.nRepeats, kSteps: this.kSteps });
    this.bTileBytes = this.bLayout.bytes;
  }

  /** Accumulator floats per thread (4 per m16n8 tile). */
  get accumulatorsPerThread(): number {
    return this.cEncoding.threadBufferSize;
  }

  /** Thread-buffer offset of the 4 accumulators of m16n8 tile (i, j): 4·(i·nRepeats + j) (checked against the encoding). */
  accumulatorOffset(i: number, j: number): number {
    const d = this.cEncoding.calculateD([i, j >> 1, j & 1, 0, 0]);
    if (d !== 4 * (i * this.nRepeats + j))
      throw new BlockGemmPolicyError('accumulatorOffset', 'the C thread buffer must hold tile (i, j) at 4·(i·nRep + j)', `${d}`);
    return d;
  }

  protected emitWarpCoordinates(b: BlockBuilder, tid: Expr): { warpM: Expr; warpN: Expr; lane: Expr } {
    const [, wn] = this.policy.warps;
    const warp = b.let('warp', int32, shr(tid, 5));
    return {
      warpM: b.let('warp_m', int32, div(warp, wn)),
      warpN: b.let('warp_n', int32, mod(warp, wn)),
      lane: b.let('lane', int32, bitAnd(tid, 31)),
    };
  }

  protected emitBLoads(b: BlockBuilder, target: Target, state: MmaSyncBlockGemmState, bTile: Expr, kk: number): void {
    for (const l of this.bPlan.loads.filter((x) => x.kk === kk)) {
      b.expr(
        ldmatrix(target, {
          count: 4,
          trans: this.bLayout.major === 'MN',
          dst: addressOf(index(state.bFrag, l.dst)),
          src: add(bTile, bitXor(add(state.bBase, l.add), l.xor)),
        }),
      );
    }
  }

  protected emitMmas(
    b: BlockBuilder,
    target: Target,
    acc: DistributedTensor,
    aRegs: (i: number) => Expr,
    state: MmaSyncBlockGemmState,
  ): void {
    const wrapper = this.atom.defineWrapper(target);
    for (let i = 0; i < this.mRepeats; i++) {
      for (let j = 0; j < this.nRepeats; j++) {
        const c = addressOf(index(acc.registers.variable, this.accumulatorOffset(i, j)));
        b.expr(callLeaf(wrapper, [c, aRegs(i), addressOf(index(state.bFrag, 2 * j)), c]));
      }
    }
  }

  protected checkAcc(acc: DistributedTensor, what: string): void {
    if (!acc.encoding.equals(this.cEncoding))
      throw new BlockGemmPolicyError(`${what} acc`, 'must have the block GEMM C distribution', String(acc.encoding));
  }
}

/**
 * The sm_80 block GEMM with A and B in shared memory and C in registers (CK's
 * `BlockGemmASmemBSmemCReg` for mma.sync): a `tileM × tileK` A tile and a `tileN × tileK` B tile in
 * XOR-swizzled shared memory (`makeLdmatrixSmemLayout`, K- or MN-major each), the fp32
 * `tileM × tileN` accumulator a distributed tensor over a warp grid (`mmaSyncCEncoding`). Per k16
 * step each warp loads its A fragments (one `ldmatrix.x4` per m16 repeat) and B fragments (one
 * `ldmatrix.x4` per pair of n8 repeats; `.trans` for MN-major tiles) and issues
 * mRepeats · nRepeats `mma.sync.m16n8k16`.
 */
export class MmaSyncBlockGemmSs extends MmaSyncBlockGemmBase {
  readonly aLayout: WgmmaSmemLayout;
  readonly aPlan: LdmatrixOperandPlan;
  readonly aTileBytes: number;

  constructor(policy: MmaSyncBlockGemmPolicy) {
    super(policy, 'MmaSyncBlockGemmSs');
    this.aLayout = makeLdmatrixSmemLayout({ dtype: policy.dtype, mn: policy.tileM, k: policy.tileK, major: policy.aMajor });
    this.aPlan = new LdmatrixOperandPlan('A', this.aLayout, { warps: policy.warps[0], repeats: this.mRepeats, kSteps: this.kSteps });
    this.aTileBytes = this.aLayout.bytes;
  }

  /**
   * Emits, once per kernel (outside the main loop), the calling thread's warp coordinates, its
   * ldmatrix base offsets and the fragment registers. `tid` is the thread id (`int`).
   */
  emitSetup(b: BlockBuilder, emitter: IndexEmitter, tid: Expr): MmaSyncBlockGemmState {
    const { warpM, warpN, lane } = this.emitWarpCoordinates(b, tid);
    return {
      aBase: this.aPlan.emitBase(b, emitter, warpM, lane, 'a_lane'),
      bBase: this.bPlan.emitBase(b, emitter, warpN, lane, 'b_lane'),
      aFrag: b.declare('a_frag', array(uint32, this.aPlan.fragmentRegisters), null, { storage: 'mutable' }),
      bFrag: b.declare('b_frag', array(uint32, this.bPlan.fragmentRegisters), null, { storage: 'mutable' }),
    };
  }

  /**
   * Emits acc += A·B for one K tile: `aTile`/`bTile` are `unsigned char*` to the stage's tiles in
   * shared memory (aligned to the layouts' `repeatBytes`).
   */
  emitMma(
    b: BlockBuilder,
    target: Target,
    acc: DistributedTensor,
    state: MmaSyncBlockGemmState,
    tiles: { readonly aTile: Expr; readonly bTile: Expr },
  ): void {
    target.require('mma-sync');
    this.checkAcc(acc, 'MmaSyncBlockGemmSs.emitMma');
    for (let kk = 0; kk < this.kSteps; kk++) {
      for (const l of this.aPlan.loads.filter((x) => x.kk === kk)) {
        b.expr(
          ldmatrix(target, {
            count: 4,
            trans: this.aLayout.major === 'MN',
            dst: addressOf(index(state.aFrag, l.dst)),
            src: add(tiles.aTile, bitXor(add(state.aBase!, l.add), l.xor)),
          }),
        );
      }
      this.emitBLoads(b, target, state, tiles.bTile, kk);
      this.emitMmas(b, target, acc, (i) => addressOf(index(state.aFrag, 4 * i)), state);
    }
  }
}

/**
 * The sm_80 block GEMM with A in registers, B in shared memory and C in registers (CK's
 * `BlockGemmARegBSmemCReg`): A is a distributed tensor in the mma.sync A-fragment distribution
 * (`mmaSyncARegisterEncoding`), either fp32 — e.g. attention's S accumulator, which with warps only
 * along M may be passed as it is, in its C distribution (C tiles 2kk, 2kk + 1 are A fragment kk:
 * `mmaSyncCToAEncoding`) — or of the 16-bit input type (e.g. after `emitCToAFragment`). Pairs are
 * rounded and packed into `.f16x2`/`.bf16x2` registers per mma with codegen's `packFloat2` (one
 * `cvt.rn.{f16x2,bf16x2}.f32`; a 16-bit A is widened exactly first, so fp32 A is the cheaper form);
 * B as in {@link MmaSyncBlockGemmSs}.
 */
export class MmaSyncBlockGemmRs extends MmaSyncBlockGemmBase {
  /** The distribution the A tensor must have. */
  readonly aEncoding: TileDistributionEncoding;
  /**
   * With warps only along M: the C distribution of a tileM × tileK accumulator, which an fp32 A may
   * also have (its thread-buffer index d is A's: X_C(d) = X_A(d), property-tested); else undefined.
   */
  readonly aAsAccumulatorEncoding: TileDistributionEncoding | undefined;

  constructor(policy: Omit<MmaSyncBlockGemmPolicy, 'aMajor'>) {
    super({ ...policy, aMajor: 'K' }, 'MmaSyncBlockGemmRs');
    this.aEncoding = mmaSyncARegisterEncoding({ dtype: policy.dtype, warps: policy.warps, tileM: policy.tileM, tileK: policy.tileK });
    this.aAsAccumulatorEncoding =
      policy.warps[1] === 1
        ? mmaSyncCEncoding({ dtype: policy.dtype, warps: policy.warps, tileM: policy.tileM, tileN: policy.tileK })
        : undefined;
  }

  /** Once per kernel: warp coordinates, the B lane base, the B fragment and A packing registers. */
  emitSetup(b: BlockBuilder, emitter: IndexEmitter, tid: Expr): MmaSyncBlockGemmState {
    const { warpN, lane } = this.emitWarpCoordinates(b, tid);
    return {
      aBase: undefined,
      bBase: this.bPlan.emitBase(b, emitter, warpN, lane, 'b_lane'),
      aFrag: b.declare('a_frag', array(uint32, 4 * this.mRepeats), null, { storage: 'mutable' }),
      bFrag: b.declare('b_frag', array(uint32, this.bPlan.fragmentRegisters), null, { storage: 'mutable' }),
    };
  }

  /** Emits acc += A·B for one K tile, A from `a` (the whole `tileM × tileK` A tile in registers), B from `bTile` (`unsigned char*`). */
  emitMma(
    b: BlockBuilder,
    target: Target,
    acc: DistributedTensor,
    state: MmaSyncBlockGemmState,
    operands: { readonly a: DistributedTensor; readonly bTile: Expr },
  ): void {
    target.require('mma-sync');
    this.checkAcc(acc, 'MmaSyncBlockGemmRs.emitMma');
    const a = operands.a;
    const dtype = this.policy.dtype as 'fp16' | 'bf16';
    const fp32 = a.type.kind === 'float' && a.type.bits === 32;
    if (!fp32 && !sameType(a.type, target.dtypeType(dtype)))
      throw new BlockGemmPolicyError('MmaSyncBlockGemmRs.emitMma a', `must be fp32 or ${dtype}`, typeToString(a.type));
    const asAccumulator = fp32 && this.aAsAccumulatorEncoding?.equals(a.encoding) === true;
    if (!a.encoding.equals(this.aEncoding) && !asAccumulator) {
      throw new BlockGemmPolicyError(
        'MmaSyncBlockGemmRs.emitMma a',
        `must have the mma.sync A-fragment distribution of the block tile${fp32 ? ' (or, fp32 with warps only along M, its C distribution)' : ''}`,
        String(a.encoding),
      );
    }
    const regs = a.registers.variable;
    const element = (d: number): Expr => (fp32 ? index(regs, d) : cast(index(regs, d), float32));
    for (let kk = 0; kk < this.kSteps; kk++) {
      this.emitBLoads(b, target, state, operands.bTile, kk);
      for (let i = 0; i < this.mRepeats; i++) {
        const d0 = this.aEncoding.calculateD([i, kk, 0, 0, 0]);
        for (let r = 0; r < 4; r++)
          b.assign(index(state.aFrag, 4 * i + r), packFloat2(target, dtype, element(d0 + 2 * r), element(d0 + 2 * r + 1)));
      }
      this.emitMmas(b, target, acc, (i) => addressOf(index(state.aFrag, 4 * i)), state);
    }
  }
}
