import { TilekitError } from '@tilekit/numeric';

/** A buffer, stream, event or module was used after `dispose()`. */
export class DisposedError extends TilekitError {
  constructor(what: string) {
    super('runtime/disposed', `${what}: used after dispose()`);
  }
}

interface Tracked {
  readonly what: string;
  readonly release: () => void;
}

let collected = 0;

// The safety net: a resource that became garbage without dispose() is released here. The
// callback holds only the release closure (never the owner), so it cannot keep the owner alive.
const registry = new FinalizationRegistry<Tracked>((tracked) => {
  collected += 1;
  if (process.env['TILEKIT_WARN_LEAKS']) {
    console.warn(`tilekit: ${tracked.what} was garbage-collected without dispose(); released it`);
  }
  try {
    tracked.release();
  } catch {
    // The context may be gone (process teardown, sticky error): nothing left to release.
  }
});

/**
 * Registers `owner` so that `release` runs if it is collected without `untrack(owner)`. The
 * postcondition tests check: a disposed owner is never released twice.
 */
export function track(owner: object, what: string, release: () => void): void {
  registry.register(owner, { what, release }, owner);
}

/** Cancels the safety net for `owner` (called by dispose()). */
export function untrack(owner: object): void {
  registry.unregister(owner);
}

/** How many resources the safety net has released so far (a leak counter for tests and logs). */
export function collectedWithoutDispose(): number {
  return collected;
}
