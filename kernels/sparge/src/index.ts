// @tilekit/kernel-sparge: Sparge block-sparse attention. Re-exports only, by concept.

// Arguments: the typed error, problem shapes and hyperparameters.
export * from './spargeArgumentError.ts';
export * from './spargeShape.ts';
export * from './spargeHyperparameters.ts';

// Block maps and upstream's delta-encoded LUT.
export * from './spargeLut.ts';

// Stage 1 on the CPU: K smoothing, pooling, self-similarity, selection; int8 Q/K quantization.
export * from './spargeBlockMapReference.ts';
export * from './spargeInt8Quantization.ts';

// Stage 2 on the CPU: block-masked attention and the PV-skip model.
export * from './spargeReference.ts';

// Structured inputs with locality and the error/sparsity curve.
export * from './spargeSyntheticInputs.ts';
