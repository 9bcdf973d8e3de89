// CI: every gfx942 instance compiles as self-contained HIP with clang-19 (Debian's clang-19 has the
// AMDGPU backend: -x hip --offload-arch=gfx942 -nogpulib -nogpuinc --cuda-device-only -S, no ROCm),
// and the backend's resource report says: no VGPR/SGPR spills, no scratch, the LDS the instance
// declares, the kernel-argument bytes of its signature, and the MFMAs in the code. No GPU needed;
// skipped LOUDLY without clang-19.
import { describe, expect, it } from 'vitest';
import { compileGfx942, findGfx942Clang } from './compileGfx942.ts';
import { GEMM_GFX942_CATALOG } from './gemmGfx942Catalog.ts';

const clang = findGfx942Clang();
if (clang === undefined) {
  console.warn(
    '\n!!! SKIPPING the gfx942 gemm catalog compile test: neither TILEKIT_CLANG, clang-19 nor /usr/lib/llvm-19/bin/clang-19 runs. ' +
      'The HIP kernels are NOT being compiled. !!!\n',
  );
}

describe.runIf(clang !== undefined)('gfx942 gemm catalog: every instance compiles with clang-19, no spills', () => {
  it.each(GEMM_GFX942_CATALOG.map((i) => [i.name, i] as const))(
    '%s',
    (_name, instance) => {
      const { asm, resources: r } = compileGfx942(instance, clang as string);
      console.log(
        `[gfx942 catalog] ${instance.name}: ${r.vgprCount} VGPRs (of which ${r.agprCount} AGPRs), ${r.sgprCount} SGPRs, ` +
          `spills ${r.vgprSpillCount}/${r.sgprSpillCount}, scratch ${r.privateSegmentBytes} B, LDS ${r.groupSegmentBytes} B, ` +
          `${r.occupancy} wave(s)/SIMD`,
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
