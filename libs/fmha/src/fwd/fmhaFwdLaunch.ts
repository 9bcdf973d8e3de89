// The launch geometry of one forward attention instance.

/** The launch of one instance: grid (query tiles, heads, batch · splits), threads, dynamic shared memory. */
export interface FmhaFwdLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}
