// The GPU half of example_dsa: upload the whole path's inputs, pack the step (decode or prefill) on one workspace, run
// it, validate every stage against the CPU references fed by the GPU's previous stage, and time the whole step.
import { summarizeTimes } from '@tilekit/host';
import {
  checkDsaDecodeStepOutputs,
  checkDsaPrefillStepOutputs,
  dsaBf16Bits,
  dsaDecodeStepWorkspaceBytes,
  DsaLaunchSequence,
  dsaPrefillStepWorkspaceBytes,
  DSA_SPARSE_MLA_V_DIM,
  packDsaDecodeStep,
  packDsaPrefillStep,
  type CheckedDsaDecodeStepConfig,
  type CheckedDsaPrefillStepConfig,
  type DsaRandomDecodeStep,
  type DsaRandomPrefillStep,
  type DsaStepVerdict,
} from '@tilekit/kernel-dsa';
import { Device, encodeTensorMapTiled, timeLaunches, type Compiler, type DeviceBuffer, type DeviceRange } from '@tilekit/runtime';
import { OwnedBuffers } from '@tilekit/runtime/testing';

/** A checked step config of either mode. */
export type DsaStepConfig =
  | { readonly mode: 'decode'; readonly c: CheckedDsaDecodeStepConfig }
  | { readonly mode: 'prefill'; readonly c: CheckedDsaPrefillStepConfig };

/** The example's inputs of either mode. */
export type DsaExampleInputs =
  { readonly mode: 'decode'; readonly x: DsaRandomDecodeStep } | { readonly mode: 'prefill'; readonly x: DsaRandomPrefillStep };

/** What the GPU run needs beside the step and the inputs. */
export interface DsaGpuRunOptions {
  readonly validate: boolean;
  readonly compiler: Compiler;
  readonly warmup: number;
  readonly repeat: number;
  /** Forced decode splits (undefined: the launcher's choice). */
  readonly splits: number | undefined;
}

/** Device buffers of one run, freed together (after the device is done with them). */
class Held {
  readonly device: Device;
  readonly #owned: OwnedBuffers;
  constructor(device: Device) {
    this.device = device;
    this.#owned = new OwnedBuffers(device);
  }
  up(x: ArrayBufferView): DeviceBuffer {
    return this.#owned.upload(x);
  }
  alloc(bytes: number): DeviceBuffer {
    return this.#owned.alloc(bytes, { fill: 0xa5 });
  }
  dispose(): void {
    this.device.synchronize();
    this.#owned.dispose();
  }
}

/** The step's outputs (out, lse, max logits) allocated for `rows` (query, head) pairs. */
function outputs(held: Held, rows: number) {
  return { out: held.alloc(rows * DSA_SPARSE_MLA_V_DIM * 2), lse: held.alloc(rows * 4), maxLogits: held.alloc(rows * 4) };
}

/** Bytes of `range` (inside `buffer`) read back as `host`. */
function readBack<T extends Float32Array | Int32Array>(buffer: DeviceBuffer, range: DeviceRange, host: T): T {
  return buffer.copyToHost(host, { offset: Number(range.ptr - buffer.ptr) });
}

type Prepared = { readonly launches: Parameters<typeof DsaLaunchSequence.build>[0]; readonly check: () => DsaStepVerdict };

function prepareDecode(held: Held, c: CheckedDsaDecodeStepConfig, x: DsaRandomDecodeStep, splits: number | undefined): Prepared {
  const { device } = held;
  const input = x.index.input;
  const rows = c.batch * c.nextN;
  const out = outputs(held, rows * c.hQ);
  const workspace = held.alloc(dsaDecodeStepWorkspaceBytes(c, device.smCount, splits));
  const buffers = {
    indexQ: held.up(input.q),
    indexWeights: held.up(input.weights),
    indexCache: held.up(input.cache),
    blockTable: held.up(input.blockTable),
    contextLens: held.up(input.contextLens),
    q: held.up(dsaBf16Bits(x.q)),
    mlaCache: held.up(x.mlaCache),
    attnSink: x.attnSink === undefined ? undefined : held.up(x.attnSink),
    ...out,
    workspace,
  };
  const encode = (m: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, m);
  const packed = packDsaDecodeStep(c, buffers, { encode, smCount: device.smCount, ...(splits === undefined ? {} : { splits }) });
  const check = (): DsaStepVerdict =>
    checkDsaDecodeStepOutputs(x, {
      logits: readBack(workspace, packed.logits, new Float32Array(rows * c.maxContext)),
      slots: readBack(workspace, packed.slots, new Int32Array(rows * c.topk)),
      out: out.out.copyToHost(new Uint16Array(rows * c.hQ * DSA_SPARSE_MLA_V_DIM)),
      lse: out.lse.copyToHost(new Float32Array(rows * c.hQ)),
      maxLogits: out.maxLogits.copyToHost(new Float32Array(rows * c.hQ)),
    });
  return { launches: packed.launches, check };
}

function preparePrefill(held: Held, c: CheckedDsaPrefillStepConfig, x: DsaRandomPrefillStep): Prepared {
  const { device } = held;
  const out = outputs(held, c.seqQ * c.hQ);
  const workspace = held.alloc(dsaPrefillStepWorkspaceBytes(c));
  const buffers = {
    indexQ: held.up(x.index.q),
    indexWeights: held.up(x.index.weights),
    indexK: held.up(x.index.k),
    indexKScales: held.up(x.index.kScales),
    windowStart: held.up(x.index.windowStart),
    windowEnd: held.up(x.index.windowEnd),
    q: held.up(dsaBf16Bits(x.q)),
    kv: held.up(dsaBf16Bits(x.kv)),
    attnSink: x.attnSink === undefined ? undefined : held.up(x.attnSink),
    ...out,
    workspace,
  };
  const packed = packDsaPrefillStep(c, buffers, { encode: (m) => encodeTensorMapTiled(device, m) });
  const check = (): DsaStepVerdict =>
    checkDsaPrefillStepOutputs(x, {
      logits: readBack(workspace, packed.logits, new Float32Array(c.seqQ * c.seqKv)),
      indices: readBack(workspace, packed.indices, new Int32Array(c.seqQ * c.topk)),
      out: out.out.copyToHost(new Uint16Array(c.seqQ * c.hQ * DSA_SPARSE_MLA_V_DIM)),
      lse: out.lse.copyToHost(new Float32Array(c.seqQ * c.hQ)),
      maxLogits: out.maxLogits.copyToHost(new Float32Array(c.seqQ * c.hQ)),
    });
  return { launches: packed.launches, check };
}

/** Runs the step on device 0 and logs the results; returns 0 when every stage validated (or -v=0), 1 otherwise. */
export async function runDsaOnGpu(
  step: DsaStepConfig,
  inputs: DsaExampleInputs,
  o: DsaGpuRunOptions,
  log: (line: string) => void,
): Promise<number> {
  const held = new Held(Device.open(0));
  let seq: DsaLaunchSequence | undefined;
  try {
    const prepared =
      step.mode === 'decode' && inputs.mode === 'decode'
        ? prepareDecode(held, step.c, inputs.x, o.splits)
        : step.mode === 'prefill' && inputs.mode === 'prefill'
          ? preparePrefill(held, step.c, inputs.x)
          : undefined;
    if (prepared === undefined) throw new Error('example_dsa: the step config and the inputs are of different modes');
    seq = await DsaLaunchSequence.build(prepared.launches, { device: held.device, compiler: o.compiler });
    const run = seq;
    run.launch();
    held.device.synchronize();
    const verdict = o.validate ? prepared.check() : undefined;
    const stream = held.device.createStream();
    const graph = run.capture(stream);
    const timed = (launch: () => void): number =>
      summarizeTimes(timeLaunches(held.device, launch, { warmup: o.warmup, repeat: o.repeat, stream })).median * 1000;
    const asLaunches = timed(() => run.launch(stream));
    const asGraph = timed(() => graph.launch());
    stream.synchronize();
    graph.dispose();
    stream.dispose();
    log(`${held.device.name}: ${prepared.launches.map((l) => l.instance.name).join(' → ')}`);
    log(
      `one step: ${asGraph.toFixed(1)} µs replayed as one CUDA graph, ${asLaunches.toFixed(1)} µs as ${prepared.launches.length} launches ` +
        `(medians of ${o.repeat}, each step between two events)`,
    );
    if (verdict === undefined) return 0;
    for (const line of verdict.lines) log(line);
    log(`valid: ${verdict.ok ? 'yes' : 'no'}`);
    return verdict.ok ? 0 : 1;
  } finally {
    seq?.dispose();
    held.dispose();
  }
}
