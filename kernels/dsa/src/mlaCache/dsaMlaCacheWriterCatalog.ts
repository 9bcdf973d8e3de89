// The MLA cache writer's instances.
import { DsaMlaCacheWriterInstance } from './dsaMlaCacheWriterInstance.ts';

/** Every MLA cache-writer instance: 8 warps (8 tokens) per CTA, sm_90a. */
export const DSA_MLA_CACHE_WRITER_CATALOG: readonly DsaMlaCacheWriterInstance[] = Object.freeze([
  new DsaMlaCacheWriterInstance({ warps: 8 }),
]);
