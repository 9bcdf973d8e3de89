import { fc, test } from '@fast-check/vitest';
import { BlockBuilder, cast, defineFunction, int32, int64, renderStmts, variable, type ParamSpec } from '@tilekit/codegen';
import { describe, expect, it } from 'vitest';
import {
  makeNaiveTensorDescriptor,
  makeNaiveTensorDescriptorPacked,
  padTensorDescriptor,
  transformTensorDescriptor,
} from '../descriptor.ts';
import { makeSingleStageTensorAdaptor } from '../adaptor.ts';
import { intervalOf } from '../symbolic/bounds.ts';
import { evaluateSymInt } from '../symbolic/evaluate.ts';
import { descriptorArb, indexArb } from '../testing/arbitraries.ts';
import { buildEmissionCase, caseArgs, encode, randomInputs, seededRandom } from '../testing/emissionCases.ts';
import { interpretFunction } from '../testing/interpretFunction.ts';
import { merge, passThrough, unmerge, xor } from '../transforms/index.ts';
import { composeTensorAdaptor } from './compose.ts';
import { emitCalculateBottomIndex, emitCalculateOffset } from './emitOffset.ts';
import { emitMakeTensorCoordinate, emitMoveTensorCoordinate } from './emitCoordinate.ts';
import { indexVar, symbol } from '../symbolic/symbol.ts';

describe('symbolic composition', () => {
  for (const symbolic of [false, true]) {
    test.prop([descriptorArb({ symbolic }).chain((rd) => fc.constant(rd))], { numRuns: 60 })(
      `equals the numeric evaluator on every in-range index (${symbolic ? 'symbolic' : 'static'})`,
      (rd) => {
        const desc = rd.descriptor;
        // In-range indices: a static length L bounds its index by L − 1 (the prover needs it, e.g. to
        // see that an xor key −t4 + t5 over a length-1 t4 is ≥ 0).
        const top = desc.lengths.map((l, i) =>
          indexVar(`t${i}`, { min: 0, max: typeof l === 'number' ? l - 1 : Number.MAX_SAFE_INTEGER, extent: l }),
        );
        const { hidden, conditions } = composeTensorAdaptor(desc.adaptor, top);
        const rand = seededRandom(desc.adaptor.numHiddenDims);
        for (let trial = 0; trial < 20; trial++) {
          const bindings: Record<string, number> = {};
          for (const s of rd.symbols) bindings[s.name] = s.min + s.multipleOf * Math.floor(rand() * ((s.max - s.min) / s.multipleOf + 1));
          const bound = desc.bind(bindings);
          const index = bound.lengths.map((l) => Math.floor(rand() * l));
          const env = { ...bindings, ...Object.fromEntries(index.map((x, i) => [`t${i}`, x])) };
          const expected = bound.adaptor.hiddenIndex(index);
          hidden.forEach((h, id) => {
            if (h !== undefined) expect(evaluateSymInt(h, env), `${rd.recipe}\nhidden ${id} = ${String(h)}`).toBe(expected[id]);
          });
          expect(conditions.every((c) => evaluateSymInt(c, env) >= 0)).toBe(bound.evaluate(index).valid);
        }
      },
    );
  }
});

describe('emitted code (interpreted with exact C++ semantics)', () => {
  for (const symbolic of [false, true]) {
    test.prop([descriptorArb({ symbolic }), fc.nat()], { numRuns: 50 })(
      `offset, validity and moves equal the TS evaluator (${symbolic ? 'symbolic' : 'static'})`,
      (rd, seed) => {
        const rand = seededRandom(seed);
        const c = buildEmissionCase(rd, 'd', rand);
        for (let trial = 0; trial < 6; trial++) {
          const { bindings, base, lengths } = randomInputs(c, rand);
          const bound = rd.descriptor.bind(bindings);
          const top = lengths.map((l) => Math.floor(rand() * l));
          const e = bound.evaluate(top);
          expect(interpretFunction(c.calc, caseArgs(bindings, top)), rd.recipe).toBe(encode(e.offset, e.valid));
          c.positions.forEach((p, k) => {
            const at = base.map((x, d) => x + p[d]!);
            const want = bound.evaluate(at);
            expect(
              interpretFunction(c.moves, {
                ...caseArgs(
                  bindings,
                  base.map((x, d) => x + c.positions[0]![d]!),
                ),
                moves: k,
              }),
              `${rd.recipe}\nafter ${k} moves`,
            ).toBe(encode(want.offset, want.valid));
          });
        }
      },
    );
  }
});

describe('adaptor emission', () => {
  test.prop([descriptorArb({ symbolic: true, levels: [1, 2] }), fc.nat()], { numRuns: 40 })(
    'multi-dim bottom indices of single-stage adaptors equal calculateBottomIndex',
    (rd, seed) => {
      const stage = rd.stages[0];
      if (stage === undefined) return;
      const a = makeSingleStageTensorAdaptor(stage.transforms, stage.lowerDimIds, stage.upperDimIds);
      const params: Record<string, ParamSpec> = {};
      a.topLengths.forEach((l, i) => {
        params[`top${i}`] = { type: int32, range: [0, intervalOf(l).hi - 1] };
      });
      for (const s of rd.symbols) params[s.name] = { type: int32, range: [s.min, s.max] };
      const fns = a.bottomDimHiddenIds.map((_, j) =>
        defineFunction({ name: `bottom${j}`, returns: int64, params }, (b, p) => {
          const symbols = Object.fromEntries(rd.symbols.map((x) => [x.name, p[x.name]!]));
          const { bottom } = emitCalculateBottomIndex(
            b,
            a,
            a.topLengths.map((_, i) => p[`top${i}`]!),
            { symbols },
          );
          b.return(cast(bottom[j]!, int64));
        }),
      );
      const rand = seededRandom(seed);
      for (let trial = 0; trial < 5; trial++) {
        const bindings: Record<string, number> = {};
        for (const x of rd.symbols) bindings[x.name] = x.min + x.multipleOf * Math.floor(rand() * ((x.max - x.min) / x.multipleOf + 1));
        const lengths = a.topLengths.map((l) => evaluateSymInt(l, bindings));
        const top = lengths.map((l) => Math.floor(rand() * l));
        const want = a.calculateBottomIndex(top, bindings);
        const args = caseArgs(bindings, top);
        fns.forEach((f, j) => expect(interpretFunction(f, args), `${stage.transforms.map(String).join('; ')}`).toBe(BigInt(want[j]!)));
      }
    },
  );
});

describe('emitted code reads well', () => {
  it('GEMM LDS "3d + padding" folds to shifts and masks', () => {
    const lds0 = makeNaiveTensorDescriptor([4, 32, 8], [264, 8, 1]);
    const lds = transformTensorDescriptor(lds0, [passThrough(32), merge([4, 8])], [[1], [0, 2]], [[0], [1]]);
    const b = new BlockBuilder();
    const { valid } = emitCalculateOffset(b, lds, [variable('m', int32, { range: [0, 31] }), variable('k', int32, { range: [0, 31] })]);
    expect(renderStmts(b.statements)).toBe(
      ['const int q = k >> 3;', 'const int r = k & 7;', 'const int offset = m * 8 + q * 264 + r;', ''].join('\n'),
    );
    expect(valid).toMatchObject({ kind: 'literal', value: true });
  });

  it('static indices fold completely; merge ∘ unmerge cancels', () => {
    const d = transformTensorDescriptor(makeNaiveTensorDescriptorPacked([6, 10]), [merge([6, 10])], [[0, 1]], [[0]]);
    const back = transformTensorDescriptor(d, [unmerge([6, 10])], [[0]], [[0, 1]]);
    let b = new BlockBuilder();
    expect(emitCalculateOffset(b, back, [4, 7]).offset).toMatchObject({ kind: 'literal', value: 47n });
    b = new BlockBuilder();
    emitCalculateOffset(b, back, [variable('i', int32), variable('j', int32)]);
    expect(renderStmts(b.statements)).toBe('const int offset = i * 10 + j;\n');
  });

  it('FMHA padded Q: 32-bit when the declared domains allow, 64-bit (and said so) when they do not', () => {
    const small = padTensorDescriptor(
      makeNaiveTensorDescriptor(
        [symbol('seqlenQ', { max: 1 << 16 }), symbol('hdim', { max: 256, multipleOf: 8 })],
        [symbol('strideQ', { max: 1 << 12 }), 1],
      ),
      [128, 64],
      [true, true],
    );
    let b = new BlockBuilder();
    emitCalculateOffset(b, small, [variable('i', int32), variable('j', int32)]);
    expect(renderStmts(b.statements)).toBe(
      ['const int offset = strideQ * i + j;', 'const bool valid = j < hdim && i < seqlenQ;', ''].join('\n'),
    );
    const large = padTensorDescriptor(
      makeNaiveTensorDescriptor(
        [symbol('seqlenQ', { max: 1 << 20 }), symbol('hdim', { max: 256 })],
        [symbol('strideQ', { max: 1 << 16 }), 1],
      ),
      [128, 64],
      [true, false],
    );
    b = new BlockBuilder();
    emitCalculateOffset(b, large, [variable('i', int32), variable('j', int32)]);
    expect(renderStmts(b.statements)).toContain('const long long offset = static_cast<long long>(strideQ) * static_cast<long long>(i)');
  });

  it('a runtime merge divides with magic numbers computed once', () => {
    const n = symbol('n', { max: 1 << 12 });
    const d = transformTensorDescriptor(
      makeNaiveTensorDescriptorPacked([n, symbol('h', { max: 1 << 10 })]),
      [merge([n, symbol('h', { max: 1 << 10 })])],
      [[0, 1]],
      [[0]],
    );
    const fn = defineFunction(
      {
        name: 'f',
        returns: int32,
        params: {
          u: { type: int32, range: [0, (1 << 22) - 1] },
          n: { type: int32, range: [1, 1 << 12] },
          h: { type: int32, range: [1, 1 << 10] },
        },
      },
      (b, p) => {
        const coord = emitMakeTensorCoordinate(b, d, [p.u]);
        emitMoveTensorCoordinate(b, coord, [3]);
        b.return(coord.offset);
      },
    );
    const text = renderStmts(fn.body!.body);
    expect(text.match(/magic_multiplier/g)?.length).toBe(3); // declared once, used by both recomputations
    for (const [u, nv, hv] of [
      [0, 1, 1],
      [12345, 4096, 1000],
      [(1 << 22) - 4, 4096, 1024],
    ] as const) {
      expect(interpretFunction(fn, { u, n: nv, h: hv })).toBe(u + 3);
    }
  });

  it('xor swizzles stay in 32 bits and fold their static parts', () => {
    const sw = transformTensorDescriptor(
      makeNaiveTensorDescriptorPacked([4, 16, 8]),
      [xor([16, 4]), passThrough(8)],
      [[1, 0], [2]],
      [[0, 1], [2]],
    );
    const b = new BlockBuilder();
    emitCalculateOffset(b, sw, [variable('m', int32), variable('k0', int32), 5]);
    const text = renderStmts(b.statements);
    expect(text).toContain('^');
    expect(text).toContain('+ 5');
  });
});

describe('emission input checks', () => {
  test.prop([fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 }).chain((l) => fc.tuple(fc.constant(l), indexArb(l)))])(
    'numbers as top indices fold to the evaluated offset',
    ([lengths, idx]) => {
      const d = makeNaiveTensorDescriptorPacked(lengths);
      const { offset } = emitCalculateOffset(new BlockBuilder(), d, idx);
      expect(offset).toMatchObject({ kind: 'literal', value: BigInt(d.calculateOffset(idx)) });
    },
  );

  it('rejects a wrong number of top expressions or steps', () => {
    const d = makeNaiveTensorDescriptorPacked([4, 4]);
    expect(() => emitCalculateOffset(new BlockBuilder(), d, [1])).toThrow(expect.objectContaining({ code: 'layout/arity-mismatch' }));
    const b = new BlockBuilder();
    const c = emitMakeTensorCoordinate(b, d, [variable('i', int32), variable('j', int32)]);
    expect(() => emitMoveTensorCoordinate(b, c, [1])).toThrow(expect.objectContaining({ code: 'layout/arity-mismatch' }));
  });
});
