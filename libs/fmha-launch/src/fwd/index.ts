// The launch side every forward attention kernel package shares (dense sm_90a and sm_80, sparse):
// buffer checks, TMA maps, the shared kernel arguments and the loaded-kernel base.
export * from './fmhaFwdBuffers.ts';
export * from './fmhaFwdRunnerBuffers.ts';
export * from './tensorMapEncoder.ts';
export * from './preparedFmhaFwdLaunch.ts';
export * from './fmhaFwdTensorMaps.ts';
export * from './fmhaFwdUnsupported.ts';
export * from './fmhaFwdTileArgValues.ts';
export * from './checkFmhaFwdSequenceBuffers.ts';
export * from './checkAlignedDeviceRange.ts';
export * from './checkFmhaFwdInputs.ts';
export * from './fmhaFwdInputBytes.ts';
export * from './checkFmhaFwdOutputs.ts';
export * from './fmhaFwdOutputBytes.ts';
export * from './reportFmhaFwdOverlaps.ts';
export * from './fmhaFwdLoadedKernel.ts';
// The dense sm_90a pipeline's instances and their launcher (the dense forward and FFPA operators name their own).
export * from './fmhaFwdInstance.ts';
export * from './fmhaFwdLauncher.ts';
