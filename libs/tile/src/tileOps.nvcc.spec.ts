// The CUDA dialect of every tile operation compiles with nvcc for sm_90a (to a cubin, no GPU
// needed): windows over global and shared memory (fp32 and fp16 vectors, symbolic lengths, padded
// and swizzled shared layouts), load/store/update/move, sweep, elementwise, cast, shuffle, slices and
// block reductions through shuffles and shared memory, block scans (both variants). One .cu file, one nvcc run. A missing nvcc
// skips LOUDLY.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { add, cast, eq, float32, index, int32, mul, pointer, sm90a, SourceBuilder, type ParamSpec, type VarExpr } from '@tilekit/codegen';
import { toolAvailable } from '@tilekit/codegen/testing';
import {
  makeNaiveTensorDescriptor,
  makeNaiveTensorDescriptorAligned,
  makeNaiveTensorDescriptorPacked,
  merge,
  passThrough,
  sym,
  symbol,
  transformTensorDescriptor,
  xor,
  type SymInt,
} from '@tilekit/layout';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockTileReduce, reduceMax, reduceSum } from './blockReduce.ts';
import { emitBlockExclusiveScan } from './blockScan.ts';
import { makeVectorLoadEncoding } from './blockEncodings.ts';
import { castTile, makeDistributedTensor, sweepTile, tileElementwise } from './distributedTensor.ts';
import { shuffleTile } from './shuffleTile.ts';
import { emitStagedCopy } from './testing/stagedCopy.ts';
import { getSliceTile, makeSliceTile, setSliceTile } from './sliceTile.ts';
import { encodingArb } from './testing/arbitraries.ts';
import { TileDistributionEncoding } from './tileDistributionEncoding.ts';
import { BlockEmitter } from './blockEmitter.ts';
import { loadTile, makeTensorView, makeTileWindow, moveTileWindow, storeTile, updateTile } from './tileWindow.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc)
  console.warn(
    `\n!!! SKIPPING the tile nvcc compile test: "${nvcc}" not found (set TILEKIT_NVCC). Emitted CUDA tile code is NOT being compiled. !!!\n`,
  );

function tileKernelsSource(): string {
  const t = sm90a;
  const src = new SourceBuilder({ dialect: t, header: 'tilekit tile: every tile operation in the CUDA dialect (compile test)' });
  const half = t.dtypeType('fp16');
  const enc = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 4, warpSize: 32, numWarps: 8 });
  const encHalf = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 4 });
  const permuted = new TileDistributionEncoding({ ...enc.toSpec(), ys: [...enc.ysToRhs].reverse() });
  const seqlen = symbol('seqlen', { max: 1 << 20 });
  const hdim = symbol('hdim', { max: 1024, multipleOf: 8 });
  const stride = symbol('stride', { max: 1 << 16, multipleOf: 8 });

  // 1. Global fp32 windows with symbolic lengths: load, elementwise, cast, sweep, shuffle, slices, store/update, move in a loop.
  src.function(
    {
      name: 'tile_ops_fp32',
      qualifiers: t.kernelQualifiers(),
      attributes: [t.launchBounds(enc.numThreads)],
      params: { a: pointer(float32, { const: true }), c: pointer(float32), seqlen: int32, hdim: int32, stride: int32 },
    },
    (b, p) => {
      const block = new BlockEmitter(b, t, {
        numThreads: enc.numThreads,
        index: { symbols: { seqlen: p.seqlen, hdim: p.hdim, stride: p.stride } },
      });
      const desc = makeNaiveTensorDescriptor([seqlen, hdim], [stride, 1], { vectorLength: 8 });
      const row = mul(cast(t.blockIdx('x'), int32), 64);
      const wa = makeTileWindow(block, { view: makeTensorView(p.a, desc), lengths: [64, 64], origin: [row, 0], encoding: enc });
      const wc = makeTileWindow(block, { view: makeTensorView(p.c, desc), lengths: [64, 64], origin: [row, 0], encoding: enc });
      const x = makeDistributedTensor(block, 'x', enc, float32);
      const y = makeDistributedTensor(block, 'y', permuted, float32);
      const n = makeDistributedTensor(block, 'n', enc, int32);
      const part = makeSliceTile(block, 'part', x, [16, 0], [32, 64]);
      block.threads((th) => {
        loadTile(th, wa, x);
        tileElementwise(th, x, [x], ([v]) => mul(v!, 2));
        castTile(th, n, x);
        sweepTile(th, n, (e) => e.b.assign(e.value, add(e.value, add(e.x[0]!, e.x[1]!))));
        castTile(th, x, n);
        shuffleTile(th, y, x);
        getSliceTile(th, part, x, [16, 0], [32, 64]);
        setSliceTile(th, x, part, [16, 0], [32, 64]);
        storeTile(th, wc, x);
      });
      // A main loop over column blocks: load, accumulate atomically, move.
      block.forRange({ name: 'kb', from: 1, to: 4 }, (loop) => {
        moveTileWindow(loop, wa, [0, 64]);
        loop.threads((th) => {
          loadTile(th, wa, x);
          updateTile(th, wc, x);
        });
      });
    },
  );

  // 2. fp16 global → shared (padded rows) → registers, 16-byte vectors, float registers.
  src.function(
    {
      name: 'tile_ops_fp16_shared',
      qualifiers: t.kernelQualifiers(),
      attributes: [t.launchBounds(encHalf.numThreads)],
      params: { a: pointer(half, { const: true }), c: pointer(half) },
    },
    (b, p) => {
      const block = new BlockEmitter(b, t, { numThreads: encHalf.numThreads });
      const g = makeNaiveTensorDescriptorPacked([64, 64]);
      const lds = makeNaiveTensorDescriptorAligned([64, 64], 72);
      const smem = block.shared('lds', half, 64 * 72);
      const wg = makeTileWindow(block, {
        view: makeTensorView(p.a, g, { elementBytes: 2 }),
        lengths: [64, 64],
        origin: [0, 0],
        encoding: encHalf,
      });
      const ws = makeTileWindow(block, {
        view: makeTensorView(smem, lds, { elementBytes: 2 }),
        lengths: [64, 64],
        origin: [0, 0],
        encoding: encHalf,
      });
      const wc = makeTileWindow(block, {
        view: makeTensorView(p.c, g, { elementBytes: 2 }),
        lengths: [64, 64],
        origin: [0, 0],
        encoding: encHalf,
      });
      const h = makeDistributedTensor(block, 'h', encHalf, half);
      const f = makeDistributedTensor(block, 'f', encHalf, float32);
      emitStagedCopy(block, { source: wg, staging: ws, destination: wc, first: h, second: f });
    },
  );

  // 3. A swizzled shared layout (xor on the column chunk: scalar accesses) and block reductions
  //    over columns (lane shuffles) and rows (across warps through shared memory).
  src.function(
    {
      name: 'tile_reduce_fp32',
      qualifiers: t.kernelQualifiers(),
      attributes: [t.launchBounds(enc.numThreads)],
      params: { a: pointer(float32, { const: true }), rowSum: pointer(float32), colMax: pointer(float32) },
    },
    (b, p) => {
      const block = new BlockEmitter(b, t, { numThreads: enc.numThreads });
      const g = makeNaiveTensorDescriptorPacked([64, 64]);
      // row r, column c → (r, (c/4 ^ r%16)·4 + c%4): 64 × (16 × 4) with the chunk index xor'ed by the row.
      const base = makeNaiveTensorDescriptorPacked([64, 16, 4]);
      const swz = transformTensorDescriptor(base, [xor([64, 16]), passThrough(4)], [[0, 1], [2]], [[0, 1], [2]]);
      const swizzled = transformTensorDescriptor(swz, [passThrough(64), merge([16, 4])], [[0], [1, 2]], [[0], [1]]);
      const smem = block.shared('tile', float32, 64 * 64);
      const wg = makeTileWindow(block, { view: makeTensorView(p.a, g), lengths: [64, 64], origin: [0, 0], encoding: enc });
      const ws = makeTileWindow(block, { view: makeTensorView(smem, swizzled), lengths: [64, 64], origin: [0, 0], encoding: enc });
      const x = makeDistributedTensor(block, 'x', enc, float32);
      block.threads((th) => {
        loadTile(th, wg, x);
        storeTile(th, ws, x);
      });
      block.sync();
      block.threads((th) => loadTile(th, ws, x));
      const rows = blockTileReduce(block, 'rows', x, [1], reduceSum);
      const cols = blockTileReduce(block, 'cols', x, [0], reduceMax);
      const out = (arr: VarExpr, lengths: readonly number[]) => makeTensorView(arr, makeNaiveTensorDescriptorPacked(lengths));
      const wr = makeTileWindow(block, { view: out(p.rowSum, [64]), lengths: [64], origin: [0] });
      const wcol = makeTileWindow(block, { view: out(p.colMax, [64]), lengths: [64], origin: [0] });
      block.threads((th) => {
        storeTile(th, wr, rows);
        storeTile(th, wcol, cols);
      });
    },
  );
  // 4. Random encodings (R digits, Y-less threads, non-power-of-two digits): load from a ragged
  //    symbolic tensor, sweep, shuffle to reversed Y order, store, and reduce over X0.
  fc.sample(
    encodingArb({ xDims: [2, 3], maxPairs: 2048 }).filter((e) => e.numThreads <= 256 && e.threadBufferSize <= 32),
    { numRuns: 8, seed: 99 },
  ).forEach((enc, k) => {
    const lens = enc.xLengths.map((_, i) => symbol(`n${i}`, { max: 4096 }));
    const params: Record<string, ParamSpec> = { a: pointer(float32), c: pointer(float32) };
    enc.xLengths.forEach((_, i) => (params[`n${i}`] = int32));
    src.function(
      { name: `random_${k}`, qualifiers: t.kernelQualifiers(), attributes: [t.launchBounds(enc.numThreads)], params },
      (b, p) => {
        const v = p as Record<string, VarExpr>;
        const symbols = Object.fromEntries(enc.xLengths.map((_, i) => [`n${i}`, v[`n${i}`]!]));
        const block = new BlockEmitter(b, t, { numThreads: enc.numThreads, index: { symbols } });
        const strides = lens.map((_, i) => lens.slice(i + 1).reduce<SymInt>((acc, l) => sym.mul(acc, l), 1));
        const desc = makeNaiveTensorDescriptor(lens, strides);
        const origin = enc.xLengths.map((l, i) => mul(cast(t.blockIdx(i === 0 ? 'x' : 'y'), int32), l));
        const wa = makeTileWindow(block, { view: makeTensorView(v['a']!, desc), lengths: enc.xLengths, origin, encoding: enc });
        const wc = makeTileWindow(block, { view: makeTensorView(v['c']!, desc), lengths: enc.xLengths, origin });
        const x = makeDistributedTensor(block, 'x', enc, float32);
        const y = makeDistributedTensor(
          block,
          'y',
          new TileDistributionEncoding({ ...enc.toSpec(), ys: [...enc.ysToRhs].reverse() }),
          float32,
        );
        block.threads((th) => {
          loadTile(th, wa, x);
          sweepTile(th, x, (e) => e.b.assign(e.value, add(e.value, cast(e.x[0]!, float32))));
          shuffleTile(th, y, x);
          storeTile(th, wc, y);
        });
        const r = blockTileReduce(block, 'r', x, [0], reduceSum);
        const wr = makeTileWindow(block, {
          view: makeTensorView(v['a']!, makeNaiveTensorDescriptorPacked(r.encoding.xLengths)),
          lengths: r.encoding.xLengths,
          origin: r.encoding.xLengths.map(() => 0),
        });
        block.threads((th) => storeTile(th, wr, r));
      },
    );
  });
  // 5. Block scans over 256 threads: integers with one barrier, then floats with three (their own scratch).
  src.function(
    {
      name: 'tile_block_scan',
      qualifiers: t.kernelQualifiers(),
      attributes: [t.launchBounds(256)],
      params: { n: pointer(int32), f: pointer(float32), total: pointer(int32) },
    },
    (b, p) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32));
      const ints = emitBlockExclusiveScan(
        b,
        { target: t, threads: 256, tid, scratch: t.declareShared(b, 'scan_i', int32, 32) },
        'ni',
        b.let('nv', int32, index(p.n, tid)),
      );
      const floats = emitBlockExclusiveScan(
        b,
        { target: t, threads: 256, tid, scratch: t.declareShared(b, 'scan_f', float32, 32) },
        'nf',
        b.let('fv', float32, index(p.f, tid)),
        { variant: 'threeBarrier' },
      );
      b.assign(index(p.n, tid), ints.exclusive);
      b.assign(index(p.f, tid), add(floats.exclusive, floats.total));
      b.if(eq(tid, 0), (x) => x.assign(index(p.total, 0), ints.total));
    },
  );
  return src.render();
}

function compileCubin(source: string): number {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-tile-nvcc-'));
  try {
    const file = join(dir, 'tile.cu');
    const out = join(dir, 'tile.cubin');
    writeFileSync(file, source);
    const res = spawnSync(nvcc, ['-arch=sm_90a', '-cubin', '-std=c++17', '-O2', '-o', out, file], { encoding: 'utf8', timeout: 300_000 });
    if (res.status !== 0) {
      const numbered = source
        .split('\n')
        .map((l, i) => `${String(i + 1).padStart(4)}| ${l}`)
        .join('\n');
      throw new Error(`nvcc failed:\n${res.stderr}${res.error?.message ?? ''}\n${numbered}`);
    }
    return statSync(out).size;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('CUDA dialect of the tile operations', () => {
  // TILE_DUMP=/path/tile.cu writes the generated source for inspection.
  const dump = process.env['TILE_DUMP'];
  if (dump !== undefined) writeFileSync(dump, tileKernelsSource());
  it('emits vector loads, predicates, shuffles, barriers and atomics', () => {
    const s = tileKernelsSource();
    expect(s).toContain('tk_vec<float, 4>');
    expect(s).toContain('tk_vec<__half, 8>');
    expect(s).toContain('__shfl_xor_sync');
    expect(s).toContain('__shfl_up_sync');
    expect(s).toContain('__syncthreads()');
    expect(s).toContain('atomicAdd(');
    expect(s).toMatch(/for \(int kb = 1; kb < 4; \+\+kb\)/);
    expect(s).toContain('__shared__');
  });

  it("CK's coalesced load (wave32): 64×64 fp16 over 256 threads is two 16-byte loads per thread, coalesced along rows", () => {
    const enc = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 8 });
    const half = sm90a.dtypeType('fp16');
    const src = new SourceBuilder({ dialect: sm90a });
    src.function({ name: 'k', qualifiers: sm90a.kernelQualifiers(), params: { a: pointer(half, { const: true }) } }, (b, p) => {
      const block = new BlockEmitter(b, sm90a, { numThreads: 256 });
      const w = makeTileWindow(block, {
        view: makeTensorView(p.a, makeNaiveTensorDescriptor([64, 64], [64, 1], { vectorLength: 8 }), { elementBytes: 2 }),
        lengths: [64, 64],
        origin: [0, 0],
        encoding: enc,
      });
      const x = makeDistributedTensor(block, 'x', enc, half);
      block.threads((th) => loadTile(th, w, x));
    });
    const text = src.render();
    expect(text.match(/reinterpret_cast<const tk_vec<__half, 8>\*>/g)?.length).toBe(2);
    expect(text).not.toMatch(/x\[\d+\] = a\[/);
  });

  it.skipIf(!hasNvcc)('compiles with nvcc for sm_90a', () => {
    expect(compileCubin(tileKernelsSource())).toBeGreaterThan(0);
  });
});
