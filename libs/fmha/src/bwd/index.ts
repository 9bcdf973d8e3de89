// The backward's host side: the operator problem and its checks, traits, the unified dq_acc workspace, instance records and the
// GPU-agnostic launcher (an injected executor does the device work).
export * from './fmhaBwdTraits.ts';
export * from './fmhaBwdProblem.ts';
export * from './fmhaBwdReference.ts';
export * from './fmhaBwdWorkspace.ts';
export * from './fmhaBwdArgs.ts';
export * from './fmhaBwdRecord.ts';
export * from './fmhaBwdLauncher.ts';
export * from './fmhaBwdKernelLaunch.ts';
export * from './fmhaRowStrideParams.ts';
export * from './fmhaBwdDqDkDvParams.ts';
export * from './emitFmhaBwdSequence.ts';
export * from './emitFmhaBwdDqAccBase.ts';
