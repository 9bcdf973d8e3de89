import { ArgumentError } from '@tilekit/numeric';

/**
 * Argument checks shared by the runtime API. Each one throws `ArgumentError` naming the argument
 * and the rule before any native call is made, so a bad size never reaches the driver.
 */

/** A byte count or offset: a safe integer >= 0 (sizes up to 2^53 bytes are representable). */
export function requireByteCount(argument: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ArgumentError(argument, 'must be a non-negative safe integer number of bytes', value);
  }
  return value;
}

/** An integer in [min, max]. */
export function requireIntegerIn(argument: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ArgumentError(argument, `must be an integer in [${min}, ${max}]`, value);
  }
  return value;
}

/** `[offset, offset + bytes)` lies inside a region of `size` bytes. */
export function requireRange(argument: string, offset: number, bytes: number, size: number): void {
  if (offset + bytes > size) {
    throw new ArgumentError(argument, `range [${offset}, ${offset + bytes}) must lie inside ${size} bytes`, { offset, bytes, size });
  }
}

/** Host memory that can be read or written as raw bytes. */
export type HostBytes = ArrayBufferView;

/** A Uint8Array over exactly the bytes of `view` (no copy). */
export function bytesOf(argument: string, view: unknown): Uint8Array {
  if (!ArrayBuffer.isView(view)) {
    throw new ArgumentError(argument, 'must be a TypedArray, DataView or Buffer', typeof view);
  }
  return view instanceof Uint8Array && view.constructor === Uint8Array
    ? view
    : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}
