// example_sparge's CPU references: the block map of a plan and the (block-masked or PV-skip) attention computed with a map.
import {
  spargeBlockMapReference,
  spargeDequantizeBlocksInt8,
  spargeMaskedAttentionReference,
  spargePvSkipAttentionReference,
  spargeQuantizeQkInt8,
  type SpargeAttentionResult,
  type SpargeBlockMap,
  type SpargeBlockMapResult,
  type SpargePlan,
  type SpargeShape,
} from '@tilekit/kernel-sparge';
import type { SpargeExampleInputs } from './spargeExampleInputs.ts';

/** What the CPU references give: the predicted map and the attention computed with it. */
export interface SpargeCpuReference {
  readonly blockMap: SpargeBlockMapResult;
  readonly attention?: SpargeAttentionResult;
  /** The attention's inputs (Q, K dequantized with int8) for recomputing with another map. */
  readonly attentionValues: { readonly q: Float64Array; readonly k: Float64Array; readonly v: Float64Array };
  readonly pvModel?: { readonly computed: number; readonly skipped: number };
}

/** The CPU block map of a plan (float64, the plan's 128×128 blocks). Cheap: pooling is O(s·d), scores O(nQ·nK·d). */
export function spargeCpuBlockMap(plan: SpargePlan, inputs: SpargeExampleInputs): SpargeBlockMapResult {
  const r = plan.params;
  const params = {
    ...(r.selection === 'topk' ? { topk: r.selectionValue } : { cdfthreshd: r.selectionValue }),
    simthreshd1: r.simthreshd1,
    pvThreshold: r.pvThreshold,
    smoothK: r.smoothK,
    attentionSink: r.attentionSink,
    isCausal: r.isCausal,
    int8: r.int8,
    blockQ: r.blockQ,
    blockK: r.blockK,
  };
  return spargeBlockMapReference({ shape: inputs.shape, q: inputs.values.q, k: inputs.values.k, params });
}

/** Q and K as the attention kernel sees them: the inputs, or (int8) their per-block quantization dequantized. */
export function spargeAttentionValues(plan: SpargePlan, inputs: SpargeExampleInputs): SpargeCpuReference['attentionValues'] {
  const { q, k, v } = inputs.values;
  if (!plan.params.int8) return { q, k, v };
  const s = inputs.shape;
  const quantized = spargeQuantizeQkInt8(s, q, k, plan.params.blockQ, plan.params.blockK, plan.params.smoothK);
  return {
    q: spargeDequantizeBlocksInt8(quantized.q, s.batch, s.nhead, s.seqlenQ, s.headDim),
    k: spargeDequantizeBlocksInt8(quantized.k, s.batch, s.nheadK, s.seqlenK, s.headDim),
    v,
  };
}

/**
 * The attention reference of a plan with block map `blocks`: block-masked attention, or the PV-skip
 * model (16-row warp groups or the whole block, the last visited block always computed, as the
 * kernel) when pv_mode ≠ none. With `dense`, every block is on and PV skip is off (the exact
 * attention the sparse one approximates).
 */
export function spargeAttentionReference(
  plan: SpargePlan,
  shape: Required<SpargeShape>,
  values: SpargeCpuReference['attentionValues'],
  blocks: SpargeBlockMap,
  dense = false,
): SpargeAttentionResult & { readonly pvComputed?: number; readonly pvSkipped?: number } {
  const r = plan.params;
  const args = { shape, ...values, blockQ: r.blockQ, blockK: r.blockK, blocks, isCausal: r.isCausal, scale: plan.attention.scale };
  if (dense || plan.attention.pvMode === 'none') return spargeMaskedAttentionReference(args);
  return spargePvSkipAttentionReference({
    ...args,
    pvMode: plan.attention.pvMode,
    pvThreshold: r.pvThreshold,
    warpRows: 16,
    alwaysComputedTail: 1,
  });
}
