// The sm_80 forward instances (cp.async + ldmatrix + mma.sync main loops; also run on sm_90 when
// built for it) and their launcher: the dense forward and FFPA operators name their own.
export * from './fmhaFwdSm80MainLoop.ts';
export * from './fmhaFwdSm80LoopInstance.ts';
export * from './fmhaFwdSm80Launcher.ts';
