// Test helpers for other packages' GPU specs (*.gpu.spec.ts, node:test) and CPU specs.
export { gpu } from './gpu.ts';
export { createFakeAddon } from './fakeAddon.ts';
