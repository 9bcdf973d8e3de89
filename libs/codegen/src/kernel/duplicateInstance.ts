// The postcondition every instance catalog keeps: no two instances share a name (the entry point) or
// a key hash.

/** The first name or key hash two instances of `catalog` share, or undefined when all are unique. */
export function duplicateInstance(
  catalog: readonly { readonly name: string; readonly key: { readonly hash: string } }[],
): { readonly field: 'name' | 'hash'; readonly value: string } | undefined {
  for (const field of ['name', 'hash'] as const) {
    const seen = new Set<string>();
    for (const i of catalog) {
      const value = field === 'name' ? i.name : i.key.hash;
      if (seen.has(value)) return { field, value };
      seen.add(value);
    }
  }
  return undefined;
}
