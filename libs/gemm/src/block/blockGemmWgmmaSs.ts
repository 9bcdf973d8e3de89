import {
  add,
  cast,
  div,
  float32,
  int32,
  lit,
  makeCall,
  mod,
  mul,
  renderFunction,
  snippet,
  toExpr,
  typeToString,
  uint32,
  type BlockBuilder,
  type CType,
  type Expr,
  type ExprLike,
  type FunctionDef,
  type Target,
} from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import { embedEncoding, makeWarpGridEncoding, type DistributedTensor, type TileDistributionEncoding } from '@tilekit/tile';
import { GemmError } from '../errors.ts';
import { makeWgmmaSmemLayout, wgmmaOperandDescriptor, type OperandMajor, type WgmmaSmemLayout } from '../smemLayouts.ts';
import {
  defineWgmmaCommitGroup,
  defineWgmmaFence,
  defineWgmmaFenceOperands,
  defineWgmmaWaitGroup,
  wgmmaAtom,
  type WarpGemmAtom,
} from '../warp/index.ts';
import { defineWgmmaDescriptorEncoder, wgmmaSwizzleCode, type WgmmaSwizzle } from '../warp/wgmmaDescriptor.ts';
import { isWgmmaFp8DType } from '../warp/wgmmaFp8Atom.ts';

/** A block GEMM policy was asked for a shape the sm_90a block GEMM cannot do. */
export class BlockGemmPolicyError extends GemmError {
  constructor(what: string, rule: string, found: string) {
    super('gemm/invalid-block-gemm-policy', `${what}: ${rule} (got ${found})`);
  }
}

/** Shape and types of {@link WgmmaBlockGemmSs} (CK's block GEMM Problem + Policy, for sm_90a). */
export interface WgmmaBlockGemmPolicy {
  /**
   * A and B element type: fp16 or bf16 (fp32 accumulator, `wgmma m64nNk16`), int8 (s8·s8 with an
   * int32 accumulator, `wgmma m64nNk32.s32.s8.s8`; K-major A and B only), or fp8e4m3fn / fp8e5m2
   * (fp32 accumulator, `wgmma m64nNk32.f32.e4m3.e4m3` / `.e5m2.e5m2`; K-major A and B only).
   */
  readonly dtype: DTypeName;
  /** Block tile M: a multiple of 64 (one consumer warpgroup per 64 rows), at most 256. */
  readonly tileM: number;
  /** Block tile N = the wgmma N: a multiple of 16 in [16, 256]. */
  readonly tileN: number;
  /**
   * Block tile K: one swizzle row of K-contiguous bytes. fp16/bf16: 64 (128 bytes, 128B swizzle).
   * int8 and fp8 (1-byte elements): 128 (128 bytes, 128B swizzle) or 64 (64 bytes, 64B swizzle:
   * head dim 64 without padding).
   */
  readonly tileK: number;
  /**
   * Contiguous dim of the A tile in shared memory (default `K`): `MN` stores it as tileK rows of M
   * in 64-element (128-byte) slabs, read with wgmma's imm-trans-a = 1; tileM is a multiple of 64.
   */
  readonly aMajor?: OperandMajor;
  /** Contiguous dim of the B tile (default `K`); `MN` (N-major, imm-trans-b = 1) needs tileN a multiple of 64. */
  readonly bMajor?: OperandMajor;
  /**
   * Warpgroups along N (default 1): the block's warpgroups form a (tileM / 64) × warpgroupsN grid,
   * warpgroup g at (g / warpgroupsN, g mod warpgroupsN), each computing 64 rows × tileN / warpgroupsN
   * columns (the wgmma N; with an N-major B a multiple of 64, i.e. whole slabs). Attention's
   * backward splits its dQ = dS·K this way (64 query rows, the head dim over two warpgroups).
   */
  readonly warpgroupsN?: number;
  /**
   * Warpgroups along K (default 1): with k > 1 the block's warpgroups are k groups (outermost) of
   * the M × N grid, each computing the whole tile from its own K slice (the caller hands each group
   * its slice's tiles, `warpgroup` then names the warpgroup within its group), so their
   * accumulators are partial sums: an R digit of `cEncoding` whose replicas the caller adds up
   * (attention's backward: dQ over two 64-key-row chunks, added into fp32 dq_acc by both).
   */
  readonly warpgroupsK?: number;
}

/**
 * A call of a leaf function that carries its own definition as a snippet requirement, so a
 * translation unit that calls it emits it exactly once (before its first use).
 */
export function callLeaf(fn: FunctionDef, args: readonly ExprLike[], options: { readonly templateArgs?: readonly string[] } = {}): Expr {
  const lines = renderFunction(fn).trimEnd().split('\n');
  return makeCall(
    fn.name,
    args.map((a) => toExpr(a)),
    fn.returnType,
    {
      requires: [snippet(fn.name, lines)],
      ...(options.templateArgs === undefined ? {} : { templateArgs: options.templateArgs }),
    },
  );
}

/**
 * The sm_90a block GEMM with A and B in shared memory and C in registers (CK's
 * `BlockGemmASmemBSmemCReg`, Hopper flavour): a `tileM × tileK` A tile and a `tileN × tileK` B tile,
 * each K-major (default) or MN-major in 128B-swizzled shared memory as TMA writes them
 * (`makeWgmmaSmemLayout`; MN-major: 64-wide slabs of tileK rows, imm-trans = 1), and the
 * fp32 `tileM × tileN` accumulator as a distributed tensor over `tileM / 64` warpgroups: the warp
 * grid of warpgroups along M ⊗ the `wgmma m64nNk16` D fragment (tile's `wgmmaAccumulatorAtom`).
 * Warpgroup g computes rows [64g, 64g + 64) with `tileK / 16` wgmma instructions per K tile, each
 * reading A and B through matrix descriptors whose start address steps by 32 bytes per k16 inside
 * the swizzle row for K-major operands, by 16 rows · 128 bytes = 2048 bytes for MN-major ones (two
 * 8-row K groups: 2·SBO), and by 64 · 128 bytes between warpgroups (64 rows, or one 64-wide M slab),
 * as `wgmmaOperandDescriptor` says. int8 (`wgmma m64nNk32.s32.s8.s8`): K-major tiles only, tileK
 * 128 (128B swizzle) or 64 (64B swizzle, 64-byte rows), `tileK / 32` instructions per K tile whose
 * start addresses step by 32 bytes, descriptors with the layout's swizzle code, and an int32
 * accumulator (declare it with {@link WgmmaBlockGemmSs.accumulatorType}) in the same `cEncoding`.
 * fp8e4m3fn / fp8e5m2 (`wgmma m64nNk32.f32.e4m3.e4m3` / `.e5m2.e5m2`): the same 1-byte K-major
 * tiles, swizzles and k32 steps as int8, with the fp32 accumulator of fp16/bf16.
 */
export class WgmmaBlockGemmSs {
  readonly policy: WgmmaBlockGemmPolicy;
  readonly atom: WarpGemmAtom;
  readonly aLayout: WgmmaSmemLayout;
  readonly bLayout: WgmmaSmemLayout;
  /** Warpgroups (tileM / 64 · warpgroupsN). */
  readonly warpgroups: number;
  /** Warpgroups along M (tileM / 64) and along N. */
  readonly warpgroupsM: number;
  readonly warpgroupsN: number;
  /** Groups of warpgroups that each compute the tile from their own K slice (partial sums). */
  readonly warpgroupsK: number;
  /** Bytes between the B operands of warpgroups adjacent along N (0 with one warpgroup along N). */
  readonly bWarpgroupStride: number;
  /** The swizzle of both shared-memory tiles (and their descriptors): 128B, or 64B for int8 / fp8 with tileK 64. */
  readonly swizzle: WgmmaSwizzle;
  /** Threads that hold the accumulator (128 per warpgroup). */
  readonly threads: number;
  /** The accumulator's distribution: P = [warpgroup, warp in warpgroup, lane]; d = the PTX element index of wgmma D. */
  readonly cEncoding: TileDistributionEncoding;
  /** wgmma instructions per K tile. */
  readonly kSteps: number;
  readonly aTileBytes: number;
  readonly bTileBytes: number;
  /** Descriptor start-address offsets (bytes from the tile base): A by (warpgroup, k step), B by k step. */
  readonly aOffsets: readonly (readonly number[])[];
  readonly bOffsets: readonly number[];

  constructor(policy: WgmmaBlockGemmPolicy) {
    const { dtype, tileM, tileN, tileK } = policy;
    // int8 and fp8: 1-byte elements, wgmma m64nNk32, K-major only (neither form has imm-trans).
    const byteWide = dtype === 'int8' || isWgmmaFp8DType(dtype);
    if (dtype !== 'fp16' && dtype !== 'bf16' && !byteWide)
      throw new BlockGemmPolicyError('WgmmaBlockGemmSs dtype', 'must be fp16 or bf16 (or int8, fp8e4m3fn, fp8e5m2)', String(dtype));
    if (!Number.isSafeInteger(tileM) || tileM < 64 || tileM > 256 || tileM % 64 !== 0)
      throw new BlockGemmPolicyError('WgmmaBlockGemmSs tileM', 'must be 64, 128, 192 or 256', String(tileM));
    if (!Number.isSafeInteger(tileN) || tileN < 16 || tileN > 256 || tileN % 16 !== 0)
      throw new BlockGemmPolicyError('WgmmaBlockGemmSs tileN', 'must be a multiple of 16 in [16, 256]', String(tileN));
    if (byteWide ? tileK !== 128 && tileK !== 64 : tileK !== 64) {
      throw new BlockGemmPolicyError(
        'WgmmaBlockGemmSs tileK',
        byteWide
          ? `must be 128 or 64 for ${dtype} (one 128- or 64-byte swizzle row)`
          : 'must be 64 (one 128-byte swizzle row of 2-byte elements)',
        String(tileK),
      );
    }
    const aMajor = policy.aMajor ?? 'K';
    const bMajor = policy.bMajor ?? 'K';
    if (byteWide) {
      for (const [what, major] of [
        ['aMajor', aMajor],
        ['bMajor', bMajor],
      ] as const) {
        if (major !== 'K')
          throw new BlockGemmPolicyError(
            `WgmmaBlockGemmSs ${what}`,
            `must be "K" for ${dtype} (the ${dtype === 'int8' ? 'integer' : 'FP8'} wgmma has no transpose)`,
            String(major),
          );
      }
    }
    for (const [what, major] of [
      ['aMajor', aMajor],
      ['bMajor', bMajor],
    ] as const) {
      if (major !== 'K' && major !== 'MN') throw new BlockGemmPolicyError(`WgmmaBlockGemmSs ${what}`, 'must be "K" or "MN"', String(major));
    }
    if (bMajor === 'MN' && tileN % 64 !== 0)
      throw new BlockGemmPolicyError(
        'WgmmaBlockGemmSs tileN',
        'must be a multiple of 64 with an N-major B (whole 128-byte swizzle slabs)',
        String(tileN),
      );
    const warpgroupsN = policy.warpgroupsN ?? 1;
    const perWarpgroupN = tileN / warpgroupsN;
    if (
      !Number.isSafeInteger(warpgroupsN) ||
      warpgroupsN < 1 ||
      !Number.isSafeInteger(perWarpgroupN) ||
      perWarpgroupN % (bMajor === 'MN' ? 64 : 16) !== 0
    ) {
      throw new BlockGemmPolicyError(
        'WgmmaBlockGemmSs warpgroupsN',
        `must divide tileN into multiples of ${bMajor === 'MN' ? 64 : 16}`,
        String(policy.warpgroupsN),
      );
    }
    const warpgroupsK = policy.warpgroupsK ?? 1;
    if (!Number.isSafeInteger(warpgroupsK) || warpgroupsK < 1 || (warpgroupsK > 1 && warpgroupsN > 1))
      throw new BlockGemmPolicyError(
        'WgmmaBlockGemmSs warpgroupsK',
        'must be a positive integer (and warpgroupsN 1 when above 1)',
        String(policy.warpgroupsK),
      );
    // K-major is the default and is left out of the frozen policy, so existing policies stay as they were.
    this.policy = Object.freeze({ ...policy });
    this.warpgroupsN = warpgroupsN;
    this.warpgroupsK = warpgroupsK;
    this.atom = wgmmaAtom({ n: perWarpgroupN, dtype, aMajor, bMajor });
    // A K-major row is tileK · elementBytes bytes: 128 → 128B swizzle; int8 / fp8 with tileK 64 → 64B.
    this.swizzle = byteWide && tileK === 64 ? '64B' : '128B';
    this.aLayout = makeWgmmaSmemLayout({ swizzle: this.swizzle, dtype, mn: tileM, k: tileK, major: aMajor });
    this.bLayout = makeWgmmaSmemLayout({ swizzle: this.swizzle, dtype, mn: tileN, k: tileK, major: bMajor });
    this.warpgroupsM = tileM / 64;
    this.warpgroups = this.warpgroupsM * warpgroupsN * warpgroupsK;
    this.threads = 128 * this.warpgroups;
    const grid =
      warpgroupsK > 1
        ? makeWarpGridEncoding({ warps: [warpgroupsK, this.warpgroupsM], xs: [{ warpAxis: 1 }, {}] })
        : warpgroupsN === 1
          ? makeWarpGridEncoding({ warps: [this.warpgroups], xs: [{ warpAxis: 0 }, {}] })
          : makeWarpGridEncoding({ warps: [this.warpgroupsM, warpgroupsN], xs: [{ warpAxis: 0 }, { warpAxis: 1 }] });
    this.cEncoding = embedEncoding(grid, this.atom.c.encoding);
    this.kSteps = tileK / this.atom.k;
    this.aTileBytes = this.aLayout.bytes;
    this.bTileBytes = this.bLayout.bytes;
    const ks = Array.from({ length: this.kSteps }, (_, kk) => kk * this.atom.k);
    this.bWarpgroupStride =
      warpgroupsN > 1
        ? wgmmaOperandDescriptor(this.bLayout, { tileAddress: 0, mn0: perWarpgroupN, k0: 0 }).startAddress -
          wgmmaOperandDescriptor(this.bLayout, { tileAddress: 0, mn0: 0, k0: 0 }).startAddress
        : 0;
    const k = this.atom.k;
    this.aOffsets = Array.from({ length: this.warpgroupsM }, (_, g) =>
      ks.map((k0) => wgmmaOperandDescriptor(this.aLayout, { tileAddress: 0, mn0: 64 * g, k0, k }).startAddress),
    );
    this.bOffsets = ks.map((k0) => wgmmaOperandDescriptor(this.bLayout, { tileAddress: 0, mn0: 0, k0, k }).startAddress);
    // The emitted code steps warpgroups linearly: offset(g, kk) = g · aWarpgroupStride + offset(0, kk).
    for (let g = 0; g < this.warpgroupsM; g++) {
      for (let kk = 0; kk < this.kSteps; kk++) {
        if (this.aOffsets[g]![kk] !== g * this.aWarpgroupStride + this.aOffsets[0]![kk]!)
          throw new BlockGemmPolicyError('WgmmaBlockGemmSs', 'A descriptor offsets must be linear in the warpgroup', `${g}, ${kk}`);
      }
    }
  }

  /** Bytes between the A operands of consecutive warpgroups (64 rows). */
  get aWarpgroupStride(): number {
    return this.warpgroupsM > 1 ? this.aOffsets[1]![0]! - this.aOffsets[0]![0]! : 0;
  }

  /** Accumulator registers per thread (tileN / 2 floats, or int32 for int8). */
  get accumulatorsPerThread(): number {
    return this.atom.c.elementsPerThread;
  }

  /**
   * The C type of the accumulator tensor the caller declares with
   * `makeDistributedTensor(block, name, cEncoding, accumulatorType)`: `float32` (fp16/bf16, fp8) or
   * `int32` (int8). `emitMma` / `emitWait` refuse an accumulator of another type.
   */
  get accumulatorType(): CType {
    return this.atom.accType === 'int32' ? int32 : float32;
  }

  /**
   * Emits the MMAs of one K tile for the calling warpgroup: `wgmma.fence`, `kSteps` wgmma
   * (`tileK / 16`; `tileK / 32` for int8 / fp8) (D += A·B, A at `aTile` + warpgroup rows, B at
   * `bTile`; both 32-bit shared addresses of `repeatBytes`-aligned tiles: 1024 bytes for 128B
   * swizzle, 512 for 64B), `commit_group`. The accumulator registers are pinned around the
   * async window (`defineWgmmaFenceOperands`); wait with {@link emitWait}. `accumulate` (an `int`,
   * default 1) is the first wgmma's scale-d: 0 on the first K tile starts D from A·B, so the
   * accumulator needs no zeroing (ordinary writes to it would serialize the wgmma pipeline, ptxas C7515).
   * `batch` chains K tiles into one commit group: `open` skips the `commit_group` (more K tiles follow),
   * `continue` also skips the leading `wgmma.fence` (it follows an `open` call with no register writes in
   * between) and commits, `inner` skips both; default `whole` (fence, MMAs, commit).
   */
  emitMma(
    b: BlockBuilder,
    target: Target,
    acc: DistributedTensor,
    args: {
      readonly aTile: Expr;
      readonly bTile: Expr;
      readonly warpgroup: Expr;
      readonly accumulate?: Expr;
      readonly batch?: 'whole' | 'open' | 'inner' | 'continue';
    },
  ): void {
    if (!acc.encoding.equals(this.cEncoding))
      throw new BlockGemmPolicyError('WgmmaBlockGemmSs.emitMma acc', 'must have the block GEMM C distribution', String(acc.encoding));
    this.#checkAccumulatorType('emitMma', acc);
    const encoder = defineWgmmaDescriptorEncoder(target);
    const wrapper = this.atom.defineWrapper(target);
    const pin = defineWgmmaFenceOperands(target, this.accumulatorsPerThread, this.atom.accType);
    const d = acc.registers.variable;
    const desc = (start: Expr, layout: WgmmaSmemLayout): Expr =>
      callLeaf(encoder, [
        start,
        ...[layout.leadingByteOffset, layout.strideByteOffset, 0, wgmmaSwizzleCode(layout.swizzle)].map((x) => lit(x, uint32)),
      ]);
    const n = this.warpgroupsN;
    const wgM = n === 1 ? args.warpgroup : div(args.warpgroup, n);
    const aBase = b.let('a_wg', uint32, add(args.aTile, cast(mul(wgM, this.aWarpgroupStride), uint32)));
    const bBase =
      n === 1 ? args.bTile : b.let('b_wg', uint32, add(args.bTile, cast(mul(mod(args.warpgroup, n), this.bWarpgroupStride), uint32)));
    const batch = args.batch ?? 'whole';
    b.expr(callLeaf(pin, [d]));
    if (batch === 'whole' || batch === 'open') b.expr(callLeaf(defineWgmmaFence(target), []));
    for (let kk = 0; kk < this.kSteps; kk++) {
      const da = desc(add(aBase, this.aOffsets[0]![kk]!), this.aLayout);
      const db = desc(add(bBase, this.bOffsets[kk]!), this.bLayout);
      b.expr(callLeaf(wrapper, [d, da, db, kk === 0 && args.accumulate !== undefined ? args.accumulate : 1]));
    }
    if (batch === 'whole' || batch === 'continue') b.expr(callLeaf(defineWgmmaCommitGroup(target), []));
    b.expr(callLeaf(pin, [d]));
  }

  /** `wgmma.wait_group pending`, with the accumulator pinned after it. */
  emitWait(b: BlockBuilder, target: Target, acc: DistributedTensor, pending: number): void {
    this.#checkAccumulatorType('emitWait', acc);
    b.expr(callLeaf(defineWgmmaWaitGroup(target, pending), []));
    b.expr(callLeaf(defineWgmmaFenceOperands(target, this.accumulatorsPerThread, this.atom.accType), [acc.registers.variable]));
  }

  #checkAccumulatorType(what: string, acc: DistributedTensor): void {
    const want = this.accumulatorType;
    if (typeToString(acc.type) !== typeToString(want)) {
      throw new BlockGemmPolicyError(
        `WgmmaBlockGemmSs.${what} acc`,
        `must be a ${typeToString(want)} tensor (the ${this.policy.dtype} wgmma accumulator)`,
        typeToString(acc.type),
      );
    }
  }
}
