// Random invalid argument sets of Sparge's public entry points: the runner (`SpargeRunner.prepare` +
// `launch`), the block map (`SpargeBlockMapKernels.prepare` + `launch`: the pooling problem and the
// selection config) and the sparse attention launcher (`SpargeFwdKernel.prepare`). A random valid
// call gets one to three corruptions — bad or inconsistent shapes, dtypes, head dims, heads,
// sequences and seqstarts, hyperparameters (topk/cdfthreshd/simthreshd1/pvThreshold out of range,
// NaN, wrong per-head lengths), flags, pipelines and PV modes; block grids the kernel does not
// tile; another instance's problem; buffers too small, misaligned, missing, not buffers or
// overlapping. Used by the CI fuzz spec (fake addon) and replayed on a GPU.
import fc from 'fast-check';
import { fmhaFwdOperandElements } from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';
import { SPARGE_FWD_CATALOG } from '../attention/spargeFwdCatalog.ts';
import type { SpargeBlockMapProblem } from '../blockMap/spargeBlockMapKernels.ts';
import { checkSpargePoolProblem, spargePackedStrides, spargeTensorSpan } from '../blockMap/spargePoolProblem.ts';
import { checkSpargeSelectConfig, spargeSelectBufferBytes } from '../blockMap/spargeSelectLauncher.ts';
import { planSparge, type SpargeProblem } from '../spargeRunner.ts';
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
export type SpargeFuzzTarget = 'runner' | 'blockMap' | 'attention';

/**
 * One Sparge call as data: the problem (a `SpargeProblem`, or a `SpargeBlockMapProblem` for the block
 * map; possibly corrupted), the attention instance (by name; '' elsewhere), fields written over the
 * planned launch problem (attention: a block grid the kernel does not tile), the buffers.
 */
export interface SpargeFuzzCall {
  readonly problem: Readonly<Record<string, unknown>>;
  readonly instance: string;
  readonly patch: Readonly<Record<string, unknown>>;
  readonly buffers: Readonly<Record<string, BufferPlan>>;
}

/** Which valid calls to start from. */
export interface SpargeFuzzOptions {
  readonly target: SpargeFuzzTarget;
  readonly dtypes?: readonly ('fp16' | 'bf16')[];
  readonly hdims?: readonly (64 | 128)[];
  readonly pipelines?: readonly ('vsa' | 'jenga')[];
  readonly pvModes?: readonly ('none' | 'warp' | 'block')[];
  readonly int8?: readonly boolean[];
  readonly causal?: readonly boolean[];
  readonly groupMode?: readonly boolean[];
  /** The attention instance every base must run (GPU replays: the one compiled). */
  readonly instance?: string;
}

function prefix(lens: readonly number[]): number[] {
  return lens.reduce((s, l) => [...s, s[s.length - 1]! + l], [0]);
}

/** A valid Sparge problem of `o`. */
function spargeProblems(o: SpargeFuzzOptions): fc.Arbitrary<SpargeProblem> {
  return fc
    .record({
      dtype: fc.constantFrom(...(o.dtypes ?? (['fp16', 'bf16'] as const))),
      hdim: fc.constantFrom(...(o.hdims ?? ([64, 128] as const))),
      nheadK: fc.integer({ min: 1, max: 2 }),
      ratio: fc.integer({ min: 1, max: 2 }),
      group: fc.constantFrom(...(o.groupMode ?? [false, true])),
      lens: fc.array(fc.record({ sq: fc.integer({ min: 1, max: 300 }), sk: fc.integer({ min: 1, max: 300 }) }), {
        minLength: 1,
        maxLength: 2,
      }),
      layout: fc.constantFrom('bhsd' as const, 'bshd' as const),
      selection: fc.oneof(fc.record({ topk: fc.constantFrom(0.25, 0.5, 1) }), fc.record({ cdfthreshd: fc.constantFrom(0, 0.5, 0.9) })),
      pvThreshold: fc.constantFrom(undefined, 20, Infinity),
      smoothK: fc.boolean(),
      attentionSink: fc.boolean(),
      isCausal: fc.constantFrom(...(o.causal ?? [false, true])),
      int8: fc.constantFrom(...(o.int8 ?? [false, true])),
      lse: fc.boolean(),
      pipeline: fc.constantFrom(...(o.pipelines ?? (['vsa', 'jenga'] as const))),
      pvMode: fc.constantFrom(...(o.pvModes ?? (['none', 'warp', 'block'] as const))),
    })
    .map((r) => ({
      dtype: r.dtype,
      batch: r.lens.length,
      nheadQ: r.nheadK * r.ratio,
      nheadK: r.nheadK,
      hdimQ: r.hdim,
      ...(r.group
        ? { seqstartQ: prefix(r.lens.map((l) => l.sq)), seqstartK: prefix(r.lens.map((l) => l.sk)) }
        : { seqlenQ: r.lens[0]!.sq, seqlenK: r.lens[0]!.sk }),
      inputLayout: r.layout,
      outputLayout: r.layout,
      // int8 Q·Kᵀ with smoothK has no LSE (the runner says so): no LSE there.
      lse: r.lse && !(r.int8 && r.smoothK),
      params: {
        ...r.selection,
        ...(r.pvThreshold === undefined ? {} : { pvThreshold: r.pvThreshold }),
        smoothK: r.smoothK,
        attentionSink: r.attentionSink,
        isCausal: r.isCausal,
        int8: r.int8,
      },
      pipeline: r.pipeline,
      pvMode: r.pvMode,
    }));
}

/** Bytes and alignment of every buffer a valid call of `target` passes. */
export function spargeBufferSpecs(
  problem: SpargeProblem | SpargeBlockMapProblem,
  target: SpargeFuzzTarget,
): Record<string, { readonly need: number; readonly align: number }> {
  return target === 'blockMap' ? blockMapSpecs(problem as SpargeBlockMapProblem) : attentionSpecs(problem as SpargeProblem, target);
}

function attentionSpecs(
  problem: SpargeProblem,
  target: SpargeFuzzTarget,
): Record<string, { readonly need: number; readonly align: number }> {
  const plan = planSparge(problem);
  const p = plan.attention;
  const e = getDType(p.dtype).bytes;
  const el = fmhaFwdOperandElements(p);
  const group = p.mode === 'group';
  const out: Record<string, { need: number; align: number }> = {
    q: { need: e * el.q, align: 16 },
    k: { need: e * el.k, align: 16 },
    v: { need: e * el.v, align: 16 },
    o: { need: e * el.o, align: 2 * e },
  };
  if (p.lse) out['lse'] = { need: 4 * el.lse, align: 4 };
  if (group) Object.assign(out, { seqstartQ: { need: 4 * (p.batch + 1), align: 4 }, seqstartK: { need: 4 * (p.batch + 1), align: 4 } });
  if (target === 'runner') return out;
  const rows = p.batch * p.nheadQ * p.qBlocks;
  const batches = group ? 1 : p.batch;
  if (p.pipeline === 'vsa')
    Object.assign(out, { lut: { need: 4 * rows * p.kBlocks, align: 4 }, validBlockNum: { need: 4 * rows, align: 4 } });
  else out['blockMap'] = { need: rows * p.kBlocks, align: 1 };
  out['pvThreshold'] = { need: 4 * p.nheadQ, align: 4 };
  out['pvStats'] = { need: 16, align: 8 };
  if (plan.params.int8) {
    Object.assign(out, {
      q8: { need: batches * p.nheadQ * p.rowsQ * p.hdimQ, align: 16 },
      k8: { need: batches * p.nheadK * p.rowsK * p.hdimQ, align: 16 },
      qScale: { need: 4 * rows, align: 4 },
      kScale: { need: 4 * p.batch * p.nheadK * p.kBlocks, align: 4 },
    });
  }
  return out;
}

function blockMapSpecs(problem: SpargeBlockMapProblem): Record<string, { readonly need: number; readonly align: number }> {
  const params = problem.params;
  const pool = checkSpargePoolProblem({
    ...problem,
    blockQ: params.blockQ ?? 128,
    blockK: params.blockK ?? 64,
    smoothK: params.smoothK ?? true,
    int8: params.int8 ?? false,
  });
  const group = pool.mode === 'group';
  const select = checkSpargeSelectConfig({
    batch: pool.batch,
    nhead: pool.nhead,
    nheadK: pool.nheadK,
    headDim: pool.headDim,
    blockQ: pool.blockQ,
    blockK: pool.blockK,
    ...(group ? { seqstartQ: pool.seqstartQ!, seqstartK: pool.seqstartK! } : { seqlenQ: pool.seqlenQ, seqlenK: pool.seqlenK }),
    selection: params.topk !== undefined ? 'topk' : 'cdf',
    isCausal: params.isCausal ?? false,
    attentionSink: params.attentionSink ?? true,
  });
  const sel = spargeSelectBufferBytes(select);
  const out: Record<string, { need: number; align: number }> = {
    q: { need: 2 * spargeTensorSpan(pool.qStrides, pool.batches, pool.nhead, pool.rowsQ, pool.headDim), align: 16 },
    k: { need: 2 * spargeTensorSpan(pool.kStrides, pool.batches, pool.nheadK, pool.rowsK, pool.headDim), align: 16 },
    blockMap: { need: sel.blockMap, align: 1 },
    lut: { need: sel.lut, align: 4 },
    validBlockNum: { need: sel.validBlockNum, align: 4 },
    visited: { need: sel.visited, align: 4 },
  };
  if (group)
    Object.assign(out, { seqstartQ: { need: 4 * (pool.batch + 1), align: 4 }, seqstartK: { need: 4 * (pool.batch + 1), align: 4 } });
  return out;
}

/** The block-map problem of a Sparge problem: the same shape (Q/K strides of its layout), blockQ/blockK 64 or 128. */
function blockMapProblem(p: SpargeProblem, blocks: readonly [number, number]): SpargeBlockMapProblem {
  const group = p.seqstartQ !== undefined;
  const rowsQ = group ? p.seqstartQ!.at(-1)! : p.seqlenQ!;
  const rowsK = group ? p.seqstartK!.at(-1)! : p.seqlenK!;
  const layout = p.inputLayout ?? 'bhsd';
  const nheadK = p.nheadK ?? p.nheadQ;
  return {
    dtype: p.dtype,
    headDim: p.hdimQ,
    batch: p.batch,
    nhead: p.nheadQ,
    nheadK,
    ...(group ? { seqstartQ: p.seqstartQ!, seqstartK: p.seqstartK! } : { seqlenQ: p.seqlenQ!, seqlenK: p.seqlenK! }),
    qStrides: { ...spargePackedStrides(layout, p.nheadQ, rowsQ, p.hdimQ), ...(group ? { batch: 0 } : {}) },
    kStrides: { ...spargePackedStrides(layout, nheadK, rowsK, p.hdimQ), ...(group ? { batch: 0 } : {}) },
    params: { ...p.params, blockQ: blocks[0], blockK: blocks[1] },
  };
}

/** Valid calls of `o.target`: a problem, the attention instance that runs it, buffers of exactly their extents. */
export function validSpargeCalls(o: SpargeFuzzOptions): fc.Arbitrary<SpargeFuzzCall> {
  const blocks = fc.tuple(fc.constantFrom(64, 128), fc.constantFrom(64, 128));
  return fc
    .tuple(spargeProblems(o), blocks)
    .map(([p, b]) => {
      const problem = o.target === 'blockMap' ? blockMapProblem(p, b) : p;
      const instance = o.target === 'attention' ? planSparge(p).instance.name : '';
      return { problem, instance };
    })
    .filter((x) => o.instance === undefined || x.instance === o.instance)
    .map(({ problem, instance }) => ({
      problem: problem as unknown as Record<string, unknown>,
      instance,
      patch: {},
      buffers: Object.fromEntries(
        Object.entries(spargeBufferSpecs(problem as SpargeProblem, o.target)).map(([k, s]) => [k, allocPlan(s.need)]),
      ),
    }));
}

function setField(
  field: string,
  value: unknown,
  label = `problem.${field} = ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
): Corruption<SpargeFuzzCall> {
  return { target: `problem.${field}`, label, apply: (c) => ({ ...c, problem: { ...c.problem, [field]: value } }) };
}

function setParam(
  field: string,
  value: unknown,
  label = `params.${field} = ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
): Corruption<SpargeFuzzCall> {
  // Params already corrupted into a non-object stay so.
  const set = (params: unknown) => (typeof params === 'object' && params !== null ? { ...params, [field]: value } : params);
  return { target: `params.${field}`, label, apply: (c) => ({ ...c, problem: { ...c.problem, params: set(c.problem['params']) } }) };
}

/** Hyperparameters out of range, NaN, of the wrong per-head length, both or neither selection, bad flags and blocks. */
function paramCorruptions(c: SpargeFuzzCall, target: SpargeFuzzTarget): fc.Arbitrary<Corruption<SpargeFuzzCall>>[] {
  const params = c.problem['params'] as Record<string, unknown>;
  const nhead = (c.problem['nheadQ'] ?? c.problem['nhead']) as number;
  const selection = params['topk'] !== undefined ? 'topk' : 'cdfthreshd';
  const bad = selection === 'topk' ? [0, -0.1, 1.5, Number.NaN, Infinity, '0.5'] : [-0.1, 1.1, Number.NaN, -Infinity, '0.5'];
  return [
    fc.constantFrom<unknown>(...bad).map((v) => setParam(selection, v)),
    fc.constant(setParam(selection, Array<number>(nhead + 1).fill(0.5), `params.${selection}: nhead + 1 per-head values`)),
    fc.nat().map((n) =>
      setParam(
        selection,
        Array.from({ length: nhead }, (_, h) => (h === n % nhead ? Number.NaN : 0.5)),
        `params.${selection}[${n % nhead}] = NaN`,
      ),
    ),
    // One target for both: together they would give exactly one selection again.
    fc.constant({ ...setParam(selection === 'topk' ? 'cdfthreshd' : 'topk', 0.5, 'both topk and cdfthreshd'), target: 'params.selection' }),
    fc.constant({ ...setParam(selection, undefined, 'neither topk nor cdfthreshd'), target: 'params.selection' }),
    fc
      .constantFrom<unknown>(Number.NaN, Infinity, -Infinity, 'low', Array<number>(nhead + 1).fill(0.1))
      .map((v) => setParam('simthreshd1', v)),
    fc.constantFrom<unknown>(-1, Number.NaN, -Infinity, 'off').map((v) => setParam('pvThreshold', v)),
    fc
      .tuple(fc.constantFrom('smoothK', 'attentionSink', 'isCausal', 'int8'), fc.constantFrom<unknown>(1, 'yes', 0))
      .map(([f, v]) => setParam(f, v)),
    fc.constantFrom<unknown>('none', 'nan', 3).map((v) => setParam('tailBlockRule', v)),
    fc
      .tuple(
        fc.constantFrom('blockQ', 'blockK'),
        fc.constantFrom<unknown>(...(target === 'blockMap' ? [0, 48, 100, 512, Number.NaN, 16] : [64, 256, 0, Number.NaN])),
      )
      .map(([f, v]) => setParam(f, v)),
    fc.constant({
      target: 'params',
      label: 'params not an object',
      apply: (x: SpargeFuzzCall) => ({ ...x, problem: { ...x.problem, params: 0.5 } }),
    }),
  ];
}

/** Shape fields: bad dtypes, head dims, heads (h % h_k ≠ 0), sequences, seqstarts, layouts and choices. */
function shapeCorruptions(c: SpargeFuzzCall, target: SpargeFuzzTarget): fc.Arbitrary<Corruption<SpargeFuzzCall>>[] {
  const p = c.problem;
  const [hdim, nhead] = target === 'blockMap' ? ['headDim', 'nhead'] : ['hdimQ', 'nheadQ'];
  const out = [
    fc.constantFrom<unknown>('fp32', 'int8', undefined).map((v) => setField('dtype', v)),
    fc.constantFrom<unknown>(32, 96, 256, 0, Number.NaN, '64').map((v) => setField(hdim, v)),
    fc.tuple(fc.constantFrom('batch', nhead, 'nheadK'), fc.constantFrom<unknown>(...BAD_SIZES, 65536)).map(([f, v]) => setField(f, v)),
    fc.constant(setField('nheadK', (p[nhead] as number) + 1, `problem.nheadK = ${nhead} + 1 (h % h_k ≠ 0)`)),
    ...sequenceCorruptions(p),
  ];
  if (target === 'blockMap') {
    // (The batch stride is unused, and not checked, in group mode.)
    const dims = p['seqstartQ'] === undefined ? (['row', 'head', 'batch'] as const) : (['row', 'head'] as const);
    out.push(
      fc
        .tuple(fc.constantFrom('qStrides', 'kStrides'), fc.constantFrom(...dims), fc.constantFrom<unknown>(-8, 4, 1.5, Number.NaN, '8'))
        .map(([f, k, v]) => setField(f, { ...(p[f] as object), [k]: v }, `problem.${f}.${k} = ${String(v)}`)),
    );
    out.push(
      fc.constantFrom('qStrides', 'kStrides').map((f) => setField(f, { ...(p[f] as object), row: 8 }, `problem.${f}.row below headDim`)),
    );
    return out;
  }
  out.push(fc.constantFrom<unknown>('bsdh', 3).map((v) => setField('inputLayout', v)));
  out.push(fc.constantFrom<unknown>('dense', 'VSA', 0).map((v) => setField('pipeline', v)));
  out.push(fc.constantFrom<unknown>('row', 'Warp', 1).map((v) => setField('pvMode', v)));
  out.push(fc.constantFrom<unknown>(0, Number.NaN, -1, 'big').map((v) => setField('scale', v)));
  out.push(fc.constantFrom<unknown>('yes', 1).map((v) => setField('lse', v)));
  if (p['pipeline'] === 'jenga' && p['seqlenK'] !== undefined)
    out.push(fc.constant(setField('seqlenK', 2048 * 128 + 1, 'problem.seqlenK: more key blocks than jenga lists')));
  const params = p['params'] as { int8?: boolean; smoothK?: boolean };
  if (params.int8 === true && params.smoothK !== false) out.push(fc.constant(setField('lse', true, 'LSE with int8 Q·Kᵀ and smoothK')));
  return out;
}

/** Sequences: bad lengths, lengths the buffers do not hold, broken group-mode seqstarts. */
function sequenceCorruptions(p: Readonly<Record<string, unknown>>): fc.Arbitrary<Corruption<SpargeFuzzCall>>[] {
  const starts = p['seqstartQ'] as readonly number[] | undefined;
  if (starts === undefined) {
    return [
      // (0: the dense forward allows empty sequences, the block map does not.)
      fc
        .tuple(fc.constantFrom('seqlenQ', 'seqlenK'), fc.constantFrom<unknown>(0, -1, 1.5, Number.NaN, Infinity, 2 ** 30 + 1, '5', null))
        .map(([f, v]) => setField(f, v)),
      fc
        .tuple(fc.constantFrom('seqlenQ', 'seqlenK'), fc.integer({ min: 2, max: 3 }))
        .map(([f, k]) => setField(f, (p[f] as number) * k + 1, `problem.${f} × ${k} + 1 (buffers sized for the original)`)),
      fc.constantFrom('seqlenQ', 'seqlenK').map((f) => setField(f, 0, `problem.${f} = 0 (the block map needs a row)`)),
      fc.constant(setField('seqlenK', 4096 * 128 + 1, 'problem.seqlenK: more key blocks than the selection sorts')),
    ];
  }
  const of = (f: string) => p[f] as readonly number[];
  const field = fc.constantFrom('seqstartQ', 'seqstartK');
  const at = (f: string, n: number) => 1 + (n % (of(f).length - 1));
  return [
    fc.tuple(field, fc.nat()).map(([f, n]) =>
      setField(
        f,
        of(f).map((x, j) => (j === at(f, n) ? of(f)[j - 1]! - 1 : x)),
        `problem.${f}[${at(f, n)}] below its predecessor (non-monotone)`,
      ),
    ),
    fc.tuple(field, fc.nat(), fc.constantFrom<unknown>(-1, 2.5, Number.NaN, 2 ** 31, null)).map(([f, n, v]) =>
      setField(
        f,
        of(f).map((x, j) => (j === n % of(f).length ? v : x)),
        `problem.${f}[${n % of(f).length}] = ${String(v)}`,
      ),
    ),
    fc
      .tuple(field, fc.boolean())
      .map(([f, longer]) =>
        setField(
          f,
          longer ? [...of(f), of(f).at(-1)!] : of(f).slice(0, -1),
          `problem.${f} ${longer ? 'one entry too many' : 'one entry short'}`,
        ),
      ),
    fc.tuple(field, fc.integer({ min: 1, max: 9 })).map(([f, d]) =>
      setField(
        f,
        of(f).map((x) => x + d),
        `problem.${f} starting at ${d}`,
      ),
    ),
    fc.constant(setField('seqstartK', undefined, 'problem.seqstartK missing in group mode')),
    fc
      .tuple(field, fc.integer({ min: 1, max: 64 }))
      .map(([f, d]) =>
        setField(
          f,
          [...of(f).slice(0, -1), of(f).at(-1)! + d],
          `problem.${f}: the last sequence ${d} rows longer (buffers sized for the original)`,
        ),
      ),
  ];
}

/** Attention launcher only: a block grid that is not the kernel's, another instance's pipeline, PV mode, dtype, head dim or mask. */
function attentionCorruptions(c: SpargeFuzzCall): fc.Arbitrary<Corruption<SpargeFuzzCall>>[] {
  const p = c.problem as unknown as SpargeProblem;
  const grid = planSparge(p).attention;
  const patch = (f: 'qBlocks' | 'kBlocks', delta: number): Corruption<SpargeFuzzCall> => ({
    target: `launch.${f}`,
    label: `launch problem ${f} ${delta > 0 ? '+' : ''}${delta}`,
    apply: (x) => ({ ...x, patch: { ...x.patch, [f]: Math.max(0, grid[f] + delta) } }),
  });
  const params = p.params;
  // (A PV-skip instance also runs pvMode none, and the Q·Kᵀ type is the instance's alone: neither is a mismatch.)
  const out = [
    fc.tuple(fc.constantFrom('qBlocks' as const, 'kBlocks' as const), fc.constantFrom(-1, 1, 5)).map(([f, d]) => patch(f, d)),
    fc.constant(setField('pipeline', p.pipeline === 'jenga' ? 'vsa' : 'jenga', "the other pipeline: another instance's")),
    fc.constant(setField('dtype', p.dtype === 'fp16' ? 'bf16' : 'fp16', "the other dtype: another instance's")),
    fc.constant(setField('hdimQ', p.hdimQ === 64 ? 128 : 64, "the other head dim: another instance's")),
    fc.constant(setParam('isCausal', !params.isCausal, "the other mask: another instance's")),
  ];
  if (p.pvMode === 'none') out.push(fc.constant(setField('pvMode', 'warp', "a PV mode: another instance's")));
  return out;
}

/**
 * Buffer corruptions of `target`: each too small, misaligned, missing, not a buffer; outputs over
 * what the same kernel reads or writes (the block map's outputs over Q or K are no race: the
 * pooling reads Q and K before the selection writes, in stream order).
 */
function buffersCorruptions(c: SpargeFuzzCall, target: SpargeFuzzTarget): fc.Arbitrary<Corruption<SpargeFuzzCall>>[] {
  const specs = spargeBufferSpecs(c.problem as unknown as SpargeProblem, target);
  const has = (n: string) => (specs[n]?.need ?? 0) > 0;
  const overlapsOf: Record<string, string[]> =
    target === 'blockMap'
      ? { lut: ['blockMap'], validBlockNum: ['lut', 'blockMap'], visited: ['validBlockNum', 'lut'] }
      : { o: ['q', 'k', 'v', 'lut', 'blockMap', 'q8'], lse: ['q', 'o', 'k8'], pvStats: ['q', 'pvThreshold'] };
  return Object.entries(specs).flatMap(([name, s]) =>
    bufferCorruptions<SpargeFuzzCall>(name, {
      ...s,
      optional: name === 'visited' || name === 'pvStats',
      overlaps: s.need > 0 ? (overlapsOf[name] ?? []).filter(has) : [],
    }),
  );
}

/** Invalid calls of `o.target`: a valid one with one to three corruptions. */
export function invalidSpargeCalls(o: SpargeFuzzOptions): fc.Arbitrary<InvalidCall<SpargeFuzzCall>> {
  return invalidCalls(validSpargeCalls(o), (c) => [
    ...shapeCorruptions(c, o.target),
    ...paramCorruptions(c, o.target),
    ...(o.target === 'attention' ? attentionCorruptions(c) : []),
    ...buffersCorruptions(c, o.target),
  ]);
}

/** The sparse attention instance named `name`. */
export function spargeFwdInstanceNamed(name: string): (typeof SPARGE_FWD_CATALOG)[number] {
  const i = SPARGE_FWD_CATALOG.find((x) => x.name === name);
  if (i === undefined) throw new Error(`no sparse attention instance ${name}`);
  return i;
}
