// The instance catalog of attention backward: the compiled kernels of the three stages, and the
// (dot_do_o, dq_dk_dv, convert_dq) triples the pure launcher of @tilekit/fmha selects from, as
// records whose facts (kN0, dQ accumulation) come from the dq_dk_dv instances themselves.
import type {
  FmhaBwdConvertDqRecord,
  FmhaBwdDotDoORecord,
  FmhaBwdDqAccumulation,
  FmhaBwdDqDkDvRecord,
  FmhaBwdRecordTriple,
} from '@tilekit/fmha';
import { duplicateInstance } from '@tilekit/codegen';
import { TilekitError } from '@tilekit/numeric';
import { FMHA_BWD_KERNEL_DTYPES, FmhaBwdConvertDqInstance, FmhaBwdDotDoOInstance } from '@tilekit/fmha-launch';
import { FmhaBwdDqDkDvInstance, type FmhaBwdDqDkDvMaskKind } from './fmhaBwdDqDkDvInstance.ts';

export { FMHA_BWD_COMPILE_FLAGS } from '@tilekit/fmha-launch';

/**
 * The dq_dk_dv tile per head dim: 128 key rows (two consumer warpgroups), 2 Q/dO stages, and query
 * rows per step: 64 at d 128 (dK and dV take 128 registers), 128 at d 64 (measured on the H200:
 * 375 vs 277 TFLOP/s for the kernel alone at b2 h16 s8192, although ptxas reports C7512 —
 * some wgmma serialized for registers — for it).
 */
export function fmhaBwdTile(headDim: number): { readonly tileN: number; readonly tileM: number; readonly stages: number } {
  // Head dim 256: both consumer warpgroups share 64 key rows (see FmhaBwdWsPipeline.wide).
  if (headDim > 128) return Object.freeze({ tileN: 64, tileM: 64, stages: 2 });
  return Object.freeze({ tileN: 128, tileM: headDim <= 64 ? 128 : 64, stages: 2 });
}
/** Register budgets after setmaxnreg: 24 for the producer warpgroup, 240 for each consumer. */
export const FMHA_BWD_REGISTER_SPLIT = Object.freeze({ producerRegisters: 24, consumerRegisters: 240 });
/** Head dims (d = d_v) of the dq_dk_dv instances (dK and dV live in registers; at 256 split over two warpgroups). */
export const FMHA_BWD_HEAD_DIMS: readonly number[] = Object.freeze([64, 128, 256]);

/** Value head dims the dot_do_o instances cover. */
export const FMHA_BWD_DOT_DO_O_HEAD_DIMS: readonly number[] = Object.freeze([64, 128, 256]);
/** Head dims (of Q) the convert_dq instances cover. */
export const FMHA_BWD_CONVERT_DQ_HEAD_DIMS: readonly number[] = Object.freeze([64, 128, 256]);

/** dQ accumulation modes per head dim: 256 has only the atomic one (no deterministic instance yet). */
export function fmhaBwdDqModes(headDim: number): readonly ('atomic' | 'split')[] {
  return headDim > 128 ? ['atomic'] : ['atomic', 'split'];
}
export const FMHA_BWD_MASKS: readonly FmhaBwdDqDkDvMaskKind[] = Object.freeze(['none', 'window']);
/** Threads of the dot_do_o and convert_dq blocks. */
export const FMHA_BWD_ROW_KERNEL_THREADS = 128;

/** Two instances with one name or hash, or a triple naming a kernel the catalog does not have. */
export class FmhaBwdKernelCatalogError extends TilekitError {
  constructor(message: string) {
    super('fmha-bwd/catalog', message);
  }
}

/** `list`, frozen, once no two instances share a name or key hash (`duplicateInstance`): else `FmhaBwdKernelCatalogError`. */
function unique<T extends { readonly name: string; readonly key: { readonly hash: string } }>(
  what: string,
  list: readonly T[],
): readonly T[] {
  const dup = duplicateInstance(list);
  if (dup) throw new FmhaBwdKernelCatalogError(`two ${what} instances share the ${dup.field} ${dup.value}`);
  return Object.freeze([...list]);
}

/** dq_dk_dv: {fp16, bf16} × d {64, 128, 256} × mask {none, window} × dQ {atomic, split} (atomic only at 256). */
export const FMHA_BWD_DQ_DK_DV_CATALOG: readonly FmhaBwdDqDkDvInstance[] = unique(
  'dq_dk_dv',
  FMHA_BWD_KERNEL_DTYPES.flatMap((dtype) =>
    FMHA_BWD_HEAD_DIMS.flatMap((d) =>
      FMHA_BWD_MASKS.flatMap((mask) =>
        fmhaBwdDqModes(d).map(
          (dqMode) =>
            new FmhaBwdDqDkDvInstance({ dtype, headDim: d, headDimV: d, ...fmhaBwdTile(d), ...FMHA_BWD_REGISTER_SPLIT, mask, dqMode }),
        ),
      ),
    ),
  ),
);

/** dot_do_o: {fp16, bf16} × d_v {64, 128, 256} (batch and group mode at run time). */
export const FMHA_BWD_DOT_DO_O_CATALOG: readonly FmhaBwdDotDoOInstance[] = unique(
  'dot_do_o',
  FMHA_BWD_KERNEL_DTYPES.flatMap((dtype) =>
    FMHA_BWD_DOT_DO_O_HEAD_DIMS.map((headDimV) => new FmhaBwdDotDoOInstance({ dtype, headDimV, threads: FMHA_BWD_ROW_KERNEL_THREADS })),
  ),
);

/** convert_dq: {fp16, bf16} × d {64, 128, 256} × {atomic, deterministic} (batch and group mode at run time; any kN0). */
export const FMHA_BWD_CONVERT_DQ_CATALOG: readonly FmhaBwdConvertDqInstance[] = unique(
  'convert_dq',
  FMHA_BWD_KERNEL_DTYPES.flatMap((dtype) =>
    FMHA_BWD_CONVERT_DQ_HEAD_DIMS.flatMap((headDim) =>
      [false, true].map(
        (deterministic) => new FmhaBwdConvertDqInstance({ dtype, headDim, threads: FMHA_BWD_ROW_KERNEL_THREADS, deterministic }),
      ),
    ),
  ),
);

/** The dQ accumulation of a dq_dk_dv instance in a mode: `atomic`, or `split` = per-split stores (group) / the persistent split count (batch). */
export function fmhaBwdAccumulationOf(instance: FmhaBwdDqDkDvInstance, groupMode: boolean): FmhaBwdDqAccumulation {
  if (instance.policy.dqMode === 'atomic') return 'atomic';
  return groupMode ? 'splitStore' : 'persistent';
}

function find<T extends { readonly name: string }>(what: string, list: readonly T[], pick: (i: T) => boolean): T {
  const found = list.find(pick);
  if (found === undefined) throw new FmhaBwdKernelCatalogError(`no ${what} instance for a dq_dk_dv instance of the catalog`);
  return found;
}

/**
 * The launcher records of one dq_dk_dv instance in one mode, with its matching dot_do_o and
 * convert_dq: dtype and head dims equal, kN0 = the instance's `kN0`, the accumulation from its
 * `dqMode` (`fmhaBwdAccumulationOf`), masks [its mask kind], no bias/dropout/dBias, no seqlen limit.
 */
export function fmhaBwdTripleOf(
  instance: FmhaBwdDqDkDvInstance,
  groupMode: boolean,
  catalogs: { readonly dotDoO?: readonly FmhaBwdDotDoOInstance[]; readonly convertDq?: readonly FmhaBwdConvertDqInstance[] } = {},
): FmhaBwdRecordTriple {
  const P = instance.policy;
  const acc = fmhaBwdAccumulationOf(instance, groupMode);
  const dot = find(
    'dot_do_o',
    catalogs.dotDoO ?? FMHA_BWD_DOT_DO_O_CATALOG,
    (i) => i.policy.dtype === P.dtype && i.policy.headDimV === P.headDimV,
  );
  const deterministic = acc !== 'atomic';
  const conv = find(
    'convert_dq',
    catalogs.convertDq ?? FMHA_BWD_CONVERT_DQ_CATALOG,
    (i) => i.policy.dtype === P.dtype && i.policy.headDim === P.headDim && i.policy.deterministic === deterministic,
  );
  const dotDoO: FmhaBwdDotDoORecord = Object.freeze({ name: dot.name, dtype: P.dtype, hdimV: P.headDimV, groupMode, hasDropout: false });
  const dqDkDv: FmhaBwdDqDkDvRecord = Object.freeze({
    name: instance.name,
    dtype: P.dtype,
    hdimQ: P.headDim,
    hdimV: P.headDimV,
    groupMode,
    masks: Object.freeze([P.mask]),
    biases: Object.freeze(['none'] as const),
    hasDbias: false,
    hasDropout: false,
    storeRandval: false,
    dqAccumulation: acc,
    kN0: instance.kN0,
    maxSeqlenQ: 0,
  });
  const convertDq: FmhaBwdConvertDqRecord = Object.freeze({ name: conv.name, dtype: P.dtype, hdimQ: P.headDim, groupMode, deterministic });
  return Object.freeze({ dotDoO, dqDkDv, convertDq });
}

/**
 * Every triple the launcher may select, in priority order: per dq_dk_dv instance of
 * `FMHA_BWD_DQ_DK_DV_CATALOG`, its batch-mode and group-mode records. Postconditions (tested):
 * each passes `checkFmhaBwdRecordTriple`, names a compiled instance of the three catalogs, and for
 * every supported (dtype, d, mask, deterministic, mode) exactly one triple matches.
 */
export const FMHA_BWD_TRIPLES: readonly FmhaBwdRecordTriple[] = Object.freeze(
  FMHA_BWD_DQ_DK_DV_CATALOG.flatMap((i) => [fmhaBwdTripleOf(i, false), fmhaBwdTripleOf(i, true)]),
);

/** The compiled instances a triple names. */
export interface FmhaBwdKernelSet {
  readonly dotDoO: FmhaBwdDotDoOInstance;
  readonly dqDkDv: FmhaBwdDqDkDvInstance;
  readonly convertDq: FmhaBwdConvertDqInstance | null;
}

/** The compiled instances of `triple` (by name). @throws FmhaBwdKernelCatalogError when one is missing. */
export function fmhaBwdKernelsOf(
  triple: FmhaBwdRecordTriple,
  catalogs: {
    readonly dqDkDv?: readonly FmhaBwdDqDkDvInstance[];
    readonly dotDoO?: readonly FmhaBwdDotDoOInstance[];
    readonly convertDq?: readonly FmhaBwdConvertDqInstance[];
  } = {},
): FmhaBwdKernelSet {
  const byName = <T extends { readonly name: string }>(what: string, list: readonly T[], name: string): T => {
    const found = list.find((i) => i.name === name);
    if (found === undefined) throw new FmhaBwdKernelCatalogError(`the triple names ${what} ${name}, which the catalog does not have`);
    return found;
  };
  return {
    dotDoO: byName('dot_do_o', catalogs.dotDoO ?? FMHA_BWD_DOT_DO_O_CATALOG, triple.dotDoO.name),
    dqDkDv: byName('dq_dk_dv', catalogs.dqDkDv ?? FMHA_BWD_DQ_DK_DV_CATALOG, triple.dqDkDv.name),
    convertDq:
      triple.convertDq === null ? null : byName('convert_dq', catalogs.convertDq ?? FMHA_BWD_CONVERT_DQ_CATALOG, triple.convertDq.name),
  };
}

/** Every compiled instance of the three catalogs (what CI compiles). */
export const FMHA_BWD_ALL_INSTANCES: readonly (FmhaBwdDqDkDvInstance | FmhaBwdDotDoOInstance | FmhaBwdConvertDqInstance)[] = Object.freeze([
  ...FMHA_BWD_DQ_DK_DV_CATALOG,
  ...FMHA_BWD_DOT_DO_O_CATALOG,
  ...FMHA_BWD_CONVERT_DQ_CATALOG,
]);
