import { ArgumentError } from '@tilekit/numeric';
import type { AttentionTensorStrides } from '../reference/attentionTensorLayout.ts';
import type { FmhaScoreModifierSpec } from '../scoreMod/fmhaScoreModifier.ts';
import type { CheckedFmhaBwdTraits } from './fmhaBwdTraits.ts';

/** A backward argument broke a rule; `argument` is `args.<field>`. */
export class FmhaBwdArgsError extends ArgumentError {}

/** A device tensor of Q/K/V/O/dO/dQ/dK/dV/bias shape: its address and element strides (head dim contiguous). */
export interface FmhaBwdTensorArg {
  readonly ptr: bigint;
  readonly strides: AttentionTensorStrides;
}

/**
 * A device fp32 array with one value per (batch, head, row) — LSE and D (CK's "lsed" layout):
 * element at b·batch + h·head + row (group mode: row global, batch unused).
 */
export interface FmhaBwdRowsArg {
  readonly ptr: bigint;
  readonly strides: { readonly batch: number; readonly head: number };
}

/** Dropout of the forward being differentiated (the same Philox stream). */
export interface FmhaBwdDropoutArg {
  /** Probability of dropping, in [0, 1). */
  readonly probability: number;
  readonly seed: bigint;
  readonly offset: bigint;
  /** With `storeRandval`: where the random values go. */
  readonly randval?: FmhaBwdTensorArg;
}

/**
 * CK-tile's `fmha_bwd_args` of the unified-workspace revision: device addresses (bigint, 0n =
 * absent) and strides of every tensor, the scale, and ONE `workspace` address — the dq_acc
 * buffer, its strides and its split layout are the launcher's business, never the caller's.
 * Shapes come from the launcher's traits. K/V/dK/dV have nheadK heads (dK/dV summed over the
 * query heads of a KV head); Q/O/dO/dQ, LSE and D have nheadQ.
 */
export interface FmhaBwdArgs {
  readonly q: FmhaBwdTensorArg;
  readonly k: FmhaBwdTensorArg;
  readonly v: FmhaBwdTensorArg;
  readonly o: FmhaBwdTensorArg;
  readonly dO: FmhaBwdTensorArg;
  /** The forward's LSE (natural log), read. */
  readonly lse: FmhaBwdRowsArg;
  /** D = rowsum(dO ∘ O), written by dot_do_o and read by dq_dk_dv. */
  readonly d: FmhaBwdRowsArg;
  readonly dQ: FmhaBwdTensorArg;
  readonly dK: FmhaBwdTensorArg;
  readonly dV: FmhaBwdTensorArg;
  /** Elementwise bias ([batch][nheadQ][sq][sk] in `strides` with row = query, head dim = key). */
  readonly bias?: FmhaBwdTensorArg;
  /** ALiBi slopes (fp32, one per query head). */
  readonly alibiSlopes?: bigint;
  readonly dBias?: FmhaBwdTensorArg;
  readonly dropout?: FmhaBwdDropoutArg;
  /** Group mode: device int32 cumulative physical rows (batch + 1 each). */
  readonly seqstartQ?: bigint;
  readonly seqstartK?: bigint;
  /** Group mode, optional: device int32 keys used per batch (at most the slot). */
  readonly seqlenK?: bigint;
  /** Softmax scale of the forward (finite, > 0). */
  readonly scale: number;
  /** The prepared workspace (0n when the launcher's workspace size is 0). */
  readonly workspace: bigint;
  /**
   * The values of the score modifier a dq_dk_dv kernel is built with (its cap, or ALiBi's fp32
   * slopes), passed through to the executor, which checks them against the kernel; absent for a
   * kernel without one. Not CK's `alibiSlopes` bias, which the traits select.
   */
  readonly scoreModifier?: FmhaScoreModifierSpec;
}

function fail(field: string, rule: string, found: unknown): never {
  throw new FmhaBwdArgsError(`args.${field}`, rule, found);
}

function address(field: string, v: unknown, required: boolean): bigint {
  if (typeof v !== 'bigint' || v < 0n) fail(field, 'must be a device address (a non-negative bigint)', v);
  if (required && v === 0n) fail(field, 'is required (got a null address)', v);
  return v;
}

function stride(field: string, v: unknown): void {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(field, 'must be a non-negative integer element stride', v);
}

function tensor(field: string, t: FmhaBwdTensorArg | undefined, required: boolean): void {
  if (t === undefined) {
    if (required) fail(field, 'is required', t);
    return;
  }
  if (typeof t !== 'object' || t === null) fail(field, 'must be { ptr, strides }', t);
  address(`${field}.ptr`, t.ptr, true);
  if (typeof t.strides !== 'object' || t.strides === null) fail(`${field}.strides`, 'must be { batch, head, row }', t.strides);
  for (const k of ['batch', 'head', 'row'] as const) stride(`${field}.strides.${k}`, t.strides[k]);
}

function rows(field: string, r: FmhaBwdRowsArg): void {
  if (typeof r !== 'object' || r === null) fail(field, 'must be { ptr, strides }', r);
  address(`${field}.ptr`, r.ptr, true);
  if (typeof r.strides !== 'object' || r.strides === null) fail(`${field}.strides`, 'must be { batch, head }', r.strides);
  for (const k of ['batch', 'head'] as const) stride(`${field}.strides.${k}`, r.strides[k]);
}

function forbid(field: string, v: unknown, why: string): void {
  if (v !== undefined) fail(field, `must be omitted (${why})`, v);
}

/**
 * Checks `args` against the traits of its launcher and the workspace size: every required
 * tensor present with a non-null address and non-negative strides; bias / alibiSlopes / dBias /
 * dropout (+ randval) present exactly when the traits ask for them (probability in [0, 1));
 * group mode needs seqstartQ/seqstartK (batch mode forbids them); scale finite > 0; `workspace`
 * 0n iff `workspaceBytes` is 0, else non-null and 16-byte aligned.
 * @throws FmhaBwdArgsError naming `args.<field>` and the rule.
 */
export function checkFmhaBwdArgs(traits: CheckedFmhaBwdTraits, args: FmhaBwdArgs, workspaceBytes: number): void {
  if (typeof args !== 'object' || args === null) throw new FmhaBwdArgsError('args', 'must be an object', args);
  for (const name of ['q', 'k', 'v', 'o', 'dO', 'dQ', 'dK', 'dV'] as const) tensor(name, args[name], true);
  rows('lse', args.lse);
  rows('d', args.d);
  if (traits.bias === 'elementwise') tensor('bias', args.bias, true);
  else forbid('bias', args.bias, `traits.bias is ${traits.bias}`);
  if (traits.bias === 'alibi') address('alibiSlopes', args.alibiSlopes, true);
  else forbid('alibiSlopes', args.alibiSlopes, `traits.bias is ${traits.bias}`);
  if (traits.hasDbias) tensor('dBias', args.dBias, true);
  else forbid('dBias', args.dBias, 'traits.hasDbias is false');
  if (traits.hasDropout) {
    const d = args.dropout;
    if (typeof d !== 'object' || d === null) fail('dropout', 'is required with traits.hasDropout', d);
    if (typeof d.probability !== 'number' || !(d.probability >= 0 && d.probability < 1))
      fail('dropout.probability', 'must be a number in [0, 1)', d.probability);
    address('dropout.seed', d.seed, false);
    address('dropout.offset', d.offset, false);
    if (traits.storeRandval) tensor('dropout.randval', d.randval, true);
    else forbid('dropout.randval', d.randval, 'traits.storeRandval is false');
  } else forbid('dropout', args.dropout, 'traits.hasDropout is false');
  if (traits.groupMode) {
    address('seqstartQ', args.seqstartQ, true);
    address('seqstartK', args.seqstartK, true);
    if (args.seqlenK !== undefined) address('seqlenK', args.seqlenK, true);
  } else {
    for (const name of ['seqstartQ', 'seqstartK', 'seqlenK'] as const) forbid(name, args[name], 'batch mode');
  }
  if (typeof args.scale !== 'number' || !Number.isFinite(args.scale) || args.scale <= 0)
    fail('scale', 'must be a finite number > 0', args.scale);
  const ws = address('workspace', args.workspace, false);
  if (workspaceBytes === 0) {
    if (ws !== 0n) fail('workspace', 'must be 0n: this launcher needs no workspace', `0x${ws.toString(16)}`);
  } else {
    if (ws === 0n) fail('workspace', `is required: this launcher needs ${workspaceBytes} bytes`, ws);
    if (ws % 16n !== 0n) fail('workspace', 'must be aligned to 16 bytes', `0x${ws.toString(16)}`);
  }
}
