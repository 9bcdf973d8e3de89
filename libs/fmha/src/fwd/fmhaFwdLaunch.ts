// The launch geometry of one forward attention instance.

/** The launch of one instance: grid (query tiles, heads, batch · splits), threads, dynamic shared memory, and a cluster where the instance has one. */
export interface FmhaFwdLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
  readonly cluster?: readonly [number, number, number];
}
