import { add, cast, div, float32, int32, mod, mul, type BlockBuilder, type Expr, type Target } from '@tilekit/codegen';
import { getDType } from '@tilekit/numeric';
import {
  BlockEmitter,
  clearTile,
  evaluateLoadTile,
  evaluateStoreTile,
  loadTile,
  makeDistributedTensor,
  makeTensorView,
  makeTileWindow,
  makeVectorLoadEncoding,
  moveTileWindow,
  storeTile,
  type TensorView,
  type ThreadBuffers,
  type TileDistributionEncoding,
  type WindowValue,
} from '@tilekit/tile';
import type { Bindings, TensorDescriptor } from '@tilekit/layout';
import { evaluateMfmaBlockGemm, MfmaBlockGemm, MfmaBlockGemmPolicyError, type MfmaBlockGemmPolicy } from '../block/blockGemmMfma.ts';

/** Policy of {@link MfmaLdsPipeline}: the block GEMM's shape and wave grid. */
export type MfmaLdsPipelinePolicy = MfmaBlockGemmPolicy;

/** What the kernel hands the pipeline: its views and sizes as expressions. */
export interface MfmaLdsPipelineArgs {
  /** A, M×K (the batch's matrix), global memory. */
  readonly a: TensorView;
  /** B stored N×K (K contiguous), global memory. */
  readonly b: TensorView;
  /** C, M×N, written by the epilogue (converted to its element type). */
  readonly c: TensorView;
  /** `int` problem sizes. */
  readonly m: Expr;
  readonly n: Expr;
  readonly k: Expr;
  /** Kernel symbols the descriptors use (name → `int` expression). */
  readonly symbols: Readonly<Record<string, Expr>>;
}

/**
 * The gfx942 GEMM main loop in the style of CK-tile's "compute V3" pipeline (one LDS buffer, the
 * next K tile prefetched into registers): per K tile of `tileK`,
 * - global → registers: A (tileM × tileK) and B (tileN × tileK) tiles read with CK's coalesced
 *   vector distribution (`makeVectorLoadEncoding`: 16-byte vectors where the views allow, lanes
 *   along K then rows), each vector predicated on the ragged M/N/K edge with zero fill (`loadTile`);
 * - registers → LDS through the XOR-swizzled layouts of {@link MfmaBlockGemm} (`storeTile` into
 *   fixed-origin windows covering the whole LDS tile: no runtime bounds checks), barrier;
 * - the block GEMM from LDS (fragment reads + MFMAs), with the NEXT tile's global loads issued
 *   before it: the loads are in flight while the MFMAs run and are waited for only when their
 *   registers are stored to LDS after the second barrier.
 * Prologue: load tile 0, store, barrier. Loop over tiles 1..kTiles−1: load tile kt; block GEMM on
 * tile kt−1; barrier; store tile kt; barrier. Tail: block GEMM on the last tile. Epilogue: the fp32
 * accumulator converted to C's type and stored through a C window, every access predicated on the
 * ragged M/N edge (`storeTile`). Partition: block x → (tm, tn) = (x / tilesN, x mod tilesN).
 * Postcondition (property-tested by {@link MfmaLdsPipeline.evaluate} against `referenceGemm` on
 * ragged shapes): C = A·Bᵀ.
 */
export class MfmaLdsPipeline {
  readonly policy: MfmaLdsPipelinePolicy;
  readonly block: MfmaBlockGemm;
  readonly threads: number;
  /** Static LDS bytes (A tile + B tile). */
  readonly ldsBytes: number;

  constructor(policy: MfmaLdsPipelinePolicy) {
    this.block = new MfmaBlockGemm(policy);
    this.policy = this.block.policy;
    this.threads = this.block.threads;
    this.ldsBytes = this.block.aLds.bytes + this.block.bLds.bytes;
    // Every vector width must give a load distribution (rows cover whole wave passes): fail here, not at emit.
    for (let v = 1; v <= 16 / getDType(policy.dtype).bytes; v *= 2) {
      for (const operand of ['a', 'b'] as const) {
        const rows = operand === 'a' ? policy.tileM : policy.tileN;
        const rowsPerPass = 64 / (policy.tileK / v);
        if (!Number.isInteger(rowsPerPass) || rows % (rowsPerPass * this.block.waves) !== 0) {
          throw new MfmaBlockGemmPolicyError(
            `MfmaLdsPipeline tile${operand === 'a' ? 'M' : 'N'}`,
            `must be a multiple of ${Math.max(1, rowsPerPass) * this.block.waves} rows (one ${v}-element-vector load pass of all waves)`,
            String(rows),
          );
        }
      }
    }
  }

  /**
   * The global-load distribution of an operand tile (`rows × tileK`) for vectors of `vector`
   * elements (a power of two that divides tileK and fits 16 bytes): CK's coalesced 2-D load, with
   * the waves stacked along rows.
   */
  dramEncoding(operand: 'a' | 'b', vector: number): TileDistributionEncoding {
    const rows = operand === 'a' ? this.policy.tileM : this.policy.tileN;
    const maxVector = 16 / getDType(this.policy.dtype).bytes;
    if (!Number.isSafeInteger(vector) || vector < 1 || vector > maxVector || (vector & (vector - 1)) !== 0) {
      throw new MfmaBlockGemmPolicyError(
        `MfmaLdsPipeline ${operand} vector`,
        `must be a power of two in [1, ${maxVector}]`,
        String(vector),
      );
    }
    return makeVectorLoadEncoding({ rows, cols: this.policy.tileK, vectorLength: vector, warpSize: 64, numWarps: this.block.waves });
  }

  /** Blocks of the grid (x) for an M×N problem. */
  gridSize(m: number, n: number): number {
    return Math.ceil(m / this.policy.tileM) * Math.ceil(n / this.policy.tileN);
  }

  /** The block tile (tm, tn) of block `pid`, as the emitted code computes it. */
  tileOf(pid: number, n: number): [number, number] {
    const tilesN = Math.ceil(n / this.policy.tileN);
    return [Math.floor(pid / tilesN), pid % tilesN];
  }

  /** Emits the whole block program into `b` (the entry's block). The views' vector widths decide the global accesses. */
  emit(b: BlockBuilder, target: Target, args: MfmaLdsPipelineArgs): void {
    target.require('mfma');
    const P = this.policy;
    const blk = this.block;
    const block = new BlockEmitter(b, target, { numThreads: this.threads, index: { symbols: args.symbols } });
    const element = args.a.element;

    b.comment(`tile partition: ${P.tileM}x${P.tileN} block tiles, N fastest`);
    const tilesN = b.let('tiles_n', int32, div(add(args.n, P.tileN - 1), P.tileN));
    const pid = b.let('pid', int32, cast(target.blockIdx('x'), int32));
    const m0 = b.let('m0', int32, mul(div(pid, tilesN), P.tileM));
    const n0 = b.let('n0', int32, mul(mod(pid, tilesN), P.tileN));
    const kTiles = b.let('k_tiles', int32, div(add(args.k, P.tileK - 1), P.tileK));

    b.comment(`LDS: A ${P.tileM}x${P.tileK} and B ${P.tileN}x${P.tileK}, K-contiguous 16-byte chunks XOR-swizzled per 128-byte line`);
    const aLdsArray = block.shared('a_lds', element, blk.aLds.elements, 16);
    const bLdsArray = block.shared('b_lds', element, blk.bLds.elements, 16);
    const bytes = args.a.elementBytes;
    // The LDS windows cover their whole tile at a fixed origin: no runtime bounds checks (clang cannot drop them itself).
    const lds = (array: Expr, descriptor: TensorDescriptor, rows: number) =>
      makeTileWindow(block, {
        view: makeTensorView(array, descriptor, { space: 'shared', elementBytes: bytes }),
        lengths: [rows, P.tileK],
        origin: [0, 0],
        fixedOrigin: true,
      });
    const aLds = lds(aLdsArray, blk.aLds.descriptor, P.tileM);
    const bLds = lds(bLdsArray, blk.bLds.descriptor, P.tileN);

    const aDramEnc = this.dramEncoding('a', vectorOf(args.a.descriptor, P.tileK, getDType(P.dtype).bytes));
    const bDramEnc = this.dramEncoding('b', vectorOf(args.b.descriptor, P.tileK, getDType(P.dtype).bytes));
    const aDram = makeTileWindow(block, {
      view: args.a,
      lengths: [P.tileM, P.tileK],
      origin: [m0, 0],
      encoding: aDramEnc,
      originAlignment: [P.tileM, P.tileK],
    });
    const bDram = makeTileWindow(block, {
      view: args.b,
      lengths: [P.tileN, P.tileK],
      origin: [n0, 0],
      encoding: bDramEnc,
      originAlignment: [P.tileN, P.tileK],
    });

    const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
    const aPrefetch = makeDistributedTensor(block, 'a_prefetch', aDramEnc, element);
    const bPrefetch = makeDistributedTensor(block, 'b_prefetch', bDramEnc, element);
    const aFrag = makeDistributedTensor(block, 'a_frag', blk.aEncoding, element);
    const bFrag = makeDistributedTensor(block, 'b_frag', blk.bEncoding, element);
    const gemmArgs = { acc, aLds, bLds, aFrag, bFrag };

    b.comment('prologue: K tile 0 global → registers → LDS');
    block.threads((t) => {
      clearTile(t, acc);
      loadTile(t, aDram, aPrefetch);
      loadTile(t, bDram, bPrefetch);
    });
    moveTileWindow(block, aDram, [0, P.tileK]);
    moveTileWindow(block, bDram, [0, P.tileK]);
    block.threads((t) => {
      storeTile(t, aLds, aPrefetch);
      storeTile(t, bLds, bPrefetch);
    });
    block.sync();

    b.comment('main loop: prefetch K tile kt into registers while the MFMAs consume tile kt-1 from LDS');
    block.forRange({ name: 'kt', from: 1, to: kTiles }, (inner) => {
      inner.threads((t) => {
        loadTile(t, aDram, aPrefetch);
        loadTile(t, bDram, bPrefetch);
        blk.emit(t, target, gemmArgs);
      });
      moveTileWindow(inner, aDram, [0, P.tileK]);
      moveTileWindow(inner, bDram, [0, P.tileK]);
      inner.sync();
      inner.threads((t) => {
        storeTile(t, aLds, aPrefetch);
        storeTile(t, bLds, bPrefetch);
      });
      inner.sync();
    });

    b.comment('tail: the last K tile');
    block.threads((t) => blk.emit(t, target, gemmArgs));

    b.comment('epilogue: fp32 accumulator → C type, predicated stores on the ragged M/N edge');
    const cWin = makeTileWindow(block, {
      view: args.c,
      lengths: [P.tileM, P.tileN],
      origin: [m0, n0],
      encoding: blk.cEncoding,
      originAlignment: [P.tileM, P.tileN],
    });
    block.threads((t) => storeTile(t, cWin, acc));
  }

  /**
   * The TS model of the emitted program for one block tile on numbers: every K tile is read with
   * `evaluateLoadTile` through `a`/`b` (zero outside), written into LDS memory with
   * `evaluateStoreTile` through the swizzled layouts, multiplied by {@link evaluateMfmaBlockGemm};
   * the accumulator is then stored through `c` with `evaluateStoreTile` (ragged edges dropped).
   * Mutates and returns `cMemory`.
   */
  evaluate(args: {
    readonly a: { readonly descriptor: TensorDescriptor; readonly memory: readonly number[] };
    readonly b: { readonly descriptor: TensorDescriptor; readonly memory: readonly number[] };
    readonly c: { readonly descriptor: TensorDescriptor; readonly memory: number[] };
    readonly bindings: Bindings;
    readonly k: number;
    readonly pid: number;
    readonly n: number;
    readonly vector: { readonly a: number; readonly b: number };
  }): number[] {
    const P = this.policy;
    const blk = this.block;
    const [tm, tn] = this.tileOf(args.pid, args.n);
    const aEnc = this.dramEncoding('a', args.vector.a);
    const bEnc = this.dramEncoding('b', args.vector.b);
    let acc: ThreadBuffers = Array.from({ length: this.threads }, () => new Array<number>(blk.accumulatorsPerThread).fill(0));
    const stage = (
      enc: TileDistributionEncoding,
      window: WindowValue,
      lds: { readonly descriptor: TensorDescriptor; readonly elements: number },
      memory: readonly number[],
    ): number[] => {
      const regs = evaluateLoadTile(window, memory);
      const ldsMemory = new Array<number>(lds.elements).fill(Number.NaN);
      evaluateStoreTile({ descriptor: lds.descriptor, encoding: enc, origin: [0, 0] }, regs, ldsMemory);
      return ldsMemory;
    };
    for (let kt = 0; kt < Math.ceil(args.k / P.tileK); kt++) {
      const aL = stage(
        aEnc,
        { descriptor: args.a.descriptor, encoding: aEnc, origin: [tm * P.tileM, kt * P.tileK], bindings: args.bindings },
        blk.aLds,
        args.a.memory,
      );
      const bL = stage(
        bEnc,
        { descriptor: args.b.descriptor, encoding: bEnc, origin: [tn * P.tileN, kt * P.tileK], bindings: args.bindings },
        blk.bLds,
        args.b.memory,
      );
      acc = evaluateMfmaBlockGemm(blk, aL, bL, acc);
    }
    evaluateStoreTile(
      { descriptor: args.c.descriptor, encoding: blk.cEncoding, origin: [tm * P.tileM, tn * P.tileN], bindings: args.bindings },
      acc,
      args.c.memory,
    );
    return args.c.memory;
  }
}

/** The vector width the K dim of an operand view allows (its guaranteed contiguous run, cut to tileK and 16 bytes). */
function vectorOf(desc: TensorDescriptor, tileK: number, elementBytes: number): number {
  const v = desc.safeVectorLengthsStrides();
  const len = v.strides[1] === 1 ? Math.max(1, v.lengths[1]!) : 1;
  let p = 1;
  while (p * 2 <= len && len % (p * 2) === 0 && p * 2 * elementBytes <= 16 && tileK % (p * 2) === 0) p *= 2;
  return p;
}
