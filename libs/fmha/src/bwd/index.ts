// The backward's host side: traits, the unified dq_acc workspace, instance records and the
// GPU-agnostic launcher (an injected executor does the device work).
export * from './fmhaBwdTraits.ts';
export * from './fmhaBwdWorkspace.ts';
export * from './fmhaBwdArgs.ts';
export * from './fmhaBwdRecord.ts';
export * from './fmhaBwdLauncher.ts';
