// Test helpers for other packages' GPU specs (*.gpu.spec.ts, node:test) and CPU specs.
export { gpu } from './gpu.ts';
export { createFakeAddon } from './fakeAddon.ts';
export { catalogCompileProblems, type CatalogInstance } from './catalogCompile.ts';
export { gpuTestCompiler } from './gpuTestCompiler.ts';
export * from './fuzzHarness.ts';
export { replayInvalidCalls, type InvalidCallReplay } from './replayInvalidCalls.ts';
export { MIN_OWNED_BYTES, OwnedBuffers } from './ownedBuffers.ts';
