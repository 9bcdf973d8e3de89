// How a launcher turns TMA map options into the 128-byte tensor map a kernel takes.
import type { TiledTensorMapOptions } from '@tilekit/runtime';

/** Encodes a tiled tensor map (the driver on a GPU; tests pass a checker). */
export type TensorMapEncoder = (options: TiledTensorMapOptions) => Uint8Array;
