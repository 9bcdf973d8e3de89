import { ArgumentProblems } from '@tilekit/numeric';
import { SpargeArgumentError } from './spargeArgumentError.ts';
import { SPARGE_HEAD_DIMS } from './spargeShape.ts';

/** A hyperparameter for every head (a number) or one per head (an array of length nhead, as upstream's 1-D tensors). */
export type SpargePerHead = number | readonly number[] | Float32Array | Float64Array;

/** How the block map's selection step picks key blocks per query block (exactly one is given). */
export type SpargeSelection = 'topk' | 'cdf';

/**
 * What a partial tail block's self-similarity is: `pooled` (ours, default) computes it over the
 * block's real rows like any block; `upstreamFix` reproduces upstream's NaN (zero-padded rows have
 * norm 0, 0/0) that makes every partial tail block a fix block (always computed).
 */
export type SpargeTailBlockRule = 'pooled' | 'upstreamFix';

/** Block sizes the references accept: powers of two in [16, 256] (upstream uses 128×64 on sm80/89 and 64×128 on sm90). */
export const SPARGE_BLOCK_SIZES = [16, 32, 64, 128, 256] as const;

/**
 * Defaults (upstream `spas_sage2_attn_meansim_topk_cuda` / `spas_sage2_attn_meansim_cuda` and the
 * inference wrapper): the query block of 128 rows and key block of 64 rows of the sm80/89 kernels;
 * simthreshd1 −0.1 with topk (the judge is off: similarity is always ≥ 0) and 0.6 with cdfthreshd;
 * pv_threshold 50 (log2 units: only tiles that change nothing are skipped); K smoothing on; the
 * attention sink on (upstream's inference path hard-wires it, the plain API defaults it off);
 * not causal; no int8.
 */
export const SPARGE_DEFAULTS = Object.freeze({
  blockQ: 128,
  blockK: 64,
  simthreshd1WithTopk: -0.1,
  simthreshd1WithCdf: 0.6,
  pvThreshold: 50,
  smoothK: true,
  attentionSink: true,
  isCausal: false,
  int8: false,
  tailBlockRule: 'pooled' as SpargeTailBlockRule,
});

/**
 * Sparge's hyperparameters (upstream names where they exist). Exactly one of `topk` (fraction of
 * key blocks kept per query block, in (0, 1]) and `cdfthreshd` (cumulative pooled softmax mass kept,
 * in [0, 1]) is given. `simthreshd1` (self-similarity threshold; a block with similarity ≤ it is a
 * fix block, always computed) and `pvThreshold` (PV-skip threshold in log2 units of scaled logits,
 * ≥ 0, +∞ disables skipping) complete the per-head set.
 */
export interface SpargeParams {
  readonly topk?: SpargePerHead;
  readonly cdfthreshd?: SpargePerHead;
  readonly simthreshd1?: SpargePerHead;
  readonly pvThreshold?: SpargePerHead;
  /** Subtract the per-(batch, head) mean of K over the sequence before pooling (default true). */
  readonly smoothK?: boolean;
  /** Force key block 0 on for every query block (default true). */
  readonly attentionSink?: boolean;
  /** Top-left causal attention (default false). */
  readonly isCausal?: boolean;
  /** Query rows per block = the attention kernel's query tile (default 128). */
  readonly blockQ?: number;
  /** Key rows per block = the attention kernel's key tile (default 64). */
  readonly blockK?: number;
  /** Quantize Q and K to int8 with per-block scales for an int8 Q·Kᵀ (default false). */
  readonly int8?: boolean;
  /** Self-similarity of partial tail blocks (default `pooled`). */
  readonly tailBlockRule?: SpargeTailBlockRule;
}

/** The parameters with defaults filled and every per-head value expanded to an array of length nhead. */
export interface ResolvedSpargeParams {
  readonly nhead: number;
  readonly headDim: number;
  readonly selection: SpargeSelection;
  /** Per head: the topk ratio (selection `topk`) or the cdf threshold τ (selection `cdf`). */
  readonly selectionValue: readonly number[];
  readonly simthreshd1: readonly number[];
  readonly pvThreshold: readonly number[];
  readonly smoothK: boolean;
  readonly attentionSink: boolean;
  readonly isCausal: boolean;
  readonly blockQ: number;
  readonly blockK: number;
  readonly int8: boolean;
  readonly tailBlockRule: SpargeTailBlockRule;
}

/** The problem facts the parameters are checked against. */
export interface SpargeParamsContext {
  readonly nhead: number;
  readonly headDim: number;
}

function perHead(name: string, value: SpargePerHead, nhead: number, check: (v: number) => string | undefined): readonly number[] {
  let values: number[];
  if (typeof value === 'number') values = Array<number>(nhead).fill(value);
  else if (Array.isArray(value) || value instanceof Float32Array || value instanceof Float64Array) {
    if (value.length !== nhead) throw new SpargeArgumentError(name, `as a per-head array must have nhead = ${nhead} entries`, value.length);
    values = Array.from(value as ArrayLike<number>);
  } else throw new SpargeArgumentError(name, 'must be a number or a per-head array of numbers', value);
  const problems = new ArgumentProblems(SpargeArgumentError);
  for (const [h, v] of (typeof value === 'number' ? values.slice(0, 1) : values).entries()) {
    const broken = typeof v === 'number' ? check(v) : 'must be a number';
    if (broken !== undefined) problems.report(typeof value === 'number' ? name : `${name}[${h}]`, broken, v);
  }
  problems.throwIfAny();
  return Object.freeze(values);
}

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new SpargeArgumentError(name, 'must be a boolean', value);
  return value;
}

function blockSize(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(SPARGE_BLOCK_SIZES as readonly unknown[]).includes(value))
    throw new SpargeArgumentError(name, `must be one of ${SPARGE_BLOCK_SIZES.join(', ')}`, value);
  return value as number;
}

/** nhead an integer ≥ 1, headDim one of upstream's. */
function checkContext(v: ArgumentProblems, context: SpargeParamsContext): { nhead: number | undefined; headDim: number | undefined } {
  const { nhead, headDim } = context;
  const nheadOk = Number.isSafeInteger(nhead) && nhead >= 1;
  if (!nheadOk) v.report('nhead', 'must be an integer ≥ 1', nhead);
  const headDimOk = (SPARGE_HEAD_DIMS as readonly number[]).includes(headDim);
  if (!headDimOk) v.report('headDim', `must be one of ${SPARGE_HEAD_DIMS.join(', ')} (upstream's supported head dims)`, headDim);
  return { nhead: nheadOk ? nhead : undefined, headDim: headDimOk ? headDim : undefined };
}

/** The selection (exactly one of topk and cdfthreshd) and the per-head values, which need nhead. */
function perHeadParams(v: ArgumentProblems, params: SpargeParams, nhead: number | undefined) {
  const hasTopk = params.topk !== undefined;
  const hasCdf = params.cdfthreshd !== undefined;
  if (hasTopk === hasCdf) v.report('topk/cdfthreshd', 'exactly one of topk and cdfthreshd must be given', hasTopk ? 'both' : 'neither');
  const each = (name: string, value: SpargePerHead | undefined, check: (x: number) => string | undefined) =>
    nhead === undefined || value === undefined ? undefined : v.check(() => perHead(name, value, nhead, check));
  const selection: SpargeSelection = hasTopk ? 'topk' : 'cdf';
  const selectionValue =
    hasTopk === hasCdf
      ? undefined
      : hasTopk
        ? each('topk', params.topk, (x) => (x > 0 && x <= 1 ? undefined : 'must be in (0, 1]'))
        : each('cdfthreshd', params.cdfthreshd, (x) => (x >= 0 && x <= 1 ? undefined : 'must be in [0, 1]'));
  const simDefault = hasTopk ? SPARGE_DEFAULTS.simthreshd1WithTopk : SPARGE_DEFAULTS.simthreshd1WithCdf;
  const simthreshd1 = each('simthreshd1', params.simthreshd1 ?? simDefault, (x) =>
    Number.isFinite(x) ? undefined : 'must be a finite number',
  );
  const pvThreshold = each('pvThreshold', params.pvThreshold ?? SPARGE_DEFAULTS.pvThreshold, (x) =>
    x >= 0 ? undefined : 'must be ≥ 0 (log2 units; +Infinity disables PV skipping)',
  );
  return { selection, selectionValue, simthreshd1, pvThreshold };
}

/**
 * Checks Sparge's hyperparameters against the problem and resolves them: exactly one of topk /
 * cdfthreshd; topk ∈ (0, 1]; cdfthreshd ∈ [0, 1]; simthreshd1 finite; pvThreshold ≥ 0 or +∞; per-head
 * arrays of length nhead; headDim ∈ {64, 128}; block sizes in `SPARGE_BLOCK_SIZES`; flags boolean.
 * Postcondition: every per-head array of the result has nhead entries.
 * @throws SpargeArgumentError naming the argument (`topk`, `cdfthreshd[2]`, `headDim`, …) and the rule,
 * every problem found in one error (the first one's name as `argument`; per-head values once nhead is valid).
 */
export function checkSpargeParams(params: SpargeParams, context: SpargeParamsContext): ResolvedSpargeParams {
  if (typeof params !== 'object' || params === null) throw new SpargeArgumentError('params', 'must be an object', params);
  const v = new ArgumentProblems(SpargeArgumentError);
  const { nhead, headDim } = checkContext(v, context);
  const { selection, selectionValue, simthreshd1, pvThreshold } = perHeadParams(v, params, nhead);
  const tailBlockRule = params.tailBlockRule ?? SPARGE_DEFAULTS.tailBlockRule;
  if (tailBlockRule !== 'pooled' && tailBlockRule !== 'upstreamFix')
    v.report('tailBlockRule', 'must be pooled or upstreamFix', tailBlockRule);
  const smoothK = v.check(() => flag('smoothK', params.smoothK, SPARGE_DEFAULTS.smoothK));
  const attentionSink = v.check(() => flag('attentionSink', params.attentionSink, SPARGE_DEFAULTS.attentionSink));
  const isCausal = v.check(() => flag('isCausal', params.isCausal, SPARGE_DEFAULTS.isCausal));
  const blockQ = v.check(() => blockSize('blockQ', params.blockQ, SPARGE_DEFAULTS.blockQ));
  const blockK = v.check(() => blockSize('blockK', params.blockK, SPARGE_DEFAULTS.blockK));
  const int8 = v.check(() => flag('int8', params.int8, SPARGE_DEFAULTS.int8));
  v.throwIfAny();
  return Object.freeze({
    nhead: nhead!,
    headDim: headDim!,
    selection,
    selectionValue: selectionValue!,
    simthreshd1: simthreshd1!,
    pvThreshold: pvThreshold!,
    smoothK: smoothK!,
    attentionSink: attentionSink!,
    isCausal: isCausal!,
    blockQ: blockQ!,
    blockK: blockK!,
    int8: int8!,
    tailBlockRule,
  });
}

/**
 * Key blocks the topk rule selects per query block: ⌊topk · kBlocks⌋ in float64 (upstream's
 * `int(topk·nK)`, over all key blocks even when causal), at least 1 (upstream promotes 0 to 1).
 * The host computes this per head and passes integers to the GPU, so both agree exactly.
 */
export function spargeTopkCount(topk: number, kBlocks: number): number {
  return Math.max(1, Math.floor(topk * kBlocks));
}
