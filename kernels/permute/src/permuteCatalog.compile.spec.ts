// CI: every instance of the catalog compiles for sm_90a with nvcc, exactly as the launcher compiles
// it (same source, flags and arch), with no register spills and no stack frame. No GPU needed;
// skipped LOUDLY without nvcc. Progress is printed per instance.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler, type CompileResult } from '@tilekit/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { PERMUTE_CATALOG } from './permuteCatalog.ts';
import { compilePermuteInstance } from './permuteLauncher.ts';
import type { PermuteInstance } from './permuteInstance.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the permute catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe.runIf(hasNvcc)('permute catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-permute-catalog-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it(`compiles all ${PERMUTE_CATALOG.length} instances`, async () => {
    const compiler = new NvccCompiler({ cacheDir });
    const results = new Map<string, CompileResult>();
    const failures: string[] = [];
    const queue = [...PERMUTE_CATALOG];
    let done = 0;
    const worker = async (): Promise<void> => {
      for (let instance = queue.shift(); instance !== undefined; instance = queue.shift()) {
        const started = performance.now();
        try {
          const result = await compilePermuteInstance(instance, compiler);
          results.set(instance.name, result);
          const r = result.resources;
          done++;
          console.log(
            `[permute catalog ${String(done).padStart(2)}/${PERMUTE_CATALOG.length}] ${instance.name}: ${r.registers} registers, ${r.sharedBytes} B smem, ` +
              `spills ${r.spillStores}/${r.spillLoads} B, stack ${r.stackFrame} B (${((performance.now() - started) / 1000).toFixed(1)} s)`,
          );
        } catch (error) {
          done++;
          failures.push(`${instance.name}: ${(error as Error).message}`);
          console.log(`[permute catalog ${done}/${PERMUTE_CATALOG.length}] ${instance.name}: FAILED`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, Math.max(1, availableParallelism())) }, worker));
    expect(failures).toEqual([]);
    const problems = PERMUTE_CATALOG.flatMap((instance: PermuteInstance) => {
      const r = results.get(instance.name)!;
      const out: string[] = [];
      if (!r.resourcesReported) out.push(`${instance.name}: ptxas reported no resources`);
      if (r.resources.spillStores > 0 || r.resources.spillLoads > 0)
        out.push(`${instance.name}: spills ${r.resources.spillStores}/${r.resources.spillLoads} bytes`);
      if (r.resources.stackFrame > 0) out.push(`${instance.name}: ${r.resources.stackFrame}-byte stack frame`);
      if (r.resources.sharedBytes !== instance.staticSharedBytes)
        out.push(`${instance.name}: ${r.resources.sharedBytes} B smem, the instance says ${instance.staticSharedBytes}`);
      return out;
    });
    expect(problems).toEqual([]);
  }, 300_000);
});
