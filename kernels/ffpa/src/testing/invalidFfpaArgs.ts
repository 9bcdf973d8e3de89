// Random valid and invalid argument sets of the FFPA runner (`FfpaRunner.create` + `run`), for its
// CI fuzz spec on the fake addon. A valid call is a small problem (batch 1–2, 1–4 query heads over
// 1–2 kv heads, sequences 1–40, group mode sometimes with an empty sequence and per-batch keys) at
// d 320, 576/512, 576/576, 640, 704, 768 (clusters) or 1024, fp16 or bf16, no mask or causal, LSE on or off, with buffers
// of exactly their extents. An invalid one has one to three corruptions: head dims outside FFPA's,
// split-KV, a score modifier, dtype, nheadQ % nheadK ≠ 0, negative sequence lengths, bad masks, K
// rows that are not 16-byte multiples; buffers too small, misaligned, missing, not buffers, aliasing.
import fc from 'fast-check';
import {
  checkFmhaFwdProblem,
  fmhaFwdOperandElements,
  packedAttentionStrides,
  type AttentionLayout,
  type CheckedFmhaFwdProblem,
  type FmhaFwdDType,
  type FmhaFwdProblem,
} from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';
import { allocPlan, bufferCorruptions, invalidCalls, type BufferPlan, type Corruption, type InvalidCall } from '@tilekit/runtime/testing';
import { checkFfpaProblem } from '../checkFfpaProblem.ts';
import { FFPA_HEAD_DIMS } from '../ffpaHeadDims.ts';

/** One FFPA runner call as data: the problem (possibly corrupted) and the buffers. */
export interface FfpaFuzzCall {
  readonly problem: Readonly<Record<string, unknown>>;
  readonly buffers: Readonly<Record<string, BufferPlan>>;
}

/** The head-dim pairs of the bases (hdimV undefined: the default, 576 for 576). */
export const FFPA_FUZZ_HEAD_DIMS: readonly { readonly hdimQ: number; readonly hdimV?: number }[] = Object.freeze([
  { hdimQ: 320, hdimV: 320 },
  { hdimQ: 576, hdimV: 512 },
  { hdimQ: 576, hdimV: 576 },
  { hdimQ: 576 },
  { hdimQ: 640, hdimV: 640 },
  { hdimQ: 704, hdimV: 704 },
  { hdimQ: 768 },
  { hdimQ: 1024 },
]);

function prefix(lens: readonly number[]): number[] {
  return lens.reduce((s, l) => [...s, s[s.length - 1]! + l], [0]);
}

/** A valid FFPA problem of the fuzz's sizes. */
function problems(): fc.Arbitrary<FmhaFwdProblem> {
  return fc
    .record({
      dtype: fc.constantFrom<FmhaFwdDType>('fp16', 'bf16'),
      hd: fc.constantFrom(...FFPA_FUZZ_HEAD_DIMS),
      nheadK: fc.integer({ min: 1, max: 2 }),
      ratio: fc.integer({ min: 1, max: 2 }),
      group: fc.boolean(),
      lens: fc.array(fc.record({ sq: fc.integer({ min: 1, max: 40 }), sk: fc.integer({ min: 1, max: 40 }) }), {
        minLength: 1,
        maxLength: 2,
      }),
      empty: fc.constantFrom(undefined, 0, 1),
      perBatchK: fc.boolean(),
      used: fc.double({ min: 0, max: 1, noNaN: true }),
      layouts: fc.tuple(fc.constantFrom<AttentionLayout>('bhsd', 'bshd'), fc.constantFrom<AttentionLayout>('bhsd', 'bshd')),
      mask: fc.constantFrom('0', 't'),
      lse: fc.boolean(),
    })
    .map((r) => {
      // Group mode with two sequences: sometimes one of them empty (no query and no key rows).
      const lens = r.lens.map((l, i) => (r.group && r.lens.length === 2 && r.empty === i ? { sq: 0, sk: 0 } : l));
      const sequences = r.group
        ? {
            seqstartQ: prefix(lens.map((l) => l.sq)),
            seqstartK: prefix(lens.map((l) => l.sk)),
            ...(r.perBatchK ? { seqlenK: lens.map((l) => Math.floor(r.used * l.sk)) } : {}),
          }
        : { seqlenQ: lens[0]!.sq, seqlenK: lens[0]!.sk };
      return {
        dtype: r.dtype,
        batch: lens.length,
        nheadQ: r.nheadK * r.ratio,
        nheadK: r.nheadK,
        ...r.hd,
        ...sequences,
        inputLayout: r.layouts[0],
        outputLayout: r.layouts[1],
        mask: r.mask,
        lse: r.lse,
      } as FmhaFwdProblem;
    });
}

/** Bytes of every buffer a valid run passes (absent keys: not passed). */
export function ffpaBufferBytes(p: CheckedFmhaFwdProblem): Record<string, number> {
  const e = getDType(p.dtype).bytes;
  const el = fmhaFwdOperandElements(p);
  const group = p.mode === 'group';
  return {
    q: e * el.q,
    k: e * el.k,
    v: e * el.v,
    o: e * el.o,
    ...(p.lse ? { lse: 4 * el.lse } : {}),
    ...(group ? { seqstartQ: 4 * (p.batch + 1), seqstartK: 4 * (p.batch + 1) } : {}),
    ...(group && p.hasSeqlenK ? { seqlenK: 4 * p.batch } : {}),
  };
}

/** Valid runner calls: a problem and buffers of exactly their extents. */
export function validFfpaCalls(): fc.Arbitrary<FfpaFuzzCall> {
  return problems().map((problem) => ({
    problem: problem as unknown as Record<string, unknown>,
    buffers: Object.fromEntries(Object.entries(ffpaBufferBytes(checkFfpaProblem(problem as never))).map(([k, n]) => [k, allocPlan(n)])),
  }));
}

function setField(
  field: string,
  value: unknown,
  label = `problem.${field} = ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
): Corruption<FfpaFuzzCall> {
  return { target: `problem.${field}`, label, apply: (c) => ({ ...c, problem: { ...c.problem, [field]: value } }) };
}

/** Values no FFPA problem may have. */
function fieldCorruptions(p: FmhaFwdProblem): fc.Arbitrary<Corruption<FfpaFuzzCall>>[] {
  const checked = checkFmhaFwdProblem(p, { headDims: FFPA_HEAD_DIMS });
  const hdimQ = p.hdimQ;
  return [
    fc.constantFrom<unknown>(256, 1088, 330, 128, 0, -64, 64.5, Number.NaN, undefined, '512').map((v) => setField('hdimQ', v)),
    fc
      .constantFrom<unknown>(448, 256, 128, 0, 63, 2048, Number.NaN, '512', 320)
      .filter((v) => !FFPA_HEAD_DIMS.some((d) => d.hdimQ === hdimQ && d.hdimV === v))
      .map((v) => setField('hdimV', v)),
    fc.constantFrom<unknown>(2, 4, 'auto', 0, -1, 1.5, 129, 'max').map((v) => setField('splitKv', v)),
    fc.constantFrom<unknown>('softcap', 'alibi', 'relu').map((v) => setField('scoreModifier', v)),
    fc.constantFrom<unknown>('fp32', 'fp8', 'half', undefined, 16).map((v) => setField('dtype', v)),
    fc.constant(setField('nheadK', checked.nheadQ + 1, `problem.nheadK = nheadQ + 1 = ${checked.nheadQ + 1} (h % h_k ≠ 0)`)),
    fc
      .constantFrom<unknown>('x', 't:1', 't:a,b', 'q:1,2', 'g:3,4', 'xt:w', 't:1.5,2', 7, { kind: 'generic', y: 2, x: 3 })
      .map((v) => setField('mask', v)),
    fc
      .constant(packedAttentionStrides(checked.inputLayout, checked.nheadK, checked.rowsK, checked.hdimQ + 1))
      .map((s) =>
        setField('kStrides', { ...s, batch: checked.mode === 'group' ? 0 : s.batch }, 'problem.kStrides: rows not 16-byte multiples'),
      ),
    ...negativeSequences(checked),
  ];
}

/** A negative sequence length: seqlenQ / seqlenK in batch mode, a seqstart entry or a per-batch seqlenK in group mode. */
function negativeSequences(p: CheckedFmhaFwdProblem): fc.Arbitrary<Corruption<FfpaFuzzCall>>[] {
  const negative = fc.integer({ min: -41, max: -1 });
  if (p.mode === 'batch') return [fc.tuple(fc.constantFrom('seqlenQ', 'seqlenK'), negative).map(([f, v]) => setField(f, v))];
  return [
    fc.tuple(fc.constantFrom<'seqstartQ' | 'seqstartK'>('seqstartQ', 'seqstartK'), fc.nat(), negative).map(([f, n, v]) => {
      const starts = f === 'seqstartQ' ? p.seqstartQ : p.seqstartK;
      const i = 1 + (n % (starts.length - 1));
      return setField(
        f,
        starts.map((x, j) => (j === i ? v : x)),
        `problem.${f}[${i}] = ${v}`,
      );
    }),
    fc.tuple(fc.nat(), negative).map(([n, v]) => {
      const b = n % p.batch;
      const lens = p.seqstartK.slice(1).map((e, j) => (j === b ? v : e - p.seqstartK[j]!));
      return setField('seqlenK', lens, `problem.seqlenK[${b}] = ${v}`);
    }),
  ];
}

/** Each buffer too small, misaligned, missing, not a buffer; O over Q, K, V; LSE over them and O. */
function buffersCorruptions(c: FfpaFuzzCall): fc.Arbitrary<Corruption<FfpaFuzzCall>>[] {
  const checked = checkFfpaProblem(c.problem as never);
  const bytes = ffpaBufferBytes(checked);
  const e = getDType(checked.dtype).bytes;
  const align: Record<string, number> = { q: 16, k: 16, v: 16, o: 2 * e, lse: 4, seqstartQ: 4, seqstartK: 4, seqlenK: 4 };
  return Object.entries(bytes).flatMap(([name, need]) => {
    const over = name === 'o' ? ['q', 'k', 'v'] : name === 'lse' ? ['q', 'k', 'v', 'o'] : [];
    return bufferCorruptions<FfpaFuzzCall>(name, { need, align: align[name]!, overlaps: over.filter((x) => (bytes[x] ?? 0) > 0) });
  });
}

/** Invalid runner calls: a valid one with one to three corruptions of the problem or the buffers. */
export function invalidFfpaCalls(): fc.Arbitrary<InvalidCall<FfpaFuzzCall>> {
  return invalidCalls(validFfpaCalls(), (c) => [...fieldCorruptions(c.problem as unknown as FmhaFwdProblem), ...buffersCorruptions(c)]);
}
