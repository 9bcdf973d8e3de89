// Fuzzed invalid arguments of the sparse MLA decode's launcher, on the fake addon: 1000 random invalid argument sets
// through checkDsaSparseMlaDecodeConfig + packDsaSparseMlaDecode + DsaKernel.launch (decode, then the combine when it
// splits). Every one must be a typed ArgumentError (DsaArgumentError for the config and the split count) naming an
// argument and a rule, with no launch and no compile (the catalog's kernels are built beforehand).
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import type { LoadableInstance } from '@tilekit/runtime';
import { fuzzLine } from '@tilekit/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DsaLauncherFuzzSession } from '../testing/dsaLauncherFuzzSession.ts';
import { checkDsaSparseMlaDecodeConfig, type DsaSparseMlaDecodeConfig } from '../checkDsaSparseMlaConfig.ts';
import {
  DSA_DECODE_FUZZ_SMS,
  invalidDsaSparseMlaDecodeCalls,
  validDsaSparseMlaDecodeCalls,
  type DsaSparseMlaDecodeFuzzCall,
} from '../testing/dsaSparseMlaDecodeInvalidArgs.ts';
import { DSA_SPARSE_MLA_COMBINE, DSA_SPARSE_MLA_DECODE_CATALOG } from './dsaSparseMlaDecodeCatalog.ts';
import { packDsaSparseMlaDecode, type DsaSparseMlaDecodeBuffers } from './dsaSparseMlaDecodeLauncher.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x21_de_c0;

const session = new DsaLauncherFuzzSession([...DSA_SPARSE_MLA_DECODE_CATALOG, DSA_SPARSE_MLA_COMBINE] as readonly LoadableInstance[]);
beforeAll(() => session.open());
afterAll(() => {
  session.close();
  restoreAddonPath();
});

/** One call through the public entry points (the kernels built beforehand: building is not under test). */
const run = session.runner((call: DsaSparseMlaDecodeFuzzCall, ranges) => {
  const config = checkDsaSparseMlaDecodeConfig(call.config as unknown as DsaSparseMlaDecodeConfig);
  const options = { smCount: DSA_DECODE_FUZZ_SMS, ...(call.splits === undefined ? {} : { splits: call.splits as number }) };
  const packed = packDsaSparseMlaDecode(config, ranges as unknown as DsaSparseMlaDecodeBuffers, options);
  return [packed.decode, ...(packed.combine === undefined ? [] : [packed.combine])];
});

describe('dsa sparse MLA decode launcher: fuzzed invalid arguments', () => {
  it('the valid calls the fuzz starts from launch (the combine too when they split)', () => {
    expect(session.launchesOfValid(validDsaSparseMlaDecodeCalls(), run, SEED)).toBeGreaterThanOrEqual(100);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch or compile', async () => {
    const tally = await session.rejectInvalid(invalidDsaSparseMlaDecodeCalls(), run, SEED);
    console.log(fuzzLine('dsa sparse MLA decode launcher', tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
