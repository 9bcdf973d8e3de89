// Random invalid argument sets of the attention-backward runner (`FmhaBwdRunner.create` + `run`): a
// random valid call (problem, the nine tensors and group-mode seqstarts of exactly their extents,
// sometimes a caller's workspace) with one to three corruptions — bad or inconsistent shapes,
// strides, dtypes, head dims the kernels lack, heads (h % h_k ≠ 0), seqstarts (non-monotone, out of
// range, wrong length), masks, scales, flags, score modifiers; buffers too small, misaligned,
// missing, not buffers or overlapping (dK over dV, dQ over Q, …); a workspace too small or
// misaligned. Used by the CI fuzz spec (fake addon) and replayed on a GPU.
import fc from 'fast-check';
import {
  FmhaBwdLauncher,
  packedAttentionStrides,
  type AttentionLayout,
  type AttentionTensorStrides,
  checkFmhaBwdProblem,
  FMHA_BWD_DTYPES,
  FMHA_BWD_TENSORS,
  fmhaBwdOperandElements,
  fmhaBwdTraitsOf,
  type CheckedFmhaBwdProblem,
  type FmhaBwdDType,
  type FmhaBwdProblem,
} from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';
import { FMHA_BWD_TRIPLES } from '../fmhaBwdCatalog.ts';
import { FMHA_BWD_DQ_STORE_VECTOR } from '@tilekit/fmha-launch';
import {
  allocPlan,
  BAD_SIZES,
  bufferCorruptions,
  invalidCalls,
  withBuffer,
  type BufferPlan,
  type Corruption,
  type InvalidCall,
} from '@tilekit/runtime/testing';

/** One backward call as data: the problem (possibly corrupted) and the buffers (`workspace`: the caller's, passed to `create`). */
export interface FmhaBwdFuzzCall {
  readonly problem: Readonly<Record<string, unknown>>;
  readonly buffers: Readonly<Record<string, BufferPlan>>;
}

/** Which valid calls to start from. */
export interface FmhaBwdFuzzOptions {
  readonly dtypes?: readonly FmhaBwdDType[];
  readonly hdims?: readonly number[];
  readonly masks?: readonly string[];
  readonly deterministic?: readonly boolean[];
  readonly groupMode?: readonly boolean[];
  /** The device's SMs (the deterministic batch-mode workspace depends on them; default 132). */
  readonly smCount?: number;
}

function prefix(lens: readonly number[]): number[] {
  return lens.reduce((s, l) => [...s, s[s.length - 1]! + l], [0]);
}

/** Strides in `layout` with the innermost stride padded by 8 elements (batch 0 in group mode). */
function padded(layout: AttentionLayout, nhead: number, rows: number, hdim: number, group: boolean): AttentionTensorStrides {
  const s = packedAttentionStrides(layout, nhead, rows, hdim + 8);
  return { ...s, batch: group ? 0 : s.batch };
}

/** A valid problem of `o` (head dims, masks and determinism the catalog has). */
function problems(o: FmhaBwdFuzzOptions): fc.Arbitrary<FmhaBwdProblem> {
  return fc
    .record({
      dtype: fc.constantFrom(...(o.dtypes ?? FMHA_BWD_DTYPES)),
      d: fc.constantFrom(...(o.hdims ?? [64, 128, 256])),
      nheadK: fc.integer({ min: 1, max: 2 }),
      ratio: fc.integer({ min: 1, max: 3 }),
      group: fc.constantFrom(...(o.groupMode ?? [false, true])),
      lens: fc.array(fc.record({ sq: fc.integer({ min: 0, max: 150 }), sk: fc.integer({ min: 0, max: 200 }) }), {
        minLength: 1,
        maxLength: 3,
      }),
      layouts: fc.tuple(fc.constantFrom<AttentionLayout>('bhsd', 'bshd'), fc.constantFrom<AttentionLayout>('bhsd', 'bshd')),
      pad: fc.boolean(),
      mask: fc.constantFrom(...(o.masks ?? ['0', '0', 't', 'b', 't:17,5'])),
      deterministic: fc.constantFrom(...(o.deterministic ?? [false, true])),
      scale: fc.constantFrom(undefined, 0.1),
    })
    .map((r) => {
      const nheadQ = r.nheadK * r.ratio;
      const sequences = r.group
        ? { seqstartQ: prefix(r.lens.map((l) => l.sq)), seqstartK: prefix(r.lens.map((l) => l.sk)) }
        : { seqlenQ: Math.max(1, r.lens[0]!.sq), seqlenK: Math.max(1, r.lens[0]!.sk) };
      const rowsQ = 'seqstartQ' in sequences ? sequences.seqstartQ.at(-1)! : sequences.seqlenQ;
      const strides = r.pad
        ? { strides: { q: padded(r.layouts[0], nheadQ, rowsQ, r.d, r.group), dO: padded(r.layouts[1], nheadQ, rowsQ, r.d, r.group) } }
        : {};
      return {
        dtype: r.dtype,
        batch: r.lens.length,
        nheadQ,
        nheadK: r.nheadK,
        hdimQ: r.d,
        hdimV: r.d,
        ...sequences,
        inputLayout: r.layouts[0],
        outputLayout: r.layouts[1],
        ...strides,
        mask: r.mask,
        deterministic: r.deterministic && r.d <= 128,
        ...(r.scale === undefined ? {} : { scale: r.scale }),
      } as FmhaBwdProblem;
    });
}

/** The workspace bytes the runner needs for a valid problem on `smCount` SMs. */
export function fmhaBwdWorkspaceBytes(p: CheckedFmhaBwdProblem, smCount: number): number {
  const executor = { copyToDevice: () => undefined, fillZero: () => undefined, launch: () => undefined };
  return new FmhaBwdLauncher(fmhaBwdTraitsOf(p), { catalog: FMHA_BWD_TRIPLES, executor, smCount, warn: () => undefined }).workspaceSize
    .total;
}

/** Bytes and alignment of every run buffer of a valid problem. */
export function fmhaBwdBufferSpecs(p: CheckedFmhaBwdProblem): Record<string, { readonly need: number; readonly align: number }> {
  const e = getDType(p.dtype).bytes;
  const el = fmhaBwdOperandElements(p);
  const align: Record<string, number> = { q: 16, k: 16, v: 16, o: 16, dO: 16, dQ: FMHA_BWD_DQ_STORE_VECTOR * e, dK: 2 * e, dV: 2 * e };
  const tensors = Object.fromEntries(FMHA_BWD_TENSORS.map((t) => [t, { need: el[t] * e, align: align[t]! }]));
  const starts =
    p.mode === 'group' ? { seqstartQ: { need: 4 * (p.batch + 1), align: 4 }, seqstartK: { need: 4 * (p.batch + 1), align: 4 } } : {};
  return { ...tensors, lse: { need: 4 * el.lse, align: 4 }, ...starts };
}

/** Valid calls: a problem, its buffers of exactly their extents, and sometimes a caller's workspace of exactly its size. */
export function validFmhaBwdCalls(o: FmhaBwdFuzzOptions = {}): fc.Arbitrary<FmhaBwdFuzzCall> {
  return fc.tuple(problems(o), fc.boolean()).map(([problem, ownWorkspace]) => {
    const checked = checkFmhaBwdProblem(problem);
    const buffers: Record<string, BufferPlan> = Object.fromEntries(
      Object.entries(fmhaBwdBufferSpecs(checked)).map(([k, s]) => [k, allocPlan(s.need)]),
    );
    const ws = fmhaBwdWorkspaceBytes(checked, o.smCount ?? 132);
    if (ownWorkspace && ws > 0) buffers['workspace'] = allocPlan(ws);
    return { problem: problem as unknown as Record<string, unknown>, buffers };
  });
}

function setField(
  field: string,
  value: unknown,
  label = `problem.${field} = ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
): Corruption<FmhaBwdFuzzCall> {
  return { target: `problem.${field}`, label, apply: (c) => ({ ...c, problem: { ...c.problem, [field]: value } }) };
}

/** Heads, dtypes, head dims, layouts, mask, scale and flags no problem (or no kernel) may have. */
function fieldCorruptions(p: FmhaBwdProblem): fc.Arbitrary<Corruption<FmhaBwdFuzzCall>>[] {
  return [
    fc.constantFrom<unknown>('fp32', 'fp8', undefined, 2).map((v) => setField('dtype', v)),
    fc.tuple(fc.constantFrom('batch', 'nheadQ', 'nheadK'), fc.constantFrom<unknown>(...BAD_SIZES, 65536)).map(([f, v]) => setField(f, v)),
    fc.constant(setField('nheadK', p.nheadQ + 1, `problem.nheadK = nheadQ + 1 = ${p.nheadQ + 1} (h % h_k ≠ 0)`)),
    fc.constantFrom<unknown>(0, 32, 48, 96, 192, 100, 512, 2000, 64.5, Number.NaN, undefined).map((v) => setField('hdimQ', v)),
    fc
      .constantFrom<unknown>(0, 1.5, Number.NaN, 4096, ...[64, 128, 256].filter((d) => d !== p.hdimQ))
      .map((v) => setField('hdimV', v, `problem.hdimV = ${String(v)} (hdimQ ${p.hdimQ})`)),
    fc.tuple(fc.constantFrom('inputLayout', 'outputLayout'), fc.constantFrom<unknown>('bsdh', 'BHSD', 2)).map(([f, v]) => setField(f, v)),
    fc.constantFrom<unknown>(0, -0.5, Number.NaN, Infinity, -Infinity, 1e-50, 1e39, '0.1').map((v) => setField('scale', v)),
    fc.constantFrom<unknown>('yes', 1, 0).map((v) => setField('deterministic', v)),
    fc.constantFrom<unknown>('bias', 'ALIBI', 7, null).map((v) => setField('scoreModifier', v)),
    fc
      .constantFrom<unknown>(
        'x',
        't:1',
        'b:1.5,2',
        'xb:z',
        7,
        { kind: 'window', alignment: 'middle', left: 1, right: 1 },
        { kind: 'window', alignment: 'topLeft', left: Number.NaN, right: 0 },
        'g:3,4',
        { kind: 'generic', y: 2, x: 3 },
      )
      .map((v) => setField('mask', v)),
    ...(p.hdimQ === 256
      ? [fc.constant(setField('deterministic', true, 'problem.deterministic at head dim 256 (no deterministic kernel)'))]
      : []),
  ];
}

/** Sequences: bad lengths, lengths the buffers do not hold, broken group-mode seqstarts, fields of the other mode. */
function sequenceCorruptions(p: FmhaBwdProblem): fc.Arbitrary<Corruption<FmhaBwdFuzzCall>>[] {
  if (p.seqstartQ === undefined) {
    return [
      fc
        .tuple(fc.constantFrom('seqlenQ', 'seqlenK'), fc.constantFrom<unknown>(-1, 1.5, Number.NaN, Infinity, 2 ** 30 + 1, '5', [3]))
        .map(([f, v]) => setField(f, v)),
      fc
        .tuple(fc.constantFrom('seqlenQ', 'seqlenK'), fc.integer({ min: 2, max: 3 }))
        .map(([f, k]) => setField(f, (p[f as 'seqlenQ'] as number) * k + 1, `problem.${f} × ${k} + 1 (buffers sized for the original)`)),
      fc.constant(setField('seqstartK', [0, p.seqlenK], 'problem.seqstartK given in batch mode')),
    ];
  }
  const starts = (f: 'seqstartQ' | 'seqstartK') => p[f] as readonly number[];
  const field = fc.constantFrom<'seqstartQ' | 'seqstartK'>('seqstartQ', 'seqstartK');
  const at = (f: 'seqstartQ' | 'seqstartK', n: number) => 1 + (n % (starts(f).length - 1));
  return [
    fc.tuple(field, fc.nat()).map(([f, n]) =>
      setField(
        f,
        starts(f).map((x, j) => (j === at(f, n) ? starts(f)[j - 1]! - 1 : x)),
        `problem.${f}[${at(f, n)}] below its predecessor (non-monotone)`,
      ),
    ),
    fc.tuple(field, fc.nat(), fc.constantFrom<unknown>(-1, 2.5, Number.NaN, 2 ** 30 + 1, null)).map(([f, n, v]) =>
      setField(
        f,
        starts(f).map((x, j) => (j === n % starts(f).length ? v : x)),
        `problem.${f}[${n % starts(f).length}] = ${String(v)}`,
      ),
    ),
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
    fc.constant(setField('seqstartQ', undefined, 'problem.seqstartQ missing in group mode')),
    fc.constant(setField('seqlenK', 5, 'problem.seqlenK given in group mode')),
    fc
      .tuple(field, fc.integer({ min: 1, max: 64 }))
      .map(([f, d]) =>
        setField(
          f,
          [...starts(f).slice(0, -1), starts(f).at(-1)! + d],
          `problem.${f}: the last sequence ${d} rows longer (buffers sized for the original)`,
        ),
      ),
  ];
}

/** Explicit strides: unknown tensors, bad values, overlaps, nonzero batch strides in group mode, rows the kernels cannot load. */
function strideCorruptions(p: FmhaBwdProblem): fc.Arbitrary<Corruption<FmhaBwdFuzzCall>>[] {
  const checked = checkFmhaBwdProblem(p);
  const group = checked.mode === 'group';
  const set = (label: string, strides: Record<string, unknown>): Corruption<FmhaBwdFuzzCall> => ({
    target: 'problem.strides',
    label,
    apply: (c) => ({ ...c, problem: { ...c.problem, strides: { ...(c.problem['strides'] as object | undefined), ...strides } } }),
  });
  const tensor = fc.constantFrom(...FMHA_BWD_TENSORS);
  const out = [
    fc.constantFrom('dq', 'lse', 'd_o').map((k) => set(`problem.strides.${k}: not a tensor`, { [k]: checked.strides.q })),
    fc
      .tuple(tensor, fc.constantFrom('row', 'head', 'batch'), fc.constantFrom<unknown>(-8, 2.5, Number.NaN, '64', null))
      .map(([t, k, v]) => set(`problem.strides.${t}.${k} = ${String(v)}`, { [t]: { ...checked.strides[t], [k]: v } })),
    tensor.map((t) => set(`problem.strides.${t} overlapping rows and heads`, { [t]: { row: 1, head: 1, batch: group ? 0 : 1 } })),
    // Strides the problem accepts but the kernels cannot load: one element past the packed row (not 16-byte multiples, odd).
    fc
      .constantFrom('q', 'k', 'v', 'dO', 'o', 'dQ', 'dK', 'dV')
      .map((t) => set(`problem.strides.${t}: rows one element longer`, { [t]: widened(checked, t) })),
    fc.constant({
      target: 'problem.strides',
      label: 'problem.strides not an object',
      apply: (c: FmhaBwdFuzzCall) => ({ ...c, problem: { ...c.problem, strides: 'packed' } }),
    }),
  ];
  if (group)
    out.push(tensor.map((t) => set(`problem.strides.${t}.batch nonzero in group mode`, { [t]: { ...checked.strides[t], batch: 64 } })));
  return out;
}

/** Packed strides of tensor `t` with the head dim one element longer (no overlap; the kernels' row rules broken). */
function widened(p: CheckedFmhaBwdProblem, t: 'q' | 'k' | 'v' | 'o' | 'dO' | 'dQ' | 'dK' | 'dV'): AttentionTensorStrides {
  const q = t === 'q' || t === 'o' || t === 'dO' || t === 'dQ';
  const layout = t === 'o' || t === 'dO' ? p.outputLayout : p.inputLayout;
  const s = packedAttentionStrides(
    layout,
    q ? p.nheadQ : p.nheadK,
    q ? p.rowsQ : p.rowsK,
    (t === 'v' || t === 'o' || t === 'dO' || t === 'dV' ? p.hdimV : p.hdimQ) + 1,
  );
  return { ...s, batch: p.mode === 'group' ? 0 : s.batch };
}

/** Buffer corruptions: each too small, misaligned, missing, not a buffer; outputs over inputs and over each other; the workspace too small or misaligned. */
function buffersCorruptions(c: FmhaBwdFuzzCall, o: FmhaBwdFuzzOptions): fc.Arbitrary<Corruption<FmhaBwdFuzzCall>>[] {
  const checked = checkFmhaBwdProblem(c.problem as unknown as FmhaBwdProblem);
  const specs = fmhaBwdBufferSpecs(checked);
  const has = (n: string) => (specs[n]?.need ?? 0) > 0;
  const overlapsOf: Record<string, string[]> = { dQ: ['q', 'k', 'o', 'dO', 'lse'], dK: ['k', 'q', 'v', 'dV'], dV: ['v', 'dO', 'dK', 'q'] };
  const out = Object.entries(specs).flatMap(([name, s]) =>
    bufferCorruptions<FmhaBwdFuzzCall>(name, { ...s, overlaps: s.need > 0 ? (overlapsOf[name] ?? []).filter(has) : [] }),
  );
  const ws = fmhaBwdWorkspaceBytes(checked, o.smCount ?? 132);
  if (ws > 0) {
    out.push(
      fc.integer({ min: 1, max: ws - 1 }).map((bytes) => ({
        target: 'workspace',
        label: `workspace ${bytes} of ${ws} bytes`,
        apply: (x: FmhaBwdFuzzCall) => withBuffer(x, 'workspace', { kind: 'alloc', bytes, offset: 0 }),
      })),
    );
    out.push(
      fc.constantFrom(4, 8).map((offset) => ({
        target: 'workspace',
        label: `workspace at offset ${offset} (needs 16-byte alignment)`,
        apply: (x: FmhaBwdFuzzCall) => withBuffer(x, 'workspace', { kind: 'alloc', bytes: ws, offset }),
      })),
    );
    out.push(
      fc.constant({
        target: 'workspace',
        label: 'workspace not a device buffer',
        apply: (x: FmhaBwdFuzzCall) => withBuffer(x, 'workspace', { kind: 'notBuffer' }),
      }),
    );
  }
  return out;
}

/** Invalid calls: a valid one with one to three corruptions of the problem, the buffers or the workspace. */
export function invalidFmhaBwdCalls(o: FmhaBwdFuzzOptions = {}): fc.Arbitrary<InvalidCall<FmhaBwdFuzzCall>> {
  return invalidCalls(validFmhaBwdCalls(o), (c) => {
    const p = c.problem as unknown as FmhaBwdProblem;
    return [...fieldCorruptions(p), ...sequenceCorruptions(p), ...strideCorruptions(p), ...buffersCorruptions(c, o)];
  });
}
