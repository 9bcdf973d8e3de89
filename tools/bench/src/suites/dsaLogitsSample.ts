// Checking big indexer outputs against kernels/dsa's CPU references on a sample: the reference with its
// per-element error bound (compareDsaLogits: the kernel's own accumulation model, far tighter than the
// server's torch-based tolerance) is too slow for 128 rows of 128K keys, so a few rows and a few 64-token
// pages of each are cut out as a small problem of the same kind, whose logits are the big problem's at
// the sampled positions. Prefill rows are also checked for their −∞ mask over the whole row.
import {
  compareDsaLogits,
  DSA_INDEX_HEAD_DIM,
  DSA_PAGE_BYTES,
  DSA_PAGE_TOKENS,
  dsaIndexerDecodeReferenceWithBound,
  dsaIndexerPrefillReferenceWithBound,
  type DsaIndexerDecodeInput,
  type DsaIndexerPrefillInput,
  type DsaLogitsComparison,
} from '@tilekit/kernel-dsa';
import type { OwnCheck } from '../benchSuite.ts';

/** Rows (sequences or queries) a check samples. */
export const DSA_SAMPLE_ROWS = 8;
/** 64-token pages of each sampled row a check samples (besides a prefill row's window edges). */
export const DSA_SAMPLE_PAGES = 16;

const D = DSA_INDEX_HEAD_DIM;

/** Up to `want` indices of [0, count), spread evenly with the first and the last, ascending and distinct (all when count ≤ want). */
export function dsaSpread(count: number, want: number): number[] {
  if (count <= want) return Array.from({ length: count }, (_, i) => i);
  if (want <= 1) return [0];
  return [...new Set(Array.from({ length: want }, (_, i) => Math.round((i * (count - 1)) / (want - 1))))];
}

/**
 * A decode case's small inputs on the host: the decode indexer's input but the cache (it stays in its file: pages are
 * read as the check needs them). maxContext is L, the columns of a logits row; every context equals it.
 */
export type DsaDecodeHost = Omit<DsaIndexerDecodeInput, 'cache'>;

/** The sequences and logical pages a decode check takes. */
export interface DsaDecodeSample {
  readonly sequences: readonly number[];
  readonly pages: readonly number[];
}

/** Spread sequences and pages (the first and the last of each among them). */
export function dsaDecodeSample(host: DsaDecodeHost, rows = DSA_SAMPLE_ROWS, pages = DSA_SAMPLE_PAGES): DsaDecodeSample {
  return { sequences: dsaSpread(host.B, rows), pages: dsaSpread(host.maxPages, pages) };
}

function checkFullContexts(host: DsaDecodeHost, sample: DsaDecodeSample): void {
  if (host.maxContext % DSA_PAGE_TOKENS !== 0)
    throw new Error(`a decode sample needs L a multiple of ${DSA_PAGE_TOKENS}, not ${host.maxContext}`);
  const short = sample.sequences.find((b) => host.contextLens[b] !== host.maxContext);
  if (short !== undefined)
    throw new Error(`a decode sample needs every context = L = ${host.maxContext}; sequence ${short} has ${host.contextLens[short]}`);
  if (host.nextN > 1 && sample.pages.at(-1) !== host.maxPages - 1)
    throw new Error('with nextN > 1 a decode sample must take the last page');
}

/**
 * The sample as a decode problem of its own: the sampled pages of each sampled sequence copied (`readPage`:
 * a physical page's 8448 bytes) into a compact cache in order, a block table naming them, the sampled rows'
 * q and weights, every context the sampled pages' tokens. Its logits at row i·nextN + r, column j·64 + t are
 * the full problem's at row sequences[i]·nextN + r, column pages[j]·64 + t (every context being L, L a
 * multiple of 64, and with nextN > 1 the last page sampled: its causal tail is the full problem's).
 * @throws Error when a precondition does not hold.
 */
export function dsaDecodeSubproblem(
  host: DsaDecodeHost,
  sample: DsaDecodeSample,
  readPage: (page: number) => Uint8Array,
): DsaIndexerDecodeInput {
  checkFullContexts(host, sample);
  const B = sample.sequences.length;
  const P = sample.pages.length;
  const rowBytes = host.nextN * host.H * D;
  const cache = new Uint8Array(B * P * DSA_PAGE_BYTES);
  const q = new Uint8Array(B * rowBytes);
  const weights = new Float32Array(B * host.nextN * host.H);
  sample.sequences.forEach((seq, i) => {
    q.set(host.q.subarray(seq * rowBytes, (seq + 1) * rowBytes), i * rowBytes);
    weights.set(host.weights.subarray(seq * host.nextN * host.H, (seq + 1) * host.nextN * host.H), i * host.nextN * host.H);
    sample.pages.forEach((page, j) => {
      const bytes = readPage(host.blockTable[seq * host.maxPages + page]!);
      if (bytes.length !== DSA_PAGE_BYTES) throw new Error(`readPage gave ${bytes.length} bytes, a page has ${DSA_PAGE_BYTES}`);
      cache.set(bytes, (i * P + j) * DSA_PAGE_BYTES);
    });
  });
  const blockTable = Int32Array.from({ length: B * P }, (_, x) => x);
  const contextLens = new Int32Array(B).fill(P * DSA_PAGE_TOKENS);
  return { q, weights, cache, blockTable, maxPages: P, contextLens, B, nextN: host.nextN, H: host.H, maxContext: P * DSA_PAGE_TOKENS };
}

/** Our logits [b·nextN][L] at the sampled positions, in the sub-problem's layout. */
export function dsaDecodeSampleOf(ours: Float32Array, host: DsaDecodeHost, sample: DsaDecodeSample): Float32Array {
  const P = sample.pages.length;
  const width = P * DSA_PAGE_TOKENS;
  const out = new Float32Array(sample.sequences.length * host.nextN * width);
  sample.sequences.forEach((seq, i) => {
    for (let r = 0; r < host.nextN; r++) {
      const from = (seq * host.nextN + r) * host.maxContext;
      const to = (i * host.nextN + r) * width;
      sample.pages.forEach((page, j) => {
        const start = from + page * DSA_PAGE_TOKENS;
        out.set(ours.subarray(start, start + DSA_PAGE_TOKENS), to + j * DSA_PAGE_TOKENS);
      });
    }
  });
  return out;
}

function verdictDetail(v: DsaLogitsComparison, what: string): string {
  const worst = v.worstIndex < 0 ? '' : `, worst error ${v.worstError.toExponential(3)} (ratio to its bound ${v.worstRatio.toFixed(3)})`;
  return `${what}: ${v.checked} checked, ${v.overBound} over the bound, ${v.maskMismatches} mask mismatches${worst}`;
}

/** Our decode logits on the sample against dsaIndexerDecodeReferenceWithBound (OurCaseResult.checks). */
export function dsaDecodeLogitsCheck(
  host: DsaDecodeHost,
  sample: DsaDecodeSample,
  ours: Float32Array,
  readPage: (page: number) => Uint8Array,
): OwnCheck {
  const reference = dsaIndexerDecodeReferenceWithBound(dsaDecodeSubproblem(host, sample, readPage));
  const v = compareDsaLogits(reference.logits, dsaDecodeSampleOf(ours, host, sample), reference.errorBound);
  return {
    ok: v.ok,
    detail: verdictDetail(v, `sequences ${sample.sequences.join(',')} × ${sample.pages.length} pages vs the CPU reference`),
  };
}

/** A prefill case's inputs on the host, the prefill indexer's input (all small: q 32 MiB, keys 16 MiB at 128K); Skv is L, the columns of a logits row. */
export type DsaPrefillHost = DsaIndexerPrefillInput;

/** The queries and 64-key pages a prefill check takes. */
export interface DsaPrefillSample {
  readonly rows: readonly number[];
  readonly pages: readonly number[];
}

/** Spread queries; spread pages and, for every sampled query, the pages at its window's start and end (where its mask turns). */
export function dsaPrefillSample(host: DsaPrefillHost, rows = DSA_SAMPLE_ROWS, pages = DSA_SAMPLE_PAGES): DsaPrefillSample {
  const count = Math.ceil(host.Skv / DSA_PAGE_TOKENS);
  const picked = dsaSpread(host.S, rows);
  const edges = picked.flatMap((t) => [host.windowStart[t]!, host.windowEnd[t]! - 1, host.windowEnd[t]!]);
  const all = new Set([
    ...dsaSpread(count, pages),
    ...edges.filter((p) => p >= 0 && p < host.Skv).map((p) => Math.floor(p / DSA_PAGE_TOKENS)),
  ]);
  return { rows: picked, pages: [...all].sort((a, b) => a - b) };
}

/** The key positions of sampled pages (a partial last page clipped to L). */
export function dsaPrefillSamplePositions(host: Pick<DsaPrefillHost, 'Skv'>, sample: DsaPrefillSample): Int32Array {
  return Int32Array.from(
    sample.pages.flatMap((page) =>
      Array.from({ length: Math.min(DSA_PAGE_TOKENS, host.Skv - page * DSA_PAGE_TOKENS) }, (_, t) => page * DSA_PAGE_TOKENS + t),
    ),
  );
}

/** The sample as a prefill problem of its own: the sampled queries against the sampled keys, every window the whole key run. */
export function dsaPrefillSubproblem(host: DsaPrefillHost, sample: DsaPrefillSample): DsaIndexerPrefillInput {
  const positions = dsaPrefillSamplePositions(host, sample);
  const S = sample.rows.length;
  const Skv = positions.length;
  const q = new Uint8Array(S * host.H * D);
  const weights = new Float32Array(S * host.H);
  sample.rows.forEach((t, i) => {
    q.set(host.q.subarray(t * host.H * D, (t + 1) * host.H * D), i * host.H * D);
    weights.set(host.weights.subarray(t * host.H, (t + 1) * host.H), i * host.H);
  });
  const k = new Uint8Array(Skv * D);
  const kScales = new Float32Array(Skv);
  positions.forEach((p, j) => {
    k.set(host.k.subarray(p * D, (p + 1) * D), j * D);
    kScales[j] = host.kScales[p]!;
  });
  return { q, weights, k, kScales, windowStart: new Int32Array(S), windowEnd: new Int32Array(S).fill(Skv), S, H: host.H, Skv };
}

/** Positions of a full row whose mask is wrong: inside the window and not finite, or outside it and not −∞. */
export function dsaPrefillMaskMismatches(row: Float32Array, start: number, end: number): number {
  let wrong = 0;
  for (let p = 0; p < row.length; p++) {
    const inside = p >= start && p < end;
    if (inside ? !Number.isFinite(row[p]) : row[p] !== Number.NEGATIVE_INFINITY) wrong++;
  }
  return wrong;
}

/**
 * Our prefill logits against dsaIndexerPrefillReferenceWithBound on the sample (the reference of the sub-problem,
 * −∞ and a zero bound outside each query's window), and every sampled row's whole mask (OurCaseResult.checks).
 * `oursRows`: our full row [L] of each sampled query.
 */
export function dsaPrefillLogitsCheck(
  host: DsaPrefillHost,
  sample: DsaPrefillSample,
  oursRows: ReadonlyMap<number, Float32Array>,
): OwnCheck {
  const positions = dsaPrefillSamplePositions(host, sample);
  const reference = dsaIndexerPrefillReferenceWithBound(dsaPrefillSubproblem(host, sample));
  const n = positions.length;
  const expected = new Float32Array(sample.rows.length * n);
  const bound = new Float64Array(sample.rows.length * n);
  const actual = new Float32Array(sample.rows.length * n);
  let maskWrong = 0;
  sample.rows.forEach((t, i) => {
    const row = oursRows.get(t);
    if (row === undefined || row.length !== host.Skv) throw new Error(`our row ${t} of ${host.Skv} logits is missing`);
    const [start, end] = [host.windowStart[t]!, host.windowEnd[t]!];
    maskWrong += dsaPrefillMaskMismatches(row, start, end);
    positions.forEach((p, j) => {
      const inside = p >= start && p < end;
      expected[i * n + j] = inside ? reference.logits[i * n + j]! : Number.NEGATIVE_INFINITY;
      bound[i * n + j] = inside ? reference.errorBound[i * n + j]! : 0;
      actual[i * n + j] = row[p]!;
    });
  });
  const v = compareDsaLogits(expected, actual, bound);
  const detail = `${verdictDetail(v, `queries ${sample.rows.join(',')} × ${n} keys vs the CPU reference`)}; whole-row masks: ${maskWrong} wrong`;
  return { ok: v.ok && maskWrong === 0, detail };
}
