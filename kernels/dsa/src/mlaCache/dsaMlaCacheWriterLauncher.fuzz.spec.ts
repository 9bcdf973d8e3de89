// Fuzzed invalid arguments of the FP8 MLA cache writer's launcher, on the fake addon: 1000 random invalid argument sets
// through checkDsaMlaCacheWriteConfig + packDsaMlaCacheWrite + DsaKernel.launch. Every one must be a typed ArgumentError
// (DsaArgumentError for the config) naming an argument and a rule, with no launch and no compile (the catalog's kernels
// are built beforehand).
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
import { DsaKernel } from '../dsaKernel.ts';
import {
  invalidDsaMlaCacheWriteCalls,
  validDsaMlaCacheWriteCalls,
  type DsaMlaCacheWriteFuzzCall,
} from '../testing/dsaMlaCacheWriterInvalidArgs.ts';
import { DSA_MLA_CACHE_WRITER_CATALOG } from './dsaMlaCacheWriterCatalog.ts';
import type { DsaMlaCacheWriterInstance } from './dsaMlaCacheWriterInstance.ts';
import {
  checkDsaMlaCacheWriteConfig,
  packDsaMlaCacheWrite,
  type DsaMlaCacheWriteBuffers,
  type DsaMlaCacheWriteConfig,
} from './dsaMlaCacheWriterLauncher.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x21_06_56;

let fake: FuzzFakeAddon;
let device: Device;
const counter = { compiles: 0 };
const kernels = new Map<string, DsaKernel<DsaMlaCacheWriterInstance>>();

beforeAll(async () => {
  fake = useFuzzFakeAddon();
  device = Device.open(0);
  const compiler = fakeCompiler(fake, counter);
  for (const instance of DSA_MLA_CACHE_WRITER_CATALOG)
    kernels.set(instance.name, await DsaKernel.build(withoutSource(instance), { device, compiler }));
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

/** One call through the public entry points (the kernels built beforehand: building is not under test). */
function run(call: DsaMlaCacheWriteFuzzCall): void {
  const buffers = materialize(device, call.buffers as Record<string, never>);
  try {
    const config = checkDsaMlaCacheWriteConfig(call.config as unknown as DsaMlaCacheWriteConfig);
    const packed = packDsaMlaCacheWrite(config, buffers.ranges as unknown as DsaMlaCacheWriteBuffers);
    kernels.get(packed.instance.name)!.launch(packed);
  } finally {
    buffers.dispose();
  }
}

describe('dsa MLA cache writer launcher: fuzzed invalid arguments', () => {
  it('the valid calls the fuzz starts from launch', () => {
    const before = fake.launches.length;
    fc.assert(fc.property(validDsaMlaCacheWriteCalls(), run), { numRuns: 100, seed: SEED });
    expect(fake.launches.length - before).toBe(100);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch or compile', async () => {
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    const tally = await fuzzInvalidCalls(invalidDsaMlaCacheWriteCalls(), run, counters, { seed: SEED });
    console.log(fuzzLine('dsa MLA cache writer launcher', tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
