// example_dsa_indexer: generates the DSA kernels a problem needs (the cache writer, the decode or
// prefill indexer, the top-k selection), compiles them and prints their resources, computes the CPU
// references (-v=1), and on a GPU writes the cache, runs the indexer and the selection, validates
// both and times them. Without a CUDA device it says so and exits 0 after the CPU part.
import { ArgParseError, flagErrorOf, formatTable, Prng } from '@tilekit/host';
import {
  checkDsaContextLens,
  checkDsaPrefillWindows,
  checkDsaIndexCacheWriteConfig,
  checkDsaIndexerDecodeConfig,
  checkDsaIndexerPrefillConfig,
  checkDsaTopkConfig,
  DSA_COMPILE_FLAGS,
  DSA_INDEX_CACHE_WRITER_CATALOG,
  dsaIndexerDecodeInstanceFor,
  dsaIndexerPrefillInstanceFor,
  dsaIndexerDecodeReferenceWithBound,
  dsaIndexerPrefillReferenceWithBound,
  dsaRandomDecodeInput,
  dsaRandomPrefillInput,
  dsaTopkInstanceForLaunch,
  type DsaIndexerLogits,
} from '@tilekit/kernel-dsa';
import { ArgumentError } from '@tilekit/numeric';
import { compileInstance, NvccCompiler, probe, type CompilableInstance, type Compiler } from '@tilekit/runtime';
import { runDsaIndexerOnGpu, type DsaExampleInputs } from './dsaIndexerGpuRun.ts';
import { DSA_FLAG_OF, problemFromArgs, type DsaIndexerArgs, type DsaIndexerExampleProblem } from './dsaIndexerFlags.ts';

/** The instances a problem runs, after its configs were checked (typed errors name the field). */
function plan(p: DsaIndexerExampleProblem): { readonly instances: readonly CompilableInstance[] } {
  const topk = dsaTopkInstanceForLaunch(checkDsaTopkConfig({ rows: p.queries, rowStride: p.context, k: p.topk }), 0n);
  if (p.mode === 'prefill') {
    checkDsaIndexerPrefillConfig({ seqQ: p.queries, seqKv: p.context, heads: p.heads });
    return { instances: [dsaIndexerPrefillInstanceFor(p.heads), topk] };
  }
  const pages = Math.ceil(p.context / 64);
  checkDsaIndexerDecodeConfig({
    batch: p.batch,
    nextN: p.nextN,
    heads: p.heads,
    maxContext: p.context,
    maxPages: pages,
    numPages: p.batch * pages,
  });
  checkDsaIndexCacheWriteConfig({ tokens: p.context, numPages: p.batch * pages, scaleFormat: p.scaleFormat });
  const writer = DSA_INDEX_CACHE_WRITER_CATALOG.find((i) => i.policy.scaleFormat === p.scaleFormat)!;
  return { instances: [writer, dsaIndexerDecodeInstanceFor(p.heads, p.nextN), topk] };
}

function describe(p: DsaIndexerExampleProblem): string {
  const what =
    p.mode === 'decode'
      ? `decode: ${p.batch} sequences × next_n ${p.nextN}, context ${p.context} tokens (paged, 64-token pages, ${p.scaleFormat} scales)`
      : `prefill: ${p.queries} queries over ${p.context} keys, causal windows ending at ${p.context}`;
  return `example_dsa_indexer: ${what}; ${p.heads} heads × 128 dims, e4m3; top-${p.topk}`;
}

/** The seeded inputs (their windows or context lengths checked on the host, as a caller would before uploading). */
function makeInputs(p: DsaIndexerExampleProblem, seed: number): DsaExampleInputs {
  const rng = new Prng(seed);
  if (p.mode === 'prefill') {
    const prefill = dsaRandomPrefillInput({ S: p.queries, H: p.heads, Skv: p.context, scaleFormat: p.scaleFormat }, rng);
    checkDsaPrefillWindows(prefill.windowStart, prefill.windowEnd, p.queries, p.context);
    return { mode: 'prefill', prefill };
  }
  const c = dsaRandomDecodeInput(
    { B: p.batch, nextN: p.nextN, H: p.heads, maxContext: p.context, minContext: p.context, scaleFormat: p.scaleFormat },
    rng,
  );
  checkDsaContextLens(c.input.contextLens, p.batch, p.context);
  return { mode: 'decode', decode: c.input, keys: c.keys };
}

function reference(inputs: DsaExampleInputs): DsaIndexerLogits {
  return inputs.mode === 'prefill'
    ? dsaIndexerPrefillReferenceWithBound(inputs.prefill)
    : dsaIndexerDecodeReferenceWithBound(inputs.decode);
}

/** The table of `instances` compiled with the DSA flags: registers, static shared memory, spills and stack, one row each. */
export async function dsaResourcesTable(instances: readonly CompilableInstance[], compiler: Compiler): Promise<string> {
  const rows = [];
  for (const instance of instances) {
    const r = (await compileInstance(instance, compiler, DSA_COMPILE_FLAGS)).resources;
    rows.push([instance.name, r.registers, r.sharedBytes, `${r.spillStores}/${r.spillLoads}`, r.stackFrame]);
  }
  return formatTable(['instance (sm_90a)', 'registers', 'static shared (B)', 'spills st/ld (B)', 'stack (B)'], rows);
}

/**
 * Runs the example; `log` receives each output line. Returns the exit code: 0 on success (also
 * without a GPU), 1 when validation fails. Flags that make no valid problem throw ArgParseError (exit 2).
 */
export async function runDsaIndexerExample(args: DsaIndexerArgs, log: (line: string) => void = console.log): Promise<number> {
  let problem: DsaIndexerExampleProblem;
  let instances: readonly CompilableInstance[];
  try {
    problem = problemFromArgs(args);
    ({ instances } = plan(problem));
  } catch (error) {
    if (error instanceof ArgumentError && !(error instanceof ArgParseError)) throw flagErrorOf(args, error, DSA_FLAG_OF);
    throw error;
  }
  const compiler = new NvccCompiler();
  log(describe(problem));
  log(await dsaResourcesTable(instances, compiler));
  const inputs = makeInputs(problem, args.get('seed'));
  let expected: DsaIndexerLogits | undefined;
  if (args.get('v')) {
    const started = performance.now();
    expected = reference(inputs);
    log(`CPU reference: ${expected.logits.length} logits in ${(performance.now() - started).toFixed(0)} ms`);
  }
  const probed = probe();
  if (!probed.driver || probed.deviceCount === 0) {
    log(
      `no CUDA device found (${probed.reason ?? 'the driver reports no devices'}): the kernels were generated and compiled` +
        `${expected ? ' and the CPU reference computed' : ''}; nothing ran on a GPU.`,
    );
    return 0;
  }
  return runDsaIndexerOnGpu(problem, inputs, { expected, compiler, warmup: args.get('warmup'), repeat: args.get('repeat') }, log);
}
