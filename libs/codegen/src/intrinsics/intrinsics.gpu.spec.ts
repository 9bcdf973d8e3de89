// GPU tests of the leaf intrinsics (node:test; `npm run test:gpu`, or tools/device on the GPU
// machine). Every kernel is built with the codegen builder and the intrinsic wrappers, compiled by
// nvcc for the device, and checked EXACTLY (bit patterns, no tolerance):
// 1. TMA: a 64x64 fp16 box loaded with cp.async.bulk.tensor into shared memory, completing on an
//    mbarrier armed with arrive.expect_tx and waited on with try_wait.parity, then written back
//    with plain stores — equal to the input inside the tensor and 0 outside (TMA zero-fill), for a
//    box inside, one partly past the far corner and one at negative coordinates. The same box,
//    sign-flipped in shared memory by ordinary stores, goes back out by TMA store (proxy fence,
//    bulk commit/wait): only the in-bounds part of the output changes, for boxes inside and partly
//    past the far end. Not at negative coordinates: a TMA store whose box starts before the tensor
//    is an illegal instruction (see tmaStore), which would end this process's CUDA context.
// 2. cp.async: 16-byte cg copies with src-size zero-fill (n valid bytes, the rest predicated to 0)
//    through commit_group / wait_group, over a shared buffer pre-filled with 0xAB.
// 3. ldmatrix x1/x2/x4, with and without .trans: the registers of every lane equal the lane
//    mapping the PTX ISA documents (written out below).
// Skipped (loudly, by the runner) without a GPU; the TMA cases need compute capability 9.0.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeTensorMapTiled } from '@tilekit/runtime';
import type { DeviceBuffer } from '@tilekit/runtime';
import { gpu } from '@tilekit/runtime/testing';
import type { BlockBuilder } from '../blockBuilder.ts';
import { array, int32, uint8, uint16, uint32, uint64 } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { kernelParam } from '../kernel/kernelParam.ts';
import { KernelSignature } from '../kernel/kernelSignature.ts';
import { add, addressOf, bitXor, cast, eq, gt, index, maxOf, minOf, mul, select, sub } from '../ops.ts';
import { SourceBuilder } from '../sourceBuilder.ts';
import { sm90a } from '../cudaTarget.ts';
import { fenceMbarrierInit, fenceProxyAsyncShared } from './asyncFence.ts';
import { cpAsync, cpAsyncCommitGroup, cpAsyncWaitGroup } from './cpAsync.ts';
import { ldmatrix } from './ldmatrix.ts';
import type { LdmatrixCount } from './ldmatrix.ts';
import { mbarrierArriveExpectTx, mbarrierInit, mbarrierInval, mbarrierWaitParity } from './mbarrier.ts';
import { bulkCommitGroup, bulkWaitGroup, tmaLoad, tmaStore } from './tma.ts';

const t = sm90a;
const BOX = 64;
const THREADS = 128;
const CP_THREADS = 64;
const LDMATRIX_CASES: readonly (readonly [LdmatrixCount, boolean])[] = [
  [1, false],
  [1, true],
  [2, false],
  [2, true],
  [4, false],
  [4, true],
];

const tmaLoadSig = new KernelSignature('tk_test_tma_load', t, {
  map: kernelParam.tensorMap(),
  out: kernelParam.pointer(uint16, { align: 16 }),
  x0: kernelParam.i32(),
  y0: kernelParam.i32(),
});
const tmaRoundTripSig = new KernelSignature('tk_test_tma_round_trip', t, {
  load: kernelParam.tensorMap(),
  store: kernelParam.tensorMap(),
  x0: kernelParam.i32(),
  y0: kernelParam.i32(),
});
const cpAsyncSig = new KernelSignature('tk_test_cp_async', t, {
  in: kernelParam.pointer(uint8, { const: true, align: 16 }),
  out: kernelParam.pointer(uint8, { align: 16 }),
  n: kernelParam.i32({ range: [0, CP_THREADS * 16] }),
});
const ldmatrixSig = new KernelSignature('tk_test_ldmatrix', t, {
  in: kernelParam.pointer(uint16, { const: true }),
  out: kernelParam.pointer(uint32),
});

/** One module with every test kernel (one nvcc run). */
function testSource(): string {
  const src = new SourceBuilder({ dialect: t, header: 'tilekit intrinsics GPU tests' });

  // Loads the box at (x0, y0) with TMA and waits on its mbarrier; `after` runs in every thread.
  const loadBox = (b: BlockBuilder, map: Expr, x0: Expr, y0: Expr) => {
    const tile = t.declareShared(b, 'tile', uint16, BOX * BOX, { align: 128 });
    const bar = t.declareShared(b, 'bar', uint64, 1, { align: 8 });
    const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32));
    b.if(eq(tid, 0), (u) => {
      u.expr(mbarrierInit(t, bar, 1));
      u.expr(fenceMbarrierInit(t));
    });
    b.push(t.syncThreads());
    b.if(eq(tid, 0), (u) => {
      u.expr(mbarrierArriveExpectTx(t, bar, BOX * BOX * 2));
      u.expr(tmaLoad(t, { dst: tile, map, bar, coords: [x0, y0] }));
    });
    b.expr(mbarrierWaitParity(t, bar, 0));
    return { tile, bar, tid };
  };

  tmaLoadSig.defineEntry(src, { launchBounds: { maxThreads: THREADS } }, (b, { map, out, x0, y0 }) => {
    const { tile, bar, tid } = loadBox(b, map, x0, y0);
    b.forRange({ name: 'k', to: (BOX * BOX) / THREADS }, (l, k) => {
      const i = l.let('i', int32, add(tid, mul(k, THREADS)));
      l.assign(index(out, i), index(tile, i));
    });
    b.push(t.syncThreads());
    b.if(eq(tid, 0), (u) => u.expr(mbarrierInval(t, bar)));
  });

  tmaRoundTripSig.defineEntry(src, { launchBounds: { maxThreads: THREADS } }, (b, { load, store, x0, y0 }) => {
    const { tile, bar, tid } = loadBox(b, load, x0, y0);
    b.forRange({ name: 'k', to: (BOX * BOX) / THREADS }, (l, k) => {
      const i = l.let('i', int32, add(tid, mul(k, THREADS)));
      l.assign(index(tile, i), cast(bitXor(index(tile, i), 0x8000), uint16));
    });
    // Ordinary stores that the TMA engine reads next: proxy fence in every writer, then a barrier.
    b.expr(fenceProxyAsyncShared(t));
    b.push(t.syncThreads());
    b.if(eq(tid, 0), (u) => {
      u.expr(tmaStore(t, { map: store, src: tile, coords: [x0, y0] }));
      u.expr(bulkCommitGroup(t));
      u.expr(bulkWaitGroup(t, 0, { read: true }));
      u.expr(bulkWaitGroup(t, 0));
      u.expr(mbarrierInval(t, bar));
    });
  });

  cpAsyncSig.defineEntry(src, { launchBounds: { maxThreads: CP_THREADS } }, (b, { in: input, out, n }) => {
    const buf = t.declareShared(b, 'buf', uint8, CP_THREADS * 16, { align: 128 });
    const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32));
    const at = b.let('at', int32, mul(tid, 16));
    b.forRange({ name: 'j', to: 16 }, (l, j) => l.assign(index(buf, add(at, j)), 0xab));
    b.push(t.syncThreads());
    const valid = b.let('valid', int32, minOf(maxOf(sub(n, at), 0), 16));
    // Nothing is read when valid == 0, but keep the address in bounds anyway.
    const from = b.let('from', input.type, select(gt(valid, 0), add(input, at), input));
    b.expr(cpAsync(t, { dst: addressOf(index(buf, at)), src: from, bytes: 16, cache: 'cg', srcBytes: cast(valid, uint32) }));
    b.expr(cpAsyncCommitGroup(t));
    b.expr(cpAsyncWaitGroup(t, 0));
    b.push(t.syncThreads());
    b.forRange({ name: 'j', to: 16 }, (l, j) => {
      // Read another thread's chunk: the barrier made every copy visible.
      const k = l.let('k', int32, add(mul(sub(CP_THREADS - 1, tid), 16), j));
      l.assign(index(out, k), index(buf, k));
    });
  });

  ldmatrixSig.defineEntry(src, { launchBounds: { maxThreads: 32 } }, (b, { in: input, out }) => {
    const mats = t.declareShared(b, 'mats', uint16, 4 * 64, { align: 128 });
    const lane = b.let('lane', int32, cast(t.threadIdx('x'), int32));
    b.forRange({ name: 'j', to: 8 }, (l, j) => {
      const k = l.let('k', int32, add(mul(lane, 8), j));
      l.assign(index(mats, k), index(input, k));
    });
    b.push(t.syncThreads());
    // Matrix i's row r lives at halves (8i + r) * 8: lane l gives row l % 8 of matrix l / 8.
    const row = addressOf(index(mats, mul(lane, 8)));
    LDMATRIX_CASES.forEach(([count, trans], c) => {
      const regs = b.declare(`regs_x${count}${trans ? 't' : ''}`, array(uint32, 4));
      b.expr(ldmatrix(t, { count, trans, dst: regs, src: row }));
      for (let r = 0; r < count; r += 1) b.assign(index(out, add(mul(add(mul(c, 32), lane), 4), r)), index(regs, r));
    });
  });
  return src.render();
}

let source: string | undefined;
async function kernel(name: string) {
  source ??= testSource();
  const { module } = await gpu.module(source, tmaLoadSig.name);
  return module.getKernel(name);
}

const ROWS = 100;
const COLS = 72; // 144-byte rows: a multiple of 16, as TMA needs
/** Distinct positive finite fp16 bit patterns (never 0, so zero-fill is visible). */
const halfBits = (i: number): number => 0x0400 + ((i * 7919) % 0x3400);

function tensorMap(buffer: DeviceBuffer): Uint8Array {
  return encodeTensorMapTiled(gpu.device(), {
    dtype: 'float16',
    address: buffer,
    globalDims: [COLS, ROWS],
    globalStrides: [COLS * 2],
    boxDims: [BOX, BOX],
    oobFill: 'zero',
  });
}

const BOXES = [
  [0, 0],
  [48, 64], // past the last column and the last row
  [-16, -40], // before the first column and row
] as const;

/**
 * Boxes for the TMA store: origins >= 0 only (tmaStore's precondition; a store at (-16, -40)
 * raised CUDA_ERROR_ILLEGAL_INSTRUCTION on an H200, while stores at (0, 0) and (48, 64) were exact).
 */
const STORE_BOXES = [
  [0, 0],
  [48, 64], // past the last column and the last row: those parts are not written
  [16, 36], // past the last column only; ends exactly at the last row
] as const;

test(
  'codegen/intrinsics/gpu: TMA box load (mbarrier expect_tx + try_wait.parity) equals the input, zero-filled out of bounds',
  gpu.options,
  async () => {
    const device = gpu.device();
    if (device.computeCapability.major < 9) return;
    const input = Uint16Array.from({ length: ROWS * COLS }, (_, i) => halfBits(i));
    const global = device.upload(input);
    const out = device.alloc(BOX * BOX * 2);
    try {
      const map = tensorMap(global);
      const k = await kernel(tmaLoadSig.name);
      for (const [x0, y0] of BOXES) {
        out.fill(0xff);
        k.launch({ grid: 1, block: THREADS }, tmaLoadSig.pack({ map, out, x0, y0 }));
        const tile = out.copyToHost(new Uint16Array(BOX * BOX));
        for (let r = 0; r < BOX; r += 1) {
          for (let c = 0; c < BOX; c += 1) {
            const row = y0 + r;
            const col = x0 + c;
            const want = row >= 0 && row < ROWS && col >= 0 && col < COLS ? input[row * COLS + col] : 0;
            assert.equal(tile[r * BOX + c], want, `box (${x0}, ${y0}) [${r}][${c}]`);
          }
        }
      }
    } finally {
      out.dispose();
      global.dispose();
    }
  },
);

test(
  'codegen/intrinsics/gpu: TMA store after ordinary shared stores (proxy fence, bulk commit/wait) writes only the in-bounds box',
  gpu.options,
  async () => {
    const device = gpu.device();
    if (device.computeCapability.major < 9) return;
    const input = Uint16Array.from({ length: ROWS * COLS }, (_, i) => halfBits(i));
    const sentinel = 0x3c00; // 1.0: never equals a flipped (negative) input
    const global = device.upload(input);
    const outGlobal = device.alloc(ROWS * COLS * 2);
    try {
      const load = tensorMap(global);
      const store = tensorMap(outGlobal);
      const k = await kernel(tmaRoundTripSig.name);
      for (const [x0, y0] of STORE_BOXES) {
        outGlobal.copyFromHost(new Uint16Array(ROWS * COLS).fill(sentinel));
        k.launch({ grid: 1, block: THREADS }, tmaRoundTripSig.pack({ load, store, x0, y0 }));
        const got = outGlobal.copyToHost(new Uint16Array(ROWS * COLS));
        for (let row = 0; row < ROWS; row += 1) {
          for (let col = 0; col < COLS; col += 1) {
            const inBox = row >= y0 && row < y0 + BOX && col >= x0 && col < x0 + BOX;
            const want = inBox ? (input[row * COLS + col] as number) ^ 0x8000 : sentinel;
            assert.equal(got[row * COLS + col], want, `box (${x0}, ${y0}) element [${row}][${col}]`);
          }
        }
      }
    } finally {
      outGlobal.dispose();
      global.dispose();
    }
  },
);

test('codegen/intrinsics/gpu: cp.async 16-byte copies zero-fill past n through commit_group / wait_group', gpu.options, async () => {
  const device = gpu.device();
  const bytes = CP_THREADS * 16;
  const input = Uint8Array.from({ length: bytes }, (_, i) => 1 + ((i * 37) % 251));
  const din = device.upload(input);
  const dout = device.alloc(bytes);
  try {
    const k = await kernel(cpAsyncSig.name);
    for (const n of [bytes, 1000, 1, 0]) {
      dout.fill(0x5a);
      k.launch({ grid: 1, block: CP_THREADS }, cpAsyncSig.pack({ in: din, out: dout, n }));
      const got = dout.copyToHost(new Uint8Array(bytes));
      for (let i = 0; i < bytes; i += 1) assert.equal(got[i], i < n ? input[i] : 0, `n=${n} byte ${i}`);
    }
  } finally {
    din.dispose();
    dout.dispose();
  }
});

/**
 * The PTX ISA's ldmatrix fragment (m8n8, 16-bit): lane l's register i holds, of matrix i, row
 * floor(l / 4), columns 2(l % 4) (low half) and 2(l % 4) + 1 (high half); with .trans the same
 * positions of the transposed matrix, i.e. M[2(l % 4)][floor(l / 4)] and M[2(l % 4) + 1][floor(l / 4)].
 */
function ldmatrixExpected(m: Uint16Array, matrix: number, lane: number, trans: boolean): number {
  const at = (r: number, c: number): number => m[matrix * 64 + r * 8 + c] as number;
  const g = Math.floor(lane / 4);
  const q = 2 * (lane % 4);
  const [lo, hi] = trans ? [at(q, g), at(q + 1, g)] : [at(g, q), at(g, q + 1)];
  return (lo | (hi << 16)) >>> 0;
}

test('codegen/intrinsics/gpu: ldmatrix x1/x2/x4 (+ .trans) registers follow the PTX lane mapping', gpu.options, async () => {
  const device = gpu.device();
  const mats = Uint16Array.from({ length: 4 * 64 }, (_, i) => (i * 613 + 17) & 0xffff);
  const din = device.upload(mats);
  const dout = device.alloc(LDMATRIX_CASES.length * 32 * 4 * 4).fill(0);
  try {
    const k = await kernel(ldmatrixSig.name);
    k.launch({ grid: 1, block: 32 }, ldmatrixSig.pack({ in: din, out: dout }));
    const got = dout.copyToHost(new Uint32Array(LDMATRIX_CASES.length * 32 * 4));
    LDMATRIX_CASES.forEach(([count, trans], c) => {
      for (let lane = 0; lane < 32; lane += 1) {
        for (let i = 0; i < count; i += 1) {
          assert.equal(
            got[(c * 32 + lane) * 4 + i],
            ldmatrixExpected(mats, i, lane, trans),
            `x${count}${trans ? '.trans' : ''} lane ${lane} reg ${i}`,
          );
        }
      }
    });
  } finally {
    din.dispose();
    dout.dispose();
  }
});
