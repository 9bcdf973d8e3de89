// Emitted code == TS evaluator, compiled: random descriptors (static and symbolic) become C++
// functions built with codegen, compiled with g++ into ONE test binary, and run on random indices
// and bindings; every offset and validity bit is compared. A second part checks the emitted magic
// division over its documented range.
import fc from 'fast-check';
import type { BlockBuilder } from '@tilekit/codegen';
import { cast, defineFunction, int32, int64, lit, uint32, add, mul, type FunctionDef, type Scalar } from '@tilekit/codegen';
import { runHostFunctions, toolAvailable, hostCompiler, type HostCall } from '@tilekit/codegen/testing';
import { describe, expect, it } from 'vitest';
import { magicNumbers } from '../magicDivision.ts';
import { floorDiv, mod } from '../symbolic/simplify.ts';
import { symbol } from '../symbolic/symbol.ts';
import { descriptorArb } from '../testing/arbitraries.ts';
import { buildEmissionCase, caseArgs, encode, randomInputs, seededRandom, type EmissionCase } from '../testing/emissionCases.ts';
import { IndexEmitter } from './indexEmitter.ts';

const haveCompiler = toolAvailable(hostCompiler());
// Stored coordinate dims that a particular move path never reads are legitimately unused.
const flags = ['-std=c++17', '-O1', '-Wall', '-Werror', '-Wno-unused-variable', '-Wno-unused-but-set-variable'];

interface Expectation {
  readonly call: HostCall;
  readonly want: bigint;
  readonly what: () => string;
}

describe.runIf(haveCompiler)('emitted C++ compiled with g++', () => {
  it('equals the TS evaluator on thousands of random descriptors, indices, bindings and move paths', () => {
    const cases: EmissionCase[] = [];
    const rand = seededRandom(20241023);
    const specs = [
      { symbolic: false, levels: [1, 3] as const, count: 30 },
      { symbolic: true, levels: [1, 3] as const, count: 30 },
      { symbolic: true, levels: [3, 4] as const, count: 15 },
    ];
    specs.forEach((s, si) => {
      const rds = fc.sample(descriptorArb({ symbolic: s.symbolic, levels: [s.levels[0], s.levels[1]] }), {
        numRuns: s.count,
        seed: 1000 + si,
      });
      rds.forEach((rd) => cases.push(buildEmissionCase(rd, `d${cases.length}`, rand)));
    });
    const expectations: Expectation[] = [];
    for (const c of cases) {
      for (let trial = 0; trial < 6; trial++) {
        const { bindings, base, lengths } = randomInputs(c, rand);
        const bound = c.rd.descriptor.bind(bindings);
        for (let i = 0; i < 4; i++) {
          const top = lengths.map((l) => Math.floor(rand() * l));
          const e = bound.evaluate(top);
          expectations.push({
            call: { fn: c.calc, args: argList(c.calc, caseArgs(bindings, top)) },
            want: encode(e.offset, e.valid),
            what: () => `${c.rd.recipe}\ncalc at ${top} with ${JSON.stringify(bindings)}`,
          });
        }
        const start = base.map((x, d) => x + c.positions[0]![d]!);
        c.positions.forEach((p, k) => {
          const want = bound.evaluate(base.map((x, d) => x + p[d]!));
          expectations.push({
            call: { fn: c.moves, args: argList(c.moves, { ...caseArgs(bindings, start), moves: k }) },
            want: encode(want.offset, want.valid),
            what: () => `${c.rd.recipe}\n${k} moves from ${start} with ${JSON.stringify(bindings)}`,
          });
        });
      }
    }
    const functions = cases.flatMap((c) => [c.calc, c.moves]);
    const got = runHostFunctions(
      functions,
      expectations.map((e) => e.call),
      { flags },
    );
    expect(expectations.length).toBeGreaterThan(3000);
    got.forEach((g, i) => {
      const e = expectations[i]!;
      if (g !== e.want) expect.fail(`got ${String(g)}, want ${e.want}\n${e.what()}`);
    });
  });

  it('magic-number division is exact over its documented range (0 ≤ n < 2^31, 1 ≤ d < 2^31), computed in code or passed in', () => {
    const dSym = symbol('d', { min: 1, max: 2 ** 31 - 1 });
    const quotientAndRemainder = (name: string, magicArgs: boolean): FunctionDef =>
      defineFunction(
        {
          name,
          returns: int64,
          params: {
            n: { type: int32, range: [0, 2 ** 31 - 1] },
            d: { type: int32, range: [1, 2 ** 31 - 1] },
            m: uint32,
            s: uint32,
          },
        },
        (b: BlockBuilder, p) => {
          const emitter = new IndexEmitter(b, {
            symbols: { d: p.d },
            ...(magicArgs ? { magic: () => ({ multiplier: p.m, shift: p.s }) } : {}),
          });
          const n = emitter.bindVariable(p.n, { min: 0, max: 2 ** 31 - 1 });
          const memo = new Map();
          const q = emitter.emit(b, floorDiv(n, dSym), memo);
          const r = emitter.emit(b, mod(n, dSym), memo);
          b.return(add(mul(cast(q, int64), lit(2 ** 31, int64)), cast(r, int64)));
        },
      );
    const computed = quotientAndRemainder('qr_computed', false);
    const passed = quotientAndRemainder('qr_passed', true);
    const rand = seededRandom(7);
    const pairs: [number, number][] = [];
    const edges = [1, 2, 3, 5, 7, 641, 65535, 65536, 65537, 2 ** 30 - 1, 2 ** 30, 2 ** 30 + 1, 2 ** 31 - 2, 2 ** 31 - 1];
    for (const d of edges)
      for (const n of [0, 1, d - 1, d, d + 1, 2 ** 31 - 1, 2 ** 31 - 2, 2 ** 31 - 1 - ((2 ** 31 - 1) % d)])
        if (n >= 0 && n < 2 ** 31) pairs.push([n, d]);
    for (let i = 0; i < 600; i++) {
      const d = rand() < 0.5 ? 1 + Math.floor(rand() * 1000) : 1 + Math.floor(rand() * (2 ** 31 - 1));
      pairs.push([Math.floor(rand() * 2 ** 31), d]);
    }
    const calls: HostCall[] = pairs.flatMap(([n, d]) => {
      const { multiplier, shift } = magicNumbers(d);
      const args: Scalar[] = [n, d, multiplier, shift];
      return [
        { fn: computed, args },
        { fn: passed, args },
      ];
    });
    const got = runHostFunctions([computed, passed], calls);
    got.forEach((g, i) => {
      const [n, d] = pairs[Math.floor(i / 2)]!;
      expect(g, `n=${n} d=${d}`).toBe(BigInt(Math.floor(n / d)) * 2n ** 31n + BigInt(n % d));
    });
    expect(pairs.length).toBeGreaterThan(600);
  });
});

function argList(fn: FunctionDef, named: Readonly<Record<string, number>>): Scalar[] {
  return fn.params.map((p) => {
    const v = named[p.name];
    if (v === undefined) throw new Error(`missing argument ${p.name} of ${fn.name}`);
    return v;
  });
}
