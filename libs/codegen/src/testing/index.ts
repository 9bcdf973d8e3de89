export { bindingsArbitrary, intExprArbitrary, interestingIntArbitrary, varValueArbitrary } from './exprArbitrary.ts';
export type { IntExprArbitraryOptions } from './exprArbitrary.ts';
export { compileAndRunHost, hostCompiler, HostProgramError, runHostFunctions, toolAvailable } from './compileAndRunHost.ts';
export type { HostCall, HostRunOptions } from './compileAndRunHost.ts';
export { sampleKernelsSource, hostSwizzleSource, swizzleReference } from './samples.ts';
export { intrinsicSamplesSource } from './intrinsicSamples.ts';
