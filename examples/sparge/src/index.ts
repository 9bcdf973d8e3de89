// @tilekit/example-sparge: the example's parser and runner (main.ts is the executable).
export * from './spargeExample.ts';
