// example_dsa's flags (CK style) and the problem they describe.
import { ArgParser, type ParsedArgs } from '@tilekit/host';
import { DsaArgumentError } from '@tilekit/kernel-dsa';

/** The example's flags (`-key=value`, `-?` for help). */
export const dsaParser = new ArgParser(
  'example_dsa',
  'DeepSeek sparse attention, the whole path: FP8 lightning indexer → exact top-k → sparse MLA attention ' +
    '(decode over the paged FP8 MLA cache, or prefill over a bf16 latent KV)',
)
  .choice(
    'mode',
    'decode',
    ['decode', 'prefill'],
    'decode: b sequences × next_n queries over paged caches; prefill: s queries over L keys, causal',
  )
  .int('b', 2, 'sequences (decode)', { min: 1 })
  .int('next_n', 1, 'queries per sequence in a decode step (1, or 2 with MTP)', { min: 1 })
  .int('s', 32, 'queries (prefill; their causal windows end at L)', { min: 1 })
  .int('L', 4096, 'context tokens (decode: every sequence; prefill: keys)', { min: 1 })
  .int('h', 64, 'index query heads (32 or 64)', { min: 1 })
  .int('h_q', 128, 'MLA query heads (64 or 128)', { min: 1 })
  .int('topk', 2048, 'tokens each query attends to (1 … 4096)', { min: 1 })
  .bool('sink', false, 'per-head attention sinks')
  .int('splits', 0, 'decode: top-k splits of the attention (0: the launcher picks)', { min: 0 })
  .bool('v', true, 'validate every stage against the CPU references of the whole path')
  .int('warmup', 5, 'untimed steps first', { min: 0 })
  .int('repeat', 20, 'timed steps (median reported)', { min: 1 })
  .int('seed', 21, 'seed of the inputs');

/** Parsed flags of {@link dsaParser}. */
export type DsaArgs = ParsedArgs<typeof dsaParser extends ArgParser<infer T> ? T : never>;

/** The problem the flags describe (shapes; the step configs check the rest). */
export interface DsaExampleProblem {
  readonly mode: 'decode' | 'prefill';
  /** Sequences (1 in prefill mode) and queries per sequence (next_n; in prefill mode s). */
  readonly batch: number;
  readonly nextN: number;
  readonly context: number;
  readonly indexHeads: number;
  readonly hQ: number;
  readonly topk: number;
  readonly sink: boolean;
  /** Forced decode splits, or undefined for the launcher's choice. */
  readonly splits: number | undefined;
}

/**
 * The problem of `args`; in prefill mode `-s` must be at most `-L` (causal windows ending at L).
 * @throws DsaArgumentError naming the field (the runner maps it to its flag).
 */
export function problemFromArgs(args: DsaArgs): DsaExampleProblem {
  const mode = args.get('mode');
  if (mode === 'prefill' && args.get('s') > args.get('L'))
    throw new DsaArgumentError('problem.s', `must be at most L = ${args.get('L')} (causal windows ending at L)`, args.get('s'));
  const splits = args.get('splits');
  return {
    mode,
    batch: mode === 'decode' ? args.get('b') : 1,
    nextN: mode === 'decode' ? args.get('next_n') : args.get('s'),
    context: args.get('L'),
    indexHeads: args.get('h'),
    hQ: args.get('h_q'),
    topk: args.get('topk'),
    sink: args.get('sink'),
    splits: splits === 0 ? undefined : splits,
  };
}

/** The flag each problem / step-config field came from (for one-line flag errors). */
export const DSA_FLAG_OF = {
  'problem.s': 's',
  batch: 'b',
  nextN: 'next_n',
  heads: 'h',
  maxContext: 'L',
  seqKv: 'L',
  seqQ: 's',
  rowStride: 'L',
  k: 'topk',
  topk: 'topk',
  hQ: 'h_q',
  b: 'b',
  sQ: 'next_n',
  'options.splits': 'splits',
} as const;
