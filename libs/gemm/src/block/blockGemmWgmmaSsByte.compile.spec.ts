// The 8-bit block GEMMs (int8, fp8 e4m3 / e5m2) compile for sm_90a with no spills: the probe kernels
// of blockGemmWgmmaSsProbe.ts per dtype (the ones the GPU specs run, plus wider and split shapes, and
// the fp16 control) and bare m64nNk32 leaves (.s32.s8.s8, .f32.e4m3.e4m3, .f32.e5m2.e5m2) for N the
// block GEMM never picks (8, 24, 40, 248: not multiples of 16) and the widest (256) — ONE .cu, ONE
// nvcc run; ptxas -v must name every entry with 0 spill bytes, no stack frame, and none of its
// Hopper serialization diagnostics (C7515: wgmma serialized). No GPU is needed. Without nvcc the
// test skips LOUDLY.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { add, array, call, cast, float32, index, int32, mul, pointer, sm90a, SourceBuilder, uint32, uint64, uint8 } from '@tilekit/codegen';
import { toolAvailable } from '@tilekit/codegen/testing';
import { describe, expect, it } from 'vitest';
import { makeWgmmaSmemLayout } from '../smemLayouts.ts';
import { defineWgmmaCommitGroup, defineWgmmaFence, defineWgmmaFenceOperands, defineWgmmaWaitGroup, wgmmaAtom } from '../warp/index.ts';
import { defineWgmmaDescriptorEncoder, wgmmaSwizzleCode } from '../warp/wgmmaDescriptor.ts';
import { callLeaf } from './blockGemmWgmmaSs.ts';
import { defineWgmmaSsProbeKernel, type WgmmaSsProbeCase } from './blockGemmWgmmaSsProbe.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc)
  console.warn(
    `\n!!! SKIPPING the 8-bit block GEMM nvcc compile test: "${nvcc}" not found (set TILEKIT_NVCC). ` +
      'The int8 and fp8 wgmma kernels are NOT being compiled. !!!\n',
  );

type ByteDtype = 'int8' | 'fp8e4m3fn' | 'fp8e5m2';

/** The probe kernels: what the GPU specs run, and wider / split shapes (the fp16 one is the control). */
const probeCases: readonly WgmmaSsProbeCase[] = [
  { name: 'probe_int8_m128n128k128', policy: { dtype: 'int8', tileM: 128, tileN: 128, tileK: 128 }, kTiles: 1 },
  { name: 'probe_int8_m128n128k64x2', policy: { dtype: 'int8', tileM: 128, tileN: 128, tileK: 64 }, kTiles: 2 },
  { name: 'probe_int8_m64n256k128', policy: { dtype: 'int8', tileM: 64, tileN: 256, tileK: 128 }, kTiles: 1 },
  { name: 'probe_int8_m128n256k64_wgn2', policy: { dtype: 'int8', tileM: 128, tileN: 256, tileK: 64, warpgroupsN: 2 }, kTiles: 1 },
  { name: 'probe_int8_m192n48k128', policy: { dtype: 'int8', tileM: 192, tileN: 48, tileK: 128 }, kTiles: 1 },
  { name: 'probe_fp16_m128n128k64x2', policy: { dtype: 'fp16', tileM: 128, tileN: 128, tileK: 64 }, kTiles: 2 },
  { name: 'probe_e4m3_m128n128k128', policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK: 128 }, kTiles: 1 },
  { name: 'probe_e4m3_m128n128k64x2', policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK: 64 }, kTiles: 2 },
  { name: 'probe_e4m3_m64n256k128', policy: { dtype: 'fp8e4m3fn', tileM: 64, tileN: 256, tileK: 128 }, kTiles: 1 },
  { name: 'probe_e4m3_m128n256k64_wgn2', policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 256, tileK: 64, warpgroupsN: 2 }, kTiles: 1 },
  { name: 'probe_e4m3_m192n48k128', policy: { dtype: 'fp8e4m3fn', tileM: 192, tileN: 48, tileK: 128 }, kTiles: 1 },
  { name: 'probe_e5m2_m128n64k128x2', policy: { dtype: 'fp8e5m2', tileM: 128, tileN: 64, tileK: 128 }, kTiles: 2 },
];

/** The bare leaves: the N of each dtype's k32 wgmma that get a kernel of their own. */
const leafNs: readonly (readonly [ByteDtype, readonly number[]])[] = [
  ['int8', [8, 24, 256]],
  ['fp8e4m3fn', [8, 24, 40, 248, 256]],
  ['fp8e5m2', [8, 256]],
];

/**
 * Shared memory of the tileK 128 probes (two 16 KiB tiles of 1-byte elements) and of the 64-wide
 * K tiles (half that), the same for int8 and fp8.
 */
const probeSmem: readonly (readonly [string, number])[] = [
  ['probe_int8_m128n128k128', 32768],
  ['probe_int8_m128n128k64x2', 16384],
  ['probe_e4m3_m128n128k128', 32768],
  ['probe_e4m3_m128n128k64x2', 16384],
];

/**
 * A kernel issuing one bare 8-bit wgmma of width n (64B-swizzled 64 × 64 A, n × 64 B) and storing D
 * (the atom's accumulator: int32 for int8, fp32 for fp8).
 */
function leafKernel(src: SourceBuilder, n: number, dtype: ByteDtype): string {
  const atom = wgmmaAtom({ n, dtype });
  const nd = atom.c.elementsPerThread;
  const acc = atom.accType === 'int32' ? int32 : float32;
  // callLeaf: each leaf is emitted once per translation unit, shared with the probe kernels.
  const pin = defineWgmmaFenceOperands(sm90a, nd, atom.accType);
  const encode = defineWgmmaDescriptorEncoder(sm90a);
  const la = makeWgmmaSmemLayout({ swizzle: '64B', dtype, mn: 64, k: 64 });
  const lb = makeWgmmaSmemLayout({ swizzle: '64B', dtype, mn: n, k: 64 });
  const name = `leaf_${atom.wrapperName}`;
  src.function(
    { name, qualifiers: sm90a.kernelQualifiers(), attributes: [sm90a.launchBounds(128)], params: { out: pointer(acc) } },
    (b, p) => {
      const tid = b.let('tid', int32, cast(sm90a.threadIdx('x'), int32));
      const desc = (operand: string, l: typeof la): ReturnType<typeof b.let> => {
        const smem = sm90a.declareShared(b, `${operand}_smem`, uint8, l.bytes, { align: l.repeatBytes });
        const address = cast(call('__cvta_generic_to_shared', [smem], uint64, { pure: true }), uint32);
        return b.let(
          `desc_${operand}`,
          uint64,
          callLeaf(encode, [address, l.leadingByteOffset, l.strideByteOffset, 0, wgmmaSwizzleCode(l.swizzle)]),
        );
      };
      const da = desc('a', la);
      const db = desc('b', lb);
      const d = b.declare('d', array(acc, nd));
      b.expr(callLeaf(pin, [d]));
      b.expr(callLeaf(defineWgmmaFence(sm90a), []));
      b.expr(callLeaf(atom.defineWrapper(sm90a), [d, da, db, 0]));
      b.expr(callLeaf(defineWgmmaCommitGroup(sm90a), []));
      b.expr(callLeaf(defineWgmmaWaitGroup(sm90a, 0), []));
      b.expr(callLeaf(pin, [d]));
      b.forRange({ name: 'i', to: nd, unroll: true }, (l, i) => l.assign(index(p.out, add(mul(tid, nd), i)), index(d, i)));
    },
  );
  return name;
}

describe('8-bit block GEMMs (int8, fp8 e4m3 / e5m2) compile for sm_90a', () => {
  it.skipIf(!hasNvcc)(
    'probe kernels (int8 and e4m3 tileK 128 / 64, wide, split over N, M 192; e5m2; fp16 control) and bare k32 leaves ' +
      '(int8 N 8 / 24 / 256, e4m3 N 8 / 24 / 40 / 248 / 256, e5m2 N 8 / 256) in ONE nvcc run: every entry assembled, ' +
      'no spills, no stack, no C7515',
    () => {
      const src = new SourceBuilder({ dialect: sm90a, header: 'tilekit gemm: 8-bit block GEMM compile test' });
      for (const c of probeCases) defineWgmmaSsProbeKernel(src, c);
      const leaves = leafNs.flatMap(([dtype, ns]) => ns.map((n) => leafKernel(src, n, dtype)));
      const source = src.render();
      // The instructions reach the PTX as written (not lowered to something else by a template).
      expect(source).toContain('wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {');
      expect(source).toContain('wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {');
      expect(source).toContain('wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 {');
      const dir = mkdtempSync(join(tmpdir(), 'tilekit-gemm-byte-'));
      try {
        const file = join(dir, 'byte_block_gemm.cu');
        writeFileSync(file, source);
        const args = ['-cubin', '-arch=sm_90a', '-O3', '-std=c++17', '-Xptxas', '-v', '-o', join(dir, 'byte_block_gemm.cubin'), file];
        const res = spawnSync(nvcc, args, { encoding: 'utf8', timeout: 300_000 });
        const numbered = (): string =>
          source
            .split('\n')
            .map((l, i) => `${String(i + 1).padStart(4)}| ${l}`)
            .join('\n');
        expect(
          res.status,
          `${nvcc} ${args.join(' ')}:\n${res.stderr}${res.error?.message ?? ''}\n${res.status === 0 ? '' : numbered()}`,
        ).toBe(0);
        const log = res.stderr;
        const entries = [...log.matchAll(/Compiling entry function '(\w+)' for 'sm_90a'/g)].map((m) => m[1]!).sort();
        expect(entries).toEqual([...probeCases.map((c) => c.name), ...leaves].sort());
        expect(log).not.toMatch(/[1-9]\d* bytes spill (stores|loads)/);
        expect(log).not.toMatch(/[1-9]\d* bytes stack frame/);
        expect(log).not.toMatch(/C75(08|10|15)/);
        for (const [name, bytes] of probeSmem)
          expect(log).toMatch(new RegExp(`Function properties for ${name}[\\s\\S]*?${bytes} bytes smem`));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
