// @tilekit/example-ffpa: the example's parser and runner (main.ts is the executable).
export * from './ffpaExample.ts';
export * from './ffpaBwdExample.ts';
