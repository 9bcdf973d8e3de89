// example_sparge's command line: the flags (the CK port's spelling), per-head values, and flag-naming errors.
import { ArgParseError, ArgParser, flagErrorOf, type ParsedArgs } from '@tilekit/host';
import type { SpargePerHead } from '@tilekit/kernel-sparge';
import type { ArgumentError } from '@tilekit/numeric';

/** The example's flags (the CK port's spelling: `-key=value`, `-?` for help). */
export const spargeParser = new ArgParser(
  'example_sparge',
  'Sparge attention: block-map prediction (K smoothing, pooling, self-similarity, top-k or ' +
    'CDF selection) + block-sparse FMHA (vsa / jenga) with optional PV skip, on sm_90a',
)
  .choice(
    'pipeline',
    'vsa',
    ['vsa', 'jenga'],
    'sparse attention pipeline: vsa (delta LUT of visited key blocks) or jenga (one-hot block map)',
  )
  .int('b', 1, 'batch size', { min: 1 })
  .int('h', 2, 'query heads', { min: 1 })
  .int('h_k', 0, 'key/value heads (0: = h; must divide h)', { min: 0 })
  .int('s', 1024, 'query rows', { min: 1 })
  .int('s_k', 0, 'key rows (0: = s; synthetic inputs need = s)', { min: 0 })
  .int('d', 128, 'head dim of Q, K and V (64, 128)', { min: 1 })
  .string(
    'topk',
    '',
    'fraction of key blocks kept per query block, in (0, 1]; one value or one per head, comma-separated (default 0.4 unless -cdfthreshd is given)',
    perHeadCheck('topk'),
  )
  .string(
    'cdfthreshd',
    '',
    'pooled-softmax mass kept per query block, in [0, 1]; one value or one per head (exclusive with -topk)',
    perHeadCheck('cdfthreshd'),
  )
  .string(
    'simthreshd1',
    '',
    'self-similarity threshold: blocks at or below it are always computed; one value or one per head (default -0.1 with topk, 0.6 with cdfthreshd)',
    perHeadCheck('simthreshd1'),
  )
  .choice(
    'pv_mode',
    'none',
    ['none', 'warp', 'block'],
    'PV skip vote: none, warp (per 16 rows, the paper), block (the whole query block, upstream)',
  )
  .string(
    'pv_threshold',
    '50',
    'PV skip threshold in log2 units (≥ 0, inf: never skip); one value or one per head',
    perHeadCheck('pv_threshold'),
  )
  .bool('causal', false, 'top-left causal attention')
  .bool('smooth_k', true, 'subtract the mean of K before pooling')
  .bool('sink', true, 'attention sink: every query block visits key block 0')
  .bool('int8', false, 'int8 Q·Kᵀ with per-block scales')
  .bool('v', false, 'validate against the CPU references (O(s²) per head in float64: use small shapes)')
  .bool('print_sparsity', false, 'print the achieved sparsity (per head when h ≤ 8) and the histogram of visited blocks per query block')
  .choice('prec', 'fp16', ['fp16', 'bf16'], 'data type of Q, K, V and O')
  .int('seed', 1, 'seed of the inputs')
  .int('warmup', 5, 'untimed runs first', { min: 0 })
  .int('repeat', 20, 'timed runs (median reported)', { min: 1 })
  .choice(
    'inputs',
    'synthetic',
    ['synthetic', 'uniform'],
    'synthetic: inputs with locality (spargeSyntheticInputs), so blocks really are sparse; uniform: uniform [-1, 1)',
  );

type SpargeFlags = typeof spargeParser extends ArgParser<infer T> ? T : never;
/** The parsed command line of the example. */
export type SpargeExampleArgs = ParsedArgs<SpargeFlags>;

/** The topk of the CK port when neither -topk nor -cdfthreshd is given. */
export const SPARGE_EXAMPLE_DEFAULT_TOPK = 0.4;

/** The argument a library error names → the flag it came from (see host's `flagErrorOf`; `[i]` suffixes fall back to the array). */
export const SPARGE_FLAG_OF: Readonly<Record<string, keyof SpargeFlags>> = Object.freeze({
  'problem.dtype': 'prec',
  'problem.batch': 'b',
  'problem.nheadQ': 'h',
  'problem.nheadK': 'h_k',
  'problem.hdimQ': 'd',
  'problem.seqlenQ': 's',
  'problem.seqlenK': 's_k',
  'shape.batch': 'b',
  'shape.nhead': 'h',
  'shape.nheadK': 'h_k',
  'shape.seqlenQ': 's',
  'shape.seqlenK': 's_k',
  'shape.headDim': 'd',
  nhead: 'h',
  headDim: 'd',
  pipeline: 'pipeline',
  pvMode: 'pv_mode',
  topk: 'topk',
  'topk/cdfthreshd': 'topk',
  cdfthreshd: 'cdfthreshd',
  simthreshd1: 'simthreshd1',
  pvThreshold: 'pv_threshold',
});

/**
 * A flag whose value broke a library rule: the one-line message names the flag (`-topk=1.5: topk:
 * must be in (0, 1] …`) and `cause` keeps the library's typed error (SpargeArgumentError,
 * FmhaFwdArgumentError, …). runCli prints it and exits 2.
 */
export class SpargeFlagError extends ArgParseError {
  override readonly cause: ArgumentError;

  constructor(args: SpargeExampleArgs, error: ArgumentError) {
    const asFlag = flagErrorOf(args, error, SPARGE_FLAG_OF);
    super(asFlag.flag, asFlag.message);
    this.cause = error;
  }
}

/** The parse-time check of a per-head flag: its text must read as `parsePerHead` reads it (ranges are the library's, later). */
function perHeadCheck(flag: PerHeadFlag): (text: string) => void {
  return (text) => void parsePerHead(flag, text);
}

/** The flags that take one number or one per head. */
type PerHeadFlag = 'topk' | 'cdfthreshd' | 'simthreshd1' | 'pv_threshold';

/**
 * A per-head flag value: one number (every head) or a comma-separated list (one per head; its
 * length is checked against -h by the hyperparameter module). `inf` / `infinity` read as +∞.
 * The empty string is "not given" (undefined).
 * @throws ArgParseError naming the flag for an element that is not a number.
 */
export function parsePerHead(flag: PerHeadFlag, text: string): SpargePerHead | undefined {
  if (text.trim() === '') return undefined;
  const values = text.split(',').map((t) => {
    const s = t.trim().toLowerCase();
    const v = s === 'inf' || s === '+inf' || s === 'infinity' ? Infinity : s === '' ? NaN : Number(s);
    if (Number.isNaN(v))
      throw new ArgParseError(`-${flag}`, `-${flag}=${text}: expected a number or a comma-separated list of numbers (one per head)`);
    return v;
  });
  return values.length === 1 ? values[0]! : values;
}
