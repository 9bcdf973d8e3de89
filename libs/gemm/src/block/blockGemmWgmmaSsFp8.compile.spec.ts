// The fp8 block GEMM compiles for sm_90a with no spills: the probe kernels of
// blockGemmWgmmaSsInt8Probe.ts for fp8e4m3fn and fp8e5m2 (the ones the GPU spec runs, plus wider
// and split shapes) and bare m64nNk32.f32.e4m3.e4m3 / .e5m2.e5m2 leaves for N the block GEMM never
// picks (8, 24, 40, 248: not multiples of 16) and the widest (256) — ONE .cu, ONE nvcc run; ptxas
// -v must name every entry with 0 spill bytes, no stack frame, and none of its Hopper serialization
// diagnostics (C7515: wgmma serialized). No GPU is needed. Without nvcc the test skips LOUDLY.
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
import { defineWgmmaSsInt8ProbeKernel, type WgmmaSsInt8ProbeCase } from './blockGemmWgmmaSsInt8Probe.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc)
  console.warn(
    `\n!!! SKIPPING the fp8 block GEMM nvcc compile test: "${nvcc}" not found (set TILEKIT_NVCC). The fp8 wgmma kernels are NOT being compiled. !!!\n`,
  );

/** The probe kernels: what the GPU spec runs, and wider / split shapes. */
const fp8CompileCases: readonly WgmmaSsInt8ProbeCase[] = [
  { name: 'probe_e4m3_m128n128k128', policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK: 128 }, kTiles: 1 },
  { name: 'probe_e4m3_m128n128k64x2', policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK: 64 }, kTiles: 2 },
  { name: 'probe_e4m3_m64n256k128', policy: { dtype: 'fp8e4m3fn', tileM: 64, tileN: 256, tileK: 128 }, kTiles: 1 },
  { name: 'probe_e4m3_m128n256k64_wgn2', policy: { dtype: 'fp8e4m3fn', tileM: 128, tileN: 256, tileK: 64, warpgroupsN: 2 }, kTiles: 1 },
  { name: 'probe_e4m3_m192n48k128', policy: { dtype: 'fp8e4m3fn', tileM: 192, tileN: 48, tileK: 128 }, kTiles: 1 },
  { name: 'probe_e5m2_m128n64k128x2', policy: { dtype: 'fp8e5m2', tileM: 128, tileN: 64, tileK: 128 }, kTiles: 2 },
];

/** A kernel issuing one bare fp8 wgmma of width n (64B-swizzled 64 × 64 A, n × 64 B) and storing D. */
function leafKernel(src: SourceBuilder, n: number, dtype: 'fp8e4m3fn' | 'fp8e5m2'): string {
  const atom = wgmmaAtom({ n, dtype });
  const nd = atom.c.elementsPerThread;
  // callLeaf: each leaf is emitted once per translation unit, shared with the probe kernels.
  const pin = defineWgmmaFenceOperands(sm90a, nd, 'fp32');
  const encode = defineWgmmaDescriptorEncoder(sm90a);
  const la = makeWgmmaSmemLayout({ swizzle: '64B', dtype, mn: 64, k: 64 });
  const lb = makeWgmmaSmemLayout({ swizzle: '64B', dtype, mn: n, k: 64 });
  const name = `leaf_${atom.wrapperName}`;
  src.function(
    { name, qualifiers: sm90a.kernelQualifiers(), attributes: [sm90a.launchBounds(128)], params: { out: pointer(float32) } },
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
      const d = b.declare('d', array(float32, nd));
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

describe('fp8 block GEMM compiles for sm_90a', () => {
  it.skipIf(!hasNvcc)(
    'probe kernels (e4m3 tileK 128 / 64, wide, split over N, M 192; e5m2) and bare k32 leaves ' +
      'of N 8 / 24 / 40 / 248 / 256: every entry assembled, no spills, no stack, no C7515',
    () => {
      const src = new SourceBuilder({ dialect: sm90a, header: 'tilekit gemm: fp8 block GEMM compile test' });
      for (const c of fp8CompileCases) defineWgmmaSsInt8ProbeKernel(src, c);
      const leaves = [
        ...[8, 24, 40, 248, 256].map((n) => leafKernel(src, n, 'fp8e4m3fn')),
        ...[8, 256].map((n) => leafKernel(src, n, 'fp8e5m2')),
      ];
      const source = src.render();
      // The instruction reaches the PTX as written (not lowered to something else by a template).
      expect(source).toContain('wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {');
      expect(source).toContain('wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 {');
      const dir = mkdtempSync(join(tmpdir(), 'tilekit-gemm-fp8-'));
      try {
        const file = join(dir, 'fp8_block_gemm.cu');
        writeFileSync(file, source);
        const args = ['-cubin', '-arch=sm_90a', '-O3', '-std=c++17', '-Xptxas', '-v', '-o', join(dir, 'fp8_block_gemm.cubin'), file];
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
        expect(entries).toEqual([...fp8CompileCases.map((c) => c.name), ...leaves].sort());
        expect(log).not.toMatch(/[1-9]\d* bytes spill (stores|loads)/);
        expect(log).not.toMatch(/[1-9]\d* bytes stack frame/);
        expect(log).not.toMatch(/C75(08|10|15)/);
        // tileK 128 asks for two 16 KiB tiles (1-byte elements, like int8), the 64-wide K tiles half that.
        expect(log).toMatch(/Function properties for probe_e4m3_m128n128k128[\s\S]*?32768 bytes smem/);
        expect(log).toMatch(/Function properties for probe_e4m3_m128n128k64x2[\s\S]*?16384 bytes smem/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
