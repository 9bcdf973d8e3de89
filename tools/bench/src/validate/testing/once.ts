/** `f` computed on the first call only; later calls return the same value. */
export function once<T>(f: () => T): () => T {
  let value: { readonly v: T } | undefined;
  return () => (value ??= { v: f() }).v;
}
