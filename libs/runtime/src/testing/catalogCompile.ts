// CI helper: compiles every instance of a kernel catalog with nvcc (a few at a time, with progress)
// and lists what the catalog promises but ptxas contradicts. No GPU needed.
import { availableParallelism } from 'node:os';
import type { CompileResult, Compiler } from '../compiler.ts';
import { compileInstance, type CompilableInstance } from '../kernelInstance.ts';

/** An instance as the catalog check sees it: compilable, with the static shared memory it promises. */
export interface CatalogInstance extends CompilableInstance {
  readonly staticSharedBytes: number;
}

/**
 * Compiles `instances` with `flags`, printing one progress line per instance (`[label i/n]`), and
 * returns one line per broken promise: a compile error, no resource report, register spills, a stack
 * frame, static shared memory other than the instance's, or one of ptxas's Hopper performance
 * diagnostics (C7514/C7515/C7518: wgmma serialized, C7518 for wgmma issued or waited in divergent paths;
 * C7508/C7510: setmaxnreg ignored). Empty when all hold.
 */
export async function catalogCompileProblems(
  label: string,
  instances: readonly CatalogInstance[],
  compiler: Compiler,
  flags: readonly string[],
  log: (line: string) => void = console.log,
): Promise<string[]> {
  const results = new Map<string, CompileResult>();
  const problems: string[] = [];
  const queue = [...instances];
  let done = 0;
  const worker = async (): Promise<void> => {
    for (let instance = queue.shift(); instance !== undefined; instance = queue.shift()) {
      const started = performance.now();
      try {
        const result = await compileInstance(instance, compiler, flags);
        results.set(instance.name, result);
        const r = result.resources;
        done++;
        log(
          `[${label} ${done}/${instances.length}] ${instance.name}: ${r.registers} registers, ` +
            `${r.sharedBytes} B static smem, spills ${r.spillStores}/${r.spillLoads} B, stack ` +
            `${r.stackFrame} B (${((performance.now() - started) / 1000).toFixed(1)} s)`,
        );
      } catch (error) {
        done++;
        problems.push(`${instance.name}: ${(error as Error).message}`);
        log(`[${label} ${done}/${instances.length}] ${instance.name}: FAILED`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, Math.max(1, availableParallelism())) }, worker));
  for (const instance of instances) {
    const r = results.get(instance.name);
    if (r === undefined) continue;
    if (!r.resourcesReported) problems.push(`${instance.name}: ptxas reported no resources`);
    if (r.resources.spillStores > 0 || r.resources.spillLoads > 0)
      problems.push(`${instance.name}: spills ${r.resources.spillStores}/${r.resources.spillLoads} bytes`);
    if (r.resources.stackFrame > 0) problems.push(`${instance.name}: ${r.resources.stackFrame}-byte stack frame`);
    if (r.resources.sharedBytes !== instance.staticSharedBytes)
      problems.push(`${instance.name}: ${r.resources.sharedBytes} B static smem, the instance says ${instance.staticSharedBytes}`);
    const diag = r.log.match(/C75(08|10|14|15|18)[^\n]*/g);
    if (diag !== null) problems.push(`${instance.name}: ${diag.join(' | ')}`);
  }
  return problems;
}
