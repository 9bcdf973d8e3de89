// The mask of a forward attention instance, as a compile-time property of its kernel.

/** The mask as an instance property: none, or a window (causal = a window with left unbounded, right 0) with runtime sizes. */
export type FmhaFwdMaskKind = 'none' | 'window';
