import { ArgumentError } from '@tilekit/numeric';
import { loadAddon, type EventHandle } from './addon.ts';
import type { Device } from './device.ts';
import { DisposedError, track, untrack } from './disposal.ts';
import type { Stream } from './stream.ts';

export interface CudaEventOptions {
  /** Record timestamps so that elapsed times can be read (default true). */
  readonly timing?: boolean;
  /** Wait by blocking the thread instead of spinning (default false). */
  readonly blockingSync?: boolean;
}

// CUevent_flags values.
const CU_EVENT_BLOCKING_SYNC = 0x1;
const CU_EVENT_DISABLE_TIMING = 0x2;

/**
 * A CUDA event: a marker recorded into a stream. `elapsedMs(start, end)` is the GPU time between
 * two recorded, completed timing events of one device, in milliseconds (about 0.5 µs
 * resolution). Using an event before `record()` throws `ArgumentError`.
 */
export class CudaEvent {
  readonly device: Device;
  readonly timing: boolean;
  #handle: EventHandle | undefined;
  #recorded = false;

  private constructor(device: Device, handle: EventHandle, timing: boolean) {
    this.device = device;
    this.#handle = handle;
    this.timing = timing;
  }

  static create(device: Device, options: CudaEventOptions = {}): CudaEvent {
    const timing = options.timing ?? true;
    const flags = (timing ? 0 : CU_EVENT_DISABLE_TIMING) | (options.blockingSync ? CU_EVENT_BLOCKING_SYNC : 0);
    const handle = loadAddon().eventCreate(device.ordinal, flags);
    const event = new CudaEvent(device, handle, timing);
    track(event, `CudaEvent(device ${device.ordinal})`, () => loadAddon().eventDestroy(handle));
    return event;
  }

  /** Milliseconds of GPU time from `start` to `end` (both recorded on the same device). */
  static elapsedMs(start: CudaEvent, end: CudaEvent): number {
    for (const [name, event] of [
      ['start', start],
      ['end', end],
    ] as const) {
      if (!event.timing) throw new ArgumentError(name, 'must be created with timing enabled');
      if (!event.#recorded) throw new ArgumentError(name, 'must be recorded before reading elapsed time');
    }
    if (start.device !== end.device) throw new ArgumentError('end', 'must belong to the same device as start');
    end.synchronize();
    return loadAddon().eventElapsedTime(start.handle, end.handle);
  }

  get handle(): EventHandle {
    if (this.#handle === undefined) throw new DisposedError('CudaEvent');
    return this.#handle;
  }

  get recorded(): boolean {
    return this.#recorded;
  }

  /** Records the event into `stream` (default: the legacy default stream). */
  record(stream?: Stream): this {
    if (stream !== undefined && stream.device !== this.device) {
      throw new ArgumentError('stream', `must belong to device ${this.device.ordinal}`, stream.device.ordinal);
    }
    loadAddon().eventRecord(this.handle, stream?.handle);
    this.#recorded = true;
    return this;
  }

  /** Blocks until the recorded work is done. */
  synchronize(): void {
    if (!this.#recorded) throw new ArgumentError('event', 'must be recorded before synchronizing on it');
    loadAddon().eventSynchronize(this.handle);
  }

  /** True when the work before the record has completed. */
  isComplete(): boolean {
    return loadAddon().eventQuery(this.handle);
  }

  /** Milliseconds from `start` to this event. */
  elapsedSince(start: CudaEvent): number {
    return CudaEvent.elapsedMs(start, this);
  }

  dispose(): void {
    const handle = this.#handle;
    if (handle === undefined) return;
    this.#handle = undefined;
    untrack(this);
    loadAddon().eventDestroy(handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
