// @tilekit/example-dsa-indexer: the example's parser and runner (main.ts is the executable).
export * from './dsaIndexerFlags.ts';
export * from './dsaIndexerExample.ts';
export * from './dsaIndexerGpuRun.ts';
