// The command-line flags the attention examples share (CK-tile's tile_example_fmha_fwd / _bwd
// spelling): the problem's shape, layouts, mask, precision and scale, and how they become the
// shape part of an FmhaFwdProblem or FmhaBwdProblem. Each example adds its own flags around them.
import { parseAttentionMaskSpec, seqstartsOf } from '@tilekit/fmha';
import { ArgParseError, type ArgParser, type ParsedArgs } from '@tilekit/host';

/** The example-specific texts of the shared flags. */
export interface AttentionFlagTexts {
  /** Default of `-s` (query rows per sequence). */
  readonly seqlen: string;
  /** A group-mode `-s` list for the help text. */
  readonly seqlenExample: string;
  /** The head dims `-d` accepts, for the help text (e.g. `64, 128`). */
  readonly headDims: string;
  /** What `-d_v=0` means, for the help text (e.g. `= d; 128 with d = 192`). */
  readonly headDimV: string;
  /** The tensors `-iperm` and `-operm` lay out (e.g. `Q/K/V`, `O`). */
  readonly inputTensors: string;
  readonly outputTensors: string;
  /** The tensors `-prec` types. */
  readonly precTensors: string;
}

/** Defaults an example gives some shared flags instead of the dense operators' (batch 2, d 128, fp16). */
export interface AttentionFlagDefaults {
  readonly b?: number;
  readonly d?: number;
  readonly prec?: 'fp16' | 'bf16';
}

/** The values of the shared flags, as `ParsedArgs` holds them. */
export interface AttentionShapeFlags {
  readonly b: number;
  readonly h: number;
  readonly h_k: number;
  readonly s: string;
  readonly s_k: string;
  readonly d: number;
  readonly d_v: number;
  readonly mode: '0' | '1';
  readonly mask: string;
  readonly iperm: number;
  readonly operm: number;
  readonly prec: 'fp16' | 'bf16';
  readonly scale_s: number;
}

/**
 * Declares the shared flags on `parser`, in CK-tile's order: -b -h -h_k -s -s_k -d -d_v -mode -mask
 * -iperm -operm -prec -scale_s (with `defaults` for -b, -d and -prec where given).
 */
export function withAttentionFlags<T extends object>(
  parser: ArgParser<T>,
  texts: AttentionFlagTexts,
  defaults: AttentionFlagDefaults = {},
) {
  return parser
    .int('b', defaults.b ?? 2, 'batch size (group mode: the number of sequences, or taken from -s)', { min: 1 })
    .int('h', 8, 'query heads', { min: 1 })
    .int('h_k', 0, 'key/value heads (0: = h; must divide h: GQA/MQA)', { min: 0 })
    .string('s', texts.seqlen, `query rows per sequence; group mode: one per sequence, comma-separated (e.g. ${texts.seqlenExample})`)
    .string('s_k', '', 'key rows per sequence (empty: = s); group mode: comma-separated like -s')
    .int('d', defaults.d ?? 128, `head dim of Q and K (${texts.headDims})`, { min: 1 })
    .int('d_v', 0, `head dim of V and O (0: ${texts.headDimV})`, { min: 0 })
    .choice('mode', '0', ['0', '1'], '0: batch mode, 1: group (varlen) mode')
    .string(
      'mask',
      '0',
      '0: none; t / b: causal top-left / bottom-right; t:l,r / b:l,r: window (-1 = unbounded); xt:w, g:y,x',
      (text) => void parseAttentionMaskSpec(text),
    )
    .int('iperm', 1, `${texts.inputTensors} layout: 1 bhsd, 0 bshd`, { min: 0, max: 1 })
    .int('operm', 1, `${texts.outputTensors} layout: 1 bhsd, 0 bshd`, { min: 0, max: 1 })
    .choice('prec', defaults.prec ?? 'fp16', ['fp16', 'bf16'], `data type of ${texts.precTensors}`)
    .float('scale_s', 0, 'softmax scale (0: 1/√d)', { min: 0 });
}

/** The problem field a library's ArgumentError names → the shared flag it came from (see host's `flagErrorOf`). */
export const ATTENTION_FLAG_OF: Readonly<Record<string, keyof AttentionShapeFlags>> = Object.freeze({
  'problem.dtype': 'prec',
  'problem.batch': 'b',
  'problem.nheadQ': 'h',
  'problem.nheadK': 'h_k',
  'problem.hdimQ': 'd',
  'problem.hdimV': 'd_v',
  'problem.seqlenQ': 's',
  'problem.seqlenK': 's_k',
  'problem.seqstartQ': 's',
  'problem.seqstartK': 's_k',
  'problem.mask': 'mask',
  'problem.scale': 'scale_s',
});

/** The fields of an attention problem the shared flags describe (optional ones left out when defaulted). */
export interface AttentionShapeFields {
  readonly dtype: 'fp16' | 'bf16';
  readonly nheadQ: number;
  readonly nheadK?: number;
  readonly hdimQ: number;
  readonly hdimV?: number;
  readonly inputLayout: 'bhsd' | 'bshd';
  readonly outputLayout: 'bhsd' | 'bshd';
  readonly mask: string;
  readonly scale?: number;
  readonly batch: number;
}

/** Batch mode (one length each) or group mode (sequence starts). */
export type AttentionShape = AttentionShapeFields &
  ({ readonly seqlenQ: number; readonly seqlenK: number } | { readonly seqstartQ: number[]; readonly seqstartK: number[] });

function lengths(flag: 's' | 's_k', text: string): number[] {
  return text.split(',').map((t) => {
    if (!/^\d+$/.test(t.trim()))
      throw new ArgParseError(`-${flag}`, `-${flag}=${text}: expected a non-negative integer or a comma-separated list of them`);
    return Number(t.trim());
  });
}

/**
 * The shape the shared flags describe. Batch mode (`-mode=0`) takes one `-s` / `-s_k` length;
 * group mode one per sequence (a single length repeats over `-b` sequences, and `-b`, when given,
 * must agree with the lists). Postcondition (tested through the examples): group-mode starts are
 * the prefix sums of the lengths.
 * @throws ArgParseError naming the flag for lengths that make no shape, or `-iperm`/`-operm` not 0 or 1.
 */
export function attentionShapeFromArgs<T extends AttentionShapeFlags>(args: ParsedArgs<T>): AttentionShape {
  const group = args.get('mode') === '1';
  const sq = lengths('s', args.get('s'));
  const skText = args.get('s_k');
  const sk = skText === '' ? sq : lengths('s_k', skText);
  for (const flag of ['iperm', 'operm'] as const) {
    if (args.get(flag) !== 0 && args.get(flag) !== 1)
      throw new ArgParseError(`-${flag}`, `-${flag}=${args.get(flag)}: must be 0 (bshd) or 1 (bhsd)`);
  }
  const fields = {
    dtype: args.get('prec'),
    nheadQ: args.get('h'),
    ...(args.get('h_k') !== 0 ? { nheadK: args.get('h_k') } : {}),
    hdimQ: args.get('d'),
    ...(args.get('d_v') !== 0 ? { hdimV: args.get('d_v') } : {}),
    inputLayout: args.get('iperm') === 1 ? 'bhsd' : 'bshd',
    outputLayout: args.get('operm') === 1 ? 'bhsd' : 'bshd',
    mask: args.get('mask'),
    ...(args.get('scale_s') !== 0 ? { scale: args.get('scale_s') } : {}),
  } as const;
  if (!group) {
    if (sq.length !== 1)
      throw new ArgParseError('-s', `-s=${args.get('s')}: batch mode takes one length (use -mode=1 for per-sequence lengths)`);
    if (sk.length !== 1) throw new ArgParseError('-s_k', `-s_k=${skText}: batch mode takes one length`);
    return { ...fields, batch: args.get('b'), seqlenQ: sq[0]!, seqlenK: sk[0]! };
  }
  const batch = sq.length > 1 ? sq.length : sk.length > 1 ? sk.length : args.get('b');
  if (args.given('b') && args.get('b') !== batch) throw new ArgParseError('-b', `-b=${args.get('b')}: -s/-s_k list ${batch} sequences`);
  const fit = (flag: 's' | 's_k', lens: number[]): number[] => {
    if (lens.length === 1) return new Array<number>(batch).fill(lens[0]!);
    if (lens.length !== batch) throw new ArgParseError(`-${flag}`, `-${flag}: ${lens.length} lengths for ${batch} sequences`);
    return lens;
  };
  return { ...fields, batch, seqstartQ: seqstartsOf(fit('s', sq)), seqstartK: seqstartsOf(fit('s_k', sk)) };
}
