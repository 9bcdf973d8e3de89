// @tilekit/kernel-permute: tensor permutes (bhsd ↔ bshd, 2-D transpose). Re-exports only, by concept.

// Problem: what to move.
export * from './permuteProblem.ts';
// Kernels (Policy + emission): head permute with 16-byte vectors, transpose through swizzled shared memory.
export * from './vectorAccess.ts';
export * from './headPermuteKernel.ts';
export * from './transposeKernel.ts';
// Instances, catalog and dispatch.
export * from './permuteInstance.ts';
export * from './permuteCatalog.ts';
export * from './permuteDispatch.ts';
// The typed launcher and the CPU references.
export * from './permuteLauncher.ts';
export * from './permuteReference.ts';
