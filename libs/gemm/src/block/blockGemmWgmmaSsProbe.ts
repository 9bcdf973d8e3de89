// A one-block probe kernel of WgmmaBlockGemmSs for the 8-bit (int8, fp8 e4m3 / e5m2) compile test
// and GPU tests (and the fp16 path beside them as the control): global A/B → registers → the swizzled shared
// tiles (tile windows over the block GEMM's own layout descriptors) → the block GEMM over kTiles K
// tiles → C through cEncoding.
import {
  call,
  cast,
  div,
  fenceProxyAsyncShared,
  int32,
  int8,
  lit,
  pointer,
  sm90a,
  SourceBuilder,
  uint16,
  uint32,
  uint64,
  uint8,
  type CType,
  type Expr,
} from '@tilekit/codegen';
import { makeNaiveTensorDescriptor } from '@tilekit/layout';
import {
  BlockEmitter,
  loadTile,
  makeDistributedTensor,
  makeTensorView,
  makeTileWindow,
  makeVectorLoadEncoding,
  storeTile,
} from '@tilekit/tile';
import { BlockGemmPolicyError, WgmmaBlockGemmSs, type WgmmaBlockGemmPolicy } from './blockGemmWgmmaSs.ts';

/** One probe kernel: a block GEMM policy and the number of K tiles it accumulates. */
export interface WgmmaSsProbeCase {
  /** The kernel's entry name (`extern "C"`). */
  readonly name: string;
  readonly policy: WgmmaBlockGemmPolicy;
  /** K tiles accumulated: K = kTiles · tileK (the first with scale-d 0, the others adding). */
  readonly kTiles: number;
}

/** Storage type of the A/B elements in global and shared memory (floats as their bits: 2-byte ones as uint16, fp8 as uint8). */
function storageType(policy: WgmmaBlockGemmPolicy): CType {
  return policy.dtype === 'int8' ? int8 : policy.dtype === 'fp8e4m3fn' || policy.dtype === 'fp8e5m2' ? uint8 : uint16;
}

/**
 * Adds `void <name>(const T* a, const T* b, Acc* c)` to `src` (sm_90a), launched as ONE block of
 * `new WgmmaBlockGemmSs(policy).threads` threads: A is tileM × K and B tileN × K, both row-major
 * (K contiguous, K = kTiles · tileK; T = signed char for int8, the bits as unsigned char for fp8,
 * as unsigned short for fp16/bf16), C is tileM × tileN row-major of the accumulator type (int or
 * float). Per K tile every thread copies its 16-byte vectors of A and B (CK's coalesced load
 * distribution) into the swizzled shared tiles through windows on `aLayout`/`bLayout`'s
 * descriptors, fences the generic-proxy writes for the async proxy, and the warpgroups issue
 * `emitMma` (scale-d 0 on the first tile) and `emitWait(0)`; the accumulator is stored through a
 * window with `cEncoding`.
 */
export function defineWgmmaSsProbeKernel(src: SourceBuilder, probe: WgmmaSsProbeCase): void {
  const blk = new WgmmaBlockGemmSs(probe.policy);
  const { tileM, tileN, tileK } = probe.policy;
  const kTiles = probe.kTiles;
  if (!Number.isSafeInteger(kTiles) || kTiles < 1)
    throw new BlockGemmPolicyError('WgmmaSsProbe kTiles', 'must be a positive integer', String(kTiles));
  const k = kTiles * tileK;
  const element = storageType(probe.policy);
  const vector = 16 / blk.aLayout.elementBytes;
  const target = sm90a;
  src.function(
    {
      name: probe.name,
      qualifiers: target.kernelQualifiers(),
      attributes: [target.launchBounds(blk.threads)],
      params: { a: pointer(element, { const: true }), b: pointer(element, { const: true }), c: pointer(blk.accumulatorType) },
    },
    (b, p) => {
      const block = new BlockEmitter(b, target, { numThreads: blk.threads });
      const sa = block.shared('a_smem', element, blk.aTileBytes / blk.aLayout.elementBytes, blk.aLayout.repeatBytes);
      const sb = block.shared('b_smem', element, blk.bTileBytes / blk.bLayout.elementBytes, blk.bLayout.repeatBytes);
      const smemAddress = (s: Expr): Expr => cast(call('__cvta_generic_to_shared', [s], uint64, { pure: true }), uint32);
      const aTile = b.let('a_tile', uint32, smemAddress(sa));
      const bTile = b.let('b_tile', uint32, smemAddress(sb));
      const operand = (ptr: Expr, rows: number) =>
        makeTensorView(ptr, makeNaiveTensorDescriptor([rows, k], [k, 1], { vectorLength: vector }));
      const loads = (rows: number) =>
        makeVectorLoadEncoding({ rows, cols: tileK, vectorLength: vector, warpSize: 32, numWarps: blk.threads / 32 });
      const aRegs = makeDistributedTensor(block, 'a_regs', loads(tileM), element);
      const bRegs = makeDistributedTensor(block, 'b_regs', loads(tileN), element);
      const aShared = makeTileWindow(block, {
        view: makeTensorView(sa, blk.aLayout.descriptor),
        lengths: [tileM, tileK],
        origin: [0, 0],
        fixedOrigin: true,
      });
      const bShared = makeTileWindow(block, {
        view: makeTensorView(sb, blk.bLayout.descriptor),
        lengths: [tileN, tileK],
        origin: [0, 0],
        fixedOrigin: true,
      });
      const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, blk.accumulatorType);
      for (let kt = 0; kt < kTiles; kt++) {
        const aGlobal = makeTileWindow(block, {
          view: operand(p.a, tileM),
          lengths: [tileM, tileK],
          origin: [0, kt * tileK],
          encoding: aRegs.encoding,
          fixedOrigin: true,
        });
        const bGlobal = makeTileWindow(block, {
          view: operand(p.b, tileN),
          lengths: [tileN, tileK],
          origin: [0, kt * tileK],
          encoding: bRegs.encoding,
          fixedOrigin: true,
        });
        block.threads((t) => {
          loadTile(t, aGlobal, aRegs);
          loadTile(t, bGlobal, bRegs);
          storeTile(t, aShared, aRegs);
          storeTile(t, bShared, bRegs);
          // wgmma reads shared memory through the async proxy: order these generic-proxy stores before it.
          t.b.expr(fenceProxyAsyncShared(target));
        });
        block.sync();
        block.threads((t) => {
          blk.emitMma(t.b, target, acc, { aTile, bTile, warpgroup: div(t.tid, 128), ...(kt === 0 ? { accumulate: lit(0, int32) } : {}) });
          blk.emitWait(t.b, target, acc, 0);
        });
        // The next K tile overwrites the shared tiles: every warpgroup's wgmmas must have read them.
        if (kt + 1 < kTiles) block.sync();
      }
      const cView = makeTensorView(p.c, makeNaiveTensorDescriptor([tileM, tileN], [tileN, 1], { vectorLength: 2 }));
      const cWindow = makeTileWindow(block, {
        view: cView,
        lengths: [tileM, tileN],
        origin: [0, 0],
        encoding: blk.cEncoding,
        fixedOrigin: true,
      });
      block.threads((t) => storeTile(t, cWindow, acc));
    },
  );
}

/** One sm_90a translation unit holding the probe kernel of every case. */
export function wgmmaSsProbeSource(cases: readonly WgmmaSsProbeCase[]): string {
  const src = new SourceBuilder({
    dialect: sm90a,
    header: 'tilekit gemm: WgmmaBlockGemmSs probe kernels (int8, fp8 and fp16), one block each',
  });
  for (const c of cases) defineWgmmaSsProbeKernel(src, c);
  return src.render();
}
