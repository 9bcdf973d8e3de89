// The forward attention operator's pure pieces that every forward kernel package shares (dense,
// split-KV, sm_80, sparse): the problem and its checks, the kernel parameters and block prologue,
// launch geometry, catalog constants and compile flags.
export * from './fmhaFwdArgumentError.ts';
export * from './fmhaFwdProblem.ts';
export * from './checkFmhaFwdKernelRules.ts';
export * from './fmhaFwdProblemFlops.ts';
export * from './fmhaFwdOperandElements.ts';
export * from './fmhaFwdReferenceArgs.ts';
export * from './formatFmhaFwdProblem.ts';
export * from './fmhaFwdLaunchProblem.ts';
export * from './fmhaFwdLaunch.ts';
export * from './fmhaFwdMaskKind.ts';
export * from './fmhaFwdTileParams.ts';
export * from './emitFmhaFwdSequence.ts';
export * from './emitFmhaFwdBase.ts';
export * from './emitFmhaFwdWsBlock.ts';
export * from './fmhaFwdCatalogError.ts';
export * from './fmhaFwdRegisterSplit.ts';
export * from './fmhaFwdStages.ts';
export * from './fmhaFwdCompileFlags.ts';
