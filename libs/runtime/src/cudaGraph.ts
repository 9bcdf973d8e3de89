import { ArgumentError } from '@tilekit/numeric';
import { loadAddon, type GraphHandle } from './addon.ts';
import type { Device } from './device.ts';
import { DisposedError, track, untrack } from './disposal.ts';
import { collectLaunches, recordLaunches } from './launchJournal.ts';
import { Stream } from './stream.ts';

/**
 * How strictly the driver guards a capture against calls that could implicitly synchronize with
 * it (`CUstreamCaptureMode`): `'global'` (default) prohibits such calls on every thread while
 * this capture is under way, `'threadLocal'` only on the capturing thread, `'relaxed'` nowhere.
 */
export type CudaGraphCaptureMode = 'global' | 'threadLocal' | 'relaxed';

export interface CudaGraphCaptureOptions {
  /** The capture mode (default `'global'`). */
  readonly mode?: CudaGraphCaptureMode;
}

// CUstreamCaptureMode values.
const CAPTURE_MODES: Readonly<Record<CudaGraphCaptureMode, number>> = { global: 0, threadLocal: 1, relaxed: 2 };

const CREATED_STREAM = 'must be a created Stream (device.createStream()): the legacy default stream cannot be captured';

function isThenable(value: unknown): boolean {
  return (
    (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * A CUDA graph captured from a stream: `CudaGraph.capture(stream, body)` records the launches and
 * copies that `body` queues on `stream` (they do not run then), and `launch()` replays all of
 * them with one driver call, which saves the host cost of each launch (small decode steps).
 *
 * A replay repeats the captured work exactly: the same kernels, grids and arguments, so the same
 * device buffers, which must stay alive for as long as the graph is launched. Capture runs
 * nothing; synchronizing inside `body` fails the capture. While a stream that synchronizes with
 * the legacy default stream (`nonBlocking: false`) is captured, work on the legacy default stream
 * (a launch or copy without a stream) invalidates the capture; a `nonBlocking` stream avoids that.
 * Kernels captured from `stream` are journaled (device fault suspects, `TILEKIT_LAUNCH_LOG`) at
 * each replay, not at capture. `dispose()` frees the graph; the safety net frees a forgotten one.
 */
export class CudaGraph {
  readonly device: Device;
  /** The stream it was captured on: where `launch()` replays it by default. */
  readonly stream: Stream;
  /** The tilekit kernels launched on `stream` during the capture, in launch order. */
  readonly kernels: readonly string[];
  #handle: GraphHandle | undefined;

  private constructor(stream: Stream, handle: GraphHandle, kernels: readonly string[]) {
    this.device = stream.device;
    this.stream = stream;
    this.#handle = handle;
    this.kernels = kernels;
  }

  /**
   * Captures what `body` queues on `stream` into a graph, ready to launch. `body` must queue its
   * work synchronously (a returned promise is refused). The capture always ends: when `body`
   * throws, whatever was captured is destroyed and `body`'s error is rethrown; when the capture
   * itself failed (for example `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`), a `CudaError` is thrown.
   * `stream` must be a created stream: the legacy default stream cannot be captured
   * (`ArgumentError`, before any driver call).
   */
  static capture(stream: Stream, body: () => void, options: CudaGraphCaptureOptions = {}): CudaGraph {
    if (!(stream instanceof Stream)) throw new ArgumentError('stream', CREATED_STREAM, stream);
    if (typeof body !== 'function') throw new ArgumentError('body', 'must be a function that queues work on stream', body);
    const modeName = options.mode ?? 'global';
    if (!Object.hasOwn(CAPTURE_MODES, modeName)) {
      throw new ArgumentError('options.mode', `must be one of ${Object.keys(CAPTURE_MODES).join(', ')}`, modeName);
    }
    const addon = loadAddon();
    const streamHandle = stream.handle;
    addon.streamBeginCapture(streamHandle, CAPTURE_MODES[modeName]);
    const kernels: string[] = [];
    const stopCollecting = collectLaunches(stream, kernels);
    let failure: { readonly error: unknown } | undefined;
    try {
      const result: unknown = body();
      if (isThenable(result)) {
        // Work queued after its first await would escape the capture; its outcome is not ours to report.
        (result as PromiseLike<unknown>).then(undefined, () => undefined);
        failure = { error: new ArgumentError('body', 'must queue its work synchronously (it returned a promise)') };
      }
    } catch (error) {
      failure = { error };
    } finally {
      stopCollecting();
    }
    if (failure !== undefined) {
      try {
        addon.graphDestroy(addon.streamEndCapture(streamHandle));
      } catch {
        // The capture has ended; why it failed is body's error, thrown below.
      }
      throw failure.error;
    }
    const handle = addon.streamEndCapture(streamHandle);
    const graph = new CudaGraph(stream, handle, Object.freeze(kernels));
    track(graph, `CudaGraph(device ${stream.device.ordinal})`, () => loadAddon().graphDestroy(handle));
    return graph;
  }

  get disposed(): boolean {
    return this.#handle === undefined;
  }

  /** Replays the captured work on `stream` (default: the stream it was captured on). */
  launch(stream: Stream = this.stream): void {
    const handle = this.#handle;
    if (handle === undefined) throw new DisposedError('CudaGraph');
    if (!(stream instanceof Stream)) {
      throw new ArgumentError('stream', 'must be a created Stream, or omitted for the stream the graph was captured on', stream);
    }
    if (stream.device !== this.device) {
      throw new ArgumentError('stream', `must belong to device ${this.device.ordinal}`, stream.device.ordinal);
    }
    loadAddon().graphLaunch(handle, stream.handle);
    recordLaunches(this.kernels, stream);
  }

  /** Destroys the executable graph (replays already queued still run). Idempotent. */
  dispose(): void {
    const handle = this.#handle;
    if (handle === undefined) return;
    this.#handle = undefined;
    untrack(this);
    loadAddon().graphDestroy(handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
