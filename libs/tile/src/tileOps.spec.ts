// Tile operations: shuffle is an in-thread permutation (and refuses anything else), slices map the
// right registers, and the host dialect (g++) runs sweep / elementwise / cast / shuffle / slices /
// block reduction exactly as the TS references say.
import {
  add,
  cast,
  defineFunction,
  float32,
  host,
  index,
  int32,
  mul,
  pointer,
  type FunctionDef,
  type ParamSpec,
  type VarExpr,
} from '@tilekit/codegen';
import { hostCompiler, toolAvailable } from '@tilekit/codegen/testing';
import { makeNaiveTensorDescriptorPacked } from '@tilekit/layout';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockReducePlan, blockTileReduce, evaluateBlockReduce, reduceMax, reduceSum } from './blockReduce.ts';
import { makeVectorLoadEncoding } from './blockEncodings.ts';
import { castTile, makeDistributedTensor, sweepOrder, sweepTile, tileElementwise, type ThreadBuffers } from './distributedTensor.ts';
import { ShuffleTileError } from './errors.ts';
import { shufflePermutation, shuffleTile } from './shuffleTile.ts';
import { getSliceTile, makeSliceTile, setSliceTile, sliceTileMap } from './sliceTile.ts';
import { encodingArb } from './testing/arbitraries.ts';
import { runHostTileCalls, type HostTileCall } from './testing/hostTileHarness.ts';
import { hRef, splitMixedRadix, TileDistributionEncoding } from './tileDistributionEncoding.ts';
import { BlockEmitter } from './blockEmitter.ts';
import { evaluateLoadTile, loadTile, makeTensorView, makeTileWindow, sliceTileWindow, storeTile } from './tileWindow.ts';

const permuteYs = (enc: TileDistributionEncoding, order: readonly number[]): TileDistributionEncoding =>
  new TileDistributionEncoding({ ...enc.toSpec(), ys: order.map((y) => enc.ysToRhs[y]!) });

const encodingWithYOrder = encodingArb({ maxPairs: 1024 }).chain((enc) =>
  fc
    .shuffledSubarray(
      enc.ysToRhs.map((_, y) => y),
      { minLength: enc.ndimY, maxLength: enc.ndimY },
    )
    .map((order) => ({ enc, order })),
);

describe('shufflePermutation', () => {
  it('is a permutation of the thread buffer that keeps every element on its X index', () => {
    fc.assert(
      fc.property(encodingWithYOrder, ({ enc, order }) => {
        const out = permuteYs(enc, order);
        const perm = shufflePermutation(enc, out);
        expect([...perm].sort((a, b) => a - b)).toEqual(Array.from({ length: enc.threadBufferSize }, (_, i) => i));
        for (let th = 0; th < enc.numThreads; th++) {
          const ps = enc.partitionIndexOf(th);
          perm.forEach((dIn, dOut) => expect(out.calculateXIndexFromD(ps, dOut)).toEqual(enc.calculateXIndexFromD(ps, dIn)));
        }
      }),
      { numRuns: 60 },
    );
  });

  it('throws ShuffleTileError when the encodings differ beyond the Y order (never a silent no-op)', () => {
    const a = makeVectorLoadEncoding({ rows: 16, cols: 16, vectorLength: 4, warpSize: 32, numWarps: 1 });
    const otherP = new TileDistributionEncoding({ ...a.toSpec(), ps: [...a.psToRhs].reverse() });
    expect(() => shufflePermutation(a, otherP)).toThrow(ShuffleTileError);
    const otherH = new TileDistributionEncoding({ hs: [[16], [4, 4]], ps: [[hRef(0, 0), hRef(1, 0)]], ys: [hRef(1, 1)] });
    expect(() => shufflePermutation(otherH, a)).toThrow(ShuffleTileError);
    const swapped = new TileDistributionEncoding({
      hs: [
        [2, 8],
        [4, 4],
      ],
      ps: [[hRef(0, 1), hRef(1, 1)]],
      ys: [hRef(0, 0), hRef(1, 0)],
    });
    const base = new TileDistributionEncoding({
      hs: [
        [2, 8],
        [4, 4],
      ],
      ps: [[hRef(0, 1), hRef(1, 0)]],
      ys: [hRef(0, 0), hRef(1, 1)],
    });
    expect(() => shufflePermutation(base, swapped)).toThrow(/P → RH maps must be equal/);
  });
});

describe('sliceTileMap', () => {
  it('maps each sub-tile register to the full-tile register of the same element (Y-owned leading digits)', () => {
    fc.assert(
      fc.property(
        encodingArb({ maxPairs: 1024 }).filter((e) =>
          e.hsLengthss.some((h, x) => h.length > 0 && h[0]! > 1 && e.digitOwners[x + 1]![0]!.kind === 'y'),
        ),
        fc.nat(),
        (enc, pick) => {
          const xs = enc.hsLengthss
            .map((_, x) => x)
            .filter((x) => enc.hsLengthss[x]!.length > 0 && enc.hsLengthss[x]![0]! > 1 && enc.digitOwners[x + 1]![0]!.kind === 'y');
          const x = xs[pick % xs.length]!;
          const h = enc.hsLengthss[x]!;
          const s = h.slice(1).reduce((a, b) => a * b, 1);
          const a = pick % h[0]!;
          const begins = enc.xLengths.map((_, i) => (i === x ? a * s : 0));
          const ends = enc.xLengths.map((l, i) => (i === x ? (a + 1) * s : l));
          const { encoding, map } = sliceTileMap(enc, begins, ends);
          for (let th = 0; th < enc.numThreads; th++) {
            const ps = enc.partitionIndexOf(th);
            map.forEach((dFull, d) =>
              expect(encoding.calculateXIndexFromD(ps, d).map((v, i) => v + begins[i]!)).toEqual(enc.calculateXIndexFromD(ps, dFull)),
            );
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('sweepOrder', () => {
  it('visits every Y index once, X0 outermost', () => {
    fc.assert(
      fc.property(encodingArb(), (enc) => {
        const order = sweepOrder(enc);
        expect(new Set(order.map((y) => enc.calculateD(y))).size).toBe(enc.threadBufferSize);
        expect(order.length).toBe(enc.threadBufferSize);
      }),
    );
  });

  it("CK's coalesced 64×64 load: X_M span (M0) outside X_K span (K1) = d order", () => {
    const enc = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 64, numWarps: 4 });
    expect(sweepOrder(enc).map((y) => enc.calculateD(y))).toEqual(Array.from({ length: 16 }, (_, i) => i));
  });
});

describe('blockReducePlan', () => {
  it("row sums over K of CK's coalesced 64×64 load: one lane digit (K0 = 8, stride 1) through shuffles", () => {
    const enc = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 64, numWarps: 4 });
    expect(blockReducePlan(enc, [1], 64).steps).toEqual([{ stride: 1, length: 8, via: 'lanes' }]);
  });

  it('column sums over M: the warp digit goes through shared memory', () => {
    const enc = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 64, numWarps: 4 });
    expect(blockReducePlan(enc, [0], 64).steps).toEqual([
      { stride: 64, length: 4, via: 'shared' },
      { stride: 8, length: 8, via: 'lanes' },
    ]);
  });
});

// ------------------------------------------------------------------------------------------------
// Host dialect, g++: one program for all cases.

interface OpsCase {
  readonly enc: TileDistributionEncoding;
  readonly order: readonly number[];
  readonly reduceXs: readonly number[];
  readonly slice?: { readonly begins: readonly number[]; readonly ends: readonly number[] };
}

function opsFunction(name: string, c: OpsCase): FunctionDef {
  const enc = c.enc;
  const nt = enc.numThreads;
  const n = enc.threadBufferSize;
  const params: Record<string, ParamSpec> = {
    src: pointer(float32),
    dstShuffled: pointer(float32),
    xs: pointer(int32),
    mapped: pointer(float32),
    sums: pointer(float32),
    maxes: pointer(float32),
    slices: pointer(float32),
    dstSlice: pointer(float32),
  };
  return defineFunction({ name, params }, (b, p) => {
    const v = p as Record<string, VarExpr>;
    const block = new BlockEmitter(b, host, { numThreads: nt });
    const desc = makeNaiveTensorDescriptorPacked(enc.xLengths);
    const zeros = enc.xLengths.map(() => 0);
    const win = makeTileWindow(block, { view: makeTensorView(v['src']!, desc), lengths: enc.xLengths, origin: zeros, encoding: enc });
    const permuted = permuteYs(enc, c.order);
    const winOut = makeTileWindow(block, { view: makeTensorView(v['dstShuffled']!, desc), lengths: enc.xLengths, origin: zeros });
    const tile = makeDistributedTensor(block, 'tile', enc, float32);
    const shuffled = makeDistributedTensor(block, 'shuffled', permuted, float32);
    const asInt = makeDistributedTensor(block, 'asInt', enc, int32);
    const slice = c.slice === undefined ? undefined : makeSliceTile(block, 'part', tile, c.slice.begins, c.slice.ends);
    block.threads((t) => {
      loadTile(t, win, tile);
      shuffleTile(t, shuffled, tile);
      storeTile(t, winOut, shuffled);
      sweepTile(t, tile, (e) => {
        const flat = e.x.reduce<ReturnType<typeof add>>((acc, xi, i) => add(mul(acc, enc.xLengths[i]!), xi), cast(0, int32));
        e.b.assign(index(v['xs']!, add(mul(t.tid, n), e.d)), flat);
      });
      castTile(t, asInt, tile);
      tileElementwise(t, asInt, [asInt], ([x]) => add(mul(x!, 2), 1));
      for (let d = 0; d < n; d++) t.b.assign(index(v['mapped']!, add(mul(t.tid, n), d)), asInt.at(t, d));
      if (slice !== undefined && c.slice !== undefined) {
        getSliceTile(t, slice, tile, c.slice.begins, c.slice.ends);
        tileElementwise(t, slice, [slice], ([x]) => mul(x!, -1));
        setSliceTile(t, tile, slice, c.slice.begins, c.slice.ends);
        for (let d = 0; d < n; d++) t.b.assign(index(v['slices']!, add(mul(t.tid, n), d)), tile.at(t, d));
      }
    });
    if (slice !== undefined && c.slice !== undefined) {
      // The sub-tile (negated by the round trip above) stored through the same sub-box of a window.
      const sub = sliceTileWindow(
        block,
        makeTileWindow(block, { view: makeTensorView(v['dstSlice']!, desc), lengths: enc.xLengths, origin: zeros }),
        c.slice.begins,
        c.slice.ends,
      );
      block.threads((t) => {
        getSliceTile(t, slice, tile, c.slice!.begins, c.slice!.ends);
        storeTile(t, sub, slice);
      });
    }
    for (const [op, arr] of [
      [reduceSum, 'sums'],
      [reduceMax, 'maxes'],
    ] as const) {
      const red = blockTileReduce(block, `red_${op.name}`, tile, c.reduceXs, op);
      block.threads((t) => {
        for (let d = 0; d < red.size; d++) t.b.assign(index(v[arr]!, add(mul(t.tid, red.size), d)), red.at(t, d));
      });
    }
  });
}

const opsCaseArb = encodingArb({ xDims: [2, 3], maxPairs: 2048, pDims: [1, 2] })
  .filter((e) => e.numThreads <= 128 && e.threadBufferSize <= 32)
  .chain((enc) =>
    fc.record({
      enc: fc.constant(enc),
      order: fc.shuffledSubarray(
        enc.ysToRhs.map((_, y) => y),
        { minLength: enc.ndimY, maxLength: enc.ndimY },
      ),
      reduceXs: fc.subarray(
        enc.xLengths.map((_, x) => x),
        { minLength: 1, maxLength: enc.ndimX - 1 },
      ),
    }),
  )
  .map((c): OpsCase => {
    const enc = c.enc;
    const x = enc.hsLengthss.findIndex((h, i) => h.length > 0 && h[0]! > 1 && enc.digitOwners[i + 1]![0]!.kind === 'y');
    if (x < 0) return c;
    const s = enc.hsLengthss[x]!.slice(1).reduce((a, b) => a * b, 1);
    return {
      ...c,
      slice: { begins: enc.xLengths.map((_, i) => (i === x ? s : 0)), ends: enc.xLengths.map((l, i) => (i === x ? 2 * s : l)) },
    };
  });

/** A big warp-crossing case: 256 threads, 64×64 tile, row and column sums (shuffles + shared memory). */
const goldenCases: OpsCase[] = [
  {
    enc: makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 4, warpSize: 32, numWarps: 8 }),
    order: [1, 0],
    reduceXs: [1],
    slice: { begins: [16, 0], ends: [32, 64] },
  },
  { enc: makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 4, warpSize: 32, numWarps: 8 }), order: [1, 0], reduceXs: [0] },
];

const haveGxx = toolAvailable(hostCompiler());
if (!haveGxx) console.warn(`\n!!! SKIPPING tile operation host runs: "${hostCompiler()}" not found. !!!\n`);

describe.runIf(haveGxx)('tile operations (host dialect, g++)', () => {
  it('sweep X indices, elementwise/cast, shuffle + store, slices and block sum/max reductions equal the TS references', () => {
    const cases = [...goldenCases, ...fc.sample(opsCaseArb, { numRuns: 30, seed: 7 })];
    const fns: FunctionDef[] = [];
    const calls: HostTileCall[] = [];
    cases.forEach((c, k) => {
      const fn = opsFunction(`ops${k}`, c);
      fns.push(fn);
      const size = c.enc.xLengths.reduce((a, b) => a * b, 1);
      const src = Array.from({ length: size }, (_, i) => ((i * 37) % 101) - 50);
      const nt = c.enc.numThreads;
      const n = c.enc.threadBufferSize;
      const red = blockReducePlan(c.enc, c.reduceXs, 32).reduced.encoding.threadBufferSize;
      calls.push({
        fn,
        arrays: [
          src,
          new Array<number>(size).fill(-999),
          new Array<number>(nt * n).fill(-1),
          new Array<number>(nt * n).fill(-1),
          new Array<number>(nt * red).fill(-1),
          new Array<number>(nt * red).fill(-1),
          new Array<number>(nt * n).fill(-1),
          new Array<number>(size).fill(-999),
        ],
      });
    });
    const got = runHostTileCalls(fns, calls);
    let lanes = 0;
    let shared = 0;
    got.forEach((arrays, k) => {
      const c = cases[k]!;
      const enc = c.enc;
      const nt = enc.numThreads;
      const n = enc.threadBufferSize;
      const what = `${enc} reduce [${c.reduceXs}] order [${c.order}]`;
      const src = calls[k]!.arrays[0]!;
      const desc = makeNaiveTensorDescriptorPacked(enc.xLengths);
      const buffers: ThreadBuffers = evaluateLoadTile({ descriptor: desc, encoding: enc, origin: enc.xLengths.map(() => 0) }, src);
      expect(arrays[1], `shuffled then stored: ${what}`).toEqual(src);
      const xs: number[] = [];
      const mapped: number[] = [];
      for (let th = 0; th < nt; th++) {
        const ps = enc.partitionIndexOf(th);
        for (let d = 0; d < n; d++) {
          const x = enc.calculateXIndexFromD(ps, d);
          xs.push(x.reduce((a, xi, i) => a * enc.xLengths[i]! + xi, 0));
          mapped.push(buffers[th]![d]! * 2 + 1);
        }
      }
      expect(arrays[2], `sweep X: ${what}`).toEqual(xs);
      expect(arrays[3], `elementwise: ${what}`).toEqual(mapped);
      // The slice round trip negates the sub-tile in place; the reductions run after it.
      let reduced = buffers;
      if (c.slice !== undefined) {
        const negated = new Set(sliceTileMap(enc, c.slice.begins, c.slice.ends).map);
        reduced = buffers.map((row) => row.map((v, d) => (negated.has(d) ? -v : v)));
        expect(arrays[6], `get/set slice: ${what}`).toEqual(reduced.flat());
        const { begins, ends } = c.slice;
        const inBox = (flat: number): boolean => splitMixedRadix(flat, enc.xLengths).every((x, i) => x >= begins[i]! && x < ends[i]!);
        expect(arrays[7], `slice window: ${what}`).toEqual(src.map((v, i) => (inBox(i) ? -v : -999)));
      }
      for (const [op, at] of [
        [reduceSum, 4],
        [reduceMax, 5],
      ] as const) {
        const want = evaluateBlockReduce(enc, c.reduceXs, reduced, op).flat();
        expect(arrays[at], `${op.name}: ${what}`).toEqual(want);
      }
      for (const s of blockReducePlan(enc, c.reduceXs, 32).steps) {
        if (s.via === 'lanes') lanes++;
        else shared++;
      }
    });
    // Both cross-thread paths were exercised.
    expect(lanes).toBeGreaterThan(0);
    expect(shared).toBeGreaterThan(0);
  });
});
