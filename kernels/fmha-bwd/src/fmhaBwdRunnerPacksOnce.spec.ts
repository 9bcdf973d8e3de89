// A prepared backward packs each stage once: `prepare` packs (and validates) dot_do_o, dq_dk_dv with
// its TMA maps and convert_dq, and every `launch` after it reuses those packed launches; a second
// `prepare` packs again. Through the runner with the fake addon and a counting TMA encoder.
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import { checkTiledTensorMap, Device, type Compiler, type TiledTensorMapOptions } from '@tilekit/runtime';
import {
  dropFuzzFakeAddon,
  fakeCompiler,
  OwnedBuffers,
  useFuzzFakeAddon,
  withoutSource,
  type FuzzFakeAddon,
} from '@tilekit/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFmhaBwdProblem, fmhaBwdOperandElements, type FmhaBwdProblem } from '@tilekit/fmha';
import { FmhaBwdKernel, FmhaBwdRunner, type FmhaBwdKernelInstance } from './fmhaBwdRunner.ts';

const PROBLEM: FmhaBwdProblem = { dtype: 'bf16', batch: 2, nheadQ: 4, nheadK: 2, hdimQ: 128, seqlenQ: 300, seqlenK: 259, mask: 't' };

const fake: FuzzFakeAddon = useFuzzFakeAddon();
const compiler: Compiler = fakeCompiler(fake, { compiles: 0 });
let device: Device;

beforeAll(() => {
  device = Device.open(0);
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

describe('fmha bwd runner: packed launches', () => {
  it('prepare packs every stage once (4 TMA maps); each launch reuses them; another prepare packs again', async () => {
    const p = checkFmhaBwdProblem(PROBLEM);
    const maps: TiledTensorMapOptions[] = [];
    const encode = (m: TiledTensorMapOptions): Uint8Array => (checkTiledTensorMap(m), maps.push(m), new Uint8Array(128));
    const buildKernel = <I extends FmhaBwdKernelInstance>(i: I): Promise<FmhaBwdKernel<I>> =>
      FmhaBwdKernel.build(withoutSource(i), { device, compiler });
    const runner = await FmhaBwdRunner.create(p, { device, compiler, buildKernel, encode });
    const owned = new OwnedBuffers(device);
    try {
      const elems = fmhaBwdOperandElements(p);
      const alloc = (n: number, e = 2) => owned.alloc(Math.max(1, n) * e);
      const buffers = {
        q: alloc(elems.q),
        k: alloc(elems.k),
        v: alloc(elems.v),
        o: alloc(elems.o),
        dO: alloc(elems.dO),
        lse: alloc(elems.lse, 4),
        dQ: alloc(elems.dQ),
        dK: alloc(elems.dK),
        dV: alloc(elems.dV),
      };
      const prepared = runner.prepare(buffers);
      expect(maps).toHaveLength(4);
      expect(Object.isFrozen(prepared.args) && Object.isFrozen(prepared.args.q)).toBe(true);
      const before = fake.launches.length;
      for (let i = 0; i < 3; i++) prepared.launch();
      expect(maps).toHaveLength(4);
      const launched = fake.launches.slice(before).map((l) => l.kernel);
      expect(launched).toEqual([0, 1, 2].flatMap(() => runner.instances.map((i) => i.name)));
      runner.prepare(buffers).launch();
      expect(maps).toHaveLength(8);
    } finally {
      runner.dispose();
      owned.dispose();
    }
  });
});
