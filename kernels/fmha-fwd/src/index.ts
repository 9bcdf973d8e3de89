// @tilekit/kernel-fmha-fwd: FMHA forward on sm_90a. Re-exports only, by concept.

// Problem: what to compute, validated with every default filled in.
export * from './fmhaFwdProblem.ts';

// Instances, the catalog and the launcher.
export * from './fmhaFwdInstance.ts';
export * from './fmhaFwdCatalog.ts';
export * from './fmhaFwdLauncher.ts';
export * from './fmhaFwdDispatch.ts';
