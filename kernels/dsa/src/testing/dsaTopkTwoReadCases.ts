// Boundary rows of the two-read top-k schedule (DsaTopkTwoReadInstance): lists exactly full and one
// past the capacity (the fallback), ties at the threshold inside the list, pass 2 deciding, every
// listed key in the first tile (the sweep stops early), k 4096 with lengths. Built directly (not
// drawn by style) so each lands on the path its label names; the CPU spec checks that it does.
import { Prng } from '@tilekit/host';
import type { DsaTopkRows } from '../reference/dsaTopkReference.ts';

/** One boundary case: its rows, and the two-read path its rows take (dsaRadixSelectTwoReadPlan) with a list of `capacity`. */
export interface DsaTopkTwoReadCase {
  readonly label: string;
  readonly rows: () => DsaTopkRows;
  readonly path: 'list' | 'overflow';
}

/** A row of `n`: `above` keys in higher top-12-bit bins, `inBin` keys of one bin (`distinct` values `step` apart), the rest lower, shuffled. */
function row(rng: Prng, n: number, above: number, inBin: number, distinct: number, start = 0, span = n, step = 2 ** -20): Float32Array {
  const out = new Float32Array(n).fill(Number.NEGATIVE_INFINITY);
  const values: number[] = [];
  for (let i = 0; i < above; i++) values.push(8 + rng.nextFloat());
  for (let i = 0; i < inBin; i++) values.push(1 + (i % distinct) * step);
  while (values.length < span) values.push(-1 - rng.nextFloat());
  for (let i = values.length - 1; i > 0; i--) {
    const j = rng.nextInt(0, i);
    [values[i], values[j]] = [values[j]!, values[i]!];
  }
  out.set(values.slice(0, span), start);
  return out;
}

/** The boundary cases for a list of `capacity` entries. */
export function dsaTopkTwoReadCases(capacity: number): DsaTopkTwoReadCase[] {
  const one = (seed: number, n: number, k: number, make: (rng: Prng) => Float32Array, lengths?: number[]) => (): DsaTopkRows => {
    const logits = make(new Prng(seed));
    return { logits, rows: 1, rowStride: n, k, ...(lengths === undefined ? {} : { lengths: Int32Array.from(lengths) }) };
  };
  const L = 131072;
  return [
    {
      label: `list exactly full (${capacity}), 128K, k 2048`,
      path: 'list',
      rows: one(1, L, 2048, (r) => row(r, L, 1000, capacity - 1000, 997)),
    },
    {
      label: `list one past full (${capacity + 1}: three reads), 128K, k 2048`,
      path: 'overflow',
      rows: one(2, L, 2048, (r) => row(r, L, 1000, capacity - 999, 997)),
    },
    {
      label: 'ties at the threshold inside the list (one value in bin1), 128K, k 2048',
      path: 'list',
      rows: one(3, L, 2048, (r) => row(r, L, 100, 5000, 1)),
    },
    {
      label: 'pass 2 decides on the list (bin2 taken whole), 64K, k 2048',
      path: 'list',
      rows: one(4, 65536, 2048, (r) => row(r, 65536, 48, 4000, 1000, 0, 65536, 2 ** -13)),
    },
    {
      label: 'every listed key in the first tile (the sweep stops early), 128K, k 7',
      path: 'list',
      rows: one(5, L, 7, (r) => row(r, L, 3, 40, 5, 0, 4000)),
    },
    {
      label: 'k 4096, lengths inside the last tile, 100003',
      path: 'list',
      rows: one(6, 100003, 4096, (r) => row(r, 100003, 2000, 9000, 3000), [99999]),
    },
  ];
}
