// @tilekit/codegen: a small C++ source builder for CUDA/HIP/host code. Re-exports only, by concept.

// Errors (typed, with stable codes).
export * from './errors.ts';
// C++ types and the exact C++ arithmetic the evaluator and the folder share.
export * from './cType.ts';
export * from './cArithmetic.ts';
// Typed expression trees: raw nodes, folding builders, evaluation, ranges, simplification, printing.
export * from './expr.ts';
export * from './ops.ts';
export * from './evaluate.ts';
export * from './range.ts';
export * from './simplify.ts';
export * from './printExpr.ts';
export * from './floatLiteral.ts';
// Statements, blocks, functions, translation units.
export * from './nameScope.ts';
export * from './codeWriter.ts';
export * from './stmt.ts';
export * from './render.ts';
export * from './blockBuilder.ts';
export * from './function.ts';
export * from './requirement.ts';
export * from './sourceFile.ts';
export * from './sourceBuilder.ts';
// Targets and their dialects.
export * from './target.ts';
export * from './hostTarget.ts';
export * from './cudaTarget.ts';
export * from './hipTarget.ts';
export * from './targets.ts';
// Kernel entry points: signatures (parameters, argument layouts, packing), instance keys and the instance base.
export * from './kernel/kernelParam.ts';
export * from './kernel/kernelSignature.ts';
export * from './kernel/cubinKernelParams.ts';
export * from './kernel/instanceKey.ts';
export * from './kernel/instanceDispatch.ts';
export * from './kernel/kernelInstance.ts';
export * from './kernel/duplicateInstance.ts';
export * from './kernel/sha256.ts';
// Leaf copy/synchronisation intrinsics (cp.async, ldmatrix, mbarrier, TMA, fences, setmaxnreg, ...):
// force-inlined inline-PTX helpers, requested per target and emitted once per file.
export * from './intrinsics/deviceHelper.ts';
export * from './intrinsics/sharedAddress.ts';
export * from './intrinsics/cpAsync.ts';
export * from './intrinsics/ldmatrix.ts';
export * from './intrinsics/mbarrier.ts';
export * from './intrinsics/asyncFence.ts';
export * from './intrinsics/cluster.ts';
export * from './intrinsics/tma.ts';
export * from './intrinsics/setmaxnreg.ts';
export * from './intrinsics/electSync.ts';
export * from './intrinsics/opaqueValue.ts';
export * from './intrinsics/gridDependency.ts';
export * from './intrinsics/fastMath.ts';
export * from './intrinsics/namedBarrier.ts';
export * from './intrinsics/reduceAdd.ts';
export * from './intrinsics/bulkReduce.ts';
export * from './intrinsics/globalFlag.ts';
export * from './intrinsics/setMaxNRegBudget.ts';
export * from './intrinsics/packFp8.ts';
export * from './intrinsics/dequantFp8x2.ts';
