import type { DistributedTensor } from '../distributedTensor.ts';
import type { BlockEmitter } from '../blockEmitter.ts';
import { loadTile, storeTile, type TileWindow } from '../tileWindow.ts';

/** The windows and register tiles of a round trip through a staging buffer (usually shared memory). */
export interface StagedCopy {
  readonly source: TileWindow;
  readonly staging: TileWindow;
  readonly destination: TileWindow;
  /** Registers of the first hop (source → staging), in the source's distribution. */
  readonly first: DistributedTensor;
  /** Registers of the second hop (staging → destination), possibly another distribution. */
  readonly second: DistributedTensor;
}

/**
 * Emits source → `first` → staging, a block barrier, then staging → `second` → destination: the
 * redistribution through shared memory that the staging tests (host, nvcc and GPU parity) share.
 */
export function emitStagedCopy(block: BlockEmitter, copy: StagedCopy): void {
  block.threads((t) => {
    loadTile(t, copy.source, copy.first);
    storeTile(t, copy.staging, copy.first);
  });
  block.sync();
  block.threads((t) => {
    loadTile(t, copy.staging, copy.second);
    storeTile(t, copy.destination, copy.second);
  });
}
