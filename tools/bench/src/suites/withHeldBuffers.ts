// The device buffers one case of a suite holds: whatever it uploads or allocates is freed once the
// case is done, whether it returned or threw, after the device has finished with them.

/** What can be held: a buffer with a dispose. */
export interface Disposable {
  dispose(): void;
}

/**
 * Runs `body` with `hold`, which keeps the buffer it is given (and returns it); when `body` returns
 * or throws, synchronizes `device` and disposes every held buffer, in the order held.
 */
export function withHeldBuffers<T>(device: { synchronize(): void }, body: (hold: <B extends Disposable>(buffer: B) => B) => T): T {
  const held: Disposable[] = [];
  try {
    return body((buffer) => {
      held.push(buffer);
      return buffer;
    });
  } finally {
    device.synchronize();
    for (const buffer of held) buffer.dispose();
  }
}

/**
 * {@link withHeldBuffers} for an async `body`: the held buffers are disposed once its promise settles
 * (fulfilled or rejected), not when it is first returned.
 */
export async function withHeldBuffersAsync<T>(
  device: { synchronize(): void },
  body: (hold: <B extends Disposable>(buffer: B) => B) => Promise<T>,
): Promise<T> {
  const held: Disposable[] = [];
  try {
    return await body((buffer) => {
      held.push(buffer);
      return buffer;
    });
  } finally {
    device.synchronize();
    for (const buffer of held) buffer.dispose();
  }
}
