// @tilekit/fmha-launch: the launch side of attention kernels on the runtime. Re-exports only, by concept.

// Forward: buffer checks, TMA maps, shared kernel arguments, the loaded-kernel base.
export * from './fwd/index.ts';

// Forward on sm_80 (also built for Hopper): the instance around a main loop, its launcher.
export * from './sm80/index.ts';

// Backward row kernels (dot_do_o, convert_dq) for any head dim; what every dq_dk_dv launch shares (argument
// values, stride rules, TMA maps) and the runners' base.
export * from './bwd/index.ts';

// Score modifiers (soft-capping, ALiBi): their kernel parameter values from the caller's spec.
export * from './fmhaScoreArgValues.ts';
