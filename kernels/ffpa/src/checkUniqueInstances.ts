// The postcondition of every FFPA catalog: no two instances share a name (the entry point) or a key hash.
import { duplicateInstance } from '@tilekit/codegen';
import { FmhaFwdCatalogError } from '@tilekit/fmha';

/** Throws `FmhaFwdCatalogError` naming `what` (e.g. `ffpa sm_80`) unless names and hashes are unique in `catalog`. */
export function checkUniqueInstances(
  what: string,
  catalog: readonly { readonly name: string; readonly key: { readonly hash: string } }[],
): void {
  const dup = duplicateInstance(catalog);
  if (dup) throw new FmhaFwdCatalogError(`two ${what} instances share the ${dup.field} ${dup.value}`);
}
