// The seed of a bench case's inputs: derived from the case name alone, so it stays the same from
// run to run and commit to commit (the results history is keyed by name) and needs no table.

/** Seeds lie in [1, 2^31 − 1]: positive and small enough for any generator's seed argument. */
export const MAX_CASE_SEED = 2 ** 31 - 1;

/** The 32-bit FNV-1a hash of the name's UTF-16 code units. */
function fnv1a(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The input seed of the case named `name`: FNV-1a of the name folded into [1, MAX_CASE_SEED]. */
export function caseSeed(name: string): number {
  return (fnv1a(name) % MAX_CASE_SEED) + 1;
}
