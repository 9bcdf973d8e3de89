// The launch side of the dense forward's sm_80 instances: @tilekit/fmha-launch's sm_80 launcher
// (packed kernel arguments and grid from a checked problem and device buffers, validated before
// anything reaches the GPU), under the names this package has always exported.
export {
  FmhaFwdSm80Kernel,
  fmhaFwdSm80Unsupported,
  prepareFmhaFwdSm80Launch,
  type FmhaFwdSm80Buffers,
  type PreparedFmhaFwdSm80Launch,
} from '@tilekit/fmha-launch';
