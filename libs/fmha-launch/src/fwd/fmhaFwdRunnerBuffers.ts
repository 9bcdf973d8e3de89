// The device memory of one run of a forward attention runner (dense or sparse).
import type { FmhaFwdBuffers } from './fmhaFwdBuffers.ts';

/**
 * Device memory of one run: the fields of a launch's {@link FmhaFwdBuffers}, with `o` and `lse`
 * always the final O and LSE (the runner holds the split-KV workspace itself); `lse` when the
 * problem asks for it, the group-mode arrays (int32), and the score modifier's values exactly when
 * the problem has one.
 */
export type FmhaFwdRunnerBuffers = FmhaFwdBuffers;
