import {
  add,
  addressOf,
  cast,
  defineFunction,
  index,
  lit,
  mod,
  mul,
  pointer,
  uint32,
  type BlockBuilder,
  type Expr,
  type FunctionDef,
  type Target,
} from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import {
  embedEncoding,
  makeWarpGridEncoding,
  type DistributedTensor,
  type RegisterArray,
  type TileDistributionEncoding,
} from '@tilekit/tile';
import { makeWgmmaSmemLayout, wgmmaOperandDescriptor, type OperandMajor, type WgmmaSmemLayout } from '../smemLayouts.ts';
import {
  defineWgmmaCommitGroup,
  defineWgmmaFence,
  defineWgmmaFenceOperands,
  defineWgmmaWaitGroup,
  wgmmaAtom,
  wgmmaRegisterAFragment,
  type WarpGemmAtom,
} from '../warp/index.ts';
import { defineWgmmaDescriptorEncoder, wgmmaSwizzleCode } from '../warp/wgmmaDescriptor.ts';
import { BlockGemmPolicyError, callLeaf } from './blockGemmWgmmaSs.ts';

/** Shape and types of {@link WgmmaBlockGemmRs}. */
export interface WgmmaBlockGemmRsPolicy {
  /** A and B element type (fp32 accumulation). */
  readonly dtype: DTypeName;
  /** Block tile M: 64 rows per warpgroup, at most 256. */
  readonly tileM: number;
  /** The wgmma N: a multiple of 16 in [16, 256]. */
  readonly tileN: number;
  /** Block tile K: a multiple of 16 (one wgmma per 16). */
  readonly tileK: number;
  /** Contiguous dim of the B tile in shared memory (default K). */
  readonly bMajor?: OperandMajor;
  /**
   * Warpgroups along N (default 1): warpgroup g computes columns [g·tileN/k, (g + 1)·tileN/k) of
   * the same 64 rows from its own copy of A (attention's backward at head dim 256: dK and dV split
   * over two warpgroups that hold the same Pᵀ and dSᵀ). With an N-major B each share is whole slabs.
   */
  readonly warpgroupsN?: number;
}

/**
 * The sm_90a block GEMM with A in registers, B in shared memory and C in registers (CK's
 * `BlockGemmARegBSmemCReg`, Hopper flavour): the second GEMM of attention, O += P·V, where P is
 * the softmax of the first GEMM's accumulator still in registers. Per warpgroup (64 rows of M):
 * `tileK / 16` `wgmma m64nNk16` with A = 4 packed `.f16x2`/`.bf16x2` registers per k16 step
 * (the fragment of `wgmmaRegisterAFragment`) and B through a descriptor into a 128B-swizzled tile of
 * `makeWgmmaSmemLayout` (MN-major for V stored row-major as [K rows][N]; the layout's N extent is
 * rounded up to whole 64-element slabs, so N = 96 or 192 read a zero-filled partial slab).
 * Postcondition (tested): {@link aFragmentOfAccumulator} — the fp32 accumulator of an m64nK wgmma,
 * element 8·kk + i, is A-fragment element i of k step kk (same row and column), so P is packed
 * pairwise from the first GEMM's registers without moving data between threads.
 */
export class WgmmaBlockGemmRs {
  readonly policy: Required<WgmmaBlockGemmRsPolicy>;
  readonly atom: WarpGemmAtom;
  readonly bLayout: WgmmaSmemLayout;
  readonly warpgroups: number;
  readonly threads: number;
  /** The accumulator's distribution over the warpgroups (as `WgmmaBlockGemmSs.cEncoding`). */
  readonly cEncoding: TileDistributionEncoding;
  /** The A operand's distribution per k16 step (warpgroups along M ⊗ the register A fragment). */
  readonly aStepEncoding: TileDistributionEncoding;
  readonly kSteps: number;
  /** Packed 32-bit A registers per thread (4 per k16 step). */
  readonly aRegisters: number;
  readonly bTileBytes: number;
  /** Descriptor start-address offsets of B per k step (bytes from the tile base). */
  readonly bOffsets: readonly number[];

  constructor(policy: WgmmaBlockGemmRsPolicy) {
    const { dtype, tileM, tileN, tileK } = policy;
    const bMajor = policy.bMajor ?? 'K';
    if (dtype !== 'fp16' && dtype !== 'bf16')
      throw new BlockGemmPolicyError('WgmmaBlockGemmRs dtype', 'must be fp16 or bf16', String(dtype));
    if (!Number.isSafeInteger(tileM) || tileM < 64 || tileM > 256 || tileM % 64 !== 0)
      throw new BlockGemmPolicyError('WgmmaBlockGemmRs tileM', 'must be 64, 128, 192 or 256', String(tileM));
    if (!Number.isSafeInteger(tileN) || tileN < 16 || tileN > 256 || tileN % 16 !== 0)
      throw new BlockGemmPolicyError('WgmmaBlockGemmRs tileN', 'must be a multiple of 16 in [16, 256]', String(tileN));
    if (!Number.isSafeInteger(tileK) || tileK < 16 || tileK % 16 !== 0)
      throw new BlockGemmPolicyError('WgmmaBlockGemmRs tileK', 'must be a positive multiple of 16', String(tileK));
    const warpgroupsN = policy.warpgroupsN ?? 1;
    const perWarpgroupN = tileN / warpgroupsN;
    if (
      !Number.isSafeInteger(warpgroupsN) ||
      warpgroupsN < 1 ||
      (warpgroupsN > 1 && (tileM !== 64 || !Number.isSafeInteger(perWarpgroupN) || perWarpgroupN % (bMajor === 'MN' ? 64 : 16) !== 0))
    ) {
      throw new BlockGemmPolicyError(
        'WgmmaBlockGemmRs warpgroupsN',
        `must divide tileN into multiples of ${bMajor === 'MN' ? 64 : 16} (with tileM 64)`,
        String(policy.warpgroupsN),
      );
    }
    this.policy = Object.freeze({ dtype, tileM, tileN, tileK, bMajor, warpgroupsN });
    this.atom = wgmmaAtom({ n: perWarpgroupN, dtype, aSource: 'registers', bMajor });
    const slab = 64;
    this.bLayout = makeWgmmaSmemLayout({
      swizzle: '128B',
      dtype,
      mn: bMajor === 'MN' ? Math.ceil(tileN / slab) * slab : tileN,
      k: bMajor === 'MN' ? tileK : Math.ceil(tileK / slab) * slab,
      major: bMajor,
    });
    this.warpgroups = (tileM / 64) * warpgroupsN;
    this.threads = 128 * this.warpgroups;
    const grid =
      warpgroupsN === 1
        ? makeWarpGridEncoding({ warps: [this.warpgroups], xs: [{ warpAxis: 0 }, {}] })
        : makeWarpGridEncoding({ warps: [1, warpgroupsN], xs: [{ warpAxis: 0 }, { warpAxis: 1 }] });
    this.cEncoding = embedEncoding(grid, this.atom.c.encoding);
    // A per k16 step: with warpgroups along N every warpgroup holds the whole A (an R digit).
    this.aStepEncoding = embedEncoding(
      warpgroupsN === 1
        ? makeWarpGridEncoding({ warps: [this.warpgroups], xs: [{ warpAxis: 0 }, {}] })
        : makeWarpGridEncoding({ warps: [warpgroupsN], xs: [{}, {}] }),
      wgmmaRegisterAFragment(dtype).encoding,
    );
    this.kSteps = tileK / 16;
    this.aRegisters = 4 * this.kSteps;
    this.bTileBytes = this.bLayout.bytes;
    this.bOffsets = Array.from(
      { length: this.kSteps },
      (_, kk) => wgmmaOperandDescriptor(this.bLayout, { tileAddress: 0, mn0: 0, k0: 16 * kk }).startAddress,
    );
    this.bWarpgroupStride =
      warpgroupsN > 1 ? wgmmaOperandDescriptor(this.bLayout, { tileAddress: 0, mn0: perWarpgroupN, k0: 0 }).startAddress : 0;
  }

  /** Bytes between the B operands of warpgroups adjacent along N (0 with one warpgroup along N). */
  readonly bWarpgroupStride: number;

  /** Accumulator registers per thread (tileN / 2 floats). */
  get accumulatorsPerThread(): number {
    return this.atom.c.elementsPerThread;
  }

  /**
   * Emits the MMAs of one K tile for the calling warpgroup: `wgmma.fence`, `tileK / 16` wgmma
   * (D += A·B with A = `a[4·kk .. 4·kk + 3]`, B at `bTile`, a 32-bit shared address of a
   * 1024-byte aligned tile), `commit_group`. `accumulate` (an `int`, default 1) is the scale-d of
   * the first wgmma (0 starts D from A·B). Wait with {@link emitWait}.
   */
  emitMma(
    b: BlockBuilder,
    target: Target,
    acc: DistributedTensor,
    a: RegisterArray,
    args: { readonly bTile: Expr; readonly accumulate?: Expr; readonly warpgroup?: Expr },
  ): void {
    if (!acc.encoding.equals(this.cEncoding))
      throw new BlockGemmPolicyError('WgmmaBlockGemmRs.emitMma acc', 'must have the block GEMM C distribution', String(acc.encoding));
    if (a.length < this.aRegisters || a.type.kind !== 'int' || a.type.bits !== 32)
      throw new BlockGemmPolicyError('WgmmaBlockGemmRs.emitMma a', `must be at least ${this.aRegisters} 32-bit registers`, `${a.length}`);
    const encoder = defineWgmmaDescriptorEncoder(target);
    const wrapper = this.atom.defineWrapper(target);
    const pin = defineWgmmaFenceOperands(target, this.accumulatorsPerThread);
    const d = acc.registers.variable;
    const swz = wgmmaSwizzleCode('128B');
    const lbo = this.bLayout.leadingByteOffset;
    const sbo = this.bLayout.strideByteOffset;
    if (lbo === null || sbo === null) throw new BlockGemmPolicyError('WgmmaBlockGemmRs B layout', 'needs descriptor byte offsets', 'null');
    const n = this.policy.warpgroupsN;
    if (n > 1 && args.warpgroup === undefined)
      throw new BlockGemmPolicyError('WgmmaBlockGemmRs.emitMma warpgroup', 'is needed with warpgroups along N', 'undefined');
    const bBase =
      n === 1 ? args.bTile : b.let('b_wg', uint32, add(args.bTile, cast(mul(mod(args.warpgroup!, n), this.bWarpgroupStride), uint32)));
    b.expr(callLeaf(pin, [d]));
    b.expr(callLeaf(defineWgmmaFence(target), []));
    for (let kk = 0; kk < this.kSteps; kk++) {
      const db = callLeaf(encoder, [add(bBase, this.bOffsets[kk]!), ...[lbo, sbo, 0, swz].map((x) => lit(x, uint32))]);
      b.expr(
        callLeaf(wrapper, [d, addressOf(index(a.variable, 4 * kk)), db, kk === 0 && args.accumulate !== undefined ? args.accumulate : 1]),
      );
    }
    b.expr(callLeaf(defineWgmmaCommitGroup(target), []));
    b.expr(callLeaf(pin, [d]));
  }

  /**
   * `wgmma.wait_group pending`, with the accumulator and the A registers pinned after it: wgmma
   * reads its register A asynchronously, so A must stay allocated (not reused for other values)
   * until the wait — the pin is a use the compiler cannot move above the wait.
   */
  emitWait(b: BlockBuilder, target: Target, acc: DistributedTensor, pending: number, a?: RegisterArray): void {
    b.expr(callLeaf(defineWgmmaWaitGroup(target, pending), []));
    b.expr(callLeaf(defineWgmmaFenceOperands(target, this.accumulatorsPerThread), [acc.registers.variable]));
    if (a !== undefined) b.expr(callLeaf(defineWgmmaFenceRegisters(target, this.aRegisters), [a.variable]));
  }
}

/**
 * `tk_wgmma_fence_registers_<count>(unsigned int* a)`: an empty `asm volatile` reading and writing
 * `count` 32-bit registers — the register-A counterpart of `defineWgmmaFenceOperands`, keeping an
 * A fragment alive until the wgmma that reads it has been waited for.
 */
export function defineWgmmaFenceRegisters(target: Target, count: number): FunctionDef {
  target.require('wgmma');
  if (!Number.isInteger(count) || count < 1 || count > 64)
    throw new BlockGemmPolicyError('wgmma register fence', 'count must be an integer in [1, 64]', String(count));
  return defineFunction(
    { name: `tk_wgmma_fence_registers_${count}`, qualifiers: target.functionQualifiers('force'), params: { a: pointer(uint32) } },
    (b) => {
      const ops = Array.from({ length: count }, (_, i) => `"+r"(a[${i}])`);
      const lines: string[] = [];
      for (let i = 0; i < ops.length; i += 8) lines.push(ops.slice(i, i + 8).join(', '));
      b.verbatim(['asm volatile("" :', ...lines.map((l, i) => `    ${l}${i === lines.length - 1 ? '' : ','}`), '    :: "memory");']);
    },
  );
}

/**
 * Where A-fragment element `i` (0..7) of k16 step `kk` comes from in the fp32 accumulator of an
 * `m64nKk16` wgmma (K = the A tile's K): its element index `8·kk + i` — both name row
 * `16w + l/4 + 8·((i/2) mod 2)` and column `16·kk + 2·(l mod 4) + (i mod 2) + 8·(i/4)` for lane l of
 * warp w. Packed register r (0..3) of step kk holds elements 2r, 2r + 1, low half first.
 */
export function aFragmentOfAccumulator(kk: number, i: number): number {
  return 8 * kk + i;
}
