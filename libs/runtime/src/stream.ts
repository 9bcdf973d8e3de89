import { loadAddon, type StreamHandle } from './addon.ts';
import type { Device } from './device.ts';
import { DisposedError, track, untrack } from './disposal.ts';
import { launchesSettled } from './launchJournal.ts';

export interface StreamOptions {
  /**
   * false (default): the stream synchronizes with the legacy default stream, so the plain
   * (stream-less) copies order with its work. true: it does not (`CU_STREAM_NON_BLOCKING`).
   */
  readonly nonBlocking?: boolean;
}

/**
 * A CUDA stream of one device: launches, copies and event records queued on it run in order.
 * `synchronizeAsync()` waits on a libuv worker thread (which first makes the stream's context
 * current there) and resolves when the queue is drained; `dispose()` destroys the stream once
 * those waits have settled. Garbage-collected streams are destroyed by the safety net.
 */
export class Stream {
  readonly device: Device;
  readonly nonBlocking: boolean;
  #handle: StreamHandle | undefined;
  #pendingWaits = 0;
  #disposeRequested = false;

  private constructor(device: Device, handle: StreamHandle, nonBlocking: boolean) {
    this.device = device;
    this.#handle = handle;
    this.nonBlocking = nonBlocking;
  }

  static create(device: Device, options: StreamOptions = {}): Stream {
    const nonBlocking = options.nonBlocking ?? false;
    const handle = loadAddon().streamCreate(device.ordinal, nonBlocking);
    const stream = new Stream(device, handle, nonBlocking);
    track(stream, `Stream(device ${device.ordinal})`, () => loadAddon().streamDestroy(handle));
    return stream;
  }

  /** The native handle; throws `DisposedError` after dispose. */
  get handle(): StreamHandle {
    if (this.#handle === undefined || this.#disposeRequested) throw new DisposedError('Stream');
    return this.#handle;
  }

  get disposed(): boolean {
    return this.#disposeRequested;
  }

  /** Blocks the JS thread until all queued work is done. */
  synchronize(): void {
    loadAddon().streamSynchronize(this.handle);
    launchesSettled();
  }

  /** Resolves when all work queued so far is done, without blocking the JS thread. */
  async synchronizeAsync(): Promise<void> {
    const handle = this.handle;
    this.#pendingWaits += 1;
    try {
      await loadAddon().streamSynchronizeAsync(handle);
      launchesSettled();
    } finally {
      this.#pendingWaits -= 1;
      if (this.#disposeRequested && this.#pendingWaits === 0) this.#destroy();
    }
  }

  /** True when all queued work has completed (`cuStreamQuery`). */
  isIdle(): boolean {
    return loadAddon().streamQuery(this.handle);
  }

  /** Destroys the stream (queued work still completes). Idempotent. */
  dispose(): void {
    if (this.#disposeRequested) return;
    this.#disposeRequested = true;
    untrack(this);
    if (this.#pendingWaits === 0) this.#destroy();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #destroy(): void {
    const handle = this.#handle;
    this.#handle = undefined;
    if (handle !== undefined) loadAddon().streamDestroy(handle);
  }
}
