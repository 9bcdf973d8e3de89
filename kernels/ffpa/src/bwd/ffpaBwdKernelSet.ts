// The three kernels of one FFPA backward problem (dot_do_o, dq_dk_dv, convert_dq) and the records
// @tilekit/fmha's pure launcher selects and sizes the workspace from. dq_dk_dv comes from one of two
// paths: `sm90` (FFPA_BWD_SM90_CATALOG: the warp-specialized wgmma + TMA pipeline, d = d_v ≤ 512) or
// `sm80` (FFPA_BWD_CATALOG: the mma.sync pipeline built for sm_90a, every FFPA head-dim pair).
import type { CheckedFmhaBwdProblem, FmhaBwdRecordTriple } from '@tilekit/fmha';
import type { FmhaBwdConvertDqInstance, FmhaBwdDotDoOInstance } from '@tilekit/fmha-launch';
import { ArgumentError, TilekitError } from '@tilekit/numeric';
import { FFPA_BWD_CATALOG } from './ffpaBwdCatalog.ts';
import type { FfpaBwdInstance } from './ffpaBwdInstance.ts';
import { FFPA_BWD_CONVERT_DQ_CATALOG, FFPA_BWD_DOT_DO_O_CATALOG } from './ffpaBwdRowCatalog.ts';
import { FFPA_BWD_SM90_CATALOG } from './ffpaBwdSm90Catalog.ts';
import { FfpaBwdSm90Instance } from './ffpaBwdSm90Instance.ts';

/** No FFPA backward instance for a checked problem (a catalog without its dtype, head dims or mask kind). */
export class NoFfpaBwdInstanceError extends TilekitError {
  constructor(message: string) {
    super('ffpa/no-bwd-instance', message);
  }
}

/** Which dq_dk_dv pipeline runs the backward: `sm90` (wgmma + TMA, warp-specialized) or `sm80` (mma.sync + cp.async). */
export type FfpaBwdPath = 'sm80' | 'sm90';

/** A dq_dk_dv instance of either path. */
export type FfpaBwdDqDkDvInstance = FfpaBwdInstance | FfpaBwdSm90Instance;

/** What a kernel set of either path holds beside its dq_dk_dv: the row kernels and the launcher records. */
export interface FfpaBwdKernelSetBase {
  readonly dotDoO: FmhaBwdDotDoOInstance;
  readonly convertDq: FmhaBwdConvertDqInstance;
  readonly triple: FmhaBwdRecordTriple;
}

/** The instances of one backward call and their launcher records; `path` tells which kind `dqDkDv` is. */
export type FfpaBwdKernelSet =
  | (FfpaBwdKernelSetBase & { readonly path: 'sm90'; readonly dqDkDv: FfpaBwdSm90Instance })
  | (FfpaBwdKernelSetBase & { readonly path: 'sm80'; readonly dqDkDv: FfpaBwdInstance });

/** How `ffpaBwdKernelSet` picks dq_dk_dv. */
export interface FfpaBwdKernelSetOptions {
  /** Default: `ffpaBwdDefaultPath(p)`. */
  readonly path?: FfpaBwdPath;
  /** The sm_90a path's instances (default FFPA_BWD_SM90_CATALOG). */
  readonly sm90Catalog?: readonly FfpaBwdSm90Instance[];
  /** The sm_80 path's instances (default FFPA_BWD_CATALOG). */
  readonly sm80Catalog?: readonly FfpaBwdInstance[];
}

const maskKindOf = (p: CheckedFmhaBwdProblem): 'none' | 'window' => (p.mask.kind === 'none' ? 'none' : 'window');

/** The workspace layout an instance adds dQ into (the sm_80 path: atomics). Deterministic problems take `ordered` ones. */
const dqAccumulationOf = (i: FfpaBwdDqDkDvInstance): 'atomic' | 'ordered' =>
  i instanceof FfpaBwdSm90Instance ? i.dqAccumulation : 'atomic';

const matches =
  (p: CheckedFmhaBwdProblem) =>
  (i: FfpaBwdDqDkDvInstance): boolean =>
    i.policy.dtype === p.dtype &&
    i.policy.headDim === p.hdimQ &&
    i.policy.headDimV === p.hdimV &&
    i.policy.mask === maskKindOf(p) &&
    (dqAccumulationOf(i) === 'ordered') === p.deterministic;

/** `sm90` when `sm90Catalog` has an instance of the problem's dtype, head dims and mask kind, else `sm80`. */
export function ffpaBwdDefaultPath(
  p: CheckedFmhaBwdProblem,
  sm90Catalog: readonly FfpaBwdSm90Instance[] = FFPA_BWD_SM90_CATALOG,
): FfpaBwdPath {
  return sm90Catalog.some(matches(p)) ? 'sm90' : 'sm80';
}

function find<T extends { readonly name: string }>(what: string, list: readonly T[], pick: (i: T) => boolean, p: CheckedFmhaBwdProblem): T {
  const found = list.find(pick);
  if (found === undefined) throw new NoFfpaBwdInstanceError(`no FFPA backward ${what} instance for ${p.dtype} d${p.hdimQ} dv${p.hdimV}`);
  return found;
}

/**
 * The kernels of `p` (checked by `checkFfpaBwdProblem`): the dq_dk_dv instance of its dtype, head
 * dims and mask kind on `options.path` (default `ffpaBwdDefaultPath`: sm90 where its catalog has
 * one), dot_do_o of its d_v, convert_dq of its d; records with kN0 = the dq_dk_dv tile, dQ by
 * atomics, masks [its mask kind], no bias, dropout or dBias. Throws `ArgumentError` naming
 * `options.path` for another path, `NoFfpaBwdInstanceError` when the path's catalog lacks the problem.
 */
export function ffpaBwdKernelSet(p: CheckedFmhaBwdProblem, options: FfpaBwdKernelSetOptions = {}): FfpaBwdKernelSet {
  const sm90Catalog = options.sm90Catalog ?? FFPA_BWD_SM90_CATALOG;
  const path = options.path ?? ffpaBwdDefaultPath(p, sm90Catalog);
  if (path !== 'sm90' && path !== 'sm80') throw new ArgumentError('options.path', 'must be "sm90" or "sm80"', path);
  if (path === 'sm80' && p.deterministic)
    throw new ArgumentError('options.path', 'must be "sm90" for a deterministic problem (the sm_80 path adds dQ with atomics)', path);
  const maskKind = maskKindOf(p);
  const dq =
    path === 'sm90'
      ? { path, dqDkDv: find('sm_90a dq_dk_dv', sm90Catalog, matches(p), p) }
      : { path, dqDkDv: find('sm_80 dq_dk_dv', options.sm80Catalog ?? FFPA_BWD_CATALOG, matches(p), p) };
  const { dqDkDv } = dq;
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
      dqAccumulation: dqAccumulationOf(dqDkDv),
      kN0: dqDkDv.kN0,
      ...(dqDkDv instanceof FfpaBwdSm90Instance ? { kM0: dqDkDv.kM0 } : {}),
      maxSeqlenQ: 0,
    }),
    convertDq: Object.freeze({ name: convertDq.name, dtype: p.dtype, hdimQ: p.hdimQ, groupMode, deterministic: false }),
  });
  return Object.freeze({ ...dq, dotDoO, convertDq, triple });
}
