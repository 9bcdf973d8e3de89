// example_dsa_indexer's flags (CK style) and the problem they describe.
import { ArgParser, type ParsedArgs } from '@tilekit/host';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_TOKENS, DSA_TOPK_DEFAULT, DsaArgumentError } from '@tilekit/kernel-dsa';

/** The example's flags (`-key=value`, `-?` for help). */
export const dsaIndexerParser = new ArgParser(
  'example_dsa_indexer',
  'DeepSeek sparse attention, part 1: the FP8 lightning indexer (paged decode or prefill) and exact top-k selection',
)
  .choice(
    'mode',
    'decode',
    ['decode', 'prefill'],
    'decode: paged cache, next_n queries per sequence; prefill: s queries over L contiguous keys, causal',
  )
  .int('b', 2, 'sequences (decode)', { min: 1 })
  .int('s', 128, 'queries (prefill; their causal windows end at L)', { min: 1 })
  .int('L', 4096, 'context length in tokens (decode: every sequence; prefill: keys)', { min: 1 })
  .int('h', 64, 'index query heads (32 or 64)', { min: 1 })
  .int('d', DSA_INDEX_HEAD_DIM, 'index head dim (128)', { min: 1 })
  .int('topk', DSA_TOPK_DEFAULT, 'tokens selected per query (1 … 4096)', { min: 1 })
  .int('next_n', 1, 'queries per sequence in a decode step (1, or 2 with MTP)', { min: 1 })
  .int('page', DSA_PAGE_TOKENS, 'tokens per cache page (64)', { min: 1 })
  .choice('scale', 'fp32', ['fp32', 'ue8m0'], 'per-token key scale: fp32, or a power of two')
  .bool('v', true, 'validate against the CPU references')
  .int('warmup', 5, 'untimed launches first', { min: 0 })
  .int('repeat', 20, 'timed launches (median reported)', { min: 1 })
  .int('seed', 20, 'seed of the inputs');

/** Parsed flags of {@link dsaIndexerParser}. */
export type DsaIndexerArgs = ParsedArgs<typeof dsaIndexerParser extends ArgParser<infer T> ? T : never>;

/** The problem the flags describe (shapes only; the kernels' launchers check the rest). */
export interface DsaIndexerExampleProblem {
  readonly mode: 'decode' | 'prefill';
  readonly batch: number;
  readonly queries: number;
  readonly context: number;
  readonly heads: number;
  readonly topk: number;
  readonly nextN: number;
  readonly scaleFormat: 'fp32' | 'ue8m0';
}

/**
 * The problem of `args`; `-d` must be 128, `-page` 64, `-h` 32 or 64, `-next_n` 1 or 2, `-topk` at most 4096, and in
 * prefill mode `-s` at most `-L` (causal windows ending at L).
 * @throws DsaArgumentError naming the field (the runner maps it to its flag).
 */
export function problemFromArgs(args: DsaIndexerArgs): DsaIndexerExampleProblem {
  if (args.get('d') !== DSA_INDEX_HEAD_DIM)
    throw new DsaArgumentError('problem.d', `must be ${DSA_INDEX_HEAD_DIM} (the index head dim)`, args.get('d'));
  if (args.get('page') !== DSA_PAGE_TOKENS)
    throw new DsaArgumentError('problem.page', `must be ${DSA_PAGE_TOKENS} (the sm90 cache page)`, args.get('page'));
  if (args.get('topk') > 4096) throw new DsaArgumentError('problem.topk', 'must be at most 4096', args.get('topk'));
  const mode = args.get('mode');
  if (mode === 'prefill' && args.get('s') > args.get('L'))
    throw new DsaArgumentError('problem.s', `must be at most L = ${args.get('L')} (causal windows ending at L)`, args.get('s'));
  return {
    mode,
    batch: mode === 'decode' ? args.get('b') : 1,
    queries: mode === 'decode' ? args.get('b') * args.get('next_n') : args.get('s'),
    context: args.get('L'),
    heads: args.get('h'),
    topk: args.get('topk'),
    nextN: args.get('next_n'),
    scaleFormat: args.get('scale'),
  };
}

/** The flag each problem / launcher field came from (for one-line flag errors). */
export const DSA_FLAG_OF = {
  'problem.d': 'd',
  'problem.page': 'page',
  'problem.topk': 'topk',
  'problem.s': 's',
  heads: 'h',
  nextN: 'next_n',
  k: 'topk',
  batch: 'b',
  maxContext: 'L',
  seqKv: 'L',
  seqQ: 's',
} as const;
