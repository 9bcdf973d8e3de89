// The emitted mask == the TS model, compiled: masks with runtime window sizes, alignment and seqlens
// (and a few static specs that fold) become C++ functions built with codegen, compiled with g++
// into one test binary and run on random shapes, windows, tiles and indices.
import fc from 'fast-check';
import { bool, defineFunction, int32, renderFunction, type Expr, type FunctionDef, type VarExpr } from '@tilekit/codegen';
import { hostCompiler, runHostFunctions, toolAvailable, type HostCall } from '@tilekit/codegen/testing';
import { describe, expect, it } from 'vitest';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask, type AttentionMaskSpec } from './attentionMaskSpec.ts';
import { makeGenericAttentionMask, type GenericAttentionMask } from './genericAttentionMask.ts';
import { emitGenericAttentionMask, type AttentionMaskCodeSpec, type GenericAttentionMaskCode } from './genericAttentionMaskCode.ts';

const TILE_M = 16;
const TILE_N = 8;

type Query = 'isMasked' | 'rangeStart' | 'rangeEnd' | 'splitStart' | 'splitEnd' | 'isEdgeTile' | 'rowRangeStart' | 'rowRangeEnd';
const QUERIES: readonly Query[] = [
  'isMasked',
  'rangeStart',
  'rangeEnd',
  'splitStart',
  'splitEnd',
  'isEdgeTile',
  'rowRangeStart',
  'rowRangeEnd',
];

/** (a, b) = (i, j) for isMasked, (i0, j0) for isEdgeTile, (i0, ·) for ranges, (numSplits, iSplit) packed as c. */
function answer(code: GenericAttentionMaskCode, q: Query, a: Expr, b: Expr, c: Expr, d: Expr): Expr {
  switch (q) {
    case 'isMasked':
      return code.isMasked(a, b);
    case 'rangeStart':
      return code.getTileRangeAlongX(a, TILE_M, TILE_N).start;
    case 'rangeEnd':
      return code.getTileRangeAlongX(a, TILE_M, TILE_N).end;
    case 'splitStart':
      return code.getTileRangeAlongXForSplit(a, TILE_M, TILE_N, c, d).start;
    case 'splitEnd':
      return code.getTileRangeAlongXForSplit(a, TILE_M, TILE_N, c, d).end;
    case 'isEdgeTile':
      return code.isEdgeTile(a, b, TILE_M, TILE_N);
    case 'rowRangeStart':
      return code.getTileRangeAlongY(b, TILE_N, TILE_M).start;
    case 'rowRangeEnd':
      return code.getTileRangeAlongY(b, TILE_N, TILE_M).end;
  }
}

function model(m: GenericAttentionMask, q: Query, a: number, b: number, c: number, d: number): number | boolean {
  switch (q) {
    case 'isMasked':
      return m.isMasked(a, b);
    case 'rangeStart':
      return m.getTileRangeAlongX(a, TILE_M, TILE_N)[0];
    case 'rangeEnd':
      return m.getTileRangeAlongX(a, TILE_M, TILE_N)[1];
    case 'splitStart':
      return m.getTileRangeAlongXForSplit(a, TILE_M, TILE_N, c, d)[0];
    case 'splitEnd':
      return m.getTileRangeAlongXForSplit(a, TILE_M, TILE_N, c, d)[1];
    case 'isEdgeTile':
      return m.isEdgeTile(a, b, TILE_M, TILE_N);
    case 'rowRangeStart':
      return m.getTileRangeAlongY(b, TILE_N, TILE_M)[0];
    case 'rowRangeEnd':
      return m.getTileRangeAlongY(b, TILE_N, TILE_M)[1];
  }
}

const returnsOf = (q: Query): typeof bool | typeof int32 => (q === 'isMasked' || q === 'isEdgeTile' ? bool : int32);
const common = { sq: int32, sk: int32, a: int32, b: int32, c: int32, d: int32 } as const;

/** Functions of runtime (left, right, topLeft) windows, runtime generic (y, x), and static specs. */
function buildFunctions(staticSpecs: readonly AttentionMaskSpec[]): {
  window: Map<Query, FunctionDef>;
  generic: Map<Query, FunctionDef>;
  fixed: Map<Query, FunctionDef>[];
} {
  const each = (make: (q: Query) => FunctionDef): Map<Query, FunctionDef> => new Map(QUERIES.map((q) => [q, make(q)]));
  const body = (spec: AttentionMaskCodeSpec, q: Query, p: Record<string, VarExpr>) =>
    answer(emitGenericAttentionMask(spec, p['sq']!, p['sk']!), q, p['a']!, p['b']!, p['c']!, p['d']!);
  const window = each((q) =>
    defineFunction(
      { name: `window_${q}`, returns: returnsOf(q), params: { left: int32, right: int32, top_left: bool, ...common } },
      (b, p) => {
        b.return(body({ kind: 'window', alignment: p.top_left, left: p.left, right: p.right }, q, p));
      },
    ),
  );
  const generic = each((q) =>
    defineFunction({ name: `generic_${q}`, returns: returnsOf(q), params: { y: int32, x: int32, ...common } }, (b, p) => {
      b.return(body({ kind: 'generic', y: p.y, x: p.x }, q, p));
    }),
  );
  const fixed = staticSpecs.map((spec, k) =>
    each((q) =>
      defineFunction({ name: `static${k}_${q}`, returns: returnsOf(q), params: common }, (b, p) => {
        b.return(body(spec, q, p));
      }),
    ),
  );
  return { window, generic, fixed };
}

const STATIC_SPECS: readonly AttentionMaskSpec[] = [
  noMask,
  causalTopLeft,
  causalBottomRight,
  slidingWindowMask(5, 3, 'bottomRight'),
  slidingWindowMask(0, 17),
];

interface Case {
  readonly spec: AttentionMaskSpec;
  readonly sq: number;
  readonly sk: number;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  spec: fc.oneof(
    fc.constantFrom(...STATIC_SPECS),
    fc.record({
      kind: fc.constant('window' as const),
      alignment: fc.constantFrom('topLeft' as const, 'bottomRight' as const),
      left: fc.oneof(fc.integer({ min: -3, max: 80 }), fc.constant(2 ** 31 - 1)),
      right: fc.oneof(fc.integer({ min: -3, max: 80 }), fc.constant(2 ** 31 - 1)),
    }),
    fc.record({
      kind: fc.constant('generic' as const),
      y: fc.oneof(fc.integer({ min: -150, max: 150 }), fc.constantFrom(-(2 ** 31) + 1, 2 ** 31 - 1)),
      x: fc.oneof(fc.integer({ min: -150, max: 150 }), fc.constantFrom(-(2 ** 31) + 1, 2 ** 31 - 1)),
    }),
  ),
  sq: fc.oneof(fc.integer({ min: 0, max: 130 }), fc.constant(2 ** 30)),
  sk: fc.oneof(fc.integer({ min: 0, max: 130 }), fc.constant(2 ** 30)),
});

const haveCompiler = toolAvailable(hostCompiler());
if (!haveCompiler) console.warn('\n!!! SKIPPING the emitted attention-mask g++ test: no host C++ compiler (set TILEKIT_CXX). !!!\n');

describe('emitted attention mask', () => {
  it('static specs fold: no mask emits only the sequence bounds; causal top-left compares with i + 1', () => {
    const text = (spec: AttentionMaskSpec): string =>
      renderFunction(
        defineFunction({ name: 'f', returns: bool, params: { i: int32, j: int32, sq: int32, sk: int32 } }, (b, v) => {
          b.return(emitGenericAttentionMask(spec, v.sq, v.sk).isMasked(v.i, v.j));
        }),
      );
    expect(text(noMask)).not.toMatch(/\?/);
    expect(text(causalTopLeft)).toMatch(/j >= i \+ 1/);
  });

  it.runIf(haveCompiler)(
    'equals the TS model (g++) for runtime windows, generic coordinates and static specs on random shapes and tiles',
    () => {
      const fns = buildFunctions(STATIC_SPECS);
      const calls: HostCall[] = [];
      const wants: (number | boolean)[] = [];
      const whats: string[] = [];
      const cases = fc.sample(caseArb, { numRuns: 400, seed: 7 });
      let rand = 12345;
      const next = (n: number): number => {
        rand = (rand * 1103515245 + 12345) >>> 0;
        return rand % n;
      };
      for (const c of cases) {
        const m = makeGenericAttentionMask(c.spec, c.sq, c.sk);
        const fixedIndex = STATIC_SPECS.indexOf(c.spec);
        const fnOf = (q: Query): { fn: FunctionDef; head: (number | boolean)[] } => {
          if (fixedIndex >= 0 && next(2) === 0) return { fn: fns.fixed[fixedIndex]!.get(q)!, head: [] };
          if (c.spec.kind === 'generic') return { fn: fns.generic.get(q)!, head: [c.spec.y, c.spec.x] };
          if (c.spec.kind === 'window')
            return { fn: fns.window.get(q)!, head: [c.spec.left, c.spec.right, c.spec.alignment === 'topLeft'] };
          return { fn: fns.fixed[0]!.get(q)!, head: [] };
        };
        const span = (len: number): number => Math.min(len, 200) + 40;
        for (let t = 0; t < 16; t++) {
          const q = QUERIES[t % QUERIES.length]!;
          let a: number;
          let b: number;
          if (q === 'isMasked') {
            a = next(span(c.sq)) - 20;
            b = next(span(c.sk)) - 20;
            if (c.sq > 200 && next(2) === 0) [a, b] = [c.sq - 1 - next(30), c.sk - 1 - next(30)];
          } else {
            a = (next(Math.ceil(span(c.sq) / TILE_M)) - 1) * TILE_M;
            b = (next(Math.ceil(span(c.sk) / TILE_N)) - 1) * TILE_N;
            if (c.sq > 200 && next(2) === 0) a = Math.floor((c.sq - 1 - next(40)) / TILE_M) * TILE_M;
          }
          const numSplits = 1 + next(6);
          const iSplit = next(numSplits);
          const { fn, head } = fnOf(q);
          calls.push({ fn, args: [...head, c.sq, c.sk, a, b, numSplits, iSplit] });
          wants.push(model(m, q, a, b, numSplits, iSplit));
          whats.push(`${q} of ${JSON.stringify(c)} at (${a}, ${b}), split ${iSplit}/${numSplits}`);
        }
      }
      const all = [...fns.window.values(), ...fns.generic.values(), ...fns.fixed.flatMap((f) => [...f.values()])];
      const got = runHostFunctions(all, calls);
      expect(calls.length).toBe(6400);
      got.forEach((g, k) => {
        if (g !== wants[k]) expect.fail(`got ${String(g)}, want ${String(wants[k])}: ${whats[k]}`);
      });
    },
  );
});
