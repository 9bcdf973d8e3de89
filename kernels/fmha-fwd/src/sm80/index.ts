// The sm_80 attention-forward kernels (cp.async double buffering, ldmatrix + mma.sync; also run on
// sm_90 when built for it).
export * from './fmhaFwdSm80Instance.ts';
export * from './fmhaFwdSm80Catalog.ts';
export * from './fmhaFwdSm80Launcher.ts';
