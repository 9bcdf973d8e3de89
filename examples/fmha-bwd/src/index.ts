// @tilekit/example-fmha-bwd: the example's parser and runner (main.ts is the executable).
export * from './fmhaBwdExample.ts';
