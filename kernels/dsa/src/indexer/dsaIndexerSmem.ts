// The shared-memory plan both indexer kernels use: the query block, the key ring, its scales, the
// weights and the ring's barriers; and the kernel parameters they share.
import { float32, kernelParam } from '@tilekit/codegen';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_SCALE_OFFSET, DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { dsaRingBarrierBytes } from './emitDsaRingBarriers.ts';

/** Shared-memory offsets of an indexer CTA (bytes from the 1024-aligned base). */
export interface DsaIndexerSmem {
  /** The query block: rows × 128 e4m3 (128B-swizzled, 1024-aligned). */
  readonly q: number;
  /** The key ring: stages × 64 tokens × 128 e4m3. */
  readonly kv: number;
  /** The key scales: stages × 64 fp32. */
  readonly scales: number;
  /** The weights of the block's (query, head) columns, fp32. */
  readonly weights: number;
  readonly barriers: number;
  readonly used: number;
}

/** The plan for a query block of `rows` (query, head) rows and a ring of `stages` key tiles. */
export function dsaIndexerSmem(rows: number, stages: number): DsaIndexerSmem {
  const kv = rows * DSA_INDEX_HEAD_DIM;
  const scales = kv + stages * DSA_PAGE_SCALE_OFFSET;
  const weights = scales + stages * DSA_PAGE_TOKENS * 4;
  const barriers = weights + rows * 4;
  return { q: 0, kv, scales, weights, barriers, used: barriers + dsaRingBarrierBytes(stages) };
}

/** The parameters every indexer kernel starts with: the three TMA maps (Q, keys, key scales), the weights, the logits. */
export function dsaIndexerCommonParams() {
  return {
    q_map: kernelParam.tensorMap(),
    kv_map: kernelParam.tensorMap(),
    scale_map: kernelParam.tensorMap(),
    weights: kernelParam.pointer(float32, { const: true, align: 4 }),
    logits: kernelParam.pointer(float32, { align: 4 }),
  };
}
