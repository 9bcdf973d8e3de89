// @tilekit/kernel-dsa: DeepSeek sparse attention, part 1 (index cache, lightning indexer, top-k). Re-exports only, by concept.

// Arguments, shapes, and the compiled-kernel handle every launcher uses.
export * from './dsaArgumentError.ts';
export * from './dsaShape.ts';
export * from './dsaKernel.ts';
export * from './checkDsaHostInputs.ts';

// CPU references: order-preserving keys, exact selection.
export * from './reference/dsaOrderedKey.ts';
export * from './reference/dsaTopkReference.ts';

// CPU references: index-key quantization, the paged cache, indexer logits, page-table form.
// (reference section)
export * from './reference/dsaQuantizeIndexKeys.ts';
export * from './reference/dsaIndexCachePages.ts';
export * from './reference/dsaWriteIndexCacheReference.ts';
export * from './reference/dsaReadIndexCacheToken.ts';
export * from './reference/dsaSlotsFromBlockTable.ts';
export * from './reference/dsaHeadDotErrorBound.ts';
export * from './reference/dsaIndexerLogits.ts';
export * from './reference/dsaIndexerPrefillReference.ts';
export * from './reference/dsaIndexerDecodeReference.ts';
export * from './reference/compareDsaLogits.ts';
export * from './reference/dsaTopkToPageTable.ts';

// Seeded inputs (full-entropy e4m3 queries, keys, block tables, ragged lengths, tie-heavy logits).
export * from './testing/dsaRandomInputs.ts';

// The index-key cache writer on the GPU.
// (cache section)
export * from './cache/dsaIndexCacheWriterInstance.ts';
export * from './cache/dsaIndexCacheWriterCatalog.ts';
export * from './cache/dsaIndexCacheWriterLauncher.ts';

// The lightning indexer on the GPU (prefill and paged decode).
// (indexer section)
export * from './indexer/dsaHeadSumPlan.ts';
export * from './indexer/emitDsaHeadSum.ts';
export * from './indexer/emitDsaRingBarriers.ts';
export * from './indexer/emitDsaKeyRingProducer.ts';
export * from './indexer/dsaIndexerSmem.ts';
export * from './indexer/checkDsaIndexerBuffers.ts';
export * from './indexer/dsaIndexerTileStep.ts';
export * from './indexer/dsaIndexerDecodeInstance.ts';
export * from './indexer/dsaIndexerDecodeCatalog.ts';
export * from './indexer/dsaIndexerDecodeLauncher.ts';
export * from './indexer/dsaIndexerPrefillInstance.ts';
export * from './indexer/dsaIndexerPrefillCatalog.ts';
export * from './indexer/dsaIndexerPrefillLauncher.ts';

// Exact top-k selection on the GPU.
// (topk section)
export * from './topk/dsaTopkKey.ts';
export * from './topk/dsaRadixSelectPlan.ts';
export * from './topk/dsaTopkOutput.ts';
export * from './topk/dsaTopkIndexOutput.ts';
export * from './topk/dsaTopkPageTableOutput.ts';
export * from './topk/dsaTopkHistogram.ts';
export * from './topk/dsaTopkCandidateList.ts';
export * from './topk/dsaTopkThresholdBin.ts';
export * from './topk/dsaTopkRowSweep.ts';
export * from './topk/dsaTopkInstanceParts.ts';
export * from './topk/dsaTopkInstance.ts';
export * from './topk/dsaTopkClusterPlan.ts';
export * from './topk/dsaTopkSliceLoad.ts';
export * from './topk/dsaTopkClusterExchange.ts';
export * from './topk/dsaTopkClusterInstance.ts';
export * from './topk/dsaTopkCatalog.ts';
export * from './topk/dsaTopkLauncher.ts';
export * from './topk/dsaTopkOrderedList.ts';
export * from './topk/dsaTopkTwoReadInstance.ts';
export * from './topk/dsaTopkTwoReadCatalog.ts';
export * from './topk/dsaRadixSelectTwoRead.ts';

// Sparse MLA attention: CPU references, checks, seeded inputs.
export * from './dsaSparseMlaShape.ts';
export * from './checkDsaSparseMlaConfig.ts';
export * from './reference/dsaBf16Bits.ts';
export * from './reference/dsaSparseMlaRowsReader.ts';
export * from './reference/dsaSparseMlaErrorBound.ts';
export * from './reference/dsaSparseMlaReference.ts';
export * from './reference/compareDsaSparseMla.ts';
export * from './testing/dsaSparseMlaInputs.ts';
export * from './testing/dsaSparseMlaGpuCases.ts';
export * from './testing/dsaSparseMlaDecodeCache.ts';
export * from './testing/dsaRandomDecodeStep.ts';
export * from './testing/checkDsaDecodeStepOutputs.ts';
export * from './testing/dsaRandomPrefillStep.ts';
export * from './testing/checkDsaPrefillStepOutputs.ts';
export * from './testing/dsaStepVerdict.ts';
export * from './testing/dsaFakeDeviceRanges.ts';

// The FP8 MLA latent cache (656 B/token) and its GPU writer.
export * from './dsaMlaCacheLayout.ts';
export * from './reference/dsaQuantizeMlaLatent.ts';
export * from './reference/dsaMlaCachePages.ts';
export * from './reference/dsaWriteMlaCacheReference.ts';
export * from './reference/dsaReadMlaCacheToken.ts';
export * from './reference/dsaMlaCacheRowReader.ts';
export * from './testing/dsaRandomMlaLatent.ts';
export * from './mlaCache/dsaMlaCacheWriterInstance.ts';
export * from './mlaCache/dsaMlaCacheWriterCatalog.ts';
export * from './mlaCache/dsaMlaCacheWriterLauncher.ts';

// Sparse MLA attention on the GPU: the prefill over a bf16 latent KV, the decode over the FP8 cache (split + combine).
export * from './attention/dsaSparseMlaSmem.ts';
export * from './attention/dsaSparseMlaChainSmem.ts';
export * from './attention/dsaSparseMlaCta.ts';
export * from './attention/dsaSparseMlaGemms.ts';
export * from './attention/emitDsaSwizzledRowCopy.ts';
export * from './attention/dsaSparseMlaEpilogueState.ts';
export * from './attention/emitDsaSparseMlaConsumers.ts';
export * from './attention/emitDsaSparseMlaEpilogue.ts';
export * from './attention/dsaSparseMlaChainGemms.ts';
export * from './attention/emitDsaSparseMlaChainProducer.ts';
export * from './attention/emitDsaSparseMlaChainConsumers.ts';
export * from './attention/dsaSparseMlaPrefillInstance.ts';
export * from './attention/dsaSparseMlaPrefillCatalog.ts';
export * from './attention/dsaSparseMlaPrefillLauncher.ts';
export * from './attention/checkDsaSparseMlaBuffers.ts';
export * from './attention/joinDsaSparseMlaRowSums.ts';
export * from './attention/emitDsaSparseMlaLoadQ.ts';
export * from './attention/emitDsaSparseMlaRing.ts';
export * from './attention/emitDsaSparseMlaBlock.ts';
export * from './attention/emitDsaSparseMlaFp8Producer.ts';
export * from './attention/emitDsaSparseMlaPartialEpilogue.ts';
export * from './attention/dsaSparseMlaOutWindow.ts';
export * from './attention/dsaSparseMlaDecodeInstance.ts';
export * from './attention/dsaSparseMlaCombineInstance.ts';
export * from './attention/dsaSparseMlaDecodeCatalog.ts';
export * from './attention/dsaSparseMlaDecodeLauncher.ts';

// Whole DSA paths on the GPU, one launch list each: decode (indexer → top-k to cache slots → sparse MLA decode + combine)
// and prefill (indexer → top-k → sparse MLA prefill).
export * from './step/dsaLaunchSequence.ts';
export * from './step/dsaDecodeStep.ts';
export * from './step/dsaPrefillStep.ts';
