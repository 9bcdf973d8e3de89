// Fuzzed invalid arguments of the top-k launcher, on the fake addon: 1000 random invalid argument
// sets through checkDsaTopkConfig + packDsaTopk + DsaTopkKernel.launch. Every one must be a typed
// ArgumentError (DsaArgumentError for the config) naming an argument and a rule, with no launch and
// no compile (the catalog's kernels are built beforehand).
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import type { LoadableInstance } from '@tilekit/runtime';
import { fuzzLine } from '@tilekit/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DsaLauncherFuzzSession } from '../testing/dsaLauncherFuzzSession.ts';
import { invalidDsaTopkCalls, validDsaTopkCalls, type DsaTopkFuzzCall } from '../testing/dsaTopkInvalidArgs.ts';
import { DSA_TOPK_CATALOG, DSA_TOPK_CLUSTER_CATALOG } from './dsaTopkCatalog.ts';
import { checkDsaTopkConfig, packDsaTopk, type DsaTopkBuffers, type DsaTopkConfig } from './dsaTopkLauncher.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x20_07_01;

const session = new DsaLauncherFuzzSession([...DSA_TOPK_CATALOG, ...DSA_TOPK_CLUSTER_CATALOG] as readonly LoadableInstance[]);
beforeAll(() => session.open());
afterAll(() => {
  session.close();
  restoreAddonPath();
});

/** One call through the public entry points (the kernels built beforehand: building is not under test). */
const run = session.runner((call: DsaTopkFuzzCall, ranges) => [
  packDsaTopk(checkDsaTopkConfig(call.config as unknown as DsaTopkConfig), ranges as unknown as DsaTopkBuffers),
]);

describe('dsa top-k launcher: fuzzed invalid arguments', () => {
  it('the valid calls the fuzz starts from launch', () => {
    expect(session.launchesOfValid(validDsaTopkCalls(), run, SEED)).toBe(100);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch or compile', async () => {
    const tally = await session.rejectInvalid(invalidDsaTopkCalls(), run, SEED);
    console.log(fuzzLine('dsa top-k launcher', tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
