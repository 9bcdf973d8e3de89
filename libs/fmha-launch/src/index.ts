// @tilekit/fmha-launch: the launch side of attention kernels on the runtime. Re-exports only, by concept.

// Forward: buffer checks, TMA maps, shared kernel arguments, the loaded-kernel base.
export * from './fwd/index.ts';
