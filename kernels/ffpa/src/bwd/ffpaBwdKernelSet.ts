// The three kernels of one FFPA backward problem (dot_do_o, dq_dk_dv, convert_dq) and the records
// @tilekit/fmha's pure launcher selects and sizes the workspace from.
import type { CheckedFmhaBwdProblem, FmhaBwdRecordTriple } from '@tilekit/fmha';
import type { FmhaBwdConvertDqInstance, FmhaBwdDotDoOInstance } from '@tilekit/fmha-launch';
import { TilekitError } from '@tilekit/numeric';
import { FFPA_BWD_CATALOG } from './ffpaBwdCatalog.ts';
import type { FfpaBwdInstance } from './ffpaBwdInstance.ts';
import { FFPA_BWD_CONVERT_DQ_CATALOG, FFPA_BWD_DOT_DO_O_CATALOG } from './ffpaBwdRowCatalog.ts';

/** No FFPA backward instance for a checked problem (a catalog without its dtype, head dims or mask kind). */
export class NoFfpaBwdInstanceError extends TilekitError {
  constructor(message: string) {
    super('ffpa/no-bwd-instance', message);
  }
}

/** The instances of one backward call and their launcher records. */
export interface FfpaBwdKernelSet {
  readonly dotDoO: FmhaBwdDotDoOInstance;
  readonly dqDkDv: FfpaBwdInstance;
  readonly convertDq: FmhaBwdConvertDqInstance;
  readonly triple: FmhaBwdRecordTriple;
}

function find<T extends { readonly name: string }>(what: string, list: readonly T[], pick: (i: T) => boolean, p: CheckedFmhaBwdProblem): T {
  const found = list.find(pick);
  if (found === undefined) throw new NoFfpaBwdInstanceError(`no FFPA backward ${what} instance for ${p.dtype} d${p.hdimQ} dv${p.hdimV}`);
  return found;
}

/**
 * The kernels of `p` (checked by `checkFfpaBwdProblem`): the dq_dk_dv instance of its dtype, head
 * dims and mask kind, dot_do_o of its d_v, convert_dq of its d; records with kN0 = the dq_dk_dv
 * tile, dQ by atomics, masks [its mask kind], no bias, dropout or dBias.
 */
export function ffpaBwdKernelSet(p: CheckedFmhaBwdProblem, catalog: readonly FfpaBwdInstance[] = FFPA_BWD_CATALOG): FfpaBwdKernelSet {
  const maskKind = p.mask.kind === 'none' ? 'none' : 'window';
  const dqDkDv = find(
    'dq_dk_dv',
    catalog,
    (i) => i.policy.dtype === p.dtype && i.policy.headDim === p.hdimQ && i.policy.headDimV === p.hdimV && i.policy.mask === maskKind,
    p,
  );
  const dotDoO = find('dot_do_o', FFPA_BWD_DOT_DO_O_CATALOG, (i) => i.policy.dtype === p.dtype && i.policy.headDimV === p.hdimV, p);
  const convertDq = find('convert_dq', FFPA_BWD_CONVERT_DQ_CATALOG, (i) => i.policy.dtype === p.dtype && i.policy.headDim === p.hdimQ, p);
  const groupMode = p.mode === 'group';
  const triple: FmhaBwdRecordTriple = Object.freeze({
    dotDoO: Object.freeze({ name: dotDoO.name, dtype: p.dtype, hdimV: p.hdimV, groupMode, hasDropout: false }),
    dqDkDv: Object.freeze({
      name: dqDkDv.name,
      dtype: p.dtype,
      hdimQ: p.hdimQ,
      hdimV: p.hdimV,
      groupMode,
      masks: Object.freeze([maskKind] as const),
      biases: Object.freeze(['none'] as const),
      hasDbias: false,
      hasDropout: false,
      storeRandval: false,
      dqAccumulation: 'atomic' as const,
      kN0: dqDkDv.kN0,
      maxSeqlenQ: 0,
    }),
    convertDq: Object.freeze({ name: convertDq.name, dtype: p.dtype, hdimQ: p.hdimQ, groupMode, deterministic: false }),
  });
  return Object.freeze({ dotDoO, dqDkDv, convertDq, triple });
}
