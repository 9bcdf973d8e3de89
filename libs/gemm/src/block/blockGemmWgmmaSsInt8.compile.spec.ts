// The int8 block GEMM compiles for sm_90a with no spills: the probe kernels of
// blockGemmWgmmaSsInt8Probe.ts (the ones the GPU spec runs, plus wider and split shapes, and the fp16
// control) and bare m64nNk32.s32.s8.s8 leaves for the N the block GEMM never picks (8, 24: not
// multiples of 16) — ONE .cu, ONE nvcc run; ptxas -v must name every entry with 0 spill bytes, no
// stack frame, and none of its Hopper serialization diagnostics (C7515: wgmma serialized). No GPU
// is needed. Without nvcc the test skips LOUDLY.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { add, array, call, cast, index, int32, mul, pointer, sm90a, SourceBuilder, uint32, uint64, uint8 } from '@tilekit/codegen';
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
    `\n!!! SKIPPING the int8 block GEMM nvcc compile test: "${nvcc}" not found (set TILEKIT_NVCC). The int8 wgmma kernels are NOT being compiled. !!!\n`,
  );

/** The probe kernels: what the GPU spec runs, and wider / split shapes. */
const int8CompileCases: readonly WgmmaSsInt8ProbeCase[] = [
  { name: 'probe_int8_m128n128k128', policy: { dtype: 'int8', tileM: 128, tileN: 128, tileK: 128 }, kTiles: 1 },
  { name: 'probe_int8_m128n128k64x2', policy: { dtype: 'int8', tileM: 128, tileN: 128, tileK: 64 }, kTiles: 2 },
  { name: 'probe_int8_m64n256k128', policy: { dtype: 'int8', tileM: 64, tileN: 256, tileK: 128 }, kTiles: 1 },
  { name: 'probe_int8_m128n256k64_wgn2', policy: { dtype: 'int8', tileM: 128, tileN: 256, tileK: 64, warpgroupsN: 2 }, kTiles: 1 },
  { name: 'probe_int8_m192n48k128', policy: { dtype: 'int8', tileM: 192, tileN: 48, tileK: 128 }, kTiles: 1 },
  { name: 'probe_fp16_m128n128k64x2', policy: { dtype: 'fp16', tileM: 128, tileN: 128, tileK: 64 }, kTiles: 2 },
];

/** A kernel issuing one bare int8 wgmma of width n (64B-swizzled 64 × 64 A, n × 64 B) and storing D. */
function leafKernel(src: SourceBuilder, n: number): string {
  const atom = wgmmaAtom({ n, dtype: 'int8' });
  const nd = atom.c.elementsPerThread;
  // callLeaf: each leaf is emitted once per translation unit, shared with the probe kernels.
  const pin = defineWgmmaFenceOperands(sm90a, nd, 'int32');
  const encode = defineWgmmaDescriptorEncoder(sm90a);
  const la = makeWgmmaSmemLayout({ swizzle: '64B', dtype: 'int8', mn: 64, k: 64 });
  const lb = makeWgmmaSmemLayout({ swizzle: '64B', dtype: 'int8', mn: n, k: 64 });
  const name = `leaf_${atom.wrapperName}`;
  src.function(
    { name, qualifiers: sm90a.kernelQualifiers(), attributes: [sm90a.launchBounds(128)], params: { out: pointer(int32) } },
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
      const d = b.declare('d', array(int32, nd));
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

describe('int8 block GEMM compiles for sm_90a', () => {
  it.skipIf(!hasNvcc)(
    'probe kernels (int8 tileK 128 / 64, wide, split over N; fp16 control) and bare k32 ' +
      'leaves of N 8 / 24 / 256: every entry assembled, no spills, no stack, no C7515',
    () => {
      const src = new SourceBuilder({ dialect: sm90a, header: 'tilekit gemm: int8 block GEMM compile test' });
      for (const c of int8CompileCases) defineWgmmaSsInt8ProbeKernel(src, c);
      const leaves = [8, 24, 256].map((n) => leafKernel(src, n));
      const source = src.render();
      const dir = mkdtempSync(join(tmpdir(), 'tilekit-gemm-int8-'));
      try {
        const file = join(dir, 'int8_block_gemm.cu');
        writeFileSync(file, source);
        const args = ['-cubin', '-arch=sm_90a', '-O3', '-std=c++17', '-Xptxas', '-v', '-o', join(dir, 'int8_block_gemm.cubin'), file];
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
        expect(entries).toEqual([...int8CompileCases.map((c) => c.name), ...leaves].sort());
        expect(log).not.toMatch(/[1-9]\d* bytes spill (stores|loads)/);
        expect(log).not.toMatch(/[1-9]\d* bytes stack frame/);
        expect(log).not.toMatch(/C75(08|10|15)/);
        // The int8 probe with tileK 128 asks for two 16 KiB tiles, the 64-wide K tiles half that.
        expect(log).toMatch(/Function properties for probe_int8_m128n128k128[\s\S]*?32768 bytes smem/);
        expect(log).toMatch(/Function properties for probe_int8_m128n128k64x2[\s\S]*?16384 bytes smem/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
