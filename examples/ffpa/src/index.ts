// @tilekit/example-ffpa: the example's parser and runner (main.ts is the executable).
export * from './exampleArgParser.ts';
export * from './ffpaExample.ts';
