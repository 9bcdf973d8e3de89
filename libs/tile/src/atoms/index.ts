export { FragmentAtom, type FragmentAtomSpec, type FragmentOperand } from './fragmentAtom.ts';
export { mmaSyncAtoms, type MmaAtoms, type MmaSyncShape } from './mmaSync.ts';
export { ldmatrixAtom, LdmatrixAtom, type LdmatrixSpec } from './ldmatrix.ts';
export { wgmmaAccumulatorAtom, type WgmmaAccumulatorSpec } from './wgmma.ts';
export { mfmaAtoms, type MfmaShape } from './mfma.ts';
