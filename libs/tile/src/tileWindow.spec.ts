// Windows: load/store traits (vector dim and width from the descriptor, snake order) and the
// host-dialect round trip through g++: load then store through the same window is the identity on
// in-bounds elements and writes nothing else, for random encodings, descriptors and ragged origins.
import {
  add,
  defineFunction,
  float32,
  host,
  index,
  int32,
  mul,
  pointer,
  shl,
  SourceBuilder,
  sub,
  variable,
  type FunctionDef,
  type ParamSpec,
  type VarExpr,
} from '@tilekit/codegen';
import { hostCompiler, toolAvailable } from '@tilekit/codegen/testing';
import {
  evaluateSymInt,
  makeNaiveTensorDescriptor,
  makeNaiveTensorDescriptorAligned,
  makeNaiveTensorDescriptorPacked,
  merge,
  padTensorDescriptor,
  passThrough,
  symbol,
  transformTensorDescriptor,
  xor,
  type TensorDescriptor,
} from '@tilekit/layout';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeVectorLoadEncoding } from './blockEncodings.ts';
import { makeDistributedTensor, type ThreadBuffers } from './distributedTensor.ts';
import { spaceFillingCurve } from './spaceFillingCurve.ts';
import { encodingArb } from './testing/arbitraries.ts';
import { runHostTileCalls, type HostTileCall } from './testing/hostTileHarness.ts';
import { emitStagedCopy } from './testing/stagedCopy.ts';
import type { TileDistributionEncoding } from './tileDistributionEncoding.ts';
import { BlockEmitter } from './blockEmitter.ts';
import { TileEmitError } from './errors.ts';
import {
  evaluateLoadTile,
  evaluateStoreTile,
  evaluateUpdateTile,
  knownMultiple,
  loadStoreTraits,
  loadTile,
  makeTensorView,
  makeTileWindow,
  moveTileWindow,
  sliceTileWindow,
  storeTile,
  TileWindow,
  updateTile,
} from './tileWindow.ts';

describe('spaceFillingCurve', () => {
  it('tiles the box and, snaked, moves one step in one dim between consecutive accesses', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 4 }),
        (dims) => {
          const lengths = dims.map(([a, s]) => a * s);
          const spa = dims.map(([, s]) => s);
          const curve = spaceFillingCurve(lengths, spa);
          const seen = new Set(curve.map((c) => c.join(',')));
          expect(seen.size).toBe(curve.length);
          expect(curve.length).toBe(dims.reduce((p, [a]) => p * a, 1));
          for (let k = 1; k < curve.length; k++) {
            const diff = curve[k]!.map((v, i) => Math.abs(v - curve[k - 1]![i]!) / spa[i]!);
            expect(diff.filter((x) => x !== 0)).toEqual([1]);
          }
        },
      ),
    );
  });

  it('matches CK on a 2×3 box: rows alternate direction', () => {
    expect(spaceFillingCurve([2, 3], [1, 1])).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 2],
      [1, 1],
      [1, 0],
    ]);
  });
});

describe('knownMultiple', () => {
  it('reads divisors off literals, products, shifts and sums; 1 for anything else', () => {
    const v = variable('v', int32);
    expect(knownMultiple(64)).toBe(64);
    expect(knownMultiple(0)).toBe(0);
    expect(knownMultiple(mul(v, 64))).toBe(64);
    expect(knownMultiple(add(mul(v, 64), 24))).toBe(8);
    expect(knownMultiple(shl(v, 3))).toBe(8);
    expect(knownMultiple(v)).toBe(1);
  });
});

describe('loadStoreTraits', () => {
  it("CK's coalesced load: 64×64 fp16, 8-element guarantee → Y1 (K1) × 8, two accesses per thread", () => {
    const enc = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 64, numWarps: 4 });
    const desc = makeNaiveTensorDescriptor([64, 64], [64, 1], { vectorLength: 8 });
    const t = loadStoreTraits(enc, desc, { originAlignment: [64, 64], elementBytes: 2 });
    expect(t).toMatchObject({ vectorDimY: 1, vectorDimX: 1, scalarPerVector: 8 });
    expect(t.accesses).toEqual([
      [0, 0],
      [1, 0],
    ]);
  });

  it('caps at 16 bytes, follows the origin alignment, and drops to scalars on a strided last dim', () => {
    const enc = makeVectorLoadEncoding({ rows: 32, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 1 });
    const desc = makeNaiveTensorDescriptor([32, 64], [64, 1], { vectorLength: 8 });
    expect(loadStoreTraits(enc, desc, { originAlignment: [1, 64], elementBytes: 4 }).scalarPerVector).toBe(4);
    expect(loadStoreTraits(enc, desc, { originAlignment: [1, 2], elementBytes: 2 }).scalarPerVector).toBe(2);
    const strided = makeNaiveTensorDescriptor([32, 64], [1, 32]);
    expect(loadStoreTraits(enc, strided, { originAlignment: [1, 64], elementBytes: 2 })).toMatchObject({
      vectorDimY: undefined,
      scalarPerVector: 1,
    });
  });
});

// ------------------------------------------------------------------------------------------------
// Host-dialect round trip.

const GUARD = 16;
const SENTINEL = -7777;

interface RoundTripCase {
  readonly enc: TileDistributionEncoding;
  readonly desc: TensorDescriptor;
  readonly origin: readonly number[];
  readonly align: readonly number[];
  readonly step: readonly number[];
  readonly space: number;
  /** Symbolic descriptors: the kernel arguments. */
  readonly bindings?: Readonly<Record<string, number>>;
}

/** CK's coalesced vector-load distributions (`makeVectorLoadEncoding`) at small sizes: the vectorized path. */
const vectorLoadArb = fc
  .record({
    k1: fc.constantFrom(2, 4),
    k0: fc.constantFrom(2, 4),
    m2: fc.constantFrom(1, 2, 4),
    warps: fc.constantFrom(1, 2),
    m0: fc.constantFrom(1, 2),
  })
  .map(({ k1, k0, m2, warps, m0 }) =>
    makeVectorLoadEncoding({ rows: m0 * m2 * warps, cols: k0 * k1, vectorLength: k1, warpSize: k0 * m2, numWarps: warps }),
  );

const caseArb = (numRuns: number): RoundTripCase[] => {
  const arb = fc
    .oneof(
      encodingArb({ xDims: [1, 3], maxPairs: 1024 }).filter((e) => e.numThreads <= 128 && e.threadBufferSize <= 64),
      vectorLoadArb,
    )
    .chain((enc) =>
      fc
        .record({
          kind: fc.constantFrom('naive', 'packed', 'padded', 'symbolic'),
          vec: fc.constantFrom(1, 2, 4),
          extra: fc.array(fc.integer({ min: -3, max: 3 }), { minLength: enc.ndimX, maxLength: enc.ndimX }),
          originPick: fc.array(fc.integer({ min: -2, max: 6 }), { minLength: enc.ndimX, maxLength: enc.ndimX }),
          alignPick: fc.array(fc.constantFrom(1, 2, 4), { minLength: enc.ndimX, maxLength: enc.ndimX }),
          stepPick: fc.array(fc.integer({ min: -1, max: 2 }), { minLength: enc.ndimX, maxLength: enc.ndimX }),
          pad: fc.integer({ min: 0, max: 2 }),
        })
        .map((r): RoundTripCase => {
          const n = enc.ndimX;
          const vec = r.vec;
          // Tensor lengths around the window lengths (ragged edges). A static last length need not be a
          // multiple of the guaranteed vector (the traits must then shorten the vectors); a symbolic one
          // is declared a multiple of it, so it is made one.
          const lens = enc.xLengths.map((w, i) => Math.max(1, w + r.extra[i]!));
          if (r.kind === 'symbolic') lens[n - 1] = Math.max(vec, Math.ceil(lens[n - 1]! / vec) * vec);
          let desc: TensorDescriptor;
          if (r.kind === 'symbolic') {
            // Runtime lengths and row strides (kernel arguments), the last length a known multiple of vec.
            const strides = new Array<number>(n).fill(1);
            for (let i = n - 2; i >= 0; i--) strides[i] = strides[i + 1]! * (i === n - 2 ? lens[i + 1]! + r.pad * vec : lens[i + 1]!);
            const bindings: Record<string, number> = {};
            const symLens = lens.map((l, i) => {
              bindings[`n${i}`] = l;
              return symbol(`n${i}`, { max: 64, ...(i === n - 1 ? { multipleOf: vec } : {}) });
            });
            const symStrides = strides.map((st, i) => {
              if (i === n - 1) return 1;
              bindings[`s${i}`] = st;
              return symbol(`s${i}`, { max: 1 << 16, multipleOf: vec });
            });
            desc = makeNaiveTensorDescriptor(symLens, symStrides, vec > 1 ? { vectorLength: vec } : {});
            const align = r.alignPick;
            return {
              enc,
              desc,
              origin: r.originPick.map((o, i) => o * align[i]!),
              align,
              step: r.stepPick.map((st, i) => st * align[i]!),
              space: evaluateSymInt(desc.elementSpaceSize, bindings),
              bindings,
            };
          }
          if (r.kind === 'packed') desc = makeNaiveTensorDescriptorPacked(lens);
          else {
            const strides = new Array<number>(n).fill(1);
            for (let i = n - 2; i >= 0; i--) strides[i] = strides[i + 1]! * (i === n - 2 ? lens[i + 1]! + r.pad * vec : lens[i + 1]!);
            desc = makeNaiveTensorDescriptor(lens, strides, vec > 1 ? { vectorLength: vec } : {});
            if (r.kind === 'padded')
              desc = padTensorDescriptor(
                desc,
                enc.xLengths,
                enc.xLengths.map(() => true),
              );
          }
          const align = r.alignPick;
          const origin = r.originPick.map((o, i) => o * align[i]!);
          const step = r.stepPick.map((s, i) => s * align[i]!);
          return { enc, desc, origin, align, step, space: desc.elementSpaceSize as number };
        }),
    );
  return fc.sample(arb, { numRuns, seed: 20261122 });
};

type Mode = 'store' | 'update' | 'loop';
const LOOP_TRIPS = 3;

function roundTripFunction(name: string, c: RoundTripCase, mode: Mode): FunctionDef {
  const n = c.enc.ndimX;
  const params: Record<string, ParamSpec> = { src: pointer(float32), dst: pointer(float32), regs: pointer(float32) };
  for (let i = 0; i < n; i++) params[`o${i}`] = int32;
  const symNames = Object.keys(c.bindings ?? {});
  for (const s of symNames) params[s] = int32;
  return defineFunction({ name, params }, (b, p) => {
    const vars = p as Record<string, VarExpr>;
    const symbols = Object.fromEntries(symNames.map((s) => [s, vars[s]!]));
    const block = new BlockEmitter(b, host, { numThreads: c.enc.numThreads, index: { symbols } });
    const origin = c.origin.map((_, i) => sub(vars[`o${i}`]!, c.step[i]!));
    const srcView = makeTensorView(add(vars['src']!, GUARD), c.desc);
    const dstView = makeTensorView(add(vars['dst']!, GUARD), c.desc);
    const ws = makeTileWindow(block, { view: srcView, lengths: c.enc.xLengths, origin, encoding: c.enc, originAlignment: c.align });
    const wd = makeTileWindow(block, { view: dstView, lengths: c.enc.xLengths, origin, encoding: c.enc, originAlignment: c.align });
    moveTileWindow(block, ws, c.step);
    moveTileWindow(block, wd, c.step);
    const tile = makeDistributedTensor(block, 'tile', c.enc, float32);
    const dump = (blk: BlockEmitter): void =>
      blk.threads((t) => {
        for (let d = 0; d < c.enc.threadBufferSize; d++)
          t.b.assign(index(vars['regs']!, add(t.tid, 0 + d * c.enc.numThreads)), tile.at(t, d));
      });
    if (mode === 'loop') {
      // The main-loop pattern: load, accumulate into a fixed window, move the source window.
      block.forRange({ name: 'k', to: LOOP_TRIPS }, (inner) => {
        inner.threads((t) => {
          loadTile(t, ws, tile);
          updateTile(t, wd, tile);
        });
        dump(inner);
        moveTileWindow(inner, ws, c.step);
      });
      return;
    }
    block.threads((t) => {
      loadTile(t, ws, tile);
      if (mode === 'store') storeTile(t, wd, tile);
      else updateTile(t, wd, tile);
    });
    dump(block);
  });
}

const haveGxx = toolAvailable(hostCompiler());
if (!haveGxx) console.warn(`\n!!! SKIPPING tile window host round trips: "${hostCompiler()}" not found. !!!\n`);

describe.runIf(haveGxx)('loadTile/storeTile/updateTile (host dialect, g++)', () => {
  it('load then store through the same window is the identity in bounds and writes nothing outside; update adds; registers match the evaluator', () => {
    const cases = caseArb(36);
    const fns: FunctionDef[] = [];
    const calls: HostTileCall[] = [];
    const expectations: { regs: number[]; dst: number[]; c: RoundTripCase; mode: string }[] = [];
    cases.forEach((c, k) => {
      for (const mode of ['store', 'update', 'loop'] as const) {
        const fn = roundTripFunction(`case${k}_${mode}`, c, mode);
        fns.push(fn);
        const src = Array.from({ length: c.space + 2 * GUARD }, (_, i) => (i < GUARD || i >= GUARD + c.space ? SENTINEL : i - GUARD + 1));
        const dstInit = Array.from({ length: c.space + 2 * GUARD }, (_, i) =>
          i < GUARD || i >= GUARD + c.space ? SENTINEL : mode === 'store' ? -1 : 1000,
        );
        calls.push({
          fn,
          arrays: [src, dstInit, new Array<number>(c.enc.numThreads * c.enc.threadBufferSize).fill(-5)],
          ints: [...c.origin, ...Object.values(c.bindings ?? {})],
        });
        const w = { descriptor: c.desc, encoding: c.enc, origin: c.origin, ...(c.bindings === undefined ? {} : { bindings: c.bindings }) };
        const mem = src.slice(GUARD, GUARD + c.space);
        let buffers: ThreadBuffers = evaluateLoadTile(w, mem);
        const dstMem = dstInit.slice(GUARD, GUARD + c.space);
        if (mode === 'loop') {
          for (let k = 0; k < LOOP_TRIPS; k++) {
            buffers = evaluateLoadTile({ ...w, origin: c.origin.map((o, i) => o + k * c.step[i]!) }, mem);
            evaluateUpdateTile(w, buffers, dstMem);
          }
        } else if (mode === 'store') {
          const written = evaluateStoreTile(w, buffers, dstMem);
          // The property itself: the identity on the written (in-bounds, valid) elements, nothing else.
          dstMem.forEach((v, off) => expect(v).toBe(written.has(off) ? mem[off] : -1));
        } else evaluateUpdateTile(w, buffers, dstMem);
        const regs: number[] = [];
        for (let d = 0; d < c.enc.threadBufferSize; d++) for (let th = 0; th < c.enc.numThreads; th++) regs.push(buffers[th]![d]!);
        expectations.push({
          regs,
          dst: [...new Array<number>(GUARD).fill(SENTINEL), ...dstMem, ...new Array<number>(GUARD).fill(SENTINEL)],
          c,
          mode,
        });
      }
    });
    // Coverage: runtime lengths, vector accesses and ragged windows all occur.
    expect(cases.some((c) => c.bindings !== undefined)).toBe(true);
    expect(
      cases.filter((c) => loadStoreTraits(c.enc, c.desc, { originAlignment: c.align, elementBytes: 4 }).scalarPerVector > 1).length,
    ).toBeGreaterThan(3);
    expect(expectations.some((e) => e.regs.includes(0))).toBe(true);
    const got = runHostTileCalls(fns, calls);
    got.forEach((arrays, i) => {
      const e = expectations[i]!;
      const what = `${e.mode} ${e.c.enc} on ${e.c.desc.toString()} ${JSON.stringify(e.c.bindings ?? {})} origin [${e.c.origin}] align [${e.c.align}] step [${e.c.step}]`;
      expect(arrays[2], `registers: ${what}`).toEqual(e.regs);
      expect(arrays[1], `memory: ${what}`).toEqual(e.dst);
    });
  });
});

/** Shared-memory layouts of a 16×16 tile: row padding, an xor swizzle of 4-element chunks, CK's "3d + padding". */
function sharedLayouts(): { name: string; desc: TensorDescriptor; size: number }[] {
  const padded = makeNaiveTensorDescriptorAligned([16, 16], 20);
  const chunks = makeNaiveTensorDescriptorPacked([16, 4, 4]);
  const swz = transformTensorDescriptor(chunks, [xor([16, 4]), passThrough(4)], [[0, 1], [2]], [[0, 1], [2]]);
  const swizzled = transformTensorDescriptor(swz, [passThrough(16), merge([4, 4])], [[0], [1, 2]], [[0], [1]]);
  // (K/8, M, 8) with strides ((M + 1)·8, 8, 1), viewed as (M, K): one 8-element pad per K slab.
  const slabs = makeNaiveTensorDescriptor([2, 16, 8], [17 * 8, 8, 1]);
  const ck3d = transformTensorDescriptor(slabs, [passThrough(16), merge([2, 8])], [[1], [0, 2]], [[0], [1]]);
  return [
    { name: 'padded', desc: padded, size: padded.elementSpaceSize as number },
    { name: 'swizzled', desc: swizzled, size: 256 },
    { name: 'ck3d', desc: ck3d, size: ck3d.elementSpaceSize as number },
  ];
}

describe.runIf(haveGxx)('shared-memory windows (host dialect, g++)', () => {
  it('global → shared (padded / swizzled / 3d-padded) → registers of another distribution → global is the identity on a ragged tensor', () => {
    const store = makeVectorLoadEncoding({ rows: 16, cols: 16, vectorLength: 4, warpSize: 16, numWarps: 2 });
    const load = makeVectorLoadEncoding({ rows: 16, cols: 16, vectorLength: 2, warpSize: 16, numWarps: 2 });
    const fns: FunctionDef[] = [];
    const calls: HostTileCall[] = [];
    const shapes: [number, number][] = [
      [16, 16],
      [13, 14],
      [9, 16],
    ];
    for (const layout of sharedLayouts()) {
      expect(layout.desc.lengths).toEqual([16, 16]);
      for (const [[rows, cols], fixedOrigin] of shapes.flatMap((shape) => [false, true].map((f) => [shape, f] as const))) {
        const fn = defineFunction(
          {
            name: `lds_${layout.name}_${rows}x${cols}${fixedOrigin ? '_fixed' : ''}`,
            params: { src: pointer(float32), dst: pointer(float32) },
          },
          (b, p) => {
            const block = new BlockEmitter(b, host, { numThreads: store.numThreads });
            const g = makeNaiveTensorDescriptor([rows, cols], [cols, 1], { vectorLength: 2 });
            const smem = block.shared('lds', float32, layout.size);
            const wg = makeTileWindow(block, { view: makeTensorView(p.src, g), lengths: [16, 16], origin: [0, 0], encoding: store });
            // The staging window with a runtime origin, and with a fixed one (no bounds checks: it covers the whole LDS tile).
            const ws = makeTileWindow(block, { view: makeTensorView(smem, layout.desc), lengths: [16, 16], origin: [0, 0], fixedOrigin });
            const wd = makeTileWindow(block, { view: makeTensorView(p.dst, g), lengths: [16, 16], origin: [0, 0], encoding: load });
            const a = makeDistributedTensor(block, 'a', store, float32);
            const c = makeDistributedTensor(block, 'c', load, float32);
            emitStagedCopy(block, { source: wg, staging: ws, destination: wd, first: a, second: c });
          },
        );
        fns.push(fn);
        calls.push({ fn, arrays: [Array.from({ length: rows * cols }, (_, i) => i + 1), new Array<number>(rows * cols).fill(-1)] });
      }
    }
    const got = runHostTileCalls(fns, calls);
    got.forEach((arrays, k) => expect(arrays[1], calls[k]!.fn.name).toEqual(calls[k]!.arrays[0]));
  });
});

describe('fixed-origin windows (LDS tiles at a static origin)', () => {
  const enc = makeVectorLoadEncoding({ rows: 16, cols: 16, vectorLength: 4, warpSize: 16, numWarps: 2 });
  /** The function text of one load + store through windows made with `options`. */
  function emitCopy(options: {
    readonly fixedOrigin: boolean;
    readonly origin: readonly number[];
    readonly lengths?: readonly number[];
    readonly symbolic?: boolean;
  }): string {
    const fn = defineFunction({ name: 'copy', params: { src: pointer(float32), dst: pointer(float32), n: int32 } }, (b, p) => {
      const block = new BlockEmitter(b, host, { numThreads: enc.numThreads, index: { symbols: { n: p.n } } });
      const desc = options.symbolic
        ? makeNaiveTensorDescriptor([symbol('n', { max: 64 }), 16], [16, 1], { vectorLength: 4 })
        : makeNaiveTensorDescriptorPacked(options.lengths ?? [16, 16]);
      const win = (ptr: VarExpr) =>
        makeTileWindow(block, {
          view: makeTensorView(ptr, desc),
          lengths: [16, 16],
          origin: options.origin,
          encoding: enc,
          fixedOrigin: options.fixedOrigin,
        });
      const src = win(p.src);
      const dst = win(p.dst);
      const tile = makeDistributedTensor(block, 'tile', enc, float32);
      block.threads((t) => {
        loadTile(t, src, tile);
        storeTile(t, dst, tile);
      });
    });
    const src = new SourceBuilder({ dialect: host, header: 'fixed' });
    src.add(fn);
    return src.render();
  }

  it('inside a static tensor: no origin variables and no runtime bounds checks; a movable window at the same origin keeps both', () => {
    const fixed = emitCopy({ fixedOrigin: true, origin: [0, 0] });
    expect(fixed).not.toMatch(/int origin/);
    expect(fixed).not.toMatch(/>= 0|<= \d/);
    const movable = emitCopy({ fixedOrigin: false, origin: [0, 0] });
    expect(movable).toMatch(/int origin = 0;/);
    expect(movable).toMatch(/top >= 0/);
    // The same accesses otherwise: as many vector loads and stores.
    expect(fixed.match(/tk_vec|\[offset/g)?.length).toBe(movable.match(/tk_vec|\[offset/g)?.length);
  });

  it('keeps the checks of every dim it cannot prove: a window sticking out of the tensor, or a runtime length', () => {
    // Rows 8..23 of a 16×16 tensor: rows keep their check (folded by codegen's range analysis with
    // the literal origin: accesses to rows 16..23 are predicated off), columns (0..15 of 16) have none.
    const out = emitCopy({ fixedOrigin: true, origin: [8, 0] });
    expect(out).toMatch(/const bool inside\w* = false;/);
    expect(out).not.toMatch(/top_1 >= 0/);
    const symbolic = emitCopy({ fixedOrigin: true, origin: [0, 0], symbolic: true });
    expect(symbolic).toMatch(/<= n/);
    expect(symbolic).not.toMatch(/top_1 >= 0/);
    const wrapped = (origin: readonly number[]) =>
      new TileWindow(
        makeTensorView(variable('p', pointer(float32)), makeNaiveTensorDescriptorPacked([16, 16])),
        [16, 16],
        [],
        undefined,
        [1, 1],
        origin,
      );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 20 }), (r, c) => {
        const w = wrapped([r, c]);
        return w.staticallyInside(0) === r + 16 <= 16 && w.staticallyInside(1) === c + 16 <= 16;
      }),
    );
  });

  it.runIf(haveGxx)('a fixed window sticking out of the tensor still never touches memory outside it (g++ against the evaluator)', () => {
    const fns: FunctionDef[] = [];
    const calls: HostTileCall[] = [];
    const want: number[][] = [];
    for (const [origin, k] of [
      [[0, 0], 0],
      [[8, 0], 1],
      [[4, 4], 2],
    ] as const) {
      const fn = defineFunction({ name: `fixed_${k}`, params: { src: pointer(float32), dst: pointer(float32) } }, (b, p) => {
        const block = new BlockEmitter(b, host, { numThreads: enc.numThreads });
        const desc = makeNaiveTensorDescriptorPacked([16, 16]);
        const src = makeTileWindow(block, {
          view: makeTensorView(add(p.src, GUARD), desc),
          lengths: [16, 16],
          origin,
          encoding: enc,
          fixedOrigin: true,
        });
        const dst = makeTileWindow(block, {
          view: makeTensorView(add(p.dst, GUARD), desc),
          lengths: [16, 16],
          origin,
          encoding: enc,
          fixedOrigin: true,
        });
        const tile = makeDistributedTensor(block, 'tile', enc, float32);
        block.threads((t) => {
          loadTile(t, src, tile);
          storeTile(t, dst, tile);
        });
      });
      fns.push(fn);
      const mem = Array.from({ length: 256 }, (_, i) => i + 1);
      const dst = new Array<number>(256).fill(-1);
      evaluateStoreTile(
        { descriptor: makeNaiveTensorDescriptorPacked([16, 16]), encoding: enc, origin: [...origin] },
        evaluateLoadTile({ descriptor: makeNaiveTensorDescriptorPacked([16, 16]), encoding: enc, origin: [...origin] }, mem),
        dst,
      );
      const guard = new Array<number>(GUARD).fill(SENTINEL);
      calls.push({
        fn,
        arrays: [
          [...guard, ...mem, ...guard],
          [...guard, ...new Array<number>(256).fill(-1), ...guard],
        ],
      });
      want.push([...guard, ...dst, ...guard]);
    }
    runHostTileCalls(fns, calls).forEach((arrays, k) => expect(arrays[1], calls[k]!.fn.name).toEqual(want[k]));
  });

  it('refuses runtime origins and moves; a slice of a fixed window is fixed at origin + begin', () => {
    defineFunction({ name: 'f', params: { p: pointer(float32), o: int32 } }, (b, p) => {
      const block = new BlockEmitter(b, host, { numThreads: enc.numThreads });
      const view = makeTensorView(p.p, makeNaiveTensorDescriptorPacked([16, 16]));
      expect(() => makeTileWindow(block, { view, lengths: [16, 16], origin: [p.o, 0], fixedOrigin: true })).toThrow(TileEmitError);
      expect(() => makeTileWindow(block, { view, lengths: [16, 16], origin: [-1, 0], fixedOrigin: true })).toThrow(/non-negative integers/);
      const w = makeTileWindow(block, { view, lengths: [16, 16], origin: [0, 0], fixedOrigin: true });
      expect(() => moveTileWindow(block, w, [0, 4])).toThrow(/fixed origin/);
      const slice = sliceTileWindow(block, w, [8, 4], [16, 12]);
      expect([slice.fixedOrigin, slice.lengths, slice.staticallyInside(0), slice.staticallyInside(1)]).toEqual([
        [8, 4],
        [8, 8],
        true,
        true,
      ]);
    });
  });
});
