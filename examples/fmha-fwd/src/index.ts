// @tilekit/example-fmha-fwd: the example's parser and runner (main.ts is the executable).
export * from './fmhaFwdExample.ts';
