// Fuzzed invalid arguments of the top-k launcher, on the fake addon: 1000 random invalid argument
// sets through checkDsaTopkConfig + packDsaTopk + DsaTopkKernel.launch. Every one must be a typed
// ArgumentError (DsaArgumentError for the config) naming an argument and a rule, with no launch and
// no compile (the catalog's kernels are built beforehand).
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import fc from 'fast-check';
import { Device } from '@tilekit/runtime';
import {
  dropFuzzFakeAddon,
  fakeCompiler,
  fuzzInvalidCalls,
  fuzzLine,
  materialize,
  useFuzzFakeAddon,
  withoutSource,
  type FuzzFakeAddon,
} from '@tilekit/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invalidDsaTopkCalls, validDsaTopkCalls, type DsaTopkFuzzCall } from '../testing/dsaTopkInvalidArgs.ts';
import { DSA_TOPK_CATALOG, DSA_TOPK_CLUSTER_CATALOG } from './dsaTopkCatalog.ts';
import { checkDsaTopkConfig, type DsaTopkKernel, packDsaTopk, type DsaTopkBuffers, type DsaTopkConfig } from './dsaTopkLauncher.ts';
import { DsaKernel } from '../dsaKernel.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x20_07_01;

let fake: FuzzFakeAddon;
let device: Device;
const counter = { compiles: 0 };
const kernels = new Map<string, DsaTopkKernel>();

beforeAll(async () => {
  fake = useFuzzFakeAddon();
  device = Device.open(0);
  const compiler = fakeCompiler(fake, counter);
  for (const instance of [...DSA_TOPK_CATALOG, ...DSA_TOPK_CLUSTER_CATALOG])
    kernels.set(instance.name, await DsaKernel.build(withoutSource(instance), { device, compiler }));
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

/** One call through the public entry points (the kernels built beforehand: building is not under test). */
function run(call: DsaTopkFuzzCall): void {
  const buffers = materialize(device, call.buffers as Record<string, never>);
  try {
    const packed = packDsaTopk(checkDsaTopkConfig(call.config as unknown as DsaTopkConfig), buffers.ranges as unknown as DsaTopkBuffers);
    kernels.get(packed.instance.name)!.launch(packed);
  } finally {
    buffers.dispose();
  }
}

describe('dsa top-k launcher: fuzzed invalid arguments', () => {
  it('the valid calls the fuzz starts from launch', () => {
    const before = fake.launches.length;
    fc.assert(fc.property(validDsaTopkCalls(), run), { numRuns: 100, seed: SEED });
    expect(fake.launches.length - before).toBe(100);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch or compile', async () => {
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    const tally = await fuzzInvalidCalls(invalidDsaTopkCalls(), run, counters, { seed: SEED });
    console.log(fuzzLine('dsa top-k launcher', tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
