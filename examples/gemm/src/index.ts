// @tilekit/example-gemm: the example's parser and runner (main.ts is the executable).
export * from './gemmExample.ts';
export * from './gemmGfx942Example.ts';
