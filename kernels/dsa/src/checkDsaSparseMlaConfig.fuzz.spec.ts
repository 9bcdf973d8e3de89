// Fuzzed sparse MLA configs: 1000 random valid configs pass each check unchanged, and 1000 random invalid ones (a
// valid config with one to three fields corrupted) throw a DsaArgumentError whose problems name every corrupted field.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkDsaSparseMlaDecodeConfig, checkDsaSparseMlaPrefillConfig } from './checkDsaSparseMlaConfig.ts';
import { DsaArgumentError } from './dsaArgumentError.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x5a_f2;

const BAD_COMMON = {
  smScale: [0, -0.1, Number.NaN, Number.POSITIVE_INFINITY, '0.1', null],
  hasSink: [0, 'true', null, undefined],
  hasTopkLength: [1, 'no', null],
};
const BAD_SIZE = [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '8', null, undefined, 2 ** 31];

/** Definitely-invalid values of each field. */
const BAD_PREFILL: Record<string, readonly unknown[]> = {
  ...BAD_COMMON,
  sQ: BAD_SIZE,
  sKv: BAD_SIZE,
  hQ: [0, 1, 32, 63, 96, 256, '128', null],
  topk: [...BAD_SIZE, 32769, 65536],
  dQk: [512, 575, 577, 128, null],
  dV: [576, 128, 511, null],
};

const BAD_DECODE: Record<string, readonly unknown[]> = {
  ...BAD_COMMON,
  b: BAD_SIZE,
  sQ: [0, 3, 4, 1.5, '1', null],
  hQ: [0, 32, 100, 256, null],
  topk: [...BAD_SIZE, 32769],
  numPages: [...BAD_SIZE, 2 ** 25 + 1],
  pageStrideBytes: [0, 656, 41983, 41984 - 16, 41984 + 8, 41985, 1.5, '41984', null],
};

const validPrefill = fc.record({
  sQ: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  hQ: fc.constantFrom(64, 128),
  sKv: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  topk: fc.integer({ min: 1, max: 32768 }),
  dQk: fc.constant(576),
  dV: fc.constant(512),
  smScale: fc.double({ min: 1e-6, max: 10, noNaN: true }),
  hasSink: fc.boolean(),
  hasTopkLength: fc.boolean(),
});

const validDecode = fc.record({
  b: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  sQ: fc.constantFrom(1, 2),
  hQ: fc.constantFrom(64, 128),
  topk: fc.integer({ min: 1, max: 32768 }),
  numPages: fc.integer({ min: 1, max: 2 ** 25 }),
  pageStrideBytes: fc.integer({ min: 2624, max: 2 ** 20 }).map((k) => k * 16),
  smScale: fc.double({ min: 1e-6, max: 10, noNaN: true }),
  hasSink: fc.boolean(),
  hasTopkLength: fc.boolean(),
});

/** A valid config with one to three distinct fields set to invalid values. */
function corrupted<T extends object>(valid: fc.Arbitrary<T>, bad: Record<string, readonly unknown[]>) {
  const fields = Object.keys(bad);
  return fc
    .tuple(
      valid,
      fc.uniqueArray(fc.constantFrom(...fields), { minLength: 1, maxLength: 3 }),
      fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
    )
    .map(([config, chosen, picks]) => ({
      config: { ...config, ...Object.fromEntries(chosen.map((f, i) => [f, bad[f]![picks[i]! % bad[f]!.length]])) },
      chosen,
    }));
}

function problemArguments(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    if (!(e instanceof DsaArgumentError)) throw e;
    return e.problems.map((p) => p.argument);
  }
  return [];
}

describe('sparse MLA config checks: fuzzed', () => {
  const runs = { numRuns: 1000, seed: SEED };

  it('valid prefill and decode configs pass unchanged', () => {
    fc.assert(
      fc.property(validPrefill, (c) => {
        expect(checkDsaSparseMlaPrefillConfig(c)).toEqual(c);
      }),
      runs,
    );
    fc.assert(
      fc.property(validDecode, (c) => {
        expect(checkDsaSparseMlaDecodeConfig(c)).toEqual(c);
      }),
      runs,
    );
  });

  it('invalid prefill configs: a DsaArgumentError naming every corrupted field', () => {
    fc.assert(
      fc.property(corrupted(validPrefill, BAD_PREFILL), ({ config, chosen }) => {
        const named = problemArguments(() => checkDsaSparseMlaPrefillConfig(config as never));
        expect(named.length).toBeGreaterThan(0);
        for (const field of chosen) expect(named).toContain(field);
      }),
      runs,
    );
  });

  it('invalid decode configs: a DsaArgumentError naming every corrupted field', () => {
    fc.assert(
      fc.property(corrupted(validDecode, BAD_DECODE), ({ config, chosen }) => {
        const named = problemArguments(() => checkDsaSparseMlaDecodeConfig(config as never));
        expect(named.length).toBeGreaterThan(0);
        for (const field of chosen) expect(named).toContain(field);
      }),
      runs,
    );
  });
});
