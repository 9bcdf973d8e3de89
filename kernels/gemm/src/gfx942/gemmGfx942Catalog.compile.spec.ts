// CI: every gfx942 instance compiles as self-contained HIP with clang-19 (Debian's clang-19 has the
// AMDGPU backend: -x hip --offload-arch=gfx942 -nogpulib -nogpuinc --cuda-device-only -S, no ROCm),
// and the backend's resource report says: no VGPR/SGPR spills, no scratch, the LDS the instance
// declares, the kernel-argument bytes of its signature, and the MFMAs in the code. No GPU needed;
// skipped LOUDLY without clang-19.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolAvailable } from '@tilekit/codegen/testing';
import { describe, expect, it } from 'vitest';
import { GEMM_GFX942_CATALOG } from './gemmGfx942Catalog.ts';
import type { GemmGfx942Instance } from './gemmGfx942Instance.ts';
import { parseGfx942Resources, type Gfx942KernelResources } from './gfx942Resources.ts';

const clangCandidates = [process.env['TILEKIT_CLANG'], 'clang-19', '/usr/lib/llvm-19/bin/clang-19'].filter(
  (c): c is string => c !== undefined,
);
const clang = clangCandidates.find((c) => toolAvailable(c));
if (clang === undefined) {
  console.warn(
    `\n!!! SKIPPING the gfx942 gemm catalog compile test: none of ` +
      `${clangCandidates.join(', ')} runs (set TILEKIT_CLANG). The HIP kernels are NOT being ` +
      `compiled. !!!\n`,
  );
}

/** The flags the catalog is compiled with (-O3, as hipcc's default release build). */
export const GFX942_CLANG_FLAGS = [
  '-x',
  'hip',
  '--offload-arch=gfx942',
  '-nogpulib',
  '-nogpuinc',
  '--cuda-device-only',
  '-std=c++17',
  '-O3',
  '-Wall',
  '-Werror',
  '-S',
] as const;

function compile(instance: GemmGfx942Instance): { readonly asm: string; readonly resources: Gfx942KernelResources } {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-gemm-gfx942-'));
  try {
    const file = join(dir, `${instance.name}.hip`);
    const source = instance.source();
    writeFileSync(file, source);
    const out = join(dir, `${instance.name}.s`);
    const res = spawnSync(clang as string, [...GFX942_CLANG_FLAGS, '-o', out, file], { encoding: 'utf8', timeout: 300_000 });
    if (res.status !== 0) {
      const numbered = source
        .split('\n')
        .map((l, i) => `${String(i + 1).padStart(4)}| ${l}`)
        .join('\n');
      throw new Error(`${clang as string} failed on ${instance.name}:\n${res.stderr}${res.error?.message ?? ''}\n${numbered}`);
    }
    const asm = readFileSync(out, 'utf8');
    const [resources, ...more] = parseGfx942Resources(asm);
    if (resources === undefined || more.length > 0 || resources.name !== instance.name)
      throw new Error(`${instance.name}: expected exactly one kernel named so in the assembly`);
    return { asm, resources };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.runIf(clang !== undefined)('gfx942 gemm catalog: every instance compiles with clang-19, no spills', () => {
  it.each(GEMM_GFX942_CATALOG.map((i) => [i.name, i] as const))(
    '%s',
    (_name, instance) => {
      const { asm, resources: r } = compile(instance);
      console.log(
        `[gfx942 catalog] ${instance.name}: ${r.vgprCount} VGPRs (of which ${r.agprCount} AGPRs), ${r.sgprCount} SGPRs, ` +
          `spills ${r.vgprSpillCount}/${r.sgprSpillCount}, scratch ${r.privateSegmentBytes} B, LDS ${r.groupSegmentBytes} B`,
      );
      expect({ vgprSpills: r.vgprSpillCount, sgprSpills: r.sgprSpillCount, scratch: r.privateSegmentBytes }).toEqual({
        vgprSpills: 0,
        sgprSpills: 0,
        scratch: 0,
      });
      // gfx942 has 512 VGPRs (arch + AGPR) per lane for a wave.
      expect(r.vgprCount).toBeLessThanOrEqual(512);
      expect(r.groupSegmentBytes).toBe(instance.ldsBytes);
      expect(r.kernargBytes).toBe(instance.signature.layout.bytes);
      expect(r.maxFlatWorkgroupSize).toBe(instance.threads);
      expect(r.wavefrontSize).toBe(64);
      // Two sites (main loop and tail) × per K tile: K16 steps × M repeats × N repeats × 2 (IterateK).
      const blk = instance.pipeline.block;
      const mnemonic = instance.dtype === 'fp16' ? /v_mfma_f32_32x32x8_?f16/g : /v_mfma_f32_32x32x8_?bf16(_1k)?/g;
      expect(asm.match(mnemonic)?.length).toBe(2 * blk.kSteps * blk.mIter * blk.nIter * blk.kIter);
      if (instance.policy.abVector === 8) expect(asm).toMatch(/global_load_dwordx4/);
      expect(asm).toMatch(/ds_read_b128/);
    },
    300_000,
  );
});
