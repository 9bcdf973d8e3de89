// Golden-table checking for fragment atoms: compare every (thread, element) cell with a formula
// transcribed from the ISA, and check the table covers the matrix exactly once.
import type { FragmentAtom } from '../atoms/fragmentAtom.ts';

/** A published fragment table: the [row, col] of element `element` held by `thread`. */
export type FragmentCell = (thread: number, element: number) => readonly [number, number];

/**
 * Checks `atom` against `cell` for every thread and element, that the cells cover the matrix exactly
 * once, and that `ownerOf` inverts the table. Returns the first violation, or undefined.
 */
export function fragmentTableViolation(atom: FragmentAtom, cell: FragmentCell): string | undefined {
  const [rows, cols] = atom.shape as [number, number];
  const seen = new Array<boolean>(rows * cols).fill(false);
  for (let t = 0; t < atom.threads; t++)
    for (let i = 0; i < atom.elementsPerThread; i++) {
      const want = cell(t, i);
      const got = atom.elementXIndex(t, i);
      if (got[0] !== want[0] || got[1] !== want[1])
        return `${atom.name}: thread ${t} element ${i} is at [${got.join(', ')}], the table says [${want.join(', ')}]`;
      const flat = want[0] * cols + want[1];
      if (seen[flat]) return `${atom.name}: [${want.join(', ')}] is held twice`;
      seen[flat] = true;
      const [ot, oi] = atom.ownerOf(want);
      if (ot !== t || oi !== i) return `${atom.name}: ownerOf([${want.join(', ')}]) = (${ot}, ${oi}), expected (${t}, ${i})`;
    }
  const missing = seen.indexOf(false);
  if (missing >= 0) return `${atom.name}: [${Math.floor(missing / cols)}, ${missing % cols}] is held by no thread`;
  return undefined;
}
