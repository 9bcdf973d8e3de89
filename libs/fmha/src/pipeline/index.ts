export { FMHA_DYNAMIC_SMEM, FmhaFwdWsPipeline, type FmhaFwdWsArgs, type FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';
