// gfx942 (MI300) GEMM instances: emitted as self-contained HIP and compiled with clang-19; not run here.
export * from './gemmGfx942Instance.ts';
export * from './gemmGfx942Catalog.ts';
export * from './gfx942Resources.ts';
export * from './compileGfx942.ts';
export * from './gfx942ResourceTable.ts';
