// The cache writer's instances: one per scale format.
import { DsaIndexCacheWriterInstance } from './dsaIndexCacheWriterInstance.ts';

/** Every cache-writer instance: fp32 and ue8m0 scales (sm_90a). */
export const DSA_INDEX_CACHE_WRITER_CATALOG: readonly DsaIndexCacheWriterInstance[] = Object.freeze([
  new DsaIndexCacheWriterInstance({ scaleFormat: 'fp32' }),
  new DsaIndexCacheWriterInstance({ scaleFormat: 'ue8m0' }),
]);
