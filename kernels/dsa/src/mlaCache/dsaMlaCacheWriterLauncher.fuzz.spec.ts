// Fuzzed invalid arguments of the FP8 MLA cache writer's launcher, on the fake addon: 1000 random invalid argument sets
// through checkDsaMlaCacheWriteConfig + packDsaMlaCacheWrite + DsaKernel.launch. Every one must be a typed ArgumentError
// (DsaArgumentError for the config) naming an argument and a rule, with no launch and no compile (the catalog's kernels
// are built beforehand).
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import type { LoadableInstance } from '@tilekit/runtime';
import { fuzzLine } from '@tilekit/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DsaLauncherFuzzSession } from '../testing/dsaLauncherFuzzSession.ts';
import {
  invalidDsaMlaCacheWriteCalls,
  validDsaMlaCacheWriteCalls,
  type DsaMlaCacheWriteFuzzCall,
} from '../testing/dsaMlaCacheWriterInvalidArgs.ts';
import { DSA_MLA_CACHE_WRITER_CATALOG } from './dsaMlaCacheWriterCatalog.ts';
import {
  checkDsaMlaCacheWriteConfig,
  packDsaMlaCacheWrite,
  type DsaMlaCacheWriteBuffers,
  type DsaMlaCacheWriteConfig,
} from './dsaMlaCacheWriterLauncher.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x21_06_56;

const session = new DsaLauncherFuzzSession(DSA_MLA_CACHE_WRITER_CATALOG as readonly LoadableInstance[]);
beforeAll(() => session.open());
afterAll(() => {
  session.close();
  restoreAddonPath();
});

/** One call through the public entry points (the kernels built beforehand: building is not under test). */
const run = session.runner((call: DsaMlaCacheWriteFuzzCall, ranges) => [
  packDsaMlaCacheWrite(
    checkDsaMlaCacheWriteConfig(call.config as unknown as DsaMlaCacheWriteConfig),
    ranges as unknown as DsaMlaCacheWriteBuffers,
  ),
]);

describe('dsa MLA cache writer launcher: fuzzed invalid arguments', () => {
  it('the valid calls the fuzz starts from launch', () => {
    expect(session.launchesOfValid(validDsaMlaCacheWriteCalls(), run, SEED)).toBe(100);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch or compile', async () => {
    const tally = await session.rejectInvalid(invalidDsaMlaCacheWriteCalls(), run, SEED);
    console.log(fuzzLine('dsa MLA cache writer launcher', tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
