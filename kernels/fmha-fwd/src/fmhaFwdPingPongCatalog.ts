// Forward instances with the ping-pong schedule (two consumer warpgroups taking turns to issue their
// GEMMs), beside the dense catalog and compiled in CI like it (fmhaFwdCatalog.compile.spec.ts). They
// compute bitwise what the dense catalog's softmax-overlapped instances compute; dispatch picks them
// only once a recorded benchmark shows them faster.
import { FMHA_FWD_DTYPES, FMHA_FWD_PINGPONG_SCHEDULE, FMHA_FWD_REGISTER_SPLIT, FMHA_FWD_STAGES } from '@tilekit/fmha';
import { FMHA_FWD_MASKS, FMHA_FWD_TILES } from './fmhaFwdCatalog.ts';
import { FmhaFwdInstance } from '@tilekit/fmha-launch';

/** The one-pass instances of every dtype and mask at the dense catalog's softmax-overlapped tiles (d 64 and 128), in ping-pong. */
export const FMHA_FWD_PINGPONG_CATALOG: readonly FmhaFwdInstance[] = Object.freeze(
  FMHA_FWD_DTYPES.flatMap((dtype) =>
    FMHA_FWD_TILES.filter((t) => t.schedule !== undefined).flatMap((dims) =>
      FMHA_FWD_MASKS.map(
        (mask) =>
          new FmhaFwdInstance({
            dtype,
            ...dims,
            schedule: FMHA_FWD_PINGPONG_SCHEDULE,
            stages: FMHA_FWD_STAGES,
            ...FMHA_FWD_REGISTER_SPLIT,
            mask,
            splitKv: false,
          }),
      ),
    ),
  ),
);
