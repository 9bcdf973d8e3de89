// example_sparge's kernels: the instances a plan launches, in launch order, and their compilation with the resources table.
import { formatTable } from '@tilekit/host';
import { FMHA_FWD_COMPILE_FLAGS } from '@tilekit/kernel-fmha-fwd';
import {
  checkSpargePoolProblem,
  SPARGE_POOL_COMPILE_FLAGS,
  SPARGE_SELECT_COMPILE_FLAGS,
  spargePoolInstancesFor,
  spargeSelectInstanceFor,
  type SpargePlan,
} from '@tilekit/kernel-sparge';
import { compileInstance, type CompilableInstance, type Compiler } from '@tilekit/runtime';

/** One kernel a run launches, with its role and the nvcc flags its launcher compiles it with. */
export interface SpargeExampleKernel {
  readonly role: string;
  readonly instance: CompilableInstance;
  readonly flags: readonly string[];
  /** Dynamic shared memory of its launch in this problem (bytes). */
  readonly dynamicSharedBytes: number;
}

/**
 * The kernels a plan launches, in launch order: the K-mean partial pass (with smoothing), the
 * K-mean finalize pass, the pooling instance(s) of the 128-row blocks, the selection instance for
 * the problem's key-block count, then the sparse attention instance.
 */
export function spargeExampleKernels(plan: SpargePlan): SpargeExampleKernel[] {
  const p = plan.attention;
  const pool = checkSpargePoolProblem({
    dtype: p.dtype,
    headDim: p.hdimQ,
    batch: p.batch,
    nhead: p.nheadQ,
    nheadK: p.nheadK,
    blockQ: plan.params.blockQ,
    blockK: plan.params.blockK,
    seqlenQ: p.mode === 'batch' ? p.seqlenQ : 0,
    seqlenK: p.mode === 'batch' ? p.seqlenK : 0,
    smoothK: plan.params.smoothK,
    int8: plan.params.int8,
  });
  const set = spargePoolInstancesFor(pool);
  const out: SpargeExampleKernel[] = [];
  const add = (role: string, instance: CompilableInstance, flags: readonly string[], dynamicSharedBytes: number): void => {
    if (!out.some((k) => k.instance.name === instance.name)) out.push({ role, instance, flags, dynamicSharedBytes });
  };
  if (plan.params.smoothK) add('block map: K mean (partial sums)', set.keyMeanPartial, SPARGE_POOL_COMPILE_FLAGS, 0);
  add('block map: K mean (finalize)', set.keyMeanFinalize, SPARGE_POOL_COMPILE_FLAGS, 0);
  const samePool = set.poolK.name === set.poolQ.name;
  add(samePool ? 'block map: pool K and Q' : 'block map: pool K', set.poolK, SPARGE_POOL_COMPILE_FLAGS, 0);
  add('block map: pool Q', set.poolQ, SPARGE_POOL_COMPILE_FLAGS, 0);
  const select = spargeSelectInstanceFor(p.hdimQ, pool.kBlocksMax);
  add(
    'block map: select',
    select,
    SPARGE_SELECT_COMPILE_FLAGS,
    select.launch(p.batch, p.nheadQ, pool.qBlocksMax, pool.kBlocksMax).sharedBytes,
  );
  add(`attention (${p.pipeline})`, plan.instance, FMHA_FWD_COMPILE_FLAGS, plan.instance.sharedBytes);
  return out;
}

/** Compiles `kernels` (through the compiler's cache), logging progress, and returns the resources table. */
export async function compileSpargeExampleKernels(
  kernels: readonly SpargeExampleKernel[],
  compiler: Compiler,
  log: (line: string) => void,
): Promise<string> {
  const rows: (string | number | boolean)[][] = [];
  for (const [n, k] of kernels.entries()) {
    const started = performance.now();
    log(`compiling [${n + 1}/${kernels.length}] ${k.instance.name} (${k.role}) ...`);
    const compiled = await compileInstance(k.instance, compiler, k.flags);
    const r = compiled.resources;
    if (!compiled.cached) log(`  compiled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    rows.push([
      k.instance.name,
      k.role,
      compiled.arch,
      r.registers,
      r.sharedBytes,
      k.dynamicSharedBytes,
      `${r.spillStores}/${r.spillLoads}`,
      r.stackFrame,
      compiled.cached,
    ]);
  }
  return formatTable(
    ['kernel', 'role', 'arch', 'registers', 'static smem (B)', 'dynamic smem (B)', 'spills st/ld (B)', 'stack (B)', 'cached'],
    rows,
  );
}
