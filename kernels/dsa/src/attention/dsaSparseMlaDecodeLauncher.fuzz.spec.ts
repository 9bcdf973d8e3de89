// Fuzzed invalid arguments of the sparse MLA decode's launcher, on the fake addon: 1000 random invalid argument sets
// through checkDsaSparseMlaDecodeConfig + packDsaSparseMlaDecode + DsaKernel.launch (decode, then the combine when it
// splits). Every one must be a typed ArgumentError (DsaArgumentError for the config and the split count) naming an
// argument and a rule, with no launch and no compile (the catalog's kernels are built beforehand).
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import fc from 'fast-check';
import { Device, type LoadableInstance } from '@tilekit/runtime';
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
import { checkDsaSparseMlaDecodeConfig, type DsaSparseMlaDecodeConfig } from '../checkDsaSparseMlaConfig.ts';
import { DsaKernel, type DsaPackedLaunch } from '../dsaKernel.ts';
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

let fake: FuzzFakeAddon;
let device: Device;
const counter = { compiles: 0 };
const kernels = new Map<string, DsaKernel<LoadableInstance>>();

beforeAll(async () => {
  fake = useFuzzFakeAddon();
  device = Device.open(0);
  const compiler = fakeCompiler(fake, counter);
  for (const instance of [...DSA_SPARSE_MLA_DECODE_CATALOG, DSA_SPARSE_MLA_COMBINE])
    kernels.set(instance.name, await DsaKernel.build(withoutSource(instance) as LoadableInstance, { device, compiler }));
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

/** One call through the public entry points (the kernels built beforehand: building is not under test). */
function run(call: DsaSparseMlaDecodeFuzzCall): void {
  const buffers = materialize(device, call.buffers as Record<string, never>);
  try {
    const config = checkDsaSparseMlaDecodeConfig(call.config as unknown as DsaSparseMlaDecodeConfig);
    const options = { smCount: DSA_DECODE_FUZZ_SMS, ...(call.splits === undefined ? {} : { splits: call.splits as number }) };
    const packed = packDsaSparseMlaDecode(config, buffers.ranges as unknown as DsaSparseMlaDecodeBuffers, options);
    const launches: DsaPackedLaunch<LoadableInstance>[] = [packed.decode, ...(packed.combine === undefined ? [] : [packed.combine])];
    for (const l of launches) kernels.get(l.instance.name)!.launch(l);
  } finally {
    buffers.dispose();
  }
}

describe('dsa sparse MLA decode launcher: fuzzed invalid arguments', () => {
  it('the valid calls the fuzz starts from launch (the combine too when they split)', () => {
    const before = fake.launches.length;
    fc.assert(fc.property(validDsaSparseMlaDecodeCalls(), run), { numRuns: 100, seed: SEED });
    expect(fake.launches.length - before).toBeGreaterThanOrEqual(100);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch or compile', async () => {
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    const tally = await fuzzInvalidCalls(invalidDsaSparseMlaDecodeCalls(), run, counters, { seed: SEED });
    console.log(fuzzLine('dsa sparse MLA decode launcher', tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
