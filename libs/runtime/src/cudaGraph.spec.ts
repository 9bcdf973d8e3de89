import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArgumentError } from '@tilekit/numeric';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CudaError } from './cudaError.ts';
import { CudaGraph } from './cudaGraph.ts';
import { Device } from './device.ts';
import { DisposedError } from './disposal.ts';
import type { Kernel } from './kernel.ts';
import { kernelArgs } from './kernelArgs.ts';
import { launchesSettled, unsettledLaunches } from './launchJournal.ts';
import type { Stream } from './stream.ts';
import { installFakeAddon, uninstallFakeAddon, type FakeAddon } from './testing/fakeAddon.ts';

const ELF = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0x33]);
let fake: FakeAddon;
let device: Device;
let kernel: Kernel;

beforeEach(() => {
  fake = installFakeAddon();
  fake.kernels.set('bump', { params: [{ offset: 0, size: 4 }] });
  device = Device.open(0);
  kernel = device.loadModule(ELF).getKernel('bump');
  launchesSettled();
});
afterEach(() => {
  vi.unstubAllEnvs();
  uninstallFakeAddon();
});

function bump(stream: Stream, tag: number): void {
  kernel.launch(
    { grid: 1, block: 32, stream },
    kernelArgs((b) => b.i32(tag)),
  );
}

const tags = (launches: FakeAddon['launches']) =>
  launches.map((l) => new DataView(l.params[0]!.buffer, l.params[0]!.byteOffset).getInt32(0, true));

describe('CudaGraph.capture: argument checks before any driver call', () => {
  it('refuses the legacy default stream and anything that is not a created Stream', () => {
    const begin = vi.spyOn(fake, 'streamBeginCapture');
    for (const stream of [undefined, null, {}, 0]) {
      const error = (() => {
        try {
          CudaGraph.capture(stream as unknown as Stream, () => undefined);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(ArgumentError);
      expect((error as ArgumentError).argument).toBe('stream');
      expect((error as Error).message).toMatch(/stream: must be a created Stream .*legacy default stream cannot be captured/);
    }
    expect(begin).not.toHaveBeenCalled();
  });

  it('refuses a body that is not a function, an unknown mode and a disposed stream', () => {
    const begin = vi.spyOn(fake, 'streamBeginCapture');
    const stream = device.createStream();
    expect(() => CudaGraph.capture(stream, 'launch' as unknown as () => void)).toThrow(/body: must be a function/);
    expect(() => CudaGraph.capture(stream, () => undefined, { mode: 'local' as 'global' })).toThrow(
      /options\.mode: must be one of global, threadLocal, relaxed \(got .*local/,
    );
    stream.dispose();
    expect(() => CudaGraph.capture(stream, () => undefined)).toThrow(DisposedError);
    expect(begin).not.toHaveBeenCalled();
  });

  it('passes the CUstreamCaptureMode values (global by default)', () => {
    const begin = vi.spyOn(fake, 'streamBeginCapture');
    const stream = device.createStream();
    for (const mode of [undefined, 'global', 'threadLocal', 'relaxed'] as const) {
      CudaGraph.capture(stream, () => undefined, mode === undefined ? {} : { mode }).dispose();
    }
    expect(begin.mock.calls.map(([, mode]) => mode)).toEqual([0, 0, 1, 2]);
  });
});

describe('CudaGraph (fake addon)', () => {
  it('runs nothing at capture and replays the captured launches on each launch', () => {
    const stream = device.createStream({ nonBlocking: true });
    const graph = CudaGraph.capture(stream, () => {
      bump(stream, 1);
      bump(stream, 2);
    });
    expect(fake.launches).toHaveLength(0);
    expect(graph.kernels).toEqual(['bump', 'bump']);
    expect(graph.stream).toBe(stream);
    expect(graph.device).toBe(device);
    graph.launch();
    graph.launch(stream);
    const other = device.createStream();
    graph.launch(other);
    expect(tags(fake.launches)).toEqual([1, 2, 1, 2, 1, 2]);
    graph.dispose();
  });

  it('journals captured kernels at each replay, not at capture (fault suspects, TILEKIT_LAUNCH_LOG)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilekit-graph-log-'));
    try {
      const log = join(dir, 'launches.log');
      vi.stubEnv('TILEKIT_LAUNCH_LOG', log);
      const stream = device.createStream();
      const graph = CudaGraph.capture(stream, () => {
        bump(stream, 1);
        bump(stream, 2);
      });
      expect(unsettledLaunches().count).toBe(0);
      graph.launch();
      graph.launch();
      expect(unsettledLaunches()).toEqual({ kernels: ['bump', 'bump', 'bump', 'bump'], count: 4 });
      expect(readFileSync(log, 'utf8')).toBe('bump\n'.repeat(4));
      graph.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends the capture and destroys what was captured when body throws, then rethrows its error', () => {
    const stream = device.createStream();
    const boom = new Error('boom');
    expect(() =>
      CudaGraph.capture(stream, () => {
        bump(stream, 1);
        throw boom;
      }),
    ).toThrow(boom);
    expect(fake.liveGraphs.size).toBe(0);
    expect(unsettledLaunches().count).toBe(0);
    // The stream is no longer capturing: a new capture begins, and the failed one left nothing behind.
    const graph = CudaGraph.capture(stream, () => bump(stream, 7));
    graph.launch();
    expect(tags(fake.launches)).toEqual([7]);
    graph.dispose();
  });

  it('refuses a body that returns a promise, after ending the capture', () => {
    const stream = device.createStream();
    expect(() => CudaGraph.capture(stream, (async () => bump(stream, 1)) as () => void)).toThrow(/body: must queue its work synchronously/);
    expect(fake.liveGraphs.size).toBe(0);
    CudaGraph.capture(stream, () => undefined).dispose();
  });

  it('throws the driver error of a failed capture', () => {
    const stream = device.createStream();
    vi.spyOn(fake, 'streamEndCapture').mockImplementationOnce(() => {
      throw new CudaError('cuStreamEndCapture', 901, 'CUDA_ERROR_STREAM_CAPTURE_INVALIDATED', 'fake');
    });
    expect(() => CudaGraph.capture(stream, () => bump(stream, 1))).toThrow(
      /cuStreamEndCapture failed: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED/,
    );
    expect(unsettledLaunches().count).toBe(0);
  });

  it('dispose is idempotent and a launch after it throws DisposedError', () => {
    const stream = device.createStream();
    const graph = CudaGraph.capture(stream, () => bump(stream, 1));
    expect(fake.liveGraphs.size).toBe(1);
    const destroy = vi.spyOn(fake, 'graphDestroy');
    graph.dispose();
    graph.dispose();
    expect(destroy).toHaveBeenCalledTimes(1);
    expect(graph.disposed).toBe(true);
    expect(fake.liveGraphs.size).toBe(0);
    expect(() => graph.launch()).toThrow(DisposedError);
    expect(fake.launches).toHaveLength(0);
  });

  it('refuses to launch on something that is not a created Stream', () => {
    const stream = device.createStream();
    const graph = CudaGraph.capture(stream, () => bump(stream, 1));
    const launch = vi.spyOn(fake, 'graphLaunch');
    expect(() => graph.launch(null as unknown as Stream)).toThrow(/stream: must be a created Stream, or omitted/);
    expect(launch).not.toHaveBeenCalled();
    graph.dispose();
  });
});
