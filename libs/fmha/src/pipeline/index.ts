export {
  FMHA_DYNAMIC_SMEM,
  FmhaFwdWsPipeline,
  type FmhaFwdInt8Scales,
  type FmhaFwdPvSkipArgs,
  type FmhaFwdWsArgs,
  type FmhaFwdWsPolicy,
} from './fmhaFwdWsPipeline.ts';
export { FmhaFwdSm80Pipeline, type FmhaFwdSm80Args, type FmhaFwdSm80Policy } from './fmhaFwdSm80Pipeline.ts';
export {
  FMHA_SM80_SPLIT_D_V_CHUNK,
  FmhaFwdSm80SplitDPipeline,
  splitDChunkAccumulatorOffset,
  splitDLoadOf,
  splitDRingPrologueLoads,
  splitDRingStep,
  splitDSharedPlan,
  type FmhaFwdSm80SplitDPolicy,
  type SplitDLoad,
  type SplitDRingOp,
  type SplitDSharedPlan,
} from './fmhaFwdSm80SplitDPipeline.ts';
export {
  FMHA_BWD_SM80_SPLIT_D_CHUNK,
  FmhaBwdSm80SplitDPipeline,
  splitDBwdLoadOf,
  splitDBwdPdsStores,
  splitDBwdSharedPlan,
  splitDBwdSliceCount,
  splitDBwdSliceOf,
  type FmhaBwdSm80SplitDArgs,
  type FmhaBwdSm80SplitDPolicy,
  type SplitDBwdLoad,
  type SplitDBwdPairStore,
  type SplitDBwdSharedPlan,
  type SplitDBwdSlice,
} from './fmhaBwdSm80SplitDPipeline.ts';
export { FMHA_BWD_DYNAMIC_SMEM, FmhaBwdWsPipeline, type FmhaBwdWsArgs, type FmhaBwdWsPolicy } from './fmhaBwdWsPipeline.ts';
export {
  FMHA_BWD_WS_SPLIT_D_SMEM,
  FmhaBwdWsSplitDPipeline,
  type FmhaBwdWsSplitDArgs,
  type FmhaBwdWsSplitDPolicy,
} from './fmhaBwdWsSplitDPipeline.ts';
export type { FmhaBwdWsSplitDContext } from './fmhaBwdWsSplitDContext.ts';
export {
  FMHA_BWD_SPLIT_D_ANY_DQ_ORDER,
  FMHA_BWD_SPLIT_D_KEY_DQ_ORDER,
  type FmhaBwdWsSplitDDqOrder,
  type FmhaBwdWsSplitDDqTile,
} from './fmhaBwdWsSplitDDqOrder.ts';
export type { FmhaFwdTileArgs } from './fmhaFwdTileArgs.ts';
export { emitFmhaFwdEpilogue, type FmhaFwdEpilogueTile } from './fmhaFwdEpilogue.ts';
export {
  BlockMaskKeyTileWalk,
  DenseKeyTileWalk,
  LutKeyTileWalk,
  type FmhaFwdKeyTileContext,
  type FmhaFwdKeyTileCursor,
  type FmhaFwdKeyTileWalk,
} from './fmhaFwdKeyTiles.ts';
export { FMHA_PV_SKIP_MODES, FmhaFwdPvSkipVote, type FmhaFwdPvSkipVoteArgs } from './fmhaFwdPvSkipVote.ts';
export type { FmhaFwdPvGate, FmhaFwdPvGateContext, FmhaFwdPvGateSite } from './fmhaFwdPvGate.ts';
export { FmhaFwdPvSkipGate } from './fmhaFwdPvSkipGate.ts';
export type { FmhaFwdQkDequantizeStep, FmhaFwdQkOperand } from './fmhaFwdQkOperand.ts';
export { FmhaFwdInt8QkOperand } from './fmhaFwdInt8QkOperand.ts';
export {
  FMHA_FWD_SEQUENTIAL_SCHEDULE,
  FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE,
  type FmhaFwdConsumerSchedule,
} from './fmhaFwdConsumerSchedule.ts';
export { FMHA_FWD_PINGPONG_SCHEDULE } from './fmhaFwdPingPongSchedule.ts';
export { FMHA_FWD_NO_TURNS, FmhaFwdWarpgroupTurns, type FmhaFwdIssueTurns } from './fmhaFwdWarpgroupTurns.ts';
export { FmhaFwdRecomputeSOutputSplit, type FmhaFwdOutputSplit } from './fmhaFwdOutputSplit.ts';
export { fmhaFwdKeyPartOf, type FmhaFwdKeyPart } from './fmhaFwdKeyPart.ts';
export { FMHA_FWD_RESIDENT_QK, type FmhaFwdKOperand, type FmhaFwdQkPlan, type FmhaFwdQkSource } from './fmhaFwdQkSource.ts';
export { FmhaFwdChunkedQkSource } from './fmhaFwdChunkedQkSource.ts';
export { FmhaFwdClusterQkSource } from './fmhaFwdClusterQkSource.ts';
export { FmhaFwdWsTileSteps, type FmhaFwdWsConsumerState } from './fmhaFwdWsTileSteps.ts';
export type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';
export { FmhaFwdWsRing, type FmhaFwdWsStage } from './fmhaFwdWsRing.ts';
export { FmhaFwdSharePOutputSplit } from './fmhaFwdSharePOutputSplit.ts';
