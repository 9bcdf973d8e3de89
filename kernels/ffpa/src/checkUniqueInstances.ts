// The postcondition of every FFPA catalog: no two instances share a name (the entry point) or a key hash.
import { FmhaFwdCatalogError } from '@tilekit/fmha';

/** Throws `FmhaFwdCatalogError` naming `what` (e.g. `ffpa sm_80`) unless names and hashes are unique in `catalog`. */
export function checkUniqueInstances(
  what: string,
  catalog: readonly { readonly name: string; readonly key: { readonly hash: string } }[],
): void {
  for (const field of ['name', 'hash'] as const) {
    const seen = new Set<string>();
    for (const i of catalog) {
      const v = field === 'name' ? i.name : i.key.hash;
      if (seen.has(v)) throw new FmhaFwdCatalogError(`two ${what} instances share the ${field} ${v}`);
      seen.add(v);
    }
  }
}
