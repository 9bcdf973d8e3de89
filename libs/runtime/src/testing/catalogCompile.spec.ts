import { describe, expect, it } from 'vitest';
import type { CompileRequest, CompileResult, Compiler } from '../compiler.ts';
import { NO_RESOURCES } from '../ptxasInfo.ts';
import { catalogCompileProblems, type CatalogInstance } from './catalogCompile.ts';

/** A compiler that answers every request with `log` and the given resources, without running nvcc. */
function fakeCompiler(log: string, resources: Partial<CompileResult['resources']> = {}): Compiler {
  return {
    kind: 'nvcc',
    version: async () => 'fake',
    compile: async (r: CompileRequest): Promise<CompileResult> => ({
      cubin: new Uint8Array(),
      log,
      resources: { ...NO_RESOURCES, registers: 32, ...resources },
      functions: {},
      resourcesReported: true,
      cached: false,
      sourcePath: '/dev/null',
      binaryPath: '/dev/null',
      key: r.name,
      arch: 'sm_90a',
      compiler: 'nvcc',
      compilerVersion: 'fake',
    }),
  };
}

const instance = {
  name: 'k',
  staticSharedBytes: 0,
  signature: { target: { arch: 'sm_90a' } },
  source: () => '',
} as unknown as CatalogInstance;

const quiet = (): void => undefined;

describe('catalogCompileProblems', () => {
  it('lists nothing for a clean report', async () => {
    expect(await catalogCompileProblems('t', [instance], fakeCompiler('ptxas info : Used 32 registers'), [], quiet)).toEqual([]);
  });

  it('lists spills, a stack frame and each of ptxas Hopper diagnostics it watches (C7508/C7510/C7514/C7515/C7518)', async () => {
    expect(
      await catalogCompileProblems('t', [instance], fakeCompiler('', { spillStores: 8, spillLoads: 8, stackFrame: 16 }), [], quiet),
    ).toEqual(['k: spills 8/8 bytes', 'k: 16-byte stack frame']);
    for (const code of ['C7508', 'C7510', 'C7514', 'C7515', 'C7518']) {
      const log = `ptxas info    : (${code}) Potential Performance Loss: wgmma.mma_async instructions are serialized`;
      const problems = await catalogCompileProblems('t', [instance], fakeCompiler(log), [], quiet);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(code);
    }
    expect(await catalogCompileProblems('t', [instance], fakeCompiler('ptxas info : (C7520) something else'), [], quiet)).toEqual([]);
  });
});
