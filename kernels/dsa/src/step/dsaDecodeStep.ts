// One DSA decode step on the GPU: the paged lightning indexer → exact top-k straight to cache slots (page-table
// output) → sparse MLA attention over the FP8 cache (split + combine for small batches), packed as one launch list
// on one stream with its scratch carved from one workspace.
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import { checkDeviceRange, type DeviceRange, type LoadableInstance } from '@tilekit/runtime';
import {
  packDsaSparseMlaDecode,
  dsaSparseMlaDecodeSplit,
  dsaSparseMlaDecodeWorkspaceBytes,
  type DsaSparseMlaDecodePackedLaunches,
} from '../attention/dsaSparseMlaDecodeLauncher.ts';
import { checkDsaSparseMlaDecodeConfig, type DsaSparseMlaDecodeConfig } from '../checkDsaSparseMlaConfig.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import type { DsaPackedLaunch } from '../dsaKernel.ts';
import { DSA_MLA_PAGE_BYTES } from '../dsaMlaCacheLayout.ts';
import {
  checkDsaIndexerDecodeConfig,
  packDsaIndexerDecode,
  type CheckedDsaIndexerDecodeConfig,
  type DsaIndexerDecodePackedLaunch,
  type DsaTensorMapEncoder,
} from '../indexer/dsaIndexerDecodeLauncher.ts';
import { checkDsaTopkConfig, packDsaTopk, type CheckedDsaTopkConfig, type DsaTopkPackedLaunch } from '../topk/dsaTopkLauncher.ts';

/** A decode step: batch sequences of nextN queries over paged caches sharing one block table. */
export interface DsaDecodeStepConfig {
  readonly batch: number;
  /** Queries per sequence (1, or 2 with one MTP draft). */
  readonly nextN: number;
  /** Index query heads (32 or 64). */
  readonly indexHeads: number;
  /** Longest context (the logits' row length); every context length ≤ it. */
  readonly maxContext: number;
  /** Block-table width (≥ ⌈maxContext / 64⌉). */
  readonly maxPages: number;
  /** Pages of both caches (the index-key cache's 8448-B pages and the MLA cache's pages share the block table). */
  readonly numPages: number;
  /** MLA query heads (64 or 128). */
  readonly hQ: number;
  /** Tokens each query attends to (1 … 4096, the top-k's limit). */
  readonly topk: number;
  readonly smScale: number;
  readonly hasSink: boolean;
  /** Bytes between MLA cache pages (default 64 · 656). */
  readonly mlaPageStrideBytes?: number;
}

/** A checked step config: the three stages' checked configs. */
export interface CheckedDsaDecodeStepConfig extends DsaDecodeStepConfig {
  readonly indexer: CheckedDsaIndexerDecodeConfig;
  readonly topkConfig: CheckedDsaTopkConfig;
  readonly attention: DsaSparseMlaDecodeConfig;
}

/**
 * The device buffers of a step: the indexer's (indexQ e4m3 [batch][nextN][indexHeads][128], indexWeights fp32
 * [batch·nextN][indexHeads], indexCache, blockTable int32 [batch][maxPages], contextLens int32 [batch]), the attention's
 * (q bf16 [batch][nextN][hQ][576], mlaCache, attnSink fp32 [hQ] when hasSink), the outputs (out bf16
 * [batch][nextN][hQ][512], lse and maxLogits fp32 [batch][hQ][nextN]), and the workspace
 * (dsaDecodeStepWorkspaceBytes): logits, slots and the split partials.
 */
export interface DsaDecodeStepBuffers {
  readonly indexQ: DeviceRange;
  readonly indexWeights: DeviceRange;
  readonly indexCache: DeviceRange;
  readonly blockTable: DeviceRange;
  readonly contextLens: DeviceRange;
  readonly q: DeviceRange;
  readonly mlaCache: DeviceRange;
  readonly attnSink?: DeviceRange | undefined;
  readonly out: DeviceRange;
  readonly lse: DeviceRange;
  readonly maxLogits: DeviceRange;
  readonly workspace: DeviceRange;
}

/** The packed step: each stage's launch, the list in stream order, and the workspace's logits and slots. */
export interface DsaDecodeStepPacked {
  readonly indexer: DsaIndexerDecodePackedLaunch;
  readonly topk: DsaTopkPackedLaunch;
  readonly attention: DsaSparseMlaDecodePackedLaunches;
  readonly launches: readonly DsaPackedLaunch<LoadableInstance>[];
  /** fp32 [batch·nextN][maxContext] indexer logits and int32 [batch·nextN][topk] selected cache slots (page · 64 + offset, −1 none). */
  readonly logits: DeviceRange;
  readonly slots: DeviceRange;
}

/**
 * Checks a step config with every stage's own checks: the indexer's, the top-k's (page-table output, rowsPerSequence =
 * nextN; topk may exceed a context: short rows fill −1 slots) and the attention's (sQ = nextN).
 * @throws DsaArgumentError naming the first broken field (the stage checks' names: batch, heads, k, hQ, …).
 */
export function checkDsaDecodeStepConfig(config: DsaDecodeStepConfig): CheckedDsaDecodeStepConfig {
  if (typeof config !== 'object' || config === null) throw new DsaArgumentError('config', 'must be an object', config);
  const indexer = checkDsaIndexerDecodeConfig({
    batch: config.batch,
    nextN: config.nextN,
    heads: config.indexHeads,
    maxContext: config.maxContext,
    maxPages: config.maxPages,
    numPages: config.numPages,
  });
  const rows = config.batch * config.nextN;
  const topkConfig = checkDsaTopkConfig({
    rows,
    rowStride: config.maxContext,
    k: config.topk,
    pageTable: { rowsPerSequence: config.nextN, maxPages: config.maxPages },
  });
  const attention = checkDsaSparseMlaDecodeConfig({
    b: config.batch,
    sQ: config.nextN,
    hQ: config.hQ,
    topk: config.topk,
    numPages: config.numPages,
    pageStrideBytes: config.mlaPageStrideBytes ?? DSA_MLA_PAGE_BYTES,
    smScale: config.smScale,
    hasSink: config.hasSink,
    hasTopkLength: false,
  });
  return Object.freeze({ ...config, indexer, topkConfig, attention });
}

const ALIGN = 256;
const up = (n: number): number => Math.ceil(n / ALIGN) * ALIGN;

/** The workspace's regions: logits, slots, then the attention's split partials (each 256-aligned). */
function workspaceLayout(c: CheckedDsaDecodeStepConfig, smCount: number, splits?: number) {
  const rows = c.batch * c.nextN;
  const logits = up(rows * c.maxContext * 4);
  const slots = up(rows * c.topk * 4);
  const split = dsaSparseMlaDecodeSplit(c.attention, smCount, splits);
  const partials = dsaSparseMlaDecodeWorkspaceBytes(c.attention, split.splits);
  return { logits, slots, partials, splits: split.splits, bytes: logits + slots + partials };
}

/** Bytes of the workspace a step needs on `smCount` SMs (with `splits` forced, or the launcher's choice). */
export function dsaDecodeStepWorkspaceBytes(c: CheckedDsaDecodeStepConfig, smCount: number, splits?: number): number {
  return workspaceLayout(c, smCount, splits).bytes;
}

/**
 * Checks the step's buffers (the workspace here, the rest by each stage's packer, naming each) and packs the indexer,
 * the top-k (page-table output into the workspace's slots) and the attention (its partials in the workspace).
 * @throws ArgumentError naming `buffers.workspace` when it is short or misaligned, else what the stage packers throw.
 */
export function packDsaDecodeStep(
  c: CheckedDsaDecodeStepConfig,
  buffers: DsaDecodeStepBuffers,
  options: { readonly encode: DsaTensorMapEncoder; readonly smCount: number; readonly splits?: number },
): DsaDecodeStepPacked {
  if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
  const w = workspaceLayout(c, options.smCount, options.splits);
  const v = new ArgumentProblems(ArgumentError);
  v.check(() => checkDeviceRange('buffers.workspace', buffers.workspace, w.bytes, ALIGN));
  v.throwIfAny();
  const base = buffers.workspace.ptr;
  const logits = { ptr: base, bytes: w.logits };
  const slots = { ptr: base + BigInt(w.logits), bytes: w.slots };
  const partials = w.partials === 0 ? undefined : { ptr: base + BigInt(w.logits + w.slots), bytes: w.partials };
  const indexer = packDsaIndexerDecode(
    c.indexer,
    {
      q: buffers.indexQ,
      weights: buffers.indexWeights,
      cache: buffers.indexCache,
      blockTable: buffers.blockTable,
      contextLens: buffers.contextLens,
      logits,
    },
    options.encode,
    options.smCount,
  );
  const topk = packDsaTopk(c.topkConfig, { logits, out: slots, blockTable: buffers.blockTable });
  const attention = packDsaSparseMlaDecode(
    c.attention,
    {
      q: buffers.q,
      cache: buffers.mlaCache,
      indices: slots,
      attnSink: buffers.attnSink,
      out: buffers.out,
      lse: buffers.lse,
      maxLogits: buffers.maxLogits,
      workspace: partials,
    },
    // The split the workspace was sized for (one choice, not a second one that could differ).
    { smCount: options.smCount, splits: w.splits },
  );
  const launches = [indexer, topk, attention.decode, ...(attention.combine === undefined ? [] : [attention.combine])];
  return { indexer, topk, attention, launches: launches as DsaPackedLaunch<LoadableInstance>[], logits, slots };
}
