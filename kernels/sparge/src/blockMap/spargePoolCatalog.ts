// Every instance of Sparge's block-map row kernels: the pooling kernel per (dtype, head dim, block
// rows), the K-mean partial pass per (dtype, head dim) and its finalize pass per head dim, with the
// nvcc flags they are compiled with.
import { SpargeKeyMeanFinalizeInstance } from './spargeKeyMeanFinalize.ts';
import { SpargeKeyMeanPartialInstance } from './spargeKeyMeanPartial.ts';
import { SpargePoolInstance } from './spargePoolInstance.ts';
import { SPARGE_POOL_BLOCK_ROWS, SPARGE_POOL_DTYPES, SPARGE_POOL_HEAD_DIMS } from './spargePoolPolicy.ts';

/** nvcc flags of the block-map row kernels (IEEE division: the int8 scale and rounding must match the CPU reference bit for bit). */
export const SPARGE_POOL_COMPILE_FLAGS: readonly string[] = Object.freeze(['-std=c++17', '-lineinfo']);

/** The pooling instances: fp16/bf16 × d 64/128 × block rows 64/128 (sm_90a). */
export const SPARGE_POOL_CATALOG: readonly SpargePoolInstance[] = Object.freeze(
  SPARGE_POOL_DTYPES.flatMap((dtype) =>
    SPARGE_POOL_HEAD_DIMS.flatMap((headDim) =>
      SPARGE_POOL_BLOCK_ROWS.map((blockRows) => new SpargePoolInstance({ dtype, headDim, blockRows })),
    ),
  ),
);

/** The K-mean partial-sum instances: fp16/bf16 × d 64/128. */
export const SPARGE_KEY_MEAN_PARTIAL_CATALOG: readonly SpargeKeyMeanPartialInstance[] = Object.freeze(
  SPARGE_POOL_DTYPES.flatMap((dtype) => SPARGE_POOL_HEAD_DIMS.map((headDim) => new SpargeKeyMeanPartialInstance({ dtype, headDim }))),
);

/** The K-mean finalize instances: d 64/128. */
export const SPARGE_KEY_MEAN_FINALIZE_CATALOG: readonly SpargeKeyMeanFinalizeInstance[] = Object.freeze(
  SPARGE_POOL_HEAD_DIMS.map((headDim) => new SpargeKeyMeanFinalizeInstance({ headDim })),
);

/** Any block-map row kernel instance. */
export type SpargePoolAnyInstance = SpargePoolInstance | SpargeKeyMeanPartialInstance | SpargeKeyMeanFinalizeInstance;

/** All of them (each name once). */
export const SPARGE_POOL_ALL_INSTANCES: readonly SpargePoolAnyInstance[] = Object.freeze([
  ...SPARGE_POOL_CATALOG,
  ...SPARGE_KEY_MEAN_PARTIAL_CATALOG,
  ...SPARGE_KEY_MEAN_FINALIZE_CATALOG,
]);
