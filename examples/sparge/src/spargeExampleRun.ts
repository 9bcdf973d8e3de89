// example_sparge: plans the Sparge attention the flags describe (the block-map kernels: K mean,
// pooling, selection; the sparse attention instance), compiles every kernel the run uses and
// prints its resources, optionally computes the CPU references of both stages (-v=1) and the
// block-sparsity report (-print_sparsity=1), and on a GPU runs, validates and times the two stages.
// Without a CUDA device it says so and exits 0 after the CPU part.
import { ArgParseError } from '@tilekit/host';
import { spargeRelativeL1, type SpargeBlockMap, type SpargeBlockMapResult, type SpargePlan } from '@tilekit/kernel-sparge';
import { ArgumentError } from '@tilekit/numeric';
import { NvccCompiler, probe } from '@tilekit/runtime';
import { runSpargeOnDevice } from './spargeExampleDevice.ts';
import { SpargeFlagError, type SpargeExampleArgs } from './spargeExampleFlags.ts';
import { spargeExampleInputs, type SpargeExampleInputs } from './spargeExampleInputs.ts';
import { compileSpargeExampleKernels, spargeExampleKernels } from './spargeExampleKernels.ts';
import { formatSpargeProblem, planSpargeExample, spargeDenseFlops } from './spargeExamplePlan.ts';
import { spargeAttentionReference, spargeAttentionValues, spargeCpuBlockMap, type SpargeCpuReference } from './spargeExampleReference.ts';
import { logSparsity } from './spargeExampleSparsity.ts';

/**
 * Runs the example; `log` receives each output line. Returns the exit code: 0 on success (also
 * without a GPU), 1 when validation fails. Bad flags throw SpargeFlagError / ArgParseError (runCli: exit 2).
 */
export async function runSpargeExample(args: SpargeExampleArgs, log: (line: string) => void = console.log): Promise<number> {
  const { plan, inputs } = planWithInputs(args);
  log(
    `example_sparge: ${formatSpargeProblem(plan)}, scale ${plan.attention.scale}, ${args.get('inputs')} inputs (seed ${args.get('seed')})`,
  );
  const compiler = new NvccCompiler();
  log(await compileSpargeExampleKernels(spargeExampleKernels(plan), compiler, log));

  const validate = args.get('v');
  const cpuMap = validate || args.get('print_sparsity') ? timedCpuBlockMap(plan, inputs, log) : undefined;
  const cpu = validate && cpuMap !== undefined ? cpuReference(plan, inputs, cpuMap, log) : undefined;

  const probed = probe();
  if (!(probed.driver && probed.deviceCount > 0)) {
    if (args.get('print_sparsity') && cpuMap !== undefined) logSparsity(plan, inputs, cpuMap.blockMap, 'CPU block map', log);
    log(
      `no CUDA device found (${probed.reason ?? 'the driver reports no devices'}): the kernels ` +
        `were generated and compiled${cpu ? ' and the CPU references computed' : ''}; nothing ` +
        `ran on a GPU.`,
    );
    return 0;
  }
  return runSpargeOnDevice(args, plan, inputs, cpu, compiler, log);
}

/** The plan and the inputs of the flags; a library's ArgumentError becomes a SpargeFlagError naming the flag. */
function planWithInputs(args: SpargeExampleArgs): { readonly plan: SpargePlan; readonly inputs: SpargeExampleInputs } {
  try {
    const plan = planSpargeExample(args);
    return { plan, inputs: spargeExampleInputs(plan, args.get('inputs'), args.get('seed')) };
  } catch (error) {
    if (error instanceof ArgumentError && !(error instanceof ArgParseError)) throw new SpargeFlagError(args, error);
    throw error;
  }
}

/** The CPU block map, with its sparsity and time logged. */
function timedCpuBlockMap(plan: SpargePlan, inputs: SpargeExampleInputs, log: (line: string) => void): SpargeBlockMapResult {
  const started = performance.now();
  const cpuMap = spargeCpuBlockMap(plan, inputs);
  log(`CPU block map (fp64): sparsity ${cpuMap.achievedSparsity.toFixed(4)} in ${(performance.now() - started).toFixed(1)} ms`);
  return cpuMap;
}

/** The CPU attention references (-v=1): sparse with the predicted map and dense, timed and compared; the PV-skip model's counts. */
function cpuReference(
  plan: SpargePlan,
  inputs: SpargeExampleInputs,
  cpuMap: SpargeBlockMapResult,
  log: (line: string) => void,
): SpargeCpuReference {
  log(
    `warning: the CPU attention reference is O(s²·d) per head in float64 (here ` +
      `${(spargeDenseFlops(plan) / 2 / 1e9).toFixed(2)} G multiply-adds for each of the sparse ` +
      `and the dense reference): use small shapes such as -s=256 .. 2048`,
  );
  const values = spargeAttentionValues(plan, inputs);
  let started = performance.now();
  const attention = spargeAttentionReference(plan, inputs.shape, values, cpuMap.blockMap);
  const sparseMs = performance.now() - started;
  started = performance.now();
  const all: SpargeBlockMap = { ...cpuMap.blockMap, map: new Uint8Array(cpuMap.blockMap.map.length).fill(1) };
  const dense = spargeAttentionReference(plan, inputs.shape, inputs.values, all, true);
  const denseMs = performance.now() - started;
  const pv = attention.pvComputed !== undefined ? { computed: attention.pvComputed, skipped: attention.pvSkipped! } : undefined;
  log(
    `CPU sparse attention (fp64, predicted map${pv ? `, PV-skip model ${plan.attention.pvMode}` : ''}): ` +
      `${sparseMs.toFixed(0)} ms; dense attention ${denseMs.toFixed(0)} ms`,
  );
  log(
    `CPU reference: sparsity ${cpuMap.achievedSparsity.toFixed(4)}, relative L1 vs dense ` +
      `attention ${spargeRelativeL1(attention.o, dense.o).toExponential(3)}` +
      `${plan.params.int8 ? ' (int8 Q·Kᵀ included)' : ''}`,
  );
  if (pv) log(`CPU PV-skip model: ${pv.computed} (block, vote group) P·V products computed, ${pv.skipped} skipped`);
  return { blockMap: cpuMap, attention, attentionValues: values, ...(pv ? { pvModel: pv } : {}) };
}
