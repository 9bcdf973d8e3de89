import { Prng } from '@tilekit/host';
import { roundTo } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaRandomSparseMlaPrefillInput, type DsaRandomSparseMlaPrefillOptions } from '../testing/dsaSparseMlaInputs.ts';
import { compareDsaSparseMla, type DsaSparseMlaActual } from './compareDsaSparseMla.ts';
import { dsaBf16Bits } from './dsaBf16Bits.ts';
import { dsaSparseMlaPrefillReferenceWithBound, type DsaSparseMlaPrefillInput } from './dsaSparseMlaReference.ts';

const DQK = 576;
const DV = 512;
const f32 = Math.fround;
const bf16 = (v: number): number => roundTo('bf16', v);

/** The valid rows of query t's list (as a kernel masks them). */
function keysOf(x: DsaSparseMlaPrefillInput, t: number): Float32Array[] {
  const n = x.topkLength?.[t] ?? x.topk;
  return Array.from(x.indices.subarray(t * x.topk, t * x.topk + n))
    .filter((i) => i >= 0 && i < x.sKv)
    .map((i) => x.kv.subarray(i * DQK, (i + 1) * DQK));
}

/** fp32 score of one key in base 2: a sequential fp32 dot (exact bf16 products), times fp32(smScale·log2 e). */
function score2(q: Float32Array, k: Float32Array, scale2: number): number {
  let dot = 0;
  for (let i = 0; i < DQK; i++) dot = f32(dot + q[i]! * k[i]!);
  return f32(dot * scale2);
}

interface EmulatedRow {
  out: Float32Array;
  lse: number;
  max: number;
}

/** One 64-token block of the online softmax: rescale by the new max, add fp32 weights to l and bf16(P)·V to acc. */
function block(s: number[], keys: Float32Array[], state: { m: number; l: number; acc: Float32Array }): void {
  const m = Math.max(state.m, ...s);
  const alpha = f32(2 ** f32(state.m - m));
  state.l = f32(state.l * alpha);
  for (let d = 0; d < DV; d++) state.acc[d] = f32(state.acc[d]! * alpha);
  s.forEach((sj, j) => {
    const p = f32(2 ** f32(sj - m));
    state.l = f32(state.l + p);
    const pb = bf16(p);
    for (let d = 0; d < DV; d++) state.acc[d] = f32(state.acc[d]! + pb * keys[j]![d]!);
  });
  state.m = m;
}

/** A FlashMLA-like kernel in fp32: blocks of 64, base-2 online softmax, bf16 P, fp32 accumulation, sink, bf16 output. */
function emulateRow(q: Float32Array, keys: Float32Array[], smScale: number, sink: number | undefined): EmulatedRow {
  if (keys.length === 0) return { out: new Float32Array(DV), lse: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };
  const scale2 = f32(smScale * Math.LOG2E);
  const state = { m: Number.NEGATIVE_INFINITY, l: 0, acc: new Float32Array(DV) };
  for (let j0 = 0; j0 < keys.length; j0 += 64) {
    const part = keys.slice(j0, j0 + 64);
    block(
      part.map((k) => score2(q, k, scale2)),
      part,
      state,
    );
  }
  const lse2 = f32(state.m + f32(Math.log2(state.l)));
  const factor = sink === undefined ? 1 : f32(1 / f32(1 + f32(2 ** f32(f32(sink * Math.LOG2E) - lse2))));
  const out = state.acc.map((a) => bf16(f32(f32(a / state.l) * factor)));
  return { out, lse: f32(lse2 * Math.LN2), max: f32(state.m * Math.LN2) };
}

/** The emulated kernel over a whole prefill problem: out as bf16 bits, lse and max as fp32. */
function emulate(x: DsaSparseMlaPrefillInput): { out: Uint16Array; lse: Float32Array; maxLogits: Float32Array } {
  const out = new Float32Array(x.sQ * x.hQ * DV);
  const lse = new Float32Array(x.sQ * x.hQ);
  const maxLogits = new Float32Array(x.sQ * x.hQ);
  for (let t = 0; t < x.sQ; t++) {
    const keys = keysOf(x, t);
    for (let h = 0; h < x.hQ; h++) {
      const at = t * x.hQ + h;
      const r = emulateRow(x.q.subarray(at * DQK, (at + 1) * DQK), keys, x.smScale, x.attnSink?.[h]);
      [lse[at], maxLogits[at]] = [r.lse, r.max];
      out.set(r.out, at * DV);
    }
  }
  return { out: dsaBf16Bits(out, 'out'), lse, maxLogits };
}

const draw = (options: DsaRandomSparseMlaPrefillOptions, seed: number): DsaSparseMlaPrefillInput =>
  dsaRandomSparseMlaPrefillInput(options, new Prng(seed));

/** A problem every bug below is injected into: 4 queries × 64 heads, topk 96 of 200 tokens, a few invalid entries. */
const BASE = draw({ sQ: 4, hQ: 64, sKv: 200, topk: 96, invalidRate: 0.1, sink: true, topkLength: false }, 0x5a_c0);
const EXPECTED = dsaSparseMlaPrefillReferenceWithBound(BASE);

/** Replaces, in each query's list, the first valid entry at or after a random position (seeded). */
function replaceOneValid(x: DsaSparseMlaPrefillInput, by: (index: number) => number, seed: number): DsaSparseMlaPrefillInput {
  const rng = new Prng(seed);
  const indices = x.indices.slice();
  for (let t = 0; t < x.sQ; t++) {
    const row = indices.subarray(t * x.topk, (t + 1) * x.topk);
    const start = rng.nextInt(0, x.topk - 1);
    const j = [...row.keys()].map((k) => (start + k) % x.topk).find((k) => row[k]! >= 0 && row[k]! < x.sKv)!;
    row[j] = by(row[j]!);
  }
  return { ...x, indices };
}

function swapHeads(
  a: DsaSparseMlaActual & { out: Uint16Array; maxLogits: Float32Array },
  h0: number,
  h1: number,
  hQ: number,
): DsaSparseMlaActual {
  const out = a.out.slice();
  const lse = a.lse.slice();
  for (let t = 0; t < a.lse.length / hQ; t++) {
    const [r0, r1] = [t * hQ + h0, t * hQ + h1];
    out.set(a.out.subarray(r1 * DV, (r1 + 1) * DV), r0 * DV);
    out.set(a.out.subarray(r0 * DV, (r0 + 1) * DV), r1 * DV);
    [lse[r0], lse[r1]] = [a.lse[r1]!, a.lse[r0]!];
  }
  return { out, lse, maxLogits: a.maxLogits };
}

describe('compareDsaSparseMla: a correct fp32/bf16 kernel (emulated) stays inside the bound', () => {
  it.each([
    ['h64, sinks, invalid entries, empty rows', { sQ: 6, hQ: 64, sKv: 300, topk: 128, invalidRate: 0.1, sink: true, emptyRowRate: 0.3 }],
    ['h128, topk 200 over sKv 4097, topk_length', { sQ: 2, hQ: 128, sKv: 4097, topk: 200, topkLength: true }],
    ['h64, topk 1000, duplicates', { sQ: 1, hQ: 64, sKv: 3000, topk: 1000, duplicateRate: 0.1 }],
    ['h64, sharp softmax (smScale 0.5)', { sQ: 2, hQ: 64, sKv: 500, topk: 256, smScale: 0.5 }],
  ] as const)('%s', (_label, options) => {
    const x = draw(options, 0x5a_c1 + _label.length);
    const c = compareDsaSparseMla(dsaSparseMlaPrefillReferenceWithBound(x), emulate(x));
    expect(c.ok, JSON.stringify(c)).toBe(true);
    // The bound is not vacuous: the kernel's bf16 rounding uses a visible share of it.
    expect(c.out.worstRatio).toBeGreaterThan(0.05);
  });

  it('the base problem passes (control for the injected bugs below)', () => {
    expect(compareDsaSparseMla(EXPECTED, emulate(BASE)).ok).toBe(true);
  });
});

describe('compareDsaSparseMla: injected bugs fail', () => {
  const fails = (actual: DsaSparseMlaActual): void => {
    const c = compareDsaSparseMla(EXPECTED, actual);
    expect(c.ok, JSON.stringify(c)).toBe(false);
  };

  it('a wrong index (one entry per query reads its neighbour token)', () =>
    fails(emulate(replaceOneValid(BASE, (i) => (i + 1) % BASE.sKv, 1))));
  it('a missing token (one valid entry per query dropped)', () => fails(emulate(replaceOneValid(BASE, () => -1, 2))));
  it('a wrong scale (576^-½ instead of 0.135234)', () => fails(emulate({ ...BASE, smScale: 1 / Math.sqrt(576) })));
  it('a scale off by 1% ', () => fails(emulate({ ...BASE, smScale: BASE.smScale * 1.01 })));
  it('two heads swapped', () => fails(swapHeads(emulate(BASE), 5, 6, BASE.hQ)));
  it('the sink ignored', () => fails(emulate({ ...BASE, attnSink: undefined as unknown as Float32Array })));
  it('lse in base 2', () => {
    const a = emulate(BASE);
    fails({ ...a, lse: a.lse.map((v) => v * Math.LOG2E) });
  });
  it('invalid entries read as token 0 (clamped instead of masked)', () =>
    fails(emulate({ ...BASE, indices: BASE.indices.map((i) => (i < 0 || i >= BASE.sKv ? 0 : i)) })));
  it('topk_length ignored', () => {
    const x = { ...BASE, topkLength: Int32Array.from({ length: BASE.sQ }, (_, t) => 10 + t) };
    const c = compareDsaSparseMla(dsaSparseMlaPrefillReferenceWithBound(x), emulate(BASE));
    expect(c.ok).toBe(false);
  });
  it('V read from the wrong dims (out shifted by one)', () => {
    const a = emulate(BASE);
    fails({ ...a, out: a.out.map((_, i) => a.out[i % DV === DV - 1 ? i : i + 1]!) });
  });
});

describe('compareDsaSparseMla: exact conventions of empty rows', () => {
  const x = draw({ sQ: 3, hQ: 64, sKv: 50, topk: 8, emptyRowRate: 0, invalidRate: 0 }, 7);
  const empty = { ...x, indices: x.indices.map((i, j) => (j < 8 ? -1 : i)) };
  const expected = dsaSparseMlaPrefillReferenceWithBound(empty);
  const good = emulate(empty);

  it('0, +∞, −∞ pass; −0 is 0', () => {
    expect(compareDsaSparseMla(expected, good).ok).toBe(true);
    const negZero = good.out.slice();
    negZero[3] = 0x8000;
    expect(compareDsaSparseMla(expected, { ...good, out: negZero }).ok).toBe(true);
  });

  it.each([
    ['lse 0 instead of +∞', 'lse', 0, 0],
    ['lse −∞ instead of +∞', 'lse', 1, Number.NEGATIVE_INFINITY],
    ['max 0 instead of −∞', 'maxLogits', 2, 0],
    ['a tiny out instead of 0', 'out', 5, 1e-30],
    ['a NaN out', 'out', DV * 64 + 1, Number.NaN],
    ['lse +∞ in a non-empty row', 'lse', 64, Number.POSITIVE_INFINITY],
  ] as const)('%s fails', (_label, array, at, value) => {
    const actual = { out: dsaValuesOf(good.out), lse: good.lse.slice(), maxLogits: good.maxLogits.slice() };
    actual[array][at] = value;
    const c = compareDsaSparseMla(expected, actual);
    expect(c.ok).toBe(false);
    expect(c[array]!.failures).toBe(1);
    expect(c[array]!.worstIndex).toBe(at);
  });

  it('no maxLogits: not compared', () => {
    const c = compareDsaSparseMla(expected, { out: good.out, lse: good.lse });
    expect([c.ok, c.maxLogits]).toEqual([true, undefined]);
  });

  it('argument errors: lengths and slack', () => {
    expect(() => compareDsaSparseMla(expected, { out: good.out.subarray(1), lse: good.lse })).toThrow(DsaArgumentError);
    expect(() => compareDsaSparseMla(expected, { out: good.out, lse: good.lse.subarray(1) })).toThrow(/actual\.lse/);
    expect(() => compareDsaSparseMla(expected, good, { slack: 0 })).toThrow(/options\.slack/);
  });
});

/** bf16 bits → float32 values (a kernel variant that stores fp32 out). */
function dsaValuesOf(bits: Uint16Array): Float32Array {
  return new Float32Array(Uint32Array.from(bits, (b) => b << 16).buffer);
}
