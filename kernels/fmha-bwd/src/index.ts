// @tilekit/kernel-fmha-bwd: attention backward on sm_90a. Re-exports only, by concept.
export * from './fmhaBwdRowTileEncoding.ts';
export * from './fmhaBwdDotDoO.ts';
export * from './fmhaBwdConvertDq.ts';
export * from './fmhaBwdCatalog.ts';
export * from './fmhaBwdProblem.ts';
export * from './fmhaBwdDispatch.ts';
export * from './fmhaBwdRunner.ts';
export * from './fmhaBwdReference.ts';
export * from './fmhaBwdScoreModCatalog.ts';
