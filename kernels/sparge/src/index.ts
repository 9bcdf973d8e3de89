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

// Stage 1 on the GPU, part A: K mean, pooling + self-similarity, fused int8 quantization.
export * from './blockMap/spargePoolPolicy.ts';
export * from './blockMap/spargePoolTile.ts';
export * from './blockMap/spargePoolInstance.ts';
export * from './blockMap/spargeKeyMeanPartial.ts';
export * from './blockMap/spargeKeyMeanFinalize.ts';
export * from './blockMap/spargePoolCatalog.ts';
export * from './blockMap/spargePoolProblem.ts';
export * from './blockMap/spargePoolKernels.ts';

// Stage 1 on the GPU, part B: sort-based selection, map + LUT; the combined block-map launcher.
export * from './blockMap/spargeSelectSortNetwork.ts';
export * from './blockMap/spargeSelectInstance.ts';
export * from './blockMap/spargeSelectCatalog.ts';
export * from './blockMap/spargeSelectLauncher.ts';
export * from './blockMap/spargeSelectReference.ts';
export * from './blockMap/spargeSelectCompare.ts';
export * from './blockMap/spargeBlockMapKernels.ts';

// Stage 2 on the GPU: the sparse attention instances (vsa, jenga; PV-skip vote; int8 Q·Kᵀ) and launcher.
export * from './attention/spargeFwdInstance.ts';
export * from './attention/spargeFwdCatalog.ts';
export * from './attention/spargeFwdLauncher.ts';

// The operator: plan, kernels, workspace and launches of both stages.
export * from './spargeRunner.ts';
export { spargeBlockMapProblemOf } from './spargeBlockMapProblemOf.ts';
