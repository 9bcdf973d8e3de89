// What the backward's two small row kernels (dot_do_o, convert_dq) share: an fp16/bf16 dtype, a
// row tile over one head dim, an instance key built from the same fields, one block per (row tile,
// query head, batch) and no shared memory. Each subclass brings only its parameters and its body.
import {
  instanceKey,
  int32,
  KernelInstance,
  kernelParam,
  type InstanceKey,
  type KernelParams,
  type KernelSourceHeader,
  type Target,
} from '@tilekit/codegen';
import { ArgumentError } from '@tilekit/numeric';
import { fmhaBwdRowTile, type FmhaBwdRowTile } from './fmhaBwdRowTileEncoding.ts';

/** Element types of the row kernels' fp16/bf16 operands (O, dO, dQ). */
export const FMHA_BWD_KERNEL_DTYPES = ['fp16', 'bf16'] as const;
/** One of {@link FMHA_BWD_KERNEL_DTYPES}. */
export type FmhaBwdKernelDType = (typeof FMHA_BWD_KERNEL_DTYPES)[number];

/** Largest sequence length a row kernel's parameter may carry (as the dq_dk_dv kernel). */
export const FMHA_BWD_ROW_MAX_ROWS = 2 ** 30;

/** The parameters every row kernel ends with: batch-mode rows per sequence, group-mode starts (null in batch mode). */
export function fmhaBwdRowSequenceParams() {
  return {
    seqlen_q: kernelParam.i32({ range: [0, FMHA_BWD_ROW_MAX_ROWS] }),
    seqstart_q: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
  };
}

/** The launch of a row kernel: grid (row tiles, query heads, batch), threads, no dynamic shared memory. */
export interface FmhaBwdRowLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

/** The policy fields every row kernel has. */
export interface FmhaBwdRowKernelPolicy {
  readonly dtype: FmhaBwdKernelDType;
  /** Threads per block (whole warps). */
  readonly threads: number;
}

/** How a row kernel differs from the other: its name, head dim, vectors, extra key fields and parameters. */
export interface FmhaBwdRowKernelSpec<Policy extends FmhaBwdRowKernelPolicy, Params extends KernelParams> {
  /** The instance key's family (the name's prefix). */
  readonly family: string;
  /** The kernel's short name in the generated source's header. */
  readonly label: string;
  /** The head dim the tile spans: its key field, the name's tag, and its value. */
  readonly headDim: { readonly key: string; readonly tag: string; readonly value: number };
  /** Elements per 16-byte vector of the tile's widest access. */
  readonly vectorLength: number;
  /** Elements each thread should hold (sizes the tile's rows). */
  readonly elementsPerThread: number;
  /** Key fields after `threads` (with their name tags), for a policy choice the name must show. */
  readonly extraKey?: { readonly config: Readonly<Record<string, number>>; readonly tags: Readonly<Record<string, string>> };
  /** Policy checks beyond the dtype (run after it), throwing ArgumentError. */
  readonly check?: (policy: Policy) => void;
  /** The kernel's parameters for the (frozen) policy on `target`. */
  readonly params: (policy: Policy, target: Target) => Params;
}

function rowKernelKey<Policy extends FmhaBwdRowKernelPolicy, Params extends KernelParams>(
  policy: Policy,
  target: Target,
  spec: FmhaBwdRowKernelSpec<Policy, Params>,
  rows: number,
): InstanceKey {
  const { headDim, extraKey } = spec;
  return instanceKey(
    spec.family,
    { dtype: policy.dtype, [headDim.key]: headDim.value, rows, threads: policy.threads, ...extraKey?.config, target: target.name },
    { tags: { dtype: '', [headDim.key]: headDim.tag, rows: 'm', threads: 't', ...extraKey?.tags } },
  );
}

/**
 * A backward row kernel: one block per (row tile, query head, batch), `policy.threads` threads, no
 * shared memory. The key's name is `family_<dtype>_<tag><headDim>_m<rows>_t<threads>[extra]`.
 * @throws ArgumentError when `policy.dtype` is not fp16/bf16, or the spec's check fails.
 */
export abstract class FmhaBwdRowKernel<Policy extends FmhaBwdRowKernelPolicy, Params extends KernelParams> extends KernelInstance<
  Policy,
  Params
> {
  readonly tile: FmhaBwdRowTile;
  protected readonly sourceHeader: KernelSourceHeader;

  protected constructor(policy: Policy, target: Target, spec: FmhaBwdRowKernelSpec<Policy, Params>) {
    if (!(FMHA_BWD_KERNEL_DTYPES as readonly string[]).includes(policy.dtype))
      throw new ArgumentError('policy.dtype', `must be one of ${FMHA_BWD_KERNEL_DTYPES.join(', ')}`, policy.dtype);
    spec.check?.(policy);
    const frozen = Object.freeze({ ...policy });
    const tile = fmhaBwdRowTile({
      cols: spec.headDim.value,
      vectorLength: spec.vectorLength,
      threads: policy.threads,
      elementsPerThread: spec.elementsPerThread,
    });
    const key = rowKernelKey(policy, target, spec, tile.rows);
    super({ key, policy: frozen, target, params: spec.params(frozen, target), threads: policy.threads });
    this.tile = tile;
    this.sourceHeader = { title: `fmha backward ${spec.label}`, generator: '@tilekit/fmha-launch' };
  }

  /** Query rows per block. */
  get tileM(): number {
    return this.tile.rows;
  }

  /** Grid for `batch` sequences of at most `maxSeqlenQ` (physical) rows and `nheadQ` heads. */
  launch(batch: number, nheadQ: number, maxSeqlenQ: number): FmhaBwdRowLaunch {
    return { grid: [Math.max(1, Math.ceil(maxSeqlenQ / this.tile.rows)), nheadQ, batch], block: [this.threads, 1, 1], sharedBytes: 0 };
  }
}
