// Random invalid argument sets of the attention-forward launchers: the runner (`FmhaFwdRunner.create`
// + `run`, split-KV and combine included), the sm_90a launcher (`FmhaFwdKernel.prepare`, one-pass
// and split instances), the sm_80 launcher and the combine launcher. A random valid call (problem,
// the instance that runs it, buffers of exactly their extents) gets one to three corruptions: bad
// or inconsistent shapes, strides, dtypes, head dims, heads (h % h_k ≠ 0), seqstarts (non-monotone,
// out of range, wrong length), masks, scales, splits; another instance's problem; buffers too
// small, misaligned, missing, not buffers or overlapping. Used by the CI fuzz specs (fake addon) and
// replayed on a GPU.
import fc from 'fast-check';
import { sm90a } from '@tilekit/codegen';
import {
  packedAttentionStrides,
  type AttentionLayout,
  type AttentionTensorStrides,
  checkFmhaFwdProblem,
  FMHA_FWD_DTYPES,
  FMHA_FWD_HEAD_DIMS,
  fmhaFwdOperandElements,
  type CheckedFmhaFwdProblem,
  type FmhaFwdDType,
  type FmhaFwdProblem,
} from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';
import { FMHA_FWD_CATALOG } from '../fmhaFwdCatalog.ts';
import { FMHA_FWD_COMBINE_CATALOG } from '../fmhaFwdCombine.ts';
import { selectFmhaFwdCombineInstance, selectFmhaFwdInstance } from '../fmhaFwdDispatch.ts';
import { fmhaFwdWorkspace } from '@tilekit/fmha-launch';
import { fmhaFwdSm80CatalogFor } from '../sm80/fmhaFwdSm80Catalog.ts';
import {
  allocPlan,
  BAD_SIZES,
  bufferCorruptions,
  invalidCalls,
  type BufferPlan,
  type Corruption,
  type InvalidCall,
} from '@tilekit/runtime/testing';

/** Which public entry point a call goes through. */
export type FmhaFwdFuzzTarget = 'runner' | 'launcher' | 'sm80' | 'combine';

/** One forward call as data: the problem (possibly corrupted), the instance run (by name; '' for the runner), the buffers. */
export interface FmhaFwdFuzzCall {
  readonly problem: Readonly<Record<string, unknown>>;
  readonly instance: string;
  readonly buffers: Readonly<Record<string, BufferPlan>>;
}

/** Which valid calls to start from. */
export interface FmhaFwdFuzzOptions {
  readonly target: FmhaFwdFuzzTarget;
  readonly dtypes?: readonly FmhaFwdDType[];
  readonly hdims?: readonly { readonly hdimQ: number; readonly hdimV: number }[];
  /** CK mask strings the bases use (default: none, both causal corners, windows). */
  readonly masks?: readonly string[];
  readonly groupMode?: readonly boolean[];
  /** splitKv values of the bases (default per target: the runner 1, 2, 4, 'auto'; the launcher 1 to 3; the combine 2 to 5). */
  readonly splits?: readonly (number | 'auto')[];
  /** The instance every base must run (GPU replays: the one compiled); default: the dispatched one. */
  readonly instance?: string;
}

/** Every instance a call may name: sm_90a one-pass and split, the sm_80 build for sm_90a, the combine. */
export function fmhaFwdFuzzInstance(name: string): { readonly name: string } & Record<string, unknown> {
  const all = [...FMHA_FWD_CATALOG, ...fmhaFwdSm80CatalogFor(sm90a), ...FMHA_FWD_COMBINE_CATALOG];
  const i = all.find((x) => x.name === name);
  if (i === undefined) throw new Error(`no fmha-fwd instance ${name}`);
  return i as unknown as { readonly name: string } & Record<string, unknown>;
}

/** Explicit strides in `layout` with the innermost stride padded by `pad` elements (batch 0 in group mode). */
function paddedStrides(
  layout: AttentionLayout,
  nhead: number,
  rows: number,
  hdim: number,
  pad: number,
  group: boolean,
): AttentionTensorStrides {
  const inner = hdim + pad;
  const s =
    layout === 'bhsd'
      ? { row: inner, head: rows * inner, batch: nhead * rows * inner }
      : { head: inner, row: nhead * inner, batch: rows * nhead * inner };
  return { ...s, batch: group ? 0 : s.batch };
}

function prefix(lens: readonly number[]): number[] {
  return lens.reduce((s, l) => [...s, s[s.length - 1]! + l], [0]);
}

const SPLITS: Record<FmhaFwdFuzzTarget, readonly (number | 'auto')[]> = {
  runner: [1, 1, 2, 4, 'auto'],
  launcher: [1, 1, 2, 3],
  sm80: [1],
  combine: [2, 3, 5],
};

/** A valid problem of `o` (before choosing an instance). */
function problems(o: FmhaFwdFuzzOptions): fc.Arbitrary<FmhaFwdProblem> {
  const hdims = (o.hdims ?? FMHA_FWD_HEAD_DIMS).filter((d) => o.target !== 'sm80' || d.hdimQ === 64 || d.hdimQ === 128);
  return fc
    .record({
      dtype: fc.constantFrom(...(o.dtypes ?? FMHA_FWD_DTYPES)),
      hd: fc.constantFrom(...hdims),
      nheadK: fc.integer({ min: 1, max: 2 }),
      ratio: fc.integer({ min: 1, max: 3 }),
      group: fc.constantFrom(...(o.groupMode ?? [false, true])),
      lens: fc.array(
        fc.record({
          sq: fc.integer({ min: 0, max: 150 }),
          sk: fc.integer({ min: 0, max: 200 }),
          used: fc.double({ min: 0, max: 1, noNaN: true }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      perBatchK: fc.boolean(),
      layouts: fc.tuple(fc.constantFrom<AttentionLayout>('bhsd', 'bshd'), fc.constantFrom<AttentionLayout>('bhsd', 'bshd')),
      pad: fc.constantFrom(0, 0, 8),
      mask: fc.constantFrom(...(o.masks ?? ['0', '0', 't', 'b', 't:17,5', 'b:-1,33', 'xt:64'])),
      lse: fc.boolean(),
      scale: fc.constantFrom(undefined, 0.125, 0.3),
      splitKv: fc.constantFrom(...(o.splits ?? SPLITS[o.target])),
    })
    .map((r) => {
      const nheadQ = r.nheadK * r.ratio;
      const batch = r.lens.length;
      const sequences = r.group
        ? {
            seqstartQ: prefix(r.lens.map((l) => l.sq)),
            seqstartK: prefix(r.lens.map((l) => l.sk)),
            ...(r.perBatchK ? { seqlenK: r.lens.map((l) => Math.floor(l.used * l.sk)) } : {}),
          }
        : { seqlenQ: Math.max(1, r.lens[0]!.sq), seqlenK: Math.max(1, r.lens[0]!.sk) };
      const rowsQ = 'seqstartQ' in sequences ? sequences.seqstartQ.at(-1)! : sequences.seqlenQ;
      const strides =
        r.pad === 0
          ? {}
          : {
              qStrides: paddedStrides(r.layouts[0], nheadQ, rowsQ, r.hd.hdimQ, r.pad, r.group),
              oStrides: paddedStrides(r.layouts[1], nheadQ, rowsQ, r.hd.hdimV, r.pad, r.group),
            };
      return {
        dtype: r.dtype,
        batch,
        nheadQ,
        nheadK: r.nheadK,
        hdimQ: r.hd.hdimQ,
        hdimV: r.hd.hdimV,
        ...sequences,
        inputLayout: r.layouts[0],
        outputLayout: r.layouts[1],
        ...strides,
        mask: r.mask,
        lse: r.lse,
        ...(r.scale === undefined ? {} : { scale: r.scale }),
        splitKv: r.splitKv,
      } as FmhaFwdProblem;
    });
}

/** The instance the call targets for a valid problem (undefined: none, or not `o.instance`). */
function instanceOf(p: CheckedFmhaFwdProblem, o: FmhaFwdFuzzOptions): string | undefined {
  try {
    if (o.target === 'runner') return '';
    if (o.target === 'launcher') return selectFmhaFwdInstance(p).name;
    if (o.target === 'combine') return selectFmhaFwdCombineInstance(p).name;
    const masked = p.mask.kind !== 'none' ? 'window' : 'none';
    return fmhaFwdSm80CatalogFor(sm90a).find(
      (i) => i.policy.dtype === p.dtype && i.policy.headDim === p.hdimQ && i.policy.headDimV === p.hdimV && i.policy.mask === masked,
    )?.name;
  } catch {
    return undefined;
  }
}

/** Bytes of every buffer a valid call of `target` passes (absent keys: not passed). */
export function fmhaFwdBufferBytes(p: CheckedFmhaFwdProblem, target: FmhaFwdFuzzTarget): Record<string, number> {
  const e = getDType(p.dtype).bytes;
  const el = fmhaFwdOperandElements(p);
  const ws = fmhaFwdWorkspace(p);
  const group = p.mode === 'group';
  const starts = group ? { seqstartQ: 4 * (p.batch + 1), ...(target === 'combine' ? {} : { seqstartK: 4 * (p.batch + 1) }) } : {};
  const seqlenK = group && p.hasSeqlenK && target !== 'combine' ? { seqlenK: 4 * p.batch } : {};
  const lse = p.lse ? { lse: 4 * el.lse } : {};
  if (target === 'combine') return { oAcc: 4 * ws.oElements, lseAcc: 4 * ws.lseElements, o: e * el.o, ...lse, ...starts };
  const io = { q: e * el.q, k: e * el.k, v: e * el.v };
  if (target === 'launcher' && p.numSplits > 1) return { ...io, o: 4 * ws.oElements, lse: 4 * ws.lseElements, ...starts, ...seqlenK };
  return { ...io, o: e * el.o, ...lse, ...starts, ...seqlenK };
}

/** Valid calls of `o.target`: a problem, the instance that runs it, buffers of exactly their extents. */
export function validFmhaFwdCalls(o: FmhaFwdFuzzOptions): fc.Arbitrary<FmhaFwdFuzzCall> {
  return problems(o)
    .map((problem) => {
      const checked = checkFmhaFwdProblem(problem);
      return { problem, checked, instance: instanceOf(checked, o) };
    })
    .filter((x) => x.instance !== undefined && (o.instance === undefined || x.instance === o.instance))
    .map(({ problem, checked, instance }) => ({
      problem: problem as unknown as Record<string, unknown>,
      instance: instance!,
      buffers: Object.fromEntries(Object.entries(fmhaFwdBufferBytes(checked, o.target)).map(([k, n]) => [k, allocPlan(n)])),
    }));
}

function setField(
  field: string,
  value: unknown,
  label = `problem.${field} = ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
): Corruption<FmhaFwdFuzzCall> {
  return { target: `problem.${field}`, label, apply: (c) => ({ ...c, problem: { ...c.problem, [field]: value } }) };
}

/** Heads, dtypes, head dims, layouts, flags, scale and splits: values no problem may have. */
function fieldCorruptions(p: FmhaFwdProblem, target: FmhaFwdFuzzTarget): fc.Arbitrary<Corruption<FmhaFwdFuzzCall>>[] {
  // The combine merges partials whatever the mask: a generic mask is only another instance's problem there.
  const generic = target === 'combine' ? [] : ['g:3,4', { kind: 'generic', y: 2, x: 3 }];
  return [
    fc.constantFrom<unknown>('fp32', 'fp8', 'half', undefined, 16).map((v) => setField('dtype', v)),
    fc.tuple(fc.constantFrom('batch', 'nheadQ', 'nheadK'), fc.constantFrom<unknown>(...BAD_SIZES, 65536)).map(([f, v]) => setField(f, v)),
    fc.constant(setField('nheadK', p.nheadQ + 1, `problem.nheadK = nheadQ + 1 = ${p.nheadQ + 1} (h % h_k ≠ 0)`)),
    fc.constantFrom<unknown>(0, 48, 100, 160, 512, 2000, 64.5, Number.NaN, undefined, '128').map((v) => setField('hdimQ', v)),
    fc
      .constantFrom<unknown>(0, 32, 63, 96, 4096, Number.NaN)
      .filter((v) => !FMHA_FWD_HEAD_DIMS.some((d) => d.hdimQ === p.hdimQ && d.hdimV === v))
      .map((v) => setField('hdimV', v)),
    fc
      .tuple(fc.constantFrom('inputLayout', 'outputLayout'), fc.constantFrom<unknown>('bsdh', 'BHSD', 'sbhd', 1))
      .map(([f, v]) => setField(f, v)),
    fc.constantFrom<unknown>('yes', 1, 0).map((v) => setField('lse', v)),
    fc.constantFrom<unknown>(0, -0.125, Number.NaN, Infinity, -Infinity, 1e-50, 1e39, '0.1').map((v) => setField('scale', v)),
    fc.constantFrom<unknown>(0, -1, 129, 1.5, Number.NaN, 'max', 'AUTO').map((v) => setField('splitKv', v)),
    fc
      .constantFrom<unknown>(
        'x',
        't:1',
        't:a,b',
        'q:1,2',
        't:1.5,2',
        't:1,2,3',
        'xt:w',
        't:1,4294967296',
        7,
        { kind: 'window', alignment: 'center', left: 1, right: 1 },
        { kind: 'window', alignment: 'topLeft', left: 0.5, right: 1 },
        { kind: 'sliding' },
        ...generic,
      )
      .map((v) => setField('mask', v)),
  ];
}

/** Sequences: bad lengths, lengths the buffers do not hold, and broken group-mode seqstarts. */
function sequenceCorruptions(p: FmhaFwdProblem, target: FmhaFwdFuzzTarget): fc.Arbitrary<Corruption<FmhaFwdFuzzCall>>[] {
  // The combine reads no K: longer key sequences are no error there.
  const grown = target === 'combine' ? (['seqlenQ'] as const) : (['seqlenQ', 'seqlenK'] as const);
  if (p.seqstartQ === undefined) {
    return [
      fc
        .tuple(fc.constantFrom('seqlenQ', 'seqlenK'), fc.constantFrom<unknown>(-1, 1.5, Number.NaN, Infinity, 2 ** 30 + 1, '5', null))
        .map(([f, v]) => setField(f, v)),
      fc
        .tuple(fc.constantFrom(...grown), fc.integer({ min: 2, max: 3 }))
        .map(([f, k]) => setField(f, (p[f as 'seqlenQ'] as number) * k + 1, `problem.${f} × ${k} + 1 (buffers sized for the original)`)),
      fc.constant(setField('seqlenK', [p.seqlenK], 'problem.seqlenK an array in batch mode')),
      fc.constant(setField('seqstartQ', [0, p.seqlenQ], 'problem.seqstartQ given in batch mode (with seqlenQ)')),
    ];
  }
  const starts = (f: 'seqstartQ' | 'seqstartK') => p[f] as readonly number[];
  const with1 = (f: 'seqstartQ' | 'seqstartK', i: number, v: unknown) => starts(f).map((x, j) => (j === i ? v : x));
  const field = fc.constantFrom<'seqstartQ' | 'seqstartK'>('seqstartQ', 'seqstartK');
  return [
    fc.tuple(field, fc.nat()).map(([f, n]) => {
      const i = 1 + (n % (starts(f).length - 1));
      return setField(f, with1(f, i, starts(f)[i - 1]! - 1 - (n % 5)), `problem.${f}[${i}] below [${i - 1}] (non-monotone)`);
    }),
    fc.tuple(field, fc.nat(), fc.constantFrom<unknown>(-1, 1.5, Number.NaN, 2 ** 30 + 1, '3', null)).map(([f, n, v]) => {
      const i = n % starts(f).length;
      return setField(f, with1(f, i, v), `problem.${f}[${i}] = ${String(v)}`);
    }),
    fc
      .tuple(field, fc.boolean())
      .map(([f, longer]) =>
        setField(
          f,
          longer ? [...starts(f), starts(f).at(-1)!] : starts(f).slice(0, -1),
          `problem.${f} ${longer ? 'one entry too many' : 'one entry short'}`,
        ),
      ),
    fc.tuple(field, fc.integer({ min: 1, max: 9 })).map(([f, d]) =>
      setField(
        f,
        starts(f).map((x) => x + d),
        `problem.${f} starting at ${d}`,
      ),
    ),
    fc.constant(setField('seqstartK', undefined, 'problem.seqstartK missing in group mode')),
    fc.constant(setField('seqlenQ', 7, 'problem.seqlenQ given in group mode')),
    fc.tuple(fc.nat(), fc.integer({ min: 1, max: 50 })).map(([n, d]) => {
      const sk = starts('seqstartK');
      const b = n % (sk.length - 1);
      const slots = sk.slice(1).map((e, j) => e - sk[j]!);
      return setField(
        'seqlenK',
        slots.map((s, j) => (j === b ? s + d : s)),
        `problem.seqlenK[${b}] past its slot by ${d}`,
      );
    }),
    fc.constant(setField('seqlenK', [1, 2, 3, 4, 5], 'problem.seqlenK of the wrong length')),
    // A valid problem with more rows than the buffers hold (the last sequence grown).
    fc
      .tuple(fc.constantFrom(...grown.map((f) => (f === 'seqlenQ' ? 'seqstartQ' : 'seqstartK'))), fc.integer({ min: 1, max: 64 }))
      .map(([f, d]) =>
        setField(
          f,
          [...starts(f).slice(0, -1), starts(f).at(-1)! + d],
          `problem.${f}: the last sequence ${d} rows longer (buffers sized for the original)`,
        ),
      ),
  ];
}

/** Explicit strides that overlap, are negative, fractional, not 16-byte multiples, or nonzero batch strides in group mode. */
function strideCorruptions(p: FmhaFwdProblem, target: FmhaFwdFuzzTarget): fc.Arbitrary<Corruption<FmhaFwdFuzzCall>>[] {
  const checked = checkFmhaFwdProblem(p);
  const group = checked.mode === 'group';
  const names = ['qStrides', 'kStrides', 'vStrides', 'oStrides'] as const;
  const of = (f: (typeof names)[number]) => checked[f];
  const out = [
    fc
      .tuple(fc.constantFrom(...names), fc.constantFrom('row', 'head', 'batch'), fc.constantFrom<unknown>(-8, 1.5, Number.NaN, '64', null))
      .map(([f, k, v]) => setField(f, { ...of(f), [k]: v }, `problem.${f}.${k} = ${String(v)}`)),
    fc
      .constantFrom(...names)
      .map((f) => setField(f, { ...of(f), row: 1, head: 1, batch: group ? 0 : 1 }, `problem.${f} overlapping rows and heads`)),
    fc.constantFrom(...names).map((f) => setField(f, 'packed', `problem.${f} not an object`)),
  ];
  if (group)
    out.push(fc.constantFrom(...names).map((f) => setField(f, { ...of(f), batch: 64 }, `problem.${f}.batch nonzero in group mode`)));
  // Strides the problem accepts but no kernel reads: Q/K/V rows (or heads) not 16-byte multiples, odd O rows.
  if (target !== 'combine')
    out.push(
      fc
        .constantFrom('qStrides', 'kStrides', 'vStrides')
        .map((f) => setField(f, widened(checked, f), `problem.${f}: rows not 16-byte multiples`)),
    );
  out.push(fc.constant(setField('oStrides', oddRows(checked), 'problem.oStrides: odd rows')));
  return out;
}

/** Packed strides of one of Q, K, V with the head dim's extent one element longer (no overlap, not 16-byte multiples). */
function widened(p: CheckedFmhaFwdProblem, f: 'qStrides' | 'kStrides' | 'vStrides'): AttentionTensorStrides {
  const nhead = f === 'qStrides' ? p.nheadQ : p.nheadK;
  const rows = f === 'qStrides' ? p.rowsQ : p.rowsK;
  const hdim = f === 'vStrides' ? p.hdimV : p.hdimQ;
  const s = packedAttentionStrides(p.inputLayout, nhead, rows, hdim + 1);
  return { ...s, batch: p.mode === 'group' ? 0 : s.batch };
}

/** O strides with an odd row stride (bhsd: the row one element longer; bshd: one element after the heads). */
function oddRows(p: CheckedFmhaFwdProblem): AttentionTensorStrides {
  const s = p.oStrides;
  const odd = p.outputLayout === 'bhsd' ? { row: s.row + 1, head: (s.row + 1) * p.rowsQ } : { row: s.row + 1, head: s.head };
  const batch = p.outputLayout === 'bhsd' ? p.nheadQ * odd.head : p.rowsQ * odd.row;
  return { ...odd, batch: p.mode === 'group' ? 0 : batch };
}

/** Another instance's problem, for the launchers bound to one instance (the runner would dispatch it). */
function mismatchCorruptions(p: FmhaFwdProblem, target: FmhaFwdFuzzTarget): fc.Arbitrary<Corruption<FmhaFwdFuzzCall>>[] {
  if (target === 'runner') return [];
  const other = FMHA_FWD_DTYPES.find((d) => d !== p.dtype)!;
  const out = [fc.constant(setField('dtype', other, `problem.dtype ${other}: another instance's`))];
  const pairs = FMHA_FWD_HEAD_DIMS.filter(
    (d) => (d.hdimQ !== p.hdimQ || d.hdimV !== p.hdimV) && d.hdimV !== p.hdimV && (target !== 'sm80' || d.hdimQ === 64 || d.hdimQ === 128),
  );
  if (pairs.length > 0)
    out.push(
      fc.constantFrom(...pairs).map((d) => ({
        target: 'problem.hdimQ',
        label: `head dims ${d.hdimQ}/${d.hdimV}: another instance's`,
        apply: (c: FmhaFwdFuzzCall) => ({
          ...c,
          problem: {
            ...c.problem,
            hdimQ: d.hdimQ,
            hdimV: d.hdimV,
            qStrides: undefined,
            kStrides: undefined,
            vStrides: undefined,
            oStrides: undefined,
          },
        }),
      })),
    );
  if (target !== 'combine') out.push(fc.constant(setField('mask', p.mask === '0' ? 't' : '0', "the other mask kind: another instance's")));
  if (target === 'launcher' || target === 'sm80')
    out.push(fc.constant(setField('splitKv', p.splitKv === 1 ? 2 : 1, "the other split mode: another instance's")));
  return out;
}

/** Buffer corruptions of `target`: each buffer too small, misaligned, missing, not a buffer; outputs over inputs. */
function buffersCorruptions(c: FmhaFwdFuzzCall, target: FmhaFwdFuzzTarget): fc.Arbitrary<Corruption<FmhaFwdFuzzCall>>[] {
  const checked = checkFmhaFwdProblem(c.problem as unknown as FmhaFwdProblem);
  const bytes = fmhaFwdBufferBytes(checked, target);
  const e = getDType(checked.dtype).bytes;
  const split = target === 'launcher' && checked.numSplits > 1;
  const inputs = target === 'combine' ? ['oAcc', 'lseAcc'] : ['q', 'k', 'v'];
  const align: Record<string, number> = {
    q: 16,
    k: 16,
    v: 16,
    o: split ? 8 : 2 * e,
    lse: 4,
    oAcc: 16,
    lseAcc: 4,
    seqstartQ: 4,
    seqstartK: 4,
    seqlenK: 4,
  };
  return Object.entries(bytes).flatMap(([name, need]) => {
    const output = name === 'o' || name === 'lse';
    const overlaps = output ? [...inputs, ...(name === 'lse' ? ['o'] : [])].filter((x) => (bytes[x] ?? 0) > 0) : [];
    return bufferCorruptions<FmhaFwdFuzzCall>(name, { need, align: align[name]!, overlaps: need > 0 ? overlaps : [] });
  });
}

/** Invalid calls of `o.target`: a valid one with one to three corruptions of the problem or the buffers. */
export function invalidFmhaFwdCalls(o: FmhaFwdFuzzOptions): fc.Arbitrary<InvalidCall<FmhaFwdFuzzCall>> {
  return invalidCalls(validFmhaFwdCalls(o), (c) => {
    const p = c.problem as unknown as FmhaFwdProblem;
    return [
      ...fieldCorruptions(p, o.target),
      ...sequenceCorruptions(p, o.target),
      ...strideCorruptions(p, o.target),
      ...mismatchCorruptions(p, o.target),
      ...buffersCorruptions(c, o.target),
    ];
  });
}
