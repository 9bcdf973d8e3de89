// Differential-test cases for emission: a random descriptor becomes two C++ functions built with
// codegen, whose results are compared with the TS evaluator (in-process through `interpretFunction`,
// and compiled with g++ in batches).
import {
  add,
  cast,
  defineFunction,
  gt,
  int32,
  int64,
  lit,
  mul,
  select,
  type Expr,
  type FunctionDef,
  type ParamSpec,
  type VarExpr,
} from '@tilekit/codegen';
import { emitCoordinateValid, emitMakeTensorCoordinate, emitMoveTensorCoordinate } from '../emit/emitCoordinate.ts';
import { emitCalculateOffset } from '../emit/emitOffset.ts';
import type { IndexEmitterOptions } from '../emit/indexEmitter.ts';
import { intervalOf } from '../symbolic/bounds.ts';
import { evaluateSymInt, type Bindings } from '../symbolic/evaluate.ts';
import type { RandomDescriptor } from './arbitraries.ts';

/** A deterministic PRNG (mulberry32) for reproducible inputs. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const below = (rand: () => number, n: number): number => Math.floor(rand() * n);

/** One descriptor's emitted functions and the static move path they were built with. */
export interface EmissionCase {
  readonly rd: RandomDescriptor;
  /** `(top0…, symbols…) → long long`: offset·2 + valid. */
  readonly calc: FunctionDef;
  /** `(top0…, symbols…, moves) → long long`: after the first `moves` static steps, offset·2 + valid. */
  readonly moves: FunctionDef;
  /** positions[k][d]: offset of the k-th visited index from the base index (positions[0] is the start). */
  readonly positions: readonly (readonly number[])[];
}

/** offset·2 + valid, as the emitted functions return it. */
export function encode(offset: number, valid: boolean): bigint {
  return BigInt(offset) * 2n + (valid ? 1n : 0n);
}

function encodeExpr(offset: Expr, valid: Expr): Expr {
  return add(mul(cast(offset, int64), lit(2, int64)), select(valid, lit(1, int64), lit(0, int64)));
}

/**
 * Builds the two functions of one case. The move path visits `numMoves + 1` indices whose offsets
 * from a runtime base stay inside the smallest admissible lengths, so every prefix stays in range for
 * every binding; some steps leave dims unchanged (to exercise pruning) and steps are of either sign.
 */
export function buildEmissionCase(
  rd: RandomDescriptor,
  name: string,
  rand: () => number,
  numMoves = 4,
  options: Omit<IndexEmitterOptions, 'symbols'> = {},
): EmissionCase {
  const desc = rd.descriptor;
  const minLens = desc.lengths.map((l) => intervalOf(l).lo);
  const positions: number[][] = [minLens.map((m) => below(rand, m))];
  for (let k = 0; k < numMoves; k++) {
    const prev = positions[k]!;
    positions.push(prev.map((p, d) => (rand() < 0.3 ? p : below(rand, minLens[d]!))));
  }
  const params: Record<string, ParamSpec> = {};
  desc.lengths.forEach((l, i) => {
    params[`top${i}`] = { type: int32, range: [0, intervalOf(l).hi - 1] };
  });
  for (const s of rd.symbols) params[s.name] = { type: int32, range: [s.min, s.max] };
  const symbolsOf = (p: Record<string, VarExpr>): Record<string, Expr> => Object.fromEntries(rd.symbols.map((s) => [s.name, p[s.name]!]));
  const topsOf = (p: Record<string, VarExpr>): Expr[] => desc.lengths.map((_, i) => p[`top${i}`]!);
  const calc = defineFunction({ name: `${name}_calc`, returns: int64, params }, (b, p) => {
    const { offset, valid } = emitCalculateOffset(b, desc, topsOf(p), { ...options, symbols: symbolsOf(p) });
    b.return(encodeExpr(offset, valid));
  });
  const moves = defineFunction(
    { name: `${name}_moves`, returns: int64, params: { ...params, moves: { type: int32, range: [0, numMoves] } } },
    (b, p) => {
      const coord = emitMakeTensorCoordinate(b, desc, topsOf(p), { ...options, symbols: symbolsOf(p) });
      for (let k = 0; k < numMoves; k++) {
        const step = positions[k + 1]!.map((x, d) => x - positions[k]![d]!);
        b.if(gt(p['moves']!, lit(k, int32)), (t) => emitMoveTensorCoordinate(t, coord, step));
      }
      b.return(encodeExpr(coord.offset, emitCoordinateValid(b, coord)));
    },
  );
  return { rd, calc, moves, positions };
}

/** Random admissible inputs of a case: bindings inside the symbols' domains, and a base index. */
export function randomInputs(c: EmissionCase, rand: () => number): { bindings: Bindings; base: number[]; lengths: number[] } {
  const bindings: Record<string, number> = {};
  for (const s of c.rd.symbols) bindings[s.name] = s.min + s.multipleOf * below(rand, (s.max - s.min) / s.multipleOf + 1);
  const lengths = c.rd.descriptor.lengths.map((l) => evaluateSymInt(l, bindings));
  const span = c.positions.reduce(
    (acc, p) => acc.map((m, d) => Math.max(m, p[d]!)),
    lengths.map(() => 0),
  );
  const base = lengths.map((l, d) => below(rand, l - span[d]!));
  return { bindings, base, lengths };
}

/** Arguments of a case's functions for the index `top`. */
export function caseArgs(bindings: Bindings, top: readonly number[]): Record<string, number> {
  const args: Record<string, number> = { ...bindings };
  top.forEach((t, i) => {
    args[`top${i}`] = t;
  });
  return args;
}
