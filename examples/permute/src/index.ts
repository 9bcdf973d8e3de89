// @tilekit/example-permute: the example's parser and runner (main.ts is the executable).
export * from './permuteExample.ts';
