// CI: every instance of the catalog compiles for sm_90a with nvcc, exactly as the launcher compiles
// it (same source, flags and arch), with no register spills, no stack frame, no static shared
// memory, and none of ptxas's Hopper performance diagnostics (C7515: wgmma serialized; C7508/C7510:
// setmaxnreg ignored). No GPU needed; skipped LOUDLY without nvcc. Progress is printed per instance.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler, type CompileResult } from '@tilekit/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { GEMM_CATALOG } from './gemmCatalog.ts';
import { compileGemmInstance } from './gemmLauncher.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc) console.warn('\n!!! SKIPPING the gemm catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n');

describe.runIf(hasNvcc)('gemm catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-gemm-catalog-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it(`compiles all ${GEMM_CATALOG.length} instances`, async () => {
    const compiler = new NvccCompiler({ cacheDir });
    const results = new Map<string, CompileResult>();
    const failures: string[] = [];
    const queue = [...GEMM_CATALOG];
    let done = 0;
    const worker = async (): Promise<void> => {
      for (let instance = queue.shift(); instance !== undefined; instance = queue.shift()) {
        const started = performance.now();
        try {
          const result = await compileGemmInstance(instance, compiler);
          results.set(instance.name, result);
          const r = result.resources;
          done++;
          console.log(
            `[gemm catalog ${done}/${GEMM_CATALOG.length}] ${instance.name}: ${r.registers} registers, ${r.sharedBytes} B static smem (+${instance.sharedBytes} B dynamic), ` +
              `spills ${r.spillStores}/${r.spillLoads} B, stack ${r.stackFrame} B (${((performance.now() - started) / 1000).toFixed(1)} s)`,
          );
        } catch (error) {
          done++;
          failures.push(`${instance.name}: ${(error as Error).message}`);
          console.log(`[gemm catalog ${done}/${GEMM_CATALOG.length}] ${instance.name}: FAILED`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, Math.max(1, availableParallelism())) }, worker));
    expect(failures).toEqual([]);
    const problems = GEMM_CATALOG.flatMap((instance) => {
      const r = results.get(instance.name)!;
      const out: string[] = [];
      if (!r.resourcesReported) out.push(`${instance.name}: ptxas reported no resources`);
      if (r.resources.spillStores > 0 || r.resources.spillLoads > 0) out.push(`${instance.name}: spills ${r.resources.spillStores}/${r.resources.spillLoads} bytes`);
      if (r.resources.stackFrame > 0) out.push(`${instance.name}: ${r.resources.stackFrame}-byte stack frame`);
      if (r.resources.sharedBytes !== instance.staticSharedBytes) out.push(`${instance.name}: ${r.resources.sharedBytes} B static smem, the instance says ${instance.staticSharedBytes}`);
      const diag = r.log.match(/C75(08|10|15)[^\n]*/g);
      if (diag !== null) out.push(`${instance.name}: ${diag.join(' | ')}`);
      return out;
    });
    expect(problems).toEqual([]);
  }, 600_000);
});
