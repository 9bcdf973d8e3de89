// The DSA prefill path on the GPU: the lightning indexer over a prefill chunk → exact top-k (token indices) → sparse MLA
// prefill over the bf16 latent KV, packed as one launch list on one stream with its scratch carved from one workspace.
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import { checkDeviceRange, type DeviceRange, type LoadableInstance } from '@tilekit/runtime';
import { packDsaSparseMlaPrefill, type DsaSparseMlaPrefillPackedLaunch } from '../attention/dsaSparseMlaPrefillLauncher.ts';
import { checkDsaSparseMlaPrefillConfig, type DsaSparseMlaPrefillConfig } from '../checkDsaSparseMlaConfig.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import type { DsaPackedLaunch } from '../dsaKernel.ts';
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import type { DsaTensorMapEncoder } from '../indexer/dsaIndexerDecodeLauncher.ts';
import {
  checkDsaIndexerPrefillConfig,
  packDsaIndexerPrefill,
  type CheckedDsaIndexerPrefillConfig,
  type DsaIndexerPrefillPackedLaunch,
} from '../indexer/dsaIndexerPrefillLauncher.ts';
import { checkDsaTopkConfig, packDsaTopk, type CheckedDsaTopkConfig, type DsaTopkPackedLaunch } from '../topk/dsaTopkLauncher.ts';

/** A prefill chunk: seqQ queries over seqKv contiguous tokens (each query's causal window given per row). */
export interface DsaPrefillStepConfig {
  readonly seqQ: number;
  readonly seqKv: number;
  /** Index query heads (32 or 64). */
  readonly indexHeads: number;
  /** MLA query heads (64 or 128). */
  readonly hQ: number;
  /** Tokens each query attends to (1 … 4096). */
  readonly topk: number;
  readonly smScale: number;
  readonly hasSink: boolean;
}

/** A checked prefill-step config: the three stages' checked configs. */
export interface CheckedDsaPrefillStepConfig extends DsaPrefillStepConfig {
  readonly indexer: CheckedDsaIndexerPrefillConfig;
  readonly topkConfig: CheckedDsaTopkConfig;
  readonly attention: DsaSparseMlaPrefillConfig;
}

/**
 * The device buffers of a prefill step: the indexer's (indexQ e4m3 [seqQ][indexHeads][128], indexWeights fp32
 * [seqQ][indexHeads], indexK e4m3 [seqKv][128], indexKScales fp32 [seqKv], windowStart / windowEnd int32 [seqQ]), the
 * attention's (q bf16 [seqQ][hQ][576], kv bf16 [seqKv][576], attnSink fp32 [hQ] when hasSink), the outputs (out bf16
 * [seqQ][hQ][512], lse and maxLogits fp32 [seqQ][hQ]) and the workspace (dsaPrefillStepWorkspaceBytes: logits, indices).
 */
export interface DsaPrefillStepBuffers {
  readonly indexQ: DeviceRange;
  readonly indexWeights: DeviceRange;
  readonly indexK: DeviceRange;
  readonly indexKScales: DeviceRange;
  readonly windowStart: DeviceRange;
  readonly windowEnd: DeviceRange;
  readonly q: DeviceRange;
  readonly kv: DeviceRange;
  readonly attnSink?: DeviceRange | undefined;
  readonly out: DeviceRange;
  readonly lse: DeviceRange;
  readonly maxLogits: DeviceRange;
  readonly workspace: DeviceRange;
}

/** The packed prefill step: each stage's launch, the list in stream order, and the workspace's logits and indices. */
export interface DsaPrefillStepPacked {
  readonly indexer: DsaIndexerPrefillPackedLaunch;
  readonly topk: DsaTopkPackedLaunch;
  readonly attention: DsaSparseMlaPrefillPackedLaunch;
  readonly launches: readonly DsaPackedLaunch<LoadableInstance>[];
  /** fp32 [seqQ][seqKv] indexer logits and int32 [seqQ][topk] selected token indices (−1 none). */
  readonly logits: DeviceRange;
  readonly indices: DeviceRange;
}

/**
 * Checks a prefill-step config with every stage's own checks: the indexer's, the top-k's (index output; rows seqQ of
 * seqKv logits) and the attention's (sQ = seqQ, sKv = seqKv, dims 576 / 512).
 * @throws DsaArgumentError naming the first broken field (the stage checks' names).
 */
export function checkDsaPrefillStepConfig(config: DsaPrefillStepConfig): CheckedDsaPrefillStepConfig {
  if (typeof config !== 'object' || config === null) throw new DsaArgumentError('config', 'must be an object', config);
  const indexer = checkDsaIndexerPrefillConfig({ seqQ: config.seqQ, seqKv: config.seqKv, heads: config.indexHeads });
  const topkConfig = checkDsaTopkConfig({ rows: config.seqQ, rowStride: config.seqKv, k: config.topk });
  const attention = checkDsaSparseMlaPrefillConfig({
    sQ: config.seqQ,
    hQ: config.hQ,
    sKv: config.seqKv,
    topk: config.topk,
    dQk: DSA_SPARSE_MLA_QK_DIM,
    dV: DSA_SPARSE_MLA_V_DIM,
    smScale: config.smScale,
    hasSink: config.hasSink,
    hasTopkLength: false,
  });
  return Object.freeze({ ...config, indexer, topkConfig, attention });
}

const ALIGN = 256;
const up = (n: number): number => Math.ceil(n / ALIGN) * ALIGN;

/** Bytes of a prefill step's workspace: the logits [seqQ][seqKv] fp32, then the indices [seqQ][topk] int32 (each 256-aligned). */
export function dsaPrefillStepWorkspaceBytes(c: CheckedDsaPrefillStepConfig): number {
  return up(c.seqQ * c.seqKv * 4) + up(c.seqQ * c.topk * 4);
}

/**
 * Checks the workspace (the rest is checked by each stage's packer, naming each buffer) and packs the indexer, the top-k
 * (token indices into the workspace) and the sparse MLA prefill reading them.
 * @throws ArgumentError naming `buffers.workspace` when it is short or misaligned, else what the stage packers throw.
 */
export function packDsaPrefillStep(
  c: CheckedDsaPrefillStepConfig,
  buffers: DsaPrefillStepBuffers,
  options: { readonly encode: DsaTensorMapEncoder },
): DsaPrefillStepPacked {
  if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
  const v = new ArgumentProblems(ArgumentError);
  v.check(() => checkDeviceRange('buffers.workspace', buffers.workspace, dsaPrefillStepWorkspaceBytes(c), ALIGN));
  v.throwIfAny();
  const logits = { ptr: buffers.workspace.ptr, bytes: up(c.seqQ * c.seqKv * 4) };
  const indices = { ptr: logits.ptr + BigInt(logits.bytes), bytes: up(c.seqQ * c.topk * 4) };
  const indexer = packDsaIndexerPrefill(
    c.indexer,
    {
      q: buffers.indexQ,
      weights: buffers.indexWeights,
      k: buffers.indexK,
      kScales: buffers.indexKScales,
      windowStart: buffers.windowStart,
      windowEnd: buffers.windowEnd,
      logits,
    },
    options.encode,
  );
  const topk = packDsaTopk(c.topkConfig, { logits, out: indices });
  const attention = packDsaSparseMlaPrefill(c.attention, {
    q: buffers.q,
    kv: buffers.kv,
    indices,
    attnSink: buffers.attnSink,
    out: buffers.out,
    maxLogits: buffers.maxLogits,
    lse: buffers.lse,
  });
  const launches = [indexer, topk, attention] as DsaPackedLaunch<LoadableInstance>[];
  return { indexer, topk, attention, launches, logits, indices };
}
