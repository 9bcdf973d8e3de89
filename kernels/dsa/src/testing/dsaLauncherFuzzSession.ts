// What the dsa launcher fuzz specs share: the fake addon, a device, the catalog's kernels built beforehand with a
// counting fake compiler, one call run with its buffers materialized and disposed, and the two fuzz loops (valid calls
// launch; invalid ones are rejected, typed, before any launch or compile). The specs keep their vitest hooks and
// assertions; restoreAddonPath stays the specs' first import.
import fc from 'fast-check';
import { Device, type LoadableInstance } from '@tilekit/runtime';
import {
  dropFuzzFakeAddon,
  fakeCompiler,
  fuzzInvalidCalls,
  materialize,
  useFuzzFakeAddon,
  withoutSource,
  type FuzzFakeAddon,
  type FuzzTally,
  type InvalidCall,
} from '@tilekit/runtime/testing';
import { DsaKernel, type DsaPackedLaunch } from '../dsaKernel.ts';

/** A fuzz call's buffer plans (as the invalid-argument generators draw them). */
interface FuzzCallBuffers {
  readonly buffers: unknown;
}

/** One launcher's fuzz session over `instances`. */
export class DsaLauncherFuzzSession {
  readonly counter = { compiles: 0 };
  readonly kernels = new Map<string, DsaKernel<LoadableInstance>>();
  #fake: FuzzFakeAddon | undefined;
  #device: Device | undefined;

  readonly instances: readonly LoadableInstance[];

  constructor(instances: readonly LoadableInstance[]) {
    this.instances = instances;
  }

  /** beforeAll: installs the fake addon, opens the device and builds every instance (building is not under test). */
  async open(): Promise<void> {
    this.#fake = useFuzzFakeAddon();
    this.#device = Device.open(0);
    const compiler = fakeCompiler(this.#fake, this.counter);
    for (const instance of this.instances)
      this.kernels.set(instance.name, await DsaKernel.build(withoutSource(instance), { device: this.#device, compiler }));
  }

  /** afterAll: drops the fake addon (the spec then restores the addon path). */
  close(): void {
    dropFuzzFakeAddon();
  }

  /** Launches recorded by the fake addon so far. */
  get launches(): number {
    return this.#fake!.launches.length;
  }

  /** A runner of calls: `pack` turns the call and its materialized buffer ranges into launches, each launched here. */
  runner<C extends FuzzCallBuffers>(pack: (call: C, ranges: Record<string, unknown>) => readonly DsaPackedLaunch<LoadableInstance>[]) {
    return (call: C): void => {
      const buffers = materialize(this.#device!, call.buffers as Record<string, never>);
      try {
        for (const l of pack(call, buffers.ranges)) this.kernels.get(l.instance.name)!.launch(l);
      } finally {
        buffers.dispose();
      }
    };
  }

  /** Runs 100 valid calls; returns how many launches they made. */
  launchesOfValid<C>(valid: fc.Arbitrary<C>, run: (call: C) => void, seed: number): number {
    const before = this.launches;
    fc.assert(fc.property(valid, run), { numRuns: 100, seed });
    return this.launches - before;
  }

  /** The 1000 invalid calls through `run`, tallied (typed errors, launches, compiles, arguments named). */
  rejectInvalid<C>(invalid: fc.Arbitrary<InvalidCall<C>>, run: (call: C) => void, seed: number): Promise<FuzzTally> {
    return fuzzInvalidCalls(invalid, run, { launches: () => this.launches, compiles: () => this.counter.compiles }, { seed });
  }
}
