export { FMHA_DYNAMIC_SMEM, FmhaFwdWsPipeline, type FmhaFwdWsArgs, type FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';
export { FmhaFwdSm80Pipeline, type FmhaFwdSm80Args, type FmhaFwdSm80Policy } from './fmhaFwdSm80Pipeline.ts';
export { FMHA_BWD_DYNAMIC_SMEM, FmhaBwdWsPipeline, type FmhaBwdWsArgs, type FmhaBwdWsPolicy } from './fmhaBwdWsPipeline.ts';
export type { FmhaFwdTileArgs } from './fmhaFwdTileArgs.ts';
export { emitFmhaFwdEpilogue, type FmhaFwdEpilogueTile } from './fmhaFwdEpilogue.ts';
