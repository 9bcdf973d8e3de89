// Differential tests: emitted C++ compiled with g++ and run must agree with `evaluate` (the pattern
// the layout library reuses through `@tilekit/codegen/testing`). Two compiles in total.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bool, float32, float64, int32, int64, uint32 } from './cType.ts';
import { evaluate, evaluateDefined } from './evaluate.ts';
import type { Bindings, Scalar } from './evaluate.ts';
import type { Expr } from './expr.ts';
import { defineFunction } from './function.ts';
import type { FunctionDef } from './function.ts';
import { add, cast, div, lit, mul, variable } from './ops.ts';
import { printExpr } from './printExpr.ts';
import { simplify } from './simplify.ts';
import { compileAndRunHost, runHostFunctions } from './testing/compileAndRunHost.ts';
import type { HostCall } from './testing/compileAndRunHost.ts';
import { bindingsArbitrary, intExprArbitrary } from './testing/exprArbitrary.ts';
import { hostSwizzleSource, swizzleReference } from './testing/samples.ts';

const seed = Number(process.env['TILEKIT_SEED'] ?? Math.floor(Math.random() * 2 ** 31));

const x = variable('x', int32);
const y = variable('y', int32);
const r = variable('r', int32, { range: [0, 255] });
const s = variable('s', int32, { range: [-16, 16] });
const u = variable('u', uint32);
const w = variable('w', int64);
const b = variable('b', bool);
const vars = [x, y, r, s, u, w, b];

/** A host function `name(x, y, r, s, u, w, b)` returning `body`. */
function fnOf(name: string, body: Expr): FunctionDef {
  return defineFunction(
    { name, returns: body.type, params: { x: int32, y: int32, r: int32, s: int32, u: uint32, w: int64, b: bool } },
    (blk) => blk.return(body),
  );
}

const argsOf = (env: Bindings): Scalar[] => vars.map((v) => env[v.name] as Scalar);

function sameScalar(a: Scalar, b2: Scalar): boolean {
  return Object.is(a, b2) || (typeof a === 'number' && typeof b2 === 'number' && Number.isNaN(a) && Number.isNaN(b2)) || a === b2;
}

describe('emitted host C++ agrees with evaluate() (g++)', () => {
  it(`random integer expression trees, raw and simplified, on random inputs (seed ${seed})`, () => {
    const trees = fc.sample(intExprArbitrary({ vars }), { numRuns: 120, seed });
    const envs = fc.sample(bindingsArbitrary(vars), { numRuns: 24, seed: seed + 1 });
    const functions: FunctionDef[] = [];
    const calls: HostCall[] = [];
    const expected: { want: Scalar; what: string }[] = [];
    trees.forEach((e, k) => {
      const raw = fnOf(`raw_${k}`, e);
      const simple = fnOf(`simple_${k}`, simplify(e));
      functions.push(raw, simple);
      for (const env of envs) {
        const want = evaluateDefined(e, env);
        if (want === undefined) continue; // undefined behaviour in C++: nothing to compare
        for (const fn of [raw, simple]) {
          calls.push({ fn, args: argsOf(env) });
          expected.push({
            want,
            what:
              `${fn.name}: ${printExpr(fn === raw ? e : simplify(e))} with ` +
              `${JSON.stringify(env, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`,
          });
        }
      }
    });

    // Floating point: literals of random binary32/binary64 values, exact int→float rounding, float arithmetic.
    const floats = fc.sample(fc.float({ noNaN: true, noDefaultInfinity: true }), { numRuns: 40, seed: seed + 2 });
    const doubles = fc.sample(fc.double({ noNaN: true, noDefaultInfinity: true }), { numRuns: 40, seed: seed + 3 });
    const literalFns = [
      ...floats.map((v, i) => [lit(v, float32), i] as const),
      ...doubles.map((v, i) => [lit(v, float64), i + 100] as const),
    ].map(([e, i]) => {
      const fn = defineFunction({ name: `lit_${i}`, returns: e.type }, (blk) => blk.return(e));
      functions.push(fn);
      calls.push({ fn, args: [] });
      expected.push({ want: evaluate(e), what: `${fn.name}: ${printExpr(e)}` });
      return fn;
    });
    expect(literalFns.length).toBe(80);

    const wv = variable('wv', int64);
    const toFloat = defineFunction({ name: 'to_float', returns: float32, params: { wv: int64 } }, (blk) => blk.return(cast(wv, float32)));
    const fa = variable('fa', float32);
    const fb = variable('fb', float32);
    const fmaLike = add(mul(fa, fb), div(fa, 3));
    const floatArith = defineFunction({ name: 'float_arith', returns: float32, params: { fa: float32, fb: float32 } }, (blk) =>
      blk.return(fmaLike),
    );
    functions.push(toFloat, floatArith);
    const wide = fc.sample(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), { numRuns: 60, seed: seed + 4 });
    for (const v of [...wide, (1n << 60n) + (1n << 36n) + 1n, (1n << 60n) + (1n << 36n)]) {
      calls.push({ fn: toFloat, args: [v] });
      expected.push({ want: evaluate(cast(wv, float32), { wv: v }), what: `to_float(${v})` });
    }
    for (let i = 0; i < 40; i++) {
      const env = { fa: floats[i] as number, fb: floats[(i * 7) % 40] as number };
      calls.push({ fn: floatArith, args: [env.fa, env.fb] });
      expected.push({ want: evaluate(fmaLike, env), what: `float_arith(${env.fa}, ${env.fb})` });
    }

    // Random trees trip g++ warnings (constant overflow, sign compares, shifts of bool...): compile with -w.
    const got = runHostFunctions(functions, calls, { flags: ['-std=c++17', '-O1', '-w'] });
    expect(calls.length).toBeGreaterThan(2000);
    const mismatches = expected.flatMap((e, i) =>
      sameScalar(e.want, got[i] as Scalar) ? [] : [`${e.what}: TS ${String(e.want)} vs C++ ${String(got[i])}`],
    );
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it('the sample host program compiles cleanly (-Wall -Werror) and prints what TS computes', () => {
    let total = 0;
    for (let row = 0; row < 4; row++) for (let col = 0; col < 64; col += 8) total += swizzleReference(row, col);
    expect(compileAndRunHost(hostSwizzleSource()).trim()).toBe(String(total));
  });
});
