// Test-only: tile programs emitted in BOTH dialects for the GPU parity test (tile.gpu.spec.ts: the
// CUDA dialect on the device must write exactly the bytes the host dialect writes under g++) and
// for its CPU half (gpuParity.spec.ts: the host dialect equals the TS evaluators). Each case is one
// function whose parameters are byte buffers (in order) then `int` arguments; a case is run on one
// block of `numThreads` threads (grid 1). Uses node: built-ins (g++ through codegen's harness).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  add,
  defineFunction,
  float32,
  host,
  index,
  int32,
  mul,
  pointer,
  SourceBuilder,
  type BlockBuilder,
  type CType,
  type Expr,
  type FunctionDef,
  type ParamSpec,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import { compileAndRunHost } from '@tilekit/codegen/testing';
import {
  evaluateSymInt,
  makeNaiveTensorDescriptor,
  makeNaiveTensorDescriptorAligned,
  makeNaiveTensorDescriptorPacked,
  merge,
  passThrough,
  symbol,
  transformTensorDescriptor,
  xor,
  type TensorDescriptor,
} from '@tilekit/layout';
import { mmaSyncAtoms } from '../atoms/index.ts';
import {
  blockReducePlan,
  blockTileReduce,
  evaluateBlockReduce,
  reduceMax,
  reduceSum,
  type CrossThreadStep,
  type ReduceOp,
} from '../blockReduce.ts';
import { makeVectorLoadEncoding, makeWarpGridEncoding } from '../blockEncodings.ts';
import { makeDistributedTensor, type DistributedTensor, type ThreadBuffers } from '../distributedTensor.ts';
import { embedEncoding } from '../embedEncoding.ts';
import { hRef, rRef, TileDistributionEncoding } from '../tileDistributionEncoding.ts';
import { BlockEmitter } from '../blockEmitter.ts';
import { emitStagedCopy } from './stagedCopy.ts';
import {
  evaluateLoadTile,
  evaluateStoreTile,
  loadTile,
  makeTensorView,
  makeTileWindow,
  storeTile,
  type WindowValue,
} from '../tileWindow.ts';

/** Element encoding of a buffer: fp32, or fp16 held as its 16-bit pattern (TS values are the bits). */
export type ParityElement = 'f32' | 'f16';

/** One pointer parameter: its initial bytes. */
export interface ParityBuffer {
  readonly name: string;
  readonly element: ParityElement;
  readonly init: Uint8Array;
}

/** One `int` parameter (after all buffers). */
export interface ParityInt {
  readonly name: string;
  readonly value: number;
}

/** A tile program to run on one block in both dialects. */
export interface ParityCase {
  /** The function / kernel name (a C identifier). */
  readonly name: string;
  /** What it checks, for test names. */
  readonly what: string;
  readonly kind: 'load-store' | 'reduce';
  readonly numThreads: number;
  readonly buffers: readonly ParityBuffer[];
  readonly ints: readonly ParityInt[];
  /**
   * Every buffer after the run, from the TS evaluators; undefined for cases whose exact result only
   * the emitted fold order defines (fractional sums): those are compared host dialect vs GPU only.
   */
  readonly expected: readonly Uint8Array[] | undefined;
  /** Reductions: the cross-thread steps of each reduction (both paths must be covered). */
  readonly reduceSteps: readonly CrossThreadStep[];
  /** The function in `target`'s dialect: a `__global__` extern "C" kernel for CUDA, a plain function on host. */
  emit(target: Target): FunctionDef;
}

// ------------------------------------------------------------------------------------------------
// Bytes and deterministic fills.

/** Values (fp32 numbers or fp16 bit patterns) → bytes (little-endian, as both machines are). */
export function toBytes(element: ParityElement, values: readonly number[]): Uint8Array {
  const typed = element === 'f32' ? Float32Array.from(values) : Uint16Array.from(values);
  return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
}

/** Bytes → element values (fp32 numbers or fp16 bit patterns). */
export function fromBytes(element: ParityElement, bytes: Uint8Array): number[] {
  const copy = bytes.slice();
  return element === 'f32' ? [...new Float32Array(copy.buffer)] : [...new Uint16Array(copy.buffer)];
}

/** A plain `Uint8Array` view of any byte array (Buffer included), so deep equality compares bytes only. */
export function plainBytes(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The first differing element of two buffers, described; undefined when the bytes are equal. */
export function firstMismatch(element: ParityElement, got: Uint8Array, want: Uint8Array): string | undefined {
  if (got.byteLength !== want.byteLength) return `${got.byteLength} bytes, expected ${want.byteLength}`;
  const g = fromBytes(element, got);
  const w = fromBytes(element, want);
  const gb = element === 'f32' ? new Uint32Array(got.slice().buffer) : new Uint16Array(got.slice().buffer);
  const wb = element === 'f32' ? new Uint32Array(want.slice().buffer) : new Uint16Array(want.slice().buffer);
  let count = 0;
  let first = -1;
  for (let i = 0; i < gb.length; i++) {
    if (gb[i] !== wb[i]) {
      count++;
      if (first < 0) first = i;
    }
  }
  if (count === 0) return undefined;
  const hex = (v: number): string => `0x${v.toString(16)}`;
  return `${count} of ${gb.length} elements differ; first at ${first}: got ${g[first]} (${hex(gb[first]!)}), expected ${w[first]} (${hex(wb[first]!)})`;
}

/** A small deterministic generator (xorshift32) so both machines build identical inputs. */
function generator(seed: number): () => number {
  let s = seed >>> 0 || 0x9e3779b9;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

/** Integers in [-50, 50]: fp32 sums of a few thousand are exact, so any fold order gives the same bits. */
function integerFill(count: number, seed: number): number[] {
  const next = generator(seed);
  return Array.from({ length: count }, () => (next() % 101) - 50);
}

/** fp32 values in (-1, 1) with full 24-bit mantissas: sums depend on the fold order. */
function fractionalFill(count: number, seed: number): number[] {
  const next = generator(seed);
  return Array.from({ length: count }, () => Math.fround((next() / 2 ** 32) * 2 - 1));
}

/** Finite fp16 bit patterns (any sign, exponent 1…29, any mantissa): no NaN, moves keep them exact. */
function halfBitsFill(count: number, seed: number): number[] {
  const next = generator(seed);
  return Array.from({ length: count }, () => {
    const r = next();
    return ((r >>> 31) << 15) | ((1 + ((r >>> 10) % 29)) << 10) | (r & 0x3ff);
  });
}

const GUARD = 16;
const SENTINEL = { f32: -7777, f16: 0xfbff } as const; // fp16 0xfbff = -65504
const withGuards = (element: ParityElement, values: readonly number[]): number[] => {
  const g = new Array<number>(GUARD).fill(SENTINEL[element]);
  return [...g, ...values, ...g];
};

// ------------------------------------------------------------------------------------------------
// Building cases.

interface CaseParts {
  readonly name: string;
  readonly what: string;
  readonly kind: ParityCase['kind'];
  readonly numThreads: number;
  /** Values per buffer (fp16: bits); initial contents. */
  readonly buffers: readonly { readonly name: string; readonly element: ParityElement; readonly values: readonly number[] }[];
  readonly ints?: readonly ParityInt[];
  readonly expected: readonly (readonly number[])[] | undefined;
  readonly reduceSteps?: readonly CrossThreadStep[];
  readonly body: (b: BlockBuilder, p: Readonly<Record<string, VarExpr>>, target: Target) => void;
}

const elementType = (target: Target, element: ParityElement): CType => (element === 'f32' ? float32 : target.dtypeType('fp16'));
const bytesOfElement = (element: ParityElement): number => (element === 'f32' ? 4 : 2);

function makeCase(parts: CaseParts): ParityCase {
  const ints = parts.ints ?? [];
  return {
    name: parts.name,
    what: parts.what,
    kind: parts.kind,
    numThreads: parts.numThreads,
    buffers: parts.buffers.map((b) => ({ name: b.name, element: b.element, init: toBytes(b.element, b.values) })),
    ints,
    expected: parts.expected?.map((values, k) => toBytes(parts.buffers[k]!.element, values)),
    reduceSteps: parts.reduceSteps ?? [],
    emit(target: Target): FunctionDef {
      const cuda = target.name !== 'host';
      const params: Record<string, ParamSpec> = {};
      for (const b of parts.buffers) params[b.name] = pointer(elementType(target, b.element));
      for (const i of ints) params[i.name] = int32;
      return defineFunction(
        {
          name: parts.name,
          params,
          ...(cuda ? { qualifiers: target.kernelQualifiers(), attributes: [target.launchBounds(parts.numThreads)] } : {}),
        },
        (b, p) => parts.body(b, p as Readonly<Record<string, VarExpr>>, target),
      );
    },
  };
}

/** `out[tid · n + d] = tile[d]` for every thread: the registers themselves are compared, not just memory. */
function dumpRegisters(block: BlockEmitter, tile: DistributedTensor, out: Expr): void {
  const n = tile.size;
  block.threads((t) => {
    for (let d = 0; d < n; d++) t.b.assign(index(out, add(mul(t.tid, n), d)), tile.at(t, d));
  });
}

const flatRegisters = (buffers: ThreadBuffers): number[] => buffers.flat();

interface RoundTripSpec {
  readonly name: string;
  readonly what: string;
  readonly encoding: TileDistributionEncoding;
  readonly element: ParityElement;
  /** The tensor (global memory); symbolic lengths/strides are `int` arguments bound by `bindings`. */
  readonly descriptor: TensorDescriptor;
  readonly bindings?: Readonly<Record<string, number>>;
  readonly origin: readonly number[];
  /** Origins passed as `int` arguments with this declared alignment (else literals in the code). */
  readonly runtimeOrigin?: readonly number[];
  readonly seed: number;
}

/** src window → registers (dumped) → dst window through the same distribution; guards around both tensors. */
function roundTripCase(s: RoundTripSpec): ParityCase {
  const enc = s.encoding;
  const bindings = s.bindings ?? {};
  const space = evaluateSymInt(s.descriptor.elementSpaceSize, bindings);
  const src = s.element === 'f32' ? integerFill(space, s.seed) : halfBitsFill(space, s.seed);
  const sentinel = SENTINEL[s.element];
  const w: WindowValue = { descriptor: s.descriptor, encoding: enc, origin: s.origin, bindings };
  const regs = evaluateLoadTile(w, src);
  const dst = new Array<number>(space).fill(sentinel);
  evaluateStoreTile(w, regs, dst);
  const nRegs = enc.numThreads * enc.threadBufferSize;
  const ints: ParityInt[] = [
    ...Object.entries(bindings).map(([name, value]) => ({ name, value })),
    ...(s.runtimeOrigin === undefined ? [] : s.origin.map((value, i) => ({ name: `o${i}`, value }))),
  ];
  return makeCase({
    name: s.name,
    what: s.what,
    kind: 'load-store',
    numThreads: enc.numThreads,
    buffers: [
      { name: 'src', element: s.element, values: withGuards(s.element, src) },
      { name: 'dst', element: s.element, values: withGuards(s.element, new Array<number>(space).fill(sentinel)) },
      { name: 'regs', element: s.element, values: new Array<number>(nRegs).fill(sentinel) },
    ],
    ints,
    expected: [withGuards(s.element, src), withGuards(s.element, dst), flatRegisters(regs)],
    body: (b, p, target) => {
      const symbols = Object.fromEntries(Object.keys(bindings).map((k) => [k, p[k]!]));
      const block = new BlockEmitter(b, target, { numThreads: enc.numThreads, index: { symbols } });
      const eb = { elementBytes: bytesOfElement(s.element) };
      const origin = s.runtimeOrigin === undefined ? s.origin : s.origin.map((_, i) => p[`o${i}`]!);
      const align = s.runtimeOrigin === undefined ? {} : { originAlignment: s.runtimeOrigin };
      const ws = makeTileWindow(block, {
        view: makeTensorView(add(p['src']!, GUARD), s.descriptor, eb),
        lengths: enc.xLengths,
        origin,
        encoding: enc,
        ...align,
      });
      const wd = makeTileWindow(block, {
        view: makeTensorView(add(p['dst']!, GUARD), s.descriptor, eb),
        lengths: enc.xLengths,
        origin,
        encoding: enc,
        ...align,
      });
      const tile = makeDistributedTensor(block, 'tile', enc, elementType(target, s.element));
      block.threads((t) => {
        loadTile(t, ws, tile);
        storeTile(t, wd, tile);
      });
      dumpRegisters(block, tile, p['regs']!);
    },
  });
}

interface StagingSpec {
  readonly name: string;
  readonly what: string;
  readonly shared: TensorDescriptor;
  readonly sharedSize: number;
}

/**
 * fp16 64×64: global → registers (CK's coalesced load, 16-byte vectors) → shared (`shared` layout) → barrier →
 * registers of the mma.sync A-fragment block distribution (dumped) → global.
 */
function stagingCase(s: StagingSpec, seed: number): ParityCase {
  const encA = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 8 });
  const encB = embedEncoding(
    makeWarpGridEncoding({ warps: [4, 2], xs: [{ warpAxis: 0 }, { warpAxis: 1, repeat: 2 }] }),
    mmaSyncAtoms('m16n8k16', 'fp16').a.encoding,
  );
  const g = makeNaiveTensorDescriptor([64, 64], [64, 1], { vectorLength: 8 });
  const src = halfBitsFill(64 * 64, seed);
  const zero = [0, 0];
  const a = evaluateLoadTile({ descriptor: g, encoding: encA, origin: zero }, src);
  const smem = new Array<number>(s.sharedSize).fill(0);
  evaluateStoreTile({ descriptor: s.shared, encoding: encA, origin: zero }, a, smem);
  const bRegs = evaluateLoadTile({ descriptor: s.shared, encoding: encB, origin: zero }, smem);
  const dst = new Array<number>(64 * 64).fill(SENTINEL.f16);
  evaluateStoreTile({ descriptor: g, encoding: encB, origin: zero }, bRegs, dst);
  return makeCase({
    name: s.name,
    what: s.what,
    kind: 'load-store',
    numThreads: encA.numThreads,
    buffers: [
      { name: 'src', element: 'f16', values: withGuards('f16', src) },
      { name: 'dst', element: 'f16', values: withGuards('f16', new Array<number>(64 * 64).fill(SENTINEL.f16)) },
      { name: 'regs', element: 'f16', values: new Array<number>(encB.numThreads * encB.threadBufferSize).fill(SENTINEL.f16) },
    ],
    expected: [withGuards('f16', src), withGuards('f16', dst), flatRegisters(bRegs)],
    body: (b, p, target) => {
      const half = target.dtypeType('fp16');
      const block = new BlockEmitter(b, target, { numThreads: encA.numThreads });
      const eb = { elementBytes: 2 };
      const lds = block.shared('lds', half, s.sharedSize);
      const wg = makeTileWindow(block, {
        view: makeTensorView(add(p['src']!, GUARD), g, eb),
        lengths: [64, 64],
        origin: zero,
        encoding: encA,
      });
      const ws = makeTileWindow(block, { view: makeTensorView(lds, s.shared, eb), lengths: [64, 64], origin: zero });
      const wd = makeTileWindow(block, {
        view: makeTensorView(add(p['dst']!, GUARD), g, eb),
        lengths: [64, 64],
        origin: zero,
        encoding: encB,
      });
      const ta = makeDistributedTensor(block, 'ta', encA, half);
      const tb = makeDistributedTensor(block, 'tb', encB, half);
      emitStagedCopy(block, { source: wg, staging: ws, destination: wd, first: ta, second: tb });
      dumpRegisters(block, tb, p['regs']!);
    },
  });
}

interface ReduceSpec {
  readonly name: string;
  readonly what: string;
  readonly encoding: TileDistributionEncoding;
  readonly reduceXs: readonly number[];
  readonly fill: 'integer' | 'fractional';
  readonly seed: number;
}

/**
 * fp32: a tile loaded from a packed tensor, reduced with sum and with max over `reduceXs`; every
 * thread's result registers (each replica: the broadcast) are dumped and the results stored.
 */
function reduceCase(s: ReduceSpec): ParityCase {
  const enc = s.encoding;
  const desc = makeNaiveTensorDescriptorPacked(enc.xLengths);
  const size = enc.xLengths.reduce((a, b) => a * b, 1);
  const src = s.fill === 'integer' ? integerFill(size, s.seed) : fractionalFill(size, s.seed);
  const plan = blockReducePlan(enc, s.reduceXs, 32);
  const red = plan.reduced.encoding;
  const outDesc = makeNaiveTensorDescriptorPacked(red.xLengths);
  const outSize = red.xLengths.reduce((a, b) => a * b, 1);
  const nRegs = red.numThreads * red.threadBufferSize;
  const ops: readonly ReduceOp[] = [reduceSum, reduceMax];
  let expected: number[][] | undefined;
  if (s.fill === 'integer') {
    const tile = evaluateLoadTile({ descriptor: desc, encoding: enc, origin: enc.xLengths.map(() => 0) }, src);
    expected = [src];
    for (const op of ops) {
      const r = evaluateBlockReduce(enc, s.reduceXs, tile, op);
      const out = new Array<number>(outSize).fill(SENTINEL.f32);
      evaluateStoreTile({ descriptor: outDesc, encoding: red, origin: red.xLengths.map(() => 0) }, r, out);
      expected.push(flatRegisters(r), out);
    }
  }
  return makeCase({
    name: s.name,
    what: s.what,
    kind: 'reduce',
    numThreads: enc.numThreads,
    buffers: [
      { name: 'src', element: 'f32', values: src },
      ...ops.flatMap((op) => [
        { name: `${op.name}Regs`, element: 'f32' as const, values: new Array<number>(nRegs).fill(SENTINEL.f32) },
        { name: `${op.name}Out`, element: 'f32' as const, values: new Array<number>(outSize).fill(SENTINEL.f32) },
      ]),
    ],
    expected,
    reduceSteps: plan.steps,
    body: (b, p, target) => {
      const block = new BlockEmitter(b, target, { numThreads: enc.numThreads });
      const zeros = enc.xLengths.map(() => 0);
      const w = makeTileWindow(block, { view: makeTensorView(p['src']!, desc), lengths: enc.xLengths, origin: zeros, encoding: enc });
      const tile = makeDistributedTensor(block, 'tile', enc, float32);
      block.threads((t) => loadTile(t, w, tile));
      for (const op of ops) {
        const r = blockTileReduce(block, `red_${op.name}`, tile, s.reduceXs, op);
        dumpRegisters(block, r, p[`${op.name}Regs`]!);
        const wo = makeTileWindow(block, {
          view: makeTensorView(p[`${op.name}Out`]!, outDesc),
          lengths: red.xLengths,
          origin: red.xLengths.map(() => 0),
        });
        block.threads((t) => storeTile(t, wo, r));
      }
    },
  });
}

/**
 * A fixed irregular encoding: an R digit (2 replicas), non-power-of-two digits, P merges that mix
 * both X dims, 24 threads (a partial warp). X = (3·4·2, 5·2·2) = 24 × 20; P0 → (R0, H0[0] = 3),
 * P1 → (H1[1] = 2, H0[2] = 2); Y → (H1[2] = 2, H0[1] = 4, H1[0] = 5): 40 registers.
 */
export function fixedIrregularEncoding(): TileDistributionEncoding {
  return new TileDistributionEncoding({
    rs: [2],
    hs: [
      [3, 4, 2],
      [5, 2, 2],
    ],
    ps: [
      [rRef(0), hRef(0, 0)],
      [hRef(1, 1), hRef(0, 2)],
    ],
    ys: [hRef(1, 2), hRef(0, 1), hRef(1, 0)],
  });
}

/** The mma.sync m16n8k16 C fragment over a 2×2 warp grid with 2 repeats along M: a 64×16 fp32 tile, 128 threads. */
export function mmaBlockCEncoding(): TileDistributionEncoding {
  return embedEncoding(
    makeWarpGridEncoding({ warps: [2, 2], xs: [{ warpAxis: 0, repeat: 2 }, { warpAxis: 1 }] }),
    mmaSyncAtoms('m16n8k16', 'fp16').c.encoding,
  );
}

/** Every parity case: load/store round trips and block reductions. */
export function gpuParityCases(): ParityCase[] {
  const vecHalf = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 8 });
  const vecFloat = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 4, warpSize: 32, numWarps: 8 });
  const mma = mmaSyncAtoms('m16n8k16', 'fp16');
  const blockA = embedEncoding(makeWarpGridEncoding({ warps: [2, 2], xs: [{ warpAxis: 0 }, { warpAxis: 1 }] }), mma.a.encoding);
  const irregular = fixedIrregularEncoding();
  // Shared layouts of the staging path: rows padded to 72, and 8-element chunks xor-swizzled by row.
  const padded = makeNaiveTensorDescriptorAligned([64, 64], 72);
  const chunks = makeNaiveTensorDescriptorPacked([64, 8, 8]);
  const swz = transformTensorDescriptor(chunks, [xor([64, 8]), passThrough(8)], [[0, 1], [2]], [[0, 1], [2]]);
  const swizzled = transformTensorDescriptor(swz, [passThrough(64), merge([8, 8])], [[0], [1, 2]], [[0], [1]]);
  const m = symbol('m', { max: 4096 });
  const n = symbol('n', { max: 4096, multipleOf: 4 });
  const s = symbol('s', { max: 1 << 16, multipleOf: 4 });
  return [
    roundTripCase({
      name: 'rt_vec_fp16',
      what: 'CK coalesced 64×64 fp16 load (wave32, 8 warps, 16-byte vectors) at origin [64, 8] of a 128×72 tensor',
      encoding: vecHalf,
      element: 'f16',
      descriptor: makeNaiveTensorDescriptor([128, 72], [72, 1], { vectorLength: 8 }),
      origin: [64, 8],
      seed: 1,
    }),
    roundTripCase({
      name: 'rt_mma_c_fp32',
      what: 'mma.sync m16n8k16 C fragments on a 2×2 warp grid (64×16 fp32, 8-byte vectors) at origin [16, 8] of an 80×40 tensor',
      encoding: mmaBlockCEncoding(),
      element: 'f32',
      descriptor: makeNaiveTensorDescriptor([80, 40], [40, 1], { vectorLength: 2 }),
      origin: [16, 8],
      seed: 2,
    }),
    roundTripCase({
      name: 'rt_mma_a_fp16',
      what: 'mma.sync m16n8k16 A fragments on a 2×2 warp grid (32×32 fp16, 4-byte vectors) at origin [0, 32] of a 32×96 tensor',
      encoding: blockA,
      element: 'f16',
      descriptor: makeNaiveTensorDescriptor([32, 96], [96, 1], { vectorLength: 2 }),
      origin: [0, 32],
      seed: 3,
    }),
    roundTripCase({
      name: 'rt_irregular_fp32',
      what: 'fixed irregular encoding (R replicas, digits 3 and 5, 24 threads) at origin [3, 2] of a 30×22 tensor',
      encoding: irregular,
      element: 'f32',
      descriptor: makeNaiveTensorDescriptor([30, 22], [22, 1], { vectorLength: 2 }),
      origin: [3, 2],
      seed: 4,
    }),
    roundTripCase({
      name: 'rt_ragged_symbolic',
      what: 'ragged 64×64 fp32 window at runtime origin [-12, 8] of a runtime 50×36 tensor (row stride 40): partly outside on three sides',
      encoding: vecFloat,
      element: 'f32',
      descriptor: makeNaiveTensorDescriptor([m, n], [s, 1], { vectorLength: 4 }),
      bindings: { m: 50, n: 36, s: 40 },
      origin: [-12, 8],
      runtimeOrigin: [1, 4],
      seed: 5,
    }),
    roundTripCase({
      name: 'rt_ragged_scalar',
      what: 'ragged 64×64 fp32 window at origin [40, 32] of a 45×37 tensor (odd length: scalar accesses)',
      encoding: vecFloat,
      element: 'f32',
      descriptor: makeNaiveTensorDescriptorPacked([45, 37]),
      origin: [40, 32],
      seed: 6,
    }),
    stagingCase(
      {
        name: 'stage_padded',
        what: 'fp16 global → padded shared (rows of 72) → mma A-fragment distribution → global',
        shared: padded,
        sharedSize: padded.elementSpaceSize as number,
      },
      7,
    ),
    stagingCase(
      {
        name: 'stage_swizzled',
        what: 'fp16 global → xor-swizzled shared (8-element chunks) → mma A-fragment distribution → global',
        shared: swizzled,
        sharedSize: 64 * 64,
      },
      8,
    ),
    reduceCase({
      name: 'red_vec_cols',
      what: 'sum/max over rows of the 64×64 fp32 coalesced-load tile (8 warps: shared memory, then lanes), integer data',
      encoding: vecFloat,
      reduceXs: [0],
      fill: 'integer',
      seed: 11,
    }),
    reduceCase({
      name: 'red_vec_rows',
      what: 'sum/max over columns of the 64×64 fp32 coalesced-load tile (16 lanes: shuffles only), integer data',
      encoding: vecFloat,
      reduceXs: [1],
      fill: 'integer',
      seed: 12,
    }),
    reduceCase({
      name: 'red_irregular_x0',
      what: 'sum/max over X0 of the irregular encoding (3 threads: shared memory; then lanes; partial warp), integer data',
      encoding: irregular,
      reduceXs: [0],
      fill: 'integer',
      seed: 13,
    }),
    reduceCase({
      name: 'red_irregular_x1',
      what: 'sum/max over X1 of the irregular encoding (lanes, partial warp), integer data',
      encoding: irregular,
      reduceXs: [1],
      fill: 'integer',
      seed: 14,
    }),
    reduceCase({
      name: 'red_vec_cols_frac',
      what: 'sum/max over rows of the 64×64 fp32 coalesced-load tile, fractional data (exact: both dialects fold in the same order)',
      encoding: vecFloat,
      reduceXs: [0],
      fill: 'fractional',
      seed: 15,
    }),
    reduceCase({
      name: 'red_irregular_x0_frac',
      what: 'sum/max over X0 of the irregular encoding, fractional data (exact: same fold order)',
      encoding: irregular,
      reduceXs: [0],
      fill: 'fractional',
      seed: 16,
    }),
  ];
}

// ------------------------------------------------------------------------------------------------
// Running.

/** One CUDA source with every case's kernel (`extern "C"`, named after the case). */
export function cudaParitySource(cases: readonly ParityCase[], target: Target): string {
  const src = new SourceBuilder({ dialect: target, header: 'tilekit tile: GPU parity kernels (tile.gpu.spec.ts)' });
  for (const c of cases) src.add(c.emit(target));
  return src.render();
}

/** The host-dialect program: every case's function and a main that runs each on byte files in argv[1]. */
export function hostParitySource(cases: readonly ParityCase[]): string {
  const src = new SourceBuilder({ dialect: host, header: 'tilekit tile: host dialect of the GPU parity kernels' });
  src.include('<cstdio>').include('<cstdlib>').include('<cstddef>').include('<cstdint>');
  for (const c of cases) src.add(c.emit(host));
  const main: string[] = [
    'static void tk_file(const char* dir, const char* name, void* data, std::size_t bytes, bool write) {',
    '  char path[4096];',
    '  std::snprintf(path, sizeof path, "%s/%s", dir, name);',
    '  std::FILE* f = std::fopen(path, write ? "wb" : "rb");',
    '  const bool ok = f != nullptr && (write ? std::fwrite(data, 1, bytes, f) : std::fread(data, 1, bytes, f)) == bytes;',
    '  if (f != nullptr) std::fclose(f);',
    '  if (!ok) {',
    '    std::fprintf(stderr, "cannot %s %s\\n", write ? "write" : "read", path);',
    '    std::exit(2);',
    '  }',
    '}',
    '',
    'int main(int argc, char** argv) {',
    '  if (argc != 2) return 2;',
  ];
  cases.forEach((c, i) => {
    main.push('  {');
    c.buffers.forEach((b, k) => {
      const cpp = b.element === 'f32' ? 'float' : 'uint16_t';
      const len = b.init.byteLength / bytesOfElement(b.element);
      main.push(`    alignas(16) static ${cpp} b${k}[${len}];`, `    tk_file(argv[1], "c${i}_b${k}.in", b${k}, sizeof b${k}, false);`);
    });
    main.push(`    ${c.name}(${[...c.buffers.map((_, k) => `b${k}`), ...c.ints.map((v) => String(v.value))].join(', ')});`);
    c.buffers.forEach((_, k) => main.push(`    tk_file(argv[1], "c${i}_b${k}.out", b${k}, sizeof b${k}, true);`));
    main.push('  }');
  });
  main.push('  return 0;', '}');
  src.verbatim(main);
  return src.render();
}

/** Compiles the host dialect of `cases` with g++ (`$TILEKIT_CXX`), runs it once; per case, every buffer after its run. */
export function runParityCasesOnHost(cases: readonly ParityCase[]): Uint8Array[][] {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-tile-parity-'));
  try {
    cases.forEach((c, i) => c.buffers.forEach((b, k) => writeFileSync(join(dir, `c${i}_b${k}.in`), b.init)));
    compileAndRunHost(hostParitySource(cases), {
      flags: ['-std=c++17', '-O1', '-Wall', '-Werror', '-Wno-unused-variable', '-Wno-unused-but-set-variable'],
      args: [dir],
    });
    return cases.map((c, i) => c.buffers.map((_, k) => plainBytes(readFileSync(join(dir, `c${i}_b${k}.out`)))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
