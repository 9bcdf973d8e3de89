// @tilekit/example-dsa: the example's parser and runner (main.ts is the executable).
export * from './dsaFlags.ts';
export * from './dsaExample.ts';
export * from './dsaGpuRun.ts';
